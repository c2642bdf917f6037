/* The timeline walk's rows and lanes, names, queries and flows. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timeline_walk.h"
#include "activity_pages.h"
#include "grow.h"

/* Names that are not strings of the database get ids above theirs. */
#define SYNTHETIC_NAME_BASE (1ull << 40)
#define PROGRESS_EVERY 65536

/* ---- rows and lanes ----------------------------------------------------------- */

struct row *tw_row_at(struct walk *w, uint32_t id)
{
    return id ? &w->rows[id - 1] : NULL;
}

int tw_fail(struct walk *w, const char *what)
{
    if (!w->failed)
        asys_fail(w->err, "%s", what);
    w->failed = 1;
    return -1;
}

/* A backend could not write: the reason is in errno (a full disk...). */
int tw_sink_failed(struct walk *w)
{
    int e = errno;
    if (!w->failed)
        asys_fail(w->err, "%s", e ? strerror(e) : "write failed");
    w->failed = 1;
    return -1;
}

static int declare(struct walk *w, uint64_t uuid, uint64_t parent, enum tl_track_kind kind,
                   const char *name, const char *label, uint32_t order, uint32_t pid, uint32_t tid,
                   uint32_t lane, uint64_t sort_index)
{
    struct tl_track t = {uuid,
                         parent,
                         kind,
                         name,
                         label,
                         order,
                         pid,
                         tid,
                         lane,
                         sort_index,
                         kind == TL_COUNTER ? w->counter_axis : NULL,
                         kind == TL_COUNTER ? w->counter_unit : NULL,
                         kind == TL_PROCESS ? w->process_ppid : 0,
                         kind == TL_PROCESS ? w->process_cmdline : NULL};
    w->stats->tracks++;
    if (w->ops->track(w->sink, &t) != 0)
        return tw_sink_failed(w);
    return 0;
}

/* A row's order under its parent, packed into the parent's sort index (8
 * bits a level: backends that need one number per track sort by it). */
static uint64_t sort_under(uint64_t parent_sort, uint32_t order)
{
    return (parent_sort << 8) | (order > 255 ? 255 : order);
}

/* Creates a row (and declares its track) under `key`; returns its id or 0. */
uint32_t tw_row_new(struct walk *w, const void *key, size_t key_len, uint64_t parent,
                    uint64_t parent_sort, enum tl_track_kind kind, const char *name, uint32_t order,
                    uint32_t pid)
{
    return tw_row_new_entity(w, key, key_len, parent, parent_sort, kind, name, NULL, order, pid, 0);
}

uint32_t tw_row_new_entity(struct walk *w, const void *key, size_t key_len, uint64_t parent,
                           uint64_t parent_sort, enum tl_track_kind kind, const char *name,
                           const char *label, uint32_t order, uint32_t pid, uint32_t tid)
{
    if (asys_grow(&w->rows, &w->row_cap, w->row_count, sizeof *w->rows, 64))
        return tw_fail(w, "out of memory"), 0;
    struct row *r = &w->rows[w->row_count];
    memset(r, 0, sizeof *r);
    r->parent = parent;
    r->name = strdup(name);
    r->order = order;
    r->sort_index = kind == TL_PROCESS || kind == TL_GROUP ? order : sort_under(parent_sort, order);
    r->lanes = calloc(1, sizeof *r->lanes);
    if (!r->name || !r->lanes) {
        free(r->name);
        free(r->lanes);
        return tw_fail(w, "out of memory"), 0;
    }
    r->lanes[0].uuid = ++w->next_uuid;
    r->lanes[0].last_ts = INT64_MIN;
    r->lane_count = 1;
    uint32_t id = (uint32_t)++w->row_count;
    if (asys_strmap_put(&w->rows_by_key, key, key_len, id) != 0)
        return tw_fail(w, "out of memory"), 0;
    if (declare(w, r->lanes[0].uuid, parent, kind, name, label, order, pid, tid, 0,
                r->sort_index) != 0)
        return 0;
    return id;
}

uint32_t tw_counter_row_new(struct walk *w, const void *key, size_t key_len, uint64_t parent,
                            uint64_t parent_sort, const char *name, uint32_t order,
                            const char *axis, const char *unit)
{
    w->counter_axis = axis;
    w->counter_unit = unit;
    uint32_t id = tw_row_new(w, key, key_len, parent, parent_sort, TL_COUNTER, name, order, 0);
    w->counter_axis = NULL;
    w->counter_unit = NULL;
    return id;
}

uint32_t tw_row_find(struct walk *w, const void *key, size_t key_len)
{
    return asys_strmap_get(&w->rows_by_key, key, key_len);
}

static void open_slice_free(struct open_slice *o)
{
    if (o->late_count)
        free((char *)(uintptr_t)o->late_name.text);
    free(o->late);
    o->late = NULL;
    o->late_count = 0;
}

/* Ends the slices of `l` that are over by `until`: the end, then, for a
 * slice with late flows, the instant at its end that they end on (after
 * their sources began: a flow is drawn from the slice that starts first).
 * The instant follows the end, beside the slice and not inside it, as a
 * JSON instant at a complete event's end is read. */
static void lane_pop(struct walk *w, struct lane *l, int64_t until)
{
    while (l->depth && l->open[l->depth - 1].end <= until) {
        struct open_slice *o = &l->open[--l->depth];
        if (o->end > l->last_ts)
            l->last_ts = o->end;
        if (w->ops->end(w->sink, l->uuid, o->end) != 0)
            tw_sink_failed(w);
        if (o->late_count) {
            struct tl_flows f = {NULL, 0, o->late, o->late_count, NULL, 0, 0};
            w->stats->instants++;
            if (w->ops->instant(w->sink, l->uuid, o->end, o->late_name, o->late_cat, &f, NULL))
                tw_sink_failed(w);
        }
        open_slice_free(o);
    }
}

static int lane_push(struct walk *w, struct lane *l, int64_t end, struct tl_name name,
                     struct tl_category cat, const struct tl_flows *flows)
{
    if (asys_grow(&l->open, &l->cap, l->depth, sizeof *l->open, 8))
        return tw_fail(w, "out of memory");
    struct open_slice *o = &l->open[l->depth];
    memset(o, 0, sizeof *o);
    o->end = end;
    if (flows && flows->late_count) {
        char *text = strdup(name.text);
        o->late = malloc(flows->late_count * sizeof *o->late);
        if (!o->late || !text) {
            free(o->late);
            free(text);
            o->late = NULL;
            return tw_fail(w, "out of memory");
        }
        memcpy(o->late, flows->late, flows->late_count * sizeof *o->late);
        o->late_count = flows->late_count;
        o->late_name = (struct tl_name){name.iid, text};
        o->late_cat = cat;
    }
    l->depth++;
    return 0;
}

/* The lane of row `r` that can take [start, end]: time order kept, nesting kept. */
static struct lane *lane_for(struct walk *w, struct row *r, int64_t start, int64_t end)
{
    for (uint32_t i = 0; i < r->lane_count; i++) {
        struct lane *l = &r->lanes[i];
        lane_pop(w, l, start);
        if (l->last_ts <= start && (!l->depth || (!r->flat && l->open[l->depth - 1].end >= end)))
            return l;
    }
    struct lane *bigger = realloc(r->lanes, (r->lane_count + 1) * sizeof *bigger);
    if (!bigger)
        return tw_fail(w, "out of memory"), NULL;
    r->lanes = bigger;
    struct lane *l = &r->lanes[r->lane_count];
    memset(l, 0, sizeof *l);
    l->uuid = ++w->next_uuid;
    l->last_ts = INT64_MIN;
    if (declare(w, l->uuid, r->parent, TL_PLAIN, r->name, NULL, r->order, 0, 0, r->lane_count,
                r->sort_index) != 0)
        return NULL;
    r->lane_count++;
    return l;
}

void tw_row_set_flat(struct walk *w, uint32_t id)
{
    struct row *r = tw_row_at(w, id);
    if (r)
        r->flat = 1;
}

void tw_progress(struct walk *w)
{
    if (++w->done % PROGRESS_EVERY == 0 && w->o->progress && w->total)
        w->o->progress(w->o->progress_ctx, (double)w->done / (double)w->total);
}

int tw_emit_slice(struct walk *w, uint32_t row_id, int64_t start, int64_t end, struct tl_name name,
                  struct tl_category cat, const struct tl_flows *flows, const struct tl_args *args)
{
    struct row *r = tw_row_at(w, row_id);
    if (!r || w->failed)
        return -1;
    if (start < w->o->filter_start)
        start = w->o->filter_start;
    if (end > w->o->filter_end)
        end = w->o->filter_end;
    if (end < start)
        end = start;
    struct lane *l = lane_for(w, r, start, end);
    if (!l || lane_push(w, l, end, name, cat, flows) != 0)
        return -1;
    l->last_ts = start;
    w->stats->slices++;
    struct tl_flows on_begin; /* late flows end later, on the instant at the end */
    if (flows) {
        w->stats->flows += flows->out_count;
        on_begin = *flows;
        on_begin.late = NULL;
        on_begin.late_count = 0;
    }
    tw_progress(w);
    if (args && !args->count)
        args = NULL;
    if (w->ops->begin(w->sink, l->uuid, start, end, name, cat, flows ? &on_begin : NULL, args))
        return tw_sink_failed(w);
    return 0;
}

int tw_emit_instant(struct walk *w, uint32_t row_id, int64_t ts, struct tl_name name,
                    struct tl_category cat, const struct tl_args *args)
{
    struct row *r = tw_row_at(w, row_id);
    if (!r || w->failed)
        return -1;
    struct lane *l = lane_for(w, r, ts, ts);
    if (!l)
        return -1;
    l->last_ts = ts;
    w->stats->instants++;
    tw_progress(w);
    if (args && !args->count)
        args = NULL;
    if (w->ops->instant(w->sink, l->uuid, ts, name, cat, NULL, args) != 0)
        return tw_sink_failed(w);
    return 0;
}

static struct tl_arg *arg_slot(struct tl_args *a, const char *name, enum tl_arg_type type)
{
    if (a->count >= TL_MAX_ARGS)
        return NULL;
    struct tl_arg *arg = &a->items[a->count++];
    arg->name = name;
    arg->type = type;
    return arg;
}

void tw_arg_int(struct tl_args *a, const char *name, int64_t v)
{
    struct tl_arg *arg = arg_slot(a, name, TL_ARG_INT);
    if (arg)
        arg->value.i = v;
}

void tw_arg_uint(struct tl_args *a, const char *name, uint64_t v)
{
    struct tl_arg *arg = arg_slot(a, name, TL_ARG_UINT);
    if (arg)
        arg->value.u = v;
}

void tw_arg_double(struct tl_args *a, const char *name, double v)
{
    struct tl_arg *arg = arg_slot(a, name, TL_ARG_DOUBLE);
    if (arg)
        arg->value.d = v;
}

void tw_arg_string(struct tl_args *a, const char *name, const char *v)
{
    struct tl_arg *arg = arg_slot(a, name, TL_ARG_STRING);
    if (arg)
        arg->value.s = v ? v : "";
}

void tw_rows_finish(struct walk *w)
{
    for (size_t i = 0; i < w->row_count; i++)
        for (uint32_t j = 0; j < w->rows[i].lane_count; j++)
            lane_pop(w, &w->rows[i].lanes[j], INT64_MAX);
}

void tw_rows_free(struct walk *w)
{
    for (size_t i = 0; i < w->row_count; i++) {
        for (uint32_t j = 0; j < w->rows[i].lane_count; j++) {
            struct lane *l = &w->rows[i].lanes[j];
            for (uint32_t k = 0; k < l->depth; k++)
                open_slice_free(&l->open[k]); /* left open by a failure */
            free(l->open);
        }
        free(w->rows[i].lanes);
        free(w->rows[i].name);
    }
    free(w->rows);
}

/* ---- names --------------------------------------------------------------------- */

/* The text of database string `id` (cached; the map owns the copies). */
struct tl_name tw_string_name(struct walk *w, int64_t id)
{
    struct tl_name n = {(uint64_t)id, ""};
    if (id <= 0)
        return n;
    if (id == w->last_name_id) { /* runs of one name are common */
        n.text = w->last_name_text;
        return n;
    }
    uint64_t *cached = asys_u64map_get(&w->names, (uint64_t)id);
    if (cached) {
        n.text = (const char *)(uintptr_t)*cached;
        w->last_name_id = id;
        w->last_name_text = n.text;
        return n;
    }
    sqlite3_reset(w->string_text);
    sqlite3_bind_int64(w->string_text, 1, id);
    const char *text = sqlite3_step(w->string_text) == SQLITE_ROW
                           ? (const char *)sqlite3_column_text(w->string_text, 0)
                           : NULL;
    char *copy = strdup(text ? text : "");
    if (!copy || asys_u64map_put(&w->names, (uint64_t)id, (uint64_t)(uintptr_t)copy) != 0) {
        free(copy);
        tw_fail(w, "out of memory");
        return n;
    }
    n.text = copy;
    return n;
}

/* A name that is not a database string ("[CUDA memset]"): interned by text. */
struct tl_name tw_synthetic_name(struct walk *w, const char *text)
{
    size_t len = strlen(text);
    uint32_t id = asys_strmap_get(&w->synthetic, text, len);
    if (!id) {
        id = ++w->synthetic_count;
        if (asys_strmap_put(&w->synthetic, text, len, id) != 0)
            tw_fail(w, "out of memory");
    }
    struct tl_name n = {SYNTHETIC_NAME_BASE + id, text};
    return n;
}

struct tl_category tw_category(struct walk *w, const char *name)
{
    /* the callers' literals: the same pointer each time, mostly; the texts
     * are unique, so the first of either match is the same */
    for (uint32_t i = 0; i < w->category_count; i++)
        if (w->categories[i] == name)
            return (struct tl_category){i, name};
    for (uint32_t i = 0; i < w->category_count; i++)
        if (!strcmp(w->categories[i], name))
            return (struct tl_category){i, w->categories[i]};
    if (w->category_count == TL_MAX_CATEGORIES) /* more collectors than a sink can tell apart */
        return (struct tl_category){TL_MAX_CATEGORIES - 1, w->categories[TL_MAX_CATEGORIES - 1]};
    w->categories[w->category_count] = name;
    return (struct tl_category){w->category_count++, name};
}

void tw_names_free(struct walk *w)
{
    for (size_t i = 0; i < w->names.capacity; i++)
        if (w->names.used[i])
            free((void *)(uintptr_t)w->names.values[i]);
    asys_u64map_free(&w->names);
    asys_strmap_free(&w->synthetic);
}

/* ---- queries --------------------------------------------------------------------- */

int tl_table_matches(pcre2_code *tables, const char *table)
{
    if (!tables)
        return 1;
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(tables, NULL);
    int rc =
        md ? pcre2_match(tables, (PCRE2_SPTR)table, PCRE2_ZERO_TERMINATED, 0, 0, md, NULL) : -1;
    pcre2_match_data_free(md);
    return rc >= 0;
}

int tw_table_wanted(struct walk *w, const char *table)
{
    return tl_table_matches(w->o->tables, table);
}

sqlite3_stmt *tw_prepare(struct walk *w, const char *sql)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(w->db, sql, -1, &st, NULL) != SQLITE_OK) {
        asys_fail(w->err, "%s", sqlite3_errmsg(w->db));
        w->failed = 1;
        sqlite3_finalize(st);
        return NULL;
    }
    int lo = sqlite3_bind_parameter_index(st, ":lo"), hi = sqlite3_bind_parameter_index(st, ":hi");
    if (lo > 0)
        sqlite3_bind_int64(st, lo, w->o->filter_start);
    if (hi > 0)
        sqlite3_bind_int64(st, hi, w->o->filter_end);
    int all = sqlite3_bind_parameter_index(st, ":all");
    if (all > 0)
        sqlite3_bind_int(st, all, w->o->filter_start == LLONG_MIN && w->o->filter_end == LLONG_MAX);
    return st;
}

int tw_ids_push(struct walk *w, struct id_list *l, uint64_t id)
{
    if (asys_grow(&l->ids, &l->cap, l->count, sizeof *l->ids, 64))
        return tw_fail(w, "out of memory");
    l->ids[l->count++] = id;
    return 0;
}

void tw_refs_push(struct walk *w, uint64_t id, int64_t start, int64_t end)
{
    if (asys_grow(&w->refs, &w->ref_cap, w->ref_count, sizeof *w->refs, 64)) {
        tw_fail(w, "out of memory");
        return;
    }
    w->refs[w->ref_count++] = (struct flow_ref){id, start, end};
}

/* Prepared only: parameters may still be bound before the first tw_cursor_refs. */
int tw_cursor_open(struct walk *w, struct ref_cursor *c, const char *sql)
{
    c->st = tw_prepare(w, sql);
    c->started = c->has_row = 0;
    return c->st ? 0 : -1;
}

/* Steps to the next row and reads its columns once (the comparisons and
 * the refs read them again and again otherwise: 1.2 M rows for the calls). */
static void cursor_step(struct ref_cursor *c)
{
    c->has_row = sqlite3_step(c->st) == SQLITE_ROW;
    for (int i = 0; c->has_row && i < 5; i++)
        c->row[i] = sqlite3_column_int64(c->st, i);
}

static int cursor_before(const struct ref_cursor *c, int64_t key_a, int64_t key_b)
{
    return c->row[0] < key_a || (c->row[0] == key_a && c->row[1] < key_b);
}

/* Fills w->refs with the cursor's rows of key (key_a, key_b); returns how many. */
size_t tw_cursor_refs(struct walk *w, struct ref_cursor *c, int64_t key_a, int64_t key_b)
{
    w->ref_count = 0;
    if (!c->started && c->st) {
        c->started = 1;
        cursor_step(c);
    }
    while (c->has_row && cursor_before(c, key_a, key_b))
        cursor_step(c);
    while (c->has_row && c->row[0] == key_a && c->row[1] == key_b) {
        tw_refs_push(w, (uint64_t)c->row[2], c->row[3], c->row[4]);
        cursor_step(c);
    }
    return w->ref_count;
}

void tw_cursor_close(struct ref_cursor *c)
{
    sqlite3_finalize(c->st);
    c->st = NULL;
    c->started = c->has_row = 0;
}

int tw_in_window(const struct walk *w, int64_t start, int64_t end)
{
    return end >= w->o->filter_start && start <= w->o->filter_end;
}

/* Times as drawn: clipped to the --filter-time window. */
int64_t tw_clip_start(const struct walk *w, int64_t ts)
{
    return ts < w->o->filter_start ? w->o->filter_start : ts;
}

int64_t tw_clip_end(const struct walk *w, int64_t ts, int64_t start)
{
    if (ts > w->o->filter_end)
        ts = w->o->filter_end;
    return ts < start ? start : ts;
}

/* Where a flow ends on its destination slice.  Consumers bind flows in time
 * order (Perfetto's importer, Chrome's), so the end must come after the
 * source slice begins: at the destination's begin when that is later, else
 * at its end (device work stamped a little before its launch call, a
 * synchronizing call that began before the work it waits for); nowhere when
 * the destination is over before the source begins. */
enum flow_place tw_flow_place(int64_t source_start, int64_t dest_start, int64_t dest_end)
{
    if (dest_start > source_start)
        return FLOW_AT_BEGIN;
    return dest_end > source_start ? FLOW_AT_END : FLOW_NOWHERE;
}

void tw_flows_clear(struct walk *w)
{
    w->flows_out.count = w->flows_in.count = w->flows_late.count = 0;
}

/* The flows starting on [start, end] toward the slices of w->refs. */
void tw_flows_add_out(struct walk *w, uint64_t space, int64_t start)
{
    for (size_t i = 0; i < w->ref_count; i++) {
        const struct flow_ref *r = &w->refs[i];
        int64_t dest_start = tw_clip_start(w, r->start);
        if (tw_flow_place(start, dest_start, tw_clip_end(w, r->end, dest_start)) != FLOW_NOWHERE)
            tw_ids_push(w, &w->flows_out, space | r->id);
    }
}

/* A flow ending on [start, end] from a source that starts at source_start;
 * returns where it went. */
enum flow_place tw_flows_add_in(struct walk *w, uint64_t id, int64_t source_start, int64_t start,
                                int64_t end)
{
    source_start = tw_clip_start(w, source_start);
    enum flow_place place = tw_flow_place(source_start, start, end);
    if (place == FLOW_AT_BEGIN)
        tw_ids_push(w, &w->flows_in, id);
    else if (place == FLOW_AT_END)
        tw_ids_push(w, &w->flows_late, id);
    return place;
}

/* The slice's flows as collected. */
struct tl_flows tw_flows_of(struct walk *w, int one_to_one)
{
    struct tl_flows f = {w->flows_out.ids,  w->flows_out.count,  w->flows_in.ids, w->flows_in.count,
                         w->flows_late.ids, w->flows_late.count, one_to_one};
    return f;
}

/* Grouped sorting (tw_sort_grouped).  Groups beyond this are sorted by
 * qsort alone: their order is found by insertion, fine for a few hundred. */
#define SORT_MAX_GROUPS 512

/* The groups of a tw_sort_grouped array: each item's group, in the order
 * first met, and the first item of each. */
struct sort_groups {
    uint32_t *of_item;
    size_t first[SORT_MAX_GROUPS];
    size_t count;
};

/* The first groups met are found by comparison, cheaper than a hash for
 * the few cores, threads or streams a report mostly has. */
#define SORT_FIRST_GROUPS 8

/* The group of `key` (index + 1) when it is among the first groups, else 0. */
static uint32_t sort_group_among_first(const struct sort_groups *g, const char *items, size_t size,
                                       const char *key, size_t key_bytes)
{
    for (size_t i = 0; i < g->count && i < SORT_FIRST_GROUPS; i++)
        if (!memcmp(key, items + g->first[i] * size, key_bytes))
            return (uint32_t)i + 1;
    return 0;
}

/* Numbers each item's group (its first key_bytes bytes); 1 when there are
 * more than SORT_MAX_GROUPS, -1 when out of memory. */
static int sort_groups_find(struct sort_groups *g, const char *items, size_t n, size_t size,
                            size_t key_bytes)
{
    struct asys_strmap by_key;
    int rc = 0;
    asys_strmap_init(&by_key);
    g->count = 0;
    g->of_item = malloc(n * sizeof *g->of_item);
    if (!g->of_item) {
        rc = -1;
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        const char *key = items + i * size;
        /* runs of one group are common: the previous item's answer */
        if (i && !memcmp(key, key - size, key_bytes)) {
            g->of_item[i] = g->of_item[i - 1];
            continue;
        }
        uint32_t found = sort_group_among_first(g, items, size, key, key_bytes);
        if (!found && g->count > SORT_FIRST_GROUPS)
            found = asys_strmap_get(&by_key, key, key_bytes);
        if (!found) {
            if (g->count == SORT_MAX_GROUPS) {
                rc = 1;
                goto out;
            }
            g->first[g->count] = i;
            found = (uint32_t)++g->count;
            if (asys_strmap_put(&by_key, key, key_bytes, found) != 0) {
                rc = -1;
                goto out;
            }
        }
        g->of_item[i] = found - 1;
    }
out:
    asys_strmap_free(&by_key);
    return rc;
}

/* The groups' ranks in sorted order: the groups' keys lead cmp's, so any
 * two of their items compare as the groups do. */
static void sort_groups_rank(const struct sort_groups *g, const char *items, size_t size,
                             int (*cmp)(const void *, const void *), uint32_t *rank)
{
    uint32_t order[SORT_MAX_GROUPS];
    for (size_t i = 0; i < g->count; i++) {
        size_t j = i;
        for (; j > 0 && cmp(items + g->first[order[j - 1]] * size, items + g->first[i] * size) > 0;
             j--)
            order[j] = order[j - 1];
        order[j] = (uint32_t)i;
    }
    for (size_t i = 0; i < g->count; i++)
        rank[order[i]] = (uint32_t)i;
}

/* Sorts one group's items unless they came in order already. */
static void sort_group_items(char *items, size_t n, size_t size,
                             int (*cmp)(const void *, const void *))
{
    for (size_t i = 1; i < n; i++)
        if (cmp(items + (i - 1) * size, items + i * size) > 0) {
            qsort(items, n, size, cmp);
            return;
        }
}

void *tw_sort_grouped(struct walk *w, void *items_in, size_t n, size_t size, size_t key_bytes,
                      int (*cmp)(const void *, const void *))
{
    struct sort_groups g;
    char *items = items_in, *sorted = NULL;
    size_t start[SORT_MAX_GROUPS + 1] = {0};
    uint32_t rank[SORT_MAX_GROUPS];
    if (n < 2)
        return items;
    int rc = sort_groups_find(&g, items, n, size, key_bytes);
    if (rc > 0)
        qsort(items, n, size, cmp);
    if (rc != 0)
        goto out;
    sort_groups_rank(&g, items, size, cmp, rank);
    sorted = malloc(n * size);
    if (!sorted) {
        rc = -1;
        goto out;
    }
    /* a stable counting sort by group rank, then each group by cmp */
    for (size_t i = 0; i < n; i++)
        start[rank[g.of_item[i]] + 1]++;
    for (size_t r = 0; r < g.count; r++)
        start[r + 1] += start[r];
    size_t next[SORT_MAX_GROUPS];
    memcpy(next, start, sizeof next);
    for (size_t i = 0; i < n; i++)
        memcpy(sorted + next[rank[g.of_item[i]]]++ * size, items + i * size, size);
    for (size_t r = 0; r < g.count; r++)
        sort_group_items(sorted + start[r] * size, start[r + 1] - start[r], size, cmp);
    free(items);
    items = sorted;
out:
    free(g.of_item);
    if (rc < 0)
        tw_fail(w, "out of memory while sorting");
    return items;
}

/* ---- pages: rows packed at import (analyze/activity_pages.h) ---------------------- */

int tw_pages_usable(struct walk *w, const struct tw_pages *p, const char *also)
{
    char sql[320];
    sqlite3_stmt *st = NULL;
    snprintf(sql, sizeof sql,
             "SELECT (SELECT COUNT(*) FROM %s) = (SELECT TOTAL(rows) FROM %s) AND (%s)", p->table,
             p->pages, also ? also : "1");
    int usable = sqlite3_prepare_v2(w->db, sql, -1, &st, NULL) == SQLITE_OK &&
                 sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return usable;
}

/* The rows of the current page (ids rising from *last_id on) in the
 * window: 0, or -1 when the page is corrupt or the walk failed. */
static int page_rows(struct walk *w, sqlite3_stmt *st, const struct tw_pages *p, tw_page_row_fn *fn,
                     void *ctx, int64_t *last_id)
{
    struct asys_page_reader rd;
    struct asys_page_row row;
    int whole = w->o->filter_start == LLONG_MIN && w->o->filter_end == LLONG_MAX;
    memset(&row, 0, sizeof row);
    int n = asys_page_begin(&rd, sqlite3_column_blob(st, 1), (size_t)sqlite3_column_bytes(st, 1),
                            sqlite3_column_int64(st, 0), p->fields);
    while (n == 0 && (n = asys_page_next(&rd, &row)) == 1) {
        if (row.v[0] <= *last_id)
            return -1;
        *last_id = row.v[0];
        /* the window as IN_WINDOW draws it */
        n = whole || tw_in_window(w, row.v[p->start], row.v[p->end]) ? fn(w, &row, ctx) : 0;
    }
    return n;
}

int tw_pages_walk(struct walk *w, const struct tw_pages *p, tw_page_row_fn *fn, void *ctx)
{
    char sql[128];
    int64_t last_id = INT64_MIN;
    snprintf(sql, sizeof sql, "SELECT rows, data FROM %s ORDER BY first_id", p->pages);
    sqlite3_stmt *st = tw_prepare(w, sql);
    int rc = st ? 0 : -1, step = SQLITE_DONE;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW)
        rc = page_rows(w, st, p, fn, ctx, &last_id);
    if (rc != 0 && !w->failed) {
        char what[128];
        if (last_id == INT64_MIN) /* before its first row */
            snprintf(what, sizeof what, "%s: corrupt page at the start", p->pages);
        else
            snprintf(what, sizeof what, "%s: corrupt page after id %lld", p->pages,
                     (long long)last_id);
        rc = tw_fail(w, what);
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = tw_fail(w, sqlite3_errmsg(w->db));
    sqlite3_finalize(st);
    return rc;
}
