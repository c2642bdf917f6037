/* At finalize, the frames of arena slots compressed while recording
 * (arena_compressor.h; schema/asys_format.h, FORMAT.md section 2): copied
 * into the report in place of compressing their slots.  A slot without a
 * usable frame is compressed from the arena. */
#ifndef ASYS_ARENA_FRAMES_H
#define ASYS_ARENA_FRAMES_H

#include <stdint.h>

#include "archive.h"
#include "arena_read.h"
#include "asys_error.h"
#include "asys_format.h"
#include "hashmap.h"

struct asys_arena_frames {
    int fd;                      /* ASYS_ARENA_FRAMES_NAME, -1 when there are none */
    struct asys_arena_frame *at; /* the usable ones */
    size_t count;
    struct asys_u64map by_slot; /* slot offset -> index into `at` */
};

/* None yet (what asys_arena_frames_close may be called on). */
void asys_arena_frames_init(struct asys_arena_frames *f);
/* The frames of `session_dir` that can stand for slots of `arena`: each one
 * within the file, for a slot the index knows at that sequence (not a
 * segment's first), whose header announces the slot's payload size.  No
 * frames at all is not an error. */
int asys_arena_frames_open(struct asys_arena_frames *f, const char *session_dir,
                           const struct asys_arena_index *arena, struct asys_err *err);
void asys_arena_frames_close(struct asys_arena_frames *f);

/* Adds the first `size` bytes of arena segment `segment` as member `name`:
 * slots with a frame are copied, the others compressed from the arena. */
int asys_arena_frames_add_member(struct asys_archive_writer *w, const struct asys_arena_frames *f,
                                 const char *name, uint64_t size,
                                 const struct asys_arena_index *arena,
                                 const struct asys_arena_segment *segment, int arena_fd,
                                 struct asys_err *err);

#endif
