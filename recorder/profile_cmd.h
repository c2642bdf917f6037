/* The parts of `asys profile` that `asys launch` (session_cmd.c) shares:
 * the checks before a run, the session directory and the program's
 * environment. */
#ifndef ASYS_PROFILE_CMD_H
#define ASYS_PROFILE_CMD_H

#include "asys_error.h"
#include "profile_options.h"
#include "session.h"
#include "target_env.h"

/* The errno execvp would fail with for `name` (0 if it can be run). */
int asys_profile_program_error(const char *name);
/* The session directory with session.json; removed again on failure. */
int asys_profile_start_session(const struct asys_profile_options *o, const char *report_path,
                               struct asys_session *session, struct asys_err *err);
/* The session and every collector option, for the injected library. */
int asys_profile_target_environment(const struct asys_collector_setup *setup,
                                    const struct asys_session *session, struct asys_env *env,
                                    struct asys_err *err);
/* -e NAME=VALUE,...: into the program's environment. */
int asys_profile_add_env_vars(const struct asys_profile_options *o, struct asys_env *env,
                              struct asys_err *err);

/* The launcher-side samplers of the collectors a run records. */
struct asys_samplers {
    const struct asys_collector *collector[16];
    void *state[16];
    int count;
};
/* Which samplers asys_samplers_start starts: those started between fork
 * and exec, those started once the program runs, or all of them (a
 * session's recording: the program runs already). */
enum asys_sampler_phase { ASYS_SAMPLERS_BEFORE_EXEC, ASYS_SAMPLERS_AFTER_EXEC, ASYS_SAMPLERS_ALL };
/* Starts the phase's samplers of the collectors setup->options records
 * on `target`; one that cannot start is said (a warning) and left out. */
void asys_samplers_start(const struct asys_collector_setup *setup, pid_t target,
                         enum asys_sampler_phase phase, struct asys_samplers *s);
/* Whether any collector `o` records has a launcher-side sampler. */
int asys_samplers_any(const struct asys_profile_options *o);
/* Stops them, the last started first (each writes its segments). */
void asys_samplers_stop(struct asys_samplers *s);

#endif
