/* The critical path through ppu_deps, and dependency graphs for Graphviz. */
#ifndef ASYS_DEPS_PATH_H
#define ASYS_DEPS_PATH_H

#include <sqlite3.h>
#include <stdio.h>

#include "asys_error.h"

struct asys_critical_path_window {
    long long start_ns; /* absolute; LLONG_MIN: open */
    long long end_ns; /* absolute; LLONG_MAX: open */
};

/* Walks back from the activity that ended last in the window: at each step
 * the constraint that let the activity start last (a dependency's end, or the
 * host's launch call; behind a launch call, a host wait on device work) is
 * the step before.  Fills temp.path_steps (seq 1 = the last activity); stops
 * at the window's start.  Returns 0 or -1 with err. */
int asys_critical_path_build(sqlite3 *db, const struct asys_critical_path_window *w,
                             struct asys_err *err);

/* Lists temp.path_steps first step first (binds :session_start). */
extern const char asys_critical_path_sql[];

/* Writes a Graphviz digraph of the activities `ids_sql` selects (a query of
 * ids) and the dependencies between them: effective ones, or all when `all`. */
int asys_deps_dot(sqlite3 *db, FILE *out, const char *ids_sql, long long session_start, int all,
                  struct asys_err *err);

#endif
