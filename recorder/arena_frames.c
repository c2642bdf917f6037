/* Frames of arena slots compressed while recording, at finalize (see
 * arena_frames.h). */
#define _GNU_SOURCE
#include "arena_frames.h"

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

#define COPY_PIECE (256u << 10)
/* a zstd frame header's bounds (ZSTD_FRAMEHEADERSIZE_MIN/MAX, which only a
 * static libzstd declares) */
#define FRAME_HEADER_MIN 6u
#define FRAME_HEADER_MAX 18u

static int open_input(const char *session_dir, const char *name, struct stat *st)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%s", session_dir, name) >= (int)sizeof path)
        return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0 && fstat(fd, st) != 0) {
        close(fd);
        return -1;
    }
    return fd;
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
    const struct asys_arena_index *arena;
    struct asys_u64map slots; /* later_slots */
    int arena_fd;
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
        e->frame_size < FRAME_HEADER_MIN || e->frame_offset > k->frames_size ||
        e->frame_size > k->frames_size - e->frame_offset ||
        pread(k->arena_fd, &h, sizeof h, (off_t)e->slot_offset) != (ssize_t)sizeof h ||
        memcmp(h.magic, ASYS_SLOT_MAGIC, sizeof h.magic) != 0 || h.sequence != e->sequence)
        return 0;
    size_t want = e->frame_size < sizeof head ? (size_t)e->frame_size : sizeof head;
    ssize_t n = pread(f->fd, head, want, (off_t)e->frame_offset);
    return n > 0 && ZSTD_getFrameContentSize(head, (size_t)n) == k->arena->payload_size;
}

/* The frames were appended one after the other: an entry out of that order
 * is damage, and so is everything after it. */
static int in_order(const struct asys_arena_frame *e, size_t i)
{
    return e[i].frame_offset == (i ? e[i - 1].frame_offset + e[i - 1].frame_size : 0);
}

/* The usable ones of the `count` entries of `index_fd`. */
static int keep_usable(struct asys_arena_frames *f, int index_fd, size_t count,
                       struct frame_check *k, struct asys_err *err)
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

void asys_arena_frames_init(struct asys_arena_frames *f)
{
    memset(f, 0, sizeof *f);
    f->fd = -1;
    asys_u64map_init(&f->by_slot);
}

int asys_arena_frames_open(struct asys_arena_frames *f, const char *session_dir,
                           const struct asys_arena_index *arena, struct asys_err *err)
{
    struct stat index_st, frames_st;
    struct frame_check k = {arena, {0}, -1, 0};
    int rc = 0;
    asys_arena_frames_init(f);
    asys_u64map_init(&k.slots);
    int index_fd = open_input(session_dir, ASYS_ARENA_FRAME_INDEX_NAME, &index_st);
    f->fd = index_fd < 0 ? -1 : open_input(session_dir, ASYS_ARENA_FRAMES_NAME, &frames_st);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/segments/%s", session_dir, ASYS_ARENA_NAME);
    if (f->fd >= 0 && arena->count)
        k.arena_fd = open(path, O_RDONLY | O_CLOEXEC);
    size_t count = k.arena_fd < 0 ? 0 : (size_t)index_st.st_size / sizeof *f->at;
    if (count && later_slots(arena, &k.slots) != 0)
        rc = asys_fail(err, "out of memory");
    if (count > k.slots.count)
        count = k.slots.count; /* at most one frame per slot: the rest is not ours */
    k.frames_size = count ? (uint64_t)frames_st.st_size : 0;
    if (rc == 0 && count)
        rc = keep_usable(f, index_fd, count, &k, err);
    if (index_fd >= 0)
        close(index_fd);
    if (k.arena_fd >= 0)
        close(k.arena_fd);
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
    asys_u64map_free(&f->by_slot);
    asys_arena_frames_init(f);
}

/* The frame of the slot at position `k` of `segment`, or NULL. */
static const struct asys_arena_frame *frame_of(const struct asys_arena_frames *f,
                                               const struct asys_arena_segment *segment, size_t k)
{
    if (k >= segment->count)
        return NULL;
    const uint64_t *at = asys_u64map_get(&f->by_slot, segment->slots[k]);
    return at ? &f->at[*at] : NULL;
}

int asys_arena_frames_add_member(struct asys_archive_writer *w, const struct asys_arena_frames *f,
                                 const char *name, uint64_t size,
                                 const struct asys_arena_index *arena,
                                 const struct asys_arena_segment *segment, int arena_fd,
                                 struct asys_err *err)
{
    uint8_t *buffer = malloc(COPY_PIECE);
    struct asys_arena_cursor cursor = {arena_fd, arena, segment, 0};
    int rc =
        buffer ? asys_archive_begin_member(w, name, size, err) : asys_fail(err, "out of memory");
    while (rc == 0 && cursor.position < size) {
        size_t k = (size_t)(cursor.position / arena->payload_size);
        const struct asys_arena_frame *frame = cursor.position % arena->payload_size == 0 &&
                                                       size - cursor.position >= arena->payload_size
                                                   ? frame_of(f, segment, k)
                                                   : NULL;
        if (frame) {
            rc = asys_archive_copy_frame(w, f->fd, frame->frame_offset, frame->frame_size,
                                         arena->payload_size, err);
            cursor.position += arena->payload_size;
            continue;
        }
        uint64_t left = size - cursor.position;
        size_t want = left < COPY_PIECE ? (size_t)left : COPY_PIECE;
        long n = asys_arena_cursor_read(&cursor, buffer, want);
        if (n <= 0) { /* the source shrank: keep the member size the header promised */
            memset(buffer, 0, want);
            n = (long)want;
            cursor.position += want;
        }
        rc = asys_archive_write(w, buffer, (size_t)n, err);
    }
    free(buffer);
    return rc;
}
