/* Finalize of one recording window: each injected thread's segment without
 * the other windows' events (window_filter.h). */
#define _GNU_SOURCE
#include "window_filter.h"
#include "write_all.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json_util.h"

/* Output is written in pieces of this size. */
#define FLUSH_SIZE (1u << 20)
_Static_assert(ASYS_REC_MAX_SIZE + 4096 <= FLUSH_SIZE, "a record or a header fits after a flush");

int asys_window_filter_init(struct asys_window_filter *f, const cJSON *manifest,
                            struct asys_err *err)
{
    memset(f, 0, sizeof *f);
    asys_clock_map_init(&f->clock);
    /* as the importer reads them (analyze/importer.c, import_core.c) */
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(manifest, "recording_window");
    uint64_t start, end;
    if (!cJSON_IsObject(w) || asys_json_get_u64(w, "start_ns", &start) != 0 ||
        asys_json_get_u64(w, "end_ns", &end) != 0 || end < start)
        return 0;
    if (asys_clock_map_load(&f->clock, manifest) < 0) {
        asys_clock_map_free(&f->clock);
        return asys_fail(err, "out of memory");
    }
    f->active = 1;
    f->start_ns = start;
    f->end_ns = end;
    return 0;
}

void asys_window_filter_free(struct asys_window_filter *f)
{
    asys_clock_map_free(&f->clock);
    free(f->buffer);
    memset(f, 0, sizeof *f);
}

static int write_at(int fd, const uint8_t *data, size_t size, uint64_t at, struct asys_err *err)
{
    return asys_pwrite_all(fd, data, size, at) == 0
               ? 0
               : asys_fail_errno(err, errno, "cannot write a segment's records");
}

/* The output so far: f->used bytes of the buffer after *at. */
static int flush(struct asys_window_filter *f, int fd, uint64_t *at, struct asys_err *err)
{
    if (write_at(fd, f->buffer, f->used, *at, err) != 0)
        return -1;
    *at += f->used;
    f->used = 0;
    return 0;
}

static int put(struct asys_window_filter *f, const void *data, size_t size, int fd, uint64_t *at,
               struct asys_err *err)
{
    if (f->used + size > FLUSH_SIZE && f->used && flush(f, fd, at, err) != 0)
        return -1;
    /* a record (at most ASYS_REC_MAX_SIZE) or a header always fits after a flush */
    if (!f->buffer && !(f->buffer = malloc(FLUSH_SIZE)))
        return asys_fail(err, "out of memory");
    memcpy(f->buffer + f->used, data, size);
    f->used += size;
    return 0;
}

static int keeps(struct asys_window_filter *f, const struct asys_segment_header *h,
                 const struct asys_record *rec)
{
    if (asys_rec_window_kind(rec->type) == ASYS_WINDOW_TIMELESS)
        return 1;
    /* imp_ns: a CLOCK_MONOTONIC segment's ticks are ns, others by the pairs */
    uint64_t ns = h->clock_kind == ASYS_CLOCK_MONOTONIC ? rec->ticks
                                                        : asys_clock_map_ns(&f->clock, rec->ticks);
    return !asys_rec_outside_window(rec, ns, f->start_ns, f->end_ns);
}

int asys_window_filter_segment(struct asys_window_filter *f, asys_read_fn read, void *ctx,
                               uint64_t size, int fd, uint64_t at, uint64_t *written,
                               uint64_t *records, struct asys_err *err)
{
    struct asys_segment_stream s;
    if (asys_segment_stream_open(&s, read, ctx, size, err) != 0)
        return -1;
    int rc = -1;
    uint64_t start = at, kept = 0, left_out = 0;
    f->used = 0;
    /* the header as read (the stream holds it whole at the start of its buffer) */
    uint32_t header_size = s.header.header_size;
    if (put(f, s.buf, header_size, fd, &at, err) != 0)
        goto out;
    uint64_t out_ticks = s.header.base_ticks; /* the timestamp the next delta builds on */
    struct asys_record rec;
    int next;
    while ((next = asys_segment_stream_next(&s, &rec, err)) > 0) {
        if (rec.type == ASYS_REC_PAD || rec.type == ASYS_REC_TIME_BASE)
            continue; /* the stream's own: written again where needed */
        if (!keeps(f, &s.header, &rec)) {
            left_out++;
            continue;
        }
        uint64_t delta = rec.ticks - out_ticks;
        if (delta > ASYS_REC_MAX_DELTA) { /* too far, or back: an absolute stamp first */
            struct asys_rec_time_base tb = {ASYS_REC_WORD(ASYS_REC_TIME_BASE, 2, 0, 0), rec.ticks};
            if (put(f, &tb, sizeof tb, fd, &at, err) != 0)
                goto out;
            kept++;
            delta = 0;
        }
        out_ticks = rec.ticks;
        asys_rec_word word;
        memcpy(&word, rec.data, sizeof word);
        word = (word & UINT64_C(0xffffffff)) | delta << 32;
        if (put(f, &word, sizeof word, fd, &at, err) != 0 ||
            put(f, rec.data + sizeof word, rec.size - sizeof word, fd, &at, err) != 0)
            goto out;
        kept++;
    }
    if (next < 0 || flush(f, fd, &at, err) != 0)
        goto out;
    /* a writer that closed said where its records end: here, now */
    if (s.header.data_end) {
        uint64_t end = at - start;
        if (write_at(fd, (const uint8_t *)&end, sizeof end,
                     start + offsetof(struct asys_segment_header, data_end), err) != 0)
            goto out;
    }
    *written = at - start;
    *records = kept;
    f->left_out += left_out;
    rc = 0;
out:
    asys_segment_stream_close(&s);
    return rc;
}

long asys_file_range_read(void *range, void *buffer, size_t size)
{
    struct asys_file_range *r = range;
    if (r->position >= r->end)
        return 0;
    if (size > r->end - r->position)
        size = (size_t)(r->end - r->position);
    for (;;) {
        ssize_t n = pread(r->fd, buffer, size, (off_t)r->position);
        if (n < 0 && errno == EINTR)
            continue;
        if (n > 0)
            r->position += (uint64_t)n;
        return (long)n;
    }
}
