/* Nested push/pop ranges on several named threads.
 * usage: hgtx_threads THREADS ITERATIONS SLEEP_US
 * Exits 3 if a push or pop returned a wrong nesting level. */
#define _GNU_SOURCE
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static int iterations, sleep_us;
static volatile int bad_levels;

static void *worker(void *arg)
{
    long index = (long)arg;
    char name[16];
    snprintf(name, sizeof name, "worker-%ld", index);
    pthread_setname_np(pthread_self(), name);
    if (index == 0)
        nvtxNameOsThreadA((uint32_t)syscall(SYS_gettid), "hgtx-named-0");
    for (int i = 0; i < iterations; i++) {
        if (nvtxRangePushA("outer") != 0)
            bad_levels = 1;
        if (nvtxRangePushA("inner") != 1)
            bad_levels = 1;
        usleep((useconds_t)sleep_us);
        if (nvtxRangePop() != 1)
            bad_levels = 1;
        if (nvtxRangePop() != 0)
            bad_levels = 1;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 4;
    iterations = argc > 2 ? atoi(argv[2]) : 10;
    sleep_us = argc > 3 ? atoi(argv[3]) : 1000;
    pthread_t tids[64];
    if (nvtxRangePushA("main") != 0)
        bad_levels = 1;
    for (long i = 0; i < threads && i < 64; i++)
        pthread_create(&tids[i], NULL, worker, (void *)i);
    for (long i = 0; i < threads && i < 64; i++)
        pthread_join(tids[i], NULL);
    if (nvtxRangePop() != 0)
        bad_levels = 1;
    if (nvtxRangePop() >= 0) /* a pop without a push is an error */
        bad_levels = 1;
    printf("done %d threads\n", threads);
    return bad_levels ? 3 : 0;
}
