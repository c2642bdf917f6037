#include "report_run.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "time_filter.h"

void asys_report_params_init(struct asys_report_params *p, sqlite3 *db)
{
    p->guard = NULL;
    p->session_start = asys_session_time(db, "start_ns");
    p->session_end = asys_session_time(db, "end_ns");
    p->filter_start = LLONG_MIN;
    p->filter_end = LLONG_MAX;
    p->buckets = 50;
    p->pid = p->tid = -1;
    p->group_by = "base";
    p->api_name_mode = "host";
    p->kernel_name = NULL;
    p->kernel_instance = p->kernel_correlation = -1;
}

int asys_kernel_choice_parse(const char *text, struct asys_report_params *p, struct asys_err *err)
{
    char *end;
    if (!text || !*text)
        return asys_fail_kind(err, ASYS_ERR_USAGE,
                              "--kernel needs NAME, NAME#N or a "
                              "correlation id");
    if (strspn(text, "0123456789") == strlen(text)) { /* no kernel name is a number */
        unsigned long long id = strtoull(text, &end, 10);
        if (id > INT64_MAX / 2)
            return asys_fail_kind(err, ASYS_ERR_USAGE, "--kernel: correlation id '%s' is too large",
                                  text);
        p->kernel_correlation = (long long)id;
        return 0;
    }
    const char *hash = strrchr(text, '#');
    p->kernel_name = text;
    if (!hash)
        return 0;
    unsigned long long n = strtoull(hash + 1, &end, 10);
    if (hash == text || !hash[1] || *end || n > INT32_MAX)
        return asys_fail_kind(err, ASYS_ERR_USAGE,
                              "--kernel '%s': NAME#N takes a launch number N (from 0)", text);
    p->kernel_instance = (long long)n;
    return 0;
}

static void bind_int(sqlite3_stmt *st, const char *name, long long v)
{
    int i = sqlite3_bind_parameter_index(st, name);
    if (i > 0)
        sqlite3_bind_int64(st, i, v);
}

static void bind_text(sqlite3_stmt *st, const char *name, const char *v)
{
    int i = sqlite3_bind_parameter_index(st, name);
    if (i > 0) {
        if (v)
            sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
        else
            sqlite3_bind_null(st, i);
    }
}

/* Appends printf text to a growing buffer; -1 when memory runs out. */
struct text {
    char *s;
    size_t len, cap;
};

static int put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int put(struct text *t, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->cap - t->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0)
            return -1;
        if (t->s && t->len + (size_t)n < t->cap) {
            t->len += (size_t)n;
            return 0;
        }
        size_t cap = (t->cap ? t->cap : 1024) * 2 + (size_t)n;
        char *bigger = realloc(t->s, cap);
        if (!bigger)
            return -1;
        t->s = bigger;
        t->cap = cap;
    }
}

/* A column name as an SQL identifier. */
static int put_name(struct text *t, const char *name)
{
    if (put(t, "\"") != 0)
        return -1;
    for (const char *c = name; *c; c++)
        if (put(t, *c == '"' ? "\"\"" : "%c", *c) != 0)
            return -1;
    return put(t, "\"");
}

/* The samples query without its trailing ';' (a subquery cannot have one). */
static size_t statement_length(const char *sql)
{
    size_t n = strlen(sql);
    while (n && (sql[n - 1] == ';' || sql[n - 1] == ' ' || sql[n - 1] == '\n' ||
                 sql[n - 1] == '\t' || sql[n - 1] == '\r'))
        n--;
    return n;
}

/* A summary report's SQL (report_catalog.h): the samples query wrapped in
 * the shared statistics, grouped by its key columns (all but the last). */
static char *summary_sql(sqlite3 *db, const struct asys_report_def *def, struct asys_err *err)
{
    sqlite3_stmt *samples = NULL;
    struct text t = {0};
    size_t len = statement_length(def->sql);
    if (sqlite3_prepare_v2(db, def->sql, (int)len, &samples, NULL) != SQLITE_OK || !samples) {
        asys_fail(err, "%s", sqlite3_errmsg(db));
        goto fail;
    }
    int keys = sqlite3_column_count(samples) - 1;
    if (keys < 1) {
        asys_fail(err, "a summary report needs key columns and a duration column");
        goto fail;
    }
    int rc = put(&t, "WITH samples AS (%.*s\n), grouped AS (SELECT ", (int)len, def->sql);
    for (int i = 0; i < keys && rc == 0; i++)
        rc = put_name(&t, sqlite3_column_name(samples, i)) || put(&t, ", ");
    const char *value = sqlite3_column_name(samples, keys);
    rc = rc || put(&t, "SUM(") || put_name(&t, value) ||
         put(&t, ") AS total, COUNT(*) AS n, AVG(") || put_name(&t, value) ||
         put(&t, ") AS average, median(") || put_name(&t, value) || put(&t, ") AS med, MIN(") ||
         put_name(&t, value) || put(&t, ") AS shortest, MAX(") || put_name(&t, value) ||
         put(&t, ") AS longest, stdev(") || put_name(&t, value) ||
         put(&t, ") AS deviation FROM samples GROUP BY ");
    for (int i = 0; i < keys && rc == 0; i++)
        rc = (i ? put(&t, ", ") : 0) || put_name(&t, sqlite3_column_name(samples, i));
    rc = rc ||
         put(&t, ")\nSELECT 100.0 * total / SUM(total) OVER () AS \"Time (%%)\", "
                 "total AS \"Total Time (ns)\", n AS ") ||
         put_name(&t, def->summary) ||
         put(&t, ", average AS \"Avg (ns)\", med AS \"Med (ns)\", shortest AS \"Min (ns)\", "
                 "longest AS \"Max (ns)\", deviation AS \"StdDev (ns)\"");
    for (int i = 0; i < keys && rc == 0; i++)
        rc = put(&t, ", ") || put_name(&t, sqlite3_column_name(samples, i));
    rc = rc || put(&t, "\nFROM grouped ORDER BY total DESC");
    for (int i = keys - 1; i >= 0 && rc == 0; i--)
        rc = put(&t, ", ") || put_name(&t, sqlite3_column_name(samples, i));
    if (rc != 0) {
        asys_fail(err, "out of memory");
        goto fail;
    }
    sqlite3_finalize(samples);
    return t.s;
fail:
    sqlite3_finalize(samples);
    free(t.s);
    return NULL;
}

/* Reads only: a report may not change the database, attach another, or
 * reach SQLite's risky functions. */
static int read_only(void *ctx, int action, const char *a, const char *b, const char *db,
                     const char *trigger)
{
    (void)ctx;
    (void)a;
    (void)db;
    (void)trigger;
    switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_RECURSIVE:
        return SQLITE_OK;
    case SQLITE_FUNCTION: /* b: the function's name */
        return b && (!strcmp(b, "fts3_tokenizer") || !strcmp(b, "load_extension")) ? SQLITE_DENY
                                                                                   : SQLITE_OK;
    default:
        return SQLITE_DENY;
    }
}

/* Whether `tail` (what follows the first statement) holds another one. */
static int has_more(const char *tail)
{
    while (tail && *tail) {
        if (*tail == ' ' || *tail == '\t' || *tail == '\n' || *tail == '\r' || *tail == ';') {
            tail++;
        } else if (tail[0] == '-' && tail[1] == '-') {
            tail += strcspn(tail, "\n");
        } else if (tail[0] == '/' && tail[1] == '*') {
            const char *end = strstr(tail + 2, "*/");
            tail = end ? end + 2 : tail + strlen(tail);
        } else {
            return 1;
        }
    }
    return 0;
}

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int past_deadline(void *arg)
{
    struct asys_query_guard *g = arg;
    if (now_ns() < g->end_ns)
        return 0;
    g->fired = 1;
    return 1;
}

/* From now on, the connection's queries stop at the guard's deadline. */
static void arm(sqlite3 *db, struct asys_query_guard *g)
{
    if (!g || g->timeout_s <= 0) {
        sqlite3_progress_handler(db, 0, NULL, NULL);
        return;
    }
    g->fired = 0;
    g->end_ns = now_ns() + g->timeout_s * 1000000000LL;
    sqlite3_progress_handler(db, 10000, past_deadline, g);
}

/* Whether the table a report needs is empty (or missing); err says so. */
static int requirement_missing(sqlite3 *db, const struct asys_report_def *def, struct asys_err *err)
{
    for (const char *c = def->requires_table; *c; c++)
        if (!(*c == '_' || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9')))
            return asys_fail_kind(err, ASYS_ERR_USAGE, "%s: bad '-- requires:' table name",
                                  def->origin);
    char sql[160];
    snprintf(sql, sizeof sql, "SELECT EXISTS (SELECT 1 FROM %s)", def->requires_table);
    sqlite3_stmt *st = NULL;
    int present = sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
                  sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    if (present)
        return 0;
    asys_fail_kind(err, ASYS_ERR_NO_DATA, "%s",
                   def->requires_message ? def->requires_message : "no data for this report");
    return 1;
}

int asys_report_prepare(sqlite3 *db, const struct asys_report_def *def, const char *requested,
                        const struct asys_report_params *p, sqlite3_stmt **stmt,
                        struct asys_err *err)
{
    *stmt = NULL;
    const char *tail = NULL;
    if (def->requires_table && requirement_missing(db, def, err))
        return -1;
    if (has_more(def->sql) == 0)
        return asys_fail_kind(err, ASYS_ERR_USAGE, "%s holds no SQL statement", def->origin);
    sqlite3_set_authorizer(db, read_only, NULL);
    int rc = SQLITE_OK;
    /* one statement per file: the rest would be ignored without a word */
    sqlite3_stmt *first = NULL;
    if (sqlite3_prepare_v2(db, def->sql, -1, &first, &tail) == SQLITE_OK && has_more(tail)) {
        sqlite3_finalize(first);
        sqlite3_set_authorizer(db, NULL, NULL);
        return asys_fail_kind(err, ASYS_ERR_USAGE, "%s holds more than one SQL statement",
                              def->origin);
    }
    sqlite3_finalize(first);
    char *wrapped = def->summary ? summary_sql(db, def, err) : NULL;
    if (!def->summary || wrapped)
        rc = sqlite3_prepare_v2(db, wrapped ? wrapped : def->sql, -1, stmt, NULL);
    free(wrapped);
    sqlite3_set_authorizer(db, NULL, NULL);
    if (def->summary && !wrapped)
        return -1;
    if (rc != SQLITE_OK || !*stmt) {
        asys_fail(err, "%s", *stmt || rc != SQLITE_OK ? sqlite3_errmsg(db) : "no SQL statement");
        sqlite3_finalize(*stmt);
        *stmt = NULL;
        return -1;
    }
    arm(db, p->guard);
    bind_int(*stmt, ":session_start", p->session_start);
    bind_int(*stmt, ":session_end", p->session_end);
    bind_int(*stmt, ":filter_start", p->filter_start);
    bind_int(*stmt, ":filter_end", p->filter_end);
    bind_int(*stmt, ":buckets", p->buckets);
    bind_int(*stmt, ":pid", p->pid);
    bind_int(*stmt, ":tid", p->tid);
    bind_text(*stmt, ":group_by", p->group_by);
    bind_text(*stmt, ":api_name_mode", p->api_name_mode);
    bind_int(*stmt, ":kernel_instance", p->kernel_instance);
    bind_int(*stmt, ":kernel_correlation", p->kernel_correlation);
    int k = sqlite3_bind_parameter_index(*stmt, ":kernel_name");
    if (k > 0 && p->kernel_name) /* NAME#N: the name before the '#' */
        sqlite3_bind_text(
            *stmt, k, p->kernel_name,
            p->kernel_instance >= 0 ? (int)(strrchr(p->kernel_name, '#') - p->kernel_name) : -1,
            SQLITE_TRANSIENT);
    struct asys_report_request req;
    asys_report_request_parse(requested, &req);
    int a = sqlite3_bind_parameter_index(*stmt, ":report_arg");
    if (a > 0 && req.arg)
        sqlite3_bind_text(*stmt, a, req.arg, (int)req.arg_len, SQLITE_TRANSIENT);
    bind_int(*stmt, ":nvtx_name", req.nvtx_name);
    const char *arg = strchr(requested, ':');
    /* the name as asked (an alias may mean something of its own: pinned_sum) */
    int i = sqlite3_bind_parameter_index(*stmt, ":report_name");
    if (i > 0)
        sqlite3_bind_text(*stmt, i, requested, arg ? (int)(arg - requested) : -1, SQLITE_TRANSIENT);
    return 0;
}
