/* HGTX ranges and marks on their thread, one row per domain ("HGTX",
 * "HGTX: domain"). */
#include <stdio.h>

#include "timeline_walk.h"

static void hgtx_row_name(struct walk *w, int64_t domain, char *out, size_t size)
{
    snprintf(out, size, "HGTX");
    sqlite3_stmt *st = tw_prepare(w, "SELECT s.value FROM hgtx_domains AS d\n"
                                     "JOIN strings AS s ON s.id = d.name_id WHERE d.id = ?");
    if (!st)
        return;
    sqlite3_bind_int64(st, 1, domain);
    const char *text =
        sqlite3_step(st) == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
    if (text && *text)
        snprintf(out, size, "HGTX: %s", text);
    sqlite3_finalize(st);
}

/* after the API row, by domain */
static const struct tl_thread_row hgtx_row = {10, hgtx_row_name};

/* HGTX: push/pop and start/end ranges and marks on the (starting) thread, a
 * row per domain.  Row id order is start order within a thread. */
static int walk_hgtx(struct walk *w)
{
    sqlite3_stmt *st =
        tw_prepare(w, "SELECT e.pid, e.tid, e.kind, e.domain_id, e.start_ns,\n"
                      "       e.end_ns, e.text_id\n"
                      "FROM hgtx_events AS e\n"
                      "WHERE e.end_ns IS NOT NULL AND " IN_WINDOW("e") "\n"
                                                                       "ORDER BY e.rowid");
    if (!st)
        return -1;
    while (!w->failed && sqlite3_step(st) == SQLITE_ROW) {
        uint32_t row = tw_thread_child_row(w, (uint32_t)sqlite3_column_int64(st, 0),
                                           (uint32_t)sqlite3_column_int64(st, 1), &hgtx_row,
                                           sqlite3_column_int64(st, 3));
        struct tl_name name = tw_string_name(w, sqlite3_column_int64(st, 6));
        if (sqlite3_column_int(st, 2) == 3)
            tw_emit_instant(w, row, sqlite3_column_int64(st, 4), name, tw_category(w, "hgtx"));
        else
            tw_emit_slice(w, row, sqlite3_column_int64(st, 4), sqlite3_column_int64(st, 5), name,
                          tw_category(w, "hgtx"), NULL);
    }
    sqlite3_finalize(st);
    return w->failed ? -1 : 0;
}

const struct tl_family tl_family_hgtx = {"hgtx_events", 1, walk_hgtx};
