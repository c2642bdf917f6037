/* Weighted call stacks from a report's database (see stack_samples.h). */
#include "stack_samples.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "grow.h"

/* Duration sources clip each call to the window; a call's own function is
 * the leaf below the frame that made it. */
#define CALL_SOURCE_SQL(table) \
    "SELECT c.start_ns, c.end_ns, c.pid, c.tid, c.callchain_id,\n" \
    "       MIN(c.end_ns, ?2) - MAX(c.start_ns, ?1), s.value, 1\n" \
    "FROM " table " AS c LEFT JOIN strings AS s ON s.id = c.name_id\n" \
    "WHERE c.callchain_id IS NOT NULL AND c.end_ns >= ?1 AND c.start_ns <= ?2\n" \
    "  AND (?3 < 0 OR c.pid = ?3) AND (?4 < 0 OR c.tid = ?4)\n" \
    "ORDER BY c.start_ns"

static const struct stack_source cpu_source = {
    .name = "cpu",
    .unit = "samples",
    .table = "cpu_samples",
    .none = "no CPU samples (record with -s process-tree)",
    .sql = "SELECT timestamp_ns, timestamp_ns, pid, tid, callchain_id, 1, NULL, 1\n"
           "FROM cpu_samples\n"
           "WHERE timestamp_ns >= ?1 AND timestamp_ns <= ?2\n"
           "  AND (?3 < 0 OR pid = ?3) AND (?4 < 0 OR tid = ?4)\n"
           "ORDER BY timestamp_ns",
    .weight_type = "samples",
};

static const struct stack_source osrt_source = {
    .name = "osrt",
    .unit = "ns",
    .table = "osrt_calls",
    .none = "no OS runtime calls with a call stack (record with -t osrt; stacks are taken of "
            "calls lasting at least --osrt-backtrace-threshold)",
    .sql = CALL_SOURCE_SQL("osrt_calls"),
    .weight_type = "time",
    .count_type = "calls",
};

static const struct stack_source hggc_source = {
    .name = "hggc",
    .unit = "ns",
    .table = "hggc_api_calls",
    .none = "no HGGC API calls with a call stack (record with -t hggc --hggcbacktrace all:NS)",
    .sql = CALL_SOURCE_SQL("hggc_api_calls"),
    .weight_type = "time",
    .count_type = "calls",
};

/* cuDNN (domain 1) or cuBLAS (2) calls lasting --acompute-backtrace-threshold or more. */
#define ACOMPUTE_SOURCE_SQL(domain) \
    "SELECT c.start_ns, c.end_ns, c.pid, c.tid, c.callchain_id,\n" \
    "       MIN(c.end_ns, ?2) - MAX(c.start_ns, ?1), s.value, 1\n" \
    "FROM acompute_calls AS c LEFT JOIN strings AS s ON s.id = c.name_id\n" \
    "WHERE c.domain = " domain " AND c.callchain_id IS NOT NULL\n" \
    "  AND c.end_ns >= ?1 AND c.start_ns <= ?2\n" \
    "  AND (?3 < 0 OR c.pid = ?3) AND (?4 < 0 OR c.tid = ?4)\n" \
    "ORDER BY c.start_ns"

static const struct stack_source acdnn_source = {
    .name = "acdnn",
    .unit = "ns",
    .table = "acompute_calls",
    .none = "no cuDNN calls with a call stack (record with -t acdnn; stacks are taken of calls "
            "lasting at least --acompute-backtrace-threshold)",
    .sql = ACOMPUTE_SOURCE_SQL("1"),
    .weight_type = "time",
    .count_type = "calls",
};

static const struct stack_source acblas_source = {
    .name = "acblas",
    .unit = "ns",
    .table = "acompute_calls",
    .none = "no cuBLAS calls with a call stack (record with -t acblas; stacks are taken of calls "
            "lasting at least --acompute-backtrace-threshold)",
    .sql = ACOMPUTE_SOURCE_SQL("2"),
    .weight_type = "time",
    .count_type = "calls",
};

/* Heap allocations weigh the bytes they stand for (sampling undone); the
 * allocating function is the leaf below its caller. */
#define HEAP_SOURCE_SQL(still_allocated) \
    "SELECT a.start_ns, a.start_ns, a.pid, a.tid, a.callchain_id,\n" \
    "       CAST(ROUND(a.weight_bytes) AS INTEGER), s.value,\n" \
    "       MAX(1, CAST(ROUND(a.weight_count) AS INTEGER))\n" \
    "FROM heap_allocations AS a LEFT JOIN strings AS s ON s.id = a.function_id\n" \
    "WHERE a.start_ns >= ?1 AND a.start_ns <= ?2" still_allocated "\n" \
    "  AND (?3 < 0 OR a.pid = ?3) AND (?4 < 0 OR a.tid = ?4)\n" \
    "ORDER BY a.start_ns"

static const struct stack_source heap_source = {
    .name = "heap",
    .unit = "bytes",
    .table = "heap_allocations",
    .none = "no heap allocations (record with --heap-memory-usage true)",
    .sql = HEAP_SOURCE_SQL(""),
    .weight_type = "alloc_space",
    .count_type = "alloc_objects",
};

/* Leaks: allocated in the window and not freed by its end. */
static const struct stack_source leaks_source = {
    .name = "leaks",
    .unit = "bytes",
    .table = "heap_allocations",
    .none = "no heap allocations left allocated (record with --heap-memory-usage true)",
    .sql = HEAP_SOURCE_SQL(" AND (a.end_ns IS NULL OR a.end_ns > ?2)"),
    .weight_type = "inuse_space",
    .count_type = "inuse_objects",
};

/* Device and pinned allocations weigh their bytes; the allocating call is
 * the leaf below its stack. */
#define PPU_ALLOCATION_SQL(kind) \
    "SELECT a.timestamp_ns, a.timestamp_ns, a.pid, COALESCE(a.tid, a.pid), a.callchain_id,\n" \
    "       a.bytes, s.value, 1\n" \
    "FROM ppu_allocations AS a LEFT JOIN strings AS s ON s.id = a.api_name_id\n" \
    "WHERE a.kind = '" kind \
    "' AND NOT a.failed AND a.timestamp_ns >= ?1 AND a.timestamp_ns <= ?2\n" \
    "  AND (?3 < 0 OR a.pid = ?3) AND (?4 < 0 OR a.tid = ?4)\n" \
    "ORDER BY a.timestamp_ns"

static const struct stack_source device_source = {
    .name = "device",
    .unit = "bytes",
    .table = "ppu_memory",
    .none = "no device allocations (record with -t hggc; --hggc-memory-usage for their stacks)",
    .sql = PPU_ALLOCATION_SQL("device"),
    .weight_type = "alloc_space",
    .count_type = "alloc_objects",
};

static const struct stack_source pinned_source = {
    .name = "pinned",
    .unit = "bytes",
    .table = "ppu_memory",
    .none = "no pinned allocations (record with -t hggc; --hggc-memory-usage pinned for their "
            "stacks)",
    .sql = PPU_ALLOCATION_SQL("pinned"),
    .weight_type = "alloc_space",
    .count_type = "alloc_objects",
};

/* Python stack samples: weight 1 each, like CPU samples. */
static const struct stack_source python_source = {
    .name = "python",
    .unit = "samples",
    .table = "python_samples",
    .none = "no Python samples (record a python or python3 program; --python-sampling is on "
            "by default)",
    .sql = "SELECT ns, ns, pid, tid, callchain_id, 1, NULL, 1\n"
           "FROM python_samples\n"
           "WHERE ns >= ?1 AND ns <= ?2\n"
           "  AND (?3 < 0 OR pid = ?3) AND (?4 < 0 OR tid = ?4)\n"
           "ORDER BY ns",
    .weight_type = "samples",
};

const struct stack_source *const stack_sources[] = {
    &cpu_source,    &osrt_source,   &hggc_source,  &heap_source,   &leaks_source, &device_source,
    &pinned_source, &python_source, &acdnn_source, &acblas_source, NULL};

const struct stack_source *stack_source_find(const char *name)
{
    for (const struct stack_source *const *s = stack_sources; name && *s; s++)
        if (!strcmp((*s)->name, name))
            return *s;
    return NULL;
}

void stack_source_names(char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (const struct stack_source *const *s = stack_sources; *s && used < size; s++) {
        int n = snprintf(out + used, size - used, "%s%s", used ? ", " : "", (*s)->name);
        if (n < 0)
            return;
        used += (size_t)n;
    }
}

/* ---- functions ------------------------------------------------------------------- */

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* The function labelled `label` in `module`, added the first time: its index, or -1. */
static int64_t function_index(struct stack_set *set, const char *label, const char *module,
                              const char *file, int64_t line)
{
    size_t label_len = strlen(label), module_len = module ? strlen(module) : 0;
    char stack_key[512];
    char *key = label_len + module_len + 1 <= sizeof stack_key ? stack_key
                                                               : malloc(label_len + module_len + 1);
    int64_t index = -1;
    if (!key)
        return -1;
    memcpy(key, label, label_len);
    key[label_len] = '\0';
    if (module_len)
        memcpy(key + label_len + 1, module, module_len);
    size_t key_len = label_len + 1 + module_len;
    uint32_t found = asys_strmap_get(&set->function_ids, key, key_len);
    if (found) {
        index = (int64_t)found - 1;
        goto out;
    }
    if (set->function_count >= UINT32_MAX - 1 ||
        asys_grow(&set->functions, &set->function_cap, set->function_count, sizeof *set->functions,
                  256) != 0)
        goto out;
    struct stack_function *f = &set->functions[set->function_count];
    *f = (struct stack_function){strdup(label), dup_or_null(module), dup_or_null(file), line};
    if (!f->name || (module && !f->module) || (file && !f->file)) {
        free(f->name);
        free(f->module);
        free(f->file);
        goto out;
    }
    if (asys_strmap_put(&set->function_ids, key, key_len, (uint32_t)set->function_count + 1) != 0)
        goto out;
    index = (int64_t)set->function_count++;
out:
    if (key != stack_key)
        free(key);
    return index;
}

/* A frame's label: its function, demangled; "[module]" without a symbol. */
static int64_t frame_function(struct stack_set *set, sqlite3_stmt *frames)
{
    const char *name = (const char *)sqlite3_column_text(frames, 1);
    const char *module = (const char *)sqlite3_column_text(frames, 2);
    const char *file = (const char *)sqlite3_column_text(frames, 3);
    int64_t line = sqlite3_column_int64(frames, 4);
    char unknown[300];
    char *demangled = name ? asys_demangle(name) : NULL;
    const char *label = demangled ? demangled : name;
    if (!label) {
        snprintf(unknown, sizeof unknown, "[%s]", module ? base_name(module) : "unknown");
        label = unknown;
    }
    int64_t index = function_index(set, label, module, file, line);
    free(demangled);
    return index;
}

/* ---- chains ---------------------------------------------------------------------- */

/* Appends a frame: its function, and where it was (address 0, module 0: a
 * name a source puts at the leaf, or no stack). */
static int push_frame(struct stack_set *set, uint32_t function, uint64_t address, uint32_t module,
                      int64_t line)
{
    if (asys_grow(&set->chain_functions, &set->chain_function_cap, set->chain_function_count,
                  sizeof *set->chain_functions, 1024) != 0 ||
        asys_grow(&set->chain_frames, &set->chain_frame_cap, set->chain_function_count,
                  sizeof *set->chain_frames, 1024) != 0)
        return -1;
    set->chain_frames[set->chain_function_count] =
        (struct stack_frame_ref){address, module, line > 0 && line < INT32_MAX ? (int32_t)line : 0};
    set->chain_functions[set->chain_function_count++] = function;
    return 0;
}

static int push_function(struct stack_set *set, uint32_t function)
{
    return push_frame(set, function, 0, 0, 0);
}

/* The module of a frame row (columns 6..10: id, start, end, build id, load bias): index + 1, 0 for
 * none, -1 out of memory. */
static int64_t module_of(struct stack_set *set, sqlite3_stmt *frames)
{
    if (sqlite3_column_type(frames, 6) == SQLITE_NULL)
        return 0;
    uint64_t id = (uint64_t)sqlite3_column_int64(frames, 6);
    uint64_t *known = asys_u64map_get(&set->module_ids, id);
    if (known)
        return (int64_t)*known;
    if (set->module_count >= UINT32_MAX - 1 ||
        asys_grow(&set->modules, &set->module_cap, set->module_count, sizeof *set->modules, 16))
        return -1;
    const char *path = (const char *)sqlite3_column_text(frames, 2);
    const char *build_id = (const char *)sqlite3_column_text(frames, 9);
    struct stack_module *m = &set->modules[set->module_count];
    *m = (struct stack_module){dup_or_null(path ? path : ""), dup_or_null(build_id),
                               (uint64_t)sqlite3_column_int64(frames, 7),
                               (uint64_t)sqlite3_column_int64(frames, 8),
                               (uint64_t)sqlite3_column_int64(frames, 10)};
    if (!m->path || (build_id && !m->build_id) ||
        asys_u64map_put(&set->module_ids, id, set->module_count + 1) != 0) {
        free(m->path);
        free(m->build_id);
        return -1;
    }
    return (int64_t)++set->module_count;
}

/* Appends the frames of callchain `id` (leaf first); -1 on failure. */
static int load_frames(struct stack_set *set, sqlite3_stmt *frames, int64_t id,
                       struct asys_err *err)
{
    int rc = 0, step;
    sqlite3_reset(frames);
    sqlite3_bind_int64(frames, 1, id);
    while (rc == 0 && (step = sqlite3_step(frames)) == SQLITE_ROW) {
        int64_t frame_id = sqlite3_column_int64(frames, 0);
        uint64_t *known = asys_u64map_get(&set->frame_functions, (uint64_t)frame_id);
        int64_t function = known ? (int64_t)*known : frame_function(set, frames);
        int64_t module = module_of(set, frames);
        if (function < 0 || module < 0 ||
            (!known &&
             asys_u64map_put(&set->frame_functions, (uint64_t)frame_id, (uint64_t)function) != 0) ||
            push_frame(set, (uint32_t)function, (uint64_t)sqlite3_column_int64(frames, 5),
                       (uint32_t)module, sqlite3_column_int64(frames, 4)) != 0)
            rc = asys_fail(err, "out of memory");
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = asys_fail(err, "cannot read call stack %" PRId64 ": %s", id,
                       sqlite3_errmsg(sqlite3_db_handle(frames)));
    sqlite3_reset(frames);
    return rc;
}

/* The chain of (callchain `id` or none, leaf function or none): its index, or -1. */
static int64_t chain_index(struct stack_set *set, sqlite3_stmt *frames, int has_chain, int64_t id,
                           int64_t leaf, struct asys_err *err)
{
    /* ids are the importer's own, counted from 1; bound them to fit the key */
    if (has_chain && (id <= 0 || id >= (INT64_C(1) << 39)))
        return asys_fail(err, "call stack id %" PRId64 " out of range", id);
    if (leaf >= (INT64_C(1) << 24) - 1)
        return asys_fail(err, "too many distinct functions");
    uint64_t key = (uint64_t)(has_chain ? id : 0) << 24 | (uint64_t)(leaf + 1);
    uint64_t *known = asys_u64map_get(&set->chain_ids, key);
    if (known)
        return (int64_t)*known;
    if (set->chain_count >= UINT32_MAX - 1 ||
        asys_grow(&set->chains, &set->chain_cap, set->chain_count, sizeof *set->chains, 256) != 0)
        return asys_fail(err, "out of memory");
    size_t first = set->chain_function_count;
    if (leaf >= 0 && push_function(set, (uint32_t)leaf) != 0)
        return asys_fail(err, "out of memory");
    if (has_chain && load_frames(set, frames, id, err) != 0)
        return -1;
    if (set->chain_function_count == first) { /* a sample without any stack */
        int64_t none = function_index(set, "[no stack]", NULL, NULL, 0);
        if (none < 0 || push_function(set, (uint32_t)none) != 0)
            return asys_fail(err, "out of memory");
    }
    set->chains[set->chain_count] =
        (struct stack_chain){first, (uint32_t)(set->chain_function_count - first)};
    if (asys_u64map_put(&set->chain_ids, key, set->chain_count) != 0)
        return asys_fail(err, "out of memory");
    return (int64_t)set->chain_count++;
}

/* ---- threads --------------------------------------------------------------------- */

static int64_t thread_index(struct stack_set *set, sqlite3_stmt *names, int64_t pid, int64_t tid,
                            struct asys_err *err)
{
    uint64_t key = (uint64_t)(uint32_t)pid << 32 | (uint32_t)tid;
    uint64_t *known = asys_u64map_get(&set->thread_ids, key);
    if (known)
        return (int64_t)*known;
    if (set->thread_count >= UINT32_MAX - 1 ||
        asys_grow(&set->threads, &set->thread_cap, set->thread_count, sizeof *set->threads, 16) !=
            0)
        return asys_fail(err, "out of memory");
    struct stack_thread *t = &set->threads[set->thread_count];
    *t = (struct stack_thread){pid, tid, NULL};
    sqlite3_reset(names);
    sqlite3_bind_int64(names, 1, pid);
    sqlite3_bind_int64(names, 2, tid);
    if (sqlite3_step(names) == SQLITE_ROW && sqlite3_column_type(names, 0) != SQLITE_NULL &&
        !(t->name = strdup((const char *)sqlite3_column_text(names, 0))))
        return asys_fail(err, "out of memory");
    sqlite3_reset(names);
    if (asys_u64map_put(&set->thread_ids, key, set->thread_count) != 0)
        return asys_fail(err, "out of memory");
    return (int64_t)set->thread_count++;
}

void stack_thread_label(const struct stack_thread *t, char *out, size_t size)
{
    if (t->name)
        snprintf(out, size, "%s (%" PRId64 "/%" PRId64 ")", t->name, t->pid, t->tid);
    else
        snprintf(out, size, "%" PRId64 "/%" PRId64, t->pid, t->tid);
}

/* ---- loading --------------------------------------------------------------------- */

struct loader {
    struct stack_set *set;
    sqlite3_stmt *rows, *frames, *names;
};

static int add_sample(struct loader *l, struct asys_err *err)
{
    struct stack_set *set = l->set;
    sqlite3_stmt *r = l->rows;
    int64_t weight = sqlite3_column_int64(r, 5);
    if (weight <= 0)
        return 0; /* a call that only touches the window's edge */
    int64_t leaf = -1;
    if (sqlite3_column_type(r, 6) != SQLITE_NULL &&
        (leaf = function_index(set, (const char *)sqlite3_column_text(r, 6), NULL, NULL, 0)) < 0)
        return asys_fail(err, "out of memory");
    int64_t chain = chain_index(set, l->frames, sqlite3_column_type(r, 4) != SQLITE_NULL,
                                sqlite3_column_int64(r, 4), leaf, err);
    int64_t thread = chain < 0 ? -1
                               : thread_index(set, l->names, sqlite3_column_int64(r, 2),
                                              sqlite3_column_int64(r, 3), err);
    if (chain < 0 || thread < 0)
        return -1;
    if (asys_grow(&set->samples, &set->sample_cap, set->sample_count, sizeof *set->samples, 4096) !=
        0)
        return asys_fail(err, "out of memory");
    int64_t count = sqlite3_column_int64(r, 7);
    set->samples[set->sample_count++] =
        (struct stack_sample){sqlite3_column_int64(r, 0), (uint64_t)weight, (uint32_t)thread,
                              (uint32_t)chain, count > 0 ? (uint64_t)count : 1};
    set->total_weight += (uint64_t)weight;
    return 0;
}

static int table_exists(sqlite3 *db, const char *table)
{
    sqlite3_stmt *st = NULL;
    int yes =
        sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?", -1,
                           &st, NULL) == SQLITE_OK &&
        sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return yes;
}

static int prepare_loader(sqlite3 *db, struct loader *l, const struct stack_filter *f,
                          struct asys_err *err)
{
    if (sqlite3_prepare_v2(db, l->set->source->sql, -1, &l->rows, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db,
                           "SELECT cf.frame_id, fs.value, mp.value, fl.value, f.line,\n"
                           "       f.address, m.id, m.start_address, m.end_address, m.build_id,\n"
                           "       m.load_bias\n"
                           "FROM callchain_frames AS cf JOIN frames AS f ON f.id = cf.frame_id\n"
                           "LEFT JOIN strings AS fs ON fs.id = f.function_id\n"
                           "LEFT JOIN modules AS m ON m.id = f.module_id\n"
                           "LEFT JOIN strings AS mp ON mp.id = m.path_id\n"
                           "LEFT JOIN strings AS fl ON fl.id = f.file_id\n"
                           "WHERE cf.callchain_id = ? ORDER BY cf.level",
                           -1, &l->frames, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(
            db,
            "SELECT s.value FROM threads AS t JOIN strings AS s ON s.id = t.name_id\n"
            "WHERE t.pid = ? AND t.tid = ?",
            -1, &l->names, NULL) != SQLITE_OK)
        return asys_fail(err, "cannot read the %s stacks: %s", l->set->source->name,
                         sqlite3_errmsg(db));
    sqlite3_bind_int64(l->rows, 1, f->start);
    sqlite3_bind_int64(l->rows, 2, f->end);
    sqlite3_bind_int64(l->rows, 3, f->pid);
    sqlite3_bind_int64(l->rows, 4, f->tid);
    return 0;
}

/* The CPU time a CPU sample stands for: its period, in ns (cpu-clock), or
 * converted from cycles at the nominal frequency; 0 when not known. */
static double cpu_sample_period_ns(sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    double ns = 0;
    if (sqlite3_prepare_v2(db,
                           "SELECT CASE period_unit WHEN 'ns' THEN period\n"
                           "       ELSE period * 1000.0 / NULLIF(nominal_mhz, 0) END\n"
                           "FROM cpu_sampling_info WHERE status = 'recorded' LIMIT 1",
                           -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        ns = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    return ns > 0 && ns < 1e12 ? ns : 0; /* from a file: a period of over 1000 s is not one */
}

int stack_set_load(sqlite3 *db, const struct stack_source *source,
                   const struct stack_filter *filter, struct stack_set **out, struct asys_err *err)
{
    struct loader l = {0};
    int rc = -1, step;
    *out = NULL;
    if (!(l.set = calloc(1, sizeof *l.set))) {
        asys_fail(err, "out of memory");
        goto out;
    }
    l.set->source = source;
    asys_strmap_init(&l.set->function_ids);
    asys_u64map_init(&l.set->frame_functions);
    asys_u64map_init(&l.set->chain_ids);
    asys_u64map_init(&l.set->thread_ids);
    asys_u64map_init(&l.set->module_ids);
    if (!table_exists(db, source->table)) {
        asys_fail_kind(err, ASYS_ERR_USAGE, "%s", source->none);
        goto out;
    }
    if (prepare_loader(db, &l, filter, err) != 0)
        goto out;
    while ((step = sqlite3_step(l.rows)) == SQLITE_ROW)
        if (add_sample(&l, err) != 0)
            goto out;
    if (step != SQLITE_DONE) {
        asys_fail(err, "cannot read the %s stacks: %s", source->name, sqlite3_errmsg(db));
        goto out;
    }
    if (!strcmp(source->name, "cpu"))
        l.set->ns_per_sample = cpu_sample_period_ns(db);
    if (l.set->sample_count == 0) {
        int windowed = filter->start > INT64_MIN || filter->end < INT64_MAX || filter->pid >= 0 ||
                       filter->tid >= 0;
        asys_fail_kind(err, ASYS_ERR_USAGE, "%s%s", source->none,
                       windowed ? " in the chosen window, process or thread" : "");
        goto out;
    }
    *out = l.set;
    l.set = NULL;
    rc = 0;
out:
    sqlite3_finalize(l.rows);
    sqlite3_finalize(l.frames);
    sqlite3_finalize(l.names);
    stack_set_free(l.set);
    return rc;
}

void stack_set_free(struct stack_set *set)
{
    if (!set)
        return;
    for (size_t i = 0; i < set->function_count; i++) {
        free(set->functions[i].name);
        free(set->functions[i].module);
        free(set->functions[i].file);
    }
    for (size_t i = 0; i < set->thread_count; i++)
        free(set->threads[i].name);
    for (size_t i = 0; i < set->module_count; i++) {
        free(set->modules[i].path);
        free(set->modules[i].build_id);
    }
    free(set->modules);
    free(set->chain_frames);
    asys_u64map_free(&set->module_ids);
    free(set->functions);
    free(set->chain_functions);
    free(set->chains);
    free(set->threads);
    free(set->samples);
    asys_strmap_free(&set->function_ids);
    asys_u64map_free(&set->frame_functions);
    asys_u64map_free(&set->chain_ids);
    asys_u64map_free(&set->thread_ids);
    free(set);
}
