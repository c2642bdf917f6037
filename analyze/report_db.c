#define _GNU_SOURCE
#include "report_db.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "cleanup.h"
#include "json_util.h"
#include "report_reader.h"
#include "sql_functions.h"

#ifndef ASYS_VERSION
#define ASYS_VERSION "0.0.0"
#endif

struct report_identity {
    char report_id[64];
    long long size;
    long long mtime_ns;
};

void asys_report_base(const char *report_path, char *out, size_t size)
{
    static const char *const suffixes[] = {".asys-rep", ".sqlite"};
    size_t n = strlen(report_path), keep = n;
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        size_t m = strlen(suffixes[i]);
        if (n > m && !strcmp(report_path + n - m, suffixes[i]))
            keep = n - m;
    }
    snprintf(out, size, "%.*s", (int)keep, report_path);
}

void asys_default_db_path(const char *report_path, char *out, size_t size)
{
    char base[PATH_MAX];
    asys_report_base(report_path, base, sizeof base);
    snprintf(out, size, "%s.sqlite", base);
}

static int read_identity(const char *report_path, const struct asys_report_limits *limits,
                         struct report_identity *id, struct asys_err *err)
{
    struct asys_report_reader *r = NULL;
    if (asys_report_reader_open(&r, report_path, limits, err) != 0)
        return -1;
    snprintf(id->report_id, sizeof id->report_id, "%s",
             asys_json_get_str(asys_report_manifest(r), "report_id", ""));
    asys_report_reader_close(r);
    struct stat st;
    if (stat(report_path, &st) != 0)
        return asys_fail(err, "%s", strerror(errno));
    id->size = (long long)st.st_size;
    id->mtime_ns = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
    return 0;
}

/* "file:PATH?immutable=1": read without locks and without looking at a
 * journal beside it (a stale or hostile -journal cannot block or alter the
 * read). */
static int immutable_uri(const char *path, char *out, size_t size)
{
    size_t used = (size_t)snprintf(out, size, "file:");
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        int plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                    (*p >= '0' && *p <= '9') || strchr("/._-~", *p);
        int n = plain ? snprintf(out + used, size - used, "%c", *p)
                      : snprintf(out + used, size - used, "%%%02X", *p);
        if (n < 0 || (size_t)n >= size - used)
            return -1;
        used += (size_t)n;
    }
    int n = snprintf(out + used, size - used, "?immutable=1");
    return n > 0 && (size_t)n < size - used ? 0 : -1;
}

/* The settings for reading a database from disk: SQLite's defensive mode,
 * no functions from the schema, no FTS3 tokenizer pointers, a bound on the
 * work a query may do. */
static int harden(sqlite3 *db)
{
    return sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL) != SQLITE_OK ||
                   sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL) != SQLITE_OK ||
                   sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0, NULL) !=
                       SQLITE_OK ||
                   sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL) != SQLITE_OK ||
                   sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 1, NULL) != SQLITE_OK
               ? -1
               : 0;
}

static int open_existing(const char *path, sqlite3 **db)
{
    char uri[PATH_MAX * 3 + 32];
    *db = NULL;
    if (immutable_uri(path, uri, sizeof uri) != 0 ||
        sqlite3_open_v2(uri, db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK ||
        harden(*db) != 0) {
        sqlite3_close(*db);
        *db = NULL;
        return -1;
    }
    return 0;
}

int asys_db_open_untrusted(const char *path, sqlite3 **db)
{
    return open_existing(path, db);
}

/* The schema objects (type, name, table, sql) of `db`, one text each, in
 * order; NULL when they cannot be read. */
static char *schema_text(sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    int rc = sqlite3_prepare_v2(db,
                                "SELECT type, name, tbl_name, COALESCE(sql, '') "
                                "FROM main.sqlite_schema ORDER BY type, name",
                                -1, &st, NULL);
    if (rc == SQLITE_OK)
        while ((rc = sqlite3_step(st)) == SQLITE_ROW)
            for (int c = 0; c < 4; c++) {
                const unsigned char *v = sqlite3_column_text(st, c);
                fprintf(f, "%s%c", v ? (const char *)v : "", c == 3 ? '\n' : '\x1f');
            }
    sqlite3_finalize(st);
    fclose(f);
    if (rc != SQLITE_DONE) {
        free(text);
        return NULL;
    }
    return text;
}

/* What an analysis database of this asys holds, object for object: the
 * schema of an empty import. */
static const char *expected_schema(void)
{
    static char *expected;
    if (expected)
        return expected;
    sqlite3 *db = NULL;
    struct asys_import_stats stats;
    struct asys_err err = {0};
    if (sqlite3_open(":memory:", &db) == SQLITE_OK && asys_sql_register_functions(db) == 0 &&
        asys_import_report(NULL, db, NULL, NULL, NULL, NULL, NULL, &stats, &err) == 0)
        expected = schema_text(db);
    sqlite3_close(db);
    return expected;
}

void asys_report_db_warm(void)
{
    (void)expected_schema();
}

/* Stops a query that runs away (a cached database is not trusted). */
static int stop_after(void *budget)
{
    return --*(long *)budget < 0;
}

static int database_matches(const char *path, const struct report_identity *id, int *version_out);

/* 1 when the database at `path` is one this asys wrote for this report: a
 * regular file, exactly the expected schema objects (no trigger, view or
 * table more or less), and the report's identity in asys_cache.  Anything
 * else is rebuilt, never trusted. */
static int cache_matches(const char *path, const struct report_identity *id)
{
    return database_matches(path, id, NULL);
}

/* The checks of cache_matches; `id` NULL: any report's database of this
 * schema version (an analysis database given as the input), its version in
 * *version_out when that is not NULL. */
static int database_matches(const char *path, const struct report_identity *id, int *version_out)
{
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || access(path, R_OK) != 0)
        return 0;
    sqlite3 *db = NULL;
    int match = 0;
    const char *expected = expected_schema();
    if (!expected || open_existing(path, &db) != 0)
        return 0;
    long budget = 1000; /* progress callbacks of 1000 steps each: plenty for the schema */
    sqlite3_progress_handler(db, 1000, stop_after, &budget);
    char *actual = schema_text(db);
    if (actual && !strcmp(actual, expected)) {
        sqlite3_stmt *q = NULL;
        if (sqlite3_prepare_v2(db,
                               "SELECT schema_version, report_id, report_size, report_mtime_ns, "
                               "(SELECT COUNT(*) FROM asys_cache) FROM asys_cache",
                               -1, &q, NULL) == SQLITE_OK &&
            sqlite3_step(q) == SQLITE_ROW) {
            const char *rid = (const char *)sqlite3_column_text(q, 1);
            if (version_out)
                *version_out = sqlite3_column_int(q, 0);
            match =
                sqlite3_column_int(q, 0) == ASYS_SCHEMA_VERSION && rid &&
                sqlite3_column_int(q, 4) == 1 &&
                (!id || (!strcmp(rid, id->report_id) && sqlite3_column_int64(q, 2) == id->size &&
                         sqlite3_column_int64(q, 3) == id->mtime_ns));
        }
        sqlite3_finalize(q);
        q = NULL;
        /* no text longer than an import writes: one would blow up every
         * stack and name it is part of */
        budget = 1L << 40; /* the scan reads every string once */
        if (match &&
            (sqlite3_prepare_v2(db, "SELECT MAX(length(CAST(value AS BLOB))) FROM strings", -1, &q,
                                NULL) != SQLITE_OK ||
             sqlite3_step(q) != SQLITE_ROW || sqlite3_column_int64(q, 0) > ASYS_DB_TEXT_MAX))
            match = 0;
        sqlite3_finalize(q);
    }
    free(actual);
    sqlite3_close(db);
    return match;
}

/* A path --sqlite may (re)build: nothing there, or an asys analysis database
 * (any version: a stale one is what a rebuild is for). */
static int replaceable(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT;
    if (!S_ISREG(st.st_mode))
        return 0;
    sqlite3 *db = NULL;
    int ours = 0;
    if (open_existing(path, &db) == 0) {
        sqlite3_stmt *q = NULL;
        ours = sqlite3_prepare_v2(db, "SELECT schema_version FROM asys_cache", -1, &q, NULL) ==
               SQLITE_OK;
        sqlite3_finalize(q);
    }
    sqlite3_close(db);
    return ours;
}

static int write_cache_row(sqlite3 *db, const struct report_identity *id, struct asys_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc = -1;
    if (sqlite3_prepare_v2(db, "INSERT INTO asys_cache VALUES (?,?,?,?,?)", -1, &st, NULL) ==
        SQLITE_OK) {
        sqlite3_bind_int(st, 1, ASYS_SCHEMA_VERSION);
        sqlite3_bind_text(st, 2, id->report_id, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, id->size);
        sqlite3_bind_int64(st, 4, id->mtime_ns);
        sqlite3_bind_text(st, 5, ASYS_VERSION, -1, SQLITE_STATIC);
        rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
    }
    if (rc)
        asys_fail(err, "database error: %s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return rc;
}

/* The import's warnings, held back until it is done: a report that is
 * refused in the end gets its one line, not the warnings that led there. */
#define HELD_WARNINGS 32

struct held_warnings {
    char *text[HELD_WARNINGS];
    size_t count;
    uint64_t more; /* beyond HELD_WARNINGS */
};

static void hold_warning(void *ctx, const char *text)
{
    struct held_warnings *h = ctx;
    if (h->count < HELD_WARNINGS && (h->text[h->count] = strdup(text)) != NULL)
        h->count++;
    else
        h->more++;
}

/* Passes the warnings on (when the import succeeded) and frees them. */
static void release_warnings(struct held_warnings *h, const struct asys_db_options *o, int pass)
{
    char more[96];
    for (size_t i = 0; i < h->count; i++) {
        if (pass && o->warn)
            o->warn(o->warn_ctx, h->text[i]);
        free(h->text[i]);
    }
    if (pass && o->warn && h->more) {
        snprintf(more, sizeof more, "%llu more warnings: report_info lists them",
                 (unsigned long long)h->more);
        o->warn(o->warn_ctx, more);
    }
}

/* The limits of a build: the caller's, where the default ceiling on what
 * the report expands to is also a quarter of the free space beside the
 * database: its tables and indexes take several times the records they hold
 * (7x for 8-byte marks), so no import of more fits there, and a bomb just
 * under the ratio stops early instead of filling the disk. */
static void build_limits(const struct asys_db_options *o, const char *tmp,
                         struct asys_report_limits *l)
{
    if (o->limits)
        *l = *o->limits;
    else
        asys_report_limits_default(l);
    char dir[PATH_MAX + 32];
    snprintf(dir, sizeof dir, "%s", tmp);
    char *slash = strrchr(dir, '/');
    if (slash)
        *(slash == dir ? slash + 1 : slash) = '\0';
    struct statvfs fs;
    if (l->max_bytes == ASYS_DEFAULT_MAX_REPORT_BYTES && statvfs(slash ? dir : ".", &fs) == 0) {
        uint64_t quarter = (uint64_t)fs.f_bavail * fs.f_frsize / 4;
        if (quarter < l->max_bytes) {
            l->max_bytes = quarter > (16u << 20) ? quarter : 16u << 20;
            l->max_bytes_why = "a quarter of the free space where its analysis database goes";
        }
    }
}

/* Imports into a fresh file at `tmp`. */
static int build(const char *report_path, const char *tmp, const struct report_identity *id,
                 const struct asys_db_options *o, struct asys_import_stats *stats,
                 struct asys_err *err)
{
    struct asys_report_limits limits;
    build_limits(o, tmp, &limits);
    sqlite3 *db = NULL;
    struct held_warnings held = {0};
    int rc = -1;
    /* the import is one thread's: no mutex around each of its millions of
     * binds and steps (6 % of importing 10 M heap events) */
    if (sqlite3_open_v2(tmp, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK) {
        asys_fail(err, "cannot create '%s': %s", tmp, db ? sqlite3_errmsg(db) : "out of memory");
        goto out;
    }
    if (asys_import_report(report_path, db, &limits, hold_warning, &held, o->on_progress,
                           o->progress_ctx, stats, err) != 0)
        goto out;
    rc = write_cache_row(db, id, err);
out:
    if (db && sqlite3_close(db) != SQLITE_OK && rc == 0)
        rc = asys_fail(err, "cannot write '%s'", tmp);
    release_warnings(&held, o, rc == 0);
    return rc;
}

/* A temporary file for the build: beside the target, else in $TMPDIR;
 * removed if a signal stops the build, and by a later run if the build
 * died another way. */
static int make_temp(const char *target, char *tmp, size_t size, int *in_tmpdir)
{
    asys_remove_stale_temps(target, 0);
    if (asys_temp_template(target, 0, tmp, size) != 0)
        return -1;
    int fd = mkostemp(tmp, O_CLOEXEC);
    *in_tmpdir = 0;
    if (fd < 0 && (errno == EACCES || errno == EROFS || errno == EPERM)) {
        const char *dir = getenv("TMPDIR");
        char in_dir[PATH_MAX];
        snprintf(in_dir, sizeof in_dir, "%s/asys-db", dir && *dir ? dir : "/tmp");
        asys_remove_stale_temps(in_dir, 0);
        if (asys_temp_template(in_dir, 0, tmp, size) != 0)
            return -1;
        fd = mkostemp(tmp, O_CLOEXEC);
        *in_tmpdir = 1;
    }
    if (fd < 0)
        return -1;
    close(fd);
    asys_cleanup_add(tmp);
    return 0;
}

static void drop_temp(const char *tmp)
{
    unlink(tmp);
    asys_cleanup_remove(tmp);
}

static int open_for_queries(struct asys_report_db *rdb, struct asys_err *err)
{
    /* one thread per connection: no mutex on every sqlite3_column_* call */
    if (open_existing(rdb->path, &rdb->db) != 0 || asys_sql_register_functions(rdb->db) != 0)
        return asys_fail(err, "cannot open '%s': %s", rdb->path,
                         rdb->db ? sqlite3_errmsg(rdb->db) : "not a database");
    return 0;
}

/* Whether `path` starts as an SQLite database does. */
static int is_sqlite_file(const char *path)
{
    char head[16] = {0};
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, head, sizeof head);
    close(fd);
    return n == (ssize_t)sizeof head && !memcmp(head, "SQLite format 3", 16);
}

/* An analysis database given instead of a report (NAME.sqlite, as nsys
 * stats takes one): used as it is when this asys wrote it with this schema,
 * never rebuilt (there is no report to rebuild it from). */
static int open_given_database(const char *path, struct asys_report_db *rdb, struct asys_err *err)
{
    int version = -1;
    if (!database_matches(path, NULL, &version)) {
        if (version >= 0 && version != ASYS_SCHEMA_VERSION)
            return asys_fail_kind(err, ASYS_ERR_INPUT,
                                  "an analysis database of another asys (schema %d, this one "
                                  "reads %d): give its .asys-rep instead",
                                  version, ASYS_SCHEMA_VERSION);
        return asys_fail_kind(err, ASYS_ERR_INPUT,
                              "an SQLite database, but not an asys analysis database");
    }
    snprintf(rdb->path, sizeof rdb->path, "%s", path);
    return open_for_queries(rdb, err);
}

int asys_report_db_open(const char *report_path, const struct asys_db_options *o,
                        struct asys_report_db *rdb, struct asys_err *err)
{
    memset(rdb, 0, sizeof *rdb);
    if (is_sqlite_file(report_path))
        return open_given_database(report_path, rdb, err);
    struct report_identity id;
    if (read_identity(report_path, o->limits, &id, err) != 0)
        return -1;
    if (o->sqlite_path)
        snprintf(rdb->path, sizeof rdb->path, "%s", o->sqlite_path);
    else
        asys_default_db_path(report_path, rdb->path, sizeof rdb->path);
    if (!o->force_rebuild && cache_matches(rdb->path, &id))
        return open_for_queries(rdb, err);
    if (o->sqlite_path && !o->force_overwrite && !replaceable(rdb->path))
        return asys_fail_kind(err, ASYS_ERR_USAGE,
                              "'%s' exists and is not an asys analysis database (use "
                              "--force-overwrite to replace it)",
                              rdb->path);

    char tmp[PATH_MAX + 32];
    int in_tmpdir = 0;
    if (make_temp(rdb->path, tmp, sizeof tmp, &in_tmpdir) != 0)
        return asys_fail(err, "cannot create '%s': %s", rdb->path, strerror(errno));
    if (in_tmpdir && o->sqlite_path) {
        drop_temp(tmp);
        return asys_fail(err, "cannot create '%s': directory not writable", rdb->path);
    }
    if (o->on_build)
        o->on_build(o->warn_ctx, report_path, in_tmpdir ? tmp : rdb->path);
    if (build(report_path, tmp, &id, o, &rdb->stats, err) != 0) {
        drop_temp(tmp);
        return -1;
    }
    rdb->rebuilt = 1;
    if (in_tmpdir) {
        snprintf(rdb->path, sizeof rdb->path, "%s", tmp);
        rdb->temporary = 1; /* stays registered: removed at close or on a signal */
    } else {
        /* a database next to the report: as shareable as the report */
        if (asys_publish_temp(tmp, rdb->path, ASYS_PUBLISH_REPLACE, err) != 0)
            return asys_err_wrap(err, "cannot create '%s'", rdb->path);
    }
    if (open_for_queries(rdb, err) != 0) {
        asys_report_db_close(rdb);
        return -1;
    }
    return 0;
}

void asys_report_db_close(struct asys_report_db *rdb)
{
    if (rdb->db)
        sqlite3_close(rdb->db);
    rdb->db = NULL;
    if (rdb->temporary)
        drop_temp(rdb->path);
    rdb->temporary = 0;
}
