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

/* Who ran in a core's slice: a traced thread, or another (memset to zero:
 * hashed as bytes). */
struct core_thread_key {
    int64_t pid, tid;
    int32_t pid_null, in_tree;
};

/* Its slices' name, made once; interned when first drawn, so that names get
 * their ids in drawing order as before. */
struct core_thread {
    struct core_thread_key key;
    char name[300];
    struct tl_name interned;
    int drawn;
};

struct core_threads {
    struct asys_strmap by_key; /* key -> index + 1 */
    struct core_thread *items;
    size_t count, cap;
    sqlite3_stmt *process_name, *thread_name;
};

/* A core slice, as drawn in (cpu, start, id) order. */
struct core_slice {
    int64_t cpu, start, id, end;
    uint32_t thread, then; /* in core_threads, in the state texts */
};

static int core_slice_cmp(const void *pa, const void *pb)
{
    const struct core_slice *a = pa, *b = pb;
    if (a->cpu != b->cpu)
        return a->cpu < b->cpu ? -1 : 1;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* The text of a name lookup's first row, NULL when there is none. */
static const char *lookup_text(sqlite3_stmt *st, int64_t a, int64_t b)
{
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, a);
    sqlite3_bind_int64(st, 2, b);
    return sqlite3_step(st) == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
}

/* The slice name of a thread: "proc (pid) / thread (tid)", or "other (tid)". */
static void core_thread_name(struct core_threads *t, const struct core_thread_key *k, char *out,
                             size_t size)
{
    if (!k->in_tree) {
        snprintf(out, size, "other (%lld)", (long long)k->tid);
        return;
    }
    /* two statements: the process's text stays valid while the thread's is read */
    const char *process = k->pid_null ? NULL : lookup_text(t->process_name, k->pid, 0);
    const char *thread = k->pid_null ? NULL : lookup_text(t->thread_name, k->pid, k->tid);
    /* a thread that was never named has its process's name (Linux's comm) */
    snprintf(out, size, "%s (%lld) / %s (%lld)", process ? process : "process", (long long)k->pid,
             thread    ? thread
             : process ? process
                       : "thread",
             (long long)k->tid);
}

/* The index of the current row's thread in t (added when new), UINT32_MAX
 * when memory runs out. */
static uint32_t core_thread_index(struct core_threads *t, sqlite3_stmt *st)
{
    struct core_thread_key k;
    memset(&k, 0, sizeof k);
    k.pid_null = sqlite3_column_type(st, 4) == SQLITE_NULL;
    k.pid = sqlite3_column_int64(st, 4);
    k.tid = sqlite3_column_int64(st, 5);
    k.in_tree = sqlite3_column_int(st, 6) != 0;
    uint32_t index = asys_strmap_get(&t->by_key, (const char *)&k, sizeof k);
    if (index)
        return index - 1;
    if (t->count >= UINT32_MAX - 1 ||
        asys_grow(&t->items, &t->cap, t->count, sizeof *t->items, 16) != 0 ||
        asys_strmap_put(&t->by_key, (const char *)&k, sizeof k, (uint32_t)t->count + 1) != 0)
        return UINT32_MAX;
    struct core_thread *c = &t->items[t->count];
    memset(c, 0, sizeof *c);
    c->key = k;
    core_thread_name(t, &k, c->name, sizeof c->name);
    return (uint32_t)t->count++;
}

/* The slices in the window in (cpu, start, id) order, read in rowid order
 * and sorted here; each thread's name is made once.  SQLite's way (the cpu
 * index, a table search and four joined lookups a row) was most of the walk. */
static int core_slices_load(struct walk *w, struct core_threads *threads, struct state_texts *texts,
                            struct core_slice **out, size_t *count)
{
    struct core_slice *items = NULL;
    size_t n = 0, cap = 0;
    int step = SQLITE_DONE;
    sqlite3_stmt *st = tw_prepare(w, "SELECT s.cpu, s.start_ns, s.id, s.end_ns, s.pid, s.tid,\n"
                                     "       s.in_tree, s.state_after\n"
                                     "FROM sched_slices AS s\n"
                                     "WHERE " IN_WINDOW("s") " ORDER BY s.id");
    if (!st)
        goto out;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *then = (const char *)sqlite3_column_text(st, 7);
        uint32_t state = state_text_index(texts, then ? then : "");
        uint32_t thread = core_thread_index(threads, st);
        if (state == UINT32_MAX || thread == UINT32_MAX ||
            asys_grow(&items, &cap, n, sizeof *items, 4096) != 0) {
            tw_fail(w, "out of memory");
            goto out;
        }
        items[n++] = (struct core_slice){sqlite3_column_int64(st, 0),
                                         sqlite3_column_int64(st, 1),
                                         sqlite3_column_int64(st, 2),
                                         sqlite3_column_int64(st, 3),
                                         thread,
                                         state};
    }
    if (step != SQLITE_DONE)
        tw_fail(w, sqlite3_errmsg(w->db));
    else
        items = tw_sort_grouped(w, items, n, sizeof *items, sizeof items->cpu, core_slice_cmp);
out:
    sqlite3_finalize(st);
    *out = items;
    *count = n;
    return w->failed ? -1 : 0;
}

/* One core slice on its core's row, with its thread's ids as arguments. */
static int draw_core_slice(struct walk *w, uint32_t row, const struct core_slice *s,
                           struct core_thread *t, const struct state_texts *texts)
{
    if (!t->drawn) {
        t->interned = tw_synthetic_name(w, t->name);
        t->drawn = 1;
    }
    struct tl_args args;
    args.count = 0;
    if (!t->key.pid_null)
        tw_arg_int(&args, "pid", t->key.pid);
    tw_arg_int(&args, "tid", t->key.tid);
    tw_arg_string(&args, "then", texts->items[s->then]);
    return tw_emit_slice(w, row, s->start, s->end, t->interned,
                         tw_category(w, t->key.in_tree ? "cpu" : "cpu-other"), NULL, &args);
}

static void core_threads_free(struct core_threads *t)
{
    sqlite3_finalize(t->process_name);
    sqlite3_finalize(t->thread_name);
    asys_strmap_free(&t->by_key);
    free(t->items);
}

static int walk_cores(struct walk *w)
{
    struct core_threads threads = {.items = NULL};
    struct state_texts texts = {NULL, 0, 0, 0};
    struct core_slice *slices = NULL;
    size_t count = 0;
    asys_strmap_init(&threads.by_key);
    /* ?2 unused: lookup_text binds two */
    threads.process_name = tw_prepare(w, "SELECT s.value FROM processes AS p\n"
                                         "JOIN strings AS s ON s.id = p.name_id\n"
                                         "WHERE p.pid = ?1 AND ?2 IS NOT NULL");
    threads.thread_name = threads.process_name
                              ? tw_prepare(w, "SELECT s.value FROM threads AS t\n"
                                              "JOIN strings AS s ON s.id = t.name_id\n"
                                              "WHERE t.pid = ?1 AND t.tid = ?2")
                              : NULL;
    uint32_t row = 0;
    if (threads.thread_name && core_slices_load(w, &threads, &texts, &slices, &count) == 0)
        for (size_t i = 0; i < count && !w->failed; i++) {
            /* the slices come by core: its row is found once per core */
            if (i == 0 || slices[i].cpu != slices[i - 1].cpu)
                row = core_group_row(w, slices[i].cpu);
            if (!row ||
                draw_core_slice(w, row, &slices[i], &threads.items[slices[i].thread], &texts) != 0)
                break;
        }
    free(slices);
    core_threads_free(&threads);
    state_texts_free(&texts);
    return w->failed ? -1 : 0;
}

/* Where a thread's row comes in the walks: by thread, then time, then id
 * (the rowid SQLite's order ended with). */
struct thread_time {
    int64_t pid, tid, start, id;
};

static int thread_time_cmp(const struct thread_time *a, const struct thread_time *b)
{
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* A slice of a traced thread on a core. */
struct thread_slice {
    struct thread_time at;
    int64_t end, cpu;
};

/* ORDER BY pid, tid, start_ns, id */
static int thread_slice_cmp(const void *pa, const void *pb)
{
    return thread_time_cmp(&((const struct thread_slice *)pa)->at,
                           &((const struct thread_slice *)pb)->at);
}

/* The traced threads' slices in the window, by thread and time: read in
 * rowid order and sorted here (SQLite's sorter, with no index by pid, was
 * three quarters of the walk's time). */
static int thread_slices_load(struct walk *w, struct thread_slice **out, size_t *count)
{
    struct thread_slice *items = NULL;
    size_t n = 0, cap = 0;
    int step = SQLITE_DONE;
    sqlite3_stmt *st =
        tw_prepare(w, "SELECT s.pid, s.tid, s.start_ns, s.id, s.end_ns, s.cpu\n"
                      "FROM sched_slices AS s\n"
                      "WHERE s.in_tree AND s.pid IS NOT NULL AND " IN_WINDOW("s") " ORDER BY s.id");
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
        items[n++] = (struct thread_slice){{v[0], v[1], v[2], v[3]}, v[4], v[5]};
    }
    if (step != SQLITE_DONE)
        tw_fail(w, sqlite3_errmsg(w->db));
    else
        items = tw_sort_grouped(w, items, n, sizeof *items,
                                sizeof items->at.pid + sizeof items->at.tid, thread_slice_cmp);
out:
    sqlite3_finalize(st);
    *out = items;
    *count = n;
    return w->failed ? -1 : 0;
}

/* The names "CPU 0".."CPU 255", made and interned on first use (a
 * snprintf and a hash a slice otherwise). */
#define CORE_NAMES 256
struct core_names {
    char text[CORE_NAMES][16];
    struct tl_name name[CORE_NAMES];
    uint8_t made[CORE_NAMES];
    char other[32]; /* a core beyond them */
};

static struct tl_name core_name_of(struct walk *w, struct core_names *n, int64_t cpu)
{
    if (cpu < 0 || cpu >= CORE_NAMES) {
        snprintf(n->other, sizeof n->other, "CPU %lld", (long long)cpu);
        return tw_synthetic_name(w, n->other);
    }
    if (!n->made[cpu]) {
        snprintf(n->text[cpu], sizeof n->text[cpu], "CPU %d", (int)cpu);
        n->name[cpu] = tw_synthetic_name(w, n->text[cpu]);
        n->made[cpu] = 1;
    }
    return n->name[cpu];
}

/* A traced thread's cores and its utilization; its two rows are found once
 * per thread (the slices come by thread). */
static int walk_thread_cores(struct walk *w)
{
    struct thread_slice *slices = NULL;
    size_t count = 0;
    struct core_names *names = calloc(1, sizeof *names);
    int rc = names ? thread_slices_load(w, &slices, &count) : tw_fail(w, "out of memory");
    uint32_t core = 0, busy = 0;
    for (size_t i = 0; rc == 0 && i < count && !w->failed; i++) {
        const struct thread_slice *s = &slices[i];
        if (i == 0 || s->at.pid != slices[i - 1].at.pid || s->at.tid != slices[i - 1].at.tid) {
            uint32_t pid = (uint32_t)s->at.pid, tid = (uint32_t)s->at.tid;
            core = tw_thread_child_row(w, pid, tid, &core_row, 0);
            busy = tw_thread_child_row(w, pid, tid, &utilization_row, 0);
        }
        if (!core || !busy ||
            tw_emit_slice(w, core, s->at.start, s->end, core_name_of(w, names, s->cpu),
                          tw_category(w, "cpu"), NULL, NULL) != 0 ||
            tw_emit_counter(w, busy, s->at.start, 100) != 0 ||
            tw_emit_counter(w, busy, s->end, 0) != 0)
            break;
    }
    free(slices);
    free(names);
    return w->failed ? -1 : 0;
}

/* A thread's state over an interval; `state` indexes the walk's texts. */
struct thread_state {
    struct thread_time at; /* id: the row's rowid */
    int64_t end;
    uint32_t state;
};

/* ORDER BY pid, tid, start_ns (the index's order: rowid last) */
static int thread_state_cmp(const void *pa, const void *pb)
{
    return thread_time_cmp(&((const struct thread_state *)pa)->at,
                           &((const struct thread_state *)pb)->at);
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
        items[n++] = (struct thread_state){{v[0], v[1], v[2], v[3]}, v[4], state};
    }
    if (step != SQLITE_DONE)
        tw_fail(w, sqlite3_errmsg(w->db));
    else
        items = tw_sort_grouped(w, items, n, sizeof *items,
                                sizeof items->at.pid + sizeof items->at.tid, thread_state_cmp);
out:
    sqlite3_finalize(st);
    *out = items;
    *count = n;
    return w->failed ? -1 : 0;
}

/* The interned name of state text `index`, made on its first use (a hash
 * of the text per state otherwise). */
static struct tl_name interned_state(struct walk *w, const struct state_texts *texts,
                                     struct tl_name *names, uint32_t index)
{
    if (!names[index].text)
        names[index] = tw_synthetic_name(w, texts->items[index]);
    return names[index];
}

/* The states the scheduler saw, or where it was not asked (-s none) OSRT's
 * estimates, "Possibly Running" and "Possibly Waiting" (manual 5.2). */
static int walk_states(struct walk *w)
{
    struct state_texts texts = {NULL, 0, 0, 0};
    struct thread_state *states;
    size_t count;
    int rc = thread_states_load(w, &texts, &states, &count);
    struct tl_name *names = rc == 0 ? calloc(texts.count + 1, sizeof *names) : NULL;
    if (rc == 0 && !names)
        rc = tw_fail(w, "out of memory");
    for (size_t i = 0; rc == 0 && i < count && !w->failed; i++) {
        const struct thread_state *s = &states[i];
        uint32_t row =
            tw_thread_child_row(w, (uint32_t)s->at.pid, (uint32_t)s->at.tid, &state_row, 0);
        if (!row ||
            tw_emit_slice(w, row, s->at.start, s->end, interned_state(w, &texts, names, s->state),
                          tw_category(w, "cpu"), NULL, NULL) != 0)
            break;
    }
    free(names);
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
