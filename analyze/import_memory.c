/* HOST_MEMORY records -> host_memory; HEAP_ALLOC and HEAP_FREE records (and their interval-1 forms)
 * -> heap_allocations, and so do the aggregates (HEAP_ALLOC_SUM, HEAP_FREE_SUM; see sums_derive).
 * A free is matched to the open allocation of its block (process image, address) as the records
 * stream in: a row is written once, when its block is freed or its allocation superseded, never
 * updated.  The records of one block may come from different threads' segments in either order, so
 * a free that finds no open allocation earlier than itself waits in a temporary table; at derive
 * each such free closes the latest allocation of its block before it that is still open. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "import_family.h"

static const char *const function_names[] = {
#define HEAP_NAME(id, name) [id] = #name,
    ASYS_HEAP_FUNCTIONS(HEAP_NAME)
#undef HEAP_NAME
};

/* An allocation whose block has not been freed yet. */
struct open_block {
    uint64_t image, address;
    uint32_t next; /* index + 1 of the next block of the same hash, or of the next free entry */
    uint32_t pid, tid, function_id;
    int64_t start_ns, chain; /* chain 0: none */
    uint64_t size;
    double weight_bytes, weight_count;
};

struct heap {
    struct asys_importer *imp;
    sqlite3_stmt *insert_alloc;
    sqlite3_stmt *insert_free;
    sqlite3_stmt *insert_host;
    sqlite3_stmt *insert_alloc_sum;
    sqlite3_stmt *insert_free_sum;
    uint64_t report_interval_ms; /* of the aggregates (the largest seen); 0: none */
    uint32_t names[ASYS_HEAP_FUNCTION_COUNT + 1]; /* function id -> strings.id */
    uint64_t pending_frees;
    uint64_t interval; /* the sampling interval of the allocations (the largest seen) */
    struct asys_u64map open; /* hash of (image, address) -> index + 1 of the first block */
    struct open_block *blocks;
    size_t block_count, block_cap;
    uint32_t free_blocks; /* index + 1 of the first reusable entry */
};

static uint64_t block_hash(uint64_t image, uint64_t address)
{
    uint64_t h = (address ^ image * 0x9e3779b97f4a7c15ull) * 0xff51afd7ed558ccdull;
    return h ^ h >> 31;
}

static int sums_init(struct heap *h, struct asys_err *err);

static int heap_init(struct asys_importer *imp, void **state, struct asys_err *err)
{
    struct heap *h = calloc(1, sizeof *h);
    if (!h)
        return asys_fail(err, "out of memory");
    *state = h;
    h->imp = imp;
    asys_u64map_init(&h->open);
    if (imp_exec(imp,
                 "CREATE TEMP TABLE heap_frees (ns INTEGER NOT NULL, pid INTEGER NOT NULL, "
                 "tid INTEGER NOT NULL, image INTEGER NOT NULL, address INTEGER NOT NULL, "
                 "function_id INTEGER NOT NULL)",
                 err) != 0)
        return -1;
    if (imp_prepare(imp,
                    "INSERT INTO heap_allocations (start_ns, pid, tid, image, address, size, "
                    "weight_bytes, weight_count, function_id, callchain_id, end_ns, free_tid, "
                    "free_function_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    &h->insert_alloc, err) != 0)
        return -1;
    if (imp_prepare(imp, "INSERT INTO host_memory (ns, pid, rss_bytes, hwm_bytes) VALUES (?,?,?,?)",
                    &h->insert_host, err) != 0 ||
        sums_init(h, err) != 0)
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
    sqlite3_finalize(h->insert_alloc_sum);
    sqlite3_finalize(h->insert_free_sum);
    asys_u64map_free(&h->open);
    free(h->blocks);
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

/* Writes the allocation of `b`, freed at `end_ns` (by `free_tid` with
 * `free_fn`) or never (end_ns < 0). */
static int write_allocation(struct heap *h, const struct open_block *b, int64_t end_ns,
                            uint32_t free_tid, uint32_t free_fn, struct asys_err *err)
{
    sqlite3_stmt *st = h->insert_alloc;
    sqlite3_bind_int64(st, 1, b->start_ns);
    sqlite3_bind_int64(st, 2, b->pid);
    sqlite3_bind_int64(st, 3, b->tid);
    sqlite3_bind_int64(st, 4, (int64_t)b->image);
    sqlite3_bind_int64(st, 5, (int64_t)b->address);
    sqlite3_bind_int64(st, 6, (int64_t)b->size);
    sqlite3_bind_double(st, 7, b->weight_bytes);
    sqlite3_bind_double(st, 8, b->weight_count);
    sqlite3_bind_int64(st, 9, b->function_id);
    imp_bind_optional(st, 10, b->chain, b->chain != 0);
    imp_bind_optional(st, 11, end_ns, end_ns >= 0);
    imp_bind_optional(st, 12, free_tid, end_ns >= 0);
    imp_bind_optional(st, 13, free_fn, end_ns >= 0);
    return imp_step(h->imp, st, err);
}

/* The open block of (image, address): its index, and where the link to it
 * lies (to unlink it); -1 when there is none. */
static int64_t find_block(struct heap *h, uint64_t image, uint64_t address, uint32_t **link)
{
    uint64_t *first = asys_u64map_get(&h->open, block_hash(image, address));
    uint32_t *at = NULL;
    for (uint32_t i = first ? (uint32_t)*first : 0; i; i = h->blocks[i - 1].next) {
        const struct open_block *b = &h->blocks[i - 1];
        if (b->image == image && b->address == address) {
            *link = at;
            return (int64_t)i - 1;
        }
        at = &h->blocks[i - 1].next;
    }
    return -1;
}

/* Unlinks block `i` (found with `link`) and makes its entry reusable. */
static void drop_block(struct heap *h, int64_t i, uint32_t *link)
{
    struct open_block *b = &h->blocks[i];
    uint64_t key = block_hash(b->image, b->address);
    if (link)
        *link = b->next;
    else if (b->next)
        asys_u64map_put(&h->open, key, b->next); /* replacing a value cannot fail */
    else
        asys_u64map_remove(&h->open, key);
    b->next = h->free_blocks;
    h->free_blocks = (uint32_t)i + 1;
}

static int open_block_add(struct heap *h, const struct open_block *block, struct asys_err *err)
{
    uint32_t slot;
    if (h->free_blocks) {
        slot = h->free_blocks - 1;
        h->free_blocks = h->blocks[slot].next;
    } else {
        if (h->block_count >= UINT32_MAX - 1 ||
            asys_grow(&h->blocks, &h->block_cap, h->block_count, sizeof *h->blocks, 4096) != 0)
            return asys_fail_kind(err, ASYS_ERR_NOMEM, "out of memory");
        slot = (uint32_t)h->block_count++;
    }
    uint64_t key = block_hash(block->image, block->address);
    uint64_t *first = asys_u64map_get(&h->open, key);
    h->blocks[slot] = *block;
    h->blocks[slot].next = first ? (uint32_t)*first : 0;
    if (asys_u64map_put(&h->open, key, (uint64_t)slot + 1) != 0)
        return asys_fail_kind(err, ASYS_ERR_NOMEM, "out of memory");
    return 0;
}

static uint64_t segment_image(const struct heap *h)
{
    return h->imp->seg.image ? h->imp->seg.image->uid : 0;
}

/* A recorded allocation (HEAP_ALLOC or its interval-1 form). */
struct heap_event {
    uint64_t address, size, interval;
    uint32_t callchain_id;
};

static int add_allocation(struct heap *h, unsigned arg, const struct heap_event *e, uint64_t ns,
                          struct asys_err *err)
{
    uint32_t fn;
    if (function_id(h, arg, &fn, err) != 0)
        return -1;
    if (!fn)
        return 0;
    if (e->interval == 0 || e->address > INT64_MAX || e->size > INT64_MAX || ns > INT64_MAX) {
        imp_warn(h->imp, "%s: heap allocation with interval 0 or a size past 2^63; ignored",
                 h->imp->seg.member);
        return 0;
    }
    if (e->interval > h->interval)
        h->interval = e->interval;
    /* the chance this block was sampled: each byte with probability 1/N */
    double p = e->interval == 1 ? 1.0 : -expm1(-(double)e->size / (double)e->interval);
    if (!(p > 0))
        p = 1.0 / (double)e->interval; /* a 0-byte block: as one byte */
    struct open_block b = {
        .image = segment_image(h),
        .address = e->address,
        .pid = h->imp->seg.pid,
        .tid = h->imp->seg.tid,
        .function_id = fn,
        .start_ns = (int64_t)ns,
        .chain = imp_callchain(h->imp, e->callchain_id),
        .size = e->size,
        .weight_bytes = (double)e->size / p,
        .weight_count = 1.0 / p,
    };
    uint32_t *link;
    int64_t previous = find_block(h, b.image, b.address, &link);
    if (previous >= 0) { /* its free was not seen yet (or never came) */
        if (write_allocation(h, &h->blocks[previous], -1, 0, 0, err) != 0)
            return -1;
        drop_block(h, previous, link);
    }
    return open_block_add(h, &b, err);
}

static int import_alloc(void *state, const struct asys_record *rec, uint64_t ns,
                        struct asys_err *err)
{
    const struct asys_rec_heap_alloc *r = (const void *)rec->data;
    struct heap_event e = {r->address, r->size, r->sampling_interval, r->callchain_id};
    return add_allocation(state, rec->arg, &e, ns, err);
}

static int import_alloc_every(void *state, const struct asys_record *rec, uint64_t ns,
                              struct asys_err *err)
{
    const struct asys_rec_heap_alloc_every *r = (const void *)rec->data;
    struct heap_event e = {r->address, r->size, 1, r->callchain_id};
    return add_allocation(state, rec->arg, &e, ns, err);
}

/* A free, matched to its allocation by address (the recorded size is not
 * needed: the allocation has it). */
static int free_block(struct heap *h, unsigned arg, uint64_t address, uint64_t ns,
                      struct asys_err *err)
{
    uint32_t fn;
    if (function_id(h, arg, &fn, err) != 0)
        return -1;
    if (!fn || address > INT64_MAX || ns > INT64_MAX)
        return 0;
    uint64_t image = segment_image(h);
    uint32_t *link;
    int64_t i = find_block(h, image, address, &link);
    if (i >= 0 && h->blocks[i].start_ns <= (int64_t)ns) {
        if (write_allocation(h, &h->blocks[i], (int64_t)ns, h->imp->seg.tid, fn, err) != 0)
            return -1;
        drop_block(h, i, link);
        return 0;
    }
    sqlite3_stmt *st = h->insert_free; /* its allocation comes later in the file, or never */
    sqlite3_bind_int64(st, 1, (int64_t)ns);
    sqlite3_bind_int64(st, 2, h->imp->seg.pid);
    sqlite3_bind_int64(st, 3, h->imp->seg.tid);
    sqlite3_bind_int64(st, 4, (int64_t)image);
    sqlite3_bind_int64(st, 5, (int64_t)address);
    sqlite3_bind_int64(st, 6, fn);
    h->pending_frees++;
    return imp_step(h->imp, st, err);
}

static int import_free(void *state, const struct asys_record *rec, uint64_t ns,
                       struct asys_err *err)
{
    const struct asys_rec_heap_free *r = (const void *)rec->data;
    return free_block(state, rec->arg, r->address, ns, err);
}

static int import_free_every(void *state, const struct asys_record *rec, uint64_t ns,
                             struct asys_err *err)
{
    const struct asys_rec_heap_free_every *r = (const void *)rec->data;
    return free_block(state, rec->arg, r->address, ns, err);
}

/* ---- aggregates ---------------------------------------------------------------
 * The sums of one allocation interval may come from several records (a
 * thread's full table is written early) and their frees from any thread, in
 * any order of the file: both wait in temporary tables, keyed by what the
 * recorder keyed them by (image, interval, its own stack id, function), and
 * become heap_allocations rows at derive.  A FREE_SUM's stack id is the
 * allocating thread's, defined in that thread's segment: it is resolved
 * through the ALLOC_SUM it matches. */

static int sums_init(struct heap *h, struct asys_err *err)
{
    struct asys_importer *imp = h->imp;
    if (imp_exec(imp,
                 "CREATE TEMP TABLE heap_alloc_sums (image INTEGER NOT NULL, "
                 "interval_id INTEGER NOT NULL, local_chain INTEGER NOT NULL, "
                 "function_id INTEGER NOT NULL, ns INTEGER NOT NULL, pid INTEGER NOT NULL, "
                 "tid INTEGER NOT NULL, callchain_id INTEGER, samples INTEGER NOT NULL, "
                 "largest INTEGER NOT NULL, weight_bytes REAL NOT NULL, "
                 "weight_count REAL NOT NULL);\n"
                 "CREATE TEMP TABLE heap_free_sums (image INTEGER NOT NULL, "
                 "interval_id INTEGER NOT NULL, local_chain INTEGER NOT NULL, "
                 "function_id INTEGER NOT NULL, ns INTEGER NOT NULL, tid INTEGER NOT NULL, "
                 "samples INTEGER NOT NULL, weight_bytes REAL NOT NULL, "
                 "weight_count REAL NOT NULL)",
                 err) != 0 ||
        imp_prepare(imp, "INSERT INTO temp.heap_alloc_sums VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                    &h->insert_alloc_sum, err) != 0)
        return -1;
    return imp_prepare(imp, "INSERT INTO temp.heap_free_sums VALUES (?,?,?,?,?,?,?,?,?)",
                       &h->insert_free_sum, err);
}

/* Whether a sum's counts fit SQLite's integers; warns when not. */
static int sum_fits(struct heap *h, uint32_t interval_id, uint64_t ns, const uint64_t *values,
                    int count)
{
    int fits = interval_id != 0 && ns <= INT64_MAX;
    for (int i = 0; i < count; i++)
        fits = fits && values[i] <= INT64_MAX;
    if (!fits)
        imp_warn(h->imp, "%s: heap sum with interval 0 or a count past 2^63; ignored",
                 h->imp->seg.member);
    return fits;
}

/* When a sum's last event happened: its last_ticks, never after the
 * record itself (`ns`, already bounded) for an untrusted one. */
static int64_t sum_time(struct heap *h, uint64_t last_ticks, uint64_t ns)
{
    uint64_t last = imp_ns(h->imp, last_ticks);
    return (int64_t)(last < ns ? last : ns);
}

/* Binds the key every sum starts with: image, interval, stack id, function. */
static void bind_sum_key(struct heap *h, sqlite3_stmt *st, uint32_t interval_id,
                         uint32_t local_chain, uint32_t fn)
{
    sqlite3_bind_int64(st, 1, (int64_t)segment_image(h));
    sqlite3_bind_int64(st, 2, interval_id);
    sqlite3_bind_int64(st, 3, local_chain);
    sqlite3_bind_int64(st, 4, fn);
}

static int import_alloc_sum(void *state, const struct asys_record *rec, uint64_t ns,
                            struct asys_err *err)
{
    struct heap *h = state;
    const struct asys_rec_heap_alloc_sum *r = (const void *)rec->data;
    uint32_t fn;
    const uint64_t counts[] = {r->samples, r->largest, r->estimated_bytes};
    if (function_id(h, rec->arg, &fn, err) != 0)
        return -1;
    if (!fn || r->sampling_interval == 0 || !sum_fits(h, r->interval_id, ns, counts, 3))
        return 0;
    if (r->sampling_interval > h->interval)
        h->interval = r->sampling_interval;
    if (r->report_interval_ms > h->report_interval_ms)
        h->report_interval_ms = r->report_interval_ms;
    int64_t chain = imp_callchain(h->imp, r->callchain_id);
    sqlite3_stmt *st = h->insert_alloc_sum;
    bind_sum_key(h, st, r->interval_id, r->callchain_id, fn);
    sqlite3_bind_int64(st, 5, sum_time(h, r->last_ticks, ns));
    sqlite3_bind_int64(st, 6, h->imp->seg.pid);
    sqlite3_bind_int64(st, 7, h->imp->seg.tid);
    imp_bind_optional(st, 8, chain, chain != 0);
    sqlite3_bind_int64(st, 9, (int64_t)r->samples);
    sqlite3_bind_int64(st, 10, (int64_t)r->largest);
    sqlite3_bind_double(st, 11, (double)r->estimated_bytes);
    sqlite3_bind_double(st, 12, (double)r->estimated_count_q16 / ASYS_HEAP_COUNT_ONE);
    return imp_step(h->imp, st, err);
}

static int import_free_sum(void *state, const struct asys_record *rec, uint64_t ns,
                           struct asys_err *err)
{
    struct heap *h = state;
    const struct asys_rec_heap_free_sum *r = (const void *)rec->data;
    uint32_t fn;
    const uint64_t counts[] = {r->samples, r->estimated_bytes};
    if (function_id(h, rec->arg, &fn, err) != 0)
        return -1;
    if (!fn || !sum_fits(h, r->interval_id, ns, counts, 2))
        return 0;
    sqlite3_stmt *st = h->insert_free_sum;
    bind_sum_key(h, st, r->interval_id, r->callchain_id, fn);
    sqlite3_bind_int64(st, 5, sum_time(h, r->last_ticks, ns));
    sqlite3_bind_int64(st, 6, h->imp->seg.tid);
    sqlite3_bind_int64(st, 7, (int64_t)r->samples);
    sqlite3_bind_double(st, 8, (double)r->estimated_bytes);
    sqlite3_bind_double(st, 9, (double)r->estimated_count_q16 / ASYS_HEAP_COUNT_ONE);
    return imp_step(h->imp, st, err);
}

/* The aggregates as heap_allocations rows without an address: per
 * allocation sum, one row per (freeing thread, free time) of its frees and
 * one row for what was never freed.  A row's start_ns is when the last of
 * its allocations returned, its end_ns when the last of its frees did
 * (never before its start). */
#define SUM_KEY "image, interval_id, local_chain, function_id"
static const char sums_to_rows[] =
    "CREATE TEMP TABLE heap_sum_allocs AS\n"
    "  SELECT " SUM_KEY ", MAX(ns) AS ns, MIN(pid) AS pid, MIN(tid) AS tid,\n"
    "         MAX(callchain_id) AS callchain_id, SUM(samples) AS samples,\n"
    "         MAX(largest) AS largest, SUM(weight_bytes) AS weight_bytes,\n"
    "         SUM(weight_count) AS weight_count\n"
    "  FROM temp.heap_alloc_sums GROUP BY " SUM_KEY ";\n"
    "CREATE TEMP TABLE heap_sum_frees AS\n"
    "  SELECT " SUM_KEY ", ns, tid, SUM(samples) AS samples,\n"
    "         SUM(weight_bytes) AS weight_bytes, SUM(weight_count) AS weight_count\n"
    "  FROM temp.heap_free_sums GROUP BY " SUM_KEY ", ns, tid;\n"
    "CREATE INDEX temp.heap_sum_frees_by_key ON heap_sum_frees (" SUM_KEY ");\n"
    "INSERT INTO heap_allocations (start_ns, pid, tid, image, address, size, weight_bytes,\n"
    "    weight_count, function_id, callchain_id, end_ns, free_tid, samples)\n"
    "  SELECT a.ns, a.pid, a.tid, a.image, NULL, a.largest, f.weight_bytes, f.weight_count,\n"
    "         a.function_id, a.callchain_id, MAX(f.ns, a.ns), f.tid, f.samples\n"
    "  FROM temp.heap_sum_allocs AS a JOIN temp.heap_sum_frees AS f USING (" SUM_KEY ");\n"
    "INSERT INTO heap_allocations (start_ns, pid, tid, image, address, size, weight_bytes,\n"
    "    weight_count, function_id, callchain_id, samples)\n"
    "  SELECT a.ns, a.pid, a.tid, a.image, NULL, a.largest,\n"
    "         a.weight_bytes - COALESCE(f.weight_bytes, 0),\n"
    "         a.weight_count - COALESCE(f.weight_count, 0), a.function_id, a.callchain_id,\n"
    "         a.samples - COALESCE(f.samples, 0)\n"
    "  FROM temp.heap_sum_allocs AS a LEFT JOIN\n"
    "       (SELECT " SUM_KEY ", SUM(samples) AS samples, SUM(weight_bytes) AS weight_bytes,\n"
    "               SUM(weight_count) AS weight_count\n"
    "        FROM temp.heap_sum_frees GROUP BY " SUM_KEY ") AS f USING (" SUM_KEY ")\n"
    "  WHERE a.samples > COALESCE(f.samples, 0)";

/* Writes the aggregates' rows; the frees no allocation sum matches (blocks
 * allocated before a fork, sums lost) are counted in *unmatched. */
static int sums_derive(struct heap *h, int64_t *unmatched, struct asys_err *err)
{
    struct asys_importer *imp = h->imp;
    sqlite3_stmt *st = NULL;
    int rc = -1;
    if (h->report_interval_ms && imp_session_info(imp, "heap_report_interval_ms", NULL,
                                                  (int64_t)h->report_interval_ms, err) != 0)
        goto out;
    if (imp_exec(imp, sums_to_rows, err) != 0 ||
        imp_prepare(imp,
                    "SELECT COALESCE(SUM(samples), 0) FROM temp.heap_sum_frees AS f\n"
                    "WHERE NOT EXISTS (SELECT 1 FROM temp.heap_sum_allocs AS a\n"
                    "  WHERE a.image = f.image AND a.interval_id = f.interval_id\n"
                    "    AND a.local_chain = f.local_chain AND a.function_id = f.function_id)",
                    &st, err) != 0)
        goto out;
    if (sqlite3_step(st) == SQLITE_ROW)
        *unmatched += sqlite3_column_int64(st, 0);
    sqlite3_finalize(st); /* a statement still open would lock the tables it read */
    st = NULL;
    rc = imp_exec(imp,
                  "DROP TABLE temp.heap_alloc_sums; DROP TABLE temp.heap_free_sums;\n"
                  "DROP TABLE temp.heap_sum_allocs; DROP TABLE temp.heap_sum_frees",
                  err);
out:
    sqlite3_finalize(st);
    return rc;
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

/* Every block still open was never freed, as far as the segments read so
 * far tell; then the frees that came before their allocation in the file
 * close the latest open allocation of their block before them.  A free
 * without one (a block allocated before a fork, or whose allocation was
 * lost) is counted. */
static int close_pending(struct heap *h, struct asys_err *err)
{
    struct asys_importer *imp = h->imp;
    for (size_t i = 0; i < h->block_count; i++) {
        const struct open_block *b = &h->blocks[i];
        uint32_t *link;
        if (find_block(h, b->image, b->address, &link) == (int64_t)i &&
            write_allocation(h, b, -1, 0, 0, err) != 0)
            return -1;
    }
    asys_u64map_free(&h->open);
    asys_u64map_init(&h->open);
    int64_t unmatched = 0;
    if (h->pending_frees) {
        if (imp_exec(imp,
                     "CREATE INDEX IF NOT EXISTS heap_allocations_by_block "
                     "ON heap_allocations (image, address, start_ns)",
                     err) != 0 ||
            imp_exec(imp,
                     "UPDATE heap_allocations SET end_ns = f.ns, free_tid = f.tid,\n"
                     "       free_function_id = f.function_id\n"
                     "FROM (SELECT ns, tid, function_id,\n"
                     "        (SELECT a.id FROM heap_allocations AS a\n"
                     "         WHERE a.image = p.image AND a.address = p.address\n"
                     "           AND a.start_ns <= p.ns AND a.end_ns IS NULL\n"
                     "         ORDER BY a.start_ns DESC LIMIT 1) AS target\n"
                     "      FROM temp.heap_frees AS p) AS f\n"
                     "WHERE heap_allocations.id = f.target",
                     err) != 0)
            return -1;
        unmatched = (int64_t)h->pending_frees - sqlite3_changes(imp->db);
    }
    if (sums_derive(h, &unmatched, err) != 0)
        return -1;
    if (imp_session_info(imp, "heap_unmatched_frees", NULL, unmatched, err) != 0)
        return -1;
    return imp_exec(imp, "DROP TABLE temp.heap_frees", err);
}

static int heap_derive(void *state, struct asys_err *err)
{
    struct heap *h = state;
    if (h->interval &&
        imp_session_info(h->imp, "heap_sampling_interval", NULL, (int64_t)h->interval, err) != 0)
        return -1;
    return close_pending(h, err);
}

static const struct imp_record_op heap_ops[] = {
    {ASYS_REC_HEAP_ALLOC, import_alloc},
    {ASYS_REC_HEAP_FREE, import_free},
    {ASYS_REC_HEAP_ALLOC_EVERY, import_alloc_every},
    {ASYS_REC_HEAP_FREE_EVERY, import_free_every},
    {ASYS_REC_HEAP_ALLOC_SUM, import_alloc_sum},
    {ASYS_REC_HEAP_FREE_SUM, import_free_sum},
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
