/* Data loss on the thread that lost it: each span of the drops table (from
 * the first record a thread could not keep to the point where it recorded
 * again) as a slice on the thread's "Data loss" row, first under the thread
 * so that no one reads a quiet stretch as a quiet program. */
#include <stdio.h>

#include "timeline_walk.h"

static void loss_row_name(struct walk *w, int64_t sub, char *out, size_t size)
{
    (void)w;
    (void)sub;
    snprintf(out, size, "Data loss");
}

static const struct tl_thread_row loss_row = {TL_RANK_DATA_LOSS, loss_row_name, 0, NULL};

static int walk_drops(struct walk *w)
{
    sqlite3_stmt *st = tw_prepare(w, "SELECT d.pid, d.tid, d.start_ns, MAX(d.end_ns, d.start_ns),\n"
                                     "       d.records, d.bytes\n"
                                     "FROM drops AS d\n"
                                     "WHERE " IN_WINDOW("d") " ORDER BY d.pid, d.tid, d.start_ns");
    if (!st)
        return -1;
    struct tl_args args;
    while (!w->failed && sqlite3_step(st) == SQLITE_ROW) {
        uint32_t row = tw_thread_child_row(w, (uint32_t)sqlite3_column_int64(st, 0),
                                           (uint32_t)sqlite3_column_int64(st, 1), &loss_row, 0);
        char name[96];
        snprintf(name, sizeof name, "%lld records lost", (long long)sqlite3_column_int64(st, 4));
        args.count = 0;
        tw_arg_int(&args, "records", sqlite3_column_int64(st, 4));
        tw_arg_int(&args, "bytes", sqlite3_column_int64(st, 5));
        if (!row || tw_emit_slice(w, row, sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3),
                                  tw_synthetic_name(w, name), tw_category(w, "data loss"), NULL,
                                  &args) != 0)
            break;
    }
    sqlite3_finalize(st);
    return w->failed ? -1 : 0;
}

const struct tl_family tl_family_drops = {"drops", 1, walk_drops};
