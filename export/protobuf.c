#include "protobuf.h"

#include <stdlib.h>
#include <string.h>

int pb_reserve(struct pb_buf *b, size_t more)
{
    if (b->len + more <= b->cap)
        return 1;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + more)
        cap *= 2;
    uint8_t *bigger = realloc(b->data, cap);
    if (!bigger) {
        b->oom = 1;
        return 0;
    }
    b->data = bigger;
    b->cap = cap;
    return 1;
}

void pb_reset(struct pb_buf *b)
{
    b->len = 0;
}

void pb_free(struct pb_buf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

static void tag(struct pb_buf *b, uint32_t field, enum pb_wire wire)
{
    pb_varint(b, ((uint64_t)field << 3) | wire);
}

void pb_sint(struct pb_buf *b, uint32_t field, int64_t v)
{
    pb_uint(b, field, (uint64_t)v);
}

void pb_fixed64(struct pb_buf *b, uint32_t field, uint64_t v)
{
    tag(b, field, PB_FIXED64);
    if (!pb_reserve(b, 8))
        return;
    for (int i = 0; i < 8; i++)
        b->data[b->len++] = (uint8_t)(v >> (8 * i));
}

void pb_double(struct pb_buf *b, uint32_t field, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    pb_fixed64(b, field, bits);
}

void pb_bytes(struct pb_buf *b, uint32_t field, const void *data, size_t len)
{
    tag(b, field, PB_LEN);
    pb_varint(b, len);
    pb_raw(b, data, len);
}

void pb_raw(struct pb_buf *b, const void *data, size_t len)
{
    if (!len || !pb_reserve(b, len))
        return;
    memcpy(b->data + b->len, data, len);
    b->len += len;
}

void pb_string(struct pb_buf *b, uint32_t field, const char *s)
{
    pb_bytes(b, field, s ? s : "", s ? strlen(s) : 0);
}

size_t pb_open(struct pb_buf *b, uint32_t field)
{
    tag(b, field, PB_LEN);
    if (pb_reserve(b, 1))
        b->data[b->len++] = 0;
    return b->len;
}

void pb_close(struct pb_buf *b, size_t start)
{
    if (b->oom || start > b->len)
        return;
    size_t len = b->len - start;
    if (len < 0x80) {
        b->data[start - 1] = (uint8_t)len;
        return;
    }
    uint8_t head[10];
    size_t n = 0;
    for (size_t v = len; v; v >>= 7)
        head[n++] = (uint8_t)((v & 0x7f) | (v >> 7 ? 0x80 : 0));
    if (!pb_reserve(b, n - 1))
        return;
    memmove(b->data + start - 1 + n, b->data + start, len);
    memcpy(b->data + start - 1, head, n);
    b->len += n - 1;
}

void pb_message(struct pb_buf *b, uint32_t field, const struct pb_buf *inner)
{
    pb_bytes(b, field, inner->data, inner->len);
    b->oom |= inner->oom;
}
