/* `asys profile` options: the launcher's own (profile_options.c) followed by
 * every collector's (the registry, collector.h), parsed from one catalogue
 * that also drives --help, the manifest and the target's environment.
 * Options of the manual this build cannot honour yet are accepted, reported
 * once on stderr and recorded as unavailable. */
#ifndef ASYS_PROFILE_OPTIONS_H
#define ASYS_PROFILE_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "asys_error.h"
#include "asys_format.h"
#include "collector.h"
#include "options.h"

enum asys_wait_mode { ASYS_WAIT_ALL, ASYS_WAIT_PRIMARY };

#define ASYS_MAX_OPTIONS 96
#define ASYS_MAX_GIVEN_OPTIONS 64

struct asys_given_option {
    const char *name; /* long name without dashes */
    const char *value; /* NULL for flags */
    int supported;
};

/* An option of the catalogue with the value it ended up with. */
struct asys_profile_value {
    struct asys_option_value value;
    const struct asys_collector *collector; /* NULL: a launcher option */
};

struct asys_profile_options {
    uint64_t features; /* collectors asked for (enum asys_feature bits), built or not */
    const char *output; /* as given, or NULL for reportN */
    int force_overwrite;
    enum asys_wait_mode wait;
    uint64_t max_segment_size;
    uint64_t chunk_size;
    int show_help;
    /* an option asked for its help ("--os-events=help") or a question
     * (--check-ppu-metrics-list LIST): its collector answers */
    const struct asys_collector *help_collector;
    const struct asys_option *help_option;
    const char *help_value;
    int kill_on_exit; /* the program dies with asys (PR_SET_PDEATHSIG) */
    uint64_t duration_s; /* --duration; 0: none */
    uint64_t delay_s; /* --delay; 0: none (recording from the start) */
    int kill_signal; /* --kill: at the end of the duration; 0: none */
    int stop_on_exit; /* -x */
    const char *env_vars; /* -e NAME=VALUE,... (borrowed) or NULL */
    int show_output; /* -w */
    int run_stats; /* --stats */
    const char *exports; /* --export: "none" or types, comma separated (borrowed) */
    /* every option of the catalogue, in --help order */
    struct asys_profile_value values[ASYS_MAX_OPTIONS];
    size_t value_count;
    /* every option seen, in order (for the manifest and the warnings) */
    struct asys_given_option given[ASYS_MAX_GIVEN_OPTIONS];
    int given_count;
    /* the program and its arguments (borrowed from argv) */
    int target_argc;
    char **target_argv;
};

/* Parses `asys profile` arguments (argv[0] is "profile").  Returns 0, or -1
 * with a one-line reason (kind USAGE). */
int asys_profile_parse(int argc, char **argv, struct asys_profile_options *opts,
                       struct asys_err *err);
/* The same for options without a program (asys start's): what follows the
 * options is left in target_argv (target_argc may be 0). */
int asys_profile_parse_options(int argc, char **argv, struct asys_profile_options *opts,
                               struct asys_err *err);

/* The value of option `name` (long name); NULL when there is no such option. */
const struct asys_option_value *asys_profile_value(const struct asys_profile_options *o,
                                                   const char *name);
/* Whether collector `c` records in this run (asked for and built). */
int asys_profile_collects(const struct asys_profile_options *o, const struct asys_collector *c);

/* Parses "hggc,nvtx,..." (or "none") into enum asys_feature bits; unknown
 * names fail listing the valid ones. */
int asys_parse_trace_list(const char *list, uint64_t *features, struct asys_err *err);
/* The -t names of `features` joined by commas ("none" when empty). */
void asys_trace_list_string(uint64_t features, char *out, size_t size);

/* The build of libasys-inject.so that holds the collectors of `o` which
 * have one ("libasys-inject+acompute+osrt.so": their merged_library names, in
 * the registry's order, each once), when it lies beside `inject`: `inject` (size bytes)
 * then names it and the features it holds are returned; 0 otherwise,
 * `inject` unchanged.  The loader then maps one library where it mapped two. */
uint64_t asys_profile_merge_inject(const struct asys_profile_options *o, char *inject, size_t size);
/* The target's environment for the collectors this run records: ASYS_COLLECTORS,
 * every option's variable and each collector's prepare hook. */
int asys_profile_environment(const struct asys_profile_options *o,
                             const struct asys_collector_setup *setup, struct asys_env *env,
                             struct asys_err *err);

/* Prints --help: every option of the manual and whether this build has it. */
void asys_profile_print_help(FILE *out);

#endif
