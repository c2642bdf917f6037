/* Known event counts per thread, for the per-thread event sampling tests
 * and bench/event_threads.py.
 *
 *   event_threads PAGES SLEEPS [fork]  a "toucher" thread touches PAGES new
 *       pages (at least PAGES page faults), a "sleeper" thread sleeps SLEEPS
 *       times 1 ms (at least SLEEPS context switches); with "fork", a child
 *       process's own toucher thread does the same.  Each worker first
 *       sleeps 100 ms, so that the launcher (which opens a thread's counters
 *       when it learns that the thread started) counts all of its work even
 *       on a loaded machine.  Prints "ROLE PID TID" per worker.
 *   event_threads many N   starts N short threads, 8 at a time (the cost of
 *       following threads).
 *   event_threads hold N   starts N threads that all live 300 ms at once.
 *   event_threads loop K   two threads that each make K thousand small system
 *       calls (the steady cost).
 * many and loop print "elapsed_ns N", their own run time. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long pages = 4096, sleeps = 100;

static void say(const char *role)
{
    char line[96];
    int n = snprintf(line, sizeof line, "%s %d %ld\n", role, (int)getpid(), syscall(SYS_gettid));
    if (write(1, line, (size_t)n) != n)
        _exit(3);
}

static void pause_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000};
    while (nanosleep(&t, &t) != 0)
        ;
}

static void *toucher(void *arg)
{
    (void)arg;
    say("toucher");
    pause_ms(100);
    size_t size = (size_t)pages * 4096u;
    volatile char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return (void *)1;
    for (size_t i = 0; i < size; i += 4096)
        p[i] = 1;
    munmap((void *)p, size);
    return NULL;
}

static void *sleeper(void *arg)
{
    (void)arg;
    say("sleeper");
    pause_ms(100);
    for (long i = 0; i < sleeps; i++)
        pause_ms(1);
    return NULL;
}

static int run_pair(void)
{
    pthread_t a, b;
    if (pthread_create(&a, NULL, toucher, NULL) || pthread_create(&b, NULL, sleeper, NULL))
        return 1;
    void *ra, *rb;
    pthread_join(a, &ra);
    pthread_join(b, &rb);
    return ra || rb;
}

static int run_child(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        pthread_t t;
        void *r = NULL;
        if (pthread_create(&t, NULL, toucher, NULL))
            _exit(1);
        pthread_join(t, &r);
        _exit(r ? 1 : 0);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return 1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static void *short_thread(void *arg)
{
    (void)arg;
    char page[4 * 4096];
    memset(page, 1, sizeof page);
    return (void *)(long)(page[100] != 1);
}

static int run_many(long n)
{
    for (long done = 0; done < n; done += 8) {
        pthread_t t[8];
        long k = n - done < 8 ? n - done : 8;
        for (long i = 0; i < k; i++)
            if (pthread_create(&t[i], NULL, short_thread, NULL))
                return 1;
        for (long i = 0; i < k; i++)
            pthread_join(t[i], NULL);
    }
    return 0;
}

static void *holder(void *arg)
{
    (void)arg;
    pause_ms(300);
    return NULL;
}

static int run_hold(long n)
{
    pthread_t *t = calloc((size_t)n, sizeof *t);
    long started = 0;
    while (t && started < n && !pthread_create(&t[started], NULL, holder, NULL))
        started++;
    for (long i = 0; i < started; i++)
        pthread_join(t[i], NULL);
    free(t);
    return started != n;
}

static long loop_thousands;

static void *busy(void *arg)
{
    (void)arg;
    for (long k = 0; k < loop_thousands; k++)
        for (int i = 0; i < 1000; i++)
            (void)syscall(SYS_getppid);
    return NULL;
}

static int run_loop(long thousands)
{
    pthread_t a, b;
    loop_thousands = thousands;
    if (pthread_create(&a, NULL, busy, NULL) || pthread_create(&b, NULL, busy, NULL))
        return 1;
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return 0;
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Runs `run(n)` and prints how long it took. */
static int timed(int (*run)(long), long n)
{
    uint64_t start = now_ns();
    int rc = run(n);
    printf("elapsed_ns %llu\n", (unsigned long long)(now_ns() - start));
    return rc;
}

int main(int argc, char **argv)
{
    if (argc > 2 && !strcmp(argv[1], "many"))
        return timed(run_many, atol(argv[2]));
    if (argc > 2 && !strcmp(argv[1], "hold"))
        return run_hold(atol(argv[2]));
    if (argc > 2 && !strcmp(argv[1], "loop"))
        return timed(run_loop, atol(argv[2]));
    if (argc > 1)
        pages = atol(argv[1]);
    if (argc > 2)
        sleeps = atol(argv[2]);
    if (pages < 1 || sleeps < 0)
        return 2;
    int rc = run_pair();
    if (!rc && argc > 3 && !strcmp(argv[3], "fork"))
        rc = run_child();
    return rc;
}
