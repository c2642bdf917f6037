#define _GNU_SOURCE
#include "segment_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* After an I/O failure, growth is retried once per this many drops. */
#define GROW_RETRY_INTERVAL 1024u

static uint64_t page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (uint64_t)p : 4096u;
}

static uint64_t round_up(uint64_t v, uint64_t to)
{
    return (v + to - 1) / to * to;
}

/* Reserves disk blocks for [offset, offset+len) so that touching the mapping
 * later cannot SIGBUS on a full disk; falls back to a sparse extension where
 * the file system has no fallocate. */
static int extend_file(int fd, uint64_t offset, uint64_t len)
{
    if (fallocate(fd, 0, (off_t)offset, (off_t)len) == 0)
        return 0;
    if (errno != EOPNOTSUPP && errno != ENOSYS)
        return -errno;
    return ftruncate(fd, (off_t)(offset + len)) == 0 ? 0 : -errno;
}

int asys_segment_open(struct asys_segment_writer *w, const char *path,
                      const struct asys_segment_header *header, uint64_t chunk_size,
                      uint64_t max_size)
{
    int saved_errno = errno;
    int rc = 0;
    memset(w, 0, sizeof *w);
    if (strlen(path) >= sizeof w->path)
        return -ENAMETOOLONG;
    strcpy(w->path, path);
    chunk_size =
        round_up(chunk_size < ASYS_MIN_CHUNK_SIZE ? ASYS_MIN_CHUNK_SIZE : chunk_size, page_size());
    if (max_size < chunk_size)
        max_size = chunk_size;

    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        rc = -errno;
        goto out;
    }
    rc = extend_file(fd, 0, chunk_size);
    if (rc)
        goto out;
    void *head = mmap(NULL, page_size(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (head == MAP_FAILED) {
        rc = -errno;
        goto out;
    }
    w->header = head;
    void *chunk = mmap(NULL, chunk_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (chunk == MAP_FAILED) {
        rc = -errno;
        goto out;
    }
    w->chunk = chunk;
    w->chunk_size = chunk_size;
    w->max_size = max_size;

    *w->header = *header;
    memcpy(w->header->magic, ASYS_SEGMENT_MAGIC, ASYS_SEGMENT_MAGIC_LEN);
    w->header->format_version = ASYS_FORMAT_VERSION;
    w->header->header_size = ASYS_SEGMENT_HEADER_SIZE;
    w->header->chunk_size = chunk_size;
    w->header->dropped_records = 0;
    w->header->dropped_bytes = 0;
    w->header->dropped_full = w->header->dropped_reentry = w->header->dropped_big = 0;
    w->header->lost_threads = w->header->lost_thread_records = 0;
    w->header->lost_thread_errno = 0;
    w->header->data_end = 0;
    w->cur = w->chunk + ASYS_SEGMENT_HEADER_SIZE;
    w->end = w->chunk + chunk_size;
    w->last_ticks = header->base_ticks;
out:
    if (fd >= 0)
        close(fd);
    if (rc) {
        if (fd >= 0)
            unlink(path);
        asys_segment_abandon(w);
    }
    errno = saved_errno;
    return rc;
}

static void unmap_all(struct asys_segment_writer *w)
{
    if (w->chunk)
        munmap(w->chunk, w->chunk_size);
    if (w->header)
        munmap(w->header, page_size());
    w->chunk = NULL;
    w->header = NULL;
    w->cur = w->end = NULL;
}

void asys_segment_abandon(struct asys_segment_writer *w)
{
    int saved_errno = errno;
    unmap_all(w);
    w->full = 1;
    errno = saved_errno;
}

void asys_segment_close(struct asys_segment_writer *w)
{
    int saved_errno = errno;
    uint64_t used = asys_segment_used(w);
    if (w->header && used)
        __atomic_store_n(&w->header->data_end, used, __ATOMIC_RELEASE);
    unmap_all(w);
    if (used && truncate(w->path, (off_t)used) != 0) {
        /* the reader scans to the first zero word; a longer file is harmless */
    }
    asys_segment_abandon(w);
    errno = saved_errno;
}

/* Fills the rest of the chunk with one PAD record so readers skip to the next
 * chunk (`end` may have been pulled in by a drop; the chunk's real end counts). */
static void pad_chunk_tail(struct asys_segment_writer *w)
{
    uint64_t rest = (uint64_t)(w->chunk + w->chunk_size - w->cur);
    if (rest < 8)
        return;
    asys_rec_word *pad = (asys_rec_word *)w->cur;
    if (rest / 8 < ASYS_REC_EXTENDED) {
        asys_segment_commit(pad, ASYS_REC_WORD(ASYS_REC_PAD, rest / 8, 0, 0));
    } else {
        ((uint32_t *)w->cur)[2] = (uint32_t)rest;
        asys_segment_commit(pad, ASYS_REC_WORD(ASYS_REC_PAD, ASYS_REC_EXTENDED, 0, 0));
    }
    w->cur = w->chunk + w->chunk_size;
}

/* Faults a fresh chunk in with one call instead of one fault per page on
 * the hot path (a write fault on a file page costs a microsecond or more). */
static void prefault(void *chunk, uint64_t size)
{
#ifdef MADV_POPULATE_WRITE
    madvise(chunk, size, MADV_POPULATE_WRITE); /* best effort: older kernels fault lazily */
#else
    (void)chunk;
    (void)size;
#endif
}

static int grow(struct asys_segment_writer *w)
{
    uint64_t next = w->chunk_offset + w->chunk_size;
    if (next + w->chunk_size > w->max_size) {
        w->full = 1;
        return 0;
    }
    if (w->grow_failures && w->pending_drop_records % GROW_RETRY_INTERVAL != 0)
        return 0;
    int saved_errno = errno;
    void *m = MAP_FAILED;
    /* Opened by path each time: the program may close or reuse any descriptor
     * (daemons close them all), and a reused one would be another file. */
    int fd = open(w->path, O_RDWR | O_CLOEXEC);
    if (fd >= 0) {
        if (extend_file(fd, next, w->chunk_size) == 0)
            m = mmap(NULL, w->chunk_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)next);
        close(fd);
    }
    errno = saved_errno;
    if (m == MAP_FAILED) {
        w->grow_failures++;
        return 0;
    }
    w->grow_failures = 0;
    prefault(m, w->chunk_size);
    pad_chunk_tail(w);
    munmap(w->chunk, w->chunk_size);
    errno = saved_errno;
    w->chunk = m;
    w->chunk_offset = next;
    w->cur = w->chunk;
    w->end = w->chunk + w->chunk_size;
    return 1;
}

void asys_segment_count_lost(struct asys_segment_header *h, uint32_t size,
                             enum asys_drop_cause cause)
{
    uint64_t *by_cause = cause == ASYS_DROP_REENTRY ? &h->dropped_reentry
                         : cause == ASYS_DROP_BIG   ? &h->dropped_big
                                                    : &h->dropped_full;
    __atomic_fetch_add(by_cause, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&h->dropped_records, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&h->dropped_bytes, size, __ATOMIC_RELAXED);
}

void asys_segment_count_drop(struct asys_segment_writer *w, uint32_t size, uint64_t ticks,
                             enum asys_drop_cause cause)
{
    if (!w->pending_drop_records)
        w->first_drop_ticks = ticks;
    w->pending_drop_records++;
    w->pending_drop_bytes += size;
    if (w->header)
        asys_segment_count_lost(w->header, size, cause);
}

static void *take(struct asys_segment_writer *w, uint32_t size, uint64_t stamp, uint32_t *delta)
{
    void *p = w->cur;
    w->cur += size;
    *delta = (uint32_t)(stamp - w->last_ticks);
    w->last_ticks = stamp;
    return p;
}

void *asys_segment_reserve_slow(struct asys_segment_writer *w, uint32_t size, uint64_t ticks,
                                uint32_t *delta)
{
    /* A counter read on another core may trail the last record slightly:
     * keep the segment's time monotonic rather than encode a negative delta. */
    uint64_t stamp = (int64_t)(ticks - w->last_ticks) < 0 ? w->last_ticks : ticks;
    uint64_t worst =
        (uint64_t)size + sizeof(struct asys_rec_time_base) + sizeof(struct asys_rec_drop);
    if (w->full || !w->chunk || size > ASYS_REC_MAX_SIZE ||
        ((uint64_t)(w->end - w->cur) < worst && !grow(w))) {
        asys_segment_count_drop(w, size, stamp,
                                size > ASYS_REC_MAX_SIZE ? ASYS_DROP_BIG : ASYS_DROP_FULL);
        if (w->chunk)
            w->end = w->cur; /* route every record through here until space returns */
        return NULL;
    }
    uint32_t d;
    if (stamp - w->last_ticks > ASYS_REC_MAX_DELTA) {
        struct asys_rec_time_base *tb = take(w, sizeof *tb, w->last_ticks, &d);
        tb->ticks = stamp;
        asys_segment_commit(&tb->header, ASYS_REC_WORD(ASYS_REC_TIME_BASE, 2, 0, 0));
        w->last_ticks = stamp;
    }
    if (w->pending_drop_records) {
        struct asys_rec_drop *dr = take(w, sizeof *dr, stamp, &d);
        dr->records = w->pending_drop_records;
        dr->bytes = w->pending_drop_bytes;
        dr->first_drop_ticks = w->first_drop_ticks;
        asys_segment_commit(&dr->header, ASYS_REC_WORD(ASYS_REC_DROP, sizeof *dr / 8, 0, d));
        w->pending_drop_records = 0;
        w->pending_drop_bytes = 0;
    }
    return take(w, size, stamp, delta);
}
