/* Arena slots compressed while the program runs (see arena_frames.h). */
#define _GNU_SOURCE
#include "arena_frames.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "asys_format.h"
#include "grow.h"

/* How often the arena is looked at: its control block and new slot headers. */
#define POLL_NS (20u * 1000u * 1000u)
/* A claimed slot whose header never comes (a failed claim) is given up after
 * this many looks; its writer's later slots are found through the others. */
#define UNWRITTEN_LOOKS 250u
#define FRAME_LEVEL 1 /* as the report's (common/archive.c) */
#define COPY_PIECE (256u << 10)
/* a zstd frame header's bounds (ZSTD_FRAMEHEADERSIZE_MIN/MAX, which only a static libzstd declares)
 */
#define FRAME_HEADER_MIN 6u
#define FRAME_HEADER_MAX 18u

struct candidate { /* a slot not yet sealed */
    uint64_t offset;
    uint32_t sequence;
    uint32_t writer; /* index into later[] */
};

struct later {                /* a writer's two latest slots seen so far */
    uint32_t highest, second; /* sequences; second < highest once there are two */
    uint32_t slots;           /* slots seen in all */
};

struct unwritten { /* a claimed slot whose header was not there yet */
    uint64_t slot;
    uint32_t looks;
};

struct asys_arena_compressor {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int stop;       /* under lock */
    int failed;     /* memory or disk ran out: nothing more is compressed */
    int finish_all; /* stopping waits until every sealed slot is compressed */
    int arena_fd, frames_fd, index_fd;
    uint64_t slot_size, payload_size;
    uint64_t next_slot;         /* the first slot never looked at */
    uint64_t frames_size;       /* bytes in the frames file */
    struct asys_strmap writers; /* struct asys_arena_writer_key -> index into later[] + 1 */
    struct later *later;        /* each writer's two highest sequences seen */
    size_t writer_count, writer_cap;
    struct candidate *candidates;
    size_t candidate_count, candidate_cap;
    struct unwritten *unwritten;
    size_t unwritten_count, unwritten_cap;
    ZSTD_CCtx *zstd;
    uint8_t *in, *out;
    size_t out_size;
};

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

static int writer_of(struct asys_arena_compressor *c, const struct asys_slot_header *h,
                     uint32_t *index)
{
    struct asys_arena_writer_key k = asys_arena_writer_key(h);
    uint32_t at = asys_strmap_get(&c->writers, (const char *)&k, sizeof k);
    if (!at) {
        if (c->writer_count >= UINT32_MAX - 1 ||
            asys_grow(&c->later, &c->writer_cap, c->writer_count, sizeof *c->later, 64) ||
            asys_strmap_put(&c->writers, (const char *)&k, sizeof k,
                            (uint32_t)c->writer_count + 1) != 0)
            return -1;
        memset(&c->later[c->writer_count], 0, sizeof *c->later);
        at = (uint32_t)++c->writer_count;
    }
    *index = at - 1;
    return 0;
}

/* Slot `slot`'s header: 1 when read, 0 when not written yet, -1 on failure. */
static int look_at(struct asys_arena_compressor *c, uint64_t slot)
{
    struct asys_slot_header h;
    uint64_t offset = slot * c->slot_size;
    if (pread(c->arena_fd, &h, sizeof h, (off_t)offset) != (ssize_t)sizeof h ||
        memcmp(h.magic, ASYS_SLOT_MAGIC, sizeof h.magic) != 0)
        return 0;
    uint32_t writer;
    if (writer_of(c, &h, &writer) != 0)
        return -1;
    struct later *l = &c->later[writer];
    if (!l->slots++ || h.sequence > l->highest) {
        l->second = l->highest;
        l->highest = h.sequence;
    } else if (h.sequence > l->second) {
        l->second = h.sequence;
    }
    if (h.sequence == 0)
        return 1; /* the segment header's slot: compressed at finalize */
    if (asys_grow(&c->candidates, &c->candidate_cap, c->candidate_count, sizeof *c->candidates, 64))
        return -1;
    c->candidates[c->candidate_count++] = (struct candidate){offset, h.sequence, writer};
    return 1;
}

/* The slots claimed since the last look, and those whose headers were late. */
static int look_for_slots(struct asys_arena_compressor *c)
{
    struct asys_arena_control control;
    if (pread(c->arena_fd, &control, sizeof control, 0) != (ssize_t)sizeof control)
        return 0;
    for (size_t i = 0; i < c->unwritten_count;) {
        int seen = look_at(c, c->unwritten[i].slot);
        if (seen < 0)
            return -1;
        if (seen || ++c->unwritten[i].looks >= UNWRITTEN_LOOKS)
            c->unwritten[i] = c->unwritten[--c->unwritten_count];
        else
            i++;
    }
    for (; c->next_slot < control.next_slot; c->next_slot++) {
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

/* One sealed slot into a frame and its index entry; -1 when the session's
 * disk refuses (nothing more is compressed then). */
static int compress_slot(struct asys_arena_compressor *c, const struct candidate *s)
{
    /* its header once more, long written now: a look that raced its write
     * may have seen a part of it (and named another writer) */
    struct asys_slot_header h;
    uint32_t writer;
    if (pread(c->arena_fd, &h, sizeof h, (off_t)s->offset) != (ssize_t)sizeof h ||
        memcmp(h.magic, ASYS_SLOT_MAGIC, sizeof h.magic) != 0 || writer_of(c, &h, &writer) != 0 ||
        writer != s->writer || h.sequence != s->sequence)
        return 0;
    ssize_t n =
        pread(c->arena_fd, c->in, c->payload_size, (off_t)(s->offset + ASYS_SLOT_HEADER_SIZE));
    if (n != (ssize_t)c->payload_size)
        return 0; /* left to finalize */
    size_t size = ZSTD_compress2(c->zstd, c->out, c->out_size, c->in, c->payload_size);
    if (ZSTD_isError(size))
        return 0;
    struct asys_arena_frame entry = {s->offset, c->frames_size, size, s->sequence, 0};
    if (write_all(c->frames_fd, c->out, size) != 0)
        return -1;
    c->frames_size += size;
    return write_all(c->index_fd, &entry, sizeof entry);
}

static int stop_asked(struct asys_arena_compressor *c)
{
    pthread_mutex_lock(&c->lock);
    int stop = c->stop;
    pthread_mutex_unlock(&c->lock);
    return stop;
}

/* Whether a slot's writer has claimed two slots after it. */
static int sealed(const struct asys_arena_compressor *c, const struct candidate *s)
{
    const struct later *l = &c->later[s->writer];
    return l->slots >= 3 && l->second > s->sequence;
}

/* The candidates whose writers have moved two slots on. */
static int compress_sealed(struct asys_arena_compressor *c)
{
    for (size_t i = 0; i < c->candidate_count;) {
        struct candidate s = c->candidates[i];
        if (!sealed(c, &s)) {
            i++;
            continue;
        }
        c->candidates[i] = c->candidates[--c->candidate_count];
        if (compress_slot(c, &s) != 0)
            return -1;
        if (stop_asked(c))
            return 0;
    }
    return 0;
}

/* Waits one period; 1 when asked to stop. */
static int wait_or_stop(struct asys_arena_compressor *c, struct timespec *next)
{
    uint64_t ns = (uint64_t)next->tv_nsec + POLL_NS;
    next->tv_sec += (time_t)(ns / 1000000000u);
    next->tv_nsec = (long)(ns % 1000000000u);
    pthread_mutex_lock(&c->lock);
    while (!c->stop && pthread_cond_timedwait(&c->wake, &c->lock, next) != ETIMEDOUT)
        ;
    int stop = c->stop;
    pthread_mutex_unlock(&c->lock);
    return stop;
}

/* Only idle CPU time: the program's threads always come first. */
static void run_when_idle(void)
{
    struct sched_param none = {0};
    if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &none) != 0)
        setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
}

/* While the program runs: a look each period. */
static void *compress_while_running(void *arg)
{
    struct asys_arena_compressor *c = arg;
    struct timespec next;
    run_when_idle();
    clock_gettime(CLOCK_MONOTONIC, &next);
    while (!c->failed && !wait_or_stop(c, &next))
        c->failed = look_for_slots(c) != 0 || compress_sealed(c) != 0;
    return NULL; /* after a failure (memory, disk) finalize compresses the rest */
}

/* Once it has exited: what is sealed, at once. */
static void *compress_the_rest(void *arg)
{
    struct asys_arena_compressor *c = arg;
    uint64_t before = ~0ull;
    while (!c->failed && !stop_asked(c) && before != c->frames_size) {
        before = c->frames_size;
        c->failed = look_for_slots(c) != 0 || compress_sealed(c) != 0;
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
    struct asys_arena_control control;
    if (pread(c->arena_fd, &control, sizeof control, 0) != (ssize_t)sizeof control ||
        memcmp(control.magic, ASYS_ARENA_MAGIC, sizeof control.magic) != 0 ||
        control.slot_size <= ASYS_SLOT_HEADER_SIZE || control.slot_size > (1ull << 30))
        return asys_fail(err, "'%s/segments/" ASYS_ARENA_NAME "' is not an asys arena",
                         session_dir);
    c->slot_size = control.slot_size;
    c->payload_size = control.slot_size - ASYS_SLOT_HEADER_SIZE;
    c->next_slot = 1;
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
    return 0;
}

int asys_arena_compressor_start(const char *session_dir, int finish_all,
                                struct asys_arena_compressor **out, struct asys_err *err)
{
    char path[PATH_MAX];
    *out = NULL;
    snprintf(path, sizeof path, "%s/segments/%s", session_dir, ASYS_ARENA_NAME);
    int arena_fd = open(path, O_RDONLY | O_CLOEXEC);
    if (arena_fd < 0)
        return errno == ENOENT ? 0 : asys_fail_errno(err, errno, "cannot open '%s'", path);
    struct asys_arena_compressor *c = calloc(1, sizeof *c);
    if (!c) {
        close(arena_fd);
        return asys_fail(err, "out of memory");
    }
    c->arena_fd = arena_fd;
    c->frames_fd = c->index_fd = -1;
    c->finish_all = finish_all;
    pthread_mutex_init(&c->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&c->wake, &attr);
    pthread_condattr_destroy(&attr);
    asys_strmap_init(&c->writers);
    int rc = compressor_setup(c, session_dir, err);
    if (rc == 0 && (errno = pthread_create(&c->thread, NULL, compress_while_running, c)) != 0)
        rc = asys_fail_errno(err, errno, "cannot start the arena compressor");
    if (rc != 0) {
        compressor_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

static void join(struct asys_arena_compressor *c, int stop)
{
    pthread_mutex_lock(&c->lock);
    c->stop = stop;
    pthread_cond_signal(&c->wake);
    pthread_mutex_unlock(&c->lock);
    pthread_join(c->thread, NULL);
    c->stop = 0;
}

void asys_arena_compressor_finish(struct asys_arena_compressor *c)
{
    if (!c || c->failed)
        return;
    join(c, 1);
    /* a thread of the launcher's own priority (a SCHED_IDLE thread may not
     * raise its own): finalize's first pass uses one core, this the other */
    if ((errno = pthread_create(&c->thread, NULL, compress_the_rest, c)) != 0)
        c->failed = 1;
}

void asys_arena_compressor_stop(struct asys_arena_compressor *c)
{
    if (!c)
        return;
    if (!c->failed)
        join(c, !c->finish_all);
    compressor_free(c);
}

/* ---- at finalize ---------------------------------------------------------- */

static int open_input(const char *session_dir, const char *name, struct stat *st)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%s", session_dir, name) >= (int)sizeof path)
        return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0 && fstat(fd, st) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* The offsets of every slot that may have a frame: not a segment's first. */
static int later_slots(const struct asys_arena_index *arena, struct asys_u64map *slots)
{
    for (size_t i = 0; i < arena->count; i++)
        for (size_t k = 1; k < arena->segments[i].count; k++)
            if (asys_u64map_put(slots, arena->segments[i].slots[k], k) != 0)
                return -1;
    return 0;
}

/* Whether `e` can stand for its slot: see asys_arena_frames_open. */
static int usable(const struct asys_arena_frames *f, const struct asys_arena_frame *e,
                  const struct asys_arena_index *arena, const struct asys_u64map *slots,
                  uint64_t frames_size, int arena_fd)
{
    struct asys_slot_header h;
    uint8_t head[FRAME_HEADER_MAX];
    if (!asys_u64map_get(slots, e->slot_offset) || asys_u64map_get(&f->by_slot, e->slot_offset) ||
        e->sequence == 0 || e->frame_size < FRAME_HEADER_MIN || e->frame_offset > frames_size ||
        e->frame_size > frames_size - e->frame_offset ||
        pread(arena_fd, &h, sizeof h, (off_t)e->slot_offset) != (ssize_t)sizeof h ||
        memcmp(h.magic, ASYS_SLOT_MAGIC, sizeof h.magic) != 0 || h.sequence != e->sequence)
        return 0;
    size_t want = e->frame_size < sizeof head ? (size_t)e->frame_size : sizeof head;
    ssize_t n = pread(f->fd, head, want, (off_t)e->frame_offset);
    return n > 0 && ZSTD_getFrameContentSize(head, (size_t)n) == arena->payload_size;
}

/* The frames were appended one after the other: an entry out of that order
 * is damage, and so is everything after it. */
static int in_order(const struct asys_arena_frame *e, size_t i)
{
    return e[i].frame_offset == (i ? e[i - 1].frame_offset + e[i - 1].frame_size : 0);
}

int asys_arena_frames_open(struct asys_arena_frames *f, const char *session_dir,
                           const struct asys_arena_index *arena, struct asys_err *err)
{
    struct stat frames_st, index_st;
    struct asys_u64map slots;
    struct asys_arena_frame *entries = NULL;
    int rc = -1, arena_fd = -1;
    memset(f, 0, sizeof *f);
    asys_u64map_init(&f->by_slot);
    asys_u64map_init(&slots);
    int index_fd = open_input(session_dir, ASYS_ARENA_FRAME_INDEX_NAME, &index_st);
    f->fd = index_fd < 0 ? -1 : open_input(session_dir, ASYS_ARENA_FRAMES_NAME, &frames_st);
    size_t count = index_fd < 0 ? 0 : (size_t)index_st.st_size / sizeof *entries;
    if (f->fd < 0 || !count || !arena->count) {
        rc = 0; /* nothing compressed early */
        goto out;
    }
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/segments/%s", session_dir, ASYS_ARENA_NAME);
    arena_fd = open(path, O_RDONLY | O_CLOEXEC);
    if (later_slots(arena, &slots) != 0) {
        asys_fail(err, "out of memory");
        goto out;
    }
    if (count > slots.count)
        count = slots.count; /* at most one frame per slot: the rest is not ours */
    entries = malloc((count ? count : 1) * sizeof *entries);
    f->at = malloc((count ? count : 1) * sizeof *f->at);
    if (!entries || !f->at) {
        asys_fail(err, "out of memory");
        goto out;
    }
    if (arena_fd < 0 || pread(index_fd, entries, count * sizeof *entries, 0) !=
                            (ssize_t)(count * sizeof *entries)) {
        rc = 0; /* unreadable: every slot is compressed from the arena */
        goto out;
    }
    size_t used = 0;
    for (size_t i = 0; i < count && in_order(entries, i); i++) {
        if (!usable(f, &entries[i], arena, &slots, (uint64_t)frames_st.st_size, arena_fd))
            continue;
        f->at[used] = entries[i];
        if (asys_u64map_put(&f->by_slot, entries[i].slot_offset, used++) != 0) {
            asys_fail(err, "out of memory");
            goto out;
        }
    }
    rc = 0;
out:
    if (index_fd >= 0)
        close(index_fd);
    if (arena_fd >= 0)
        close(arena_fd);
    free(entries);
    asys_u64map_free(&slots);
    if (rc != 0)
        asys_arena_frames_close(f);
    return rc;
}

void asys_arena_frames_close(struct asys_arena_frames *f)
{
    if (f->fd >= 0)
        close(f->fd);
    free(f->at);
    asys_u64map_free(&f->by_slot);
    memset(f, 0, sizeof *f);
    f->fd = -1;
}

/* The frame of the slot at position `k` of `segment`, or NULL. */
static const struct asys_arena_frame *frame_of(const struct asys_arena_frames *f,
                                               const struct asys_arena_segment *segment, size_t k)
{
    if (f->fd < 0 || k >= segment->count)
        return NULL;
    const uint64_t *at = asys_u64map_get(&f->by_slot, segment->slots[k]);
    return at ? &f->at[*at] : NULL;
}

int asys_arena_frames_add_member(struct asys_archive_writer *w, const struct asys_arena_frames *f,
                                 const char *name, uint64_t size,
                                 const struct asys_arena_index *arena,
                                 const struct asys_arena_segment *segment, int arena_fd,
                                 struct asys_err *err)
{
    uint8_t *buffer = malloc(COPY_PIECE);
    struct asys_arena_cursor cursor = {arena_fd, arena, segment, 0};
    int rc =
        buffer ? asys_archive_begin_member(w, name, size, err) : asys_fail(err, "out of memory");
    while (rc == 0 && cursor.position < size) {
        size_t k = (size_t)(cursor.position / arena->payload_size);
        const struct asys_arena_frame *frame = cursor.position % arena->payload_size == 0 &&
                                                       size - cursor.position >= arena->payload_size
                                                   ? frame_of(f, segment, k)
                                                   : NULL;
        if (frame) {
            rc = asys_archive_copy_frame(w, f->fd, frame->frame_offset, frame->frame_size,
                                         arena->payload_size, err);
            cursor.position += arena->payload_size;
            continue;
        }
        uint64_t left = size - cursor.position;
        size_t want = left < COPY_PIECE ? (size_t)left : COPY_PIECE;
        long n = asys_arena_cursor_read(&cursor, buffer, want);
        if (n <= 0) { /* the source shrank: keep the member size the header promised */
            memset(buffer, 0, want);
            n = (long)want;
            cursor.position += want;
        }
        rc = asys_archive_write(w, buffer, (size_t)n, err);
    }
    free(buffer);
    return rc;
}
