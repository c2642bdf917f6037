/* The cost of starting a process, as the processes themselves pay it: starts
 * PROGRAM (default /bin/true) COUNT times, one after the other, and prints
 * the CPU time (user + system, from RUSAGE_CHILDREN), the minor page faults
 * and the wall time per process: "cpu_us faults wall_us" (bench/processes.py,
 * --only process_cost).  The children's CPU time leaves out what a tool does
 * in processes of its own (a launcher's threads), which wall time keeps.
 * usage: spawn_cost COUNT [PROGRAM [ARG...]] */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

int main(int argc, char **argv)
{
    long count = argc > 1 ? atol(argv[1]) : 500;
    char *true_argv[] = {"/bin/true", NULL};
    char **child = argc > 2 ? argv + 2 : true_argv;
    if (count <= 0)
        return 2;
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (long i = 0; i < count; i++) {
        pid_t pid;
        int status;
        if (posix_spawn(&pid, child[0], NULL, NULL, child, environ) != 0 ||
            waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
            fprintf(stderr, "spawn_cost: cannot run '%s'\n", child[0]);
            return 1;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    double cpu_us = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
                    (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
    double wall_us =
        (double)(end.tv_sec - start.tv_sec) * 1e6 + (double)(end.tv_nsec - start.tv_nsec) / 1e3;
    printf("%.1f %.2f %.1f\n", cpu_us / (double)count, (double)ru.ru_minflt / (double)count,
           wall_us / (double)count);
    return 0;
}
