/* Compressing the arena's sealed slots while the program runs (schema/
 * asys_format.h, FORMAT.md section 2), on CPU time the program leaves idle:
 * finalize then copies the frames (arena_frames.h) instead of compressing
 * those slots once the program has exited.  Only performance depends on
 * it: a slot without a usable frame is compressed at finalize. */
#ifndef ASYS_ARENA_COMPRESSOR_H
#define ASYS_ARENA_COMPRESSOR_H

#include "asys_error.h"

struct asys_arena_compressor;

/* Starts compressing the arena of `session_dir`, as much each period as
 * the machine left idle in the last one.  *out is NULL (and 0 returned)
 * when the session has no arena.  With `finish_all` (tests), stopping waits
 * until every sealed slot is compressed. */
int asys_arena_compressor_start(const char *session_dir, int finish_all,
                                struct asys_arena_compressor **out, struct asys_err *err);
/* The program has exited: what is sealed is compressed at once, while
 * finalize reads the segments.  Never waits. */
void asys_arena_compressor_finish(struct asys_arena_compressor *c);
/* Stops compressing (after the slot being compressed) and frees `c` (NULL
 * is fine); the frames written stay for finalize. */
void asys_arena_compressor_stop(struct asys_arena_compressor *c);

#endif
