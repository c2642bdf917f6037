/* Event sampling per thread (--event-sample process-tree): the launcher
 * follows the threads of the traced tree and gives each its own counters of
 * the chosen events, read by the event sampler's thread (event_sampler.c)
 * into EVENT_THREAD_COUNT records.
 *
 * Threads are found as perf finds them, with no work in the program: a
 * dummy software event per CPU, inherited by the tree, whose ring receives
 * PERF_RECORD_FORK and PERF_RECORD_EXIT of every thread and process of it.
 * A FORK opens the thread's counters (pid = tid, any CPU, not inherited), an
 * EXIT reads them a last time and closes them. */
#ifndef ASYS_EVENT_THREADS_H
#define ASYS_EVENT_THREADS_H

#include <linux/perf_event.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "asys_error.h"
#include "segment_writer.h"

/* Threads followed at once (each holds one descriptor per event). */
#define ASYS_EVENT_THREADS_MAX 1024

struct event_threads;

/* An event to count per thread: its id and the attributes its per-CPU
 * counters were opened with. */
struct event_thread_event {
    uint16_t id;
    struct perf_event_attr attr;
};

/* Starts following the threads of `target` (already forked; its threads
 * now are found in /proc) for `count` events; each thread's readings (the
 * first when its counters open) go into `seg`.  Fails (err says why) when
 * the dummy events cannot be opened; the caller goes on per CPU only. */
int asys_event_threads_start(pid_t target, const struct event_thread_event *events, size_t count,
                             struct asys_segment_writer *seg, struct event_threads **out,
                             struct asys_err *err);
/* The rings' descriptors to poll (POLLIN: task records to drain); how many. */
size_t asys_event_threads_poll_fds(const struct event_threads *t, struct pollfd *fds, size_t cap);
/* After a poll of those that returned: drains the rings, and leaves out of
 * later polls those that hung up (the traced tree has ended). */
void asys_event_threads_polled(struct event_threads *t, struct asys_segment_writer *seg,
                               struct pollfd *fds, size_t count);
/* Handles the FORK and EXIT records that came since the last call. */
void asys_event_threads_drain(struct event_threads *t, struct asys_segment_writer *seg);
/* One reading of every followed thread's counters. */
void asys_event_threads_read(struct event_threads *t, struct asys_segment_writer *seg);
/* A last reading, the summary status record, closes everything and frees
 * `t` (NULL is fine). */
void asys_event_threads_stop(struct event_threads *t, struct asys_segment_writer *seg);

#endif
