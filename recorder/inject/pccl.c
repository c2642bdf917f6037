/* PCCL tracing (-t pccl): libasys-inject.so is NCCL's profiler plugin.
 *
 * The launcher points NCCL_PROFILER_PLUGIN at this library; NCCL dlopens
 * that path, which returns the library LD_PRELOAD already loaded (glibc
 * matches the file), so the plugin shares the threads' segments, clock and
 * capture window with the other collectors.  NCCL 2.28 takes ncclProfiler_v5;
 * older releases find _v4, _v3 or _v2 (each converted to one event form here).
 *
 * Each communicator's context (init) owns two fixed rings of event slots,
 * mapped at init, one for the events of the program's threads and one for
 * the proxy's: a started event takes a slot (one atomic add and one
 * compare-and-swap on its ring), state changes write its times into the
 * slot, and the stop writes one record into the stopping thread's segment
 * and frees the slot.  Nothing allocates, locks or prints on those paths;
 * errno is preserved; an event that cannot be recorded is counted by cause
 * (COMM_END).  Slots are taken in ring order so that a stopped event's slot
 * is reused as late as possible, and a handle carries its slot's take count:
 * NCCL names stopped events as parents (a CollApi of its Coll, a Coll of its
 * ProxyOps, long after when the host runs ahead of the device).
 *
 * The user's own plugin, when NCCL_PROFILER_PLUGIN named one, is loaded
 * here and called with every event it asked for (pccl_chain.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "inject.h"
#include "pccl_internal.h"

#define SLOT_MAGIC 0x70636c73u /* "pcls" */
#define DEFAULT_SLOTS 4096u
#define MIN_SLOTS 16u
#define MAX_SLOTS 65536u
#define ALLOC_TRIES 8

enum slot_state { SLOT_FREE = 0, SLOT_FILLING = 1, SLOT_LIVE = 2, SLOT_CLOSING = 3 };

enum ev_kind {
    K_GROUP_API,
    K_COLL_API,
    K_P2P_API,
    K_KERNEL_LAUNCH,
    K_GROUP,
    K_COLL,
    K_P2P,
    K_PROXY_OP,
    K_PROXY_STEP,
    K_PROXY_CTRL,
    K_KERNEL_CH,
    K_NET,
};

struct pccl_comm;

struct pccl_slot {
    uint32_t magic;
    uint32_t state; /* enum slot_state, atomic */
    uint8_t kind; /* enum ev_kind */
    uint8_t channel;
    uint8_t is_send;
    uint8_t recorded; /* 0: started outside a capture window, nothing written */
    uint32_t count32; /* ProxyCtrl: states; NetPlugin: updates */
    uint32_t gen; /* takes so far: a handle carries its low bits (HANDLE_TAG) */
    uint64_t id;
    uint64_t parent_id;
    uint64_t start_ticks;
    struct pccl_comm *comm;
    void *chained; /* the user plugin's handle of the event */
    union {
        struct {
            uint64_t count, stream, start_stop, end_start;
            uint32_t func, datatype;
            int32_t root, depth;
            uint8_t captured;
        } api;
        struct {
            uint64_t group_id, seq, count;
            uint32_t func, datatype, algo, proto;
            int32_t rank, root_or_peer;
            uint8_t channels, warps;
        } task;
        struct {
            uint64_t in_progress;
            uint32_t pid;
            int32_t rank, peer, steps, chunk;
        } op;
        struct {
            uint64_t ticks[3]; /* the direction's three states */
            uint64_t trans_size;
            int32_t step;
        } step;
        struct {
            uint64_t ticks;
            int32_t appended;
            uint32_t last_state;
        } ctrl;
        struct {
            uint64_t start, stop, stop_state;
        } kch;
        struct {
            int64_t plugin_id;
            uint64_t last_update;
            int32_t step;
        } net;
    } u;
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct pccl_slot) == 128, "a slot is two cache lines");

struct pccl_counters {
    uint64_t no_slot, reentry, bad_handle, unknown, unfinished;
};

/* A ring of slots.  A context has two: the events of the program's threads
 * (API calls, groups, tasks: the parents named long after they stopped,
 * when the host runs ahead of the device) and the proxy's (ops, steps,
 * control, kernel channels, network), so that a burst of proxy steps does
 * not reuse a task's slot before its ops and channels have named it, and
 * neither thread writes the other's ring position. */
struct pccl_ring {
    uint64_t next_seq __attribute__((aligned(64))); /* atomic: the ring position */
    uint64_t wasted; /* positions whose slot was taken (events = next_seq - wasted) */
    struct pccl_slot *slots;
};
enum { RING_APP, RING_PROXY, RINGS };

struct pccl_comm {
    struct pccl_ring rings[RINGS];
    struct pccl_counters counts __attribute__((aligned(64)));
    uint32_t number; /* PCCL_COMM.comm */
    int version;
    uint32_t slot_mask;
    int live; /* between init and finalize (registry lock) */
    int chained; /* the user's plugin has a context for this communicator */
    int hash_known;
    uint32_t pid; /* the process image that created it (a fork child leaves it) */
    size_t map_size;
    void *user_ctx; /* the user plugin's context */
    int user_mask; /* the events it asked for */
    struct pccl_comm *next; /* registry of live contexts */
    struct pccl_comm *next_free; /* finalized, kept for reuse (never unmapped) */
    struct pccl_slot slots[];
};

ASYS_START_DATA static struct {
    int enabled;
    uint32_t slot_count;
    uint32_t next_number; /* atomic */
    pthread_mutex_t lock; /* init, finalize, exit */
    struct pccl_comm *comms, *free_comms;
    /* the user's plugin: loaded at the first init */
    int chain_wanted;
    int chain_tried;
    struct pccl_user user;
    char chain_spec[1024];
    /* bad handles without a context to count them in */
    uint64_t orphan_bad_handles;
} pccl = {.lock = PTHREAD_MUTEX_INITIALIZER};

int asys_pccl_init(void)
{
    uint64_t n = asys_env_u64("ASYS_PCCL_SLOTS", DEFAULT_SLOTS);
    uint32_t slots = MIN_SLOTS;
    while (slots < n && slots < MAX_SLOTS)
        slots <<= 1;
    pccl.slot_count = slots;
    /* ASYS_PCCL_CHAIN: the user's NCCL_PROFILER_PLUGIN ("": NCCL's default name) */
    const char *chain = getenv("ASYS_PCCL_CHAIN");
    if (chain && strlen(chain) < sizeof pccl.chain_spec) {
        strcpy(pccl.chain_spec, chain);
        pccl.chain_wanted = 1;
    }
    pccl.enabled = 1;
    return 0;
}

/* ---- slots -------------------------------------------------------------------- */

static inline void count(uint64_t *counter)
{
    __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

/* Event numbers: comm << 40 | ring << 39 | sequence in the ring. */
#define RING_SHIFT (ASYS_PCCL_COMM_SHIFT - 1)

static struct pccl_slot *slot_take(struct pccl_comm *c, int ring)
{
    struct pccl_ring *r = &c->rings[ring];
    for (int i = 0; i < ALLOC_TRIES; i++) {
        uint64_t seq = __atomic_fetch_add(&r->next_seq, 1, __ATOMIC_RELAXED);
        struct pccl_slot *s = &r->slots[seq & c->slot_mask];
        uint32_t expected = SLOT_FREE;
        if (__atomic_compare_exchange_n(&s->state, &expected, SLOT_FILLING, 0, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED)) {
            s->id = ((uint64_t)c->number << ASYS_PCCL_COMM_SHIFT) | ((uint64_t)ring << RING_SHIFT) |
                    ((seq + 1) & ((1ull << RING_SHIFT) - 1));
            __atomic_store_n(&s->gen, s->gen + 1, __ATOMIC_RELEASE);
            return s;
        }
        count(&r->wasted); /* the slow path only: no shared count per event */
    }
    count(&c->counts.no_slot);
    return NULL;
}

/* The slot keeps its id and its user handle until it is taken again: NCCL
 * names a stopped event as a parent (a Coll of its ProxyOps). */
static inline void slot_release(struct pccl_slot *s)
{
    __atomic_store_n(&s->state, SLOT_FREE, __ATOMIC_RELEASE);
}

/* Handles are slot addresses (64-byte aligned) with the low bits of the
 * slot's take count: a handle to an event whose slot was taken again since
 * (a parent NCCL names long after it stopped) is told from the new event's. */
#define HANDLE_TAG 63u

static inline void *handle_of(struct pccl_slot *s)
{
    return (void *)((uintptr_t)s | (s->gen & HANDLE_TAG));
}

/* The slot of a handle NCCL gave back: ours when it carries the magic (every
 * handle we return points into a context that is never unmapped); *stale
 * when its slot was taken again since. */
static inline struct pccl_slot *slot_at(void *handle, int *stale)
{
    struct pccl_slot *s = (struct pccl_slot *)((uintptr_t)handle & ~(uintptr_t)HANDLE_TAG);
    if (!s || s->magic != SLOT_MAGIC)
        return NULL;
    *stale = ((uintptr_t)handle & HANDLE_TAG) !=
             (__atomic_load_n(&s->gen, __ATOMIC_ACQUIRE) & HANDLE_TAG);
    return s;
}

/* The live or stopped event of a handle; NULL when not ours or stale. */
static inline struct pccl_slot *slot_of(void *handle)
{
    int stale = 0;
    struct pccl_slot *s = slot_at(handle, &stale);
    return s && !stale ? s : NULL;
}

static inline uint64_t parent_id_of(void *parent)
{
    struct pccl_slot *p = slot_of(parent);
    return p ? __atomic_load_n(&p->id, __ATOMIC_RELAXED) : 0;
}

static inline void *parent_chained(void *parent)
{
    struct pccl_slot *p = slot_of(parent);
    return p ? p->chained : NULL;
}

/* ---- records -------------------------------------------------------------------- */

static void fill_event(struct asys_pccl_event *ev, const struct pccl_slot *s)
{
    ev->start_ticks = s->start_ticks;
    ev->event_id = s->id;
    ev->parent_id = s->parent_id;
}

/* A state's time after the start, as delta + 1 (0: not seen). */
static inline uint32_t delta(uint64_t start, uint64_t ticks)
{
    if (!ticks)
        return 0;
    uint64_t d = ticks > start ? ticks - start : 0;
    return d >= 0xfffffffeu ? 0xffffffffu : (uint32_t)d + 1;
}

#define RESERVE(type, arg) \
    type *r = asys_segment_reserve(&t->seg, sizeof(type), now, &delta_ticks); \
    if (!r) \
        break; \
    header = &r->header; \
    word = ASYS_REC_WORD(rec_type, sizeof(type) / 8, (arg) | flags, 0)

/* Writes the event of slot `s` (claimed: CLOSING) stamped `now`; `flags`
 * goes into the header's arg (ASYS_PCCL_UNFINISHED).  Every field is
 * stored: a record is reserved from fresh memory, never cleared first. */
static void write_event(struct pccl_slot *s, uint64_t now, unsigned flags)
{
    struct asys_thread *t = asys_thread_enter_at(now);
    if (!t) {
        count(&s->comm->counts.reentry);
        return;
    }
    uint32_t delta_ticks = 0;
    asys_rec_word *header = NULL, word = 0;
    unsigned rec_type = 0;
    uint64_t start = s->start_ticks;
    switch (s->kind) {
    case K_GROUP_API: {
        rec_type = ASYS_REC_PCCL_GROUP_API;
        RESERVE(struct asys_rec_pccl_group_api, s->u.api.captured ? 1u : 0u);
        fill_event(&r->ev, s);
        r->start_stop_delta = delta(start, s->u.api.start_stop);
        r->end_start_delta = delta(start, s->u.api.end_start);
        r->depth = s->u.api.depth;
        r->reserved = 0;
        break;
    }
    case K_COLL_API:
    case K_P2P_API: {
        rec_type = ASYS_REC_PCCL_CALL;
        RESERVE(struct asys_rec_pccl_call,
                (s->kind == K_COLL_API ? ASYS_PCCL_COLL_API : ASYS_PCCL_P2P_API) |
                    (s->u.api.captured ? 0x100u : 0u));
        fill_event(&r->ev, s);
        r->count = s->u.api.count;
        r->stream = s->u.api.stream;
        r->func_string_id = s->u.api.func;
        r->datatype_string_id = s->u.api.datatype;
        r->root = s->u.api.root;
        r->reserved = 0;
        break;
    }
    case K_KERNEL_LAUNCH: {
        rec_type = ASYS_REC_PCCL_KERNEL_LAUNCH;
        RESERVE(struct asys_rec_pccl_kernel_launch, 0u);
        fill_event(&r->ev, s);
        r->stream = s->u.api.stream;
        break;
    }
    case K_GROUP: {
        rec_type = ASYS_REC_PCCL_GROUP;
        RESERVE(struct asys_rec_pccl_group, 0u);
        fill_event(&r->ev, s);
        break;
    }
    case K_COLL:
    case K_P2P: {
        rec_type = ASYS_REC_PCCL_TASK;
        RESERVE(struct asys_rec_pccl_task,
                s->kind == K_COLL ? ASYS_PCCL_TASK_COLL : ASYS_PCCL_TASK_P2P);
        fill_event(&r->ev, s);
        r->group_id = s->u.task.group_id;
        r->seq_number = s->u.task.seq;
        r->count = s->u.task.count;
        r->func_string_id = s->u.task.func;
        r->datatype_string_id = s->u.task.datatype;
        r->algo_string_id = s->u.task.algo;
        r->proto_string_id = s->u.task.proto;
        r->rank = s->u.task.rank;
        r->root_or_peer = s->u.task.root_or_peer;
        r->channels = s->u.task.channels;
        r->warps = s->u.task.warps;
        r->reserved = 0;
        r->reserved2 = 0;
        break;
    }
    case K_PROXY_OP: {
        rec_type = ASYS_REC_PCCL_PROXY_OP;
        RESERVE(struct asys_rec_pccl_proxy_op, 0u);
        fill_event(&r->ev, s);
        r->in_progress_delta = delta(start, s->u.op.in_progress);
        r->pid = s->u.op.pid;
        r->rank = s->u.op.rank;
        r->peer = s->u.op.peer;
        r->steps = s->u.op.steps;
        r->chunk_size = s->u.op.chunk;
        r->channel = s->channel;
        r->is_send = s->is_send;
        r->reserved = 0;
        r->reserved2 = 0;
        break;
    }
    case K_PROXY_STEP: {
        rec_type = ASYS_REC_PCCL_PROXY_STEP;
        RESERVE(struct asys_rec_pccl_proxy_step, 0u);
        r->start_ticks = start;
        r->op_id = s->parent_id;
        for (int i = 0; i < 3; i++)
            r->state_delta[i] = delta(start, s->u.step.ticks[i]);
        r->trans_size =
            s->u.step.trans_size > 0xffffffffu ? 0xffffffffu : (uint32_t)s->u.step.trans_size;
        r->step = s->u.step.step;
        r->channel = s->channel;
        r->is_send = s->is_send;
        r->reserved = 0;
        break;
    }
    case K_PROXY_CTRL: {
        rec_type = ASYS_REC_PCCL_PROXY_CTRL;
        RESERVE(struct asys_rec_pccl_proxy_ctrl, s->u.ctrl.last_state);
        fill_event(&r->ev, s);
        r->state_delta = delta(start, s->u.ctrl.ticks);
        r->appended = s->u.ctrl.appended;
        r->states = s->count32;
        r->reserved = 0;
        break;
    }
    case K_KERNEL_CH: {
        rec_type = ASYS_REC_PCCL_KERNEL_CH;
        RESERVE(struct asys_rec_pccl_kernel_ch, 0u);
        fill_event(&r->ev, s);
        r->ptimer_start = s->u.kch.start;
        r->ptimer_stop = s->u.kch.stop;
        r->stop_state_delta = delta(start, s->u.kch.stop_state);
        r->channel = s->channel;
        memset(r->reserved, 0, sizeof r->reserved);
        break;
    }
    case K_NET: {
        rec_type = ASYS_REC_PCCL_NET;
        RESERVE(struct asys_rec_pccl_net, 0u);
        fill_event(&r->ev, s);
        r->plugin_id = s->u.net.plugin_id;
        r->last_update_delta = delta(start, s->u.net.last_update);
        r->updates = s->count32;
        r->step = s->u.net.step;
        r->reserved = 0;
        break;
    }
    }
    if (header)
        asys_segment_commit(header, word | ((uint64_t)delta_ticks << 32));
    asys_thread_leave();
}

/* A communicator's own records (COMM, COMM_END, STATUS), stamped now. */
static void write_comm(struct pccl_comm *c, uint64_t hash, int rank, int nranks, int nnodes,
                       const char *name, int mask)
{
    uint64_t now = asys_now();
    struct asys_thread *t = asys_thread_enter_at(now);
    if (!t)
        return;
    uint32_t name_id = name && *name ? asys_intern(t, name) : 0;
    uint32_t delta;
    struct asys_rec_pccl_comm *r = asys_segment_reserve(&t->seg, sizeof *r, now, &delta);
    if (r) {
        r->comm_hash = hash;
        r->comm = c->number;
        r->rank = rank;
        r->nranks = nranks;
        r->nnodes = nnodes;
        r->name_string_id = name_id;
        r->event_mask = (uint32_t)mask;
        asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_PCCL_COMM, sizeof *r / 8,
                                                      (unsigned)c->version, delta));
    }
    asys_thread_leave();
}

static void write_comm_end(struct pccl_comm *c, int finalized)
{
    uint64_t now = asys_now();
    struct asys_thread *t = asys_thread_enter_at(now);
    if (!t)
        return;
    uint32_t delta;
    struct asys_rec_pccl_comm_end *r = asys_segment_reserve(&t->seg, sizeof *r, now, &delta);
    if (r) {
        /* counters only grow: an increment racing with this is seen or not */
        r->comm = c->number;
        r->finalized = (uint32_t)finalized;
        r->events = 0;
        for (int i = 0; i < RINGS; i++)
            r->events += __atomic_load_n(&c->rings[i].next_seq, __ATOMIC_RELAXED) -
                         __atomic_load_n(&c->rings[i].wasted, __ATOMIC_RELAXED);
        r->dropped_no_slot = __atomic_load_n(&c->counts.no_slot, __ATOMIC_RELAXED);
        r->dropped_reentry = __atomic_load_n(&c->counts.reentry, __ATOMIC_RELAXED);
        r->dropped_bad_handle = __atomic_load_n(&c->counts.bad_handle, __ATOMIC_RELAXED) +
                                __atomic_exchange_n(&pccl.orphan_bad_handles, 0, __ATOMIC_RELAXED);
        r->dropped_unknown = __atomic_load_n(&c->counts.unknown, __ATOMIC_RELAXED);
        r->unfinished = __atomic_load_n(&c->counts.unfinished, __ATOMIC_RELAXED);
        asys_segment_commit(&r->header,
                            ASYS_REC_WORD(ASYS_REC_PCCL_COMM_END, sizeof *r / 8, 0, delta));
    }
    asys_thread_leave();
}

static void write_status(unsigned status, uint32_t version, const char *text)
{
    uint64_t now = asys_now();
    struct asys_thread *t = asys_thread_enter_at(now);
    if (!t)
        return;
    size_t length = strnlen(text, ASYS_PCCL_STATUS_TEXT_MAX);
    uint32_t size = (uint32_t)(sizeof(struct asys_rec_pccl_status) + ((length + 7) & ~(size_t)7));
    uint32_t delta;
    struct asys_rec_pccl_status *r = asys_segment_reserve(&t->seg, size, now, &delta);
    if (r) {
        memset(r, 0, size);
        r->version = version;
        r->text_length = (uint32_t)length;
        memcpy(r + 1, text, length);
        asys_segment_commit(&r->header,
                            ASYS_REC_WORD(ASYS_REC_PCCL_STATUS, size / 8, status, delta));
    }
    asys_thread_leave();
}

/* Every event of `c` still open, written as unfinished (finalize, exit). */
static void flush_open(struct pccl_comm *c)
{
    uint64_t now = asys_now();
    for (uint32_t i = 0; i < RINGS * (c->slot_mask + 1); i++) {
        struct pccl_slot *s = &c->rings[0].slots[i]; /* the rings lie one after the other */
        uint32_t expected = SLOT_LIVE;
        if (!__atomic_compare_exchange_n(&s->state, &expected, SLOT_CLOSING, 0, __ATOMIC_ACQUIRE,
                                         __ATOMIC_RELAXED))
            continue;
        if (s->recorded) {
            count(&c->counts.unfinished);
            write_event(s, now, ASYS_PCCL_UNFINISHED);
        }
        slot_release(s);
    }
}

/* ---- contexts ----------------------------------------------------------------- */

static struct pccl_comm *comm_new(int version)
{
    size_t size =
        sizeof(struct pccl_comm) + RINGS * (size_t)pccl.slot_count * sizeof(struct pccl_slot);
    pthread_mutex_lock(&pccl.lock);
    struct pccl_comm *c = pccl.free_comms;
    if (c && c->map_size == size) {
        pccl.free_comms = c->next_free;
    } else {
        void *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        c = map == MAP_FAILED ? NULL : map;
        if (c) {
            c->map_size = size;
            c->slot_mask = pccl.slot_count - 1;
            for (int r = 0; r < RINGS; r++)
                c->rings[r].slots = c->slots + (size_t)r * pccl.slot_count;
            for (uint32_t i = 0; i < RINGS * pccl.slot_count; i++)
                c->slots[i].magic = SLOT_MAGIC;
        }
    }
    if (c) {
        memset(&c->counts, 0, sizeof c->counts);
        for (int r = 0; r < RINGS; r++)
            c->rings[r].next_seq = c->rings[r].wasted = 0;
        c->number = __atomic_add_fetch(&pccl.next_number, 1, __ATOMIC_RELAXED);
        c->version = version;
        c->user_ctx = NULL;
        c->user_mask = 0;
        c->chained = 0;
        c->hash_known = 0;
        c->pid = asys_proc.pid;
        c->live = 1;
        c->next = pccl.comms;
        pccl.comms = c;
    }
    pthread_mutex_unlock(&pccl.lock);
    return c;
}

static void comm_retire(struct pccl_comm *c)
{
    pthread_mutex_lock(&pccl.lock);
    for (struct pccl_comm **pp = &pccl.comms; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    c->live = 0;
    c->next_free = pccl.free_comms;
    pccl.free_comms = c;
    pthread_mutex_unlock(&pccl.lock);
}

/* The user's plugin, loaded once, at the first init (its status recorded). */
static void chain_load_once(void)
{
    if (!pccl.chain_wanted)
        return;
    pthread_mutex_lock(&pccl.lock);
    int first = !pccl.chain_tried;
    pccl.chain_tried = 1;
    char why[ASYS_PCCL_STATUS_TEXT_MAX] = "";
    int rc = 0;
    if (first) {
        /* loading runs the library's constructors: not the program's calls */
        int was_busy = asys_tls_busy;
        asys_tls_busy = 1;
        rc = pccl_user_load(&pccl.user, pccl.chain_spec, (const void *)asys_pccl_init, why,
                            sizeof why);
        asys_tls_busy = was_busy;
    }
    pthread_mutex_unlock(&pccl.lock);
    if (!first)
        return;
    if (rc == 0)
        write_status(ASYS_PCCL_CHAINED, (uint32_t)pccl.user.version, pccl.user.name);
    else if (pccl.chain_spec[0]) /* the default name missing is no news */
        write_status(ASYS_PCCL_CHAIN_FAILED, 0, why);
}

/* ---- the plugin's entry points -------------------------------------------------- */

static int kind_of(uint64_t type)
{
    switch (type) {
    case PCCL_EV_GROUP_API:
        return K_GROUP_API;
    case PCCL_EV_COLL_API:
        return K_COLL_API;
    case PCCL_EV_P2P_API:
        return K_P2P_API;
    case PCCL_EV_KERNEL_LAUNCH:
        return K_KERNEL_LAUNCH;
    case PCCL_EV_GROUP:
        return K_GROUP;
    case PCCL_EV_COLL:
        return K_COLL;
    case PCCL_EV_P2P:
        return K_P2P;
    case PCCL_EV_PROXY_OP:
        return K_PROXY_OP;
    case PCCL_EV_PROXY_STEP:
        return K_PROXY_STEP;
    case PCCL_EV_PROXY_CTRL:
        return K_PROXY_CTRL;
    case PCCL_EV_KERNEL_CH:
        return K_KERNEL_CH;
    case PCCL_EV_NET:
        return K_NET;
    default:
        return -1;
    }
}

static inline uint32_t intern(struct asys_thread *t, const char *text)
{
    return t && text ? asys_intern(t, text) : 0;
}

/* The user plugin's start, with the parents as its own handles. */
static void chain_start(struct pccl_comm *c, struct pccl_slot *s, const struct pccl_descr_v5 *d)
{
    struct pccl_descr_v5 copy = *d;
    copy.parent = parent_chained(d->parent);
    if (d->type == PCCL_EV_COLL)
        copy.coll.parent_group = parent_chained(d->coll.parent_group);
    else if (d->type == PCCL_EV_P2P)
        copy.p2p.parent_group = parent_chained(d->p2p.parent_group);
    pccl_user_start(&pccl.user, c->user_ctx, &s->chained, &copy);
}

/* startEvent, in the v5 form every version is converted to. */
static void start_event(struct pccl_comm *c, void **handle, const struct pccl_descr_v5 *d)
{
    *handle = NULL;
    if (!c)
        return;
    int kind = kind_of(d->type);
    if (kind < 0) {
        count(&c->counts.unknown);
        return;
    }
    int recorded = asys_capturing();
    int chain = c->chained && (d->type & (uint64_t)(unsigned)c->user_mask);
    if (!recorded && !chain)
        return;
    struct pccl_slot *s = slot_take(c, kind >= K_PROXY_OP ? RING_PROXY : RING_APP);
    if (!s)
        return;
    s->kind = (uint8_t)kind;
    s->recorded = (uint8_t)recorded;
    s->comm = c;
    s->chained = NULL;
    s->count32 = 0;
    s->channel = 0;
    s->is_send = 0;
    s->start_ticks = asys_now();
    s->parent_id = parent_id_of(d->parent);
    memset(&s->u, 0, sizeof s->u);
    /* names are interned now, on the thread that knows them */
    struct asys_thread *t = NULL;
    if (recorded && (kind == K_COLL_API || kind == K_P2P_API || kind == K_COLL || kind == K_P2P))
        t = asys_thread_enter_at(s->start_ticks);
    switch (kind) {
    case K_GROUP_API:
        s->u.api.captured = d->group_api.graph_captured;
        s->u.api.depth = d->group_api.depth;
        break;
    case K_COLL_API:
        s->u.api.func = intern(t, d->coll_api.func);
        s->u.api.datatype = intern(t, d->coll_api.datatype);
        s->u.api.count = d->coll_api.count;
        s->u.api.root = d->coll_api.root;
        s->u.api.stream = (uint64_t)(uintptr_t)d->coll_api.stream;
        s->u.api.captured = d->coll_api.graph_captured;
        break;
    case K_P2P_API:
        s->u.api.func = intern(t, d->p2p_api.func);
        s->u.api.datatype = intern(t, d->p2p_api.datatype);
        s->u.api.count = d->p2p_api.count;
        s->u.api.stream = (uint64_t)(uintptr_t)d->p2p_api.stream;
        s->u.api.captured = d->p2p_api.graph_captured;
        break;
    case K_KERNEL_LAUNCH:
        s->u.api.stream = (uint64_t)(uintptr_t)d->kernel_launch.stream;
        break;
    case K_GROUP:
        break;
    case K_COLL:
        s->u.task.group_id = parent_id_of(d->coll.parent_group);
        s->u.task.seq = d->coll.seq;
        s->u.task.func = intern(t, d->coll.func);
        s->u.task.datatype = intern(t, d->coll.datatype);
        s->u.task.algo = intern(t, d->coll.algo);
        s->u.task.proto = intern(t, d->coll.proto);
        s->u.task.count = d->coll.count;
        s->u.task.rank = d->rank;
        s->u.task.root_or_peer = d->coll.root;
        s->u.task.channels = d->coll.channels;
        s->u.task.warps = d->coll.warps;
        break;
    case K_P2P:
        s->u.task.group_id = parent_id_of(d->p2p.parent_group);
        s->u.task.func = intern(t, d->p2p.func);
        s->u.task.datatype = intern(t, d->p2p.datatype);
        s->u.task.count = d->p2p.count;
        s->u.task.rank = d->rank;
        s->u.task.root_or_peer = d->p2p.peer;
        s->u.task.channels = d->p2p.channels;
        break;
    case K_PROXY_OP:
        s->channel = d->proxy_op.channel;
        s->is_send = d->proxy_op.is_send != 0;
        s->u.op.pid = (uint32_t)d->proxy_op.pid;
        s->u.op.rank = d->rank;
        s->u.op.peer = d->proxy_op.peer;
        s->u.op.steps = d->proxy_op.steps;
        s->u.op.chunk = d->proxy_op.chunk_size;
        break;
    case K_PROXY_STEP: {
        struct pccl_slot *op = slot_of(d->parent);
        if (op && op->kind == K_PROXY_OP) {
            s->channel = op->channel;
            s->is_send = op->is_send;
        }
        s->u.step.step = d->proxy_step.step;
        break;
    }
    case K_PROXY_CTRL:
        break;
    case K_KERNEL_CH:
        s->channel = d->kernel_ch.channel;
        s->u.kch.start = d->kernel_ch.ptimer;
        break;
    case K_NET: {
        /* steps have no number of their own: the step's op and its step */
        struct pccl_slot *step = slot_of(d->parent);
        s->parent_id = 0;
        s->u.net.step = -1;
        if (step && step->kind == K_PROXY_STEP) {
            s->parent_id = step->parent_id;
            s->u.net.step = step->u.step.step;
        }
        s->u.net.plugin_id = d->net.id;
        break;
    }
    }
    if (t)
        asys_thread_leave();
    if (chain)
        chain_start(c, s, d);
    __atomic_store_n(&s->state, SLOT_LIVE, __ATOMIC_RELEASE);
    *handle = handle_of(s);
}

/* A step state's slot among its direction's three (and the direction):
 * send 0 GPU wait, 1 peer wait, 2 send wait; receive 0 receive wait, 1
 * flush wait, 2 GPU wait.  -1: not a step state. */
static int step_slot(int state, int *is_send)
{
    switch (state) {
    case PCCL_ST_STEP_SEND_GPU_WAIT:
        return *is_send = 1, 0;
    case PCCL_ST_STEP_SEND_PEER_WAIT:
        return *is_send = 1, 1;
    case PCCL_ST_STEP_SEND_WAIT:
        return *is_send = 1, 2;
    case PCCL_ST_STEP_RECV_WAIT:
        return *is_send = 0, 0;
    case PCCL_ST_STEP_RECV_FLUSH_WAIT:
        return *is_send = 0, 1;
    case PCCL_ST_STEP_RECV_GPU_WAIT:
        return *is_send = 0, 2;
    default:
        return -1;
    }
}

/* recordEventState, with v4/v5 arguments (NULL: none). */
static void record_state(void *handle, int state, const union pccl_state_args_v4 *args)
{
    int stale = 0;
    struct pccl_slot *s = slot_at(handle, &stale);
    if (!s) {
        if (handle)
            count(&pccl.orphan_bad_handles);
        return;
    }
    if (stale || __atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != SLOT_LIVE) {
        count(&s->comm->counts.bad_handle);
        return;
    }
    uint64_t now = asys_now();
    int known = 1, is_send = 0;
    int slot = step_slot(state, &is_send);
    if (slot >= 0 && s->kind == K_PROXY_STEP) {
        s->u.step.ticks[slot] = now;
        s->is_send = (uint8_t)is_send; /* the state says, whatever the op said */
        if (args && args->proxy_step.trans_size)
            s->u.step.trans_size = args->proxy_step.trans_size;
    } else if (state >= PCCL_ST_CTRL_IDLE && state <= PCCL_ST_CTRL_APPEND_END &&
               s->kind == K_PROXY_CTRL) {
        s->u.ctrl.ticks = now;
        s->u.ctrl.last_state = (uint32_t)state;
        s->count32++;
        if (state == PCCL_ST_CTRL_APPEND_END && args)
            s->u.ctrl.appended = args->proxy_ctrl.appended;
    } else if (state == PCCL_ST_PROXY_OP_IN_PROGRESS && s->kind == K_PROXY_OP) {
        s->u.op.in_progress = now;
    } else if (state >= PCCL_ST_PROXY_OP_SEND_POSTED && state <= PCCL_ST_PROXY_OP_RECV_DONE &&
               s->kind == K_PROXY_OP) {
        if (!s->u.op.in_progress) /* before v4: the op's own progress states */
            s->u.op.in_progress = now;
    } else if (state == PCCL_ST_KERNEL_CH_STOP && s->kind == K_KERNEL_CH) {
        s->u.kch.stop_state = now;
        if (args)
            s->u.kch.stop = args->kernel_ch.ptimer;
    } else if (state == PCCL_ST_NET_UPDATE && s->kind == K_NET) {
        s->u.net.last_update = now;
        s->count32++;
    } else if (state == PCCL_ST_GROUP_START_API_STOP && s->kind == K_GROUP_API) {
        s->u.api.start_stop = now;
    } else if (state == PCCL_ST_GROUP_END_API_START && s->kind == K_GROUP_API) {
        s->u.api.end_start = now;
    } else {
        known = 0;
        count(&s->comm->counts.unknown);
    }
    if (known && s->chained)
        pccl_user_record(&pccl.user, s->chained, state, args);
}

static pccl_result_t stop_any(void *handle)
{
    int saved = errno, stale = 0;
    struct pccl_slot *s = slot_at(handle, &stale);
    if (s) {
        uint32_t expected = SLOT_LIVE;
        if (!stale && __atomic_compare_exchange_n(&s->state, &expected, SLOT_CLOSING, 0,
                                                  __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
            if (s->chained)
                pccl_user_stop(&pccl.user, s->chained);
            if (s->recorded)
                write_event(s, asys_now(), 0);
            slot_release(s);
        } else {
            count(&s->comm->counts.bad_handle);
        }
    } else if (handle) {
        count(&pccl.orphan_bad_handles);
    }
    errno = saved;
    return PCCL_SUCCESS;
}

static pccl_result_t finalize_any(void *ctx)
{
    int saved = errno;
    struct pccl_comm *c = ctx;
    if (c && c->live) {
        flush_open(c);
        if (c->chained)
            pccl_user_finalize(&pccl.user, c->user_ctx);
        write_comm_end(c, 1);
        comm_retire(c);
    }
    errno = saved;
    return PCCL_SUCCESS;
}

/* init of every version: `hash` .. `rank` are unknown (0, -1) before v4. */
static pccl_result_t init_any(int version, void **ctx, uint64_t hash, int *mask, const char *name,
                              int nnodes, int nranks, int rank, pccl_log_fn log)
{
    int saved = errno;
    *ctx = NULL;
    *mask = 0;
    if (!pccl.enabled)
        goto out;
    chain_load_once();
    struct pccl_comm *c = comm_new(version);
    if (!c)
        goto out;
    if (pccl.user.version) {
        void *user_ctx = NULL;
        int user_mask = 0;
        if (pccl_user_init(&pccl.user, &user_ctx, hash, &user_mask, name, nnodes, nranks, rank,
                           log) == PCCL_SUCCESS) {
            c->user_ctx = user_ctx;
            c->user_mask = user_mask;
            c->chained = 1;
        }
    }
    int ours = version >= 5 ? PCCL_EVENTS_V5 : version >= 3 ? PCCL_EVENTS_V3 : PCCL_EVENTS_V2;
    *mask = ours | c->user_mask;
    c->hash_known = version >= 4;
    write_comm(c, hash, rank, nranks, nnodes, name, *mask);
    *ctx = c;
out:
    errno = saved;
    return PCCL_SUCCESS;
}

/* Before v4 the communicator is named only by its Coll and P2p events. */
static void learn_comm(struct pccl_comm *c, uint64_t hash, int rank, const char *name)
{
    if (c && hash && !__atomic_exchange_n(&c->hash_known, 1, __ATOMIC_RELAXED))
        write_comm(c, hash, rank, -1, -1, name, 0);
}

/* ---- v5 ---- */
static pccl_result_t init_v5(void **ctx, uint64_t comm_id, int *mask, const char *name, int nnodes,
                             int nranks, int rank, pccl_log_fn log)
{
    return init_any(5, ctx, comm_id, mask, name, nnodes, nranks, rank, log);
}

static pccl_result_t start_v5(void *ctx, void **handle, struct pccl_descr_v5 *d)
{
    int saved = errno;
    start_event(ctx, handle, d);
    errno = saved;
    return PCCL_SUCCESS;
}

static pccl_result_t record_v4(void *handle, int state, union pccl_state_args_v4 *args)
{
    int saved = errno;
    record_state(handle, state, args);
    errno = saved;
    return PCCL_SUCCESS;
}

/* ---- v4 ---- */
static pccl_result_t init_v4(void **ctx, int *mask, const char *name, uint64_t comm_hash,
                             int nnodes, int nranks, int rank, pccl_log_fn log)
{
    return init_any(4, ctx, comm_hash, mask, name, nnodes, nranks, rank, log);
}

/* Coll and P2p: before v5 parentObj is the group. */
static pccl_result_t start_v4(void *ctx, void **handle, struct pccl_descr_v4 *d4)
{
    int saved = errno;
    struct pccl_descr_v5 d;
    memset(&d, 0, sizeof d);
    d.type = d4->type;
    d.parent = d4->parent;
    d.rank = d4->rank;
    switch (d4->type) {
    case PCCL_EV_COLL:
        d.parent = NULL;
        d.coll.parent_group = d4->parent;
        d.coll.seq = d4->coll.seq;
        d.coll.func = d4->coll.func;
        d.coll.send = d4->coll.send;
        d.coll.recv = d4->coll.recv;
        d.coll.count = d4->coll.count;
        d.coll.root = d4->coll.root;
        d.coll.datatype = d4->coll.datatype;
        d.coll.channels = d4->coll.channels;
        d.coll.warps = d4->coll.warps;
        d.coll.algo = d4->coll.algo;
        d.coll.proto = d4->coll.proto;
        break;
    case PCCL_EV_P2P:
        d.parent = NULL;
        d.p2p.parent_group = d4->parent;
        d.p2p.func = d4->p2p.func;
        d.p2p.buff = d4->p2p.buff;
        d.p2p.datatype = d4->p2p.datatype;
        d.p2p.count = d4->p2p.count;
        d.p2p.peer = d4->p2p.peer;
        d.p2p.channels = d4->p2p.channels;
        break;
    case PCCL_EV_PROXY_OP:
        memcpy(&d.proxy_op, &d4->proxy_op, sizeof d.proxy_op);
        break;
    case PCCL_EV_PROXY_STEP:
        d.proxy_step.step = d4->proxy_step.step;
        break;
    case PCCL_EV_KERNEL_CH:
        d.kernel_ch.channel = d4->kernel_ch.channel;
        d.kernel_ch.ptimer = d4->kernel_ch.ptimer;
        break;
    case PCCL_EV_NET:
        d.net.id = d4->net.id;
        d.net.data = d4->net.data;
        break;
    default:
        break;
    }
    start_event(ctx, handle, &d);
    errno = saved;
    return PCCL_SUCCESS;
}

/* ---- v3 and v2 ---- */
static pccl_result_t init_v3(void **ctx, int *mask)
{
    return init_any(3, ctx, 0, mask, NULL, -1, -1, -1, NULL);
}

static pccl_result_t init_v2(void **ctx, int *mask)
{
    return init_any(2, ctx, 0, mask, NULL, -1, -1, -1, NULL);
}

/* v3 and v2 differ in Coll (trafficBytes) and in what v2 lacks. */
static void start_v3_common(int version, void *ctx, void **handle, const void *descr)
{
    const struct pccl_descr_v3 *d3 = descr;
    const struct pccl_descr_v2 *d2 = descr;
    struct pccl_descr_v5 d;
    memset(&d, 0, sizeof d);
    d.type = d3->type;
    d.parent = d3->parent;
    d.rank = d3->rank;
    switch (d3->type) {
    case PCCL_EV_COLL:
        d.parent = NULL;
        d.coll.parent_group = d3->parent;
        if (version == 3) {
            learn_comm(ctx, d3->coll.comm_hash, d3->rank, d3->coll.name);
            d.coll.seq = d3->coll.seq;
            d.coll.func = d3->coll.func;
            d.coll.send = d3->coll.send;
            d.coll.recv = d3->coll.recv;
            d.coll.count = d3->coll.count;
            d.coll.root = d3->coll.root;
            d.coll.datatype = d3->coll.datatype;
            d.coll.channels = d3->coll.channels;
            d.coll.warps = d3->coll.warps;
            d.coll.algo = d3->coll.algo;
            d.coll.proto = d3->coll.proto;
        } else {
            learn_comm(ctx, d2->coll.comm_hash, d2->rank, d2->coll.name);
            d.coll.seq = d2->coll.seq;
            d.coll.func = d2->coll.func;
            d.coll.send = d2->coll.send;
            d.coll.recv = d2->coll.recv;
            d.coll.count = d2->coll.count;
            d.coll.root = d2->coll.root;
            d.coll.datatype = d2->coll.datatype;
            d.coll.channels = d2->coll.channels;
            d.coll.warps = d2->coll.warps;
            d.coll.algo = d2->coll.algo;
            d.coll.proto = d2->coll.proto;
        }
        break;
    case PCCL_EV_P2P: /* the same layout in v3 and v2 */
        learn_comm(ctx, d3->p2p.comm_hash, d3->rank, d3->p2p.name);
        d.parent = NULL;
        d.p2p.parent_group = d3->parent;
        d.p2p.func = d3->p2p.func;
        d.p2p.buff = d3->p2p.buff;
        d.p2p.datatype = d3->p2p.datatype;
        d.p2p.count = d3->p2p.count;
        d.p2p.peer = d3->p2p.peer;
        break;
    case PCCL_EV_PROXY_OP:
        memcpy(&d.proxy_op, &d3->proxy_op, sizeof d.proxy_op);
        break;
    case PCCL_EV_PROXY_STEP:
        d.proxy_step.step = d3->proxy_step.step;
        break;
    case PCCL_EV_KERNEL_CH:
        if (version == 2)
            d.type = 0; /* not a v2 event: counted unknown */
        d.kernel_ch.channel = d3->kernel_ch.channel;
        break;
    case PCCL_EV_NET:
        if (version == 2)
            d.type = 0;
        d.net.id = d3->net.id;
        d.net.data = d3->net.data;
        break;
    default:
        break;
    }
    start_event(ctx, handle, &d);
}

static pccl_result_t start_v3(void *ctx, void **handle, void *descr)
{
    int saved = errno;
    start_v3_common(3, ctx, handle, descr);
    errno = saved;
    return PCCL_SUCCESS;
}

static pccl_result_t start_v2(void *ctx, void **handle, void *descr)
{
    int saved = errno;
    start_v3_common(2, ctx, handle, descr);
    errno = saved;
    return PCCL_SUCCESS;
}

static pccl_result_t record_v3(void *handle, int state, union pccl_state_args_v3 *a3)
{
    int saved = errno;
    union pccl_state_args_v4 a;
    memset(&a, 0, sizeof a);
    if (a3 && state >= PCCL_ST_CTRL_IDLE && state <= PCCL_ST_CTRL_APPEND_END)
        a.proxy_ctrl.appended = a3->proxy_ctrl.appended;
    else if (a3)
        a.proxy_step.trans_size = a3->proxy_op.trans_size;
    record_state(handle, state, a3 ? &a : NULL);
    errno = saved;
    return PCCL_SUCCESS;
}

/* The tables NCCL looks up (dlsym) in the library NCCL_PROFILER_PLUGIN names. */
ASYS_EXPORT const struct pccl_plugin_v5 ncclProfiler_v5 = {"asys",   init_v5,   start_v5,
                                                           stop_any, record_v4, finalize_any};
ASYS_EXPORT const struct pccl_plugin_v4 ncclProfiler_v4 = {"asys",   init_v4,   start_v4,
                                                           stop_any, record_v4, finalize_any};
ASYS_EXPORT const struct pccl_plugin_v3 ncclProfiler_v3 = {"asys",   init_v3,   start_v3,
                                                           stop_any, record_v3, finalize_any};
ASYS_EXPORT const struct pccl_plugin_v3 ncclProfiler_v2 = {"asys",   init_v2,   start_v2,
                                                           stop_any, record_v3, finalize_any};

/* Process exit: the contexts NCCL never finalized (a program that does not
 * destroy its communicators), their open events written as unfinished. */
ASYS_START_CODE __attribute__((destructor)) static void pccl_process_exit(void)
{
    if (!pccl.enabled)
        return;
    int saved = errno;
    pthread_mutex_lock(&pccl.lock);
    for (struct pccl_comm *c = pccl.comms; c; c = c->next) {
        if (c->pid != asys_proc.pid)
            continue; /* a fork child's copy of its parent's */
        flush_open(c);
        write_comm_end(c, 0);
    }
    pthread_mutex_unlock(&pccl.lock);
    errno = saved;
}
