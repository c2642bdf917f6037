/* Starts THREADS threads after taking away every free file descriptor
 * (RLIMIT_NOFILE = the three it has): each opens RANGES NVTX ranges that a
 * recorder cannot keep.  Prints the number of events the threads made.
 * usage: hgtx_nofile THREADS RANGES */
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

static long ranges;

static void *work(void *arg)
{
    (void)arg;
    for (long i = 0; i < ranges; i++) {
        nvtxRangePushA("lost");
        nvtxRangePop();
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 4;
    ranges = argc > 2 ? atol(argv[2]) : 20000;
    nvtxRangePushA("main"); /* the main thread has its segment already */
    struct rlimit none = {3, 3};
    if (setrlimit(RLIMIT_NOFILE, &none) != 0) {
        perror("setrlimit");
        return 1;
    }
    pthread_t t[64];
    for (int i = 0; i < threads && i < 64; i++)
        pthread_create(&t[i], NULL, work, NULL);
    for (int i = 0; i < threads && i < 64; i++)
        pthread_join(t[i], NULL);
    nvtxRangePop();
    printf("%ld\n", 2L * ranges * threads);
    return 0;
}
