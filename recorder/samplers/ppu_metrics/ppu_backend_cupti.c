/* PPU metrics through CUPTI PM sampling (ppu_backend.h): the profiler host
 * API turns metric names into a configuration image (capacity: it must fit
 * one pass), the device samples into its hardware buffer at the interval
 * given, and each drain decodes that buffer into a counter data image and
 * evaluates every completed sample.  libcupti is loaded at run time. */
#define _GNU_SOURCE
#include <cupti_pmsampling.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cupti_host_api.h"
#include "cupti_library.h"
#include "ppu_backend.h"
#include "ppu_devices.h"

#define MAX_SAMPLES_PER_IMAGE 512
#define HARDWARE_BUFFER_BYTES (64u << 20)

#define CUPTI_FUNCTIONS(X) \
    X(cuptiProfilerInitialize, CUpti_Profiler_Initialize_Params) \
    X(cuptiDeviceGetChipName, CUpti_Device_GetChipName_Params) \
    X(cuptiPmSamplingGetCounterAvailability, CUpti_PmSampling_GetCounterAvailability_Params) \
    X(cuptiProfilerHostInitialize, CUpti_Profiler_Host_Initialize_Params) \
    X(cuptiProfilerHostDeinitialize, CUpti_Profiler_Host_Deinitialize_Params) \
    X(cuptiProfilerHostGetBaseMetrics, CUpti_Profiler_Host_GetBaseMetrics_Params) \
    X(cuptiProfilerHostConfigAddMetrics, CUpti_Profiler_Host_ConfigAddMetrics_Params) \
    X(cuptiProfilerHostGetConfigImageSize, CUpti_Profiler_Host_GetConfigImageSize_Params) \
    X(cuptiProfilerHostGetConfigImage, CUpti_Profiler_Host_GetConfigImage_Params) \
    X(cuptiProfilerHostGetNumOfPasses, CUpti_Profiler_Host_GetNumOfPasses_Params) \
    X(cuptiProfilerHostEvaluateToGpuValues, CUpti_Profiler_Host_EvaluateToGpuValues_Params) \
    X(cuptiPmSamplingEnable, CUpti_PmSampling_Enable_Params) \
    X(cuptiPmSamplingDisable, CUpti_PmSampling_Disable_Params) \
    X(cuptiPmSamplingSetConfig, CUpti_PmSampling_SetConfig_Params) \
    X(cuptiPmSamplingStart, CUpti_PmSampling_Start_Params) \
    X(cuptiPmSamplingStop, CUpti_PmSampling_Stop_Params) \
    X(cuptiPmSamplingGetCounterDataSize, CUpti_PmSampling_GetCounterDataSize_Params) \
    X(cuptiPmSamplingCounterDataImageInitialize, \
      CUpti_PmSampling_CounterDataImage_Initialize_Params) \
    X(cuptiPmSamplingDecodeData, CUpti_PmSampling_DecodeData_Params) \
    X(cuptiPmSamplingGetCounterDataInfo, CUpti_PmSampling_GetCounterDataInfo_Params) \
    X(cuptiPmSamplingCounterDataGetSampleInfo, CUpti_PmSampling_CounterData_GetSampleInfo_Params)

struct cupti {
#define FIELD(name, params) CUptiResult (*name)(params *);
    CUPTI_FUNCTIONS(FIELD)
#undef FIELD
    CUptiResult (*get_timestamp)(uint64_t *);
};

/* The functions, resolved once (the launcher keeps the library loaded). */
static const struct cupti *cupti_functions(char *why)
{
    static struct cupti f;
    static int state; /* 0 untried, 1 ready, -1 not there */
    static char reason[PPU_WHY_MAX];
    if (!state) {
        void *lib = asys_cupti_open(reason, sizeof reason);
        state = lib ? 1 : -1;
#define RESOLVE(name, params) \
    if (state > 0 && !(*(void **)&f.name = dlsym(lib, #name))) { \
        snprintf(reason, sizeof reason, "this CUPTI has no PM sampling (%s)", #name); \
        state = -1; \
    }
        CUPTI_FUNCTIONS(RESOLVE)
#undef RESOLVE
        if (state > 0 && !(*(void **)&f.get_timestamp = dlsym(lib, "cuptiGetTimestamp")))
            state = -1;
        if (state > 0) {
            /* the driver first, where there is one (simppu has none) */
            void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
            int (*cu_init)(unsigned) = cuda ? (int (*)(unsigned))dlsym(cuda, "cuInit") : NULL;
            if (cu_init)
                cu_init(0);
            CUpti_Profiler_Initialize_Params p = {.structSize =
                                                      CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
            if (f.cuptiProfilerInitialize(&p) != CUPTI_SUCCESS) {
                snprintf(reason, sizeof reason, "cuptiProfilerInitialize failed");
                state = -1;
            }
        }
    }
    if (state < 0) {
        snprintf(why, PPU_WHY_MAX, "%s", reason);
        return NULL;
    }
    return &f;
}

static enum asys_ppu_metrics_status status_of(CUptiResult r)
{
    switch (r) {
    case CUPTI_SUCCESS:
        return ASYS_PPU_METRICS_SAMPLING;
    case CUPTI_ERROR_HARDWARE_BUSY:
    case CUPTI_ERROR_INVALID_OPERATION: /* already enabled on the device: another sampler */
        return ASYS_PPU_METRICS_BUSY;
    default:
        return ASYS_PPU_METRICS_UNAVAILABLE;
    }
}

static void say(char *why, const char *what, CUptiResult r)
{
    snprintf(why, PPU_WHY_MAX, "%s: CUPTI error %d", what, (int)r);
}

/* A device's profiler host object, its chip's metrics, and the device
 * names of the metrics asked for. */
struct host {
    CUpti_Profiler_Host_Object *object;
    uint8_t *availability;
    const char *names[PPU_MAX_METRICS]; /* device names of the sampled metrics */
    size_t count;
    int ordinal;
};

static int base_known(const struct cupti *f, CUpti_Profiler_Host_Object *h, const char *name)
{
    size_t base = strcspn(name, ".");
    for (int type = 0; type < CUPTI_METRIC_TYPE__COUNT; type++) {
        CUpti_Profiler_Host_GetBaseMetrics_Params p = {
            .structSize = sizeof p, .pHostObject = h, .metricType = (CUpti_MetricType)type};
        if (f->cuptiProfilerHostGetBaseMetrics(&p) != CUPTI_SUCCESS)
            continue;
        for (size_t i = 0; i < p.numMetrics; i++)
            if (strlen(p.ppMetricNames[i]) == base && !strncmp(p.ppMetricNames[i], name, base))
                return 1;
    }
    return 0;
}

static void host_free(const struct cupti *f, struct host *h)
{
    if (h->object) {
        CUpti_Profiler_Host_Deinitialize_Params p = {.structSize = sizeof p,
                                                     .pHostObject = h->object};
        f->cuptiProfilerHostDeinitialize(&p);
    }
    free(h->availability);
    memset(h, 0, sizeof *h);
}

/* Chip, availability, host object; the metrics by the device's names. */
static enum asys_ppu_metrics_status host_open(const struct cupti *f, unsigned physical,
                                              const struct ppu_metric *const *m, size_t n,
                                              uint8_t *sampled, struct host *h, char *why)
{
    memset(h, 0, sizeof *h);
    h->ordinal = ppu_cuda_ordinal(physical);
    if (h->ordinal < 0) {
        snprintf(why, PPU_WHY_MAX, "device %u is hidden from asys by CUDA_VISIBLE_DEVICES",
                 physical);
        return ASYS_PPU_METRICS_UNAVAILABLE;
    }
    CUpti_Device_GetChipName_Params chip = {.structSize = sizeof chip,
                                            .deviceIndex = (size_t)h->ordinal};
    CUptiResult r = f->cuptiDeviceGetChipName(&chip);
    if (r != CUPTI_SUCCESS) {
        say(why, "cannot name the device's chip", r);
        return ASYS_PPU_METRICS_UNAVAILABLE;
    }
    CUpti_PmSampling_GetCounterAvailability_Params a = {.structSize = sizeof a,
                                                        .deviceIndex = (size_t)h->ordinal};
    if ((r = f->cuptiPmSamplingGetCounterAvailability(&a)) == CUPTI_SUCCESS &&
        (h->availability =
             malloc(a.counterAvailabilityImageSize ? a.counterAvailabilityImageSize : 1)) != NULL) {
        a.pCounterAvailabilityImage = h->availability;
        r = f->cuptiPmSamplingGetCounterAvailability(&a);
    }
    if (r != CUPTI_SUCCESS) {
        say(why, "cannot read which counters are free", r);
        return status_of(r);
    }
    CUpti_Profiler_Host_Initialize_Params init = {.structSize = sizeof init,
                                                  .profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING,
                                                  .pChipName = chip.pChipName,
                                                  .pCounterAvailabilityImage = h->availability};
    if ((r = f->cuptiProfilerHostInitialize(&init)) != CUPTI_SUCCESS) {
        say(why, "the profiler host does not know this chip", r);
        return ASYS_PPU_METRICS_UNAVAILABLE;
    }
    h->object = init.pHostObject;
    char missing[PPU_WHY_MAX] = "";
    for (size_t i = 0; i < n && i < PPU_MAX_METRICS; i++) {
        const char *name = base_known(f, h->object, m[i]->name)                     ? m[i]->name
                           : m[i]->nvidia && base_known(f, h->object, m[i]->nvidia) ? m[i]->nvidia
                                                                                    : NULL;
        sampled[i] = name != NULL;
        if (name)
            h->names[h->count++] = name;
        else if (strlen(missing) + strlen(m[i]->name) + 3 < sizeof missing)
            strcat(strcat(missing, *missing ? ", " : ""), m[i]->name);
    }
    if (*missing)
        snprintf(why, PPU_WHY_MAX, "not on this device (%.32s): %.200s", chip.pChipName, missing);
    if (!h->count) {
        if (!*missing)
            snprintf(why, PPU_WHY_MAX, "no metric to sample");
        return ASYS_PPU_METRICS_UNAVAILABLE;
    }
    return ASYS_PPU_METRICS_SAMPLING;
}

/* The configuration image of the host's metrics and the passes it needs. */
static CUptiResult config_image(const struct cupti *f, struct host *h, uint8_t **image,
                                size_t *size, size_t *passes)
{
    CUpti_Profiler_Host_ConfigAddMetrics_Params add = {.structSize = sizeof add,
                                                       .pHostObject = h->object,
                                                       .ppMetricNames = h->names,
                                                       .numMetrics = h->count};
    CUptiResult r = f->cuptiProfilerHostConfigAddMetrics(&add);
    if (r != CUPTI_SUCCESS)
        return r;
    CUpti_Profiler_Host_GetConfigImageSize_Params s = {.structSize = sizeof s,
                                                       .pHostObject = h->object};
    if ((r = f->cuptiProfilerHostGetConfigImageSize(&s)) != CUPTI_SUCCESS)
        return r;
    *image = malloc(s.configImageSize ? s.configImageSize : 1);
    if (!*image)
        return CUPTI_ERROR_OUT_OF_MEMORY;
    *size = s.configImageSize;
    CUpti_Profiler_Host_GetConfigImage_Params g = {.structSize = sizeof g,
                                                   .pHostObject = h->object,
                                                   .configImageSize = *size,
                                                   .pConfigImage = *image};
    if ((r = f->cuptiProfilerHostGetConfigImage(&g)) != CUPTI_SUCCESS)
        return r;
    CUpti_Profiler_Host_GetNumOfPasses_Params p = {
        .structSize = sizeof p, .configImageSize = *size, .pConfigImage = *image};
    r = f->cuptiProfilerHostGetNumOfPasses(&p);
    *passes = p.numOfPasses;
    return r;
}

static enum asys_ppu_metrics_status cupti_passes(unsigned physical,
                                                 const struct ppu_metric *const *m, size_t n,
                                                 size_t *passes, char *why)
{
    const struct cupti *f = cupti_functions(why);
    uint8_t sampled[PPU_MAX_METRICS];
    uint8_t *image = NULL;
    size_t size = 0;
    struct host h;
    if (!f)
        return ASYS_PPU_METRICS_UNAVAILABLE;
    enum asys_ppu_metrics_status st = host_open(f, physical, m, n, sampled, &h, why);
    if (st == ASYS_PPU_METRICS_SAMPLING) {
        CUptiResult r = config_image(f, &h, &image, &size, passes);
        if (r != CUPTI_SUCCESS) {
            say(why, "the profiler host cannot configure these metrics", r);
            st = ASYS_PPU_METRICS_UNAVAILABLE;
        }
    }
    free(image);
    host_free(f, &h);
    return st;
}

struct cupti_session {
    const struct cupti *f;
    struct host host;
    CUpti_PmSampling_Object *object;
    uint8_t *config;
    uint8_t *data; /* the counter data image */
    size_t data_size;
    double values[PPU_MAX_METRICS];
};

static void session_free(struct cupti_session *s)
{
    if (!s)
        return;
    if (s->object) {
        CUpti_PmSampling_Stop_Params stop = {.structSize = sizeof stop,
                                             .pPmSamplingObject = s->object};
        s->f->cuptiPmSamplingStop(&stop);
        CUpti_PmSampling_Disable_Params d = {.structSize = sizeof d,
                                             .pPmSamplingObject = s->object};
        s->f->cuptiPmSamplingDisable(&d);
    }
    host_free(s->f, &s->host);
    free(s->config);
    free(s->data);
    free(s);
}

static CUptiResult data_image_reset(struct cupti_session *s)
{
    CUpti_PmSampling_CounterDataImage_Initialize_Params p = {.structSize = sizeof p,
                                                             .pPmSamplingObject = s->object,
                                                             .counterDataSize = s->data_size,
                                                             .pCounterData = s->data};
    return s->f->cuptiPmSamplingCounterDataImageInitialize(&p);
}

/* Enable, configure, size the counter data image, start. */
static CUptiResult session_begin(struct cupti_session *s, size_t config_size, uint64_t interval)
{
    CUpti_PmSampling_Enable_Params e = {.structSize = sizeof e,
                                        .deviceIndex = (size_t)s->host.ordinal};
    CUptiResult r = s->f->cuptiPmSamplingEnable(&e);
    if (r != CUPTI_SUCCESS)
        return r;
    s->object = e.pPmSamplingObject;
    CUpti_PmSampling_SetConfig_Params c = {
        .structSize = sizeof c,
        .pPmSamplingObject = s->object,
        .configSize = config_size,
        .pConfig = s->config,
        .hardwareBufferSize = HARDWARE_BUFFER_BYTES,
        .samplingInterval = interval,
        .triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL,
        .hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_LATEST};
    if ((r = s->f->cuptiPmSamplingSetConfig(&c)) != CUPTI_SUCCESS)
        return r;
    CUpti_PmSampling_GetCounterDataSize_Params z = {.structSize = sizeof z,
                                                    .pPmSamplingObject = s->object,
                                                    .pMetricNames = s->host.names,
                                                    .numMetrics = s->host.count,
                                                    .maxSamples = MAX_SAMPLES_PER_IMAGE};
    if ((r = s->f->cuptiPmSamplingGetCounterDataSize(&z)) != CUPTI_SUCCESS)
        return r;
    s->data_size = z.counterDataSize;
    if (!(s->data = malloc(s->data_size ? s->data_size : 1)))
        return CUPTI_ERROR_OUT_OF_MEMORY;
    if ((r = data_image_reset(s)) != CUPTI_SUCCESS)
        return r;
    CUpti_PmSampling_Start_Params st = {.structSize = sizeof st, .pPmSamplingObject = s->object};
    return s->f->cuptiPmSamplingStart(&st);
}

static enum asys_ppu_metrics_status cupti_start(unsigned physical,
                                                const struct ppu_metric *const *m, size_t n,
                                                uint64_t interval_ns, uint8_t *sampled,
                                                void **session, char *why)
{
    struct cupti_session *s = calloc(1, sizeof *s);
    size_t config_size = 0, passes = 0;
    enum asys_ppu_metrics_status st = ASYS_PPU_METRICS_UNAVAILABLE;
    *session = NULL;
    if (!s || !(s->f = cupti_functions(why)))
        goto out;
    if ((st = host_open(s->f, physical, m, n, sampled, &s->host, why)) != 0)
        goto out;
    CUptiResult r = config_image(s->f, &s->host, &s->config, &config_size, &passes);
    if (r != CUPTI_SUCCESS) {
        say(why, "the profiler host cannot configure these metrics", r);
        st = ASYS_PPU_METRICS_UNAVAILABLE;
        goto out;
    }
    if (passes > 1) {
        snprintf(why, PPU_WHY_MAX, "the metrics need %zu passes; PM sampling takes one", passes);
        st = ASYS_PPU_METRICS_CAPACITY;
        goto out;
    }
    if ((r = session_begin(s, config_size, interval_ns)) != CUPTI_SUCCESS) {
        st = status_of(r);
        if (st == ASYS_PPU_METRICS_BUSY)
            snprintf(why, PPU_WHY_MAX, "the device's performance counters are in use");
        else
            say(why, "PM sampling cannot start", r);
        goto out;
    }
    *session = s;
    s = NULL;
out:
    session_free(s);
    return st;
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The samples of the counter data image, then an empty image again. */
static int hand_over(struct cupti_session *s, int64_t to_mono, ppu_sample_fn fn, void *ctx)
{
    CUpti_PmSampling_GetCounterDataInfo_Params info = {.structSize = sizeof info,
                                                       .pCounterDataImage = s->data,
                                                       .counterDataImageSize = s->data_size};
    if (s->f->cuptiPmSamplingGetCounterDataInfo(&info) != CUPTI_SUCCESS)
        return -1;
    for (size_t i = 0; i < info.numCompletedSamples; i++) {
        CUpti_PmSampling_CounterData_GetSampleInfo_Params si = {.structSize = sizeof si,
                                                                .pPmSamplingObject = s->object,
                                                                .pCounterDataImage = s->data,
                                                                .counterDataImageSize =
                                                                    s->data_size,
                                                                .sampleIndex = i};
        CUpti_Profiler_Host_EvaluateToGpuValues_Params ev = {.structSize = sizeof ev,
                                                             .pHostObject = s->host.object,
                                                             .pCounterDataImage = s->data,
                                                             .counterDataImageSize = s->data_size,
                                                             .rangeIndex = i,
                                                             .ppMetricNames = s->host.names,
                                                             .numMetrics = s->host.count,
                                                             .pMetricValues = s->values};
        if (s->f->cuptiPmSamplingCounterDataGetSampleInfo(&si) != CUPTI_SUCCESS ||
            s->f->cuptiProfilerHostEvaluateToGpuValues(&ev) != CUPTI_SUCCESS)
            continue;
        fn(ctx, (uint64_t)((int64_t)si.startTimestamp + to_mono),
           (uint64_t)((int64_t)si.endTimestamp + to_mono), s->values);
    }
    return data_image_reset(s) == CUPTI_SUCCESS ? 0 : -1;
}

static int cupti_drain(void *session, ppu_sample_fn fn, void *ctx)
{
    struct cupti_session *s = session;
    uint64_t cupti_now = 0;
    if (s->f->get_timestamp(&cupti_now) != CUPTI_SUCCESS)
        return -1;
    int64_t to_mono = (int64_t)mono_ns() - (int64_t)cupti_now; /* CUPTI's clock to ours */
    int overflows = 0;
    for (int round = 0; round < 64; round++) {
        CUpti_PmSampling_DecodeData_Params d = {.structSize = sizeof d,
                                                .pPmSamplingObject = s->object,
                                                .pCounterDataImage = s->data,
                                                .counterDataImageSize = s->data_size};
        CUptiResult r = s->f->cuptiPmSamplingDecodeData(&d);
        overflows += d.overflow != 0;
        if (r != CUPTI_SUCCESS && r != CUPTI_ERROR_OUT_OF_MEMORY)
            return -1;
        if (hand_over(s, to_mono, fn, ctx) != 0)
            return -1;
        if (d.decodeStopReason != CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL)
            break;
    }
    return overflows;
}

static void cupti_stop(void *session)
{
    session_free(session);
}

/* "00000000:10:00.0" (NVML) and "0000:10:00.0" (CUDA) name one device. */
static int same_pci_device(const char *a, const char *b)
{
    unsigned da, ba, va, fa, db, bb, vb, fb;
    return sscanf(a, "%x:%x:%x.%x", &da, &ba, &va, &fa) == 4 &&
           sscanf(b, "%x:%x:%x.%x", &db, &bb, &vb, &fb) == 4 && da == db && ba == bb && va == vb &&
           fa == fb;
}

/* With the driver: the ordinal whose PCI bus id is the device's (CUDA's own
 * order need not be PCI order); -2 when the driver cannot say. */
static int ordinal_by_pci(unsigned physical)
{
    struct ppu_device_list list;
    const char *pci = NULL;
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    int (*init)(unsigned) = cuda ? (int (*)(unsigned))dlsym(cuda, "cuInit") : NULL;
    int (*count)(int *) = cuda ? (int (*)(int *))dlsym(cuda, "cuDeviceGetCount") : NULL;
    int (*get)(int *, int) = cuda ? (int (*)(int *, int))dlsym(cuda, "cuDeviceGet") : NULL;
    int (*bus)(char *, int, int) =
        cuda ? (int (*)(char *, int, int))dlsym(cuda, "cuDeviceGetPCIBusId") : NULL;
    int n = 0;
    if (!init || !count || !get || !bus || init(0) != 0 || count(&n) != 0)
        return -2;
    ppu_devices_list(&list);
    for (size_t i = 0; i < list.count; i++)
        if (list.devices[i].index == physical)
            pci = list.devices[i].pci_bus_id;
    for (int ordinal = 0; pci && ordinal < n; ordinal++) {
        int device;
        char id[64];
        if (get(&device, ordinal) == 0 && bus(id, sizeof id, device) == 0 &&
            same_pci_device(pci, id))
            return ordinal;
    }
    return -1;
}

int ppu_cuda_ordinal(unsigned physical)
{
    int by_pci = ordinal_by_pci(physical);
    if (by_pci != -2)
        return by_pci;
    /* no driver library (simppu): CUDA_VISIBLE_DEVICES's numbers are NVML's */
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    if (!visible || !*visible)
        return (int)physical;
    int ordinal = 0;
    for (const char *p = visible; *p; ordinal++) {
        char *end;
        unsigned long v = strtoul(p, &end, 10);
        if (end == p)
            return -1; /* UUIDs or MIG names: not mapped here */
        if (v == physical)
            return ordinal;
        p = *end == ',' ? end + 1 : end + strlen(end);
    }
    return -1;
}

const struct ppu_backend ppu_backend_cupti = {
    .name = "CUPTI PM sampling",
    .id = ASYS_PPU_BACKEND_CUPTI_PM,
    .min_interval_ns = 10000, /* 100 kHz */
    .passes = cupti_passes,
    .start = cupti_start,
    .drain = cupti_drain,
    .stop = cupti_stop,
};
