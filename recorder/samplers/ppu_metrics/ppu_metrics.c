/* The PPU metrics sampler (ppu_metrics.h).  Per device: CUPTI PM sampling
 * when it can, else NVML GPM at its slower rate; the device's hardware
 * buffer holds the samples between drains, so the thread wakes every
 * DRAIN_PERIOD_NS whatever the sampling frequency.  Each device has a
 * segment of its own (ppumetrics-N.seg): a segment's time only moves
 * forward, and each drain hands over samples from before the last one's
 * end of the other devices. */
#include "ppu_metrics.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "ppu_devices.h"
#include "session.h"
#include "notes.h"

#define DRAIN_PERIOD_NS 20000000u /* 20 ms */

struct device_session {
    struct asys_segment_writer seg;
    int seg_open;
    unsigned physical;
    const struct ppu_backend *backend;
    void *session;
    size_t value_count;
    uint64_t samples;
    uint32_t overflows;
    int failed;
};

struct ppu_metrics {
    pthread_t thread;
    int thread_started;
    int stop; /* atomic */
    struct device_session devices[PPU_MAX_DEVICES];
    size_t device_count;
    struct device_session *current; /* the one being drained */
};

/* A record with text after its fixed part, padded to whole words. */
static void *reserve_with_text(struct asys_segment_writer *w, size_t fixed, size_t text_len,
                               uint64_t ticks, uint32_t *delta, size_t *size)
{
    *size = (fixed + text_len + 7) & ~(size_t)7;
    void *r = asys_segment_reserve(w, (uint32_t)*size, ticks, delta);
    if (r)
        memset(r, 0, *size);
    return r;
}

static void write_device(struct asys_segment_writer *w, uint64_t ticks, unsigned physical,
                         enum asys_ppu_metrics_status status, enum asys_ppu_metrics_backend backend,
                         uint64_t interval, size_t metric_count, const struct ppu_device *d,
                         const char *why)
{
    char text[512];
    int len = snprintf(text, sizeof text, "%s\n%s\n%s", d ? d->name : "?", d ? d->pci_bus_id : "",
                       why ? why : "");
    size_t text_len = len < 0 ? 0 : (size_t)len < sizeof text ? (size_t)len : sizeof text - 1;
    uint32_t delta;
    size_t size;
    struct asys_rec_ppu_metrics_device *r =
        reserve_with_text(w, sizeof *r, text_len, ticks, &delta, &size);
    if (!r)
        return;
    r->status = status;
    r->backend = backend;
    r->interval_ns = interval;
    r->metric_count = (uint32_t)metric_count;
    r->text_length = (uint32_t)text_len;
    memcpy(r + 1, text, text_len);
    asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_PPU_METRICS_DEVICE, size / 8,
                                                  physical & 0xffffu, delta));
}

static void write_def(struct asys_segment_writer *w, uint64_t ticks, unsigned physical, size_t slot,
                      const struct ppu_metric *metric)
{
    char text[256];
    int len = snprintf(text, sizeof text, "%s\n%s", metric->name, metric->unit);
    size_t text_len = len < 0 ? 0 : (size_t)len < sizeof text ? (size_t)len : sizeof text - 1;
    uint32_t delta;
    size_t size;
    struct asys_rec_ppu_metric_def *r =
        reserve_with_text(w, sizeof *r, text_len, ticks, &delta, &size);
    if (!r)
        return;
    r->device = physical;
    r->text_length = (uint32_t)text_len;
    memcpy(r + 1, text, text_len);
    asys_segment_commit(&r->header,
                        ASYS_REC_WORD(ASYS_REC_PPU_METRIC_DEF, size / 8, slot & 0xffffu, delta));
}

static void write_sample(void *ctx, uint64_t start_ns, uint64_t end_ns, const double *values)
{
    struct ppu_metrics *m = ctx;
    struct device_session *d = m->current;
    uint32_t delta;
    size_t size = sizeof(struct asys_rec_ppu_metric_sample) + 8 * d->value_count;
    uint64_t duration = end_ns > start_ns ? end_ns - start_ns : 0;
    struct asys_rec_ppu_metric_sample *r =
        asys_segment_reserve(&d->seg, (uint32_t)size, start_ns, &delta);
    if (!r)
        return; /* counted as a drop by the writer */
    r->value_count = (uint32_t)d->value_count;
    r->duration_ns = duration > UINT32_MAX ? UINT32_MAX : (uint32_t)duration;
    memcpy(r + 1, values, 8 * d->value_count);
    asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_PPU_METRIC_SAMPLE, size / 8,
                                                  d->physical & 0xffffu, delta));
    d->samples++;
}

static void drain_all(struct ppu_metrics *m)
{
    for (size_t i = 0; i < m->device_count; i++) {
        struct device_session *d = &m->devices[i];
        if (!d->session || d->failed)
            continue;
        m->current = d;
        int overflows = d->backend->drain(d->session, write_sample, m);
        if (overflows < 0)
            d->failed = 1;
        else
            d->overflows += (uint32_t)overflows;
    }
}

static void *sampler(void *arg)
{
    struct ppu_metrics *m = arg;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    while (!__atomic_load_n(&m->stop, __ATOMIC_ACQUIRE)) {
        asys_session_wait_period(&next, DRAIN_PERIOD_NS);
        drain_all(m);
    }
    drain_all(m); /* what the devices sampled up to the end */
    return NULL;
}

static const struct ppu_device *device_info(const struct ppu_device_list *list, unsigned physical)
{
    for (size_t i = 0; i < list->count; i++)
        if (list->devices[i].index == physical)
            return &list->devices[i];
    return NULL;
}

/* The manual's advice when another owner holds the counters. */
static void advise_busy(unsigned physical)
{
    asys_note(ASYS_NOTE_WARNING,
              "PPU %u's performance counters are in use: PPU metrics are not sampled (another "
              "asys or profiler may be sampling; pause DCGM with 'dcgmi profile --pause'; "
              "'nvidia-smi -q' shows the device's state)",
              physical);
}

/* Starts one device: PM sampling, else GPM; records what happened. */
static int start_device(struct ppu_metrics *m, const char *session_dir,
                        const struct ppu_metrics_plan *plan, const struct ppu_device_list *list,
                        unsigned physical, struct asys_err *err)
{
    static const struct ppu_backend *const backends[] = {&ppu_backend_cupti, &ppu_backend_gpm};
    struct device_session *d = &m->devices[m->device_count++];
    uint8_t sampled[PPU_MAX_METRICS] = {0};
    char why[PPU_WHY_MAX] = "", first_why[PPU_WHY_MAX] = "";
    enum asys_ppu_metrics_status st = ASYS_PPU_METRICS_UNAVAILABLE;
    uint64_t interval = plan->interval_ns;
    char name[32];
    snprintf(name, sizeof name, "ppumetrics-%u", physical);
    if (asys_session_sampler_segment(&d->seg, session_dir, name,
                                     ASYS_LAUNCHER_PPU_METRICS +
                                         ASYS_LAUNCHER_PER_DEVICE * physical,
                                     ASYS_FEATURE_PPU_METRICS, err) != 0)
        return -1;
    d->seg_open = 1;
    uint64_t ticks = asys_clock_ticks(ASYS_CLOCK_MONOTONIC); /* before any sample */
    d->physical = physical;
    for (size_t b = 0; b < sizeof backends / sizeof backends[0]; b++) {
        interval = plan->interval_ns > backends[b]->min_interval_ns ? plan->interval_ns
                                                                    : backends[b]->min_interval_ns;
        memset(sampled, 0, sizeof sampled);
        why[0] = '\0';
        st = backends[b]->start(physical, plan->metrics, plan->metric_count, interval, sampled,
                                &d->session, why);
        if (!first_why[0])
            snprintf(first_why, sizeof first_why, "%s", why);
        if (st == ASYS_PPU_METRICS_SAMPLING)
            d->backend = backends[b];
        if (st != ASYS_PPU_METRICS_UNAVAILABLE) /* busy and capacity: the next one would be too */
            break;
    }
    for (size_t i = 0; i < plan->metric_count; i++)
        d->value_count += sampled[i] != 0;
    if (st != ASYS_PPU_METRICS_SAMPLING) {
        const char *reason = why[0] ? why : first_why;
        if (st == ASYS_PPU_METRICS_BUSY)
            advise_busy(physical);
        else
            asys_note(ASYS_NOTE_WARNING, "PPU metrics of device %u are not sampled: %s", physical,
                      reason);
        write_device(&d->seg, ticks, physical, st, ASYS_PPU_BACKEND_NONE, 0, 0,
                     device_info(list, physical), reason);
        d->value_count = 0;
        return 0;
    }
    if (d->backend == &ppu_backend_gpm)
        asys_note(ASYS_NOTE_NOTICE, "PPU %u: no PM sampling (%s); NVML GPM samples every %llu ms",
                  physical, first_why, (unsigned long long)(interval / 1000000));
    write_device(&d->seg, ticks, physical, st, d->backend->id, interval, d->value_count,
                 device_info(list, physical), why);
    size_t slot = 0;
    for (size_t i = 0; i < plan->metric_count; i++)
        if (sampled[i])
            write_def(&d->seg, ticks, physical, slot++, plan->metrics[i]);
    return 0;
}

int asys_ppu_metrics_start(const char *session_dir, const struct ppu_metrics_plan *plan,
                           struct ppu_metrics **out, struct asys_err *err)
{
    struct ppu_metrics *m = calloc(1, sizeof *m);
    struct ppu_device_list list;
    int rc = -1;
    *out = NULL;
    if (!m) {
        asys_fail_kind(err, ASYS_ERR_NOMEM, "out of memory");
        goto out;
    }
    ppu_devices_list(&list);
    for (size_t i = 0; i < plan->device_count && i < PPU_MAX_DEVICES; i++)
        if (start_device(m, session_dir, plan, &list, plan->devices[i], err) != 0)
            goto out;
    if ((errno = pthread_create(&m->thread, NULL, sampler, m)) != 0) {
        asys_fail_errno(err, errno, "cannot start the PPU metrics sampler");
        goto out;
    }
    m->thread_started = 1;
    *out = m;
    m = NULL;
    rc = 0;
out:
    asys_ppu_metrics_stop(m);
    return rc;
}

static void write_end(struct device_session *d)
{
    uint32_t delta;
    struct asys_rec_ppu_metrics_end *r =
        asys_segment_reserve(&d->seg, sizeof *r, asys_clock_ticks(ASYS_CLOCK_MONOTONIC), &delta);
    if (!r)
        return;
    r->overflows = d->overflows;
    r->reserved = 0;
    r->samples = d->samples;
    asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_PPU_METRICS_END, sizeof *r / 8,
                                                  d->physical & 0xffffu, delta));
}

void asys_ppu_metrics_stop(struct ppu_metrics *m)
{
    if (!m)
        return;
    if (m->thread_started) {
        __atomic_store_n(&m->stop, 1, __ATOMIC_RELEASE);
        pthread_join(m->thread, NULL);
    }
    for (size_t i = 0; i < m->device_count; i++) {
        struct device_session *d = &m->devices[i];
        if (d->session) {
            write_end(d);
            d->backend->stop(d->session);
        }
        if (d->seg_open)
            asys_segment_close(&d->seg);
    }
    free(m);
}
