/* asys-stats over many reports: the inputs (reports and directories of
 * reports), and their partials (report_partial.h) made by -j worker
 * processes, or by the tasks of a Dask cluster (--scheduler: the package in
 * analyze/dask), into a temporary directory that the merge reads.  Part of
 * the asys-stats program: it prints its errors, one line each. */
#ifndef ASYS_STATS_MULTI_H
#define ASYS_STATS_MULTI_H

#include <stddef.h>

#include "report_inputs.h"

/* Makes the partial of `input` at `path`: 0, or -1 after printing why. */
typedef int (*stats_partial_fn)(void *ctx, const char *input, const char *path);

struct stats_pool {
    const char *prog;
    const struct asys_report_inputs *inputs;
    long long jobs; /* worker processes; 0: the number of cores */
    int quiet;
    stats_partial_fn partial;
    void *ctx;
    const char *scheduler; /* Dask: the scheduler's address, or NULL */
    char *const *forward; /* Dask: the options each task's asys-stats --partial gets */
    int forward_count;
};

/* Makes every input's partial, DIR/N.partial for input N, in a fresh
 * temporary directory (its path in dir).  Returns the number of inputs that
 * failed (each said), or -1 after printing why nothing ran. */
int stats_pool_run(const struct stats_pool *pool, char *dir, size_t size);
/* Removes the directory and its partials. */
void stats_pool_clean(const char *dir, int count);

#endif
