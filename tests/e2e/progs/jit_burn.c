/* Code generated at run time, as a JIT would (tests/e2e/test_cpu_sampling.py):
 * a loop's machine code copied into an executable anonymous page, named in
 * /tmp/perf-PID.map (perf's JIT map format), then run for about SECONDS of
 * CPU time.  Prints its pid, so that the test can remove the map later.
 * usage: jit_burn [SECONDS] [nomap]   nomap: the same code, no map written */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* unsigned long loop(unsigned long n): x = x * 31 + n while --n, x86-64 */
static const unsigned char loop_code[] = {
    0x31, 0xc0, /* xor eax, eax */
    0x48, 0x6b, 0xc0, 0x1f, /* loop: imul rax, rax, 31 */
    0x48, 0x01, 0xf8, /* add rax, rdi */
    0x48, 0xff, 0xcf, /* dec rdi */
    0x75, 0xf4, /* jnz loop */
    0xc3, /* ret */
};

static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int write_map(const void *code, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)getpid());
    FILE *map = fopen(path, "w");
    if (!map) {
        perror(path);
        return -1;
    }
    fprintf(map, "%lx %zx jit_hot_loop\n", (unsigned long)(uintptr_t)code, size);
    return fclose(map);
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 1.0;
    unsigned char *page =
        mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    memcpy(page, loop_code, sizeof loop_code);
    if (mprotect(page, 4096, PROT_READ | PROT_EXEC) != 0) {
        perror("mprotect");
        return 1;
    }
    if (!(argc > 2 && !strcmp(argv[2], "nomap")) && write_map(page, sizeof loop_code) != 0)
        return 1;
    unsigned long (*loop)(unsigned long) = (unsigned long (*)(unsigned long))(uintptr_t)page;
    unsigned long sum = 0;
    double until = cpu_seconds() + seconds;
    while (cpu_seconds() < until)
        sum += loop(5000000);
    printf("pid %d sum %lu\n", (int)getpid(), sum & 0xff);
    return 0;
}
