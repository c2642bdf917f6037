#define _GNU_SOURCE
#include "report_db.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_mode.h"
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
    const char *suffix = ".asys-rep";
    size_t n = strlen(report_path), m = strlen(suffix);
    int cut = n > m && !strcmp(report_path + n - m, suffix);
    snprintf(out, size, "%.*s", (int)(cut ? n - m : n), report_path);
}

void asys_default_db_path(const char *report_path, char *out, size_t size)
{
    char base[PATH_MAX];
    asys_report_base(report_path, base, sizeof base);
    snprintf(out, size, "%s.sqlite", base);
}

static int read_identity(const char *report_path, struct report_identity *id, struct asys_err *err)
{
    struct asys_report_reader *r = NULL;
    if (asys_report_reader_open(&r, report_path, err) != 0)
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

/* 1 when the database at `path` was built from this report by this schema. */
static int cache_matches(const char *path, const struct report_identity *id)
{
    if (access(path, R_OK) != 0)
        return 0;
    sqlite3 *db = NULL;
    int match = 0;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(db,
                               "SELECT schema_version, report_id, report_size, report_mtime_ns "
                               "FROM asys_cache",
                               -1, &st, NULL) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW) {
            const char *rid = (const char *)sqlite3_column_text(st, 1);
            match = sqlite3_column_int(st, 0) == ASYS_SCHEMA_VERSION && rid &&
                    !strcmp(rid, id->report_id) && sqlite3_column_int64(st, 2) == id->size &&
                    sqlite3_column_int64(st, 3) == id->mtime_ns;
        }
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return match;
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

/* Imports into a fresh file at `tmp`. */
static int build(const char *report_path, const char *tmp, const struct report_identity *id,
                 const struct asys_db_options *o, struct asys_import_stats *stats,
                 struct asys_err *err)
{
    sqlite3 *db = NULL;
    int rc = -1;
    if (sqlite3_open_v2(tmp, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
        asys_fail(err, "cannot create '%s': %s", tmp, db ? sqlite3_errmsg(db) : "out of memory");
        goto out;
    }
    if (asys_import_report(report_path, db, o->warn, o->warn_ctx, stats, err) != 0)
        goto out;
    rc = write_cache_row(db, id, err);
out:
    if (db && sqlite3_close(db) != SQLITE_OK && rc == 0)
        rc = asys_fail(err, "cannot write '%s'", tmp);
    return rc;
}

/* A temporary file for the build: beside the target, else in $TMPDIR. */
static int make_temp(const char *target, char *tmp, size_t size, int *in_tmpdir)
{
    if (snprintf(tmp, size, "%s.tmp-XXXXXX", target) >= (int)size)
        return -1;
    int fd = mkostemp(tmp, O_CLOEXEC);
    *in_tmpdir = 0;
    if (fd < 0 && (errno == EACCES || errno == EROFS || errno == EPERM)) {
        const char *dir = getenv("TMPDIR");
        if (snprintf(tmp, size, "%s/asys-db-XXXXXX", dir && *dir ? dir : "/tmp") >= (int)size)
            return -1;
        fd = mkostemp(tmp, O_CLOEXEC);
        *in_tmpdir = 1;
    }
    if (fd < 0)
        return -1;
    close(fd);
    return 0;
}

static int open_for_queries(struct asys_report_db *rdb, struct asys_err *err)
{
    /* one thread per connection: no mutex on every sqlite3_column_* call */
    if (sqlite3_open_v2(rdb->path, &rdb->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) !=
            SQLITE_OK ||
        asys_sql_register_functions(rdb->db) != 0)
        return asys_fail(err, "cannot open '%s': %s", rdb->path,
                         rdb->db ? sqlite3_errmsg(rdb->db) : "out of memory");
    return 0;
}

int asys_report_db_open(const char *report_path, const struct asys_db_options *o,
                        struct asys_report_db *rdb, struct asys_err *err)
{
    memset(rdb, 0, sizeof *rdb);
    struct report_identity id;
    if (read_identity(report_path, &id, err) != 0)
        return -1;
    if (o->sqlite_path)
        snprintf(rdb->path, sizeof rdb->path, "%s", o->sqlite_path);
    else
        asys_default_db_path(report_path, rdb->path, sizeof rdb->path);
    if (!o->force_rebuild && cache_matches(rdb->path, &id))
        return open_for_queries(rdb, err);

    char tmp[PATH_MAX + 32];
    int in_tmpdir = 0;
    if (make_temp(rdb->path, tmp, sizeof tmp, &in_tmpdir) != 0)
        return asys_fail(err, "cannot create '%s': %s", rdb->path, strerror(errno));
    if (in_tmpdir && o->sqlite_path) {
        unlink(tmp);
        return asys_fail(err, "cannot create '%s': directory not writable", rdb->path);
    }
    if (o->on_build)
        o->on_build(o->warn_ctx, report_path, in_tmpdir ? tmp : rdb->path);
    if (build(report_path, tmp, &id, o, &rdb->stats, err) != 0) {
        unlink(tmp);
        return -1;
    }
    rdb->rebuilt = 1;
    if (in_tmpdir) {
        snprintf(rdb->path, sizeof rdb->path, "%s", tmp);
        rdb->temporary = 1;
    } else {
        asys_give_default_mode(tmp); /* a database next to the report: as shareable */
        if (rename(tmp, rdb->path) != 0) {
            int e = errno;
            unlink(tmp);
            return asys_fail(err, "cannot create '%s': %s", rdb->path, strerror(e));
        }
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
        unlink(rdb->path);
    rdb->temporary = 0;
}
