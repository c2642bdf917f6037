/* Writing a whole buffer to a descriptor (or at an offset of it), going on
 * after short writes and EINTR. */
#ifndef ASYS_WRITE_ALL_H
#define ASYS_WRITE_ALL_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

/* The loop of both below: at `offset`, or at the descriptor's position
 * when `offset` is negative.  0, or -1 with errno set (EIO when the
 * descriptor took nothing). */
static inline int asys_write_all_at(int fd, const void *data, size_t size, int64_t offset)
{
    const uint8_t *p = data;
    while (size) {
        ssize_t n = offset < 0 ? write(fd, p, size) : pwrite(fd, p, size, (off_t)offset);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;
            return -1;
        }
        p += n;
        size -= (size_t)n;
        if (offset >= 0)
            offset += n;
    }
    return 0;
}

/* 0, or -1 with errno set (EIO when the descriptor took nothing). */
static inline int asys_write_all(int fd, const void *data, size_t size)
{
    return asys_write_all_at(fd, data, size, -1);
}

/* The same at `offset` (pwrite: the descriptor's position stays). */
static inline int asys_pwrite_all(int fd, const void *data, size_t size, uint64_t offset)
{
    return asys_write_all_at(fd, data, size, (int64_t)offset);
}

#endif
