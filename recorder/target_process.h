/* Starting the profiled program and waiting for it (and, by default, for
 * every process it starts: the launcher is their subreaper). */
#ifndef ASYS_TARGET_PROCESS_H
#define ASYS_TARGET_PROCESS_H

#include <sys/types.h>
#include <stdint.h>
#include <time.h>

#include "asys_error.h"
#include "profile_options.h"
#include "target_env.h"

#define ASYS_SURVIVORS_LISTED 16

/* A descendant still running when asys stopped waiting. */
struct asys_survivor {
    pid_t pid;
    char name[16]; /* comm */
};

struct asys_target {
    pid_t pid;
    int status; /* wait status of the program once it ended */
    int ended;
    int stopped_by_user; /* a signal ended the wait for descendants */
    int interrupts; /* SIGINT/SIGTERM/SIGHUP/SIGQUIT received while it ran */
    struct timespec interrupt_hint_at; /* when to say how to stop it, if it still runs */
    int interrupt_hint_said;
    /* descendants still running when the wait ended (--wait primary, or a
     * signal that ended the wait for them): the first few, and how many */
    struct asys_survivor survivors[ASYS_SURVIVORS_LISTED];
    int survivor_count;
    /* --duration: the recording ends at duration_end (has_duration); the
     * program then gets duration_signal (0: none, it goes on); with
     * hold_until_duration (--stop-on-exit=false) the recording lasts until
     * then even when the program ended before */
    int has_duration;
    struct timespec duration_end;
    int duration_signal;
    int hold_until_duration;
    int duration_expired; /* the wait ended because the duration did */
    /* a call at a time (--delay: the recording opens): wake(wake_arg) once
     * at wake_at while has_wake */
    int has_wake;
    struct timespec wake_at;
    void (*wake)(void *arg);
    void *wake_arg;
};

/* Calls wake(arg) `seconds` from now, from within asys_target_wait. */
void asys_target_set_wake(struct asys_target *t, uint64_t seconds, void (*wake)(void *arg),
                          void *arg);

/* Sets the duration from now (seconds). */
void asys_target_set_duration(struct asys_target *t, uint64_t seconds, int signal, int hold);

/* Blocks the signals the launcher handles; call before creating anything a
 * signal should not interrupt. */
void asys_target_block_signals(void);

/* fork + exec with `env` set (LD_PRELOAD is prepended to any existing value).
 * With `die_with_us`, the program gets SIGTERM when asys dies (kill -9 of
 * asys would otherwise leave it running as an orphan, unrecorded).  A
 * program that cannot be executed is an error (errno text and kind).  With
 * `hide_output` its stdout and stderr go to /dev/null.
 * `before_exec` (NULL: none) runs in the launcher between fork and exec,
 * while the child waits: what it attaches to the child's pid (perf events
 * with inherit) then sees the program from its first instruction. */
int asys_target_spawn(struct asys_target *t, char **argv, const struct asys_env *env,
                      int die_with_us, int hide_output, void (*before_exec)(pid_t child, void *arg),
                      void *before_exec_arg, struct asys_err *err);

/* Waits, calling tick() about every `tick_ms`; SIGINT/SIGTERM/SIGHUP/SIGQUIT
 * sent to the launcher by a process are forwarded to the program (the
 * terminal already delivers its own to the whole process group); a second
 * one sends the program SIGTERM, a third SIGKILL (each said on stderr). */
void asys_target_wait(struct asys_target *t, enum asys_wait_mode mode, void (*tick)(void *),
                      void *tick_arg, int tick_ms);

/* Fills t->survivors with the launcher's descendants that still run (from
 * /proc: the launcher is their subreaper, so each one's parent chain leads
 * to it). */
void asys_target_find_survivors(struct asys_target *t);

/* The exit status asys itself returns: the program's code, or 128+signal. */
int asys_target_exit_code(const struct asys_target *t);

#endif
