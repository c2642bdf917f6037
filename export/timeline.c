/* The timeline walk: host rows first, then the device tree and its work. */
#include "timeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timeline_walk.h"

const char *const tl_category_names[TL_CAT_COUNT] = {"hggc", "hgtx", "osrt"};

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
    int activities = tw_table_wanted(&w, "ppu_activities");
    struct {
        const char *table;
        int (*walk)(struct walk *);
        int wanted;
    } host[] = {{"hggc_api_calls", tw_walk_api, 0},
                {"hgtx_events", tw_walk_hgtx, 0},
                {"osrt_calls", tw_walk_osrt, 0}};
    for (size_t i = 0; i < sizeof host / sizeof host[0]; i++) {
        host[i].wanted = tw_table_wanted(&w, host[i].table);
        if (host[i].wanted)
            w.total += count_rows(&w, host[i].table);
    }
    if (activities)
        w.total += 3 * count_rows(&w, "ppu_activities");
    /* the host first: a flow's source mostly comes before its end in the file,
     * which consumers that bind flows in file order need */
    for (size_t i = 0; i < sizeof host / sizeof host[0] && !w.failed; i++)
        if (host[i].wanted)
            host[i].walk(&w);
    if (!w.failed && activities)
        tw_build_tree(&w);
    if (!w.failed && activities)
        tw_walk_activities(&w);
    if (!w.failed && activities && tw_table_wanted(&w, "hgtx_gpu_projection"))
        tw_walk_projection(&w);
    if (!w.failed && tw_table_wanted(&w, "ppu_memory"))
        tw_walk_memory(&w);
    if (!w.failed)
        tw_rows_finish(&w);
    sqlite3_finalize(w.string_text);
    tw_rows_free(&w);
    tw_names_free(&w);
    free(w.flows_out.ids);
    free(w.flows_in.ids);
    free(w.flows_late.ids);
    free(w.refs);
    asys_strmap_free(&w.rows_by_key);
    return w.failed ? -1 : 0;
}
