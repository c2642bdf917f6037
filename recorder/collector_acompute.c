/* The ACDNN and ACBLAS collectors (cuDNN- and cuBLAS-compatible library
 * calls; the target side is inject/acompute.c in libasys-acompute.so, whose
 * wrappers are generated from the installed headers at build time).  Either
 * collector preloads the library, or the build of libasys-inject.so that
 * holds it (libasys-inject+acompute.so); both share the backtrace options, which
 * the launcher passes to the target whichever of the two is chosen. */
#include <string.h>

#include "asys_format.h"
#include "collector.h"
#include "install_paths.h"
#include "profile_options.h"

// clang-format off
static const struct asys_option acompute_options[] = {
    {.name = "acompute-backtrace-threshold", .type = ASYS_OPT_NS, .metavar = "NS",
     .default_value = "80000", .help = "call stacks of ACDNN/ACBLAS calls lasting at least NS",
     .env = "ASYS_ACOMPUTE_BACKTRACE_NS", .max = UINT64_MAX / 4},
    {.name = "acompute-backtrace-depth", .type = ASYS_OPT_COUNT, .metavar = "N",
     .default_value = "24", .help = "frames per ACDNN/ACBLAS call stack (0-128)",
     .env = "ASYS_ACOMPUTE_BACKTRACE_DEPTH", .max = ASYS_CALLCHAIN_MAX_DEPTH},
};
// clang-format on
#define OPTION_COUNT (sizeof acompute_options / sizeof acompute_options[0])

#ifdef ASYS_HAVE_ACOMPUTE
static int acompute_prepare(const struct asys_collector_setup *s, struct asys_env *env,
                            struct asys_err *err)
{
    /* the options belong to acdnn: with acblas alone, pass them here */
    for (size_t i = 0; i < OPTION_COUNT; i++) {
        const struct asys_option_value *v =
            asys_profile_value(s->options, acompute_options[i].name);
        if (v && !asys_env_get(env, acompute_options[i].env) &&
            asys_env_set(env, acompute_options[i].env, v->canonical, err) != 0)
            return -1;
    }
    if (s->merged_features & (ASYS_FEATURE_ACDNN | ASYS_FEATURE_ACBLAS))
        return 0; /* in the injected library's build */
    const char *preload = asys_env_get(env, "LD_PRELOAD");
    if (preload && strstr(preload, ASYS_ACOMPUTE_LIBRARY_NAME))
        return 0; /* the other of the two preloaded it */
    return asys_collector_preload(s, ASYS_ACOMPUTE_LIBRARY_NAME, env, err);
}
#define BUILT 1
#define PREPARE acompute_prepare
#define UNBUILT NULL
#define MERGED "acompute"
#else
#define BUILT 0
#define PREPARE NULL
#define MERGED NULL
#define UNBUILT \
    "not built: the cuDNN/cuBLAS headers (cudnn.h, cublasXt.h) or Python 3 were missing when " \
    "asys was built"
#endif

const struct asys_collector asys_collector_acdnn = {
    .name = "acdnn",
    .alias = "cudnn",
    .feature = ASYS_FEATURE_ACDNN,
    .built = BUILT,
    .traced = 1,
    .summary = "cuDNN-compatible library calls",
    .unbuilt_reason = UNBUILT,
    .merged_library = MERGED,
    .options = acompute_options,
    .option_count = OPTION_COUNT,
    .prepare = PREPARE,
};

const struct asys_collector asys_collector_acblas = {
    .name = "acblas",
    .alias = "cublas",
    .feature = ASYS_FEATURE_ACBLAS,
    .built = BUILT,
    .traced = 1,
    .summary = "cuBLAS/cuBLASLt/cuBLASXt-compatible library calls",
    .unbuilt_reason = UNBUILT,
    .merged_library = MERGED,
    .prepare = PREPARE,
};
