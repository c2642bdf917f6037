/* Records as text, one line each, every field decoded from the record-type
 * table (record_types.c): what `asys dump` prints, and what the fuzzing
 * harness runs every record through. */
#ifndef ASYS_RECORD_DUMP_H
#define ASYS_RECORD_DUMP_H

#include <stdio.h>

#include "hashmap.h"
#include "segment_stream.h"

/* The strings a segment defined so far (its STRING_DEF records), to show a
 * string id's text next to it. */
struct asys_dump_strings {
    struct asys_u64map ids; /* string id -> index into texts */
    char **texts;
    size_t count, cap;
};

void asys_dump_strings_init(struct asys_dump_strings *s);
void asys_dump_strings_free(struct asys_dump_strings *s);

/* "# segment NAME: pid 1 tid 1 thread, format 2, features core,hgtx, ..." */
void asys_dump_segment_header(FILE *out, const char *name, const struct asys_segment_header *h);
/* "@OFFSET TYPE t=TICKS field=value ..." (STRING_DEF records are remembered
 * in `strings`, which may be NULL). */
void asys_dump_record(FILE *out, const struct asys_record *rec, struct asys_dump_strings *strings);

#endif
