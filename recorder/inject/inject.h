/* libasys-inject.so: state shared by the collectors inside a traced process.
 *
 * One struct asys_thread per recording thread (mmap'd, never malloc'd, so heap
 * hooks cannot recurse), reached through an initial-exec TLS pointer.  The
 * process-wide state lives in one struct asys_process.
 *
 * Collectors bracket every hook with asys_thread_enter()/asys_thread_leave():
 * enter returns NULL when recording is off, when the hook re-entered itself
 * (a signal handler, a library call made by the collector), or after the
 * thread's segment was closed.
 */
#ifndef ASYS_INJECT_H
#define ASYS_INJECT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

#include "asys_format.h"
#include "clock.h"
#include "segment_writer.h"

#define ASYS_TLS __attribute__((tls_model("initial-exec")))
#define ASYS_EXPORT __attribute__((visibility("default")))
/* ASYS_RUNTIME_API (segment_writer.h): what the collectors preloaded in
 * libraries of their own use of libasys-inject.so.  ASYS_SATELLITE_API: what
 * those libraries define for libasys-inject.so, which refers to it weakly
 * (NULL when the library is not loaded: its collector is off). */
#define ASYS_SATELLITE_API __attribute__((weak, visibility("default")))
/* State that every process's start or exit writes or reads: in .data, on
 * the pages the loader writes anyway (relocations, the start of .bss), not
 * on pages of .bss of its own, each a page fault in every process. */
#define ASYS_START_DATA __attribute__((section(".data.asys_start")))
/* A function that runs once per process (a collector's init, an exit hook)
 * in a file outside those the build lays out first (recorder/CMakeLists.txt):
 * the linker puts cold code at the start of the text, beside them, so that
 * a process's start faults in fewer pages of code; it is compiled for size. */
#define ASYS_START_CODE __attribute__((cold))
/* A wrapper of a libc call that the start itself makes (the runtime's calls
 * bind to the library's own wrappers): kept beside the start code, compiled
 * as usual. */
#define ASYS_START_WRAPPER __attribute__((section(".text.startup.asys")))
#define ASYS_LIKELY(x) __builtin_expect(!!(x), 1)
#define ASYS_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* One entry of the injected library's collector registry (collectors.c). */
struct asys_inject_collector {
    const char *name; /* as ASYS_COLLECTORS names it */
    uint64_t feature; /* enum asys_feature: the collector */
    uint64_t records; /* the record families it writes (the segments' feature mask) */
    /* at process start, once the session is known: reads the collector's
     * options; -1 turns the collector off (asys_debug says why) */
    int (*init)(void);
};
/* NULL-terminated. */
extern const struct asys_inject_collector asys_inject_collectors[];

enum asys_unwind_method {
    ASYS_UNWIND_DWARF =
        0, /* .eh_frame CFI through libgcc's unwinder: right without frame pointers */
    ASYS_UNWIND_FP = 1, /* frame-pointer chain: faster, wrong past code built without them */
};

/* Per-thread cache of interned strings: content hash -> string id. */
#define ASYS_STRING_CACHE_SIZE 512
struct asys_string_cache_entry {
    uint64_t hash;
    uint32_t length;
    uint32_t string_id;
};

/* Per-thread cache of string literals: pointer -> string id.  Only pointers
 * into read-only segments of loaded objects go here (their text cannot
 * change); `generation` guards against a dlclose'd object's address reuse.
 * string_id 0 remembers a pointer into writable memory: its text is looked
 * up by content, without asking the loader again. */
#define ASYS_LITERAL_CACHE_SIZE 256
struct asys_literal_cache_entry {
    const char *text;
    uint32_t string_id;
    uint32_t generation;
};

/* Per-thread cache of the call chains this thread defined: hash -> id;
 * 4-way set-associative (a direct-mapped cache redefined a chain whenever
 * two hot stacks shared a slot: 75 k chains for 64 stacks). */
#define ASYS_CALLCHAIN_CACHE_SIZE 256
#define ASYS_CALLCHAIN_CACHE_WAYS 4
struct asys_callchain_cache_entry {
    uint64_t hash;
    uint32_t callchain_id;
    uint32_t depth;
};

/* Per-thread cache of unwound stacks (callstack.c): the first frame outside
 * this library (its return address and where it returns to), the frames
 * found from there and the stack slots their return addresses lay in.  A
 * stack whose slots still hold the same return addresses is the same stack:
 * no DWARF unwinding (3 us) for a call site seen before. */
#define ASYS_STACK_CACHE_SIZE 32
#define ASYS_STACK_CACHE_DEPTH 32
struct asys_stack_cache_entry {
    uint64_t return_address; /* into the first frame outside this library */
    uint64_t stack_pointer; /* that frame's stack pointer once it is returned to */
    uint32_t depth; /* frames (at most the capture's limit) */
    uint32_t limit; /* the depth the capture asked for */
    uint32_t callchain_id;
    uint32_t reserved;
    uint64_t frames[ASYS_STACK_CACHE_DEPTH];
    uint64_t slots[ASYS_STACK_CACHE_DEPTH]; /* slots[i]: where frames[i + 1] lay */
};

/* Nesting depth per domain, for the level NVTX push/pop return. */
#define ASYS_DEPTH_SLOTS 256

/* The string, call-chain and stack caches' entries come from one pool in
 * the thread, in the order they are first used (a slot's index holds its
 * entry's 16-byte unit + 1, 0 while unused): hashed straight into their own
 * arrays, a process's first few entries lay on four or five pages of the
 * thread's state, a page fault each (10-17 us on a guest without hardware
 * page tables); from the pool they share one or two. */
#define ASYS_CACHE_UNIT 16
#define ASYS_STRING_CACHE_PAIRS (ASYS_STRING_CACHE_SIZE / 2) /* 2-way */
#define ASYS_CALLCHAIN_CACHE_SETS (ASYS_CALLCHAIN_CACHE_SIZE / ASYS_CALLCHAIN_CACHE_WAYS)
#define ASYS_THREAD_POOL_BYTES \
    (ASYS_STRING_CACHE_SIZE * sizeof(struct asys_string_cache_entry) + \
     ASYS_CALLCHAIN_CACHE_SIZE * sizeof(struct asys_callchain_cache_entry) + \
     ASYS_STACK_CACHE_SIZE * sizeof(struct asys_stack_cache_entry))
_Static_assert(sizeof(struct asys_string_cache_entry) % ASYS_CACHE_UNIT == 0 &&
                   sizeof(struct asys_callchain_cache_entry) % ASYS_CACHE_UNIT == 0 &&
                   sizeof(struct asys_stack_cache_entry) % ASYS_CACHE_UNIT == 0,
               "cache entries are whole units");
_Static_assert(ASYS_THREAD_POOL_BYTES / ASYS_CACHE_UNIT < UINT16_MAX, "an index fits 16 bits");

struct asys_heap_sums;

struct asys_thread {
    struct asys_segment_writer seg;
    struct asys_heap_sums *heap_sums; /* --heap-report-interval: this interval's sums (heap.c) */
    uint32_t tid;
    uint32_t thread_index;
    uint64_t next_range_serial;
    struct asys_thread *next; /* registry of live threads */
    int32_t depth[ASYS_DEPTH_SLOTS];
    /* --capture-range: the level below which this thread's ranges were
     * pushed before the window it records in opened (their pops are left out
     * with their pushes), per domain, and that window's number */
    int32_t capture_base[ASYS_DEPTH_SLOTS];
    uint32_t capture_window[ASYS_DEPTH_SLOTS];
    uint64_t modules_generation; /* loader state when this thread last wrote the modules */
    uintptr_t stack_low, stack_high; /* for frame-pointer walks; 0 until first needed */
    uint32_t callchain_evict; /* round-robin way to replace next */
    uint32_t pool_used; /* bytes of `pool` given to cache entries */
    /* each an entry's place in `pool` (asys_thread_cache): a pair of string
     * entries, a set of call-chain entries, a stack */
    uint16_t string_pairs[ASYS_STRING_CACHE_PAIRS];
    uint16_t callchain_sets[ASYS_CALLCHAIN_CACHE_SETS];
    uint16_t stacks[ASYS_STACK_CACHE_SIZE];
    _Alignas(64) uint8_t pool[ASYS_THREAD_POOL_BYTES];
    /* hashed straight: HGTX's hot path looks it up at every push */
    struct asys_literal_cache_entry literals[ASYS_LITERAL_CACHE_SIZE];
};

/* The cache entry of `slot` (an index of struct asys_thread), NULL while
 * unused; with `bytes`, one is given from the pool the first time. */
static inline void *asys_thread_cache(struct asys_thread *t, uint16_t *slot, uint32_t bytes)
{
    if (!*slot) {
        if (!bytes)
            return NULL;
        /* every slot takes at most one entry of its cache's size: the pool
         * holds them all */
        *slot = (uint16_t)(t->pool_used / ASYS_CACHE_UNIT + 1);
        t->pool_used += bytes;
    }
    return t->pool + (size_t)(*slot - 1) * ASYS_CACHE_UNIT;
}

struct asys_process {
    int enabled; /* a session is configured and its directory is writable */
    int fork_untraced; /* --trace-fork-before-exec false: a fork child records nothing */
    uint64_t features; /* enum asys_feature: the collectors recording in this process */
    uint64_t segment_features; /* what their segments may hold: core + their record families */
    int clock_kind;
    uint32_t pid;
    uint32_t ppid;
    uint64_t process_uid;
    uint64_t parent_process_uid;
    uint32_t inherited_string_limit;
    uint32_t origin; /* enum asys_process_origin */
    uint64_t chunk_size;
    uint64_t max_segment_size;
    int debug;
    double ticks_per_ns; /* for thresholds given in ns */
    uint64_t osrt_threshold_ticks; /* --osrt-threshold */
    uint64_t osrt_backtrace_ticks; /* --osrt-backtrace-threshold */
    uint32_t osrt_backtrace_depth; /* --osrt-backtrace-depth */
    int unwind_method; /* enum asys_unwind_method */
    int process_info_written;
    uint64_t main_returned_ns; /* atomic; CLOCK_MONOTONIC, 0 while main runs (main_return.c) */
    uint32_t cupti_pid; /* atomic; the process CUPTI was attached in (hggc.c), 0 before; a
                         * fork child keeps its parent's */
    uint32_t next_string_id; /* atomic */
    uint32_t next_callchain_id; /* atomic */
    uint32_t code_generation; /* atomic; bumped around every dlclose */
    uint32_t next_thread_index; /* atomic */
    pthread_mutex_t registry_lock;
    struct asys_thread *threads;
    /* the image's first segment header, mapped for the image's life: threads
     * that get no segment of their own count themselves and their events there */
    struct asys_segment_header *anchor;
    /* a fork child's: its parent image's anchor (the mapping is shared), where
     * a child that gets no segment at all counts itself and its events */
    struct asys_segment_header *parent_anchor;
    int counted_as_lost_process;
    struct asys_arena arena; /* the session's segment arena (control == NULL: files) */
    pthread_key_t thread_key;
    char segment_dir[1024];
    char exe_path[1024]; /* the image's executable, once read (asys_executable_path) */
};

extern ASYS_RUNTIME_API struct asys_process asys_proc;
extern ASYS_RUNTIME_API __thread struct asys_thread *asys_tls_thread ASYS_TLS;
extern ASYS_RUNTIME_API __thread int asys_tls_busy ASYS_TLS;
/* Events since this thread failed to get a segment (0: it did not fail). */
extern ASYS_RUNTIME_API __thread uint32_t asys_tls_no_segment ASYS_TLS;

/* The thread that faults the writers' next slots in and unmaps their full
 * ones (page_helper.c); a fork's child forgets its parent's. */
extern const struct asys_page_helper asys_page_helper;
void asys_page_helper_after_fork(void);

/* Idempotent: reads the session from the environment on first use. */
void asys_inject_init(void);

/* The image's executable, resolved once (a fork child keeps its parent's). */
const char *asys_executable_path(void);

/* Registers the calling thread; NULL when recording is off or failed.  Its
 * first records are stamped `not_after` when non-zero (the time of the event
 * that made it register, taken before), else now. */
ASYS_RUNTIME_API struct asys_thread *asys_thread_register(uint64_t not_after);

/* A second segment for the calling thread, which the caller writes alone
 * (asys_tls_busy held around its writes) and closes; NULL when none. */
struct asys_thread *asys_thread_open_extra(void);
void asys_thread_close_extra(struct asys_thread *t);

/* Heap aggregates (heap.c), with the thread's hooks held busy: `flush`
 * writes the thread's sums now, ending its interval (thread exit, fork,
 * process exit); with `final` the thread's later sampled events are
 * written at once (process exit: later exit handlers still allocate).
 * `forget` drops them unwritten (a fork child's copies of its parent's). */
ASYS_SATELLITE_API void asys_heap_thread_flush(struct asys_thread *t, int final);
ASYS_SATELLITE_API void asys_heap_thread_forget(struct asys_thread *t);
/* Counts another thread's unwritten sums as lost (process exit; the
 * registry lock held, so they stay mapped). */
ASYS_SATELLITE_API void asys_heap_thread_count_unwritten(struct asys_thread *t);

/* Counts a record lost because its hook could not record (re-entry). */
ASYS_RUNTIME_API void asys_thread_count_lost(uint32_t size);
/* An event of a thread that has no segment: counted in the image's anchor;
 * 1 when it is time to try to get a segment again. */
ASYS_RUNTIME_API int asys_thread_unrecorded(void);

/* Enters for an event stamped `ticks` (0: not stamped yet). */
static inline struct asys_thread *asys_thread_enter_at(uint64_t ticks)
{
    if (ASYS_UNLIKELY(asys_tls_busy))
        return NULL;
    asys_tls_busy = 1;
    struct asys_thread *t = asys_tls_thread;
    if (ASYS_UNLIKELY(!t)) {
        if (!asys_tls_no_segment || asys_thread_unrecorded())
            t = asys_thread_register(ticks);
        if (!t)
            asys_tls_busy = 0;
    }
    return t;
}

static inline struct asys_thread *asys_thread_enter(void)
{
    return asys_thread_enter_at(0);
}

static inline void asys_thread_leave(void)
{
    asys_tls_busy = 0;
}

static inline uint64_t asys_now(void)
{
    return asys_clock_ticks(asys_proc.clock_kind);
}

/* String interning (string_intern.c).  Returns the id of `text` in this
 * process image, writing its STRING_DEF on first sight in this thread. */
ASYS_RUNTIME_API uint32_t asys_intern(struct asys_thread *t, const char *text);

/* The slot of `text` in a thread's literal cache. */
static inline struct asys_literal_cache_entry *asys_literal_slot(struct asys_thread *t,
                                                                 const char *text)
{
    _Static_assert(ASYS_LITERAL_CACHE_SIZE == 1 << 8, "the slot takes 8 bits of the hash");
    return &t->literals[((uintptr_t)text * 0x9e3779b97f4a7c15ull) >> (64 - 8)];
}

/* The id of the literal `text` when this thread has interned it before,
 * else 0 (then asys_intern): what a hot hook asks without a call. */
static inline uint32_t asys_intern_cached(struct asys_thread *t, const char *text)
{
    const struct asys_literal_cache_entry *lit = asys_literal_slot(t, text);
    if (lit->text == text &&
        lit->generation == __atomic_load_n(&asys_proc.code_generation, __ATOMIC_RELAXED))
        return lit->string_id;
    return 0;
}
uint32_t asys_intern_len(struct asys_thread *t, const char *text, size_t length);
/* A text written once (a process's executable and command line, a thread's
 * name): a new id, defined without the caches, whose pages a short process
 * would otherwise fault in for one lookup. */
uint32_t asys_intern_once(struct asys_thread *t, const char *text, size_t length);
/* wchar_t text, converted to UTF-8. */
uint32_t asys_intern_wide(struct asys_thread *t, const wchar_t *text);
/* Converts NUL-terminated wide text to NUL-terminated UTF-8 (cut to fit). */
size_t asys_wide_to_utf8(char *out, size_t size, const wchar_t *text);

/* Call stacks (callstack.c).  Captures the caller's stack (frames inside
 * libasys-inject.so are left out), defines it in the thread's segment the
 * first time, and returns its id (0 when nothing could be captured). */
ASYS_RUNTIME_API uint32_t asys_callstack_capture(struct asys_thread *t, uint32_t depth);
/* Finds the address range of this library's code, once (callstack.c). */
void asys_callstack_init(void);
/* Frames in the object that holds `code` are asys's too (a collector's
 * library of its own, from its init): left out of stacks like this one's. */
ASYS_RUNTIME_API void asys_callstack_own_object(const void *code);

/* --capture-range (capture.c).  *asys_capture_flag is 1 while events are
 * recorded: always without a capture range, else inside a window.  It
 * points at asys_capture_on, this process's, except in a session opened
 * and closed from outside (asys launch/start/stop, --delay): there it points
 * into the arena's control block, one word every process of the session
 * maps, so that the launcher's store reaches them all at once. */
enum asys_capture_mode {
    ASYS_CAPTURE_ALWAYS,
    ASYS_CAPTURE_PROFILER_CALLS, /* cudaProfilerStart .. cudaProfilerStop */
    ASYS_CAPTURE_HGTX_RANGE, /* the push/start .. pop/end of a named HGTX range */
    ASYS_CAPTURE_SESSION, /* asys start .. asys stop, or --delay's end onwards */
};
extern ASYS_RUNTIME_API int asys_capture_on;
extern ASYS_RUNTIME_API int *asys_capture_flag;
static inline int asys_capturing(void)
{
    return (int)__atomic_load_n(asys_capture_flag, __ATOMIC_RELAXED);
}
/* The HGTX range that opened the window: its pop (same thread, domain and
 * level) or its end (same range id) closes it. */
struct asys_capture_holder {
    uint32_t tid;
    uint16_t domain;
    int32_t level; /* push/pop: the level the push returned; -1 for start/end */
    uint64_t range_id; /* start/end */
};
void asys_capture_init(void);
/* The mode and the window count are read by every HGTX push and pop: the
 * variables behind them are exported so those read them without a call. */
extern ASYS_RUNTIME_API enum asys_capture_mode asys_capture_current_mode;
extern ASYS_RUNTIME_API const uint32_t *asys_capture_window_word;
static inline enum asys_capture_mode asys_capture_mode(void)
{
    return asys_capture_current_mode;
}
/* Opens a window (writes its BEGIN record into t's segment at `ticks`);
 * 1 when it did, 0 when one is open or no more are allowed. */
int asys_capture_begin(struct asys_thread *t, uint64_t ticks, uint32_t name_id,
                       const struct asys_capture_holder *holder);
/* Closes the open window (unless --capture-range-end=none). */
void asys_capture_end(struct asys_thread *t, uint64_t ticks);
const struct asys_capture_holder *asys_capture_holder(void);
/* HGGC: an API call recorded inside the window; device activity is kept
 * when its correlation id is one of a window's. */
void asys_capture_note_correlation(uint32_t correlation);
/* The number of windows opened so far (0 without a capture range): this
 * process's, or in a session the arena's. */
static inline uint32_t asys_capture_window_number(void)
{
    return __atomic_load_n(asys_capture_window_word, __ATOMIC_ACQUIRE);
}
int asys_capture_keeps(uint32_t correlation);
/* HGTX: whether a matching range would open a window now, and the matching. */
int asys_capture_waits_for_hgtx(void);
int asys_capture_hgtx_domain(uint16_t domain);
int asys_capture_hgtx_text(const char *text);
int asys_capture_hgtx_registered(uint32_t string_id);
void asys_capture_hgtx_domain_created(uint16_t domain, const char *name);
void asys_capture_hgtx_string_registered(uint32_t string_id, const char *text);

/* Collector start-up (the registry calls them): they read their options. */
int asys_hgtx_init(void);
int asys_hggc_init(void);
int asys_python_init(void);
int asys_pccl_init(void); /* pccl.c: NCCL's profiler plugin */
/* In libasys-osrt.so (or libasys-inject+osrt.so) and libasys-heap.so,
 * preloaded only when their collector is chosen (whatever a program calls
 * costs nothing otherwise). */
ASYS_SATELLITE_API int asys_osrt_init(void);
ASYS_SATELLITE_API int asys_heap_init(void);
/* In acompute.c: libasys-inject+acompute.so (+osrt), or libasys-acompute.so,
 * preloaded when acdnn or acblas is chosen. */
ASYS_SATELLITE_API int asys_acdnn_init(void);
ASYS_SATELLITE_API int asys_acblas_init(void);
/* libasys-video.so (video.c): NVDEC, NVENC and nvJPEG calls. */
ASYS_SATELLITE_API int asys_video_init(void);
/* --python-backtrace=hggc (python.c): whether Python stacks are wanted now,
 * and the Python stack of an HGGC API call of thread t (entered). */
int asys_python_hggc_backtraces(void);
void asys_python_hggc_stack(struct asys_thread *t, uint32_t correlation, uint32_t callchain);

/* HGTX domain ids shared with the NVTX hooks (hgtx.c): the id of domain
 * `name`, its DOMAIN record written by the calling thread when it is new
 * (call it outside asys_thread_enter/leave). */
uint16_t asys_hgtx_domain_create(const char *name);

/* atexit(fn), without the stub that glibc links into the library (the last
 * page of its code: a page fault in every process). */
ASYS_RUNTIME_API int asys_at_exit(void (*fn)(void));

/* pthread_atfork, without glibc's stub either (inline: the handlers belong
 * to the library of the caller, its __dso_handle). */
#if defined(__GLIBC__)
extern void *__dso_handle;
extern int __register_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void),
                             void *dso_handle);
static inline int asys_at_fork(void (*prepare)(void), void (*parent)(void), void (*child)(void))
{
    return __register_atfork(prepare, parent, child, __dso_handle);
}
#else
static inline int asys_at_fork(void (*prepare)(void), void (*parent)(void), void (*child)(void))
{
    return pthread_atfork(prepare, parent, child);
}
#endif

/* Debug output, only when ASYS_DEBUG is set; the arguments are evaluated
 * only then (a process's start would page in their code). */
ASYS_RUNTIME_API void asys_debug_print(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define asys_debug(...)                                                                            \
    do {                                                                                           \
        if (asys_proc.debug)                                                                       \
            asys_debug_print(__VA_ARGS__);                                                         \
    } while (0)

/* An unsigned decimal from the environment; `fallback` when unset or not a number
 * (tuning knobs and test hooks, which have no option). */
uint64_t asys_env_u64(const char *name, uint64_t fallback);
/* An option the launcher passes (every option of an enabled collector has
 * its variable set; the default lives only in the launcher's option table):
 * 0, or -1 after a debug line when it is missing or not a number. */
ASYS_RUNTIME_API int asys_option_u64(const char *name, uint64_t *out);
/* The same for text options; NULL when missing. */
ASYS_RUNTIME_API const char *asys_option_text(const char *name);

/* Small helpers that allocate nothing (usable after fork and in handlers). */
char *asys_append_str(char *dst, char *end, const char *s);
char *asys_append_u64(char *dst, char *end, uint64_t v, int base);

#endif
