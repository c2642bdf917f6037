/* HGGC records -> the hggc_* and ppu_* tables.  API calls carry clock ticks
 * (converted like every other record); device activity carries CLOCK_MONOTONIC
 * ns already.  Kernel names are demangled once per distinct name at the end. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "activity_pages.h"
#include "demangle.h"
#include "grow.h"
#include "embedded_files.h"
#include "import_family.h"
#include "json_util.h"

enum hggc_statement {
    ST_API,
    ST_DEVICE,
    ST_CONTEXT,
    ST_STREAM,
    ST_KERNEL,
    ST_MEMCPY,
    ST_MEMSET,
    ST_SYNC,
    ST_EVENT,
    ST_MEMORY,
    ST_GRAPH_TRACE,
    ST_GRAPH_NODE,
    ST_GRAPH_EDGE,
    ST_GRAPH_EXEC,
    ST_GRAPH_LAUNCH,
    ST_OVERHEAD,
    ST_COUNT
};

static const char *const statement_sql[ST_COUNT] = {
    [ST_API] = "INSERT INTO hggc_api_calls (start_ns, end_ns, pid, tid, api, name_id, cbid, "
               "correlation_id, result, callchain_id) VALUES (?,?,?,?,?,?,?,?,?,?)",
    [ST_DEVICE] = "INSERT OR REPLACE INTO ppu_devices (pid, device, physical_index, name_id, uuid, "
                  "global_memory_bytes, multiprocessors, compute_major, compute_minor) "
                  "VALUES (?,?,?,?,?,?,?,?,?)",
    [ST_CONTEXT] = "INSERT OR REPLACE INTO ppu_contexts (pid, context, device, null_stream) "
                   "VALUES (?,?,?,?)",
    [ST_STREAM] = "INSERT OR REPLACE INTO ppu_streams (pid, stream, context, priority, "
                  "non_blocking, is_default, correlation_id) VALUES (?,?,?,?,?,0,?)",
    [ST_KERNEL] =
        "INSERT INTO ppu_kernels (start_ns, end_ns, queued_ns, submitted_ns, pid, device, "
        "context, stream, correlation_id, grid_x, grid_y, grid_z, block_x, block_y, "
        "block_z, static_shared_bytes, dynamic_shared_bytes, registers_per_thread, "
        "launch_type, mangled_name_id, graph_id, graph_node_id) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_MEMCPY] = "INSERT INTO ppu_memcpys (start_ns, end_ns, pid, device, context, stream, "
                  "correlation_id, bytes, copy_kind, src_kind, dst_kind, async, src_device, "
                  "dst_device, graph_id, graph_node_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_MEMSET] = "INSERT INTO ppu_memsets (start_ns, end_ns, pid, device, context, stream, "
                  "correlation_id, bytes, value, memory_kind, async, graph_id, graph_node_id) "
                  "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_SYNC] = "INSERT INTO ppu_syncs (start_ns, end_ns, pid, type, context, stream, "
                "correlation_id, event_id, event_sync_id) VALUES (?,?,?,?,?,?,?,?,?)",
    [ST_EVENT] = "INSERT INTO ppu_event_records (pid, device_ns, device, context, stream, "
                 "correlation_id, event_id, event_sync_id) VALUES (?,?,?,?,?,?,?,?)",
    [ST_MEMORY] = "INSERT INTO ppu_memory (pid, timestamp_ns, operation, memory_kind, address, "
                  "bytes, device, context, stream, correlation_id, error) "
                  "VALUES (?,?,?,?,?,?,?,?,?,?,?)",
    [ST_GRAPH_TRACE] = "INSERT INTO ppu_graph_traces (start_ns, end_ns, pid, device, context, "
                       "stream, correlation_id, graph_id) VALUES (?,?,?,?,?,?,?,?)",
    [ST_GRAPH_NODE] = "INSERT OR IGNORE INTO ppu_graph_nodes (pid, node_id, graph_id, node_type, "
                      "original_node_id, correlation_id) VALUES (?,?,?,?,?,?)",
    [ST_GRAPH_EDGE] = "INSERT INTO ppu_graph_edges (pid, node_id, depends_on) VALUES (?,?,?)",
    [ST_GRAPH_EXEC] = "INSERT OR REPLACE INTO ppu_graph_execs (pid, exec_id, graph_id, "
                      "correlation_id) VALUES (?,?,?,?)",
    [ST_GRAPH_LAUNCH] = "INSERT INTO ppu_graph_launches (pid, exec_id, correlation_id) "
                        "VALUES (?,?,?)",
    [ST_OVERHEAD] = "INSERT INTO hggc_overheads (pid, start_ns, end_ns, overhead_kind, "
                    "object_kind) VALUES (?,?,?,?,?)",
};

struct imp_hggc {
    struct asys_importer *imp;
    sqlite3_stmt *st[ST_COUNT];
    struct asys_u64map kernel_names; /* global string id of every mangled kernel name */
    struct asys_page_writer calls; /* hggc_api_pages, written as the calls are */
};

static int import_status(struct asys_importer *imp, struct asys_err *err);

static int hggc_init(struct asys_importer *imp, void **state, struct asys_err *err)
{
    struct imp_hggc *h = calloc(1, sizeof *h);
    if (!h)
        return asys_fail(err, "out of memory");
    *state = h;
    h->imp = imp;
    asys_u64map_init(&h->kernel_names);
    for (int i = 0; i < ST_COUNT; i++)
        if (imp_prepare(imp, statement_sql[i], &h->st[i], err) != 0)
            return -1;
    if (asys_page_writer_open(&h->calls, imp->db, "hggc_api_pages", CP_FIELDS, err) != 0)
        return -1;
    return import_status(imp, err);
}

static void hggc_free(void *state)
{
    struct imp_hggc *h = state;
    if (!h)
        return;
    for (int i = 0; i < ST_COUNT; i++)
        sqlite3_finalize(h->st[i]);
    asys_page_writer_free(&h->calls);
    asys_u64map_free(&h->kernel_names);
    free(h);
}

/* Binds values in order from column 1. */
struct binder {
    sqlite3_stmt *st;
    int col;
};

static void put(struct binder *b, int64_t v)
{
    sqlite3_bind_int64(b->st, ++b->col, v);
}

static void put_opt(struct binder *b, int64_t v, int present)
{
    imp_bind_optional(b->st, ++b->col, v, present);
}

static struct binder bind(struct imp_hggc *h, enum hggc_statement which)
{
    struct binder b = {h->st[which], 0};
    return b;
}

/* Where and when device work ran: start, end, pid, device, context, stream,
 * correlation id (the leading columns of copies, memsets and graph ranges). */
static void put_work(struct binder *b, struct asys_importer *imp, uint64_t start_ns,
                     uint64_t end_ns, uint32_t device, uint32_t context, uint32_t stream,
                     uint32_t correlation_id)
{
    put(b, (int64_t)start_ns);
    put(b, (int64_t)end_ns);
    put(b, imp->seg.pid);
    put(b, device);
    put(b, context);
    put(b, stream);
    put(b, correlation_id);
}

/* CUPTI's "none" for 32-bit ids. */
#define NONE32 0xffffffffu

static int import_api(void *state, const struct asys_record *rec, uint64_t end_ns,
                      struct asys_err *err)
{
    struct imp_hggc *h = state;
    struct asys_importer *imp = h->imp;
    const struct asys_rec_hggc_api *r = (const void *)rec->data;
    int64_t chain = imp_callchain(imp, r->callchain_id);
    struct asys_page_row row = {.nulls = 0};
    row.v[CP_START] = (int64_t)imp_ns(imp, r->start_ticks);
    row.v[CP_END] = (int64_t)end_ns;
    row.v[CP_PID] = imp->seg.pid;
    row.v[CP_TID] = imp->seg.tid;
    row.v[CP_NAME] = imp_string(imp, imp->seg.image, r->name_string_id);
    row.v[CP_CORRELATION] = r->correlation_id;
    row.v[CP_RESULT] = r->result;
    struct binder b = bind(h, ST_API);
    put(&b, row.v[CP_START]);
    put(&b, row.v[CP_END]);
    put(&b, row.v[CP_PID]);
    put(&b, row.v[CP_TID]);
    put(&b, rec->arg);
    put(&b, row.v[CP_NAME]);
    put(&b, r->cbid);
    put(&b, row.v[CP_CORRELATION]);
    put(&b, row.v[CP_RESULT]);
    put_opt(&b, chain, chain != 0);
    if (imp_step(imp, b.st, err) != 0)
        return -1;
    /* the export's copy (hggc_api_pages), with the id the call was given */
    row.v[CP_ID] = sqlite3_last_insert_rowid(imp->db);
    return asys_page_writer_add(&h->calls, &row, err);
}

static int import_kernel(void *state, const struct asys_record *rec, uint64_t ns,
                         struct asys_err *err)
{
    (void)ns;
    struct imp_hggc *h = state;
    struct asys_importer *imp = h->imp;
    const struct asys_rec_hggc_kernel *r = (const void *)rec->data;
    uint32_t name = imp_string(imp, imp->seg.image, r->name_string_id);
    if (name && asys_u64map_put(&h->kernel_names, name, 1) != 0)
        return asys_fail(err, "out of memory");
    struct binder b = bind(h, ST_KERNEL);
    put(&b, (int64_t)r->start_ns);
    put(&b, (int64_t)r->end_ns);
    put_opt(&b, (int64_t)r->queued_ns, r->queued_ns != 0);
    put_opt(&b, (int64_t)r->submitted_ns, r->submitted_ns != 0);
    put(&b, imp->seg.pid);
    put(&b, r->device);
    put(&b, r->context);
    put(&b, r->stream);
    put(&b, r->correlation_id);
    for (int i = 0; i < 3; i++)
        put(&b, r->grid[i]);
    for (int i = 0; i < 3; i++)
        put(&b, r->block[i]);
    put(&b, r->static_shared_memory);
    put(&b, r->dynamic_shared_memory);
    put(&b, r->registers_per_thread);
    put(&b, r->launch_type);
    put(&b, name);
    put_opt(&b, r->graph_id, r->graph_id != 0);
    put_opt(&b, (int64_t)r->graph_node_id, r->graph_node_id != 0);
    return imp_step(imp, b.st, err);
}

static int import_memcpy(void *state, const struct asys_record *rec, uint64_t ns,
                         struct asys_err *err)
{
    (void)ns;
    struct imp_hggc *h = state;
    struct asys_importer *imp = h->imp;
    const struct asys_rec_hggc_memcpy *r = (const void *)rec->data;
    struct binder b = bind(h, ST_MEMCPY);
    put_work(&b, imp, r->start_ns, r->end_ns, r->device, r->context, r->stream, r->correlation_id);
    put(&b, (int64_t)r->bytes);
    put(&b, r->copy_kind);
    put(&b, r->src_kind);
    put(&b, r->dst_kind);
    put(&b, r->flags & 1);
    put_opt(&b, r->src_device, r->src_device != NONE32);
    put_opt(&b, r->dst_device, r->dst_device != NONE32);
    put_opt(&b, r->graph_id, r->graph_id != 0);
    put_opt(&b, (int64_t)r->graph_node_id, r->graph_node_id != 0);
    return imp_step(imp, b.st, err);
}

static int import_memset(void *state, const struct asys_record *rec, uint64_t ns,
                         struct asys_err *err)
{
    (void)ns;
    struct imp_hggc *h = state;
    struct asys_importer *imp = h->imp;
    const struct asys_rec_hggc_memset *r = (const void *)rec->data;
    struct binder b = bind(h, ST_MEMSET);
    put_work(&b, imp, r->start_ns, r->end_ns, r->device, r->context, r->stream, r->correlation_id);
    put(&b, (int64_t)r->bytes);
    put(&b, r->value);
    put(&b, r->memory_kind);
    put(&b, r->flags & 1);
    put_opt(&b, r->graph_id, r->graph_id != 0);
    put_opt(&b, (int64_t)r->graph_node_id, r->graph_node_id != 0);
    return imp_step(imp, b.st, err);
}

static int import_sync(void *state, const struct asys_record *rec, uint64_t ns,
                       struct asys_err *err)
{
    (void)ns;
    struct imp_hggc *h = state;
    struct asys_importer *imp = h->imp;
    const struct asys_rec_hggc_sync *r = (const void *)rec->data;
    struct binder b = bind(h, ST_SYNC);
    put(&b, (int64_t)r->start_ns);
    put(&b, (int64_t)r->end_ns);
    put(&b, imp->seg.pid);
    put(&b, rec->arg);
    put(&b, r->context);
    put_opt(&b, r->stream, r->stream != NONE32);
    put(&b, r->correlation_id);
    put_opt(&b, r->event_id, r->event_id != NONE32);
    put_opt(&b, (int64_t)r->event_sync_id, r->event_sync_id != UINT64_MAX);
    return imp_step(imp, b.st, err);
}

static int import_event(void *state, const struct asys_record *rec, uint64_t ns,
                        struct asys_err *err)
{
    (void)ns;
    struct imp_hggc *h = state;
    struct asys_importer *imp = h->imp;
    const struct asys_rec_hggc_event_record *r = (const void *)rec->data;
    struct binder b = bind(h, ST_EVENT);
    put(&b, imp->seg.pid);
    put(&b, (int64_t)r->device_ns);
    put(&b, r->device);
    put(&b, r->context);
    put(&b, r->stream);
    put(&b, r->correlation_id);
    put(&b, r->event_id);
    put(&b, (int64_t)r->event_sync_id);
    return imp_step(imp, b.st, err);
}

static int import_memory(void *state, const struct asys_record *rec, uint64_t ns,
                         struct asys_err *err)
{
    (void)ns;
    struct imp_hggc *h = state;
    struct asys_importer *imp = h->imp;
    const struct asys_rec_hggc_memory *r = (const void *)rec->data;
    struct binder b = bind(h, ST_MEMORY);
    put(&b, imp->seg.pid);
    put(&b, (int64_t)r->timestamp_ns);
    put(&b, rec->arg);
    put(&b, r->memory_kind);
    put(&b, (int64_t)r->address);
    put(&b, (int64_t)r->bytes);
    put_opt(&b, r->device, r->device != NONE32);
    put_opt(&b, r->context, r->context != 0);
    put_opt(&b, r->stream, r->stream != 0 && r->stream != NONE32);
    put_opt(&b, r->correlation_id, r->correlation_id != 0);
    put_opt(&b, r->error, rec->arg == ASYS_HGGC_MEMORY_FAILED);
    return imp_step(imp, b.st, err);
}

static int import_graph_trace(void *state, const struct asys_record *rec, uint64_t ns,
                              struct asys_err *err)
{
    (void)ns;
    struct imp_hggc *h = state;
    struct asys_importer *imp = h->imp;
    const struct asys_rec_hggc_graph_trace *r = (const void *)rec->data;
    struct binder b = bind(h, ST_GRAPH_TRACE);
    put_work(&b, imp, r->start_ns, r->end_ns, r->device, r->context, r->stream, r->correlation_id);
    put(&b, r->graph_id);
    return imp_step(imp, b.st, err);
}

static int import_device(void *state, const struct asys_record *rec, uint64_t ns,
                         struct asys_err *err)
{
    (void)ns;
    struct imp_hggc *h = state;
    struct asys_importer *imp = h->imp;
    const struct asys_rec_hggc_device *r = (const void *)rec->data;
    char uuid[33];
    for (int i = 0; i < 16; i++)
        snprintf(uuid + 2 * i, 3, "%02x", r->uuid[i]);
    struct binder b = bind(h, ST_DEVICE);
    put(&b, imp->seg.pid);
    put(&b, rec->arg);
    put_opt(&b, r->physical_index, r->physical_index != NONE32);
    put(&b, imp_string(imp, imp->seg.image, r->name_string_id));
    sqlite3_bind_text(b.st, ++b.col, uuid, -1, SQLITE_TRANSIENT);
    put(&b, (int64_t)r->global_memory_bytes);
    put(&b, r->multiprocessors);
    put(&b, r->compute_major);
    put(&b, r->compute_minor);
    return imp_step(imp, b.st, err);
}

static int import_ppu_context(void *state, const struct asys_record *rec, uint64_t ns,
                              struct asys_err *err)
{
    (void)ns;
    struct imp_hggc *h = state;
    struct asys_importer *imp = h->imp;
    const struct asys_rec_hggc_context *r = (const void *)rec->data;
    struct binder b = bind(h, ST_CONTEXT);
    put(&b, imp->seg.pid);
    put(&b, r->context);
    put(&b, r->device);
    put_opt(&b, r->null_stream, r->null_stream != NONE32);
    return imp_step(imp, b.st, err);
}

static int import_stream(void *state, const struct asys_record *rec, uint64_t ns,
                         struct asys_err *err)
{
    (void)ns;
    struct imp_hggc *h = state;
    struct asys_importer *imp = h->imp;
    const struct asys_rec_hggc_stream *r = (const void *)rec->data;
    struct binder b = bind(h, ST_STREAM);
    put(&b, imp->seg.pid);
    put(&b, r->stream);
    put(&b, r->context);
    put(&b, r->priority);
    put(&b, r->flags & 1);
    put_opt(&b, r->correlation_id, r->correlation_id != 0);
    return imp_step(imp, b.st, err);
}

static int import_graph_node(void *state, const struct asys_record *rec, uint64_t ns,
                             struct asys_err *err)
{
    (void)ns;
    struct imp_hggc *h = state;
    struct asys_importer *imp = h->imp;
    const struct asys_rec_hggc_graph_node *r = (const void *)rec->data;
    if (rec->arg == ASYS_HGGC_NODE_DEPENDENCY) {
        struct binder b = bind(h, ST_GRAPH_EDGE);
        put(&b, imp->seg.pid);
        put(&b, (int64_t)r->node_id);
        put(&b, (int64_t)r->other_node_id);
        return imp_step(imp, b.st, err);
    }
    struct binder b = bind(h, ST_GRAPH_NODE);
    put(&b, imp->seg.pid);
    put(&b, (int64_t)r->node_id);
    put_opt(&b, r->graph_id, r->graph_id != 0);
    put(&b, r->node_type);
    put_opt(&b, (int64_t)r->other_node_id, rec->arg == ASYS_HGGC_NODE_CLONED && r->other_node_id);
    put_opt(&b, r->correlation_id, r->correlation_id != 0);
    return imp_step(imp, b.st, err);
}

static int import_graph_exec(void *state, const struct asys_record *rec, uint64_t ns,
                             struct asys_err *err)
{
    (void)ns;
    struct imp_hggc *h = state;
    struct asys_importer *imp = h->imp;
    const struct asys_rec_hggc_graph_exec *r = (const void *)rec->data;
    if (rec->type == ASYS_REC_HGGC_GRAPH_LAUNCH) {
        struct binder b = bind(h, ST_GRAPH_LAUNCH);
        put(&b, imp->seg.pid);
        put(&b, r->exec_id);
        put(&b, r->correlation_id);
        return imp_step(imp, b.st, err);
    }
    struct binder b = bind(h, ST_GRAPH_EXEC);
    put(&b, imp->seg.pid);
    put(&b, r->exec_id);
    put_opt(&b, r->graph_id, r->graph_id != 0);
    put_opt(&b, r->correlation_id, r->correlation_id != 0);
    return imp_step(imp, b.st, err);
}

static int import_overhead(void *state, const struct asys_record *rec, uint64_t ns,
                           struct asys_err *err)
{
    (void)ns;
    struct imp_hggc *h = state;
    struct asys_importer *imp = h->imp;
    const struct asys_rec_hggc_overhead *r = (const void *)rec->data;
    struct binder b = bind(h, ST_OVERHEAD);
    put(&b, imp->seg.pid);
    put(&b, (int64_t)r->start_ns);
    put(&b, (int64_t)r->end_ns);
    put(&b, r->overhead_kind);
    put(&b, r->object_kind);
    return imp_step(imp, b.st, err);
}

/* ppu_kernel_names: every distinct kernel name demangled once. */
static int finish_kernel_names(struct imp_hggc *h, struct asys_err *err)
{
    struct asys_importer *imp = h->imp;
    sqlite3_stmt *get = NULL, *put_name = NULL;
    if (imp_prepare(imp, "SELECT value FROM strings WHERE id = ?", &get, err) ||
        imp_prepare(imp,
                    "INSERT INTO ppu_kernel_names (mangled_name_id, demangled_name_id, "
                    "base_name_id) VALUES (?,?,?)",
                    &put_name, err)) {
        sqlite3_finalize(get);
        return -1;
    }
    int rc = 0;
    const struct asys_u64map *names = &h->kernel_names;
    for (size_t i = 0; rc == 0 && i < names->capacity; i++) {
        if (!names->used[i])
            continue;
        uint32_t mangled_id = (uint32_t)names->keys[i];
        sqlite3_bind_int64(get, 1, mangled_id);
        const char *mangled =
            sqlite3_step(get) == SQLITE_ROW ? (const char *)sqlite3_column_text(get, 0) : NULL;
        char *demangled = asys_demangle(mangled);
        const char *shown = demangled ? demangled : mangled ? mangled : "";
        char base[1024];
        size_t base_length = asys_base_name(shown, base, sizeof base);
        if (base_length >= sizeof base)
            base_length = sizeof base - 1;
        sqlite3_reset(get); /* `mangled` is not used past here */
        uint32_t demangled_id = mangled_id, base_id = 0;
        if (demangled)
            rc = imp_intern_text(imp, demangled, strlen(demangled), &demangled_id, err);
        if (rc == 0)
            rc = imp_intern_text(imp, base, base_length, &base_id, err);
        free(demangled);
        if (rc != 0)
            break;
        sqlite3_bind_int64(put_name, 1, mangled_id);
        sqlite3_bind_int64(put_name, 2, demangled_id);
        sqlite3_bind_int64(put_name, 3, base_id);
        rc = imp_step(imp, put_name, err);
    }
    sqlite3_finalize(get);
    sqlite3_finalize(put_name);
    return rc;
}

static int hggc_finish(void *state, struct asys_err *err)
{
    struct imp_hggc *h = state;
    if (finish_kernel_names(h, err) != 0 || asys_page_writer_close(&h->calls, err) != 0)
        return -1;
    /* each context's default stream is a stream too */
    return imp_exec(h->imp,
                    "INSERT OR IGNORE INTO ppu_streams (pid, stream, context, priority, "
                    "non_blocking, is_default, correlation_id) "
                    "SELECT pid, null_stream, context, 0, 0, 1, NULL FROM ppu_contexts "
                    "WHERE null_stream IS NOT NULL",
                    err);
}

/* ---- ppu_activity_groups: the stream percentage tree's sums ----------------------------
 * Summed here rather than with GROUP BY: SQLite sorts every activity on ten
 * keys (0.6 s for 240 k activities); one scan into a hash map takes 0.15 s. */

/* the key columns: kind .. base_name_id, then the range's domain and text */
enum { GROUP_KIND = 0, GROUP_DOMAIN = 9, GROUP_TEXT = 10, GROUP_KEYS = 11 };

struct group_key {
    int64_t value[GROUP_KEYS];
    uint32_t nulls; /* bit i: value[i] is NULL */
    uint32_t zero; /* padding, always 0: keys are hashed as bytes */
};

struct group_sums {
    struct group_key key;
    int64_t least_range; /* INT64_MAX: none */
    int64_t first_start, last_end, duration, count;
};

struct group_table {
    struct asys_strmap index; /* key bytes -> position + 1 */
    struct group_sums *items;
    size_t count, cap;
};

/* The activity query's columns (activity_groups) as ppu_activity_pages'
 * fields: the group keys first (kind .. text), then the range, the times
 * and what only the pages keep. */
static const int page_column[AP_FIELDS] = {
    [AP_KIND] = 0,  [AP_PID] = 1,     [AP_PHYSICAL] = 2,  [AP_CONTEXT] = 3,   [AP_STREAM] = 4,
    [AP_GRAPH] = 5, [AP_EXEC] = 6,    [AP_COPY_KIND] = 7, [AP_BASE_NAME] = 8, [AP_DOMAIN] = 9,
    [AP_TEXT] = 10, [AP_START] = 12,  [AP_END] = 13,      [AP_ID] = 14,       [AP_NAME] = 15,
    [AP_API] = 16,  [AP_SOURCE] = 17, [AP_API_START] = 18};

/* NULL reads as 0: the type asked of a 0 only */
static void page_row_read(sqlite3_stmt *st, struct asys_page_row *r)
{
    r->nulls = 0;
    for (int f = 0; f < AP_FIELDS; f++) {
        r->v[f] = sqlite3_column_int64(st, page_column[f]);
        if (!r->v[f] && sqlite3_column_type(st, page_column[f]) == SQLITE_NULL)
            r->nulls |= 1u << f;
    }
}

/* the group keys' fields, by key column */
static const int group_field[GROUP_KEYS] = {AP_KIND,      AP_PID,    AP_PHYSICAL, AP_CONTEXT,
                                            AP_STREAM,    AP_GRAPH,  AP_EXEC,     AP_COPY_KIND,
                                            AP_BASE_NAME, AP_DOMAIN, AP_TEXT};

static int group_add(struct group_table *g, sqlite3_stmt *st, const struct asys_page_row *r)
{
    struct group_key k;
    memset(&k, 0, sizeof k);
    for (int i = 0; i < GROUP_KEYS; i++) {
        if (r->nulls & (1u << group_field[i]))
            k.nulls |= 1u << i;
        else
            k.value[i] = r->v[group_field[i]];
    }
    /* the HGTX group splits kernels only, and a range without a domain is no group */
    if (k.value[GROUP_KIND] != 1 || (k.nulls & (1u << GROUP_DOMAIN))) {
        k.value[GROUP_DOMAIN] = k.value[GROUP_TEXT] = 0;
        k.nulls |= 1u << GROUP_DOMAIN | 1u << GROUP_TEXT;
    }
    uint32_t at = asys_strmap_get(&g->index, (const char *)&k, sizeof k);
    if (!at) {
        if (asys_grow(&g->items, &g->cap, g->count, sizeof *g->items, 64) != 0 ||
            asys_strmap_put(&g->index, (const char *)&k, sizeof k, (uint32_t)g->count + 1) != 0)
            return -1;
        g->items[g->count] = (struct group_sums){k, INT64_MAX, INT64_MAX, INT64_MIN, 0, 0};
        at = (uint32_t)++g->count;
    }
    struct group_sums *s = &g->items[at - 1];
    int64_t start = r->v[AP_START], end = r->v[AP_END];
    if (sqlite3_column_type(st, GROUP_KEYS) != SQLITE_NULL &&
        sqlite3_column_int64(st, GROUP_KEYS) < s->least_range)
        s->least_range = sqlite3_column_int64(st, GROUP_KEYS);
    if (start < s->first_start)
        s->first_start = start;
    if (end > s->last_end)
        s->last_end = end;
    s->duration += end - start;
    s->count++;
    return 0;
}

/* The HGTX group of a kernel: 'h<domain>:<text>', 'h' without a range (or a domain). */
static void bind_hgtx_group(sqlite3_stmt *st, int column, const struct group_key *k)
{
    char text[64];
    if (k->value[GROUP_KIND] != 1) {
        sqlite3_bind_null(st, column);
        return;
    }
    if (k->nulls & (1u << GROUP_DOMAIN))
        snprintf(text, sizeof text, "h");
    else if (k->nulls & (1u << GROUP_TEXT))
        snprintf(text, sizeof text, "h%lld:", (long long)k->value[GROUP_DOMAIN]);
    else
        snprintf(text, sizeof text, "h%lld:%lld", (long long)k->value[GROUP_DOMAIN],
                 (long long)k->value[GROUP_TEXT]);
    sqlite3_bind_text(st, column, text, -1, SQLITE_TRANSIENT);
}

static int groups_write(struct asys_importer *imp, const struct group_table *g,
                        struct asys_err *err)
{
    sqlite3_stmt *st;
    if (imp_prepare(imp, "INSERT INTO ppu_activity_groups VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    &st, err) != 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < g->count; i++) {
        const struct group_sums *s = &g->items[i];
        for (int c = 0; c < 9; c++) /* kind .. base_name_id */
            imp_bind_optional(st, c + 1, s->key.value[c], !(s->key.nulls & (1u << c)));
        bind_hgtx_group(st, 10, &s->key);
        imp_bind_optional(st, 11, s->least_range, s->least_range != INT64_MAX);
        sqlite3_bind_int64(st, 12, s->first_start);
        sqlite3_bind_int64(st, 13, s->last_end);
        sqlite3_bind_int64(st, 14, s->duration);
        sqlite3_bind_int64(st, 15, s->count);
        rc = imp_step(imp, st, err);
    }
    sqlite3_finalize(st);
    return rc;
}

/* One scan of the activities (in id order) for their groups' sums and the
 * export's pages (ppu_activity_pages). */
static int activity_groups(struct asys_importer *imp, struct asys_err *err)
{
    sqlite3_stmt *st = NULL;
    struct group_table g = {0};
    struct asys_page_writer pages;
    struct asys_page_row row;
    int rc = -1, step = SQLITE_DONE;
    asys_strmap_init(&g.index);
    if (asys_page_writer_open(&pages, imp->db, "ppu_activity_pages", AP_FIELDS, err) != 0)
        goto out;
    if (imp_prepare(
            imp,
            "SELECT p.kind, p.pid, p.physical, p.context, p.stream, p.graph_id,\n"
            "       p.graph_exec_id, p.copy_kind, p.base_name_id, e.domain_id, e.text_id,\n"
            "       p.hgtx_range_id, p.start_ns, p.end_ns,\n"
            "       p.id, p.name_id, p.api_id, p.source_id, p.api_start_ns\n"
            "FROM ppu_activities AS p LEFT JOIN hgtx_events AS e ON e.id = p.hgtx_range_id\n"
            "ORDER BY p.id",
            &st, err) != 0)
        goto out;
    rc = 0;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        page_row_read(st, &row);
        if (group_add(&g, st, &row) != 0)
            rc = asys_fail(err, "out of memory");
        else
            rc = asys_page_writer_add(&pages, &row, err);
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = imp_sql_error(imp, err);
    if (rc == 0)
        rc = groups_write(imp, &g, err);
    if (rc == 0)
        rc = asys_page_writer_close(&pages, err);
out:
    sqlite3_finalize(st);
    asys_page_writer_free(&pages);
    asys_strmap_free(&g.index);
    free(g.items);
    return rc;
}

/* What the collector said about itself, as finalize gathered it into the
 * manifest's "hggc" object. */
static int import_status(struct asys_importer *imp, struct asys_err *err)
{
    const cJSON *hggc = cJSON_GetObjectItemCaseSensitive(imp->manifest, "hggc");
    if (!hggc)
        return 0;
    static const char *const texts[][2] = {{"hggc_status", "status"}, {"hggc_message", "message"}};
    static const char *const numbers[][2] = {
        {"hggc_cupti_version", "cupti_version"},
        {"hggc_cupti_dropped_records", "cupti_dropped_records"},
        {"hggc_frees_after_main", "frees_after_main"},
        {"hggc_frees_after_main_bytes", "frees_after_main_bytes"},
        {"hggc_cupti_overhead_ns", "cupti_overhead_ns"}};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        if (imp_session_info(imp, texts[i][0], asys_json_get_str(hggc, texts[i][1], ""), 0, err))
            return -1;
    for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++) {
        int64_t v;
        if (asys_json_get_i64(hggc, numbers[i][1], &v) == 0 &&
            imp_session_info(imp, numbers[i][0], NULL, v, err) != 0)
            return -1;
    }
    return 0;
}

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The PPU timeline's derived tables (schema/derived.sql), the stream
 * percentage sums, and the dependency table (schema/deps.sql); the time each
 * took goes into session_info. */
static int hggc_analyze(void *state, struct asys_err *err)
{
    struct asys_importer *imp = ((struct imp_hggc *)state)->imp;
    uint64_t derive_start = monotonic_ns();
    if (imp_exec(imp, asys_schema_text("derived.sql"), err) != 0 || activity_groups(imp, err) != 0)
        return -1;
    uint64_t deps_start = monotonic_ns();
    if (imp_exec(imp, asys_schema_text("deps.sql"), err) != 0)
        return -1;
    uint64_t done = monotonic_ns();
    return imp_session_info(imp, "import_derived_ns", NULL, (int64_t)(deps_start - derive_start),
                            err) ||
                   imp_session_info(imp, "import_deps_ns", NULL, (int64_t)(done - deps_start), err)
               ? -1
               : 0;
}

static const struct imp_record_op hggc_ops[] = {
    {ASYS_REC_HGGC_API, import_api},
    {ASYS_REC_HGGC_KERNEL, import_kernel},
    {ASYS_REC_HGGC_MEMCPY, import_memcpy},
    {ASYS_REC_HGGC_MEMSET, import_memset},
    {ASYS_REC_HGGC_SYNC, import_sync},
    {ASYS_REC_HGGC_EVENT_RECORD, import_event},
    {ASYS_REC_HGGC_MEMORY, import_memory},
    {ASYS_REC_HGGC_GRAPH_TRACE, import_graph_trace},
    {ASYS_REC_HGGC_DEVICE, import_device},
    {ASYS_REC_HGGC_CONTEXT, import_ppu_context},
    {ASYS_REC_HGGC_STREAM, import_stream},
    {ASYS_REC_HGGC_GRAPH_NODE, import_graph_node},
    {ASYS_REC_HGGC_GRAPH_EXEC, import_graph_exec},
    {ASYS_REC_HGGC_GRAPH_LAUNCH, import_graph_exec},
    {ASYS_REC_HGGC_OVERHEAD, import_overhead},
    {ASYS_REC_HGGC_STATUS, NULL}, /* the manifest has it (import_status) */
};

const struct imp_family imp_family_hggc = {
    .name = "hggc",
    .feature = ASYS_FEATURE_HGGC,
    .schema = "hggc.sql",
    .ops = hggc_ops,
    .op_count = sizeof hggc_ops / sizeof hggc_ops[0],
    .init = hggc_init,
    .finish = hggc_finish,
    .analyze = hggc_analyze,
    .free = hggc_free,
};
