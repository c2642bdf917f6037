/* Reading a session's arena back (finalize): which slots belong to which
 * segment, and each segment as one stream of bytes, exactly as if it had
 * been a file of its own (schema/asys_format.h, FORMAT.md section 2). */
#ifndef ASYS_ARENA_READ_H
#define ASYS_ARENA_READ_H

#include <stddef.h>
#include <stdint.h>

#include "asys_error.h"
#include "asys_format.h"

struct asys_arena_segment {
    struct asys_slot_header key; /* its writer; sequence unused */
    uint64_t *slots; /* file offsets of its slots, in sequence order */
    size_t count;
};

struct asys_arena_index {
    uint64_t slot_size;
    uint64_t payload_size; /* slot_size - ASYS_SLOT_HEADER_SIZE: what follows each slot header */
    struct asys_arena_segment *segments;
    size_t count;
    uint64_t skipped_slots; /* whose header is damaged (or cut short) */
    uint64_t unwritten_slots; /* claimed but never written (a failed claim, a crash) */
    uint64_t missing_slots; /* claimed (the control block says so) but past the file's end */
    uint64_t sequence_gaps; /* slots missing inside a segment's sequence */
    uint64_t slots_after_gap; /* readable, but after a missing one: left out */
    uint64_t *released; /* offsets of the slots whose header says ASYS_SLOT_RELEASED */
    size_t released_count;
    int control_damaged; /* the control block was unreadable: the slot size was found
                            from the slots, the count of claimed slots is unknown */
};

/* SESSION/segments/arena: 0, or -1 when it does not fit `size`. */
int asys_arena_path(const char *session_dir, char *out, size_t size);

/* The fields of a slot header that name its writer: a key hashed as bytes. */
struct asys_arena_writer_key {
    uint64_t process_uid;
    uint32_t pid, tid, thread_index, collector;
};
struct asys_arena_writer_key asys_arena_writer_key(const struct asys_slot_header *h);

/* Reads the trailers of every slot.  A missing arena is an empty index. */
int asys_arena_index_read(const char *path, struct asys_arena_index *index, struct asys_err *err);
void asys_arena_index_free(struct asys_arena_index *index);

/* One segment's bytes in order, for asys_segment_stream_open and the
 * archive writer (the read callback both take). */
struct asys_arena_cursor {
    int fd;
    const struct asys_arena_index *index;
    const struct asys_arena_segment *segment;
    uint64_t position; /* in the segment */
    /* Slots released after compression (ASYS_ARENA_FRAME_RELEASED) are read
     * through this: up to `size` bytes of the payload of the slot at
     * `slot_offset` from `in_slot` on, or 0 when that slot was not released
     * (read from the arena), -1 on failure.  NULL: read every slot from the
     * arena. */
    long (*released)(void *ctx, uint64_t slot_offset, uint64_t in_slot, void *buffer, size_t size);
    void *released_ctx;
};
long asys_arena_cursor_read(void *cursor, void *buffer, size_t size);

/* The segment's length: every slot's payload. */
static inline uint64_t asys_arena_segment_size(const struct asys_arena_index *index,
                                               const struct asys_arena_segment *s)
{
    return index->payload_size * s->count;
}

#endif
