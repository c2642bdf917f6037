#include "import_progress.h"

#include "report_db.h"

#include <stdio.h>
#include <unistd.h>

static double seconds_between(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

void asys_progress_line_init(struct asys_progress_line *p, const char *program, int quiet)
{
    p->program = program;
    p->enabled = !quiet && isatty(STDERR_FILENO);
    p->shown = 0;
    clock_gettime(CLOCK_MONOTONIC, &p->start);
    p->last = p->start;
}

void asys_progress_line_update(void *line, uint64_t done, uint64_t total)
{
    struct asys_progress_line *p = line;
    if (!p->enabled || !total)
        return;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    /* from the first second on, four times a second at most */
    if (seconds_between(&p->start, &now) < 1.0 ||
        (p->shown && seconds_between(&p->last, &now) < 0.25))
        return;
    p->last = now;
    p->shown = 1;
    double percent = done >= total ? 100.0 : 100.0 * (double)done / (double)total;
    fprintf(stderr, "\r%s: importing: %3.0f%% of %.1f MiB", p->program, percent,
            (double)total / (1 << 20));
    fflush(stderr);
}

void asys_progress_line_end(struct asys_progress_line *p)
{
    if (p->shown)
        fputs("\r\033[K", stderr);
    p->shown = 0;
}

int asys_report_db_open_shown(const char *input, struct asys_db_options *o, const char *program,
                              int quiet, struct asys_report_db *rdb, struct asys_err *err)
{
    struct asys_progress_line line;
    asys_progress_line_init(&line, program, quiet);
    o->on_progress = asys_progress_line_update;
    o->progress_ctx = &line;
    int rc = asys_report_db_open(input, o, rdb, err);
    asys_progress_line_end(&line);
    o->on_progress = NULL;
    o->progress_ctx = NULL;
    return rc;
}
