/* The collector registry (collectors.c): one entry per collector of the
 * manual, built or planned.  Options, --help, the manifest, the target's
 * environment, the launcher's samplers and finalize all read it; a collector
 * is a collector_NAME.c file that defines one struct asys_collector and a
 * line in collectors.c (CONTRIBUTING.md, "Adding a collector").
 *
 * The collector's bit is its enum asys_feature bit (schema/asys_format.h):
 * the same bit selects it on the command line, names it in the manifest,
 * marks its records in a segment and picks its importer family. */
#ifndef ASYS_COLLECTOR_H
#define ASYS_COLLECTOR_H

#include <cJSON.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "asys_error.h"
#include "options.h"
#include "segment_stream.h"
#include "target_env.h"

struct asys_profile_options;
struct asys_symbolizer;

/* What a collector's launcher hooks see. */
struct asys_collector_setup {
    const struct asys_profile_options *options;
    const char *inject_library; /* libasys-inject.so */
    const char *session_dir;
    /* the program runs already: a recording of an interactive session
     * (asys start) starts the samplers, start_before_exec ones too */
    int target_running;
    uint32_t recording; /* that recording's number (1, 2, ...); 0 in asys profile */
    /* the collectors compiled into the build of libasys-inject.so that
     * inject_library names (asys_profile_merge_inject): their prepare hooks
     * preload no library of their own */
    uint64_t merged_features;
    /* resolves the CPU samples' frames while the program runs (finalize
     * takes it over); NULL: at the end only */
    struct asys_symbolizer *symbolizer;
    /* the launcher exits once the report is written (asys profile): what
     * only the samplers' memory holds is left to the exit */
    int exits_after;
};

struct asys_collector {
    const char *name; /* the manual's name; the -t value of traced collectors */
    const char *alias; /* nsys spelling, or NULL */
    uint64_t feature; /* enum asys_feature bit; 0: options of a planned collector only */
    int built; /* recorded by this asys (else planned: accepted and reported) */
    int traced; /* selected with -t (else enabled by its options, see enabled()) */
    /* why a collector of this version is not built (NULL: planned, not built yet) */
    const char *unbuilt_reason;
    const char *summary; /* one line for --help */
    /* its library's name in the builds of libasys-inject.so that hold it
     * ("osrt": libasys-inject+osrt.so; collectors that share one are next to
     * each other in the registry); NULL: it has none */
    const char *merged_library;
    const struct asys_option *options;
    size_t option_count;

    /* ---- launcher hooks; NULL: nothing to do ---- */
    /* Collectors not selected by -t: whether their options switch them on. */
    int (*enabled)(const struct asys_profile_options *o);
    /* When it records: whether its options go together (one line on no). */
    int (*check)(const struct asys_profile_options *o, struct asys_err *err);
    /* An option of the collector given the value "help" (--os-events=help),
     * or a question option (.question): prints the answer; asys then exits
     * with the status returned, without running a program; -1 (err set):
     * the question cannot be answered (asys says why, exit 2). */
    int (*answer)(const struct asys_profile_options *o, const struct asys_option *option,
                  const char *value, FILE *out, struct asys_err *err);
    /* Before the program starts: what the target's environment needs beyond
     * the options' own variables (which the registry sets). */
    int (*prepare)(const struct asys_collector_setup *s, struct asys_env *env,
                   struct asys_err *err);
    /* Samplers the launcher runs while the program runs (the program's
     * pid): start is called once the program runs, or, with
     * start_before_exec, between fork and exec while its process waits (what
     * is inherited from there sees the program from its first instruction). */
    int (*start)(const struct asys_collector_setup *s, pid_t target, void **state,
                 struct asys_err *err);
    int start_before_exec;
    /* Ends the samplers and frees the state; -1 (err set) when part of what
     * they sampled could not be kept: the launcher says so as a warning and
     * writes the report with the rest. */
    int (*stop)(void *state, struct asys_err *err);
    /* Finalize: sees every record of every segment; finalize_end sets the
     * manifest's object for the collector (under its name; NULL: none) and
     * frees the state; -1 (err set) when the object could not be made. */
    void *(*finalize_begin)(void);
    void (*finalize_record)(void *state, const struct asys_segment_header *h,
                            const struct asys_record *rec);
    int (*finalize_end)(void *state, cJSON **object, struct asys_err *err);
    /* `asys finalize` of a session whose launcher died: what stop would have
     * written, from what the sampler left in the session directory. */
    int (*recover)(const char *session_dir, struct asys_err *err);
};

/* The registry, in --help order; NULL-terminated. */
extern const struct asys_collector *const asys_collectors[];

/* By manual name or alias; NULL when unknown. */
const struct asys_collector *asys_collector_find(const char *name, size_t len);
/* Preloads the collector's library `library` (beside libasys-inject.so)
 * into the program, after libasys-inject.so: from a prepare hook. */
int asys_collector_preload(const struct asys_collector_setup *s, const char *library,
                           struct asys_env *env, struct asys_err *err);
/* The names of the collectors `features` selects (only the built ones when
 * built_only), joined by `sep`. */
void asys_collector_names(uint64_t features, int built_only, const char *sep, char *out,
                          size_t size);

#endif
