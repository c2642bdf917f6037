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
 * gaps between them within the thread's life.  One ordered pass in C: the
 * same rules as window functions in SQL took 0.25 s per window stage for
 * 124 k calls (make of this tree, 3,322 processes). */
struct state_writer {
    struct asys_importer *imp;
    sqlite3_stmt *insert;
    int64_t pid, tid;
    int has_thread; /* the thread has a threads row */
    sqlite3_int64 life_start; /* threads.start_ns / end_ns; NULL -> has_life_* = 0 */
    sqlite3_int64 life_end;
    int has_life_start, has_life_end;
    int64_t island_start, island_end; /* the island being merged */
    int64_t previous_end; /* end of the island before it */
    int in_thread, has_previous;
};

static int write_state(struct state_writer *w, const char *state, int64_t start, int64_t end,
                       struct asys_err *err)
{
    sqlite3_bind_int64(w->insert, 1, w->pid);
    sqlite3_bind_int64(w->insert, 2, w->tid);
    sqlite3_bind_text(w->insert, 3, state, -1, SQLITE_STATIC);
    sqlite3_bind_int64(w->insert, 4, start);
    sqlite3_bind_int64(w->insert, 5, end);
    return imp_step(w->imp, w->insert, err);
}

/* An island is complete: it and the running gap before it. */
static int close_island(struct state_writer *w, struct asys_err *err)
{
    if (write_state(w, "Possibly Waiting", w->island_start, w->island_end, err) != 0)
        return -1;
    if (w->has_thread) {
        int has_begin = w->has_previous || w->has_life_start;
        int64_t begin = w->has_previous ? w->previous_end : w->life_start;
        if (has_begin && w->island_start > begin &&
            write_state(w, "Possibly Running", begin, w->island_start, err) != 0)
            return -1;
    }
    w->previous_end = w->island_end;
    w->has_previous = 1;
    return 0;
}

/* The thread's last island is complete: it and the running time after it. */
static int close_thread(struct state_writer *w, struct asys_err *err)
{
    if (!w->in_thread)
        return 0;
    w->in_thread = 0;
    if (close_island(w, err) != 0)
        return -1;
    if (w->has_thread && w->has_life_end && w->life_end > w->island_end)
        return write_state(w, "Possibly Running", w->island_end, w->life_end, err);
    return 0;
}

static int add_call(struct state_writer *w, sqlite3_stmt *calls, struct asys_err *err)
{
    int64_t pid = sqlite3_column_int64(calls, 0), tid = sqlite3_column_int64(calls, 1);
    int64_t start = sqlite3_column_int64(calls, 2), end = sqlite3_column_int64(calls, 3);
    if (w->in_thread && pid == w->pid && tid == w->tid) {
        if (start <= w->island_end) { /* overlaps or touches the island: merge */
            if (end > w->island_end)
                w->island_end = end;
            return 0;
        }
        if (close_island(w, err) != 0)
            return -1;
    } else {
        if (close_thread(w, err) != 0)
            return -1;
        w->pid = pid;
        w->tid = tid;
        w->in_thread = 1;
        w->has_previous = 0;
        w->has_thread = sqlite3_column_int(calls, 4);
        w->has_life_start = sqlite3_column_type(calls, 5) != SQLITE_NULL;
        w->life_start = sqlite3_column_int64(calls, 5);
        w->has_life_end = sqlite3_column_type(calls, 6) != SQLITE_NULL;
        w->life_end = sqlite3_column_int64(calls, 6);
    }
    w->island_start = start;
    w->island_end = end;
    return 0;
}

static int write_thread_states(struct asys_importer *imp, struct asys_err *err)
{
    struct state_writer w = {.imp = imp};
    sqlite3_stmt *calls = NULL;
    int rc = -1;
    if (imp_prepare(imp,
                    "INSERT INTO thread_states (pid, tid, state, start_ns, end_ns) "
                    "VALUES (?,?,?,?,?)",
                    &w.insert, err) != 0 ||
        imp_prepare(imp,
                    "SELECT o.pid, o.tid, o.start_ns, o.end_ns, t.pid IS NOT NULL, t.start_ns, "
                    "t.end_ns FROM osrt_calls AS o LEFT JOIN threads AS t "
                    "ON t.pid = o.pid AND t.tid = o.tid "
                    "ORDER BY o.pid, o.tid, o.start_ns, o.end_ns",
                    &calls, err) != 0)
        goto out;
    int step;
    while ((step = sqlite3_step(calls)) == SQLITE_ROW)
        if (add_call(&w, calls, err) != 0)
            goto out;
    if (step != SQLITE_DONE) {
        asys_fail(err, "cannot read the OS runtime calls: %s", sqlite3_errmsg(imp->db));
        goto out;
    }
    if (close_thread(&w, err) != 0)
        goto out;
    /* Threads without a traced call ran, as far as OSRT can tell, all along. */
    rc = imp_exec(imp,
                  "INSERT INTO thread_states (pid, tid, state, start_ns, end_ns) "
                  "SELECT t.pid, t.tid, 'Possibly Running', t.start_ns, t.end_ns FROM threads AS t "
                  "WHERE t.end_ns > t.start_ns AND "
                  "(t.pid, t.tid) NOT IN (SELECT pid, tid FROM osrt_calls)",
                  err);
out:
    sqlite3_finalize(calls);
    sqlite3_finalize(w.insert);
    return rc;
}

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
    return write_thread_states(imp, err);
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
