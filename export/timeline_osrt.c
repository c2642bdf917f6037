/* OS runtime calls on their thread's "OS runtime" row. */
#include <stdio.h>

#include "timeline_walk.h"

static void osrt_row_name(struct walk *w, int64_t sub, char *out, size_t size)
{
    (void)w;
    (void)sub;
    snprintf(out, size, "OS runtime");
}

/* after the CPU rows (timeline_cpu.c), as the manual shows them */
static const struct tl_thread_row osrt_row = {TL_RANK_OS_RUNTIME, osrt_row_name, 0, NULL};

static int walk_osrt(struct walk *w)
{
    sqlite3_stmt *st = tw_prepare(w, "SELECT o.pid, o.tid, o.start_ns, o.end_ns, o.name_id\n"
                                     "FROM osrt_calls AS o\n"
                                     "WHERE " IN_WINDOW("o") " ORDER BY o.rowid");
    if (!st)
        return -1;
    while (!w->failed && sqlite3_step(st) == SQLITE_ROW) {
        uint32_t row = tw_thread_child_row(w, (uint32_t)sqlite3_column_int64(st, 0),
                                           (uint32_t)sqlite3_column_int64(st, 1), &osrt_row, 0);
        tw_emit_slice(w, row, sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3),
                      tw_string_name(w, sqlite3_column_int64(st, 4)), tw_category(w, "osrt"), NULL,
                      NULL);
    }
    sqlite3_finalize(st);
    return w->failed ? -1 : 0;
}

const struct tl_family tl_family_osrt = {"osrt_calls", 1, walk_osrt};
