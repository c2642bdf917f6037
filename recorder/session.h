/* A recording session: the temporary directory the target's segments go to,
 * and the launcher's own segment with the clock calibration pairs. */
#ifndef ASYS_SESSION_H
#define ASYS_SESSION_H

#include <limits.h>
#include <pthread.h>
#include <stdint.h>

#include "asys_error.h"
#include "clock.h"
#include <time.h>

#include "segment_writer.h"

#define ASYS_SESSION_FILE "session.json"
#define ASYS_LAUNCHER_SEGMENT "launcher.seg"

struct asys_session {
    char dir[PATH_MAX];
    char segment_dir[PATH_MAX];
    int clock_kind;
    struct asys_segment_writer launcher;
    int launcher_open;
    struct asys_clock_pair start;
    /* the arena, open for the program's processes to inherit (a process
     * that cannot open it by path still records): -1 once released */
    int arena_fd;
    char arena_fd_env[64]; /* "FD:DEV:INO" for ASYS_ARENA_FD */
    /* the arena's control block, where each calibration pair is published
     * for the processes' segment headers; NULL once the launcher closed */
    struct asys_arena_control *control;
};

/* Creates $TMPDIR/asys-XXXXXX/segments with the arena the threads' segments
 * go into (slots of `slot_size` bytes) and the launcher segment, and takes
 * the first calibration pair. */
int asys_session_create(struct asys_session *s, uint64_t slot_size, struct asys_err *err);
/* Closes the launcher's copy of the inherited arena descriptor (the program
 * has its own once it started). */
void asys_session_release_arena_fd(struct asys_session *s);
/* Clock ticks per second measured since the session started (at least 2 ms
 * later): lets the program convert ns thresholds without measuring itself. */
uint64_t asys_session_tick_hz(const struct asys_session *s);
/* Appends a CLOCK_PAIR record (start, every second, end). */
void asys_session_clock_pair(struct asys_session *s);
/* Final pair and clean close of the launcher segment. */
void asys_session_close_launcher(struct asys_session *s);
/* A segment of a launcher sampler: SESSION/segments/NAME.seg, written by
 * the launcher (thread index `index`, one per sampler) on CLOCK_MONOTONIC,
 * holding the records of `features` besides the core ones. */
int asys_session_sampler_segment(struct asys_segment_writer *w, const char *session_dir,
                                 const char *name, uint32_t index, uint64_t features,
                                 struct asys_err *err);
/* Moves `*t` `ns` nanoseconds on. */
void asys_session_advance(struct timespec *t, uint64_t ns);
/* A condition variable whose timed waits are deadlines on CLOCK_MONOTONIC
 * (the launcher's threads' clock, which wall-clock changes do not move). */
void asys_session_cond_init(pthread_cond_t *c);
/* Sleeps until `*next` + `period_ns` (absolute, CLOCK_MONOTONIC) and moves
 * `*next` there: a sampler's steady rate, whatever its work took. */
void asys_session_wait_period(struct timespec *next, uint64_t period_ns);

/* Opens (on = 1, as recording number `window`) or closes (on = 0) the
 * recording of every process of a session whose program runs with
 * ASYS_CAPTURE_RANGE=session, through the arena's control block. */
int asys_session_set_recording(const char *session_dir, int on, uint32_t window, uint32_t options,
                               struct asys_err *err);
/* The session's arena control block, mapped shared (NULL, with why in
 * `err`, when it cannot be); unmapped by asys_session_control_unmap. */
struct asys_arena_control *asys_session_control_map(const char *session_dir, struct asys_err *err);
void asys_session_control_unmap(struct asys_arena_control *c);
/* Waits, at most `timeout_ms`, for asys launch's samplers to answer:
 * samplers_window == `window` (0: stopped, their segments written);
 * 0 when they did, -1 on timeout. */
int asys_session_wait_samplers(const char *session_dir, uint32_t window, int timeout_ms);
/* Removes the segments the launcher's samplers wrote for an earlier
 * recording (packed into its report), so that they start anew. */
void asys_session_remove_sampler_segments(const char *session_dir);

/* Removes the session directory and everything in it. */
void asys_session_remove_dir(const char *dir);

#endif
