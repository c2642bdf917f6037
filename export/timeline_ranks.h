/* Several reports on one timeline (asys-export REPORTS... or a directory;
 * issue 27.3): each report drawn by the usual walk through a view that puts
 * it beside the others.  Its times move onto the first report's clock by the
 * difference of their CLOCK_REALTIME - CLOCK_MONOTONIC offsets (the hosts'
 * realtime clocks are the shared axis), its track ids, name ids and flow ids
 * get a space of their own, its pids and tids are moved out of each other's
 * way (two hosts may run the same pid), and its top-level tracks are named
 * and ordered by rank ("rank 3 (node7): train (4711)"). */
#ifndef ASYS_TIMELINE_RANKS_H
#define ASYS_TIMELINE_RANKS_H

#include <stddef.h>
#include <stdint.h>

#include "timeline.h"

/* Pids and tids move by (index + 1) << 22 (Linux's pid_max is at most 2^22),
 * which fits Perfetto's int32 for this many reports. */
#define TL_RANKS_MAX 511

struct tl_rank_view {
    const struct tl_sink_ops *ops; /* the backend */
    void *sink;
    uint32_t index; /* the report's place in the timeline, from 0 */
    int64_t shift_ns; /* added to every time of this report */
    char label[160]; /* "rank 3 (node7)" */
    /* scratch: a track's new name, an event's remapped flows */
    char name[512], label_name[512];
    uint64_t *flows;
    size_t flow_cap;
};

extern const struct tl_sink_ops tl_rank_view_ops;

void tl_rank_view_free(struct tl_rank_view *v);

#endif
