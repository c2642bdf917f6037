/* The analysis database of a report: NAME.sqlite next to NAME.asys-rep,
 * reused while its schema version and the report's identity (report_id,
 * size, mtime) match, rebuilt otherwise.  A rebuild goes to a temporary file
 * that is renamed into place only when complete. */
#ifndef ASYS_REPORT_DB_H
#define ASYS_REPORT_DB_H

#include <limits.h>
#include <sqlite3.h>

#include "asys_error.h"
#include "importer.h"
#include "report_reader.h"

#define ASYS_SCHEMA_VERSION 35

struct asys_db_options {
    const char *sqlite_path; /* NULL: NAME.sqlite beside the report */
    int force_rebuild;
    asys_warn_fn warn;
    void *warn_ctx;
    /* called before a (re)build starts, e.g. to tell the user */
    void (*on_build)(void *ctx, const char *report, const char *db_path);
    const struct asys_report_limits *limits; /* NULL: the defaults */
    int force_overwrite; /* --sqlite PATH may replace a file that is not an analysis database */
    /* called while a (re)build runs: how far it has come (importer.h) */
    asys_import_progress_fn on_progress;
    void *progress_ctx;
};

struct asys_report_db {
    sqlite3 *db;
    char path[PATH_MAX + 32];
    int temporary; /* built in $TMPDIR because the report's directory is read-only */
    int rebuilt;
    struct asys_import_stats stats;
};

int asys_report_db_open(const char *report_path, const struct asys_db_options *opts,
                        struct asys_report_db *out, struct asys_err *err);
void asys_report_db_close(struct asys_report_db *rdb);

/* Opens a database file read-only as one not trusted: no locks, no journal
 * read, SQLite's defensive settings (a partial, a cached database).  0, or
 * -1 with *db NULL. */
int asys_db_open_untrusted(const char *path, sqlite3 **db);

/* Builds what every open compares a cached database with (the schema of
 * an empty import) now, once: worker processes forked after it share it
 * instead of each building its own. */
void asys_report_db_warm(void);

/* NAME.asys-rep or NAME.sqlite -> NAME (other paths stay as they are). */
void asys_report_base(const char *report_path, char *out, size_t size);

/* NAME.asys-rep -> NAME.sqlite (or path + ".sqlite"). */
void asys_default_db_path(const char *report_path, char *out, size_t size);

#endif
