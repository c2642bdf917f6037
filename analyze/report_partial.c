#define _GNU_SOURCE
#include "report_partial.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "report_db.h"

/* The session_info keys a merge reads (report_merge.c's ranks table). */
static const char *const info_keys[] = {
    "rank",           "local_rank",   "world_size",        "hostname",
    "start_ns",       "end_ns",       "start_realtime_ns", "realtime_minus_monotonic_ns",
    "clock_error_ns", "clock_method", "format_version",    "report_id",
};

static int exec(sqlite3 *db, const char *sql, struct asys_err *err)
{
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return asys_fail(err, "cannot write the partial: %s", sqlite3_errmsg(db));
    return 0;
}

static int put_info(sqlite3 *out, const char *key, sqlite3_value *value, const char *text,
                    long long number, struct asys_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc =
        sqlite3_prepare_v2(out, "INSERT OR REPLACE INTO partial_info VALUES (?, ?)", -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
        if (value)
            sqlite3_bind_value(st, 2, value);
        else if (text)
            sqlite3_bind_text(st, 2, text, -1, SQLITE_STATIC);
        else
            sqlite3_bind_int64(st, 2, number);
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_OK ? 0
                           : asys_fail(err, "cannot write the partial: %s", sqlite3_errmsg(out));
}

/* The partial's identity and the session keys of the report. */
static int write_info(sqlite3 *db, sqlite3 *out, const char *input, const char *cache_key,
                      struct asys_err *err)
{
    if (cache_key && put_info(out, "cache_key", NULL, cache_key, 0, err) != 0)
        return -1;
    if (put_info(out, "partial_version", NULL, NULL, ASYS_PARTIAL_VERSION, err) != 0 ||
        put_info(out, "schema_version", NULL, NULL, ASYS_SCHEMA_VERSION, err) != 0 ||
        put_info(out, "input", NULL, input, 0, err) != 0)
        return -1;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT value FROM session_info WHERE key = ?", -1, &st, NULL) !=
        SQLITE_OK)
        return asys_fail(err, "cannot read session_info: %s", sqlite3_errmsg(db));
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sizeof info_keys / sizeof info_keys[0]; i++) {
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, info_keys[i], -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW)
            rc = put_info(out, info_keys[i], sqlite3_column_value(st, 0), NULL, 0, err);
    }
    sqlite3_finalize(st);
    return rc;
}

static int put_report(sqlite3 *out, int idx, const struct asys_partial_item *it, const char *skip,
                      struct asys_err *err)
{
    sqlite3_stmt *st = NULL;
    int rc =
        sqlite3_prepare_v2(out, "INSERT INTO partial_reports VALUES (?, ?, ?, ?)", -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_int(st, 1, idx);
        sqlite3_bind_text(st, 2, it->def->name, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, it->requested, -1, SQLITE_STATIC);
        if (skip)
            sqlite3_bind_text(st, 4, skip, -1, SQLITE_STATIC);
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_OK ? 0
                           : asys_fail(err, "cannot write the partial: %s", sqlite3_errmsg(out));
}

/* partial_columns and the CREATE TABLE of partial_rows_IDX for `st`. */
static int put_columns(sqlite3 *out, int idx, sqlite3_stmt *st, struct asys_err *err)
{
    int ncols = sqlite3_column_count(st);
    if (ncols < 1 || ncols > 256)
        return asys_fail(err, "a report must return between 1 and 256 columns");
    sqlite3_stmt *ins = NULL;
    if (sqlite3_prepare_v2(out, "INSERT INTO partial_columns VALUES (?, ?, ?, ?)", -1, &ins,
                           NULL) != SQLITE_OK)
        return asys_fail(err, "cannot write the partial: %s", sqlite3_errmsg(out));
    char *create = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&create, &len);
    int rc = f ? 0 : asys_fail(err, "out of memory");
    if (f)
        fprintf(f, "CREATE TABLE partial_rows_%d (seq INTEGER PRIMARY KEY", idx);
    for (int c = 0; rc == 0 && c < ncols; c++) {
        sqlite3_reset(ins);
        sqlite3_bind_int(ins, 1, idx);
        sqlite3_bind_int(ins, 2, c);
        sqlite3_bind_text(ins, 3, sqlite3_column_name(st, c), -1, SQLITE_STATIC);
        const char *decl = sqlite3_column_decltype(st, c);
        if (decl)
            sqlite3_bind_text(ins, 4, decl, -1, SQLITE_STATIC);
        else
            sqlite3_bind_null(ins, 4);
        if (sqlite3_step(ins) != SQLITE_DONE)
            rc = asys_fail(err, "cannot write the partial: %s", sqlite3_errmsg(out));
        fprintf(f, ", c%d", c); /* no type: values kept as the query gave them */
    }
    sqlite3_finalize(ins);
    if (f) {
        fputs(")", f);
        fclose(f);
    }
    if (rc == 0)
        rc = exec(out, create, err);
    free(create);
    return rc;
}

/* The rows of `st` into partial_rows_IDX. */
static int copy_rows(sqlite3 *db, sqlite3 *out, int idx, sqlite3_stmt *st, struct asys_err *err)
{
    int ncols = sqlite3_column_count(st);
    char sql[64 + 256 * 4];
    int used = snprintf(sql, sizeof sql, "INSERT INTO partial_rows_%d VALUES (NULL", idx);
    for (int c = 0; c < ncols; c++)
        used += snprintf(sql + used, sizeof sql - (size_t)used, ",?");
    snprintf(sql + used, sizeof sql - (size_t)used, ")");
    sqlite3_stmt *ins = NULL;
    if (sqlite3_prepare_v2(out, sql, -1, &ins, NULL) != SQLITE_OK)
        return asys_fail(err, "cannot write the partial: %s", sqlite3_errmsg(out));
    int rc, result = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        sqlite3_reset(ins);
        for (int c = 0; c < ncols; c++)
            sqlite3_bind_value(ins, c + 1, sqlite3_column_value(st, c));
        if (sqlite3_step(ins) != SQLITE_DONE) {
            result = asys_fail(err, "cannot write the partial: %s", sqlite3_errmsg(out));
            break;
        }
    }
    if (result == 0 && rc != SQLITE_DONE)
        result = asys_fail(err, "%s", sqlite3_errmsg(db));
    sqlite3_finalize(ins);
    return result;
}

/* One report into the partial: its rows, or why it has none. */
static int write_report(sqlite3 *db, sqlite3 *out, int idx, const struct asys_partial_item *it,
                        const struct asys_report_params *p, struct asys_err *err)
{
    sqlite3_stmt *st = NULL;
    struct asys_err why = {0};
    if (asys_report_prepare(db, it->def, it->requested, p, &st, &why) != 0) {
        if (why.kind == ASYS_ERR_NO_DATA)
            return put_report(out, idx, it, why.text, err);
        *err = why;
        return asys_err_wrap(err, "report '%s'", it->def->name);
    }
    int rc = put_report(out, idx, it, NULL, err) || put_columns(out, idx, st, err) ||
             copy_rows(db, out, idx, st, err);
    sqlite3_finalize(st);
    if (rc != 0 && p->guard && p->guard->fired)
        asys_fail(err, "report '%s' ran longer than --query-timeout (%lld s)", it->def->name,
                  p->guard->timeout_s);
    return rc ? -1 : 0;
}

static int write_all(sqlite3 *db, sqlite3 *out, const char *input,
                     const struct asys_partial_item *items, int count,
                     const struct asys_report_params *p, const char *cache_key,
                     struct asys_err *err)
{
    if (exec(out,
             "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; BEGIN;"
             "CREATE TABLE partial_info (key TEXT PRIMARY KEY, value);"
             "CREATE TABLE partial_reports (idx INTEGER PRIMARY KEY, name TEXT NOT NULL,"
             " requested TEXT NOT NULL, skipped TEXT);"
             "CREATE TABLE partial_columns (report INTEGER, idx INTEGER, name TEXT, decltype TEXT,"
             " PRIMARY KEY (report, idx));",
             err) != 0 ||
        write_info(db, out, input, cache_key, err) != 0)
        return -1;
    for (int i = 0; i < count; i++)
        if (write_report(db, out, i, &items[i], p, err) != 0)
            return -1;
    return exec(out, "COMMIT", err);
}

int asys_partial_write(sqlite3 *db, const char *input, const struct asys_partial_item *items,
                       int count, const struct asys_report_params *p, const char *cache_key,
                       const char *path, struct asys_err *err)
{
    char tmp[PATH_MAX + 64];
    sqlite3 *out = NULL;
    int rc = -1, fd = -1;
    if (count < 1 || count > ASYS_PARTIAL_MAX_REPORTS)
        return asys_fail_kind(err, ASYS_ERR_USAGE, "a partial holds 1 to %d reports",
                              ASYS_PARTIAL_MAX_REPORTS);
    asys_remove_stale_temps(path, 1);
    if (asys_temp_template(path, 1, tmp, sizeof tmp) != 0 || (fd = mkostemp(tmp, O_CLOEXEC)) < 0)
        return asys_fail_errno(err, errno, "cannot write '%s'", path);
    close(fd);
    asys_cleanup_add(tmp);
    if (sqlite3_open_v2(tmp, &out, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK) {
        asys_fail(err, "cannot write '%s': %s", path, out ? sqlite3_errmsg(out) : "out of memory");
        goto out;
    }
    if (write_all(db, out, input, items, count, p, cache_key, err) != 0)
        goto out;
    if (sqlite3_close(out) != SQLITE_OK) {
        asys_fail(err, "cannot write '%s'", path);
        goto out;
    }
    out = NULL;
    rc = asys_publish_temp(tmp, path, ASYS_PUBLISH_REPLACE, err);
    if (rc != 0)
        asys_err_wrap(err, "cannot write '%s'", path);
    tmp[0] = '\0'; /* gone either way */
out:
    sqlite3_close(out);
    if (rc != 0)
        unlink(tmp);
    asys_cleanup_remove(tmp);
    return rc;
}
