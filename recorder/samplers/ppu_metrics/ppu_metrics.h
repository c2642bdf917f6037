/* PPU metrics sampling (--ppu-metrics-device): a launcher thread drains
 * each chosen device's counters through a backend (ppu_backend.h) into the
 * segment ppumetrics.seg.  Nothing runs in the target. */
#ifndef ASYS_PPU_METRICS_H
#define ASYS_PPU_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "asys_error.h"
#include "ppu_backend.h"
#include "ppu_devices.h"

struct ppu_metrics_plan {
    unsigned devices[PPU_MAX_DEVICES]; /* physical indices */
    size_t device_count;
    const struct ppu_metric *metrics[PPU_MAX_METRICS];
    size_t metric_count;
    uint64_t interval_ns;
};

struct ppu_metrics;

/* Starts sampling what `plan` names; a device that cannot be sampled is
 * recorded with the reason and said once on stderr (the run goes on). */
int asys_ppu_metrics_start(const char *session_dir, const struct ppu_metrics_plan *plan,
                           struct ppu_metrics **out, struct asys_err *err);
void asys_ppu_metrics_stop(struct ppu_metrics *m);

#endif
