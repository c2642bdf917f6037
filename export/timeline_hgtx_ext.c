/* What NVTX's extensions add to the timeline: counters (a counter track per
 * counter and field under its process), user locks (acquire and hold
 * slices on the thread) and memory heaps (the bytes of the regions a heap
 * holds, as a counter under the process). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timeline_walk.h"

/* ---- counters ------------------------------------------------------------------ */

/* Every sample with a value, by counter and field, in time order. */
static int walk_counters(struct walk *w)
{
    sqlite3_stmt *st = tw_prepare(
        w, "SELECT c.pid, c.id, v.field, v.ts_ns, v.value,\n"
           "       COALESCE(ds.value, '') || ':' || COALESCE(ns.value, c.counter_id),\n"
           "       us.value, v.value IS NOT NULL AND typeof(v.value) = 'text'\n"
           "FROM hgtx_counter_values AS v JOIN hgtx_counters AS c ON c.id = v.counter\n"
           "LEFT JOIN strings AS ns ON ns.id = c.name_id\n"
           "LEFT JOIN strings AS us ON us.id = c.unit_id\n"
           "LEFT JOIN hgtx_domains AS d ON d.id = c.domain_id\n"
           "LEFT JOIN strings AS ds ON ds.id = d.name_id\n"
           "WHERE v.value IS NOT NULL AND (:all OR (v.ts_ns >= :lo AND v.ts_ns <= :hi))\n"
           "ORDER BY c.id, v.field, v.ts_ns, v.rowid");
    if (!st)
        return -1;
    while (!w->failed && sqlite3_step(st) == SQLITE_ROW) {
        const char *field = (const char *)sqlite3_column_text(st, 2);
        const char *unit = (const char *)sqlite3_column_text(st, 6);
        char name[512];
        snprintf(name, sizeof name, "HGTX counter %s%s%s%s%s%s",
                 (const char *)sqlite3_column_text(st, 5), field ? "." : "", field ? field : "",
                 unit ? " (" : "", unit ? unit : "", unit ? ")" : "");
        uint32_t row =
            tw_process_counter(w, (uint32_t)sqlite3_column_int64(st, 0), "hc",
                               sqlite3_column_int64(st, 1), field, name, 900000, NULL, unit);
        /* a uint64 above INT64_MAX is TEXT of its digits */
        double value = sqlite3_column_int(st, 7)
                           ? strtod((const char *)sqlite3_column_text(st, 4), NULL)
                           : sqlite3_column_double(st, 4);
        if (!row || tw_emit_counter(w, row, sqlite3_column_int64(st, 3), value) != 0)
            break;
    }
    sqlite3_finalize(st);
    return w->failed ? -1 : 0;
}

/* ---- user locks ------------------------------------------------------------------- */

static void lock_row_name(struct walk *w, int64_t sub, char *out, size_t size)
{
    (void)w;
    (void)sub;
    snprintf(out, size, "HGTX locks");
}

/* after the HGTX rows */
static const struct tl_thread_row lock_row = {TL_RANK_HGTX_LOCKS, lock_row_name, 0, NULL};

static int walk_locks(struct walk *w)
{
    sqlite3_stmt *st = tw_prepare(
        w, "SELECT r.pid, r.tid, r.kind, r.start_ns, r.end_ns, r.outcome,\n"
           "       COALESCE(ds.value, '') || ':' || COALESCE(ns.value, o.handle)\n"
           "FROM hgtx_sync_ranges AS r JOIN hgtx_sync_objects AS o ON o.id = r.object_id\n"
           "LEFT JOIN strings AS ns ON ns.id = o.name_id\n"
           "LEFT JOIN hgtx_domains AS d ON d.id = o.domain_id\n"
           "LEFT JOIN strings AS ds ON ds.id = d.name_id\n"
           "WHERE r.end_ns IS NOT NULL AND " IN_WINDOW(
               "r") "\n"
                    "ORDER BY r.pid, r.tid, r.start_ns, r.rowid");
    if (!st)
        return -1;
    struct tl_args args;
    while (!w->failed && sqlite3_step(st) == SQLITE_ROW) {
        uint32_t row = tw_thread_child_row(w, (uint32_t)sqlite3_column_int64(st, 0),
                                           (uint32_t)sqlite3_column_int64(st, 1), &lock_row, 0);
        const char *kind = (const char *)sqlite3_column_text(st, 2);
        char name[512];
        snprintf(name, sizeof name, "%s %s", !strcmp(kind, "held") ? "hold" : "acquire",
                 (const char *)sqlite3_column_text(st, 6));
        args.count = 0;
        if (sqlite3_column_type(st, 5) != SQLITE_NULL)
            tw_arg_string(&args, "outcome", (const char *)sqlite3_column_text(st, 5));
        tw_emit_slice(w, row, sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 4),
                      tw_synthetic_name(w, name), tw_category(w, "hgtx"), NULL,
                      args.count ? &args : NULL);
    }
    sqlite3_finalize(st);
    return w->failed ? -1 : 0;
}

/* ---- memory heaps -------------------------------------------------------------------- */

/* The bytes a heap's regions hold, after each change. */
static int walk_heaps(struct walk *w)
{
    sqlite3_stmt *st = tw_prepare(
        w, "WITH changes(heap, ts, delta) AS (\n"
           "  SELECT heap_id, start_ns, size FROM hgtx_mem_regions WHERE heap_id IS NOT NULL\n"
           "  UNION ALL SELECT heap_id, end_ns, -size FROM hgtx_mem_regions\n"
           "  WHERE heap_id IS NOT NULL AND end_ns IS NOT NULL),\n"
           /* one value per instant: what the heap holds after every change at it */
           "per_instant(heap, ts, delta) AS (\n"
           "  SELECT heap, ts, SUM(delta) FROM changes GROUP BY heap, ts)\n"
           "SELECT h.pid, h.id, c.ts,\n"
           "       SUM(c.delta) OVER (PARTITION BY c.heap ORDER BY c.ts\n"
           "                          ROWS UNBOUNDED PRECEDING),\n"
           "       COALESCE(s.value, 'heap ' || h.handle)\n"
           "FROM per_instant AS c JOIN hgtx_mem_heaps AS h ON h.id = c.heap\n"
           "LEFT JOIN strings AS s ON s.id = h.name_id\n"
           "WHERE c.ts <= :hi ORDER BY h.id, c.ts");
    if (!st)
        return -1;
    while (!w->failed && sqlite3_step(st) == SQLITE_ROW) {
        char name[512];
        snprintf(name, sizeof name, "HGTX heap %s (bytes in regions)",
                 (const char *)sqlite3_column_text(st, 4));
        uint32_t row =
            tw_process_counter(w, (uint32_t)sqlite3_column_int64(st, 0), "hh",
                               sqlite3_column_int64(st, 1), NULL, name, 900001, NULL, "bytes");
        if (!row || tw_emit_counter(w, row, sqlite3_column_int64(st, 2),
                                    (double)sqlite3_column_int64(st, 3)) != 0)
            break;
    }
    sqlite3_finalize(st);
    return w->failed ? -1 : 0;
}

const struct tl_family tl_family_hgtx_counters = {"hgtx_counter_values", 0, walk_counters};
const struct tl_family tl_family_hgtx_locks = {"hgtx_sync_ranges", 1, walk_locks};
const struct tl_family tl_family_hgtx_heaps = {"hgtx_mem_regions", 0, walk_heaps};
