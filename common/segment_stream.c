#include "segment_stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Large enough for the biggest record after the buffer is compacted. */
_Static_assert(ASYS_STREAM_BUFFER_SIZE >= 2 * ASYS_REC_MAX_SIZE, "a record always fits");

int asys_segment_header_check(const struct asys_segment_header *h, uint64_t size,
                              struct asys_err *err)
{
    if (size < ASYS_SEGMENT_HEADER_SIZE)
        return asys_fail(err, "segment is shorter than its header (%llu bytes)",
                         (unsigned long long)size);
    if (memcmp(h->magic, ASYS_SEGMENT_MAGIC, ASYS_SEGMENT_MAGIC_LEN) != 0)
        return asys_fail(err, "not an asys segment (bad magic)");
    if (h->format_version == 0)
        return asys_fail(err, "segment format version 0 is unknown (versions start at 1)");
    if (h->format_version > ASYS_FORMAT_VERSION)
        return asys_fail(err, "segment format version %u is newer than this asys supports (%u)",
                         h->format_version, ASYS_FORMAT_VERSION);
    if (h->header_size < ASYS_SEGMENT_HEADER_SIZE || h->header_size % 8 || h->header_size > 4096 ||
        h->header_size > size)
        return asys_fail(err, "bad segment header size %u", h->header_size);
    if (h->collector != ASYS_SEGMENT_THREAD && h->collector != ASYS_SEGMENT_LAUNCHER)
        return asys_fail(err, "unknown segment collector %u", h->collector);
    if (h->clock_kind < ASYS_CLOCK_MONOTONIC || h->clock_kind > ASYS_CLOCK_CNTVCT)
        return asys_fail(err, "unknown clock kind %u", h->clock_kind);
    if (h->feature_mask & ~(uint64_t)ASYS_FEATURES_KNOWN)
        return asys_fail(err, "segment uses record families this asys cannot read (mask 0x%llx)",
                         (unsigned long long)h->feature_mask);
    return 0;
}

/* Makes at least `need` bytes available from pos; returns bytes available. */
static long fill(struct asys_segment_stream *s, size_t need, struct asys_err *err)
{
    if (s->len - s->pos >= need)
        return (long)(s->len - s->pos);
    if (s->pos) { /* compact: keep the unread tail */
        memmove(s->buf, s->buf + s->pos, s->len - s->pos);
        s->buf_offset += s->pos;
        s->len -= s->pos;
        s->pos = 0;
    }
    while (s->len < need && s->source_read < s->limit) {
        uint64_t room = s->cap - s->len;
        uint64_t left = s->limit - s->source_read;
        uint64_t want = room < left ? room : left;
        uint64_t step = s->read_size > need - s->len ? s->read_size : need - s->len;
        if (want > step)
            want = step;
        if (s->read_size < s->cap)
            s->read_size *= 2;
        long n = s->read(s->ctx, s->buf + s->len, (size_t)want);
        if (n < 0)
            return asys_fail(err, "read error at offset %llu",
                             (unsigned long long)(s->buf_offset + s->len));
        if (n == 0) {
            s->limit = s->source_read; /* the source ended early */
            break;
        }
        s->len += (size_t)n;
        s->source_read += (uint64_t)n;
    }
    return (long)(s->len - s->pos);
}

int asys_segment_stream_open(struct asys_segment_stream *s, asys_read_fn read, void *ctx,
                             uint64_t limit, struct asys_err *err)
{
    return asys_segment_stream_open_in(s, read, ctx, limit, NULL, err);
}

int asys_segment_stream_open_in(struct asys_segment_stream *s, asys_read_fn read, void *ctx,
                                uint64_t limit, uint8_t *buffer, struct asys_err *err)
{
    memset(s, 0, sizeof *s);
    s->read = read;
    s->ctx = ctx;
    s->limit = limit;
    s->cap = ASYS_STREAM_BUFFER_SIZE;
    /* small first: most segments of a many-process run hold a few kB, and
     * reading past them into reserved blocks or holes costs a zero-filled
     * page each; in an arena slot, the first read ends with its first page */
    s->read_size = 4096u - ASYS_SLOT_HEADER_SIZE;
    s->borrowed = buffer != NULL;
    s->buf = buffer ? buffer : malloc(s->cap);
    if (!s->buf)
        return asys_fail(err, "out of memory");
    long have = fill(s, ASYS_SEGMENT_HEADER_SIZE, err);
    if (have < 0)
        goto fail;
    if (have < ASYS_SEGMENT_HEADER_SIZE) {
        asys_fail(err, "segment is shorter than its header (%ld bytes)", have);
        goto fail;
    }
    memcpy(&s->header, s->buf, sizeof s->header);
    if (asys_segment_header_check(&s->header, s->limit, err) != 0)
        goto fail;
    if (fill(s, s->header.header_size, err) < (long)s->header.header_size) {
        asys_fail(err, "segment is shorter than its header");
        goto fail;
    }
    s->pos = s->header.header_size;
    s->stop = s->limit;
    if (s->header.data_end && s->header.data_end < s->stop)
        s->stop = s->header.data_end;
    s->ticks = s->header.base_ticks;
    return 0;
fail:
    asys_segment_stream_close(s);
    return -1;
}

void asys_segment_stream_close(struct asys_segment_stream *s)
{
    if (!s->borrowed)
        free(s->buf);
    s->buf = NULL;
}

int asys_segment_stream_next(struct asys_segment_stream *s, struct asys_record *rec,
                             struct asys_err *err)
{
    if (s->finished)
        return 0;
    uint64_t offset = s->buf_offset + s->pos;
    if (offset + 8 > s->stop) {
        s->finished = 1;
        return 0;
    }
    long have = fill(s, 8, err);
    if (have < 0)
        return -1;
    if (have < 8) {
        s->finished = 1;
        return 0;
    }
    asys_rec_word word;
    memcpy(&word, s->buf + s->pos, 8);
    if (word == 0) { /* unwritten space: the writer stopped here */
        s->finished = 1;
        return 0;
    }
    unsigned type = ASYS_REC_TYPE(word);
    uint64_t size = ASYS_REC_SIZE_WORDS(word) * 8u;
    if (ASYS_REC_SIZE_WORDS(word) == ASYS_REC_EXTENDED) {
        if (fill(s, 16, err) < 16)
            return asys_fail(err, "record at offset %llu is cut short", (unsigned long long)offset);
        uint32_t bytes;
        memcpy(&bytes, s->buf + s->pos + 8, 4);
        size = bytes;
    }
    const struct asys_rec_info *info = asys_rec_info(type);
    if (!info)
        return asys_fail(err, "unknown record type %u at offset %llu", type,
                         (unsigned long long)offset);
    if (!(s->header.feature_mask & info->feature))
        return asys_fail(err, "record %s at offset %llu is outside the segment's features",
                         info->name, (unsigned long long)offset);
    if (size < 8 || size % 8 || size > ASYS_REC_MAX_SIZE || size < info->min_size)
        return asys_fail(err, "record %s at offset %llu has a bad size (%llu bytes)", info->name,
                         (unsigned long long)offset, (unsigned long long)size);
    if (offset + size > s->stop || fill(s, (size_t)size, err) < (long)size)
        return asys_fail(err, "record %s at offset %llu is cut short", info->name,
                         (unsigned long long)offset);
    if (s->max_records && s->records >= s->max_records)
        return asys_fail_kind(err, ASYS_ERR_LIMIT,
                              "more than %llu records in one segment (a damaged or hostile "
                              "report? --max-segment-records allows more)",
                              (unsigned long long)s->max_records);
    s->ticks += ASYS_REC_DELTA(word);
    if (type == ASYS_REC_TIME_BASE) {
        const struct asys_rec_time_base *tb = (const void *)(s->buf + s->pos);
        s->ticks = tb->ticks;
    }
    rec->type = type;
    rec->arg = ASYS_REC_ARG(word);
    rec->ticks = s->ticks;
    rec->data = s->buf + s->pos;
    rec->size = (uint32_t)size;
    rec->offset = offset;
    s->pos += (size_t)size;
    s->records++;
    return 1;
}

long asys_read_fd(void *ctx, void *buf, size_t size)
{
    int fd = *(int *)ctx;
    for (;;) {
        ssize_t n = read(fd, buf, size);
        if (n >= 0 || errno != EINTR)
            return (long)n;
    }
}
