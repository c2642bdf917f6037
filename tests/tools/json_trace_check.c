/* json_trace_check FILE: parses a Chrome JSON trace with cJSON and checks what
 * consumers rely on; prints one line per problem (exit 1) or a summary (0).
 *  - the object form {"traceEvents": [...]}, each event with ph, pid, and tid
 *    where one is needed; numbers where numbers go;
 *  - every pid has a process_name, every tid with events a thread_name;
 *  - the X events of a thread nest: none overlaps another partly;
 *  - flows: v2 (bind_id + flow_out / flow_in on X events) and v1 ("s" / "f")
 *    each have exactly one start and one end, the start earlier, and v1 flow
 *    events lie inside an X event (or an instant) of their thread;
 *  - no flow is drawn backwards: Perfetto's importer draws a flow from
 *    whichever of its two slices starts first (flow_tracker.cc), the slice
 *    of a v1 event being the innermost one around it (an instant there
 *    included), so the slice a flow ends on must not start before the one it
 *    starts from;
 *  - the file is valid UTF-8 (cJSON does not check; strict parsers refuse it);
 *  - process_sort_index and thread_sort_index fit an int32 (Perfetto's JSON
 *    importer cuts them to 32 bits), and process_name does not end with the
 *    pid (consumers show it after the name). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct slice {
    double pid, tid;
    long long start, end; /* ns */
};

struct flow_end {
    char key[160];
    int is_start;
    int v2; /* bound to its own X event, which starts at ts */
    double pid, tid;
    long long ts;
};

struct thread_name {
    double pid, tid;
};

struct check {
    struct slice *slices;
    size_t slice_count, slice_cap;
    struct flow_end *flows;
    size_t flow_count, flow_cap;
    struct thread_name *names; /* thread_name metadata, then used tids */
    size_t name_count, name_cap;
    struct thread_name *used;
    size_t used_count, used_cap;
    double *pids;
    size_t pid_count, pid_cap;
    double *named_pids;
    size_t named_pid_count, named_pid_cap;
    int problems;
};

static void problem(struct check *c, const char *fmt, const char *detail)
{
    if (c->problems++ < 50) {
        printf(fmt, detail);
        putchar('\n');
    }
}

#define GROW(arr, count, cap) \
    do { \
        if ((count) == (cap)) { \
            (cap) = (cap) ? (cap)*2 : 256; \
            (arr) = realloc((arr), (cap) * sizeof *(arr)); \
            if (!(arr)) { \
                fprintf(stderr, "out of memory\n"); \
                exit(2); \
            } \
        } \
    } while (0)

/* The offset of the first byte that does not start valid UTF-8, or -1. */
static long long invalid_utf8(const unsigned char *s, size_t len)
{
    for (size_t i = 0; i < len;) {
        unsigned c = s[i];
        size_t n = c < 0x80                 ? 1
                   : c >= 0xc2 && c <= 0xdf ? 2
                   : c >= 0xe0 && c <= 0xef ? 3
                   : c >= 0xf0 && c <= 0xf4 ? 4
                                            : 0;
        if (!n || i + n > len)
            return (long long)i;
        unsigned cp = n == 1 ? c : c & (0x7f >> n);
        for (size_t k = 1; k < n; k++) {
            if ((s[i + k] & 0xc0) != 0x80)
                return (long long)i;
            cp = cp << 6 | (s[i + k] & 0x3f);
        }
        static const unsigned min[] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < min[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return (long long)i;
        i += n;
    }
    return -1;
}

static long long ns_of(double us)
{
    return llround(us * 1000.0);
}

static const cJSON *number(struct check *c, const cJSON *e, const char *field, const char *ph)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, field);
    if (!cJSON_IsNumber(v)) {
        char what[64];
        snprintf(what, sizeof what, "%s event without numeric %s", ph, field);
        problem(c, "%s", what);
        return NULL;
    }
    return v;
}

static void add_flow(struct check *c, const char *key, int is_start, double pid, double tid,
                     long long ts)
{
    GROW(c->flows, c->flow_count, c->flow_cap);
    struct flow_end *f = &c->flows[c->flow_count++];
    snprintf(f->key, sizeof f->key, "%s", key);
    f->is_start = is_start;
    f->v2 = !strncmp(key, "v2", 2);
    f->pid = pid;
    f->tid = tid;
    f->ts = ts;
}

static void event(struct check *c, const cJSON *e)
{
    const cJSON *ph = cJSON_GetObjectItemCaseSensitive(e, "ph");
    if (!cJSON_IsString(ph)) {
        problem(c, "%s", "event without ph");
        return;
    }
    const char *p = ph->valuestring;
    const cJSON *pid = number(c, e, "pid", p);
    if (!pid)
        return;
    if (!strcmp(p, "M")) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
        const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
        if (!cJSON_IsString(name) || !cJSON_IsObject(args)) {
            problem(c, "%s", "metadata event without name or args");
            return;
        }
        if (!strcmp(name->valuestring, "process_name")) {
            GROW(c->named_pids, c->named_pid_count, c->named_pid_cap);
            c->named_pids[c->named_pid_count++] = pid->valuedouble;
        } else if (!strcmp(name->valuestring, "thread_name")) {
            const cJSON *tid = number(c, e, "tid", p);
            if (tid) {
                GROW(c->names, c->name_count, c->name_cap);
                c->names[c->name_count++] =
                    (struct thread_name){pid->valuedouble, tid->valuedouble};
            }
        }
        if (!strcmp(name->valuestring, "process_name") || !strcmp(name->valuestring, "thread_name"))
            if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(args, "name")))
                problem(c, "%s", "process_name / thread_name without a string name");
        if (!strcmp(name->valuestring, "process_name")) {
            const cJSON *text = cJSON_GetObjectItemCaseSensitive(args, "name");
            char suffix[32];
            int n = snprintf(suffix, sizeof suffix, " (%.0f)", pid->valuedouble);
            size_t len = cJSON_IsString(text) ? strlen(text->valuestring) : 0;
            if (len >= (size_t)n && !strcmp(text->valuestring + len - (size_t)n, suffix))
                problem(c, "process_name repeats the pid: %s", text->valuestring);
        }
        if (!strcmp(name->valuestring, "process_sort_index") ||
            !strcmp(name->valuestring, "thread_sort_index")) {
            const cJSON *index = cJSON_GetObjectItemCaseSensitive(args, "sort_index");
            if (!cJSON_IsNumber(index) || index->valuedouble < -2147483648.0 ||
                index->valuedouble > 2147483647.0)
                problem(c, "%s not a number that fits an int32", name->valuestring);
        }
        return;
    }
    GROW(c->pids, c->pid_count, c->pid_cap);
    c->pids[c->pid_count++] = pid->valuedouble;
    const cJSON *ts = number(c, e, "ts", p);
    if (!ts)
        return;
    if (!strcmp(p, "C"))
        return; /* counters belong to the process */
    const cJSON *tid = number(c, e, "tid", p);
    if (!tid)
        return;
    GROW(c->used, c->used_count, c->used_cap);
    c->used[c->used_count++] = (struct thread_name){pid->valuedouble, tid->valuedouble};
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
    if (!cJSON_IsString(name))
        problem(c, "%s event without a string name", p);
    if (!strcmp(p, "X")) {
        const cJSON *dur = number(c, e, "dur", p);
        if (!dur)
            return;
        if (dur->valuedouble < 0)
            problem(c, "%s", "X event with a negative duration");
        GROW(c->slices, c->slice_count, c->slice_cap);
        c->slices[c->slice_count++] =
            (struct slice){pid->valuedouble, tid->valuedouble, ns_of(ts->valuedouble),
                           ns_of(ts->valuedouble + dur->valuedouble)};
        const cJSON *bind = cJSON_GetObjectItemCaseSensitive(e, "bind_id");
        if (bind) {
            int out = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "flow_out"));
            int in = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "flow_in"));
            if (!cJSON_IsString(bind) || out == in)
                problem(c, "%s", "bind_id without exactly one of flow_out / flow_in");
            else {
                char key[160];
                snprintf(key, sizeof key, "v2 %s", bind->valuestring);
                add_flow(c, key, out, pid->valuedouble, tid->valuedouble, ns_of(ts->valuedouble));
            }
        }
    } else if (!strcmp(p, "s") || !strcmp(p, "f")) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
        const cJSON *cat = cJSON_GetObjectItemCaseSensitive(e, "cat");
        if (!cJSON_IsString(id) || !cJSON_IsString(cat) || !cJSON_IsString(name)) {
            problem(c, "%s", "flow event without string id, cat and name");
            return;
        }
        if (!strcmp(p, "f")) {
            const cJSON *bp = cJSON_GetObjectItemCaseSensitive(e, "bp");
            if (!cJSON_IsString(bp) || strcmp(bp->valuestring, "e"))
                problem(c, "%s", "flow end without \"bp\":\"e\"");
        }
        char key[160];
        snprintf(key, sizeof key, "v1 %.40s %.40s %.60s", cat->valuestring, name->valuestring,
                 id->valuestring);
        add_flow(c, key, p[0] == 's', pid->valuedouble, tid->valuedouble, ns_of(ts->valuedouble));
    } else if (!strcmp(p, "i") || !strcmp(p, "I")) {
        /* a slice of no duration: flow events bind to it */
        GROW(c->slices, c->slice_count, c->slice_cap);
        c->slices[c->slice_count++] = (struct slice){
            pid->valuedouble, tid->valuedouble, ns_of(ts->valuedouble), ns_of(ts->valuedouble)};
    } else {
        problem(c, "unexpected phase '%s'", p);
    }
}

static int by_thread_then_time(const void *a, const void *b)
{
    const struct slice *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->end > y->end ? -1 : x->end < y->end; /* outer first */
}

/* Partial overlaps on one thread, with a stack of open ends. */
static void check_nesting(struct check *c)
{
    qsort(c->slices, c->slice_count, sizeof *c->slices, by_thread_then_time);
    long long *open = malloc((c->slice_count + 1) * sizeof *open);
    size_t depth = 0;
    for (size_t i = 0; i < c->slice_count; i++) {
        const struct slice *s = &c->slices[i];
        if (i && (s->pid != c->slices[i - 1].pid || s->tid != c->slices[i - 1].tid))
            depth = 0;
        while (depth && open[depth - 1] <= s->start)
            depth--;
        if (depth && s->end > open[depth - 1]) {
            char where[96];
            snprintf(where, sizeof where, "pid %.0f tid %.0f at %lld ns", s->pid, s->tid, s->start);
            problem(c, "X events overlap without nesting: %s", where);
        }
        open[depth++] = s->end;
    }
    free(open);
}

/* The innermost slice of the flow event's thread around it (the latest to
 * start, then the shortest), NULL when none: what a v1 flow event binds to. */
static const struct slice *enclosing(const struct check *c, const struct flow_end *f)
{
    const struct slice *best = NULL;
    /* a linear scan: the test traces are small */
    for (size_t i = 0; i < c->slice_count; i++) {
        const struct slice *s = &c->slices[i];
        if (s->pid == f->pid && s->tid == f->tid && s->start <= f->ts && f->ts <= s->end &&
            (!best || s->start > best->start || (s->start == best->start && s->end < best->end)))
            best = s;
    }
    return best;
}

/* When the slice a flow end binds to starts. */
static long long bound_start(const struct check *c, const struct flow_end *f)
{
    const struct slice *s = f->v2 ? NULL : enclosing(c, f);
    return s ? s->start : f->ts;
}

static int by_key(const void *a, const void *b)
{
    const struct flow_end *x = a, *y = b;
    int k = strcmp(x->key, y->key);
    return k ? k : y->is_start - x->is_start; /* the start first */
}

static void check_flows(struct check *c)
{
    qsort(c->flows, c->flow_count, sizeof *c->flows, by_key);
    for (size_t i = 0; i < c->flow_count;) {
        size_t j = i;
        while (j < c->flow_count && !strcmp(c->flows[j].key, c->flows[i].key))
            j++;
        if (j - i != 2 || !c->flows[i].is_start || c->flows[i + 1].is_start)
            problem(c, "flow without exactly one start and one end: %s", c->flows[i].key);
        else if (c->flows[i].ts >= c->flows[i + 1].ts)
            problem(c, "flow ends before it starts: %s", c->flows[i].key);
        else if (bound_start(c, &c->flows[i + 1]) < bound_start(c, &c->flows[i]))
            problem(c, "flow drawn backwards: it ends on a slice that began before its source: %s",
                    c->flows[i].key);
        for (size_t k = i; k < j; k++)
            if (!c->flows[k].v2 && !enclosing(c, &c->flows[k]))
                problem(c, "flow event outside every slice of its thread: %s", c->flows[k].key);
        i = j;
    }
}

static void check_names(struct check *c)
{
    for (size_t i = 0; i < c->used_count; i++) {
        int found = 0;
        for (size_t k = 0; k < c->name_count && !found; k++)
            found = c->names[k].pid == c->used[i].pid && c->names[k].tid == c->used[i].tid;
        if (!found) {
            char what[64];
            snprintf(what, sizeof what, "%.0f/%.0f", c->used[i].pid, c->used[i].tid);
            problem(c, "thread without thread_name: %s", what);
            return;
        }
    }
    for (size_t i = 0; i < c->pid_count; i++) {
        int found = 0;
        for (size_t k = 0; k < c->named_pid_count && !found; k++)
            found = c->named_pids[k] == c->pids[i];
        if (!found) {
            char what[32];
            snprintf(what, sizeof what, "%.0f", c->pids[i]);
            problem(c, "process without process_name: %s", what);
            return;
        }
    }
}

/* Keeps one of each (pid, tid) so the name checks stay small. */
static void dedup_threads(struct thread_name *t, size_t *count)
{
    size_t n = 0;
    for (size_t i = 0; i < *count; i++) {
        int seen = 0;
        for (size_t k = n; k-- > 0 && !seen && n - k < 64;)
            seen = t[k].pid == t[i].pid && t[k].tid == t[i].tid;
        if (!seen)
            t[n++] = t[i];
    }
    *count = n;
}

static void dedup_pids(double *p, size_t *count)
{
    size_t n = 0;
    for (size_t i = 0; i < *count; i++) {
        int seen = 0;
        for (size_t k = 0; k < n && !seen; k++)
            seen = p[k] == p[i];
        if (!seen)
            p[n++] = p[i];
    }
    *count = n;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: json_trace_check FILE\n");
        return 2;
    }
    FILE *in = fopen(argv[1], "rb");
    if (!in) {
        perror(argv[1]);
        return 2;
    }
    size_t cap = 1 << 20, len = 0, n;
    char *text = malloc(cap);
    while (text && (n = fread(text + len, 1, cap - len, in)) > 0) {
        len += n;
        if (len == cap)
            text = realloc(text, cap *= 2);
    }
    fclose(in);
    if (!text)
        return 2;
    long long bad = invalid_utf8((const unsigned char *)text, len);
    if (bad >= 0) {
        printf("not valid UTF-8 at byte %lld\n", bad);
        return 1;
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!root) {
        printf("not JSON: cJSON stops at byte %td\n", end ? end - text : (ptrdiff_t)-1);
        return 1;
    }
    for (const char *p = end; p < text + len; p++)
        if (*p != ' ' && *p != '\n' && *p != '\r' && *p != '\t') {
            printf("text after the JSON value at byte %td\n", p - text);
            return 1;
        }
    struct check c;
    memset(&c, 0, sizeof c);
    const cJSON *events = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
    if (!cJSON_IsObject(root) || !cJSON_IsArray(events)) {
        printf("not the object form {\"traceEvents\": [...]}\n");
        return 1;
    }
    size_t count = 0;
    for (const cJSON *e = events->child; e; e = e->next, count++)
        event(&c, e);
    dedup_threads(c.used, &c.used_count);
    dedup_pids(c.pids, &c.pid_count);
    check_names(&c);
    check_nesting(&c);
    check_flows(&c);
    if (!c.problems)
        printf("ok: %zu events, %zu slices, %zu flow ends\n", count, c.slice_count, c.flow_count);
    cJSON_Delete(root);
    free(text);
    free(c.slices);
    free(c.flows);
    free(c.names);
    free(c.used);
    free(c.pids);
    free(c.named_pids);
    return c.problems ? 1 : 0;
}
