/* Running a named report: its SQL prepared with the parameters every report
 * may use (asys-stats, asys-export). */
#ifndef ASYS_REPORT_RUN_H
#define ASYS_REPORT_RUN_H

#include <sqlite3.h>

#include "asys_error.h"
#include "report_catalog.h"

/* Stops a report's query after its time (a progress handler's state). */
struct asys_query_guard {
    long long timeout_s; /* 0: none */
    long long end_ns;
    int fired;
};

struct asys_report_params {
    long long session_start, session_end; /* absolute ns */
    long long filter_start, filter_end; /* absolute ns; LLONG_MIN / LLONG_MAX: open */
    long long buckets; /* series reports */
    long long pid, tid; /* call-tree reports: -1 any */
    const char *group_by; /* "base" or "hgtx" */
    const char *api_name_mode; /* "host" or "kernel" */
    /* --kernel NAME[#N] or ID (kernel_profile_cmd): the name (NULL: any), the
     * launch number and the correlation id (-1: any) */
    const char *kernel_name;
    long long kernel_instance, kernel_correlation;
    struct asys_query_guard *guard; /* --query-timeout; NULL: none */
};

/* Fills in the defaults of the report parameters from the database. */
void asys_report_params_init(struct asys_report_params *p, sqlite3 *db);

/* A report's SQL runs read-only: only SELECT and reads are authorized (no
 * writes, no ATTACH, no PRAGMA, no fts3_tokenizer), a file with more than
 * one statement or none is refused, and a query that runs longer than
 * p->guard's timeout is stopped (p->guard->fired then says so).
 *
 * Prepares `def` for `requested` ("name" or "name:arg") with :session_start,
 * :session_end, :filter_start, :filter_end, :buckets, :group_by,
 * :api_name_mode, :kernel_name, :kernel_instance, :kernel_correlation,
 * :report_arg and :report_name (the name or alias asked for) bound.
 * Returns 0 or -1 with err. */
/* Parses --kernel's value: NAME, NAME#N or a correlation id; -1 with err. */
int asys_kernel_choice_parse(const char *text, struct asys_report_params *p, struct asys_err *err);
int asys_report_prepare(sqlite3 *db, const struct asys_report_def *def, const char *requested,
                        const struct asys_report_params *p, sqlite3_stmt **stmt,
                        struct asys_err *err);

#endif
