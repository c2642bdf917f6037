/* A report's partial result: what one analysis database contributes to an
 * analysis over many reports (asys-stats --partial, the -j workers, the Dask
 * tasks), merged by report_merge.h.
 *
 * A partial is a small SQLite file:
 *   partial_info (key, value)       partial_version, schema_version, input,
 *                                   and the session_info keys a merge needs
 *                                   (rank, hostname, clock offset and error)
 *   partial_reports (idx, name, requested, skipped)
 *                                   one per report; skipped: why it has no data
 *   partial_columns (report, idx, name, decltype)
 *   partial_rows_IDX (seq, c0, c1, ...)  the rows, values as the query gave them
 *
 * The rows are a report's own rows (per-report reports: concatenated by the
 * merge behind Rank and Host) or, for a multi-report report, its partial
 * query's rows: sums, counts, minima, maxima and per-instance times, so that
 * the merge computes medians over ranks exactly (no sketch). */
#ifndef ASYS_REPORT_PARTIAL_H
#define ASYS_REPORT_PARTIAL_H

#include <sqlite3.h>

#include "asys_error.h"
#include "report_catalog.h"
#include "report_run.h"

#define ASYS_PARTIAL_VERSION 1
#define ASYS_PARTIAL_MAX_REPORTS 64

struct asys_partial_item {
    const struct asys_report_def *def;
    const char *requested; /* "name" or "name:arg" */
};

/* Runs the reports on `db` (the analysis database of `input`) and writes
 * their partial to `path` through a temporary file renamed into place.
 * `cache_key` (partial_cache.h; NULL: none) goes into partial_info.
 * Returns 0, or -1 with err (nothing left at `path`). */
int asys_partial_write(sqlite3 *db, const char *input, const struct asys_partial_item *items,
                       int count, const struct asys_report_params *p, const char *cache_key,
                       const char *path, struct asys_err *err);

#endif
