/* HGTX push/pop cost: THREADS threads each run PAIRS nvtxRangePushA/Pop pairs.
 * Prints the mean wall time per pair (ns) over the threads' loops, then the
 * loops' own user and system CPU time per pair (ns) and page faults per
 * million pairs (getrusage RUSAGE_THREAD: what the recording costs the
 * threads that record, whatever else the machine does).
 * usage: hgtx_overhead THREADS PAIRS */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long pairs;
static pthread_barrier_t barrier;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

struct thread_cost {
    double wall, user, sys, faults; /* ns per pair; faults per million pairs */
};

static double tv_ns(struct timeval tv)
{
    return (double)tv.tv_sec * 1e9 + (double)tv.tv_usec * 1e3;
}

static void *loop(void *arg)
{
    struct thread_cost *out = arg;
    struct rusage before, after;
    nvtxRangePushA("warmup"); /* registers the thread outside the timed loop */
    nvtxRangePop();
    pthread_barrier_wait(&barrier);
    getrusage(RUSAGE_THREAD, &before);
    double start = now();
    for (long i = 0; i < pairs; i++) {
        nvtxRangePushA("bench");
        nvtxRangePop();
    }
    out->wall = (now() - start) / (double)pairs;
    getrusage(RUSAGE_THREAD, &after);
    out->user = (tv_ns(after.ru_utime) - tv_ns(before.ru_utime)) / (double)pairs;
    out->sys = (tv_ns(after.ru_stime) - tv_ns(before.ru_stime)) / (double)pairs;
    out->faults = (double)(after.ru_minflt + after.ru_majflt - before.ru_minflt - before.ru_majflt) *
                  1e6 / (double)pairs;
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    pairs = argc > 2 ? atol(argv[2]) : 10000000;
    if (threads < 1 || threads > 64 || pairs < 1)
        return 2;
    pthread_t tid[64];
    struct thread_cost cost[64];
    pthread_barrier_init(&barrier, NULL, (unsigned)threads);
    for (int i = 0; i < threads; i++)
        pthread_create(&tid[i], NULL, loop, &cost[i]);
    struct thread_cost sum = {0, 0, 0, 0};
    for (int i = 0; i < threads; i++) {
        pthread_join(tid[i], NULL);
        sum.wall += cost[i].wall;
        sum.user += cost[i].user;
        sum.sys += cost[i].sys;
        sum.faults += cost[i].faults;
    }
    printf("%.2f\n", sum.wall / threads);
    printf("user %.2f sys %.2f faults_per_million %.1f\n", sum.user / threads, sum.sys / threads,
           sum.faults / threads);
    return 0;
}
