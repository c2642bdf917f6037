/* Call stacks, shared by every collector that records where a call came from.
 *
 * Capture: DWARF CFI through libgcc's _Unwind_Backtrace by default (right for
 * code built without frame pointers, the -O2 default), or the frame-pointer
 * chain (ASYS_UNWIND=fp: several times faster, but frames past code without
 * frame pointers are lost).  Frames inside this library are left out.
 *
 * Dedupe: a thread hashes the return addresses and defines each new chain once
 * in its segment (CALLCHAIN record); records refer to chains by id.  Before the
 * first chain, and whenever objects were loaded or unloaded since, the thread
 * writes the loaded objects (MODULE records) so that finalize can symbolize.
 *
 * No malloc, no locks of our own: safe inside any wrapper. */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <unwind.h>

#include "elf_symbols.h"
#include "inject.h"

/* The code of this library and of the collectors' libraries of their own,
 * whose frames a stack leaves out; none when the collectors are linked into
 * the program itself (the unit test). */
#define OWN_OBJECTS 4
ASYS_START_DATA static struct {
    uintptr_t low, high;
} own_code[OWN_OBJECTS];
ASYS_START_DATA static int own_count; /* atomic: entries are complete before it counts them */
ASYS_START_DATA static uintptr_t self_high; /* this library's own, 0 in the unit test */

struct own_lookup {
    uintptr_t here, low, high;
};

static int find_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct own_lookup *l = arg;
    const ElfW(Phdr) *ph = asys_object_segment(info, l->here);
    if (!ph)
        return 0;
    if (info->dlpi_name && info->dlpi_name[0]) { /* a shared object, not the program */
        l->low = info->dlpi_addr + ph->p_vaddr;
        l->high = l->low + ph->p_memsz;
    }
    return 1;
}

static int add_own_object(const void *code)
{
    struct own_lookup l = {(uintptr_t)code, 0, 0};
    dl_iterate_phdr(find_object, &l);
    int n = __atomic_load_n(&own_count, __ATOMIC_ACQUIRE);
    if (!l.high || n == OWN_OBJECTS)
        return 0;
    own_code[n].low = l.low;
    own_code[n].high = l.high;
    __atomic_store_n(&own_count, n + 1, __ATOMIC_RELEASE);
    return 1;
}

void asys_callstack_init(void)
{
    if (add_own_object((const void *)(uintptr_t)asys_callstack_init))
        self_high = own_code[0].high;
}

static int is_own_frame(uintptr_t ip)
{
    int n = __atomic_load_n(&own_count, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        if (ip >= own_code[i].low && ip < own_code[i].high)
            return 1;
    return 0;
}

/* Called from the collectors' inits, which the process's first thread runs
 * one after the other, before any of them records. */
void asys_callstack_own_object(const void *code)
{
    /* the collector may be in this library's build (libasys-inject+acompute.so) */
    if (self_high && !is_own_frame((uintptr_t)code))
        add_own_object(code);
}

/* ---- capture ------------------------------------------------------------- */

struct unwind_state {
    uint64_t *frames;
    uint64_t *cfas; /* each frame's canonical frame address, or NULL */
    uint32_t count;
    uint32_t max;
    int skip_self; /* frames of the capture function itself when not in a library */
};

static _Unwind_Reason_Code collect_frame(struct _Unwind_Context *ctx, void *arg)
{
    struct unwind_state *s = arg;
    uintptr_t ip = _Unwind_GetIP(ctx);
    if (!ip)
        return _URC_END_OF_STACK;
    if (s->skip_self > 0) {
        s->skip_self--;
        return _URC_NO_REASON;
    }
    if (is_own_frame(ip)) /* the wrapper, and ours again under a signal handler */
        return _URC_NO_REASON;
    if (s->cfas)
        s->cfas[s->count] = _Unwind_GetCFA(ctx);
    s->frames[s->count++] = ip;
    return s->count < s->max ? _URC_NO_REASON : _URC_END_OF_STACK;
}

static uint32_t unwind_dwarf(uint64_t *frames, uint64_t *cfas, uint32_t max)
{
    struct unwind_state s = {frames, cfas, 0, max, self_high ? 0 : 2};
    _Unwind_Backtrace(collect_frame, &s);
    return s.count;
}

extern void *__libc_stack_end; /* glibc: the main thread's stack pointer at start */

/* The main thread's stack without pthread_getattr_np, which reads all of
 * /proc/self/maps for it (35 us in a small process, more in a big one; once
 * in each process that takes a stack): from the stack's top down by its
 * limit (8 MiB at most, far inside the gap the kernel leaves below it), when
 * this frame lies there - not so in a child forked from another thread. */
static int main_stack_bounds(struct asys_thread *t)
{
    const uintptr_t cap = 8u << 20;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t top = ((uintptr_t)__libc_stack_end + page - 1) & ~(page - 1);
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    struct rlimit limit;
    if (!__libc_stack_end || syscall(SYS_gettid) != getpid() ||
        getrlimit(RLIMIT_STACK, &limit) != 0)
        return -1;
    uintptr_t size =
        limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur > cap ? cap : (uintptr_t)limit.rlim_cur;
    if (size > top || here >= top || here <= top - size)
        return -1;
    t->stack_low = top - size;
    t->stack_high = top;
    return 0;
}

static void stack_bounds(struct asys_thread *t)
{
    pthread_attr_t attr;
    void *addr;
    size_t size;
    t->stack_high = 1; /* tried: do not retry on failure */
    if (main_stack_bounds(t) == 0)
        return;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return;
    if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
        t->stack_low = (uintptr_t)addr;
        t->stack_high = (uintptr_t)addr + size;
    }
    pthread_attr_destroy(&attr);
}

/* Follows saved frame pointers while they stay inside this thread's stack,
 * so a garbage frame pointer ends the walk instead of faulting. */
__attribute__((noinline)) static uint32_t unwind_fp(struct asys_thread *t, uint64_t *frames,
                                                    uint32_t max)
{
    if (!t->stack_high)
        stack_bounds(t);
    const uintptr_t *fp = __builtin_frame_address(0);
    uint32_t count = 0;
    int skip_self = self_high ? 0 : 2;
    while (count < max) {
        uintptr_t at = (uintptr_t)fp;
        if (at < t->stack_low || at + 2 * sizeof(uintptr_t) > t->stack_high ||
            at % sizeof(uintptr_t))
            break;
        uintptr_t ip = fp[1];
        const uintptr_t *next = (const uintptr_t *)fp[0];
        if (!ip)
            break;
        if (skip_self > 0)
            skip_self--;
        else if (!is_own_frame(ip))
            frames[count++] = ip;
        if ((uintptr_t)next <= at)
            break;
        fp = next;
    }
    return count;
}

/* ---- the stack cache ----------------------------------------------------------
 * Only for DWARF unwinding from inside this library (built with frame
 * pointers, so its own frames are walked for free): the first frame outside
 * it is found by the frame-pointer chain, and a cached stack of that frame
 * is reused when every return address still lies in its slot. */

/* The return address into the first frame outside this library and that
 * frame's stack pointer; 0 when the walk fails. */
static int first_foreign_frame(struct asys_thread *t, uint64_t *return_address,
                               uint64_t *stack_pointer)
{
    if (!self_high)
        return 0;
    if (!t->stack_high)
        stack_bounds(t);
    const uintptr_t *fp = __builtin_frame_address(0);
    for (int step = 0; step < 32; step++) {
        uintptr_t at = (uintptr_t)fp;
        if (at < t->stack_low || at + 2 * sizeof(uintptr_t) > t->stack_high ||
            at % sizeof(uintptr_t))
            return 0;
        if (!is_own_frame(fp[1])) {
            *return_address = fp[1];
            *stack_pointer = at + 2 * sizeof(uintptr_t);
            return fp[1] != 0;
        }
        if (fp[0] <= at)
            return 0;
        fp = (const uintptr_t *)fp[0];
    }
    return 0;
}

/* The stack's entry; NULL while its slot is unused, unless `claim`. */
static struct asys_stack_cache_entry *stack_slot(struct asys_thread *t, uint64_t ra, uint64_t sp,
                                                 int claim)
{
    uint64_t h = (ra ^ sp * 0x9e3779b97f4a7c15ull) * 0xff51afd7ed558ccdull;
    return asys_thread_cache(t, &t->stacks[(h >> 40) % ASYS_STACK_CACHE_SIZE],
                             claim ? sizeof(struct asys_stack_cache_entry) : 0);
}

/* The cached call chain of this stack, or 0. */
static uint32_t cached_stack(struct asys_thread *t, uint64_t ra, uint64_t sp, uint32_t limit)
{
    const struct asys_stack_cache_entry *e = stack_slot(t, ra, sp, 0);
    if (!e || !e->callchain_id || e->return_address != ra || e->stack_pointer != sp ||
        e->limit != limit)
        return 0;
    for (uint32_t i = 0; i + 1 < e->depth; i++) {
        uint64_t slot = e->slots[i];
        if (slot < sp || slot + 8 > t->stack_high || slot % 8 ||
            *(const uint64_t *)(uintptr_t)slot != e->frames[i + 1])
            return 0;
    }
    return e->callchain_id;
}

/* Keeps an unwound stack when its return addresses lie where the unwinder
 * says: libgcc's CFA of a frame's context is the stack pointer of that
 * frame at its call, so its return address lay just below it (x86-64) -
 * not so around signal frames, which are then not cached. */
static void cache_stack(struct asys_thread *t, uint64_t ra, uint64_t sp, uint32_t limit,
                        const uint64_t *frames, const uint64_t *cfas, uint32_t count, uint32_t id)
{
#if defined(__x86_64__)
    if (count == 0 || count > ASYS_STACK_CACHE_DEPTH || frames[0] != ra)
        return;
    uint64_t slots[ASYS_STACK_CACHE_DEPTH];
    for (uint32_t i = 1; i < count; i++) {
        uint64_t slot = cfas[i] - 8;
        if (slot < sp || slot + 8 > t->stack_high || slot % 8 ||
            *(const uint64_t *)(uintptr_t)slot != frames[i])
            return;
        slots[i - 1] = slot;
    }
    struct asys_stack_cache_entry *e = stack_slot(t, ra, sp, 1);
    memcpy(e->slots, slots, (count - 1) * sizeof *slots);
    memcpy(e->frames, frames, count * sizeof *frames);
    e->return_address = ra;
    e->stack_pointer = sp;
    e->depth = count;
    e->limit = limit;
    e->callchain_id = id;
#else
    (void)t, (void)ra, (void)sp, (void)limit, (void)frames, (void)cfas, (void)count, (void)id;
#endif
}

/* ---- modules ---------------------------------------------------------------- */

/* Objects loaded plus objects unloaded: changes whenever the set changes. */
static int read_generation(struct dl_phdr_info *info, size_t size, void *arg)
{
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
        *(uint64_t *)arg = info->dlpi_adds + info->dlpi_subs + 1;
    return 1;
}

static uint64_t loader_generation(void)
{
    uint64_t generation = 1;
    dl_iterate_phdr(read_generation, &generation);
    return generation;
}

static uint32_t find_build_id(const struct dl_phdr_info *info, uint8_t *out)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
        const uint8_t *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
            const uint8_t *name = p + sizeof *n;
            const uint8_t *desc = name + ((n->n_namesz + 3) & ~3u);
            if (desc + n->n_descsz > end)
                break;
            if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && !memcmp(name, "GNU", 4)) {
                uint32_t len = n->n_descsz < ASYS_BUILD_ID_MAX ? n->n_descsz : ASYS_BUILD_ID_MAX;
                memcpy(out, desc, len);
                return len;
            }
            p = desc + ((n->n_descsz + 3) & ~3u);
        }
    }
    return 0;
}

static int write_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct asys_thread *t = arg;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (a < lo)
            lo = a;
        if (a + ph->p_memsz > hi)
            hi = a + ph->p_memsz;
    }
    if (hi <= lo)
        return 0;
    const char *path = info->dlpi_name;
    if (!path || !*path) /* the program itself: no read of /proc/self/exe, 13-30 us here */
        path = asys_executable_path();
    /* by content: the loader's name strings are not in a read-only segment */
    uint32_t path_id = asys_intern_len(t, path, strlen(path));
    uint32_t delta;
    struct asys_rec_module *r = asys_segment_reserve(&t->seg, sizeof *r, t->seg.last_ticks, &delta);
    if (!r)
        return 0;
    memset(r->build_id, 0, sizeof r->build_id);
    r->load_bias = info->dlpi_addr;
    r->start = lo;
    r->end = hi;
    r->path_string_id = path_id;
    r->build_id_length = find_build_id(info, r->build_id);
    asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_MODULE, sizeof *r / 8, 0, delta));
    return 0;
}

static void write_modules_if_changed(struct asys_thread *t)
{
    uint64_t generation = loader_generation();
    if (generation == t->modules_generation)
        return;
    dl_iterate_phdr(write_module, t);
    t->modules_generation = generation;
}

/* ---- definition -------------------------------------------------------------- */

static uint64_t hash_frames(const uint64_t *frames, uint32_t count)
{
    uint64_t h = 0x84222325cbf29ce4ull ^ count;
    for (uint32_t i = 0; i < count; i++) {
        h ^= frames[i];
        h *= 0x100000001b3ull;
        h ^= h >> 29;
    }
    return h | 1;
}

static uint32_t define_chain(struct asys_thread *t, const uint64_t *frames, uint32_t count)
{
    write_modules_if_changed(t);
    uint32_t id = __atomic_add_fetch(&asys_proc.next_callchain_id, 1, __ATOMIC_RELAXED);
    uint32_t size = (uint32_t)(sizeof(struct asys_rec_callchain) + 8 * count);
    uint32_t delta;
    struct asys_rec_callchain *r = asys_segment_reserve(&t->seg, size, t->seg.last_ticks, &delta);
    if (!r)
        return 0;
    r->callchain_id = id;
    r->depth = count;
    memcpy(r + 1, frames, 8 * (size_t)count);
    asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_CALLCHAIN, size / 8, 0, delta));
    return id;
}

/* The chain id of `frames`, defining it the first time this thread sees it. */
static uint32_t chain_of(struct asys_thread *t, const uint64_t *frames, uint32_t count);

uint32_t asys_callstack_capture(struct asys_thread *t, uint32_t depth)
{
    uint64_t frames[ASYS_CALLCHAIN_MAX_DEPTH];
    if (depth > ASYS_CALLCHAIN_MAX_DEPTH)
        depth = ASYS_CALLCHAIN_MAX_DEPTH;
    if (asys_proc.unwind_method == ASYS_UNWIND_FP) {
        uint32_t count = unwind_fp(t, frames, depth);
        return count ? chain_of(t, frames, count) : 0;
    }
    uint64_t ra = 0, sp = 0, cfas[ASYS_CALLCHAIN_MAX_DEPTH];
    int cacheable = depth <= ASYS_STACK_CACHE_DEPTH && first_foreign_frame(t, &ra, &sp);
    uint32_t id = cacheable ? cached_stack(t, ra, sp, depth) : 0;
    if (id)
        return id;
    uint32_t count = unwind_dwarf(frames, cacheable ? cfas : NULL, depth);
    if (!count)
        return 0;
    id = chain_of(t, frames, count);
    if (id && cacheable)
        cache_stack(t, ra, sp, depth, frames, cfas, count, id);
    return id;
}

static uint32_t chain_of(struct asys_thread *t, const uint64_t *frames, uint32_t count)
{
    uint64_t hash = hash_frames(frames, count);
    /* bit 0 of the hash is always set */
    uint16_t *slot = &t->callchain_sets[hash >> 32 & (ASYS_CALLCHAIN_CACHE_SETS - 1)];
    struct asys_callchain_cache_entry *set = asys_thread_cache(t, slot, 0);
    for (int way = 0; set && way < ASYS_CALLCHAIN_CACHE_WAYS; way++)
        if (set[way].hash == hash && set[way].depth == count)
            return set[way].callchain_id;
    uint32_t id = define_chain(t, frames, count);
    if (id) {
        set = asys_thread_cache(
            t, slot, ASYS_CALLCHAIN_CACHE_WAYS * sizeof(struct asys_callchain_cache_entry));
        struct asys_callchain_cache_entry *e =
            &set[t->callchain_evict++ % ASYS_CALLCHAIN_CACHE_WAYS];
        e->hash = hash;
        e->depth = count;
        e->callchain_id = id;
    }
    return id;
}
