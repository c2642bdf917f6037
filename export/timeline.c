/* The timeline walk: the families of timeline_walk.h, in order. */
#include "timeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timeline_walk.h"

/* The registry: one line per family, in drawing order.  The host first: a
 * flow's source mostly comes before its end in the file, which consumers
 * that bind flows in file order need. */
// clang-format off
extern const struct tl_family tl_family_processes, tl_family_hggc_api, tl_family_hgtx,
    tl_family_hgtx_locks, tl_family_osrt, tl_family_ppu, tl_family_ppu_memory,
    tl_family_hgtx_counters, tl_family_hgtx_heaps, tl_family_heap, tl_family_host_memory,
    tl_family_cpu_scheduling, tl_family_cpu_samples, tl_family_thread_states,
    tl_family_ppu_metrics, tl_family_nic, tl_family_python_samples, tl_family_cpu_events,
    tl_family_thread_events, tl_family_pccl, tl_family_drops, tl_family_acompute,
    tl_family_video;
static const struct tl_family *const families[] = {
    &tl_family_processes,
    &tl_family_drops,
    &tl_family_hggc_api,
    &tl_family_hgtx,
    &tl_family_hgtx_locks,
    &tl_family_osrt,
    &tl_family_cpu_scheduling,
    &tl_family_thread_states,
    &tl_family_cpu_samples,
    &tl_family_cpu_events,
    &tl_family_thread_events,
    &tl_family_python_samples,
    &tl_family_pccl,
    &tl_family_acompute,
    &tl_family_ppu,
    &tl_family_video,
    &tl_family_ppu_memory,
    &tl_family_hgtx_counters,
    &tl_family_hgtx_heaps,
    &tl_family_heap,
    &tl_family_host_memory,
    &tl_family_ppu_metrics,
    &tl_family_nic,
};
// clang-format on
#define FAMILY_COUNT (sizeof families / sizeof families[0])

static uint64_t count_rows(struct walk *w, const char *table)
{
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM %s", table);
    sqlite3_stmt *st = NULL;
    uint64_t n = 0;
    if (sqlite3_prepare_v2(w->db, sql, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        n = (uint64_t)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

int asys_timeline_walk(sqlite3 *db, const struct tl_options *opts, const struct tl_sink_ops *ops,
                       void *sink, struct tl_stats *stats, struct asys_err *err)
{
    struct walk w;
    memset(&w, 0, sizeof w);
    memset(stats, 0, sizeof *stats);
    w.db = db;
    w.o = opts;
    w.ops = ops;
    w.sink = sink;
    w.stats = stats;
    w.err = err;
    asys_strmap_init(&w.rows_by_key);
    asys_u64map_init(&w.names);
    asys_strmap_init(&w.synthetic);
    if (sqlite3_prepare_v2(db, "SELECT value FROM strings WHERE id = ?", -1, &w.string_text,
                           NULL) != SQLITE_OK)
        tw_fail(&w, sqlite3_errmsg(db));
    int wanted[FAMILY_COUNT];
    for (size_t i = 0; i < FAMILY_COUNT; i++) {
        wanted[i] = tw_table_wanted(&w, families[i]->table);
        if (wanted[i] && families[i]->events_per_row)
            w.total += families[i]->events_per_row * count_rows(&w, families[i]->table);
    }
    for (size_t i = 0; i < FAMILY_COUNT && !w.failed; i++)
        if (wanted[i])
            families[i]->walk(&w);
    if (!w.failed)
        tw_rows_finish(&w);
    sqlite3_finalize(w.string_text);
    tw_activities_free(&w);
    tw_rows_free(&w);
    tw_names_free(&w);
    free(w.flows_out.ids);
    free(w.flows_in.ids);
    free(w.flows_late.ids);
    free(w.refs);
    asys_strmap_free(&w.rows_by_key);
    return w.failed ? -1 : 0;
}
