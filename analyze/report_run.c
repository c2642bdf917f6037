#include "report_run.h"

#include <limits.h>
#include <string.h>

#include "time_filter.h"

void asys_report_params_init(struct asys_report_params *p, sqlite3 *db)
{
    p->session_start = asys_session_time(db, "start_ns");
    p->session_end = asys_session_time(db, "end_ns");
    p->filter_start = LLONG_MIN;
    p->filter_end = LLONG_MAX;
    p->buckets = 50;
    p->group_by = "base";
    p->api_name_mode = "host";
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

int asys_report_prepare(sqlite3 *db, const struct asys_report_def *def, const char *requested,
                        const struct asys_report_params *p, sqlite3_stmt **stmt,
                        struct asys_err *err)
{
    *stmt = NULL;
    if (sqlite3_prepare_v2(db, def->sql, -1, stmt, NULL) != SQLITE_OK || !*stmt) {
        asys_fail(err, "%s", sqlite3_errmsg(db));
        sqlite3_finalize(*stmt);
        *stmt = NULL;
        return -1;
    }
    bind_int(*stmt, ":session_start", p->session_start);
    bind_int(*stmt, ":session_end", p->session_end);
    bind_int(*stmt, ":filter_start", p->filter_start);
    bind_int(*stmt, ":filter_end", p->filter_end);
    bind_int(*stmt, ":buckets", p->buckets);
    bind_text(*stmt, ":group_by", p->group_by);
    bind_text(*stmt, ":api_name_mode", p->api_name_mode);
    const char *arg = strchr(requested, ':');
    bind_text(*stmt, ":report_arg", arg ? arg + 1 : NULL);
    return 0;
}
