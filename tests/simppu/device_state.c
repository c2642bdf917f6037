/* The shared device state (device_state.h): a ring of recent work per
 * device in one MAP_SHARED file.  Writers claim a slot with an atomic add
 * and publish it with its sequence number; readers skip slots being
 * written.  Counter ownership is an fcntl lock on a byte per device, so it
 * dies with its owner. */
#define _GNU_SOURCE
#include "device_state.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define RING 8192
#define STATE_MAGIC 0x5354505055504d53ull /* "SMPUPPTS" */

struct work {
    uint64_t seq; /* slot index + 1 once written; 0 while being written */
    uint64_t start, end, bytes;
    uint32_t kind, reserved;
};

struct device_ring {
    uint64_t head;
    uint64_t reserved[7];
    struct work work[RING];
};

struct state_file {
    uint64_t magic;
    uint64_t reserved[7];
    struct device_ring devices[SIMPPU_STATE_DEVICES];
};

static struct {
    pthread_once_t once;
    struct state_file *map;
    int fd;
} state = {.once = PTHREAD_ONCE_INIT, .fd = -1};

static void state_open(void)
{
    char path[512];
    const char *given = getenv("SIMPPU_STATE");
    const char *tmp = getenv("TMPDIR");
    if (given && *given)
        snprintf(path, sizeof path, "%s", given);
    else
        snprintf(path, sizeof path, "%s/simppu-state-%u", tmp && *tmp ? tmp : "/tmp",
                 (unsigned)getuid());
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    if (ftruncate(fd, sizeof(struct state_file)) != 0) { /* sparse: pages appear when used */
        close(fd);
        return;
    }
    void *m = mmap(NULL, sizeof(struct state_file), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
        close(fd);
        return;
    }
    state.map = m;
    state.fd = fd; /* kept: it carries the counter locks */
    uint64_t zero = 0;
    __atomic_compare_exchange_n(&state.map->magic, &zero, STATE_MAGIC, 0, __ATOMIC_ACQ_REL,
                                __ATOMIC_ACQUIRE);
}

static struct device_ring *ring_of(int physical)
{
    pthread_once(&state.once, state_open);
    if (!state.map || physical < 0 || physical >= SIMPPU_STATE_DEVICES ||
        __atomic_load_n(&state.map->magic, __ATOMIC_ACQUIRE) != STATE_MAGIC)
        return NULL;
    return &state.map->devices[physical];
}

void simppu_state_prepare(void)
{
    pthread_once(&state.once, state_open);
}

void simppu_state_record(int physical, enum simppu_work_kind kind, uint64_t start, uint64_t end,
                         uint64_t bytes)
{
    struct device_ring *r = ring_of(physical);
    if (!r)
        return;
    uint64_t index = __atomic_fetch_add(&r->head, 1, __ATOMIC_ACQ_REL);
    struct work *w = &r->work[index % RING];
    __atomic_store_n(&w->seq, 0, __ATOMIC_RELEASE);
    w->start = start;
    w->end = end > start ? end : start;
    w->bytes = bytes;
    w->kind = (uint32_t)kind;
    __atomic_store_n(&w->seq, index + 1, __ATOMIC_RELEASE);
}

int simppu_state_busy(int physical, uint64_t t0, uint64_t t1, struct simppu_busy *out)
{
    memset(out, 0, sizeof *out);
    struct device_ring *r = ring_of(physical);
    if (!r)
        return -1;
    uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
    uint64_t first = head > RING ? head - RING : 0;
    for (uint64_t i = first; i < head; i++) {
        const struct work *w = &r->work[i % RING];
        if (__atomic_load_n(&w->seq, __ATOMIC_ACQUIRE) != i + 1)
            continue;
        struct work copy = *w;
        if (__atomic_load_n(&w->seq, __ATOMIC_ACQUIRE) != i + 1 || !copy.kind ||
            copy.kind >= SIMPPU_WORK_KIND_COUNT)
            continue;
        uint64_t from = copy.start > t0 ? copy.start : t0;
        uint64_t to = copy.end < t1 ? copy.end : t1;
        if (copy.kind == SIMPPU_WORK_KERNEL && copy.start >= t0 && copy.start < t1)
            out->kernels_started++;
        if (to <= from)
            continue;
        double share = (double)(to - from);
        out->active_ns[copy.kind] += share;
        if (copy.end > copy.start)
            out->bytes[copy.kind] += (double)copy.bytes * share / (double)(copy.end - copy.start);
    }
    return 0;
}

static int lock_byte(int physical, short type)
{
    struct flock l = {.l_type = type, .l_whence = SEEK_SET, .l_start = physical, .l_len = 1};
    return fcntl(state.fd, F_OFD_SETLK, &l);
}

int simppu_state_claim_counters(int physical)
{
    if (!ring_of(physical))
        return 0; /* no shared state: nobody else can hold them either */
    return lock_byte(physical, F_WRLCK) == 0 ? 0 : -1;
}

void simppu_state_release_counters(int physical)
{
    if (ring_of(physical))
        lock_byte(physical, F_UNLCK);
}
