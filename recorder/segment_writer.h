/* Segment writer: one writer per file, one thread per writer.
 *
 * The hot path is a bump pointer into a MAP_SHARED chunk of the segment file:
 * no locks, no malloc, no syscalls, no open file descriptor.  Growing the file (a new chunk) is the
 * only slow path.  When the file cannot grow, records are dropped and counted
 * exactly in the mapped header; recording never blocks.
 *
 * Usage:
 *   uint32_t delta;
 *   struct asys_rec_x *r = asys_segment_reserve(w, sizeof *r, ticks, &delta);
 *   if (r) { fill r's body; asys_segment_commit(&r->header, ASYS_REC_WORD(...delta)); }
 */
#ifndef ASYS_SEGMENT_WRITER_H
#define ASYS_SEGMENT_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "asys_format.h"

#define ASYS_MIN_CHUNK_SIZE (2u * ASYS_REC_MAX_SIZE)

/* Exported from libasys-inject.so for the collectors preloaded in libraries
 * of their own (libasys-osrt.so, libasys-heap.so), and bound inside it
 * (its own calls take no PLT); seen from those libraries, defined elsewhere. */
#ifdef ASYS_INJECT_RUNTIME
#define ASYS_RUNTIME_API __attribute__((visibility("protected")))
#else
#define ASYS_RUNTIME_API __attribute__((visibility("default")))
#endif

/* Page work a writer may hand to another thread of its process, so that
 * the recording thread neither faults a fresh slot's pages in (one fault
 * per 4 KiB of a file mapping) nor unmaps a full slot (issue 30.1).  `take`
 * returns 1 when the job was taken (jobs run in the order taken), 0 when
 * the caller must do it itself; `drain` returns once every job taken so
 * far is done (after it, an inline munmap cannot race a populate). */
enum asys_page_job { ASYS_PAGE_POPULATE, ASYS_PAGE_UNMAP };
struct asys_page_helper {
    int (*take)(enum asys_page_job job, void *addr, uint64_t len);
    void (*drain)(void);
};

/* A session's arena (asys_format.h): where its file is, and its control
 * block, mapped shared for the life of the process (the program may close
 * any descriptor, so none is kept: each claim opens the file by path). */
struct asys_arena {
    /* the process's page helper (the injected library's), or NULL: the
     * writers fault and unmap their slots themselves */
    const struct asys_page_helper *helper;
    char path[1152];
    struct asys_arena_control *control;
    uint64_t slot_size;
    /* the descriptor the launcher leaves open for every process of the
     * session (ASYS_ARENA_FD), used when the arena cannot be opened by path
     * (no descriptor left, privileges dropped); -1 when there is none */
    int inherited_fd;
    uint64_t inherited_dev, inherited_ino;
    /* the descriptor attach opened, kept for the first claim, which takes it
     * (a process's first slot then costs no second open); -1 once taken or
     * dropped (asys_arena_drop_spare, asys_arena_detach) */
    int spare_fd;
    /* where a thread's first slot is asked to go (past_loader), 0: anywhere */
    uintptr_t first_slot_at;
};

/* The environment variable that names the inherited descriptor, as
 * "FD:DEV:INO" (the file it must still be). */
#define ASYS_ARENA_FD_ENV "ASYS_ARENA_FD"

/* Creates the arena of a session (the launcher, before the program starts). */
int asys_arena_create(const char *path, uint64_t slot_size);
/* Maps an existing arena's control block (by path, or through the inherited
 * descriptor of ASYS_ARENA_FD when the path cannot be opened).  Returns 0
 * or -errno. */
int asys_arena_attach(struct asys_arena *a, const char *path);
/* Closes the descriptor attach kept, when no claim took it. */
void asys_arena_drop_spare(struct asys_arena *a);
void asys_arena_detach(struct asys_arena *a);
/* The launcher's latest calibration pair in the control block (a seqlock:
 * only the launcher writes, every process may read). */
void asys_arena_publish_pair(struct asys_arena_control *c, uint64_t ticks, uint64_t monotonic_ns);
/* 0 with the pair; -1 when there is none yet or it is being written. */
int asys_arena_read_pair(const struct asys_arena_control *c, uint64_t *ticks,
                         uint64_t *monotonic_ns);

struct asys_segment_writer {
    /* hot */
    uint8_t *cur; /* next free byte of the current chunk */
    uint8_t *end; /* end of the current chunk */
    uint64_t last_ticks; /* timestamp of the last committed record */
    /* slow path */
    struct asys_segment_header *header; /* mapped for the writer's lifetime */
    void *header_map; /* that mapping (a page) */
    int header_in_map; /* header_map is the first page of map, until that chunk is unmapped */
    int keep_header_map; /* the process's anchor: closing the writer leaves it mapped */
    uint8_t *map; /* mapping of the current chunk (chunk_size bytes) */
    uint8_t *chunk; /* where its records go: after an arena slot's header */
    uint64_t chunk_offset; /* logical offset of the chunk in the segment */
    uint64_t chunk_size; /* bytes mapped per chunk (an arena slot) */
    uint64_t payload_size; /* bytes of records per chunk */
    uint64_t max_size;
    /* in an arena: its slots, and this segment's trailer */
    const struct asys_arena *arena;
    uint64_t file_offset; /* where the current chunk's mapping starts in the file */
    uint64_t reserved; /* bytes of the current slot whose blocks are reserved */
    uint8_t *next_map; /* the next slot, claimed when this one was begun (or NULL) */
    uint64_t next_file_offset; /* where it lies in the file */
    int handed_pages; /* a job of this writer went to the arena's page helper */
    uint64_t header_file_offset; /* where the segment header lies in the file */
    struct asys_slot_header trailer;
    int full; /* max_size reached: every further record is a drop */
    unsigned grow_failures; /* consecutive failed growths (I/O errors) */
    int grow_errno; /* why the last one failed */
    uint64_t pending_drop_records; /* lost since the last DROP record */
    uint64_t pending_drop_bytes;
    uint64_t first_drop_ticks;
    char path[1152]; /* reopened for each chunk; no descriptor is kept */
    /* staged (asys_segment_open_staged): the caller's buffer of one slot that
     * takes the records instead of a mapping, and the segment header */
    uint8_t *staged;
    struct asys_segment_header staged_header;
};

/* Creates `path` (must not exist) and maps its first chunk.  `header` supplies
 * every field except magic, version, size and counters.  Returns 0 or -errno. */
int asys_segment_open(struct asys_segment_writer *w, const char *path,
                      const struct asys_segment_header *header, uint64_t chunk_size,
                      uint64_t max_size);
/* The same in a slot of `arena` (chunks are its slots). */
int asys_segment_open_arena(struct asys_segment_writer *w, const struct asys_arena *arena,
                            const struct asys_segment_header *header, uint64_t max_size);

/* The same staged in `buffer` (the arena's slot_size bytes, the caller's
 * until close): for a writer that makes its segment at once, as the
 * launcher does at finalize.  A slot is claimed and written with one call
 * when the buffer is full and at close: no mapping to make, fault in and
 * tear down per segment.  Until close nothing of it is in the arena. */
int asys_segment_open_staged(struct asys_segment_writer *w, const struct asys_arena *arena,
                             const struct asys_segment_header *header, uint64_t max_size,
                             uint8_t *buffer);

/* Writes data_end, unmaps and closes.  A file of its own is cut to its used
 * size.  0, or -errno when a staged writer's last slot could not be written
 * (its records are lost; those of a mapped writer are already in the file). */
int asys_segment_close(struct asys_segment_writer *w);

/* In an arena: gives the disk blocks of the current slot back beyond
 * `margin` bytes after the last record (the writer stays open: what it
 * writes within the margin still has its blocks). */
void asys_segment_release_unused(struct asys_segment_writer *w, uint64_t margin);

/* Forgets a writer inherited across fork without touching the file. */
void asys_segment_abandon(struct asys_segment_writer *w);

/* Slow paths (segment_writer.c). */
ASYS_RUNTIME_API void *asys_segment_reserve_slow(struct asys_segment_writer *w, uint32_t size,
                                                 uint64_t ticks, uint32_t *delta);
void asys_segment_count_drop(struct asys_segment_writer *w, uint32_t size, uint64_t ticks,
                             enum asys_drop_cause cause);
/* A drop counted in the header only (no DROP record follows): re-entry. */
ASYS_RUNTIME_API void asys_segment_count_lost(struct asys_segment_header *h, uint32_t size,
                                              enum asys_drop_cause cause);

/* Reserves `size` bytes (a multiple of 8) for a record stamped `ticks` and
 * sets *delta for its header.  NULL when the record had to be dropped (the
 * drop is already counted). */
static inline void *asys_segment_reserve(struct asys_segment_writer *w, uint32_t size,
                                         uint64_t ticks, uint32_t *delta)
{
    uint64_t d = ticks - w->last_ticks;
    if (__builtin_expect(d <= ASYS_REC_MAX_DELTA && (size_t)(w->end - w->cur) >= size, 1)) {
        void *p = w->cur;
        w->cur += size;
        w->last_ticks = ticks;
        *delta = (uint32_t)d;
        return p;
    }
    return asys_segment_reserve_slow(w, size, ticks, delta);
}

/* Publishes a record: its header word is stored last, so a reader of a
 * crashed process never sees a half-written record. */
static inline void asys_segment_commit(asys_rec_word *header, asys_rec_word word)
{
    __atomic_store_n(header, word, __ATOMIC_RELEASE);
}

/* Bytes used so far (header included). */
static inline uint64_t asys_segment_used(const struct asys_segment_writer *w)
{
    return w->chunk ? w->chunk_offset + (uint64_t)(w->cur - w->chunk) : 0;
}

#endif
