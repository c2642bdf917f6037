/* Takes away every free file descriptor (RLIMIT_NOFILE = the three it has),
 * then makes 2 x RANGES NVTX events in each of THREADS threads, in the main
 * thread (THREADS 0), or in a fork child (MODE fork).  MODE closeall first closes every descriptor
 * above 2, asys's inherited one too, so that the recorder has no way left to grow. Prints the
 * number of events the threads or the child made. usage: hgtx_nofile THREADS RANGES
 * [threads|fork|closeall|closeall-fork] */
#define _GNU_SOURCE
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

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
    const char *mode = argc > 3 ? argv[3] : "threads";
    nvtxRangePushA("main"); /* the main thread has its segment already */
    if (strstr(mode, "closeall"))
        for (int fd = 3; fd < 4096; fd++)
            close(fd);
    struct rlimit none = {3, 3};
    if (setrlimit(RLIMIT_NOFILE, &none) != 0) {
        perror("setrlimit");
        return 1;
    }
    if (strstr(mode, "fork")) {
        pid_t child = fork();
        if (child == 0) {
            work(NULL);
            _exit(0);
        }
        waitpid(child, NULL, 0);
        threads = 1;
    } else if (threads == 0) { /* the main thread, whose segment must grow */
        work(NULL);
        threads = 1;
    } else {
        pthread_t t[64];
        for (int i = 0; i < threads && i < 64; i++)
            pthread_create(&t[i], NULL, work, NULL);
        for (int i = 0; i < threads && i < 64; i++)
            pthread_join(t[i], NULL);
    }
    nvtxRangePop();
    printf("%ld\n", 2L * ranges * threads);
    return 0;
}
