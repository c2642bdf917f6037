/* The hgtx_overhead loop with the push/pop calls as plain functions, built
 * with -pg so `uftrace record` traces every entry and exit.
 * usage: uftrace_loop PAIRS   (prints ns per pair) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile int depth;

__attribute__((noinline)) int range_push(const char *name)
{
    (void)name;
    return depth++;
}

__attribute__((noinline)) int range_pop(void)
{
    return --depth;
}

int main(int argc, char **argv)
{
    long pairs = argc > 1 ? atol(argv[1]) : 1000000;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < pairs; i++) {
        range_push("bench");
        range_pop();
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double ns =
        ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)pairs;
    printf("%.2f\n", ns);
    return 0;
}
