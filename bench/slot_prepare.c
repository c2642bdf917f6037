/* What preparing an arena slot's pages costs on this machine: a 4 MiB range
 * of a MAP_SHARED file mapping made writable and present before a writer
 * touches it, as the page helper does for the recording threads
 * (recorder/inject/page_helper.c).
 *   fresh     fallocate, MADV_RANDOM, MADV_POPULATE_WRITE (the helper's way)
 *   readahead the same without MADV_RANDOM
 *   zeros     the range written with pwrite first, then MADV_POPULATE_WRITE
 *   released  as fresh, each slot's pages punched after use (the compressor's
 *             release), so that the next one reuses them
 * usage: slot_prepare DIR MODE SLOTS; prints the prepare and touch times per
 * MiB and the faults the touching thread took in the last slot. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define SLOT (4u << 20)

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: slot_prepare DIR fresh|readahead|zeros|released SLOTS\n");
        return 2;
    }
    const char *mode = argv[2];
    int zeros = !strcmp(mode, "zeros"), released = !strcmp(mode, "released");
    int random_access = !strcmp(mode, "fresh") || released;
    int slots = atoi(argv[3]);
    char path[4096];
    snprintf(path, sizeof path, "%s/slot_prepare.XXXXXX", argv[1]);
    int fd = mkstemp(path);
    if (fd < 0 || slots < 1) {
        perror("slot_prepare");
        return 1;
    }
    unlink(path);
    static char zero[SLOT];
    double prepare = 0, touch = 0;
    long faults = 0;
    for (int i = 0; i < slots; i++) {
        off_t off = (off_t)i * SLOT;
        double t0 = now_ms();
        if (zeros ? pwrite(fd, zero, SLOT, off) != (ssize_t)SLOT
                  : fallocate(fd, 0, off, SLOT) != 0) {
            perror("slot_prepare: reserve");
            return 1;
        }
        char *m = mmap(NULL, SLOT, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
        if (m == MAP_FAILED) {
            perror("slot_prepare: mmap");
            return 1;
        }
        if (random_access)
            madvise(m, SLOT, MADV_RANDOM);
        madvise(m, SLOT, MADV_POPULATE_WRITE);
        double t1 = now_ms();
        struct rusage before, after;
        getrusage(RUSAGE_THREAD, &before);
        for (size_t p = 0; p < SLOT; p += 4096)
            m[p] = 1;
        getrusage(RUSAGE_THREAD, &after);
        touch += now_ms() - t1;
        prepare += t1 - t0;
        faults = after.ru_minflt - before.ru_minflt;
        munmap(m, SLOT);
        if (released)
            fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, SLOT);
    }
    double mib = (double)slots * (SLOT >> 20);
    printf("%s: prepare %.3f ms/MiB, touch %.3f ms/MiB, faults in the last slot %ld\n", mode,
           prepare / mib, touch / mib, faults);
    close(fd);
    return 0;
}
