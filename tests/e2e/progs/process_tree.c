/* A tree of short processes with call stacks (tests/e2e/test_many_processes.py).
 * usage: process_tree N     starts N children (fork + exec of itself), in
 *                           batches of 8, and waits for them
 *        process_tree child one child: a blocking call two named functions
 *                           deep, long enough for the default
 *                           --osrt-backtrace-threshold
 *        process_tree N burn  the same with children that burn CPU for
 *                           about 10 ms two named functions deep, long
 *                           enough for CPU samples (-s process-tree)
 *        process_tree burn  one such child */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* CPU time, not wall time: a loaded machine still gives it its samples. */
__attribute__((noinline)) int child_spin(void)
{
    volatile unsigned long x = 0;
    double until = cpu_seconds() + 0.010;
    while (cpu_seconds() < until)
        for (int i = 0; i < 10000; i++)
            x += (unsigned long)i * 7;
    return (int)(x & 1) + 1; /* no tail call: this frame stays on the stack */
}

__attribute__((noinline)) int child_burn(void)
{
    int rc = child_spin();
    return rc * 2;
}

__attribute__((noinline)) int child_blocking_call(void)
{
    int rc = usleep(2000);
    return rc + 1; /* no tail call: this frame stays on the stack */
}

__attribute__((noinline)) int child_work(void)
{
    int rc = child_blocking_call();
    return rc * 2;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "child"))
        return child_work() == 2 ? 0 : 1;
    if (argc > 1 && !strcmp(argv[1], "burn"))
        return child_burn() >= 2 ? 0 : 1;
    int n = argc > 1 ? atoi(argv[1]) : 200;
    const char *mode = argc > 2 && !strcmp(argv[2], "burn") ? "burn" : "child";
    int failed = 0;
    for (int started = 0; started < n;) {
        int batch = n - started < 8 ? n - started : 8;
        pid_t pids[8];
        for (int i = 0; i < batch; i++) {
            pids[i] = fork();
            if (pids[i] == 0) {
                execl("/proc/self/exe", argv[0], mode, (char *)NULL);
                _exit(127);
            }
        }
        for (int i = 0; i < batch; i++) {
            int status;
            if (pids[i] < 0 || waitpid(pids[i], &status, 0) < 0 || status != 0)
                failed++;
        }
        started += batch;
    }
    printf("children %d failed %d\n", n, failed);
    return failed != 0;
}
