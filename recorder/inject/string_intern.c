/* String interning for the hot path.
 *
 * Most names are literals: a pointer into a read-only segment of a loaded
 * object, whose text cannot change.  Those hit a per-thread pointer cache
 * (one load and compare).  Every other string is hashed by content and looked
 * up in a two-way cache, so a reused buffer whose text changes gets a new id.
 * A miss allocates a process-wide id and writes the text once into the
 * thread's own segment. */
#define _GNU_SOURCE
#include "elf_symbols.h"
#include "inject.h"

#include <dlfcn.h>
#include <link.h>
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

/* A new id for the text, defined in the segment; *written is 0 when the
 * definition was dropped. */
static uint32_t define_string(struct asys_thread *t, const char *text, size_t length, int *written)
{
    uint32_t flags = 0;
    if (length > MAX_STRING_BYTES) {
        length = MAX_STRING_BYTES;
        flags = ASYS_STRING_TRUNCATED;
    }
    uint32_t id = __atomic_add_fetch(&asys_proc.next_string_id, 1, __ATOMIC_RELAXED);
    *written = write_string_def(t, id, text, (uint32_t)length, flags);
    return id;
}

uint32_t asys_intern_once(struct asys_thread *t, const char *text, size_t length)
{
    int written;
    return define_string(t, text, length, &written);
}

/* Interns by content; *cached is set when the text's definition is in the
 * segment (not dropped), i.e. when the id may be remembered. */
static uint32_t intern_content(struct asys_thread *t, const char *text, size_t length, int *cached)
{
    *cached = 1;
    size_t kept = length > MAX_STRING_BYTES ? MAX_STRING_BYTES : length;
    uint64_t hash = hash_bytes(text, kept);
    unsigned slot = (unsigned)hash & (ASYS_STRING_CACHE_SIZE - 1);
    uint16_t *pair_slot = &t->string_pairs[slot / 2];
    struct asys_string_cache_entry *pair = asys_thread_cache(t, pair_slot, 0);
    /* a is the slot's own entry, b the other of its pair */
    if (pair) {
        const struct asys_string_cache_entry *a = &pair[slot & 1], *b = &pair[(slot & 1) ^ 1];
        if (ASYS_LIKELY(a->hash == hash && a->length == kept))
            return a->string_id;
        if (b->hash == hash && b->length == kept)
            return b->string_id;
    }

    uint32_t id = define_string(t, text, length, cached);
    if (*cached) {
        pair = asys_thread_cache(t, pair_slot, 2 * sizeof(struct asys_string_cache_entry));
        struct asys_string_cache_entry *a = &pair[slot & 1], *b = &pair[(slot & 1) ^ 1];
        *b = *a; /* the older entry moves to the second way */
        a->hash = hash;
        a->length = (uint32_t)kept;
        a->string_id = id;
    }
    return id;
}

uint32_t asys_intern_len(struct asys_thread *t, const char *text, size_t length)
{
    int cached;
    return intern_content(t, text, length, &cached);
}

struct segment_query {
    uintptr_t start;
    uintptr_t end;
    int read_only;
};

static int find_segment(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct segment_query *q = arg;
    const ElfW(Phdr) *ph = asys_object_segment(info, q->start);
    if (!ph)
        return 0;
    uintptr_t end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
    q->read_only = q->end <= end && !(ph->p_flags & PF_W);
    return 1;
}

/* Whether [text, text+length] lies in a read-only segment of a loaded object. */
static int is_immutable(const char *text, size_t length)
{
    struct segment_query q = {(uintptr_t)text, (uintptr_t)text + length + 1, 0};
    dl_iterate_phdr(find_segment, &q);
    return q.read_only;
}

uint32_t asys_intern(struct asys_thread *t, const char *text)
{
    if (!text)
        text = "";
    struct asys_literal_cache_entry *lit = asys_literal_slot(t, text);
    uint32_t generation = __atomic_load_n(&asys_proc.code_generation, __ATOMIC_RELAXED);
    int known_mutable = 0;
    if (ASYS_LIKELY(lit->text == text && lit->generation == generation)) {
        if (ASYS_LIKELY(lit->string_id))
            return lit->string_id;
        known_mutable = 1; /* heap text: by content, without asking the loader again */
    }
    size_t length = strlen(text);
    int cached;
    uint32_t id = intern_content(t, text, length, &cached);
    if (cached && !known_mutable) {
        lit->text = text;
        lit->string_id = is_immutable(text, length) ? id : 0; /* 0: mutable, look up by content */
        lit->generation = generation;
    }
    return id;
}

/* Objects unloaded by dlclose free their addresses for new text: every
 * literal cached before (or during) the close is forgotten. */
ASYS_EXPORT int dlclose(void *handle)
{
    static int (*real_dlclose)(void *);
    if (!real_dlclose)
        real_dlclose = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
    __atomic_add_fetch(&asys_proc.code_generation, 1, __ATOMIC_RELAXED);
    int rc = real_dlclose ? real_dlclose(handle) : -1;
    __atomic_add_fetch(&asys_proc.code_generation, 1, __ATOMIC_RELAXED);
    return rc;
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
