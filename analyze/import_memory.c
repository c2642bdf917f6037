/* HOST_MEMORY records -> host_memory; HEAP_ALLOC and HEAP_FREE records ->
 * heap_allocations.  A free is matched
 * to the allocation of the same block in the same process image at derive
 * time: the records of one block come from different threads' segments, so
 * only a pass in time order over every segment's rows can pair them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "import_family.h"

static const char *const function_names[] = {
#define HEAP_NAME(id, name) [id] = #name,
    ASYS_HEAP_FUNCTIONS(HEAP_NAME)
#undef HEAP_NAME
};

struct heap {
    struct asys_importer *imp;
    sqlite3_stmt *insert_alloc;
    sqlite3_stmt *insert_free;
    sqlite3_stmt *insert_host;
    uint32_t names[ASYS_HEAP_FUNCTION_COUNT + 1]; /* function id -> strings.id */
    uint64_t frees;
    uint64_t interval; /* the sampling interval of the allocations (the largest seen) */
};

static int heap_init(struct asys_importer *imp, void **state, struct asys_err *err)
{
    struct heap *h = calloc(1, sizeof *h);
    if (!h)
        return asys_fail(err, "out of memory");
    *state = h;
    h->imp = imp;
    /* the frees wait in a temporary table until every segment is read */
    if (imp_exec(imp,
                 "CREATE TEMP TABLE heap_frees (ns INTEGER NOT NULL, pid INTEGER NOT NULL, "
                 "tid INTEGER NOT NULL, image INTEGER NOT NULL, address INTEGER NOT NULL, "
                 "function_id INTEGER NOT NULL)",
                 err) != 0)
        return -1;
    if (imp_prepare(imp,
                    "INSERT INTO heap_allocations (start_ns, pid, tid, image, address, size, "
                    "weight_bytes, weight_count, function_id, callchain_id) "
                    "VALUES (?,?,?,?,?,?,?,?,?,?)",
                    &h->insert_alloc, err) != 0)
        return -1;
    if (imp_prepare(imp,
                    "INSERT INTO host_memory (ns, pid, rss_bytes, hwm_bytes) VALUES (?,?,?,?)",
                    &h->insert_host, err) != 0)
        return -1;
    return imp_prepare(imp,
                       "INSERT INTO temp.heap_frees (ns, pid, tid, image, address, function_id) "
                       "VALUES (?,?,?,?,?,?)",
                       &h->insert_free, err);
}

static void heap_free_state(void *state)
{
    struct heap *h = state;
    if (!h)
        return;
    sqlite3_finalize(h->insert_alloc);
    sqlite3_finalize(h->insert_free);
    sqlite3_finalize(h->insert_host);
    free(h);
}

/* The strings id of function `fn`; 0 (with a warning) when unknown. */
static int function_id(struct heap *h, unsigned fn, uint32_t *id, struct asys_err *err)
{
    *id = 0;
    if (fn == 0 || fn > ASYS_HEAP_FUNCTION_COUNT) {
        imp_warn(h->imp, "%s: unknown heap function %u; record ignored", h->imp->seg.member, fn);
        return 0;
    }
    if (!h->names[fn] && imp_intern_text(h->imp, function_names[fn], strlen(function_names[fn]),
                                         &h->names[fn], err) != 0)
        return -1;
    *id = h->names[fn];
    return 0;
}

static void bind_origin(struct heap *h, sqlite3_stmt *st, uint64_t ns)
{
    struct asys_importer *imp = h->imp;
    sqlite3_bind_int64(st, 1, (int64_t)ns);
    sqlite3_bind_int64(st, 2, imp->seg.pid);
    sqlite3_bind_int64(st, 3, imp->seg.tid);
    sqlite3_bind_int64(st, 4, imp->seg.image ? (int64_t)imp->seg.image->uid : 0);
}

static int import_alloc(void *state, const struct asys_record *rec, uint64_t ns,
                        struct asys_err *err)
{
    struct heap *h = state;
    const struct asys_rec_heap_alloc *r = (const void *)rec->data;
    uint32_t fn;
    if (function_id(h, rec->arg, &fn, err) != 0 || !fn)
        return fn ? 0 : (err->kind ? -1 : 0);
    if (r->sampling_interval == 0 || r->address > INT64_MAX || r->size > INT64_MAX) {
        imp_warn(h->imp, "%s: heap allocation with interval 0 or a size past 2^63; ignored",
                 h->imp->seg.member);
        return 0;
    }
    /* the chance this block was sampled: each byte with probability 1/N */
    double p =
        r->sampling_interval == 1 ? 1.0 : -expm1(-(double)r->size / (double)r->sampling_interval);
    if (!(p > 0))
        p = 1.0 / (double)r->sampling_interval; /* a 0-byte block: as one byte */
    if (r->sampling_interval > h->interval)
        h->interval = r->sampling_interval;
    sqlite3_stmt *st = h->insert_alloc;
    bind_origin(h, st, ns);
    sqlite3_bind_int64(st, 5, (int64_t)r->address);
    sqlite3_bind_int64(st, 6, (int64_t)r->size);
    sqlite3_bind_double(st, 7, (double)r->size / p);
    sqlite3_bind_double(st, 8, 1.0 / p);
    sqlite3_bind_int64(st, 9, fn);
    int64_t chain = imp_callchain(h->imp, r->callchain_id);
    imp_bind_optional(st, 10, chain, chain != 0);
    return imp_step(h->imp, st, err);
}

static int import_free(void *state, const struct asys_record *rec, uint64_t ns,
                       struct asys_err *err)
{
    struct heap *h = state;
    const struct asys_rec_heap_free *r = (const void *)rec->data;
    uint32_t fn;
    if (function_id(h, rec->arg, &fn, err) != 0)
        return -1;
    if (!fn || r->address > INT64_MAX)
        return 0;
    sqlite3_stmt *st = h->insert_free;
    bind_origin(h, st, ns);
    sqlite3_bind_int64(st, 5, (int64_t)r->address);
    sqlite3_bind_int64(st, 6, fn);
    h->frees++;
    return imp_step(h->imp, st, err);
}

static int import_host_memory(void *state, const struct asys_record *rec, uint64_t ns,
                              struct asys_err *err)
{
    struct heap *h = state;
    const struct asys_rec_host_memory *r = (const void *)rec->data;
    if (r->rss_bytes > INT64_MAX || r->hwm_bytes > INT64_MAX) {
        imp_warn(h->imp, "%s: host memory sample past 2^63 bytes; ignored", h->imp->seg.member);
        return 0;
    }
    sqlite3_stmt *st = h->insert_host;
    sqlite3_bind_int64(st, 1, (int64_t)ns);
    sqlite3_bind_int64(st, 2, r->pid);
    sqlite3_bind_int64(st, 3, (int64_t)r->rss_bytes);
    sqlite3_bind_int64(st, 4, (int64_t)r->hwm_bytes);
    return imp_step(h->imp, st, err);
}

/* Each free closes the latest open allocation of its block in its image
 * (allocations first when both have the same time: a block is allocated
 * before it can be freed).  A free without one (a block allocated before a
 * fork, or whose allocation was lost) is counted. */
static int match_frees(struct heap *h, struct asys_err *err)
{
    struct asys_importer *imp = h->imp;
    sqlite3_stmt *events = NULL, *close = NULL;
    int rc = -1, step;
    int64_t open_id = 0, open_image = 0, open_address = 0, unmatched = 0;
    if (imp_prepare(imp,
                    "SELECT image, address, start_ns AS ns, 0 AS kind, id, NULL, NULL "
                    "FROM heap_allocations UNION ALL "
                    "SELECT image, address, ns, 1, NULL, tid, function_id FROM temp.heap_frees "
                    "ORDER BY 1, 2, 3, 4",
                    &events, err) != 0 ||
        imp_prepare(imp,
                    "UPDATE heap_allocations SET end_ns = ?, free_tid = ?, free_function_id = ? "
                    "WHERE id = ?",
                    &close, err) != 0)
        goto out;
    while ((step = sqlite3_step(events)) == SQLITE_ROW) {
        int64_t image = sqlite3_column_int64(events, 0), address = sqlite3_column_int64(events, 1);
        if (sqlite3_column_int(events, 3) == 0) {
            open_id = sqlite3_column_int64(events, 4);
            open_image = image;
            open_address = address;
            continue;
        }
        if (!open_id || open_image != image || open_address != address) {
            unmatched++;
            continue;
        }
        sqlite3_bind_int64(close, 1, sqlite3_column_int64(events, 2));
        sqlite3_bind_int64(close, 2, sqlite3_column_int64(events, 5));
        sqlite3_bind_int64(close, 3, sqlite3_column_int64(events, 6));
        sqlite3_bind_int64(close, 4, open_id);
        if (imp_step(imp, close, err) != 0)
            goto out;
        open_id = 0;
    }
    if (step != SQLITE_DONE) {
        imp_sql_error(imp, err);
        goto out;
    }
    rc = imp_session_info(imp, "heap_unmatched_frees", NULL, unmatched, err);
    if (rc == 0)
        rc = imp_exec(imp, "DROP TABLE temp.heap_frees", err);
out:
    sqlite3_finalize(events);
    sqlite3_finalize(close);
    return rc;
}

static int heap_derive(void *state, struct asys_err *err)
{
    struct heap *h = state;
    if (h->interval &&
        imp_session_info(h->imp, "heap_sampling_interval", NULL, (int64_t)h->interval, err) != 0)
        return -1;
    return match_frees(h, err);
}

static const struct imp_record_op heap_ops[] = {
    {ASYS_REC_HEAP_ALLOC, import_alloc},
    {ASYS_REC_HEAP_FREE, import_free},
    {ASYS_REC_HOST_MEMORY, import_host_memory},
};

const struct imp_family imp_family_memory = {
    .name = "memory",
    .feature = ASYS_FEATURE_MEMORY,
    .schema = "memory.sql",
    .ops = heap_ops,
    .op_count = sizeof heap_ops / sizeof heap_ops[0],
    .init = heap_init,
    .derive = heap_derive,
    .free = heap_free_state,
};
