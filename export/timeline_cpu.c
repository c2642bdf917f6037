/* CPU sampling and scheduling on the timeline (manual §5.1, §5.2): a "CPU
 * Group" with a row per core whose slices are the threads that ran on it
 * (named by process and thread; threads outside the traced tree as
 * "other"), and under each traced thread, from the top: its CPU
 * utilization (100 while it runs, 0 when not), the core it ran on, its
 * state (Running, Preempted, Waiting, Uninterruptible), and the sample
 * points with their call stacks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

#include "timeline_walk.h"

#define NAME_ROW(fn, text) \
    static void fn(struct walk *w, int64_t sub, char *out, size_t size) \
    { \
        (void)w; \
        (void)sub; \
        snprintf(out, size, text); \
    }
NAME_ROW(utilization_name, "CPU utilization")
NAME_ROW(core_name, "CPU core")
NAME_ROW(state_name, "Thread state")
NAME_ROW(samples_name, "Backtrace samples")

/* under the thread, first (enum tl_thread_rank) */
static const struct tl_thread_row utilization_row = {TL_RANK_CPU_UTILIZATION, utilization_name, 1,
                                                     "%"};
static const struct tl_thread_row core_row = {TL_RANK_CPU_CORE, core_name, 0, NULL};
static const struct tl_thread_row state_row = {TL_RANK_THREAD_STATE, state_name, 0, NULL};
static const struct tl_thread_row samples_row = {TL_RANK_BACKTRACE_SAMPLES, samples_name, 0, NULL};

uint32_t tw_cpu_group(struct walk *w)
{
    uint32_t group = tw_row_find(w, "cpu-group", 9);
    /* first of the top rows, as in nsys: Perfetto shows those by name, and
     * "CPU Group" sorts before "NIC ..." and "PPU ..." (ranks 1 and up) */
    return group ? group : tw_row_new(w, "cpu-group", 9, 0, 0, TL_GROUP, "CPU Group", 0, 0);
}

/* The row of core `cpu` under the CPU Group (created on first use). */
static uint32_t core_group_row(struct walk *w, int64_t cpu)
{
    struct row *g = tw_row_at(w, tw_cpu_group(w));
    if (!g)
        return 0;
    char key[32], name[32];
    int n = snprintf(key, sizeof key, "cpu-group/%lld", (long long)cpu);
    uint32_t row = tw_row_find(w, key, (size_t)n);
    if (row)
        return row;
    snprintf(name, sizeof name, "CPU %lld", (long long)cpu);
    return tw_row_new(w, key, (size_t)n, g->lanes[0].uuid, g->sort_index, TL_PLAIN, name,
                      (uint32_t)(cpu + 1), 0);
}

static int walk_cores(struct walk *w)
{
    sqlite3_stmt *st = tw_prepare(
        w, "SELECT s.cpu, s.start_ns, s.end_ns, s.pid, s.tid, s.in_tree, s.state_after,\n"
           "       ps.value, ts.value\n"
           "FROM sched_slices AS s\n"
           "LEFT JOIN processes AS p ON p.pid = s.pid\n"
           "LEFT JOIN strings AS ps ON ps.id = p.name_id\n"
           "LEFT JOIN threads AS t ON t.pid = s.pid AND t.tid = s.tid\n"
           "LEFT JOIN strings AS ts ON ts.id = t.name_id\n"
           "WHERE " IN_WINDOW("s") " ORDER BY s.cpu, s.start_ns, s.id");
    if (!st)
        return -1;
    struct tl_args args;
    while (!w->failed && sqlite3_step(st) == SQLITE_ROW) {
        uint32_t row = core_group_row(w, sqlite3_column_int64(st, 0));
        char name[300];
        const char *process = (const char *)sqlite3_column_text(st, 7);
        const char *thread = (const char *)sqlite3_column_text(st, 8);
        if (sqlite3_column_int(st, 5))
            /* a thread that was never named has its process's name (Linux's comm) */
            snprintf(name, sizeof name, "%s (%lld) / %s (%lld)", process ? process : "process",
                     (long long)sqlite3_column_int64(st, 3),
                     thread    ? thread
                     : process ? process
                               : "thread",
                     (long long)sqlite3_column_int64(st, 4));
        else
            snprintf(name, sizeof name, "other (%lld)", (long long)sqlite3_column_int64(st, 4));
        args.count = 0;
        if (sqlite3_column_type(st, 3) != SQLITE_NULL)
            tw_arg_int(&args, "pid", sqlite3_column_int64(st, 3));
        tw_arg_int(&args, "tid", sqlite3_column_int64(st, 4));
        tw_arg_string(&args, "then", (const char *)sqlite3_column_text(st, 6));
        if (!row || tw_emit_slice(w, row, sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
                                  tw_synthetic_name(w, name),
                                  tw_category(w, sqlite3_column_int(st, 5) ? "cpu" : "cpu-other"),
                                  NULL, &args) != 0)
            break;
    }
    sqlite3_finalize(st);
    return w->failed ? -1 : 0;
}

/* A slice of a traced thread on a core. */
struct thread_slice {
    int64_t pid, tid, start, id, end, cpu;
};

/* ORDER BY pid, tid, start_ns, id */
static int thread_slice_cmp(const void *pa, const void *pb)
{
    const struct thread_slice *a = pa, *b = pb;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* The traced threads' slices in the window, by thread and time: read in
 * rowid order and sorted here (SQLite's sorter, with no index by pid, was
 * three quarters of the walk's time). */
static int thread_slices_load(struct walk *w, struct thread_slice **out, size_t *count)
{
    struct thread_slice *items = NULL;
    size_t n = 0, cap = 0;
    int step = SQLITE_DONE;
    sqlite3_stmt *st = tw_prepare(w, "SELECT s.pid, s.tid, s.start_ns, s.id, s.end_ns, s.cpu\n"
                                     "FROM sched_slices AS s\n"
                                     "WHERE s.in_tree AND s.pid IS NOT NULL AND " IN_WINDOW(
                                         "s") " ORDER BY s.id");
    if (!st)
        goto out;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        if (asys_grow(&items, &cap, n, sizeof *items, 4096) != 0) {
            tw_fail(w, "out of memory");
            goto out;
        }
        int64_t v[6];
        for (int i = 0; i < 6; i++)
            v[i] = sqlite3_column_int64(st, i);
        items[n++] = (struct thread_slice){v[0], v[1], v[2], v[3], v[4], v[5]};
    }
    if (step != SQLITE_DONE)
        tw_fail(w, sqlite3_errmsg(w->db));
    else
        qsort(items, n, sizeof *items, thread_slice_cmp);
out:
    sqlite3_finalize(st);
    *out = items;
    *count = n;
    return w->failed ? -1 : 0;
}

/* A traced thread's cores and its utilization. */
static int walk_thread_cores(struct walk *w)
{
    struct thread_slice *slices;
    size_t count;
    int rc = thread_slices_load(w, &slices, &count);
    for (size_t i = 0; rc == 0 && i < count && !w->failed; i++) {
        const struct thread_slice *s = &slices[i];
        uint32_t pid = (uint32_t)s->pid, tid = (uint32_t)s->tid;
        char name[32];
        snprintf(name, sizeof name, "CPU %lld", (long long)s->cpu);
        uint32_t core = tw_thread_child_row(w, pid, tid, &core_row, 0);
        uint32_t busy = tw_thread_child_row(w, pid, tid, &utilization_row, 0);
        if (!core || !busy ||
            tw_emit_slice(w, core, s->start, s->end, tw_synthetic_name(w, name),
                          tw_category(w, "cpu"), NULL, NULL) != 0 ||
            tw_emit_counter(w, busy, s->start, 100) != 0 || tw_emit_counter(w, busy, s->end, 0) != 0)
            break;
    }
    free(slices);
    return w->failed ? -1 : 0;
}

/* A thread's state over an interval; `state` indexes the walk's texts. */
struct thread_state {
    int64_t pid, tid, start, rowid, end;
    uint32_t state;
};

/* ORDER BY pid, tid, start_ns (the index's order: rowid last) */
static int thread_state_cmp(const void *pa, const void *pb)
{
    const struct thread_state *a = pa, *b = pb;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return a->rowid < b->rowid ? -1 : a->rowid > b->rowid;
}

/* The distinct state texts (a handful: "Running", "Waiting"...). */
struct state_texts {
    char **items;
    size_t count, cap;
    uint32_t last;
};

/* The index of `text`, added when new; UINT32_MAX when memory runs out. */
static uint32_t state_text_index(struct state_texts *t, const char *text)
{
    if (t->count && !strcmp(t->items[t->last], text))
        return t->last;
    for (size_t i = 0; i < t->count; i++)
        if (!strcmp(t->items[i], text))
            return t->last = (uint32_t)i;
    char *copy = strdup(text);
    if (!copy || t->count >= UINT32_MAX ||
        asys_grow(&t->items, &t->cap, t->count, sizeof *t->items, 8) != 0) {
        free(copy);
        return UINT32_MAX;
    }
    t->items[t->count] = copy;
    return t->last = (uint32_t)t->count++;
}

static void state_texts_free(struct state_texts *t)
{
    for (size_t i = 0; i < t->count; i++)
        free(t->items[i]);
    free(t->items);
}

/* The states in the window by thread and time: read in rowid order and
 * sorted here, instead of through the (pid, tid, start_ns) index, a B-tree
 * search into the table per row. */
static int thread_states_load(struct walk *w, struct state_texts *texts, struct thread_state **out,
                              size_t *count)
{
    struct thread_state *items = NULL;
    size_t n = 0, cap = 0;
    int step = SQLITE_DONE;
    sqlite3_stmt *st = tw_prepare(
        w, "SELECT s.pid, s.tid, s.start_ns, s.rowid, s.end_ns, s.state FROM thread_states AS s\n"
           "WHERE " IN_WINDOW("s") " ORDER BY s.rowid");
    if (!st)
        goto out;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *text = (const char *)sqlite3_column_text(st, 5);
        uint32_t state = state_text_index(texts, text ? text : "");
        if (state == UINT32_MAX || asys_grow(&items, &cap, n, sizeof *items, 4096) != 0) {
            tw_fail(w, "out of memory");
            goto out;
        }
        int64_t v[5];
        for (int i = 0; i < 5; i++)
            v[i] = sqlite3_column_int64(st, i);
        items[n++] = (struct thread_state){v[0], v[1], v[2], v[3], v[4], state};
    }
    if (step != SQLITE_DONE)
        tw_fail(w, sqlite3_errmsg(w->db));
    else
        qsort(items, n, sizeof *items, thread_state_cmp);
out:
    sqlite3_finalize(st);
    *out = items;
    *count = n;
    return w->failed ? -1 : 0;
}

/* The states the scheduler saw, or where it was not asked (-s none) OSRT's
 * estimates, "Possibly Running" and "Possibly Waiting" (manual 5.2). */
static int walk_states(struct walk *w)
{
    struct state_texts texts = {NULL, 0, 0, 0};
    struct thread_state *states;
    size_t count;
    int rc = thread_states_load(w, &texts, &states, &count);
    for (size_t i = 0; rc == 0 && i < count && !w->failed; i++) {
        const struct thread_state *s = &states[i];
        uint32_t row = tw_thread_child_row(w, (uint32_t)s->pid, (uint32_t)s->tid, &state_row, 0);
        if (!row || tw_emit_slice(w, row, s->start, s->end,
                                  tw_synthetic_name(w, texts.items[s->state]),
                                  tw_category(w, "cpu"), NULL, NULL) != 0)
            break;
    }
    free(states);
    state_texts_free(&texts);
    return w->failed ? -1 : 0;
}

static int walk_scheduling(struct walk *w)
{
    return walk_cores(w) == 0 && walk_thread_cores(w) == 0 ? 0 : -1;
}

/* Each CPU sample as a point on its thread, its stack as an argument. */
static int walk_samples(struct walk *w)
{
    sqlite3_stmt *st = tw_prepare(
        w, "SELECT s.pid, s.tid, s.timestamp_ns, s.cpu,\n"
           "       (SELECT group_concat(frame, ' <- ') FROM (\n"
           "          SELECT COALESCE(demangle(fs.value), printf('0x%x', f.address)) AS frame\n"
           "          FROM callchain_frames AS cf JOIN frames AS f ON f.id = cf.frame_id\n"
           "          LEFT JOIN strings AS fs ON fs.id = f.function_id\n"
           "          WHERE cf.callchain_id = s.callchain_id ORDER BY cf.level))\n"
           "FROM cpu_samples AS s\n"
           "WHERE (:all OR (s.timestamp_ns >= :lo AND s.timestamp_ns <= :hi))\n"
           "ORDER BY s.pid, s.tid, s.timestamp_ns, s.id");
    if (!st)
        return -1;
    struct tl_args args;
    while (!w->failed && sqlite3_step(st) == SQLITE_ROW) {
        uint32_t row = tw_thread_child_row(w, (uint32_t)sqlite3_column_int64(st, 0),
                                           (uint32_t)sqlite3_column_int64(st, 1), &samples_row, 0);
        args.count = 0;
        if (sqlite3_column_type(st, 3) != SQLITE_NULL)
            tw_arg_int(&args, "cpu", sqlite3_column_int64(st, 3));
        if (sqlite3_column_type(st, 4) != SQLITE_NULL)
            tw_arg_string(&args, "stack", (const char *)sqlite3_column_text(st, 4));
        if (!row ||
            tw_emit_instant(w, row, sqlite3_column_int64(st, 2), tw_synthetic_name(w, "sample"),
                            tw_category(w, "cpu"), &args) != 0)
            break;
    }
    sqlite3_finalize(st);
    return w->failed ? -1 : 0;
}

const struct tl_family tl_family_cpu_scheduling = {"sched_slices", 4, walk_scheduling};
const struct tl_family tl_family_thread_states = {"thread_states", 1, walk_states};
const struct tl_family tl_family_cpu_samples = {"cpu_samples", 1, walk_samples};
