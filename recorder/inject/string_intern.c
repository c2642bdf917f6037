/* String interning for the hot path.  Each thread keeps a small two-way
 * cache from content hash to string id; a miss allocates a process-wide id
 * and writes the text once into the thread's own segment.  Keying on content
 * (not on the pointer) keeps reused buffers correct: a sprintf'd name that
 * changes gets a new id. */
#include "inject.h"

#include <string.h>
#include <wchar.h>

#define MAX_STRING_BYTES (64u * 1024u)
#define WIDE_BUFFER_BYTES 1024u

static inline uint64_t mix(uint64_t a, uint64_t b)
{
    __uint128_t m = (__uint128_t)a * b;
    return (uint64_t)m ^ (uint64_t)(m >> 64);
}

static uint64_t hash_bytes(const char *s, size_t len)
{
    uint64_t h = 0x243f6a8885a308d3ull ^ len;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t v;
        memcpy(&v, s + i, 8);
        h = mix(v ^ 0xa0761d6478bd642full, h ^ 0xe7037ed1a0b428dbull);
    }
    if (i < len) {
        uint64_t v = 0;
        memcpy(&v, s + i, len - i);
        h = mix(v ^ 0x8ebc6af09c88c6e3ull, h ^ 0x589965cc75374cc3ull);
    }
    return mix(h, 0x1d8e4e27c47d124full) | 1; /* never 0: 0 marks an empty slot */
}

static int write_string_def(struct asys_thread *t, uint32_t id, const char *text, uint32_t len,
                            uint32_t flags)
{
    uint32_t size = (uint32_t)sizeof(struct asys_rec_string_def) + ((len + 7u) & ~7u);
    uint32_t delta;
    struct asys_rec_string_def *r = asys_segment_reserve(&t->seg, size, t->seg.last_ticks, &delta);
    if (!r)
        return 0;
    unsigned words = size / 8 < ASYS_REC_EXTENDED ? size / 8 : ASYS_REC_EXTENDED;
    r->size_bytes = words == ASYS_REC_EXTENDED ? size : 0;
    r->string_id = id;
    r->length = len;
    r->flags = flags;
    char *body = (char *)(r + 1);
    memcpy(body, text, len);
    memset(body + len, 0, size - sizeof *r - len);
    asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_STRING_DEF, words, 0, delta));
    return 1;
}

uint32_t asys_intern_len(struct asys_thread *t, const char *text, size_t length)
{
    uint32_t flags = 0;
    if (length > MAX_STRING_BYTES) {
        length = MAX_STRING_BYTES;
        flags = ASYS_STRING_TRUNCATED;
    }
    uint64_t hash = hash_bytes(text, length);
    unsigned slot = (unsigned)hash & (ASYS_STRING_CACHE_SIZE - 1);
    struct asys_string_cache_entry *a = &t->strings[slot];
    struct asys_string_cache_entry *b = &t->strings[slot ^ 1];
    if (ASYS_LIKELY(a->hash == hash && a->length == length))
        return a->string_id;
    if (b->hash == hash && b->length == length)
        return b->string_id;

    uint32_t id = __atomic_add_fetch(&asys_proc.next_string_id, 1, __ATOMIC_RELAXED);
    if (write_string_def(t, id, text, (uint32_t)length, flags)) {
        *b = *a; /* the older entry moves to the second way */
        a->hash = hash;
        a->length = (uint32_t)length;
        a->string_id = id;
    }
    return id;
}

uint32_t asys_intern(struct asys_thread *t, const char *text)
{
    return asys_intern_len(t, text ? text : "", text ? strlen(text) : 0);
}

/* Encodes one code point as UTF-8; returns bytes written (0 if no room). */
static size_t put_utf8(char *out, size_t room, uint32_t c)
{
    if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        c = 0xfffd;
    if (c < 0x80 && room >= 1) {
        out[0] = (char)c;
        return 1;
    }
    if (c < 0x800 && room >= 2) {
        out[0] = (char)(0xc0 | (c >> 6));
        out[1] = (char)(0x80 | (c & 0x3f));
        return 2;
    }
    if (c < 0x10000 && room >= 3) {
        out[0] = (char)(0xe0 | (c >> 12));
        out[1] = (char)(0x80 | ((c >> 6) & 0x3f));
        out[2] = (char)(0x80 | (c & 0x3f));
        return 3;
    }
    if (c >= 0x10000 && room >= 4) {
        out[0] = (char)(0xf0 | (c >> 18));
        out[1] = (char)(0x80 | ((c >> 12) & 0x3f));
        out[2] = (char)(0x80 | ((c >> 6) & 0x3f));
        out[3] = (char)(0x80 | (c & 0x3f));
        return 4;
    }
    return 0;
}

size_t asys_wide_to_utf8(char *out, size_t size, const wchar_t *text)
{
    size_t len = 0;
    for (const wchar_t *p = text; p && *p && size; p++) {
        size_t n = put_utf8(out + len, size - 1 - len, (uint32_t)*p);
        if (!n)
            break;
        len += n;
    }
    if (size)
        out[len] = '\0';
    return len;
}

uint32_t asys_intern_wide(struct asys_thread *t, const wchar_t *text)
{
    char buf[WIDE_BUFFER_BYTES];
    size_t len = asys_wide_to_utf8(buf, sizeof buf, text);
    return asys_intern_len(t, buf, len);
}
