/* The Chrome JSON (Trace Event Format) backend of the timeline: the object
 * form {"traceEvents": [...]}, loaded by Perfetto and chrome://tracing. */
#ifndef ASYS_SINK_JSON_H
#define ASYS_SINK_JSON_H

#include <stdint.h>
#include <stdio.h>

#include "timeline.h"

struct asys_json_sink;

/* Timestamps are microseconds since `base_ns` (the report's start). */
struct asys_json_sink *asys_json_sink_new(FILE *out, int64_t base_ns);
/* Writes the closing bracket; returns 0 or -1 (a write failed). */
int asys_json_sink_finish(struct asys_json_sink *s);
void asys_json_sink_free(struct asys_json_sink *s);

extern const struct tl_sink_ops asys_json_sink_ops;

#endif
