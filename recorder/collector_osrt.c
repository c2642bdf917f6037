/* The OS runtime collector: libc and pthread calls that block, recorded by
 * the wrappers in inject/osrt.c (libasys-osrt.so, preloaded only when the
 * collector is chosen).  The launcher carries its options. */
#include "asys_format.h"
#include "collector.h"
#include "install_paths.h"

// clang-format off
static const struct asys_option osrt_options[] = {
    {.name = "osrt-threshold", .type = ASYS_OPT_NS, .metavar = "NS", .default_value = "1000",
     .help = "record OS runtime calls lasting at least NS", .env = "ASYS_OSRT_THRESHOLD_NS",
     .max = UINT64_MAX / 4},
    {.name = "osrt-backtrace-threshold", .type = ASYS_OPT_NS, .metavar = "NS",
     .default_value = "80000", .help = "call stacks of OS runtime calls lasting at least NS",
     .env = "ASYS_OSRT_BACKTRACE_NS", .max = UINT64_MAX / 4},
    {.name = "osrt-backtrace-depth", .type = ASYS_OPT_COUNT, .metavar = "N", .default_value = "24",
     .help = "frames per OS runtime call stack (0-128)", .env = "ASYS_OSRT_BACKTRACE_DEPTH",
     .max = ASYS_CALLCHAIN_MAX_DEPTH},
};
// clang-format on

static int osrt_prepare(const struct asys_collector_setup *s, struct asys_env *env,
                        struct asys_err *err)
{
    if (s->merged_features & ASYS_FEATURE_OSRT)
        return 0; /* in the injected library's build */
    return asys_collector_preload(s, ASYS_OSRT_LIBRARY_NAME, env, err);
}

const struct asys_collector asys_collector_osrt = {
    .name = "osrt",
    .feature = ASYS_FEATURE_OSRT,
    .built = 1,
    .traced = 1,
    .summary = "libc and pthread calls that make a thread wait",
    .merged_library = "osrt",
    .options = osrt_options,
    .option_count = sizeof osrt_options / sizeof osrt_options[0],
    .prepare = osrt_prepare,
};
