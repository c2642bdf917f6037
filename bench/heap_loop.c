/* A malloc/free-heavy loop for the heap tracing benchmark: THREADS threads,
 * each N allocations of mixed sizes (16..4111 bytes, seeded), freed in a
 * small rolling window so blocks live a little while. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static long per_thread;

__attribute__((noinline)) void *loop_site(size_t size)
{
    void *p = malloc(size);
    __asm__ volatile("" ::: "memory");
    return p;
}

static void *run(void *arg)
{
    uint64_t x = 0x9e3779b97f4a7c15ull * ((uintptr_t)arg + 1);
    void *window[64] = {0};
    for (long i = 0; i < per_thread; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        int slot = (int)(i & 63);
        free(window[slot]);
        window[slot] = loop_site(16 + x % 4096);
    }
    for (int i = 0; i < 64; i++)
        free(window[i]);
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    per_thread = argc > 2 ? atol(argv[2]) : 2000000;
    pthread_t t[64];
    if (threads < 1 || threads > 64)
        return 2;
    for (int i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, run, (void *)(uintptr_t)i);
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    printf("%ld\n", per_thread * threads);
    return 0;
}
