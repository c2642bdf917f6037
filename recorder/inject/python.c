/* Python sampling (--python-sampling): in a process that is a Python
 * interpreter, a thread of this library samples the stack of every Python
 * thread --python-sampling-frequency times a second.
 *
 * Everything goes through the interpreter's public C API, looked up with
 * dlsym at run time (asys links no libpython, and one build serves every
 * version from 3.8 on).  Stacks are read only while holding the GIL, so no
 * frame changes under the reader:
 *   - each period the sampler asks the main thread to take a sample at its
 *     next bytecode boundary (Py_AddPendingCall: no wait for the GIL's
 *     switch interval);
 *   - when the main thread has not run it within a period (it is blocked in
 *     C code without the GIL), the sampler takes the GIL itself
 *     (PyGILState_Ensure) and samples.
 * All the state below is touched only with the GIL held, except the flags
 * the sampler thread polls.  Interpreter finalization stops the sampler
 * (an atexit callback); os.fork children start their own (register_at_fork).
 *
 * Records: PYTHON_CODE once per code object and writing thread, then
 * PYTHON_SAMPLE per thread per sample (asys_format.h). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "elf_symbols.h"
#include "inject.h"
#include "python_api.h"

#define MAX_DEPTH 128
#define CODE_SLOTS 8192 /* code objects remembered (power of two) */
#define TID_SLOTS 256
#define REQUEST_SLOTS 16
#define REQUEST_WAIT_NS 2500000 /* the caller waits this long for the sampler, twice */

/* A thread without the GIL asks the sampler for its Python stack. */
enum request_state { REQ_FREE, REQ_FILLING, REQ_ASKED, REQ_SERVING, REQ_DONE, REQ_ABANDONED };
struct stack_request {
    uint32_t state; /* enum request_state; a futex */
    uint32_t tid, correlation, callchain;
    unsigned long ident;
};

struct code_slot {
    PyObject *code; /* a reference we hold: the address is not reused */
    uint32_t id;
    uint64_t defined; /* bit i: defined in the segment of the thread of index i (< 64) */
};

struct tid_slot {
    unsigned long ident;
    uint32_t tid; /* 0: asked threading, not known */
    int used;
};

static struct {
    struct py_api api;
    uint64_t period_ns;
    uint32_t depth;
    int stop; /* atomic: finalization began */
    int pending; /* atomic: a pending call is queued */
    uint64_t pending_since; /* when it was queued (CLOCK_MONOTONIC ns) */
    uint64_t last_sample_ns; /* GIL held */
    int python_side_ready; /* atexit and at-fork hooks in place (GIL held) */
    struct code_slot codes[CODE_SLOTS];
    uint32_t next_code_id;
    struct tid_slot tids[TID_SLOTS];
    uint64_t samples, pending_samples;
    uint64_t sampling_ns; /* time spent taking the samples (GIL held) */
    pthread_t thread;
    unsigned long main_ident; /* the main thread's pthread_t: threading may not be loaded */
    int wake_signal; /* the signal that wakes the main thread; 0: none free */
    uint64_t rng; /* for the jittered periods */
    int hggc_backtraces; /* --python-backtrace=hggc */
    int sampling; /* --python-sampling (else the thread serves stack requests only) */
    uint32_t wake; /* futex: bumped when a stack request is queued */
    struct stack_request requests[REQUEST_SLOTS];
    /* the status to record once the sampler thread runs (none can be written
     * while the library starts) */
    enum asys_python_status status;
    uint32_t status_version;
    char status_text[256];
} py;

static struct py_method_def stop_def, fork_def;

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- the interpreter's API ------------------------------------------------------------- */

#define RESOLVE(field, symbol) (*(void **)&a->field = dlsym(RTLD_DEFAULT, symbol))

int asys_python_api_resolve(struct py_api *a)
{
    int ok =
        RESOLVE(is_initialized, "Py_IsInitialized") && RESOLVE(gil_ensure, "PyGILState_Ensure") &&
        RESOLVE(gil_release, "PyGILState_Release") &&
        RESOLVE(add_pending_call, "Py_AddPendingCall") &&
        RESOLVE(sys_get_object, "PySys_GetObject") && RESOLVE(call_object, "PyObject_CallObject") &&
        RESOLVE(call, "PyObject_Call") && RESOLVE(dict_next, "PyDict_Next") &&
        RESOLVE(dict_get_item_string, "PyDict_GetItemString") && RESOLVE(dict_new, "PyDict_New") &&
        RESOLVE(dict_set_item_string, "PyDict_SetItemString") &&
        RESOLVE(tuple_new, "PyTuple_New") && RESOLVE(tuple_set_item, "PyTuple_SetItem") &&
        RESOLVE(list_get_item, "PyList_GetItem") && RESOLVE(list_size, "PyList_Size") &&
        RESOLVE(get_attr, "PyObject_GetAttrString") && RESOLVE(utf8, "PyUnicode_AsUTF8AndSize") &&
        RESOLVE(as_long, "PyLong_AsLong") && RESOLVE(as_ulong, "PyLong_AsUnsignedLong") &&
        RESOLVE(incref, "Py_IncRef") && RESOLVE(decref, "Py_DecRef") &&
        RESOLVE(err_clear, "PyErr_Clear") && RESOLVE(import, "PyImport_ImportModule") &&
        RESOLVE(cfunction_new, "PyCFunction_NewEx") && RESOLVE(get_version, "Py_GetVersion") &&
        RESOLVE(none, "_Py_NoneStruct");
    if (!RESOLVE(is_finalizing, "Py_IsFinalizing"))
        RESOLVE(is_finalizing, "_Py_IsFinalizing");
    RESOLVE(frame_back, "PyFrame_GetBack");
    RESOLVE(frame_code, "PyFrame_GetCode");
    RESOLVE(frame_line, "PyFrame_GetLineNumber");
    RESOLVE(gil_check, "PyGILState_Check");
    RESOLVE(eval_get_frame, "PyEval_GetFrame");
    RESOLVE(dict_get_item, "PyDict_GetItem");
    RESOLVE(long_from_ulong, "PyLong_FromUnsignedLong");
    if (!a->frame_back || !a->frame_code)
        a->frame_back = a->frame_code = NULL; /* 3.8: both through attributes */
    return ok ? 0 : -1;
}

/* "3.11.2 (main, ...)" -> 0x030b02f0 (PY_VERSION_HEX of a final release). */
static uint32_t version_hex(const char *v)
{
    unsigned major = 0, minor = 0, micro = 0;
    if (!v || sscanf(v, "%u.%u.%u", &major, &minor, &micro) < 2)
        return 0;
    return (major & 0xffu) << 24 | (minor & 0xffu) << 16 | (micro & 0xffu) << 8 | 0xf0u;
}

static int finalizing(void)
{
    return __atomic_load_n(&py.stop, __ATOMIC_ACQUIRE) ||
           (py.api.is_finalizing && py.api.is_finalizing()) || !py.api.is_initialized();
}

/* ---- records ----------------------------------------------------------------------- */

void asys_python_write_status(enum asys_python_status status, uint32_t version, const char *text)
{
    struct asys_thread *t = asys_thread_enter();
    if (!t)
        return;
    size_t len = strlen(text);
    if (len > 512)
        len = 512;
    size_t size = (sizeof(struct asys_rec_python_status) + len + 7) & ~(size_t)7;
    uint32_t delta;
    struct asys_rec_python_status *r =
        asys_segment_reserve(&t->seg, (uint32_t)size, asys_now(), &delta);
    if (r) {
        memset(r, 0, size);
        r->version_hex = version;
        r->text_length = (uint32_t)len;
        memcpy(r + 1, text, len);
        asys_segment_commit(&r->header,
                            ASYS_REC_WORD(ASYS_REC_PYTHON_STATUS, size / 8, status, delta));
    }
    asys_thread_leave();
}

size_t asys_python_text(const struct py_api *a, PyObject *v, char *out, size_t size)
{
    Py_ssize_t len = 0;
    const char *text = v ? a->utf8(v, &len) : NULL;
    size_t n = text && len > 0 ? (size_t)len : 0;
    if (n >= size)
        n = size - 1;
    if (text)
        memcpy(out, text, n);
    out[n] = '\0';
    if (!text)
        a->err_clear();
    return n;
}

size_t asys_python_attr_text(const struct py_api *a, PyObject *o, const char *name, char *out,
                             size_t size)
{
    PyObject *v = a->get_attr(o, name);
    size_t n = asys_python_text(a, v, out, size);
    if (v)
        a->decref(v);
    return n;
}

static size_t copy_text(PyObject *v, char *out, size_t size)
{
    return asys_python_text(&py.api, v, out, size);
}

static size_t attr_text(PyObject *o, const char *name, char *out, size_t size)
{
    return asys_python_attr_text(&py.api, o, name, out, size);
}

static long attr_long(PyObject *o, const char *name)
{
    PyObject *v = py.api.get_attr(o, name);
    long n = v ? py.api.as_long(v) : -1;
    if (v)
        py.api.decref(v);
    if (n == -1)
        py.api.err_clear();
    return n;
}

/* The module a frame runs in: __name__ of its globals. */
static size_t frame_module(PyObject *frame, char *out, size_t size)
{
    PyObject *globals = py.api.get_attr(frame, "f_globals");
    PyObject *name = globals ? py.api.dict_get_item_string(globals, "__name__") : NULL;
    size_t n = copy_text(name, out, size);
    if (globals)
        py.api.decref(globals);
    return n;
}

static void define_code(struct asys_thread *t, uint32_t id, PyObject *code, PyObject *frame)
{
    char name[512], file[1024], module[256];
    size_t name_len = attr_text(code, "co_qualname", name, sizeof name);
    if (!name_len)
        name_len = attr_text(code, "co_name", name, sizeof name);
    size_t file_len = attr_text(code, "co_filename", file, sizeof file);
    size_t module_len = frame_module(frame, module, sizeof module);
    long first = attr_long(code, "co_firstlineno");
    uint32_t name_id = asys_intern_len(t, name, name_len);
    uint32_t file_id = asys_intern_len(t, file, file_len);
    uint32_t module_id = asys_intern_len(t, module, module_len);
    uint32_t delta;
    struct asys_rec_python_code *r = asys_segment_reserve(&t->seg, sizeof *r, asys_now(), &delta);
    if (!r)
        return;
    r->code_id = id;
    r->name_string_id = name_id;
    r->file_string_id = file_id;
    r->module_string_id = module_id;
    r->first_line = first > 0 ? (uint32_t)first : 0;
    r->reserved = 0;
    asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_PYTHON_CODE, sizeof *r / 8, 0, delta));
}

/* The id of `code`, defined in t's segment on its first use there. */
static uint32_t code_id(struct asys_thread *t, PyObject *code, PyObject *frame)
{
    uintptr_t h = ((uintptr_t)code >> 4) * 0x9e3779b97f4a7c15u;
    for (size_t probe = 0; probe < 16; probe++) {
        struct code_slot *s = &py.codes[(h + probe) & (CODE_SLOTS - 1)];
        if (s->code == code || !s->code) {
            if (!s->code) {
                py.api.incref(code);
                s->code = code;
                s->id = ++py.next_code_id;
            }
            uint64_t bit = t->thread_index < 64 ? UINT64_C(1) << t->thread_index : 0;
            if (!(s->defined & bit) || !bit) { /* past 64 threads: defined each time */
                define_code(t, s->id, code, frame);
                s->defined |= bit;
            }
            return s->id;
        }
    }
    uint32_t id = ++py.next_code_id; /* the table is full here: define it each time */
    define_code(t, id, code, frame);
    return id;
}

/* ---- threads: Python's ident to the OS thread id ------------------------------------ */

static struct tid_slot *tid_slot(unsigned long ident)
{
    size_t h = (size_t)(ident >> 8) * 31u;
    for (size_t probe = 0; probe < TID_SLOTS; probe++) {
        struct tid_slot *s = &py.tids[(h + probe) % TID_SLOTS];
        if (!s->used || s->ident == ident)
            return s;
    }
    return NULL;
}

/* threading's view: {t.ident: t.native_id for t in threading.enumerate()},
 * when the program has imported threading (asys imports nothing). */
static void learn_threads(void)
{
    PyObject *modules = py.api.sys_get_object("modules"); /* borrowed */
    PyObject *threading = modules ? py.api.dict_get_item_string(modules, "threading") : NULL;
    if (threading)
        py.api.incref(threading);
    PyObject *enumerate = threading ? py.api.get_attr(threading, "enumerate") : NULL;
    PyObject *list = enumerate ? py.api.call_object(enumerate, NULL) : NULL;
    Py_ssize_t n = list ? py.api.list_size(list) : 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *thread = py.api.list_get_item(list, i); /* borrowed */
        PyObject *ident = thread ? py.api.get_attr(thread, "ident") : NULL;
        long native = thread ? attr_long(thread, "native_id") : -1;
        if (ident && ident != py.api.none && native > 0) {
            struct tid_slot *s = tid_slot(py.api.as_ulong(ident));
            if (s) {
                s->used = 1;
                s->ident = py.api.as_ulong(ident);
                s->tid = (uint32_t)native;
            }
        }
        if (ident)
            py.api.decref(ident);
    }
    if (list)
        py.api.decref(list);
    if (enumerate)
        py.api.decref(enumerate);
    if (threading)
        py.api.decref(threading);
    py.api.err_clear();
}

static uint32_t tid_of(unsigned long ident)
{
    if (ident == py.main_ident)
        return asys_proc.pid;
    struct tid_slot *s = tid_slot(ident);
    if (s && s->used)
        return s->tid;
    learn_threads();
    s = tid_slot(ident);
    if (s && !s->used) { /* not a threading thread: remember that it is not known */
        s->used = 1;
        s->ident = ident;
        s->tid = 0;
    }
    return s ? s->tid : 0;
}

/* ---- sampling (GIL held) ------------------------------------------------------------- */

static void write_sample(struct asys_thread *t, uint32_t tid, const uint64_t *frames,
                         uint32_t depth, uint64_t ticks)
{
    uint32_t size = (uint32_t)(sizeof(struct asys_rec_python_sample) + 8u * depth);
    uint32_t delta;
    struct asys_rec_python_sample *r = asys_segment_reserve(&t->seg, size, ticks, &delta);
    if (!r)
        return;
    r->tid = tid;
    r->depth = depth;
    memcpy(r + 1, frames, 8u * depth);
    asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_PYTHON_SAMPLE, size / 8, 0, delta));
}

static void write_stack(struct asys_thread *t, const struct stack_request *q,
                        const uint64_t *frames, uint32_t depth)
{
    uint32_t size = (uint32_t)(sizeof(struct asys_rec_python_stack) + 8u * depth);
    uint32_t delta;
    struct asys_rec_python_stack *r = asys_segment_reserve(&t->seg, size, asys_now(), &delta);
    if (!r)
        return;
    r->correlation_id = q->correlation;
    r->callchain_id = q->callchain;
    r->tid = q->tid;
    r->depth = depth;
    memcpy(r + 1, frames, 8u * depth);
    asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_PYTHON_STACK, size / 8, 0, delta));
}

/* The frames from `frame` outwards, innermost first. */
static uint32_t walk(struct asys_thread *t, PyObject *frame, uint64_t *out)
{
    const struct py_api *a = &py.api;
    uint32_t n = 0;
    a->incref(frame);
    while (frame && n < py.depth) {
        PyObject *code = a->frame_code ? a->frame_code(frame) : a->get_attr(frame, "f_code");
        long line = a->frame_line ? a->frame_line(frame) : attr_long(frame, "f_lineno");
        if (code) {
            out[n++] = (uint64_t)code_id(t, code, frame) << 32 | (uint32_t)(line > 0 ? line : 0);
            a->decref(code);
        }
        PyObject *back = a->frame_back ? a->frame_back(frame) : a->get_attr(frame, "f_back");
        a->decref(frame);
        if (back == a->none) {
            a->decref(back);
            back = NULL;
        }
        frame = back;
    }
    if (frame)
        a->decref(frame);
    a->err_clear();
    return n;
}

static void sample_all(void)
{
    const struct py_api *a = &py.api;
    struct asys_thread *t = asys_thread_enter();
    if (!t)
        return;
    uint64_t ticks = asys_now(), started = mono_ns();
    PyObject *current = a->sys_get_object("_current_frames"); /* borrowed */
    PyObject *frames = current ? a->call_object(current, NULL) : NULL;
    Py_ssize_t pos = 0;
    PyObject *ident, *frame;
    uint64_t stack[MAX_DEPTH];
    while (frames && a->dict_next(frames, &pos, &ident, &frame)) {
        uint32_t tid = tid_of(a->as_ulong(ident));
        uint32_t depth = walk(t, frame, stack);
        if (depth)
            write_sample(t, tid, stack, depth, ticks);
    }
    if (frames)
        a->decref(frames);
    a->err_clear();
    asys_thread_leave();
    py.samples++;
    py.last_sample_ns = mono_ns();
    py.sampling_ns += py.last_sample_ns - started;
}

static long futex(uint32_t *word, int op, uint32_t value, const struct timespec *timeout)
{
    return syscall(SYS_futex, word, op, value, timeout, NULL, FUTEX_BITSET_MATCH_ANY);
}

/* The stacks asked for (GIL held): the askers wait inside their calls. */
static void serve_requests(void)
{
    const struct py_api *a = &py.api;
    struct asys_thread *t = NULL;
    PyObject *frames = NULL;
    uint64_t stack[MAX_DEPTH];
    for (size_t i = 0; i < REQUEST_SLOTS; i++) {
        struct stack_request *q = &py.requests[i];
        uint32_t asked = REQ_ASKED;
        if (!__atomic_compare_exchange_n(&q->state, &asked, REQ_SERVING, 0, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE))
            continue;
        if (!t && !(t = asys_thread_enter()))
            t = NULL;
        if (!frames) {
            PyObject *current = a->sys_get_object("_current_frames");
            frames = current ? a->call_object(current, NULL) : NULL;
        }
        PyObject *key = t && frames ? a->long_from_ulong(q->ident) : NULL;
        PyObject *frame = key ? a->dict_get_item(frames, key) : NULL;
        uint32_t depth = frame ? walk(t, frame, stack) : 0;
        if (depth)
            write_stack(t, q, stack, depth);
        if (key)
            a->decref(key);
        uint32_t serving = REQ_SERVING;
        if (!__atomic_compare_exchange_n(&q->state, &serving, REQ_DONE, 0, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE))
            __atomic_store_n(&q->state, REQ_FREE, __ATOMIC_RELEASE); /* the asker gave up */
        else
            futex(&q->state, FUTEX_WAKE, 1, NULL);
    }
    if (frames)
        a->decref(frames);
    a->err_clear();
    if (t)
        asys_thread_leave();
}

static int requests_waiting(void)
{
    for (size_t i = 0; i < REQUEST_SLOTS; i++)
        if (__atomic_load_n(&py.requests[i].state, __ATOMIC_ACQUIRE) == REQ_ASKED)
            return 1;
    return 0;
}

/* Waits for `q` to leave `state`, at most REQUEST_WAIT_NS; its state then. */
static uint32_t wait_request(struct stack_request *q, uint32_t state)
{
    struct timespec timeout = {0, REQUEST_WAIT_NS};
    uint32_t now = __atomic_load_n(&q->state, __ATOMIC_ACQUIRE);
    if (now == state) {
        futex(&q->state, FUTEX_WAIT, state, &timeout);
        now = __atomic_load_n(&q->state, __ATOMIC_ACQUIRE);
    }
    return now;
}

int asys_python_hggc_backtraces(void)
{
    return py.hggc_backtraces && py.python_side_ready &&
           !__atomic_load_n(&py.stop, __ATOMIC_ACQUIRE);
}

/* An HGGC API call's Python stack (inside the call's CUPTI callback, t
 * entered): read directly when this thread holds the GIL, else by the
 * sampler, which takes the GIL while this thread waits in its call. */
void asys_python_hggc_stack(struct asys_thread *t, uint32_t correlation, uint32_t callchain)
{
    struct stack_request q = {0, t->tid, correlation, callchain, (unsigned long)pthread_self()};
    uint64_t stack[MAX_DEPTH];
    if (!asys_python_hggc_backtraces())
        return;
    if (py.api.gil_check && py.api.gil_check()) {
        PyObject *frame = py.api.eval_get_frame();
        uint32_t depth = frame ? walk(t, frame, stack) : 0;
        if (depth)
            write_stack(t, &q, stack, depth);
        return;
    }
    for (size_t i = 0; i < REQUEST_SLOTS; i++) {
        struct stack_request *slot = &py.requests[i];
        uint32_t free_state = REQ_FREE;
        if (!__atomic_compare_exchange_n(&slot->state, &free_state, REQ_FILLING, 0,
                                         __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            continue;
        slot->tid = q.tid;
        slot->correlation = correlation;
        slot->callchain = callchain;
        slot->ident = q.ident;
        __atomic_store_n(&slot->state, REQ_ASKED, __ATOMIC_RELEASE);
        __atomic_add_fetch(&py.wake, 1, __ATOMIC_ACQ_REL);
        futex(&py.wake, FUTEX_WAKE, 1, NULL);
        uint32_t state = wait_request(slot, REQ_ASKED);
        uint32_t asked = REQ_ASKED;
        if (state == REQ_ASKED && __atomic_compare_exchange_n(&slot->state, &asked, REQ_FREE, 0,
                                                              __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return; /* the sampler did not come in time: no Python stack for this call */
        if (__atomic_load_n(&slot->state, __ATOMIC_ACQUIRE) == REQ_SERVING)
            state = wait_request(slot, REQ_SERVING);
        uint32_t serving = REQ_SERVING;
        if (state == REQ_DONE ||
            !__atomic_compare_exchange_n(&slot->state, &serving, REQ_ABANDONED, 0, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE))
            __atomic_store_n(&slot->state, REQ_FREE, __ATOMIC_RELEASE);
        return;
    }
}

/* Run by the main thread at a bytecode boundary. */
static int pending_sample(void *arg)
{
    (void)arg;
    __atomic_store_n(&py.pending, 0, __ATOMIC_RELEASE);
    if (!__atomic_load_n(&py.stop, __ATOMIC_ACQUIRE) &&
        mono_ns() - py.last_sample_ns >= py.period_ns / 2) {
        sample_all();
        py.pending_samples++;
    }
    return 0;
}

/* ---- the interpreter's life ----------------------------------------------------------- */

static PyObject *stop_sampling(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    __atomic_store_n(&py.stop, 1, __ATOMIC_RELEASE);
    char text[128];
    snprintf(text, sizeof text, "%llu samples, %llu in the main thread, %.1f us each",
             (unsigned long long)py.samples, (unsigned long long)py.pending_samples,
             py.samples ? (double)py.sampling_ns / 1e3 / (double)py.samples : 0.0);
    asys_python_write_status(ASYS_PYTHON_STOPPED, 0, text);
    py.api.incref(py.api.none);
    return py.api.none;
}

static void *sampler(void *arg);

/* The period with +-50 % uniform jitter: a fixed period aliases with
 * periodic programs (a 4 ms loop sampled every 8 ms is always seen at one
 * point of it). */
static uint64_t jittered_period(void)
{
    py.rng ^= py.rng << 13;
    py.rng ^= py.rng >> 7;
    py.rng ^= py.rng << 17;
    return py.period_ns / 2 + py.rng % (py.period_ns ? py.period_ns : 1);
}

/* In the main thread: queue the sample there (Py_AddPendingCall is
 * async-signal-safe). */
static void on_wake_signal(int sig)
{
    (void)sig;
    int saved = errno;
    if (py.api.add_pending_call(pending_sample, NULL) != 0)
        __atomic_store_n(&py.pending, 0, __ATOMIC_RELEASE);
    errno = saved;
}

/* A signal to wake the main thread with: SIGURG, whose default action is
 * to ignore it, so that one still pending when the program execs (it stays
 * pending across execve, and the new image has no handler) is dropped
 * instead of killing the new program, as a real-time signal did.  None when
 * the program already handles it (the sampler then takes the GIL). */
static void choose_wake_signal(void)
{
    int sig = SIGURG;
    struct sigaction old, sa;
    if (asys_env_u64("ASYS_PYTHON_NO_WAKE_SIGNAL", 0) || sigaction(sig, NULL, &old) != 0 ||
        old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO))
        return;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_wake_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, NULL) == 0)
        py.wake_signal = sig;
}

/* Whether the wake signal still reaches our handler: a program that takes
 * SIGURG over later (sockets' out-of-band data) gets no signal of ours. */
static int wake_signal_still_ours(void)
{
    struct sigaction now;
    if (!py.wake_signal)
        return 0;
    if (sigaction(py.wake_signal, NULL, &now) != 0 || now.sa_handler != on_wake_signal) {
        py.wake_signal = 0;
        return 0;
    }
    return 1;
}

/* os.fork's child: a sampler of its own, nothing remembered from the parent. */
static PyObject *after_fork_child(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    for (size_t i = 0; i < CODE_SLOTS; i++)
        if (py.codes[i].code)
            py.api.decref(py.codes[i].code);
    memset(py.codes, 0, sizeof py.codes);
    memset(py.tids, 0, sizeof py.tids);
    py.next_code_id = 0;
    py.samples = py.pending_samples = py.sampling_ns = 0;
    py.main_ident = (unsigned long)pthread_self(); /* os.fork returns in the forking thread */
    py.status = ASYS_PYTHON_SAMPLING; /* the child's report says it too */
    __atomic_store_n(&py.pending, 0, __ATOMIC_RELEASE);
    if (pthread_create(&py.thread, NULL, sampler, NULL) == 0)
        pthread_detach(py.thread);
    py.api.incref(py.api.none);
    return py.api.none;
}

/* atexit.register(stop) and os.register_at_fork(after_in_child=...). */
static void install_hooks(void)
{
    const struct py_api *a = &py.api;
    stop_def = (struct py_method_def){"_asys_stop_sampling", stop_sampling, PY_METH_NOARGS, NULL};
    fork_def = (struct py_method_def){"_asys_after_fork", after_fork_child, PY_METH_NOARGS, NULL};
    PyObject *stop = a->cfunction_new(&stop_def, NULL, NULL);
    PyObject *child = a->cfunction_new(&fork_def, NULL, NULL);
    PyObject *atexit = a->import("atexit");
    PyObject *reg = atexit ? a->get_attr(atexit, "register") : NULL;
    PyObject *one = a->tuple_new(1);
    PyObject *args = a->tuple_new(0);
    if (reg && stop && one) {
        a->incref(stop); /* the tuple takes this one */
        a->tuple_set_item(one, 0, stop);
        PyObject *r = a->call_object(reg, one); /* atexit.register(stop) */
        if (r)
            a->decref(r);
    }
    PyObject *os = a->import("os");
    PyObject *at_fork = os ? a->get_attr(os, "register_at_fork") : NULL;
    PyObject *fork_kwargs = a->dict_new();
    if (at_fork && child && args && fork_kwargs) {
        a->dict_set_item_string(fork_kwargs, "after_in_child", child);
        PyObject *r = a->call(at_fork, args, fork_kwargs);
        if (r)
            a->decref(r);
    }
    PyObject *owned[] = {stop, child, atexit, reg, one, args, os, at_fork, fork_kwargs};
    for (size_t i = 0; i < sizeof owned / sizeof owned[0]; i++)
        if (owned[i])
            a->decref(owned[i]);
    a->err_clear();
}

static void *sampler(void *arg)
{
    (void)arg;
    if (py.status) {
        asys_python_write_status(py.status, py.status_version, py.status_text);
        if (py.status != ASYS_PYTHON_SAMPLING)
            return NULL;
        py.status = 0;
    }
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    py.rng = mono_ns() | 1;
    int sampled = 1;
    while (!__atomic_load_n(&py.stop, __ATOMIC_ACQUIRE)) {
        if (sampled) {
            /* until the interpreter is up: every ms at most (function tracing starts then) */
            uint64_t ns =
                (uint64_t)next.tv_nsec +
                (py.python_side_ready || py.period_ns <= 1000000 ? jittered_period() : 1000000);
            next.tv_sec += (time_t)(ns / 1000000000u);
            next.tv_nsec = (long)(ns % 1000000000u);
            sampled = 0;
        }
        /* until the next sample, or a stack request */
        uint64_t due = (uint64_t)next.tv_sec * 1000000000u + (uint64_t)next.tv_nsec;
        /* not sampling: asleep until a stack request (no wake-ups in the target) */
        const struct timespec *until = py.python_side_ready && !py.sampling ? NULL : &next;
        while (!requests_waiting() && (!until || mono_ns() < due)) {
            uint32_t seen = __atomic_load_n(&py.wake, __ATOMIC_ACQUIRE);
            if (requests_waiting())
                break;
            if (futex(&py.wake, FUTEX_WAIT_BITSET, seen, until) != 0 && errno == ETIMEDOUT)
                break;
        }
        if (requests_waiting() && py.python_side_ready && !finalizing()) {
            int state = py.api.gil_ensure();
            if (!finalizing())
                serve_requests();
            py.api.gil_release(state);
            continue; /* the sample is still due at `next` */
        }
        sampled = 1;
        clock_gettime(CLOCK_MONOTONIC, &next); /* late wake-ups do not come in bursts */
        if (!py.api.is_initialized())
            continue; /* not up yet */
        if (finalizing())
            break;
        uint64_t now = mono_ns();
        if (py.python_side_ready && !py.sampling)
            continue; /* stack requests only */
        if (!py.python_side_ready || (__atomic_load_n(&py.pending, __ATOMIC_ACQUIRE) &&
                                      now - py.pending_since > py.period_ns)) {
            /* the main thread does not run Python code now: take the GIL */
            int state = py.api.gil_ensure();
            if (!finalizing()) {
                if (!py.python_side_ready) {
                    install_hooks();
                    asys_python_trace_start();
                    choose_wake_signal();
                    py.python_side_ready = 1;
                }
                if (py.sampling)
                    sample_all();
            }
            py.api.gil_release(state);
            continue;
        }
        if (!__atomic_exchange_n(&py.pending, 1, __ATOMIC_ACQ_REL)) {
            py.pending_since = now;
            /* queued from the main thread's signal handler, the call runs at its
             * next bytecode boundary; queued from here, only once something else
             * makes it look (3.11 decides who may run pending calls by the
             * queueing thread) */
            int queued = wake_signal_still_ours() &&
                         pthread_kill((pthread_t)py.main_ident, py.wake_signal) == 0;
            if (!queued && py.api.add_pending_call(pending_sample, NULL) != 0)
                __atomic_store_n(&py.pending, 0, __ATOMIC_RELEASE); /* queue full: next period */
        }
    }
    return NULL;
}

/* The manual supports interpreters named python or python3 (python3.N is
 * what python3 links to). */
static int interpreter_name(char *name, size_t size)
{
    char cmdline[4096];
    FILE *f = fopen("/proc/self/cmdline", "re");
    size_t n = f ? fread(cmdline, 1, sizeof cmdline - 1, f) : 0;
    if (f)
        fclose(f);
    cmdline[n] = '\0';
    const char *base = strrchr(cmdline, '/');
    base = base ? base + 1 : cmdline;
    size_t len = strlen(base) < size ? strlen(base) : size - 1;
    memcpy(name, base, len);
    name[len] = '\0';
    if (!strcmp(base, "python") || !strcmp(base, "python3"))
        return 1;
    unsigned minor;
    char rest;
    return sscanf(base, "python3.%u%c", &minor, &rest) == 1;
}

/* Records `status` from a thread of its own (the library is starting). */
static int report(enum asys_python_status status, uint32_t version, const char *text)
{
    py.status = status;
    py.status_version = version;
    snprintf(py.status_text, sizeof py.status_text, "%s", text);
    if (pthread_create(&py.thread, NULL, sampler, NULL) != 0)
        return -1;
    pthread_detach(py.thread);
    return 0;
}

/* ---- is this an interpreter? ------------------------------------------------- */

/* Whether a loaded object defines `name`, looked up in each object's GNU
 * hash table as the loader does.  dlsym of a name that no object defines
 * (in every process but Python's) builds an error message: the process's
 * first malloc and dlerror's state, 15 us of each traced process's start. */
struct symbol_lookup {
    const char *name;
    uint32_t hash;
    int found; /* 1: defined */
    int unknown; /* an object without a GNU hash table: ask dlsym */
};

ASYS_START_CODE static int object_defines(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct symbol_lookup *l = arg;
    l->found = asys_object_symbol(info, l->name, l->hash, &l->unknown) != 0;
    return l->found;
}

ASYS_START_CODE static int loaded_defines(const char *name)
{
    struct symbol_lookup l = {name, asys_gnu_hash(name), 0, 0};
    dl_iterate_phdr(object_defines, &l);
    return l.found || (l.unknown && dlsym(RTLD_DEFAULT, name));
}

ASYS_START_CODE int asys_python_init(void)
{
    uint64_t hz = 0, depth = 0;
    char name[256];
    if (!loaded_defines("Py_IsInitialized"))
        return 0; /* not a Python interpreter: nothing to do */
    if (asys_option_u64("ASYS_PYTHON_SAMPLING_HZ", &hz) != 0 ||
        asys_option_u64("ASYS_PYTHON_BACKTRACE_DEPTH", &depth) != 0 || !hz)
        return -1;
    if (!interpreter_name(name, sizeof name))
        return report(ASYS_PYTHON_ALIASED, 0, name);
    if (asys_python_api_resolve(&py.api) != 0)
        return report(ASYS_PYTHON_UNSUPPORTED, 0,
                      "the interpreter lacks a C API function asys uses");
    uint32_t version = version_hex(py.api.get_version());
    if (version < 0x03080000u)
        return report(ASYS_PYTHON_UNSUPPORTED, version, "Python before 3.8 is not supported");
    py.period_ns = 1000000000u / hz;
    py.depth = depth > MAX_DEPTH ? MAX_DEPTH : depth ? (uint32_t)depth : 1;
    py.main_ident = (unsigned long)pthread_self(); /* the library starts in the main thread */
    const char *backtrace = asys_option_text("ASYS_PYTHON_BACKTRACE");
    const char *sampling = asys_option_text("ASYS_PYTHON_SAMPLING");
    py.hggc_backtraces = backtrace && !strcmp(backtrace, "hggc");
    py.sampling = sampling && !strcmp(sampling, "true");
    int tracing = asys_python_trace_init(&py.api, version) == 1;
    if (!py.sampling && !py.hggc_backtraces && !tracing)
        return 0;
    char text[128];
    snprintf(text, sizeof text, "%.*s", (int)strcspn(py.api.get_version(), " "),
             py.api.get_version());
    return report(ASYS_PYTHON_SAMPLING, version, text);
}
