/* Named reports: SQL files with a header comment.
 *
 *   -- name: hgtx_sum
 *   -- alias: nvtx_sum
 *   -- title: HGTX Range Summary
 *   -- default: yes
 *   -- description: one or more lines; continuation lines start with "--   "
 *   -- columns: ... (documentation only)
 *   -- arguments: base, mangled   (what NAME:ARG may say; none: no argument)
 *   -- tree: Node, Level          (column/table output indents Node by Level)
 *   -- summary: Num Calls         (see below)
 *   -- requires: TABLE: message   (an empty TABLE: the report fails with the message)
 *   SELECT ...
 *
 * A summary report's query returns samples, not rows: key columns, then
 * one duration per sample as its last column.  The catalogue wraps it in
 * the statistics every `_sum` report shows, grouped by the keys:
 *   Time (%), Total Time (ns), <summary label>, Avg (ns), Med (ns), Min (ns),
 *   Max (ns), StdDev (ns), then the key columns,
 * sorted by total time, then by the keys from the last one (the name) back.
 *
 * Built-in reports come from queries/ (compiled in); --report-dir adds or
 * replaces reports by name.  Queries may use the parameters :session_start,
 * :filter_start, :filter_end (absolute ns), :pid, :tid (-1: any),
 * :report_arg (NAME:ARG) and :report_name (the name or alias asked for).
 *
 * A multi-report report (rank_sum, pccl_skew) holds two statements split by
 * a line "-- merge": the first runs on each report's database and gives its
 * partial rows, the second on the merged partials (report_merge.h: tables
 * `ranks` and `part`). */
#ifndef ASYS_REPORT_CATALOG_H
#define ASYS_REPORT_CATALOG_H

#include <stddef.h>

#include "asys_error.h"

#define ASYS_MAX_ALIASES 8

struct asys_report_def {
    char *name;
    char *aliases[ASYS_MAX_ALIASES];
    int alias_count;
    char *title;
    char *description;
    char *columns;
    char *arguments; /* comma separated, NULL: the report takes none */
    char *tree_label; /* tree reports: the label column and the level column */
    char *tree_level;
    int is_default;
    char *summary; /* the count column of a summary report, or NULL */
    char *requires_table; /* the report needs rows in this table, or NULL */
    char *requires_message; /* what to say when it has none */
    char *sql;
    /* a multi-report report (rank_sum): what follows a line "-- merge" after
     * the query; the query above gives each report's partial rows, this one
     * merges them (report_merge.h); NULL for the others */
    char *merge_sql;
    char *origin; /* "built-in" or the file's path */
};

struct asys_report_catalog {
    struct asys_report_def *defs;
    size_t count;
};

int asys_catalog_load_builtin(struct asys_report_catalog *cat, struct asys_err *err);
/* Adds every *.sql of `dir`, replacing built-ins of the same name. */
int asys_catalog_load_dir(struct asys_report_catalog *cat, const char *dir, struct asys_err *err);
/* By name or alias (the part before ':'); NULL when unknown. */
const struct asys_report_def *asys_catalog_find(const struct asys_report_catalog *cat,
                                                const char *name);
void asys_catalog_free(struct asys_report_catalog *cat);

/* A request's arguments: "name", "name:arg", "name:nvtx-name[:arg]" (nsys's
 * spelling: nvtx-name names kernels by their enclosing range, beside the
 * report's one other argument). */
#define ASYS_REPORT_NVTX_NAME "nvtx-name"
struct asys_report_request {
    const char *arg; /* the other argument (borrowed from the request), or NULL */
    size_t arg_len;
    int nvtx_name;
};
void asys_report_request_parse(const char *requested, struct asys_report_request *out);

/* Whether `requested` asks for something the report takes (each argument one
 * of its list, at most one besides nvtx-name); on no, err says what it does
 * take. */
int asys_report_check_argument(const struct asys_report_def *def, const char *requested,
                               struct asys_err *err);

/* Parses one report file; returns 0 or -1 (no "-- name:" header). */
int asys_report_def_parse(const char *text, const char *origin, struct asys_report_def *def,
                          struct asys_err *err);
void asys_report_def_free(struct asys_report_def *def);

#endif
