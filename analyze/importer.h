/* Import of a report into an empty SQLite database (schema/schema.sql). */
#ifndef ASYS_IMPORTER_H
#define ASYS_IMPORTER_H

#include <sqlite3.h>
#include <stdint.h>

#include "asys_error.h"

/* The longest text the strings table holds (bytes): the recorder's own
 * limit; a longer one from a report is cut, one in a cache is not trusted. */
#define ASYS_DB_TEXT_MAX (64u * 1024u)

struct asys_import_stats {
    uint64_t segments;
    uint64_t bad_segments;
    uint64_t duplicate_segments;
    uint64_t records;
    uint64_t hgtx_events;
};

/* Called for problems that do not stop the import (a damaged segment, a pop
 * without a push); `text` is one line without a newline. */
typedef void (*asys_warn_fn)(void *ctx, const char *text);

/* How far an import has come, for a progress line in the tool (the library
 * prints nothing). */
struct asys_import_progress {
    uint64_t bytes_done, bytes_total; /* of the report file, read so far */
    uint64_t records; /* records read so far */
    int building; /* 1: every record is read; indexes and derived tables are built */
};
/* Called every 64 Ki records while the report is read, then now and then
 * (SQLite's progress handler) while the tables are finished. */
typedef void (*asys_import_progress_fn)(void *ctx, const struct asys_import_progress *p);

/* Creates the schema in `db` (empty), imports every segment of the report in
 * one transaction and builds the indexes.  On error the database content is
 * unspecified; the caller discards it. */
struct asys_report_limits;

/* `limits` may be NULL (the defaults of report_reader.h); `progress` may be
 * NULL.  With report_path NULL, builds what an import of an empty report
 * would: the schema objects a cached database must have, exactly. */
int asys_import_report(const char *report_path, sqlite3 *db,
                       const struct asys_report_limits *limits, asys_warn_fn warn, void *warn_ctx,
                       asys_import_progress_fn progress, void *progress_ctx,
                       struct asys_import_stats *stats, struct asys_err *err);

#endif
