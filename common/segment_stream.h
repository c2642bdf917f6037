/* Sequential reader of one segment, from a file or an archive member.
 * Shared by the launcher's finalize (counting) and the importer (decoding).
 * Record sizes are checked against asys_rec_ops[] before a record is handed
 * out, so decoders can read min_size bytes without further checks. */
#ifndef ASYS_SEGMENT_STREAM_H
#define ASYS_SEGMENT_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "asys_error.h"
#include "asys_format.h"

/* Reads up to `size` bytes; returns bytes read, 0 at end, -1 on error. */
typedef long (*asys_read_fn)(void *ctx, void *buf, size_t size);
/* An asys_read_fn over a file descriptor (ctx: an int *), EINTR retried. */
long asys_read_fd(void *ctx, void *buf, size_t size);

struct asys_record {
    unsigned type;
    unsigned arg;
    uint64_t ticks; /* the record's timestamp, in the segment's clock ticks */
    const uint8_t *data; /* the whole record, header word first; valid until the next call */
    uint32_t size; /* bytes */
    uint64_t offset; /* within the segment file */
};

struct asys_segment_stream {
    asys_read_fn read;
    void *ctx;
    uint64_t limit; /* segment bytes available */
    uint8_t *buf;
    size_t cap;
    int borrowed; /* buf is the caller's */
    size_t len; /* valid bytes in buf */
    size_t pos; /* next record in buf */
    uint64_t buf_offset; /* segment offset of buf[0] */
    uint64_t source_read; /* bytes taken from the source so far */
    size_t read_size; /* the next read's size: small first (most segments are), doubling */
    uint64_t stop; /* offset where records end (data_end or limit) */
    uint64_t ticks;
    uint64_t records;
    uint64_t max_records; /* 0: no limit */
    int finished;
    struct asys_segment_header header;
};

/* Reads and checks the header.  `limit` is the member's size.  On error the
 * stream needs no close. */
int asys_segment_stream_open(struct asys_segment_stream *s, asys_read_fn read, void *ctx,
                             uint64_t limit, struct asys_err *err);
/* The same with a buffer of the caller's (ASYS_STREAM_BUFFER_SIZE bytes,
 * borrowed until close): one buffer for the many segments of a report. */
#define ASYS_STREAM_BUFFER_SIZE (4u << 20)
int asys_segment_stream_open_in(struct asys_segment_stream *s, asys_read_fn read, void *ctx,
                                uint64_t limit, uint8_t *buffer, struct asys_err *err);
/* 1: *rec filled; 0: end of data; -1: the rest of the segment is unreadable. */
int asys_segment_stream_next(struct asys_segment_stream *s, struct asys_record *rec,
                             struct asys_err *err);
void asys_segment_stream_close(struct asys_segment_stream *s);

/* Checks a segment header; returns 0 or -1 with the reason. */
int asys_segment_header_check(const struct asys_segment_header *h, uint64_t size,
                              struct asys_err *err);

/* Static facts about each record type (record_types.c). */
enum asys_field_kind {
    ASYS_FIELD_UNSIGNED = 1,
    ASYS_FIELD_SIGNED,
    ASYS_FIELD_HEX,
    ASYS_FIELD_STRING, /* a string id of the record's process image */
    ASYS_FIELD_TICKS, /* a timestamp in the segment's clock */
    ASYS_FIELD_NS, /* CLOCK_MONOTONIC (or REALTIME) nanoseconds */
    ASYS_FIELD_BYTES, /* raw bytes, shown in hex */
    ASYS_FIELD_RESERVED,
};

/* One field of a record struct. */
struct asys_rec_field {
    const char *name;
    uint16_t offset;
    uint16_t size; /* bytes */
    uint16_t elem_size; /* arrays: bytes per item (0: a scalar) */
    uint8_t kind; /* enum asys_field_kind */
};

/* What follows a record's struct. */
enum asys_rec_tail {
    ASYS_TAIL_NONE = 0,
    ASYS_TAIL_TEXT, /* text whose length is the u32 at tail_offset */
    ASYS_TAIL_FRAMES, /* u64 addresses whose count is the u32 at tail_offset */
    ASYS_TAIL_REALS, /* doubles whose count is the u32 at tail_offset */
};

/* What a report of one recording window (asys start .. asys stop: the
 * manifest's recording_window) keeps of a record type.  A session's arena
 * holds every window recorded so far: finalize leaves the other windows'
 * events out of the report, and the importer keeps only the window's
 * (each record type's line in record_types.c says which). */
enum asys_window_kind {
    /* definitions (strings, processes, threads, domains, devices) and the
     * stream's own records: no moment's event, kept whatever the window */
    ASYS_WINDOW_TIMELESS = 0,
    /* a moment's event, stamped when it happened: kept when its timestamp
     * lies inside the window */
    ASYS_WINDOW_EVENT,
    /* device work, delivered by CUPTI after the fact: kept when it started
     * on the device inside the window (its start_ns, the u64 after the
     * header word) */
    ASYS_WINDOW_DEVICE_WORK,
};

struct asys_rec_info {
    const char *name; /* "HGTX_PUSH" */
    uint32_t min_size;
    uint32_t feature; /* enum asys_feature */
    const struct asys_rec_field *fields;
    uint16_t field_count;
    const char *arg_name; /* what the header's arg holds; NULL: nothing */
    uint8_t arg_kind; /* enum asys_field_kind */
    uint8_t tail; /* enum asys_rec_tail */
    uint16_t tail_offset;
    uint8_t window; /* enum asys_window_kind */
};
const struct asys_rec_info *asys_rec_info(unsigned type);

enum asys_window_kind asys_rec_window_kind(unsigned type);
/* Whether a report of the window [start_ns, end_ns] (CLOCK_MONOTONIC)
 * leaves out `rec`, whose timestamp is `ns`. */
int asys_rec_outside_window(const struct asys_record *rec, uint64_t ns, uint64_t start_ns,
                            uint64_t end_ns);

#endif
