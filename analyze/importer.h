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

/* Creates the schema in `db` (empty), imports every segment of the report in
 * one transaction and builds the indexes.  On error the database content is
 * unspecified; the caller discards it. */
struct asys_report_limits;

/* `limits` may be NULL (the defaults of report_reader.h).  With report_path
 * NULL, builds what an import of an empty report would: the schema objects
 * a cached database must have, exactly. */
int asys_import_report(const char *report_path, sqlite3 *db,
                       const struct asys_report_limits *limits, asys_warn_fn warn, void *warn_ctx,
                       struct asys_import_stats *stats, struct asys_err *err);

#endif
