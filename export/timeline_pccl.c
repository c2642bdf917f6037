/* PCCL on the timeline, as the manual shows it: per communicator (a
 * top-level group, "PCCL comm NAME (N ranks)") and rank, the collectives
 * and point-to-point operations at their execution times (with a flow to
 * each HGGC kernel they ran in), the proxy thread's own activity, and per
 * channel its kernel work (KernelCh), its proxy operations and its
 * pipelines: the proxy steps by NCCL buffer slot (step mod 8) and direction,
 * each step with its states nested inside.  On the issuing thread, a "PCCL"
 * row holds NCCL's API events (group, collective and point-to-point calls,
 * kernel launches) and its host events (groups, Coll and P2p enqueueing). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "timeline_walk.h"

static void api_row_name(struct walk *w, int64_t sub, char *out, size_t size)
{
    (void)w;
    (void)sub;
    snprintf(out, size, "PCCL");
}

/* after Python (8), before HGTX (10) */
static const struct tl_thread_row api_row = {TL_RANK_PCCL_API, api_row_name, 0, NULL};

/* The name in string column `col`, "?" when NULL (a record without it). */
static struct tl_name name_at(struct walk *w, sqlite3_stmt *st, int col)
{
    return sqlite3_column_type(st, col) == SQLITE_NULL
               ? tw_synthetic_name(w, "?")
               : tw_string_name(w, sqlite3_column_int64(st, col));
}

/* A row under `parent` (0: a top-level group), created on first use. */
static uint32_t child(struct walk *w, uint32_t parent, const char *key, const char *name,
                      uint32_t order)
{
    size_t len = strlen(key);
    uint32_t row = tw_row_find(w, key, len);
    if (row)
        return row;
    if (!parent)
        return tw_row_new(w, key, len, 0, 0, TL_GROUP, name, order, 0);
    struct row *p = tw_row_at(w, parent);
    return p ? tw_row_new(w, key, len, p->lanes[0].uuid, p->sort_index, TL_PLAIN, name, order, 0)
             : 0;
}

/* The rank row of communicator context `comm_id` (and its group). */
static uint32_t rank_row(struct walk *w, sqlite3_stmt *comms, int64_t comm_id)
{
    char key[64], name[160];
    snprintf(key, sizeof key, "pccl/m%" PRId64, comm_id);
    uint32_t row = tw_row_find(w, key, strlen(key));
    if (row)
        return row;
    sqlite3_reset(comms);
    sqlite3_bind_int64(comms, 1, comm_id);
    if (sqlite3_step(comms) != SQLITE_ROW)
        return 0;
    /* hash, name, rank, nranks, pid */
    int has_hash = sqlite3_column_type(comms, 0) != SQLITE_NULL;
    uint64_t hash = (uint64_t)sqlite3_column_int64(comms, 0);
    const char *comm_name = (const char *)sqlite3_column_text(comms, 1);
    char group_key[48];
    if (has_hash)
        snprintf(group_key, sizeof group_key, "pccl/c%016" PRIx64, hash);
    else /* one communicator per context when NCCL did not say which */
        snprintf(group_key, sizeof group_key, "pccl/u%" PRId64, comm_id);
    char label[80];
    if (comm_name && *comm_name)
        snprintf(label, sizeof label, "%.60s", comm_name);
    else if (has_hash)
        snprintf(label, sizeof label, "comm %016" PRIx64, hash);
    else
        snprintf(label, sizeof label, "comm ?");
    if (sqlite3_column_type(comms, 3) != SQLITE_NULL)
        snprintf(name, sizeof name, "PCCL %s (%d ranks)", label, sqlite3_column_int(comms, 3));
    else
        snprintf(name, sizeof name, "PCCL %s", label);
    /* rank 0, like the CPU Group: Perfetto sorts the top level by name, and
     * "PCCL ..." comes before "PPU ..." (ranks 1 and up) */
    uint32_t group = child(w, 0, group_key, name, 0);
    if (sqlite3_column_type(comms, 2) != SQLITE_NULL)
        snprintf(name, sizeof name, "Rank %d (pid %d)", sqlite3_column_int(comms, 2),
                 sqlite3_column_int(comms, 4));
    else
        snprintf(name, sizeof name, "Rank ? (pid %d)", sqlite3_column_int(comms, 4));
    int rank = sqlite3_column_type(comms, 2) != SQLITE_NULL ? sqlite3_column_int(comms, 2) : 255;
    return group ? child(w, group, key, name, 1 + (uint32_t)(rank & 0xff)) : 0;
}

/* A named row under the rank of `comm_id`. */
static uint32_t rank_child(struct walk *w, sqlite3_stmt *comms, int64_t comm_id, const char *suffix,
                           const char *name, uint32_t order)
{
    uint32_t rank = rank_row(w, comms, comm_id);
    char key[96];
    snprintf(key, sizeof key, "pccl/m%" PRId64 "/%s", comm_id, suffix);
    return rank ? child(w, rank, key, name, order) : 0;
}

/* The row of channel `channel` of `comm_id`, or one of its rows (`what`
 * NULL: the channel itself). */
static uint32_t channel_row(struct walk *w, sqlite3_stmt *comms, int64_t comm_id, int channel,
                            const char *what, const char *name, uint32_t order)
{
    char suffix[32], label[32];
    snprintf(suffix, sizeof suffix, "ch%d", channel);
    snprintf(label, sizeof label, "Channel %d", channel);
    uint32_t ch = rank_child(w, comms, comm_id, suffix, label, 10 + (uint32_t)channel);
    if (!what || !ch)
        return ch;
    char key[96];
    snprintf(key, sizeof key, "pccl/m%" PRId64 "/ch%d/%s", comm_id, channel, what);
    return child(w, ch, key, name, order);
}

static sqlite3_stmt *comms_query(struct walk *w)
{
    return tw_prepare(w, "SELECT c.comm_hash, s.value, c.rank, c.nranks, c.pid\n"
                         "FROM pccl_comms AS c LEFT JOIN strings AS s ON s.id = c.name_id\n"
                         "WHERE c.id = ?");
}

/* NCCL's API and host events on the thread rows. */
static int walk_api(struct walk *w)
{
    /* clang-format off */
    sqlite3_stmt *st = tw_prepare(w,
        "SELECT pid, tid, start_ns, end_ns, name, func_id FROM (\n"
        "  SELECT a.pid, a.tid, a.start_ns, a.end_ns, a.kind AS kind,\n"
        "         CASE a.kind WHEN 1 THEN 'ncclGroup' WHEN 4 THEN 'ncclKernelLaunch' END AS name,\n"
        "         a.func_id\n"
        "  FROM pccl_api_events AS a WHERE " IN_WINDOW("a") "\n"
        "  UNION ALL SELECT g.pid, g.tid, g.start_ns, g.end_ns, 5, 'Group', NULL\n"
        "  FROM pccl_groups AS g WHERE " IN_WINDOW("g") "\n"
        "  UNION ALL SELECT t.pid, t.tid, t.host_start_ns AS start_ns, t.host_end_ns AS end_ns, 6,\n"
        "         NULL, t.func_id\n"
        "  FROM pccl_tasks AS t WHERE (:all OR (t.host_end_ns >= :lo AND t.host_start_ns <= :hi)))\n"
        "ORDER BY start_ns, end_ns DESC, kind");
    /* clang-format on */
    if (!st)
        return -1;
    char text[96];
    while (!w->failed && sqlite3_step(st) == SQLITE_ROW) {
        uint32_t row = tw_thread_child_row(w, (uint32_t)sqlite3_column_int64(st, 0),
                                           (uint32_t)sqlite3_column_int64(st, 1), &api_row, 0);
        int64_t start = tw_clip_start(w, sqlite3_column_int64(st, 2));
        int64_t end = tw_clip_end(w, sqlite3_column_int64(st, 3), start);
        const char *fixed = (const char *)sqlite3_column_text(st, 4);
        struct tl_name name;
        if (fixed) {
            name = tw_synthetic_name(w, fixed);
        } else {
            struct tl_name func = name_at(w, st, 5);
            snprintf(text, sizeof text, "nccl%s", func.text ? func.text : "?");
            name = tw_synthetic_name(w, text);
        }
        tw_emit_slice(w, row, start, end, name, tw_category(w, "pccl"), NULL, NULL);
    }
    sqlite3_finalize(st);
    return w->failed ? -1 : 0;
}

/* The collectives and point-to-point operations at their execution times,
 * with flows to their kernels. */
static int walk_tasks(struct walk *w, sqlite3_stmt *comms)
{
    /* clang-format off */
    sqlite3_stmt *st = tw_prepare(w,
        "SELECT t.comm_id, t.start_ns, t.end_ns, t.func_id, t.count, t.bytes, t.channels,\n"
        "       t.seq_number, t.time_source, d.value, a.value, p.value, t.id, t.rank,\n"
        "       COALESCE(t.root, t.peer)\n"
        "FROM pccl_tasks AS t\n"
        "LEFT JOIN strings AS d ON d.id = t.datatype_id\n"
        "LEFT JOIN strings AS a ON a.id = t.algo_id\n"
        "LEFT JOIN strings AS p ON p.id = t.proto_id\n"
        "WHERE " IN_WINDOW("t") "\n"
        "ORDER BY t.start_ns, t.id");
    /* clang-format on */
    struct ref_cursor kernels = {NULL, 0, 0, {0}};
    int rc = st ? 0 : -1;
    /* clang-format off */
    if (rc == 0 && tw_table_wanted(w, "ppu_activities"))
        rc = tw_cursor_open(w, &kernels,
            "SELECT t.start_ns, t.id, k.id, p.start_ns, p.end_ns\n"
            "FROM pccl_task_kernels AS k JOIN pccl_tasks AS t ON t.id = k.task_id\n"
            "JOIN ppu_activities AS p ON p.id = k.activity_id\n"
            "WHERE " IN_WINDOW("p") "\n"
            "ORDER BY t.start_ns, t.id, k.id");
    /* clang-format on */
    while (rc == 0 && !w->failed && sqlite3_step(st) == SQLITE_ROW) {
        uint32_t row = rank_child(w, comms, sqlite3_column_int64(st, 0), "coll", "Operations", 1);
        if (!row)
            continue;
        int64_t start = tw_clip_start(w, sqlite3_column_int64(st, 1));
        int64_t end = tw_clip_end(w, sqlite3_column_int64(st, 2), start);
        tw_flows_clear(w);
        tw_cursor_refs(w, &kernels, sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 12));
        tw_flows_add_out(w, TL_FLOW_PCCL, start);
        struct tl_flows f = tw_flows_of(w, 0);
        struct tl_args args;
        args.count = 0;
        tw_arg_int(&args, "count", sqlite3_column_int64(st, 4));
        if (sqlite3_column_type(st, 5) != SQLITE_NULL)
            tw_arg_int(&args, "bytes", sqlite3_column_int64(st, 5));
        tw_arg_string(&args, "datatype", (const char *)sqlite3_column_text(st, 9));
        if (sqlite3_column_type(st, 10) != SQLITE_NULL) {
            tw_arg_string(&args, "algo", (const char *)sqlite3_column_text(st, 10));
            tw_arg_string(&args, "proto", (const char *)sqlite3_column_text(st, 11));
        }
        tw_arg_int(&args, "channels", sqlite3_column_int64(st, 6));
        if (sqlite3_column_type(st, 7) != SQLITE_NULL)
            tw_arg_int(&args, "seq", sqlite3_column_int64(st, 7));
        tw_arg_int(&args, "root_or_peer", sqlite3_column_int64(st, 14));
        tw_arg_string(&args, "time_source", (const char *)sqlite3_column_text(st, 8));
        tw_emit_slice(w, row, start, end, name_at(w, st, 3), tw_category(w, "pccl"), &f, &args);
    }
    tw_cursor_close(&kernels);
    sqlite3_finalize(st);
    return rc != 0 || w->failed ? -1 : 0;
}

/* The proxy thread's control events, on the rank. */
static int walk_ctrl(struct walk *w, sqlite3_stmt *comms)
{
    sqlite3_stmt *st = tw_prepare(
        w, "SELECT c.comm_id, c.start_ns, c.end_ns, c.state, c.appended\n"
           "FROM pccl_proxy_ctrl AS c WHERE " IN_WINDOW("c") "\n"
                                                             "ORDER BY c.start_ns, c.end_ns DESC");
    if (!st)
        return -1;
    char text[64];
    while (!w->failed && sqlite3_step(st) == SQLITE_ROW) {
        uint32_t row =
            rank_child(w, comms, sqlite3_column_int64(st, 0), "proxy", "Proxy thread", 2);
        if (!row)
            continue;
        const char *state = (const char *)sqlite3_column_text(st, 3);
        if (sqlite3_column_type(st, 4) != SQLITE_NULL)
            snprintf(text, sizeof text, "%s (%d ops)", state ? state : "?",
                     sqlite3_column_int(st, 4));
        else
            snprintf(text, sizeof text, "%s", state ? state : "proxy");
        int64_t start = tw_clip_start(w, sqlite3_column_int64(st, 1));
        tw_emit_slice(w, row, start, tw_clip_end(w, sqlite3_column_int64(st, 2), start),
                      tw_synthetic_name(w, text), tw_category(w, "pccl"), NULL, NULL);
    }
    sqlite3_finalize(st);
    return w->failed ? -1 : 0;
}

/* Per channel: the kernel's work, the proxy operations. */
static int walk_channels(struct walk *w, sqlite3_stmt *comms)
{
    /* clang-format off */
    sqlite3_stmt *st = tw_prepare(w,
        "SELECT comm_id, channel, start_ns, end_ns, what, name_id, peer, is_send, steps FROM (\n"
        "  SELECT k.comm_id, k.channel, k.start_ns, k.end_ns, 0 AS what, t.func_id AS name_id,\n"
        "         NULL AS peer, NULL AS is_send, NULL AS steps\n"
        "  FROM pccl_kernel_channels AS k LEFT JOIN pccl_tasks AS t ON t.id = k.task_id\n"
        "  WHERE " IN_WINDOW("k") "\n"
        "  UNION ALL SELECT o.comm_id, o.channel, o.start_ns, o.end_ns, 1, t.func_id, o.peer,\n"
        "         o.is_send, o.steps\n"
        "  FROM pccl_proxy_ops AS o LEFT JOIN pccl_tasks AS t ON t.id = o.task_id\n"
        "  WHERE " IN_WINDOW("o") ")\n"
        "ORDER BY start_ns, end_ns DESC");
    /* clang-format on */
    if (!st)
        return -1;
    char text[96];
    while (!w->failed && sqlite3_step(st) == SQLITE_ROW) {
        int64_t comm = sqlite3_column_int64(st, 0);
        int channel = sqlite3_column_int(st, 1), op = sqlite3_column_int(st, 4);
        uint32_t row = op ? channel_row(w, comms, comm, channel, "ops", "Proxy ops", 2)
                          : channel_row(w, comms, comm, channel, "kernel", "Kernel", 1);
        if (!row)
            continue;
        struct tl_name func = name_at(w, st, 5);
        struct tl_name name = func;
        struct tl_args args;
        args.count = 0;
        if (op) {
            snprintf(text, sizeof text, "%s %s %d", func.text ? func.text : "?",
                     sqlite3_column_int(st, 7) ? "send to" : "recv from",
                     sqlite3_column_int(st, 6));
            name = tw_synthetic_name(w, text);
            tw_arg_int(&args, "steps", sqlite3_column_int64(st, 8));
        }
        int64_t start = tw_clip_start(w, sqlite3_column_int64(st, 2));
        tw_emit_slice(w, row, start, tw_clip_end(w, sqlite3_column_int64(st, 3), start), name,
                      tw_category(w, "pccl"), NULL, op ? &args : NULL);
    }
    sqlite3_finalize(st);
    return w->failed ? -1 : 0;
}

/* The pipelines: steps by buffer slot and direction, their states inside. */
static int walk_steps(struct walk *w, sqlite3_stmt *comms)
{
    /* level 0: the step; 1: a state, from its time to the next state's or the end */
    /* clang-format off */
    sqlite3_stmt *st = tw_prepare(w,
        "WITH s AS (SELECT * FROM pccl_proxy_steps AS s WHERE " IN_WINDOW("s") "),\n"
        "states(comm_id, channel, is_send, pipeline, start_ns, end_ns, level, name, step,\n"
        "       bytes) AS (\n"
        "  SELECT comm_id, channel, is_send, pipeline, start_ns, end_ns, 0, NULL, step,\n"
        "         trans_size FROM s\n"
        "  UNION ALL SELECT comm_id, channel, is_send, pipeline, send_gpu_wait_ns,\n"
        "         COALESCE(send_peer_wait_ns, send_wait_ns, end_ns), 1, 'GPU wait', step, NULL\n"
        "  FROM s WHERE send_gpu_wait_ns IS NOT NULL\n"
        "  UNION ALL SELECT comm_id, channel, is_send, pipeline, send_peer_wait_ns,\n"
        "         COALESCE(send_wait_ns, end_ns), 1, 'peer wait', step, NULL\n"
        "  FROM s WHERE send_peer_wait_ns IS NOT NULL\n"
        "  UNION ALL SELECT comm_id, channel, is_send, pipeline, send_wait_ns, end_ns, 1,\n"
        "         'send wait', step, NULL FROM s WHERE send_wait_ns IS NOT NULL\n"
        "  UNION ALL SELECT comm_id, channel, is_send, pipeline, recv_wait_ns,\n"
        "         COALESCE(recv_flush_wait_ns, recv_gpu_wait_ns, end_ns), 1, 'recv wait', step,\n"
        "         NULL FROM s WHERE recv_wait_ns IS NOT NULL\n"
        "  UNION ALL SELECT comm_id, channel, is_send, pipeline, recv_flush_wait_ns,\n"
        "         COALESCE(recv_gpu_wait_ns, end_ns), 1, 'flush wait', step, NULL\n"
        "  FROM s WHERE recv_flush_wait_ns IS NOT NULL\n"
        "  UNION ALL SELECT comm_id, channel, is_send, pipeline, recv_gpu_wait_ns, end_ns, 1,\n"
        "         'GPU wait', step, NULL FROM s WHERE recv_gpu_wait_ns IS NOT NULL)\n"
        "SELECT comm_id, channel, is_send, pipeline, start_ns, MAX(end_ns, start_ns), level, name,\n"
        "       step, bytes\n"
        "FROM states ORDER BY start_ns, level, end_ns DESC");
    /* clang-format on */
    if (!st)
        return -1;
    char what[16], label[48], text[48];
    while (!w->failed && sqlite3_step(st) == SQLITE_ROW) {
        int is_send = sqlite3_column_int(st, 2), pipeline = sqlite3_column_int(st, 3);
        snprintf(what, sizeof what, "p%d%c", pipeline, is_send ? 's' : 'r');
        snprintf(label, sizeof label, "Pipeline %d (%s)", pipeline, is_send ? "send" : "recv");
        uint32_t row = channel_row(w, comms, sqlite3_column_int64(st, 0), sqlite3_column_int(st, 1),
                                   what, label, 10 + 2 * (uint32_t)(pipeline & 0x3f) + !is_send);
        if (!row)
            continue;
        const char *state = (const char *)sqlite3_column_text(st, 7);
        struct tl_args args;
        args.count = 0;
        if (state) {
            snprintf(text, sizeof text, "%s", state);
        } else {
            snprintf(text, sizeof text, "step %d", sqlite3_column_int(st, 8));
            tw_arg_int(&args, "bytes", sqlite3_column_int64(st, 9));
        }
        int64_t start = tw_clip_start(w, sqlite3_column_int64(st, 4));
        tw_emit_slice(w, row, start, tw_clip_end(w, sqlite3_column_int64(st, 5), start),
                      tw_synthetic_name(w, text), tw_category(w, "pccl"), NULL,
                      state ? NULL : &args);
    }
    sqlite3_finalize(st);
    return w->failed ? -1 : 0;
}

static int walk_pccl(struct walk *w)
{
    sqlite3_stmt *comms = comms_query(w);
    if (!comms)
        return -1;
    int rc = walk_api(w);
    if (rc == 0)
        rc = walk_tasks(w, comms);
    if (rc == 0)
        rc = walk_ctrl(w, comms);
    if (rc == 0)
        rc = walk_channels(w, comms);
    if (rc == 0)
        rc = walk_steps(w, comms);
    sqlite3_finalize(comms);
    return rc != 0 || w->failed ? -1 : 0;
}

/* a task's slices: its own, its API and host events, its channels, its
 * proxy ops and their steps (about four slices each) */
const struct tl_family tl_family_pccl = {"pccl_tasks", 40, walk_pccl};
