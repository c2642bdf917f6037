/* Collectors of the manual this asys does not build yet.  Their -t names
 * and options are accepted, reported once and recorded as unavailable, so
 * scripts written for the manual run; a collector leaves this file for a
 * collector_NAME.c of its own when it is built. */
#include "asys_format.h"
#include "collector.h"

#define PLANNED(option_name, meta, def, text)                                                      \
    {                                                                                              \
        .name = option_name, .type = ASYS_OPT_TEXT, .metavar = meta, .default_value = def,         \
        .help = text, .planned = 1                                                                 \
    }
#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

static const struct asys_option acompute_options[] = {
    PLANNED("acompute-backtrace-threshold", "NS", "80000",
            "call stacks of ACDNN/ACBLAS calls longer than NS"),
};

const struct asys_collector asys_collector_acdnn = {
    .name = "acdnn",
    .alias = "cudnn",
    .feature = ASYS_FEATURE_ACDNN,
    .traced = 1,
    .summary = "cuDNN-compatible library calls",
    .options = acompute_options,
    .option_count = COUNT_OF(acompute_options),
};

const struct asys_collector asys_collector_acblas = {
    .name = "acblas",
    .alias = "cublas",
    .feature = ASYS_FEATURE_ACBLAS,
    .traced = 1,
    .summary = "cuBLAS-compatible library calls",
};
