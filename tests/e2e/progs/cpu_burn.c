/* A program with known CPU hot spots and known scheduling, for the CPU
 * sampling tests (test_cpu_sampling.py).
 *
 *   cpu_burn hot MS        two threads burning CPU for about MS ms: the
 *                          "worker" thread spends ~80 % of the work in
 *                          burn_a, the main thread ~20 % in burn_b; both
 *                          through middle(); prints the CPU ms each thread's
 *                          burning took ("burn_cpu_ms A B")
 *   cpu_burn states MS     a "sleeper" thread that sleeps, a "busy" thread
 *                          that spins, a "reader" thread blocked in read()
 *                          on a pipe until the end
 *   cpu_burn fork MS       forks; the child burns CPU for MS ms in its own pid
 *   cpu_burn loop M        one thread, M million iterations (80 % in burn_a, 20 % in
 *                          burn_b), no calibration; prints the seconds it took
 *                          (bench/cpu_sampling.py)
 *
 * Work is counted in loop iterations, not time, so the 80/20 split holds
 * whatever the machine's load. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

/* A macro, not an inline function: the samples' own function is burn_a or
 * burn_b, not a helper (an inlined function is a frame of its own in a
 * stack, as perf --inline shows it; cpu_inline.c has one). */
#define spin(iterations) \
    ({ \
        unsigned long x_ = sink, n_ = (iterations); \
        for (unsigned long i_ = 0; i_ < n_; i_++) \
            x_ = x_ * 6364136223846793005ul + 1442695040888963407ul; \
        x_; \
    })

/* Called between blocks of work: burn_a and burn_b are not leaf functions,
 * so a frame-pointer build gives them a frame (gcc leaves a leaf's out even
 * with -fno-omit-frame-pointer, and a frame-pointer walk then skips its
 * caller). */
__attribute__((noinline)) void checkpoint(void)
{
    __asm__ volatile("" ::: "memory");
}

#define BLOCK 65536ul

__attribute__((noinline)) void burn_a(unsigned long iterations)
{
    for (unsigned long done = 0; done < iterations; done += BLOCK) {
        sink = spin(iterations - done < BLOCK ? iterations - done : BLOCK);
        checkpoint();
    }
}

__attribute__((noinline)) void burn_b(unsigned long iterations)
{
    for (unsigned long done = 0; done < iterations; done += BLOCK) {
        sink = spin(iterations - done < BLOCK ? iterations - done : BLOCK);
        checkpoint();
    }
}

__attribute__((noinline)) void middle(int which, unsigned long iterations)
{
    if (which == 'a')
        burn_a(iterations);
    else
        burn_b(iterations);
    __asm__ volatile("" ::: "memory");
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Iterations per ms on this machine: the fastest of five tries, so that a
 * try preempted on a loaded machine does not shorten the whole run. */
static unsigned long calibrate(void)
{
    unsigned long n = 1000000, best = 0;
    for (int try = 0; try < 5; try++) {
        double t0 = now_ms();
        sink = spin(n);
        double dt = now_ms() - t0;
        unsigned long per_ms = dt > 0.01 ? (unsigned long)(n / dt) : n * 100;
        if (per_ms > best)
            best = per_ms;
    }
    return best;
}

struct work {
    int which;
    unsigned long chunks, chunk;
    double cpu_ms; /* the thread's CPU time for the chunks */
};

static double thread_cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void *worker(void *arg)
{
    struct work *w = arg;
    prctl(PR_SET_NAME, w->which == 'a' ? "burner_a" : "burner_b");
    double start = thread_cpu_ms();
    for (unsigned long i = 0; i < w->chunks; i++)
        middle(w->which, w->chunk);
    w->cpu_ms = thread_cpu_ms() - start;
    return NULL;
}

static int hot(double ms)
{
    unsigned long per_ms = calibrate();
    /* 2 CPUs may be shared: the total work is ms of one CPU */
    unsigned long total = (unsigned long)(per_ms * ms);
    struct work a = {'a', 400, total * 8 / 10 / 400, 0}, b = {'b', 100, total * 2 / 10 / 100, 0};
    pthread_t t;
    if (pthread_create(&t, NULL, worker, &a) != 0)
        return 1;
    worker(&b);
    pthread_join(t, NULL);
    /* the split the samples must show: CPU time, whatever the machine's
     * load did to each thread's iterations (the work is 80/20) */
    printf("burn_cpu_ms %.1f %.1f\n", a.cpu_ms, b.cpu_ms);
    return 0;
}

static double state_ms;
static int pipe_fds[2];

static void *sleeper(void *arg)
{
    (void)arg;
    prctl(PR_SET_NAME, "sleeper");
    struct timespec ts = {(time_t)(state_ms / 1000), (long)((long)state_ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
    return NULL;
}

static void *busy(void *arg)
{
    (void)arg;
    prctl(PR_SET_NAME, "busy");
    double end = now_ms() + state_ms;
    while (now_ms() < end)
        sink = spin(10000);
    return NULL;
}

static int reader_ready; /* atomic: the reader is about to block in read() */

static void *reader(void *arg)
{
    (void)arg;
    prctl(PR_SET_NAME, "reader");
    __atomic_store_n(&reader_ready, 1, __ATOMIC_RELEASE);
    char c;
    ssize_t n = read(pipe_fds[0], &c, 1);
    (void)n;
    return NULL;
}

static int states(double ms)
{
    state_ms = ms;
    if (pipe(pipe_fds) != 0)
        return 1;
    pthread_t s, b, r;
    if (pthread_create(&s, NULL, sleeper, NULL) || pthread_create(&b, NULL, busy, NULL) ||
        pthread_create(&r, NULL, reader, NULL))
        return 1;
    pthread_join(s, NULL);
    pthread_join(b, NULL);
    /* on a loaded machine the reader may not have run yet: it must block first */
    while (!__atomic_load_n(&reader_ready, __ATOMIC_ACQUIRE))
        usleep(1000);
    usleep(100000);
    ssize_t n = write(pipe_fds[1], "x", 1);
    (void)n;
    pthread_join(r, NULL);
    return 0;
}

static int forked(double ms)
{
    pid_t child = fork();
    if (child < 0)
        return 1;
    if (child == 0) {
        prctl(PR_SET_NAME, "child");
        /* a fixed amount of work: MS of this machine unloaded (~1.5 ns an iteration) */
        for (int i = 0; i < 100; i++)
            middle('a', (unsigned long)(ms * 650000 / 100));
        _exit(0);
    }
    printf("child %d\n", (int)child);
    fflush(stdout);
    int status;
    waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static int loop(double millions)
{
    unsigned long total = (unsigned long)(millions * 1e6);
    double t0 = now_ms();
    for (int i = 0; i < 100; i++) {
        middle('a', total * 8 / 10 / 100);
        middle('b', total * 2 / 10 / 100);
    }
    printf("%.6f\n", (now_ms() - t0) / 1e3);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: cpu_burn hot|states|fork MS | loop MILLIONS\n");
        return 2;
    }
    double ms = atof(argv[2]);
    if (!strcmp(argv[1], "hot"))
        return hot(ms);
    if (!strcmp(argv[1], "states"))
        return states(ms);
    if (!strcmp(argv[1], "fork"))
        return forked(ms);
    if (!strcmp(argv[1], "loop"))
        return loop(ms);
    return 2;
}
