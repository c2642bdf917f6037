/* The importer's shared services (import_context.h): database helpers,
 * strings, process images, threads and processes, and the tables written
 * from them once every segment is read. */
#define _GNU_SOURCE
#include "import_context.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embedded_files.h"

#define SID_PENDING 0x80000000u

/* ---- the database ----------------------------------------------------------- */

void imp_warn(struct asys_importer *imp, const char *fmt, ...)
{
    char text[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (imp->warn)
        imp->warn(imp->warn_ctx, text);
    /* kept in the database too: report_info says what was skipped, on every run */
    if (imp->warnings < IMP_MAX_WARNINGS && imp->insert_warning) {
        sqlite3_bind_text(imp->insert_warning, 1, text, -1, SQLITE_TRANSIENT);
        if (sqlite3_step(imp->insert_warning) != SQLITE_DONE) {
            /* a warning that cannot be stored is only printed */
        }
        sqlite3_reset(imp->insert_warning);
    }
    imp->warnings++;
}

int imp_sql_error(struct asys_importer *imp, struct asys_err *err)
{
    if (sqlite3_errcode(imp->db) == SQLITE_FULL) /* ENOSPC, EDQUOT, EFBIG */
        return asys_fail_kind(err, ASYS_ERR_NO_SPACE, "no space left on device");
    return asys_fail(err, "database error: %s", sqlite3_errmsg(imp->db));
}

int imp_exec(struct asys_importer *imp, const char *sql, struct asys_err *err)
{
    char *msg = NULL;
    if (sqlite3_exec(imp->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        if (sqlite3_errcode(imp->db) == SQLITE_FULL) {
            sqlite3_free(msg);
            return imp_sql_error(imp, err);
        }
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

/* ---- strings ------------------------------------------------------------- */

/* A new global id; 0 when the report holds more strings than ids can name. */
static uint32_t next_global_string(struct asys_importer *imp)
{
    if (imp->next_string_id >= SID_PENDING)
        return 0;
    return imp->next_string_id++;
}

static int insert_string(struct asys_importer *imp, uint32_t id, const char *text, size_t len,
                         struct asys_err *err)
{
    /* the recorder cuts its strings at 64 KiB; a longer one (a hostile
     * symbols.json) would make every stack that names it that much longer */
    if (len > ASYS_DB_TEXT_MAX) {
        len = ASYS_DB_TEXT_MAX;
        while (len && ((unsigned char)text[len] & 0xc0) == 0x80)
            len--; /* not inside a UTF-8 sequence */
        imp->cut_strings++;
    }
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
    *id = next_global_string(imp);
    if (!*id)
        return asys_fail_kind(err, ASYS_ERR_INPUT, "more strings than the analysis database holds");
    if (asys_strmap_put(&imp->string_ids, text, len, *id) != 0)
        return asys_fail(err, "out of memory");
    return insert_string(imp, *id, text, len, err);
}

/* Where image `img` keeps string id `sid` (0 in it: unknown yet).  Ids come
 * from a file: a dense array serves the ids a recorder hands out (1, 2, 3...
 * per image), grown only as far as the image has defined strings; any other
 * id lives in a hash map, so no id can make the importer allocate more than
 * a slot for it. */
static uint32_t *sid_slot(struct imp_image *img, uint32_t sid, int create)
{
    if (sid < img->sid_cap && img->sids[sid])
        return &img->sids[sid];
    uint64_t *mapped = asys_u64map_get(&img->sparse_sids, sid);
    if (mapped || !create)
        return mapped ? (uint32_t *)mapped : NULL; /* values are < 2^32: the low word */
    size_t limit = 1024 + 2 * (size_t)img->defined_strings;
    if (sid < limit) {
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
    if (asys_u64map_put(&img->sparse_sids, sid, 0) != 0)
        return NULL;
    return (uint32_t *)asys_u64map_get(&img->sparse_sids, sid);
}

/* The image that allocated `sid`: a fork child's ids below its inherited
 * limit are its parent's (and so on up; a chain from a file may loop or be
 * long, so the walk is bounded). */
static struct imp_image *owner_of(struct asys_importer *imp, struct imp_image *img, uint32_t sid)
{
    for (int depth = 0; img && sid < img->inherited_limit && img->parent_uid; depth++) {
        if (depth == 64)
            return NULL;
        img = imp_image_get(imp, img->parent_uid);
    }
    return img;
}

uint32_t imp_string(struct asys_importer *imp, struct imp_image *img, uint32_t sid)
{
    if (!sid || !img)
        return 0;
    img = owner_of(imp, img, sid);
    uint32_t *slot = img ? sid_slot(img, sid, 1) : NULL;
    if (!slot)
        return 0;
    if (!*slot) { /* defined later in the report, or never */
        uint32_t id = next_global_string(imp);
        if (!id)
            return 0;
        *slot = id | SID_PENDING;
        imp->pending_strings++;
    }
    return *slot & ~SID_PENDING;
}

int imp_define_string(struct asys_importer *imp, struct imp_image *img, uint32_t sid,
                      const char *text, size_t len, struct asys_err *err)
{
    if (!sid) {
        imp_warn(imp, "%s: string id 0 is not a valid id; string ignored", imp->seg.member);
        return 0;
    }
    uint32_t *slot = sid_slot(img, sid, 1);
    if (!slot)
        return asys_fail(err, "out of memory");
    if (*slot & SID_PENDING) {
        *slot &= ~SID_PENDING;
        imp->pending_strings--;
        img->defined_strings++;
        return insert_string(imp, *slot, text, len, err);
    }
    if (*slot)
        return 0; /* defined twice (e.g. re-interned after a cache eviction) */
    img->defined_strings++;
    return imp_intern_text(imp, text, len, slot, err);
}

static int name_pending(struct asys_importer *imp, struct imp_image *img, uint32_t sid,
                        struct asys_err *err)
{
    char text[64];
    int n = snprintf(text, sizeof text, "[unknown string %u]", sid);
    return imp_define_string(imp, img, sid, text, (size_t)n, err);
}

/* Placeholders never defined get a visible name. */
static int finish_strings(struct asys_importer *imp, struct asys_err *err)
{
    uint64_t never_defined = imp->pending_strings;
    for (size_t i = 0; imp->pending_strings && i < imp->images.capacity; i++) {
        if (!imp->images.used[i])
            continue;
        struct imp_image *img = (struct imp_image *)(uintptr_t)imp->images.values[i];
        for (uint32_t sid = 0; sid < img->sid_cap; sid++)
            if ((img->sids[sid] & SID_PENDING) && name_pending(imp, img, sid, err) != 0)
                return -1;
        for (size_t k = 0; k < img->sparse_sids.capacity; k++)
            if (img->sparse_sids.used[k] && (img->sparse_sids.values[k] & SID_PENDING) &&
                name_pending(imp, img, (uint32_t)img->sparse_sids.keys[k], err) != 0)
                return -1;
    }
    if (imp->cut_strings)
        imp_warn(imp, "%" PRIu64 " strings longer than %u bytes were cut to that length",
                 imp->cut_strings, ASYS_DB_TEXT_MAX);
    /* the rows stay right (the text is what is missing): report_info says so */
    return never_defined
               ? imp_session_info(imp, "strings_never_defined", NULL, (int64_t)never_defined, err)
               : 0;
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
        asys_u64map_init(&img->chains);
        asys_u64map_init(&img->sparse_sids);
    }
    return img;
}

int64_t imp_callchain(struct asys_importer *imp, uint32_t local_id)
{
    if (!local_id || !imp->seg.image)
        return 0;
    uint64_t *v = asys_u64map_get(&imp->seg.image->chains, local_id);
    return v ? (int64_t)*v : 0;
}

static void image_free(struct asys_importer *imp, struct imp_image *img)
{
    for (int i = 0; i < imp->slot_count; i++)
        if (img->slot[i])
            imp->slot_free[i](img->slot[i]);
    free(img->sids);
    asys_u64map_free(&img->sparse_sids);
    asys_u64map_free(&img->chains);
    free(img);
}

int imp_image_slot_new(struct asys_importer *imp, void (*free_fn)(void *))
{
    if (imp->slot_count == IMP_IMAGE_SLOTS)
        return -1;
    imp->slot_free[imp->slot_count] = free_fn;
    return imp->slot_count++;
}

int imp_each_image(struct asys_importer *imp,
                   int (*fn)(struct asys_importer *imp, struct imp_image *img, void *arg),
                   void *arg)
{
    for (size_t i = 0; i < imp->images.capacity; i++)
        if (imp->images.used[i] &&
            fn(imp, (struct imp_image *)(uintptr_t)imp->images.values[i], arg) != 0)
            return -1;
    return 0;
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

struct imp_process *imp_process_get(struct asys_importer *imp, uint32_t pid)
{
    int created;
    struct imp_process *p = object_for(&imp->processes, pid, sizeof *p, &created);
    if (p && created) {
        p->pid = pid;
        p->start_ns = UINT64_MAX;
    }
    return p;
}

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

int imp_session_info(struct asys_importer *imp, const char *key, const char *text, int64_t number,
                     struct asys_err *err)
{
    sqlite3_stmt *st = NULL;
    if (imp_prepare(imp, "INSERT OR REPLACE INTO session_info (key, value) VALUES (?, ?)", &st,
                    err) != 0)
        return -1;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    if (text)
        sqlite3_bind_text(st, 2, text, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_int64(st, 2, number);
    int rc = imp_step(imp, st, err);
    sqlite3_finalize(st);
    return rc;
}

/* ---- the whole import ------------------------------------------------------------ */

int imp_context_init(struct asys_importer *imp, sqlite3 *db, struct asys_err *err)
{
    imp->db = db;
    imp->next_string_id = 1;
    asys_clock_map_init(&imp->clock);
    asys_strmap_init(&imp->string_ids);
    asys_u64map_init(&imp->images);
    asys_u64map_init(&imp->threads);
    asys_u64map_init(&imp->processes);
    return imp_prepare(imp, "INSERT INTO strings (id, value) VALUES (?, ?)", &imp->insert_string,
                       err) ||
                   imp_prepare(imp, "INSERT INTO import_warnings (message) VALUES (?)",
                               &imp->insert_warning, err)
               ? -1
               : 0;
}

int imp_context_write_tables(struct asys_importer *imp, struct asys_err *err)
{
    return finish_strings(imp, err) || finish_processes(imp, err) || finish_threads(imp, err) ? -1
                                                                                              : 0;
}

static void free_objects(struct asys_u64map *map)
{
    for (size_t i = 0; i < map->capacity; i++)
        if (map->used[i])
            free((void *)(uintptr_t)map->values[i]);
}

void imp_context_free(struct asys_importer *imp)
{
    sqlite3_finalize(imp->insert_string);
    sqlite3_finalize(imp->insert_warning);
    imp->insert_string = imp->insert_warning = NULL;
    for (size_t i = 0; i < imp->images.capacity; i++)
        if (imp->images.used[i])
            image_free(imp, (struct imp_image *)(uintptr_t)imp->images.values[i]);
    free_objects(&imp->threads);
    free_objects(&imp->processes);
    asys_u64map_free(&imp->images);
    asys_u64map_free(&imp->threads);
    asys_u64map_free(&imp->processes);
    asys_strmap_free(&imp->string_ids);
    asys_clock_map_free(&imp->clock);
}
