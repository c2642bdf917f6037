/* Chrome JSON: every track that receives events becomes a thread (tid) of a
 * process (pid).  The traced processes keep their pid, and the first row of
 * each thread that has events its real tid (the thread's other rows and
 * lanes get tids of their own, above every Linux tid); each PPU device gets a
 * pid of its own.  A thread is named by its path in the track tree, and
 * ordered within its process by thread_sort_index: the rank of its place in
 * the tree (written at the end, once every thread is known).  Slices are
 * complete ("X") events, which nest on a tid because the timeline keeps each
 * track a stack; event arguments go into "args".  A call that launched one
 * piece of work points at it with flow v2 (bind_id + flow_out / flow_in on
 * the X events); as an X event carries one such flow, the rest (a graph
 * launch's many activities, the dependencies) are flow v1 events ("s" / "f")
 * at the slice's start, or for a flow whose source begins later, on the
 * instant the timeline draws at the slice's end (an "f" there binds to that
 * instant, which starts after the source: consumers draw a flow from the
 * slice that starts first). */
#define _GNU_SOURCE
#include "sink_json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "hashmap.h"
#include "out_file.h"
#include "output_format.h"

#define GROUP_PID_BASE 0x10000000u /* above every Linux pid (at most 2^22) */
#define SYNTHETIC_TID_BASE 0x20000000u /* above every Linux tid, unique in the trace */

struct json_track {
    uint32_t pid;
    uint32_t tid; /* 0: not given one yet (no events so far) */
    uint32_t lane;
    uint64_t sort_index;
    char *path; /* names below the process, joined by " / " */
    /* TL_THREAD: the real tid, and whether a row took it; a row under a
     * thread: that thread's track */
    uint32_t real_tid;
    int real_taken;
    struct json_track *thread;
};

/* A tid given, for the thread_sort_index written at the end. */
struct json_thread {
    uint32_t pid, tid, lane;
    uint64_t thread_sort; /* its thread's place (its own when not a thread's row) */
    int synthetic; /* not the thread's real tid, which goes first */
    uint64_t sort_index;
    size_t order; /* the order tids were given: ties */
};

#define BUFFER_SIZE (1u << 20)

struct asys_json_sink {
    FILE *out;
    char *buf; /* what waits to be written: one fwrite a megabyte */
    size_t len;
    int64_t base_ns;
    int first; /* no event written yet (no comma before it) */
    uint32_t next_group_pid;
    uint32_t next_tid; /* the next synthetic tid */
    struct asys_u64map tracks; /* uuid -> struct json_track * */
    struct json_thread *threads;
    size_t thread_count, thread_cap;
    uint64_t last_uuid; /* track_of's last answer */
    struct json_track *last_track;
    int failed;
};

/* ---- the output buffer ---------------------------------------------------------------- */

static void flush(struct asys_json_sink *s)
{
    if (s->len && !s->failed && asys_out_write(s->out, s->buf, s->len) != 0)
        s->failed = 1;
    s->len = 0;
}

/* Room for n more bytes (n at most BUFFER_SIZE). */
static char *room(struct asys_json_sink *s, size_t n)
{
    if (s->len + n > BUFFER_SIZE)
        flush(s);
    return s->buf + s->len;
}

/* A huge name: straight through. */
static __attribute__((noinline, cold)) void put_large(struct asys_json_sink *s, const char *p,
                                                      size_t n)
{
    flush(s);
    if (!s->failed && asys_out_write(s->out, p, n) != 0)
        s->failed = 1;
}

/* Inlined everywhere: most calls copy a literal, whose length and copy the
 * compiler then knows (a libc memcpy call a field was 8 % of a JSON export). */
static inline __attribute__((always_inline)) void put_bytes(struct asys_json_sink *s, const char *p,
                                                            size_t n)
{
    if (n > BUFFER_SIZE / 2) {
        put_large(s, p, n);
        return;
    }
    memcpy(room(s, n), p, n);
    s->len += n;
}

static inline __attribute__((always_inline)) void put_str(struct asys_json_sink *s,
                                                          const char *text)
{
    put_bytes(s, text, strlen(text));
}

/* "00" .. "99": two digits a division (a timestamp has 10-16) */
static const char digit_pairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233"
    "34353637383940414243444546474849505152535455565758596061626364656667"
    "6869707172737475767778798081828384858687888990919293949596979899";

static void put_u64(struct asys_json_sink *s, uint64_t v)
{
    /* written from the middle back, then copied as a fixed 24 bytes (at
     * most 20 digits): no libc call, the bytes past the number are
     * overwritten by what follows */
    char digits[48];
    memset(digits + 24, 0, 24); /* what is copied past the number is defined */
    char *p = digits + 24;
    while (v >= 100) {
        p -= 2;
        memcpy(p, digit_pairs + v % 100 * 2, 2);
        v /= 100;
    }
    if (v >= 10) {
        p -= 2;
        memcpy(p, digit_pairs + v * 2, 2);
    } else {
        *--p = (char)('0' + v);
    }
    size_t n = (size_t)(digits + 24 - p);
    memcpy(room(s, 24), p, 24);
    s->len += n;
}

/* ns -> microseconds with three decimals, "-1.234" for negative values. */
static void put_us(struct asys_json_sink *s, int64_t ns)
{
    uint64_t v = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    if (ns < 0)
        put_bytes(s, "-", 1);
    put_u64(s, v / 1000);
    char *p = room(s, 4);
    p[0] = '.';
    p[1] = (char)('0' + v % 1000 / 100);
    p[2] = (char)('0' + v % 100 / 10);
    p[3] = (char)('0' + v % 10);
    s->len += 4;
}

static void put_i64(struct asys_json_sink *s, int64_t v)
{
    if (v < 0)
        put_bytes(s, "-", 1);
    put_u64(s, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v);
}

/* "0x1f" as "\"0x%llx\"" prints it, without snprintf (two a flow). */
static void put_hex(struct asys_json_sink *s, uint64_t v)
{
    char text[24];
    char *p = text + sizeof text;
    *--p = '"';
    do {
        *--p = "0123456789abcdef"[v & 0xf];
        v >>= 4;
    } while (v);
    *--p = 'x';
    *--p = '0';
    *--p = '"';
    put_bytes(s, p, (size_t)(text + sizeof text - p));
}

/* A JSON string: most names need no escaping and are copied as they are. */
static void put_json_string(struct asys_json_sink *s, const char *text)
{
    /* one pass finds the end and whether anything needs escaping */
    size_t len = 0;
    for (unsigned char c; (c = (unsigned char)text[len]) != 0; len++)
        if (c < 0x20 || c == '"' || c == '\\' || c >= 0x7f) {
            flush(s); /* the escaping writer goes to the stream */
            asys_json_write_string(s->out, text, strlen(text));
            return;
        }
    put_bytes(s, "\"", 1);
    put_bytes(s, text, len);
    put_bytes(s, "\"", 1);
}

struct asys_json_sink *asys_json_sink_new(FILE *out, int64_t base_ns)
{
    struct asys_json_sink *s = calloc(1, sizeof *s);
    if (!s || !(s->buf = malloc(BUFFER_SIZE))) {
        free(s);
        return NULL;
    }
    s->out = out;
    s->base_ns = base_ns;
    s->first = 1;
    s->next_group_pid = GROUP_PID_BASE;
    s->next_tid = SYNTHETIC_TID_BASE;
    asys_u64map_init(&s->tracks);
    put_str(s, "{\"traceEvents\":[\n");
    return s;
}

void asys_json_sink_free(struct asys_json_sink *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->tracks.capacity; i++)
        if (s->tracks.used[i]) {
            struct json_track *t = (struct json_track *)(uintptr_t)s->tracks.values[i];
            free(t->path);
            free(t);
        }
    asys_u64map_free(&s->tracks);
    free(s->threads);
    free(s->buf);
    free(s);
}

static void put_metadata(struct asys_json_sink *s, const char *what, uint32_t pid, uint32_t tid,
                         const char *name, int64_t sort_index);

static int by_place(const void *a, const void *b)
{
    const struct json_thread *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->thread_sort != y->thread_sort)
        return x->thread_sort < y->thread_sort ? -1 : 1;
    if (x->synthetic != y->synthetic)
        return x->synthetic - y->synthetic;
    if (x->sort_index != y->sort_index)
        return x->sort_index < y->sort_index ? -1 : 1;
    if (x->lane != y->lane)
        return x->lane < y->lane ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* thread_sort_index: the rank of each tid's place in the tree within its
 * process, 1, 2, ... (the tree's own sort index is wider than the int32
 * consumers keep); a thread's real tid before its other rows. */
static void put_thread_order(struct asys_json_sink *s)
{
    if (s->thread_count) /* qsort wants an array, even of nothing */
        qsort(s->threads, s->thread_count, sizeof *s->threads, by_place);
    int64_t rank = 0;
    for (size_t i = 0; i < s->thread_count; i++) {
        rank = i && s->threads[i].pid == s->threads[i - 1].pid ? rank + 1 : 1;
        put_metadata(s, "thread_sort_index", s->threads[i].pid, s->threads[i].tid, NULL, rank);
    }
}

int asys_json_sink_finish(struct asys_json_sink *s)
{
    put_thread_order(s);
    put_str(s, "\n]}\n");
    flush(s);
    return s->failed || ferror(s->out) ? -1 : 0;
}

static int status(struct asys_json_sink *s)
{
    return s->failed ? -1 : 0;
}

static void begin_event(struct asys_json_sink *s)
{
    if (!s->first)
        put_bytes(s, ",\n", 2);
    s->first = 0;
}

static void put_metadata(struct asys_json_sink *s, const char *what, uint32_t pid, uint32_t tid,
                         const char *name, int64_t sort_index)
{
    begin_event(s);
    put_str(s, "{\"name\":\"");
    put_str(s, what);
    put_str(s, "\",\"ph\":\"M\",\"pid\":");
    put_u64(s, pid);
    if (tid) {
        put_str(s, ",\"tid\":");
        put_u64(s, tid);
    }
    if (name) {
        put_str(s, ",\"args\":{\"name\":");
        put_json_string(s, name);
    } else {
        put_str(s, ",\"args\":{\"sort_index\":");
        put_u64(s, (uint64_t)sort_index);
    }
    put_str(s, "}}");
}

/* Chrome's process_labels: the command line, and the parent process (the
 * format has no place of its own for it). */
static void put_labels(struct asys_json_sink *s, uint32_t pid, const char *cmdline, uint32_t ppid)
{
    char parent[32] = "";
    if (ppid)
        snprintf(parent, sizeof parent, " (parent %u)", ppid);
    begin_event(s);
    put_str(s, "{\"name\":\"process_labels\",\"ph\":\"M\",\"pid\":");
    put_u64(s, pid);
    put_str(s, ",\"args\":{\"labels\":");
    size_t n = strlen(cmdline) + strlen(parent) + 1;
    char *text = malloc(n);
    if (text) {
        snprintf(text, n, "%s%s", cmdline, parent);
        put_json_string(s, text);
        free(text);
    } else {
        put_json_string(s, cmdline);
    }
    put_str(s, "}}");
}

/* ---- tracks ----------------------------------------------------------------------------- */

static struct json_track *track_of(struct asys_json_sink *s, uint64_t uuid)
{
    if (s->last_track && s->last_uuid == uuid)
        return s->last_track;
    uint64_t *v = asys_u64map_get(&s->tracks, uuid);
    if (!v)
        return NULL;
    s->last_uuid = uuid;
    s->last_track = (struct json_track *)(uintptr_t)*v;
    return s->last_track;
}

static int track(void *sink, const struct tl_track *t)
{
    struct asys_json_sink *s = sink;
    struct json_track *j = calloc(1, sizeof *j);
    if (!j || asys_u64map_put(&s->tracks, t->uuid, (uint64_t)(uintptr_t)j) != 0) {
        free(j);
        return -1;
    }
    j->sort_index = t->sort_index;
    j->lane = t->lane;
    if (t->kind == TL_PROCESS || t->kind == TL_GROUP) {
        j->pid = t->kind == TL_PROCESS ? t->pid : s->next_group_pid++;
        if (!(j->path = strdup("")))
            return -1;
        /* consumers show a process's pid after its name: a traced process is
         * named by its executable alone */
        put_metadata(s, "process_name", j->pid, 0,
                     t->kind == TL_PROCESS && t->label ? t->label : t->name, 0);
        put_metadata(s, "process_sort_index", j->pid, 0, NULL,
                     (int64_t)(t->kind == TL_GROUP ? t->order : 1000 + t->order));
        if (t->kind == TL_PROCESS && t->cmdline) /* shown under the process name */
            put_labels(s, j->pid, t->cmdline, t->ppid);
        return 0;
    }
    struct json_track *parent = track_of(s, t->parent_uuid);
    j->pid = parent ? parent->pid : 0;
    if (t->kind == TL_THREAD)
        j->real_tid = t->tid;
    else if (parent)
        j->thread = parent->real_tid ? parent : parent->thread;
    const char *above = parent ? parent->path : "";
    size_t n = strlen(above) + strlen(t->name) + 32;
    if (!(j->path = malloc(n)))
        return -1;
    if (t->lane)
        snprintf(j->path, n, "%s%s%s [lane %u]", above, *above ? " / " : "", t->name, t->lane + 1);
    else
        snprintf(j->path, n, "%s%s%s", above, *above ? " / " : "", t->name);
    return 0;
}

/* The tid of a track, given (with its name) on its first event: the
 * thread's real tid for its first row with events, else one of our own. */
static uint32_t tid_of(struct asys_json_sink *s, struct json_track *j)
{
    if (j->tid)
        return j->tid;
    if (j->thread && !j->thread->real_taken && !j->lane) {
        j->tid = j->thread->real_tid;
        j->thread->real_taken = 1;
    } else {
        j->tid = s->next_tid++;
    }
    if (asys_grow(&s->threads, &s->thread_cap, s->thread_count, sizeof *s->threads, 64) != 0) {
        s->failed = 1;
    } else {
        uint64_t thread_sort = j->thread ? j->thread->sort_index : j->sort_index;
        s->threads[s->thread_count] =
            (struct json_thread){j->pid,
                                 j->tid,
                                 j->lane,
                                 thread_sort,
                                 !j->thread || j->tid != j->thread->real_tid,
                                 j->sort_index,
                                 s->thread_count};
        s->thread_count++;
    }
    put_metadata(s, "thread_name", j->pid, j->tid, j->path, 0);
    return j->tid;
}

/* ---- events ------------------------------------------------------------------------------ */

static void event_head(struct asys_json_sink *s, const char *name, struct tl_category cat,
                       const char *phase, int64_t ts)
{
    begin_event(s);
    put_str(s, "{\"name\":");
    put_json_string(s, name);
    put_str(s, ",\"cat\":\"");
    put_str(s, cat.name);
    put_str(s, "\",\"ph\":\"");
    put_str(s, phase);
    put_str(s, "\",\"ts\":");
    put_us(s, ts - s->base_ns);
}

static void event_place(struct asys_json_sink *s, struct json_track *j)
{
    uint32_t tid = tid_of(s, j);
    put_str(s, ",\"pid\":");
    put_u64(s, j->pid);
    put_str(s, ",\"tid\":");
    put_u64(s, tid);
}

/* "args":{...}: numbers as numbers (a double so that it reads back exactly,
 * null when not finite), text as strings. */
static void put_args(struct asys_json_sink *s, const struct tl_args *a)
{
    if (!a || !a->count)
        return;
    put_str(s, ",\"args\":{");
    for (size_t i = 0; i < a->count; i++) {
        const struct tl_arg *arg = &a->items[i];
        if (i)
            put_bytes(s, ",", 1);
        put_json_string(s, arg->name);
        put_bytes(s, ":", 1);
        char text[64];
        switch (arg->type) {
        case TL_ARG_INT:
            put_i64(s, arg->value.i);
            break;
        case TL_ARG_UINT:
            put_u64(s, arg->value.u);
            break;
        case TL_ARG_DOUBLE:
            if (isfinite(arg->value.d)) {
                int n = asys_format_real(text, sizeof text, arg->value.d, 1);
                put_bytes(s, text, (size_t)n);
            } else {
                put_str(s, "null");
            }
            break;
        case TL_ARG_STRING:
            put_json_string(s, arg->value.s);
            break;
        }
    }
    put_bytes(s, "}", 1);
}

static int is_host_flow(uint64_t id)
{
    return (id & TL_FLOW_SPACE) == TL_FLOW_HOST;
}

/* The first host flow among ids, 0 when there is none. */
static uint64_t first_host_flow(const uint64_t *ids, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (is_host_flow(ids[i]))
            return ids[i];
    return 0;
}

/* The slice's flow as flow v2 fields: a host flow between a call and the
 * only work it launched (one per event in this form). */
static void put_v2_flow(struct asys_json_sink *s, const struct tl_flows *f)
{
    if (!f || !f->host_one_to_one)
        return;
    uint64_t out = first_host_flow(f->out, f->out_count);
    uint64_t id = out ? out : first_host_flow(f->in, f->in_count);
    if (!id)
        return;
    put_str(s, ",\"bind_id\":");
    put_hex(s, id);
    put_str(s, out ? ",\"flow_out\":true" : ",\"flow_in\":true");
}

/* The other flows as flow v1 events bound to the slice (or instant) that
 * encloses them, written after it: "s" where one starts, "f" (binding
 * point "e") where one ends. */
static void put_v1_flows(struct asys_json_sink *s, struct json_track *j, int64_t ts,
                         struct tl_category cat, const uint64_t *ids, size_t count, int terminating,
                         int one_to_one)
{
    for (size_t i = 0; i < count; i++) {
        int host = is_host_flow(ids[i]);
        int acompute = (ids[i] & (TL_FLOW_SPACE | (1ull << 60))) == TL_FLOW_ACOMPUTE;
        int pccl = !acompute && (ids[i] & TL_FLOW_SPACE) == TL_FLOW_PCCL;
        if (host && one_to_one)
            continue; /* written as v2 */
        begin_event(s);
        /* the slice's category: consumers bind a flow event to a slice of its own
         * (a PCCL operation's flow to its kernel: PCCL's on both ends) */
        put_str(s, host       ? "{\"name\":\"launch\",\"cat\":\""
                   : pccl     ? "{\"name\":\"collective\",\"cat\":\""
                   : acompute ? "{\"name\":\"library call\",\"cat\":\""
                              : "{\"name\":\"dependency\",\"cat\":\"");
        put_str(s, pccl ? "pccl" : acompute ? "acompute" : cat.name);
        put_str(s,
                terminating ? "\",\"ph\":\"f\",\"bp\":\"e\",\"id\":" : "\",\"ph\":\"s\",\"id\":");
        put_hex(s, ids[i]);
        put_str(s, ",\"ts\":");
        put_us(s, ts - s->base_ns);
        event_place(s, j);
        put_str(s, "}");
    }
}

static int begin(void *sink, uint64_t track, int64_t start, int64_t end, struct tl_name name,
                 struct tl_category cat, const struct tl_flows *flows, const struct tl_args *args)
{
    struct asys_json_sink *s = sink;
    struct json_track *j = track_of(s, track);
    if (!j)
        return -1;
    tid_of(s, j); /* metadata before the event */
    event_head(s, name.text, cat, "X", start);
    put_str(s, ",\"dur\":");
    put_us(s, end - start);
    event_place(s, j);
    put_v2_flow(s, flows);
    put_args(s, args);
    put_str(s, "}");
    if (flows) {
        put_v1_flows(s, j, start, cat, flows->out, flows->out_count, 0, flows->host_one_to_one);
        put_v1_flows(s, j, start, cat, flows->in, flows->in_count, 1, flows->host_one_to_one);
    }
    return status(s);
}

static int end(void *sink, uint64_t track, int64_t ts)
{
    (void)sink; /* X events carry their duration */
    (void)track;
    (void)ts;
    return 0;
}

static int instant(void *sink, uint64_t track, int64_t ts, struct tl_name name,
                   struct tl_category cat, const struct tl_flows *flows, const struct tl_args *args)
{
    struct asys_json_sink *s = sink;
    struct json_track *j = track_of(s, track);
    if (!j)
        return -1;
    tid_of(s, j);
    event_head(s, name.text, cat, "i", ts);
    put_str(s, ",\"s\":\"t\"");
    event_place(s, j);
    put_args(s, args);
    put_str(s, "}");
    if (flows) /* late flows: never one-to-one */
        put_v1_flows(s, j, ts, cat, flows->in, flows->in_count, 1, 0);
    return status(s);
}

static int counter(void *sink, uint64_t track, int64_t ts, double value)
{
    struct asys_json_sink *s = sink;
    struct json_track *j = track_of(s, track);
    if (!j)
        return -1;
    begin_event(s);
    put_str(s, "{\"name\":");
    put_json_string(s, j->path);
    put_str(s, ",\"ph\":\"C\",\"ts\":");
    put_us(s, ts - s->base_ns);
    put_str(s, ",\"pid\":");
    put_u64(s, j->pid);
    char text[64];
    if (isfinite(value))
        asys_format_real(text, sizeof text, value, 0);
    else
        snprintf(text, sizeof text, "null");
    put_str(s, ",\"args\":{\"value\":");
    put_str(s, text);
    put_str(s, "}}");
    return status(s);
}

const struct tl_sink_ops asys_json_sink_ops = {track, begin, end, instant, counter};
