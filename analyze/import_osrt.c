/* OSRT_CALL records -> osrt_calls, and the estimated thread states derived
 * from them (manual §5.2: without CPU sampling, time inside a traced OS
 * runtime call is "Possibly Waiting", the rest "Possibly Running"). */
#include <stdlib.h>
#include <string.h>

#include "import_family.h"

static const char *const function_names[] = {
#define OSRT_NAME(id, name) [id] = #name,
    ASYS_OSRT_FUNCTIONS(OSRT_NAME)
#undef OSRT_NAME
};

struct osrt {
    struct asys_importer *imp;
    sqlite3_stmt *insert;
    uint32_t names[ASYS_OSRT_FUNCTION_COUNT + 1]; /* function id -> strings.id */
};

static int osrt_init(struct asys_importer *imp, void **state, struct asys_err *err)
{
    struct osrt *o = calloc(1, sizeof *o);
    if (!o)
        return asys_fail(err, "out of memory");
    *state = o;
    o->imp = imp;
    return imp_prepare(
        imp,
        "INSERT INTO osrt_calls (start_ns, end_ns, pid, tid, name_id, result, error, "
        "callchain_id) VALUES (?,?,?,?,?,?,?,?)",
        &o->insert, err);
}

static void osrt_free(void *state)
{
    struct osrt *o = state;
    if (o)
        sqlite3_finalize(o->insert);
    free(o);
}

static int import_call(void *state, const struct asys_record *rec, uint64_t end_ns,
                       struct asys_err *err)
{
    struct osrt *o = state;
    struct asys_importer *imp = o->imp;
    const struct asys_rec_osrt_call *r = (const void *)rec->data;
    unsigned fn = rec->arg;
    if (fn == 0 || fn > ASYS_OSRT_FUNCTION_COUNT) {
        imp_warn(imp, "%s: unknown OS runtime function %u; call ignored", imp->seg.member, fn);
        return 0;
    }
    if (!o->names[fn] && imp_intern_text(imp, function_names[fn], strlen(function_names[fn]),
                                         &o->names[fn], err) != 0)
        return -1;
    uint64_t start_ns = imp_ns(imp, rec->ticks - r->duration_ticks);
    int64_t chain = imp_callchain(imp, r->callchain_id);
    sqlite3_stmt *st = o->insert;
    sqlite3_bind_int64(st, 1, (int64_t)start_ns);
    sqlite3_bind_int64(st, 2, (int64_t)end_ns);
    sqlite3_bind_int64(st, 3, imp->seg.pid);
    sqlite3_bind_int64(st, 4, imp->seg.tid);
    sqlite3_bind_int64(st, 5, o->names[fn]);
    sqlite3_bind_int64(st, 6, r->result);
    imp_bind_optional(st, 7, r->error, r->error != 0);
    imp_bind_optional(st, 8, chain, chain != 0);
    return imp_step(imp, st, err);
}

/* Waiting = overlapping calls of a thread merged into islands; running = the
 * gaps between them within the thread's life. */
static const char thread_states_sql[] =
    "INSERT INTO thread_states (pid, tid, state, start_ns, end_ns)\n"
    "WITH calls AS (\n"
    "  SELECT pid, tid, start_ns, end_ns,\n"
    "         MAX(end_ns) OVER (PARTITION BY pid, tid ORDER BY start_ns, end_ns\n"
    "                           ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reach\n"
    "  FROM osrt_calls),\n"
    "numbered AS (\n"
    "  SELECT pid, tid, start_ns, end_ns,\n"
    "         SUM(CASE WHEN reach IS NULL OR start_ns > reach THEN 1 ELSE 0 END)\n"
    "           OVER (PARTITION BY pid, tid ORDER BY start_ns, end_ns) AS island\n"
    "  FROM calls),\n"
    "waiting AS (\n"
    "  SELECT pid, tid, MIN(start_ns) AS s, MAX(end_ns) AS e FROM numbered\n"
    "  GROUP BY pid, tid, island),\n"
    "bounds AS (\n"
    "  SELECT w.pid, w.tid, w.s, w.e,\n"
    "         LAG(w.e) OVER (PARTITION BY w.pid, w.tid ORDER BY w.s) AS previous_end,\n"
    "         LEAD(w.s) OVER (PARTITION BY w.pid, w.tid ORDER BY w.s) AS next_start\n"
    "  FROM waiting AS w)\n"
    "SELECT pid, tid, 'Possibly Waiting', s, e FROM waiting\n"
    "UNION ALL\n"
    "SELECT b.pid, b.tid, 'Possibly Running', COALESCE(b.previous_end, t.start_ns), b.s\n"
    "FROM bounds AS b JOIN threads AS t ON t.pid = b.pid AND t.tid = b.tid\n"
    "WHERE b.s > COALESCE(b.previous_end, t.start_ns)\n"
    "UNION ALL\n"
    "SELECT b.pid, b.tid, 'Possibly Running', b.e, t.end_ns\n"
    "FROM bounds AS b JOIN threads AS t ON t.pid = b.pid AND t.tid = b.tid\n"
    "WHERE b.next_start IS NULL AND t.end_ns > b.e\n"
    "UNION ALL\n"
    "SELECT t.pid, t.tid, 'Possibly Running', t.start_ns, t.end_ns FROM threads AS t\n"
    "WHERE t.end_ns > t.start_ns AND NOT EXISTS\n"
    "  (SELECT 1 FROM osrt_calls AS o WHERE o.pid = t.pid AND o.tid = t.tid);\n";

/* Derived thread_states, once the threads table is in place. */
static int osrt_derive(void *state, struct asys_err *err)
{
    struct asys_importer *imp = ((struct osrt *)state)->imp;
    sqlite3_stmt *st = NULL;
    int traced = 0;
    if (sqlite3_prepare_v2(imp->db,
                           "SELECT 1 FROM session_info WHERE key = 'collectors_enabled' "
                           "AND ',' || value || ',' LIKE '%,osrt,%'",
                           -1, &st, NULL) == SQLITE_OK)
        traced = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    if (!traced)
        return 0; /* without OS runtime tracing there is nothing to estimate from */
    return imp_exec(imp, thread_states_sql, err);
}

static const struct imp_record_op osrt_ops[] = {
    {ASYS_REC_OSRT_CALL, import_call},
};

const struct imp_family imp_family_osrt = {
    .name = "osrt",
    .feature = ASYS_FEATURE_OSRT,
    .schema = "osrt.sql",
    .ops = osrt_ops,
    .op_count = sizeof osrt_ops / sizeof osrt_ops[0],
    .init = osrt_init,
    .derive = osrt_derive,
    .free = osrt_free,
};
