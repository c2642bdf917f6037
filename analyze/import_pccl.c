/* PCCL records -> the pccl_* tables (schema/pccl.sql).
 *
 * Records come one per event, written when it stopped; an event's parent and
 * its communicator may be in a segment read later, so the rows keep the
 * events' numbers (image, event_id, parent_event_id, the raw comm number)
 * and `analyze` resolves them once every segment is in and indexed: parents
 * to ids, communicators to pccl_comms rows, each collective to the HGGC
 * kernels its plan launched and to the HGTX range it was issued in, and its
 * execution span.  Untrusted input is bounded here (channels) or there
 * (ranks against their communicator, events whose communicator or parent
 * never appeared): such a record is skipped, counted by cause in
 * session_info (pccl_skipped_*) and named once in import_warnings. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import_family.h"
#include "json_util.h"

#define MAX_CHANNELS 64 /* NCCL's MAXCHANNELS */
#define NCCL_STEPS 8 /* NCCL's pipeline depth: the timeline's pipelines */

enum pccl_statement {
    ST_COMM,
    ST_COMM_END,
    ST_API,
    ST_GROUP,
    ST_TASK,
    ST_OP,
    ST_STEP,
    ST_CTRL,
    ST_KERNEL_CH,
    ST_NET,
    ST_STATUS,
    ST_COUNT
};

static const char *const statement_sql[ST_COUNT] = {
    [ST_COMM] =
        "INSERT INTO pccl_comms (pid, image, comm, comm_hash, name_id, rank, nranks, nnodes, "
        "plugin_version, event_mask, init_ns) VALUES (?,?,?,?,?,?,?,?,?,?,?) "
        "ON CONFLICT (image, comm) DO UPDATE SET "
        "comm_hash = COALESCE(comm_hash, excluded.comm_hash), "
        "name_id = COALESCE(name_id, excluded.name_id), rank = COALESCE(rank, excluded.rank), "
        "nranks = COALESCE(nranks, excluded.nranks), nnodes = COALESCE(nnodes, excluded.nnodes), "
        "event_mask = MAX(event_mask, excluded.event_mask), "
        "init_ns = MIN(init_ns, excluded.init_ns)",
    [ST_COMM_END] =
        "INSERT INTO pccl_comm_ends (image, comm, end_ns, finalized, events, dropped_no_slot, "
        "dropped_reentry, dropped_bad_handle, dropped_unknown, unfinished) "
        "VALUES (?,?,?,?,?,?,?,?,?,?)",
    [ST_API] = "INSERT INTO pccl_api_events (kind, comm_id, pid, tid, start_ns, end_ns, func_id, "
               "count, datatype_id, root, stream, group_depth, graph_captured, start_stop_ns, "
               "end_start_ns, unfinished, image, event_id, parent_event_id) "
               "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_GROUP] = "INSERT INTO pccl_groups (comm_id, pid, tid, start_ns, end_ns, unfinished, "
                 "image, event_id) VALUES (?,?,?,?,?,?,?,?)",
    [ST_TASK] = "INSERT INTO pccl_tasks (type, comm_id, pid, tid, rank, func_id, seq_number, "
                "count, datatype_id, algo_id, proto_id, root, peer, channels, warps, "
                "host_start_ns, host_end_ns, start_ns, end_ns, "
                "time_source, issue_tid, issue_ns, unfinished, image, event_id, "
                "parent_event_id, group_event_id) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,'host',?,?,?,?,?,?,?)",
    [ST_OP] = "INSERT INTO pccl_proxy_ops (comm_id, pid, tid, origin_pid, rank, channel, peer, "
              "is_send, steps, chunk_size, start_ns, in_progress_ns, end_ns, unfinished, image, "
              "event_id, parent_event_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_STEP] = "INSERT INTO pccl_proxy_steps (comm_id, pid, tid, channel, is_send, step, "
                "pipeline, start_ns, end_ns, trans_size, send_gpu_wait_ns, send_peer_wait_ns, "
                "send_wait_ns, recv_wait_ns, recv_flush_wait_ns, recv_gpu_wait_ns, unfinished, "
                "image, parent_event_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_CTRL] = "INSERT INTO pccl_proxy_ctrl (comm_id, pid, tid, start_ns, end_ns, state, "
                "state_ns, appended, states, unfinished, image) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
    [ST_KERNEL_CH] =
        "INSERT INTO pccl_kernel_channels (comm_id, pid, tid, channel, host_start_ns, "
        "host_end_ns, gpu_start, gpu_stop, start_ns, end_ns, source, unfinished, image, "
        "event_id, parent_event_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_NET] = "INSERT INTO pccl_net_events (comm_id, pid, tid, plugin_id, start_ns, end_ns, "
               "updates, last_update_ns, unfinished, image, parent_event_id, step) "
               "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_STATUS] = "INSERT INTO pccl_user_plugins (pid, status, version, detail) VALUES (?,?,?,?)",
};

struct pccl {
    struct asys_importer *imp;
    sqlite3_stmt *st[ST_COUNT];
    int64_t realtime_offset; /* CLOCK_REALTIME - CLOCK_MONOTONIC of the session */
    int has_offset;
    int64_t session_start, session_end;
    uint64_t bad_channel; /* skipped here: channel >= MAX_CHANNELS */
    uint64_t records;
};

static int pccl_init(struct asys_importer *imp, void **state, struct asys_err *err)
{
    struct pccl *p = calloc(1, sizeof *p);
    if (!p)
        return asys_fail(err, "out of memory");
    *state = p;
    p->imp = imp;
    for (int i = 0; i < ST_COUNT; i++)
        if (imp_prepare(imp, statement_sql[i], &p->st[i], err) != 0)
            return -1;
    const cJSON *clock = cJSON_GetObjectItemCaseSensitive(imp->manifest, "clock");
    p->has_offset =
        asys_json_get_i64(clock, "realtime_minus_monotonic_ns", &p->realtime_offset) == 0;
    /* what the launcher did with NCCL_PROFILER_PLUGIN, as finalize wrote it */
    const cJSON *pccl = cJSON_GetObjectItemCaseSensitive(imp->manifest, "pccl");
    const char *plugin = asys_json_get_str(pccl, "plugin", NULL);
    if (plugin && imp_session_info(imp, "pccl_plugin", plugin, 0, err) != 0)
        return -1;
    const cJSON *session = cJSON_GetObjectItemCaseSensitive(imp->manifest, "session");
    if (asys_json_get_i64(session, "start_monotonic_ns", &p->session_start) != 0)
        p->session_start = INT64_MIN;
    if (asys_json_get_i64(session, "end_monotonic_ns", &p->session_end) != 0)
        p->session_end = INT64_MAX;
    return 0;
}

static void pccl_free(void *state)
{
    struct pccl *p = state;
    if (!p)
        return;
    for (int i = 0; i < ST_COUNT; i++)
        sqlite3_finalize(p->st[i]);
    free(p);
}

/* ---- binding helpers ---- */
static int64_t ticks_ns(struct asys_importer *imp, uint64_t ticks)
{
    return (int64_t)imp_ns(imp, ticks);
}

static void bind_string(struct asys_importer *imp, sqlite3_stmt *st, int col, uint32_t sid)
{
    uint32_t id = imp_string(imp, imp->seg.image, sid);
    imp_bind_optional(st, col, id, id != 0);
}

static int64_t image_of(struct asys_importer *imp)
{
    return imp->seg.image ? (int64_t)imp->seg.image->uid : 0;
}

/* A record of a launcher segment has no process image: not PCCL's. */
static int from_thread(struct pccl *p)
{
    return p->imp->seg.image != NULL;
}

static int channel_ok(struct pccl *p, unsigned channel)
{
    if (channel < MAX_CHANNELS)
        return 1;
    if (!p->bad_channel++)
        imp_warn(p->imp, "%s: PCCL event on channel %u (NCCL has at most %d); skipped",
                 p->imp->seg.member, channel, MAX_CHANNELS);
    return 0;
}

/* ---- records ---- */
static int import_comm(void *state, const struct asys_record *rec, uint64_t ns,
                       struct asys_err *err)
{
    struct pccl *p = state;
    struct asys_importer *imp = p->imp;
    const struct asys_rec_pccl_comm *r = (const void *)rec->data;
    if (!from_thread(p) || !r->comm)
        return 0;
    sqlite3_stmt *st = p->st[ST_COMM];
    sqlite3_bind_int64(st, 1, imp->seg.pid);
    sqlite3_bind_int64(st, 2, image_of(imp));
    sqlite3_bind_int64(st, 3, r->comm);
    imp_bind_optional(st, 4, (int64_t)r->comm_hash, r->comm_hash != 0);
    bind_string(imp, st, 5, r->name_string_id);
    imp_bind_optional(st, 6, r->rank, r->rank >= 0);
    imp_bind_optional(st, 7, r->nranks, r->nranks > 0);
    imp_bind_optional(st, 8, r->nnodes, r->nnodes > 0);
    sqlite3_bind_int64(st, 9, rec->arg);
    sqlite3_bind_int64(st, 10, r->event_mask);
    sqlite3_bind_int64(st, 11, (int64_t)ns);
    return imp_step(imp, st, err);
}

static int import_comm_end(void *state, const struct asys_record *rec, uint64_t ns,
                           struct asys_err *err)
{
    struct pccl *p = state;
    const struct asys_rec_pccl_comm_end *r = (const void *)rec->data;
    if (!from_thread(p))
        return 0;
    sqlite3_stmt *st = p->st[ST_COMM_END];
    sqlite3_bind_int64(st, 1, image_of(p->imp));
    sqlite3_bind_int64(st, 2, r->comm);
    sqlite3_bind_int64(st, 3, (int64_t)ns);
    sqlite3_bind_int64(st, 4, r->finalized != 0);
    const uint64_t counts[] = {r->events,          r->dropped_no_slot,
                               r->dropped_reentry, r->dropped_bad_handle,
                               r->dropped_unknown, r->unfinished};
    for (int i = 0; i < 6; i++) /* bounded: SQLite's integers are signed */
        sqlite3_bind_int64(st, 5 + i, (int64_t)(counts[i] > INT64_MAX ? INT64_MAX : counts[i]));
    return imp_step(p->imp, st, err);
}

/* The context an event was started in: its number's high bits. */
static int64_t comm_of(uint64_t event_id)
{
    return (int64_t)(event_id >> ASYS_PCCL_COMM_SHIFT);
}

static int unfinished(const struct asys_record *rec)
{
    return (rec->arg & ASYS_PCCL_UNFINISHED) != 0;
}

/* The columns every event table starts its tail with: unfinished, image,
 * event_id, and the parent's number when asked for. */
static int bind_event_tail(struct pccl *p, sqlite3_stmt *st, int col, const struct asys_record *rec,
                           const struct asys_pccl_event *ev, int with_parent)
{
    sqlite3_bind_int64(st, col++, unfinished(rec));
    sqlite3_bind_int64(st, col++, image_of(p->imp));
    sqlite3_bind_int64(st, col++, (int64_t)ev->event_id);
    if (with_parent)
        sqlite3_bind_int64(st, col++, (int64_t)ev->parent_id);
    return col;
}

/* The start, clamped to the stop (a record's fields are not trusted). */
static int64_t start_at(struct pccl *p, uint64_t start_ticks, uint64_t ns)
{
    int64_t start = ticks_ns(p->imp, start_ticks);
    return start > (int64_t)ns ? (int64_t)ns : start;
}

static int64_t start_of(struct pccl *p, const struct asys_pccl_event *ev, uint64_t ns)
{
    return start_at(p, ev->start_ticks, ns);
}

/* A state stored as ticks after the start, delta + 1 (0: not seen; the
 * largest: at least that late, taken as the stop). */
static void bind_delta(struct pccl *p, sqlite3_stmt *st, int col, uint64_t start_ticks,
                       uint32_t delta, uint64_t end_ns)
{
    if (!delta) {
        sqlite3_bind_null(st, col);
        return;
    }
    int64_t ns = delta == 0xffffffffu ? (int64_t)end_ns
                                      : ticks_ns(p->imp, start_ticks + (uint64_t)(delta - 1));
    sqlite3_bind_int64(st, col, ns > (int64_t)end_ns ? (int64_t)end_ns : ns);
}

/* GROUP_API, CALL and KERNEL_LAUNCH: the rows of pccl_api_events. */
static int import_api_row(struct pccl *p, const struct asys_record *rec, uint64_t ns, int kind,
                          const struct asys_pccl_event *ev, sqlite3_stmt **out)
{
    struct asys_importer *imp = p->imp;
    sqlite3_stmt *st = p->st[ST_API];
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    sqlite3_bind_int64(st, 1, kind);
    sqlite3_bind_int64(st, 2, comm_of(ev->event_id)); /* the raw number until analyze */
    sqlite3_bind_int64(st, 3, imp->seg.pid);
    sqlite3_bind_int64(st, 4, imp->seg.tid);
    sqlite3_bind_int64(st, 5, start_of(p, ev, ns));
    sqlite3_bind_int64(st, 6, (int64_t)ns);
    bind_event_tail(p, st, 16, rec, ev, 1);
    *out = st;
    return 0;
}

static int import_group_api(void *state, const struct asys_record *rec, uint64_t ns,
                            struct asys_err *err)
{
    struct pccl *p = state;
    const struct asys_rec_pccl_group_api *r = (const void *)rec->data;
    sqlite3_stmt *st;
    if (!from_thread(p) || import_api_row(p, rec, ns, 1, &r->ev, &st) != 0)
        return 0;
    sqlite3_bind_int64(st, 12, r->depth);
    sqlite3_bind_int64(st, 13, (rec->arg & 1) != 0);
    bind_delta(p, st, 14, r->ev.start_ticks, r->start_stop_delta, ns);
    bind_delta(p, st, 15, r->ev.start_ticks, r->end_start_delta, ns);
    return imp_step(p->imp, st, err);
}

static int import_call(void *state, const struct asys_record *rec, uint64_t ns,
                       struct asys_err *err)
{
    struct pccl *p = state;
    struct asys_importer *imp = p->imp;
    const struct asys_rec_pccl_call *r = (const void *)rec->data;
    unsigned kind = rec->arg & 0xff;
    sqlite3_stmt *st;
    if (!from_thread(p) || (kind != ASYS_PCCL_COLL_API && kind != ASYS_PCCL_P2P_API) ||
        import_api_row(p, rec, ns, (int)kind, &r->ev, &st) != 0)
        return 0;
    bind_string(imp, st, 7, r->func_string_id);
    sqlite3_bind_int64(st, 8, (int64_t)(r->count > INT64_MAX ? INT64_MAX : r->count));
    bind_string(imp, st, 9, r->datatype_string_id);
    imp_bind_optional(st, 10, r->root, kind == ASYS_PCCL_COLL_API);
    sqlite3_bind_int64(st, 11, (int64_t)r->stream);
    sqlite3_bind_int64(st, 13, (rec->arg & 0x100) != 0);
    return imp_step(imp, st, err);
}

static int import_kernel_launch(void *state, const struct asys_record *rec, uint64_t ns,
                                struct asys_err *err)
{
    struct pccl *p = state;
    const struct asys_rec_pccl_kernel_launch *r = (const void *)rec->data;
    sqlite3_stmt *st;
    if (!from_thread(p) || import_api_row(p, rec, ns, 4, &r->ev, &st) != 0)
        return 0;
    sqlite3_bind_int64(st, 11, (int64_t)r->stream);
    sqlite3_bind_int64(st, 13, 0);
    return imp_step(p->imp, st, err);
}

static int import_group(void *state, const struct asys_record *rec, uint64_t ns,
                        struct asys_err *err)
{
    struct pccl *p = state;
    const struct asys_rec_pccl_group *r = (const void *)rec->data;
    if (!from_thread(p))
        return 0;
    sqlite3_stmt *st = p->st[ST_GROUP];
    sqlite3_bind_int64(st, 1, comm_of(r->ev.event_id));
    sqlite3_bind_int64(st, 2, p->imp->seg.pid);
    sqlite3_bind_int64(st, 3, p->imp->seg.tid);
    sqlite3_bind_int64(st, 4, start_of(p, &r->ev, ns));
    sqlite3_bind_int64(st, 5, (int64_t)ns);
    bind_event_tail(p, st, 6, rec, &r->ev, 0);
    return imp_step(p->imp, st, err);
}

static int import_task(void *state, const struct asys_record *rec, uint64_t ns,
                       struct asys_err *err)
{
    struct pccl *p = state;
    struct asys_importer *imp = p->imp;
    const struct asys_rec_pccl_task *r = (const void *)rec->data;
    unsigned kind = rec->arg & ASYS_PCCL_ARG_MASK;
    if (!from_thread(p) || (kind != ASYS_PCCL_TASK_COLL && kind != ASYS_PCCL_TASK_P2P))
        return 0;
    int coll = kind == ASYS_PCCL_TASK_COLL;
    int64_t start = start_of(p, &r->ev, ns);
    sqlite3_stmt *st = p->st[ST_TASK];
    sqlite3_bind_int64(st, 1, kind);
    sqlite3_bind_int64(st, 2, comm_of(r->ev.event_id));
    sqlite3_bind_int64(st, 3, imp->seg.pid);
    sqlite3_bind_int64(st, 4, imp->seg.tid);
    sqlite3_bind_int64(st, 5, r->rank);
    bind_string(imp, st, 6, r->func_string_id);
    imp_bind_optional(st, 7, (int64_t)r->seq_number, coll);
    sqlite3_bind_int64(st, 8, (int64_t)(r->count > INT64_MAX ? INT64_MAX : r->count));
    bind_string(imp, st, 9, r->datatype_string_id);
    bind_string(imp, st, 10, r->algo_string_id);
    bind_string(imp, st, 11, r->proto_string_id);
    imp_bind_optional(st, 12, r->root_or_peer, coll);
    imp_bind_optional(st, 13, r->root_or_peer, !coll);
    sqlite3_bind_int64(st, 14, r->channels);
    imp_bind_optional(st, 15, r->warps, coll);
    sqlite3_bind_int64(st, 16, start);
    sqlite3_bind_int64(st, 17, (int64_t)ns);
    sqlite3_bind_int64(st, 18, start);
    sqlite3_bind_int64(st, 19, (int64_t)ns);
    sqlite3_bind_int64(st, 20, imp->seg.tid);
    sqlite3_bind_int64(st, 21, start);
    int col = bind_event_tail(p, st, 22, rec, &r->ev, 1);
    sqlite3_bind_int64(st, col, (int64_t)r->group_id);
    return imp_step(imp, st, err);
}

static int import_op(void *state, const struct asys_record *rec, uint64_t ns, struct asys_err *err)
{
    struct pccl *p = state;
    struct asys_importer *imp = p->imp;
    const struct asys_rec_pccl_proxy_op *r = (const void *)rec->data;
    if (!from_thread(p) || !channel_ok(p, r->channel))
        return 0;
    sqlite3_stmt *st = p->st[ST_OP];
    sqlite3_bind_int64(st, 1, comm_of(r->ev.event_id));
    sqlite3_bind_int64(st, 2, imp->seg.pid);
    sqlite3_bind_int64(st, 3, imp->seg.tid);
    imp_bind_optional(st, 4, r->pid, r->pid != 0);
    sqlite3_bind_int64(st, 5, r->rank);
    sqlite3_bind_int64(st, 6, r->channel);
    sqlite3_bind_int64(st, 7, r->peer);
    sqlite3_bind_int64(st, 8, r->is_send != 0);
    sqlite3_bind_int64(st, 9, r->steps);
    sqlite3_bind_int64(st, 10, r->chunk_size);
    sqlite3_bind_int64(st, 11, start_of(p, &r->ev, ns));
    bind_delta(p, st, 12, r->ev.start_ticks, r->in_progress_delta, ns);
    sqlite3_bind_int64(st, 13, (int64_t)ns);
    bind_event_tail(p, st, 14, rec, &r->ev, 1);
    return imp_step(imp, st, err);
}

static int import_step(void *state, const struct asys_record *rec, uint64_t ns,
                       struct asys_err *err)
{
    struct pccl *p = state;
    struct asys_importer *imp = p->imp;
    const struct asys_rec_pccl_proxy_step *r = (const void *)rec->data;
    if (!from_thread(p) || !channel_ok(p, r->channel))
        return 0;
    sqlite3_stmt *st = p->st[ST_STEP];
    int send = r->is_send != 0;
    sqlite3_bind_int64(st, 1, comm_of(r->op_id));
    sqlite3_bind_int64(st, 2, imp->seg.pid);
    sqlite3_bind_int64(st, 3, imp->seg.tid);
    sqlite3_bind_int64(st, 4, r->channel);
    sqlite3_bind_int64(st, 5, send);
    sqlite3_bind_int64(st, 6, r->step);
    sqlite3_bind_int64(st, 7, ((r->step % NCCL_STEPS) + NCCL_STEPS) % NCCL_STEPS);
    sqlite3_bind_int64(st, 8, start_at(p, r->start_ticks, ns));
    sqlite3_bind_int64(st, 9, (int64_t)ns);
    sqlite3_bind_int64(st, 10, r->trans_size);
    /* the direction's three states into its three columns, the others NULL */
    for (int i = 0; i < 3; i++) {
        bind_delta(p, st, (send ? 11 : 14) + i, r->start_ticks, r->state_delta[i], ns);
        sqlite3_bind_null(st, (send ? 14 : 11) + i);
    }
    sqlite3_bind_int64(st, 17, unfinished(rec));
    sqlite3_bind_int64(st, 18, image_of(imp));
    sqlite3_bind_int64(st, 19, (int64_t)r->op_id);
    return imp_step(imp, st, err);
}

static const char *ctrl_state(unsigned state)
{
    static const char *const names[] = {"idle",   "active", "sleep",
                                        "wakeup", "append", "append end"};
    return state >= 13 && state <= 18 ? names[state - 13] : NULL;
}

static int import_ctrl(void *state, const struct asys_record *rec, uint64_t ns,
                       struct asys_err *err)
{
    struct pccl *p = state;
    struct asys_importer *imp = p->imp;
    const struct asys_rec_pccl_proxy_ctrl *r = (const void *)rec->data;
    if (!from_thread(p))
        return 0;
    sqlite3_stmt *st = p->st[ST_CTRL];
    unsigned last = rec->arg & ASYS_PCCL_ARG_MASK;
    const char *name = r->states ? ctrl_state(last) : NULL;
    sqlite3_bind_int64(st, 1, comm_of(r->ev.event_id));
    sqlite3_bind_int64(st, 2, imp->seg.pid);
    sqlite3_bind_int64(st, 3, imp->seg.tid);
    sqlite3_bind_int64(st, 4, start_of(p, &r->ev, ns));
    sqlite3_bind_int64(st, 5, (int64_t)ns);
    if (name)
        sqlite3_bind_text(st, 6, name, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 6);
    bind_delta(p, st, 7, r->ev.start_ticks, name ? r->state_delta : 0, ns);
    imp_bind_optional(st, 8, r->appended, last == 18);
    sqlite3_bind_int64(st, 9, r->states);
    sqlite3_bind_int64(st, 10, unfinished(rec));
    sqlite3_bind_int64(st, 11, image_of(imp));
    return imp_step(imp, st, err);
}

/* The GPU timer (globaltimer: CLOCK_REALTIME ns on the GPUs NCCL profiles)
 * on the host's clock; -1 when missing or outside the session by more than
 * a second (another clock: the host's times are used instead). */
static int64_t gpu_to_host(const struct pccl *p, uint64_t ptimer)
{
    if (!ptimer || !p->has_offset || ptimer > INT64_MAX)
        return -1;
    int64_t ns = (int64_t)ptimer - p->realtime_offset;
    if ((p->session_start != INT64_MIN && ns < p->session_start - 1000000000) ||
        (p->session_end != INT64_MAX && ns > p->session_end + 1000000000))
        return -1;
    return ns;
}

static int import_kernel_ch(void *state, const struct asys_record *rec, uint64_t ns,
                            struct asys_err *err)
{
    struct pccl *p = state;
    struct asys_importer *imp = p->imp;
    const struct asys_rec_pccl_kernel_ch *r = (const void *)rec->data;
    if (!from_thread(p) || !channel_ok(p, r->channel))
        return 0;
    int64_t host_start = start_of(p, &r->ev, ns), host_end = (int64_t)ns;
    int64_t start = gpu_to_host(p, r->ptimer_start), end = gpu_to_host(p, r->ptimer_stop);
    int timer = start >= 0 && end >= start;
    sqlite3_stmt *st = p->st[ST_KERNEL_CH];
    sqlite3_bind_int64(st, 1, comm_of(r->ev.event_id));
    sqlite3_bind_int64(st, 2, imp->seg.pid);
    sqlite3_bind_int64(st, 3, imp->seg.tid);
    sqlite3_bind_int64(st, 4, r->channel);
    sqlite3_bind_int64(st, 5, host_start);
    sqlite3_bind_int64(st, 6, host_end);
    imp_bind_optional(st, 7, (int64_t)r->ptimer_start,
                      r->ptimer_start && r->ptimer_start <= INT64_MAX);
    imp_bind_optional(st, 8, (int64_t)r->ptimer_stop,
                      r->ptimer_stop && r->ptimer_stop <= INT64_MAX);
    sqlite3_bind_int64(st, 9, timer ? start : host_start);
    sqlite3_bind_int64(st, 10, timer ? end : host_end);
    sqlite3_bind_text(st, 11, timer ? "gpu_timer" : "host", -1, SQLITE_STATIC);
    bind_event_tail(p, st, 12, rec, &r->ev, 1);
    return imp_step(imp, st, err);
}

static int import_net(void *state, const struct asys_record *rec, uint64_t ns, struct asys_err *err)
{
    struct pccl *p = state;
    struct asys_importer *imp = p->imp;
    const struct asys_rec_pccl_net *r = (const void *)rec->data;
    if (!from_thread(p))
        return 0;
    sqlite3_stmt *st = p->st[ST_NET];
    sqlite3_bind_int64(st, 1, comm_of(r->ev.event_id));
    sqlite3_bind_int64(st, 2, imp->seg.pid);
    sqlite3_bind_int64(st, 3, imp->seg.tid);
    sqlite3_bind_int64(st, 4, r->plugin_id);
    sqlite3_bind_int64(st, 5, start_of(p, &r->ev, ns));
    sqlite3_bind_int64(st, 6, (int64_t)ns);
    sqlite3_bind_int64(st, 7, r->updates);
    bind_delta(p, st, 8, r->ev.start_ticks, r->last_update_delta, ns);
    sqlite3_bind_int64(st, 9, unfinished(rec));
    sqlite3_bind_int64(st, 10, image_of(imp));
    sqlite3_bind_int64(st, 11, (int64_t)r->ev.parent_id);
    sqlite3_bind_int64(st, 12, r->step);
    return imp_step(imp, st, err);
}

static int import_status(void *state, const struct asys_record *rec, uint64_t ns,
                         struct asys_err *err)
{
    (void)ns;
    struct pccl *p = state;
    const struct asys_rec_pccl_status *r = (const void *)rec->data;
    if (!from_thread(p) || (rec->arg != ASYS_PCCL_CHAINED && rec->arg != ASYS_PCCL_CHAIN_FAILED))
        return 0;
    size_t length = r->text_length;
    if (length > rec->size - sizeof *r)
        length = rec->size - sizeof *r;
    if (length > ASYS_PCCL_STATUS_TEXT_MAX)
        length = ASYS_PCCL_STATUS_TEXT_MAX;
    sqlite3_stmt *st = p->st[ST_STATUS];
    sqlite3_bind_int64(st, 1, p->imp->seg.pid);
    sqlite3_bind_text(st, 2, rec->arg == ASYS_PCCL_CHAINED ? "chained" : "failed", -1,
                      SQLITE_STATIC);
    imp_bind_optional(st, 3, r->version, rec->arg == ASYS_PCCL_CHAINED);
    sqlite3_bind_text(st, 4, (const char *)(r + 1), (int)length, SQLITE_TRANSIENT);
    return imp_step(p->imp, st, err);
}

/* ---- after every segment: resolve, check, join ---- */

/* Runs `sql` (a DELETE of bad rows) and counts what it removed under
 * session_info `key`, with one warning naming the cause. */
static int skip(struct pccl *p, const char *key, const char *what, const char *sql, uint64_t *total,
                struct asys_err *err)
{
    if (imp_exec(p->imp, sql, err) != 0)
        return -1;
    int64_t n = sqlite3_changes64(p->imp->db);
    if (!n)
        return 0;
    *total += (uint64_t)n;
    imp_warn(p->imp, "PCCL: %" PRId64 " %s; skipped", n, what);
    return imp_session_info(p->imp, key, NULL, n, err);
}

/* The event tables whose comm_id holds the raw number until resolved. */
static const char *const event_tables[] = {
    "pccl_api_events",  "pccl_groups",     "pccl_tasks",           "pccl_proxy_ops",
    "pccl_proxy_steps", "pccl_proxy_ctrl", "pccl_kernel_channels", "pccl_net_events"};
#define EVENT_TABLES (sizeof event_tables / sizeof event_tables[0])

static int resolve_comms(struct pccl *p, uint64_t *skipped, struct asys_err *err)
{
    char sql[512];
    /* finalize records into their communicators */
    if (imp_exec(p->imp,
                 "UPDATE pccl_comms SET end_ns = e.end_ns, finalized = e.finalized, "
                 "events = e.events, dropped_no_slot = e.dropped_no_slot, "
                 "dropped_reentry = e.dropped_reentry, dropped_bad_handle = e.dropped_bad_handle, "
                 "dropped_unknown = e.dropped_unknown, unfinished = e.unfinished "
                 "FROM pccl_comm_ends AS e WHERE e.image = pccl_comms.image "
                 "AND e.comm = pccl_comms.comm",
                 err) != 0)
        return -1;
    if (skip(p, "pccl_skipped_comm_ends", "finalize records of a communicator never initialised",
             "DELETE FROM pccl_comm_ends WHERE NOT EXISTS (SELECT 1 FROM pccl_comms AS c "
             "WHERE c.image = pccl_comm_ends.image AND c.comm = pccl_comm_ends.comm)",
             skipped, err) != 0)
        return -1;
    uint64_t orphans = 0;
    for (size_t i = 0; i < EVENT_TABLES; i++) {
        snprintf(sql, sizeof sql,
                 "UPDATE %s SET comm_id = (SELECT c.id FROM pccl_comms AS c WHERE "
                 "c.image = %s.image AND c.comm = %s.comm_id)",
                 event_tables[i], event_tables[i], event_tables[i]);
        if (imp_exec(p->imp, sql, err) != 0)
            return -1;
        snprintf(sql, sizeof sql, "DELETE FROM %s WHERE comm_id IS NULL", event_tables[i]);
        if (imp_exec(p->imp, sql, err) != 0)
            return -1;
        orphans += (uint64_t)sqlite3_changes64(p->imp->db);
    }
    if (orphans) {
        *skipped += orphans;
        imp_warn(p->imp, "PCCL: %" PRIu64 " events of a communicator never initialised; skipped",
                 orphans);
        if (imp_session_info(p->imp, "pccl_skipped_unknown_comm", NULL, (int64_t)orphans, err))
            return -1;
    }
    return 0;
}

static const char *const resolve_sql[] = {
    /* CollApi, P2pApi and KernelLaunch under their GroupApi */
    "UPDATE pccl_api_events SET group_api_id = (SELECT g.id FROM pccl_api_events AS g "
    "WHERE g.image = pccl_api_events.image AND g.event_id = pccl_api_events.parent_event_id "
    "AND g.kind = 1) WHERE kind <> 1 AND parent_event_id <> 0",
    /* tasks: their API event (v5), their group */
    "UPDATE pccl_tasks SET api_id = (SELECT a.id FROM pccl_api_events AS a "
    "WHERE a.image = pccl_tasks.image AND a.event_id = pccl_tasks.parent_event_id "
    "AND a.kind IN (2, 3)) WHERE parent_event_id <> 0",
    "UPDATE pccl_tasks SET group_id = (SELECT g.id FROM pccl_groups AS g "
    "WHERE g.image = pccl_tasks.image AND g.event_id = pccl_tasks.group_event_id) "
    "WHERE group_event_id <> 0",
    /* the thread and time the call was issued: its API event's */
    "UPDATE pccl_tasks SET issue_tid = a.tid, issue_ns = a.start_ns "
    "FROM pccl_api_events AS a WHERE a.id = pccl_tasks.api_id",
    /* proxy ops under their task, steps under their op, KernelCh under their task */
    "UPDATE pccl_proxy_ops SET task_id = (SELECT t.id FROM pccl_tasks AS t "
    "WHERE t.image = pccl_proxy_ops.image AND t.event_id = pccl_proxy_ops.parent_event_id) "
    "WHERE parent_event_id <> 0",
    "UPDATE pccl_proxy_steps SET op_id = (SELECT o.id FROM pccl_proxy_ops AS o "
    "WHERE o.image = pccl_proxy_steps.image AND o.event_id = pccl_proxy_steps.parent_event_id)",
    "UPDATE pccl_kernel_channels SET task_id = (SELECT t.id FROM pccl_tasks AS t "
    "WHERE t.image = pccl_kernel_channels.image "
    "AND t.event_id = pccl_kernel_channels.parent_event_id) WHERE parent_event_id <> 0",
    "UPDATE pccl_net_events SET step_id = (SELECT s.id FROM pccl_proxy_steps AS s "
    "JOIN pccl_proxy_ops AS o ON o.id = s.op_id WHERE o.image = pccl_net_events.image "
    "AND o.event_id = pccl_net_events.parent_event_id AND s.step = pccl_net_events.step) "
    "WHERE parent_event_id <> 0",
};

/* Each collective to its plan's KernelLaunch (v5: same GroupApi and
 * communicator; the latest that started before it, else the first), and to
 * the HGGC kernels launched inside it on its thread; before v5, the last
 * kernel launched on the thread before its Group started. */
static const char *const join_sql[] = {
    "UPDATE pccl_tasks SET kernel_launch_id = pick.kl FROM ("
    "  SELECT t.id AS task, k.id AS kl, ROW_NUMBER() OVER (PARTITION BY t.id "
    "    ORDER BY k.start_ns > t.host_start_ns, "
    "    CASE WHEN k.start_ns <= t.host_start_ns THEN -k.start_ns ELSE k.start_ns END) AS n "
    "  FROM pccl_tasks AS t JOIN pccl_api_events AS a ON a.id = t.api_id "
    "  JOIN pccl_api_events AS k ON k.kind = 4 AND k.group_api_id = a.group_api_id "
    "  AND k.comm_id = t.comm_id) AS pick WHERE pick.task = pccl_tasks.id AND pick.n = 1",
    "INSERT OR IGNORE INTO pccl_task_kernels (task_id, activity_id, api_id) "
    "SELECT t.id, p.id, a.id FROM pccl_tasks AS t "
    "JOIN pccl_api_events AS k ON k.id = t.kernel_launch_id "
    "JOIN hggc_api_calls AS a ON a.pid = k.pid AND a.tid = k.tid "
    "AND a.start_ns BETWEEN k.start_ns AND k.end_ns "
    "JOIN ppu_activities AS p ON p.api_id = a.id AND p.kind = 1",
    "INSERT OR IGNORE INTO pccl_task_kernels (task_id, activity_id, api_id) "
    "SELECT t.id, p.id, l.api FROM pccl_tasks AS t JOIN pccl_groups AS g ON g.id = t.group_id "
    "JOIN (SELECT g2.id AS gid, (SELECT a.id FROM hggc_api_calls AS a "
    "      WHERE a.pid = g2.pid AND a.tid = g2.tid AND a.start_ns <= g2.start_ns "
    "      AND EXISTS (SELECT 1 FROM ppu_activities AS q WHERE q.api_id = a.id AND q.kind = 1) "
    "      ORDER BY a.start_ns DESC LIMIT 1) AS api FROM pccl_groups AS g2) AS l ON l.gid = g.id "
    "JOIN ppu_activities AS p ON p.api_id = l.api AND p.kind = 1 "
    "WHERE t.kernel_launch_id IS NULL",
    /* the execution span: its channels' GPU times, else its kernels, else its proxy ops */
    "UPDATE pccl_tasks SET start_ns = s.lo, end_ns = s.hi, time_source = 'gpu_timer' "
    "FROM (SELECT task_id, MIN(start_ns) AS lo, MAX(end_ns) AS hi FROM pccl_kernel_channels "
    "      WHERE source = 'gpu_timer' AND task_id IS NOT NULL GROUP BY task_id) AS s "
    "WHERE s.task_id = pccl_tasks.id",
    "UPDATE pccl_tasks SET start_ns = s.lo, end_ns = s.hi, time_source = 'kernel' "
    "FROM (SELECT k.task_id, MIN(p.start_ns) AS lo, MAX(p.end_ns) AS hi "
    "      FROM pccl_task_kernels AS k JOIN ppu_activities AS p ON p.id = k.activity_id "
    "      GROUP BY k.task_id) AS s "
    "WHERE s.task_id = pccl_tasks.id AND pccl_tasks.time_source = 'host'",
    "UPDATE pccl_tasks SET start_ns = s.lo, end_ns = s.hi, time_source = 'proxy' "
    "FROM (SELECT task_id, MIN(start_ns) AS lo, MAX(end_ns) AS hi FROM pccl_proxy_ops "
    "      WHERE task_id IS NOT NULL GROUP BY task_id) AS s "
    "WHERE s.task_id = pccl_tasks.id AND pccl_tasks.time_source = 'host'",
    /* the message size as nccl-tests counts it (size_bucket: write_buckets) */
    "UPDATE pccl_tasks SET bytes = count * "
    "  CASE WHEN (SELECT value FROM strings WHERE id = func_id) IN ('AllGather', 'Broadcast') "
    "       THEN 1 ELSE COALESCE((SELECT d.size FROM strings AS s JOIN pccl_datatypes AS d "
    "                             ON d.name = s.value WHERE s.id = datatype_id), 1) END * "
    "  CASE WHEN (SELECT value FROM strings WHERE id = func_id) "
    "            IN ('AllGather', 'ReduceScatter', 'AlltoAll') "
    "       THEN COALESCE((SELECT nranks FROM pccl_comms WHERE id = comm_id), 1) ELSE 1 END",
};

static int64_t power_of_two_below(int64_t v)
{
    int64_t b = 1;
    if (v <= 0)
        return 0;
    while (b <= v / 2)
        b *= 2;
    return b;
}

/* size_bucket in C: SQLite has no log2 without its math functions. */
static int write_buckets(struct pccl *p, struct asys_err *err)
{
    sqlite3_stmt *read = NULL, *write = NULL;
    int rc = -1;
    if (imp_prepare(p->imp, "SELECT id, bytes FROM pccl_tasks WHERE bytes IS NOT NULL", &read,
                    err) != 0 ||
        imp_prepare(p->imp, "UPDATE pccl_tasks SET size_bucket = ? WHERE id = ?", &write, err))
        goto out;
    int step;
    while ((step = sqlite3_step(read)) == SQLITE_ROW) {
        sqlite3_bind_int64(write, 1, power_of_two_below(sqlite3_column_int64(read, 1)));
        sqlite3_bind_int64(write, 2, sqlite3_column_int64(read, 0));
        if (imp_step(p->imp, write, err) != 0)
            goto out;
    }
    if (step != SQLITE_DONE) {
        imp_sql_error(p->imp, err);
        goto out;
    }
    rc = 0;
out:
    sqlite3_finalize(read);
    sqlite3_finalize(write);
    return rc;
}

static int pccl_analyze(void *state, struct asys_err *err)
{
    struct pccl *p = state;
    struct asys_importer *imp = p->imp;
    uint64_t skipped = p->bad_channel;
    if (p->bad_channel &&
        imp_session_info(imp, "pccl_skipped_channel", NULL, (int64_t)p->bad_channel, err) != 0)
        return -1;
    if (resolve_comms(p, &skipped, err) != 0)
        return -1;
    /* ranks outside their communicator */
    if (skip(p, "pccl_skipped_rank", "tasks of a rank outside their communicator",
             "DELETE FROM pccl_tasks WHERE rank < 0 OR rank >= (SELECT COALESCE(c.nranks, "
             "9223372036854775807) FROM pccl_comms AS c WHERE c.id = pccl_tasks.comm_id)",
             &skipped, err) != 0)
        return -1;
    if (skip(p, "pccl_skipped_rank_ops", "proxy ops of a rank outside their communicator",
             "DELETE FROM pccl_proxy_ops WHERE rank < 0 OR rank >= (SELECT COALESCE(c.nranks, "
             "9223372036854775807) FROM pccl_comms AS c WHERE c.id = pccl_proxy_ops.comm_id)",
             &skipped, err) != 0)
        return -1;
    for (size_t i = 0; i < sizeof resolve_sql / sizeof resolve_sql[0]; i++)
        if (imp_exec(imp, resolve_sql[i], err) != 0)
            return -1;
    if (skip(p, "pccl_skipped_orphan_steps", "proxy steps without their proxy op",
             "DELETE FROM pccl_proxy_steps WHERE op_id IS NULL", &skipped, err) != 0)
        return -1;
    for (size_t i = 0; i < sizeof join_sql / sizeof join_sql[0]; i++)
        if (imp_exec(imp, join_sql[i], err) != 0)
            return -1;
    /* the HGTX range each task was issued in: the innermost open on its
     * thread, looked up by an index of the ranges by thread made only for
     * this and dropped after it (kept, it cost 5-7 s of every import of
     * 10 M ranges, PCCL or not: bench/RESULTS.md, 2026-12-04 later) */
    sqlite3_stmt *any = NULL;
    if (imp_prepare(imp, "SELECT EXISTS (SELECT 1 FROM pccl_tasks)", &any, err) != 0)
        return -1;
    int tasks = sqlite3_step(any) == SQLITE_ROW && sqlite3_column_int(any, 0);
    sqlite3_finalize(any);
    if (tasks &&
        imp_exec(imp,
                 "CREATE INDEX pccl_hgtx_events_by_thread ON hgtx_events (pid, tid, start_ns);"
                 "UPDATE pccl_tasks SET hgtx_range_id = (SELECT e.id FROM hgtx_events AS e "
                 "WHERE e.pid = pccl_tasks.pid AND e.tid = pccl_tasks.issue_tid "
                 "AND e.kind IN (1, 2) AND e.start_ns <= pccl_tasks.issue_ns "
                 "AND COALESCE(e.end_ns, 9223372036854775807) >= pccl_tasks.issue_ns "
                 "ORDER BY e.start_ns DESC, e.id DESC LIMIT 1);"
                 "DROP INDEX pccl_hgtx_events_by_thread;",
                 err) != 0)
        return -1;
    if (write_buckets(p, err) != 0)
        return -1;
    if (skipped && imp_session_info(imp, "pccl_skipped", NULL, (int64_t)skipped, err) != 0)
        return -1;
    return 0;
}

static const struct imp_record_op pccl_ops[] = {
    {ASYS_REC_PCCL_COMM, import_comm},       {ASYS_REC_PCCL_GROUP_API, import_group_api},
    {ASYS_REC_PCCL_CALL, import_call},       {ASYS_REC_PCCL_KERNEL_LAUNCH, import_kernel_launch},
    {ASYS_REC_PCCL_GROUP, import_group},     {ASYS_REC_PCCL_TASK, import_task},
    {ASYS_REC_PCCL_PROXY_OP, import_op},     {ASYS_REC_PCCL_PROXY_STEP, import_step},
    {ASYS_REC_PCCL_PROXY_CTRL, import_ctrl}, {ASYS_REC_PCCL_KERNEL_CH, import_kernel_ch},
    {ASYS_REC_PCCL_NET, import_net},         {ASYS_REC_PCCL_COMM_END, import_comm_end},
    {ASYS_REC_PCCL_STATUS, import_status},
};

const struct imp_family imp_family_pccl = {
    .name = "pccl",
    .feature = ASYS_FEATURE_PCCL,
    .schema = "pccl.sql",
    .ops = pccl_ops,
    .op_count = sizeof pccl_ops / sizeof pccl_ops[0],
    .init = pccl_init,
    .analyze = pccl_analyze,
    .free = pccl_free,
};
