/* Heap collector (--heap-memory-usage): wrappers for malloc, calloc,
 * realloc, reallocarray, free, posix_memalign, aligned_alloc, memalign,
 * valloc, pvalloc and every C++ operator new/delete.  Each forwards to the
 * next definition (dlsym(RTLD_NEXT): glibc's, or the allocator the program
 * loaded), so what the program gets is what its allocator returns.
 *
 * Sampling by bytes, as tcmalloc does: with interval N each byte is sampled
 * with probability 1/N, the gaps between sampled bytes drawn per thread from
 * an exponential distribution.  The fast path of an allocation is a
 * thread-local subtraction and a branch; a sampled block is remembered in a
 * lock-free table of addresses, so a free costs one lookup and only frees of
 * sampled blocks are written.  N = 1 records every allocation.
 *
 * Safe inside the allocator: allocations made while dlsym resolves the real
 * functions come from a static buffer; the tool's own work (stacks,
 * segments) allocates with the re-entry guard set and is not traced; C++
 * operators call malloc themselves, which is then not counted twice. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elf_symbols.h"
#include "inject.h"

enum heap_function {
#define HEAP_ID(id, name) HEAP_FN_##id = id,
    ASYS_HEAP_FUNCTIONS(HEAP_ID)
#undef HEAP_ID
};
#define FN_MALLOC HEAP_FN_1
#define FN_CALLOC HEAP_FN_2
#define FN_REALLOC HEAP_FN_3
#define FN_REALLOCARRAY HEAP_FN_4
#define FN_POSIX_MEMALIGN HEAP_FN_5
#define FN_ALIGNED_ALLOC HEAP_FN_6
#define FN_MEMALIGN HEAP_FN_7
#define FN_VALLOC HEAP_FN_8
#define FN_PVALLOC HEAP_FN_9
#define FN_NEW HEAP_FN_10
#define FN_NEW_ARRAY HEAP_FN_11
#define FN_FREE HEAP_FN_12
#define FN_DELETE HEAP_FN_13
#define FN_DELETE_ARRAY HEAP_FN_14

/* ---- the real functions ---------------------------------------------------- */

static struct {
    void *(*malloc)(size_t);
    void (*free)(void *);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    void *(*reallocarray)(void *, size_t, size_t);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);
    void *(*memalign)(size_t, size_t);
    void *(*valloc)(size_t);
    void *(*pvalloc)(size_t);
} real;

static __thread int heap_resolving ASYS_TLS; /* inside dlsym: allocate from the buffer */
static __thread int heap_nesting ASYS_TLS; /* inside a C++ operator: its malloc is not ours */

/* What dlsym allocates before the real functions are known: a bump buffer,
 * never freed (a block holds its size in front, for realloc). */
static _Alignas(16) char bootstrap[64 * 1024];
static size_t bootstrap_used; /* atomic */

__attribute__((unused)) static int in_bootstrap(const void *p)
{
    return (const char *)p >= bootstrap && (const char *)p < bootstrap + sizeof bootstrap;
}

__attribute__((unused)) static void *bootstrap_alloc(size_t size)
{
    size_t need = (size + 16 + 15) & ~(size_t)15;
    size_t at = __atomic_fetch_add(&bootstrap_used, need, __ATOMIC_RELAXED);
    if (need < size || at + need > sizeof bootstrap)
        return NULL;
    memcpy(bootstrap + at, &size, sizeof size);
    return bootstrap + at + 16;
}

__attribute__((unused)) static size_t bootstrap_size(const void *p)
{
    size_t size;
    memcpy(&size, (const char *)p - 16, sizeof size);
    return size;
}

#define NEXT(name) \
    __atomic_store_n(&real.name, (__typeof__(real.name))dlsym(RTLD_NEXT, #name), __ATOMIC_RELEASE)

static void resolve(void)
{
    heap_resolving++;
    NEXT(free);
    NEXT(calloc);
    NEXT(realloc);
    NEXT(reallocarray);
    NEXT(posix_memalign);
    NEXT(aligned_alloc);
    NEXT(memalign);
    NEXT(valloc);
    NEXT(pvalloc);
    NEXT(malloc); /* last: it marks the set as resolved */
    heap_resolving--;
}

static inline int resolved(void)
{
    if (ASYS_LIKELY(__atomic_load_n(&real.malloc, __ATOMIC_ACQUIRE) != NULL))
        return 1;
    if (!heap_resolving)
        resolve();
    return real.malloc != NULL;
}

/* ---- sampling -------------------------------------------------------------- */

static int heap_on; /* --heap-memory-usage in this process */
static uint64_t heap_interval; /* --heap-sampling-interval-bytes */
static uint32_t heap_depth; /* --heap-backtrace-depth */
static __thread int64_t heap_bytes_left ASYS_TLS; /* until the next sampled byte */
static __thread uint64_t heap_random ASYS_TLS; /* xorshift state; 0: not seeded */

/* ln(u) for u in (0, 1], without libm: u = m * 2^e with m in [1, 2),
 * ln(m) = 2 atanh((m - 1) / (m + 1)) by its series (error < 1e-6). */
static double log_unit(double u)
{
    uint64_t bits;
    memcpy(&bits, &u, sizeof bits);
    int e = (int)((bits >> 52) & 0x7ff) - 1023;
    bits = (bits & ~(0x7ffull << 52)) | (1023ull << 52);
    double m;
    memcpy(&m, &bits, sizeof m);
    double z = (m - 1) / (m + 1), z2 = z * z;
    double series = z * (1 + z2 * (1.0 / 3 + z2 * (1.0 / 5 + z2 * (1.0 / 7 + z2 * (1.0 / 9)))));
    return e * 0.6931471805599453 + 2 * series;
}

/* The next gap in bytes: exponential with mean heap_interval. */
static int64_t next_gap(void)
{
    if (!heap_random)
        heap_random = ((uint64_t)(uintptr_t)&heap_random << 20 ^ asys_now()) | 1; /* per thread */
    uint64_t x = heap_random;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    heap_random = x;
    double u = ((double)(x >> 11) + 1) / 9007199254740992.0; /* (0, 1] */
    double gap = -log_unit(u) * (double)heap_interval;
    return gap < 1 ? 1 : gap > 4e18 ? INT64_MAX / 2 : (int64_t)gap;
}

/* Whether an allocation of `size` bytes holds a sampled byte. */
__attribute__((noinline)) static int sample_slow(size_t size)
{
    if (!heap_random) /* the thread's first allocation: draw where its first sample lies */
        heap_bytes_left = next_gap() - (int64_t)size;
    if (heap_bytes_left > 0)
        return 0;
    while (heap_bytes_left <= 0)
        heap_bytes_left += next_gap();
    return 1;
}

/* Where a sampled byte fell (or at interval 1, every allocation): whether
 * it is recorded.  A point in asys's own allocations or outside the
 * capture window is passed over, as a Poisson sample that fell where
 * nothing is recorded (the estimates stay unbiased), and the next drawn. */
__attribute__((noinline)) static int sample_point(size_t size)
{
    if (!__atomic_load_n(&heap_on, __ATOMIC_ACQUIRE))
        return 0; /* not started: heap_interval is not set yet */
    int recorded = !asys_tls_busy && asys_capturing();
    if (heap_interval == 1)
        return recorded;
    return sample_slow(size) && recorded;
}

/* The allocation path's only work when no byte of the block is sampled:
 * one thread-local count (perf: the checks that came first were half of
 * heap tracing's cost on small allocations). */
static inline int heap_sample(size_t size)
{
    if (heap_nesting)
        return 0; /* a C++ operator's own malloc: the operator counts its bytes */
    if (ASYS_LIKELY(heap_interval > 1)) {
        heap_bytes_left -= (int64_t)(size > INT64_MAX / 2 ? INT64_MAX / 2 : size);
        if (ASYS_LIKELY(heap_bytes_left > 0))
            return 0;
    }
    return sample_point(size);
}

/* ---- the sampled blocks ---------------------------------------------------
 * Open addressing with a bounded probe: a block lives within PROBE slots of
 * its home, so a lookup stops there too; a freed slot becomes a tombstone
 * that the next insert may reuse.  A slot also keeps what a free needs to
 * be summed under its allocation (--heap-report-interval). */

#define PROBE 64
#define TOMBSTONE 1u
#define SIZE_BITS 56 /* size_function: the size below, the allocating function above */

/* What the table remembers of a sampled block. */
struct heap_block {
    uint64_t size;
    unsigned function; /* the allocating one */
    uint32_t callchain_id;
    uint32_t interval_id; /* its allocation sum's; 0: written per event */
};

struct heap_slot {
    uint64_t address; /* 0 empty, TOMBSTONE, else the block */
    uint64_t size_function;
    uint32_t callchain_id;
    uint32_t interval_id;
};

static struct heap_slot *heap_table;
static uint64_t heap_mask;
/* Frees skip the lookup while no sampled block is live.  Sampling (an
 * interval above 1): a count of live blocks, updated only by the rare
 * sampled ones.  At interval 1 every block is in the table and the count's
 * two atomic updates per block bounced one cache line between the threads:
 * a flag set by the first block instead. */
static int heap_used;
static uint64_t heap_live; /* atomic; interval > 1 */

static inline int heap_maybe_live(void)
{
    return heap_interval == 1 ? __atomic_load_n(&heap_used, __ATOMIC_RELAXED)
                              : __atomic_load_n(&heap_live, __ATOMIC_RELAXED) != 0;
}

/* At interval 1, blocks near each other in memory get slots near each
 * other: a program reusing a few hot blocks touches a few hot cache lines
 * of the table, not one random line (and TLB entry) per call (perf:
 * table_insert was the target's largest cost at interval 1); each 16 MiB of
 * address space is spread by a multiplicative hash, so distant regions do
 * not pile up.  When sampling, the few sampled blocks are spread at random:
 * their tombstones then do not line up where the program's hot blocks are,
 * which every free of an unsampled hot block would have to probe past. */
static uint64_t home_of(uint64_t address)
{
    if (heap_interval != 1) {
        uint64_t h = address * 0x9e3779b97f4a7c15ull;
        return (h ^ h >> 29) & heap_mask;
    }
    return ((address >> 4) + (address >> 24) * 0x9e3779b97f4a7c15ull) & heap_mask;
}

/* When sampling, most frees are of blocks never sampled, and their probe
 * of the table was a cache miss each (a random line of 1.5 MiB; perf: the
 * largest cost of heap tracing on small allocations).  A counting filter
 * of 16 KiB, in cache, answers most of them first: a count per hash of the
 * address, of the sampled blocks live there (255 sticks: never wrong, only
 * slower). */
#define FILTER_BITS 14
#define FILTER_STUCK 255u
static uint8_t heap_filter[1u << FILTER_BITS];

static inline uint8_t *filter_count(uint64_t address)
{
    return &heap_filter[(address >> 4) * 0x9e3779b97f4a7c15ull >> (64 - FILTER_BITS)];
}

static void filter_add(uint64_t address)
{
    uint8_t *c = filter_count(address);
    uint8_t seen = __atomic_load_n(c, __ATOMIC_RELAXED);
    while (seen != FILTER_STUCK && !__atomic_compare_exchange_n(c, &seen, (uint8_t)(seen + 1), 1,
                                                                __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

static void filter_remove(uint64_t address)
{
    uint8_t *c = filter_count(address);
    uint8_t seen = __atomic_load_n(c, __ATOMIC_RELAXED);
    while (seen != FILTER_STUCK && seen != 0 &&
           !__atomic_compare_exchange_n(c, &seen, (uint8_t)(seen - 1), 1, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
        ;
}

/* The slot's fields are written before the block is handed to the program,
 * so no free of it can read them half-written. */
static int table_insert(uint64_t address, const struct heap_block *b)
{
    uint64_t home = home_of(address);
    for (uint64_t i = 0; i < PROBE; i++) {
        struct heap_slot *s = &heap_table[(home + i) & heap_mask];
        uint64_t seen = __atomic_load_n(&s->address, __ATOMIC_ACQUIRE);
        if ((seen == 0 || seen == TOMBSTONE) &&
            __atomic_compare_exchange_n(&s->address, &seen, address, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED)) {
            s->callchain_id = b->callchain_id;
            s->interval_id = b->interval_id;
            __atomic_store_n(&s->size_function, b->size | (uint64_t)b->function << SIZE_BITS,
                             __ATOMIC_RELEASE);
            if (heap_interval != 1) {
                filter_add(address);
                __atomic_add_fetch(&heap_live, 1, __ATOMIC_RELAXED);
            } else if (ASYS_UNLIKELY(!__atomic_load_n(&heap_used, __ATOMIC_RELAXED)))
                __atomic_store_n(&heap_used, 1, __ATOMIC_RELAXED);
            return 1;
        }
    }
    return 0;
}

/* Whether `address` may be a live sampled block (0: it certainly is not;
 * the free path's first question, answered from cache). */
static inline int maybe_sampled(uint64_t address)
{
    return heap_maybe_live() &&
           (heap_interval == 1 || __atomic_load_n(filter_count(address), __ATOMIC_RELAXED));
}

/* Removes `address`; 1 (and what was kept of it) when it was a sampled block. */
static int table_remove(uint64_t address, struct heap_block *b)
{
    if (!maybe_sampled(address))
        return 0;
    uint64_t home = home_of(address);
    for (uint64_t i = 0; i < PROBE; i++) {
        struct heap_slot *s = &heap_table[(home + i) & heap_mask];
        uint64_t seen = __atomic_load_n(&s->address, __ATOMIC_ACQUIRE);
        if (seen == 0)
            return 0;
        if (seen == address) {
            uint64_t size_function = __atomic_load_n(&s->size_function, __ATOMIC_ACQUIRE);
            b->size = size_function & ((1ull << SIZE_BITS) - 1);
            b->function = (unsigned)(size_function >> SIZE_BITS);
            b->callchain_id = s->callchain_id;
            b->interval_id = s->interval_id;
            if (!__atomic_compare_exchange_n(&s->address, &seen, TOMBSTONE, 0, __ATOMIC_ACQ_REL,
                                             __ATOMIC_RELAXED))
                return 0; /* a double free racing with itself: the other one has it */
            if (heap_interval != 1) {
                filter_remove(address);
                __atomic_sub_fetch(&heap_live, 1, __ATOMIC_RELAXED);
            }
            return 1;
        }
    }
    return 0;
}

/* ---- estimates ----------------------------------------------------------------
 * A block of s bytes was sampled with probability p = 1 - exp(-s/N): it
 * stands for s / p bytes and 1 / p allocations, as the importer computes
 * for per-event records (0-byte blocks: p = 1/N). */

/* 1 - exp(-x) for x >= 0 without libm (relative error below 1e-12). */
static double one_minus_exp_neg(double x)
{
    if (x >= 40)
        return 1;
    if (x < 0.5) { /* the series x - x^2/2! + x^3/3! ...: no cancellation near 0 */
        double term = x, sum = x;
        for (int k = 2; k < 20; k++) {
            term *= -x / k;
            sum += term;
        }
        return sum;
    }
    /* exp(-x) = 2^-k exp(-r), r = x - k ln 2 in [0, ln 2) */
    int k = (int)(x / 0.6931471805599453);
    double r = x - k * 0.6931471805599453, term = 1, e = 1;
    for (int i = 1; i < 20; i++) {
        term *= -r / i;
        e += term;
    }
    uint64_t bits;
    memcpy(&bits, &e, sizeof bits);
    bits -= (uint64_t)k << 52; /* e in (0.5, 1], k < 58: stays a normal number */
    memcpy(&e, &bits, sizeof e);
    return 1 - e;
}

static double sampled_with(uint64_t size)
{
    double p = heap_interval == 1 ? 1.0 : one_minus_exp_neg((double)size / (double)heap_interval);
    return p > 0 ? p : 1.0 / (double)heap_interval;
}

/* ---- aggregates (--heap-report-interval) ------------------------------------
 * Per thread, a small open-addressed table of sums keyed by (what, stack,
 * function, allocation interval), mapped at the thread's first sampled
 * event.  The interval ends at the first sampled event past its length:
 * every sum is written, the table emptied.  A full table is written early
 * (the same key and interval then appear twice; readers add them up), so
 * nothing is dropped for room. */

#define SUM_SLOTS 512 /* a power of 2 */
#define SUM_PROBE 16

enum sum_kind { SUM_ALLOC = 1, SUM_FREE = 2 };

struct heap_sum {
    uint32_t callchain_id;
    uint32_t interval_id; /* the allocations' interval */
    uint16_t function;
    uint16_t kind; /* enum sum_kind; 0: an empty slot */
    uint64_t last; /* ticks: the last event summed */
    uint64_t samples, bytes, largest;
    double estimated_bytes, estimated_count;
};

struct asys_heap_sums {
    uint64_t started; /* ticks: the current interval began */
    uint32_t interval_id;
    uint32_t used;
    int final; /* process exit: each event is written at once */
    struct heap_sum slot[SUM_SLOTS];
};

static uint64_t heap_report_ticks; /* --heap-report-interval in ticks; 0: a record per event */
static uint32_t heap_report_ms;
static uint32_t heap_intervals; /* atomic: the image's last interval number */

static uint32_t next_interval_id(void)
{
    uint32_t id = __atomic_add_fetch(&heap_intervals, 1, __ATOMIC_RELAXED);
    return id ? id : __atomic_add_fetch(&heap_intervals, 1, __ATOMIC_RELAXED); /* 0: none */
}

/* A sum's estimates as the records hold them: bytes and fixed-point counts. */
static uint64_t rounded_bytes(const struct heap_sum *s)
{
    return (uint64_t)(s->estimated_bytes + 0.5);
}

static uint64_t rounded_count_q16(const struct heap_sum *s)
{
    return (uint64_t)(s->estimated_count * ASYS_HEAP_COUNT_ONE + 0.5);
}

static void write_alloc_sum(struct asys_thread *t, const struct heap_sum *s, uint64_t ticks)
{
    uint32_t delta;
    struct asys_rec_heap_alloc_sum *r = asys_segment_reserve(&t->seg, sizeof *r, ticks, &delta);
    if (!r)
        return; /* counted by the writer */
    r->callchain_id = s->callchain_id;
    r->interval_id = s->interval_id;
    r->last_ticks = s->last;
    r->sampling_interval = heap_interval;
    r->report_interval_ms = heap_report_ms;
    r->reserved = 0;
    r->samples = s->samples;
    r->bytes = s->bytes;
    r->largest = s->largest;
    r->estimated_bytes = rounded_bytes(s);
    r->estimated_count_q16 = rounded_count_q16(s);
    asys_segment_commit(&r->header,
                        ASYS_REC_WORD(ASYS_REC_HEAP_ALLOC_SUM, sizeof *r / 8, s->function, delta));
}

static void write_free_sum(struct asys_thread *t, const struct heap_sum *s, uint64_t ticks)
{
    uint32_t delta;
    struct asys_rec_heap_free_sum *r = asys_segment_reserve(&t->seg, sizeof *r, ticks, &delta);
    if (!r)
        return;
    r->callchain_id = s->callchain_id;
    r->interval_id = s->interval_id;
    r->last_ticks = s->last;
    r->samples = s->samples;
    r->bytes = s->bytes;
    r->estimated_bytes = rounded_bytes(s);
    r->estimated_count_q16 = rounded_count_q16(s);
    asys_segment_commit(&r->header,
                        ASYS_REC_WORD(ASYS_REC_HEAP_FREE_SUM, sizeof *r / 8, s->function, delta));
}

/* Writes every sum, stamped `ticks`, and empties the table. */
static void sums_write(struct asys_thread *t, struct asys_heap_sums *sums, uint64_t ticks)
{
    for (uint32_t i = 0; sums->used && i < SUM_SLOTS; i++) {
        struct heap_sum *s = &sums->slot[i];
        if (s->kind == SUM_ALLOC)
            write_alloc_sum(t, s, ticks);
        else if (s->kind == SUM_FREE)
            write_free_sum(t, s, ticks);
        else
            continue;
        s->kind = 0;
        sums->used--;
    }
}

/* The thread's sums for an event at `ticks`, a new interval begun when the
 * current one has run its length; NULL when they cannot be mapped. */
static struct asys_heap_sums *sums_at(struct asys_thread *t, uint64_t ticks)
{
    struct asys_heap_sums *sums = t->heap_sums;
    if (ASYS_UNLIKELY(!sums)) {
        void *mem =
            mmap(NULL, sizeof *sums, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (mem == MAP_FAILED)
            return NULL;
        t->heap_sums = sums = mem;
        sums->started = ticks;
        sums->interval_id = next_interval_id();
    } else if (ticks - sums->started >= heap_report_ticks && ticks >= sums->started) {
        sums_write(t, sums, ticks);
        sums->started = ticks;
        sums->interval_id = next_interval_id();
    }
    return sums;
}

static uint64_t sum_hash(unsigned kind, uint32_t chain, unsigned function, uint32_t interval)
{
    uint64_t h = ((uint64_t)chain << 32 | interval) * 0x9e3779b97f4a7c15ull;
    h ^= (uint64_t)(kind << 8 | function) * 0xff51afd7ed558ccdull;
    return h ^ h >> 32;
}

/* The sum of `key`, claimed if new; the table is written out first when
 * its probe window is full. */
static struct heap_sum *sum_slot(struct asys_thread *t, struct asys_heap_sums *sums,
                                 const struct heap_sum *key, uint64_t ticks)
{
    uint64_t home = sum_hash(key->kind, key->callchain_id, key->function, key->interval_id);
    for (int attempt = 0; attempt < 2; attempt++) {
        for (uint32_t i = 0; i < SUM_PROBE; i++) {
            struct heap_sum *s = &sums->slot[(home + i) & (SUM_SLOTS - 1)];
            if (!s->kind) {
                *s = *key;
                sums->used++;
                return s;
            }
            if (s->kind == key->kind && s->callchain_id == key->callchain_id &&
                s->function == key->function && s->interval_id == key->interval_id)
                return s;
        }
        sums_write(t, sums, ticks);
    }
    return NULL; /* not reached: an empty table has room */
}

/* Adds the sampled block `b` to the allocations or frees of its key. */
static void sum_add(struct asys_thread *t, struct asys_heap_sums *sums, enum sum_kind kind,
                    const struct heap_block *b, uint64_t ticks)
{
    struct heap_sum key = {.callchain_id = b->callchain_id,
                           .interval_id = b->interval_id,
                           .function = (uint16_t)b->function,
                           .kind = (uint16_t)kind};
    struct heap_sum *s = sum_slot(t, sums, &key, ticks);
    if (!s)
        return;
    double p = sampled_with(b->size);
    s->last = ticks;
    s->samples++;
    s->bytes += b->size;
    if (b->size > s->largest)
        s->largest = b->size;
    s->estimated_bytes += (double)b->size / p;
    s->estimated_count += 1 / p;
    if (ASYS_UNLIKELY(sums->final))
        sums_write(t, sums, ticks);
}

void asys_heap_thread_flush(struct asys_thread *t, int final)
{
    struct asys_heap_sums *sums = t->heap_sums;
    if (!sums)
        return;
    uint64_t ticks = asys_now();
    sums_write(t, sums, ticks);
    sums->started = ticks;
    sums->interval_id = next_interval_id();
    sums->final = final;
}

void asys_heap_thread_count_unwritten(struct asys_thread *t)
{
    struct asys_heap_sums *sums = t->heap_sums;
    uint32_t pending = sums ? __atomic_load_n(&sums->used, __ATOMIC_RELAXED) : 0;
    for (uint32_t i = 0; i < pending && t->seg.header; i++)
        asys_segment_count_lost(t->seg.header, sizeof(struct asys_rec_heap_alloc_sum),
                                ASYS_DROP_FULL);
}

void asys_heap_thread_forget(struct asys_thread *t)
{
    if (t->heap_sums)
        munmap(t->heap_sums, sizeof *t->heap_sums);
    t->heap_sums = NULL;
}

/* ---- records ---------------------------------------------------------------- */

/* At interval 1 the short forms (FORMAT.md): a third less to write,
 * compress and read back for the same events. */
static int every_alloc(const struct heap_block *b)
{
    return heap_interval == 1 && b->size <= UINT32_MAX;
}

static uint32_t alloc_record_size(const struct heap_block *b)
{
    return every_alloc(b) ? sizeof(struct asys_rec_heap_alloc_every)
                          : sizeof(struct asys_rec_heap_alloc);
}

static uint32_t free_record_size(void)
{
    return heap_interval == 1 ? sizeof(struct asys_rec_heap_free_every)
                              : sizeof(struct asys_rec_heap_free);
}

static void write_alloc(struct asys_thread *t, void *block, const struct heap_block *b,
                        uint64_t ticks)
{
    uint32_t delta;
    if (every_alloc(b)) {
        struct asys_rec_heap_alloc_every *e =
            asys_segment_reserve(&t->seg, sizeof *e, ticks, &delta);
        if (!e)
            return;
        e->address = (uint64_t)(uintptr_t)block;
        e->size = (uint32_t)b->size;
        e->callchain_id = b->callchain_id;
        asys_segment_commit(&e->header, ASYS_REC_WORD(ASYS_REC_HEAP_ALLOC_EVERY, sizeof *e / 8,
                                                      b->function, delta));
        return;
    }
    struct asys_rec_heap_alloc *r = asys_segment_reserve(&t->seg, sizeof *r, ticks, &delta);
    if (!r)
        return;
    r->address = (uint64_t)(uintptr_t)block;
    r->size = b->size;
    r->sampling_interval = heap_interval;
    r->callchain_id = b->callchain_id;
    r->reserved = 0;
    asys_segment_commit(&r->header,
                        ASYS_REC_WORD(ASYS_REC_HEAP_ALLOC, sizeof *r / 8, b->function, delta));
}

__attribute__((noinline)) static void record_alloc(unsigned fn, void *block, size_t size)
{
    int saved_errno = errno;
    uint64_t ticks = asys_now();
    struct asys_thread *t = asys_thread_enter_at(ticks);
    if (!t)
        goto out;
    struct asys_heap_sums *sums = heap_report_ticks ? sums_at(t, ticks) : NULL;
    struct heap_block b = {
        .size = size >= 1ull << SIZE_BITS ? (1ull << SIZE_BITS) - 1 : size, /* none is that big */
        .function = fn,
        .callchain_id = heap_depth ? asys_callstack_capture(t, heap_depth) : 0,
        .interval_id = sums ? sums->interval_id : 0,
    };
    if ((heap_report_ticks && !sums) || !table_insert((uint64_t)(uintptr_t)block, &b)) {
        /* no room to remember it (or to sum it): its free could not be matched */
        asys_segment_count_lost(t->seg.header, alloc_record_size(&b), ASYS_DROP_FULL);
        asys_thread_leave();
        goto out;
    }
    if (sums)
        sum_add(t, sums, SUM_ALLOC, &b, ticks);
    else
        write_alloc(t, block, &b, ticks);
    asys_thread_leave();
out:
    errno = saved_errno;
}

/* The free of sampled block `b` by `fn`: a record, or a part of its sum. */
__attribute__((noinline)) static void record_free(unsigned fn, uint64_t address,
                                                  const struct heap_block *b)
{
    uint64_t ticks = asys_now();
    struct asys_thread *t = asys_thread_enter_at(ticks);
    if (!t) {
        asys_thread_count_lost(free_record_size());
        return;
    }
    struct asys_heap_sums *sums = b->interval_id ? sums_at(t, ticks) : NULL;
    uint32_t delta;
    struct asys_rec_heap_free *r;
    struct asys_rec_heap_free_every *e;
    if (sums)
        sum_add(t, sums, SUM_FREE, b, ticks);
    else if (b->interval_id)
        asys_segment_count_lost(t->seg.header, sizeof(struct asys_rec_heap_free_sum),
                                ASYS_DROP_FULL);
    else if (heap_interval == 1 && (e = asys_segment_reserve(&t->seg, sizeof *e, ticks, &delta))) {
        e->address = address;
        asys_segment_commit(&e->header,
                            ASYS_REC_WORD(ASYS_REC_HEAP_FREE_EVERY, sizeof *e / 8, fn, delta));
    } else if (heap_interval != 1 &&
               (r = asys_segment_reserve(&t->seg, sizeof *r, ticks, &delta))) {
        r->address = address;
        r->size = b->size;
        asys_segment_commit(&r->header,
                            ASYS_REC_WORD(ASYS_REC_HEAP_FREE, sizeof *r / 8, fn, delta));
    }
    asys_thread_leave();
}

/* Before the real free: the block may be handed out again right after it. */
__attribute__((unused)) static inline void forget(unsigned fn, void *block)
{
    struct heap_block b;
    if (block && !heap_nesting && maybe_sampled((uint64_t)(uintptr_t)block) && !asys_tls_busy &&
        table_remove((uint64_t)(uintptr_t)block, &b)) {
        int saved_errno = errno;
        record_free(fn, (uint64_t)(uintptr_t)block, &b);
        errno = saved_errno;
    }
}

__attribute__((unused)) static inline void *allocated(unsigned fn, void *block, size_t size)
{
    if (block && heap_sample(size))
        record_alloc(fn, block, size);
    return block;
}

int asys_heap_init(void)
{
    uint64_t interval, depth, report_ms;
    const char *enabled = asys_option_text("ASYS_HEAP_MEMORY_USAGE");
    if (!enabled || strcmp(enabled, "true") != 0 ||
        asys_option_u64("ASYS_HEAP_SAMPLING_INTERVAL", &interval) != 0 || interval == 0 ||
        asys_option_u64("ASYS_HEAP_BACKTRACE_DEPTH", &depth) != 0 ||
        asys_option_u64("ASYS_HEAP_REPORT_INTERVAL_MS", &report_ms) != 0 || report_ms > 3600000)
        return -1;
    /* room for the blocks sampled at once: at interval 1 every live block, up
     * to half a million (16 MiB, mapped as touched; a larger table costs a
     * cache miss per allocation) */
    uint64_t slots = interval == 1 ? 1ull << 20 : 1ull << 16;
    void *table = mmap(NULL, slots * sizeof(struct heap_slot), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (table == MAP_FAILED || !resolved())
        return -1;
    asys_callstack_own_object((const void *)(uintptr_t)asys_heap_init);
    heap_table = table;
    heap_mask = slots - 1;
    heap_interval = interval;
    heap_report_ms = (uint32_t)report_ms;
    heap_report_ticks = (uint64_t)((double)report_ms * 1e6 * asys_proc.ticks_per_ns);
    if (report_ms && !heap_report_ticks)
        heap_report_ticks = 1;
    heap_depth = (uint32_t)(depth > ASYS_CALLCHAIN_MAX_DEPTH ? ASYS_CALLCHAIN_MAX_DEPTH : depth);
    __atomic_store_n(&heap_on, 1, __ATOMIC_RELEASE);
    return 0;
}

#ifndef ASYS_HEAP_NO_WRAPPERS /* the unit tests link the collectors into a sanitized program */

/* ---- the C functions ---------------------------------------------------------- */

ASYS_EXPORT void *malloc(size_t size)
{
    if (ASYS_UNLIKELY(!resolved()))
        return bootstrap_alloc(size);
    return allocated(FN_MALLOC, real.malloc(size), size);
}

ASYS_EXPORT void free(void *block)
{
    if (ASYS_UNLIKELY(in_bootstrap(block)))
        return;
    forget(FN_FREE, block);
    if (ASYS_LIKELY(resolved()))
        real.free(block);
}

ASYS_EXPORT void *calloc(size_t count, size_t size)
{
    if (ASYS_UNLIKELY(!real.calloc) && !heap_resolving)
        resolve();
    if (ASYS_UNLIKELY(!real.calloc || heap_resolving)) { /* dlsym's own allocations */
        size_t bytes;
        if (__builtin_mul_overflow(count, size, &bytes))
            return NULL;
        void *p = bootstrap_alloc(bytes); /* static, so already zero */
        return p;
    }
    return allocated(FN_CALLOC, real.calloc(count, size), count * size);
}

ASYS_EXPORT void *realloc(void *block, size_t size)
{
    if (ASYS_UNLIKELY(in_bootstrap(block) || !resolved())) {
        void *p = resolved() ? real.malloc(size) : bootstrap_alloc(size);
        if (p && block) {
            size_t old = bootstrap_size(block);
            memcpy(p, block, old < size ? old : size);
        }
        return p;
    }
    struct heap_block old;
    int tracked = block && __atomic_load_n(&heap_on, __ATOMIC_RELAXED) && !heap_nesting &&
                  !asys_tls_busy && table_remove((uint64_t)(uintptr_t)block, &old);
    void *moved = real.realloc(block, size);
    if (tracked) {
        if (!moved && size) /* it failed: the old block lives on */
            table_insert((uint64_t)(uintptr_t)block, &old);
        else
            record_free(FN_REALLOC, (uint64_t)(uintptr_t)block, &old);
    }
    return size ? allocated(FN_REALLOC, moved, size) : moved;
}

ASYS_EXPORT void *reallocarray(void *block, size_t count, size_t size)
{
    size_t bytes;
    if (__builtin_mul_overflow(count, size, &bytes)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(block, bytes);
}

ASYS_EXPORT int posix_memalign(void **out, size_t alignment, size_t size)
{
    if (ASYS_UNLIKELY(!resolved()))
        return ENOMEM;
    int rc = real.posix_memalign(out, alignment, size);
    if (rc == 0)
        allocated(FN_POSIX_MEMALIGN, *out, size);
    return rc;
}

ASYS_EXPORT void *aligned_alloc(size_t alignment, size_t size)
{
    if (ASYS_UNLIKELY(!resolved()))
        return NULL;
    return allocated(FN_ALIGNED_ALLOC, real.aligned_alloc(alignment, size), size);
}

ASYS_EXPORT void *memalign(size_t alignment, size_t size)
{
    if (ASYS_UNLIKELY(!resolved()))
        return NULL;
    return allocated(FN_MEMALIGN, real.memalign(alignment, size), size);
}

ASYS_EXPORT void *valloc(size_t size)
{
    if (ASYS_UNLIKELY(!resolved()))
        return NULL;
    return allocated(FN_VALLOC, real.valloc(size), size);
}

ASYS_EXPORT void *pvalloc(size_t size)
{
    if (ASYS_UNLIKELY(!resolved()))
        return NULL;
    return allocated(FN_PVALLOC, real.pvalloc(size), size);
}

/* ---- the C++ operators -----------------------------------------------------------
 * Itanium ABI names (size_t is unsigned long: 'm').  Each forwards to a C++
 * runtime's own (new handlers and std::bad_alloc stay its business); the
 * malloc/free it makes inside are not counted again.  The runtime is the
 * next object's in the global scope (libstdc++.so), found once; where none
 * is there (a library opened with dlopen that carries its runtime, linked
 * -static-libstdc++, in a C program) it is the caller's object's own, else
 * any loaded object's, looked up per thread again whenever an object was
 * unloaded since; where no object defines it, operator new is malloc and
 * delete is free, as libstdc++'s are.  Never abort: the host must live. */

/* The runtime's function found outside the global scope, per thread and
 * operator: valid while the caller lies in [low, high) and no object was
 * unloaded since it was found. */
struct cxx_found {
    void *fn;
    uintptr_t low, high;
    uint32_t generation;
};

struct cxx_lookup {
    const char *name;
    uint32_t hash;
    uintptr_t caller;
    uintptr_t fn, low, high;
    int unknown;
};

/* The object holding the caller, if it defines the operator. */
static int caller_object_defines(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct cxx_lookup *l = arg;
    if (!asys_object_contains(info, l->caller, 1))
        return 0;
    if (asys_object_contains(info, (uintptr_t)(void *)caller_object_defines, 1))
        return 1; /* ours: these wrappers */
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && l->caller >= lo && l->caller - lo < ph->p_memsz) {
            l->low = lo;
            l->high = lo + ph->p_memsz;
        }
    }
    l->fn = asys_object_symbol(info, l->name, l->hash, &l->unknown);
    return 1;
}

/* Any object but asys's own libraries (whose operators are these wrappers). */
static int other_object_defines(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct cxx_lookup *l = arg;
    if (asys_object_contains(info, (uintptr_t)(void *)caller_object_defines, 1))
        return 0;
    uintptr_t fn = asys_object_symbol(info, l->name, l->hash, &l->unknown);
    if (!fn)
        return 0;
    l->fn = fn;
    return 1;
}

/* A runtime's `name` for a call from `caller`; NULL: use malloc/free. */
__attribute__((noinline)) static void *cxx_runtime(const char *name, uintptr_t caller,
                                                   struct cxx_found *found)
{
    uint32_t generation = __atomic_load_n(&asys_proc.code_generation, __ATOMIC_ACQUIRE);
    if (found->generation == generation && caller >= found->low && caller < found->high)
        return found->fn;
    struct cxx_lookup l = {name, asys_gnu_hash(name), caller, 0, 0, 0, 0};
    int was_busy = asys_tls_busy;
    asys_tls_busy = 1; /* the loader's lock and our lookups: nothing to record */
    dl_iterate_phdr(caller_object_defines, &l);
    uintptr_t low = l.low, high = l.high;
    if (!l.fn)
        dl_iterate_phdr(other_object_defines, &l);
    asys_tls_busy = was_busy;
    found->fn = (void *)l.fn;
    found->low = low;
    found->high = high ? high : low;
    found->generation = generation;
    return found->fn;
}

/* The global scope's (libstdc++.so's), resolved once; -1 while there is none. */
static void *cxx_next(const char *name, void **next)
{
    void *fn = __atomic_load_n(next, __ATOMIC_ACQUIRE);
    if (ASYS_LIKELY(fn != NULL))
        return fn == (void *)-1 ? NULL : fn;
    int was_busy = asys_tls_busy;
    asys_tls_busy = 1; /* dlsym's error message allocates */
    fn = dlsym(RTLD_NEXT, name);
    asys_tls_busy = was_busy;
    __atomic_store_n(next, fn ? fn : (void *)-1, __ATOMIC_RELEASE);
    return fn;
}

/* operator new without a runtime: what libstdc++'s does, short of the new
 * handler and the throw (no runtime to take them from). */
static void *cxx_new_fallback(size_t size, size_t alignment)
{
    if (ASYS_UNLIKELY(!resolved()))
        return bootstrap_alloc(size);
    if (!size)
        size = 1;
    if (!alignment)
        return real.malloc(size);
    size_t rounded = (size + alignment - 1) & ~(alignment - 1);
    return rounded >= size ? real.aligned_alloc(alignment, rounded) : NULL;
}

static void cxx_delete_fallback(void *block)
{
    if (block && !in_bootstrap(block) && resolved())
        real.free(block);
}

#define CXX_RUNTIME(mangled, params) \
    static void *next_fn; \
    static __thread struct cxx_found found ASYS_TLS; \
    void *fn = cxx_next(#mangled, &next_fn); \
    if (ASYS_UNLIKELY(!fn)) \
        fn = cxx_runtime(#mangled, (uintptr_t)__builtin_return_address(0), &found);
#define CXX_NEW(mangled, fn_id, params, args, alignment) \
    ASYS_EXPORT void *mangled params \
    { \
        CXX_RUNTIME(mangled, params) \
        heap_nesting++; \
        void *block = fn ? ((void *(*)params)fn)args : cxx_new_fallback(size, alignment); \
        heap_nesting--; \
        return allocated(fn_id, block, size); \
    }
#define CXX_DELETE(mangled, fn_id, params, args) \
    ASYS_EXPORT void mangled params \
    { \
        CXX_RUNTIME(mangled, params) \
        forget(fn_id, block); \
        heap_nesting++; \
        if (fn) \
            ((void(*) params)fn) args; \
        else \
            cxx_delete_fallback(block); \
        heap_nesting--; \
    }

typedef size_t align_val; /* std::align_val_t */
struct nothrow; /* std::nothrow_t, passed by reference */

CXX_NEW(_Znwm, FN_NEW, (size_t size), (size), 0)
CXX_NEW(_Znam, FN_NEW_ARRAY, (size_t size), (size), 0)
CXX_NEW(_ZnwmRKSt9nothrow_t, FN_NEW, (size_t size, const struct nothrow *t), (size, t), 0)
CXX_NEW(_ZnamRKSt9nothrow_t, FN_NEW_ARRAY, (size_t size, const struct nothrow *t), (size, t), 0)
CXX_NEW(_ZnwmSt11align_val_t, FN_NEW, (size_t size, align_val a), (size, a), a)
CXX_NEW(_ZnamSt11align_val_t, FN_NEW_ARRAY, (size_t size, align_val a), (size, a), a)
CXX_NEW(_ZnwmSt11align_val_tRKSt9nothrow_t, FN_NEW,
        (size_t size, align_val a, const struct nothrow *t), (size, a, t), a)
CXX_NEW(_ZnamSt11align_val_tRKSt9nothrow_t, FN_NEW_ARRAY,
        (size_t size, align_val a, const struct nothrow *t), (size, a, t), a)

CXX_DELETE(_ZdlPv, FN_DELETE, (void *block), (block))
CXX_DELETE(_ZdaPv, FN_DELETE_ARRAY, (void *block), (block))
CXX_DELETE(_ZdlPvm, FN_DELETE, (void *block, size_t size), (block, size))
CXX_DELETE(_ZdaPvm, FN_DELETE_ARRAY, (void *block, size_t size), (block, size))
CXX_DELETE(_ZdlPvRKSt9nothrow_t, FN_DELETE, (void *block, const struct nothrow *t), (block, t))
CXX_DELETE(_ZdaPvRKSt9nothrow_t, FN_DELETE_ARRAY, (void *block, const struct nothrow *t),
           (block, t))
CXX_DELETE(_ZdlPvSt11align_val_t, FN_DELETE, (void *block, align_val a), (block, a))
CXX_DELETE(_ZdaPvSt11align_val_t, FN_DELETE_ARRAY, (void *block, align_val a), (block, a))
CXX_DELETE(_ZdlPvmSt11align_val_t, FN_DELETE, (void *block, size_t size, align_val a),
           (block, size, a))
CXX_DELETE(_ZdaPvmSt11align_val_t, FN_DELETE_ARRAY, (void *block, size_t size, align_val a),
           (block, size, a))
CXX_DELETE(_ZdlPvSt11align_val_tRKSt9nothrow_t, FN_DELETE,
           (void *block, align_val a, const struct nothrow *t), (block, a, t))
CXX_DELETE(_ZdaPvSt11align_val_tRKSt9nothrow_t, FN_DELETE_ARRAY,
           (void *block, align_val a, const struct nothrow *t), (block, a, t))

#endif
