/* Event sampling per thread (see event_threads.h). */
#define _GNU_SOURCE
#include "event_threads.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "grow.h"
#include "hashmap.h"

/* 64 KiB a CPU: a FORK or EXIT record is 40 bytes, the ring is drained as
 * soon as one arrives, so only a burst of 1600 thread starts on one CPU
 * between two wake-ups would lose some (and then PERF_RECORD_LOST says so). */
#define RING_PAGES 16
/* Descriptors left to the launcher's later work (segments, finalize). */
#define FD_RESERVE 128
#define MAX_GROUP 64

struct ring {
    int fd;
    void *map;
    size_t map_size, data_size;
    int hung_up; /* the tree has ended: polling it would return at once, forever */
};

/* A task record of the rings: what happened to which thread, when. */
struct task_event {
    uint64_t time;
    uint32_t type; /* PERF_RECORD_FORK or PERF_RECORD_EXIT */
    uint32_t pid, tid;
};

/* A followed thread: its counters, one per event (the software and
 * tracepoint events in one group, read at once; hardware ones alone, so
 * that a scarce PMU counter never keeps the others from counting). */
struct followed {
    uint32_t pid, tid; /* tid 0: a free slot */
    int *fds; /* `count` descriptors, in the events' order */
};

struct event_threads {
    struct ring *rings;
    size_t ring_count;
    struct event_thread_event *events;
    size_t count;
    int leader; /* index of the group leader among the events; -1: no group */
    size_t grouped;
    struct followed *threads;
    int *fd_slab;
    size_t thread_cap;
    struct asys_u64map by_tid; /* tid -> slot + 1 */
    struct task_event *pending;
    size_t pending_count, pending_cap;
    uint32_t not_followed;
    int last_error;
};

static long open_event(struct perf_event_attr *attr, pid_t pid, int cpu, int group)
{
    return syscall(SYS_perf_event_open, attr, pid, cpu, group, PERF_FLAG_FD_CLOEXEC);
}

static int groupable(const struct perf_event_attr *a)
{
    return a->type == PERF_TYPE_SOFTWARE || a->type == PERF_TYPE_TRACEPOINT;
}

/* ---- the rings of task records -------------------------------------------------- */

static int open_rings(struct event_threads *t, pid_t target, struct asys_err *err)
{
    long cpus = sysconf(_SC_NPROCESSORS_CONF);
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_DUMMY;
    attr.inherit = 1; /* the tree's threads and children report theirs too */
    attr.task = 1; /* FORK and EXIT records */
    attr.use_clockid = 1;
    attr.clockid = CLOCK_MONOTONIC;
    attr.exclude_kernel = 1;
    attr.watermark = 1; /* wake the reader at every record: counters open early */
    attr.wakeup_watermark = 1;
    if (cpus < 1)
        cpus = 1;
    if (!(t->rings = calloc((size_t)cpus, sizeof *t->rings)))
        return asys_fail_kind(err, ASYS_ERR_NOMEM, "out of memory");
    for (long cpu = 0; cpu < cpus; cpu++) {
        long fd = open_event(&attr, target, (int)cpu, -1);
        if (fd < 0) {
            if (cpu == 0)
                return asys_fail_errno(err, errno, "cannot follow the threads of the program");
            continue; /* an offline CPU */
        }
        struct ring *r = &t->rings[t->ring_count++];
        r->fd = (int)fd;
        r->data_size = RING_PAGES * page;
        r->map_size = r->data_size + page;
        r->map = mmap(NULL, r->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
        if (r->map == MAP_FAILED) {
            r->map = NULL;
            return asys_fail_errno(err, errno, "cannot map the thread ring of CPU %ld", cpu);
        }
    }
    return 0;
}

static int pending_push(struct event_threads *t, uint32_t type, const uint8_t *body)
{
    uint32_t ids[4]; /* pid, ppid, tid, ptid */
    uint64_t time;
    memcpy(ids, body, sizeof ids);
    memcpy(&time, body + sizeof ids, sizeof time);
    if (asys_grow(&t->pending, &t->pending_cap, t->pending_count, sizeof *t->pending, 64) != 0)
        return -1;
    t->pending[t->pending_count++] = (struct task_event){time, type, ids[0], ids[2]};
    return 0;
}

/* Moves the ring's FORK and EXIT records to t->pending. */
static void drain_ring(struct event_threads *t, struct ring *r)
{
    struct perf_event_mmap_page *meta = r->map;
    uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = meta->data_tail;
    const uint8_t *data = (const uint8_t *)r->map + (r->map_size - r->data_size);
    while (head - tail >= sizeof(struct perf_event_header)) {
        uint8_t record[64];
        struct perf_event_header h;
        for (size_t i = 0; i < sizeof h; i++)
            ((uint8_t *)&h)[i] = data[(tail + i) % r->data_size];
        if (h.size < sizeof h || h.size > head - tail) {
            tail = head; /* cannot happen (the kernel writes whole records): start afresh */
            break;
        }
        if ((h.type == PERF_RECORD_FORK || h.type == PERF_RECORD_EXIT) && h.size >= sizeof h + 24 &&
            h.size <= sizeof record) {
            for (size_t i = 0; i < h.size; i++)
                record[i] = data[(tail + i) % r->data_size];
            if (pending_push(t, h.type, record + sizeof h) != 0)
                t->not_followed++; /* out of memory: that thread is not followed */
        } else if (h.type == PERF_RECORD_LOST && h.size >= sizeof h + 16) {
            uint64_t lost = 0; /* after the id: FORKs among them are threads not followed */
            for (size_t i = 0; i < sizeof lost; i++)
                ((uint8_t *)&lost)[i] = data[(tail + sizeof h + 8 + i) % r->data_size];
            t->not_followed =
                lost < UINT32_MAX - t->not_followed ? t->not_followed + (uint32_t)lost : UINT32_MAX;
        }
        tail += h.size;
    }
    __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

/* ---- the followed threads ------------------------------------------------------- */

static void close_fds(int *fds, size_t count)
{
    for (size_t i = count; i-- > 0;)
        if (fds[i] >= 0) {
            close(fds[i]);
            fds[i] = -1;
        }
}

/* Opens the counters of one thread into `fds`; 0 or the errno. */
static int open_thread_counters(struct event_threads *t, uint32_t tid, int *fds)
{
    for (size_t i = 0; i < t->count; i++)
        fds[i] = -1;
    if (t->leader >= 0) { /* the leader first: the members join it */
        struct perf_event_attr a = t->events[t->leader].attr;
        a.inherit = 0;
        a.read_format |= PERF_FORMAT_GROUP;
        long fd = open_event(&a, (pid_t)tid, -1, -1);
        if (fd < 0)
            return errno;
        fds[t->leader] = (int)fd;
    }
    for (size_t i = 0; i < t->count; i++) {
        if ((int)i == t->leader)
            continue;
        struct perf_event_attr a = t->events[i].attr;
        int in_group = t->leader >= 0 && groupable(&a);
        a.inherit = 0;
        long fd = open_event(&a, (pid_t)tid, -1, in_group ? fds[t->leader] : -1);
        if (fd < 0) {
            int error = errno;
            close_fds(fds, t->count);
            return error;
        }
        fds[i] = (int)fd;
    }
    return 0;
}

static void write_reading(struct asys_segment_writer *seg, const struct followed *f, uint16_t id,
                          uint64_t value, uint64_t enabled, uint64_t running)
{
    uint32_t delta;
    struct asys_rec_event_thread_count *r =
        asys_segment_reserve(seg, sizeof *r, asys_clock_ticks(ASYS_CLOCK_MONOTONIC), &delta);
    if (!r)
        return; /* counted as a drop by the writer */
    r->pid = f->pid;
    r->tid = f->tid;
    r->value = value;
    r->enabled_ns = enabled;
    r->running_ns = running;
    asys_segment_commit(&r->header,
                        ASYS_REC_WORD(ASYS_REC_EVENT_THREAD_COUNT, sizeof *r / 8, id, delta));
}

static void read_thread(struct event_threads *t, struct asys_segment_writer *seg,
                        const struct followed *f)
{
    if (t->leader >= 0) {
        uint64_t group[3 + MAX_GROUP]; /* nr, enabled, running, the values in opening order */
        ssize_t n = read(f->fds[t->leader], group, sizeof group);
        if (n >= (ssize_t)(3 * sizeof(uint64_t)) && group[0] == t->grouped &&
            (size_t)n >= (3 + t->grouped) * sizeof(uint64_t)) {
            size_t k = 0;
            write_reading(seg, f, t->events[t->leader].id, group[3 + k++], group[1], group[2]);
            for (size_t i = 0; i < t->count; i++)
                if ((int)i != t->leader && groupable(&t->events[i].attr))
                    write_reading(seg, f, t->events[i].id, group[3 + k++], group[1], group[2]);
        }
    }
    for (size_t i = 0; i < t->count; i++) {
        uint64_t v[3];
        if ((t->leader >= 0 && groupable(&t->events[i].attr)) ||
            read(f->fds[i], v, sizeof v) != (ssize_t)sizeof v)
            continue;
        write_reading(seg, f, t->events[i].id, v[0], v[1], v[2]);
    }
}

static void not_followed(struct event_threads *t, int error)
{
    t->not_followed++;
    if (error)
        t->last_error = error;
}

static void follow(struct event_threads *t, struct asys_segment_writer *seg, uint32_t pid,
                   uint32_t tid)
{
    if (!tid || asys_u64map_get(&t->by_tid, tid))
        return; /* already followed (found in /proc and then by its FORK) */
    size_t slot = 0;
    while (slot < t->thread_cap && t->threads[slot].tid)
        slot++;
    if (slot == t->thread_cap) {
        not_followed(t, 0);
        return;
    }
    struct followed *f = &t->threads[slot];
    int error = open_thread_counters(t, tid, f->fds);
    if (error) {
        not_followed(t, error); /* ESRCH: it ended before its counters could open */
        return;
    }
    if (asys_u64map_put(&t->by_tid, tid, slot + 1) != 0) {
        close_fds(f->fds, t->count);
        not_followed(t, ENOMEM);
        return;
    }
    f->pid = pid;
    f->tid = tid;
    /* where its series starts: a new counter is 0, no need to read it (an
     * IPI to the CPU the new thread runs on) */
    for (size_t i = 0; i < t->count; i++)
        write_reading(seg, f, t->events[i].id, 0, 0, 0);
}

static void unfollow(struct event_threads *t, struct asys_segment_writer *seg, uint32_t tid)
{
    uint64_t *slot = asys_u64map_get(&t->by_tid, tid);
    if (!slot)
        return;
    struct followed *f = &t->threads[*slot - 1];
    read_thread(t, seg, f); /* its final counts: a dead task's counters still read */
    close_fds(f->fds, t->count);
    f->tid = 0;
    asys_u64map_remove(&t->by_tid, tid);
}

/* The threads already there when the sampler starts (the program waits
 * before exec, so normally one). */
static void follow_existing(struct event_threads *t, struct asys_segment_writer *seg, pid_t target)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)target);
    DIR *d = opendir(path);
    struct dirent *e;
    if (!d) {
        follow(t, seg, (uint32_t)target, (uint32_t)target);
        return;
    }
    while ((e = readdir(d)) != NULL) {
        char *end;
        unsigned long tid = strtoul(e->d_name, &end, 10);
        if (end != e->d_name && !*end && tid <= UINT32_MAX)
            follow(t, seg, (uint32_t)target, (uint32_t)tid);
    }
    closedir(d);
}

static size_t open_fds(void)
{
    size_t n = 0;
    DIR *d = opendir("/proc/self/fd");
    while (d && readdir(d))
        n++;
    if (d)
        closedir(d);
    return n;
}

/* Threads followed at once: the cap, or what the open-file limit leaves. */
static size_t thread_cap(size_t events)
{
    struct rlimit limit;
    size_t cap = ASYS_EVENT_THREADS_MAX;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
        size_t used = open_fds() + FD_RESERVE;
        size_t room = limit.rlim_cur > used ? (size_t)limit.rlim_cur - used : 0;
        if (room / events < cap)
            cap = room / events;
    }
    return cap;
}

static int by_time(const void *a, const void *b)
{
    const struct task_event *x = a, *y = b;
    return x->time < y->time ? -1 : x->time > y->time;
}

/* ---- the interface -------------------------------------------------------------- */

int asys_event_threads_start(pid_t target, const struct event_thread_event *events, size_t count,
                             struct asys_segment_writer *seg, struct event_threads **out,
                             struct asys_err *err)
{
    struct event_threads *t = calloc(1, sizeof *t);
    int rc = -1;
    *out = NULL;
    if (!t)
        return asys_fail_kind(err, ASYS_ERR_NOMEM, "out of memory");
    asys_u64map_init(&t->by_tid);
    t->leader = -1;
    t->count = count < MAX_GROUP ? count : MAX_GROUP;
    count = t->count;
    t->thread_cap = count ? thread_cap(count) : 0;
    if (!(t->events = calloc(count + 1, sizeof *t->events)) ||
        !(t->threads = calloc(t->thread_cap + 1, sizeof *t->threads)) ||
        !(t->fd_slab = calloc(t->thread_cap * count + 1, sizeof *t->fd_slab))) {
        asys_fail_kind(err, ASYS_ERR_NOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < count; i++) {
        t->events[i] = events[i];
        if (groupable(&events[i].attr) && t->grouped < MAX_GROUP) {
            if (t->leader < 0)
                t->leader = (int)i;
            t->grouped++;
        }
    }
    for (size_t i = 0; i < t->thread_cap; i++)
        t->threads[i].fds = t->fd_slab + i * count;
    if (open_rings(t, target, err) != 0)
        goto out;
    follow_existing(t, seg, target);
    *out = t;
    t = NULL;
    rc = 0;
out:
    if (t)
        asys_event_threads_stop(t, NULL);
    return rc;
}

size_t asys_event_threads_poll_fds(const struct event_threads *t, struct pollfd *fds, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; t && i < t->ring_count && n < cap; i++)
        if (!t->rings[i].hung_up)
            fds[n++] = (struct pollfd){.fd = t->rings[i].fd, .events = POLLIN};
    return n;
}

void asys_event_threads_polled(struct event_threads *t, struct asys_segment_writer *seg,
                               struct pollfd *fds, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        if (!(fds[i].revents & (POLLHUP | POLLERR)))
            continue;
        for (size_t r = 0; r < t->ring_count; r++)
            if (t->rings[r].fd == fds[i].fd)
                t->rings[r].hung_up = 1;
        fds[i].fd = -1; /* ppoll skips it from now on */
    }
    asys_event_threads_drain(t, seg);
}

void asys_event_threads_drain(struct event_threads *t, struct asys_segment_writer *seg)
{
    t->pending_count = 0;
    for (size_t i = 0; i < t->ring_count; i++)
        drain_ring(t, &t->rings[i]);
    /* a thread may start on one CPU and end on another: in time order, its
     * FORK comes first */
    if (t->pending_count > 1)
        qsort(t->pending, t->pending_count, sizeof *t->pending, by_time);
    for (size_t i = 0; i < t->pending_count; i++) {
        const struct task_event *e = &t->pending[i];
        if (e->type == PERF_RECORD_FORK)
            follow(t, seg, e->pid, e->tid);
        else
            unfollow(t, seg, e->tid);
    }
}

void asys_event_threads_read(struct event_threads *t, struct asys_segment_writer *seg)
{
    for (size_t i = 0; i < t->thread_cap; i++)
        if (t->threads[i].tid)
            read_thread(t, seg, &t->threads[i]);
}

static void write_summary(struct event_threads *t, struct asys_segment_writer *seg)
{
    uint32_t delta;
    struct asys_rec_event_status *r =
        asys_segment_reserve(seg, sizeof *r, asys_clock_ticks(ASYS_CLOCK_MONOTONIC), &delta);
    if (!r)
        return;
    r->error = t->last_error;
    r->threads_not_followed = t->not_followed;
    asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_EVENT_STATUS, sizeof *r / 8,
                                                  ASYS_EVENT_THREADS_STATUS, delta));
}

void asys_event_threads_stop(struct event_threads *t, struct asys_segment_writer *seg)
{
    if (!t)
        return;
    if (seg) {
        asys_event_threads_drain(t, seg); /* the last EXITs: their final readings */
        asys_event_threads_read(t, seg);
        write_summary(t, seg);
    }
    for (size_t i = 0; i < t->thread_cap; i++)
        if (t->threads[i].tid)
            close_fds(t->threads[i].fds, t->count);
    for (size_t i = 0; i < t->ring_count; i++) {
        if (t->rings[i].map)
            munmap(t->rings[i].map, t->rings[i].map_size);
        close(t->rings[i].fd);
    }
    asys_u64map_free(&t->by_tid);
    free(t->rings);
    free(t->events);
    free(t->threads);
    free(t->fd_slab);
    free(t->pending);
    free(t);
}
