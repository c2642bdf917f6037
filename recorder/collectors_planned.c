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

const struct asys_collector asys_collector_pccl = {
    .name = "pccl",
    .alias = "nccl",
    .feature = ASYS_FEATURE_PCCL,
    .traced = 1,
    .summary = "NCCL-compatible collectives",
};

const struct asys_collector asys_collector_hgvideo = {
    .name = "hgvideo",
    .alias = "nvvideo",
    .feature = ASYS_FEATURE_HGVIDEO,
    .traced = 1,
    .summary = "video decode and encode",
};

static const struct asys_option ppu_metrics_options[] = {
    PLANNED("ppu-metrics-device", "all|none|LIST|help", "none",
            "devices whose metrics are sampled"),
    PLANNED("ppu-metrics-set", "NAME|help", "summary", "predefined PPU metric set"),
    PLANNED("ppu-metrics-list", "LIST|help", "none", "PPU metrics to sample"),
    PLANNED("ppu-metrics-frequency", "HZ", "1000", "PPU metric sampling frequency"),
    PLANNED("check-ppu-metrics-list", "LIST", NULL,
            "check a metric list against the device's capacity"),
};

const struct asys_collector asys_collector_ppu_metrics = {
    .name = "ppu-metrics",
    .summary = "PPU performance counters",
    .options = ppu_metrics_options,
    .option_count = COUNT_OF(ppu_metrics_options),
};

static const struct asys_option python_options[] = {
    PLANNED("python-sampling", "true|false", "false", "periodic Python call stack sampling"),
    PLANNED("python-sampling-frequency", "HZ", "500", "Python sampling frequency (1..1000)"),
    PLANNED("python-backtrace", "hggc", "none", "Python call stacks on HGGC events"),
    PLANNED("python-backtrace-depth", "N", "24", "depth of Python call stacks"),
    PLANNED("python-functions-trace", "SPEC|FILE", "none", "trace Python functions as HGTX ranges"),
    PLANNED("python-functions-threshold", "NS", "80000",
            "record traced Python functions longer than NS"),
};

const struct asys_collector asys_collector_python = {
    .name = "python",
    .summary = "Python sampling, backtraces and function tracing",
    .options = python_options,
    .option_count = COUNT_OF(python_options),
};
