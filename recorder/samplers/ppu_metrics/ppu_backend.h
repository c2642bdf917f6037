/* A way to sample a PPU's counters from the launcher: CUPTI PM sampling
 * (ppu_backend_cupti.c) or, where that is unavailable, NVML GPM
 * (ppu_backend_gpm.c).  Each maps the catalogue's metrics to the device's
 * own names itself. */
#ifndef ASYS_PPU_BACKEND_H
#define ASYS_PPU_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "asys_format.h"
#include "ppu_metric_catalog.h"

#define PPU_MAX_METRICS 64
#define PPU_WHY_MAX 256

/* One sample: the window (CLOCK_MONOTONIC ns) and a value per sampled
 * metric, in the order of the metrics given to start. */
typedef void (*ppu_sample_fn)(void *ctx, uint64_t start_ns, uint64_t end_ns, const double *values);

struct ppu_backend {
    const char *name;
    enum asys_ppu_metrics_backend id;
    uint64_t min_interval_ns;
    /* Passes the metrics need on `physical` (1: they fit the capacity). */
    enum asys_ppu_metrics_status (*passes)(unsigned physical, const struct ppu_metric *const *m,
                                           size_t n, size_t *passes, char *why);
    /* Starts sampling; sampled[i] = 1 for the metrics the device has (the
     * others are left out and named in `why`). */
    enum asys_ppu_metrics_status (*start)(unsigned physical, const struct ppu_metric *const *m,
                                          size_t n, uint64_t interval_ns, uint8_t *sampled,
                                          void **session, char *why);
    /* Hands over the samples taken since the last call; returns how many
     * times the device's buffer overflowed, or -1 when sampling failed. */
    int (*drain)(void *session, ppu_sample_fn fn, void *ctx);
    void (*stop)(void *session);
};

extern const struct ppu_backend ppu_backend_cupti;
extern const struct ppu_backend ppu_backend_gpm;

/* The CUDA ordinal of physical device `physical` in this process
 * (CUDA_VISIBLE_DEVICES renumbers), or -1 when it is hidden. */
int ppu_cuda_ordinal(unsigned physical);

#endif
