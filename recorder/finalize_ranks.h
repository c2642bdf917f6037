/* --multi-node-mode true around a launcher that starts several ranks
 * (torchrun, mpirun on one node): the rank of each of the program's
 * processes, from what the injected library kept of their environment
 * (SESSION/ranks/PID), so that finalize writes one report per rank. */
#ifndef ASYS_FINALIZE_RANKS_H
#define ASYS_FINALIZE_RANKS_H

#include <stddef.h>
#include <stdint.h>

#include "rank_env.h"

struct asys_process_rank {
    uint32_t pid;
    struct asys_rank rank;
};

struct asys_rank_map {
    struct asys_process_rank *items;
    size_t count, cap;
    size_t refused; /* files whose variables hold no valid rank */
};

/* Reads SESSION/ranks/ (none there: an empty map).  0, or -1 out of memory. */
int asys_rank_map_read(const char *session_dir, struct asys_rank_map *map);
void asys_rank_map_free(struct asys_rank_map *map);
/* The rank of `pid`, or NULL. */
const struct asys_rank *asys_rank_map_find(const struct asys_rank_map *map, uint32_t pid);

/* asys profile kept -o's %r when it had no rank itself (multi-node mode):
 * whether `path` still has it. */
int asys_report_path_has_rank(const char *path);
/* The report of rank `rank` (-1: a recording without ranks, "all"): %r
 * replaced, or "_rankN" before .asys-rep when the name has no %r and
 * `insert` is set.  -1 when it does not fit. */
int asys_rank_report_path(const char *path, long rank, int insert, char *out, size_t size);

#endif
