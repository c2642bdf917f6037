/* cpu_inline N: a hot loop whose work is split between a function inlined
 * into its caller (inner_hot, about 60 %) and the caller's own code
 * (outer_work, about 40 %): CPU samples name the inlined function as a frame
 * of its own under the function it was inlined into, as perf report
 * --inline does (tests/e2e/test_cpu_sampling.py). */
#include <stdio.h>
#include <stdlib.h>

static inline __attribute__((always_inline)) unsigned long inner_hot(unsigned long x)
{
    for (int i = 0; i < 200; i++)
        x = x * 6364136223846793005ul + 1442695040888963407ul;
    return x;
}

__attribute__((noinline)) unsigned long outer_work(unsigned long n)
{
    unsigned long acc = 0;
    for (unsigned long i = 0; i < n; i++) {
        acc += inner_hot(i);
        for (int j = 0; j < 150; j++)
            acc ^= acc >> 3 | (acc << 7);
    }
    return acc;
}

int main(int argc, char **argv)
{
    unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000000;
    printf("%lu\n", outer_work(n));
    return 0;
}
