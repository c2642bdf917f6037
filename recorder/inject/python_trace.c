/* Python function tracing (--python-functions-trace): the functions the
 * rules name become HGTX push/pop ranges when a call lasts at least
 * --python-functions-threshold.
 *
 * A C-level profile function (PyEval_SetProfile) sees every call and return
 * of the thread it is set on, with the GIL held; all the state below is
 * touched only then, except the thread's own stack (thread-local).
 *   - Each code object is decided once (module and qualified name against
 *     the rules) and remembered with a reference held, so its address is
 *     not reused: an untraced call costs one hash lookup, an untraced return
 *     one compare.
 *   - A traced call is pushed on the thread's stack (frame, start, code);
 *     nothing is written yet.  At its return, when it lasted at least the
 *     threshold, the pushes of every enclosing traced call not written yet
 *     are written with their start times (they last longer than this one),
 *     then its pushes, its pops.  The records stay in time order: a call not
 *     written yet began after the thread's last tracer record.
 *   - Threads: the main thread gets the profile function from a pending
 *     call (3.12: every thread, PyEval_SetProfileAllThreads); threads
 *     started later through threading get it from threading.setprofile,
 *     whose hook is a C function that replaces itself with the profile
 *     function on the thread's first event.
 * Ranges: PUSH_EX in the rule's domain (registered with the NVTX hooks'
 * ids), message "module.qualname", category ASYS_PY_CATEGORY named
 * "Python function" in each domain (python_func_sum finds them by it). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inject.h"
#include "python_api.h"

#define PY_TRACE_CALL 0
#define PY_TRACE_RETURN 3
#define ASYS_PY_CATEGORY 0x70790001u
#define CATEGORY_NAME "Python function"
#define MAX_CODE_DOMAINS 4
#define MAX_DOMAINS 64
#define STACK_MAX 512

typedef int (*py_tracefunc)(PyObject *obj, PyObject *frame, int what, PyObject *arg);

struct rule {
    int entry;
    char *module;
    size_t module_len;
    char *function; /* "" : every function of module and its submodules */
    int domain;     /* index in tr.domains */
};

struct code_entry {
    PyObject *code; /* a reference we hold; NULL: free slot */
    uint8_t domain_count;
    uint8_t registered; /* its domains are */
    uint8_t domains[MAX_CODE_DOMAINS];
    char *name; /* "module.qualname" when traced */
    uint32_t name_len;
    uint32_t message;                   /* its string id ... */
    struct asys_thread *message_thread; /* ... defined in this thread's segment */
};

struct domain {
    char *name;
    uint16_t id;
    int registered; /* DOMAIN and CATEGORY records written in this process image */
};

struct frame_item {
    PyObject *frame; /* compared only */
    uint64_t start;
    struct code_entry *code;
    uint32_t message;
    int pushed;
};

struct thread_stack {
    uint32_t depth, written;
    struct frame_item items[STACK_MAX];
};

static struct {
    const struct py_api *api;
    int on;
    uint64_t threshold_ticks;
    struct rule *rules;
    size_t rule_count;
    struct domain domains[MAX_DOMAINS];
    size_t domain_count;
    struct code_entry *codes; /* open addressing, power of two */
    size_t code_cap, code_count;
    int threading_hooked;
    uint32_t version;
    void (*set_profile)(py_tracefunc, PyObject *);
    void (*set_profile_all)(py_tracefunc, PyObject *);
    PyObject *(*tuple_get_item)(PyObject *, Py_ssize_t);
    int (*is_instance)(PyObject *, PyObject *);
    PyObject *type_type;
    PyObject *(*get_globals)(void);
    PyObject *(*long_from)(long);
    PyObject *(*text_from)(const char *);
    /* 3.12+: sys.monitoring */
    int monitoring;
    int started;       /* asys_python_trace_start ran */
    PyObject *disable; /* sys.monitoring.DISABLE */
    PyObject *thread_hook;
    pthread_key_t writer_key; /* closes a thread's tracer segment when it ends */
} tr;

static __thread struct thread_stack *tls_stack ASYS_TLS;
static __thread struct asys_thread *tls_writer ASYS_TLS;
static __thread int tls_writer_failed ASYS_TLS;
static struct py_method_def thread_hook_def;

/* ---- the rules ------------------------------------------------------------------------ */

static int domain_index(const char *name)
{
    for (size_t i = 0; i < tr.domain_count; i++)
        if (!strcmp(tr.domains[i].name, name))
            return (int)i;
    if (tr.domain_count == MAX_DOMAINS)
        return -1;
    tr.domains[tr.domain_count].name = strdup(name);
    return tr.domains[tr.domain_count].name ? (int)tr.domain_count++ : -1;
}

/* ENTRY TAB MODULE TAB FUNCTION TAB DOMAIN, one per line (collector_python.c). */
static int parse_rules(const char *text)
{
    size_t lines = 1;
    for (const char *p = text; *p; p++)
        lines += *p == '\n';
    tr.rules = calloc(lines, sizeof *tr.rules);
    if (!tr.rules)
        return -1;
    const char *p = text;
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        char *line = strndup(p, len);
        if (!line)
            return -1;
        char *save = NULL;
        char *entry = strtok_r(line, "\t", &save);
        char *module = entry ? strtok_r(NULL, "\t", &save) : NULL;
        /* the function may be empty: split by hand */
        char *function = module ? module + strlen(module) + 1 : NULL;
        char *tab = function ? strchr(function, '\t') : NULL;
        if (entry && module && tab) {
            *tab = '\0';
            int d = domain_index(tab + 1);
            struct rule *r = &tr.rules[tr.rule_count];
            r->entry = atoi(entry);
            r->module = strdup(module);
            r->module_len = strlen(module);
            r->function = strdup(function);
            r->domain = d;
            if (d >= 0 && r->module && r->function)
                tr.rule_count++;
        }
        free(line);
        p += len + (eol ? 1 : 0);
    }
    return tr.rule_count ? 0 : -1;
}

/* ---- deciding a code object (cold: once per code object) -------------------------------- */

static size_t text_of(PyObject *v, char *out, size_t size)
{
    return asys_python_text(tr.api, v, out, size);
}

static size_t attr_text(PyObject *o, const char *name, char *out, size_t size)
{
    return asys_python_attr_text(tr.api, o, name, out, size);
}

/* Before 3.11 code objects have no qualified name: `dotted` (Class.method)
 * names `code` when walking it from the frame's globals ends at a function
 * whose __code__ is code. */
static int names_code(PyObject *globals, const char *dotted, PyObject *code)
{
    const struct py_api *a = tr.api;
    char part[256];
    const char *p = dotted;
    size_t n = strcspn(p, ".");
    if (n >= sizeof part)
        return 0;
    memcpy(part, p, n);
    part[n] = '\0';
    PyObject *o = a->dict_get_item_string(globals, part); /* borrowed */
    if (!o)
        return 0;
    a->incref(o);
    p += n;
    while (*p == '.' && o) {
        p++;
        n = strcspn(p, ".");
        if (n >= sizeof part)
            break;
        memcpy(part, p, n);
        part[n] = '\0';
        p += n;
        PyObject *next = a->get_attr(o, part);
        a->decref(o);
        o = next;
    }
    int match = 0;
    if (o && !*p) {
        PyObject *f = a->get_attr(o, "__func__"); /* methods, classmethods */
        if (!f) {
            a->err_clear();
            a->incref(o);
            f = o;
        }
        PyObject *c = a->get_attr(f, "__code__");
        match = c == code;
        if (c)
            a->decref(c);
        a->decref(f);
    }
    if (o)
        a->decref(o);
    a->err_clear();
    return match;
}

/* Before 3.11: the qualified name of `code` named co_name, found from the
 * module's globals: a function of the module, or a method of one of its
 * classes (nested classes and closures keep co_name). */
static void find_qualname(PyObject *globals, PyObject *code, char *name, size_t size)
{
    const struct py_api *a = tr.api;
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    char class_name[256];
    if (names_code(globals, name, code))
        return;
    while (a->dict_next(globals, &pos, &key, &value)) {
        /* classes only (no attribute of other objects is read: no __getattr__ runs) */
        if (!tr.is_instance || !tr.type_type || tr.is_instance(value, tr.type_type) != 1) {
            a->err_clear();
            continue;
        }
        PyObject *dict = a->get_attr(value, "__dict__");
        a->err_clear();
        if (!dict)
            continue;
        PyObject *getitem = a->get_attr(dict, "get");
        PyObject *one = getitem ? a->tuple_new(1) : NULL;
        PyObject *member = NULL;
        if (one) {
            PyObject *text = a->get_attr(code, "co_name");
            if (text) {
                a->tuple_set_item(one, 0, text);
                member = a->call_object(getitem, one);
            }
            a->decref(one);
        }
        int match = 0;
        if (member && member != a->none) {
            PyObject *f = a->get_attr(member, "__func__"); /* classmethod, staticmethod */
            if (!f) {
                a->err_clear();
                f = a->get_attr(member, "fget"); /* property */
            }
            if (!f) {
                a->err_clear();
                a->incref(member);
                f = member;
            }
            PyObject *c = a->get_attr(f, "__code__");
            match = c == code;
            if (c)
                a->decref(c);
            a->decref(f);
        }
        if (member)
            a->decref(member);
        if (getitem)
            a->decref(getitem);
        a->decref(dict);
        a->err_clear();
        if (match && attr_text(value, "__qualname__", class_name, sizeof class_name)) {
            char qualified[1024];
            snprintf(qualified, sizeof qualified, "%s.%s", class_name, name);
            snprintf(name, size, "%.*s", (int)(size - 1), qualified);
            return;
        }
    }
}

static void install_threading_hook(void);

static void decide(struct code_entry *ce, PyObject *code, PyObject *frame)
{
    const struct py_api *a = tr.api;
    char module[256], qualname[512];
    ce->domain_count = 0;
    if (!tr.threading_hooked && !tr.monitoring)
        install_threading_hook();
    /* sys.monitoring passes no frame: the callback runs in the starting frame */
    PyObject *globals = frame ? a->get_attr(frame, "f_globals") : tr.get_globals();
    if (!frame && globals)
        a->incref(globals);
    PyObject *name = globals ? a->dict_get_item_string(globals, "__name__") : NULL;
    size_t module_len = text_of(name, module, sizeof module);
    if (!globals || !module_len)
        goto out;
    /* functions only: not module or class bodies (no CO_NEWLOCALS), lambdas,
     * comprehensions, generator expressions */
    PyObject *flags = a->get_attr(code, "co_flags");
    long co_flags = flags ? a->as_long(flags) : 0;
    if (flags)
        a->decref(flags);
    size_t qual_len = attr_text(code, "co_name", qualname, sizeof qualname);
    if (!(co_flags & 0x0002) || !qual_len || qualname[0] == '<')
        goto out;
    size_t own_len = attr_text(code, "co_qualname", qualname, sizeof qualname);
    int have_qualname = own_len > 0;
    if (have_qualname)
        qual_len = own_len;
    else
        qual_len = attr_text(code, "co_name", qualname, sizeof qualname);
    if (!have_qualname)
        find_qualname(globals, code, qualname, sizeof qualname);
    qual_len = strlen(qualname);
    int best = -1;
    for (size_t i = 0; i < tr.rule_count; i++) {
        const struct rule *r = &tr.rules[i];
        int match;
        if (!*r->function)
            match = !strncmp(module, r->module, r->module_len) &&
                    (module[r->module_len] == '\0' || module[r->module_len] == '.');
        else if (strcmp(module, r->module) != 0)
            match = 0;
        else
            match = !strcmp(qualname, r->function) ||
                    (!have_qualname && names_code(globals, r->function, code));
        if (!match)
            continue;
        if (r->entry > best) {
            best = r->entry;
            ce->domain_count = 0;
        }
        if (r->entry == best && ce->domain_count < MAX_CODE_DOMAINS) {
            int seen = 0;
            for (int k = 0; k < ce->domain_count; k++)
                seen |= ce->domains[k] == r->domain;
            if (!seen)
                ce->domains[ce->domain_count++] = (uint8_t)r->domain;
        }
    }
    if (ce->domain_count) {
        size_t len = module_len + 1 + qual_len;
        ce->name = malloc(len + 1);
        if (!ce->name) {
            ce->domain_count = 0;
            goto out;
        }
        snprintf(ce->name, len + 1, "%s.%s", module, qualname);
        ce->name_len = (uint32_t)len;
    }
out:
    if (globals)
        a->decref(globals);
    a->err_clear();
}

static size_t code_slot(PyObject *code, size_t cap)
{
    return (size_t)(((uintptr_t)code >> 4) * 0x9e3779b97f4a7c15u >> 20) & (cap - 1);
}

static int grow_codes(void)
{
    size_t cap = tr.code_cap ? tr.code_cap * 2 : 4096;
    struct code_entry *bigger = calloc(cap, sizeof *bigger);
    if (!bigger)
        return -1;
    for (size_t i = 0; i < tr.code_cap; i++) {
        if (!tr.codes[i].code)
            continue;
        size_t s = code_slot(tr.codes[i].code, cap);
        while (bigger[s].code)
            s = (s + 1) & (cap - 1);
        bigger[s] = tr.codes[i];
    }
    free(tr.codes);
    tr.codes = bigger;
    tr.code_cap = cap;
    return 0;
}

/* The decision for `code`: NULL when it is not traced (or cannot be remembered). */
static inline struct code_entry *lookup(PyObject *code, PyObject *frame)
{
    size_t s = code_slot(code, tr.code_cap);
    for (;;) {
        struct code_entry *ce = &tr.codes[s];
        if (ASYS_LIKELY(ce->code == code))
            return ce->domain_count ? ce : NULL;
        if (!ce->code)
            break;
        s = (s + 1) & (tr.code_cap - 1);
    }
    if (tr.code_count * 2 >= tr.code_cap) {
        if (grow_codes() != 0)
            return NULL;
        s = code_slot(code, tr.code_cap);
        while (tr.codes[s].code)
            s = (s + 1) & (tr.code_cap - 1);
    }
    struct code_entry *ce = &tr.codes[s];
    tr.api->incref(code);
    ce->code = code;
    tr.code_count++;
    decide(ce, code, frame);
    return ce->domain_count ? ce : NULL;
}

/* ---- records ---------------------------------------------------------------------------- */

static void write_category(struct asys_thread *t, uint16_t domain)
{
    uint32_t name = asys_intern(t, CATEGORY_NAME);
    uint32_t delta;
    struct asys_rec_hgtx_category *r = asys_segment_reserve(&t->seg, sizeof *r, asys_now(), &delta);
    if (r) {
        r->category = ASYS_PY_CATEGORY;
        r->name_string_id = name;
        asys_segment_commit(&r->header,
                            ASYS_REC_WORD(ASYS_REC_HGTX_CATEGORY, sizeof *r / 8, domain, delta));
    }
}

/* The thread's tracer segment (asys_thread_open_extra): only pushes and pops,
 * in time order, whatever other collectors write into the thread's own
 * segment meanwhile.  Entered like asys_thread_enter. */
static struct asys_thread *writer_enter(void)
{
    if (ASYS_UNLIKELY(asys_tls_busy))
        return NULL;
    asys_tls_busy = 1;
    struct asys_thread *w = tls_writer;
    if (ASYS_UNLIKELY(!w) && !tls_writer_failed) {
        w = tls_writer = asys_thread_open_extra();
        tls_writer_failed = !w;
        if (w)
            pthread_setspecific(tr.writer_key, w);
    }
    if (!w)
        asys_tls_busy = 0;
    return w;
}

static void close_writer(void *arg)
{
    struct asys_thread *w = arg;
    if (!w || w != tls_writer)
        return;
    int was_busy = asys_tls_busy;
    asys_tls_busy = 1;
    tls_writer = NULL;
    asys_thread_close_extra(w);
    asys_tls_busy = was_busy;
}

/* Domains are registered at a traced call's first write (outside enter/leave). */
static int register_domains(struct code_entry *ce)
{
    for (int k = 0; k < ce->domain_count; k++) {
        struct domain *d = &tr.domains[ce->domains[k]];
        if (d->registered)
            continue;
        d->id = asys_hgtx_domain_create(d->name);
        struct asys_thread *t = asys_thread_enter();
        if (!t)
            return -1;
        write_category(t, d->id);
        asys_thread_leave();
        d->registered = 1;
    }
    ce->registered = 1;
    return 0;
}

static void write_push(struct asys_thread *t, uint16_t domain, uint32_t message, uint64_t ticks)
{
    uint32_t delta;
    struct asys_rec_hgtx_ex *r = asys_segment_reserve(&t->seg, sizeof *r, ticks, &delta);
    if (!r)
        return;
    memset(&r->attr, 0, sizeof r->attr);
    r->attr.message_string_id = message;
    r->attr.message_type = 1; /* ASCII */
    r->attr.domain_id = domain;
    r->attr.category = ASYS_PY_CATEGORY;
    r->attr.flags = ASYS_HGTX_HAS_CATEGORY;
    asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_HGTX_PUSH_EX, sizeof *r / 8, 0, delta));
}

static void write_pop(struct asys_thread *t, uint16_t domain, uint64_t ticks)
{
    uint32_t delta;
    asys_rec_word *r = asys_segment_reserve(&t->seg, sizeof *r, ticks, &delta);
    if (r)
        asys_segment_commit(r, ASYS_REC_WORD(ASYS_REC_HGTX_POP, 1, domain, delta));
}

/* The pushes of the calls from s->written up to the top (they all qualify). */
static void write_pending_pushes(struct asys_thread *t, struct thread_stack *s)
{
    int capturing = asys_capturing();
    for (uint32_t i = s->written; i < s->depth; i++) {
        struct frame_item *it = &s->items[i];
        if (capturing) {
            for (int k = 0; k < it->code->domain_count; k++)
                write_push(t, tr.domains[it->code->domains[k]].id, it->message, it->start);
            it->pushed = 1;
        }
    }
    s->written = s->depth;
}

static void thread_returns(struct thread_stack *s, uint64_t now)
{
    struct frame_item *it = &s->items[s->depth - 1];
    int qualifies = s->written < s->depth && now - it->start >= tr.threshold_ticks;
    if (qualifies || it->pushed) {
        struct asys_thread *t = writer_enter();
        if (t) {
            if (qualifies)
                write_pending_pushes(t, s);
            if (it->pushed)
                for (int k = it->code->domain_count - 1; k >= 0; k--)
                    write_pop(t, tr.domains[it->code->domains[k]].id, now);
            asys_thread_leave();
        }
    }
    s->depth--;
    if (s->written > s->depth)
        s->written = s->depth;
}

/* A traced call starts: `key` is what its return is matched by (the frame, or
 * the code object under sys.monitoring). */
static void call_traced(PyObject *key, struct code_entry *ce)
{
    struct thread_stack *s = tls_stack;
    if (ASYS_UNLIKELY(!s)) {
        s = tls_stack = calloc(1, sizeof *s);
        if (!s)
            return;
    }
    if (s->depth == STACK_MAX)
        return; /* deeper calls are not recorded */
    /* definitions now, stamped before the call's start: the pushes written later
     * keep the segment in time order */
    if (ASYS_UNLIKELY(!ce->registered) && register_domains(ce) != 0)
        return;
    /* the tracer segment opens before the first start it holds (its base time) */
    if (ASYS_UNLIKELY(!tls_writer) && !tls_writer_failed) {
        struct asys_thread *w = writer_enter();
        if (w)
            asys_thread_leave();
    }
    /* the message's id, defined in this thread's segment once */
    uint32_t message = ce->message;
    if (ASYS_UNLIKELY(!asys_tls_thread || ce->message_thread != asys_tls_thread)) {
        struct asys_thread *t = asys_thread_enter();
        if (!t)
            return;
        message = asys_intern_len(t, ce->name, ce->name_len);
        asys_thread_leave();
        ce->message = message;
        ce->message_thread = t;
    }
    struct frame_item *it = &s->items[s->depth++];
    it->frame = key;
    it->code = ce;
    it->message = message;
    it->pushed = 0;
    it->start = asys_now();
}
/* ---- the profile function (GIL held) ------------------------------------------------------ */

static int profile(PyObject *obj, PyObject *frame, int what, PyObject *arg)
{
    (void)obj;
    (void)arg;
    struct thread_stack *s = tls_stack;
    if (what == PY_TRACE_RETURN) {
        if (s && s->depth && s->items[s->depth - 1].frame == frame)
            thread_returns(s, asys_now());
        return 0;
    }
    if (what != PY_TRACE_CALL || !tr.on)
        return 0;
    const struct py_api *a = tr.api;
    PyObject *code = a->frame_code ? a->frame_code(frame) : a->get_attr(frame, "f_code");
    if (ASYS_UNLIKELY(!code)) {
        a->err_clear();
        return 0;
    }
    struct code_entry *ce = lookup(code, frame);
    a->decref(code); /* the frame and the table hold it */
    if (ASYS_LIKELY(!ce))
        return 0;
    call_traced(frame, ce);
    return 0;
}

/* threading.setprofile's hook, called as hook(frame, event, arg) on a new
 * thread's first event: the profile function replaces it. */
static PyObject *thread_hook(PyObject *self, PyObject *args)
{
    (void)self;
    const struct py_api *a = tr.api;
    tr.set_profile(profile, NULL);
    PyObject *frame = tr.tuple_get_item(args, 0);
    PyObject *event = tr.tuple_get_item(args, 1);
    char text[16];
    if (frame && event && text_of(event, text, sizeof text) && !strcmp(text, "call"))
        profile(NULL, frame, PY_TRACE_CALL, NULL);
    a->err_clear();
    a->incref(a->none);
    return a->none;
}

static void install_threading_hook(void)
{
    const struct py_api *a = tr.api;
    PyObject *modules = a->sys_get_object("modules"); /* borrowed */
    PyObject *threading = modules ? a->dict_get_item_string(modules, "threading") : NULL;
    if (!threading || !tr.thread_hook)
        return; /* asys imports nothing: hooked once the program imports threading */
    PyObject *setprofile = a->get_attr(threading, "setprofile");
    PyObject *one = setprofile ? a->tuple_new(1) : NULL;
    if (one) {
        a->incref(tr.thread_hook); /* the tuple takes this one */
        a->tuple_set_item(one, 0, tr.thread_hook);
        PyObject *r = a->call_object(setprofile, one);
        if (r) {
            tr.threading_hooked = 1; /* else threading is still being imported */
            a->decref(r);
        }
        a->decref(one);
    }
    if (setprofile)
        a->decref(setprofile);
    a->err_clear();
}

static int install_main(void *arg)
{
    (void)arg;
    tr.set_profile(profile, NULL);
    return 0;
}

/* ---- 3.12+: sys.monitoring ------------------------------------------------------------
 *
 * PY_START and PY_RESUME are calls, PY_RETURN, PY_YIELD and PY_UNWIND returns;
 * events are global (every thread, those started later too).  A callback
 * returns sys.monitoring.DISABLE at an untraced code location: the
 * interpreter no longer calls it there, so untraced code runs at full speed
 * once seen.  Callbacks get the code object, not the frame: the stack
 * matches returns by code object (recursion nests). */

#define PY_METH_FASTCALL 0x0080
typedef PyObject *(*py_fastcall)(PyObject *, PyObject *const *, Py_ssize_t);

static struct py_method_def mon_start_def, mon_return_def, mon_unwind_def;

static PyObject *ret_none(void)
{
    tr.api->incref(tr.api->none);
    return tr.api->none;
}

static PyObject *ret_disable(void)
{
    tr.api->incref(tr.disable);
    return tr.disable;
}

static PyObject *mon_start(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    (void)self;
    if (n < 1 || !tr.on)
        return ret_none();
    struct code_entry *ce = lookup(args[0], NULL);
    if (!ce)
        return ret_disable();
    call_traced(args[0], ce);
    return ret_none();
}

static PyObject *returns(PyObject *const *args, Py_ssize_t n, int can_disable)
{
    struct thread_stack *s = tls_stack;
    if (n < 1)
        return ret_none();
    if (s && s->depth && s->items[s->depth - 1].frame == args[0]) {
        thread_returns(s, asys_now());
        return ret_none();
    }
    if (can_disable && !lookup(args[0], NULL))
        return ret_disable();
    return ret_none();
}

static PyObject *mon_return(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    (void)self;
    return returns(args, n, 1);
}

static PyObject *mon_unwind(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    (void)self;
    return returns(args, n, 0); /* PY_UNWIND cannot be disabled */
}

/* obj.name(args...): 0, or -1 (the error cleared). */
static int call_method(PyObject *obj, const char *name, int n, PyObject **args)
{
    const struct py_api *a = tr.api;
    PyObject *f = a->get_attr(obj, name);
    PyObject *tuple = f ? a->tuple_new(n) : NULL;
    PyObject *r = NULL;
    int ok = f && tuple;
    for (int i = 0; i < n; i++) {
        if (!args[i])
            ok = 0;
        else if (tuple)
            a->tuple_set_item(tuple, i, args[i]); /* steals */
        else
            a->decref(args[i]);
    }
    if (ok)
        r = a->call_object(f, tuple);
    if (r)
        a->decref(r);
    if (tuple)
        a->decref(tuple);
    if (f)
        a->decref(f);
    a->err_clear();
    return r ? 0 : -1;
}

static long event_bit(PyObject *events, const char *name)
{
    PyObject *v = tr.api->get_attr(events, name);
    long bit = v ? tr.api->as_long(v) : -1;
    if (v)
        tr.api->decref(v);
    tr.api->err_clear();
    return bit > 0 ? bit : 0;
}

/* 0 when sys.monitoring delivers the events. */
static int start_monitoring(void)
{
    const struct py_api *a = tr.api;
    int rc = -1;
    if (!tr.get_globals || !tr.long_from || !tr.text_from)
        return -1;
    PyObject *sys = a->import("sys");
    PyObject *mon = sys ? a->get_attr(sys, "monitoring") : NULL;
    PyObject *events = mon ? a->get_attr(mon, "events") : NULL;
    long tool = -1;
    if (!events)
        goto out;
    /* PROFILER_ID (2), else a free one of the ids tools may use */
    static const long ids[] = {2, 3, 4};
    for (size_t i = 0; i < 3 && tool < 0; i++) {
        PyObject *args[] = {tr.long_from(ids[i]), tr.text_from("asys")};
        if (call_method(mon, "use_tool_id", 2, args) == 0)
            tool = ids[i];
    }
    if (tool < 0)
        goto out;
    tr.disable = a->get_attr(mon, "DISABLE");
    mon_start_def = (struct py_method_def){
        "_asys_py_start", (py_cfunction)(void (*)(void))mon_start, PY_METH_FASTCALL, NULL};
    mon_return_def = (struct py_method_def){
        "_asys_py_return", (py_cfunction)(void (*)(void))mon_return, PY_METH_FASTCALL, NULL};
    mon_unwind_def = (struct py_method_def){
        "_asys_py_unwind", (py_cfunction)(void (*)(void))mon_unwind, PY_METH_FASTCALL, NULL};
    struct {
        struct py_method_def *def;
        const char *events[2];
    } callbacks[] = {{&mon_start_def, {"PY_START", "PY_RESUME"}},
                     {&mon_return_def, {"PY_RETURN", "PY_YIELD"}},
                     {&mon_unwind_def, {"PY_UNWIND", NULL}}};
    long mask = 0;
    int registered = tr.disable != NULL;
    for (size_t i = 0; i < 3 && registered; i++) {
        PyObject *f = a->cfunction_new(callbacks[i].def, NULL, NULL); /* kept for good */
        for (int k = 0; k < 2 && f && registered; k++) {
            long bit = callbacks[i].events[k] ? event_bit(events, callbacks[i].events[k]) : 0;
            if (!callbacks[i].events[k])
                continue;
            a->incref(f);
            PyObject *args[] = {tr.long_from(tool), tr.long_from(bit), f};
            registered = bit && call_method(mon, "register_callback", 3, args) == 0;
            mask |= bit;
        }
        registered = registered && f;
    }
    PyObject *args[] = {tr.long_from(tool), tr.long_from(registered ? mask : 0)};
    if (registered && call_method(mon, "set_events", 2, args) == 0) {
        tr.monitoring = 1;
        rc = 0;
    } else {
        PyObject *free_args[] = {tr.long_from(tool)};
        call_method(mon, "free_tool_id", 1, free_args);
    }
out:
    if (events)
        a->decref(events);
    if (mon)
        a->decref(mon);
    if (sys)
        a->decref(sys);
    a->err_clear();
    return rc;
}

/* A fork child: what the parent registered and pushed is in the parent's
 * segments; the forking thread's open calls are not popped here. */
static void after_fork(void)
{
    for (size_t i = 0; i < tr.domain_count; i++)
        tr.domains[i].registered = 0;
    for (size_t i = 0; i < tr.code_cap; i++) {
        tr.codes[i].registered = 0;
        tr.codes[i].message_thread = NULL;
    }
    tls_writer = NULL; /* dropped with every inherited writer */
    tls_writer_failed = 0;
    pthread_setspecific(tr.writer_key, NULL);
    struct thread_stack *s = tls_stack;
    if (s) {
        for (uint32_t i = 0; i < s->depth; i++)
            s->items[i].pushed = 0;
        s->written = s->depth;
    }
}

/* ---- start ------------------------------------------------------------------------------ */

int asys_python_trace_init(const struct py_api *api, uint32_t version_hex)
{
    const char *rules = getenv("ASYS_PYTHON_TRACE_RULES");
    uint64_t ns = 0;
    if (!rules || !*rules)
        return 0;
    if (asys_option_u64("ASYS_PYTHON_TRACE_THRESHOLD_NS", &ns) != 0)
        return -1;
    tr.api = api;
    tr.version = version_hex;
    tr.threshold_ticks = (uint64_t)((double)ns * asys_proc.ticks_per_ns);
    *(void **)&tr.set_profile = dlsym(RTLD_DEFAULT, "PyEval_SetProfile");
    *(void **)&tr.set_profile_all = dlsym(RTLD_DEFAULT, "PyEval_SetProfileAllThreads");
    *(void **)&tr.tuple_get_item = dlsym(RTLD_DEFAULT, "PyTuple_GetItem");
    *(void **)&tr.is_instance = dlsym(RTLD_DEFAULT, "PyObject_IsInstance");
    *(void **)&tr.get_globals = dlsym(RTLD_DEFAULT, "PyEval_GetGlobals");
    *(void **)&tr.long_from = dlsym(RTLD_DEFAULT, "PyLong_FromLong");
    *(void **)&tr.text_from = dlsym(RTLD_DEFAULT, "PyUnicode_FromString");
    tr.type_type = dlsym(RTLD_DEFAULT, "PyType_Type");
    if (parse_rules(rules) != 0 || grow_codes() != 0)
        return -1;
    if (pthread_key_create(&tr.writer_key, close_writer) != 0)
        return -1;
    pthread_atfork(NULL, NULL, after_fork);
    tr.on = 1; /* started by asys_python_trace_start */
    return 1;
}

/* 3.13+ free-threaded builds: sys._is_gil_enabled() is false. */
static int gil_disabled(void)
{
    const struct py_api *a = tr.api;
    int (*is_true)(PyObject *);
    *(void **)&is_true = dlsym(RTLD_DEFAULT, "PyObject_IsTrue");
    PyObject *sys = a->import("sys");
    PyObject *f = sys && is_true ? a->get_attr(sys, "_is_gil_enabled") : NULL;
    PyObject *r = f ? a->call_object(f, NULL) : NULL;
    int disabled = r && is_true(r) == 0;
    PyObject *owned[] = {r, f, sys};
    for (size_t i = 0; i < 3; i++)
        if (owned[i])
            a->decref(owned[i]);
    a->err_clear();
    return disabled;
}

void asys_python_trace_start(void)
{
    const struct py_api *a = tr.api;
    char text[128];
    if (!tr.on || tr.started)
        return;
    tr.started = 1;
    if (gil_disabled()) {
        tr.on = 0; /* the tracer's state is guarded by the GIL */
        asys_python_write_status(ASYS_PYTHON_TRACE_OFF, tr.version,
                                 "a free-threaded interpreter (no GIL)");
        return;
    }
    if (tr.version >= 0x030c0000u && start_monitoring() == 0) {
        snprintf(text, sizeof text, "%zu rules, threshold %llu ticks, sys.monitoring",
                 tr.rule_count, (unsigned long long)tr.threshold_ticks);
        asys_python_write_status(ASYS_PYTHON_TRACING, tr.version, text);
        return;
    }
    if (!tr.set_profile || !tr.tuple_get_item || !a->add_pending_call) {
        tr.on = 0;
        asys_python_write_status(ASYS_PYTHON_TRACE_OFF, tr.version,
                                 "the interpreter lacks PyEval_SetProfile");
        return;
    }
    thread_hook_def =
        (struct py_method_def){"_asys_trace_thread", thread_hook, PY_METH_VARARGS, NULL};
    tr.thread_hook = a->cfunction_new(&thread_hook_def, NULL, NULL); /* kept for good */
    a->err_clear();
    install_threading_hook();
    if (tr.set_profile_all)
        tr.set_profile_all(profile, NULL);
    else if (a->add_pending_call(install_main, NULL) != 0)
        asys_python_write_status(ASYS_PYTHON_TRACE_OFF, tr.version,
                                 "could not reach the main thread");
    snprintf(text, sizeof text, "%zu rules, threshold %llu ticks", tr.rule_count,
             (unsigned long long)tr.threshold_ticks);
    asys_python_write_status(ASYS_PYTHON_TRACING, tr.version, text);
}
