/* asys profile [options] <program> [args...] */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arena_compressor.h"
#include "asys_commands.h"
#include "finalize.h"
#include "install_paths.h"
#include "json_util.h"
#include "manifest.h"
#include "profile_cmd.h"
#include "profile_options.h"
#include "report_path.h"
#include "rank_env.h"
#include "session.h"
#include "notes.h"
#include "symbolize.h"
#include "target_process.h"

#define PROG "asys profile"
#define CLOCK_PAIR_INTERVAL_MS 1000

static int is_executable_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* The errno execvp would fail with for `name` (0 if it can be run), checked
 * before anything is printed or created. */
int asys_profile_program_error(const char *name)
{
    if (strchr(name, '/'))
        return is_executable_file(name) ? 0 : access(name, F_OK) == 0 ? EACCES : ENOENT;
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/bin:/usr/bin";
    int found_unexecutable = 0;
    while (*path) {
        size_t n = strcspn(path, ":");
        char candidate[PATH_MAX];
        snprintf(candidate, sizeof candidate, "%.*s%s%s", (int)n, n ? path : ".", "/", name);
        if (is_executable_file(candidate))
            return 0;
        if (access(candidate, F_OK) == 0)
            found_unexecutable = 1;
        path += n + (path[n] == ':');
    }
    return found_unexecutable ? EACCES : ENOENT;
}

static void warn_unavailable(const struct asys_profile_options *o)
{
    char names[256];
    uint64_t planned = 0;
    for (const struct asys_collector *const *c = asys_collectors; *c; c++)
        if (!(*c)->built)
            planned |= (*c)->feature;
    asys_collector_names(o->features & planned, 0, ", ", names, sizeof names);
    if (names[0])
        fprintf(stderr, "%s: warning: not built into this asys yet, recording without: %s\n", PROG,
                names);
    for (int i = 0; i < o->given_count; i++)
        if (!o->given[i].supported)
            fprintf(stderr, "%s: warning: --%s is not implemented in this asys yet; ignored\n",
                    PROG, o->given[i].name);
}

/* --delay is over: every process of the session records from now on. */
static void open_delayed_window(void *session_dir)
{
    struct asys_err err = {0};
    if (asys_session_set_recording(session_dir, 1, 1, 0, &err) != 0)
        fprintf(stderr, "%s: warning: --delay: cannot start recording: %s\n", PROG, err.text);
}

static void tick(void *arg)
{
    asys_session_clock_pair(arg);
}

static void format_size(uint64_t bytes, char *out, size_t size)
{
    if (bytes >= (10ull << 20))
        snprintf(out, size, "%.1f MiB", (double)bytes / (1 << 20));
    else if (bytes >= 10240)
        snprintf(out, size, "%.1f KiB", (double)bytes / 1024);
    else
        snprintf(out, size, "%" PRIu64 " bytes", bytes);
}

/* The session directory with session.json; removed again on failure. */
int asys_profile_start_session(const struct asys_profile_options *o, const char *report_path,
                               struct asys_session *session, struct asys_err *err)
{
    if (asys_session_create(session, o->chunk_size, err) != 0)
        return -1;
    char session_file[PATH_MAX + 32];
    snprintf(session_file, sizeof session_file, "%s/%s", session->dir, ASYS_SESSION_FILE);
    cJSON *desc = asys_session_json_new(o, session, report_path);
    int rc = asys_json_save(session_file, desc, err);
    cJSON_Delete(desc);
    if (rc != 0) {
        asys_session_close_launcher(session);
        asys_session_remove_dir(session->dir);
    }
    return rc;
}

/* The session and every collector option, for the injected library. */
int asys_profile_target_environment(const struct asys_collector_setup *setup,
                                    const struct asys_session *session, struct asys_env *env,
                                    struct asys_err *err)
{
    char tick_hz[32];
    snprintf(tick_hz, sizeof tick_hz, "%" PRIu64, asys_session_tick_hz(session));
    if (asys_env_set(env, "LD_PRELOAD", setup->inject_library, err) != 0 ||
        asys_env_set(env, "NVTX_INJECTION64_PATH", setup->inject_library, err) != 0 ||
        asys_env_set(env, "ASYS_SESSION_DIR", session->dir, err) != 0 ||
        asys_env_set(env, "ASYS_CLOCK", asys_clock_name(session->clock_kind), err) != 0 ||
        asys_env_set(env, "ASYS_TICK_HZ", tick_hz, err) != 0 ||
        (session->arena_fd_env[0] &&
         asys_env_set(env, ASYS_ARENA_FD_ENV, session->arena_fd_env, err) != 0))
        return -1;
    if (asys_profile_environment(setup->options, setup, env, err) != 0)
        return -1;
    /* the recorder's libraries first, so they see every call the user's see */
    const char *user_preload = getenv("LD_PRELOAD");
    return user_preload && *user_preload
               ? asys_env_append(env, "LD_PRELOAD", user_preload, ':', err)
               : 0;
}

void asys_samplers_start(const struct asys_collector_setup *setup, pid_t target,
                         enum asys_sampler_phase phase, struct asys_samplers *s)
{
    for (const struct asys_collector *const *c = asys_collectors; *c; c++) {
        if (!(*c)->start || !asys_profile_collects(setup->options, *c) || s->count == 16 ||
            (phase == ASYS_SAMPLERS_BEFORE_EXEC && !(*c)->start_before_exec) ||
            (phase == ASYS_SAMPLERS_AFTER_EXEC && (*c)->start_before_exec))
            continue;
        struct asys_err err = {0};
        void *state = NULL;
        if ((*c)->start(setup, target, &state, &err) != 0) {
            /* the recording goes on without it; the manifest says why */
            fprintf(stderr, "%s: warning: %s: %s\n", PROG, (*c)->name, err.text);
            continue;
        }
        s->collector[s->count] = *c;
        s->state[s->count++] = state;
    }
}

int asys_samplers_any(const struct asys_profile_options *o)
{
    for (const struct asys_collector *const *c = asys_collectors; *c; c++)
        if ((*c)->start && asys_profile_collects(o, *c))
            return 1;
    return 0;
}

struct sampler_start {
    const struct asys_collector_setup *setup;
    struct asys_samplers *samplers;
};

static void start_samplers_before_exec(pid_t child, void *arg)
{
    struct sampler_start *s = arg;
    asys_samplers_start(s->setup, child, ASYS_SAMPLERS_BEFORE_EXEC, s->samplers);
}

/* Whether a sampler of this run starts before exec (the child then waits for it). */
static int any_before_exec(const struct asys_profile_options *o)
{
    for (const struct asys_collector *const *c = asys_collectors; *c; c++)
        if ((*c)->start && (*c)->start_before_exec && asys_profile_collects(o, *c))
            return 1;
    return 0;
}

/* A sampler that lost part of its data says so; the report keeps the rest. */
void asys_samplers_stop(struct asys_samplers *s)
{
    for (int i = s->count - 1; i >= 0; i--) {
        struct asys_err err = {0};
        if (s->collector[i]->stop(s->state[i], &err) != 0)
            asys_note(ASYS_NOTE_WARNING, "%s: %s", s->collector[i]->name, err.text);
    }
    s->count = 0;
}

/* The last line: processes that ran on after asys stopped waiting. */
static void warn_survivors(const struct asys_target *t, enum asys_wait_mode mode)
{
    if (!t->survivor_count)
        return;
    char list[256] = "";
    size_t used = 0;
    for (int i = 0; i < t->survivor_count && i < ASYS_SURVIVORS_LISTED && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%d (%s)", i ? ", " : "",
                                 (int)t->survivors[i].pid, t->survivors[i].name);
    fprintf(stderr,
            "asys: warning: %d process%s still running when the report was written (%s): "
            "%s%s; what %s after that is not recorded (see report_info)\n",
            t->survivor_count, t->survivor_count == 1 ? " was" : "es were",
            mode == ASYS_WAIT_PRIMARY ? "--wait primary" : "interrupted", list,
            t->survivor_count > ASYS_SURVIVORS_LISTED ? ", ..." : "",
            t->survivor_count == 1 ? "it did" : "they did");
}

static void report_written(const char *report_path, const struct asys_finalize_result *res)
{
    char size[32];
    format_size(res->report_bytes, size, sizeof size);
    for (size_t i = 0; i < res->rank_report_count; i++)
        fprintf(stderr, "asys: report written: '%s'\n", res->rank_reports[i]);
    if (res->rank_report_count)
        fprintf(stderr, "asys: %zu reports, one per rank (%s, %" PRIu64 " records",
                res->rank_report_count, size, res->records);
    else
        fprintf(stderr, "asys: report written: '%s' (%s, %" PRIu64 " records", report_path, size,
                res->records);
    if (res->dropped_records)
        fprintf(stderr, ", %" PRIu64 " dropped", res->dropped_records);
    fprintf(stderr, ")\n");
    if (res->lost_threads)
        fprintf(stderr,
                "asys: warning: %" PRIu64 " threads could not record (%s): their %" PRIu64
                " events are lost\n",
                res->lost_threads, strerror(res->lost_thread_errno), res->lost_thread_records);
    if (res->lost_processes)
        fprintf(stderr,
                "asys: warning: %" PRIu64 " process%s could not record (%s; the last: pid %u): "
                "their %" PRIu64 " events are lost\n",
                res->lost_processes, res->lost_processes == 1 ? "" : "es",
                strerror(res->lost_process_errno), res->lost_process_pid,
                res->lost_process_records);
    if (res->dropped_no_room)
        fprintf(stderr,
                "asys: warning: %" PRIu64 " records were lost because the session could not "
                "grow (%s)\n",
                res->dropped_no_room, strerror(res->no_room_errno));
    asys_finalize_warn_damage(res);
    if (res->nvtx_replaced)
        fprintf(stderr,
                "asys: warning: process %u%s changed NVTX_INJECTION64_PATH, so NVTX loaded another "
                "tool: HGTX annotations loaded after that are not recorded (see report_info)\n",
                res->nvtx_replaced_pid, res->nvtx_replaced > 1 ? " and others" : "");
}

/* -e NAME=VALUE,...: into the program's environment (LD_PRELOAD's after
 * the recorder's libraries, which would not record otherwise). */
int asys_profile_add_env_vars(const struct asys_profile_options *o, struct asys_env *env,
                              struct asys_err *err)
{
    for (const char *p = o->env_vars; p && *p;) {
        size_t len = strcspn(p, ",");
        const char *eq = memchr(p, '=', len);
        char name[256], value[ASYS_OPTION_TEXT_MAX];
        if (!eq || (size_t)(eq - p) >= sizeof name)
            return asys_fail(err, "-e: bad NAME=VALUE");
        snprintf(name, sizeof name, "%.*s", (int)(eq - p), p);
        snprintf(value, sizeof value, "%.*s", (int)(len - (size_t)(eq - p) - 1), eq + 1);
        if ((strcmp(name, "LD_PRELOAD") ? asys_env_set(env, name, value, err)
                                        : asys_env_append(env, name, value, ':', err)) != 0)
            return -1;
        p += len + (p[len] == ',');
    }
    return 0;
}

/* Runs a tool of ours (asys-stats, asys-export) beside this executable on
 * the new report; its exit status, or -1 when it could not run. */
static int run_tool(const char *tool, char *const *args)
{
    char path[PATH_MAX];
    if (asys_sibling_path(tool, path, sizeof path) != 0)
        return -1;
    char *argv[8];
    size_t n = 0;
    argv[n++] = path;
    for (; *args && n < 7; args++)
        argv[n++] = *args;
    argv[n] = NULL;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        /* the files libdw opened for finalize (without O_CLOEXEC) are left
         * open to this process's exit: the tool gets none of them */
        if (close_range(3, ~0u, 0) != 0)
            for (int fd = 3; fd < 4096; fd++)
                close(fd);
        execv(path, argv);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* --stats and --export: the default reports, and each export beside the
 * report (NAME.TYPE); 0, or -1 when one failed (it said why). */
static int after_the_report(const struct asys_profile_options *o, const char *report_path)
{
    int failed = 0;
    char report[PATH_MAX];
    snprintf(report, sizeof report, "%s", report_path);
    if (o->run_stats) {
        char *args[] = {report, NULL};
        failed |= run_tool("asys-stats", args) != 0;
    }
    for (const char *p = o->exports; p && *p && strcmp(p, "none");) {
        size_t len = strcspn(p, ",");
        char type[16];
        snprintf(type, sizeof type, "%.*s", (int)(len < sizeof type ? len : sizeof type - 1), p);
        p += len + (p[len] == ',');
        if (!strcmp(type, "none"))
            continue;
        char force[] = "--force-overwrite", t_opt[] = "-t";
        /* -f replaces exports as it replaces the report */
        char *forced[] = {t_opt, type, force, report, NULL};
        char *plain[] = {t_opt, type, report, NULL};
        char **args = o->force_overwrite ? forced : plain;
        if (run_tool("asys-export", args) != 0) {
            fprintf(stderr, "%s: --export %s: asys-export failed\n", PROG, type);
            failed = 1;
        }
    }
    return failed ? -1 : 0;
}

/* -o's patterns; with --multi-node-mode true and no rank in asys's own
 * environment %r is kept: the program's processes' ranks name the reports. */
static int expand_output(const struct asys_profile_options *o, long pid, char *out, size_t size,
                         struct asys_err *err)
{
    struct asys_rank rank;
    struct asys_err ignored = {0};
    if (asys_profile_value(o, "multi-node-mode")->number && asys_rank_detect(&rank, &ignored) == 0)
        return asys_output_pattern_expand_keeping_rank(o->output, pid, out, size, err);
    return asys_output_pattern_expand(o->output, pid, out, size, err);
}

/* -o with %p: the name now that the program's pid is known, checked at once
 * (a name taken is said now, not after the run) and kept in session.json
 * for asys finalize. */
/* ASYS_ARENA_COMPRESS (unset: the default; "0", off, is handled before):
 * "all" makes finalize wait for every sealed slot and keeps them in the
 * arena (tests compare with a finalize without the frames), "eager"
 * compresses whether a CPU is idle or not (tests), "keep" keeps compressed
 * slots in the arena (comparisons). */
static unsigned compress_flags(const char *early)
{
    if (early && !strcmp(early, "all"))
        return ASYS_COMPRESS_FINISH_ALL;
    if (early && !strcmp(early, "eager"))
        return ASYS_COMPRESS_EAGER | ASYS_COMPRESS_RELEASE;
    return early && !strcmp(early, "keep") ? 0 : ASYS_COMPRESS_RELEASE;
}

static void name_with_pid(const struct asys_profile_options *o, const struct asys_session *session,
                          pid_t pid, char *report_path, size_t size)
{
    struct asys_err err = {0};
    char expanded[PATH_MAX], resolved[PATH_MAX] = "";
    /* the pattern expanded with pid 0 before, so only the check can fail */
    if (expand_output(o, (long)pid, expanded, sizeof expanded, &err) != 0)
        return;
    if (asys_report_path_resolve(expanded, o->force_overwrite, resolved, sizeof resolved, &err) !=
        0)
        fprintf(stderr, "%s: warning: the report cannot be written to '%s': %s\n", PROG, resolved,
                err.text);
    if (!*resolved)
        return;
    snprintf(report_path, size, "%s", resolved);
    char session_file[PATH_MAX + 32];
    snprintf(session_file, sizeof session_file, "%s/%s", session->dir, ASYS_SESSION_FILE);
    cJSON *desc = asys_session_json_new(o, session, report_path);
    if (asys_json_save(session_file, desc, &err) != 0)
        fprintf(stderr, "%s: warning: %s\n", PROG, err.text);
    cJSON_Delete(desc);
}

static int record(const struct asys_profile_options *o, char *report_path, size_t report_path_size)
{
    struct asys_err err = {0};
    struct asys_session session;
    struct asys_target target;
    struct asys_samplers samplers = {.count = 0};
    static struct asys_env env; /* 16 KiB of text: not on the stack */
    char inject[PATH_MAX];
    struct asys_arena_compressor *compressor = NULL;
    struct asys_symbolizer *symbolizer = NULL;
    int rc = ASYS_EXIT_FAILURE, have_session = 0, keep_session = 0;
    if (asys_inject_library_path(inject, sizeof inject) != 0) {
        const char *forced = getenv("ASYS_INJECT_LIB");
        if (forced && *forced)
            fprintf(stderr, "%s: cannot read '%s' (ASYS_INJECT_LIB)\n", PROG, forced);
        else
            fprintf(stderr,
                    "%s: cannot find '" ASYS_INJECT_LIBRARY_NAME
                    "' (looked in ../lib next to asys; set ASYS_INJECT_LIB)\n",
                    PROG);
        goto out;
    }
    if (strpbrk(inject, " :"))
        fprintf(stderr, "%s: warning: '%s' contains a space or colon; LD_PRELOAD cannot name it\n",
                PROG, inject);
    asys_target_block_signals();
    if (asys_profile_start_session(o, report_path, &session, &err) != 0) {
        fprintf(stderr, "%s: cannot start a session: %s\n", PROG, err.text);
        goto out;
    }
    have_session = 1;
    uint64_t merged = asys_profile_merge_inject(o, inject, sizeof inject);
    /* frames resolved while the program runs (the CPU sampler's), libc read
     * by the warmer meanwhile: both best effort, finalize does the rest */
    symbolizer = asys_symbolizer_new();
    if (symbolizer)
        asys_symbolizer_adopt(symbolizer, asys_symbols_warmer_start());
    struct asys_collector_setup setup = {o, inject, session.dir, 0, 0, merged, symbolizer, 1};
    if (asys_profile_target_environment(&setup, &session, &env, &err) != 0) {
        fprintf(stderr, "%s: cannot start a session: %s\n", PROG, err.text);
        goto out;
    }
    struct sampler_start sampler_start = {&setup, &samplers};
    /* --delay: one window, opened from here when the delay ends */
    if (o->delay_s && asys_env_set(&env, "ASYS_CAPTURE_RANGE", "session", &err) != 0) {
        fprintf(stderr, "%s: cannot start a session: %s\n", PROG, err.text);
        goto out;
    }
    if (asys_profile_add_env_vars(o, &env, &err) != 0) {
        fprintf(stderr, "%s: cannot start a session: %s\n", PROG, err.text);
        goto out;
    }
    if (asys_target_spawn(&target, o->target_argv, &env, o->kill_on_exit, !o->show_output,
                          any_before_exec(o) ? start_samplers_before_exec : NULL, &sampler_start,
                          &err) != 0) {
        asys_samplers_stop(&samplers);
        fprintf(stderr, "%s: cannot run '%s': %s\n", PROG, o->target_argv[0], err.text);
        rc = asys_exec_exit_code(&err);
        goto out;
    }
    asys_session_release_arena_fd(&session); /* the program holds its own */
    if (o->duration_s) /* nsys counts it from the end of --delay */
        asys_target_set_duration(&target, o->delay_s + o->duration_s, o->kill_signal,
                                 !o->stop_on_exit);
    if (o->delay_s)
        asys_target_set_wake(&target, o->delay_s, open_delayed_window, session.dir);
    if (o->output && asys_output_pattern_has_pid(o->output))
        name_with_pid(o, &session, target.pid, report_path, report_path_size);
    asys_samplers_start(&setup, target.pid, ASYS_SAMPLERS_AFTER_EXEC, &samplers);
    /* after the fork: best effort, without it finalize compresses every slot */
    const char *early = getenv("ASYS_ARENA_COMPRESS");
    if ((!early || strcmp(early, "0")) &&
        asys_arena_compressor_start(session.dir, compress_flags(early), &compressor, &err) != 0)
        fprintf(stderr, "%s: notice: %s\n", PROG, err.text);
    asys_target_wait(&target, o->wait, tick, &session, CLOCK_PAIR_INTERVAL_MS);
    asys_target_find_survivors(&target);
    asys_samplers_stop(&samplers);
    asys_arena_compressor_finish(compressor);
    asys_session_close_launcher(&session);
    if (WIFSIGNALED(target.status))
        fprintf(stderr, "asys: '%s' was terminated by signal %d (%s)\n", o->target_argv[0],
                WTERMSIG(target.status), strsignal(WTERMSIG(target.status)));
    struct asys_finalize_result res;
    /* exiting: what finalize's symbolizer holds goes with the process */
    struct asys_finalize_aids aids = {compressor, NULL, symbolizer, 1};
    compressor = NULL; /* finalize stops them */
    symbolizer = NULL;
    if (asys_finalize(session.dir, report_path, o->force_overwrite, &target, &aids, &res, &err) !=
        0) {
        /* the recording is whole in the session directory: keep it */
        fprintf(stderr, "%s: cannot write '%s': %s\n", PROG, report_path, err.text);
        fprintf(stderr,
                "asys: the recording is kept in '%s'; 'asys finalize %s -o %s' writes the report "
                "once that is fixed\n",
                session.dir, session.dir, report_path);
        keep_session = 1;
        goto out;
    }
    report_written(report_path, &res);
    int after_failed = 0;
    if (res.rank_report_count)
        for (size_t i = 0; i < res.rank_report_count; i++)
            after_failed |= after_the_report(o, res.rank_reports[i]) != 0;
    else
        after_failed = after_the_report(o, report_path) != 0;
    asys_finalize_result_free(&res);
    if (target.duration_expired && !target.ended) {
        /* --kill none: the program goes on, unrecorded; asys waits for it so
         * that its exit status is asys's, as without a duration */
        fprintf(stderr, "asys: --duration ended the recording; the program goes on\n");
        target.has_duration = 0;
        asys_target_wait(&target, ASYS_WAIT_PRIMARY, NULL, NULL, CLOCK_PAIR_INTERVAL_MS);
    } else {
        warn_survivors(&target, o->wait);
    }
    rc = asys_target_exit_code(&target);
    if (after_failed && rc == ASYS_EXIT_OK)
        rc = ASYS_EXIT_FAILURE;
out:
    asys_arena_compressor_stop(compressor);
    asys_symbolizer_free(symbolizer);
    if (have_session) {
        asys_session_close_launcher(&session);
        if (getenv("ASYS_KEEP_SESSION") && !keep_session)
            fprintf(stderr, "asys: session kept in '%s'\n", session.dir);
        else if (!keep_session)
            asys_session_remove_dir(session.dir);
    }
    return rc;
}

int asys_cmd_profile(int argc, char **argv)
{
    struct asys_profile_options opts;
    struct asys_err err = {0};
    if (asys_profile_parse(argc, argv, &opts, &err) != 0) {
        fprintf(stderr, "%s: %s\n", PROG, err.text);
        return asys_exit_code(&err);
    }
    if (opts.show_help) {
        asys_profile_print_help(stdout);
        return 0;
    }
    if (opts.help_collector) {
        int answered =
            opts.help_collector->answer(&opts, opts.help_option, opts.help_value, stdout, &err);
        if (answered < 0)
            fprintf(stderr, "%s: %s\n", PROG, err.text);
        return answered < 0 ? ASYS_EXIT_USAGE : answered;
    }
    if (asys_profile_value(&opts, "multi-node-mode")->number) {
        struct asys_rank rank;
        int found = asys_rank_detect(&rank, &err);
        if (found < 0) {
            fprintf(stderr, "%s: --multi-node-mode: %s\n", PROG, err.text);
            return 2;
        }
        if (!found)
            fprintf(stderr,
                    "%s: notice: --multi-node-mode true but no rank in the environment (looked "
                    "at %s): the ranks the program's processes have name the reports, one per "
                    "rank\n",
                    PROG, ASYS_RANK_ENVIRONMENTS);
    }
    char report_path[PATH_MAX], expanded[PATH_MAX];
    /* %p is the program's: until it runs, the name is checked with pid 0 */
    if (opts.output && expand_output(&opts, 0, expanded, sizeof expanded, &err) != 0) {
        fprintf(stderr, "%s: -o '%s': %s\n", PROG, opts.output, err.text);
        return 2;
    }
    if (asys_report_path_resolve(opts.output ? expanded : NULL, opts.force_overwrite, report_path,
                                 sizeof report_path, &err) != 0) {
        fprintf(stderr, "%s: cannot write '%s': %s\n", PROG, report_path, err.text);
        return 1;
    }
    int e = asys_profile_program_error(opts.target_argv[0]);
    if (e) {
        asys_fail_errno(&err, e, "cannot run '%s'", opts.target_argv[0]);
        fprintf(stderr, "%s: %s\n", PROG, err.text);
        return asys_exec_exit_code(&err);
    }
    warn_unavailable(&opts);
    return record(&opts, report_path, sizeof report_path);
}

/* Whether `dir` is a session directory (session.json, segments/). */
static int check_session_dir(const char *dir, struct asys_err *err)
{
    struct stat st;
    char path[PATH_MAX];
    if (stat(dir, &st) != 0)
        return asys_fail(err, "%s", strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return asys_fail(err, "not a directory");
    snprintf(path, sizeof path, "%s/%s", dir, ASYS_SEGMENT_DIR);
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return asys_fail(err, "not an asys session directory (no segments directory in it)");
    return 0;
}

/* The report path the session's launcher was writing to (its session.json). */
static int session_report(const char *dir, char *out, size_t size)
{
    char path[PATH_MAX];
    struct asys_err err = {0};
    snprintf(path, sizeof path, "%s/%s", dir, ASYS_SESSION_FILE);
    cJSON *desc = asys_json_load(path, &err);
    const char *report =
        asys_json_get_str(cJSON_GetObjectItemCaseSensitive(desc, "session"), "report", "");
    int n = *report ? snprintf(out, size, "%s", report) : -1;
    cJSON_Delete(desc);
    return n > 0 && (size_t)n < size;
}

int asys_cmd_finalize(int argc, char **argv)
{
    const char *usage = "usage: asys finalize SESSION_DIR [-o NAME] [--force-overwrite]";
    const char *dir = NULL, *output = NULL;
    int force = 0;
    for (int i = 1; i < argc; i++) {
        if ((!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) && i + 1 < argc)
            output = argv[++i];
        else if (!strcmp(argv[i], "-f") || !strcmp(argv[i], "--force-overwrite"))
            force = 1;
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("%s\nPacks the session directory of an interrupted recording (asys-XXXXXX "
                   "in\n$TMPDIR) into a report.\n",
                   usage);
            return 0;
        } else if (argv[i][0] != '-' && !dir)
            dir = argv[i];
        else {
            fprintf(stderr, "asys finalize: unexpected argument '%s' (%s)\n", argv[i], usage);
            return 2;
        }
    }
    if (!dir) {
        fprintf(stderr, "asys finalize: %s\n", usage);
        return 2;
    }
    char report_path[PATH_MAX], recorded[PATH_MAX];
    struct asys_err err = {0};
    if (check_session_dir(dir, &err) != 0) {
        fprintf(stderr, "asys finalize: cannot open '%s': %s\n", dir, err.text);
        return 1;
    }
    char expanded[PATH_MAX];
    if (output) {
        if (asys_output_pattern_expand(output, ASYS_PATTERN_PID_UNKNOWN, expanded, sizeof expanded,
                                       &err) != 0) {
            fprintf(stderr, "asys finalize: -o '%s': %s\n", output, err.text);
            return 2;
        }
        output = expanded;
    } else { /* the name the recording was to have */
        output = session_report(dir, recorded, sizeof recorded) ? recorded : "recovered";
    }
    if (asys_report_path_resolve(output, force, report_path, sizeof report_path, &err) != 0) {
        fprintf(stderr, "asys finalize: cannot write '%s': %s\n", report_path, err.text);
        return 1;
    }
    for (const struct asys_collector *const *c = asys_collectors; *c; c++) {
        struct asys_err recover_err = {0};
        if ((*c)->recover && (*c)->recover(dir, &recover_err) != 0)
            fprintf(stderr, "asys finalize: warning: %s: %s\n", (*c)->name, recover_err.text);
    }
    struct asys_finalize_result res;
    if (asys_finalize(dir, report_path, force, NULL, NULL, &res, &err) != 0) {
        fprintf(stderr, "asys finalize: cannot write '%s': %s\n", report_path, err.text);
        return 1;
    }
    for (size_t i = 0; i < res.rank_report_count; i++)
        fprintf(stderr, "asys: report written: '%s'\n", res.rank_reports[i]);
    if (!res.rank_report_count)
        fprintf(stderr, "asys: report written: '%s' (%" PRIu64 " records)\n", report_path,
                res.records);
    asys_finalize_warn_damage(&res);
    asys_finalize_result_free(&res);
    return 0;
}
