/* The report of one recording window (asys stop): a session's arena holds
 * every window recorded so far, and each injected thread's segment is
 * written into the report without the events of the other windows.  What
 * is kept: every timeless record (strings, processes, threads, domains,
 * devices: asys_rec_window_kind), the window's events and the device work
 * that started in it, each at its own timestamp (deltas recomputed, a
 * TIME_BASE where one does not fit).  The decision is the importer's: the
 * same list, the same clock pairs (the manifest's clock.pairs), so the
 * report imports to what the whole segment did, at a size that no longer
 * grows with the windows recorded before. */
#ifndef ASYS_WINDOW_FILTER_H
#define ASYS_WINDOW_FILTER_H

#include <cJSON.h>
#include <stdint.h>

#include "asys_error.h"
#include "clock_map.h"
#include "segment_stream.h"

struct asys_window_filter {
    int active; /* 0: the report is of no window (asys profile, finalize of a whole run) */
    uint64_t start_ns, end_ns; /* the window, CLOCK_MONOTONIC */
    struct asys_clock_map clock; /* ticks to ns, as the importer converts them */
    uint8_t *buffer; /* the output, gathered before it is written */
    size_t used;
    uint64_t left_out; /* records the segments written so far left out */
};

/* From the manifest's recording_window and clock.pairs (added by finalize
 * before): inactive when there is no window.  -1 only when out of memory. */
int asys_window_filter_init(struct asys_window_filter *f, const cJSON *manifest,
                            struct asys_err *err);
void asys_window_filter_free(struct asys_window_filter *f);

/* Writes the segment read through `read` (its first `size` bytes) to `fd`
 * at offset `at`, without the records the window leaves out: its length
 * in *written, its records (PAD not counted) in *records.
 * -1 with an error when it cannot be read to `size` or written. */
int asys_window_filter_segment(struct asys_window_filter *f, asys_read_fn read, void *ctx,
                               uint64_t size, int fd, uint64_t at, uint64_t *written,
                               uint64_t *records, struct asys_err *err);

/* An asys_read_fn over a range of a file (ctx: this struct), for the
 * archive writer to copy what asys_window_filter_segment wrote. */
struct asys_file_range {
    int fd;
    uint64_t position, end;
};
long asys_file_range_read(void *range, void *buffer, size_t size);

#endif
