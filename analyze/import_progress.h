/* A progress line for a long import, on a terminal: "PROG: importing: 45%",
 * rewritten in place, from the first second on (short imports say nothing). */
#ifndef ASYS_IMPORT_PROGRESS_H
#define ASYS_IMPORT_PROGRESS_H

#include <stdint.h>
#include <time.h>

struct asys_progress_line {
    const char *program;
    int enabled; /* stderr is a terminal and the user did not ask for quiet */
    struct timespec start, last;
    int shown;
};

void asys_progress_line_init(struct asys_progress_line *p, const char *program, int quiet);
/* struct asys_db_options.on_progress, with the line as its context. */
void asys_progress_line_update(void *line, uint64_t done, uint64_t total);
/* Clears the line when it was shown. */
void asys_progress_line_end(struct asys_progress_line *p);

struct asys_db_options;
struct asys_report_db;
struct asys_err;

/* asys_report_db_open with the line shown while a (re)build reads the report
 * (the options' on_progress and progress_ctx are set here). */
int asys_report_db_open_shown(const char *input, struct asys_db_options *o, const char *program,
                              int quiet, struct asys_report_db *rdb, struct asys_err *err);

#endif
