/* The timeline's host side: processes > threads > a row per collector
 * (HGGC API, HGTX per domain, OS runtime). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timeline_walk.h"

/* ---- host side: processes, threads, their rows --------------------------------------- */

enum thread_row { ROW_API = 1, ROW_HGTX = 2, ROW_OSRT = 3 };

uint32_t tw_process_row(struct walk *w, uint32_t pid)
{
    uint8_t key[5] = {'p'};
    memcpy(key + 1, &pid, 4);
    uint32_t id = tw_row_find(w, key, sizeof key);
    if (id)
        return id;
    char name[512];
    sqlite3_stmt *st = tw_prepare(w, "SELECT s.value FROM processes AS p\n"
                                     "LEFT JOIN strings AS s ON s.id = p.name_id WHERE p.pid = ?");
    if (!st)
        return 0;
    sqlite3_bind_int64(st, 1, pid);
    const char *exe =
        sqlite3_step(st) == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
    snprintf(name, sizeof name, "%s (%u)", exe ? exe : "process", pid);
    sqlite3_finalize(st);
    /* processes after the devices */
    return tw_row_new(w, key, sizeof key, 0, 0, TL_PROCESS, name, 1000000 + pid, pid);
}

static uint32_t thread_row(struct walk *w, uint32_t pid, uint32_t tid)
{
    uint8_t key[9] = {'t'};
    memcpy(key + 1, &pid, 4);
    memcpy(key + 5, &tid, 4);
    uint32_t id = tw_row_find(w, key, sizeof key);
    if (id)
        return id;
    uint32_t process = tw_process_row(w, pid);
    if (!process)
        return 0;
    sqlite3_stmt *st = tw_prepare(w, "SELECT s.value FROM threads AS t\n"
                                     "LEFT JOIN strings AS s ON s.id = t.name_id\n"
                                     "WHERE t.pid = ? AND t.tid = ?");
    if (!st)
        return 0;
    sqlite3_bind_int64(st, 1, pid);
    sqlite3_bind_int64(st, 2, tid);
    const char *comm =
        sqlite3_step(st) == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
    char name[512];
    snprintf(name, sizeof name, "%s (%u)", comm ? comm : "thread", tid);
    sqlite3_finalize(st);
    struct row *p = tw_row_at(w, process);
    /* the main thread first, then by tid */
    return tw_row_new(w, key, sizeof key, p->lanes[0].uuid, p->sort_index, TL_PLAIN, name,
                      tid == pid ? 1 : 2 + (tid & 0xffff), 0);
}

/* A collector's row under a thread; HGTX rows are per domain. */
/* The row's name: "HGTX: domain" for a named HGTX domain. */
static void collector_row_name(struct walk *w, enum thread_row kind, int64_t domain, char *name,
                               size_t size)
{
    if (kind == ROW_API) {
        snprintf(name, size, "HGGC API");
        return;
    }
    if (kind == ROW_OSRT) {
        snprintf(name, size, "OS runtime");
        return;
    }
    snprintf(name, size, "HGTX");
    sqlite3_stmt *st = tw_prepare(w, "SELECT s.value FROM hgtx_domains AS d\n"
                                     "JOIN strings AS s ON s.id = d.name_id WHERE d.id = ?");
    if (!st)
        return;
    sqlite3_bind_int64(st, 1, domain);
    const char *text =
        sqlite3_step(st) == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
    if (text && *text)
        snprintf(name, size, "HGTX: %s", text);
    sqlite3_finalize(st);
}

/* A collector's row under a thread; HGTX rows are per domain.  Rows come in
 * runs of one thread: the last one found is kept at hand. */
static uint32_t collector_row(struct walk *w, uint32_t pid, uint32_t tid, enum thread_row kind,
                              int64_t domain)
{
    uint8_t key[18] = {'r'};
    memcpy(key + 1, &pid, 4);
    memcpy(key + 5, &tid, 4);
    key[9] = (uint8_t)kind;
    memcpy(key + 10, &domain, 8);
    if (w->last_row && !memcmp(key, w->last_row_key, sizeof key))
        return w->last_row;
    uint32_t id = tw_row_find(w, key, sizeof key);
    if (!id) {
        uint32_t thread = thread_row(w, pid, tid);
        if (!thread)
            return 0;
        char name[512];
        collector_row_name(w, kind, domain, name, sizeof name);
        struct row *t = tw_row_at(w, thread);
        uint32_t order = kind == ROW_HGTX ? 10 + (uint32_t)(domain & 0xff) : (uint32_t)kind;
        id = tw_row_new(w, key, sizeof key, t->lanes[0].uuid, t->sort_index, TL_PLAIN, name, order,
                        0);
    }
    memcpy(w->last_row_key, key, sizeof key);
    w->last_row = id;
    return id;
}

int tw_walk_api(struct walk *w)
{
    /* flows to the call's work, and from the work a synchronizing call waited for */
    int flows = tw_table_wanted(w, "ppu_activities");
    int deps = flows && tw_table_wanted(w, "ppu_deps");
    /* clang-format off */
    sqlite3_stmt *st = tw_prepare(w,
        "SELECT a.pid, a.tid, a.start_ns, a.end_ns,\n"
        "       CASE WHEN :mode = 'kernel'\n"
        "            THEN COALESCE((SELECT CASE WHEN COUNT(*) = 1 AND MAX(p.graph_id) IS NULL\n"
        "                                       THEN MAX(p.name_id) END\n"
        "                           FROM ppu_activities AS p\n"
        "                           WHERE p.api_id = a.id AND p.kind = 1), a.name_id)\n"
        "            ELSE a.name_id END,\n"
        "       a.id\n"
        "FROM hggc_api_calls AS a\n"
        "WHERE " IN_WINDOW("a") "\n"
        "ORDER BY a.id");
    /* clang-format on */
    /* read alongside the calls, in their id order: the work each call launched,
     * and the work each synchronizing call waited for */
    struct ref_cursor launched = {NULL, 0, 0}, waited = {NULL, 0, 0};
    int rc = st ? 0 : -1;
    /* clang-format off */
    if (rc == 0 && flows)
        rc = tw_cursor_open(w, &launched,
            "SELECT p.api_id, 0, p.id, p.start_ns, p.end_ns\n"
            "FROM ppu_activities AS p\n"
            "WHERE p.api_id IS NOT NULL AND " IN_WINDOW("p") "\n"
            "ORDER BY p.api_id, p.start_ns");
    if (rc == 0 && deps)
        rc = tw_cursor_open(w, &waited,
            "SELECT d.wait_api_id, 0, d.id, p.start_ns, p.start_ns\n"
            "FROM ppu_deps AS d JOIN ppu_activities AS p ON p.id = d.depends_on\n"
            "WHERE d.kind = 5 AND d.effective AND " IN_WINDOW("p") "\n"
            "ORDER BY d.wait_api_id, d.id");
    /* clang-format on */
    if (rc != 0) {
        tw_cursor_close(&launched);
        tw_cursor_close(&waited);
        sqlite3_finalize(st);
        return -1;
    }
    sqlite3_bind_text(st, sqlite3_bind_parameter_index(st, ":mode"), w->o->api_name_mode, -1,
                      SQLITE_STATIC);
    while (!w->failed && sqlite3_step(st) == SQLITE_ROW) {
        uint32_t row = collector_row(w, (uint32_t)sqlite3_column_int64(st, 0),
                                     (uint32_t)sqlite3_column_int64(st, 1), ROW_API, 0);
        int64_t start = tw_clip_start(w, sqlite3_column_int64(st, 2));
        int64_t end = tw_clip_end(w, sqlite3_column_int64(st, 3), start), latest_late = INT64_MIN;
        tw_flows_clear(w);
        /* to the work launched; a call that launched one thing points at it alone */
        int one_to_one = 0;
        if (tw_cursor_refs(w, &launched, sqlite3_column_int64(st, 5), 0) == 1) {
            int64_t dest_start = tw_clip_start(w, w->refs[0].start);
            one_to_one = tw_flow_place(start, dest_start,
                                       tw_clip_end(w, w->refs[0].end, dest_start)) == FLOW_AT_BEGIN;
        }
        tw_flows_add_out(w, TL_FLOW_HOST, start);
        /* from the work a synchronizing call waited for */
        tw_cursor_refs(w, &waited, sqlite3_column_int64(st, 5), 0);
        for (size_t i = 0; i < w->ref_count; i++)
            tw_flows_add_in(w, TL_FLOW_DEPENDENCY | w->refs[i].id, w->refs[i].start, start, end,
                            &latest_late);
        struct tl_flows f = tw_flows_of(w, end, latest_late, one_to_one);
        tw_emit_slice(w, row, start, end, tw_string_name(w, sqlite3_column_int64(st, 4)),
                      TL_CAT_HGGC, &f);
    }
    tw_cursor_close(&launched);
    tw_cursor_close(&waited);
    sqlite3_finalize(st);
    return w->failed ? -1 : 0;
}

/* HGTX: push/pop and start/end ranges and marks on the (starting) thread, a
 * row per domain.  Row id order is start order within a thread. */
int tw_walk_hgtx(struct walk *w)
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
        uint32_t row = collector_row(w, (uint32_t)sqlite3_column_int64(st, 0),
                                     (uint32_t)sqlite3_column_int64(st, 1), ROW_HGTX,
                                     sqlite3_column_int64(st, 3));
        struct tl_name name = tw_string_name(w, sqlite3_column_int64(st, 6));
        if (sqlite3_column_int(st, 2) == 3)
            tw_emit_instant(w, row, sqlite3_column_int64(st, 4), name, TL_CAT_HGTX);
        else
            tw_emit_slice(w, row, sqlite3_column_int64(st, 4), sqlite3_column_int64(st, 5), name,
                          TL_CAT_HGTX, NULL);
    }
    sqlite3_finalize(st);
    return w->failed ? -1 : 0;
}

int tw_walk_osrt(struct walk *w)
{
    sqlite3_stmt *st = tw_prepare(w, "SELECT o.pid, o.tid, o.start_ns, o.end_ns, o.name_id\n"
                                     "FROM osrt_calls AS o\n"
                                     "WHERE " IN_WINDOW("o") " ORDER BY o.rowid");
    if (!st)
        return -1;
    while (!w->failed && sqlite3_step(st) == SQLITE_ROW) {
        uint32_t row = collector_row(w, (uint32_t)sqlite3_column_int64(st, 0),
                                     (uint32_t)sqlite3_column_int64(st, 1), ROW_OSRT, 0);
        tw_emit_slice(w, row, sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3),
                      tw_string_name(w, sqlite3_column_int64(st, 4)), TL_CAT_OSRT, NULL);
    }
    sqlite3_finalize(st);
    return w->failed ? -1 : 0;
}
