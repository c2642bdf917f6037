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

#endif
