/* A minimal protocol buffers encoder: varints, tags, length-delimited fields.
 * A message is either built in its own buffer and embedded (pb_message), or
 * written in place between pb_open() and pb_close(). */
#ifndef ASYS_PROTOBUF_H
#define ASYS_PROTOBUF_H

#include <stddef.h>
#include <stdint.h>

enum pb_wire { PB_VARINT = 0, PB_FIXED64 = 1, PB_LEN = 2 };

struct pb_buf {
    uint8_t *data;
    size_t len;
    size_t cap;
    int oom; /* an allocation failed: the content is incomplete */
};

void pb_reset(struct pb_buf *b);
void pb_free(struct pb_buf *b);

/* Makes room for `more` bytes; 0 (and b->oom) when memory runs out. */
int pb_reserve(struct pb_buf *b, size_t more);

/* Varints are most of a trace: inline, with one room check each. */
static inline void pb_varint(struct pb_buf *b, uint64_t v)
{
    if (b->cap - b->len < 10 && !pb_reserve(b, 10))
        return;
    uint8_t *p = b->data + b->len;
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    b->len = (size_t)(p - b->data);
}

static inline void pb_uint(struct pb_buf *b, uint32_t field, uint64_t v)
{
    pb_varint(b, (uint64_t)field << 3 | PB_VARINT);
    pb_varint(b, v);
}
void pb_sint(struct pb_buf *b, uint32_t field, int64_t v); /* int64, two's complement */
void pb_fixed64(struct pb_buf *b, uint32_t field, uint64_t v);
void pb_double(struct pb_buf *b, uint32_t field, double v);
void pb_bytes(struct pb_buf *b, uint32_t field, const void *data, size_t len);
/* Appends bytes as they are (no tag): for building a field's content. */
void pb_raw(struct pb_buf *b, const void *data, size_t len);
void pb_string(struct pb_buf *b, uint32_t field, const char *s);
/* Starts a message field in place (no copy): returns where its content
 * begins, to pass to pb_close() once the content is written. */
size_t pb_open(struct pb_buf *b, uint32_t field);
void pb_close(struct pb_buf *b, size_t start);
/* Embeds `inner` as field `field` of `b`. */
void pb_message(struct pb_buf *b, uint32_t field, const struct pb_buf *inner);

#endif
