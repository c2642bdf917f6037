#include "import_progress.h"

#include "report_db.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static double seconds_between(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

void asys_progress_line_init(struct asys_progress_line *p, const char *program, const char *name,
                             int quiet)
{
    p->program = program;
    const char *slash = name ? strrchr(name, '/') : NULL;
    p->name = slash && slash[1] ? slash + 1 : name ? name : "";
    p->enabled = !quiet && isatty(STDERR_FILENO);
    p->shown = 0;
    clock_gettime(CLOCK_MONOTONIC, &p->start);
    p->last = p->start;
}

void asys_progress_line_update(void *line, const struct asys_import_progress *done)
{
    struct asys_progress_line *p = line;
    if (!p->enabled)
        return;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double seconds = seconds_between(&p->start, &now);
    /* from the second second on, four times a second at most */
    if (seconds < 2.0 || (p->shown && seconds_between(&p->last, &now) < 0.25))
        return;
    p->last = now;
    p->shown = 1;
    char what[32];
    if (done->building || !done->bytes_total)
        snprintf(what, sizeof what, "%s", done->building ? "indexing" : "reading");
    else
        snprintf(what, sizeof what, "%3.0f%%",
                 done->bytes_done >= done->bytes_total
                     ? 100.0
                     : 100.0 * (double)done->bytes_done / (double)done->bytes_total);
    /* the line is rewritten in place; \033[K clears what a longer one left */
    fprintf(stderr, "\r%s: importing %s: %s (%.1f M records, %.0f s)\033[K", p->program, p->name,
            what, (double)done->records / 1e6, seconds);
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
    asys_progress_line_init(&line, program, input, quiet);
    o->on_progress = asys_progress_line_update;
    o->progress_ctx = &line;
    int rc = asys_report_db_open(input, o, rdb, err);
    asys_progress_line_end(&line);
    o->on_progress = NULL;
    o->progress_ctx = NULL;
    return rc;
}
