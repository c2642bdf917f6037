/* Ticks for the session tests: range "tick N" (N = 1, 2, ...) every PERIOD
 * milliseconds, until the file STOP exists or COUNT ticks are done.  With
 * fork, a child forked at the start ticks too, its ranges "child N".  With
 * named, the ranges are all "tick" (a string registered at the start, in
 * the domain "ticker"), N their int64 payload, and the thread is named
 * "ticker main" at the start: every name is defined once, before any
 * recording.
 * usage: hgtx_ticker PERIOD_MS STOP_FILE [COUNT [fork|named]]
 * (COUNT 0: no limit).  Prints "ready PID" once it ticks, "done" at the end. */
#define _GNU_SOURCE
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void named_loop(long period_ms, const char *stop, long count)
{
    struct timespec pause = {period_ms / 1000, (period_ms % 1000) * 1000000L};
    nvtxNameOsThreadA((uint32_t)gettid(), "ticker main");
    nvtxDomainHandle_t domain = nvtxDomainCreateA("ticker");
    nvtxStringHandle_t tick = nvtxDomainRegisterStringA(domain, "tick");
    for (long i = 1; !count || i <= count; i++) {
        nvtxEventAttributes_t a = {0};
        a.version = NVTX_VERSION;
        a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
        a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
        a.message.registered = tick;
        a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
        a.payload.llValue = i;
        nvtxDomainRangePushEx(domain, &a);
        nanosleep(&pause, NULL);
        nvtxDomainRangePop(domain);
        if (access(stop, F_OK) == 0)
            break;
    }
}

static void tick_loop(const char *prefix, long period_ms, const char *stop, long count)
{
    struct timespec pause = {period_ms / 1000, (period_ms % 1000) * 1000000L};
    for (long i = 1; !count || i <= count; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s %ld", prefix, i);
        nvtxRangePushA(name);
        nanosleep(&pause, NULL);
        nvtxRangePop();
        if (access(stop, F_OK) == 0)
            break;
    }
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    long period_ms = atol(argv[1]);
    long count = argc > 3 ? atol(argv[3]) : 0;
    int forks = argc > 4 && !strcmp(argv[4], "fork");
    int named = argc > 4 && !strcmp(argv[4], "named");
    pid_t child = -1;
    if (forks) {
        child = fork();
        if (child == 0) {
            tick_loop("child", period_ms, argv[2], count);
            _exit(0);
        }
    }
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    if (named)
        named_loop(period_ms, argv[2], count);
    else
        tick_loop("tick", period_ms, argv[2], count);
    if (child > 0)
        waitpid(child, NULL, 0);
    printf("done\n");
    return 0;
}
