/* Per-call cost of the calls OSRT wraps.
 * usage: osrt_overhead mutex|read CALLS [DEPTH]
 * mutex: uncontended pthread_mutex_lock + unlock (ns per pair)
 * read:  1-byte read from /dev/zero (ns per call), made DEPTH frames deep
 * Prints ns per call. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static double mutex_loop(long calls)
{
    double start = now();
    for (long i = 0; i < calls; i++) {
        pthread_mutex_lock(&lock);
        pthread_mutex_unlock(&lock);
    }
    return (now() - start) / (double)calls;
}

static int zero_fd;

static double read_loop(long calls)
{
    char c;
    double start = now();
    for (long i = 0; i < calls; i++)
        if (read(zero_fd, &c, 1) != 1)
            abort();
    return (now() - start) / (double)calls;
}

/* Recurses so that the reads happen `depth` frames below main. */
__attribute__((noinline)) static double deep(int depth, long calls)
{
    if (depth <= 1)
        return read_loop(calls);
    double r = deep(depth - 1, calls);
    __asm__ volatile("" ::: "memory"); /* no tail call */
    return r;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    long calls = atol(argv[2]);
    int depth = argc > 3 ? atoi(argv[3]) : 1;
    zero_fd = open("/dev/zero", O_RDONLY);
    double ns;
    if (!strcmp(argv[1], "mutex"))
        ns = mutex_loop(calls);
    else if (!strcmp(argv[1], "read"))
        ns = deep(depth, calls);
    else
        return 2;
    printf("%.2f\n", ns);
    return 0;
}
