/* Event sampling: the launcher's counters (see event_sampler.h).  Each
 * counter counts in the kernel; the thread only reads them periodically,
 * so the program pays nothing but the counting itself.  For the process
 * tree the thread also follows the tree's threads (event_threads.c): it
 * wakes on their starts and ends between two readings. */
#define _GNU_SOURCE
#include "event_sampler.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "event_catalog.h"
#include "event_threads.h"
#include "session.h"
#include "notes.h"

struct counter {
    uint16_t id;
    uint32_t cpu;
    int fd;
};

struct event_sampler {
    struct asys_segment_writer seg;
    pthread_t thread;
    int stop; /* atomic */
    int wake; /* eventfd: written at stop, so the thread need not finish its period */
    uint64_t period_ns;
    struct counter *counters;
    size_t count;
    struct event_thread_event *counted; /* the events counted, for the per-thread counters */
    size_t counted_count;
    struct event_threads *threads; /* process tree: the per-thread counters; else NULL */
};

static long open_event(struct perf_event_attr *attr, pid_t pid, int cpu)
{
    return syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* A tracepoint's id from tracefs (or debugfs); -1 when it is not there. */
static long long tracepoint_id(const char *name)
{
    static const char *const roots[] = {"/sys/kernel/tracing/events",
                                        "/sys/kernel/debug/tracing/events"};
    for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, "%s/%s/id", roots[i], name);
        FILE *f = fopen(path, "re");
        long long id = -1;
        if (!f)
            continue;
        if (fscanf(f, "%lld", &id) != 1)
            id = -1;
        fclose(f);
        if (id >= 0)
            return id;
    }
    return -1;
}

static int describe(const struct asys_event_def *e, struct perf_event_attr *attr)
{
    memset(attr, 0, sizeof *attr);
    attr->size = sizeof *attr;
    attr->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    attr->config = e->config;
    switch (e->source) {
    case ASYS_EVENT_HARDWARE:
        attr->type = PERF_TYPE_HARDWARE;
        return 0;
    case ASYS_EVENT_HW_CACHE:
        attr->type = PERF_TYPE_HW_CACHE;
        return 0;
    case ASYS_EVENT_SOFTWARE:
        attr->type = PERF_TYPE_SOFTWARE;
        return 0;
    case ASYS_EVENT_TRACEPOINT: {
        long long id = tracepoint_id(e->tracepoint);
        if (id < 0)
            return ENOENT;
        attr->type = PERF_TYPE_TRACEPOINT;
        attr->config = (uint64_t)id;
        return 0;
    }
    }
    return EINVAL;
}

static void write_status(struct event_sampler *s, uint16_t id, int error)
{
    uint32_t delta;
    struct asys_rec_event_status *r =
        asys_segment_reserve(&s->seg, sizeof *r, asys_clock_ticks(ASYS_CLOCK_MONOTONIC), &delta);
    if (!r)
        return;
    r->error = error;
    r->threads_not_followed = 0;
    asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_EVENT_STATUS, sizeof *r / 8, id, delta));
}

static void unavailable(struct event_sampler *s, const struct asys_event_def *e, int error)
{
    const char *why = error == EACCES || error == EPERM
                          ? "not allowed (sysctl kernel.perf_event_paranoid=-1, or "
                            "CAP_PERFMON: --cap-add PERFMON in a container)"
                          : strerror(error);
    asys_note(ASYS_NOTE_NOTICE, "%s event %u (%s) is not counted: %s",
              e->group == ASYS_EVENT_CPU_CORE ? "CPU core" : "OS", e->index, e->name, why);
    write_status(s, e->id, error);
}

/* Opens one event on every CPU; 0, or the errno of the first CPU's refusal. */
static int open_on_every_cpu(struct event_sampler *s, const struct asys_event_def *e, pid_t pid,
                             long cpus)
{
    struct perf_event_attr attr;
    int error = describe(e, &attr);
    if (error)
        return error;
    attr.inherit = pid != -1; /* the children the program starts are counted too */
    for (long cpu = 0; cpu < cpus; cpu++) {
        long fd = open_event(&attr, pid, (int)cpu);
        if (fd < 0 && (errno == EACCES || errno == EPERM) && !attr.exclude_kernel) {
            attr.exclude_kernel = 1; /* what an unprivileged user may count */
            attr.exclude_hv = 1;
            fd = open_event(&attr, pid, (int)cpu);
        }
        if (fd < 0) {
            if (cpu == 0)
                return errno;
            continue; /* an offline CPU */
        }
        s->counters[s->count++] = (struct counter){e->id, (uint32_t)cpu, (int)fd};
    }
    s->counted[s->counted_count++] = (struct event_thread_event){e->id, attr};
    return 0;
}

static void read_cpus(struct event_sampler *s)
{
    for (size_t i = 0; i < s->count; i++) {
        uint64_t values[3];
        if (read(s->counters[i].fd, values, sizeof values) != (ssize_t)sizeof values)
            continue;
        uint32_t delta;
        struct asys_rec_event_count *r = asys_segment_reserve(
            &s->seg, sizeof *r, asys_clock_ticks(ASYS_CLOCK_MONOTONIC), &delta);
        if (!r)
            continue; /* counted as a drop by the writer */
        r->cpu = s->counters[i].cpu;
        r->reserved = 0;
        r->value = values[0];
        r->enabled_ns = values[1];
        r->running_ns = values[2];
        asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_EVENT_COUNT, sizeof *r / 8,
                                                      s->counters[i].id, delta));
    }
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void read_all(struct event_sampler *s)
{
    read_cpus(s);
    if (s->threads)
        asys_event_threads_read(s->threads, &s->seg);
}

/* Until the next reading is due, or stop: the thread rings' records as they
 * come. */
static void wait_for(struct event_sampler *s, uint64_t deadline)
{
    struct pollfd fds[1025] = {{.fd = s->wake, .events = POLLIN}};
    size_t n = 1 + asys_event_threads_poll_fds(s->threads, fds + 1, sizeof fds / sizeof fds[0] - 1);
    for (uint64_t now = now_ns(); now < deadline; now = now_ns()) {
        uint64_t left = deadline - now;
        struct timespec timeout = {(time_t)(left / 1000000000u), (long)(left % 1000000000u)};
        if (ppoll(fds, n, &timeout, NULL) <= 0)
            continue;
        if (fds[0].revents)
            return; /* stopping: the last reading now, not at the period's end */
        asys_event_threads_polled(s->threads, &s->seg, fds + 1, n - 1);
    }
}

static void *sampler(void *arg)
{
    struct event_sampler *s = arg;
    uint64_t next = now_ns();
    while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
        read_all(s);
        next += s->period_ns;
        uint64_t now = now_ns();
        if (next < now)
            next = now; /* behind (a loaded machine): the next reading at once, not a burst */
        wait_for(s, next);
    }
    read_cpus(s);
    return NULL;
}

static void close_counters(struct event_sampler *s)
{
    for (size_t i = 0; i < s->count; i++)
        close(s->counters[i].fd);
    s->count = 0;
}

/* The per-thread counters of the process tree; without them (the dummy
 * events refused) the readings stay per CPU, with one line saying so. */
static void start_threads(struct event_sampler *s, pid_t target)
{
    struct asys_err err = {0};
    if (asys_event_threads_start(target, s->counted, s->counted_count, &s->seg, &s->threads,
                                 &err) != 0) {
        asys_note(ASYS_NOTE_NOTICE, "event sampling stays per CPU: %s", err.text);
        write_status(s, ASYS_EVENT_THREADS_STATUS, err.sys_errno ? err.sys_errno : EINVAL);
    }
}

int asys_event_sampler_start(const char *session_dir, pid_t target, int system_wide, int per_thread,
                             const uint16_t *ids, size_t count, uint64_t frequency_hz,
                             struct event_sampler **out, struct asys_err *err)
{
    long cpus = sysconf(_SC_NPROCESSORS_CONF);
    struct event_sampler *s = calloc(1, sizeof *s);
    int rc = -1, segment_open = 0, last_error = 0;
    *out = NULL;
    if (cpus < 1)
        cpus = 1;
    if (s)
        s->wake = -1;
    if (!s || !(s->counters = calloc(count * (size_t)cpus + 1, sizeof *s->counters)) ||
        !(s->counted = calloc(count + 1, sizeof *s->counted))) {
        asys_fail_kind(err, ASYS_ERR_NOMEM, "out of memory");
        goto out;
    }
    s->period_ns = 1000000000u / (frequency_hz ? frequency_hz : 1);
    if ((s->wake = eventfd(0, EFD_CLOEXEC)) < 0) {
        asys_fail_errno(err, errno, "event sampling: cannot create an eventfd");
        goto out;
    }
    if (asys_session_sampler_segment(&s->seg, session_dir, "events", ASYS_LAUNCHER_EVENTS,
                                     ASYS_FEATURE_EVENTS, err) != 0)
        goto out;
    segment_open = 1;
    for (size_t i = 0; i < count; i++) {
        const struct asys_event_def *e = asys_event_by_id(ids[i]);
        int error = e ? open_on_every_cpu(s, e, system_wide ? -1 : target, cpus) : EINVAL;
        if (e && error)
            unavailable(s, e, last_error = error);
    }
    if (!s->count) {
        asys_fail_errno(err, last_error ? last_error : ENOENT,
                        "event sampling: no event could be counted");
        goto out;
    }
    if (per_thread && !system_wide)
        start_threads(s, target);
    if ((errno = pthread_create(&s->thread, NULL, sampler, s)) != 0) {
        asys_fail_errno(err, errno, "cannot start the event sampler");
        goto out;
    }
    *out = s;
    s = NULL;
    rc = 0;
out:
    if (s) {
        asys_event_threads_stop(s->threads, NULL);
        close_counters(s);
        if (s->wake >= 0)
            close(s->wake);
        if (segment_open)
            asys_segment_close(&s->seg);
        free(s->counters);
        free(s->counted);
        free(s);
    }
    return rc;
}

void asys_event_sampler_stop(struct event_sampler *s)
{
    if (!s)
        return;
    __atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
    uint64_t one = 1;
    if (write(s->wake, &one, sizeof one) != (ssize_t)sizeof one) {
        /* then it stops at the end of its period */
    }
    pthread_join(s->thread, NULL);
    asys_event_threads_stop(s->threads, &s->seg);
    close_counters(s);
    close(s->wake);
    asys_segment_close(&s->seg);
    free(s->counters);
    free(s->counted);
    free(s);
}
