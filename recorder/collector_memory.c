/* The memory collector: heap tracing (--heap-memory-usage; the wrappers are
 * inject/heap.c) with its sampling options, and host memory sampling
 * (--host-memory-sampling; the launcher's sampler is host_memory.c). */
#include <stdio.h>
#include <string.h>

#include "asys_format.h"
#include "collector.h"
#include "host_memory.h"
#include "install_paths.h"
#include "profile_options.h"
#include "notes.h"

// clang-format off
static const struct asys_option memory_options[] = {
    {.name = "host-memory-sampling", .type = ASYS_OPT_BOOL, .metavar = "true|false",
     .default_value = "false",
     .help = "sample the resident set size and its high-water mark of every process (off with "
             "-s system-wide)"},
    {.name = "host-memory-sampling-frequency", .type = ASYS_OPT_COUNT, .metavar = "HZ",
     .default_value = "10", .help = "host memory samples per second (1-1000)", .min = 1,
     .max = 1000},
    {.name = "heap-memory-usage", .type = ASYS_OPT_BOOL, .metavar = "true|false",
     .default_value = "false", .help = "trace heap allocations (malloc, new) with call stacks",
     .env = "ASYS_HEAP_MEMORY_USAGE"},
    /* 512 KiB: a sample every half MiB allocated keeps an allocation-heavy
     * loop within 1.3x (bench/heap.py), as tcmalloc's default does */
    {.name = "heap-sampling-interval-bytes", .type = ASYS_OPT_SIZE, .metavar = "BYTES",
     .default_value = "512K",
     .help = "mean bytes between sampled allocations (1: every one; 512K keeps the slowdown "
             "small)",
     .env = "ASYS_HEAP_SAMPLING_INTERVAL", .min = 1, .max = 1ull << 40},
    {.name = "heap-backtrace-depth", .type = ASYS_OPT_COUNT, .metavar = "N", .default_value = "24",
     .help = "frames per heap call stack (0-128)", .env = "ASYS_HEAP_BACKTRACE_DEPTH",
     .max = ASYS_CALLCHAIN_MAX_DEPTH},
    /* 0: one record per sampled event, with its block's address and exact
     * times, which the per-event views show; long runs want an interval */
    {.name = "heap-report-interval", .type = ASYS_OPT_COUNT, .metavar = "MS",
     .default_value = "0",
     .help = "sum sampled heap allocations and frees per call stack over MS milliseconds and "
             "write one record per stack and interval (0: one record per event; 1-3600000)",
     .env = "ASYS_HEAP_REPORT_INTERVAL_MS", .max = 3600000},
};
// clang-format on

static int heap_enabled(const struct asys_profile_options *o)
{
    return asys_profile_value(o, "heap-memory-usage")->number != 0;
}

/* The manual: host memory sampling is off with system-wide CPU sampling. */
static int host_sampling(const struct asys_profile_options *o)
{
    const struct asys_option_value *sample = asys_profile_value(o, "sample");
    return asys_profile_value(o, "host-memory-sampling")->number != 0 &&
           !(sample && !strcmp(sample->canonical, "system-wide"));
}

static int memory_enabled(const struct asys_profile_options *o)
{
    return heap_enabled(o) || host_sampling(o);
}

static int host_start(const struct asys_collector_setup *s, pid_t target, void **state,
                      struct asys_err *err)
{
    const struct asys_profile_options *o = s->options;
    *state = NULL;
    if (!asys_profile_value(o, "host-memory-sampling")->number)
        return 0;
    if (!host_sampling(o)) {
        asys_note(ASYS_NOTE_NOTICE, "--host-memory-sampling is off with -s system-wide");
        return 0;
    }
    return asys_host_memory_start(s->session_dir, target,
                                  asys_profile_value(o, "host-memory-sampling-frequency")->number,
                                  (struct host_memory **)state, err);
}

static int host_stop(void *state, struct asys_err *err)
{
    (void)err; /* it keeps what it sampled as it goes */
    asys_host_memory_stop(state);
    return 0;
}

/* The manual: heap tracing and multi-node collection do not go together. */
static int heap_check(const struct asys_profile_options *o, struct asys_err *err)
{
    const struct asys_option_value *multi = asys_profile_value(o, "multi-node-mode");
    if (heap_enabled(o) && multi->number)
        return asys_fail_kind(err, ASYS_ERR_USAGE,
                              "--heap-memory-usage cannot be used with --multi-node-mode");
    return 0;
}

/* The heap wrappers (libasys-heap.so) only when heap tracing is on: a
 * program's allocator is never replaced otherwise. */
static int heap_prepare(const struct asys_collector_setup *s, struct asys_env *env,
                        struct asys_err *err)
{
    return heap_enabled(s->options) ? asys_collector_preload(s, ASYS_HEAP_LIBRARY_NAME, env, err)
                                    : 0;
}

const struct asys_collector asys_collector_memory = {
    .name = "memory",
    .feature = ASYS_FEATURE_MEMORY,
    .built = 1,
    .summary = "heap tracing and host memory sampling",
    .options = memory_options,
    .option_count = sizeof memory_options / sizeof memory_options[0],
    .enabled = memory_enabled,
    .check = heap_check,
    .prepare = heap_prepare,
    .start = host_start,
    .stop = host_stop,
};
