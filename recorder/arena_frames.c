/* Frames of arena slots compressed while recording, at finalize (see
 * arena_frames.h). */
#define _GNU_SOURCE
#include "arena_frames.h"
#include "read_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "asys_format.h"

/* a zstd frame header's bounds (ZSTD_FRAMEHEADERSIZE_MIN/MAX, which only a
 * static libzstd declares) */
#define FRAME_HEADER_MIN 6u
#define FRAME_HEADER_MAX 18u

static int open_input(const char *session_dir, const char *name, struct stat *st)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%s", session_dir, name) >= (int)sizeof path)
        return -1;
    struct asys_err ignored = {0}; /* without the frames, finalize compresses the slots */
    return asys_open_regular(path, st, &ignored);
}

/* The offsets of every slot that may have a frame: not a segment's first. */
static int later_slots(const struct asys_arena_index *arena, struct asys_u64map *slots)
{
    for (size_t i = 0; i < arena->count; i++)
        for (size_t k = 1; k < arena->segments[i].count; k++)
            if (asys_u64map_put(slots, arena->segments[i].slots[k], k) != 0)
                return -1;
    return 0;
}

/* What the frames are checked against. */
struct frame_check {
    struct asys_u64map slots; /* later_slots */
    uint64_t frames_size;
};

/* Whether `e` can stand for its slot: see asys_arena_frames_open. */
static int usable(const struct asys_arena_frames *f, const struct asys_arena_frame *e,
                  const struct frame_check *k)
{
    struct asys_slot_header h;
    uint8_t head[FRAME_HEADER_MAX];
    if (!asys_u64map_get(&k->slots, e->slot_offset) ||
        asys_u64map_get(&f->by_slot, e->slot_offset) || e->sequence == 0 ||
        e->frame_size < FRAME_HEADER_MIN || e->frame_size > f->buffer_size ||
        e->frame_offset > k->frames_size || e->frame_size > k->frames_size - e->frame_offset ||
        pread(f->arena_fd, &h, sizeof h, (off_t)e->slot_offset) != (ssize_t)sizeof h ||
        memcmp(h.magic, ASYS_SLOT_MAGIC, sizeof h.magic) != 0 || h.sequence != e->sequence)
        return 0;
    size_t want = e->frame_size < sizeof head ? (size_t)e->frame_size : sizeof head;
    ssize_t n = pread(f->fd, head, want, (off_t)e->frame_offset);
    return n > 0 && ZSTD_getFrameContentSize(head, (size_t)n) == f->arena->payload_size;
}

/* The frames were appended one after the other: an entry out of that order
 * is damage, and so is everything after it. */
static int in_order(const struct asys_arena_frame *e, size_t i)
{
    return e[i].frame_offset == (i ? e[i - 1].frame_offset + e[i - 1].frame_size : 0);
}

/* The usable ones of the `count` entries of `index_fd`. */
static int keep_usable(struct asys_arena_frames *f, int index_fd, size_t count,
                       const struct frame_check *k, struct asys_err *err)
{
    struct asys_arena_frame *entries = malloc(count * sizeof *entries);
    if (!entries || !(f->at = malloc(count * sizeof *f->at))) {
        free(entries);
        return asys_fail(err, "out of memory");
    }
    int rc = 0;
    if (pread(index_fd, entries, count * sizeof *entries, 0) != (ssize_t)(count * sizeof *entries))
        count = 0; /* unreadable: the slots are compressed from the arena */
    for (size_t i = 0; rc == 0 && i < count && in_order(entries, i); i++) {
        if (!usable(f, &entries[i], k))
            continue;
        f->at[f->count] = entries[i];
        if (asys_u64map_put(&f->by_slot, entries[i].slot_offset, f->count++) != 0)
            rc = asys_fail(err, "out of memory");
    }
    free(entries);
    return rc;
}

void asys_arena_frames_init(struct asys_arena_frames *f, const struct asys_arena_index *arena,
                            int arena_fd)
{
    memset(f, 0, sizeof *f);
    f->arena = arena;
    f->arena_fd = arena_fd;
    f->fd = -1;
    asys_u64map_init(&f->by_slot);
    asys_u64map_init(&f->lost);
}

/* The index's entries (at most one per slot that may have a frame), the
 * frames' file and the buffer; 0 entries when there is nothing to use. */
static size_t open_files(struct asys_arena_frames *f, const char *session_dir,
                         struct frame_check *k, int *index_fd, int *rc, struct asys_err *err)
{
    struct stat index_st, frames_st;
    *index_fd = f->arena->count && f->arena_fd >= 0
                    ? open_input(session_dir, ASYS_ARENA_FRAME_INDEX_NAME, &index_st)
                    : -1;
    if (*index_fd < 0 || index_st.st_size < (off_t)sizeof *f->at)
        return 0; /* the usual case of a short run: nothing was compressed early */
    f->fd = open_input(session_dir, ASYS_ARENA_FRAMES_NAME, &frames_st);
    if (f->fd < 0)
        return 0;
    k->frames_size = (uint64_t)frames_st.st_size;
    f->buffer_size = ZSTD_compressBound(f->arena->payload_size);
    if (!(f->buffer = malloc(f->buffer_size)) || later_slots(f->arena, &k->slots) != 0) {
        *rc = asys_fail(err, "out of memory");
        return 0;
    }
    size_t count = (size_t)index_st.st_size / sizeof *f->at;
    return count < k->slots.count ? count : k->slots.count; /* the rest is not ours */
}

/* Whether the pages of the slot at `slot` after its first are a hole. */
static int pages_gone(const struct asys_arena_frames *f, uint64_t slot)
{
    long page = sysconf(_SC_PAGESIZE);
    uint64_t from = slot + (page > 0 ? (uint64_t)page : 4096);
    off_t data = lseek(f->arena_fd, (off_t)from, SEEK_DATA);
    return data < 0 ? errno == ENXIO : (uint64_t)data >= slot + f->arena->slot_size;
}

/* Which slots are read from their frames: those released (their entry or
 * their header says so: the usable entry is marked) that have a usable
 * frame.  A slot whose header says released without one is lost when its
 * pages are a hole; when they are still there (the launcher stopped
 * before it punched), it is read from the arena. */
static int sort_released(struct asys_arena_frames *f)
{
    for (size_t i = 0; i < f->arena->released_count; i++) {
        uint64_t slot = f->arena->released[i];
        const uint64_t *at = asys_u64map_get(&f->by_slot, slot);
        if (at) {
            f->at[*at].flags |= ASYS_ARENA_FRAME_RELEASED;
        } else if (pages_gone(f, slot) && !asys_u64map_get(&f->lost, slot)) {
            if (asys_u64map_put(&f->lost, slot, 1) != 0)
                return -1;
            f->released_lost++;
        }
    }
    for (size_t i = 0; i < f->count; i++)
        f->released += (f->at[i].flags & ASYS_ARENA_FRAME_RELEASED) != 0;
    return 0;
}

int asys_arena_frames_open(struct asys_arena_frames *f, const char *session_dir,
                           struct asys_err *err)
{
    struct frame_check k = {{0}, 0};
    int rc = 0, index_fd = -1;
    asys_u64map_init(&k.slots);
    size_t count = open_files(f, session_dir, &k, &index_fd, &rc, err);
    if (rc == 0 && count)
        rc = keep_usable(f, index_fd, count, &k, err);
    if (rc == 0 && f->arena_fd >= 0 && sort_released(f) != 0)
        rc = asys_fail(err, "out of memory");
    if (index_fd >= 0)
        close(index_fd);
    asys_u64map_free(&k.slots);
    if (rc != 0)
        asys_arena_frames_close(f);
    return rc;
}

void asys_arena_frames_close(struct asys_arena_frames *f)
{
    if (f->fd >= 0)
        close(f->fd);
    free(f->at);
    free(f->buffer);
    ZSTD_freeDCtx(f->dctx);
    free(f->released_frame);
    free(f->payload);
    asys_u64map_free(&f->by_slot);
    asys_u64map_free(&f->lost);
    asys_arena_frames_init(f, f->arena, f->arena_fd);
}

/* Frame `e` read whole into `into` (its size), or 0: one that does not
 * read back as one whole frame (the disk lost it since). */
static size_t read_whole_frame(const struct asys_arena_frames *f, const struct asys_arena_frame *e,
                               uint8_t *into)
{
    ssize_t n = pread(f->fd, into, (size_t)e->frame_size, (off_t)e->frame_offset);
    return n == (ssize_t)e->frame_size &&
                   ZSTD_findFrameCompressedSize(into, (size_t)n) == (size_t)e->frame_size
               ? (size_t)n
               : 0;
}

/* The frame of the slot at position `k` of `segment` read whole into the
 * buffer (its size), or 0: none, or one that does not read back. */
static size_t read_frame(struct asys_arena_frames *f, const struct asys_arena_segment *segment,
                         size_t k)
{
    const uint64_t *at =
        k < segment->count ? asys_u64map_get(&f->by_slot, segment->slots[k]) : NULL;
    return at ? read_whole_frame(f, &f->at[*at], f->buffer) : 0;
}

/* The payload of released slot `e`, decoded into f->payload: 0, or -1
 * when its frame no longer reads back whole. */
static int decode_released(struct asys_arena_frames *f, const struct asys_arena_frame *e)
{
    size_t payload = (size_t)f->arena->payload_size;
    if (f->payload_slot == e->slot_offset)
        return 0;
    f->payload_slot = 0;
    if (!f->dctx && !(f->dctx = ZSTD_createDCtx()))
        return -1;
    if ((!f->released_frame && !(f->released_frame = malloc(f->buffer_size))) ||
        (!f->payload && !(f->payload = malloc(payload))))
        return -1;
    size_t n = read_whole_frame(f, e, f->released_frame);
    if (!n || ZSTD_decompressDCtx(f->dctx, f->payload, payload, f->released_frame, n) != payload)
        return -1;
    f->payload_slot = e->slot_offset;
    return 0;
}

/* asys_arena_cursor's `released` (arena_read.h). */
static long read_released(void *ctx, uint64_t slot_offset, uint64_t in_slot, void *buffer,
                          size_t size)
{
    struct asys_arena_frames *f = ctx;
    const uint64_t *at = asys_u64map_get(&f->by_slot, slot_offset);
    if (!at || !(f->at[*at].flags & ASYS_ARENA_FRAME_RELEASED))
        return asys_u64map_get(&f->lost, slot_offset) ? -1 : 0; /* a hole is no data */
    if (in_slot >= f->arena->payload_size || decode_released(f, &f->at[*at]) != 0)
        return -1;
    uint64_t left = f->arena->payload_size - in_slot;
    size_t n = size < left ? size : (size_t)left;
    memcpy(buffer, f->payload + in_slot, n);
    return (long)n;
}

void asys_arena_frames_attach(struct asys_arena_frames *f, struct asys_arena_cursor *cursor)
{
    cursor->released = f->released || f->released_lost ? read_released : NULL;
    cursor->released_ctx = f;
}

/* `want` bytes of the segment from `cursor` (zeros in place of what cannot
 * be read, as asys_archive_add_stream does) into the member. */
static int copy_piece(struct asys_archive_writer *w, struct asys_arena_frames *f,
                      struct asys_arena_cursor *cursor, size_t want, struct asys_err *err)
{
    long n = asys_arena_cursor_read(cursor, f->buffer, want);
    if (n <= 0) {
        memset(f->buffer, 0, want);
        n = (long)want;
        cursor->position += want;
    }
    return asys_archive_write(w, f->buffer, (size_t)n, err);
}

int asys_arena_frames_add_member(struct asys_archive_writer *w, struct asys_arena_frames *f,
                                 const char *name, uint64_t size,
                                 const struct asys_arena_segment *segment, struct asys_err *err)
{
    struct asys_arena_cursor cursor = {f->arena_fd, f->arena, segment, 0, NULL, NULL};
    uint64_t payload = f->arena->payload_size;
    asys_arena_frames_attach(f, &cursor);
    if (!f->count || segment->count < 3) /* no frame can be its (most segments) */
        return asys_archive_add_stream(w, name, size, asys_arena_cursor_read, &cursor, err);
    int rc = asys_archive_begin_member(w, name, size, err);
    while (rc == 0 && cursor.position < size) {
        size_t k = (size_t)(cursor.position / payload), frame = 0;
        if (cursor.position % payload == 0 && size - cursor.position >= payload)
            frame = read_frame(f, segment, k);
        if (frame) {
            rc = asys_archive_write_frame(w, f->buffer, frame, payload, err);
            cursor.position += payload;
            continue;
        }
        uint64_t left = size - cursor.position; /* up to the slot's end: the cursor stops there */
        rc = copy_piece(w, f, &cursor, left < payload ? (size_t)left : (size_t)payload, err);
    }
    return rc;
}
