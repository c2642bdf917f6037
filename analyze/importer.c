/* Importer driver: schema, one transaction, segments in archive order, and
 * the tables built once everything is read (processes, threads, strings that
 * were referenced before their definition).
 *
 * One pass over the archive: a string, domain or range may be referenced
 * before the record that defines it (another thread's segment comes later),
 * so references get placeholder ids that the definition fills in. */
#define _GNU_SOURCE
#include "importer_internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "embedded_files.h"
#include "json_util.h"
#include "report_reader.h"

#define SID_PENDING 0x80000000u

void imp_warn(struct asys_importer *imp, const char *fmt, ...)
{
    if (!imp->warn)
        return;
    char text[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    imp->warn(imp->warn_ctx, text);
}

int imp_sql_error(struct asys_importer *imp, struct asys_err *err)
{
    return asys_fail(err, "database error: %s", sqlite3_errmsg(imp->db));
}

static int exec_sql(struct asys_importer *imp, const char *sql, struct asys_err *err)
{
    char *msg = NULL;
    if (sqlite3_exec(imp->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        asys_fail(err, "database error: %s", msg ? msg : sqlite3_errmsg(imp->db));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

int imp_prepare(struct asys_importer *imp, const char *sql, sqlite3_stmt **stmt,
                struct asys_err *err)
{
    if (sqlite3_prepare_v3(imp->db, sql, -1, SQLITE_PREPARE_PERSISTENT, stmt, NULL) != SQLITE_OK)
        return imp_sql_error(imp, err);
    return 0;
}

int imp_step(struct asys_importer *imp, sqlite3_stmt *stmt, struct asys_err *err)
{
    int rc = sqlite3_step(stmt);
    sqlite3_reset(stmt);
    return rc == SQLITE_DONE ? 0 : imp_sql_error(imp, err);
}

void imp_bind_optional(sqlite3_stmt *st, int col, int64_t value, int present)
{
    if (present)
        sqlite3_bind_int64(st, col, value);
    else
        sqlite3_bind_null(st, col);
}

uint64_t imp_ns(struct asys_importer *imp, uint64_t ticks)
{
    if (imp->seg.clock_kind == ASYS_CLOCK_MONOTONIC)
        return ticks;
    return asys_clock_map_ns(&imp->clock, ticks);
}

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- strings ------------------------------------------------------------- */

static int insert_string(struct asys_importer *imp, uint32_t id, const char *text, size_t len,
                         struct asys_err *err)
{
    sqlite3_bind_int64(imp->insert_string, 1, id);
    sqlite3_bind_text(imp->insert_string, 2, text, (int)len, SQLITE_STATIC);
    return imp_step(imp, imp->insert_string, err);
}

/* The global id of `text`, inserting it on first sight. */
int imp_intern_text(struct asys_importer *imp, const char *text, size_t len, uint32_t *id,
                    struct asys_err *err)
{
    *id = asys_strmap_get(&imp->string_ids, text, len);
    if (*id)
        return 0;
    *id = imp->next_string_id++;
    if (asys_strmap_put(&imp->string_ids, text, len, *id) != 0)
        return asys_fail(err, "out of memory");
    return insert_string(imp, *id, text, len, err);
}

static uint32_t *sid_slot(struct imp_image *img, uint32_t sid)
{
    if (sid >= img->sid_cap) {
        size_t cap = img->sid_cap ? img->sid_cap : 256;
        while (cap <= sid)
            cap *= 2;
        uint32_t *bigger = realloc(img->sids, cap * sizeof *bigger);
        if (!bigger)
            return NULL;
        memset(bigger + img->sid_cap, 0, (cap - img->sid_cap) * sizeof *bigger);
        img->sids = bigger;
        img->sid_cap = cap;
    }
    return &img->sids[sid];
}

uint32_t imp_string(struct asys_importer *imp, struct imp_image *img, uint32_t sid)
{
    if (!sid || !img)
        return 0;
    if (sid < img->inherited_limit && img->parent_uid) /* allocated before the fork */
        return imp_string(imp, imp_image_get(imp, img->parent_uid), sid);
    uint32_t *slot = sid_slot(img, sid);
    if (!slot)
        return 0;
    if (!*slot) { /* defined later in the report, or never */
        *slot = imp->next_string_id++ | SID_PENDING;
        imp->pending_strings++;
    }
    return *slot & ~SID_PENDING;
}

static int define_string(struct asys_importer *imp, struct imp_image *img, uint32_t sid,
                         const char *text, size_t len, struct asys_err *err)
{
    uint32_t *slot = sid_slot(img, sid);
    if (!slot)
        return asys_fail(err, "out of memory");
    if (*slot & SID_PENDING) {
        *slot &= ~SID_PENDING;
        imp->pending_strings--;
        return insert_string(imp, *slot, text, len, err);
    }
    if (*slot)
        return 0; /* defined twice (e.g. re-interned after a cache eviction) */
    return imp_intern_text(imp, text, len, slot, err);
}

/* Placeholders never defined get a visible name. */
static int finish_strings(struct asys_importer *imp, struct asys_err *err)
{
    for (size_t i = 0; imp->pending_strings && i < imp->images.capacity; i++) {
        if (!imp->images.used[i])
            continue;
        struct imp_image *img = (struct imp_image *)(uintptr_t)imp->images.values[i];
        for (uint32_t sid = 0; sid < img->sid_cap; sid++) {
            if (!(img->sids[sid] & SID_PENDING))
                continue;
            char text[64];
            int n = snprintf(text, sizeof text, "[unknown string %u]", sid);
            if (define_string(imp, img, sid, text, (size_t)n, err) != 0)
                return -1;
        }
    }
    return 0;
}

/* ---- images, threads, processes -------------------------------------------- */

/* The object stored under `key` in `map`, created zeroed on first use
 * (*created tells which); NULL when out of memory. */
static void *object_for(struct asys_u64map *map, uint64_t key, size_t size, int *created)
{
    uint64_t *v = asys_u64map_get(map, key);
    *created = !v;
    if (v)
        return (void *)(uintptr_t)*v;
    void *object = calloc(1, size);
    if (object && asys_u64map_put(map, key, (uint64_t)(uintptr_t)object) != 0) {
        free(object);
        object = NULL;
    }
    return object;
}

struct imp_image *imp_image_get(struct asys_importer *imp, uint64_t uid)
{
    int created;
    struct imp_image *img = object_for(&imp->images, uid, sizeof *img, &created);
    if (img && created) {
        img->uid = uid;
        asys_u64map_init(&img->domains);
        asys_u64map_init(&img->starts);
        asys_u64map_init(&img->ends);
    }
    return img;
}

static void image_free(struct imp_image *img)
{
    imp_stacks_free_image(img);
    free(img->sids);
    asys_u64map_free(&img->domains);
    asys_u64map_free(&img->starts);
    asys_u64map_free(&img->ends);
    free(img);
}

struct imp_thread *imp_thread_get(struct asys_importer *imp, uint32_t pid, uint32_t tid)
{
    int created;
    struct imp_thread *t =
        object_for(&imp->threads, (uint64_t)pid << 32 | tid, sizeof *t, &created);
    if (t && created) {
        t->pid = pid;
        t->tid = tid;
        t->start_ns = UINT64_MAX;
    }
    return t;
}

static struct imp_process *process_get(struct asys_importer *imp, uint32_t pid)
{
    int created;
    struct imp_process *p = object_for(&imp->processes, pid, sizeof *p, &created);
    if (p && created) {
        p->pid = pid;
        p->start_ns = UINT64_MAX;
    }
    return p;
}

/* ---- core records ------------------------------------------------------------ */

static int import_string_def(struct asys_importer *imp, const struct asys_record *rec,
                             struct asys_err *err)
{
    const struct asys_rec_string_def *s = (const void *)rec->data;
    if (s->length > rec->size - sizeof *s) {
        imp_warn(imp, "%s: string %u at offset %" PRIu64 " is longer than its record; ignored",
                 imp->seg.member, s->string_id, rec->offset);
        return 0;
    }
    return define_string(imp, imp->seg.image, s->string_id, (const char *)(s + 1), s->length, err);
}

static int import_process_info(struct asys_importer *imp, const struct asys_record *rec,
                               uint64_t ns, struct asys_err *err)
{
    const struct asys_rec_process_info *r = (const void *)rec->data;
    struct imp_process *p = process_get(imp, r->pid);
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

static int import_thread_record(struct asys_importer *imp, const struct asys_record *rec,
                                uint64_t ns, struct asys_err *err)
{
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

static int import_drop(struct asys_importer *imp, const struct asys_record *rec, uint64_t ns,
                       struct asys_err *err)
{
    const struct asys_rec_drop *d = (const void *)rec->data;
    sqlite3_stmt *st = imp->insert_drop;
    sqlite3_bind_int64(st, 1, imp->seg.pid);
    sqlite3_bind_int64(st, 2, imp->seg.tid);
    sqlite3_bind_int64(st, 3, (int64_t)imp_ns(imp, d->first_drop_ticks));
    sqlite3_bind_int64(st, 4, (int64_t)ns);
    sqlite3_bind_int64(st, 5, (int64_t)d->records);
    sqlite3_bind_int64(st, 6, (int64_t)d->bytes);
    return imp_step(imp, st, err);
}

static int import_record(struct asys_importer *imp, const struct asys_record *rec, uint64_t ns,
                         struct asys_err *err)
{
    const struct asys_rec_info *info = asys_rec_info(rec->type);
    if (info->feature == ASYS_FEATURE_HGTX) {
        imp->records_hgtx++;
        return imp_hgtx_record(imp, rec, ns, err);
    }
    if (info->feature == ASYS_FEATURE_OSRT) {
        imp->records_osrt++;
        return imp_osrt_record(imp, rec, ns, err);
    }
    if (info->feature == ASYS_FEATURE_HGGC) {
        imp->records_hggc++;
        return imp_hggc_record(imp, rec, ns, err);
    }
    if (info->feature == ASYS_FEATURE_STACKS) {
        imp->records_stacks++;
        return imp_stacks_record(imp, rec, err);
    }
    if (rec->type == ASYS_REC_PAD || rec->type == ASYS_REC_TIME_BASE)
        return 0;
    imp->records_core++;
    switch (rec->type) {
    case ASYS_REC_STRING_DEF:
        return import_string_def(imp, rec, err);
    case ASYS_REC_PROCESS_INFO:
        return import_process_info(imp, rec, ns, err);
    case ASYS_REC_THREAD_START:
    case ASYS_REC_THREAD_END:
        return import_thread_record(imp, rec, ns, err);
    case ASYS_REC_DROP:
        return import_drop(imp, rec, ns, err);
    default: /* CLOCK_PAIR: read from the manifest */
        return 0;
    }
}

/* ---- segments ------------------------------------------------------------------ */

static int insert_segment_row(struct asys_importer *imp, const char *member,
                              const struct asys_segment_stream *s, int header_ok, const char *error,
                              struct asys_err *err)
{
    sqlite3_stmt *st = NULL;
    if (imp_prepare(imp,
                    "INSERT INTO segments (file, pid, tid, collector, records, bytes, "
                    "dropped_records, dropped_bytes, error) VALUES (?,?,?,?,?,?,?,?,?)",
                    &st, err) != 0)
        return -1;
    const struct asys_segment_header *h = &s->header;
    sqlite3_bind_text(st, 1, member, -1, SQLITE_TRANSIENT);
    if (header_ok) {
        sqlite3_bind_int64(st, 2, h->pid);
        sqlite3_bind_int64(st, 3, h->tid);
        sqlite3_bind_text(st, 4, h->collector == ASYS_SEGMENT_LAUNCHER ? "launcher" : "thread", -1,
                          SQLITE_STATIC);
        sqlite3_bind_int64(st, 7, (int64_t)h->dropped_records);
        sqlite3_bind_int64(st, 8, (int64_t)h->dropped_bytes);
    } else {
        sqlite3_bind_int64(st, 7, 0);
        sqlite3_bind_int64(st, 8, 0);
    }
    sqlite3_bind_int64(st, 5, (int64_t)s->records);
    sqlite3_bind_int64(st, 6, (int64_t)(header_ok ? s->limit : 0));
    if (error)
        sqlite3_bind_text(st, 9, error, -1, SQLITE_TRANSIENT);
    int rc = imp_step(imp, st, err);
    sqlite3_finalize(st);
    return rc;
}

static int begin_segment(struct asys_importer *imp, const char *member,
                         const struct asys_segment_header *h, struct asys_err *err)
{
    struct imp_segment *seg = &imp->seg;
    memset(seg, 0, sizeof *seg);
    seg->member = member;
    seg->pid = h->pid;
    seg->tid = h->tid;
    seg->clock_kind = (int)h->clock_kind;
    if (h->collector != ASYS_SEGMENT_THREAD)
        return 0;
    if (seg->clock_kind != ASYS_CLOCK_MONOTONIC && !imp->has_clock_pairs)
        return asys_fail(err, "report has no clock calibration for %s ticks",
                         seg->clock_kind == ASYS_CLOCK_TSC ? "TSC" : "counter");
    seg->image = imp_image_get(imp, h->process_uid);
    if (!seg->image)
        return asys_fail(err, "out of memory");
    seg->image->pid = h->pid;
    seg->image->parent_uid = h->parent_process_uid;
    seg->image->inherited_limit = h->inherited_string_limit;
    return 0;
}

static int end_segment(struct asys_importer *imp, struct asys_err *err)
{
    struct imp_segment *seg = &imp->seg;
    if (!seg->image)
        return 0;
    if (imp_hgtx_segment_end(imp, err) != 0)
        return -1;
    if (!seg->any_time)
        return 0;
    struct imp_thread *t = imp_thread_get(imp, seg->pid, seg->tid);
    struct imp_process *p = process_get(imp, seg->pid);
    if (!t || !p)
        return asys_fail(err, "out of memory");
    t->seen = 1;
    if (seg->first_ns < t->start_ns)
        t->start_ns = seg->first_ns;
    if (seg->last_ns > t->end_ns)
        t->end_ns = seg->last_ns;
    if (seg->first_ns < p->start_ns)
        p->start_ns = seg->first_ns;
    if (seg->last_ns > p->end_ns)
        p->end_ns = seg->last_ns;
    return 0;
}

static int import_segment(struct asys_importer *imp, struct asys_report_reader *reader,
                          struct asys_segment_stream *s, const char *member, struct asys_err *err)
{
    if (begin_segment(imp, member, &s->header, err) != 0)
        return -1;
    struct asys_record rec;
    struct asys_err seg_err = {0};
    int rc;
    while ((rc = asys_segment_stream_next(s, &rec, &seg_err)) > 0) {
        if (imp->seg.image) {
            uint64_t ns = imp_ns(imp, rec.ticks);
            if (!imp->seg.any_time || ns < imp->seg.first_ns)
                imp->seg.first_ns = ns;
            if (ns > imp->seg.last_ns)
                imp->seg.last_ns = ns;
            imp->seg.any_time = 1;
            if (import_record(imp, &rec, ns, err) != 0)
                return -1;
        }
    }
    imp->stats->records += s->records;
    if (rc < 0 && asys_report_archive_error(reader))
        return asys_fail(err, "truncated or damaged report (%s)",
                         asys_report_archive_error(reader));
    if (rc < 0) {
        imp->stats->bad_segments++;
        imp_warn(imp, "segment '%s': %s; the rest of the segment is skipped", member, seg_err.text);
    }
    if (end_segment(imp, err) != 0)
        return -1;
    return insert_segment_row(imp, member, s, 1, rc < 0 ? seg_err.text : NULL, err);
}

/* ---- manifest -------------------------------------------------------------------- */

static int load_clock(struct asys_importer *imp, const cJSON *manifest)
{
    const cJSON *pairs = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(manifest, "clock"), "pairs");
    const cJSON *pair;
    cJSON_ArrayForEach(pair, pairs)
    {
        uint64_t ticks, ns;
        if (asys_json_to_u64(cJSON_GetArrayItem(pair, 0), &ticks) == 0 &&
            asys_json_to_u64(cJSON_GetArrayItem(pair, 1), &ns) == 0)
            asys_clock_map_add(&imp->clock, ticks, ns);
    }
    imp->has_clock_pairs = asys_clock_map_build(&imp->clock) >= 2;
    return 0;
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
    if (asys_json_get_i64(session, "start_monotonic_ns", &start) == 0)
        NUM("start_ns", (v = start, 0));
    if (asys_json_get_i64(session, "end_monotonic_ns", &end) == 0)
        NUM("end_ns", (v = end, 0));
    if (start && end)
        NUM("duration_ns", (v = end - start, 0));
    NUM("start_realtime_ns", asys_json_get_i64(session, "start_realtime_ns", &v));
    NUM("realtime_minus_monotonic_ns", asys_json_get_i64(clock, "realtime_minus_monotonic_ns", &v));
    join_array(cJSON_GetObjectItemCaseSensitive(m, "command"), NULL, " ", text, sizeof text);
    TXT("command", text);
    TXT("report_id", asys_json_get_str(m, "report_id", ""));
    TXT("asys_version", asys_json_get_str(m, "asys_version", ""));
    NUM("format_version", asys_json_get_i64(m, "format_version", &v));
    TXT("hostname", asys_json_get_str(host, "hostname", ""));
    TXT("kernel", asys_json_get_str(host, "kernel", ""));
    TXT("os", asys_json_get_str(host, "os", ""));
    TXT("cpu_model", asys_json_get_str(cpu, "model", ""));
    NUM("logical_cpus", asys_json_get_i64(cpu, "logical_cpus", &v));
    TXT("clock_kind", asys_json_get_str(clock, "kind", ""));
    NUM("target_pid", asys_json_get_i64(target, "pid", &v));
    NUM("target_exit_code", asys_json_get_i64(target, "exit_code", &v));
    NUM("target_signal", asys_json_get_i64(target, "signal", &v));
    join_array(cJSON_GetObjectItemCaseSensitive(collectors, "enabled"), NULL, ",", text,
               sizeof text);
    TXT("collectors_enabled", text);
    join_array(cJSON_GetObjectItemCaseSensitive(collectors, "unavailable"), "name", ",", text,
               sizeof text);
    TXT("collectors_unavailable", text);
    const cJSON *hggc = cJSON_GetObjectItemCaseSensitive(m, "hggc");
    if (hggc) {
        TXT("hggc_status", asys_json_get_str(hggc, "status", ""));
        TXT("hggc_message", asys_json_get_str(hggc, "message", ""));
        NUM("hggc_cupti_version", asys_json_get_i64(hggc, "cupti_version", &v));
        NUM("hggc_cupti_dropped_records", asys_json_get_i64(hggc, "cupti_dropped_records", &v));
        NUM("hggc_cupti_overhead_ns", asys_json_get_i64(hggc, "cupti_overhead_ns", &v));
    }
    const cJSON *tick_hz = cJSON_GetObjectItemCaseSensitive(clock, "tick_hz");
    if (cJSON_IsNumber(tick_hz))
        NUM("clock_tick_hz", (v = (int64_t)tick_hz->valuedouble, 0));
#undef NUM
#undef TXT
    sqlite3_finalize(st);
    return rc ? -1 : 0;
}

/* ---- the tables built at the end ---------------------------------------------------- */

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static int finish_processes(struct asys_importer *imp, struct asys_err *err)
{
    sqlite3_stmt *st = NULL, *get = NULL;
    if (imp_prepare(imp,
                    "INSERT INTO processes (pid, ppid, name_id, exe_id, cmdline_id, start_ns, "
                    "end_ns, forked) VALUES (?,?,?,?,?,?,?,?)",
                    &st, err) ||
        imp_prepare(imp, "SELECT value FROM strings WHERE id = ?", &get, err)) {
        sqlite3_finalize(st);
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < imp->processes.capacity; i++) {
        if (!imp->processes.used[i])
            continue;
        struct imp_process *p = (struct imp_process *)(uintptr_t)imp->processes.values[i];
        uint32_t name_id = 0;
        sqlite3_bind_int64(get, 1, p->exe_id);
        if (p->exe_id && sqlite3_step(get) == SQLITE_ROW) {
            const char *exe = (const char *)sqlite3_column_text(get, 0);
            const char *name = base_name(exe ? exe : "");
            char copy[1024];
            snprintf(copy, sizeof copy, "%s", name);
            sqlite3_reset(get);
            rc = imp_intern_text(imp, copy, strlen(copy), &name_id, err);
        }
        sqlite3_reset(get);
        sqlite3_bind_int64(st, 1, p->pid);
        sqlite3_bind_int64(st, 2, p->ppid);
        if (name_id)
            sqlite3_bind_int64(st, 3, name_id);
        else
            sqlite3_bind_null(st, 3);
        if (p->exe_id)
            sqlite3_bind_int64(st, 4, p->exe_id);
        else
            sqlite3_bind_null(st, 4);
        if (p->cmdline_id)
            sqlite3_bind_int64(st, 5, p->cmdline_id);
        else
            sqlite3_bind_null(st, 5);
        sqlite3_bind_int64(st, 6, p->start_ns == UINT64_MAX ? 0 : (int64_t)p->start_ns);
        sqlite3_bind_int64(st, 7, (int64_t)p->end_ns);
        sqlite3_bind_int64(st, 8, !p->exec_named && p->exe_id);
        if (rc == 0)
            rc = imp_step(imp, st, err);
    }
    sqlite3_finalize(st);
    sqlite3_finalize(get);
    return rc;
}

static int finish_threads(struct asys_importer *imp, struct asys_err *err)
{
    sqlite3_stmt *st = NULL;
    if (imp_prepare(imp,
                    "INSERT INTO threads (pid, tid, name_id, start_ns, end_ns, is_main) "
                    "VALUES (?,?,?,?,?,?)",
                    &st, err))
        return -1;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < imp->threads.capacity; i++) {
        if (!imp->threads.used[i])
            continue;
        struct imp_thread *t = (struct imp_thread *)(uintptr_t)imp->threads.values[i];
        if (!t->seen)
            continue; /* named by nvtxNameOsThread but never recorded */
        uint32_t name = t->hgtx_name_id ? t->hgtx_name_id : t->name_id;
        sqlite3_bind_int64(st, 1, t->pid);
        sqlite3_bind_int64(st, 2, t->tid);
        if (name)
            sqlite3_bind_int64(st, 3, name);
        else
            sqlite3_bind_null(st, 3);
        sqlite3_bind_int64(st, 4, t->start_ns == UINT64_MAX ? 0 : (int64_t)t->start_ns);
        sqlite3_bind_int64(st, 5, (int64_t)t->end_ns);
        sqlite3_bind_int64(st, 6, t->pid == t->tid);
        rc = imp_step(imp, st, err);
    }
    sqlite3_finalize(st);
    return rc;
}

static int finish_counts(struct asys_importer *imp, struct asys_err *err)
{
    char sql[256];
    snprintf(sql, sizeof sql,
             "INSERT INTO collector_records VALUES ('core', %" PRIu64 "), ('hgtx', %" PRIu64
             "), ('osrt', %" PRIu64 "), ('stacks', %" PRIu64 "), ('hggc', %" PRIu64 ");",
             imp->records_core, imp->records_hgtx, imp->records_osrt, imp->records_stacks,
             imp->records_hggc);
    if (exec_sql(imp, sql, err) != 0)
        return -1;
    snprintf(sql, sizeof sql,
             "INSERT OR REPLACE INTO session_info VALUES ('hgtx_unmatched_pops', %" PRIu64
             "), ('hgtx_unmatched_ends', %" PRIu64 "), ('hgtx_open_ranges', %" PRIu64 ");",
             imp->unmatched_pops, imp->unmatched_ends, imp->open_ranges);
    return exec_sql(imp, sql, err);
}

/* ---- driver ------------------------------------------------------------------------ */

static int importer_init(struct asys_importer *imp, sqlite3 *db, struct asys_err *err)
{
    imp->db = db;
    imp->next_string_id = 1;
    imp->next_hgtx_id = 1;
    asys_clock_map_init(&imp->clock);
    asys_strmap_init(&imp->string_ids);
    asys_u64map_init(&imp->images);
    asys_u64map_init(&imp->threads);
    asys_u64map_init(&imp->processes);
    if (exec_sql(imp,
                 "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; "
                 "PRAGMA locking_mode=EXCLUSIVE; PRAGMA cache_size=-65536;",
                 err) != 0)
        return -1;
    if (exec_sql(imp, asys_schema_text("schema.sql"), err) != 0)
        return -1;
    if (exec_sql(imp, "BEGIN", err) != 0)
        return -1;
    if (imp_prepare(imp, "INSERT INTO strings (id, value) VALUES (?, ?)", &imp->insert_string,
                    err) ||
        imp_prepare(imp,
                    "INSERT INTO drops (pid, tid, start_ns, end_ns, records, bytes) "
                    "VALUES (?,?,?,?,?,?)",
                    &imp->insert_drop, err))
        return -1;
    return imp_hgtx_init(imp, err) || imp_osrt_init(imp, err) || imp_hggc_init(imp, err) ? -1 : 0;
}

static void free_objects(struct asys_u64map *map)
{
    for (size_t i = 0; i < map->capacity; i++)
        if (map->used[i])
            free((void *)(uintptr_t)map->values[i]);
}

static void importer_free(struct asys_importer *imp)
{
    imp_hgtx_free(imp);
    imp_osrt_free(imp);
    imp_hggc_free(imp);
    imp_stacks_free(imp);
    sqlite3_finalize(imp->insert_string);
    sqlite3_finalize(imp->insert_drop);
    for (size_t i = 0; i < imp->images.capacity; i++)
        if (imp->images.used[i])
            image_free((struct imp_image *)(uintptr_t)imp->images.values[i]);
    free_objects(&imp->threads);
    free_objects(&imp->processes);
    asys_u64map_free(&imp->images);
    asys_u64map_free(&imp->threads);
    asys_u64map_free(&imp->processes);
    asys_strmap_free(&imp->string_ids);
    asys_clock_map_free(&imp->clock);
}

static int import_all_segments(struct asys_importer *imp, struct asys_report_reader *reader,
                               struct asys_err *err)
{
    for (;;) {
        struct asys_segment_stream s;
        const char *member = NULL;
        int bad = 0;
        struct asys_err seg_err = {0};
        int rc = asys_report_next_segment(reader, &s, &member, &bad, &seg_err);
        if (rc == 0)
            return 0;
        if (rc < 0)
            return asys_fail(err, "%s", seg_err.text);
        imp->stats->segments++;
        if (bad) {
            imp->stats->bad_segments++;
            imp_warn(imp, "segment '%s' skipped: %s", member, seg_err.text);
            memset(&s, 0, sizeof s);
            if (insert_segment_row(imp, member, &s, 0, seg_err.text, err) != 0)
                return -1;
            continue;
        }
        rc = import_segment(imp, reader, &s, member, err);
        asys_segment_stream_close(&s);
        if (rc != 0)
            return -1;
    }
}

int asys_import_report(const char *report_path, sqlite3 *db, asys_warn_fn warn, void *warn_ctx,
                       struct asys_import_stats *stats, struct asys_err *err)
{
    struct asys_importer imp;
    memset(&imp, 0, sizeof imp);
    memset(stats, 0, sizeof *stats);
    imp.stats = stats;
    imp.warn = warn;
    imp.warn_ctx = warn_ctx;
    struct asys_report_reader *reader = NULL;
    int rc = -1;
    if (asys_report_reader_open(&reader, report_path, err) != 0)
        goto out;
    if (importer_init(&imp, db, err) != 0)
        goto out;
    const cJSON *manifest = asys_report_manifest(reader);
    load_clock(&imp, manifest);
    if (imp_stacks_init(&imp, asys_report_symbols(reader), err) != 0)
        goto out;
    if (import_session_info(&imp, manifest, err) != 0)
        goto out;
    if (import_all_segments(&imp, reader, err) != 0)
        goto out;
    if (imp_hgtx_finish(&imp, err) != 0 || finish_strings(&imp, err) != 0 ||
        finish_processes(&imp, err) != 0 || finish_threads(&imp, err) != 0 ||
        imp_osrt_finish(&imp, err) != 0 || imp_hggc_finish(&imp, err) != 0 ||
        finish_counts(&imp, err) != 0)
        goto out;
    if (exec_sql(&imp, asys_schema_text("indexes.sql"), err) != 0)
        goto out;
    uint64_t derive_start = monotonic_ns();
    if (exec_sql(&imp, asys_schema_text("derived.sql"), err) != 0 ||
        imp_hggc_activity_groups(&imp, err) != 0)
        goto out;
    uint64_t deps_start = monotonic_ns();
    if (exec_sql(&imp, asys_schema_text("deps.sql"), err) != 0)
        goto out;
    char timing[200];
    snprintf(timing, sizeof timing,
             "INSERT OR REPLACE INTO session_info VALUES ('import_derived_ns', %" PRIu64
             "), ('import_deps_ns', %" PRIu64 ");",
             deps_start - derive_start, monotonic_ns() - deps_start);
    if (exec_sql(&imp, timing, err) != 0 || exec_sql(&imp, "COMMIT", err) != 0)
        goto out;
    stats->hgtx_events = (uint64_t)(imp.next_hgtx_id - 1);
    rc = 0;
out:
    importer_free(&imp);
    asys_report_reader_close(reader);
    return rc;
}
