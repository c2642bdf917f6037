/* Arena slots compressed while the program runs (schema/asys_format.h,
 * FORMAT.md section 2): a launcher thread compresses each sealed slot into a
 * zstd frame of the session directory, on a core the program leaves idle,
 * and finalize copies those frames into the report instead of compressing
 * the slots once the program has exited.  Only performance depends on it:
 * a slot without a usable frame is compressed at finalize as before. */
#ifndef ASYS_ARENA_FRAMES_H
#define ASYS_ARENA_FRAMES_H

#include <stdint.h>

#include "archive.h"
#include "arena_read.h"
#include "asys_error.h"
#include "hashmap.h"

/* ---- while recording (the launcher) ---- */

struct asys_arena_compressor;

/* Starts the thread for the arena of `session_dir`, on idle CPU time only
 * (SCHED_IDLE): the program's threads come first.  *out is NULL (and 0
 * returned) when the session has no arena.  With `finish_all` (tests),
 * stopping waits until every sealed slot is compressed. */
int asys_arena_compressor_start(const char *session_dir, int finish_all,
                                struct asys_arena_compressor **out, struct asys_err *err);
/* The program has exited: what is sealed is compressed at once, at the
 * launcher's priority, while finalize reads the segments. */
void asys_arena_compressor_finish(struct asys_arena_compressor *c);
/* Stops the thread (a slot being compressed is finished first); frees `c`
 * (NULL is fine).  The frames written so far stay for finalize. */
void asys_arena_compressor_stop(struct asys_arena_compressor *c);

/* ---- at finalize ---- */

struct asys_arena_frames {
    int fd;                      /* ASYS_ARENA_FRAMES_NAME, -1 when there are none */
    struct asys_arena_frame *at; /* the usable frames */
    struct asys_u64map by_slot;  /* slot offset -> index into `at` */
};

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
