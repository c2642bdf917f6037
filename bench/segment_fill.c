/* The anchor of a recorder's per-byte cost on this machine: writing fresh
 * memory the way a segment is written (a MAP_SHARED file mapping, 1 MiB
 * chunks populated with MADV_POPULATE_WRITE, records of RECORD bytes laid
 * one after the other).  On a virtual machine whose page tables the host
 * shadows, that costs nanoseconds per byte, whatever writes it.
 * usage: segment_fill DIR RECORD_BYTES MIB; prints "ns_per_byte X" */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    size_t record = (size_t)atol(argv[2]), total = (size_t)atol(argv[3]) << 20, chunk = 1u << 20;
    char path[4096];
    snprintf(path, sizeof path, "%s/segment-fill.dat", argv[1]);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, (off_t)total) != 0 || record < 8)
        return 1;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (size_t off = 0; off < total; off += chunk) {
        char *m = mmap(NULL, chunk, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
        if (m == MAP_FAILED)
            return 1;
#ifdef MADV_POPULATE_WRITE
        madvise(m, chunk, MADV_POPULATE_WRITE);
#endif
        for (size_t i = 0; i + record <= chunk; i += record)
            memset(m + i, (int)(i & 0xff), record);
        munmap(m, chunk);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
    printf("ns_per_byte %.3f\n", ns / (double)total);
    close(fd);
    unlink(path);
    return 0;
}
