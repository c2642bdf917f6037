/* Finalize-time symbolization of call stacks.
 *
 * While finalize scans the segments it feeds every MODULE, CALLCHAIN and
 * STRING_DEF record here; afterwards each frame address is resolved on the
 * recording host, where the binaries are, with elfutils' libdwfl (ELF symbol
 * tables, DWARF line tables), and written to symbols.json (FORMAT.md §6). */
#ifndef ASYS_SYMBOLIZE_H
#define ASYS_SYMBOLIZE_H

#include <cJSON.h>
#include <stdint.h>

#include "segment_stream.h"

struct asys_symbolizer;

struct asys_symbolizer *asys_symbolizer_new(void);
void asys_symbolizer_free(struct asys_symbolizer *s);

/* Call at the start of each segment, then for each of its records. */
void asys_symbolizer_begin_segment(struct asys_symbolizer *s, const struct asys_segment_header *h);
void asys_symbolizer_add(struct asys_symbolizer *s, const struct asys_record *rec);
void asys_symbolizer_end_segment(struct asys_symbolizer *s);

/* Reading, in a thread of its own once the run has lasted 150 ms, the
 * symbols and line tables of the libc this launcher runs on: nearly every
 * traced process maps the same one, and a separate debug file's compressed
 * DWARF (libc6-dbg) took finalize 70 ms to read.  NULL when there is no
 * libc with a build id to read. */
struct asys_symbols_warmer;
struct asys_symbols_warmer *asys_symbols_warmer_start(void);
/* Stops it (waiting for a reading under way) and frees `w` (NULL is fine). */
void asys_symbols_warmer_free(struct asys_symbols_warmer *w);
/* Gives `s` what `w` read, for the file of that build id; `s` frees `w`. */
void asys_symbolizer_adopt(struct asys_symbolizer *s, struct asys_symbols_warmer *w);

/* While the program runs (the CPU sampler's thread, one thread at a time):
 * a process image's mapped file and the frames of its call chains, as its
 * segment holds them, then its frames resolved now (all but the warmer's
 * file), for asys_symbolizer_resolve to take.  Finalize feeds the same
 * image again from its segment: nothing is resolved twice. */
void asys_symbolizer_add_mapping(struct asys_symbolizer *s, uint64_t uid, const char *path,
                                 const uint8_t *build_id, uint32_t build_id_length, uint64_t start,
                                 uint64_t end, uint64_t bias);
void asys_symbolizer_add_frames(struct asys_symbolizer *s, uint64_t uid, const uint64_t *frames,
                                uint32_t n);
void asys_symbolizer_prefetch(struct asys_symbolizer *s, uint64_t uid);

/* Resolves every address seen; NULL when there were no call stacks. */
cJSON *asys_symbolizer_resolve(struct asys_symbolizer *s);

#endif
