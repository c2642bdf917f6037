/* Known heap patterns for the heap tracing tests (argv[1] picks one):
 *   leak       balanced_site: 20000 blocks of mixed sizes, all freed (half of
 *              them by another thread); leaky_site: 100 blocks of 1000 bytes
 *              never freed; calloc, realloc, posix_memalign, aligned_alloc,
 *              memalign, valloc, reallocarray once each, freed
 *   window     early_site: 10 blocks of 4096 bytes, freed 300 ms later; the
 *              window [0, 150 ms] sees them as not freed
 *   spread     6 rounds 60 ms apart, each: balanced_site 2000 blocks, half freed
 *              at once, half by a thread of the next round (the last round's by
 *              one of their own); leaky_site: 10 blocks of 1000 bytes never freed
 *   exitlive   a thread allocating and freeing in storm_site until the process
 *              exits, which main does after leaky_site (10 blocks of 1000 bytes)
 *   bigleak    leaky_site: 1000 blocks of 256 KiB never freed (never touched)
 *   estimate   mixed_site: 1 M allocations of 16..8191 bytes (seeded), freed;
 *              prints the bytes allocated
 *   storm      8 threads x 20000 malloc/free in storm_site
 *   fork       forks a child that execs this program with "leak"
 *   rss        forks a child that waits 400 ms, touches 200 MiB, holds it 400 ms,
 *              frees it and lives 400 ms more
 * Every site is a function of its own (noinline) so stacks name it. */
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void pause_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

#define BALANCED 20000
static void *handoff[BALANCED / 2];

__attribute__((noinline)) void *balanced_site(size_t size)
{
    void *p = malloc(size);
    __asm__ volatile("" ::: "memory");
    return p;
}

static void *free_other_half(void *arg)
{
    (void)arg;
    for (int i = 0; i < BALANCED / 2; i++)
        free(handoff[i]);
    return NULL;
}

__attribute__((noinline)) void leaky_site(int count, size_t size)
{
    for (int i = 0; i < count; i++) {
        void *volatile p = malloc(size);
        (void)p;
    }
    __asm__ volatile("" ::: "memory");
}

static void the_other_functions(void)
{
    void *p = calloc(10, 100);
    p = realloc(p, 5000);
    free(p);
    void *a = NULL;
    if (posix_memalign(&a, 64, 300) == 0)
        free(a);
    /* through a volatile pointer: the compiler may drop an unused pair */
    void *volatile b = aligned_alloc(64, 640);
    free(b);
    b = memalign(128, 256);
    free(b);
    b = valloc(100);
    free(b);
    b = reallocarray(NULL, 10, 10);
    free(b);
}

/* n blocks of balanced_site: the odd ones freed at once, the even ones kept. */
static void balanced_blocks(int n, void **kept, unsigned *seed)
{
    for (int i = 0; i < n; i++) {
        void *p = balanced_site(16 + rand_r(seed) % 2000);
        if (i % 2)
            free(p);
        else
            kept[i / 2] = p;
    }
}

static int leak(void)
{
    unsigned seed = 1;
    balanced_blocks(BALANCED, handoff, &seed);
    pthread_t t;
    pthread_create(&t, NULL, free_other_half, NULL);
    pthread_join(t, NULL);
    leaky_site(100, 1000);
    the_other_functions();
    return 0;
}

#define ROUNDS 6
#define ROUND_BLOCKS 2000

static void *free_kept(void *arg)
{
    void **kept = arg;
    for (int i = 0; i < ROUND_BLOCKS / 2; i++)
        free(kept[i]);
    return NULL;
}

/* Frees kept by a thread of its own, made to outlive one round's pause. */
static void free_on_a_thread(void **kept)
{
    pthread_t t;
    pthread_create(&t, NULL, free_kept, kept);
    pthread_join(t, NULL);
}

static int spread(void)
{
    static void *kept[2][ROUND_BLOCKS / 2];
    unsigned seed = 7;
    for (int round = 0; round < ROUNDS; round++) {
        balanced_blocks(ROUND_BLOCKS, kept[round % 2], &seed);
        if (round > 0)
            free_on_a_thread(kept[(round + 1) % 2]); /* the previous round's */
        leaky_site(10, 1000);
        pause_ms(60);
    }
    free_on_a_thread(kept[(ROUNDS - 1) % 2]);
    return 0;
}

__attribute__((noinline)) void early_site(void **blocks, int n)
{
    for (int i = 0; i < n; i++)
        blocks[i] = malloc(4096);
    __asm__ volatile("" ::: "memory");
}

static int window(void)
{
    void *blocks[10];
    early_site(blocks, 10);
    pause_ms(300);
    for (int i = 0; i < 10; i++)
        free(blocks[i]);
    pause_ms(50);
    return 0;
}

__attribute__((noinline)) void *mixed_site(size_t size)
{
    void *p = malloc(size);
    __asm__ volatile("" ::: "memory");
    return p;
}

static int estimate(void)
{
    uint64_t x = 88172645463325252ull, total = 0;
    for (int i = 0; i < 1000000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        size_t size = 16 + x % 8176;
        total += size;
        free(mixed_site(size));
    }
    printf("%llu\n", (unsigned long long)total);
    return 0;
}

__attribute__((noinline)) void *storm_site(size_t size)
{
    void *p = malloc(size);
    __asm__ volatile("" ::: "memory");
    return p;
}

static void *storm_thread(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    for (int i = 0; i < 20000; i++) {
        void *p = storm_site(1 + rand_r(&seed) % 512);
        memset(p, 1, 1);
        free(p);
    }
    return NULL;
}

static int storm(void)
{
    pthread_t t[8];
    for (int i = 0; i < 8; i++)
        pthread_create(&t[i], NULL, storm_thread, (void *)(uintptr_t)(i + 1));
    for (int i = 0; i < 8; i++)
        pthread_join(t[i], NULL);
    return 0;
}

static void *storm_forever(void *arg)
{
    (void)arg;
    for (;;)
        free(storm_site(64));
    return NULL;
}

static int exit_while_allocating(void)
{
    pthread_t t;
    pthread_create(&t, NULL, storm_forever, NULL);
    pause_ms(50);
    leaky_site(10, 1000);
    return 0; /* exit, the thread still running */
}

static int fork_child(const char *self)
{
    pid_t pid = fork();
    if (pid == 0) {
        execl(self, self, "leak", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static int rss(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        /* seen small first: the sampler finds children every 5 samples (250 ms at 20 Hz) */
        pause_ms(400);
        size_t size = 200u << 20;
        char *block = malloc(size);
        if (!block)
            _exit(1);
        memset(block, 1, size);
        __asm__ volatile("" : : "r"(block) : "memory"); /* the pages are used: keep them */
        pause_ms(400);
        free(block); /* large: given back to the kernel at once */
        pause_ms(400);
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "leak";
    if (!strcmp(mode, "leak"))
        return leak();
    if (!strcmp(mode, "window"))
        return window();
    if (!strcmp(mode, "spread"))
        return spread();
    if (!strcmp(mode, "bigleak")) {
        leaky_site(1000, 256 * 1024);
        return 0;
    }
    if (!strcmp(mode, "estimate"))
        return estimate();
    if (!strcmp(mode, "storm"))
        return storm();
    if (!strcmp(mode, "exitlive"))
        return exit_while_allocating();
    if (!strcmp(mode, "fork"))
        return fork_child(argv[0]);
    if (!strcmp(mode, "rss"))
        return rss();
    return 2;
}
