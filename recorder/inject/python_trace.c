/* Python function tracing (--python-functions-trace): the functions the
 * rules name become HGTX push/pop ranges when a call lasts at least
 * --python-functions-threshold.
 *
 * How calls are seen depends on the version (all of it with the GIL held):
 *   - 3.12+: sys.monitoring (below).  A callback returns DISABLE at an
 *     untraced code location, so untraced code runs at full speed once seen.
 *   - Before 3.12: the named functions are replaced by wrappers when their
 *     module is imported (python_wrap.c); nothing else is touched.  A
 *     profile function was measured first: on 3.11 it made every untraced
 *     call 4x slower (the interpreter leaves its specialized instructions
 *     while a profile function is set), against the 5 %.
 * Both report a call's start and end here:
 *   - A traced call is pushed on the thread's stack (key, start, target);
 *     nothing is written yet.  At its return, when it lasted at least the
 *     threshold, the pushes of every enclosing traced call not written yet
 *     are written with their start times (they last longer than this one),
 *     then its pushes, its pops.  The records stay in time order: a call not
 *     written yet began after the thread's last tracer record.
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
#include "python_trace.h"

#define ASYS_PY_CATEGORY 0x70790001u
#define CATEGORY_NAME "Python function"
#define MAX_DOMAINS 64
#define STACK_MAX 512

struct rule {
    int entry;
    char *module;
    size_t module_len;
    char *function; /* "" : every function of module and its submodules */
    int domain; /* index in tr.domains */
};

/* 3.12+: a code object seen by sys.monitoring */
struct code_entry {
    PyObject *code; /* a reference we hold; NULL: free slot */
    struct asys_py_target target;
};

struct domain {
    char *name;
    uint16_t id;
    int registered; /* DOMAIN and CATEGORY records written in this process image */
};

struct frame_item {
    const void *key; /* compared only */
    uint64_t start;
    struct asys_py_target *target;
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
    uint64_t threshold_ticks, threshold_ns;
    struct rule *rules;
    size_t rule_count;
    struct domain domains[MAX_DOMAINS];
    size_t domain_count;
    struct code_entry *codes; /* open addressing, power of two */
    size_t code_cap, code_count;
    struct asys_py_target *targets; /* the wrappers' */
    uint32_t version;
    PyObject *(*get_globals)(void);
    PyObject *(*long_from)(long);
    PyObject *(*text_from)(const char *);
    /* 3.12+: sys.monitoring */
    int monitoring;
    int started; /* asys_python_trace_start ran */
    PyObject *disable; /* sys.monitoring.DISABLE */
    pthread_key_t writer_key; /* closes a thread's tracer segment when it ends */
} tr;

static __thread struct thread_stack *tls_stack ASYS_TLS;
static __thread struct asys_thread *tls_writer ASYS_TLS;
static __thread int tls_writer_failed ASYS_TLS;

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

/* ---- deciding a function (cold: once per function or code object) ---------------------- */

static size_t text_of(PyObject *v, char *out, size_t size)
{
    return asys_python_text(tr.api, v, out, size);
}

static size_t attr_text(PyObject *o, const char *name, char *out, size_t size)
{
    return asys_python_attr_text(tr.api, o, name, out, size);
}

static int module_rule_covers(const struct rule *r, const char *module)
{
    return !strncmp(module, r->module, r->module_len) &&
           (module[r->module_len] == '\0' || module[r->module_len] == '.');
}

int asys_py_trace_wants(const char *module)
{
    for (size_t i = 0; i < tr.rule_count; i++) {
        const struct rule *r = &tr.rules[i];
        if (*r->function ? !strcmp(module, r->module) : module_rule_covers(r, module))
            return 1;
    }
    return 0;
}

/* The domains of the rules naming `qualname` of `module` into t: those of
 * the last rule (in the spec's order) that names it, several when that
 * entry lists several domains. */
static void match_rules(const char *module, const char *qualname, struct asys_py_target *t)
{
    int best = -1;
    t->domain_count = 0;
    for (size_t i = 0; i < tr.rule_count; i++) {
        const struct rule *r = &tr.rules[i];
        int match = *r->function ? !strcmp(module, r->module) && !strcmp(qualname, r->function)
                                 : module_rule_covers(r, module);
        if (!match)
            continue;
        if (r->entry > best) {
            best = r->entry;
            t->domain_count = 0;
        }
        if (r->entry == best && t->domain_count < ASYS_PY_TARGET_DOMAINS) {
            int seen = 0;
            for (int k = 0; k < t->domain_count; k++)
                seen |= t->domains[k] == r->domain;
            if (!seen)
                t->domains[t->domain_count++] = (uint8_t)r->domain;
        }
    }
}

/* Fills t for `qualname` of `module`; 0 when a rule names it. */
static int decide_target(const char *module, const char *qualname, struct asys_py_target *t)
{
    memset(t, 0, sizeof *t);
    match_rules(module, qualname, t);
    if (!t->domain_count)
        return -1;
    size_t len = strlen(module) + 1 + strlen(qualname);
    t->name = malloc(len + 1);
    if (!t->name || len > UINT32_MAX) {
        free(t->name);
        t->name = NULL;
        t->domain_count = 0;
        return -1;
    }
    snprintf(t->name, len + 1, "%s.%s", module, qualname);
    t->name_len = (uint32_t)len;
    return 0;
}

struct asys_py_target *asys_py_target_new(const char *module, const char *qualname)
{
    struct asys_py_target *t = malloc(sizeof *t);
    if (!t || decide_target(module, qualname, t) != 0) {
        free(t);
        return NULL;
    }
    t->next = tr.targets;
    tr.targets = t;
    return t;
}

void asys_py_target_free(struct asys_py_target *t)
{
    for (struct asys_py_target **p = &tr.targets; *p; p = &(*p)->next)
        if (*p == t) {
            *p = t->next;
            break;
        }
    free(t->name);
    free(t);
}

/* 3.12+, a code object sys.monitoring reports: the callback runs in its
 * frame, whose globals name the module. */
static void decide_code(struct code_entry *ce, PyObject *code)
{
    const struct py_api *a = tr.api;
    char module[256], qualname[512];
    memset(&ce->target, 0, sizeof ce->target);
    PyObject *globals = tr.get_globals(); /* borrowed */
    PyObject *name = globals ? a->dict_get_item_string(globals, "__name__") : NULL;
    if (!text_of(name, module, sizeof module))
        goto out;
    /* functions only: not module or class bodies (no CO_NEWLOCALS), lambdas,
     * comprehensions, generator expressions */
    PyObject *flags = a->get_attr(code, "co_flags");
    long co_flags = flags ? a->as_long(flags) : 0;
    if (flags)
        a->decref(flags);
    if (!(co_flags & 0x0002) || !attr_text(code, "co_name", qualname, sizeof qualname) ||
        qualname[0] == '<' || !attr_text(code, "co_qualname", qualname, sizeof qualname))
        goto out;
    decide_target(module, qualname, &ce->target);
out:
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

/* The target of `code`: NULL when it is not traced (or cannot be remembered). */
static inline struct asys_py_target *lookup(PyObject *code)
{
    if (ASYS_UNLIKELY(!tr.code_cap) && grow_codes() != 0)
        return NULL;
    size_t s = code_slot(code, tr.code_cap);
    for (;;) {
        struct code_entry *ce = &tr.codes[s];
        if (ASYS_LIKELY(ce->code == code))
            return ce->target.domain_count ? &ce->target : NULL;
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
    decide_code(ce, code);
    return ce->target.domain_count ? &ce->target : NULL;
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
static int register_domains(struct asys_py_target *target)
{
    for (int k = 0; k < target->domain_count; k++) {
        struct domain *d = &tr.domains[target->domains[k]];
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
    target->registered = 1;
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
            for (int k = 0; k < it->target->domain_count; k++)
                write_push(t, tr.domains[it->target->domains[k]].id, it->message, it->start);
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
                for (int k = it->target->domain_count - 1; k >= 0; k--)
                    write_pop(t, tr.domains[it->target->domains[k]].id, now);
            asys_thread_leave();
        }
    }
    s->depth--;
    if (s->written > s->depth)
        s->written = s->depth;
}

int asys_py_call_starts(const void *key, struct asys_py_target *target)
{
    struct thread_stack *s = tls_stack;
    if (ASYS_UNLIKELY(!s)) {
        s = tls_stack = calloc(1, sizeof *s);
        if (!s)
            return 0;
    }
    if (s->depth == STACK_MAX || !tr.on)
        return 0; /* deeper calls are not recorded */
    /* definitions now, stamped before the call's start: the pushes written later
     * keep the segment in time order */
    if (ASYS_UNLIKELY(!target->registered) && register_domains(target) != 0)
        return 0;
    /* the tracer segment opens before the first start it holds (its base time) */
    if (ASYS_UNLIKELY(!tls_writer) && !tls_writer_failed) {
        struct asys_thread *w = writer_enter();
        if (w)
            asys_thread_leave();
    }
    /* the message's id, defined in this thread's segment once */
    uint32_t message = target->message;
    if (ASYS_UNLIKELY(!asys_tls_thread || target->message_thread != asys_tls_thread)) {
        struct asys_thread *t = asys_thread_enter();
        if (!t)
            return 0;
        message = asys_intern_len(t, target->name, target->name_len);
        asys_thread_leave();
        target->message = message;
        target->message_thread = t;
    }
    struct frame_item *it = &s->items[s->depth++];
    it->key = key;
    it->target = target;
    it->message = message;
    it->pushed = 0;
    it->start = asys_now();
    return 1;
}

void asys_py_call_ends(const void *key)
{
    struct thread_stack *s = tls_stack;
    if (s && s->depth && s->items[s->depth - 1].key == key)
        thread_returns(s, asys_now());
}

/* ---- 3.12+: sys.monitoring ------------------------------------------------------------
 *
 * PY_START and PY_RESUME are calls, PY_RETURN, PY_YIELD and PY_UNWIND returns;
 * events are global (every thread, those started later too).  A callback
 * returns sys.monitoring.DISABLE at an untraced code location: the
 * interpreter no longer calls it there, so untraced code runs at full speed
 * once seen.  Callbacks get the code object, not the frame: the stack
 * matches returns by code object (recursion nests). */

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
    struct asys_py_target *target = lookup(args[0]);
    if (!target)
        return ret_disable();
    asys_py_call_starts(args[0], target);
    return ret_none();
}

static PyObject *returns(PyObject *const *args, Py_ssize_t n, int can_disable)
{
    struct thread_stack *s = tls_stack;
    if (n < 1)
        return ret_none();
    if (s && s->depth && s->items[s->depth - 1].key == args[0]) {
        thread_returns(s, asys_now());
        return ret_none();
    }
    if (can_disable && !lookup(args[0]))
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
static void forget_definitions(struct asys_py_target *t)
{
    t->registered = 0;
    t->message_thread = NULL;
}

static void after_fork(void)
{
    for (size_t i = 0; i < tr.domain_count; i++)
        tr.domains[i].registered = 0;
    for (size_t i = 0; i < tr.code_cap; i++)
        forget_definitions(&tr.codes[i].target);
    for (struct asys_py_target *t = tr.targets; t; t = t->next)
        forget_definitions(t);
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
    tr.threshold_ns = ns;
    tr.threshold_ticks = (uint64_t)((double)ns * asys_proc.ticks_per_ns);
    *(void **)&tr.get_globals = dlsym(RTLD_DEFAULT, "PyEval_GetGlobals");
    *(void **)&tr.long_from = dlsym(RTLD_DEFAULT, "PyLong_FromLong");
    *(void **)&tr.text_from = dlsym(RTLD_DEFAULT, "PyUnicode_FromString");
    if (parse_rules(rules) != 0)
        return -1;
    if (pthread_key_create(&tr.writer_key, close_writer) != 0)
        return -1;
    asys_at_fork(NULL, NULL, after_fork);
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
    char text[192];
    const char *why = NULL;
    if (!tr.on || tr.started)
        return;
    tr.started = 1;
    if (gil_disabled()) {
        tr.on = 0; /* the tracer's state is guarded by the GIL */
        asys_python_write_status(ASYS_PYTHON_TRACE_OFF, tr.version,
                                 "a free-threaded interpreter (no GIL)");
        return;
    }
    /* 3.12+: sys.monitoring, else (its tool ids taken) wrappers as before 3.12 */
    if (tr.version >= 0x030c0000u && start_monitoring() == 0) {
        snprintf(text, sizeof text, "%zu rule%s, threshold %llu ns, sys.monitoring", tr.rule_count,
                 tr.rule_count == 1 ? "" : "s", (unsigned long long)tr.threshold_ns);
        asys_python_write_status(ASYS_PYTHON_TRACING, tr.version, text);
        return;
    }
    if (asys_py_wrap_start(tr.api, &why) != 0) {
        tr.on = 0;
        asys_python_write_status(ASYS_PYTHON_TRACE_OFF, tr.version, why);
        return;
    }
    snprintf(text, sizeof text,
             "%zu rule%s, threshold %llu ns, function wrappers (set when a module is "
             "imported)",
             tr.rule_count, tr.rule_count == 1 ? "" : "s", (unsigned long long)tr.threshold_ns);
    asys_python_write_status(ASYS_PYTHON_TRACING, tr.version, text);
}
