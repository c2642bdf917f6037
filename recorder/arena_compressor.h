/* Compressing the arena's sealed slots while the program runs (schema/
 * asys_format.h, FORMAT.md section 2), on CPU time the program leaves idle:
 * finalize then copies the frames (arena_frames.h) instead of compressing
 * those slots once the program has exited.  Only performance depends on
 * it: a slot without a usable frame is compressed at finalize. */
#ifndef ASYS_ARENA_COMPRESSOR_H
#define ASYS_ARENA_COMPRESSOR_H

#include "asys_error.h"

struct asys_arena_compressor;

enum asys_arena_compress_flags {
    /* stopping waits until every sealed slot is compressed (tests) */
    ASYS_COMPRESS_FINISH_ALL = 1u << 0,
    /* until the program has exited, a slot's pages after its first are
     * given back to the file system once its frame is written
     * (ASYS_ARENA_FRAME_RELEASED): only where nothing reads the arena
     * while the program runs (`asys profile`, not a session's windows) */
    ASYS_COMPRESS_RELEASE = 1u << 1,
    /* compress what is sealed at every look, idle CPU or not (tests) */
    ASYS_COMPRESS_EAGER = 1u << 2,
};

/* Starts compressing the arena of `session_dir`, as much each period as
 * the machine left idle in the last one.  *out is NULL (and 0 returned)
 * when the session has no arena.  `flags`: enum asys_arena_compress_flags. */
int asys_arena_compressor_start(const char *session_dir, unsigned flags,
                                struct asys_arena_compressor **out, struct asys_err *err);
/* The program has exited: what is sealed is compressed at once, while
 * finalize reads the segments; no slot is released from now on (a release
 * under way has ended when this returns). */
void asys_arena_compressor_finish(struct asys_arena_compressor *c);
/* Stops compressing (after the slot being compressed) and frees `c` (NULL
 * is fine); the frames written stay for finalize. */
void asys_arena_compressor_stop(struct asys_arena_compressor *c);

#endif
