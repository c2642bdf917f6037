/* Merging the partials of several reports (report_partial.h) into one
 * analysis: an in-memory database with
 *   ranks (rank, host, input, start_ns, end_ns, offset_ns, start_rt_ns,
 *          clock_error_ns, clock_method, world_size, local_rank)
 *       one row per report; offset_ns = CLOCK_REALTIME - CLOCK_MONOTONIC of
 *       its host, so that t + offset_ns puts a time of that report on the
 *       axis shared by every rank (start_rt_ns = start_ns + offset_ns)
 *   part_IDX (rank, seq, <the report's columns>)
 *       the partial rows of report IDX, seen as the view `part` while its
 *       merge query runs.
 * A multi-report report's merge query (report_catalog.h: "-- merge") reads
 * those; any other report is the concatenation of every report's rows, with
 * leading Rank and Host columns when there is more than one report. */
#ifndef ASYS_REPORT_MERGE_H
#define ASYS_REPORT_MERGE_H

#include <sqlite3.h>

#include "asys_error.h"
#include "report_partial.h"
#include "report_run.h"

struct asys_merge_report {
    char *key; /* what a partial's report must match: the name, or what was asked */
    int by_name; /* a multi-report report: any argument (the merge takes it) */
    int columns; /* 0 until a partial gave them */
    char *skipped; /* why the first partial without data had none */
    int with_rows; /* partials that had data */
};

struct asys_merge {
    sqlite3 *db;
    int parts;
    int report_count;
    struct asys_merge_report reports[ASYS_PARTIAL_MAX_REPORTS];
    long long format_version; /* of the first partial's report, -1 none */
    char *first_input;
};

/* The reports to merge, in order. */
int asys_merge_open(struct asys_merge *m, const struct asys_partial_item *items, int count,
                    struct asys_err *err);
/* Adds one partial (untrusted: bounded and checked).  `rank_if_none` is the
 * rank of a report that recorded none (its place in the list).  Two
 * reports of one rank, or of different format or schema versions, are
 * refused. */
int asys_merge_add(struct asys_merge *m, const char *partial, long long rank_if_none,
                   struct asys_err *err);
/* The merged report IDX, ready to step.  -1 with err; ASYS_ERR_NO_DATA when
 * no report had data for it. */
int asys_merge_prepare(struct asys_merge *m, int idx, const struct asys_partial_item *item,
                       const struct asys_report_params *p, sqlite3_stmt **st, struct asys_err *err);
void asys_merge_close(struct asys_merge *m);

#endif
