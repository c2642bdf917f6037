/* The timeline's device side: the stream_pct tree (devices > contexts >
 * streams > rows), the activities on it, HGTX projection, memory counters. */
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
static uint32_t node_row(struct walk *w, const char *key)
{
    return key ? tw_row_find(w, key, strlen(key)) : 0;
}

/* The row of device `physical`: the tree's, or (a device that ran no work,
 * only allocations) a group row made as the tree would name it. */
static uint32_t device_row(struct walk *w, int64_t physical)
{
    char key[32], name[300];
    snprintf(key, sizeof key, "D%lld", (long long)physical);
    uint32_t row = node_row(w, key);
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
static uint32_t child_row(struct walk *w, uint32_t parent, const char *suffix, const char *name,
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

/* Where an activity is drawn: its leaf (kernel group, memory operation,
 * graph), its graph exec, its context's [All Stream] row and its device's
 * Kernels or Memory row (0 where there is none). */
struct place {
    uint32_t leaf, exec, all_streams, summary;
};

/* What decides an activity's place (memset to zero: hashed as bytes). */
struct place_key {
    int64_t physical, pid, context, stream;
    int64_t group_a, group_b; /* base name id; or HGTX domain and text; or copy kind */
    int64_t graph_id, exec_id;
    int32_t kind;
    int32_t by_base; /* kernels grouped by base name (else by HGTX range) */
};

#define NONE INT64_MIN /* a NULL column in a place key */

static int64_t column_or_none(sqlite3_stmt *st, int col)
{
    return sqlite3_column_type(st, col) == SQLITE_NULL ? NONE : sqlite3_column_int64(st, col);
}

/* The stream_pct key of the activity's leaf ("D0/C12.1/S7/RKernels/Gb42"). */
static void leaf_key(const struct place_key *k, char *out, size_t size)
{
    int n = snprintf(out, size, "D%lld/C%lld.%lld/S%lld", (long long)k->physical, (long long)k->pid,
                     (long long)k->context, (long long)k->stream);
    char *p = out + n;
    size_t left = size - (size_t)n;
    if (k->kind == 1 && k->by_base)
        snprintf(p, left, "/RKernels/Gb%lld", (long long)k->group_a);
    else if (k->kind == 1 && k->group_a == NONE) /* by HGTX range: none, or no domain */
        snprintf(p, left, "/RKernels/Gh");
    else if (k->kind == 1 && k->group_b == NONE)
        snprintf(p, left, "/RKernels/Gh%lld:", (long long)k->group_a);
    else if (k->kind == 1)
        snprintf(p, left, "/RKernels/Gh%lld:%lld", (long long)k->group_a, (long long)k->group_b);
    else if (k->kind == 2)
        snprintf(p, left, "/RMemory/Gc%lld", (long long)k->group_a);
    else if (k->kind == 3)
        snprintf(p, left, "/RMemory/GMemset");
    else if (k->kind == 5)
        snprintf(p, left, "/RVideo");
    else
        snprintf(p, left, "/RGraph Group/Gg%lld", (long long)k->graph_id);
}

/* Finds the rows of a place (first time it is met). */
static struct place find_place(struct walk *w, const struct place_key *k)
{
    struct place pl = {0, 0, 0, 0};
    char key[256];
    leaf_key(k, key, sizeof key);
    pl.leaf = node_row(w, key);
    if (k->graph_id != NONE && k->kind != 4) {
        int n = snprintf(key, sizeof key, "D%lld/C%lld.%lld/S%lld/RGraph Group/Gg%lld",
                         (long long)k->physical, (long long)k->pid, (long long)k->context,
                         (long long)k->stream, (long long)k->graph_id);
        if (k->exec_id != NONE)
            snprintf(key + n, sizeof key - (size_t)n, "/X%lld", (long long)k->exec_id);
        pl.exec = node_row(w, key);
    }
    snprintf(key, sizeof key, "D%lld/C%lld.%lld/A", (long long)k->physical, (long long)k->pid,
             (long long)k->context);
    pl.all_streams = node_row(w, key);
    snprintf(key, sizeof key, "D%lld", (long long)k->physical);
    uint32_t device = node_row(w, key);
    if (device && k->kind == 1)
        pl.summary = child_row(w, device, "k", "Kernels (all streams)", 1);
    else if (device && (k->kind == 2 || k->kind == 3))
        pl.summary = child_row(w, device, "m", "Memory (all streams)", 2);
    else if (device && k->kind == 5)
        pl.summary = child_row(w, device, "v", "Video (all streams)", 3);
    /* device work runs side by side: concurrency is lanes, never nesting */
    tw_row_set_flat(w, pl.leaf);
    tw_row_set_flat(w, pl.exec);
    tw_row_set_flat(w, pl.all_streams);
    tw_row_set_flat(w, pl.summary);
    return pl;
}

/* The places met so far, by key. */
struct place_cache {
    struct asys_strmap by_key; /* key -> index + 1 */
    struct place *items;
    size_t count, cap;
};

/* The place of the current row of the device query. */
static struct place place_of(struct walk *w, sqlite3_stmt *st, struct place_cache *cache)
{
    struct place_key k;
    memset(&k, 0, sizeof k);
    k.kind = sqlite3_column_int(st, 1);
    k.physical = sqlite3_column_int64(st, 2);
    k.pid = sqlite3_column_int64(st, 3);
    k.context = sqlite3_column_int64(st, 4);
    k.stream = sqlite3_column_int64(st, 5);
    k.graph_id = column_or_none(st, 13);
    k.exec_id = column_or_none(st, 14);
    if (k.kind == 1 && strcmp(w->o->group_kernels, "hgtx") != 0) {
        k.group_a = sqlite3_column_int64(st, 10);
        k.by_base = 1;
    } else if (k.kind == 1) {
        k.group_a = column_or_none(st, 11);
        k.group_b = column_or_none(st, 12);
    } else if (k.kind == 2) {
        k.group_a = sqlite3_column_int64(st, 9);
    }
    uint32_t index = asys_strmap_get(&cache->by_key, (const char *)&k, sizeof k);
    if (index)
        return cache->items[index - 1];
    struct place pl = find_place(w, &k);
    if (asys_grow(&cache->items, &cache->cap, cache->count, sizeof *cache->items, 64) != 0 ||
        asys_strmap_put(&cache->by_key, (const char *)&k, sizeof k, (uint32_t)cache->count + 1)) {
        tw_fail(w, "out of memory");
        return pl;
    }
    cache->items[cache->count++] = pl;
    return pl;
}

/* An activity's name: a kernel's demangled name, or the operation as nsys
 * names it ("[CUDA memcpy Host-to-Device]", "[CUDA memset]", "[CUDA graph 3]"). */
static struct tl_name activity_name(struct walk *w, sqlite3_stmt *st, sqlite3_stmt *directions,
                                    char *text, size_t size)
{
    int kind = sqlite3_column_int(st, 1);
    if (kind == 1)
        return tw_string_name(w, sqlite3_column_int64(st, 8));
    if (kind == 2) {
        sqlite3_reset(directions);
        sqlite3_bind_int64(directions, 1, sqlite3_column_int64(st, 9));
        const char *direction = sqlite3_step(directions) == SQLITE_ROW
                                    ? (const char *)sqlite3_column_text(directions, 0)
                                    : NULL;
        snprintf(text, size, "[CUDA memcpy %s]", direction ? direction : "Unknown");
    } else if (kind == 3) {
        snprintf(text, size, "[CUDA memset]");
    } else if (kind == 5) {
        snprintf(text, size, "[Video %s]", sqlite3_column_int(st, 19) == 1 ? "Decode" : "Encode");
    } else {
        snprintf(text, size, "[CUDA graph %lld]", (long long)sqlite3_column_int64(st, 13));
    }
    return tw_synthetic_name(w, text);
}

/* What an activity's flows need besides its own row: the dependency flows,
 * read alongside the activities in their (start, id) order, and the calls
 * that launched several of the drawn activities (graph launches), with how
 * many; every other call launched one. */
struct activity_links {
    struct ref_cursor on_it;    /* effective dependencies on the activity: the waiters' times */
    struct ref_cursor its_own;  /* the activity's own: when the depended-on work started */
    struct ref_cursor pccl;     /* the PCCL operations that ran in it (timeline_pccl.c) */
    struct ref_cursor acompute; /* the cuDNN/cuBLAS call that launched it (timeline_acompute.c) */
    struct asys_u64map several; /* api id -> activities in the window, when more than one */
};

static int load_shared_launches(struct walk *w, struct asys_u64map *several)
{
    /* clang-format off */
    sqlite3_stmt *st = tw_prepare(w,
        "SELECT p.api_id, COUNT(*) FROM ppu_activities AS p\n"
        "WHERE p.api_id IS NOT NULL AND " IN_WINDOW("p") "\n"
        "GROUP BY p.api_id HAVING COUNT(*) > 1");
    /* clang-format on */
    while (st && !w->failed && sqlite3_step(st) == SQLITE_ROW)
        if (asys_u64map_put(several, (uint64_t)sqlite3_column_int64(st, 0),
                            (uint64_t)sqlite3_column_int64(st, 1)) != 0)
            tw_fail(w, "out of memory");
    sqlite3_finalize(st);
    return st && !w->failed ? 0 : -1;
}

static int links_open(struct walk *w, struct activity_links *c)
{
    memset(c, 0, sizeof *c);
    asys_u64map_init(&c->several);
    if (load_shared_launches(w, &c->several) != 0)
        return -1;
    /* clang-format off */
    if (tw_table_wanted(w, "pccl_tasks") &&
        tw_cursor_open(w, &c->pccl,
            "SELECT p.start_ns, p.id, k.id, t.start_ns, t.end_ns\n"
            "FROM pccl_task_kernels AS k JOIN ppu_activities AS p ON p.id = k.activity_id\n"
            "JOIN pccl_tasks AS t ON t.id = k.task_id\n"
            "WHERE " IN_WINDOW("t") "\n"
            "ORDER BY p.start_ns, p.id, k.id") != 0)
        return -1;
    if (tw_table_wanted(w, "acompute_calls") &&
        tw_cursor_open(w, &c->acompute,
            "SELECT p.start_ns, p.id, x.rowid, c.start_ns, c.end_ns\n"
            "FROM acompute_work AS x JOIN ppu_activities AS p ON p.id = x.activity_id\n"
            "JOIN acompute_calls AS c ON c.id = x.call_id\n"
            "WHERE " IN_WINDOW("c") "\n"
            "ORDER BY p.start_ns, p.id, x.rowid") != 0)
        return -1;
    /* clang-format on */
    if (!tw_table_wanted(w, "ppu_deps"))
        return 0;
    /* a host wait's end lies on its API call: drawn only when the calls are */
    /* clang-format off */
    if (tw_cursor_open(w, &c->on_it,
            "SELECT p.start_ns, p.id, d.id, COALESCE(q.start_ns, a.start_ns),\n"
            "       COALESCE(q.end_ns, a.end_ns)\n"
            "FROM ppu_deps AS d\n"
            "JOIN ppu_activities AS p ON p.id = d.depends_on\n"
            "LEFT JOIN ppu_activities AS q ON q.id = d.activity_id\n"
            "LEFT JOIN hggc_api_calls AS a ON a.id = d.wait_api_id AND d.kind = 5\n"
            "WHERE d.effective AND ((q.id IS NOT NULL AND " IN_WINDOW("q") ")\n"
            "                       OR (:host AND a.id IS NOT NULL AND " IN_WINDOW("a") "))\n"
            "ORDER BY p.start_ns, p.id, d.id") != 0)
        return -1;
    /* clang-format on */
    sqlite3_bind_int(c->on_it.st, sqlite3_bind_parameter_index(c->on_it.st, ":host"),
                     tw_table_wanted(w, "hggc_api_calls"));
    /* clang-format off */
    return tw_cursor_open(w, &c->its_own,
        "SELECT a.start_ns, a.id, d.id, q.start_ns, q.start_ns\n"
        "FROM ppu_deps AS d\n"
        "JOIN ppu_activities AS a ON a.id = d.activity_id\n"
        "JOIN ppu_activities AS q ON q.id = d.depends_on\n"
        "WHERE d.effective AND " IN_WINDOW("q") "\n"
        "ORDER BY a.start_ns, a.id, d.id");
    /* clang-format on */
}

static void links_close(struct activity_links *c)
{
    tw_cursor_close(&c->on_it);
    tw_cursor_close(&c->its_own);
    tw_cursor_close(&c->pccl);
    tw_cursor_close(&c->acompute);
    asys_u64map_free(&c->several);
}

/* The flows of the current activity: from its API call, and along the
 * effective dependencies whose both ends are drawn. */
static struct tl_flows activity_flows(struct walk *w, sqlite3_stmt *st,
                                      struct activity_links *links, int64_t start, int64_t end)
{
    tw_flows_clear(w);
    int64_t id = sqlite3_column_int64(st, 0), raw_start = sqlite3_column_int64(st, 6);
    int one_to_one = 0;
    if (sqlite3_column_type(st, 16) != SQLITE_NULL) { /* its call is drawn */
        const uint64_t *several =
            asys_u64map_get(&links->several, (uint64_t)sqlite3_column_int64(st, 15));
        enum flow_place place = tw_flows_add_in(w, TL_FLOW_HOST | (uint64_t)id,
                                                sqlite3_column_int64(st, 16), start, end);
        one_to_one = !several && place == FLOW_AT_BEGIN;
    }
    tw_cursor_refs(w, &links->its_own, raw_start, id);
    for (size_t i = 0; i < w->ref_count; i++)
        tw_flows_add_in(w, TL_FLOW_DEPENDENCY | w->refs[i].id, w->refs[i].start, start, end);
    tw_cursor_refs(w, &links->pccl, raw_start, id);
    for (size_t i = 0; i < w->ref_count; i++)
        tw_flows_add_in(w, TL_FLOW_PCCL | w->refs[i].id, w->refs[i].start, start, end);
    tw_cursor_refs(w, &links->acompute, raw_start, id);
    for (size_t i = 0; i < w->ref_count; i++)
        tw_flows_add_in(w, TL_FLOW_ACOMPUTE | w->refs[i].id, w->refs[i].start, start, end);
    tw_cursor_refs(w, &links->on_it, raw_start, id);
    tw_flows_add_out(w, TL_FLOW_DEPENDENCY, start);
    return tw_flows_of(w, one_to_one);
}

/* A kernel's Nsight Compute command (without the program's, the same for
 * all: kernel_profile_cmd prints it whole): 0 when the row is no kernel. */
static int kernel_ncu_command(sqlite3_stmt *st, char *out, size_t size)
{
    const char *mangled = (const char *)sqlite3_column_text(st, 17);
    if (sqlite3_column_int(st, 1) != 1 || !mangled || sqlite3_column_type(st, 18) == SQLITE_NULL)
        return 0;
    int n = snprintf(out, size, "ncu --kernel-name-base mangled --kernel-name regex:^");
    for (const char *c = mangled; *c && n + 8 < (int)size; c++) {
        if (*c == '.') /* clones: foo.isra.0 */
            out[n++] = '\\';
        out[n++] = *c;
    }
    snprintf(out + n, size - (size_t)n, "$ --launch-skip %lld --launch-count 1",
             (long long)sqlite3_column_int64(st, 18));
    return 1;
}

/* Every activity in time order, on each row that shows it: its leaf (with
 * its flows), its graph exec, [All Stream] and the device's summary row. */
static int walk_activities(struct walk *w)
{
    int host = tw_table_wanted(w, "hggc_api_calls");
    /* clang-format off */
    sqlite3_stmt *st = tw_prepare(w,
        "SELECT p.id, p.kind, p.physical, p.pid, p.context, p.stream, p.start_ns,\n"
        "       p.end_ns, p.name_id, p.copy_kind, p.base_name_id, e.domain_id, e.text_id,\n"
        "       p.graph_id, p.graph_exec_id,\n"
        /* 15, 16: the launching call, and when it began when it is drawn (a
         * video decode or encode: its video API call) */
        "       p.api_id, COALESCE(a.start_ns, vc.start_ns),\n"
        /* 17, 18: a kernel's mangled name and launch number (its ncu command);
         * 19: a video activity's kind */
        "       km.value, ki.instance, va.kind\n"
        "FROM ppu_activities AS p\n"
        "LEFT JOIN ppu_kernels AS k ON k.id = p.source_id AND p.kind = 1\n"
        "LEFT JOIN strings AS km ON km.id = k.mangled_name_id\n"
        "LEFT JOIN ppu_kernel_instances AS ki ON ki.kernel_id = p.source_id AND p.kind = 1\n"
        "LEFT JOIN hgtx_events AS e ON e.id = p.hgtx_range_id AND :group = 'hgtx'\n"
        "LEFT JOIN hggc_api_calls AS a ON a.id = p.api_id AND :host AND " IN_WINDOW("a") "\n"
        "LEFT JOIN video_activities AS va ON va.id = p.source_id AND p.kind = 5\n"
        "LEFT JOIN video_api_calls AS vc ON vc.id = va.api_id AND :video AND " IN_WINDOW("vc") "\n"
        "WHERE " IN_WINDOW("p") "\n"
        "ORDER BY p.start_ns, p.id");
    /* clang-format on */
    sqlite3_stmt *directions = tw_prepare(w, "SELECT direction FROM hggc_copy_kinds WHERE id = ?");
    struct activity_links links;
    if (!st || !directions || links_open(w, &links) != 0) {
        sqlite3_finalize(st);
        sqlite3_finalize(directions);
        if (st && directions)
            links_close(&links);
        return -1;
    }
    sqlite3_bind_text(st, sqlite3_bind_parameter_index(st, ":group"), w->o->group_kernels, -1,
                      SQLITE_STATIC);
    sqlite3_bind_int(st, sqlite3_bind_parameter_index(st, ":host"), host);
    sqlite3_bind_int(st, sqlite3_bind_parameter_index(st, ":video"),
                     tw_table_wanted(w, "video_api_calls"));
    struct place_cache cache = {0};
    asys_strmap_init(&cache.by_key);
    char text[96];
    while (!w->failed && sqlite3_step(st) == SQLITE_ROW) {
        struct place pl = place_of(w, st, &cache);
        if (!pl.leaf)
            continue;
        struct tl_name name = activity_name(w, st, directions, text, sizeof text);
        int64_t start = tw_clip_start(w, sqlite3_column_int64(st, 6));
        int64_t end = tw_clip_end(w, sqlite3_column_int64(st, 7), start);
        struct tl_flows f = activity_flows(w, st, &links, start, end);
        struct tl_args args = {.count = 0};
        char ncu[600];
        if (kernel_ncu_command(st, ncu, sizeof ncu))
            tw_arg_string(&args, "ncu", ncu);
        tw_emit_slice(w, pl.leaf, start, end, name, tw_category(w, "hggc"), &f,
                      args.count ? &args : NULL);
        uint32_t also[] = {pl.exec, pl.all_streams, pl.summary};
        for (size_t i = 0; i < sizeof also / sizeof also[0]; i++)
            if (also[i] && also[i] != pl.leaf)
                tw_emit_slice(w, also[i], start, end, name, tw_category(w, "hggc"), NULL, NULL);
    }
    asys_strmap_free(&cache.by_key);
    free(cache.items);
    links_close(&links);
    sqlite3_finalize(directions);
    sqlite3_finalize(st);
    return w->failed ? -1 : 0;
}

/* HGTX ranges projected onto the streams: an "HGTX" row in each stream. */
static int walk_projection(struct walk *w)
{
    sqlite3_stmt *st = tw_prepare(
        w, "SELECT g.start_ns, g.end_ns, e.text_id,\n"
           "       'D' || g.physical || '/C' || g.pid || '.' || g.context,\n"
           "       '/S' || g.stream, 'D' || g.physical\n"
           "FROM hgtx_gpu_projection AS g\n"
           "JOIN hgtx_events AS e ON e.id = g.range_id\n"
           "WHERE " IN_WINDOW("g") "\n"
                                   "ORDER BY g.physical, g.pid, g.context, g.stream, g.start_ns,\n"
                                   "         g.end_ns DESC");
    if (!st)
        return -1;
    while (!w->failed && sqlite3_step(st) == SQLITE_ROW) {
        char stream_key[256];
        const char *ctx = asys_column_text(st, 3);
        snprintf(stream_key, sizeof stream_key, "%s%s", ctx, asys_column_text(st, 4));
        /* where the stream's rows hang: the stream, or its context or device when hidden */
        uint32_t parent = node_row(w, stream_key);
        if (!parent)
            parent = node_row(w, ctx);
        if (!parent)
            parent = node_row(w, asys_column_text(st, 5));
        char suffix[300];
        snprintf(suffix, sizeof suffix, "h%s", asys_column_text(st, 4));
        uint32_t row = child_row(w, parent, suffix, "HGTX", 200);
        tw_emit_slice(w, row, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                      tw_string_name(w, sqlite3_column_int64(st, 2)), tw_category(w, "hgtx"), NULL,
                      NULL);
    }
    sqlite3_finalize(st);
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
            parent ? child_row(w, parent, "failed", "Failed allocations", 250)
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
    if (build_tree(w) != 0 || walk_activities(w) != 0)
        return -1;
    return tw_table_wanted(w, "hgtx_gpu_projection") ? walk_projection(w) : 0;
}

const struct tl_family tl_family_ppu = {"ppu_activities", 3, walk_ppu};
const struct tl_family tl_family_ppu_memory = {"ppu_memory", 0, walk_ppu_memory};
