#include "clock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timex.h>
#include <unistd.h>

int asys_clock_from_name(const char *name)
{
    if (!name)
        return 0;
    if (!strcmp(name, "monotonic") || !strcmp(name, "mono"))
        return ASYS_CLOCK_MONOTONIC;
    if (!strcmp(name, "tsc"))
        return ASYS_CLOCK_TSC;
    if (!strcmp(name, "cntvct"))
        return ASYS_CLOCK_CNTVCT;
    return 0;
}

const char *asys_clock_name(int kind)
{
    switch (kind) {
    case ASYS_CLOCK_TSC:
        return "tsc";
    case ASYS_CLOCK_CNTVCT:
        return "cntvct";
    case ASYS_CLOCK_MONOTONIC:
        return "monotonic";
    default:
        return "unknown";
    }
}

#if defined(__x86_64__)
/* Looks for " flag" followed by a separator in the flags line of /proc/cpuinfo. */
static int cpuinfo_has_flag(const char *flags, const char *flag)
{
    size_t len = strlen(flag);
    for (const char *p = strstr(flags, flag); p; p = strstr(p + 1, flag)) {
        int starts = p == flags || p[-1] == ' ' || p[-1] == '\t';
        int ends = p[len] == ' ' || p[len] == '\n' || p[len] == '\0';
        if (starts && ends)
            return 1;
    }
    return 0;
}

static int tsc_is_invariant(void)
{
    char buf[16384];
    int fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    const char *flags = strstr(buf, "\nflags");
    if (!flags)
        return 0;
    char *eol = strchr(flags + 1, '\n');
    if (eol)
        *eol = '\0';
    return cpuinfo_has_flag(flags, "constant_tsc") && cpuinfo_has_flag(flags, "nonstop_tsc");
}
#endif

int asys_clock_detect(void)
{
    int forced = asys_clock_from_name(getenv("ASYS_CLOCK"));
    if (forced)
        return forced;
#if defined(__x86_64__)
    return tsc_is_invariant() ? ASYS_CLOCK_TSC : ASYS_CLOCK_MONOTONIC;
#elif defined(__aarch64__)
    return ASYS_CLOCK_CNTVCT; /* the architected virtual counter is invariant */
#else
    return ASYS_CLOCK_MONOTONIC;
#endif
}

void asys_clock_pair_take(int kind, struct asys_clock_pair *out)
{
    uint64_t best_window = UINT64_MAX;
    for (int attempt = 0; attempt < 7; attempt++) {
        uint64_t before = asys_clock_ticks(kind);
        uint64_t mono = asys_monotonic_ns();
        uint64_t after = asys_clock_ticks(kind);
        uint64_t real = asys_realtime_ns();
        if (after < before)
            continue;
        if (after - before < best_window) {
            best_window = after - before;
            out->ticks = before + (after - before) / 2;
            out->monotonic_ns = mono;
            out->realtime_ns = real;
        }
    }
    if (best_window == UINT64_MAX) { /* counter went backwards every time: take one read */
        out->ticks = asys_clock_ticks(kind);
        out->monotonic_ns = asys_monotonic_ns();
        out->realtime_ns = asys_realtime_ns();
    }
}

int64_t asys_clock_offset_ns(clockid_t clock)
{
    int64_t best = 0;
    uint64_t narrowest = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        struct timespec ts;
        uint64_t before = asys_monotonic_ns();
        clock_gettime(clock, &ts);
        uint64_t after = asys_monotonic_ns();
        uint64_t other = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
        if (after - before < narrowest) {
            narrowest = after - before;
            best = (int64_t)(other - (before + (after - before) / 2));
        }
    }
    /* within the reads' uncertainty the clocks are one (BOOTTIME never
     * suspended is MONOTONIC exactly): not a few hundred ns either way */
    return best > (int64_t)narrowest || best < -(int64_t)narrowest ? best : 0;
}

int asys_clock_sync_read(struct asys_clock_sync *out)
{
    struct timex tx;
    memset(&tx, 0, sizeof tx); /* modes 0: read only, no privilege needed */
    memset(out, 0, sizeof *out);
    int state = adjtimex(&tx);
    if (state < 0)
        return -1;
    out->state = state;
    out->status = tx.status;
    out->synchronized = !(tx.status & STA_UNSYNC) && state != TIME_ERROR;
    /* both in microseconds; never negative from a sane kernel */
    out->maxerror_ns = tx.maxerror > 0 ? (uint64_t)tx.maxerror * 1000u : 0;
    out->esterror_ns = tx.esterror > 0 ? (uint64_t)tx.esterror * 1000u : 0;
    return 0;
}

int64_t asys_clock_test_realtime_shift(void)
{
    const char *v = getenv(ASYS_TEST_REALTIME_SHIFT_ENV);
    if (!v || !*v)
        return 0;
    char *end;
    errno = 0;
    long long shift = strtoll(v, &end, 10);
    return errno || *end ? 0 : (int64_t)shift;
}
