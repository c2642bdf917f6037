/* Chrome JSON: every track that receives events becomes a thread (tid) of a
 * process (pid): the traced processes keep their pid, each PPU device gets a
 * pid of its own; a thread is named by its path in the track tree.  Slices are
 * complete ("X") events, which nest on a tid because the timeline keeps each
 * track a stack.  A call that launched one piece of work points at it with
 * flow v2 (bind_id + flow_out / flow_in on the X events); as an X event
 * carries one such flow, the rest (a graph launch's many activities, the
 * dependencies) are flow v1 events ("s" / "f") at the slice's start, or for
 * a flow whose source begins later, at the slice's late_ts. */
#define _GNU_SOURCE
#include "sink_json.h"

#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "output_format.h"

#define GROUP_PID_BASE 0x10000000u /* above every Linux pid */

struct json_track {
    uint32_t pid;
    uint32_t tid; /* 0: not given one yet (no events so far) */
    uint64_t sort_index;
    char *path; /* names below the process, joined by " / " */
};

#define BUFFER_SIZE (1u << 20)

struct asys_json_sink {
    FILE *out;
    char *buf; /* what waits to be written: one fwrite a megabyte */
    size_t len;
    int64_t base_ns;
    int first; /* no event written yet (no comma before it) */
    uint32_t next_group_pid;
    struct asys_u64map tracks;   /* uuid -> struct json_track * */
    struct asys_u64map next_tid; /* pid -> last tid given */
    uint64_t last_uuid;          /* track_of's last answer */
    struct json_track *last_track;
    int failed;
};

/* ---- the output buffer ---------------------------------------------------------------- */

static void flush(struct asys_json_sink *s)
{
    if (s->len && !s->failed && fwrite(s->buf, 1, s->len, s->out) != s->len)
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

static void put_bytes(struct asys_json_sink *s, const char *p, size_t n)
{
    if (n > BUFFER_SIZE / 2) { /* a huge name: straight through */
        flush(s);
        if (!s->failed && fwrite(p, 1, n, s->out) != n)
            s->failed = 1;
        return;
    }
    memcpy(room(s, n), p, n);
    s->len += n;
}

static void put_str(struct asys_json_sink *s, const char *text)
{
    put_bytes(s, text, strlen(text));
}

static void put_u64(struct asys_json_sink *s, uint64_t v)
{
    char digits[24];
    int n = 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    char *p = room(s, (size_t)n);
    for (int i = 0; i < n; i++)
        p[i] = digits[n - 1 - i];
    s->len += (size_t)n;
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

static void put_hex(struct asys_json_sink *s, uint64_t v)
{
    char text[24];
    int n = snprintf(text, sizeof text, "\"0x%llx\"", (unsigned long long)v);
    put_bytes(s, text, (size_t)n);
}

/* A JSON string: most names need no escaping and are copied as they are. */
static void put_json_string(struct asys_json_sink *s, const char *text)
{
    size_t len = strlen(text);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c < 0x20 || c == '"' || c == '\\' || c >= 0x7f) {
            flush(s); /* the escaping writer goes to the stream */
            asys_json_write_string(s->out, text, len);
            return;
        }
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
    asys_u64map_init(&s->tracks);
    asys_u64map_init(&s->next_tid);
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
    asys_u64map_free(&s->next_tid);
    free(s->buf);
    free(s);
}

int asys_json_sink_finish(struct asys_json_sink *s)
{
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
    if (t->kind == TL_PROCESS || t->kind == TL_GROUP) {
        j->pid = t->kind == TL_PROCESS ? t->pid : s->next_group_pid++;
        if (!(j->path = strdup("")))
            return -1;
        put_metadata(s, "process_name", j->pid, 0, t->name, 0);
        put_metadata(s, "process_sort_index", j->pid, 0, NULL,
                     (int64_t)(t->kind == TL_GROUP ? t->order : 1000 + t->order));
        return 0;
    }
    struct json_track *parent = track_of(s, t->parent_uuid);
    j->pid = parent ? parent->pid : 0;
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

/* The tid of a track, given (with its metadata) on its first event. */
static uint32_t tid_of(struct asys_json_sink *s, struct json_track *j)
{
    if (j->tid)
        return j->tid;
    uint64_t *last = asys_u64map_get(&s->next_tid, j->pid);
    j->tid = last ? (uint32_t)*last + 1 : 1;
    if (asys_u64map_put(&s->next_tid, j->pid, j->tid) != 0)
        s->failed = 1;
    put_metadata(s, "thread_name", j->pid, j->tid, j->path, 0);
    put_metadata(s, "thread_sort_index", j->pid, j->tid, NULL, (int64_t)j->sort_index);
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

static int is_host_flow(uint64_t id)
{
    return (id & (TL_FLOW_HOST | TL_FLOW_DEPENDENCY)) == TL_FLOW_HOST;
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

/* The other flows as flow v1 events bound to the slice that encloses them:
 * "s" where one starts, "f" (binding point "e") where one ends. */
static void put_v1_flows(struct asys_json_sink *s, struct json_track *j, int64_t ts,
                         struct tl_category cat, const uint64_t *ids, size_t count, int terminating,
                         int one_to_one)
{
    for (size_t i = 0; i < count; i++) {
        int host = is_host_flow(ids[i]);
        if (host && one_to_one)
            continue; /* written as v2 */
        begin_event(s);
        /* the slice's category: consumers bind a flow event to a slice of its own */
        put_str(s,
                host ? "{\"name\":\"launch\",\"cat\":\"" : "{\"name\":\"dependency\",\"cat\":\"");
        put_str(s, cat.name);
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
                 struct tl_category cat, const struct tl_flows *flows)
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
    put_str(s, "}");
    if (flows) {
        put_v1_flows(s, j, start, cat, flows->out, flows->out_count, 0, flows->host_one_to_one);
        put_v1_flows(s, j, start, cat, flows->in, flows->in_count, 1, flows->host_one_to_one);
        put_v1_flows(s, j, flows->late_ts, cat, flows->late, flows->late_count, 1, 0);
    }
    return status(s);
}

static int end(void *sink, uint64_t track, int64_t ts, const uint64_t *late, size_t late_count)
{
    (void)sink; /* X events carry their duration; late flows went out with them */
    (void)track;
    (void)ts;
    (void)late;
    (void)late_count;
    return 0;
}

static int instant(void *sink, uint64_t track, int64_t ts, struct tl_name name,
                   struct tl_category cat)
{
    struct asys_json_sink *s = sink;
    struct json_track *j = track_of(s, track);
    if (!j)
        return -1;
    tid_of(s, j);
    event_head(s, name.text, cat, "i", ts);
    put_str(s, ",\"s\":\"t\"");
    event_place(s, j);
    put_str(s, "}");
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
    char text[48];
    int n = snprintf(text, sizeof text, ",\"args\":{\"value\":%.17g}}", value);
    put_bytes(s, text, (size_t)n);
    return status(s);
}

const struct tl_sink_ops asys_json_sink_ops = {track, begin, end, instant, counter};
