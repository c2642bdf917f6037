/* The timeline's device side: the stream_pct tree (devices > contexts >
 * streams > rows), HGTX projection, memory counters; the activities on it
 * are timeline_activities.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "report_catalog.h"
#include "report_run.h"
#include "sql_functions.h"
#include "timeline_walk.h"

/* Declares every node of the tree, names prefixed with their percentage. */
static int build_tree(struct walk *w)
{
    struct asys_report_catalog cat = {0};
    if (asys_catalog_load_builtin(&cat, w->err) != 0)
        return w->failed = 1, -1;
    const struct asys_report_def *def = asys_catalog_find(&cat, "stream_pct");
    struct asys_report_params p;
    asys_report_params_init(&p, w->db);
    p.filter_start = w->o->filter_start;
    p.filter_end = w->o->filter_end;
    p.group_by = w->o->group_kernels;
    sqlite3_stmt *st = NULL;
    int rc = def ? asys_report_prepare(w->db, def, "stream_pct", &p, &st, w->err)
                 : asys_fail(w->err, "the stream_pct report is missing");
    /* columns: Node, Percent, Time, Level, Id, Parent Id, Kind, Key; parents come first */
    struct asys_u64map by_id;
    asys_u64map_init(&by_id);
    uint32_t sibling_rank[64] = {0};
    while (rc == 0 && !w->failed && sqlite3_step(st) == SQLITE_ROW) {
        const char *node = asys_column_text(st, 0);
        int level = sqlite3_column_int(st, 3);
        int64_t id = sqlite3_column_int64(st, 4);
        const char *kind = asys_column_text(st, 6);
        const char *key = asys_column_text(st, 7);
        if (level < 0 || level >= 63)
            continue;
        sibling_rank[level]++;
        sibling_rank[level + 1] = 0;
        uint64_t *parent_row = sqlite3_column_type(st, 5) == SQLITE_NULL
                                   ? NULL
                                   : asys_u64map_get(&by_id, (uint64_t)sqlite3_column_int64(st, 5));
        struct row *parent = parent_row ? tw_row_at(w, (uint32_t)*parent_row) : NULL;
        int device = !strcmp(kind, "device");
        /* under a device, the tree starts at rank 11: its summary rows (1, 2) go first */
        uint32_t order = device ? sibling_rank[level] : 10 + sibling_rank[level];
        uint32_t row = tw_row_new(w, key, strlen(key), parent ? parent->lanes[0].uuid : 0,
                                  parent ? parent->sort_index : 0, device ? TL_GROUP : TL_PLAIN,
                                  node, order, 0);
        if (!row || asys_u64map_put(&by_id, (uint64_t)id, row) != 0)
            rc = tw_fail(w, "out of memory");
    }
    asys_u64map_free(&by_id);
    sqlite3_finalize(st);
    asys_catalog_free(&cat);
    return rc != 0 || w->failed ? -1 : 0;
}

/* The row of a tree node by key, 0 when the node is not in the tree. */
uint32_t tw_node_row(struct walk *w, const char *key)
{
    return key ? tw_row_find(w, key, strlen(key)) : 0;
}

/* The row of device `physical`: the tree's, or (a device that ran no work,
 * only allocations) a group row made as the tree would name it. */
static uint32_t device_row(struct walk *w, int64_t physical)
{
    char key[32], name[300];
    snprintf(key, sizeof key, "D%lld", (long long)physical);
    uint32_t row = tw_node_row(w, key);
    if (row)
        return row;
    sqlite3_stmt *st = tw_prepare(w, "SELECT s.value FROM ppu_devices AS d\n"
                                     "JOIN strings AS s ON s.id = d.name_id\n"
                                     "WHERE COALESCE(d.physical_index, d.device) = ? LIMIT 1");
    if (!st)
        return 0;
    sqlite3_bind_int64(st, 1, physical);
    const char *device = sqlite3_step(st) == SQLITE_ROW ? asys_column_text(st, 0) : NULL;
    snprintf(name, sizeof name, "PPU %lld%s%s", (long long)physical, device ? ": " : "",
             device ? device : "");
    sqlite3_finalize(st);
    /* after the devices that ran work */
    uint32_t order = 100 + (uint32_t)(physical & 0xff);
    return tw_row_new(w, key, strlen(key), 0, 0, TL_GROUP, name, order, 0);
}

/* A row of its own under a tree node (device summaries, HGTX projection). */
uint32_t tw_child_row(struct walk *w, uint32_t parent, const char *suffix, const char *name,
                      uint32_t order)
{
    struct row *p = tw_row_at(w, parent);
    if (!p)
        return 0;
    char key[64];
    int n = snprintf(key, sizeof key, "%u/%s", parent, suffix);
    uint32_t id = tw_row_find(w, key, (size_t)n);
    if (id)
        return id;
    return tw_row_new(w, key, (size_t)n, p->lanes[0].uuid, p->sort_index, TL_PLAIN, name, order, 0);
}

/* The "HGTX" row of stream (physical, pid, context, stream): under the
 * stream, or its context or device when hidden. */
static uint32_t projection_row(struct walk *w, const int64_t stream[4])
{
    char key[160], suffix[32];
    int n = snprintf(key, sizeof key, "D%lld", (long long)stream[0]);
    uint32_t device = tw_node_row(w, key);
    n += snprintf(key + n, sizeof key - (size_t)n, "/C%lld.%lld", (long long)stream[1],
                  (long long)stream[2]);
    uint32_t context = tw_node_row(w, key);
    snprintf(key + n, sizeof key - (size_t)n, "/S%lld", (long long)stream[3]);
    uint32_t parent = tw_node_row(w, key);
    if (!parent)
        parent = context ? context : device;
    snprintf(suffix, sizeof suffix, "h/S%lld", (long long)stream[3]);
    return tw_child_row(w, parent, suffix, "HGTX", 200);
}

/* A projected range: its stream (physical, pid, context, stream), its
 * times, its text and where the table's scan met it (ties). */
struct projected {
    int64_t stream[4];
    int64_t start, end, text_id;
    uint32_t seq;
};

/* By stream, start, then the longer first; ties in the table's key order
 * (range id), where SQLite's sorter left them unspecified. */
static int projected_cmp(const void *pa, const void *pb)
{
    const struct projected *a = pa, *b = pb;
    for (int i = 0; i < 4; i++)
        if (a->stream[i] != b->stream[i])
            return a->stream[i] < b->stream[i] ? -1 : 1;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    if (a->end != b->end)
        return a->end > b->end ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The projected ranges in the window, in the order they are drawn: read in
 * the table's key order and sorted here (SQLite's sorter was four fifths of
 * the walk). */
static int projection_load(struct walk *w, struct projected **out, size_t *count)
{
    struct projected *items = NULL;
    size_t n = 0, cap = 0;
    int step = SQLITE_DONE;
    sqlite3_stmt *st = tw_prepare(
        w, "SELECT g.physical, g.pid, g.context, g.stream, g.start_ns, g.end_ns, e.text_id\n"
           "FROM hgtx_gpu_projection AS g\n"
           "JOIN hgtx_events AS e ON e.id = g.range_id\n"
           "WHERE " IN_WINDOW("g") "\n"
                                   "ORDER BY g.range_id, g.pid, g.context, g.stream");
    if (!st)
        goto out;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        if (n >= UINT32_MAX || asys_grow(&items, &cap, n, sizeof *items, 4096) != 0) {
            tw_fail(w, "out of memory");
            goto out;
        }
        struct projected *p = &items[n];
        for (int i = 0; i < 4; i++)
            p->stream[i] = sqlite3_column_int64(st, i);
        p->start = sqlite3_column_int64(st, 4);
        p->end = sqlite3_column_int64(st, 5);
        p->text_id = sqlite3_column_int64(st, 6);
        p->seq = (uint32_t)n++;
    }
    if (step != SQLITE_DONE)
        tw_fail(w, sqlite3_errmsg(w->db));
    else
        items = tw_sort_grouped(w, items, n, sizeof *items, sizeof items->stream, projected_cmp);
out:
    sqlite3_finalize(st);
    *out = items;
    *count = n;
    return w->failed ? -1 : 0;
}

/* HGTX ranges projected onto the streams: an "HGTX" row in each stream.
 * The rows come by stream: its row is found once per run. */
static int walk_projection(struct walk *w)
{
    struct projected *ranges;
    size_t count;
    uint32_t row = 0;
    int rc = projection_load(w, &ranges, &count);
    for (size_t i = 0; rc == 0 && i < count && !w->failed; i++) {
        const struct projected *p = &ranges[i];
        if (i == 0 || memcmp(p->stream, ranges[i - 1].stream, sizeof p->stream) != 0)
            row = projection_row(w, p->stream);
        tw_emit_slice(w, row, p->start, p->end, tw_string_name(w, p->text_id),
                      tw_category(w, "hgtx"), NULL, NULL);
    }
    free(ranges);
    return w->failed ? -1 : 0;
}

/* Device and pinned memory in use over time, per process. */
static int walk_memory(struct walk *w)
{
    sqlite3_stmt *st =
        tw_prepare(w, "SELECT m.pid, COALESCE(d.physical_index, m.device),\n"
                      "       m.memory_kind, m.timestamp_ns,\n"
                      "       SUM(CASE m.operation WHEN 1 THEN m.bytes ELSE -m.bytes END)\n"
                      "         OVER (PARTITION BY m.pid, m.memory_kind,\n"
                      "                  COALESCE(d.physical_index, m.device)\n"
                      "               ORDER BY m.timestamp_ns, m.rowid)\n"
                      "FROM ppu_memory AS m\n"
                      "LEFT JOIN ppu_devices AS d ON d.pid = m.pid AND d.device = m.device\n"
                      "WHERE m.operation IN (1, 2) AND m.memory_kind IN (2, 3) AND\n"
                      "      m.timestamp_ns <= :hi\n"
                      "ORDER BY m.pid, m.memory_kind, 2, m.timestamp_ns, m.rowid");
    if (!st)
        return -1;
    while (!w->failed && sqlite3_step(st) == SQLITE_ROW) {
        uint32_t pid = (uint32_t)sqlite3_column_int64(st, 0);
        int pinned = sqlite3_column_int(st, 2) == 2;
        char key[64], name[128];
        int n = snprintf(key, sizeof key, "mem/%u/%d/%lld", pid, pinned,
                         (long long)sqlite3_column_int64(st, 1));
        uint32_t row = tw_row_find(w, key, (size_t)n);
        if (!row) {
            uint32_t parent;
            if (pinned) {
                parent = tw_process_row(w, pid);
                snprintf(name, sizeof name, "Pinned memory (bytes)");
            } else {
                parent = device_row(w, sqlite3_column_int64(st, 1));
                snprintf(name, sizeof name, "Device memory, pid %u (bytes)", pid);
            }
            struct row *p = tw_row_at(w, parent);
            if (!p)
                continue;
            /* --unified-memory-scale: every process's device memory on a device
             * shares one axis, and a process's pinned memory the host memory one */
            const char *axis = !w->o->unified_memory_scale ? NULL
                               : pinned                    ? "host memory (bytes)"
                                                           : "device memory (bytes)";
            row = tw_counter_row_new(w, key, (size_t)n, p->lanes[0].uuid, p->sort_index, name, 3,
                                     axis, "bytes");
        }
        int64_t ts = sqlite3_column_int64(st, 3);
        if (ts < w->o->filter_start)
            ts = w->o->filter_start;
        struct row *r = tw_row_at(w, row);
        if (!r)
            break;
        w->stats->counter_values++;
        tw_progress(w);
        if (w->ops->counter(w->sink, r->lanes[0].uuid, ts, (double)sqlite3_column_int64(st, 4)))
            tw_sink_failed(w);
    }
    sqlite3_finalize(st);
    return w->failed ? -1 : 0;
}

static void failed_row_name(struct walk *w, int64_t sub, char *out, size_t size)
{
    (void)w;
    (void)sub;
    snprintf(out, size, "Failed allocations");
}

/* under the thread, after its HGGC API row */
static const struct tl_thread_row failed_row = {TL_RANK_FAILED_ALLOCATIONS, failed_row_name, 0,
                                                NULL};

/* Allocation calls that failed (--hggc-memory-usage): instants on a
 * "Failed allocations" row of their device (of the calling thread when the
 * device has no row), with the bytes asked and the error. */
static int walk_failed_allocations(struct walk *w)
{
    sqlite3_stmt *st = tw_prepare(
        w, "SELECT a.pid, COALESCE(d.physical_index, a.device), a.timestamp_ns,\n"
           "       a.bytes, a.error, COALESCE(s.value, 'allocation'), COALESCE(a.tid, a.pid)\n"
           "FROM ppu_allocations AS a\n"
           "LEFT JOIN ppu_devices AS d ON d.pid = a.pid AND d.device = a.device\n"
           "LEFT JOIN strings AS s ON s.id = a.api_name_id\n"
           "WHERE a.failed AND (:all OR (a.timestamp_ns >= :lo AND a.timestamp_ns <= :hi))\n"
           "ORDER BY 1, 2, 3");
    if (!st)
        return -1;
    struct tl_args args;
    while (!w->failed && sqlite3_step(st) == SQLITE_ROW) {
        char name[160];
        uint32_t parent = sqlite3_column_type(st, 1) != SQLITE_NULL
                              ? device_row(w, sqlite3_column_int64(st, 1))
                              : 0;
        uint32_t row =
            parent ? tw_child_row(w, parent, "failed", "Failed allocations", 250)
                   : tw_thread_child_row(w, (uint32_t)sqlite3_column_int64(st, 0),
                                         (uint32_t)sqlite3_column_int64(st, 6), &failed_row, 0);
        snprintf(name, sizeof name, "%s failed (%lld B)", (const char *)sqlite3_column_text(st, 5),
                 (long long)sqlite3_column_int64(st, 3));
        args.count = 0;
        tw_arg_int(&args, "bytes", sqlite3_column_int64(st, 3));
        tw_arg_int(&args, "error", sqlite3_column_int64(st, 4));
        tw_arg_int(&args, "pid", sqlite3_column_int64(st, 0));
        if (!row || tw_emit_instant(w, row, sqlite3_column_int64(st, 2), tw_synthetic_name(w, name),
                                    tw_category(w, "hggc"), &args) != 0)
            break;
    }
    sqlite3_finalize(st);
    return w->failed ? -1 : 0;
}

static int walk_ppu_memory(struct walk *w)
{
    return walk_memory(w) == 0 ? walk_failed_allocations(w) : -1;
}

/* The device tree as stream_pct builds it, the work on it, and the HGTX
 * ranges projected onto the streams. */
static int walk_ppu(struct walk *w)
{
    if (build_tree(w) != 0 || tw_walk_activities(w) != 0)
        return -1;
    return tw_table_wanted(w, "hgtx_gpu_projection") ? walk_projection(w) : 0;
}

const struct tl_family tl_family_ppu = {"ppu_activities", 3, walk_ppu};
const struct tl_family tl_family_ppu_memory = {"ppu_memory", 0, walk_ppu_memory};
