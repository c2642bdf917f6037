/* The Perfetto protobuf backend of the timeline (.pftrace). */
#ifndef ASYS_SINK_PFTRACE_H
#define ASYS_SINK_PFTRACE_H

#include <stdint.h>
#include <stdio.h>

#include "timeline.h"

struct asys_pftrace_sink;

/* Writes to `out`; `start_ns` anchors the trace clock (CLOCK_MONOTONIC ns). */
struct asys_pftrace_sink *asys_pftrace_sink_new(FILE *out, int64_t start_ns);
/* CLOCK_BOOTTIME - CLOCK_MONOTONIC as recorded: the trace's clock snapshot
 * then relates the two (trace_processor puts traces on BOOTTIME). */
void asys_pftrace_sink_set_boottime(struct asys_pftrace_sink *s, int64_t boottime_minus_monotonic);
/* Writes what is still buffered; returns 0 or -1 (a write failed). */
int asys_pftrace_sink_finish(struct asys_pftrace_sink *s);
void asys_pftrace_sink_free(struct asys_pftrace_sink *s);

extern const struct tl_sink_ops asys_pftrace_sink_ops;

#endif
