/* Timestamps for the recording hot path: raw invariant CPU counter where the
 * CPU has one, CLOCK_MONOTONIC otherwise.  The importer converts ticks to
 * CLOCK_MONOTONIC ns with the launcher's calibration pairs. */
#ifndef ASYS_CLOCK_H
#define ASYS_CLOCK_H

#include <stdint.h>
#include <time.h>

#include "asys_format.h"

static inline uint64_t asys_monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t asys_realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t asys_cpu_counter(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_ia32_rdtsc();
#elif defined(__aarch64__)
    uint64_t v;
    __asm__ volatile("mrs %0, cntvct_el0" : "=r"(v));
    return v;
#else
    return asys_monotonic_ns();
#endif
}

/* Ticks on the given clock (enum asys_clock_kind). */
static inline uint64_t asys_clock_ticks(int kind)
{
    if (kind == ASYS_CLOCK_MONOTONIC)
        return asys_monotonic_ns();
    return asys_cpu_counter();
}

/* The best clock this machine offers: the CPU counter when it is invariant,
 * else CLOCK_MONOTONIC.  ASYS_CLOCK=monotonic|tsc|cntvct overrides. */
int asys_clock_detect(void);

/* Parses a clock name ("monotonic", "tsc", "cntvct"); 0 when unknown. */
int asys_clock_from_name(const char *name);
const char *asys_clock_name(int kind);

/* One (ticks, CLOCK_MONOTONIC, CLOCK_REALTIME) sample: the tightest of a few
 * bracketed reads, ticks taken at the midpoint. */
struct asys_clock_pair {
    uint64_t ticks;
    uint64_t monotonic_ns;
    uint64_t realtime_ns;
};
void asys_clock_pair_take(int kind, struct asys_clock_pair *out);

/* The kernel's view of how well CLOCK_REALTIME is disciplined (adjtimex,
 * read only): what bounds the error of putting several hosts' recordings on
 * one time axis. */
struct asys_clock_sync {
    int synchronized; /* NTP/PTP daemon keeps the clock (no STA_UNSYNC) */
    uint64_t maxerror_ns; /* the kernel's maximum error */
    uint64_t esterror_ns; /* its estimated error */
    int status; /* adjtimex status bits */
    int state; /* adjtimex return: TIME_OK, TIME_ERROR, ... */
};
/* 0, or -1 when adjtimex is not available. */
int asys_clock_sync_read(struct asys_clock_sync *out);

/* A test's CLOCK_REALTIME shift (ASYS_TEST_REALTIME_SHIFT_NS): lets the
 * tests fake a host whose clock is off by a known amount; 0 when unset. */
#define ASYS_TEST_REALTIME_SHIFT_ENV "ASYS_TEST_REALTIME_SHIFT_NS"
int64_t asys_clock_test_realtime_shift(void);

/* `clock` minus CLOCK_MONOTONIC in ns, read between two monotonic reads (the
 * tightest of a few): CLOCK_BOOTTIME's for Perfetto, whose traces are on it. */
int64_t asys_clock_offset_ns(clockid_t clock);

#endif
