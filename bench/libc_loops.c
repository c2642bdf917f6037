/* libc_loops malloc|read N: N small malloc/free pairs, or N one-byte reads
 * of /dev/zero; prints the loop's nanoseconds per iteration (start-up not
 * counted), so the cost of whatever wraps these calls shows alone. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int malloc_loop(long n)
{
    void *window[8] = {0};
    for (long i = 0; i < n; i++) {
        free(window[i & 7]);
        window[i & 7] = malloc(16 + (size_t)(i & 63));
        __asm__ volatile("" ::"r"(window[i & 7]) : "memory");
    }
    for (int i = 0; i < 8; i++)
        free(window[i]);
    return 0;
}

static int read_loop(long n)
{
    int fd = open("/dev/zero", O_RDONLY);
    char byte;
    if (fd < 0)
        return -1;
    for (long i = 0; i < n; i++)
        if (read(fd, &byte, 1) != 1)
            return -1;
    close(fd);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "malloc") && strcmp(argv[1], "read"))) {
        fprintf(stderr, "usage: libc_loops malloc|read N\n");
        return 2;
    }
    long n = atol(argv[2]);
    double start = now_ns();
    int rc = !strcmp(argv[1], "malloc") ? malloc_loop(n) : read_loop(n);
    double end = now_ns();
    if (rc != 0 || n <= 0)
        return 1;
    printf("%.3f\n", (end - start) / (double)n);
    return 0;
}
