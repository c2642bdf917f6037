/* Writing a whole buffer to a descriptor (or at an offset of it), going on
 * after short writes and EINTR. */
#ifndef ASYS_WRITE_ALL_H
#define ASYS_WRITE_ALL_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

/* 0, or -1 with errno set (EIO when the descriptor took nothing). */
static inline int asys_write_all(int fd, const void *data, size_t size)
{
    const uint8_t *p = data;
    while (size) {
        ssize_t n = write(fd, p, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;
            return -1;
        }
        p += n;
        size -= (size_t)n;
    }
    return 0;
}

/* The same at `offset` (pwrite: the descriptor's position stays). */
static inline int asys_pwrite_all(int fd, const void *data, size_t size, uint64_t offset)
{
    const uint8_t *p = data;
    while (size) {
        ssize_t n = pwrite(fd, p, size, (off_t)offset);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;
            return -1;
        }
        p += n;
        size -= (size_t)n;
        offset += (uint64_t)n;
    }
    return 0;
}

#endif
