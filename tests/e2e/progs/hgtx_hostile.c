/* Names that break naive writers: quotes, backslashes, control characters,
 * invalid UTF-8, JSON and CSV look-alikes, multi-byte text, a long name; on
 * ranges, a mark, a domain and the thread.  Ranges nest and overlap (a
 * start/end range across push/pop ones) so exports must split them. */
#define _GNU_SOURCE
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *const hostile[] = {
    "quote\" backslash\\ slash/",
    "tab\t newline\n return\r",
    "controls \x01\x02\x1b\x1f del\x7f",
    "bad utf8 \xff\xfe lone \x80 truncated \xc3",
    "overlong \xc0\xaf surrogate \xed\xa0\x80 end",
    "\"},{\"ph\":\"X\",\"name\":\"injected",
    "comma, \"csv\"\nrow",
    "multi-byte \xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9d\x84\x9e",
    "",
};

int main(void)
{
    pthread_setname_np(pthread_self(), "th\"re\\ad");
    nvtxDomainHandle_t domain = nvtxDomainCreateA("dom\"ain\\ \xff");
    nvtxRangeId_t across = nvtxRangeStartA("start/end \"across\"");
    for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
        nvtxRangePushA(hostile[i]);
        usleep(200);
        nvtxMarkA(hostile[i]);
        nvtxRangePop();
    }
    char long_name[10000];
    memset(long_name, 'x', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    nvtxRangePushA(long_name);
    nvtxRangeEnd(across); /* ends inside a push/pop range: the two overlap */
    usleep(200);
    nvtxRangePop();

    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "in \"domain\"";
    nvtxDomainRangePushEx(domain, &a);
    usleep(200);
    nvtxDomainRangePop(domain);
    puts("hostile done");
    return 0;
}
