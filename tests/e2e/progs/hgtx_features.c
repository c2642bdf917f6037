/* Domains, registered strings, marks, colors, categories, payloads, wide text. */
#include <nvtx3/nvToolsExt.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

static nvtxEventAttributes_t attributes(void)
{
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    return a;
}

int main(void)
{
    nvtxDomainHandle_t net = nvtxDomainCreateA("net");
    nvtxDomainHandle_t again = nvtxDomainCreateA("net");
    nvtxDomainHandle_t io = nvtxDomainCreateA("io");
    if (net != again || net == io)
        return 4;
    nvtxStringHandle_t send = nvtxDomainRegisterStringA(net, "send");
    nvtxNameCategoryA(7, "seven");
    nvtxDomainNameCategoryA(net, 9, "net-nine");

    /* colored, categorized push with an i64 payload in the default domain */
    nvtxEventAttributes_t a = attributes();
    a.colorType = NVTX_COLOR_ARGB;
    a.color = 0xFF112233;
    a.category = 7;
    a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
    a.payload.llValue = -42;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "colored";
    nvtxRangePushEx(&a);
    usleep(1000);
    nvtxRangePop();

    /* registered string in a domain, with a double payload and a category */
    for (int i = 0; i < 3; i++) {
        nvtxEventAttributes_t b = attributes();
        b.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
        b.message.registered = send;
        b.category = 9;
        b.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE;
        b.payload.dValue = 2.5 * i;
        nvtxDomainRangePushEx(net, &b);
        usleep(500);
        nvtxDomainRangePop(net);
    }

    /* start/end in a domain, a float payload */
    nvtxEventAttributes_t c = attributes();
    c.messageType = NVTX_MESSAGE_TYPE_ASCII;
    c.message.ascii = "io-op";
    c.payloadType = NVTX_PAYLOAD_TYPE_FLOAT;
    c.payload.fValue = 1.5f;
    nvtxRangeId_t id = nvtxDomainRangeStartEx(io, &c);
    usleep(500);
    nvtxDomainRangeEnd(io, id);

    /* marks: plain, and with a color and a u32 payload */
    nvtxMarkA("plain-mark");
    nvtxEventAttributes_t m = attributes();
    m.colorType = NVTX_COLOR_ARGB;
    m.color = 0xFFFF0000;
    m.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT32;
    m.payload.uiValue = 77;
    m.messageType = NVTX_MESSAGE_TYPE_ASCII;
    m.message.ascii = "red-mark";
    nvtxDomainMarkEx(net, &m);

    /* payloads as recorded: a uint64 beyond INT64_MAX and a double of three decimals */
    nvtxEventAttributes_t u = attributes();
    u.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
    u.payload.ullValue = UINT64_MAX;
    u.messageType = NVTX_MESSAGE_TYPE_ASCII;
    u.message.ascii = "u64-max";
    nvtxMarkEx(&u);
    nvtxEventAttributes_t x = attributes();
    x.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE;
    x.payload.dValue = 0.125;
    x.messageType = NVTX_MESSAGE_TYPE_ASCII;
    x.message.ascii = "eighth";
    nvtxRangePushEx(&x);
    nvtxRangePop();

    /* wide text */
    nvtxRangePushW(L"wide-\u00e9t\u00e9");
    nvtxRangePop();

    /* hostile text survives */
    nvtxRangePushA("quote\" comma, tab\t newline\n backslash\\");
    nvtxRangePop();

    nvtxDomainDestroy(io);
    puts("features done");
    return 0;
}
