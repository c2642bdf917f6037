/* Weighted call stacks read from a report's database: the input of every
 * call-tree view (stack_topdown, stack_bottomup, stack_flat) and of the flame
 * outputs of asys-export.  A source names where the stacks come from (CPU
 * samples weigh 1 each; OS runtime and HGGC calls weigh their duration) and
 * each stack becomes a list of functions, leaf first.
 *
 * Frames with the same label (demangled function name, or "[module]" where no
 * symbol covers the address) in the same module are one function: a flame
 * graph merges the addresses of a function, as perf's does. */
#ifndef ASYS_STACK_SAMPLES_H
#define ASYS_STACK_SAMPLES_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "asys_error.h"
#include "hashmap.h"

struct stack_source {
    const char *name;  /* cpu, osrt, hggc */
    const char *unit;  /* what a weight counts: "samples" or "ns" */
    const char *table; /* the table the stacks come from */
    const char *none;  /* why a report may have none: the message's advice */
    const char *sql;   /* rows: start, end, pid, tid, callchain_id, weight, leaf name; ?1..?4 =
                          filter start, end, pid, tid (pid/tid < 0: any) */
};

/* The sources, NULL-terminated; by name (NULL when unknown). */
extern const struct stack_source *const stack_sources[];
const struct stack_source *stack_source_find(const char *name);
/* "cpu, osrt, hggc" */
void stack_source_names(char *out, size_t size);

struct stack_filter {
    long long start, end; /* absolute ns, inclusive */
    long long pid, tid;   /* < 0: any */
};

struct stack_function {
    char *name;   /* label */
    char *module; /* path of the object, or NULL */
    char *file;   /* source file of the first frame seen, or NULL */
    int64_t line; /* its line, 0 when unknown */
};

/* A distinct stack: `depth` functions from chain_functions[first], leaf first. */
struct stack_chain {
    size_t first;
    uint32_t depth;
};

struct stack_thread {
    int64_t pid, tid;
    char *name; /* thread name, or NULL */
};

/* One sample (a CPU sample, a call), in time order. */
struct stack_sample {
    int64_t time;
    uint64_t weight;
    uint32_t thread; /* index into threads */
    uint32_t chain;  /* index into chains */
};

struct stack_set {
    const struct stack_source *source;
    struct stack_function *functions;
    size_t function_count, function_cap;
    uint32_t *chain_functions;
    size_t chain_function_count, chain_function_cap;
    struct stack_chain *chains;
    size_t chain_count, chain_cap;
    struct stack_thread *threads;
    size_t thread_count, thread_cap;
    struct stack_sample *samples;
    size_t sample_count, sample_cap;
    uint64_t total_weight;
    /* lookups while loading */
    struct asys_strmap function_ids;    /* name \0 module -> function index + 1 */
    struct asys_u64map frame_functions; /* frames.id -> function index */
    struct asys_u64map chain_ids;       /* (callchain id, leaf) -> chain index */
    struct asys_u64map thread_ids;      /* pid << 32 | tid -> thread index */
};

/* Loads the stacks of `source` that `filter` keeps.  A report without any
 * (or a window without any) is an error that says so.  Returns 0, or -1
 * with err; *out is then NULL. */
int stack_set_load(sqlite3 *db, const struct stack_source *source,
                   const struct stack_filter *filter, struct stack_set **out, struct asys_err *err);
void stack_set_free(struct stack_set *set);

/* A thread's label: "name (pid/tid)" or "pid/tid". */
void stack_thread_label(const struct stack_thread *t, char *out, size_t size);

#endif
