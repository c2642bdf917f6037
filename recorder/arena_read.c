#define _GNU_SOURCE
#include "arena_read.h"
#include "read_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grow.h"
#include "hashmap.h"

struct slot_ref {
    uint32_t sequence;
    uint64_t offset;
};

static int by_sequence(const void *a, const void *b)
{
    const struct slot_ref *x = a, *y = b;
    return x->sequence < y->sequence ? -1 : x->sequence > y->sequence;
}

int asys_arena_path(const char *session_dir, char *out, size_t size)
{
    int n = snprintf(out, size, "%s/segments/%s", session_dir, ASYS_ARENA_NAME);
    return n > 0 && (size_t)n < size ? 0 : -1;
}

struct asys_arena_writer_key asys_arena_writer_key(const struct asys_slot_header *t)
{
    struct asys_arena_writer_key k;
    memset(&k, 0, sizeof k); /* no padding left undefined: the key is hashed as bytes */
    k.process_uid = t->process_uid;
    k.pid = t->pid;
    k.tid = t->tid;
    k.thread_index = t->thread_index;
    k.collector = t->collector;
    return k;
}

/* Groups the slots' trailers by writer; refs[i] are segment i's slots. */
struct grouping {
    struct asys_strmap writers; /* struct asys_arena_writer_key -> index + 1 */
    struct slot_ref **refs;
    size_t *ref_count, *ref_cap;
    size_t segment_cap, refs_cap, count_cap, slot_cap_cap; /* of the four arrays */
};

static int add_slot(struct asys_arena_index *index, struct grouping *g,
                    const struct asys_slot_header *t, uint64_t offset)
{
    struct asys_arena_writer_key k = asys_arena_writer_key(t);
    uint32_t at = asys_strmap_get(&g->writers, (const char *)&k, sizeof k);
    if (!at) {
        if (asys_grow(&index->segments, &g->segment_cap, index->count, sizeof *index->segments,
                      64) ||
            asys_grow(&g->refs, &g->refs_cap, index->count, sizeof *g->refs, 64) ||
            asys_grow(&g->ref_count, &g->count_cap, index->count, sizeof *g->ref_count, 64) ||
            asys_grow(&g->ref_cap, &g->slot_cap_cap, index->count, sizeof *g->ref_cap, 64) ||
            index->count >= UINT32_MAX - 1)
            return -1;
        memset(&index->segments[index->count], 0, sizeof *index->segments);
        index->segments[index->count].key = *t;
        g->refs[index->count] = NULL;
        g->ref_count[index->count] = g->ref_cap[index->count] = 0;
        at = (uint32_t)++index->count;
        if (asys_strmap_put(&g->writers, (const char *)&k, sizeof k, at) != 0)
            return -1;
    }
    size_t i = at - 1;
    if (asys_grow(&g->refs[i], &g->ref_cap[i], g->ref_count[i], sizeof **g->refs, 8))
        return -1;
    g->refs[i][g->ref_count[i]++] = (struct slot_ref){t->sequence, offset};
    return 0;
}

/* Each segment's slots in sequence order; a repeated sequence (a slot
 * written twice by a confused writer) keeps the first.  A segment ends at
 * its first missing slot: the records after it are stamped relative to the
 * ones it held and may use strings it defined, so they are counted, not
 * read with wrong times. */
static int order_slots(struct asys_arena_index *index, struct grouping *g)
{
    for (size_t i = 0; i < index->count; i++) {
        qsort(g->refs[i], g->ref_count[i], sizeof **g->refs, by_sequence);
        struct asys_arena_segment *s = &index->segments[i];
        s->slots = malloc(g->ref_count[i] * sizeof *s->slots);
        if (!s->slots)
            return -1;
        int gap = 0;
        for (size_t k = 0; k < g->ref_count[i]; k++) {
            if (k && g->refs[i][k].sequence == g->refs[i][k - 1].sequence)
                continue;
            /* a writer numbers its slots 0, 1, 2...: a jump lost what lay between */
            uint32_t expected = k ? g->refs[i][k - 1].sequence + 1 : 0;
            if (g->refs[i][k].sequence > expected) {
                index->sequence_gaps += g->refs[i][k].sequence - expected;
                gap = 1;
            }
            if (gap)
                index->slots_after_gap++;
            else
                s->slots[s->count++] = g->refs[i][k].offset;
        }
    }
    return 0;
}

/* The largest slot asys writes (--chunk-size is bounded far below). */
#define SLOT_SIZE_MAX (UINT64_C(1) << 32)

/* Whether slots of `slot_size` bytes fit what the file holds: a page
 * multiple whose slot 1 starts with a slot header (or is unwritten, or
 * lies past the end). */
static int slot_size_fits(int fd, uint64_t file_size, uint64_t slot_size)
{
    if (slot_size <= ASYS_SLOT_HEADER_SIZE || slot_size % 4096 || slot_size > SLOT_SIZE_MAX)
        return 0;
    if (file_size <= slot_size)
        return 1;
    static const char zero[sizeof ASYS_SLOT_MAGIC - 1];
    char magic[sizeof zero];
    return pread(fd, magic, sizeof magic, (off_t)slot_size) == (ssize_t)sizeof magic &&
           (!memcmp(magic, ASYS_SLOT_MAGIC, sizeof magic) || !memcmp(magic, zero, sizeof magic));
}

/* The first page-aligned slot header after the control block: the slot
 * size; 0 when there is none. */
static uint64_t first_slot_offset(int fd, uint64_t file_size)
{
    for (uint64_t at = 4096; at < file_size && at <= SLOT_SIZE_MAX; at += 4096) {
        char magic[sizeof ASYS_SLOT_MAGIC - 1];
        if (pread(fd, magic, sizeof magic, (off_t)at) != (ssize_t)sizeof magic)
            return 0;
        if (!memcmp(magic, ASYS_SLOT_MAGIC, sizeof magic))
            return at;
    }
    return 0;
}

int asys_arena_index_read(const char *path, struct asys_arena_index *index, struct asys_err *err)
{
    memset(index, 0, sizeof *index);
    struct grouping g;
    size_t released_cap = 0;
    memset(&g, 0, sizeof g);
    asys_strmap_init(&g.writers);
    int rc = -1;
    struct stat st;
    int fd = asys_open_regular(path, &st, err); /* a FIFO there must not hang finalize */
    if (fd < 0) {
        rc = err->sys_errno == ENOENT ? 0 : asys_err_wrap(err, "cannot open '%s'", path);
        goto out;
    }
    struct asys_arena_control c;
    int control_ok = pread(fd, &c, sizeof c, 0) == (ssize_t)sizeof c &&
                     !memcmp(c.magic, ASYS_ARENA_MAGIC, sizeof c.magic) &&
                     c.version == ASYS_ARENA_VERSION;
    uint64_t slot_size = control_ok ? c.slot_size : 0;
    if (!slot_size_fits(fd, (uint64_t)st.st_size, slot_size)) {
        /* a damaged control block: the slots say how large they are */
        slot_size = first_slot_offset(fd, (uint64_t)st.st_size);
        if (!slot_size) {
            asys_fail(err, "'%s' is not an asys arena", path);
            goto out;
        }
        index->control_damaged = 1;
    }
    index->slot_size = slot_size;
    index->payload_size = slot_size - ASYS_SLOT_HEADER_SIZE;
    /* slot 0 is the control block; the last slot may be reserved in part only */
    uint64_t slots = ((uint64_t)st.st_size + slot_size - 1) / slot_size;
    if (!index->control_damaged && c.next_slot > slots && c.next_slot - slots < (UINT64_C(1) << 40))
        index->missing_slots = c.next_slot - slots; /* the file was cut */
    for (uint64_t i = 1; i < slots; i++) {
        uint64_t offset = i * slot_size;
        struct asys_slot_header t;
        static const struct asys_slot_header zero;
        ssize_t got = pread(fd, &t, sizeof t, (off_t)offset);
        if (got == (ssize_t)sizeof t && !memcmp(&t, &zero, sizeof t)) {
            index->unwritten_slots++; /* claimed, never written: nothing in it was lost */
            continue;
        }
        if (got != (ssize_t)sizeof t || memcmp(t.magic, ASYS_SLOT_MAGIC, sizeof t.magic) != 0) {
            index->skipped_slots++;
            continue;
        }
        if (add_slot(index, &g, &t, offset) != 0 ||
            ((t.flags & ASYS_SLOT_RELEASED) &&
             asys_grow(&index->released, &released_cap, index->released_count,
                       sizeof *index->released, 16))) {
            asys_fail(err, "out of memory");
            goto out;
        }
        if (t.flags & ASYS_SLOT_RELEASED)
            index->released[index->released_count++] = offset;
    }
    if (order_slots(index, &g) != 0) {
        asys_fail(err, "out of memory");
        goto out;
    }
    rc = 0;
out:
    for (size_t i = 0; i < index->count; i++)
        free(g.refs ? g.refs[i] : NULL);
    free(g.refs);
    free(g.ref_count);
    free(g.ref_cap);
    asys_strmap_free(&g.writers);
    if (fd >= 0)
        close(fd);
    if (rc != 0)
        asys_arena_index_free(index);
    return rc;
}

void asys_arena_index_free(struct asys_arena_index *index)
{
    for (size_t i = 0; i < index->count; i++)
        free(index->segments[i].slots);
    free(index->segments);
    free(index->released);
    memset(index, 0, sizeof *index);
}

long asys_arena_cursor_read(void *cursor, void *buffer, size_t size)
{
    struct asys_arena_cursor *c = cursor;
    const struct asys_arena_index *x = c->index;
    uint64_t slot = c->position / x->payload_size;
    if (slot >= c->segment->count)
        return 0;
    uint64_t in_slot = c->position % x->payload_size;
    uint64_t left = x->payload_size - in_slot; /* a read stops at a payload's end */
    size_t want = size < left ? size : (size_t)left;
    if (c->released) {
        long n = c->released(c->released_ctx, c->segment->slots[slot], in_slot, buffer, want);
        if (n > 0)
            c->position += (uint64_t)n;
        if (n != 0)
            return n;
    }
    for (;;) {
        ssize_t n = pread(c->fd, buffer, want,
                          (off_t)(c->segment->slots[slot] + ASYS_SLOT_HEADER_SIZE + in_slot));
        if (n < 0 && errno == EINTR)
            continue;
        if (n > 0)
            c->position += (uint64_t)n;
        return (long)n;
    }
}
