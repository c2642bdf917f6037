/* The core records (strings, processes, threads, drops) and the manifest's
 * session facts; the tables they feed are written by import_context.c once
 * every segment is read. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import_family.h"
#include "json_util.h"

struct core {
    struct asys_importer *imp;
    sqlite3_stmt *insert_drop;
    sqlite3_stmt *upsert_capture;
    uint64_t capture_edges;
};

static void load_clock(struct asys_importer *imp, const cJSON *manifest)
{
    /* memory ran out (-1): taken as no pairs */
    imp->has_clock_pairs = asys_clock_map_load(&imp->clock, manifest) >= 2;
}

static int put_info(struct asys_importer *imp, sqlite3_stmt *st, const char *key, const char *text,
                    const int64_t *number, struct asys_err *err)
{
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    if (number)
        sqlite3_bind_int64(st, 2, *number);
    else if (text)
        sqlite3_bind_text(st, 2, text, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, 2);
    return imp_step(imp, st, err);
}

/* Joins a JSON array of strings (or of objects' "name") with `sep`. */
static void join_array(const cJSON *arr, const char *field, const char *sep, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    const cJSON *item;
    cJSON_ArrayForEach(item, arr)
    {
        const char *s = field ? asys_json_get_str(item, field, NULL)
                              : (cJSON_IsString(item) ? item->valuestring : NULL);
        if (!s)
            continue;
        int n = snprintf(out + used, size - used, "%s%s", used ? sep : "", s);
        if (n < 0 || (size_t)n >= size - used)
            break;
        used += (size_t)n;
    }
}

/* The command as a POSIX shell reads it back: each argument that needs it
 * in single quotes (a quote inside as '\''); cut at `size`. */
static void shell_join(const cJSON *arr, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    const cJSON *item;
    cJSON_ArrayForEach(item, arr)
    {
        const char *s = cJSON_IsString(item) ? item->valuestring : NULL;
        if (!s)
            continue;
        int plain = *s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                    "0123456789_-+=.,/:@%") == strlen(s);
        if (used && used + 1 < size)
            out[used++] = ' ';
        if (!plain && used + 1 < size)
            out[used++] = '\'';
        for (const char *c = s; *c && used + 5 < size; c++) {
            if (*c == '\'' && !plain) {
                memcpy(out + used, "'\\''", 4);
                used += 4;
            } else {
                out[used++] = *c;
            }
        }
        if (!plain && used + 1 < size)
            out[used++] = '\'';
        out[used] = '\0';
    }
}

/* A session time of the manifest: a CLOCK_MONOTONIC ns value SQLite can hold. */
static int session_time(const cJSON *session, const char *key, int64_t *out)
{
    uint64_t v;
    if (asys_json_get_u64(session, key, &v) != 0 || v > INT64_MAX)
        return -1;
    *out = (int64_t)v;
    return 0;
}

/* How well this report's CLOCK_REALTIME puts it beside other hosts' reports:
 * the kernel's maximum error (adjtimex) at the start plus how far the offset
 * moved during the run.  Values from a file: each bounded, a wild one leaves
 * the bound unknown. */
static int import_clock_alignment(struct asys_importer *imp, sqlite3_stmt *st, const cJSON *clock,
                                  struct asys_err *err)
{
    const cJSON *sync = cJSON_GetObjectItemCaseSensitive(clock, "sync");
    const cJSON *offsets = cJSON_GetObjectItemCaseSensitive(clock, "realtime_offsets");
    const int64_t limit = INT64_C(1) << 50; /* 13 days: past that no bound means anything */
    int64_t maxerror = -1, lo = 0, hi = 0, shift = 0, v;
    int synced = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(sync, "synchronized"));
    if (asys_json_get_i64(sync, "maxerror_ns", &v) == 0 && v >= 0 && v < limit)
        maxerror = v;
    int has_spread = asys_json_get_i64(offsets, "min_ns", &lo) == 0 &&
                     asys_json_get_i64(offsets, "max_ns", &hi) == 0 && lo <= hi &&
                     (uint64_t)hi - (uint64_t)lo < (uint64_t)limit;
    int rc = 0;
    if (has_spread) {
        v = hi - lo;
        rc |= put_info(imp, st, "realtime_offset_spread_ns", NULL, &v, err);
    }
    if (maxerror >= 0) {
        v = maxerror + (has_spread ? hi - lo : 0);
        rc |= put_info(imp, st, "clock_error_ns", NULL, &v, err);
    }
    char method[128];
    snprintf(method, sizeof method, "realtime%s",
             !cJSON_IsObject(sync) ? " (synchronization unknown)"
             : synced              ? ", synchronized (adjtimex)"
                                   : ", not synchronized (adjtimex)");
    if (asys_json_get_i64(clock, "test_realtime_shift_ns", &shift) == 0 && shift)
        snprintf(method + strlen(method), sizeof method - strlen(method),
                 ", shifted %" PRId64 " ns by a test", shift);
    rc |= put_info(imp, st, "clock_method", method, NULL, err);
    return rc;
}

static int import_session_info(struct asys_importer *imp, const cJSON *m, struct asys_err *err)
{
    sqlite3_stmt *st = NULL;
    if (imp_prepare(imp, "INSERT OR REPLACE INTO session_info (key, value) VALUES (?, ?)", &st,
                    err))
        return -1;
    const cJSON *session = cJSON_GetObjectItemCaseSensitive(m, "session");
    const cJSON *host = cJSON_GetObjectItemCaseSensitive(m, "host");
    const cJSON *cpu = cJSON_GetObjectItemCaseSensitive(m, "cpu");
    const cJSON *clock = cJSON_GetObjectItemCaseSensitive(m, "clock");
    const cJSON *target = cJSON_GetObjectItemCaseSensitive(m, "target");
    const cJSON *collectors = cJSON_GetObjectItemCaseSensitive(m, "collectors");
    char text[8192];
    int64_t v, start = 0, end = 0;
    int rc = 0;
#define NUM(key, expr) rc |= (expr) == 0 ? put_info(imp, st, key, NULL, &v, err) : 0
#define TXT(key, s) rc |= put_info(imp, st, key, s, NULL, err)
    /* times from a file: non-negative, and the end not before the start */
    int has_start = session_time(session, "start_monotonic_ns", &start) == 0;
    int has_end = session_time(session, "end_monotonic_ns", &end) == 0;
    if (has_start && has_end && end < start) {
        imp_warn(imp, "manifest: the session ends before it starts; its end is not used");
        has_end = 0;
    }
    if (has_start)
        NUM("start_ns", (v = start, 0));
    if (has_end)
        NUM("end_ns", (v = end, 0));
    if (has_start && has_end && start)
        NUM("duration_ns", (v = end - start, 0));
    NUM("start_realtime_ns", asys_json_get_i64(session, "start_realtime_ns", &v));
    NUM("realtime_minus_monotonic_ns", asys_json_get_i64(clock, "realtime_minus_monotonic_ns", &v));
    rc |= import_clock_alignment(imp, st, clock, err);
    /* since boot, so at least 0; a wild value is left out (no BOOTTIME then) */
    NUM("boottime_minus_monotonic_ns",
        asys_json_get_i64(clock, "boottime_minus_monotonic_ns", &v) == 0 && v >= 0 &&
                v < (INT64_C(1) << 62)
            ? 0
            : -1);
    join_array(cJSON_GetObjectItemCaseSensitive(m, "command"), NULL, " ", text, sizeof text);
    TXT("command", text);
    shell_join(cJSON_GetObjectItemCaseSensitive(m, "command"), text, sizeof text);
    TXT("command_quoted", text);
    TXT("report_id", asys_json_get_str(m, "report_id", ""));
    TXT("asys_version", asys_json_get_str(m, "asys_version", ""));
    NUM("format_version", asys_json_get_i64(m, "format_version", &v));
    /* --multi-node-mode true: the rank its launcher gave (a wild number left out) */
    const cJSON *mn = cJSON_GetObjectItemCaseSensitive(m, "multi_node");
    if (cJSON_IsObject(mn)) {
        TXT("multi_node", "true");
        static const char *const rank_keys[] = {"rank", "local_rank", "world_size"};
        for (size_t k = 0; k < sizeof rank_keys / sizeof rank_keys[0]; k++)
            NUM(rank_keys[k],
                asys_json_get_i64(mn, rank_keys[k], &v) == 0 && v >= 0 && v <= (INT64_C(1) << 30)
                    ? 0
                    : -1);
        if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(mn, "source")))
            TXT("rank_source", asys_json_get_str(mn, "source", ""));
    }
    TXT("hostname", asys_json_get_str(host, "hostname", ""));
    TXT("kernel", asys_json_get_str(host, "kernel", ""));
    TXT("os", asys_json_get_str(host, "os", ""));
    TXT("cpu_model", asys_json_get_str(cpu, "model", ""));
    NUM("logical_cpus", asys_json_get_i64(cpu, "logical_cpus", &v));
    TXT("clock_kind", asys_json_get_str(clock, "kind", ""));
    NUM("target_pid", asys_json_get_i64(target, "pid", &v));
    NUM("target_exit_code", asys_json_get_i64(target, "exit_code", &v));
    NUM("target_signal", asys_json_get_i64(target, "signal", &v));
    /* descendants still running at the end (--wait primary): count and pids */
    if (asys_json_get_i64(target, "still_running", &v) == 0 && v > 0 && v < INT32_MAX) {
        NUM("still_running", 0);
        const cJSON *listed = cJSON_GetObjectItemCaseSensitive(target, "still_running_listed");
        const cJSON *p;
        size_t used = 0;
        text[0] = '\0';
        cJSON_ArrayForEach(p, listed)
        {
            int64_t pid;
            const char *name = asys_json_get_str(p, "name", "?");
            if (asys_json_get_i64(p, "pid", &pid) != 0 || used >= 1024)
                continue;
            int n = snprintf(text + used, sizeof text - used, "%s%" PRId64 " (%.15s)",
                             used ? ", " : "", pid, name);
            if (n > 0)
                used += (size_t)n;
        }
        TXT("still_running_listed", text);
    }
    join_array(cJSON_GetObjectItemCaseSensitive(collectors, "enabled"), NULL, ",", text,
               sizeof text);
    TXT("collectors_enabled", text);
    join_array(cJSON_GetObjectItemCaseSensitive(collectors, "unavailable"), "name", ",", text,
               sizeof text);
    TXT("collectors_unavailable", text);
    /* what finalize could not read of the session (bounded: a file's numbers) */
    const cJSON *damage = cJSON_GetObjectItemCaseSensitive(m, "damage");
    static const char *const damage_keys[] = {
        "slots_cut_off", "slots_unreadable",    "slots_out_of_sequence", "slots_after_a_gap",
        "bytes",         "segments_ended_early"};
    for (size_t i = 0; damage && i < sizeof damage_keys / sizeof damage_keys[0]; i++) {
        char key[64];
        snprintf(key, sizeof key, "damage_%s", damage_keys[i]);
        uint64_t u;
        if (asys_json_get_u64(damage, damage_keys[i], &u) == 0 && u < (UINT64_C(1) << 62))
            NUM(key, (v = (int64_t)u, 0));
    }
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(damage, "arena_missing")))
        NUM("damage_arena_missing", (v = 1, 0));
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(damage, "control_block_damaged")))
        NUM("damage_control_block", (v = 1, 0));
    const cJSON *tick_hz = cJSON_GetObjectItemCaseSensitive(clock, "tick_hz");
    if (cJSON_IsNumber(tick_hz) && tick_hz->valuedouble >= 0 && tick_hz->valuedouble < 1e15)
        NUM("clock_tick_hz", (v = (int64_t)tick_hz->valuedouble, 0));
#undef NUM
#undef TXT
    sqlite3_finalize(st);
    return rc ? -1 : 0;
}

static int import_string_def(void *state, const struct asys_record *rec, uint64_t ns,
                             struct asys_err *err)
{
    (void)ns;
    struct asys_importer *imp = ((struct core *)state)->imp;
    const struct asys_rec_string_def *s = (const void *)rec->data;
    if (s->length > rec->size - sizeof *s) {
        imp_warn(imp, "%s: string %u at offset %" PRIu64 " is longer than its record; ignored",
                 imp->seg.member, s->string_id, rec->offset);
        return 0;
    }
    return imp_define_string(imp, imp->seg.image, s->string_id, (const char *)(s + 1), s->length,
                             err);
}

static int import_process_info(void *state, const struct asys_record *rec, uint64_t ns,
                               struct asys_err *err)
{
    struct asys_importer *imp = ((struct core *)state)->imp;
    const struct asys_rec_process_info *r = (const void *)rec->data;
    struct imp_process *p = imp_process_get(imp, r->pid);
    if (!p)
        return asys_fail(err, "out of memory");
    int exec_image = r->origin == ASYS_PROCESS_LAUNCHED;
    /* an exec'd image names the process; the latest exec wins over a fork copy */
    if ((exec_image && (!p->exec_named || ns >= p->info_ns)) ||
        (!exec_image && !p->exec_named && !p->exe_id)) {
        p->ppid = r->ppid;
        p->exe_id = imp_string(imp, imp->seg.image, r->exe_string_id);
        p->cmdline_id = imp_string(imp, imp->seg.image, r->cmdline_string_id);
        p->info_ns = ns;
        p->exec_named = exec_image;
    }
    return 0;
}

static int import_thread_record(void *state, const struct asys_record *rec, uint64_t ns,
                                struct asys_err *err)
{
    struct asys_importer *imp = ((struct core *)state)->imp;
    const struct asys_rec_thread *r = (const void *)rec->data;
    struct imp_thread *t = imp_thread_get(imp, imp->seg.pid, r->tid);
    if (!t)
        return asys_fail(err, "out of memory");
    if (!t->name_id || ns >= t->name_ns) {
        t->name_id = imp_string(imp, imp->seg.image, r->name_string_id);
        t->name_ns = ns;
    }
    return 0;
}

static int import_drop(void *state, const struct asys_record *rec, uint64_t ns,
                       struct asys_err *err)
{
    struct core *c = state;
    struct asys_importer *imp = c->imp;
    const struct asys_rec_drop *d = (const void *)rec->data;
    sqlite3_stmt *st = c->insert_drop;
    sqlite3_bind_int64(st, 1, imp->seg.pid);
    sqlite3_bind_int64(st, 2, imp->seg.tid);
    sqlite3_bind_int64(st, 3, (int64_t)imp_ns(imp, d->first_drop_ticks));
    sqlite3_bind_int64(st, 4, (int64_t)ns);
    sqlite3_bind_int64(st, 5, (int64_t)d->records);
    sqlite3_bind_int64(st, 6, (int64_t)d->bytes);
    return imp_step(imp, st, err);
}

/* Begin and end of one window can be in two threads' segments: whichever
 * comes first creates the row. */
static int import_capture(void *state, const struct asys_record *rec, uint64_t ns,
                          struct asys_err *err)
{
    struct core *c = state;
    struct asys_importer *imp = c->imp;
    const struct asys_rec_capture *r = (const void *)rec->data;
    if (rec->arg != ASYS_CAPTURE_BEGIN && rec->arg != ASYS_CAPTURE_END)
        return 0;
    c->capture_edges++;
    sqlite3_stmt *st = c->upsert_capture;
    const char *trigger = r->trigger == ASYS_CAPTURE_PROFILER_API ? "hggc-profiler-api"
                          : r->trigger == ASYS_CAPTURE_HGTX       ? "hgtx"
                                                                  : "unknown";
    uint32_t name = imp_string(imp, imp->seg.image, r->name_string_id);
    int begin = rec->arg == ASYS_CAPTURE_BEGIN;
    sqlite3_bind_int64(st, 1, imp->seg.pid);
    sqlite3_bind_int64(st, 2, r->window);
    sqlite3_bind_text(st, 3, trigger, -1, SQLITE_STATIC);
    imp_bind_optional(st, 4, name, name != 0);
    imp_bind_optional(st, 5, (int64_t)ns, begin);
    imp_bind_optional(st, 6, (int64_t)ns, !begin);
    return imp_step(imp, st, err);
}

/* The capture range the run asked for, and whether any window opened. */
static int core_finish(void *state, struct asys_err *err)
{
    struct core *c = state;
    struct asys_importer *imp = c->imp;
    const cJSON *options = cJSON_GetObjectItemCaseSensitive(imp->manifest, "options");
    const char *range = asys_json_get_str(options, "capture-range", "none");
    if (!strcmp(range, "none"))
        return 0;
    const char *name = asys_json_get_str(options, "hgtx-capture", "");
    char text[512];
    snprintf(text, sizeof text, "%s%s%s", range, *name ? " " : "", name);
    if (imp_session_info(imp, "capture_range", text, 0, err) != 0)
        return -1;
    if (!c->capture_edges)
        imp_warn(imp, "--capture-range=%s: no capture window opened, so no events were recorded",
                 text);
    return 0;
}

static int core_init(struct asys_importer *imp, void **state, struct asys_err *err)
{
    struct core *c = calloc(1, sizeof *c);
    if (!c)
        return asys_fail(err, "out of memory");
    *state = c;
    c->imp = imp;
    load_clock(imp, imp->manifest);
    if (imp_prepare(imp,
                    "INSERT INTO drops (pid, tid, start_ns, end_ns, records, bytes) "
                    "VALUES (?,?,?,?,?,?)",
                    &c->insert_drop, err) != 0 ||
        imp_prepare(imp,
                    "INSERT INTO capture_ranges (pid, window_index, trigger, name_id, start_ns, "
                    "end_ns) VALUES (?,?,?,?,?,?) ON CONFLICT (pid, window_index) DO UPDATE SET "
                    "name_id = COALESCE(excluded.name_id, name_id), "
                    "start_ns = COALESCE(excluded.start_ns, start_ns), "
                    "end_ns = COALESCE(excluded.end_ns, end_ns)",
                    &c->upsert_capture, err) != 0)
        return -1;
    return import_session_info(imp, imp->manifest, err);
}

static void core_free(void *state)
{
    struct core *c = state;
    if (!c)
        return;
    sqlite3_finalize(c->insert_drop);
    sqlite3_finalize(c->upsert_capture);
    free(c);
}

/* PAD and TIME_BASE are the stream's own and never reach a family; CLOCK_PAIR
 * records are read from the manifest, where finalize copied them. */
static const struct imp_record_op core_ops[] = {
    {ASYS_REC_STRING_DEF, import_string_def},
    {ASYS_REC_PROCESS_INFO, import_process_info},
    {ASYS_REC_THREAD_START, import_thread_record},
    {ASYS_REC_THREAD_END, import_thread_record},
    {ASYS_REC_DROP, import_drop},
    {ASYS_REC_CLOCK_PAIR, NULL},
    {ASYS_REC_CAPTURE, import_capture},
};

/* A thread whose buffer stayed full to its end wrote no DROP record (there
 * was no room): its loss gets a window of its own, from its last kept record
 * to the end of the session, so that the timeline and the drops table show
 * every lost record, not only those a resumed writer could date. */
static int core_derive(void *state, struct asys_err *err)
{
    struct core *c = state;
    return imp_exec(
        c->imp,
        "INSERT INTO drops (pid, tid, start_ns, end_ns, records, bytes)\n"
        "SELECT s.pid, s.tid, t.end_ns,\n"
        "       MAX(t.end_ns, COALESCE((SELECT value FROM session_info WHERE key = 'end_ns'),\n"
        "                              t.end_ns)),\n"
        "       s.records - COALESCE(d.records, 0), MAX(s.bytes - COALESCE(d.bytes, 0), 0)\n"
        "FROM (SELECT pid, tid, SUM(dropped_records) AS records, SUM(dropped_bytes) AS bytes\n"
        "      FROM segments WHERE collector = 'thread' GROUP BY pid, tid) AS s\n"
        "JOIN threads AS t ON t.pid = s.pid AND t.tid = s.tid\n"
        "LEFT JOIN (SELECT pid, tid, SUM(records) AS records, SUM(bytes) AS bytes\n"
        "           FROM drops GROUP BY pid, tid) AS d ON d.pid = s.pid AND d.tid = s.tid\n"
        "WHERE s.records > COALESCE(d.records, 0) AND t.end_ns IS NOT NULL",
        err);
}

const struct imp_family imp_family_core = {
    .name = "core",
    .feature = ASYS_FEATURE_CORE,
    .schema = "core.sql",
    .ops = core_ops,
    .op_count = sizeof core_ops / sizeof core_ops[0],
    .init = core_init,
    .finish = core_finish,
    .derive = core_derive,
    .free = core_free,
};
