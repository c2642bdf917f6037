/* Importer driver: the family registry, the schema, one transaction,
 * segments in archive order with each record handed to its family's handler,
 * then the families' end phases (import_family.h) and the indexes. */
#define _GNU_SOURCE
#include "importer.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embedded_files.h"
#include "json_util.h"
#include "import_family.h"
#include "report_reader.h"

/* The registry: one line per family, in the order their phases run. */
extern const struct imp_family imp_family_core, imp_family_stacks, imp_family_hgtx, imp_family_osrt,
    imp_family_hggc, imp_family_memory, imp_family_cpu_sampling, imp_family_events,
    imp_family_ppu_metrics, imp_family_python, imp_family_nic, imp_family_pccl, imp_family_acompute,
    imp_family_video;
static const struct imp_family *const families[] = {
    &imp_family_core,        &imp_family_stacks, &imp_family_hgtx,         &imp_family_osrt,
    &imp_family_hggc,        &imp_family_memory, &imp_family_cpu_sampling, &imp_family_events,
    &imp_family_ppu_metrics, &imp_family_python, &imp_family_nic,          &imp_family_pccl,
    &imp_family_acompute,    &imp_family_video,
};
#define FAMILY_COUNT (sizeof families / sizeof families[0])

/* A record type's handler, from the families' op tables. */
struct dispatch {
    imp_record_fn import;
    int family; /* index in families[], -1: no family takes the type */
};

struct driver {
    struct asys_importer imp; /* the shared context */
    /* the manifest's recording_window: events outside it are left out
     * (finalize left out most already; asys_rec_window_kind says which) */
    int windowed;
    uint64_t window_start_ns, window_end_ns;
    struct asys_strmap segment_ids; /* a segment's identity -> its position + 1 */
    void *state[FAMILY_COUNT];
    uint64_t records[FAMILY_COUNT];
    struct dispatch ops[ASYS_REC_TYPE_COUNT];
    /* the caller's progress callback, and what it is told */
    asys_import_progress_fn progress;
    void *progress_ctx;
    struct asys_import_progress done;
    /* the reader's own progress callback (the caller's limits), chained */
    void (*read_progress)(void *ctx, uint64_t done, uint64_t total);
    void *read_progress_ctx;
};

/* The reader's callback: the bytes read so far. */
static void on_read(void *ctx, uint64_t done, uint64_t total)
{
    struct driver *d = ctx;
    d->done.bytes_done = done;
    d->done.bytes_total = total;
    if (d->read_progress)
        d->read_progress(d->read_progress_ctx, done, total);
}

/* SQLite's progress handler while the tables are finished: the caller's
 * line keeps its clock going through statements of seconds. */
static int on_sql_progress(void *ctx)
{
    struct driver *d = ctx;
    d->progress(d->progress_ctx, &d->done);
    return 0;
}

/* Every record read is handed here: the callback every 64 Ki. */
static inline void count_record(struct driver *d)
{
    if (d->progress && !(++d->done.records & 0xffff))
        d->progress(d->progress_ctx, &d->done);
}

/* Everything is read: what follows is SQL (indexes, derived tables). */
static void reading_done(struct driver *d)
{
    if (!d->progress)
        return;
    d->done.building = 1;
    d->progress(d->progress_ctx, &d->done);
    sqlite3_progress_handler(d->imp.db, 1 << 20, on_sql_progress, d);
}

static int run_segment_end(struct driver *d, struct asys_err *err)
{
    for (size_t i = 0; i < FAMILY_COUNT; i++)
        if (families[i]->segment_end && families[i]->segment_end(d->state[i], err) != 0)
            return -1;
    return 0;
}

/* Every record type to its family's handler; a family that claims a type of
 * a feature not its own is a programming error the unit tests catch (a
 * family may own several features: acompute reads ACDNN's and ACBLAS's). */
static int add_ops(struct driver *d, size_t family, const struct imp_record_op *ops, size_t count,
                   struct asys_err *err)
{
    for (size_t k = 0; k < count; k++) {
        const struct imp_record_op *op = &ops[k];
        const struct asys_rec_info *info = asys_rec_info(op->type);
        if (!info || !(info->feature & families[family]->feature) || d->ops[op->type].family >= 0)
            return asys_fail(err, "importer family %s: bad handler for record type %u",
                             families[family]->name, op->type);
        d->ops[op->type] = (struct dispatch){op->import, (int)family};
    }
    return 0;
}

static int build_dispatch(struct driver *d, struct asys_err *err)
{
    for (unsigned t = 0; t < ASYS_REC_TYPE_COUNT; t++)
        d->ops[t] = (struct dispatch){NULL, -1};
    for (size_t i = 0; i < FAMILY_COUNT; i++) {
        if (add_ops(d, i, families[i]->ops, families[i]->op_count, err) != 0)
            return -1;
        for (const struct imp_record_ops *const *x = families[i]->extension_ops; x && *x; x++)
            if (add_ops(d, i, (*x)->ops, (*x)->count, err) != 0)
                return -1;
    }
    return 0;
}

/* The manifest's recording_window {start_ns, end_ns}, when it has one
 * (untrusted: an inverted window is taken as none). */
static void window_init(struct driver *d, const cJSON *manifest)
{
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(manifest, "recording_window");
    uint64_t start, end;
    if (!w || asys_json_get_u64(w, "start_ns", &start) != 0 ||
        asys_json_get_u64(w, "end_ns", &end) != 0 || end < start)
        return;
    d->windowed = 1;
    d->window_start_ns = start;
    d->window_end_ns = end;
}

static int outside_window(const struct driver *d, const struct asys_record *rec, uint64_t ns)
{
    return d->windowed && asys_rec_outside_window(rec, ns, d->window_start_ns, d->window_end_ns);
}

static int import_record(struct driver *d, const struct asys_record *rec, uint64_t ns,
                         struct asys_err *err)
{
    if (outside_window(d, rec, ns))
        return 0;
    if (rec->type == ASYS_REC_PAD || rec->type == ASYS_REC_TIME_BASE)
        return 0; /* the stream's own */
    const struct dispatch *op = &d->ops[rec->type];
    if (op->family < 0)
        return 0; /* a known type no family stores */
    d->records[op->family]++;
    return op->import ? op->import(d->state[op->family], rec, ns, err) : 0;
}

/* ---- segments ------------------------------------------------------------------ */

static int insert_segment_row(struct asys_importer *imp, const char *member,
                              const struct asys_segment_stream *s, int header_ok, const char *error,
                              struct asys_err *err)
{
    sqlite3_stmt *st = NULL;
    if (imp_prepare(imp,
                    "INSERT INTO segments (file, pid, tid, collector, records, bytes, "
                    "dropped_records, dropped_bytes, error, dropped_full, dropped_reentry, "
                    "dropped_big, format_version, lost_threads, lost_thread_records, "
                    "dropped_no_room, no_room_reason, lost_processes, lost_process_records, "
                    "lost_process_reason, lost_process_pid) "
                    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
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
        int by_cause = h->format_version >= 2;
        imp_bind_optional(st, 10, (int64_t)h->dropped_full, by_cause);
        imp_bind_optional(st, 11, (int64_t)h->dropped_reentry, by_cause);
        imp_bind_optional(st, 12, (int64_t)h->dropped_big, by_cause);
        sqlite3_bind_int64(st, 13, h->format_version);
        imp_bind_optional(st, 14, (int64_t)h->lost_threads, h->lost_threads != 0);
        imp_bind_optional(st, 15, (int64_t)h->lost_thread_records, h->lost_threads != 0);
        /* counts from a file: bounded like every other */
        int no_room = by_cause && h->dropped_no_room && h->dropped_no_room <= h->dropped_records;
        imp_bind_optional(st, 16, (int64_t)h->dropped_no_room, no_room);
        if (no_room)
            sqlite3_bind_text(st, 17, strerror((int)(h->no_room_errno & 0xfff)), -1,
                              SQLITE_TRANSIENT);
        int lost = h->lost_processes && h->lost_processes < (UINT64_C(1) << 32) &&
                   h->lost_process_records < (UINT64_C(1) << 62);
        imp_bind_optional(st, 18, (int64_t)h->lost_processes, lost);
        imp_bind_optional(st, 19, (int64_t)h->lost_process_records, lost);
        if (lost)
            sqlite3_bind_text(st, 20, strerror((int)(h->lost_process_errno & 0xfff)), -1,
                              SQLITE_TRANSIENT);
        imp_bind_optional(st, 21, h->lost_process_pid, lost);
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
    seg->thread_index = h->thread_index;
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

static int end_segment(struct driver *d, struct asys_err *err)
{
    struct asys_importer *imp = &d->imp;
    struct imp_segment *seg = &imp->seg;
    if (!seg->image)
        return 0;
    if (run_segment_end(d, err) != 0)
        return -1;
    if (!seg->any_time)
        return 0;
    struct imp_thread *t = imp_thread_get(imp, seg->pid, seg->tid);
    struct imp_process *p = imp_process_get(imp, seg->pid);
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

static int import_segment(struct driver *d, struct asys_report_reader *reader,
                          struct asys_segment_stream *s, const char *member, struct asys_err *err)
{
    struct asys_importer *imp = &d->imp;
    if (begin_segment(imp, member, &s->header, err) != 0)
        return -1;
    struct asys_record rec;
    struct asys_err seg_err = {0};
    int rc;
    while ((rc = asys_segment_stream_next(s, &rec, &seg_err)) > 0) {
        count_record(d);
        /* the launcher's segments: clock pairs (read at finalize) and the
         * samplers' records, which name their process themselves */
        const struct asys_rec_info *info = imp->seg.image ? NULL : asys_rec_info(rec.type);
        if (info && info->feature != ASYS_FEATURE_CORE) {
            if (import_record(d, &rec, imp_ns(imp, rec.ticks), err) != 0)
                return -1;
        } else if (imp->seg.image) {
            uint64_t ns = imp_ns(imp, rec.ticks);
            if (!imp->seg.any_time || ns < imp->seg.first_ns)
                imp->seg.first_ns = ns;
            if (ns > imp->seg.last_ns)
                imp->seg.last_ns = ns;
            imp->seg.any_time = 1;
            if (import_record(d, &rec, ns, err) != 0)
                return -1;
        }
    }
    imp->stats->records += s->records;
    if (rc < 0 &&
        (asys_report_archive_failure(reader, err) != 0 || seg_err.kind == ASYS_ERR_LIMIT)) {
        if (seg_err.kind == ASYS_ERR_LIMIT)
            *err = seg_err;
        return -1; /* the archive is damaged or past a limit: nothing after this is read */
    }
    if (rc < 0) {
        imp->stats->bad_segments++;
        imp_warn(imp, "segment '%s': %s; the rest of the segment is skipped", member, seg_err.text);
    }
    if (end_segment(d, err) != 0)
        return -1;
    return insert_segment_row(imp, member, s, 1, rc < 0 ? seg_err.text : NULL, err);
}

/* ---- the schema: each family's file, its indexes after "-- after load" -------------- */

#define AFTER_LOAD "\n-- after load"

/* The part of a family's schema before (tables) or after (indexes) the marker. */
static int run_schema_part(struct asys_importer *imp, const struct imp_family *f, int indexes,
                           struct asys_err *err)
{
    const char *text = asys_schema_text(f->schema);
    if (!text)
        return asys_fail(err, "schema file '%s' is not compiled in", f->schema);
    const char *marker = strstr(text, AFTER_LOAD);
    if (indexes)
        return marker ? imp_exec(imp, marker + 1, err) : 0;
    if (!marker)
        return imp_exec(imp, text, err);
    char *tables = strndup(text, (size_t)(marker - text));
    if (!tables)
        return asys_fail(err, "out of memory");
    int rc = imp_exec(imp, tables, err);
    free(tables);
    return rc;
}

static int create_schema(struct driver *d, int indexes, struct asys_err *err)
{
    for (size_t i = 0; i < FAMILY_COUNT; i++)
        if (run_schema_part(&d->imp, families[i], indexes, err) != 0)
            return -1;
    return 0;
}

/* ---- the phases ------------------------------------------------------------------ */

enum phase { PHASE_FINISH, PHASE_DERIVE, PHASE_ANALYZE };

static int run_phase(struct driver *d, enum phase phase, struct asys_err *err)
{
    for (size_t i = 0; i < FAMILY_COUNT; i++) {
        const struct imp_family *f = families[i];
        int (*hook)(void *, struct asys_err *) = phase == PHASE_FINISH   ? f->finish
                                                 : phase == PHASE_DERIVE ? f->derive
                                                                         : f->analyze;
        if (hook && hook(d->state[i], err) != 0)
            return asys_err_wrap(err, "%s", f->name);
    }
    return 0;
}

static int write_record_counts(struct driver *d, struct asys_err *err)
{
    sqlite3_stmt *st = NULL;
    if (imp_prepare(&d->imp, "INSERT INTO collector_records (collector, records) VALUES (?, ?)",
                    &st, err) != 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < FAMILY_COUNT; i++) {
        sqlite3_bind_text(st, 1, families[i]->name, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, (int64_t)d->records[i]);
        rc = imp_step(&d->imp, st, err);
    }
    sqlite3_finalize(st);
    return rc;
}

/* The report's counters with their severities, once every family's
 * tables are written (schema/report_stats.sql: the one list of them). */
static int write_report_stats(struct driver *d, struct asys_err *err)
{
    if (imp_exec(&d->imp, asys_schema_text("report_stats.sql"), err) != 0)
        return asys_err_wrap(err, "report_stats");
    return 0;
}

static int driver_init(struct driver *d, sqlite3 *db, const cJSON *manifest, const cJSON *symbols,
                       struct asys_err *err)
{
    struct asys_importer *imp = &d->imp;
    imp->manifest = manifest;
    imp->symbols = symbols;
    window_init(d, manifest);
    if (build_dispatch(d, err) != 0)
        return -1;
    imp->db = db;
    if (imp_exec(imp,
                 "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; "
                 "PRAGMA locking_mode=EXCLUSIVE; PRAGMA cache_size=-65536;",
                 err) != 0 ||
        create_schema(d, 0, err) != 0 || imp_exec(imp, "BEGIN", err) != 0 ||
        imp_context_init(imp, db, err) != 0)
        return -1;
    for (size_t i = 0; i < FAMILY_COUNT; i++)
        if (families[i]->init && families[i]->init(imp, &d->state[i], err) != 0)
            return asys_err_wrap(err, "%s", families[i]->name);
    return 0;
}

static void driver_free(struct driver *d)
{
    for (size_t i = 0; i < FAMILY_COUNT; i++)
        if (families[i]->free)
            families[i]->free(d->state[i]);
    imp_context_free(&d->imp);
    asys_strmap_free(&d->segment_ids);
}

/* A segment's identity: the writer (launcher or thread), its process image
 * and thread.  A second segment of one identity is a copy, not more data. */
struct segment_identity {
    uint64_t process_uid;
    uint32_t collector, pid, tid, thread_index;
};

/* 1 when a segment of this identity was read before. */
static int duplicate(struct driver *d, const struct asys_segment_header *h, uint64_t position)
{
    struct segment_identity key;
    memset(&key, 0, sizeof key);
    key.process_uid = h->process_uid;
    key.collector = h->collector;
    key.pid = h->pid;
    key.tid = h->tid;
    key.thread_index = h->thread_index;
    if (asys_strmap_get(&d->segment_ids, (const char *)&key, sizeof key))
        return 1;
    asys_strmap_put(&d->segment_ids, (const char *)&key, sizeof key, (uint32_t)position + 1);
    return 0;
}

static int import_all_segments(struct driver *d, struct asys_report_reader *reader,
                               struct asys_err *err)
{
    struct asys_importer *imp = &d->imp;
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
        if (duplicate(d, &s.header, imp->stats->segments)) {
            imp->stats->duplicate_segments++;
            imp_warn(imp, "segment '%s' skipped: a second copy of the same thread's segment",
                     member);
            rc = insert_segment_row(imp, member, &s, 1, "duplicate segment", err);
            asys_segment_stream_close(&s);
            if (rc != 0)
                return -1;
            continue;
        }
        rc = import_segment(d, reader, &s, member, err);
        asys_segment_stream_close(&s);
        if (rc != 0)
            return -1;
    }
}

int asys_import_report(const char *report_path, sqlite3 *db,
                       const struct asys_report_limits *limits, asys_warn_fn warn, void *warn_ctx,
                       asys_import_progress_fn progress, void *progress_ctx,
                       struct asys_import_stats *stats, struct asys_err *err)
{
    struct driver *d = calloc(1, sizeof *d);
    struct asys_report_reader *reader = NULL;
    struct asys_report_limits read_limits;
    int rc = -1;
    memset(stats, 0, sizeof *stats);
    if (!d) {
        asys_fail(err, "out of memory");
        goto out;
    }
    d->imp.stats = stats;
    asys_strmap_init(&d->segment_ids);
    d->imp.warn = warn;
    d->imp.warn_ctx = warn_ctx;
    if (limits)
        read_limits = *limits;
    else
        asys_report_limits_default(&read_limits);
    if (progress) {
        d->progress = progress;
        d->progress_ctx = progress_ctx;
        d->read_progress = read_limits.progress;
        d->read_progress_ctx = read_limits.progress_ctx;
        read_limits.progress = on_read;
        read_limits.progress_ctx = d;
    }
    /* report_path NULL: an empty database (the schema every import makes) */
    if ((report_path && asys_report_reader_open(&reader, report_path, &read_limits, err) != 0) ||
        driver_init(d, db, reader ? asys_report_manifest(reader) : NULL,
                    reader ? asys_report_symbols(reader) : NULL, err) != 0 ||
        (reader && import_all_segments(d, reader, err) != 0))
        goto out;
    reading_done(d);
    if (run_phase(d, PHASE_FINISH, err) != 0 || imp_context_write_tables(&d->imp, err) != 0 ||
        run_phase(d, PHASE_DERIVE, err) != 0 || write_record_counts(d, err) != 0 ||
        create_schema(d, 1, err) != 0 || run_phase(d, PHASE_ANALYZE, err) != 0 ||
        write_report_stats(d, err) != 0 || imp_exec(&d->imp, "COMMIT", err) != 0)
        goto out;
    rc = 0;
out:
    if (d && d->progress && d->imp.db)
        sqlite3_progress_handler(d->imp.db, 0, NULL, NULL);
    if (d)
        driver_free(d);
    free(d);
    asys_report_reader_close(reader);
    return rc;
}
