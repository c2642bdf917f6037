/* simppu's devices as the machine sees them: what every process's simulated
 * runtime ran on each device, in a small file all processes map
 * (SIMPPU_STATE, default $TMPDIR/simppu-state-UID).  The runtime appends
 * each kernel and copy with its simulated start and end; the simulated PM
 * sampler (cupti_pm.c), in another process such as a profiler's launcher,
 * reads how busy a device was over a window.  A test fixture. */
#ifndef SIMPPU_DEVICE_STATE_H
#define SIMPPU_DEVICE_STATE_H

#include <stdint.h>

#define SIMPPU_STATE_DEVICES 16

enum simppu_work_kind {
    SIMPPU_WORK_KERNEL = 1,
    SIMPPU_WORK_HTOD,
    SIMPPU_WORK_DTOH,
    SIMPPU_WORK_DTOD,
    SIMPPU_WORK_PEER,
    SIMPPU_WORK_MEMSET,
    SIMPPU_WORK_KIND_COUNT
};

/* Over [t0, t1) on `device`: the ns each kind of work was active (overlap
 * of concurrent work counted once per item) and the bytes it moved, pro rata. */
struct simppu_busy {
    double active_ns[SIMPPU_WORK_KIND_COUNT];
    double bytes[SIMPPU_WORK_KIND_COUNT];
    uint64_t kernels_started;
};

/* Maps the state file now (the runtime's start), not at the first work. */
void simppu_state_prepare(void);
/* Appends one piece of work (CLOCK_MONOTONIC ns).  Silent when the state
 * file cannot be mapped. */
void simppu_state_record(int physical, enum simppu_work_kind kind, uint64_t start, uint64_t end,
                         uint64_t bytes);
/* 0, or -1 when there is no state to read (then *out is all zero). */
int simppu_state_busy(int physical, uint64_t t0, uint64_t t1, struct simppu_busy *out);
/* The counters' owner: 0 when this process now owns `physical`'s counters,
 * -1 when another process holds them (a second profiler). */
int simppu_state_claim_counters(int physical);
void simppu_state_release_counters(int physical);

#endif
