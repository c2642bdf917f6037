/* ACDNN / ACBLAS collector (libasys-acompute.so): every public entry point of
 * cuDNN, cuBLAS, cuBLASLt and cuBLASXt, wrapped by code generated from the
 * installed headers (acompute_gen.py) and recorded here.
 *
 * How calls reach the wrappers:
 *  - the library is preloaded, so a program or library linked against
 *    libcudnn/libcublas (at build time, or dlopen'ed later with its
 *    dependencies) binds its calls to these definitions first;
 *  - dlsym(handle, "cublas...") on a handle of those libraries (JAX,
 *    TensorFlow, CuPy, PyTorch's lazy loading) is interposed: the real
 *    function is remembered and the wrapper returned.  dlsym(RTLD_NEXT, ...)
 *    jumps straight to the real dlsym (x86-64: a tail jump keeps the
 *    caller's return address, which RTLD_NEXT is relative to).  Lookups made
 *    by the libraries themselves (libcudnn.so.9 finding its sub-libraries'
 *    functions) pass through untouched: those are not public calls.
 * A wrapper forwards to the real function: dlsym(RTLD_NEXT), else the
 * loaded library that exports the name (a library loaded RTLD_LOCAL).
 *
 * A call is recorded when it returns, stamped with its end (records of nested
 * calls stay in time order), with its nesting depth: a cuDNN call that calls
 * cuBLAS records both, the inner one at depth 1.  The stream a handle was
 * set to (XSetStream) is kept per handle in a lock-free table.  The API's
 * name is written once per thread (an API record before its first call); a
 * call on the handle and stream of the thread's previous one is a CALL_SAME
 * record, 16 bytes shorter (fresh segment memory is most of a call's cost). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "acompute.h"

ASYS_TLS __thread uint32_t acompute_tls_depth;
/* APIs whose name this thread has written */
static ASYS_TLS __thread uint8_t api_written[(ACOMPUTE_API_COUNT + 8) / 8];
/* the handle, stream and their flags of the thread's last call record, and
 * the segment writer it went to (a CALL_SAME record repeats them) */
static ASYS_TLS __thread struct {
    const void *writer;
    uint64_t handle, stream;
    uint32_t flags;
} last_call;

ASYS_START_DATA uint8_t acompute_library_on[8]; /* written at every start */
void *acompute_real_table[ACOMPUTE_API_COUNT + 1];
static void *wrappers[ACOMPUTE_API_COUNT + 1];
static int wrappers_filled;
static uint8_t resolved_by_dlsym[ACOMPUTE_API_COUNT + 1];
static uint64_t backtrace_ticks = UINT64_MAX;
ASYS_START_DATA static uint32_t backtrace_depth; /* written at every start */

typedef void *(*dlsym_fn)(void *, const char *);
ASYS_START_DATA __attribute__((visibility("hidden"))) dlsym_fn acompute_real_dlsym;

/* ---- the real functions -------------------------------------------------- */

ASYS_START_CODE static dlsym_fn real_dlsym(void)
{
    dlsym_fn f = __atomic_load_n(&acompute_real_dlsym, __ATOMIC_ACQUIRE);
    if (!f) {
        void *p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
        if (!p)
            p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
        f = (dlsym_fn)(uintptr_t)p;
        /* a versioned lookup skips unversioned definitions: another tool's
         * dlsym preloaded after this library (libasys-video.so) would be
         * passed by; the next dlsym in the order, whatever its version */
        void *next = f ? f(RTLD_NEXT, "dlsym") : NULL;
        if (next)
            f = (dlsym_fn)(uintptr_t)next;
        __atomic_store_n(&acompute_real_dlsym, f, __ATOMIC_RELEASE);
    }
    return f;
}

static void fill_wrappers(void)
{
    if (__atomic_load_n(&wrappers_filled, __ATOMIC_ACQUIRE))
        return;
    acompute_wrappers_cudnn(wrappers);
    acompute_wrappers_cublas(wrappers);
    acompute_wrappers_cublaslt(wrappers);
    acompute_wrappers_cublasxt(wrappers);
    __atomic_store_n(&wrappers_filled, 1, __ATOMIC_RELEASE);
}

static int is_library_file(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return !strncmp(base, "libcudnn", 8) || !strncmp(base, "libcublas", 9);
}

#define MAX_LIBRARIES 24
struct loaded_libraries {
    int count;
    char paths[MAX_LIBRARIES][256];
};

static int collect_library(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct loaded_libraries *l = data;
    if (info->dlpi_name && is_library_file(info->dlpi_name) && l->count < MAX_LIBRARIES &&
        strlen(info->dlpi_name) < sizeof l->paths[0])
        strcpy(l->paths[l->count++], info->dlpi_name);
    return 0;
}

static size_t base_length(const char *path)
{
    const char *base = strrchr(path, '/');
    return strlen(base ? base + 1 : path);
}

/* The name in a loaded cuDNN/cuBLAS library (loaded RTLD_LOCAL, so not
 * after this library in the global scope): the shortest file name first
 * (libcudnn.so.9 before its sub-libraries). */
static void *find_loaded(const char *name)
{
    struct loaded_libraries libs;
    libs.count = 0;
    dl_iterate_phdr(collect_library, &libs);
    void *found = NULL;
    size_t best = SIZE_MAX;
    for (int i = 0; i < libs.count; i++) {
        void *h = dlopen(libs.paths[i], RTLD_LAZY | RTLD_NOLOAD);
        if (!h)
            continue;
        void *p = real_dlsym()(h, name);
        size_t length = base_length(libs.paths[i]);
        if (p && length < best) {
            found = p;
            best = length;
        }
        dlclose(h);
    }
    return found;
}

void *acompute_resolve(uint32_t id)
{
    if (id == 0 || id > ACOMPUTE_API_COUNT || !real_dlsym())
        return NULL;
    int saved_errno = errno;
    fill_wrappers();
    const char *name = acompute_api_name(id);
    void *p = real_dlsym()(RTLD_NEXT, name);
    if (!p || p == wrappers[id])
        p = find_loaded(name);
    if (p == wrappers[id])
        p = NULL;
    if (p) {
        void *expected = NULL;
        if (!__atomic_compare_exchange_n(&acompute_real_table[id], &expected, p, 0,
                                         __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            p = expected;
    } else if (asys_proc.debug) {
        asys_debug("acompute: %s: no library defines it", name);
    }
    errno = saved_errno;
    return p;
}

static int compare_name(const void *key, const void *entry)
{
    return strcmp(key, acompute_api_text + *(const uint32_t *)entry);
}

static uint32_t api_id(const char *name)
{
    const uint32_t *e = bsearch(name, acompute_api_name_at + 1, ACOMPUTE_API_COUNT,
                                sizeof acompute_api_name_at[0], compare_name);
    return e ? (uint32_t)(e - acompute_api_name_at) : 0;
}

/* ---- dlsym ------------------------------------------------------------------ */

/* dlsym(handle, name) for any handle but RTLD_NEXT, entered by a jump from
 * dlsym: the return address is the program's. */
__attribute__((visibility("hidden"), used, noinline)) void *acompute_dlsym_handle(void *handle,
                                                                                  const char *name)
{
    void *caller = __builtin_return_address(0);
    dlsym_fn real = real_dlsym();
    if (!real)
        return NULL;
    void *p = real(handle, name);
    if (!p || handle == RTLD_DEFAULT || !name || name[0] != 'c' || name[1] != 'u')
        return p;
    int saved_errno = errno;
    uint32_t id = api_id(name);
    if (!id || !acompute_library_on[acompute_api_library[id]])
        goto out;
    fill_wrappers();
    if (p == wrappers[id])
        goto out;
    Dl_info info;
    if (dladdr(caller, &info) && info.dli_fname && is_library_file(info.dli_fname))
        goto out; /* the libraries' own lookups */
    void *expected = NULL;
    __atomic_compare_exchange_n(&acompute_real_table[id], &expected, p, 0, __ATOMIC_ACQ_REL,
                                __ATOMIC_ACQUIRE);
    __atomic_store_n(&resolved_by_dlsym[id], 1, __ATOMIC_RELEASE);
    p = wrappers[id];
out:
    errno = saved_errno;
    return p;
}

/* The real dlsym, resolved on first use (dlsym's RTLD_NEXT path may come
 * before this library's constructor: a library initialized earlier). */
__attribute__((visibility("hidden"), used)) void *acompute_resolve_dlsym(void)
{
    return (void *)(uintptr_t)real_dlsym();
}

/* dlsym(RTLD_NEXT, ...) reaches the real dlsym by a jump, never a call: the
 * return address it finds is the caller's, which RTLD_NEXT is relative to.
 * Elsewhere (no such jump) dlsym is not interposed: calls through dlsym'd
 * pointers are then not traced. */
#if defined(__x86_64__)
/* beside the start code (ASYS_START_WRAPPER): the runtime's start calls dlsym */
__asm__(".pushsection .text.startup.asys, \"ax\", @progbits\n"
        ".globl dlsym\n"
        ".type dlsym, @function\n"
        "dlsym:\n"
        "    cmpq $-1, %rdi\n"
        "    jne acompute_dlsym_handle\n"
        "    movq acompute_real_dlsym(%rip), %rax\n"
        "    testq %rax, %rax\n"
        "    jz 1f\n"
        "    jmp *%rax\n"
        "1:  pushq %rdi\n" /* the arguments survive the resolution */
        "    pushq %rsi\n"
        "    subq $8, %rsp\n" /* the stack 16-byte aligned at the call */
        "    call acompute_resolve_dlsym\n"
        "    addq $8, %rsp\n"
        "    popq %rsi\n"
        "    popq %rdi\n"
        "    testq %rax, %rax\n"
        "    jz 2f\n"
        "    jmp *%rax\n"
        "2:  ret\n"
        ".size dlsym, .-dlsym\n"
        ".popsection\n");
#endif

/* ---- handles and their streams --------------------------------------------- */

#define STREAM_SLOTS 4096u /* power of two */
#define STREAM_PROBES 32u
struct handle_slot {
    uint64_t handle; /* 0: free */
    uint64_t stream;
    uint32_t live; /* 1: created and not destroyed */
    uint32_t reserved;
};
static struct handle_slot handles[STREAM_SLOTS];

static uint32_t handle_hash(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return (uint32_t)h & (STREAM_SLOTS - 1);
}

static struct handle_slot *handle_slot(uint64_t handle, int insert)
{
    uint32_t at = handle_hash(handle);
    for (uint32_t i = 0; i < STREAM_PROBES; i++) {
        struct handle_slot *s = &handles[(at + i) & (STREAM_SLOTS - 1)];
        uint64_t key = __atomic_load_n(&s->handle, __ATOMIC_ACQUIRE);
        if (key == handle)
            return s;
        if (key == 0) {
            if (!insert)
                return NULL;
            uint64_t expected = 0;
            if (__atomic_compare_exchange_n(&s->handle, &expected, handle, 0, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE) ||
                expected == handle)
                return s;
        }
    }
    return NULL;
}

static void handle_set(uint64_t handle, uint64_t stream, uint32_t live)
{
    struct handle_slot *s = handle_slot(handle, 1);
    if (s) {
        __atomic_store_n(&s->stream, stream, __ATOMIC_RELAXED);
        __atomic_store_n(&s->live, live, __ATOMIC_RELEASE);
    }
}

/* 1 and its stream when the handle is live */
static int handle_stream(uint64_t handle, uint64_t *stream)
{
    struct handle_slot *s = handle_slot(handle, 0);
    if (!s || !__atomic_load_n(&s->live, __ATOMIC_ACQUIRE))
        return 0;
    *stream = __atomic_load_n(&s->stream, __ATOMIC_RELAXED);
    return 1;
}

/* ---- records --------------------------------------------------------------- */

static int write_api(struct asys_thread *t, uint32_t id, uint64_t ticks, unsigned lib)
{
    uint32_t name_id = asys_intern(t, acompute_api_name(id));
    uint32_t delta;
    struct asys_rec_acompute_api *r = asys_segment_reserve(&t->seg, sizeof *r, ticks, &delta);
    if (!r)
        return -1;
    r->api_id = id;
    r->name_id = name_id;
    r->flags =
        __atomic_load_n(&resolved_by_dlsym[id], __ATOMIC_ACQUIRE) ? ASYS_ACOMPUTE_API_DLSYM : 0;
    r->reserved = 0;
    unsigned type = lib == ASYS_ACOMPUTE_CUDNN ? ASYS_REC_ACDNN_API : ASYS_REC_ACBLAS_API;
    asys_segment_commit(&r->header, ASYS_REC_WORD(type, sizeof *r / 8, lib, delta));
    return 0;
}

void acompute_leave(struct acompute_frame *f, uint32_t id, uint32_t flags, int64_t status,
                    uint64_t handle, uint64_t stream)
{
    uint64_t end = asys_now();
    uint32_t depth = --acompute_tls_depth;
    int saved_errno = errno;
    uint32_t record_flags = 0;
    if (flags & ACOMPUTE_CREATES) {
        if (handle) {
            handle_set(handle, 0, 1); /* a new handle runs on the default stream */
            record_flags |= ASYS_ACOMPUTE_CALL_HANDLE | ASYS_ACOMPUTE_CALL_STREAM;
        }
        stream = 0;
    } else if (flags & ACOMPUTE_HAS_HANDLE) {
        record_flags |= ASYS_ACOMPUTE_CALL_HANDLE;
        uint64_t set_stream = 0;
        int live = handle_stream(handle, &set_stream);
        if (!live)
            record_flags |= ASYS_ACOMPUTE_CALL_UNKNOWN_HANDLE;
        if (flags & ACOMPUTE_STREAM_ARG) {
            record_flags |= ASYS_ACOMPUTE_CALL_STREAM | ASYS_ACOMPUTE_CALL_STREAM_ARG;
            if ((flags & ACOMPUTE_SETS_STREAM) && status == 0)
                handle_set(handle, stream, 1);
        } else if (live) {
            stream = set_stream;
            record_flags |= ASYS_ACOMPUTE_CALL_STREAM;
        }
        if ((flags & ACOMPUTE_DESTROYS) && status == 0 && live)
            handle_set(handle, 0, 0);
    } else if (flags & ACOMPUTE_STREAM_ARG) {
        record_flags |= ASYS_ACOMPUTE_CALL_STREAM | ASYS_ACOMPUTE_CALL_STREAM_ARG;
    }
    if (!(record_flags & ASYS_ACOMPUTE_CALL_STREAM))
        stream = 0;
    if (flags & ACOMPUTE_STATUS)
        record_flags |= ASYS_ACOMPUTE_CALL_STATUS;
    else if (flags & ACOMPUTE_RESULT)
        record_flags |= ASYS_ACOMPUTE_CALL_RESULT;
    else
        status = 0;
    if (!asys_capturing())
        goto out;
    struct asys_thread *t = asys_thread_enter_at(f->start);
    if (!t)
        goto out;
    unsigned lib = acompute_api_library[id];
    if (!(api_written[id >> 3] & (1u << (id & 7)))) {
        if (write_api(t, id, end, lib) == 0)
            api_written[id >> 3] |= (uint8_t)(1u << (id & 7));
    }
    uint64_t duration = end - f->start;
    uint32_t chain = 0;
    if (duration >= backtrace_ticks && backtrace_depth)
        chain = asys_callstack_capture(t, backtrace_depth);
    uint32_t delta;
    uint32_t same_flags = record_flags & (ASYS_ACOMPUTE_CALL_HANDLE | ASYS_ACOMPUTE_CALL_STREAM);
    int same = last_call.writer == (const void *)&t->seg && last_call.handle == handle &&
               last_call.stream == stream && last_call.flags == same_flags;
    uint32_t size =
        same ? sizeof(struct asys_rec_acompute_call_same) : sizeof(struct asys_rec_acompute_call);
    struct asys_rec_acompute_call *r = asys_segment_reserve(&t->seg, size, end, &delta);
    if (r) {
        r->duration_ticks = duration;
        r->status = (int32_t)status;
        r->api_id = id;
        r->callchain_id = chain;
        r->flags = record_flags;
        unsigned type;
        if (same) {
            type =
                lib == ASYS_ACOMPUTE_CUDNN ? ASYS_REC_ACDNN_CALL_SAME : ASYS_REC_ACBLAS_CALL_SAME;
        } else {
            r->handle = handle;
            r->stream = stream;
            type = lib == ASYS_ACOMPUTE_CUDNN ? ASYS_REC_ACDNN_CALL : ASYS_REC_ACBLAS_CALL;
            last_call.writer = &t->seg;
            last_call.handle = handle;
            last_call.stream = stream;
            last_call.flags = same_flags;
        }
        asys_segment_commit(&r->header,
                            ASYS_REC_WORD(type, size / 8, depth > 0xffff ? 0xffff : depth, delta));
    }
    asys_thread_leave();
out:
    errno = saved_errno;
}

/* ---- start-up ---------------------------------------------------------------- */

static void forget_written_names(void)
{
    /* a fork child is a new process image, in a segment of its own: its
     * names and its first call's handle and stream are written again */
    memset(api_written, 0, sizeof api_written);
    memset(&last_call, 0, sizeof last_call);
}

ASYS_START_DATA static int options_read;

ASYS_START_CODE static int read_options(void)
{
    if (__atomic_load_n(&options_read, __ATOMIC_ACQUIRE))
        return 0;
    uint64_t ns, depth;
    if (asys_option_u64("ASYS_ACOMPUTE_BACKTRACE_NS", &ns) != 0 ||
        asys_option_u64("ASYS_ACOMPUTE_BACKTRACE_DEPTH", &depth) != 0)
        return -1;
    if (!real_dlsym())
        asys_debug("acompute: the real dlsym was not found; dlsym'd functions are not traced");
    asys_callstack_own_object((const void *)(uintptr_t)asys_acdnn_init);
    backtrace_ticks = (uint64_t)((double)ns * asys_proc.ticks_per_ns);
    backtrace_depth =
        (uint32_t)(depth > ASYS_CALLCHAIN_MAX_DEPTH ? ASYS_CALLCHAIN_MAX_DEPTH : depth);
    asys_at_fork(NULL, NULL, forget_written_names);
    __atomic_store_n(&options_read, 1, __ATOMIC_RELEASE);
    return 0;
}

ASYS_START_CODE int asys_acdnn_init(void)
{
    if (read_options() != 0)
        return -1;
    __atomic_store_n(&acompute_library_on[ASYS_ACOMPUTE_CUDNN], 1, __ATOMIC_RELEASE);
    return 0;
}

ASYS_START_CODE int asys_acblas_init(void)
{
    if (read_options() != 0)
        return -1;
    __atomic_store_n(&acompute_library_on[ASYS_ACOMPUTE_CUBLAS], 1, __ATOMIC_RELEASE);
    __atomic_store_n(&acompute_library_on[ASYS_ACOMPUTE_CUBLASLT], 1, __ATOMIC_RELEASE);
    __atomic_store_n(&acompute_library_on[ASYS_ACOMPUTE_CUBLASXT], 1, __ATOMIC_RELEASE);
    return 0;
}

ASYS_START_CODE __attribute__((constructor(101))) static void resolve_dlsym_early(void)
{
    real_dlsym();
}
