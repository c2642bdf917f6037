/* PPU metrics through NVML GPM (ppu_backend.h), where CUPTI PM sampling is
 * unavailable: two GPM samples at least 100 ms apart give each metric's
 * value over the window between them.  Only the catalogue's metrics with a
 * GPM counterpart are sampled; there is no capacity limit. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nvml_api.h"
#include "ppu_backend.h"

struct gpm {
    nvmlReturn_t (*init)(void);
    nvmlReturn_t (*handle)(unsigned, nvmlDevice_t *);
    nvmlReturn_t (*support)(nvmlDevice_t, nvmlGpmSupport_t *);
    nvmlReturn_t (*alloc)(nvmlGpmSample_t *);
    nvmlReturn_t (*free_sample)(nvmlGpmSample_t);
    nvmlReturn_t (*get)(nvmlDevice_t, nvmlGpmSample_t);
    nvmlReturn_t (*metrics)(nvmlGpmMetricsGet_t *);
};

static const struct gpm *gpm_functions(char *why)
{
    static struct gpm f;
    static int state;
    if (!state) {
        void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
        state = -1;
        if (lib) {
            *(void **)&f.init = dlsym(lib, "nvmlInit_v2");
            *(void **)&f.handle = dlsym(lib, "nvmlDeviceGetHandleByIndex_v2");
            *(void **)&f.support = dlsym(lib, "nvmlGpmQueryDeviceSupport");
            *(void **)&f.alloc = dlsym(lib, "nvmlGpmSampleAlloc");
            *(void **)&f.free_sample = dlsym(lib, "nvmlGpmSampleFree");
            *(void **)&f.get = dlsym(lib, "nvmlGpmSampleGet");
            *(void **)&f.metrics = dlsym(lib, "nvmlGpmMetricsGet");
            if (f.init && f.handle && f.support && f.alloc && f.free_sample && f.get && f.metrics &&
                f.init() == NVML_SUCCESS)
                state = 1;
        }
    }
    if (state < 0) {
        snprintf(why, PPU_WHY_MAX, "NVML has no GPM here");
        return NULL;
    }
    return &f;
}

struct gpm_session {
    const struct gpm *f;
    nvmlDevice_t device;
    nvmlGpmSample_t samples[2];
    int newest; /* index of the last sample taken */
    uint64_t taken_ns[2];
    uint64_t interval_ns;
    unsigned ids[PPU_MAX_METRICS];
    double scale[PPU_MAX_METRICS];
    size_t count;
};

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void session_free(struct gpm_session *s)
{
    if (!s)
        return;
    for (int i = 0; i < 2; i++)
        if (s->samples[i])
            s->f->free_sample(s->samples[i]);
    free(s);
}

static enum asys_ppu_metrics_status open_device(const struct gpm *f, unsigned physical,
                                                nvmlDevice_t *device, char *why)
{
    nvmlGpmSupport_t support = {.version = NVML_GPM_SUPPORT_VERSION};
    if (f->handle(physical, device) != NVML_SUCCESS) {
        snprintf(why, PPU_WHY_MAX, "NVML has no device %u", physical);
        return ASYS_PPU_METRICS_UNAVAILABLE;
    }
    if (f->support(*device, &support) != NVML_SUCCESS || !support.isSupportedDevice) {
        snprintf(why, PPU_WHY_MAX, "device %u has no GPM", physical);
        return ASYS_PPU_METRICS_UNAVAILABLE;
    }
    return ASYS_PPU_METRICS_SAMPLING;
}

static enum asys_ppu_metrics_status gpm_passes(unsigned physical, const struct ppu_metric *const *m,
                                               size_t n, size_t *passes, char *why)
{
    (void)m;
    (void)n;
    nvmlDevice_t device;
    const struct gpm *f = gpm_functions(why);
    if (!f)
        return ASYS_PPU_METRICS_UNAVAILABLE;
    *passes = 1; /* GPM computes every metric from the same two samples */
    return open_device(f, physical, &device, why);
}

static enum asys_ppu_metrics_status gpm_start(unsigned physical, const struct ppu_metric *const *m,
                                              size_t n, uint64_t interval_ns, uint8_t *sampled,
                                              void **session, char *why)
{
    struct gpm_session *s = calloc(1, sizeof *s);
    enum asys_ppu_metrics_status st = ASYS_PPU_METRICS_UNAVAILABLE;
    char missing[PPU_WHY_MAX] = "";
    *session = NULL;
    if (!s || !(s->f = gpm_functions(why)))
        goto out;
    if ((st = open_device(s->f, physical, &s->device, why)) != 0)
        goto out;
    st = ASYS_PPU_METRICS_UNAVAILABLE;
    for (size_t i = 0; i < n && i < PPU_MAX_METRICS && s->count < ASYS_GPM_METRICS; i++) {
        sampled[i] = m[i]->gpm_id != 0;
        if (sampled[i]) {
            s->ids[s->count] = m[i]->gpm_id;
            s->scale[s->count++] = m[i]->gpm_scale;
        } else if (strlen(missing) + strlen(m[i]->name) + 3 < sizeof missing) {
            strcat(strcat(missing, *missing ? ", " : ""), m[i]->name);
        }
    }
    if (*missing)
        snprintf(why, PPU_WHY_MAX, "not available through GPM: %.220s", missing);
    if (!s->count)
        goto out;
    if (s->f->alloc(&s->samples[0]) != NVML_SUCCESS || s->f->alloc(&s->samples[1]) != NVML_SUCCESS)
        goto out;
    nvmlReturn_t r = s->f->get(s->device, s->samples[0]);
    if (r != NVML_SUCCESS) {
        snprintf(why, PPU_WHY_MAX,
                 r == NVML_ERROR_IN_USE ? "the device's performance counters are in use"
                                        : "GPM cannot sample (NVML error %d)",
                 r);
        st = r == NVML_ERROR_IN_USE ? ASYS_PPU_METRICS_BUSY : ASYS_PPU_METRICS_UNAVAILABLE;
        goto out;
    }
    s->taken_ns[0] = mono_ns();
    s->interval_ns = interval_ns;
    *session = s;
    s = NULL;
    st = ASYS_PPU_METRICS_SAMPLING;
out:
    session_free(s);
    return st;
}

static int gpm_drain(void *session, ppu_sample_fn fn, void *ctx)
{
    struct gpm_session *s = session;
    uint64_t now = mono_ns();
    if (now - s->taken_ns[s->newest] < s->interval_ns)
        return 0;
    int next = !s->newest;
    if (s->f->get(s->device, s->samples[next]) != NVML_SUCCESS)
        return -1;
    s->taken_ns[next] = mono_ns();
    nvmlGpmMetricsGet_t g = {.version = NVML_GPM_METRICS_GET_VERSION,
                             .numMetrics = (unsigned)s->count,
                             .sample1 = s->samples[s->newest],
                             .sample2 = s->samples[next]};
    for (size_t i = 0; i < s->count; i++)
        g.metrics[i].metricId = s->ids[i];
    if (s->f->metrics(&g) != NVML_SUCCESS)
        return -1;
    double values[PPU_MAX_METRICS];
    for (size_t i = 0; i < s->count; i++)
        values[i] = g.metrics[i].nvmlReturn == NVML_SUCCESS ? g.metrics[i].value * s->scale[i] : 0;
    fn(ctx, s->taken_ns[s->newest], s->taken_ns[next], values);
    s->newest = next;
    return 0;
}

static void gpm_stop(void *session)
{
    session_free(session);
}

const struct ppu_backend ppu_backend_gpm = {
    .name = "NVML GPM",
    .id = ASYS_PPU_BACKEND_NVML_GPM,
    .min_interval_ns = 100000000, /* GPM wants samples >= 100 ms apart */
    .passes = gpm_passes,
    .start = gpm_start,
    .drain = gpm_drain,
    .stop = gpm_stop,
};
