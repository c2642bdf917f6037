/* NAME.asys-rep writer: a POSIX tar stream (ustar headers; a pax extended
 * header only for names over 99 bytes or members of 8 GiB and more),
 * compressed as one zstd frame.
 *
 * Written here rather than through libarchive: the launcher runs for every
 * recording, and libarchive (with libxml2 and ICU behind it) would bring a
 * dozen libraries and libstdc++ into it for the one format it writes. */
#include "report_archive.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#define COPY_BUFFER_SIZE (1u << 20)
#define TAR_BLOCK 512u
#define ZSTD_LEVEL 3 /* fast, about 4x on segments */
#define USTAR_NAME_MAX 99u
#define USTAR_SIZE_MAX 077777777777ull /* 11 octal digits */

struct asys_archive_writer {
    int fd;
    time_t now;
    ZSTD_CCtx *zstd;
    char *buffer;        /* file contents on their way in */
    uint8_t *compressed; /* zstd output on its way to fd */
    size_t compressed_size;
    uint64_t member_left; /* bytes the current member still owes */
    uint64_t member_size;
};

int asys_archive_writer_open(struct asys_archive_writer **out, int fd, struct asys_err *err)
{
    struct asys_archive_writer *w = calloc(1, sizeof *w);
    if (!w)
        return asys_fail(err, "out of memory");
    w->fd = fd;
    w->now = time(NULL);
    w->compressed_size = ZSTD_CStreamOutSize();
    w->buffer = malloc(COPY_BUFFER_SIZE);
    w->compressed = malloc(w->compressed_size);
    w->zstd = ZSTD_createCCtx();
    if (!w->buffer || !w->compressed || !w->zstd ||
        ZSTD_isError(ZSTD_CCtx_setParameter(w->zstd, ZSTD_c_compressionLevel, ZSTD_LEVEL)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(w->zstd, ZSTD_c_checksumFlag, 1))) {
        ZSTD_freeCCtx(w->zstd);
        free(w->buffer);
        free(w->compressed);
        free(w);
        return asys_fail(err, "out of memory");
    }
    *out = w;
    return 0;
}

static int write_all(int fd, const uint8_t *p, size_t n, struct asys_err *err)
{
    while (n) {
        ssize_t done = write(fd, p, n);
        if (done < 0 && errno == EINTR)
            continue;
        if (done <= 0)
            return asys_fail_errno(err, done < 0 ? errno : EIO, "write error");
        p += done;
        n -= (size_t)done;
    }
    return 0;
}

/* Compresses `size` bytes (ZSTD_e_end: and closes the frame). */
static int compress(struct asys_archive_writer *w, const void *data, size_t size,
                    ZSTD_EndDirective mode, struct asys_err *err)
{
    ZSTD_inBuffer in = {data, size, 0};
    for (;;) {
        ZSTD_outBuffer out = {w->compressed, w->compressed_size, 0};
        size_t left = ZSTD_compressStream2(w->zstd, &out, &in, mode);
        if (ZSTD_isError(left))
            return asys_fail(err, "zstd: %s", ZSTD_getErrorName(left));
        if (write_all(w->fd, w->compressed, out.pos, err) != 0)
            return -1;
        if (mode == ZSTD_e_end ? left == 0 : in.pos == in.size)
            return 0;
    }
}

/* width - 1 octal digits and a NUL, as tar writes them (callers keep the
 * value within the width). */
static void put_octal(char *field, size_t width, uint64_t value)
{
    field[width - 1] = '\0';
    for (size_t i = width - 1; i-- > 0; value >>= 3)
        field[i] = (char)('0' + (value & 7));
}

static void checksum(uint8_t *block)
{
    unsigned sum = 0;
    memset(block + 148, ' ', 8);
    for (unsigned i = 0; i < TAR_BLOCK; i++)
        sum += block[i];
    snprintf((char *)block + 148, 8, "%06o", sum);
    block[155] = ' ';
}

static void fill_header(const struct asys_archive_writer *w, uint8_t *block, const char *name,
                        uint64_t size, char type)
{
    memset(block, 0, TAR_BLOCK);
    snprintf((char *)block, 100, "%s", name);
    put_octal((char *)block + 100, 8, 0644);
    put_octal((char *)block + 108, 8, 0);
    put_octal((char *)block + 116, 8, 0);
    put_octal((char *)block + 124, 12, size > USTAR_SIZE_MAX ? 0 : size);
    put_octal((char *)block + 136, 12, (uint64_t)(w->now > 0 ? w->now : 0));
    block[156] = (uint8_t)type;
    memcpy(block + 257, "ustar", 6); /* magic "ustar\0", version "00" */
    memcpy(block + 263, "00", 2);
    checksum(block);
}

/* A pax record "LEN key=value\n", LEN counting itself. */
static size_t pax_record(char *out, size_t size, const char *key, const char *value)
{
    size_t body = strlen(key) + strlen(value) + 3; /* ' ', '=', '\n' */
    size_t len = body + 1;
    while (len != body + (size_t)snprintf(NULL, 0, "%zu", len))
        len = body + (size_t)snprintf(NULL, 0, "%zu", len);
    int n = snprintf(out, size, "%zu %s=%s\n", len, key, value);
    return n > 0 && (size_t)n < size ? (size_t)n : 0;
}

static int pad_member(struct asys_archive_writer *w, uint64_t size, struct asys_err *err)
{
    static const uint8_t zeros[TAR_BLOCK];
    size_t rest = (size_t)((TAR_BLOCK - size % TAR_BLOCK) % TAR_BLOCK);
    return rest ? compress(w, zeros, rest, ZSTD_e_continue, err) : 0;
}

static int write_header(struct asys_archive_writer *w, const char *name, uint64_t size,
                        struct asys_err *err)
{
    uint8_t block[TAR_BLOCK];
    if (strlen(name) > USTAR_NAME_MAX || size > USTAR_SIZE_MAX) {
        char pax[1400], number[24];
        size_t used = 0;
        if (strlen(name) > USTAR_NAME_MAX)
            used += pax_record(pax + used, sizeof pax - used, "path", name);
        snprintf(number, sizeof number, "%llu", (unsigned long long)size);
        if (size > USTAR_SIZE_MAX)
            used += pax_record(pax + used, sizeof pax - used, "size", number);
        if (!used || strlen(name) > 1024)
            return asys_fail(err, "member name '%.64s...' is too long", name);
        fill_header(w, block, "PaxHeader", used, 'x');
        if (compress(w, block, TAR_BLOCK, ZSTD_e_continue, err) != 0 ||
            compress(w, pax, used, ZSTD_e_continue, err) != 0 || pad_member(w, used, err) != 0)
            return -1;
    }
    fill_header(w, block, name, size, '0');
    w->member_left = w->member_size = size;
    return compress(w, block, TAR_BLOCK, ZSTD_e_continue, err);
}

static int write_data(struct asys_archive_writer *w, const void *data, size_t size,
                      struct asys_err *err)
{
    if (size > w->member_left)
        return asys_fail(err, "member data longer than its header says");
    w->member_left -= size;
    if (compress(w, data, size, ZSTD_e_continue, err) != 0)
        return -1;
    return w->member_left ? 0 : pad_member(w, w->member_size, err);
}

int asys_archive_add_buffer(struct asys_archive_writer *w, const char *name, const void *data,
                            size_t size, struct asys_err *err)
{
    if (write_header(w, name, size, err) != 0)
        return -1;
    return size ? write_data(w, data, size, err) : 0;
}

int asys_archive_add_file(struct asys_archive_writer *w, const char *name, const char *path,
                          uint64_t size, struct asys_err *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return asys_fail_errno(err, errno, "cannot open '%s'", path);
    int rc = write_header(w, name, size, err);
    uint64_t left = size;
    while (rc == 0 && left) {
        size_t want = left < COPY_BUFFER_SIZE ? (size_t)left : COPY_BUFFER_SIZE;
        ssize_t n = read(fd, w->buffer, want);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) { /* the file shrank: keep the member size the header promised */
            memset(w->buffer, 0, want);
            n = (ssize_t)want;
        }
        rc = write_data(w, w->buffer, (size_t)n, err);
        left -= (uint64_t)n;
    }
    close(fd);
    return rc;
}

int asys_archive_writer_close(struct asys_archive_writer *w, struct asys_err *err)
{
    static const uint8_t end[2 * TAR_BLOCK]; /* two zero blocks end a tar stream */
    int rc = 0;
    if (w->member_left)
        rc = asys_fail(err, "archive closed inside a member");
    if (rc == 0)
        rc = compress(w, end, sizeof end, ZSTD_e_end, err);
    ZSTD_freeCCtx(w->zstd);
    free(w->buffer);
    free(w->compressed);
    free(w);
    return rc;
}
