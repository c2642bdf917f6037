/* Compressing the arena's sealed slots while recording (arena_compressor.h).
 *
 * The thread runs at the launcher's priority but compresses only in a
 * period after one that left a CPU to spare (idle in /proc/stat, or, while
 * it compresses, its own runqueue wait in schedstat staying near zero): it
 * gives way as soon as the program wants the CPU, and stops at once when
 * told.  A thread
 * lowered to SCHED_IDLE or nice 19 would have done the first without
 * counting, but on a busy machine it may not run for a long while, even
 * to stop or to die at the launcher's exit, and it cannot raise its own
 * priority back (measured: 25-180 ms more per `asys profile /bin/true`
 * with both cores busy). */
#define _GNU_SOURCE
#include "arena_compressor.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "arena_read.h"
#include "asys_format.h"
#include "grow.h"
#include "hashmap.h"

/* How often the arena is looked at (its control block and the headers of
 * new slots) and the idle time measured: /proc/stat counts in 10 ms jiffies. */
#define POLL_NS (50u * 1000u * 1000u)
/* Compress while running only when at least this much of a CPU was idle,
 * or (after a period it compressed in) the thread ran this long without
 * waiting for its CPU. */
#define IDLE_ENOUGH 0.5
#define MIN_BURST_NS (1000u * 1000u)
/* A claimed slot whose header never comes (a failed claim) is given up after
 * this many looks. */
#define UNWRITTEN_LOOKS 250u
#define FRAME_LEVEL 1 /* as the report's (common/archive.c) */

struct candidate { /* a slot not yet sealed */
    uint64_t offset;
    uint32_t sequence;
    uint32_t writer; /* index into later[] */
};

struct later {                /* a writer's two latest slots seen so far */
    uint32_t highest, second; /* sequences */
    uint32_t slots;           /* slots seen in all */
};

struct unwritten { /* a claimed slot whose header was not there yet */
    uint64_t slot;
    uint32_t looks;
};

/* Whether the last period left CPU time no one else wanted. */
struct idle_meter {
    int stat_fd;              /* /proc/stat: idle CPUs; -1: unknown */
    int sched_fd;             /* the thread's schedstat: its run and runqueue wait times */
    uint64_t idle, total;     /* /proc/stat jiffies at the last reading */
    uint64_t run_ns, wait_ns; /* schedstat's at the last reading */
    long cpus;
};

struct asys_arena_compressor {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int stop;       /* under lock: stop now */
    int exited;     /* under lock: the program has exited, compress what is sealed */
    int finish_all; /* stopping waits until every sealed slot is compressed */
    int failed;     /* memory or disk ran out: nothing more is compressed */
    int arena_fd, frames_fd, index_fd;
    uint64_t slot_size, payload_size;
    uint64_t next_slot;         /* the first slot never looked at */
    uint64_t frames_size;       /* bytes in the frame file */
    struct asys_strmap writers; /* struct asys_arena_writer_key -> index into later[] + 1 */
    struct later *later;
    size_t writer_count, writer_cap;
    struct candidate *candidates;
    size_t candidate_count, candidate_cap;
    struct unwritten *unwritten;
    size_t unwritten_count, unwritten_cap;
    struct idle_meter meter;
    ZSTD_CCtx *zstd;
    uint8_t *in, *out;
    size_t out_size;
};

static int stop_asked(struct asys_arena_compressor *c)
{
    pthread_mutex_lock(&c->lock);
    int stop = c->stop;
    pthread_mutex_unlock(&c->lock);
    return stop;
}

static int write_all(int fd, const void *data, size_t size)
{
    const uint8_t *p = data;
    while (size) {
        ssize_t n = write(fd, p, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        size -= (size_t)n;
    }
    return 0;
}

static int writer_of(struct asys_arena_compressor *w, const struct asys_slot_header *h,
                     uint32_t *index)
{
    struct asys_arena_writer_key k = asys_arena_writer_key(h);
    uint32_t at = asys_strmap_get(&w->writers, (const char *)&k, sizeof k);
    if (!at) {
        if (w->writer_count >= UINT32_MAX - 1 ||
            asys_grow(&w->later, &w->writer_cap, w->writer_count, sizeof *w->later, 64) ||
            asys_strmap_put(&w->writers, (const char *)&k, sizeof k,
                            (uint32_t)w->writer_count + 1) != 0)
            return -1;
        memset(&w->later[w->writer_count], 0, sizeof *w->later);
        at = (uint32_t)++w->writer_count;
    }
    *index = at - 1;
    return 0;
}

static int read_slot_header(struct asys_arena_compressor *w, uint64_t offset,
                            struct asys_slot_header *h)
{
    return pread(w->arena_fd, h, sizeof *h, (off_t)offset) == (ssize_t)sizeof *h &&
           memcmp(h->magic, ASYS_SLOT_MAGIC, sizeof h->magic) == 0;
}

/* Slot `slot`'s header: 1 when read, 0 when not written yet, -1 on failure. */
static int look_at(struct asys_arena_compressor *w, uint64_t slot)
{
    struct asys_slot_header h;
    uint64_t offset = slot * w->slot_size;
    uint32_t writer;
    if (!read_slot_header(w, offset, &h))
        return 0;
    if (writer_of(w, &h, &writer) != 0)
        return -1;
    struct later *l = &w->later[writer];
    if (!l->slots++ || h.sequence > l->highest) {
        l->second = l->highest;
        l->highest = h.sequence;
    } else if (h.sequence > l->second) {
        l->second = h.sequence;
    }
    if (h.sequence == 0)
        return 1; /* a segment header's slot: compressed at finalize */
    if (asys_grow(&w->candidates, &w->candidate_cap, w->candidate_count, sizeof *w->candidates, 64))
        return -1;
    w->candidates[w->candidate_count++] = (struct candidate){offset, h.sequence, writer};
    return 1;
}

/* The slots claimed since the last look, and those whose headers were late. */
static int look_for_slots(struct asys_arena_compressor *w)
{
    struct asys_arena_control control;
    if (pread(w->arena_fd, &control, sizeof control, 0) != (ssize_t)sizeof control)
        return 0;
    for (size_t i = 0; i < w->unwritten_count;) {
        int seen = look_at(w, w->unwritten[i].slot);
        if (seen < 0)
            return -1;
        if (seen || ++w->unwritten[i].looks >= UNWRITTEN_LOOKS)
            w->unwritten[i] = w->unwritten[--w->unwritten_count];
        else
            i++;
    }
    for (; w->next_slot < control.next_slot; w->next_slot++) {
        int seen = look_at(w, w->next_slot);
        if (seen < 0)
            return -1;
        if (seen)
            continue;
        if (asys_grow(&w->unwritten, &w->unwritten_cap, w->unwritten_count, sizeof *w->unwritten,
                      16))
            return -1;
        w->unwritten[w->unwritten_count++] = (struct unwritten){w->next_slot, 0};
    }
    return 0;
}

/* One sealed slot into a frame and its index entry; -1 when the disk
 * refuses (nothing more is compressed then). */
static int compress_slot(struct asys_arena_compressor *w, const struct candidate *s)
{
    /* its header once more, long written now: a look that raced its write
     * may have seen a part of it (and named another writer) */
    struct asys_slot_header h;
    uint32_t writer;
    if (!read_slot_header(w, s->offset, &h) || writer_of(w, &h, &writer) != 0 ||
        writer != s->writer || h.sequence != s->sequence)
        return 0;
    ssize_t n =
        pread(w->arena_fd, w->in, w->payload_size, (off_t)(s->offset + ASYS_SLOT_HEADER_SIZE));
    if (n != (ssize_t)w->payload_size)
        return 0; /* left to finalize */
    size_t size = ZSTD_compress2(w->zstd, w->out, w->out_size, w->in, w->payload_size);
    if (ZSTD_isError(size))
        return 0;
    struct asys_arena_frame entry = {s->offset, w->frames_size, size, s->sequence, 0};
    if (write_all(w->frames_fd, w->out, size) != 0)
        return -1;
    w->frames_size += size;
    return write_all(w->index_fd, &entry, sizeof entry);
}

/* Whether a slot's writer has claimed two slots after it. */
static int sealed(const struct asys_arena_compressor *w, const struct candidate *s)
{
    const struct later *l = &w->later[s->writer];
    return l->slots >= 3 && l->second > s->sequence;
}

static uint64_t now_ns(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Looks for new slots and compresses sealed ones until `deadline_ns`
 * (CLOCK_MONOTONIC; 0: all of them); -1 on failure. */
static int compress_sealed(struct asys_arena_compressor *c, uint64_t deadline_ns)
{
    if (look_for_slots(c) != 0)
        return -1;
    for (size_t i = 0; i < c->candidate_count && !stop_asked(c);) {
        struct candidate s = c->candidates[i];
        if (!sealed(c, &s)) {
            i++;
            continue;
        }
        if (deadline_ns && now_ns(CLOCK_MONOTONIC) >= deadline_ns)
            break;
        c->candidates[i] = c->candidates[--c->candidate_count];
        if (compress_slot(c, &s) != 0)
            return -1;
    }
    return 0;
}

/* Reads the first numbers of a /proc line (pread: the file stays open). */
static int read_numbers(int fd, const char *format, unsigned long long *v, int count)
{
    char text[256];
    ssize_t n = fd < 0 ? -1 : pread(fd, text, sizeof text - 1, 0);
    if (n <= 0)
        return -1;
    text[n] = '\0';
    return sscanf(text, format, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) == count
               ? 0
               : -1;
}

/* Whether the last period left a CPU to spare: after a period this thread
 * compressed in, whether it ran without waiting for a CPU (nothing else
 * wanted its core); otherwise whether half a CPU or more was idle. */
static int spare_cpu(struct idle_meter *m)
{
    unsigned long long v[8] = {0}, t[8] = {0};
    if (read_numbers(m->stat_fd, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", v, 8) != 0 ||
        read_numbers(m->sched_fd, "%llu %llu", t, 2) != 0)
        return 0;
    uint64_t idle = v[3] + v[4], total = 0;
    for (int i = 0; i < 8; i++)
        total += v[i];
    uint64_t ran = t[0] - m->run_ns, waited = t[1] - m->wait_ns;
    int spare;
    if (!m->total || total <= m->total)
        spare = 0;
    else if (ran >= MIN_BURST_NS)
        spare = waited * 8 < ran;
    else
        spare =
            (double)(idle - m->idle) / (double)(total - m->total) * (double)m->cpus >= IDLE_ENOUGH;
    m->idle = idle;
    m->total = total;
    m->run_ns = t[0];
    m->wait_ns = t[1];
    return spare;
}

/* Waits one period (or until told otherwise); the flags then. */
static void wait_period(struct asys_arena_compressor *c, struct timespec *next, int *stop,
                        int *exited)
{
    uint64_t ns = (uint64_t)next->tv_nsec + POLL_NS;
    next->tv_sec += (time_t)(ns / 1000000000u);
    next->tv_nsec = (long)(ns % 1000000000u);
    pthread_mutex_lock(&c->lock);
    while (!c->stop && !c->exited && pthread_cond_timedwait(&c->wake, &c->lock, next) != ETIMEDOUT)
        ;
    *stop = c->stop;
    *exited = c->exited;
    pthread_mutex_unlock(&c->lock);
}

static void *compressor(void *arg)
{
    struct asys_arena_compressor *c = arg;
    struct timespec next;
    int stop = 0, exited = 0;
    clock_gettime(CLOCK_MONOTONIC, &next);
    c->meter.sched_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    spare_cpu(&c->meter);
    while (!c->failed && !stop && !exited) {
        wait_period(c, &next, &stop, &exited);
        if (!stop && !exited && spare_cpu(&c->meter))
            c->failed = compress_sealed(c, now_ns(CLOCK_MONOTONIC) + POLL_NS) != 0;
    }
    /* the program has exited: what is sealed, at once, while finalize reads */
    uint64_t before = ~0ull;
    while (exited && !c->failed && !stop_asked(c) && before != c->frames_size) {
        before = c->frames_size;
        c->failed = compress_sealed(c, 0) != 0;
    }
    return NULL;
}

static void compressor_free(struct asys_arena_compressor *c)
{
    if (c->arena_fd >= 0)
        close(c->arena_fd);
    if (c->frames_fd >= 0)
        close(c->frames_fd);
    if (c->index_fd >= 0)
        close(c->index_fd);
    if (c->meter.stat_fd >= 0)
        close(c->meter.stat_fd);
    if (c->meter.sched_fd >= 0)
        close(c->meter.sched_fd);
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->wake);
    asys_strmap_free(&c->writers);
    free(c->later);
    free(c->candidates);
    free(c->unwritten);
    ZSTD_freeCCtx(c->zstd);
    free(c->in);
    free(c->out);
    free(c);
}

static int open_output(const char *session_dir, const char *name)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%s", session_dir, name) >= (int)sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
}

static int compressor_setup(struct asys_arena_compressor *c, const char *session_dir,
                            struct asys_err *err)
{
    char path[PATH_MAX];
    struct asys_arena_control control;
    snprintf(path, sizeof path, "%s/segments/%s", session_dir, ASYS_ARENA_NAME);
    c->arena_fd = open(path, O_RDONLY | O_CLOEXEC);
    if (c->arena_fd < 0 ||
        pread(c->arena_fd, &control, sizeof control, 0) != (ssize_t)sizeof control ||
        memcmp(control.magic, ASYS_ARENA_MAGIC, sizeof control.magic) != 0 ||
        control.slot_size <= ASYS_SLOT_HEADER_SIZE || control.slot_size > (1ull << 30))
        return asys_fail(err, "'%s' is not an asys arena", path);
    c->slot_size = control.slot_size;
    c->payload_size = control.slot_size - ASYS_SLOT_HEADER_SIZE;
    c->out_size = ZSTD_compressBound(c->payload_size);
    c->in = malloc(c->payload_size);
    c->out = malloc(c->out_size);
    c->zstd = ZSTD_createCCtx();
    if (!c->in || !c->out || !c->zstd ||
        ZSTD_isError(ZSTD_CCtx_setParameter(c->zstd, ZSTD_c_compressionLevel, FRAME_LEVEL)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(c->zstd, ZSTD_c_checksumFlag, 1)))
        return asys_fail(err, "out of memory");
    c->frames_fd = open_output(session_dir, ASYS_ARENA_FRAMES_NAME);
    c->index_fd = c->frames_fd < 0 ? -1 : open_output(session_dir, ASYS_ARENA_FRAME_INDEX_NAME);
    if (c->index_fd < 0)
        return asys_fail_errno(err, errno, "cannot create '%s/%s'", session_dir,
                               ASYS_ARENA_FRAMES_NAME);
    c->meter.stat_fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
    c->meter.cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (c->meter.cpus < 1)
        c->meter.cpus = 1;
    return 0;
}

int asys_arena_compressor_start(const char *session_dir, int finish_all,
                                struct asys_arena_compressor **out, struct asys_err *err)
{
    char path[PATH_MAX];
    *out = NULL;
    snprintf(path, sizeof path, "%s/segments/%s", session_dir, ASYS_ARENA_NAME);
    if (access(path, F_OK) != 0)
        return 0; /* no arena, nothing to compress */
    struct asys_arena_compressor *c = calloc(1, sizeof *c);
    if (!c)
        return asys_fail(err, "out of memory");
    c->arena_fd = c->frames_fd = c->index_fd = c->meter.stat_fd = c->meter.sched_fd = -1;
    c->finish_all = finish_all;
    c->next_slot = 1;
    pthread_mutex_init(&c->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&c->wake, &attr);
    pthread_condattr_destroy(&attr);
    asys_strmap_init(&c->writers);
    int rc = compressor_setup(c, session_dir, err);
    if (rc == 0 && (errno = pthread_create(&c->thread, NULL, compressor, c)) != 0)
        rc = asys_fail_errno(err, errno, "cannot start the arena compressor");
    if (rc != 0) {
        compressor_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

static void tell(struct asys_arena_compressor *c, int *flag)
{
    pthread_mutex_lock(&c->lock);
    *flag = 1;
    pthread_cond_signal(&c->wake);
    pthread_mutex_unlock(&c->lock);
}

void asys_arena_compressor_finish(struct asys_arena_compressor *c)
{
    if (c)
        tell(c, &c->exited);
}

void asys_arena_compressor_stop(struct asys_arena_compressor *c)
{
    if (!c)
        return;
    if (!c->finish_all)
        tell(c, &c->stop);
    else
        tell(c, &c->exited); /* stopping waits for what is sealed */
    pthread_join(c->thread, NULL);
    compressor_free(c);
}
