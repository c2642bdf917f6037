#define _GNU_SOURCE
#include "segment_writer.h"
#include "parse_util.h"
#include "write_all.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

/* After an I/O failure, growth is retried once per this many drops. */
#define GROW_RETRY_INTERVAL 1024u
/* A segment's first slot reserves this much, then doubles as it fills: most
 * processes of a build or a shell script write a few hundred bytes, and on
 * a file system mounted with `discard` giving back unused blocks at exit
 * waits for the device (about 0.1 ms per process on this project's VMs).
 * The first 4 KiB are written when the slot is claimed, which reserves
 * their blocks without a fallocate (a tenth of a process's start). */
#define FIRST_RESERVATION 4096u
/* Unused blocks are given back only from this many bytes up. */
#define RELEASE_MIN (128u << 10)

static uint64_t page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (uint64_t)p : 4096u;
}

static uint64_t round_up(uint64_t v, uint64_t to)
{
    return (v + to - 1) / to * to;
}

/* Where records may end in a slot reserved in part: a zero word is left
 * before the end of the reservation, so that a reader scanning to the first
 * zero word never goes on past it into what the program may have appended
 * there (extend_file); a slot reserved whole ends at its own end. */
#define END_WORD 8u
static uint8_t *reserved_end(const struct asys_segment_writer *w)
{
    return w->map + w->reserved - (w->reserved < w->chunk_size ? END_WORD : 0);
}

/* A fault on a page of a segment's mapping that is not in the page cache
 * (reserved, never written) would read ahead around it, as for any file
 * mapping: with this VM's read_ahead_kb of 8 MiB that zero-filled hundreds
 * of pages, 0.3-0.6 ms, the first time a process wrote past 4 KiB.  One
 * page at a time instead (best effort). */
static void no_read_ahead(void *map, uint64_t size)
{
    madvise(map, size, MADV_RANDOM);
}

/* Reserves disk blocks for [offset, offset+len) so that touching the mapping
 * later cannot SIGBUS on a full disk; falls back to a sparse extension where
 * the file system has no fallocate.  The range reads as zeros afterwards:
 * nothing of ours is there yet, but a stray write of the program to the
 * inherited (append-only) descriptor lands at the end of the file, which
 * may be inside a slot reserved in part, and would read as records after
 * the last one (tmpfs has no ZERO_RANGE: a hole punched first does it). */
static int extend_file(int fd, uint64_t offset, uint64_t len)
{
    if (fallocate(fd, FALLOC_FL_ZERO_RANGE, (off_t)offset, (off_t)len) == 0)
        return 0;
    if (errno != EOPNOTSUPP && errno != ENOSYS)
        return -errno;
    fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)offset, (off_t)len);
    if (fallocate(fd, 0, (off_t)offset, (off_t)len) == 0)
        return 0;
    if (errno != EOPNOTSUPP && errno != ENOSYS)
        return -errno;
    /* never shorter: other processes' slots may lie beyond */
    struct stat st;
    if (fstat(fd, &st) == 0 && (uint64_t)st.st_size >= offset + len)
        return 0;
    return ftruncate(fd, (off_t)(offset + len)) == 0 ? 0 : -errno;
}

/* ---- the arena --------------------------------------------------------------- */

int asys_arena_create(const char *path, uint64_t slot_size)
{
    int saved_errno = errno;
    struct asys_arena_control c;
    memset(&c, 0, sizeof c);
    memcpy(c.magic, ASYS_ARENA_MAGIC, sizeof c.magic);
    c.version = ASYS_ARENA_VERSION;
    c.slot_size =
        round_up(slot_size < ASYS_MIN_CHUNK_SIZE ? ASYS_MIN_CHUNK_SIZE : slot_size, page_size());
    c.next_slot = 1;
    int rc = 0;
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 || pwrite(fd, &c, sizeof c, 0) != (ssize_t)sizeof c)
        rc = -errno;
    if (fd >= 0)
        close(fd);
    errno = saved_errno;
    return rc;
}

/* The descriptor ASYS_ARENA_FD names, when it is still open on that file;
 * -1 otherwise. */
static int inherited_arena(uint64_t *dev, uint64_t *ino)
{
    const char *v = getenv(ASYS_ARENA_FD_ENV);
    uint64_t fd, d, i;
    struct stat st;
    /* "FD:DEV:INO", by hand: sscanf's code would be paged in at each start */
    if (!v || asys_decimal_u64(&v, ':', &fd) != 0 || fd > INT_MAX ||
        (v++, asys_decimal_u64(&v, ':', &d) != 0) || (v++, asys_decimal_u64(&v, '\0', &i) != 0) ||
        fstat((int)fd, &st) != 0 || (uint64_t)st.st_dev != d || (uint64_t)st.st_ino != i)
        return -1;
    *dev = d;
    *ino = i;
    return (int)fd;
}

/* Whether the inherited descriptor still is the arena (the program may have
 * closed it, or reused its number). */
static int inherited_still_arena(const struct asys_arena *a)
{
    struct stat st;
    return a->inherited_fd >= 0 && a->inherited_ino && fstat(a->inherited_fd, &st) == 0 &&
           (uint64_t)st.st_dev == a->inherited_dev && (uint64_t)st.st_ino == a->inherited_ino;
}

/* A descriptor of the arena for one operation: the one attach kept (the
 * first time), else opened by path (the program may close or reuse any
 * descriptor), else the inherited one; *owned says whether the caller
 * closes it.  -1 with errno of the open. */
static int arena_fd(const struct asys_arena *a, int *owned)
{
    /* the one field a claim changes: the arena is shared read-only else */
    int fd = __atomic_exchange_n((int *)&a->spare_fd, -1, __ATOMIC_ACQ_REL);
    if (fd < 0)
        fd = open(a->path, O_RDWR | O_CLOEXEC);
    *owned = fd >= 0;
    if (fd >= 0)
        return fd;
    int e = errno;
    if (inherited_still_arena(a))
        return a->inherited_fd;
    errno = e;
    return -1;
}

/* Just past the dynamic loader's image (the top of the libraries' area in
 * the default top-down layout): a process's first slot asked for there
 * shares the page table of the loader's last pages, where one the kernel
 * places itself lands 2 MiB-aligned (file mappings are aligned for large
 * folios) and needs a page table of its own, about 20 us on a guest without
 * hardware page tables.  A hint only: where the place is taken, the kernel
 * chooses.  0 when there is no loader (a static program). */
static uintptr_t past_loader(void)
{
    uintptr_t base = getauxval(AT_BASE), end = 0;
    const ElfW(Ehdr) *e = (const ElfW(Ehdr) *)base;
    if (!base || memcmp(e->e_ident, ELFMAG, SELFMAG) != 0 ||
        e->e_phentsize != sizeof(ElfW(Phdr)))
        return 0;
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(base + e->e_phoff);
    for (unsigned i = 0; i < e->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD && base + ph[i].p_vaddr + ph[i].p_memsz > end)
            end = base + ph[i].p_vaddr + ph[i].p_memsz;
    return (uintptr_t)round_up(end, page_size());
}

int asys_arena_attach(struct asys_arena *a, const char *path)
{
    int saved_errno = errno;
    memset(a, 0, sizeof *a);
    a->inherited_fd = -1;
    a->spare_fd = -1;
    if (strlen(path) >= sizeof a->path)
        return -ENAMETOOLONG;
    int rc = 0;
    uint64_t dev = 0, ino = 0;
    int inherited = inherited_arena(&dev, &ino);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && inherited >= 0 &&
        (fstat(fd, &st) != 0 || (uint64_t)st.st_dev != dev || (uint64_t)st.st_ino != ino))
        inherited = -1; /* another session's (asys inside asys) */
    int use = fd >= 0 ? fd : inherited;
    void *m =
        use < 0 ? MAP_FAILED : mmap(NULL, page_size(), PROT_READ | PROT_WRITE, MAP_SHARED, use, 0);
    if (m == MAP_FAILED) {
        rc = -errno;
        goto out;
    }
    struct asys_arena_control *c = m;
    /* a write first (adding nothing): one fault maps the shared page
     * writable, where a read would map it read-only and the first claim
     * fault it again */
    __atomic_fetch_add(&c->next_slot, 0, __ATOMIC_RELAXED);
    if (memcmp(c->magic, ASYS_ARENA_MAGIC, sizeof c->magic) != 0 ||
        c->version != ASYS_ARENA_VERSION || c->slot_size < ASYS_MIN_CHUNK_SIZE ||
        c->slot_size % page_size() != 0) {
        munmap(m, page_size());
        rc = -EINVAL;
        goto out;
    }
    strcpy(a->path, path);
    a->control = c;
    a->slot_size = c->slot_size;
    a->inherited_fd = inherited;
    a->inherited_dev = dev;
    a->inherited_ino = ino;
    a->spare_fd = fd;
    a->first_slot_at = past_loader();
    fd = -1;
out:
    if (fd >= 0)
        close(fd);
    errno = saved_errno;
    return rc;
}

void asys_arena_drop_spare(struct asys_arena *a)
{
    if (!a->control) /* never attached: a zeroed arena's 0 is no descriptor of ours */
        return;
    int fd = __atomic_exchange_n(&a->spare_fd, -1, __ATOMIC_ACQ_REL);
    if (fd >= 0)
        close(fd);
}

void asys_arena_detach(struct asys_arena *a)
{
    asys_arena_drop_spare(a);
    if (a->control)
        munmap(a->control, page_size());
    a->control = NULL;
}

void asys_arena_publish_pair(struct asys_arena_control *c, uint64_t ticks, uint64_t monotonic_ns)
{
    uint32_t next = __atomic_load_n(&c->pair_sequence, __ATOMIC_RELAXED) + 2;
    next += next == 0 ? 2 : 0; /* 0 says "none" */
    __atomic_store_n(&c->pair_sequence, next - 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    __atomic_store_n(&c->pair_ticks, ticks, __ATOMIC_RELAXED);
    __atomic_store_n(&c->pair_monotonic_ns, monotonic_ns, __ATOMIC_RELAXED);
    __atomic_store_n(&c->pair_sequence, next, __ATOMIC_RELEASE);
}

int asys_arena_read_pair(const struct asys_arena_control *c, uint64_t *ticks,
                         uint64_t *monotonic_ns)
{
    for (int attempt = 0; attempt < 4; attempt++) {
        uint32_t before = __atomic_load_n(&c->pair_sequence, __ATOMIC_ACQUIRE);
        if (!before)
            return -1;
        if (before & 1)
            continue;
        uint64_t t = __atomic_load_n(&c->pair_ticks, __ATOMIC_RELAXED);
        uint64_t m = __atomic_load_n(&c->pair_monotonic_ns, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&c->pair_sequence, __ATOMIC_RELAXED) == before && m) {
            *ticks = t;
            *monotonic_ns = m;
            return 0;
        }
    }
    return -1;
}

/* Takes the arena's next slot: its file offset, or -1 past the largest. */
static int next_slot_offset(const struct asys_arena *a, uint64_t *offset)
{
    uint64_t slot = __atomic_fetch_add(&a->control->next_slot, 1, __ATOMIC_RELAXED);
    if (slot > (UINT64_MAX - a->slot_size) / a->slot_size)
        return -1;
    *offset = slot * a->slot_size;
    return 0;
}

/* Claims the next slot of the arena, reserves the blocks of its first
 * `reserve` bytes and maps it whole, with its slot header written (sequence
 * `sequence`).  The slot's first page is
 * written with pwrite, not through the mapping: on ext4 the first write
 * fault into reserved (unwritten) blocks costs a few hundred microseconds,
 * the write and a fault on the page it left in the cache a few. */
static void *claim_slot(const struct asys_arena *a, struct asys_slot_header *slot_header,
                        uint32_t sequence, uint64_t reserve, uint64_t *offset, int *error)
{
    static const uint8_t zeros[4096 - ASYS_SLOT_HEADER_SIZE];
    void *m = MAP_FAILED;
    /* the descriptor first: a slot is claimed only when it can be written */
    int owned;
    int fd = arena_fd(a, &owned);
    if (fd >= 0 && next_slot_offset(a, offset) != 0) {
        if (owned)
            close(fd);
        *error = EFBIG;
        return NULL;
    }
    if (fd < 0)
        *offset = 0;
    slot_header->sequence = sequence;
    if (fd >= 0) {
        struct iovec first_page[2] = {{slot_header, sizeof *slot_header},
                                      {(void *)zeros, sizeof zeros}};
        /* the first page's write reserves what it covers; the inherited
         * descriptor is append-only (a stray write of the program to its
         * number lands past the records), so through it the file is
         * extended first and the header written through the mapping */
        uint64_t first = sizeof zeros + ASYS_SLOT_HEADER_SIZE;
        int rc = reserve > first ? extend_file(fd, *offset, reserve)
                 : owned         ? 0
                                 : extend_file(fd, *offset, first);
        /* a hint: a thread's first slot goes past the loader when that is
         * free (the first thread's), anywhere else otherwise */
        void *at = sequence == 0 ? (void *)a->first_slot_at : NULL;
        if (rc == 0)
            m = mmap(at, a->slot_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)*offset);
        if (rc == 0 && m == MAP_FAILED)
            rc = -errno;
        /* the header last: a slot with a header is one its writer holds
         * (the arena compressor takes a slot two claims later as sealed) */
        if (rc == 0 && !owned) {
            memcpy(m, slot_header, sizeof *slot_header);
        } else if (rc == 0 && pwritev(fd, first_page, 2, (off_t)*offset) != (ssize_t)first) {
            rc = errno ? -errno : -EIO;
            munmap(m, a->slot_size);
            m = MAP_FAILED;
        }
        if (m != MAP_FAILED)
            no_read_ahead(m, a->slot_size);
        else
            errno = -rc;
    }
    *error = errno;
    if (fd >= 0 && owned)
        close(fd);
    return m == MAP_FAILED ? NULL : m;
}

/* The header and the chunk: the fields every writer starts with. */
static void start_writing(struct asys_segment_writer *w, const struct asys_segment_header *header)
{
    *w->header = *header;
    memcpy(w->header->magic, ASYS_SEGMENT_MAGIC, ASYS_SEGMENT_MAGIC_LEN);
    w->header->format_version = ASYS_FORMAT_VERSION;
    w->header->header_size = ASYS_SEGMENT_HEADER_SIZE;
    w->header->chunk_size = w->payload_size;
    w->header->dropped_records = 0;
    w->header->dropped_bytes = 0;
    w->header->dropped_full = w->header->dropped_reentry = w->header->dropped_big = 0;
    w->header->lost_threads = w->header->lost_thread_records = 0;
    w->header->lost_thread_errno = 0;
    w->header->data_end = 0;
    w->cur = w->chunk + ASYS_SEGMENT_HEADER_SIZE;
    w->end = w->chunk + w->payload_size;
    w->last_ticks = header->base_ticks;
}

_Static_assert(sizeof(((struct asys_segment_writer *)0)->path) ==
                   sizeof(((struct asys_arena *)0)->path),
               "a writer copies its arena's path whole");

/* A writer in `arena`: its path and its slots' header (sequence 0). */
static void start_in_arena(struct asys_segment_writer *w, const struct asys_arena *arena,
                           const struct asys_segment_header *header)
{
    memset(w, 0, sizeof *w);
    memcpy(w->path, arena->path, sizeof w->path); /* no snprintf: one libc page less a start */
    w->arena = arena;
    memcpy(w->trailer.magic, ASYS_SLOT_MAGIC, sizeof w->trailer.magic);
    w->trailer.process_uid = header->process_uid;
    w->trailer.pid = header->pid;
    w->trailer.tid = header->tid;
    w->trailer.thread_index = header->thread_index;
    w->trailer.collector = header->collector;
}

int asys_segment_open_arena(struct asys_segment_writer *w, const struct asys_arena *arena,
                            const struct asys_segment_header *header, uint64_t max_size)
{
    int saved_errno = errno;
    start_in_arena(w, arena, header);
    int error = 0;
    uint64_t reserve = arena->slot_size < FIRST_RESERVATION ? arena->slot_size : FIRST_RESERVATION;
    uint8_t *map = claim_slot(arena, &w->trailer, 0, reserve, &w->file_offset, &error);
    if (!map) {
        memset(w, 0, sizeof *w);
        w->full = 1;
        errno = saved_errno;
        return -(error ? error : EIO);
    }
    /* the header is on the first chunk's first page, which stays mapped on
     * its own when the chunk goes (unmap_chunk): no second mapping of it,
     * and no second fault on it, in every process */
    w->header_map = map;
    w->header_in_map = 1;
    w->header = (struct asys_segment_header *)(map + ASYS_SLOT_HEADER_SIZE);
    w->header_file_offset = w->file_offset + ASYS_SLOT_HEADER_SIZE;
    w->map = map;
    w->chunk = map + ASYS_SLOT_HEADER_SIZE;
    w->chunk_size = arena->slot_size;
    w->payload_size = arena->slot_size - ASYS_SLOT_HEADER_SIZE;
    w->max_size = max_size < w->payload_size ? w->payload_size : max_size;
    start_writing(w, header);
    w->reserved = reserve;
    w->end = reserved_end(w);
    errno = saved_errno;
    return 0;
}

int asys_segment_open_staged(struct asys_segment_writer *w, const struct asys_arena *arena,
                             const struct asys_segment_header *header, uint64_t max_size,
                             uint8_t *buffer)
{
    start_in_arena(w, arena, header);
    w->staged = buffer;
    w->map = buffer;
    w->chunk = buffer + ASYS_SLOT_HEADER_SIZE;
    w->chunk_size = arena->slot_size;
    w->payload_size = arena->slot_size - ASYS_SLOT_HEADER_SIZE;
    w->max_size = max_size < w->payload_size ? w->payload_size : max_size;
    /* its own copy: the buffer takes the next slot's records once the first is written */
    w->header = &w->staged_header;
    start_writing(w, header);
    w->reserved = w->chunk_size;
    w->end = reserved_end(w);
    return 0;
}

/* A staged writer's current slot, claimed now and written with one call
 * through `fd` (`used` bytes of records after the slot's header); the
 * segment header goes with the first.  0 or -errno. */
static int write_staged_slot(struct asys_segment_writer *w, int fd, uint64_t used)
{
    if (next_slot_offset(w->arena, &w->file_offset) != 0)
        return -EFBIG;
    if (w->trailer.sequence == 0) {
        w->header_file_offset = w->file_offset + ASYS_SLOT_HEADER_SIZE;
        memcpy(w->chunk, w->header, sizeof *w->header);
    }
    memcpy(w->staged, &w->trailer, sizeof w->trailer);
    if (asys_pwrite_all(fd, w->staged, (size_t)(ASYS_SLOT_HEADER_SIZE + used), w->file_offset) != 0)
        return -errno;
    /* zero again, as a fresh slot (a failed write is tried again as it is) */
    memset(w->staged, 0, (size_t)(ASYS_SLOT_HEADER_SIZE + used));
    return 0;
}

/* The staged writer's next slot: the full one written, the buffer reused. */
static int next_staged_slot(struct asys_segment_writer *w)
{
    int owned;
    int fd = arena_fd(w->arena, &owned);
    if (fd < 0)
        return -errno;
    int rc = write_staged_slot(w, fd, w->payload_size);
    if (rc == 0)
        w->trailer.sequence++;
    if (owned)
        close(fd);
    return rc;
}

/* The last slot and, when it was not the first, the header (data_end and the
 * drop counts came after the first slot was written), through one descriptor. */
static int finish_staged(struct asys_segment_writer *w)
{
    int owned;
    int fd = arena_fd(w->arena, &owned);
    if (fd < 0)
        return -errno;
    int rc = write_staged_slot(w, fd, (uint64_t)(w->cur - w->chunk));
    if (rc == 0 && w->trailer.sequence != 0 &&
        asys_pwrite_all(fd, w->header, sizeof *w->header, w->header_file_offset) != 0)
        rc = -errno;
    if (owned)
        close(fd);
    return rc;
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
    no_read_ahead(head, page_size());
    w->header = head;
    w->header_map = head;
    void *chunk = mmap(NULL, chunk_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (chunk == MAP_FAILED) {
        rc = -errno;
        goto out;
    }
    no_read_ahead(chunk, chunk_size);
    w->map = chunk;
    w->chunk = chunk;
    w->chunk_size = chunk_size;
    w->payload_size = chunk_size;
    w->max_size = max_size;
    start_writing(w, header);
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

/* Populating a fresh reservation off the recording thread pays from this
 * size up (smaller ones are a process's first few pages). */
#define HAND_POPULATE_MIN (64u << 10)

/* Hands a page job to the arena's page helper; 0 when there is none or it
 * declined. */
static int hand_pages(struct asys_segment_writer *w, enum asys_page_job job, void *addr,
                      uint64_t len)
{
    const struct asys_page_helper *h = w->arena ? w->arena->helper : NULL;
    if (!h || !h->take(job, addr, len))
        return 0;
    w->handed_pages = 1;
    return 1;
}

/* Populates a chunk off this thread when a helper takes it, else here. */
static void populate_chunk(struct asys_segment_writer *w, void *chunk, uint64_t size)
{
    if (!hand_pages(w, ASYS_PAGE_POPULATE, chunk, size))
        prefault(chunk, size);
}

/* Unmaps a chunk: through the helper when this writer already handed it
 * work (a populate may still run on the chunk; a writer that never did
 * starts no helper thread for it), or here once nothing handed over can
 * touch it. */
static void unmap_chunk(struct asys_segment_writer *w, void *chunk, uint64_t size, int may_hand)
{
    if (w->header_in_map && chunk == w->header_map) { /* the header's page stays */
        w->header_in_map = 0;
        chunk = (uint8_t *)chunk + page_size();
        size -= page_size();
    }
    if (may_hand && w->handed_pages && hand_pages(w, ASYS_PAGE_UNMAP, chunk, size))
        return;
    if (w->handed_pages && w->arena && w->arena->helper)
        w->arena->helper->drain();
    munmap(chunk, size);
}

/* Claims the arena's next slot for this writer (sequence + 1); the
 * sequence stays when no slot came of it, so the slots stay gapless. */
static void *claim_next_slot(struct asys_segment_writer *w, uint64_t *file_offset, int *error)
{
    uint32_t sequence = w->trailer.sequence;
    void *m = claim_slot(w->arena, &w->trailer, sequence + 1, w->chunk_size, file_offset, error);
    if (!m)
        w->trailer.sequence = sequence;
    return m;
}

/* With a page helper, the slot after a fully reserved one is claimed as
 * soon as that one is begun and populated off this thread, so that the
 * switch to it faults nothing here.  One slot ahead keeps the compressor's
 * rule (a slot is sealed once its writer claimed two after it): the one
 * claimed ahead is claimed after the writer left the slot before.  Best
 * effort: when it fails, the switch claims as without a helper. */
static void prepare_next(struct asys_segment_writer *w)
{
    /* the next chunk must fit max_size, as grow checks before switching */
    if (!w->arena || !w->arena->helper || w->next_map || w->reserved < w->chunk_size ||
        w->chunk_offset + 2 * w->payload_size > w->max_size)
        return;
    int error;
    uint64_t file_offset;
    uint8_t *m = claim_next_slot(w, &file_offset, &error);
    if (!m)
        return;
    w->next_map = m;
    w->next_file_offset = file_offset;
    populate_chunk(w, m, w->chunk_size);
}

/* The prepared slot of a closing writer: its header stays (the slot is
 * claimed, an empty one of the segment), its blocks go back. */
static void release_next(struct asys_segment_writer *w)
{
    uint64_t page = page_size();
    int owned;
    int fd = arena_fd(w->arena, &owned);
    if (fd >= 0) {
        fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                  (off_t)(w->next_file_offset + page), (off_t)(w->chunk_size - page));
        if (owned)
            close(fd);
    }
}

/* `may_hand`: the page helper may unmap the slots later (a closing writer
 * of a running process; never a fork's child, whose helper is gone). */
static void unmap_all(struct asys_segment_writer *w, int may_hand)
{
    if (w->map && !w->staged)
        unmap_chunk(w, w->map, w->chunk_size, may_hand);
    if (w->next_map)
        unmap_chunk(w, w->next_map, w->chunk_size, may_hand);
    w->next_map = NULL;
    if (w->header_map && !w->keep_header_map)
        munmap(w->header_map, page_size());
    w->map = w->chunk = NULL;
    w->header_map = NULL;
    w->header = NULL;
    w->cur = w->end = NULL;
}

void asys_segment_abandon(struct asys_segment_writer *w)
{
    int saved_errno = errno;
    unmap_all(w, 0);
    w->full = 1;
    errno = saved_errno;
}

/* A segment's current slot gives back the blocks it did not use beyond
 * `margin` bytes past what it wrote. */
static void release_slot_tail(const struct asys_segment_writer *w, uint64_t margin)
{
    uint64_t page = page_size();
    uint64_t used = round_up((uint64_t)(w->cur - w->map) + margin, page);
    uint64_t keep_from = w->reserved;
    if (used >= keep_from || keep_from - used < RELEASE_MIN)
        return;
    int owned;
    int fd = arena_fd(w->arena, &owned);
    if (fd < 0)
        return;
    fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)(w->file_offset + used),
              (off_t)(keep_from - used)); /* best effort: the space is only lent */
    if (owned)
        close(fd);
}

void asys_segment_release_unused(struct asys_segment_writer *w, uint64_t margin)
{
    int saved_errno = errno;
    if (w->arena && w->chunk && !w->staged)
        release_slot_tail(w, margin);
    errno = saved_errno;
}

int asys_segment_close(struct asys_segment_writer *w)
{
    int saved_errno = errno;
    int rc = 0;
    uint64_t used = asys_segment_used(w);
    if (w->header && used)
        __atomic_store_n(&w->header->data_end, used, __ATOMIC_RELEASE);
    if (w->staged && w->chunk)
        rc = finish_staged(w);
    else if (w->arena && w->chunk)
        release_slot_tail(w, 0);
    if (w->arena && w->next_map)
        release_next(w);
    unmap_all(w, 1);
    if (!w->arena && used && truncate(w->path, (off_t)used) != 0) {
        /* the reader scans to the first zero word; a longer file is harmless */
    }
    asys_segment_abandon(w);
    errno = saved_errno;
    return rc;
}

/* Fills the rest of the chunk with one PAD record so readers skip to the next
 * chunk (`end` may have been pulled in by a drop; the chunk's real end counts). */
static void pad_chunk_tail(struct asys_segment_writer *w)
{
    uint64_t rest = (uint64_t)(w->chunk + w->payload_size - w->cur);
    if (rest < 8)
        return;
    asys_rec_word *pad = (asys_rec_word *)w->cur;
    if (rest / 8 < ASYS_REC_EXTENDED) {
        asys_segment_commit(pad, ASYS_REC_WORD(ASYS_REC_PAD, rest / 8, 0, 0));
    } else {
        ((uint32_t *)w->cur)[2] = (uint32_t)rest;
        asys_segment_commit(pad, ASYS_REC_WORD(ASYS_REC_PAD, ASYS_REC_EXTENDED, 0, 0));
    }
    w->cur = w->chunk + w->payload_size;
}

/* The next chunk: the file's next chunk_size bytes, or a new arena slot. */
static void *next_chunk(struct asys_segment_writer *w, uint64_t *file_offset)
{
    if (w->arena) {
        int error;
        void *m = claim_next_slot(w, file_offset, &error);
        errno = error;
        return m ? m : MAP_FAILED;
    }
    void *m = MAP_FAILED;
    *file_offset = w->file_offset + w->chunk_size;
    /* Opened by path each time: the program may close or reuse any descriptor
     * (daemons close them all), and a reused one would be another file. */
    int fd = open(w->path, O_RDWR | O_CLOEXEC);
    int error = errno;
    if (fd >= 0) {
        int rc = extend_file(fd, *file_offset, w->chunk_size);
        if (rc == 0)
            m = mmap(NULL, w->chunk_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                     (off_t)*file_offset);
        error = rc ? -rc : errno;
        if (m != MAP_FAILED)
            no_read_ahead(m, w->chunk_size);
        close(fd);
    }
    errno = error;
    return m;
}

/* In an arena slot not reserved whole: reserves more of it (doubling) until
 * `need` bytes fit after the last record or the slot is reserved whole; 1
 * when they fit. */
static int reserve_more(struct asys_segment_writer *w, uint64_t need)
{
    int saved_errno = errno;
    int owned = 1;
    int fd = w->arena ? arena_fd(w->arena, &owned) : open(w->path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        w->grow_errno = errno;
    uint64_t was = w->reserved;
    while (fd >= 0 && w->reserved < w->chunk_size &&
           (uint64_t)(w->map + w->reserved - w->cur) < need + END_WORD) {
        uint64_t more =
            w->reserved < w->chunk_size - w->reserved ? w->reserved : w->chunk_size - w->reserved;
        int rc = extend_file(fd, w->file_offset + w->reserved, more);
        if (rc != 0) {
            w->grow_errno = -rc;
            break;
        }
        w->reserved += more;
    }
    if (fd >= 0 && owned)
        close(fd);
    if (w->reserved - was >= HAND_POPULATE_MIN)
        hand_pages(w, ASYS_PAGE_POPULATE, w->map + was, w->reserved - was);
    prepare_next(w);
    errno = saved_errno;
    w->end = reserved_end(w);
    return (uint64_t)(w->end - w->cur) >= need;
}

/* A growth that failed with `why` (0: unknown): drops until one succeeds. */
static int grow_failed(struct asys_segment_writer *w, int why)
{
    w->grow_failures++;
    w->grow_errno = why ? why : EIO;
    return 0;
}

/* The writer continues in its new chunk (w->chunk), at segment offset `offset`. */
static void enter_chunk(struct asys_segment_writer *w, uint64_t offset)
{
    w->grow_failures = 0;
    w->grow_errno = 0;
    w->chunk_offset = offset;
    w->cur = w->chunk;
    w->end = w->chunk + w->payload_size;
}

static int grow(struct asys_segment_writer *w, uint64_t need)
{
    if (w->grow_failures && w->pending_drop_records % GROW_RETRY_INTERVAL != 0)
        return 0;
    if (w->arena && w->reserved < w->chunk_size) {
        if (reserve_more(w, need)) {
            w->grow_failures = 0;
            w->grow_errno = 0;
            return 1;
        }
        if (w->reserved < w->chunk_size) {
            w->grow_failures++; /* the disk is full: drops until it is not */
            if (!w->grow_errno)
                w->grow_errno = ENOSPC;
            return 0;
        }
    }
    uint64_t next = w->chunk_offset + w->payload_size;
    if (next + w->payload_size > w->max_size) {
        w->full = 1;
        return 0;
    }
    int saved_errno = errno;
    if (w->staged) {
        pad_chunk_tail(w);
        int rc = next_staged_slot(w);
        errno = saved_errno;
        if (rc != 0)
            return grow_failed(w, -rc);
        enter_chunk(w, next);
        return 1;
    }
    uint64_t file_offset = w->next_file_offset;
    void *m = w->next_map;
    w->next_map = NULL;
    if (!m) {
        m = next_chunk(w, &file_offset);
        int why = errno;
        errno = saved_errno;
        if (m == MAP_FAILED)
            return grow_failed(w, why);
        populate_chunk(w, m, w->chunk_size);
    }
    w->reserved = w->chunk_size;
    pad_chunk_tail(w);
    unmap_chunk(w, w->map, w->chunk_size, 1);
    w->map = m;
    w->chunk = (uint8_t *)m + (w->arena ? ASYS_SLOT_HEADER_SIZE : 0);
    w->file_offset = file_offset;
    enter_chunk(w, next);
    prepare_next(w);
    errno = saved_errno;
    return 1;
}

void asys_segment_count_lost(struct asys_segment_header *h, uint32_t size,
                             enum asys_drop_cause cause)
{
    uint64_t *by_cause = cause == ASYS_DROP_REENTRY   ? &h->dropped_reentry
                         : cause == ASYS_DROP_BIG     ? &h->dropped_big
                         : cause == ASYS_DROP_NO_ROOM ? &h->dropped_no_room
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
        ((uint64_t)(w->end - w->cur) < worst && !grow(w, worst))) {
        enum asys_drop_cause cause = size > ASYS_REC_MAX_SIZE    ? ASYS_DROP_BIG
                                     : w->full || !w->grow_errno ? ASYS_DROP_FULL
                                                                 : ASYS_DROP_NO_ROOM;
        if (cause == ASYS_DROP_NO_ROOM && w->header)
            __atomic_store_n(&w->header->no_room_errno, (uint32_t)w->grow_errno, __ATOMIC_RELAXED);
        asys_segment_count_drop(w, size, stamp, cause);
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
