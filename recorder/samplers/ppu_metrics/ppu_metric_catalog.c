/* The PPU metric catalogue: names, units, descriptions and counterparts,
 * and the predefined sets (ppu_metric_catalog.h).  Append only: a report
 * names its metrics by text, so renaming one here changes nothing recorded. */
#include "ppu_metric_catalog.h"

#include <string.h>

#include "nvml_api.h"

#define MIB (1024.0 * 1024.0)

// clang-format off
static const struct ppu_metric metrics[] = {
    {"ce__cycles_elapsed.avg.per_second", "cycle/second",
     "# of cycles elapsed per second on CE across CEs (the clock)",
     "gpc__cycles_elapsed.avg.per_second", 0, 0},
    {"ce__cycles_active.avg", "cycle", "# of cycles active on CE across CEs",
     "sm__cycles_active.avg", 0, 0},
    {"ce__cycles_active.avg.pct_of_peak_sustained_elapsed", "%",
     "(%) cycles with work on CE across CEs, of the cycles elapsed",
     "sm__cycles_active.avg.pct_of_peak_sustained_elapsed", NVML_GPM_METRIC_SM_UTIL, 1},
    {"gd__dispatch_count.avg.pct_of_peak_sustained_elapsed", "%",
     "(%) work dispatched by the global dispatcher, of its peak", NULL, 0, 0},
    {"ce__warps_active_accumulated.avg.pct_of_peak_sustained_elapsed", "%",
     "(%) warps resident on CE, of the maximum (achieved occupancy)",
     "sm__warps_active.avg.pct_of_peak_sustained_active", NVML_GPM_METRIC_SM_OCCUPANCY, 1},
    {"ce__warps_inactive_cu_active_accumulated.avg.pct_of_peak_sustained_elapsed", "%",
     "(%) warp slots unused while their CU was active", NULL, 0, 0},
    {"ce__warps_inactive_cu_idle_accumulated.avg.pct_of_peak_sustained_elapsed", "%",
     "(%) warp slots unused while their CU was idle", NULL, 0, 0},
    {"cu__cycles_active.avg.pct_of_peak_sustained_elapsed", "%",
     "(%) cycles with work on CU across CUs, of the cycles elapsed",
     "smsp__cycles_active.avg.pct_of_peak_sustained_elapsed", 0, 0},
    {"cu__ws_issue_active.avg.pct_of_peak_sustained_elapsed", "%",
     "(%) cycles a warp scheduler issued an instruction",
     "smsp__issue_active.avg.pct_of_peak_sustained_elapsed", 0, 0},
    {"cu__we_pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed", "%",
     "(%) cycles the tensor pipe was active",
     "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
     NVML_GPM_METRIC_ANY_TENSOR_UTIL, 1},
    {"dram__exclude_hbm_bytes_read.sum.pct_of_peak_sustained_elapsed", "%",
     "(%) DRAM read throughput, of its peak",
     "dram__bytes_read.sum.pct_of_peak_sustained_elapsed", NVML_GPM_METRIC_DRAM_BW_UTIL, 1},
    {"dram__exclude_hbm_bytes_write.sum.pct_of_peak_sustained_elapsed", "%",
     "(%) DRAM write throughput, of its peak",
     "dram__bytes_write.sum.pct_of_peak_sustained_elapsed", NVML_GPM_METRIC_DRAM_BW_UTIL, 1},
    {"kvd__transaction_hit_rate.pct", "%", "(%) hit rate of KVD cacheable requests", NULL, 0, 0},
    {"ksd__transaction_hit_rate.pct", "%", "(%) hit rate of KSD cacheable requests", NULL, 0, 0},
    {"l2__transaction_hit_rate.pct", "%", "(%) hit rate of L2 cacheable requests",
     "lts__t_sector_hit_rate.pct", 0, 0},
    {"pcie__read_bytes.avg.pct_of_peak_sustained_elapsed", "%",
     "(%) PCIe read throughput (host to device), of its peak",
     "pcie__read_bytes.avg.pct_of_peak_sustained_elapsed", 0, 0},
    {"pcie__write_bytes.avg.pct_of_peak_sustained_elapsed", "%",
     "(%) PCIe write throughput (device to host), of its peak",
     "pcie__write_bytes.avg.pct_of_peak_sustained_elapsed", 0, 0},
    {"pcie__read_bytes.sum.per_second", "byte/second",
     "bytes per second read over PCIe (host to device)", "pcie__read_bytes.sum.per_second",
     NVML_GPM_METRIC_PCIE_RX_PER_SEC, MIB},
    {"pcie__write_bytes.sum.per_second", "byte/second",
     "bytes per second written over PCIe (device to host)", "pcie__write_bytes.sum.per_second",
     NVML_GPM_METRIC_PCIE_TX_PER_SEC, MIB},
    {"icnltx__bytes.sum.pct_of_peak_sustained_elapsed", "%",
     "(%) ICN link transmit throughput, of its peak",
     "nvltx__bytes.sum.pct_of_peak_sustained_elapsed", 0, 0},
    {"icnlrx__bytes.sum.pct_of_peak_sustained_elapsed", "%",
     "(%) ICN link receive throughput, of its peak",
     "nvlrx__bytes.sum.pct_of_peak_sustained_elapsed", 0, 0},
    {"pu__we_average_warps_issue_stalled_compute_sfu_raw_per_issue_active.ratio", "ratio",
     "average warps stalled on the SFU pipe per issue-active cycle",
     "smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio", 0, 0},
};

static const char *const summary[] = {
    "ce__cycles_elapsed.avg.per_second",
    "ce__cycles_active.avg.pct_of_peak_sustained_elapsed",
    "gd__dispatch_count.avg.pct_of_peak_sustained_elapsed",
    "ce__warps_active_accumulated.avg.pct_of_peak_sustained_elapsed",
    "ce__warps_inactive_cu_active_accumulated.avg.pct_of_peak_sustained_elapsed",
    "ce__warps_inactive_cu_idle_accumulated.avg.pct_of_peak_sustained_elapsed",
    "cu__cycles_active.avg.pct_of_peak_sustained_elapsed",
    "cu__ws_issue_active.avg.pct_of_peak_sustained_elapsed",
    "cu__we_pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "dram__exclude_hbm_bytes_read.sum.pct_of_peak_sustained_elapsed",
    "dram__exclude_hbm_bytes_write.sum.pct_of_peak_sustained_elapsed",
    NULL,
};

static const char *const throughput[] = {
    "kvd__transaction_hit_rate.pct",
    "ksd__transaction_hit_rate.pct",
    "l2__transaction_hit_rate.pct",
    "dram__exclude_hbm_bytes_read.sum.pct_of_peak_sustained_elapsed",
    "dram__exclude_hbm_bytes_write.sum.pct_of_peak_sustained_elapsed",
    "pcie__read_bytes.avg.pct_of_peak_sustained_elapsed",
    "pcie__write_bytes.avg.pct_of_peak_sustained_elapsed",
    "icnltx__bytes.sum.pct_of_peak_sustained_elapsed",
    "icnlrx__bytes.sum.pct_of_peak_sustained_elapsed",
    NULL,
};

static const char *const compute[] = {
    "ce__cycles_active.avg.pct_of_peak_sustained_elapsed",
    "cu__cycles_active.avg.pct_of_peak_sustained_elapsed",
    "cu__ws_issue_active.avg.pct_of_peak_sustained_elapsed",
    "cu__we_pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "ce__warps_active_accumulated.avg.pct_of_peak_sustained_elapsed",
    "pu__we_average_warps_issue_stalled_compute_sfu_raw_per_issue_active.ratio",
    NULL,
};

static const char *const pcie[] = {
    "pcie__read_bytes.sum.per_second",
    "pcie__write_bytes.sum.per_second",
    "pcie__read_bytes.avg.pct_of_peak_sustained_elapsed",
    "pcie__write_bytes.avg.pct_of_peak_sustained_elapsed",
    NULL,
};

static const struct ppu_metric_set sets[] = {
    {"summary", "Collect clock / memory / CU activity / Bus throughput information.", summary},
    {"throughput", "Collect DRAM / PCIe / ICN link throughput information.", throughput},
    {"compute", "Collect CE / CU activity, issue, tensor pipe and stall information.", compute},
    {"pcie", "Collect PCIe bytes per second and PCIe throughput of peak.", pcie},
};
// clang-format on

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

const struct ppu_metric *ppu_metric_find(const char *name)
{
    for (size_t i = 0; i < COUNT_OF(metrics); i++)
        if (!strcmp(metrics[i].name, name))
            return &metrics[i];
    return NULL;
}

const struct ppu_metric_set *ppu_metric_set_find(const char *name)
{
    for (size_t i = 0; i < COUNT_OF(sets); i++)
        if (!strcmp(sets[i].name, name))
            return &sets[i];
    return NULL;
}

#define IDENT_WIDTH 16
#define DESCRIPTION_WIDTH 40
#define METRICS_WIDTH 44

static void print_rule(FILE *out)
{
    fprintf(out, " %.*s %.*s %.*s\n", IDENT_WIDTH, "--------------------------------",
            DESCRIPTION_WIDTH, "----------------------------------------------------",
            METRICS_WIDTH, "----------------------------------------------------");
}

#define MAX_DESCRIPTION_LINES 8

/* `text` cut at spaces into lines of at most `width`: starts and lengths. */
static size_t wrap(const char *text, size_t width, const char **starts, int *lengths)
{
    size_t lines = 0;
    for (const char *p = text; *p && lines < MAX_DESCRIPTION_LINES;) {
        while (*p == ' ')
            p++;
        size_t len = strlen(p);
        if (len > width) {
            len = width;
            while (len > 0 && p[len] != ' ')
                len--;
            if (!len)
                len = width;
        }
        if (!len)
            break;
        starts[lines] = p;
        lengths[lines++] = (int)len;
        p += len;
    }
    return lines;
}

void ppu_metric_print_sets(FILE *out)
{
    fprintf(out, "Possible --ppu-metrics-set values are:\n");
    print_rule(out);
    fprintf(out, "  %-*s%-*s%s\n", IDENT_WIDTH + 1, "Identifier", DESCRIPTION_WIDTH + 1,
            "Description", "Enabled Metrics");
    print_rule(out);
    for (size_t s = 0; s < COUNT_OF(sets); s++) {
        const char *starts[MAX_DESCRIPTION_LINES];
        int lengths[MAX_DESCRIPTION_LINES];
        size_t lines = wrap(sets[s].description, DESCRIPTION_WIDTH - 1, starts, lengths);
        size_t count = 0;
        while (sets[s].metrics[count])
            count++;
        for (size_t row = 0; row < lines || row < count; row++) {
            int len = row < lines ? lengths[row] : 0;
            fprintf(out, "  %-*s%.*s%*s%s\n", IDENT_WIDTH + 1, row ? "" : sets[s].name, len,
                    row < lines ? starts[row] : "", DESCRIPTION_WIDTH + 1 - len, "",
                    row < count ? sets[s].metrics[row] : "");
        }
    }
    print_rule(out);
}

void ppu_metric_print_list(FILE *out)
{
    fprintf(out, "Possible --ppu-metrics-list values are:\n");
    for (size_t i = 0; i < COUNT_OF(metrics); i++) {
        const struct ppu_metric *m = &metrics[i];
        fprintf(out,
                "\n%s\n    Display Name:\n        %s\n    Unit: %s\n    Description:\n        %s\n",
                m->name, m->name, m->unit, m->description);
        if (m->nvidia)
            fprintf(out, "    On NVIDIA GPUs (CUPTI PM sampling):\n        %s\n", m->nvidia);
    }
}
