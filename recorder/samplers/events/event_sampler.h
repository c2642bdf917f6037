/* Event sampling (--event-sample): counters of CPU core and OS events
 * (common/event_catalog.h), one per event and CPU, opened by the launcher
 * with perf_event_open and read by a thread of its own (event_sampler.c). */
#ifndef ASYS_EVENT_SAMPLER_H
#define ASYS_EVENT_SAMPLER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "asys_error.h"

struct event_sampler;

/* Opens the counters of the events `ids` (catalogue ids) on every CPU, for
 * the process tree of `target` (counters inherited by its children) or the
 * whole system, and reads them `frequency_hz` times a second into
 * SESSION/segments/events.seg; with `per_thread` (the process tree only),
 * each thread of the tree gets counters of its own too (event_threads.h).
 * An event this machine cannot count gets one line on stderr and a status
 * record; the others go on.  Fails only when no counter at all could be
 * opened (err says why). */
int asys_event_sampler_start(const char *session_dir, pid_t target, int system_wide, int per_thread,
                             const uint16_t *ids, size_t count, uint64_t frequency_hz,
                             struct event_sampler **out, struct asys_err *err);
/* A last reading, then closes everything; frees `s` (NULL is fine). */
void asys_event_sampler_stop(struct event_sampler *s);

#endif
