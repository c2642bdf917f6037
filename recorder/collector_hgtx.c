/* The HGTX collector: NVTX v3 annotations, through NVTX's injection
 * interface (inject/hgtx.c).  The launcher names the library in
 * NVTX_INJECTION64_PATH for every recording (NVTX keeps its state per
 * shared object and asks again in each one), so there is nothing to prepare. */
#include "asys_format.h"
#include "collector.h"

const struct asys_collector asys_collector_hgtx = {
    .name = "hgtx",
    .alias = "nvtx",
    .feature = ASYS_FEATURE_HGTX,
    .built = 1,
    .traced = 1,
    .summary = "NVTX v3 ranges, marks, domains, categories, payloads, thread names",
};
