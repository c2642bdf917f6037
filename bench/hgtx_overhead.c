/* HGTX push/pop cost: THREADS threads each run PAIRS nvtxRangePushA/Pop pairs.
 * Prints the mean wall time per pair (ns) over the threads' loops.
 * usage: hgtx_overhead THREADS PAIRS */
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
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

static void *loop(void *arg)
{
    double *out = arg;
    nvtxRangePushA("warmup"); /* registers the thread outside the timed loop */
    nvtxRangePop();
    pthread_barrier_wait(&barrier);
    double start = now();
    for (long i = 0; i < pairs; i++) {
        nvtxRangePushA("bench");
        nvtxRangePop();
    }
    *out = (now() - start) / (double)pairs;
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    pairs = argc > 2 ? atol(argv[2]) : 10000000;
    if (threads < 1 || threads > 64 || pairs < 1)
        return 2;
    pthread_t tid[64];
    double ns[64];
    pthread_barrier_init(&barrier, NULL, (unsigned)threads);
    for (int i = 0; i < threads; i++)
        pthread_create(&tid[i], NULL, loop, &ns[i]);
    double sum = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(tid[i], NULL);
        sum += ns[i];
    }
    printf("%.2f\n", sum / threads);
    return 0;
}
