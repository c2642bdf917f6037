/* Compressing the arena's sealed slots while recording (arena_compressor.h).
 *
 * The thread runs at the launcher's priority but compresses only in a
 * period after one that left a CPU to spare (idle on the CPUs it may run
 * on, in /proc/stat; or, after a period it compressed in, its own runqueue
 * wait in schedstat staying near zero): it gives way as soon as the program
 * wants the CPU, backs off further each time it had to wait, and stops at
 * once when told.  A thread lowered to SCHED_IDLE or nice 19 would have
 * done the first without counting, but on a busy machine it may not run for
 * a long while, even to stop or to die at the launcher's exit, and it
 * cannot raise its own priority back (measured: 25-180 ms more per `asys
 * profile /bin/true` with both cores busy).  It also leaves the disk to the
 * writers: nothing is compressed while free space runs short. */
#define _GNU_SOURCE
#include "arena_compressor.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "arena_read.h"
#include "asys_format.h"
#include "clock.h"
#include "grow.h"
#include "hashmap.h"
#include "session.h"
#include "write_all.h"

/* How often the arena is looked at: its control block and the headers of
 * new slots (/proc/stat counts in 10 ms jiffies). */
#define POLL_NS (50u * 1000u * 1000u)
/* A claimed slot whose header never comes (a failed claim) is given up after
 * this many looks. */
#define UNWRITTEN_LOOKS 250u
#define FRAME_LEVEL 1 /* as the report's (common/archive.c) */
/* Compress while running only when at least this much of a CPU was idle,
 * or (after a period it compressed in) the thread ran this long without
 * waiting for its CPU; after a wait, it skips 1, 2, 4... periods. */
#define IDLE_ENOUGH 0.5
#define MIN_BURST_NS (1000u * 1000u)
#define MAX_BACKOFF 64u
/* Free space the writers keep: this much, plus the frames written so far,
 * plus a few slots per writer seen. */
#define DISK_MARGIN (256ull << 20)
#define DISK_SLOTS_PER_WRITER 8u
#define STAT_READ_MAX (64u << 10) /* the per-CPU lines of /proc/stat come first */

struct candidate { /* a slot not yet sealed */
    uint64_t offset;
    uint32_t sequence;
    uint32_t writer; /* index into progress[] */
};

struct writer_progress { /* a writer's two latest slots seen so far */
    uint32_t highest, second; /* sequences */
    uint32_t slots; /* slots seen in all */
    int confused; /* a sequence seen twice (a clone that kept its parent's writer): never sealed */
};

struct unwritten { /* a claimed slot whose header was not there yet */
    uint64_t slot;
    uint32_t looks;
};

/* Whether the last period left CPU time no one else wanted. */
struct idle_meter {
    int stat_fd; /* /proc/stat, -1: unknown */
    int sched_fd; /* the thread's schedstat, -1: unknown */
    char *text; /* STAT_READ_MAX + 1 bytes */
    cpu_set_t allowed; /* the CPUs the launcher may run on */
    uint64_t idle, total; /* their /proc/stat jiffies at the last reading */
    uint64_t run_ns, wait_ns; /* schedstat's at the last reading */
    uint32_t backoff, skip; /* periods to skip after a wait, and still to skip */
};

struct asys_arena_compressor {
    pthread_t thread;
    pthread_mutex_t lock; /* for `wake` */
    pthread_cond_t wake;
    int stop; /* atomic: stop now */
    int exited; /* atomic: the program has exited, compress what is sealed */
    unsigned flags; /* enum asys_arena_compress_flags */
    int cannot_release; /* the file system cannot punch holes, or the slots have one page */
    int failed; /* memory or disk ran out: nothing more is compressed */
    uint64_t page_size; /* a released slot keeps its first page: its header */
    int arena_fd, frames_fd, index_fd;
    uint64_t slot_size, payload_size;
    uint64_t next_slot; /* the first slot never looked at */
    uint64_t frames_size; /* bytes in the frame file */
    struct asys_strmap writers; /* struct asys_arena_writer_key -> index into progress[] + 1 */
    struct writer_progress *progress;
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

static int told(const int *flag)
{
    return __atomic_load_n(flag, __ATOMIC_ACQUIRE);
}

static int writer_of(struct asys_arena_compressor *c, const struct asys_slot_header *h,
                     uint32_t *index)
{
    struct asys_arena_writer_key k = asys_arena_writer_key(h);
    uint32_t at = asys_strmap_get(&c->writers, (const char *)&k, sizeof k);
    if (!at) {
        if (c->writer_count >= UINT32_MAX - 1 ||
            asys_grow(&c->progress, &c->writer_cap, c->writer_count, sizeof *c->progress, 64) ||
            asys_strmap_put(&c->writers, (const char *)&k, sizeof k,
                            (uint32_t)c->writer_count + 1) != 0)
            return -1;
        memset(&c->progress[c->writer_count], 0, sizeof *c->progress);
        at = (uint32_t)++c->writer_count;
    }
    *index = at - 1;
    return 0;
}

static int read_slot_header(struct asys_arena_compressor *c, uint64_t offset,
                            struct asys_slot_header *h)
{
    return pread(c->arena_fd, h, sizeof *h, (off_t)offset) == (ssize_t)sizeof *h &&
           memcmp(h->magic, ASYS_SLOT_MAGIC, sizeof h->magic) == 0;
}

static void note_sequence(struct writer_progress *p, uint32_t sequence)
{
    if (p->slots && (sequence == p->highest || (p->slots > 1 && sequence == p->second)))
        p->confused = 1;
    if (!p->slots++ || sequence > p->highest) {
        p->second = p->highest;
        p->highest = sequence;
    } else if (sequence > p->second) {
        p->second = sequence;
    }
}

/* Slot `slot`'s header: 1 when read, 0 when not written yet, -1 on failure. */
static int look_at(struct asys_arena_compressor *c, uint64_t slot)
{
    struct asys_slot_header h;
    uint64_t offset = slot * c->slot_size;
    uint32_t writer;
    if (!read_slot_header(c, offset, &h))
        return 0;
    if (writer_of(c, &h, &writer) != 0)
        return -1;
    note_sequence(&c->progress[writer], h.sequence);
    if (h.sequence == 0)
        return 1; /* a segment header's slot: compressed at finalize */
    if (asys_grow(&c->candidates, &c->candidate_cap, c->candidate_count, sizeof *c->candidates, 64))
        return -1;
    c->candidates[c->candidate_count++] = (struct candidate){offset, h.sequence, writer};
    return 1;
}

/* The slots claimed since the last look, and those whose headers were late. */
static int look_for_slots(struct asys_arena_compressor *c)
{
    struct asys_arena_control control;
    struct stat st;
    if (pread(c->arena_fd, &control, sizeof control, 0) != (ssize_t)sizeof control ||
        fstat(c->arena_fd, &st) != 0)
        return 0;
    /* a damaged counter must not send us past the file's end */
    uint64_t in_file = ((uint64_t)st.st_size + c->slot_size - 1) / c->slot_size;
    uint64_t claimed = control.next_slot < in_file ? control.next_slot : in_file;
    for (size_t i = 0; i < c->unwritten_count;) {
        int seen = look_at(c, c->unwritten[i].slot);
        if (seen < 0)
            return -1;
        if (seen || ++c->unwritten[i].looks >= UNWRITTEN_LOOKS)
            c->unwritten[i] = c->unwritten[--c->unwritten_count];
        else
            i++;
    }
    for (; c->next_slot < claimed; c->next_slot++) {
        int seen = look_at(c, c->next_slot);
        if (seen < 0)
            return -1;
        if (seen)
            continue;
        if (asys_grow(&c->unwritten, &c->unwritten_cap, c->unwritten_count, sizeof *c->unwritten,
                      16))
            return -1;
        c->unwritten[c->unwritten_count++] = (struct unwritten){c->next_slot, 0};
    }
    return 0;
}

/* Whether a slot's writer has claimed two slots after it. */
static int sealed(const struct asys_arena_compressor *c, const struct candidate *s)
{
    const struct writer_progress *p = &c->progress[s->writer];
    return !p->confused && p->slots >= 3 && p->second > s->sequence;
}

static int any_sealed(const struct asys_arena_compressor *c)
{
    for (size_t i = 0; i < c->candidate_count; i++)
        if (sealed(c, &c->candidates[i]))
            return 1;
    return 0;
}

/* Whether the writers keep enough free space with one more frame. */
static int room_on_disk(const struct asys_arena_compressor *c)
{
    struct statvfs v;
    if (fstatvfs(c->frames_fd, &v) != 0)
        return 0;
    uint64_t keep = DISK_MARGIN + c->frames_size +
                    (uint64_t)DISK_SLOTS_PER_WRITER * c->slot_size * c->writer_count;
    return (uint64_t)v.f_bavail * v.f_frsize > keep;
}

/* The pages of the slot at `offset` after its first, back to the file
 * system, unless the program has exited since (finalize may be reading the
 * arena: asys_arena_compressor_finish waits for a release under way).  A
 * file system that cannot punch holes keeps the slot: its frame's entry
 * says released, and the frame holds the same bytes. */
static void release_slot(struct asys_arena_compressor *c, uint64_t offset)
{
    uint32_t flags = ASYS_SLOT_RELEASED;
    pthread_mutex_lock(&c->lock);
    if (!told(&c->exited) &&
        pwrite(c->arena_fd, &flags, sizeof flags,
               (off_t)(offset + offsetof(struct asys_slot_header, flags))) == sizeof flags &&
        fallocate(c->arena_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                  (off_t)(offset + c->page_size), (off_t)(c->slot_size - c->page_size)) != 0 &&
        errno == EOPNOTSUPP)
        c->cannot_release = 1;
    pthread_mutex_unlock(&c->lock);
}

/* One sealed slot into a frame and its index entry; -1 when the disk
 * refuses (nothing more is compressed then). */
static int compress_slot(struct asys_arena_compressor *c, const struct candidate *s)
{
    /* its header once more, long written now: a look that raced its write
     * may have seen a part of it (and named another writer) */
    struct asys_slot_header h;
    uint32_t writer;
    if (!read_slot_header(c, s->offset, &h) || writer_of(c, &h, &writer) != 0 ||
        writer != s->writer || h.sequence != s->sequence)
        return 0;
    ssize_t n =
        pread(c->arena_fd, c->in, c->payload_size, (off_t)(s->offset + ASYS_SLOT_HEADER_SIZE));
    if (n != (ssize_t)c->payload_size)
        return 0; /* left to finalize */
    size_t size = ZSTD_compress2(c->zstd, c->out, c->out_size, c->in, c->payload_size);
    if (ZSTD_isError(size) || size >= c->payload_size)
        return 0; /* nothing gained: finalize stores it as it is anyway */
    int release = (c->flags & ASYS_COMPRESS_RELEASE) && !c->cannot_release && !told(&c->exited);
    struct asys_arena_frame entry = {s->offset, c->frames_size, size, s->sequence,
                                     release ? ASYS_ARENA_FRAME_RELEASED : 0};
    if (asys_write_all(c->frames_fd, c->out, size) != 0)
        return -1;
    c->frames_size += size;
    if (asys_write_all(c->index_fd, &entry, sizeof entry) != 0)
        return -1;
    if (release)
        release_slot(c, s->offset);
    return 0;
}

/* Compresses sealed slots until `deadline_ns` (CLOCK_MONOTONIC; 0: all of
 * them) or the disk runs short; -1 on failure. */
static int compress_sealed(struct asys_arena_compressor *c, uint64_t deadline_ns)
{
    for (size_t i = 0; i < c->candidate_count;) {
        struct candidate s = c->candidates[i];
        if (!sealed(c, &s)) {
            i++;
            continue;
        }
        if (told(&c->stop) || (deadline_ns && asys_monotonic_ns() >= deadline_ns) ||
            !room_on_disk(c))
            break;
        c->candidates[i] = c->candidates[--c->candidate_count];
        if (compress_slot(c, &s) != 0)
            return -1;
    }
    return 0;
}

/* Jiffies idle (idle + iowait) and in all of the allowed CPUs; -1 when
 * /proc/stat cannot be read. */
static int allowed_jiffies(struct idle_meter *m, uint64_t *idle, uint64_t *total)
{
    ssize_t n = m->stat_fd < 0 ? -1 : pread(m->stat_fd, m->text, STAT_READ_MAX, 0);
    if (n <= 0)
        return -1;
    m->text[n] = '\0';
    *idle = *total = 0;
    for (char *line = m->text, *next; line && !strncmp(line, "cpu", 3); line = next) {
        next = strchr(line, '\n');
        next = next ? next + 1 : NULL;
        unsigned cpu;
        unsigned long long v[8];
        if (sscanf(line, "cpu%u %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &v[0], &v[1], &v[2],
                   &v[3], &v[4], &v[5], &v[6], &v[7]) != 9 ||
            cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &m->allowed))
            continue; /* the all-CPUs line, or a CPU the launcher may not use */
        *idle += v[3] + v[4];
        for (int i = 0; i < 8; i++)
            *total += v[i];
    }
    return 0;
}

/* This thread's time run and waited on a runqueue, in ns: 1 when read. */
static int read_schedstat(struct idle_meter *m, unsigned long long *t)
{
    ssize_t n = m->sched_fd < 0 ? -1 : pread(m->sched_fd, m->text, 64, 0);
    if (n <= 0)
        return 0;
    m->text[n] = '\0'; /* sscanf reads to the end of the string */
    return sscanf(m->text, "%llu %llu", &t[0], &t[1]) == 2;
}

/* Whether the last period left a CPU to spare (see the top of the file). */
static int spare_cpu(struct idle_meter *m)
{
    unsigned long long t[2];
    uint64_t idle = 0, total = 0;
    int have_stat = allowed_jiffies(m, &idle, &total) == 0 && m->total && total > m->total;
    int sched_read = read_schedstat(m, t);
    int have_sched = sched_read && m->run_ns && t[0] >= m->run_ns && t[1] >= m->wait_ns;
    uint64_t ran = have_sched ? t[0] - m->run_ns : 0, waited = have_sched ? t[1] - m->wait_ns : 0;
    double idle_cpus =
        have_stat && idle >= m->idle
            ? (double)(idle - m->idle) / (double)(total - m->total) * (double)CPU_COUNT(&m->allowed)
            : 0; /* counters that went back (NO_HZ) say nothing */
    if (total) {
        m->idle = idle;
        m->total = total;
    }
    if (sched_read) {
        m->run_ns = t[0] ? t[0] : 1;
        m->wait_ns = t[1];
    }
    if (m->skip) {
        m->skip--;
        return 0;
    }
    if (ran >= MIN_BURST_NS) {
        if (waited * 8 < ran) {
            m->backoff = 0;
            return 1;
        }
        m->backoff = m->backoff ? (m->backoff < MAX_BACKOFF ? 2 * m->backoff : MAX_BACKOFF) : 1;
        m->skip = m->backoff;
        return 0;
    }
    return idle_cpus >= IDLE_ENOUGH;
}

/* The first readings of the meter, in the compressor's own thread. */
static void meter_start(struct idle_meter *m)
{
    unsigned long long t[2];
    if (sched_getaffinity(0, sizeof m->allowed, &m->allowed) != 0) {
        CPU_ZERO(&m->allowed);
        CPU_SET(0, &m->allowed);
    }
    m->sched_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    if (read_schedstat(m, t)) {
        m->run_ns = t[0] ? t[0] : 1;
        m->wait_ns = t[1];
    }
    allowed_jiffies(m, &m->idle, &m->total);
}

/* Waits one period, or until told to stop or that the program exited. */
static void wait_period(struct asys_arena_compressor *c, struct timespec *next)
{
    asys_session_advance(next, POLL_NS);
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec > next->tv_sec || (now.tv_sec == next->tv_sec && now.tv_nsec > next->tv_nsec))
        *next = now; /* a period that overran: no burst of catching up */
    pthread_mutex_lock(&c->lock);
    while (!told(&c->stop) && !told(&c->exited) &&
           pthread_cond_timedwait(&c->wake, &c->lock, next) != ETIMEDOUT)
        ;
    pthread_mutex_unlock(&c->lock);
}

static void *compressor(void *arg)
{
    struct asys_arena_compressor *c = arg;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    meter_start(&c->meter);
    while (!c->failed && !told(&c->stop) && !told(&c->exited)) {
        wait_period(c, &next);
        if (told(&c->stop) || told(&c->exited))
            break;
        c->failed = look_for_slots(c) != 0;
        /* the CPU is measured only when there is work: most runs have none */
        if (!c->failed && any_sealed(c) &&
            ((c->flags & ASYS_COMPRESS_EAGER) || spare_cpu(&c->meter)))
            c->failed = compress_sealed(c, asys_monotonic_ns() + POLL_NS) != 0;
    }
    /* the program has exited: what is sealed, at once, while finalize reads */
    uint64_t before = ~0ull;
    while (told(&c->exited) && !c->failed && !told(&c->stop) && before != c->frames_size) {
        before = c->frames_size;
        c->failed = look_for_slots(c) != 0 || compress_sealed(c, 0) != 0;
    }
    return NULL;
}

static void compressor_free(struct asys_arena_compressor *c)
{
    int fds[] = {c->arena_fd, c->frames_fd, c->index_fd, c->meter.stat_fd, c->meter.sched_fd};
    for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->wake);
    asys_strmap_free(&c->writers);
    free(c->progress);
    free(c->candidates);
    free(c->unwritten);
    free(c->meter.text);
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
                            const char *arena_path, struct asys_err *err)
{
    struct asys_arena_control control;
    c->arena_fd =
        open(arena_path, ((c->flags & ASYS_COMPRESS_RELEASE) ? O_RDWR : O_RDONLY) | O_CLOEXEC);
    if (c->arena_fd < 0 ||
        pread(c->arena_fd, &control, sizeof control, 0) != (ssize_t)sizeof control ||
        memcmp(control.magic, ASYS_ARENA_MAGIC, sizeof control.magic) != 0 ||
        control.slot_size <= ASYS_SLOT_HEADER_SIZE || control.slot_size > (1ull << 30))
        return asys_fail(err, "'%s' is not an asys arena", arena_path);
    long page = sysconf(_SC_PAGESIZE);
    c->page_size = page > 0 ? (uint64_t)page : 4096;
    if (control.slot_size % c->page_size || control.slot_size < 2 * c->page_size)
        c->cannot_release = 1; /* no page of it could be given back */
    c->slot_size = control.slot_size;
    c->payload_size = control.slot_size - ASYS_SLOT_HEADER_SIZE;
    c->out_size = ZSTD_compressBound(c->payload_size);
    c->in = malloc(c->payload_size);
    c->out = malloc(c->out_size);
    c->meter.text = malloc(STAT_READ_MAX + 1);
    c->zstd = ZSTD_createCCtx();
    if (!c->in || !c->out || !c->meter.text || !c->zstd ||
        ZSTD_isError(ZSTD_CCtx_setParameter(c->zstd, ZSTD_c_compressionLevel, FRAME_LEVEL)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(c->zstd, ZSTD_c_checksumFlag, 1)))
        return asys_fail(err, "out of memory");
    c->frames_fd = open_output(session_dir, ASYS_ARENA_FRAMES_NAME);
    c->index_fd = c->frames_fd < 0 ? -1 : open_output(session_dir, ASYS_ARENA_FRAME_INDEX_NAME);
    if (c->index_fd < 0)
        return asys_fail_errno(err, errno, "cannot create '%s/%s'", session_dir,
                               ASYS_ARENA_FRAMES_NAME);
    c->meter.stat_fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
    return 0;
}

int asys_arena_compressor_start(const char *session_dir, unsigned flags,
                                struct asys_arena_compressor **out, struct asys_err *err)
{
    char arena_path[PATH_MAX];
    *out = NULL;
    if (asys_arena_path(session_dir, arena_path, sizeof arena_path) != 0)
        return asys_fail(err, "session directory name too long");
    if (access(arena_path, F_OK) != 0)
        return 0; /* no arena, nothing to compress */
    struct asys_arena_compressor *c = calloc(1, sizeof *c);
    if (!c)
        return asys_fail(err, "out of memory");
    c->arena_fd = c->frames_fd = c->index_fd = c->meter.stat_fd = c->meter.sched_fd = -1;
    c->flags = flags;
    c->next_slot = 1;
    pthread_mutex_init(&c->lock, NULL);
    asys_session_cond_init(&c->wake);
    asys_strmap_init(&c->writers);
    int rc = compressor_setup(c, session_dir, arena_path, err);
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
    __atomic_store_n(flag, 1, __ATOMIC_RELEASE);
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
    /* with finish_all, stopping waits for what is sealed */
    tell(c, (c->flags & ASYS_COMPRESS_FINISH_ALL) ? &c->exited : &c->stop);
    pthread_join(c->thread, NULL);
    compressor_free(c);
}
