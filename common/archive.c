/* The report archive (archive.h): a POSIX tar stream (ustar headers; a pax
 * extended header only for names over 99 bytes or members of 8 GiB and
 * more), compressed as zstd.
 *
 * Written here rather than through libarchive: the launcher runs for every
 * recording, and libarchive (with libxml2 and ICU behind it) would bring a
 * dozen libraries and libstdc++ into it for the one format asys writes; the
 * reader, for the same format, is small, strict, and bounds every size. */
#include "archive.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "asys_format.h"
#include "write_all.h"

#define COPY_BUFFER_SIZE (1u << 20)
#define TAR_BLOCK 512u
/* Finalize compresses what the launcher did not compress while the program
 * ran (recorder/arena_compressor.c: those slots come as whole frames,
 * asys_archive_write_frame), after the run.  Level 1:
 * the report of 2 M heap allocations at interval 1 (128 MB of segments)
 * finalized 0.25-0.5 s sooner and came out 9 % smaller than at level 3;
 * small HGTX/OSRT reports stay within 1 % of level 3's size.  Compression
 * runs on a worker per core (at most 4) while this thread reads the
 * segments: finalizing 1.3 GB of heap segments (interval 1) took 3.8-4.7 s
 * with two workers against 6.8-7.0 s with none on an idle 2-core VM (on a
 * busy one it gained nothing); best effort, for a libzstd built without
 * threads refuses it. */
#define ZSTD_LEVEL 1
#define ZSTD_MAX_WORKERS 4
/* Fewer bytes than this to come: no workers.  For a 500-process recording's
 * 1.2 MB, starting them and waiting for them at the end took 5.1-6.0 ms
 * against 2.8-3.5 ms on this thread; make's 3.9 MB: 8.2-9.0 against
 * 7.2-7.5 ms. */
#define ZSTD_WORKERS_MIN_BYTES (16ull << 20)
#define USTAR_NAME_MAX 99u
#define USTAR_SIZE_MAX 077777777777ull /* 11 octal digits */

struct asys_archive_writer {
    int fd;
    time_t now;
    ZSTD_CCtx *zstd;
    char *buffer; /* file contents on their way in */
    uint8_t *compressed; /* zstd output on its way to fd */
    size_t compressed_size;
    uint64_t member_left; /* bytes the current member still owes */
    uint64_t member_size;
    int frame_open; /* bytes went into the current frame since it began */
    int begun; /* a member was begun: the workers are set */
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
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores > 1)
        ZSTD_CCtx_setParameter(w->zstd, ZSTD_c_nbWorkers,
                               cores < ZSTD_MAX_WORKERS ? (int)cores : ZSTD_MAX_WORKERS);
    /* the report mark first (FORMAT.md section 1), little-endian */
    struct asys_report_mark mark = {ASYS_REPORT_MARK_MAGIC, sizeof mark - 8, "",
                                    ASYS_FORMAT_VERSION, 0};
    memcpy(mark.id, ASYS_REPORT_MARK_ID, sizeof mark.id);
    if (asys_write_all(fd, &mark, sizeof mark) != 0) {
        int e = errno;
        ZSTD_freeCCtx(w->zstd);
        free(w->buffer);
        free(w->compressed);
        free(w);
        return asys_fail_errno(err, e, "write error");
    }
    *out = w;
    return 0;
}

static int write_all(int fd, const uint8_t *p, size_t n, struct asys_err *err)
{
    return asys_write_all(fd, p, n) == 0 ? 0 : asys_fail_errno(err, errno, "write error");
}

/* Compresses `size` bytes (ZSTD_e_end: and closes the frame). */
static int compress(struct asys_archive_writer *w, const void *data, size_t size,
                    ZSTD_EndDirective mode, struct asys_err *err)
{
    ZSTD_inBuffer in = {data, size, 0};
    w->frame_open = mode != ZSTD_e_end && (w->frame_open || size);
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
    w->begun = 1;
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

void asys_archive_writer_expect(struct asys_archive_writer *w, uint64_t bytes)
{
    if (!w->begun && bytes < ZSTD_WORKERS_MIN_BYTES)
        ZSTD_CCtx_setParameter(w->zstd, ZSTD_c_nbWorkers, 0);
}

int asys_archive_begin_member(struct asys_archive_writer *w, const char *name, uint64_t size,
                              struct asys_err *err)
{
    if (w->member_left)
        return asys_fail(err, "archive member begun inside another");
    return write_header(w, name, size, err);
}

int asys_archive_write(struct asys_archive_writer *w, const void *data, size_t size,
                       struct asys_err *err)
{
    return size ? write_data(w, data, size, err) : 0;
}

int asys_archive_write_frame(struct asys_archive_writer *w, const void *frame, size_t frame_size,
                             uint64_t content_size, struct asys_err *err)
{
    if (content_size > w->member_left)
        return asys_fail(err, "member data longer than its header says");
    if (w->frame_open && compress(w, NULL, 0, ZSTD_e_end, err) != 0)
        return -1;
    if (write_all(w->fd, frame, frame_size, err) != 0)
        return -1;
    w->member_left -= content_size;
    return w->member_left ? 0 : pad_member(w, w->member_size, err);
}

int asys_archive_add_buffer(struct asys_archive_writer *w, const char *name, const void *data,
                            size_t size, struct asys_err *err)
{
    if (write_header(w, name, size, err) != 0)
        return -1;
    return size ? write_data(w, data, size, err) : 0;
}

int asys_archive_add_stream(struct asys_archive_writer *w, const char *name, uint64_t size,
                            long (*read_fn)(void *ctx, void *buf, size_t size), void *ctx,
                            struct asys_err *err)
{
    int rc = write_header(w, name, size, err);
    uint64_t left = size;
    while (rc == 0 && left) {
        size_t want = left < COPY_BUFFER_SIZE ? (size_t)left : COPY_BUFFER_SIZE;
        long n = read_fn(ctx, w->buffer, want);
        if (n <= 0) { /* the source shrank: keep the member size the header promised */
            memset(w->buffer, 0, want);
            n = (long)want;
        }
        rc = write_data(w, w->buffer, (size_t)n, err);
        left -= (uint64_t)n;
    }
    return rc;
}

static long read_file(void *ctx, void *buf, size_t size)
{
    int fd = *(int *)ctx;
    for (;;) {
        ssize_t n = read(fd, buf, size);
        if (n >= 0 || errno != EINTR)
            return (long)n;
    }
}

int asys_archive_add_file(struct asys_archive_writer *w, const char *name, const char *path,
                          uint64_t size, struct asys_err *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return asys_fail_errno(err, errno, "cannot open '%s'", path);
    int rc = asys_archive_add_stream(w, name, size, read_file, &fd, err);
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

/* ---- reading ------------------------------------------------------------------- */

#define PAX_LIMIT (1u << 20) /* larger extended headers are not ours */

struct asys_archive_reader {
    int fd;
    ZSTD_DCtx *zstd;
    uint8_t *in; /* compressed bytes from fd */
    size_t in_size, in_pos, in_len;
    int in_eof;
    uint8_t *out; /* decompressed bytes not handed out yet */
    size_t out_size, out_pos, out_len;
    size_t frame_left; /* ZSTD_decompressStream's hint: 0 at a frame's end */
    uint64_t position; /* decompressed bytes consumed */
    uint64_t member_left;
    uint64_t member_pad;
    int in_member;
    uint64_t compressed_read; /* bytes taken from fd */
    uint64_t file_size;
    struct asys_archive_limits limits;
    int limited; /* the error is a limit, not damage */
    int truncated; /* the error is the end of the file */
    int tar_seen; /* a tar header was read: the stream is an archive */
    int marked; /* the file begins with the report mark */
    int cut_in_frame; /* the file ended inside a zstd frame */
    char error[256];
};

static int fail_read(struct asys_archive_reader *r, const char *what)
{
    if (!r->error[0])
        snprintf(r->error, sizeof r->error, "%s", what);
    return -1;
}

/* The file ends inside the archive (a report cut short by a full disk, a
 * copy interrupted...). */
static int cut_short(struct asys_archive_reader *r)
{
    r->truncated = 1;
    return fail_read(r, "cut short");
}

/* -1 (the reason set) when `total` decompressed bytes break a limit. */
static int check_limits(struct asys_archive_reader *r, uint64_t total)
{
    const struct asys_archive_limits *l = &r->limits;
    if (l->max_bytes && total > l->max_bytes) {
        snprintf(r->error, sizeof r->error,
                 "report expands beyond %llu bytes%s%s (a damaged or hostile report? "
                 "--max-report-size allows more)",
                 (unsigned long long)l->max_bytes, l->max_bytes_why ? ", " : "",
                 l->max_bytes_why ? l->max_bytes_why : "");
        r->limited = 1;
        return -1;
    }
    uint64_t consumed = r->compressed_read - (r->in_len - r->in_pos);
    if (l->max_expansion && total > l->expansion_slack &&
        total / (consumed ? consumed : 1) >= l->max_expansion) {
        snprintf(r->error, sizeof r->error,
                 "report expands more than %u times (a damaged or hostile report? "
                 "--max-expansion allows more)",
                 l->max_expansion);
        r->limited = 1;
        return -1;
    }
    return 0;
}

/* Decompresses more: 1 when bytes came, 0 at the clean end of the stream, -1 on error. */
static int refill(struct asys_archive_reader *r)
{
    if (r->error[0])
        return -1;
    r->out_pos = r->out_len = 0;
    for (;;) {
        if (r->in_pos == r->in_len && !r->in_eof) {
            ssize_t n;
            do
                n = read(r->fd, r->in, r->in_size);
            while (n < 0 && errno == EINTR);
            if (n < 0)
                return fail_read(r, strerror(errno));
            r->in_pos = 0;
            r->in_len = (size_t)n;
            r->in_eof = n == 0;
            r->compressed_read += (uint64_t)n;
            if (r->limits.progress)
                r->limits.progress(r->limits.progress_ctx, r->compressed_read, r->file_size);
        }
        if (r->in_pos == r->in_len && r->in_eof) {
            r->cut_in_frame = r->frame_left != 0;
            return r->frame_left ? cut_short(r) : 0;
        }
        ZSTD_inBuffer in = {r->in, r->in_len, r->in_pos};
        ZSTD_outBuffer out = {r->out, r->out_size, 0};
        size_t hint = ZSTD_decompressStream(r->zstd, &out, &in);
        r->in_pos = in.pos;
        if (ZSTD_isError(hint))
            return fail_read(r, ZSTD_getErrorName(hint));
        r->frame_left = hint;
        if (out.pos) {
            r->out_len = out.pos;
            return check_limits(r, r->position + out.pos) ? -1 : 1;
        }
    }
}

/* Exactly `size` decompressed bytes (NULL: skipped): 1, 0 at the stream's end
 * before the first byte, -1 (damaged or cut short). */
static int take(struct asys_archive_reader *r, void *buf, uint64_t size)
{
    uint8_t *p = buf;
    uint64_t got = 0;
    while (got < size) {
        if (r->out_pos == r->out_len) {
            int rc = refill(r);
            if (rc < 0)
                return -1;
            if (rc == 0)
                return got ? cut_short(r) : 0;
        }
        size_t n = r->out_len - r->out_pos;
        if (n > size - got)
            n = (size_t)(size - got);
        if (p)
            memcpy(p + got, r->out + r->out_pos, n);
        r->out_pos += n;
        got += n;
        r->position += n;
    }
    return 1;
}

int asys_archive_reader_open(struct asys_archive_reader **out, const char *path,
                             const struct asys_archive_limits *limits, struct asys_err *err)
{
    *out = NULL;
    struct asys_archive_reader *r = calloc(1, sizeof *r);
    if (!r)
        return asys_fail_kind(err, ASYS_ERR_NOMEM, "out of memory");
    if (limits)
        r->limits = *limits;
    r->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (r->fd < 0) {
        asys_fail_errno(err, errno, "%s", "");
        free(r);
        return -1;
    }
    struct stat st;
    r->file_size = fstat(r->fd, &st) == 0 && st.st_size > 0 ? (uint64_t)st.st_size : 0;
    r->in_size = ZSTD_DStreamInSize();
    r->out_size = ZSTD_DStreamOutSize();
    r->in = malloc(r->in_size);
    r->out = malloc(r->out_size);
    r->zstd = ZSTD_createDCtx();
    struct asys_report_mark mark;
    ssize_t n = -1;
    if (r->in && r->out && r->zstd)
        n = pread(r->fd, &mark, sizeof mark, 0);
    const uint8_t *magic = (const uint8_t *)&mark;
    r->marked = n == (ssize_t)sizeof mark && mark.magic == ASYS_REPORT_MARK_MAGIC &&
                !memcmp(mark.id, ASYS_REPORT_MARK_ID, sizeof mark.id);
    if (!r->in || !r->out || !r->zstd) {
        asys_fail_kind(err, ASYS_ERR_NOMEM, "out of memory");
    } else if (!r->marked && (n < 4 || magic[0] != 0x28 || magic[1] != 0xb5 || magic[2] != 0x2f ||
                              magic[3] != 0xfd)) {
        asys_fail_kind(err, ASYS_ERR_INPUT, "not an asys report (not zstd-compressed)");
    } else {
        *out = r;
        return 0;
    }
    asys_archive_reader_close(r);
    return -1;
}

/* A tar number field: octal (NUL/space padded) or base-256 (GNU, high bit). */
static int parse_number(const uint8_t *field, size_t width, uint64_t *out)
{
    uint64_t v = 0;
    if (field[0] & 0x80) {
        if (field[0] != 0x80)
            return -1; /* negative or too wide */
        for (size_t i = 1; i < width; i++) {
            if (v >> 56)
                return -1;
            v = v << 8 | field[i];
        }
        *out = v;
        return 0;
    }
    size_t i = 0;
    while (i < width && field[i] == ' ')
        i++;
    int digits = 0;
    for (; i < width && field[i] >= '0' && field[i] <= '7'; i++, digits++) {
        if (v >> 61)
            return -1;
        v = v << 3 | (uint64_t)(field[i] - '0');
    }
    for (; i < width; i++)
        if (field[i] != ' ' && field[i] != '\0')
            return -1;
    *out = v;
    return digits ? 0 : -1;
}

static int checksum_ok(const uint8_t *block)
{
    uint64_t stored;
    if (parse_number(block + 148, 8, &stored) != 0)
        return 0;
    unsigned long sum_u = 0;
    long sum_s = 0;
    for (unsigned i = 0; i < TAR_BLOCK; i++) {
        uint8_t c = i >= 148 && i < 156 ? ' ' : block[i];
        sum_u += c;
        sum_s += (signed char)c;
    }
    return stored == sum_u || (long)stored == sum_s;
}

static void copy_field(char *out, size_t size, const uint8_t *field, size_t width)
{
    size_t n = strnlen((const char *)field, width);
    if (n >= size)
        n = size - 1;
    memcpy(out, field, n);
    out[n] = '\0';
}

/* Reads a pax extended header's "path" and "size" into *m (those override
 * the next header's own). */
static int read_pax(struct asys_archive_reader *r, uint64_t size, char *path, size_t path_size,
                    uint64_t *pax_size, int *has_size)
{
    if (size > PAX_LIMIT)
        return fail_read(r, "extended header too large");
    char *text = malloc((size_t)size + 1);
    if (!text)
        return fail_read(r, "out of memory");
    int rc =
        take(r, text, size) == 1 && take(r, NULL, (TAR_BLOCK - size % TAR_BLOCK) % TAR_BLOCK) >= 0
            ? 0
            : cut_short(r);
    text[size] = '\0';
    for (size_t pos = 0; rc == 0 && pos < size;) {
        char *end;
        unsigned long long len = strtoull(text + pos, &end, 10);
        if (end == text + pos || *end != ' ' || len < 5 || len > size - pos ||
            text[pos + len - 1] != '\n') {
            rc = fail_read(r, "bad extended header");
            break;
        }
        char *key = end + 1, *eq = memchr(key, '=', (size_t)(text + pos + len - 1 - key));
        if (!eq) {
            rc = fail_read(r, "bad extended header");
            break;
        }
        size_t vlen = (size_t)(text + pos + len - 1 - (eq + 1));
        if ((size_t)(eq - key) == 4 && !strncmp(key, "path", 4)) {
            if (vlen >= path_size) {
                rc = fail_read(r, "member name too long");
                break;
            }
            memcpy(path, eq + 1, vlen);
            path[vlen] = '\0';
        } else if ((size_t)(eq - key) == 4 && !strncmp(key, "size", 4)) {
            char number[32];
            char *nend;
            if (vlen == 0 || vlen >= sizeof number) {
                rc = fail_read(r, "bad extended header size");
                break;
            }
            memcpy(number, eq + 1, vlen);
            number[vlen] = '\0';
            *pax_size = strtoull(number, &nend, 10);
            if (*nend || number[0] == '-') {
                rc = fail_read(r, "bad extended header size");
                break;
            }
            *has_size = 1;
        }
        pos += (size_t)len;
    }
    free(text);
    return rc;
}

/* The reader's failure as an error: a limit, or damage. */
static int read_failure(const struct asys_archive_reader *r, struct asys_err *err)
{
    return asys_fail_kind(err,
                          r->limited     ? ASYS_ERR_LIMIT
                          : r->truncated ? ASYS_ERR_TRUNCATED
                                         : ASYS_ERR_INPUT,
                          "%s", r->error);
}

int asys_archive_failure(const struct asys_archive_reader *r, struct asys_err *err)
{
    return r->error[0] ? read_failure(r, err) : 0;
}

int asys_archive_next(struct asys_archive_reader *r, struct asys_archive_member *m,
                      struct asys_err *err)
{
    char long_name[sizeof m->name] = "";
    uint64_t pax_size = 0;
    int has_pax_size = 0;
    if (r->in_member && take(r, NULL, r->member_left + r->member_pad) < 0)
        return read_failure(r, err);
    r->in_member = 0;
    for (;;) {
        uint8_t block[TAR_BLOCK];
        int rc = take(r, block, TAR_BLOCK);
        if (rc < 0)
            return read_failure(r, err);
        if (rc == 0)
            return 0; /* the stream ended without end blocks: what was there was whole */
        static const uint8_t zeros[TAR_BLOCK];
        if (!memcmp(block, zeros, TAR_BLOCK))
            return 0; /* the end-of-archive blocks */
        if (!checksum_ok(block))
            return asys_fail_kind(err, ASYS_ERR_INPUT, "damaged archive (bad header checksum)");
        r->tar_seen = 1;
        uint64_t size;
        if (parse_number(block + 124, 12, &size) != 0)
            return asys_fail_kind(err, ASYS_ERR_INPUT, "damaged archive (bad member size)");
        char type = (char)block[156];
        if (type == 'x' || type == 'g' || type == 'L' || type == 'K') {
            if (type == 'x' &&
                read_pax(r, size, long_name, sizeof long_name, &pax_size, &has_pax_size) != 0)
                return read_failure(r, err);
            if (type == 'L') {
                if (size >= sizeof long_name)
                    return asys_fail_kind(err, ASYS_ERR_INPUT, "member name too long");
                if (take(r, long_name, size) != 1 ||
                    take(r, NULL, (TAR_BLOCK - size % TAR_BLOCK) % TAR_BLOCK) < 0)
                    return r->error[0] ? read_failure(r, err)
                                       : asys_fail_kind(err, ASYS_ERR_TRUNCATED, "cut short");
                long_name[size] = '\0';
            }
            if (type == 'g' || type == 'K') {
                if (take(r, NULL, size + (TAR_BLOCK - size % TAR_BLOCK) % TAR_BLOCK) < 0)
                    return read_failure(r, err);
            }
            continue;
        }
        if (has_pax_size)
            size = pax_size;
        if (long_name[0]) {
            snprintf(m->name, sizeof m->name, "%s", long_name);
        } else {
            char name[101], prefix[156];
            copy_field(name, sizeof name, block, 100);
            copy_field(prefix, sizeof prefix, block + 345, 155);
            if (prefix[0] && !memcmp(block + 257, "ustar", 5))
                snprintf(m->name, sizeof m->name, "%s/%s", prefix, name);
            else
                snprintf(m->name, sizeof m->name, "%s", name);
        }
        m->size = size;
        m->regular = type == '0' || type == '\0' || type == '7';
        /* hard and symbolic links, devices, directories and FIFOs carry no data */
        if (type != '0' && type != '\0' && type != '7')
            size = 0;
        r->member_left = size;
        r->member_pad = (TAR_BLOCK - size % TAR_BLOCK) % TAR_BLOCK;
        r->in_member = 1;
        if (!m->regular)
            m->size = 0;
        return 1;
    }
}

long asys_archive_read(struct asys_archive_reader *r, void *buf, size_t size)
{
    if (!r->in_member || !r->member_left)
        return 0;
    if (size > r->member_left)
        size = (size_t)r->member_left;
    if (r->out_pos == r->out_len) {
        int rc = refill(r);
        if (rc < 0)
            return -1;
        if (rc == 0)
            return cut_short(r);
    }
    size_t n = r->out_len - r->out_pos;
    if (n > size)
        n = size;
    memcpy(buf, r->out + r->out_pos, n);
    r->out_pos += n;
    r->position += n;
    r->member_left -= n;
    return (long)n;
}

const char *asys_archive_error(const struct asys_archive_reader *r)
{
    return r->error[0] ? r->error : NULL;
}

int asys_archive_is_tar(const struct asys_archive_reader *r)
{
    return r->tar_seen || r->cut_in_frame; /* a zstd stream cut short: a report, once */
}

int asys_archive_is_marked(const struct asys_archive_reader *r)
{
    return r->marked;
}

uint64_t asys_archive_compressed_position(const struct asys_archive_reader *r)
{
    return r->compressed_read;
}

uint64_t asys_archive_position(const struct asys_archive_reader *r)
{
    return r->position;
}

void asys_archive_reader_close(struct asys_archive_reader *r)
{
    if (!r)
        return;
    if (r->fd >= 0)
        close(r->fd);
    ZSTD_freeDCtx(r->zstd);
    free(r->in);
    free(r->out);
    free(r);
}
