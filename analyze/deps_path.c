#include "sql_functions.h"
#include "deps_path.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static const char *const dep_kind_names[] = {"",      "stream order", "default stream",
                                             "event", "graph edge",   "host wait"};

static const char *dep_kind_name(int kind)
{
    return kind >= 1 && kind <= 5 ? dep_kind_names[kind] : "dependency";
}

static const char *activity_kind_name(int kind)
{
    return kind == 1 ? "kernel" : kind == 2 ? "copy" : kind == 3 ? "memset" : "graph";
}

struct path_queries {
    sqlite3_stmt *last; /* the activity that ended last in the window */
    sqlite3_stmt *activity; /* start, end, enqueue, api pid/tid/name */
    sqlite3_stmt *binding; /* the dependency that ended last */
    sqlite3_stmt *prev_call; /* the thread's call before the launch */
    sqlite3_stmt *host_wait; /* what that call waited for on the device */
    sqlite3_stmt *own_work; /* a synchronous call's own device work */
    sqlite3_stmt *insert;
};

static const char *const path_sql[] = {
    "SELECT id FROM ppu_activities WHERE start_ns <= ?2 AND end_ns >= ?1\n"
    "ORDER BY end_ns DESC, id DESC LIMIT 1",
    "SELECT p.start_ns, p.end_ns, p.api_start_ns, a.pid, a.tid, s.value\n"
    "FROM ppu_activities AS p LEFT JOIN hggc_api_calls AS a ON a.id = p.api_id\n"
    "LEFT JOIN strings AS s ON s.id = a.name_id WHERE p.id = ?1",
    "SELECT d.depends_on, p.end_ns, d.kind, p.kind, p.stream FROM ppu_deps AS d\n"
    "JOIN ppu_activities AS p ON p.id = d.depends_on\n"
    "WHERE d.activity_id = ?1 ORDER BY p.end_ns DESC LIMIT 1",
    "SELECT a.id, s.value, a.end_ns FROM hggc_api_calls AS a\n"
    "JOIN strings AS s ON s.id = a.name_id\n"
    "WHERE a.pid = ?1 AND a.tid = ?2 AND a.start_ns < ?3 ORDER BY a.start_ns DESC LIMIT 1",
    "SELECT d.depends_on FROM ppu_deps AS d JOIN ppu_activities AS p ON p.id = d.depends_on\n"
    "WHERE d.kind = 5 AND d.wait_api_id = ?1 ORDER BY p.end_ns DESC LIMIT 1",
    "SELECT id FROM ppu_activities WHERE api_id = ?1 AND end_ns <= ?2\n"
    "ORDER BY end_ns DESC LIMIT 1",
    "INSERT INTO temp.path_steps (seq, activity_id, waited_ns, waited_on) VALUES (?1,?2,?3,?4)",
};

const char asys_critical_path_sql[] =
    "SELECT (SELECT COUNT(*) FROM temp.path_steps) - s.seq + 1 AS \"Step\",\n"
    "       s.activity_id AS \"Activity\", n.name AS \"Name\", p.physical AS \"Device\",\n"
    "       p.stream AS \"Strm\", p.start_ns - :session_start AS \"Start (ns)\",\n"
    "       p.end_ns - p.start_ns AS \"Duration (ns)\", s.waited_ns AS \"Waited (ns)\",\n"
    "       s.waited_on AS \"Waited On\"\n"
    "FROM temp.path_steps AS s\n"
    "JOIN ppu_activities AS p ON p.id = s.activity_id\n"
    "JOIN ppu_activity_names AS n ON n.id = s.activity_id\n"
    "ORDER BY s.seq DESC";

static void finalize_queries(struct path_queries *q)
{
    sqlite3_stmt **all = (sqlite3_stmt **)q;
    for (size_t i = 0; i < sizeof *q / sizeof *all; i++)
        sqlite3_finalize(all[i]);
}

static int prepare_queries(sqlite3 *db, struct path_queries *q, struct asys_err *err)
{
    memset(q, 0, sizeof *q);
    sqlite3_stmt **all = (sqlite3_stmt **)q;
    for (size_t i = 0; i < sizeof *q / sizeof *all; i++)
        if (sqlite3_prepare_v2(db, path_sql[i], -1, &all[i], NULL) != SQLITE_OK) {
            asys_fail(err, "%s", sqlite3_errmsg(db));
            finalize_queries(q);
            return -1;
        }
    return 0;
}

/* Steps a one-row query; 1 with a row, 0 without. */
static int row(sqlite3_stmt *st)
{
    return sqlite3_step(st) == SQLITE_ROW;
}

struct step {
    long long next; /* the activity before, 0: the path ends here */
    long long waited_ns; /* between that constraint and this start */
    char waited_on[256];
};

/* Decides what let activity `id` start last. */
static int decide(struct path_queries *q, long long id, struct step *s)
{
    memset(s, 0, sizeof *s);
    sqlite3_reset(q->activity);
    sqlite3_bind_int64(q->activity, 1, id);
    if (!row(q->activity))
        return -1;
    long long start = sqlite3_column_int64(q->activity, 0);
    int has_call = sqlite3_column_type(q->activity, 2) != SQLITE_NULL;
    long long enqueued = sqlite3_column_int64(q->activity, 2);
    long long pid = sqlite3_column_int64(q->activity, 3),
              tid = sqlite3_column_int64(q->activity, 4);
    const char *call = (const char *)sqlite3_column_text(q->activity, 5);
    char call_name[128];
    snprintf(call_name, sizeof call_name, "%s", call ? call : "the launch call");

    sqlite3_reset(q->binding);
    sqlite3_bind_int64(q->binding, 1, id);
    if (row(q->binding)) {
        long long dep_end = sqlite3_column_int64(q->binding, 1);
        if (!has_call || dep_end >= enqueued) {
            s->next = sqlite3_column_int64(q->binding, 0);
            s->waited_ns = start > dep_end ? start - dep_end : 0;
            snprintf(s->waited_on, sizeof s->waited_on, "%s: %s on stream %lld",
                     dep_kind_name(sqlite3_column_int(q->binding, 2)),
                     activity_kind_name(sqlite3_column_int(q->binding, 3)),
                     (long long)sqlite3_column_int64(q->binding, 4));
            return 0;
        }
    }
    if (!has_call) {
        snprintf(s->waited_on, sizeof s->waited_on, "(start of the path)");
        return 0;
    }
    s->waited_ns = start > enqueued ? start - enqueued : 0;
    /* behind the launch: did the thread's call before it wait for device work? */
    sqlite3_reset(q->prev_call);
    sqlite3_bind_int64(q->prev_call, 1, pid);
    sqlite3_bind_int64(q->prev_call, 2, tid);
    sqlite3_bind_int64(q->prev_call, 3, enqueued);
    if (row(q->prev_call)) {
        /* a synchronization, or a synchronous call that returned when its work ended */
        long long prev = sqlite3_column_int64(q->prev_call, 0);
        sqlite3_reset(q->host_wait);
        sqlite3_bind_int64(q->host_wait, 1, prev);
        sqlite3_reset(q->own_work);
        sqlite3_bind_int64(q->own_work, 1, prev);
        sqlite3_bind_int64(q->own_work, 2, sqlite3_column_int64(q->prev_call, 2));
        sqlite3_stmt *found = row(q->host_wait)  ? q->host_wait
                              : row(q->own_work) ? q->own_work
                                                 : NULL;
        if (found) {
            s->next = sqlite3_column_int64(found, 0);
            snprintf(s->waited_on, sizeof s->waited_on, "host launch (%s, thread %lld) after %s",
                     call_name, tid, asys_column_text(q->prev_call, 1));
            return 0;
        }
    }
    snprintf(s->waited_on, sizeof s->waited_on, "host launch (%s, thread %lld)", call_name, tid);
    return 0;
}

int asys_critical_path_build(sqlite3 *db, const struct asys_critical_path_window *w,
                             struct asys_err *err)
{
    char *msg = NULL;
    if (sqlite3_exec(db,
                     "CREATE TEMP TABLE path_steps (seq INTEGER PRIMARY KEY, activity_id INTEGER,"
                     " waited_ns INTEGER, waited_on TEXT)",
                     NULL, NULL, &msg) != SQLITE_OK) {
        asys_fail(err, "%s", msg ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
        return -1;
    }
    struct path_queries q;
    if (prepare_queries(db, &q, err) != 0)
        return -1;
    int rc = 0;
    sqlite3_bind_int64(q.last, 1, w->start_ns);
    sqlite3_bind_int64(q.last, 2, w->end_ns);
    long long id = row(q.last) ? sqlite3_column_int64(q.last, 0) : 0;
    if (!id) {
        finalize_queries(&q);
        return asys_fail(err, "no PPU activity in the window");
    }
    sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    /* each step goes back in time; the bound only guards against broken input */
    for (long long seq = 1; id && seq <= 100000000; seq++) {
        struct step s;
        if (decide(&q, id, &s) != 0) {
            rc = asys_fail(err, "activity %lld vanished", id);
            break;
        }
        sqlite3_reset(q.insert);
        sqlite3_bind_int64(q.insert, 1, seq);
        sqlite3_bind_int64(q.insert, 2, id);
        sqlite3_bind_int64(q.insert, 3, s.waited_ns);
        sqlite3_bind_text(q.insert, 4, s.waited_on, -1, SQLITE_TRANSIENT);
        if (sqlite3_step(q.insert) != SQLITE_DONE) {
            rc = asys_fail(err, "%s", sqlite3_errmsg(db));
            break;
        }
        long long end = sqlite3_column_int64(q.activity, 1); /* still the current row */
        id = s.next;
        if (id) { /* the path goes back in time and stops where the window starts */
            sqlite3_reset(q.activity);
            sqlite3_bind_int64(q.activity, 1, id);
            if (!row(q.activity) || sqlite3_column_int64(q.activity, 1) < w->start_ns ||
                sqlite3_column_int64(q.activity, 1) > end)
                id = 0;
        }
    }
    sqlite3_exec(db, rc == 0 ? "COMMIT" : "ROLLBACK", NULL, NULL, NULL);
    finalize_queries(&q);
    return rc;
}

/* ---- Graphviz ------------------------------------------------------------------ */

/* A dot string literal; `close` 0 leaves it open for more text. */
static void dot_string(FILE *out, const char *s, int close)
{
    fputc('"', out);
    for (; s && *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', out);
        fputc((unsigned char)*s < 0x20 ? ' ' : *s, out);
    }
    if (close)
        fputc('"', out);
}

int asys_deps_dot(sqlite3 *db, FILE *out, const char *ids_sql, long long session_start, int all,
                  struct asys_err *err)
{
    static const char *const colors[] = {"black",      "darkgreen", "darkgreen",
                                         "darkorange", "blue",      "gray"};
    char nodes_sql[1024], edges_sql[1024];
    snprintf(nodes_sql, sizeof nodes_sql,
             "SELECT p.id, n.name, p.stream, p.start_ns, p.end_ns FROM ppu_activities AS p\n"
             "JOIN ppu_activity_names AS n ON n.id = p.id\n"
             "WHERE p.id IN (%s) OR p.id IN (SELECT d.depends_on FROM ppu_deps AS d\n"
             "  WHERE d.activity_id IN (%s) AND (d.effective OR %d))\n"
             "ORDER BY p.start_ns",
             ids_sql, ids_sql, all);
    snprintf(edges_sql, sizeof edges_sql,
             "SELECT d.depends_on, d.activity_id, d.kind, d.delay_ns FROM ppu_deps AS d\n"
             "WHERE d.activity_id IN (%s) AND (d.effective OR %d)",
             ids_sql, all);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, nodes_sql, -1, &st, NULL) != SQLITE_OK)
        return asys_fail(err, "%s", sqlite3_errmsg(db));
    fprintf(out,
            "digraph asys_deps {\n  rankdir=LR;\n  node [shape=box, fontname=\"monospace\"];\n");
    while (sqlite3_step(st) == SQLITE_ROW) {
        /* name, then a dot line break, then where and when */
        fprintf(out, "  a%lld [label=", (long long)sqlite3_column_int64(st, 0));
        dot_string(out, asys_column_text(st, 1), 0);
        fprintf(out, "\\nstream %lld, %.3f us at %.3f us\"];\n",
                (long long)sqlite3_column_int64(st, 2),
                (double)(sqlite3_column_int64(st, 4) - sqlite3_column_int64(st, 3)) / 1e3,
                (double)(sqlite3_column_int64(st, 3) - session_start) / 1e3);
    }
    sqlite3_finalize(st);
    if (sqlite3_prepare_v2(db, edges_sql, -1, &st, NULL) != SQLITE_OK)
        return asys_fail(err, "%s", sqlite3_errmsg(db));
    while (sqlite3_step(st) == SQLITE_ROW) {
        int kind = sqlite3_column_int(st, 2);
        char label[64];
        snprintf(label, sizeof label, "%s%s", dep_kind_name(kind),
                 sqlite3_column_int64(st, 3) > 0 ? " (delayed)" : "");
        fprintf(out, "  a%lld -> a%lld [color=%s, label=", (long long)sqlite3_column_int64(st, 0),
                (long long)sqlite3_column_int64(st, 1), colors[kind >= 1 && kind <= 5 ? kind : 0]);
        dot_string(out, label, 1);
        fprintf(out, "];\n");
    }
    sqlite3_finalize(st);
    fprintf(out, "}\n");
    return ferror(out) ? asys_fail(err, "write error") : 0;
}
