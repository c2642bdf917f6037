/* The anchor of bench/nic.py: a thread that only wakes up HZ times a second
 * for SECONDS (clock_nanosleep, absolute, as the launcher's samplers do) and
 * prints the CPU time it used per wakeup, in microseconds. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

int main(int argc, char **argv)
{
    long hz = argc > 1 ? atol(argv[1]) : 1000;
    double seconds = argc > 2 ? atof(argv[2]) : 3;
    if (hz <= 0 || seconds <= 0)
        return 2;
    long period = 1000000000L / hz, wakeups = (long)(hz * seconds);
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    for (long i = 0; i < wakeups; i++) {
        next.tv_nsec += period;
        while (next.tv_nsec >= 1000000000L) {
            next.tv_nsec -= 1000000000L;
            next.tv_sec++;
        }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
    }
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    double us = (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e6 +
                (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
    printf("%.2f\n", us / (double)wakeups);
    return 0;
}
