/* Finalize-time symbolization of call stacks.
 *
 * While finalize scans the segments it feeds every MODULE, CALLCHAIN and
 * STRING_DEF record here; afterwards each frame address is resolved on the
 * recording host, where the binaries are, with elfutils' libdwfl (ELF symbol
 * tables, DWARF line tables), and written to symbols.json (FORMAT.md §6). */
#ifndef ASYS_SYMBOLIZE_H
#define ASYS_SYMBOLIZE_H

#include <cJSON.h>

#include "segment_stream.h"

struct asys_symbolizer;

struct asys_symbolizer *asys_symbolizer_new(void);
void asys_symbolizer_free(struct asys_symbolizer *s);

/* Call at the start of each segment, then for each of its records. */
void asys_symbolizer_begin_segment(struct asys_symbolizer *s, const struct asys_segment_header *h);
void asys_symbolizer_add(struct asys_symbolizer *s, const struct asys_record *rec);
void asys_symbolizer_end_segment(struct asys_symbolizer *s);

/* Resolves every address seen; NULL when there were no call stacks. */
cJSON *asys_symbolizer_resolve(struct asys_symbolizer *s);

#endif
