/* simppu libcupti.so.13, PM sampling: the device's counters sampled over
 * time (cupti_pmsampling.h) and the profiler host API that turns metric
 * names into a configuration and counter data into values
 * (cupti_profiler_host.h).  The values come from the work every process
 * ran on the device (device_state.h): a busy device shows high CE/CU
 * activity, an idle one none.
 *
 * The device's metrics, and what each costs of the device's counters
 * (COUNTER_CAPACITY per pass), are the table below.  Environment:
 * SIMPPU_PM_SAMPLING=0 (no PM sampling on this device: NOT_SUPPORTED),
 * SIMPPU_PM_BUSY=1 (another owner holds the counters: HARDWARE_BUSY; a
 * second sampler of the same device is refused the same way).
 * A test fixture: never linked into asys. */
#define _GNU_SOURCE
#include <cupti_pmsampling.h>
#include <cupti_target.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cupti_host_api.h"
#include "device_state.h"

#define EXPORT __attribute__((visibility("default")))
#define CHIP "PPU"
#define CLOCK_HZ 1.5e9
#define COUNTER_CAPACITY 20
#define MAX_METRICS 64
#define MAX_DEVICES 16
#define IMAGE_MAGIC 0x474d495050555053ull /* "SPUPPIMG" */
#define CONFIG_MAGIC 0x47464350505550ull /* "PUPPCFG" */
#define BYTES_PER_SAMPLE_PER_METRIC 16u /* the hardware buffer's use, for its capacity */

/* Fractions of the window each kind of work was active, clamped to 1. */
struct load {
    double kernel, htod, dtoh, dtod, peer, window_ns;
    double htod_bytes, dtoh_bytes;
};

typedef double (*model_fn)(const struct load *l);

static double clamp100(double v)
{
    return v > 100.0 ? 100.0 : v < 0.0 ? 0.0 : v;
}

static double m_clock(const struct load *l)
{
    (void)l;
    return CLOCK_HZ;
}
static double m_ce_active_pct(const struct load *l)
{
    return clamp100(100.0 * l->kernel);
}
static double m_ce_active_cycles(const struct load *l)
{
    return l->kernel * l->window_ns * CLOCK_HZ / 1e9;
}
static double m_dispatch(const struct load *l)
{
    return clamp100(90.0 * l->kernel);
}
static double m_warps_active(const struct load *l)
{
    return clamp100(75.0 * l->kernel);
}
static double m_warps_cu_active(const struct load *l)
{
    return clamp100(15.0 * l->kernel);
}
static double m_warps_cu_idle(const struct load *l)
{
    return clamp100(10.0 * l->kernel);
}
static double m_cu_active(const struct load *l)
{
    return clamp100(95.0 * l->kernel);
}
static double m_issue(const struct load *l)
{
    return clamp100(60.0 * l->kernel);
}
static double m_tensor(const struct load *l)
{
    return clamp100(30.0 * l->kernel);
}
static double m_dram_read(const struct load *l)
{
    return clamp100(100.0 * (l->dtoh + l->dtod) + 20.0 * l->kernel);
}
static double m_dram_write(const struct load *l)
{
    return clamp100(100.0 * (l->htod + l->dtod) + 10.0 * l->kernel);
}
static double m_kvd_hit(const struct load *l)
{
    return l->kernel > 0 ? 80.0 : 0.0;
}
static double m_ksd_hit(const struct load *l)
{
    return l->kernel > 0 ? 70.0 : 0.0;
}
static double m_l2_hit(const struct load *l)
{
    return l->kernel + l->htod + l->dtoh + l->dtod > 0 ? 65.0 : 0.0;
}
static double m_pcie_read_pct(const struct load *l)
{
    return clamp100(100.0 * l->htod);
}
static double m_pcie_write_pct(const struct load *l)
{
    return clamp100(100.0 * l->dtoh);
}
static double m_pcie_read_rate(const struct load *l)
{
    return l->window_ns > 0 ? l->htod_bytes * 1e9 / l->window_ns : 0;
}
static double m_pcie_write_rate(const struct load *l)
{
    return l->window_ns > 0 ? l->dtoh_bytes * 1e9 / l->window_ns : 0;
}
static double m_link(const struct load *l)
{
    return clamp100(100.0 * l->peer);
}
static double m_sfu_stall(const struct load *l)
{
    return 0.05 * l->kernel;
}

struct device_metric {
    const char *name;
    CUpti_MetricType type;
    unsigned cost; /* counters of COUNTER_CAPACITY */
    model_fn value;
};

static const struct device_metric metrics[] = {
    {"ce__cycles_elapsed.avg.per_second", CUPTI_METRIC_TYPE_THROUGHPUT, 1, m_clock},
    {"ce__cycles_active.avg.pct_of_peak_sustained_elapsed", CUPTI_METRIC_TYPE_RATIO, 1,
     m_ce_active_pct},
    {"ce__cycles_active.avg", CUPTI_METRIC_TYPE_COUNTER, 1, m_ce_active_cycles},
    {"gd__dispatch_count.avg.pct_of_peak_sustained_elapsed", CUPTI_METRIC_TYPE_RATIO, 1,
     m_dispatch},
    {"ce__warps_active_accumulated.avg.pct_of_peak_sustained_elapsed", CUPTI_METRIC_TYPE_RATIO, 2,
     m_warps_active},
    {"ce__warps_inactive_cu_active_accumulated.avg.pct_of_peak_sustained_elapsed",
     CUPTI_METRIC_TYPE_RATIO, 2, m_warps_cu_active},
    {"ce__warps_inactive_cu_idle_accumulated.avg.pct_of_peak_sustained_elapsed",
     CUPTI_METRIC_TYPE_RATIO, 2, m_warps_cu_idle},
    {"cu__cycles_active.avg.pct_of_peak_sustained_elapsed", CUPTI_METRIC_TYPE_RATIO, 1,
     m_cu_active},
    {"cu__ws_issue_active.avg.pct_of_peak_sustained_elapsed", CUPTI_METRIC_TYPE_RATIO, 1, m_issue},
    {"cu__we_pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed", CUPTI_METRIC_TYPE_RATIO,
     1, m_tensor},
    {"dram__exclude_hbm_bytes_read.sum.pct_of_peak_sustained_elapsed", CUPTI_METRIC_TYPE_RATIO, 1,
     m_dram_read},
    {"dram__exclude_hbm_bytes_write.sum.pct_of_peak_sustained_elapsed", CUPTI_METRIC_TYPE_RATIO, 1,
     m_dram_write},
    {"kvd__transaction_hit_rate.pct", CUPTI_METRIC_TYPE_RATIO, 2, m_kvd_hit},
    {"ksd__transaction_hit_rate.pct", CUPTI_METRIC_TYPE_RATIO, 2, m_ksd_hit},
    {"l2__transaction_hit_rate.pct", CUPTI_METRIC_TYPE_RATIO, 2, m_l2_hit},
    {"pcie__read_bytes.avg.pct_of_peak_sustained_elapsed", CUPTI_METRIC_TYPE_RATIO, 1,
     m_pcie_read_pct},
    {"pcie__write_bytes.avg.pct_of_peak_sustained_elapsed", CUPTI_METRIC_TYPE_RATIO, 1,
     m_pcie_write_pct},
    {"pcie__read_bytes.sum.per_second", CUPTI_METRIC_TYPE_THROUGHPUT, 1, m_pcie_read_rate},
    {"pcie__write_bytes.sum.per_second", CUPTI_METRIC_TYPE_THROUGHPUT, 1, m_pcie_write_rate},
    {"icnltx__bytes.sum.pct_of_peak_sustained_elapsed", CUPTI_METRIC_TYPE_RATIO, 1, m_link},
    {"icnlrx__bytes.sum.pct_of_peak_sustained_elapsed", CUPTI_METRIC_TYPE_RATIO, 1, m_link},
    {"pu__we_average_warps_issue_stalled_compute_sfu_raw_per_issue_active.ratio",
     CUPTI_METRIC_TYPE_RATIO, 2, m_sfu_stall},
};
#define METRIC_COUNT (sizeof metrics / sizeof metrics[0])

static int metric_index(const char *name)
{
    for (size_t i = 0; i < METRIC_COUNT; i++)
        if (!strcmp(metrics[i].name, name))
            return (int)i;
    return -1;
}

static int env_is(const char *name, char value)
{
    const char *v = getenv(name);
    return v && v[0] == value && !v[1];
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CUPTI's timestamps here: CLOCK_REALTIME ns (cuptiGetTimestamp without a
 * tool clock); one offset per sample keeps its duration exact. */
static int64_t cupti_time_offset(void)
{
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    return (int64_t)((uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec) - (int64_t)mono_ns();
}

/* The physical device of CUDA ordinal `index` under CUDA_VISIBLE_DEVICES. */
static int physical_of(size_t index)
{
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    long devices = getenv("SIMPPU_DEVICES") ? strtol(getenv("SIMPPU_DEVICES"), NULL, 10) : 1;
    if (devices < 1)
        devices = 1;
    if (!visible || !*visible)
        return index < (size_t)devices ? (int)index : -1;
    const char *p = visible;
    for (size_t i = 0; i < index && *p; i++) {
        p += strcspn(p, ",");
        p += *p == ',';
    }
    long physical = *p ? strtol(p, NULL, 10) : -1;
    return physical >= 0 && physical < devices ? (int)physical : -1;
}

/* ---- chip and availability ---------------------------------------------------------- */

EXPORT CUptiResult cuptiDeviceGetChipName(CUpti_Device_GetChipName_Params *p)
{
    if (!p || physical_of(p->deviceIndex) < 0)
        return CUPTI_ERROR_INVALID_PARAMETER;
    p->pChipName = CHIP;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiProfilerInitialize(void *params)
{
    (void)params;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiProfilerDeInitialize(void *params)
{
    (void)params;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult
cuptiPmSamplingGetCounterAvailability(CUpti_PmSampling_GetCounterAvailability_Params *p)
{
    static const uint8_t image[16] = "simppu-counters";
    if (!p || physical_of(p->deviceIndex) < 0)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (env_is("SIMPPU_PM_BUSY", '1'))
        return CUPTI_ERROR_HARDWARE_BUSY;
    if (!p->pCounterAvailabilityImage) {
        p->counterAvailabilityImageSize = sizeof image;
        return CUPTI_SUCCESS;
    }
    if (p->counterAvailabilityImageSize < sizeof image)
        return CUPTI_ERROR_INVALID_PARAMETER;
    memcpy(p->pCounterAvailabilityImage, image, sizeof image);
    return CUPTI_SUCCESS;
}

/* ---- profiler host: names to configurations, counter data to values --------------- */

struct CUpti_Profiler_Host_Object {
    uint16_t chosen[MAX_METRICS];
    size_t count;
    const char *names[METRIC_COUNT]; /* base metrics of one type, for GetBaseMetrics */
    char bases[METRIC_COUNT][96];
};

struct config_image {
    uint64_t magic;
    uint64_t count;
    uint16_t metric[MAX_METRICS];
};

EXPORT CUptiResult cuptiProfilerHostInitialize(CUpti_Profiler_Host_Initialize_Params *p)
{
    if (!p || p->profilerType != CUPTI_PROFILER_TYPE_PM_SAMPLING || !p->pChipName ||
        strcmp(p->pChipName, CHIP))
        return CUPTI_ERROR_INVALID_PARAMETER;
    p->pHostObject = calloc(1, sizeof *p->pHostObject);
    return p->pHostObject ? CUPTI_SUCCESS : CUPTI_ERROR_OUT_OF_MEMORY;
}

EXPORT CUptiResult cuptiProfilerHostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params *p)
{
    if (p)
        free(p->pHostObject);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiProfilerHostGetBaseMetrics(CUpti_Profiler_Host_GetBaseMetrics_Params *p)
{
    if (!p || !p->pHostObject)
        return CUPTI_ERROR_INVALID_PARAMETER;
    struct CUpti_Profiler_Host_Object *h = p->pHostObject;
    size_t n = 0;
    for (size_t i = 0; i < METRIC_COUNT; i++) {
        if (metrics[i].type != p->metricType)
            continue;
        size_t len = strcspn(metrics[i].name, ".");
        snprintf(h->bases[n], sizeof h->bases[n], "%.*s", (int)len, metrics[i].name);
        h->names[n] = h->bases[n];
        n++;
    }
    p->ppMetricNames = h->names;
    p->numMetrics = n;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiProfilerHostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params *p)
{
    if (!p || !p->pHostObject || !p->ppMetricNames)
        return CUPTI_ERROR_INVALID_PARAMETER;
    struct CUpti_Profiler_Host_Object *h = p->pHostObject;
    for (size_t i = 0; i < p->numMetrics; i++) /* all or nothing, like CUPTI */
        if (!p->ppMetricNames[i] || metric_index(p->ppMetricNames[i]) < 0)
            return CUPTI_ERROR_INVALID_METRIC_NAME;
    for (size_t i = 0; i < p->numMetrics && h->count < MAX_METRICS; i++)
        h->chosen[h->count++] = (uint16_t)metric_index(p->ppMetricNames[i]);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult
cuptiProfilerHostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params *p)
{
    if (!p || !p->pHostObject)
        return CUPTI_ERROR_INVALID_PARAMETER;
    p->configImageSize = sizeof(struct config_image);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiProfilerHostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params *p)
{
    if (!p || !p->pHostObject || !p->pConfigImage ||
        p->configImageSize < sizeof(struct config_image))
        return CUPTI_ERROR_INVALID_PARAMETER;
    struct config_image c = {.magic = CONFIG_MAGIC, .count = p->pHostObject->count};
    memcpy(c.metric, p->pHostObject->chosen, sizeof c.metric);
    memcpy(p->pConfigImage, &c, sizeof c);
    return CUPTI_SUCCESS;
}

static const struct config_image *config_of(const uint8_t *image, size_t size)
{
    const struct config_image *c = (const struct config_image *)(const void *)image;
    return image && size >= sizeof *c && c->magic == CONFIG_MAGIC && c->count <= MAX_METRICS ? c
                                                                                             : NULL;
}

EXPORT CUptiResult cuptiProfilerHostGetNumOfPasses(CUpti_Profiler_Host_GetNumOfPasses_Params *p)
{
    const struct config_image *c = p ? config_of(p->pConfigImage, p->configImageSize) : NULL;
    if (!c)
        return CUPTI_ERROR_INVALID_PARAMETER;
    unsigned used = 0;
    for (size_t i = 0; i < c->count; i++)
        used += metrics[c->metric[i]].cost;
    p->numOfPasses = used ? (used + COUNTER_CAPACITY - 1) / COUNTER_CAPACITY : 1;
    return CUPTI_SUCCESS;
}

/* ---- PM sampling: the object, the counter data image ------------------------------- */

struct CUpti_PmSampling_Object {
    int physical;
    struct config_image config;
    uint64_t interval_ns;
    uint64_t hw_samples; /* what the hardware buffer holds between decodes */
    int keep_latest;
    int started;
    uint64_t next_start; /* CLOCK_MONOTONIC start of the next sample */
};

struct sample {
    uint64_t start, end; /* CUPTI timestamps */
    double values[MAX_METRICS];
};

struct counter_image {
    uint64_t magic;
    uint64_t max_samples;
    uint64_t populated;
    uint64_t count;
    uint16_t metric[MAX_METRICS];
    struct sample samples[];
};

EXPORT CUptiResult cuptiPmSamplingEnable(CUpti_PmSampling_Enable_Params *p)
{
    if (!p)
        return CUPTI_ERROR_INVALID_PARAMETER;
    int physical = physical_of(p->deviceIndex);
    if (physical < 0)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (env_is("SIMPPU_PM_SAMPLING", '0'))
        return CUPTI_ERROR_NOT_SUPPORTED;
    if (env_is("SIMPPU_PM_BUSY", '1') || simppu_state_claim_counters(physical) != 0)
        return CUPTI_ERROR_HARDWARE_BUSY;
    struct CUpti_PmSampling_Object *o = calloc(1, sizeof *o);
    if (!o) {
        simppu_state_release_counters(physical);
        return CUPTI_ERROR_OUT_OF_MEMORY;
    }
    o->physical = physical;
    p->pPmSamplingObject = o;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiPmSamplingDisable(CUpti_PmSampling_Disable_Params *p)
{
    if (!p || !p->pPmSamplingObject)
        return CUPTI_ERROR_INVALID_PARAMETER;
    simppu_state_release_counters(p->pPmSamplingObject->physical);
    free(p->pPmSamplingObject);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiPmSamplingSetConfig(CUpti_PmSampling_SetConfig_Params *p)
{
    const struct config_image *c = p ? config_of(p->pConfig, p->configSize) : NULL;
    if (!c || !p->pPmSamplingObject || !p->samplingInterval ||
        p->triggerMode != CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL)
        return CUPTI_ERROR_INVALID_PARAMETER;
    unsigned used = 0;
    for (size_t i = 0; i < c->count; i++)
        used += metrics[c->metric[i]].cost;
    if (used > COUNTER_CAPACITY)
        return CUPTI_ERROR_NOT_SUPPORTED; /* more than one pass */
    struct CUpti_PmSampling_Object *o = p->pPmSamplingObject;
    o->config = *c;
    o->interval_ns = p->samplingInterval;
    size_t per_sample = BYTES_PER_SAMPLE_PER_METRIC * (c->count ? c->count : 1);
    o->hw_samples = p->hardwareBufferSize / per_sample;
    o->keep_latest =
        p->hwBufferAppendMode == CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_LATEST;
    return o->hw_samples ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

EXPORT CUptiResult cuptiPmSamplingStart(CUpti_PmSampling_Start_Params *p)
{
    if (!p || !p->pPmSamplingObject || p->pPmSamplingObject->started ||
        !p->pPmSamplingObject->interval_ns)
        return CUPTI_ERROR_INVALID_OPERATION;
    p->pPmSamplingObject->started = 1;
    p->pPmSamplingObject->next_start = mono_ns();
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiPmSamplingStop(CUpti_PmSampling_Stop_Params *p)
{
    if (!p || !p->pPmSamplingObject || !p->pPmSamplingObject->started)
        return CUPTI_ERROR_INVALID_OPERATION;
    p->pPmSamplingObject->started = 0;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiPmSamplingGetCounterDataSize(CUpti_PmSampling_GetCounterDataSize_Params *p)
{
    if (!p || !p->pMetricNames || !p->maxSamples || p->numMetrics > MAX_METRICS)
        return CUPTI_ERROR_INVALID_PARAMETER;
    for (size_t i = 0; i < p->numMetrics; i++)
        if (metric_index(p->pMetricNames[i]) < 0)
            return CUPTI_ERROR_INVALID_METRIC_NAME;
    p->counterDataSize =
        sizeof(struct counter_image) + (size_t)p->maxSamples * sizeof(struct sample);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult
cuptiPmSamplingCounterDataImageInitialize(CUpti_PmSampling_CounterDataImage_Initialize_Params *p)
{
    if (!p || !p->pPmSamplingObject || !p->pCounterData ||
        p->counterDataSize < sizeof(struct counter_image) + sizeof(struct sample))
        return CUPTI_ERROR_INVALID_PARAMETER;
    struct counter_image *image = (struct counter_image *)(void *)p->pCounterData;
    memset(image, 0, sizeof *image);
    image->magic = IMAGE_MAGIC;
    image->max_samples = (p->counterDataSize - sizeof *image) / sizeof(struct sample);
    image->count = p->pPmSamplingObject->config.count;
    memcpy(image->metric, p->pPmSamplingObject->config.metric, sizeof image->metric);
    return CUPTI_SUCCESS;
}

static struct counter_image *image_of(const uint8_t *data, size_t size)
{
    struct counter_image *image = (struct counter_image *)(uintptr_t)data;
    if (!data || size < sizeof *image || image->magic != IMAGE_MAGIC ||
        image->max_samples > (size - sizeof *image) / sizeof(struct sample) ||
        image->populated > image->max_samples || image->count > MAX_METRICS)
        return NULL;
    return image;
}

static void fill_sample(const struct CUpti_PmSampling_Object *o, const struct counter_image *image,
                        uint64_t start, uint64_t end, struct sample *s)
{
    struct simppu_busy busy;
    simppu_state_busy(o->physical, start, end, &busy);
    double w = (double)(end - start);
    struct load l = {.window_ns = w};
    double *fractions[] = {[SIMPPU_WORK_KERNEL] = &l.kernel, [SIMPPU_WORK_HTOD] = &l.htod,
                           [SIMPPU_WORK_DTOH] = &l.dtoh,     [SIMPPU_WORK_DTOD] = &l.dtod,
                           [SIMPPU_WORK_PEER] = &l.peer,     [SIMPPU_WORK_MEMSET] = &l.dtod};
    for (int k = 1; k < SIMPPU_WORK_KIND_COUNT; k++) {
        double f = w > 0 ? busy.active_ns[k] / w : 0;
        *fractions[k] += f > 1 ? 1 : f;
    }
    l.htod_bytes = busy.bytes[SIMPPU_WORK_HTOD];
    l.dtoh_bytes = busy.bytes[SIMPPU_WORK_DTOH];
    int64_t offset = cupti_time_offset();
    s->start = (uint64_t)((int64_t)start + offset);
    s->end = (uint64_t)((int64_t)end + offset);
    for (size_t i = 0; i < image->count; i++)
        s->values[i] = metrics[image->metric[i]].value(&l);
}

EXPORT CUptiResult cuptiPmSamplingDecodeData(CUpti_PmSampling_DecodeData_Params *p)
{
    struct counter_image *image =
        p ? image_of(p->pCounterDataImage, p->counterDataImageSize) : NULL;
    if (!image || !p->pPmSamplingObject)
        return CUPTI_ERROR_INVALID_PARAMETER;
    struct CUpti_PmSampling_Object *o = p->pPmSamplingObject;
    p->overflow = 0;
    uint64_t now = mono_ns();
    uint64_t pending = now > o->next_start ? (now - o->next_start) / o->interval_ns : 0;
    if (pending > o->hw_samples) { /* the hardware buffer wrapped since the last decode */
        p->overflow = 1;
        if (!o->keep_latest)
            return CUPTI_ERROR_OUT_OF_MEMORY;
        o->next_start += (pending - o->hw_samples) * o->interval_ns;
    }
    while (o->next_start + o->interval_ns <= now) {
        if (image->populated == image->max_samples) {
            p->decodeStopReason = CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL;
            return CUPTI_SUCCESS;
        }
        fill_sample(o, image, o->next_start, o->next_start + o->interval_ns,
                    &image->samples[image->populated++]);
        o->next_start += o->interval_ns;
    }
    p->decodeStopReason = CUPTI_PM_SAMPLING_DECODE_STOP_REASON_END_OF_RECORDS;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiPmSamplingGetCounterDataInfo(CUpti_PmSampling_GetCounterDataInfo_Params *p)
{
    const struct counter_image *image =
        p ? image_of(p->pCounterDataImage, p->counterDataImageSize) : NULL;
    if (!image)
        return CUPTI_ERROR_INVALID_PARAMETER;
    p->numTotalSamples = image->max_samples;
    p->numPopulatedSamples = image->populated;
    p->numCompletedSamples = image->populated;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult
cuptiPmSamplingCounterDataGetSampleInfo(CUpti_PmSampling_CounterData_GetSampleInfo_Params *p)
{
    const struct counter_image *image =
        p ? image_of(p->pCounterDataImage, p->counterDataImageSize) : NULL;
    if (!image || p->sampleIndex >= image->populated)
        return CUPTI_ERROR_INVALID_PARAMETER;
    p->startTimestamp = image->samples[p->sampleIndex].start;
    p->endTimestamp = image->samples[p->sampleIndex].end;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult
cuptiProfilerHostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params *p)
{
    const struct counter_image *image =
        p ? image_of(p->pCounterDataImage, p->counterDataImageSize) : NULL;
    if (!image || p->rangeIndex >= image->populated || !p->ppMetricNames || !p->pMetricValues)
        return CUPTI_ERROR_INVALID_PARAMETER;
    for (size_t i = 0; i < p->numMetrics; i++) {
        int wanted = metric_index(p->ppMetricNames[i]);
        size_t at = 0;
        while (at < image->count && image->metric[at] != wanted)
            at++;
        if (wanted < 0 || at == image->count)
            return CUPTI_ERROR_INVALID_METRIC_NAME;
        p->pMetricValues[i] = image->samples[p->rangeIndex].values[at];
    }
    return CUPTI_SUCCESS;
}
