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
    const char *name; /* cpu, osrt, hggc */
    const char *unit; /* what a weight counts: "samples", "ns" or "bytes" */
    const char *table; /* the table the stacks come from */
    const char *none; /* why a report may have none: the message's advice */
    const char *sql; /* rows: start, end, pid, tid, callchain_id, weight, leaf name, count
                        (events the row stands for); ?1..?4 = filter start, end, pid, tid
                        (pid/tid < 0: any) */
    /* what a profile calls its values (pprof's sample types, Go's names where
     * Go has them): the weight and the count */
    const char *weight_type, *count_type;
};

/* The sources, NULL-terminated; by name (NULL when unknown). */
extern const struct stack_source *const stack_sources[];
const struct stack_source *stack_source_find(const char *name);
/* "cpu, osrt, hggc" */
void stack_source_names(char *out, size_t size);

struct stack_filter {
    long long start, end; /* absolute ns, inclusive */
    long long pid, tid; /* < 0: any */
};

struct stack_function {
    char *name; /* label */
    char *module; /* path of the object, or NULL */
    char *file; /* source file of the first frame seen, or NULL */
    int64_t line; /* its line, 0 when unknown */
};

/* A loaded object some frame of the set lies in. */
struct stack_module {
    char *path;
    char *build_id; /* hex, or NULL */
    uint64_t start, end;
    uint64_t load_bias; /* run-time address minus the file's virtual address */
};

/* Where a chain's frame was: its address and module (index + 1; 0: none,
 * as for the call name a source puts at the leaf).  The functions inlined at
 * an address are frames of their own at the same address. */
struct stack_frame_ref {
    uint64_t address;
    uint32_t module;
    int32_t line; /* the frame's own source line, 0 when not known */
};

/* A distinct stack: `depth` functions from chain_functions[first] (and their
 * frames from chain_frames[first]), leaf first. */
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
    uint32_t chain; /* index into chains */
    uint64_t count; /* events it stands for: 1, or a heap sample's allocations */
};

struct stack_set {
    const struct stack_source *source;
    struct stack_function *functions;
    size_t function_count, function_cap;
    uint32_t *chain_functions;
    struct stack_frame_ref *chain_frames; /* parallel to chain_functions */
    size_t chain_function_count, chain_function_cap, chain_frame_cap;
    struct stack_module *modules;
    size_t module_count, module_cap;
    /* CPU samples: the CPU time one stands for (the sampling period), 0
     * when not known */
    double ns_per_sample;
    struct stack_chain *chains;
    size_t chain_count, chain_cap;
    struct stack_thread *threads;
    size_t thread_count, thread_cap;
    struct stack_sample *samples;
    size_t sample_count, sample_cap;
    uint64_t total_weight;
    /* lookups while loading */
    struct asys_strmap function_ids; /* name \0 module -> function index + 1 */
    struct asys_u64map frame_functions; /* frames.id -> function index */
    struct asys_u64map chain_ids; /* (callchain id, leaf) -> chain index */
    struct asys_u64map thread_ids; /* pid << 32 | tid -> thread index */
    struct asys_u64map module_ids; /* modules.id -> module index + 1 */
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
