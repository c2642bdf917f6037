/* The device work on the stream_pct tree (timeline_device.c builds it):
 * every activity in time order on each row that shows it, with its flows.
 *
 * The activities are read once in rowid order into a compact array and put
 * in time order here; what they need from other tables (their calls, their
 * kernels' mangled names, their dependencies) is read in one rowid-order
 * scan per table and merged in C.  SQLite sorting a million wide joined
 * rows by start, with a B-tree search per activity and joined table, was
 * most of a GPU export's time. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "activity_pages.h"
#include "grow.h"
#include "key_sort.h"
#include "output_format.h"
#include "timeline_walk.h"

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

/* An activity as read, from the activity query or a page of
 * ppu_activity_pages: the pages' fields, and (the query only: a report
 * with video work is read so) a video activity's video call and kind. */
struct activity_in {
    const struct asys_page_row *r;
    int64_t video_start; /* when its video call began, when that is drawn */
    int has_video_start;
    int video_kind;
};

static int64_t field_or_none(const struct activity_in *in, int f)
{
    return in->r->nulls & (1u << f) ? NONE : in->r->v[f];
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
    pl.leaf = tw_node_row(w, key);
    if (k->graph_id != NONE && k->kind != 4) {
        int n = snprintf(key, sizeof key, "D%lld/C%lld.%lld/S%lld/RGraph Group/Gg%lld",
                         (long long)k->physical, (long long)k->pid, (long long)k->context,
                         (long long)k->stream, (long long)k->graph_id);
        if (k->exec_id != NONE)
            snprintf(key + n, sizeof key - (size_t)n, "/X%lld", (long long)k->exec_id);
        pl.exec = tw_node_row(w, key);
    }
    snprintf(key, sizeof key, "D%lld/C%lld.%lld/A", (long long)k->physical, (long long)k->pid,
             (long long)k->context);
    pl.all_streams = tw_node_row(w, key);
    snprintf(key, sizeof key, "D%lld", (long long)k->physical);
    uint32_t device = tw_node_row(w, key);
    if (device && k->kind == 1)
        pl.summary = tw_child_row(w, device, "k", "Kernels (all streams)", 1);
    else if (device && (k->kind == 2 || k->kind == 3))
        pl.summary = tw_child_row(w, device, "m", "Memory (all streams)", 2);
    else if (device && k->kind == 5)
        pl.summary = tw_child_row(w, device, "v", "Video (all streams)", 3);
    /* device work runs side by side: concurrency is lanes, never nesting */
    tw_row_set_flat(w, pl.leaf);
    tw_row_set_flat(w, pl.exec);
    tw_row_set_flat(w, pl.all_streams);
    tw_row_set_flat(w, pl.summary);
    return pl;
}

/* A place met while reading: its key, and its rows once the first of its
 * activities is drawn (in time order, so that rows are declared as then). */
struct place_slot {
    struct place_key key;
    struct place pl;
    int found;
};

/* The places met so far, by key. */
struct place_cache {
    struct asys_strmap by_key; /* key -> index + 1 */
    struct place_slot *items;
    size_t count, cap;
    struct place_key last; /* runs of one place are common: the last answer */
    uint32_t last_index;
    int has_last;
    int kernels_by_hgtx; /* --group-by hgtx, asked once rather than per kernel */
};

/* The place index of an activity read, of kind `kind` (as read: an int);
 * UINT32_MAX when out of memory. */
static uint32_t place_of(struct walk *w, const struct activity_in *in, int kind,
                         struct place_cache *cache)
{
    struct place_key k;
    memset(&k, 0, sizeof k);
    k.kind = kind;
    k.physical = in->r->v[AP_PHYSICAL];
    k.pid = in->r->v[AP_PID];
    k.context = in->r->v[AP_CONTEXT];
    k.stream = in->r->v[AP_STREAM];
    k.graph_id = field_or_none(in, AP_GRAPH);
    k.exec_id = field_or_none(in, AP_EXEC);
    if (k.kind == 1 && !cache->kernels_by_hgtx) {
        k.group_a = in->r->v[AP_BASE_NAME];
        k.by_base = 1;
    } else if (k.kind == 1) {
        k.group_a = field_or_none(in, AP_DOMAIN);
        k.group_b = field_or_none(in, AP_TEXT);
    } else if (k.kind == 2) {
        k.group_a = in->r->v[AP_COPY_KIND];
    }
    if (cache->has_last && !memcmp(&k, &cache->last, sizeof k))
        return cache->last_index;
    uint32_t index = asys_strmap_get(&cache->by_key, (const char *)&k, sizeof k);
    if (index) {
        cache->last = k;
        cache->last_index = index - 1;
        cache->has_last = 1;
        return index - 1;
    }
    if (cache->count >= UINT32_MAX - 1 ||
        asys_grow(&cache->items, &cache->cap, cache->count, sizeof *cache->items, 64) != 0 ||
        asys_strmap_put(&cache->by_key, (const char *)&k, sizeof k, (uint32_t)cache->count + 1)) {
        tw_fail(w, "out of memory");
        return UINT32_MAX;
    }
    cache->items[cache->count] = (struct place_slot){.key = k};
    return (uint32_t)cache->count++;
}

/* The rows of place `index`, found the first time. */
static struct place place_rows(struct walk *w, struct place_cache *cache, uint32_t index)
{
    struct place_slot *slot = &cache->items[index];
    if (!slot->found) {
        slot->pl = find_place(w, &slot->key);
        slot->found = 1;
    }
    return slot->pl;
}

/* An activity as drawn, read in rowid order (72 bytes: a million fit in
 * 72 MB); NULL columns as the query read them (0) unless a flag says. */
struct activity {
    int64_t id, start, end; /* raw times */
    int64_t api_id; /* the launching call (0: none) */
    int64_t api_start; /* when that call began, when it is drawn (ACT_API_DRAWN) */
    int64_t name; /* kernel: its name id; memcpy: its copy kind; graph: its id */
    int64_t mangled_id; /* kernel: its mangled name's string id (ACT_NCU) */
    int64_t instance; /* kernel: its launch number (ACT_NCU) */
    uint32_t place; /* in the place cache */
    uint8_t kind; /* as ppu_activities.kind (0: another value) */
    uint8_t video_decode; /* video: a decode (else an encode) */
    uint8_t flags;
};
#define ACT_API_DRAWN 1 /* api_start is set */
#define ACT_NCU 2 /* a kernel whose mangled name and launch number are known */

/* Rows of a table looked up by id for the activities: asked in rising id
 * order (join_calls, join_kernels sort the ids), one scan in rowid order
 * answers them as a merge; an id below the scan's is looked up alone.  A
 * B-tree search per activity (SQL joins) was most of the reading. */
struct id_scan {
    sqlite3_stmt *scan; /* SELECT id, a, b FROM t ORDER BY id */
    sqlite3_stmt *point; /* SELECT id, a, b FROM t WHERE id = ? */
    int started, has_row;
    int64_t id; /* the scan's row's, read once a step */
};

static int id_scan_open(struct walk *w, struct id_scan *s, const char *columns, const char *table)
{
    char sql[256];
    memset(s, 0, sizeof *s);
    snprintf(sql, sizeof sql, "SELECT %s FROM %s ORDER BY 1", columns, table);
    s->scan = tw_prepare(w, sql);
    snprintf(sql, sizeof sql, "SELECT %s FROM %s WHERE rowid = ?", columns, table);
    s->point = s->scan ? tw_prepare(w, sql) : NULL;
    return s->point ? 0 : -1;
}

static void id_scan_close(struct id_scan *s)
{
    sqlite3_finalize(s->scan);
    sqlite3_finalize(s->point);
    memset(s, 0, sizeof *s);
}

static void id_scan_step(struct id_scan *s)
{
    s->has_row = sqlite3_step(s->scan) == SQLITE_ROW;
    if (s->has_row)
        s->id = sqlite3_column_int64(s->scan, 0);
}

/* The row of `id` (columns 1 and 2 into out), 0 when there is none. */
static int id_scan_find(struct id_scan *s, int64_t id, int64_t out[2])
{
    if (!s->started) {
        s->started = 1;
        id_scan_step(s);
    }
    sqlite3_stmt *st = s->scan;
    if (s->has_row && s->id > id) { /* behind the scan */
        st = s->point;
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, id);
        if (sqlite3_step(st) != SQLITE_ROW)
            return 0;
    }
    while (st == s->scan && s->has_row && s->id < id)
        id_scan_step(s);
    if (st == s->scan && (!s->has_row || s->id != id))
        return 0;
    out[0] = sqlite3_column_int64(st, 1);
    out[1] = sqlite3_column_int64(st, 2);
    return 1;
}

/* An id to look up for the activity at `index` (rowid order). */
struct key_list {
    struct asys_key_index *items;
    size_t count, cap;
};

static int keys_push(struct walk *w, struct key_list *l, int64_t key, uint32_t index)
{
    if (asys_grow(&l->items, &l->cap, l->count, sizeof *l->items, 4096) != 0)
        return tw_fail(w, "out of memory");
    l->items[l->count++] = (struct asys_key_index){key, index};
    return 0;
}

/* Sorts by key, keeping the order of equal keys. */
static int keys_radix_sort(struct walk *w, struct asys_key_index *items, size_t count)
{
    return asys_key_index_sort(items, count) == 0 ? 0 : tw_fail(w, "out of memory");
}

static int keys_sort(struct walk *w, struct key_list *l)
{
    return keys_radix_sort(w, l->items, l->count);
}

/* Flows of each activity (by index): refs[first[i] .. first[i + 1]). */
struct ref_table {
    uint32_t *first; /* NULL: none */
    struct flow_ref *refs;
};

/* The activities in the window (_load, _free). */
struct activity_list {
    struct activity *items; /* rowid order */
    struct asys_key_index *by_time; /* time order: by start, then id (rowid order) */
    size_t count, cap;
    struct place_cache places;
    struct asys_u64map copy_names; /* copy kind -> its name's text (owned) */
    /* read after them, in id order: a kernel's mangled name and launch
     * number, a launching call's times */
    struct key_list kernel_keys, call_keys;
    size_t launch_at; /* tw_activities_launched's place in call_keys */
    int calls_drawn;
    int whole_window; /* no --filter-time: every call is drawn */
    /* effective dependencies: the activity's own (when the depended-on work
     * started), and those on it (the waiters' times) */
    struct ref_table its_own, on_it;
    struct asys_u64map several; /* api id -> activities in the window, when more than one */
};

/* A memcpy's name by its copy kind ("[CUDA memcpy Host-to-Device]"), looked
 * up once per kind. */
static const char *copy_name(struct walk *w, struct activity_list *list, sqlite3_stmt *directions,
                             int64_t copy_kind)
{
    const uint64_t *known = asys_u64map_get(&list->copy_names, (uint64_t)copy_kind);
    if (known)
        return (const char *)(uintptr_t)*known;
    sqlite3_reset(directions);
    sqlite3_bind_int64(directions, 1, copy_kind);
    const char *direction = sqlite3_step(directions) == SQLITE_ROW
                                ? (const char *)sqlite3_column_text(directions, 0)
                                : NULL;
    char text[96];
    snprintf(text, sizeof text, "[CUDA memcpy %s]", direction ? direction : "Unknown");
    char *copy = strdup(text);
    if (!copy ||
        asys_u64map_put(&list->copy_names, (uint64_t)copy_kind, (uint64_t)(uintptr_t)copy) != 0) {
        free(copy);
        tw_fail(w, "out of memory");
        return "[CUDA memcpy Unknown]";
    }
    return copy;
}

/* An activity's name: a kernel's demangled name, or the operation as nsys
 * names it ("[CUDA memcpy Host-to-Device]", "[CUDA memset]", "[CUDA graph 3]"). */
static struct tl_name activity_name(struct walk *w, const struct activity *a,
                                    struct activity_list *list, sqlite3_stmt *directions,
                                    char *text, size_t size)
{
    if (a->kind == 1)
        return tw_string_name(w, a->name);
    if (a->kind == 2)
        return tw_synthetic_name(w, copy_name(w, list, directions, a->name));
    if (a->kind == 3)
        snprintf(text, size, "[CUDA memset]");
    else if (a->kind == 5)
        snprintf(text, size, "[Video %s]", a->video_decode ? "Decode" : "Encode");
    else
        snprintf(text, size, "[CUDA graph %lld]", (long long)a->name);
    return tw_synthetic_name(w, text);
}

/* What an activity's flows need besides its own row and the list's
 * dependencies: the PCCL and cuDNN/cuBLAS links, read alongside the
 * activities in their (start, id) order. */
struct activity_links {
    struct ref_cursor pccl; /* the PCCL operations that ran in it (timeline_pccl.c) */
    struct ref_cursor acompute; /* the cuDNN/cuBLAS call that launched it (timeline_acompute.c) */
};

static int links_open(struct walk *w, struct activity_links *c)
{
    memset(c, 0, sizeof *c);
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
    return 0;
}

static void links_close(struct activity_links *c)
{
    tw_cursor_close(&c->pccl);
    tw_cursor_close(&c->acompute);
}

/* Fills w->refs with the refs of activity `index`. */
static void refs_of(struct walk *w, const struct ref_table *t, uint32_t index)
{
    w->ref_count = 0;
    if (!t->first)
        return;
    for (uint32_t i = t->first[index]; i < t->first[index + 1]; i++)
        tw_refs_push(w, t->refs[i].id, t->refs[i].start, t->refs[i].end);
}

/* The flows of the current activity: from its API call, and along the
 * effective dependencies whose both ends are drawn. */
static struct tl_flows activity_flows(struct walk *w, const struct activity_list *list,
                                      uint32_t index, struct activity_links *links, int64_t start,
                                      int64_t end)
{
    const struct activity *a = &list->items[index];
    tw_flows_clear(w);
    int64_t id = a->id, raw_start = a->start;
    int one_to_one = 0;
    if (a->flags & ACT_API_DRAWN) { /* its call is drawn */
        const uint64_t *several = asys_u64map_get(&list->several, (uint64_t)a->api_id);
        enum flow_place place =
            tw_flows_add_in(w, TL_FLOW_HOST | (uint64_t)id, a->api_start, start, end);
        one_to_one = !several && place == FLOW_AT_BEGIN;
    }
    refs_of(w, &list->its_own, index);
    for (size_t i = 0; i < w->ref_count; i++)
        tw_flows_add_in(w, TL_FLOW_DEPENDENCY | w->refs[i].id, w->refs[i].start, start, end);
    tw_cursor_refs(w, &links->pccl, raw_start, id);
    for (size_t i = 0; i < w->ref_count; i++)
        tw_flows_add_in(w, TL_FLOW_PCCL | w->refs[i].id, w->refs[i].start, start, end);
    tw_cursor_refs(w, &links->acompute, raw_start, id);
    for (size_t i = 0; i < w->ref_count; i++)
        tw_flows_add_in(w, TL_FLOW_ACOMPUTE | w->refs[i].id, w->refs[i].start, start, end);
    refs_of(w, &list->on_it, index);
    tw_flows_add_out(w, TL_FLOW_DEPENDENCY, start);
    return tw_flows_of(w, one_to_one);
}

/* A kernel's Nsight Compute command (without the program's, the same for
 * all: kernel_profile_cmd prints it whole): 0 when the row is no kernel. */
static int kernel_ncu_command(struct walk *w, const struct activity *a, char *out, size_t size)
{
    if (a->kind != 1 || !(a->flags & ACT_NCU))
        return 0;
    static const char head[] = "ncu --kernel-name-base mangled --kernel-name regex:^";
    static const char skip[] = "$ --launch-skip ", tail[] = " --launch-count 1";
    /* built by hand, cut where snprintf cut it: two snprintf a kernel were a
     * tenth of drawing it */
    const char *mangled = tw_string_name(w, a->mangled_id).text;
    size_t n = sizeof head - 1;
    if (size < n + 16)
        return 0;
    memcpy(out, head, n);
    for (const char *c = mangled; *c && n + 8 < size; c++) {
        if (*c == '.') /* clones: foo.isra.0 */
            out[n++] = '\\';
        out[n++] = *c;
    }
    char rest[sizeof skip + sizeof tail + 24];
    size_t len = sizeof skip - 1;
    memcpy(rest, skip, len);
    len += asys_format_i64(rest + len, a->instance);
    memcpy(rest + len, tail, sizeof tail - 1);
    len += sizeof tail - 1;
    if (len > size - n - 1)
        len = size - n - 1;
    memcpy(out + n, rest, len);
    out[n + len] = '\0';
    return 1;
}

/* The activity query, with the HGTX range of each activity only when the
 * kernels are grouped by it (a join per activity otherwise wasted). */
/* clang-format off */
#define ACTIVITY_QUERY(hgtx_columns, hgtx_join) \
    "SELECT p.id, p.kind, p.physical, p.pid, p.context, p.stream, p.start_ns,\n" \
    "       p.end_ns, p.name_id, p.copy_kind, p.base_name_id, " hgtx_columns ",\n" \
    "       p.graph_id, p.graph_exec_id,\n" \
    /* 15, 16: the launching call, and (a video decode or encode) when its \
     * video API call began when that is drawn */ \
    "       p.api_id, CASE WHEN p.kind = 5 THEN\n" \
    "         (SELECT vc.start_ns FROM video_activities AS va\n" \
    "          JOIN video_api_calls AS vc ON vc.id = va.api_id\n" \
    "          WHERE va.id = p.source_id AND :video AND " IN_WINDOW("vc") ") END,\n" \
    /* 17: the kernel (its mangled name and launch number: join_kernels); \
     * 18: when the launching call began (derived.sql copies it); 19: a \
     * video activity's kind */ \
    "       p.source_id, p.api_start_ns, CASE WHEN p.kind = 5 THEN\n" \
    "         (SELECT va.kind FROM video_activities AS va WHERE va.id = p.source_id) END\n" \
    "FROM ppu_activities AS p\n" \
    hgtx_join \
    "WHERE " IN_WINDOW("p") "\n" \
    "ORDER BY p.id"
/* clang-format on */

/* The activities in the window, in rowid order, with everything their
 * slices need. */
static sqlite3_stmt *activity_query(struct walk *w)
{
    sqlite3_stmt *st =
        tw_prepare(w, !strcmp(w->o->group_kernels, "hgtx")
                          ? ACTIVITY_QUERY("e.domain_id, e.text_id",
                                           "LEFT JOIN hgtx_events AS e ON e.id = p.hgtx_range_id\n")
                          : ACTIVITY_QUERY("NULL, NULL", ""));
    if (!st)
        return NULL;
    sqlite3_bind_int(st, sqlite3_bind_parameter_index(st, ":video"),
                     tw_table_wanted(w, "video_api_calls"));
    return st;
}

/* The current row of the activity query as read (its columns by field). */
static void query_row(sqlite3_stmt *st, struct asys_page_row *r, struct activity_in *in)
{
    static const int column[AP_FIELDS] = {
        [AP_ID] = 0,      [AP_KIND] = 1,      [AP_PHYSICAL] = 2,   [AP_PID] = 3,
        [AP_CONTEXT] = 4, [AP_STREAM] = 5,    [AP_START] = 6,      [AP_END] = 7,
        [AP_NAME] = 8,    [AP_COPY_KIND] = 9, [AP_BASE_NAME] = 10, [AP_DOMAIN] = 11,
        [AP_TEXT] = 12,   [AP_GRAPH] = 13,    [AP_EXEC] = 14,      [AP_API] = 15,
        [AP_SOURCE] = 17, [AP_API_START] = 18};
    r->nulls = 0;
    for (int f = 0; f < AP_FIELDS; f++) {
        r->v[f] = sqlite3_column_int64(st, column[f]);
        if (!r->v[f] && sqlite3_column_type(st, column[f]) == SQLITE_NULL)
            r->nulls |= 1u << f;
    }
    in->r = r;
    int kind = sqlite3_column_int(st, 1);
    in->has_video_start = kind == 5 && sqlite3_column_type(st, 16) != SQLITE_NULL;
    in->video_start = in->has_video_start ? sqlite3_column_int64(st, 16) : 0;
    in->video_kind = kind == 5 ? sqlite3_column_int(st, 19) : 0;
}

/* An activity read as drawn. */
static void activity_read(struct walk *w, const struct activity_in *in, struct activity_list *list,
                          struct activity *a)
{
    memset(a, 0, sizeof *a);
    int kind = (int)in->r->v[AP_KIND];
    a->kind = kind >= 1 && kind <= 5 ? (uint8_t)kind : 0;
    a->id = in->r->v[AP_ID];
    a->start = in->r->v[AP_START];
    a->end = in->r->v[AP_END];
    a->name = in->r->v[kind == 1 ? AP_NAME : kind == 2 ? AP_COPY_KIND : AP_GRAPH];
    a->api_id = in->r->v[AP_API];
    /* a video activity's video call; its HGGC call, when drawn, comes first (join_calls) */
    if (kind == 5 && in->has_video_start) {
        a->api_start = in->video_start;
        a->flags |= ACT_API_DRAWN;
    }
    uint32_t index = (uint32_t)list->count;
    int has_call = !(in->r->nulls & (1u << AP_API));
    if (has_call)
        keys_push(w, &list->call_keys, a->api_id, index);
    /* without a window every call is drawn: its start is on the row already */
    if (has_call && list->calls_drawn && list->whole_window &&
        !(in->r->nulls & (1u << AP_API_START))) {
        a->api_start = in->r->v[AP_API_START];
        a->flags |= ACT_API_DRAWN;
    }
    if (kind == 1)
        keys_push(w, &list->kernel_keys, in->r->v[AP_SOURCE], index);
    a->video_decode = kind == 5 && in->video_kind == 1;
    a->place = place_of(w, in, kind, &list->places);
}

/* The calls that launched several of the activities (graph launches), with
 * how many; every other call launched one.  The keys are sorted. */
static int count_shared_launches(struct walk *w, struct activity_list *list)
{
    const struct key_list *l = &list->call_keys;
    for (size_t i = 0, run; i < l->count; i += run) {
        for (run = 1; i + run < l->count && l->items[i + run].key == l->items[i].key; run++)
            ;
        if (run > 1 && asys_u64map_put(&list->several, (uint64_t)l->items[i].key, run) != 0)
            return tw_fail(w, "out of memory");
    }
    return 0;
}

/* The launching calls: how many activities each launched, and when the
 * drawn ones began. */
static int join_calls(struct walk *w, struct activity_list *list)
{
    struct id_scan calls;
    if (keys_sort(w, &list->call_keys) != 0 || count_shared_launches(w, list) != 0)
        return -1;
    if (!list->call_keys.count || !list->calls_drawn || list->whole_window)
        return 0;
    if (id_scan_open(w, &calls, "id, start_ns, end_ns", "hggc_api_calls") != 0)
        return -1;
    for (size_t i = 0; i < list->call_keys.count; i++) {
        const struct asys_key_index *k = &list->call_keys.items[i];
        int64_t call[2];
        if (id_scan_find(&calls, k->key, call) && tw_in_window(w, call[0], call[1])) {
            list->items[k->index].api_start = call[0];
            list->items[k->index].flags |= ACT_API_DRAWN;
        }
    }
    id_scan_close(&calls);
    return 0;
}

/* The kernels' mangled names and launch numbers (their ncu commands), both
 * in ppu_kernel_instances: one narrow table scanned, not the wide ppu_kernels. */
static int join_kernels(struct walk *w, struct activity_list *list)
{
    struct id_scan instances;
    if (!list->kernel_keys.count)
        return 0;
    if (keys_sort(w, &list->kernel_keys) != 0 ||
        id_scan_open(w, &instances, "kernel_id, mangled_name_id, instance",
                     "ppu_kernel_instances") != 0)
        return -1;
    for (size_t i = 0; i < list->kernel_keys.count; i++) {
        const struct asys_key_index *k = &list->kernel_keys.items[i];
        int64_t kernel[2];
        if (id_scan_find(&instances, k->key, kernel)) {
            list->items[k->index].mangled_id = kernel[0];
            list->items[k->index].instance = kernel[1];
            list->items[k->index].flags |= ACT_NCU;
        }
    }
    id_scan_close(&instances);
    return 0;
}

/* The index of activity `id` in the list (rowid order), UINT32_MAX when it
 * is not drawn. */
static uint32_t activity_index(const struct activity_list *list, int64_t id)
{
    /* ids are mostly dense from the first: try id's place so, then search */
    if (list->count && id >= list->items[0].id) {
        uint64_t guess = (uint64_t)id - (uint64_t)list->items[0].id;
        if (guess < list->count && list->items[guess].id == id)
            return (uint32_t)guess;
    }
    size_t lo = 0, hi = list->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (list->items[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < list->count && list->items[lo].id == id ? (uint32_t)lo : UINT32_MAX;
}

/* A dependency flow of activity `owner` (UINT32_MAX: dropped), as read. */
struct link {
    uint32_t owner;
    struct flow_ref ref;
};

struct link_list {
    struct link *items;
    size_t count, cap;
};

static int links_push(struct walk *w, struct link_list *l, uint32_t owner, int64_t id,
                      int64_t start, int64_t end)
{
    if (l->count >= UINT32_MAX ||
        asys_grow(&l->items, &l->cap, l->count, sizeof *l->items, 4096) != 0)
        return tw_fail(w, "out of memory");
    l->items[l->count++] = (struct link){owner, {(uint64_t)id, start, end}};
    return 0;
}

/* The links grouped by owner, in the order read (dependency id), as a table. */
static int table_build(struct walk *w, size_t count, const struct link_list *l, struct ref_table *t)
{
    t->first = calloc(count + 1, sizeof *t->first);
    t->refs = malloc((l->count ? l->count : 1) * sizeof *t->refs);
    if (!t->first || !t->refs)
        return tw_fail(w, "out of memory");
    for (size_t i = 0; i < l->count; i++)
        if (l->items[i].owner != UINT32_MAX)
            t->first[l->items[i].owner + 1]++;
    for (size_t i = 0; i < count; i++)
        t->first[i + 1] += t->first[i];
    /* filled at first[owner], which moves on to the next owner's start */
    for (size_t i = 0; i < l->count; i++)
        if (l->items[i].owner != UINT32_MAX)
            t->refs[t->first[l->items[i].owner]++] = l->items[i].ref;
    for (size_t i = count; i > 0; i--)
        t->first[i] = t->first[i - 1];
    t->first[0] = 0;
    return 0;
}

/* Host waits on the work (dependencies without a waiting activity): their
 * calls' times, when the calls are drawn; else they are dropped. */
static int join_waits(struct walk *w, struct key_list *waits, struct link_list *on_it)
{
    struct id_scan calls;
    if (!waits->count)
        return 0;
    if (keys_sort(w, waits) != 0 ||
        id_scan_open(w, &calls, "id, start_ns, end_ns", "hggc_api_calls") != 0)
        return -1;
    for (size_t i = 0; i < waits->count; i++) {
        struct link *l = &on_it->items[waits->items[i].index];
        int64_t call[2];
        if (id_scan_find(&calls, waits->items[i].key, call) && tw_in_window(w, call[0], call[1]))
            l->ref = (struct flow_ref){l->ref.id, call[0], call[1]};
        else
            l->owner = UINT32_MAX;
    }
    id_scan_close(&calls);
    return 0;
}

/* One effective dependency: on its waiter's list (when the depended-on
 * work is drawn) and on the depended-on work's (when the waiter is: an
 * activity, or a host wait's call, known later). */
static int dep_read(struct walk *w, sqlite3_stmt *st, struct activity_list *list,
                    struct link_list *own, struct link_list *on, struct key_list *waits)
{
    int64_t id = sqlite3_column_int64(st, 0);
    uint32_t waiter = sqlite3_column_type(st, 1) == SQLITE_NULL
                          ? UINT32_MAX
                          : activity_index(list, sqlite3_column_int64(st, 1));
    uint32_t on_work = activity_index(list, sqlite3_column_int64(st, 2));
    if (on_work == UINT32_MAX)
        return 0;
    const struct activity *q = &list->items[on_work];
    if (waiter != UINT32_MAX) {
        const struct activity *a = &list->items[waiter];
        if (links_push(w, own, waiter, id, q->start, q->start) != 0)
            return -1;
        return links_push(w, on, on_work, id, a->start, a->end);
    }
    /* a host wait's end lies on its API call: drawn only when the calls are */
    if (!list->calls_drawn || sqlite3_column_int64(st, 3) != 5 ||
        sqlite3_column_type(st, 4) == SQLITE_NULL)
        return 0;
    if (keys_push(w, waits, sqlite3_column_int64(st, 4), (uint32_t)on->count) != 0)
        return -1;
    return links_push(w, on, on_work, id, 0, 0);
}

/* The effective dependencies whose both ends are drawn, read in one scan
 * (in id order, as the flows of one activity go) instead of two SQL sorts
 * by the activities' start. */
static int deps_load(struct walk *w, struct activity_list *list)
{
    struct link_list own = {0}, on = {0};
    struct key_list waits = {0};
    sqlite3_stmt *st = NULL;
    int rc = 0, step = SQLITE_DONE;
    if (!tw_table_wanted(w, "ppu_deps"))
        goto out;
    st = tw_prepare(w, "SELECT id, activity_id, depends_on, kind, wait_api_id FROM ppu_deps\n"
                       "WHERE effective ORDER BY id");
    rc = st ? 0 : -1;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW)
        rc = dep_read(w, st, list, &own, &on, &waits);
    if (rc == 0 && step != SQLITE_DONE)
        rc = tw_fail(w, sqlite3_errmsg(w->db));
    if (rc == 0)
        rc = join_waits(w, &waits, &on);
    if (rc == 0)
        rc = table_build(w, list->count, &own, &list->its_own);
    if (rc == 0)
        rc = table_build(w, list->count, &on, &list->on_it);
out:
    sqlite3_finalize(st);
    free(own.items);
    free(on.items);
    free(waits.items);
    return rc;
}

/* Puts the activities in (start, id) order: mostly they already are. */
static int activities_sort(struct walk *w, struct activity_list *list)
{
    list->by_time = malloc((list->count ? list->count : 1) * sizeof *list->by_time);
    if (!list->by_time)
        return tw_fail(w, "out of memory");
    for (size_t i = 0; i < list->count; i++)
        list->by_time[i] = (struct asys_key_index){list->items[i].start, (uint32_t)i};
    return keys_radix_sort(w, list->by_time, list->count);
}

/* An activity read into the list. */
static int activity_add(struct walk *w, struct activity_list *list, const struct activity_in *in)
{
    if (list->count >= UINT32_MAX ||
        asys_grow(&list->items, &list->cap, list->count, sizeof *list->items, 4096) != 0)
        return tw_fail(w, "out of memory");
    activity_read(w, in, list, &list->items[list->count]);
    list->count++;
    return w->failed ? -1 : 0;
}

/* The activities in the window from the activity query. */
static int activities_query(struct walk *w, struct activity_list *list)
{
    struct asys_page_row row;
    struct activity_in in;
    sqlite3_stmt *st = activity_query(w);
    int rc = st ? 0 : -1, step = SQLITE_DONE;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        query_row(st, &row, &in);
        rc = activity_add(w, list, &in);
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = tw_fail(w, sqlite3_errmsg(w->db));
    sqlite3_finalize(st);
    return rc;
}

/* An activity of ppu_activity_pages (in the window) into the list. */
static int page_activity(struct walk *w, const struct asys_page_row *row, void *list)
{
    struct activity_in in = {row, 0, 0, 0};
    return activity_add(w, list, &in);
}

/* Reads the activities in the window (in id order: no sort in SQLite);
 * their launching calls' ids stay sorted for tw_activities_launched. */
static int activities_load(struct walk *w, struct activity_list *list)
{
    memset(list, 0, sizeof *list);
    asys_strmap_init(&list->places.by_key);
    list->places.kernels_by_hgtx = !strcmp(w->o->group_kernels, "hgtx");
    asys_u64map_init(&list->copy_names);
    asys_u64map_init(&list->several);
    list->calls_drawn = tw_table_wanted(w, "hggc_api_calls");
    list->whole_window = w->o->filter_start == LLONG_MIN && w->o->filter_end == LLONG_MAX;
    /* the pages, unless video work needs the query's video columns */
    static const struct tw_pages pages = {"ppu_activities", "ppu_activity_pages", AP_FIELDS,
                                          AP_START, AP_END};
    int rc = tw_pages_usable(w, &pages, "NOT EXISTS (SELECT 1 FROM video_activities)")
                 ? tw_pages_walk(w, &pages, page_activity, list)
                 : activities_query(w, list);
    if (rc == 0 && join_calls(w, list) == 0 && join_kernels(w, list) == 0)
        rc = deps_load(w, list);
    else
        rc = -1;
    free(list->kernel_keys.items);
    list->kernel_keys = (struct key_list){NULL, 0, 0};
    return rc;
}

static void activities_free(struct activity_list *list)
{
    for (size_t i = 0; i < list->copy_names.capacity; i++)
        if (list->copy_names.used[i])
            free((void *)(uintptr_t)list->copy_names.values[i]);
    asys_u64map_free(&list->copy_names);
    asys_strmap_free(&list->places.by_key);
    free(list->places.items);
    free(list->items);
    free(list->by_time);
    free(list->kernel_keys.items);
    free(list->call_keys.items);
    asys_u64map_free(&list->several);
    free(list->its_own.first);
    free(list->its_own.refs);
    free(list->on_it.first);
    free(list->on_it.refs);
}

/* One activity on each row that shows it: its leaf (with its flows), its
 * graph exec, [All Stream] and the device's summary row. */
static void draw_activity(struct walk *w, uint32_t index, struct activity_list *list,
                          struct activity_links *links, sqlite3_stmt *directions)
{
    const struct activity *a = &list->items[index];
    struct place pl = place_rows(w, &list->places, a->place);
    if (!pl.leaf)
        return;
    char text[96];
    struct tl_name name = activity_name(w, a, list, directions, text, sizeof text);
    int64_t start = tw_clip_start(w, a->start);
    int64_t end = tw_clip_end(w, a->end, start);
    struct tl_flows f = activity_flows(w, list, index, links, start, end);
    struct tl_args args = {.count = 0};
    char ncu[600];
    if (kernel_ncu_command(w, a, ncu, sizeof ncu))
        tw_arg_string(&args, "ncu", ncu);
    tw_emit_slice(w, pl.leaf, start, end, name, tw_category(w, "hggc"), &f,
                  args.count ? &args : NULL);
    uint32_t also[] = {pl.exec, pl.all_streams, pl.summary};
    for (size_t i = 0; i < sizeof also / sizeof also[0]; i++)
        if (also[i] && also[i] != pl.leaf)
            tw_emit_slice(w, also[i], start, end, name, tw_category(w, "hggc"), NULL, NULL);
}

int tw_activities_load(struct walk *w)
{
    if (w->activities)
        return 0;
    w->activities = malloc(sizeof *w->activities);
    if (!w->activities)
        return tw_fail(w, "out of memory");
    return activities_load(w, w->activities);
}

/* Puts w->refs (pushed in id order) in (start, end, id) order, as the
 * activities' index by call orders them: insertion, runs are short (a graph
 * launch's work). */
static void refs_by_time(struct walk *w)
{
    for (size_t i = 1; i < w->ref_count; i++) {
        struct flow_ref r = w->refs[i];
        size_t j = i;
        for (; j > 0 && (w->refs[j - 1].start > r.start ||
                         (w->refs[j - 1].start == r.start && w->refs[j - 1].end > r.end));
             j--)
            w->refs[j] = w->refs[j - 1];
        w->refs[j] = r;
    }
}

size_t tw_activities_launched(struct walk *w, int64_t api_id)
{
    w->ref_count = 0;
    if (!w->activities)
        return 0;
    const struct key_list *l = &w->activities->call_keys;
    size_t at = w->activities->launch_at;
    while (at < l->count && l->items[at].key < api_id)
        at++;
    w->activities->launch_at = at;
    for (; at < l->count && l->items[at].key == api_id; at++) {
        const struct activity *a = &w->activities->items[l->items[at].index];
        tw_refs_push(w, (uint64_t)a->id, a->start, a->end);
    }
    refs_by_time(w);
    return w->ref_count;
}

void tw_activities_free(struct walk *w)
{
    if (!w->activities)
        return;
    activities_free(w->activities);
    free(w->activities);
    w->activities = NULL;
}

/* Every activity in time order, on each row that shows it. */
int tw_walk_activities(struct walk *w)
{
    struct activity_list *list = NULL;
    struct activity_links links;
    int links_opened = 0;
    sqlite3_stmt *directions = NULL;
    if (tw_activities_load(w) != 0)
        goto out;
    list = w->activities;
    /* the calls' ids are done with: their room goes to the time order */
    free(list->call_keys.items);
    list->call_keys = (struct key_list){NULL, 0, 0};
    if (activities_sort(w, list) != 0)
        goto out;
    directions = tw_prepare(w, "SELECT direction FROM hggc_copy_kinds WHERE id = ?");
    if (!directions)
        goto out;
    links_opened = 1; /* closable even when opening fails half way */
    if (links_open(w, &links) != 0)
        goto out;
    for (size_t i = 0; i < list->count && !w->failed; i++)
        draw_activity(w, list->by_time[i].index, list, &links, directions);
out:
    if (links_opened)
        links_close(&links);
    sqlite3_finalize(directions);
    tw_activities_free(w);
    return w->failed ? -1 : 0;
}
