/* `asys profile` options: one table that drives parsing, --help and the
 * manifest.  Options of the manual this build cannot honour yet are accepted,
 * reported once on stderr and recorded as unavailable. */
#ifndef ASYS_PROFILE_OPTIONS_H
#define ASYS_PROFILE_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "asys_error.h"

/* Collectors named by -t/--trace. */
enum asys_trace_bit {
    ASYS_TRACE_HGGC = 1u << 0,
    ASYS_TRACE_HGTX = 1u << 1,
    ASYS_TRACE_ACDNN = 1u << 2,
    ASYS_TRACE_ACBLAS = 1u << 3,
    ASYS_TRACE_PCCL = 1u << 4,
    ASYS_TRACE_OSRT = 1u << 5,
    ASYS_TRACE_HGVIDEO = 1u << 6,
};

struct asys_trace_name {
    const char *name;  /* the manual's spelling */
    const char *alias; /* nsys spelling, or NULL */
    uint32_t bit;
    int available; /* built into this asys */
};

/* Every -t name, in --help order; terminated by a NULL name. */
extern const struct asys_trace_name asys_trace_names[];

/* Parses "hggc,nvtx,..." (or "none"); unknown names fail listing the valid ones. */
int asys_parse_trace_list(const char *list, uint32_t *mask, struct asys_err *err);
/* Writes the manual names of `mask` joined by commas. */
void asys_trace_list_string(uint32_t mask, char *out, size_t size);

enum asys_wait_mode { ASYS_WAIT_ALL, ASYS_WAIT_PRIMARY };

#define ASYS_MAX_GIVEN_OPTIONS 64

struct asys_given_option {
    const char *name;  /* long name without dashes */
    const char *value; /* NULL for flags */
    int supported;
};

struct asys_profile_options {
    uint32_t trace_mask;
    const char *output; /* as given, or NULL for reportN */
    int force_overwrite;
    enum asys_wait_mode wait;
    uint64_t max_segment_size;
    uint64_t chunk_size;
    uint64_t osrt_threshold_ns;
    uint64_t osrt_backtrace_ns;
    uint32_t osrt_backtrace_depth;
    char hggc_trace_set[160];   /* validated subset names, comma separated */
    int hggc_graph_level;       /* --hggc-graph-trace=graph */
    uint64_t hggc_backtrace_ns; /* 0: no stacks */
    uint32_t hggc_backtrace_depth;
    int show_help;
    /* every option seen, in order (for the manifest and the warnings) */
    struct asys_given_option given[ASYS_MAX_GIVEN_OPTIONS];
    int given_count;
    /* the program and its arguments (borrowed from argv) */
    int target_argc;
    char **target_argv;
};

/* Parses `asys profile` arguments (argv[0] is "profile").  Returns 0, or -1
 * with a one-line reason. */
int asys_profile_parse(int argc, char **argv, struct asys_profile_options *opts,
                       struct asys_err *err);

/* Prints --help: every option of the manual and whether this build has it. */
void asys_profile_print_help(FILE *out);

#endif
