#define _GNU_SOURCE
#include "report_merge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_db.h"
#include "sql_functions.h"

#define MAX_TEXT 4096 /* a host name, an input path, a column name */
#define MAX_COLUMNS 256

/* What partial_info says, bounded. */
struct part_info {
    long long version, schema, format_version, rank, local_rank, world_size;
    long long start_ns, end_ns, offset_ns, clock_error_ns;
    int has_rank, has_offset, has_error, has_local, has_world;
    char input[MAX_TEXT], host[256], clock_method[256];
};

static int exec(sqlite3 *db, const char *sql, struct asys_err *err)
{
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return asys_fail(err, "merge: %s", sqlite3_errmsg(db));
    return 0;
}

int asys_merge_open(struct asys_merge *m, const struct asys_partial_item *items, int count,
                    struct asys_err *err)
{
    memset(m, 0, sizeof *m);
    m->format_version = -1;
    if (count < 1 || count > ASYS_PARTIAL_MAX_REPORTS)
        return asys_fail_kind(err, ASYS_ERR_USAGE, "a merge takes 1 to %d reports",
                              ASYS_PARTIAL_MAX_REPORTS);
    for (int i = 0; i < count; i++) {
        struct asys_merge_report *r = &m->reports[i];
        r->by_name = items[i].def->merge_sql != NULL;
        r->key = strdup(r->by_name ? items[i].def->name : items[i].requested);
        m->report_count = i + 1;
        if (!r->key)
            return asys_fail(err, "out of memory");
    }
    if (sqlite3_open_v2(":memory:", &m->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
            SQLITE_OK ||
        asys_sql_register_functions(m->db) != 0)
        return asys_fail(err, "cannot open the merge database: out of memory");
    return exec(m->db,
                "CREATE TABLE ranks (rank INTEGER PRIMARY KEY, host TEXT, input TEXT,"
                " start_ns INTEGER, end_ns INTEGER, offset_ns INTEGER, start_rt_ns INTEGER,"
                " clock_error_ns INTEGER, clock_method TEXT, world_size INTEGER,"
                " local_rank INTEGER)",
                err);
}

static void copy_text(sqlite3_stmt *st, char *out, size_t size)
{
    const unsigned char *v = sqlite3_column_text(st, 1);
    snprintf(out, size, "%s", v ? (const char *)v : "");
}

/* One partial_info row into `pi`; numbers must be integers. */
static void take_info(struct part_info *pi, sqlite3_stmt *st)
{
    const char *key = (const char *)sqlite3_column_text(st, 0);
    int is_int = sqlite3_column_type(st, 1) == SQLITE_INTEGER;
    long long v = sqlite3_column_int64(st, 1);
    if (!key)
        return;
    const struct {
        const char *key;
        long long *dest;
        int *has;
    } numbers[] = {
        {"partial_version", &pi->version, NULL},
        {"schema_version", &pi->schema, NULL},
        {"format_version", &pi->format_version, NULL},
        {"rank", &pi->rank, &pi->has_rank},
        {"local_rank", &pi->local_rank, &pi->has_local},
        {"world_size", &pi->world_size, &pi->has_world},
        {"start_ns", &pi->start_ns, NULL},
        {"end_ns", &pi->end_ns, NULL},
        {"realtime_minus_monotonic_ns", &pi->offset_ns, &pi->has_offset},
        {"clock_error_ns", &pi->clock_error_ns, &pi->has_error},
    };
    for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++)
        if (is_int && !strcmp(key, numbers[i].key)) {
            *numbers[i].dest = v;
            if (numbers[i].has)
                *numbers[i].has = 1;
        }
    if (!strcmp(key, "input"))
        copy_text(st, pi->input, sizeof pi->input);
    else if (!strcmp(key, "hostname"))
        copy_text(st, pi->host, sizeof pi->host);
    else if (!strcmp(key, "clock_method"))
        copy_text(st, pi->clock_method, sizeof pi->clock_method);
}

static int read_info(sqlite3 *pdb, struct part_info *pi, struct asys_err *err)
{
    memset(pi, 0, sizeof *pi);
    pi->version = pi->schema = pi->format_version = -1;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(pdb, "SELECT key, value FROM partial_info LIMIT 1000", -1, &st, NULL) !=
        SQLITE_OK)
        return asys_fail_kind(err, ASYS_ERR_INPUT, "not an asys partial");
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        take_info(pi, st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE || pi->version < 0)
        return asys_fail_kind(err, ASYS_ERR_INPUT, "not an asys partial");
    if (pi->version != ASYS_PARTIAL_VERSION)
        return asys_fail_kind(err, ASYS_ERR_INPUT, "partial version %lld (this asys reads %d)",
                              pi->version, ASYS_PARTIAL_VERSION);
    if (pi->schema != ASYS_SCHEMA_VERSION)
        return asys_fail_kind(err, ASYS_ERR_INPUT,
                              "made by another asys (schema %lld, this one reads %d)", pi->schema,
                              ASYS_SCHEMA_VERSION);
    /* times and offsets that a sum cannot overflow */
    const long long bound = 1LL << 62;
    if (pi->start_ns < 0 || pi->start_ns > bound || pi->end_ns < 0 || pi->end_ns > bound ||
        pi->offset_ns < -bound || pi->offset_ns > bound || pi->rank < 0 || pi->rank > (1LL << 30))
        return asys_fail_kind(err, ASYS_ERR_INPUT, "times or rank out of range");
    return 0;
}

/* A second report of a rank, or of another format version, is refused. */
static int add_rank(struct asys_merge *m, const struct part_info *pi, long long rank,
                    struct asys_err *err)
{
    if (m->format_version >= 0 && pi->format_version != m->format_version)
        return asys_fail_kind(err, ASYS_ERR_INPUT,
                              "report format version %lld, but '%s' has version %lld: reports of "
                              "one run only",
                              pi->format_version, m->first_input, m->format_version);
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(m->db, "SELECT input FROM ranks WHERE rank = ?", -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, rank);
        if (sqlite3_step(st) == SQLITE_ROW) {
            asys_fail_kind(err, ASYS_ERR_INPUT, "rank %lld is also the rank of '%s'", rank,
                           (const char *)sqlite3_column_text(st, 0));
            sqlite3_finalize(st);
            return -1;
        }
    }
    sqlite3_finalize(st);
    rc = sqlite3_prepare_v2(m->db, "INSERT INTO ranks VALUES (?,?,?,?,?,?,?,?,?,?,?)", -1, &st,
                            NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, rank);
        sqlite3_bind_text(st, 2, pi->host, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, pi->input, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 4, pi->start_ns);
        sqlite3_bind_int64(st, 5, pi->end_ns);
        sqlite3_bind_int64(st, 6, pi->offset_ns);
        sqlite3_bind_int64(st, 7, pi->start_ns + pi->offset_ns);
        if (pi->has_error)
            sqlite3_bind_int64(st, 8, pi->clock_error_ns);
        /* the offset sampled by the recording: its method, when it names none */
        sqlite3_bind_text(st, 9, pi->clock_method[0] ? pi->clock_method : "realtime", -1,
                          SQLITE_STATIC);
        if (pi->has_world)
            sqlite3_bind_int64(st, 10, pi->world_size);
        if (pi->has_local)
            sqlite3_bind_int64(st, 11, pi->local_rank);
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_OK)
        return asys_fail(err, "merge: %s", sqlite3_errmsg(m->db));
    if (m->format_version < 0) {
        m->format_version = pi->format_version;
        m->first_input = strdup(pi->input);
    }
    return 0;
}

/* `name` as a quoted identifier appended to f. */
static void put_name(FILE *f, const char *name)
{
    fputc('"', f);
    for (const char *c = name; *c; c++) {
        if (*c == '"')
            fputc('"', f);
        fputc(*c, f);
    }
    fputc('"', f);
}

/* A declared type kept only when it is plain words (it reaches the writer's
 * number handling, nothing else). */
static const char *plain_decltype(const char *d)
{
    if (!d || strlen(d) > 32)
        return "";
    for (const char *c = d; *c; c++)
        if (!((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || *c == ' '))
            return "";
    return d;
}

/* CREATE TABLE part_IDX from the partial's columns of report `pidx`;
 * *ncols set.  The first partial with rows makes the table; the others must
 * have as many columns. */
static int make_table(struct asys_merge *m, int idx, sqlite3 *pdb, int pidx, int *ncols,
                      struct asys_err *err)
{
    sqlite3_stmt *st = NULL;
    char *sql = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&sql, &len);
    int n = 0, rc = -1;
    if (!f)
        return asys_fail(err, "out of memory");
    fprintf(f, "CREATE TABLE part_%d (asys_rank INTEGER, asys_seq INTEGER", idx);
    if (sqlite3_prepare_v2(pdb,
                           "SELECT idx, name, decltype FROM partial_columns WHERE report = ? "
                           "ORDER BY idx LIMIT 257",
                           -1, &st, NULL) != SQLITE_OK)
        goto out;
    sqlite3_bind_int(st, 1, pidx);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 1);
        if (sqlite3_column_int(st, 0) != n || n >= MAX_COLUMNS || !name || !*name ||
            strlen(name) > 200)
            goto out;
        fputs(", ", f);
        put_name(f, name);
        fprintf(f, " %s", plain_decltype((const char *)sqlite3_column_text(st, 2)));
        n++;
    }
    fputs(")", f);
    rc = 0;
out:
    sqlite3_finalize(st);
    fclose(f);
    if (rc != 0 || n == 0) {
        free(sql);
        return asys_fail_kind(err, ASYS_ERR_INPUT, "bad column list of report '%s'",
                              m->reports[idx].key);
    }
    *ncols = n;
    if (m->reports[idx].columns == 0) {
        /* a column name twice (a hostile partial) fails here */
        rc = sqlite3_exec(m->db, sql, NULL, NULL, NULL) == SQLITE_OK
                 ? 0
                 : asys_fail_kind(err, ASYS_ERR_INPUT, "bad columns of report '%s': %s",
                                  m->reports[idx].key, sqlite3_errmsg(m->db));
        m->reports[idx].columns = n;
    } else if (n != m->reports[idx].columns) {
        rc = asys_fail_kind(err, ASYS_ERR_INPUT, "report '%s' has %d columns, the others %d",
                            m->reports[idx].key, n, m->reports[idx].columns);
    }
    free(sql);
    return rc;
}

/* The rows of partial_rows_PIDX into part_IDX behind their rank. */
static int copy_rows(struct asys_merge *m, int idx, sqlite3 *pdb, int pidx, int ncols,
                     long long rank, struct asys_err *err)
{
    char sql[96 + MAX_COLUMNS * 2];
    sqlite3_stmt *in = NULL, *out = NULL;
    int rc = -1, step;
    snprintf(sql, sizeof sql, "SELECT * FROM partial_rows_%d ORDER BY seq", pidx);
    if (sqlite3_prepare_v2(pdb, sql, -1, &in, NULL) != SQLITE_OK ||
        sqlite3_column_count(in) != ncols + 1) {
        asys_fail_kind(err, ASYS_ERR_INPUT, "bad rows of report '%s'", m->reports[idx].key);
        goto out;
    }
    int used = snprintf(sql, sizeof sql, "INSERT INTO part_%d VALUES (?", idx);
    for (int c = 0; c <= ncols; c++)
        used += snprintf(sql + used, sizeof sql - (size_t)used, ",?");
    snprintf(sql + used, sizeof sql - (size_t)used, ")");
    if (sqlite3_prepare_v2(m->db, sql, -1, &out, NULL) != SQLITE_OK) {
        asys_fail(err, "merge: %s", sqlite3_errmsg(m->db));
        goto out;
    }
    while ((step = sqlite3_step(in)) == SQLITE_ROW) {
        sqlite3_reset(out);
        sqlite3_bind_int64(out, 1, rank);
        for (int c = 0; c <= ncols; c++)
            sqlite3_bind_value(out, c + 2, sqlite3_column_value(in, c));
        if (sqlite3_step(out) != SQLITE_DONE) {
            asys_fail(err, "merge: %s", sqlite3_errmsg(m->db));
            goto out;
        }
    }
    if (step != SQLITE_DONE) {
        asys_fail_kind(err, ASYS_ERR_INPUT, "bad rows of report '%s': %s", m->reports[idx].key,
                       sqlite3_errmsg(pdb));
        goto out;
    }
    rc = 0;
out:
    sqlite3_finalize(in);
    sqlite3_finalize(out);
    return rc;
}

/* Report IDX of the merge from the partial: its rows, or why it has none. */
static int add_report(struct asys_merge *m, int idx, sqlite3 *pdb, long long rank,
                      struct asys_err *err)
{
    struct asys_merge_report *r = &m->reports[idx];
    sqlite3_stmt *st = NULL;
    int pidx = -1, rc = 0;
    char *skipped = NULL;
    if (sqlite3_prepare_v2(pdb,
                           r->by_name ? "SELECT idx, skipped FROM partial_reports WHERE name = ?"
                                      : "SELECT idx, skipped FROM partial_reports WHERE "
                                        "requested = ?",
                           -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, r->key, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW) {
            pidx = sqlite3_column_int(st, 0);
            const unsigned char *why = sqlite3_column_text(st, 1);
            if (why && !(skipped = strndup((const char *)why, 512)))
                rc = asys_fail(err, "out of memory");
        }
    }
    sqlite3_finalize(st);
    if (rc == 0 && (pidx < 0 || pidx >= ASYS_PARTIAL_MAX_REPORTS))
        rc = asys_fail_kind(err, ASYS_ERR_INPUT, "holds no partial of report '%s'", r->key);
    if (rc == 0 && skipped) {
        if (!r->skipped)
            r->skipped = skipped, skipped = NULL;
    } else if (rc == 0) {
        int ncols = 0;
        rc = make_table(m, idx, pdb, pidx, &ncols, err) ||
             copy_rows(m, idx, pdb, pidx, ncols, rank, err);
        r->with_rows += rc == 0;
    }
    free(skipped);
    return rc ? -1 : 0;
}

int asys_merge_add(struct asys_merge *m, const char *partial, long long rank_if_none,
                   struct asys_err *err)
{
    sqlite3 *pdb = NULL;
    struct part_info *pi = calloc(1, sizeof *pi);
    int rc = -1;
    if (!pi)
        return asys_fail(err, "out of memory");
    if (asys_db_open_untrusted(partial, &pdb) != 0) {
        asys_fail_kind(err, ASYS_ERR_INPUT, "not an asys partial");
        goto out;
    }
    sqlite3_limit(pdb, SQLITE_LIMIT_LENGTH, 1 << 20); /* no value larger than a megabyte */
    if (read_info(pdb, pi, err) != 0)
        goto out;
    long long rank = pi->has_rank ? pi->rank : rank_if_none;
    if (exec(m->db, "BEGIN", err) != 0)
        goto out;
    rc = add_rank(m, pi, rank, err);
    for (int i = 0; rc == 0 && i < m->report_count; i++)
        rc = add_report(m, i, pdb, rank, err);
    if (rc == 0)
        rc = exec(m->db, "COMMIT", err);
    else
        sqlite3_exec(m->db, "ROLLBACK", NULL, NULL, NULL);
    m->parts += rc == 0;
out:
    sqlite3_close(pdb);
    free(pi);
    return rc;
}

/* The concatenation of every report's rows, Rank and Host first when the
 * merge has several reports. */
static char *concat_sql(struct asys_merge *m, int idx, struct asys_err *err)
{
    char *sql = NULL;
    size_t len = 0;
    sqlite3_stmt *cols = NULL;
    char probe[64];
    snprintf(probe, sizeof probe, "SELECT * FROM part_%d", idx);
    FILE *f = open_memstream(&sql, &len);
    if (!f || sqlite3_prepare_v2(m->db, probe, -1, &cols, NULL) != SQLITE_OK) {
        if (f)
            fclose(f);
        free(sql);
        asys_fail(err, "merge: %s", sqlite3_errmsg(m->db));
        return NULL;
    }
    fputs("SELECT ", f);
    if (m->parts > 1)
        fputs("r.rank AS \"Rank\", r.host AS \"Host\", ", f);
    for (int c = 2; c < sqlite3_column_count(cols); c++) {
        fputs(c > 2 ? ", p." : "p.", f);
        put_name(f, sqlite3_column_name(cols, c));
    }
    fprintf(f,
            " FROM part_%d AS p JOIN ranks AS r ON r.rank = p.asys_rank "
            "ORDER BY p.asys_rank, p.asys_seq",
            idx);
    sqlite3_finalize(cols);
    fclose(f);
    return sql;
}

int asys_merge_prepare(struct asys_merge *m, int idx, const struct asys_partial_item *item,
                       const struct asys_report_params *p, sqlite3_stmt **st, struct asys_err *err)
{
    *st = NULL;
    if (idx < 0 || idx >= m->report_count)
        return asys_fail(err, "no report %d in the merge", idx);
    struct asys_merge_report *r = &m->reports[idx];
    if (!r->with_rows)
        return asys_fail_kind(err, ASYS_ERR_NO_DATA, "%s",
                              r->skipped ? r->skipped : "no data for this report");
    char view[96];
    snprintf(view, sizeof view,
             "DROP VIEW IF EXISTS temp.part; CREATE TEMP VIEW part AS SELECT * FROM main.part_%d",
             idx);
    if (exec(m->db, view, err) != 0)
        return -1;
    struct asys_report_def def = *item->def;
    def.summary = NULL; /* the partial rows are the report's own */
    def.requires_table = NULL;
    def.sql = item->def->merge_sql ? item->def->merge_sql : concat_sql(m, idx, err);
    if (!def.sql)
        return -1;
    int rc = asys_report_prepare(m->db, &def, item->requested, p, st, err);
    if (!item->def->merge_sql)
        free(def.sql);
    return rc;
}

void asys_merge_close(struct asys_merge *m)
{
    for (int i = 0; i < m->report_count; i++) {
        free(m->reports[i].key);
        free(m->reports[i].skipped);
    }
    free(m->first_input);
    sqlite3_close(m->db);
    memset(m, 0, sizeof *m);
}
