/* A progress line for a long import, on a terminal, rewritten in place once
 * the import has run 2 s (short imports say nothing):
 *   "PROG: importing NAME: 45% (12.3 M records, 8 s)"
 * and, once every record is read, "indexing" for the percentage while the
 * indexes and derived tables are built.  Cleared at the end. */
#ifndef ASYS_IMPORT_PROGRESS_H
#define ASYS_IMPORT_PROGRESS_H

#include <stdint.h>
#include <time.h>

#include "importer.h"

struct asys_progress_line {
    const char *program;
    const char *name; /* the report's file name */
    int enabled; /* stderr is a terminal and the user did not ask for quiet */
    struct timespec start, last;
    int shown;
};

void asys_progress_line_init(struct asys_progress_line *p, const char *program, const char *name,
                             int quiet);
/* struct asys_db_options.on_progress, with the line as its context. */
void asys_progress_line_update(void *line, const struct asys_import_progress *done);
/* Clears the line when it was shown. */
void asys_progress_line_end(struct asys_progress_line *p);

struct asys_db_options;
struct asys_report_db;
struct asys_err;

/* asys_report_db_open with the line shown while a (re)build runs (the
 * options' on_progress and progress_ctx are set here). */
int asys_report_db_open_shown(const char *input, struct asys_db_options *o, const char *program,
                              int quiet, struct asys_report_db *rdb, struct asys_err *err);

#endif
