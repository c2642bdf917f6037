/* Flame outputs of asys-export: the call stacks of a source (CPU samples,
 * OS runtime or HGGC calls; analyze/stack_samples.h) as folded stacks
 * (flamegraph.pl's input), a speedscope profile, a pprof profile or an SVG
 * flame graph drawn here.  One writer per format (flame_FORMAT.c), one entry
 * each in the registry (flame.c). */
#ifndef ASYS_FLAME_H
#define ASYS_FLAME_H

#include <sqlite3.h>
#include <stdio.h>

#include "asys_error.h"
#include "calltree.h"
#include "stack_samples.h"

struct flame_input {
    const struct stack_set *set; /* every sample, in time order */
    const struct calltree *tree; /* top-down, over the same samples */
    const char *title; /* the report's name */
};

struct flame_format {
    const char *name; /* --type */
    const char *extension; /* of the default output file */
    int gzip; /* the format is gzip-compressed by definition (pprof) */
    int (*write)(FILE *out, const struct flame_input *in, struct asys_err *err);
};

/* The formats, NULL-terminated; by name (NULL when unknown). */
extern const struct flame_format *const flame_formats[];
const struct flame_format *flame_format_find(const char *name);

int flame_write_folded(FILE *out, const struct flame_input *in, struct asys_err *err);
int flame_write_speedscope(FILE *out, const struct flame_input *in, struct asys_err *err);
int flame_write_pprof(FILE *out, const struct flame_input *in, struct asys_err *err);
int flame_write_svg(FILE *out, const struct flame_input *in, struct asys_err *err);

/* What asys-export asks for. */
struct flame_request {
    const struct flame_format *format;
    const struct stack_source *source;
    struct stack_filter filter;
    const char *path; /* the output file */
    const char *title;
    int force; /* replace an existing file */
    int gzip; /* --gzip (pprof always is) */
};

/* Loads the stacks, builds the tree and writes the file (through a temporary
 * file: nothing is left behind on failure).  Returns 0, or -1 with err
 * (err's text then names what failed; the file is in it where it matters). */
int flame_export(sqlite3 *db, const struct flame_request *r, struct asys_err *err);

/* A node's path from the outermost frame, for writers that name whole
 * stacks: fills path[0..depth-1] with function indexes, returns the depth
 * (at most `max`, the innermost frames kept). */
size_t flame_node_path(const struct calltree *t, uint32_t node, uint32_t *path, size_t max);

#endif
