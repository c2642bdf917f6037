/* At finalize, the frames of arena slots compressed while recording
 * (arena_compressor.h; schema/asys_format.h, FORMAT.md section 2): copied
 * into the report in place of compressing their slots.  A slot without a
 * usable frame is compressed from the arena. */
#ifndef ASYS_ARENA_FRAMES_H
#define ASYS_ARENA_FRAMES_H

#include <stdint.h>
#include <zstd.h>

#include "archive.h"
#include "arena_read.h"
#include "asys_error.h"
#include "asys_format.h"
#include "hashmap.h"

struct asys_arena_frames {
    const struct asys_arena_index *arena; /* borrowed */
    int arena_fd; /* borrowed */
    int fd; /* ASYS_ARENA_FRAMES_NAME, -1 when there are none */
    struct asys_arena_frame *at; /* the usable ones; ASYS_ARENA_FRAME_RELEASED where the
                                    entry or the slot header says so: read from the frame */
    size_t count;
    struct asys_u64map by_slot; /* slot offset -> index into `at` */
    uint8_t *buffer; /* a frame or a slot's payload on its way */
    size_t buffer_size;
    size_t released; /* entries of released slots (flag set also from the slot header) */
    uint64_t released_lost; /* released slots without a usable frame: their payload is gone */
    struct asys_u64map lost; /* their offsets: a read of one fails */
    ZSTD_DCtx *dctx; /* decoding released slots: */
    uint8_t *released_frame; /* buffer_size bytes */
    uint8_t *payload; /* the payload of the slot at payload_slot, decoded */
    uint64_t payload_slot; /* 0: none (slot 0 is the control block) */
};

/* None yet, for segments of `arena` read through `arena_fd` (both borrowed
 * until close; the arena may be empty and the descriptor -1). */
void asys_arena_frames_init(struct asys_arena_frames *f, const struct asys_arena_index *arena,
                            int arena_fd);
/* The frames of `session_dir` that can stand for slots of the arena: each
 * one within the file, in the order they were written, for a slot the
 * index knows at that sequence (not a segment's first), whose header
 * announces the slot's payload size.  No frames at all is not an error.
 * Released slots without such a frame whose pages are gone are counted
 * as lost. */
int asys_arena_frames_open(struct asys_arena_frames *f, const char *session_dir,
                           struct asys_err *err);
void asys_arena_frames_close(struct asys_arena_frames *f);

/* Makes `cursor` read the slots released from the arena (FORMAT.md section
 * 2) from their frames in `f` (borrowed while the cursor is used). */
void asys_arena_frames_attach(struct asys_arena_frames *f, struct asys_arena_cursor *cursor);

/* Adds the first `size` bytes of arena segment `segment` as member `name`:
 * slots with a frame that reads whole are copied, the others compressed
 * from the arena. */
int asys_arena_frames_add_member(struct asys_archive_writer *w, struct asys_arena_frames *f,
                                 const char *name, uint64_t size,
                                 const struct asys_arena_segment *segment, struct asys_err *err);

#endif
