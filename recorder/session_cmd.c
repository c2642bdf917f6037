/* Interactive sessions, as nsys has them:
 *
 *   asys launch [profile options] PROGRAM [ARGS]   the program runs, recorder injected, nothing
 * recorded asys start [-o NAME] [--session S]             a recording begins (a new report) asys
 * stop [--session S]                        the report is written; the program goes on asys cancel
 * [--session S]                      the recording is discarded asys shutdown [--session S] [--kill
 * SIG]       the session ends; the program gets SIG asys sessions list this user's sessions
 *
 * A session is a directory of the user's runtime directory
 * ($XDG_RUNTIME_DIR/asys, else /tmp/asys-UID; 0700, owned by the user, no
 * link) holding state.json and the lock every command takes.  The
 * recording itself is the session directory `asys profile` makes (arena,
 * segments, session.json), the program runs with ASYS_CAPTURE_RANGE=session:
 * start and stop store into the arena's control block, which every process
 * of the program (forked or exec'd) maps, so one store opens or closes the
 * capture window of them all.  stop finalizes the session directory into a
 * report whose manifest names its window (recording_window): the importer
 * keeps that window's events only, as the arena holds every window so far.
 *
 * The launcher's samplers (CPU sampling, host memory, NIC, PPU metrics,
 * events: asys profile's, the same hooks) run during the recordings only:
 * asys launch watches the control block (every LAUNCH_TICK_MS), starts
 * them when a recording opens and stops them, their segments written, when
 * it closes, and says so in the control block's samplers_window, which
 * start and stop wait for (bounded), so that a report has its window's
 * samples whole.
 *
 * The launcher stays in the foreground while the program runs, as
 * `nsys launch` does (background it with &): it reaps the program, keeps
 * its exit status and, when the program ends inside a recording, writes
 * that report.  A session whose program or launcher is gone is listed as
 * dead until `asys shutdown` removes it.
 *
 * Exit codes: 0 done; 1 not possible now (no such session, not recording,
 * a runtime directory that is not the user's...); 2 bad command line. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "read_file.h"
#include "asys_commands.h"
#include "finalize.h"
#include "install_paths.h"
#include "json_util.h"
#include "manifest.h"
#include "profile_cmd.h"
#include "report_path.h"
#include "target_process.h"

#define STATE_FILE "state.json"
#define LOCK_FILE "lock"
#define NAME_MAX_LEN 64
#define SHUTDOWN_WAIT_MS 10000
/* HGGC's activity flush period in the program (inject/hggc.c), and some */
#define DEVICE_FLUSH_MS 300
/* how often asys launch looks at the control block, and how long start
 * and stop wait for its samplers (CPU sampling's stop unwinds its stacks) */
#define LAUNCH_TICK_MS 20
#define CLOCK_PAIR_TICKS 50
#define SAMPLERS_START_WAIT_MS 10000
#define SAMPLERS_STOP_WAIT_MS 60000
#define START_OPTIONS_MAX 32
#define ENTRY_MAX (PATH_MAX + NAME_MAX_LEN + 2) /* RUNTIME/NAME */
#define FILE_MAX (ENTRY_MAX + 16) /* RUNTIME/NAME/FILE */

/* ---- the user's runtime directory ----------------------------------------- */

/* A directory of this user's, private: not a link, owned by the effective
 * uid, no access for others. */
static int check_private_dir(const char *dir, struct asys_err *err)
{
    struct stat st;
    if (lstat(dir, &st) != 0)
        return asys_fail_errno(err, errno, "cannot use '%s'", dir);
    if (!S_ISDIR(st.st_mode))
        return asys_fail(err, "cannot use '%s': not a directory (a link?)", dir);
    if (st.st_uid != geteuid())
        return asys_fail(err, "cannot use '%s': owned by uid %u, not by this user (uid %u)", dir,
                         (unsigned)st.st_uid, (unsigned)geteuid());
    if (st.st_mode & 077)
        return asys_fail(err, "cannot use '%s': permissions %03o, not 0700", dir,
                         (unsigned)(st.st_mode & 0777));
    return 0;
}

/* $XDG_RUNTIME_DIR/asys when that directory is this user's, else
 * /tmp/asys-UID.  `create`: made when missing; else a missing one is
 * answered with 0 and an empty `out` (no sessions). */
static int runtime_dir(char *out, size_t size, int create, struct asys_err *err)
{
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    struct stat st;
    int n;
    if (xdg && xdg[0] == '/' && stat(xdg, &st) == 0 && S_ISDIR(st.st_mode) &&
        st.st_uid == geteuid())
        n = snprintf(out, size, "%s/asys", xdg);
    else
        n = snprintf(out, size, "/tmp/asys-%u", (unsigned)geteuid());
    if (n < 0 || (size_t)n >= size - NAME_MAX_LEN - 32)
        return asys_fail(err, "runtime directory name too long");
    if (create && mkdir(out, 0700) != 0 && errno != EEXIST)
        return asys_fail_errno(err, errno, "cannot create '%s'", out);
    if (!create && lstat(out, &st) != 0 && errno == ENOENT) {
        out[0] = '\0';
        return 0;
    }
    return check_private_dir(out, err);
}

/* Session names become directory names: a short, plain word. */
static int check_name(const char *name, struct asys_err *err)
{
    size_t n = strlen(name);
    if (!n || n > NAME_MAX_LEN || name[0] == '.' ||
        strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != n)
        return asys_fail_kind(err, ASYS_ERR_USAGE,
                              "bad session name '%s' (1 to %d letters, digits, '.', '_', '-'; "
                              "not starting with '.')",
                              name, NAME_MAX_LEN);
    return 0;
}

/* ---- a session: its directory, lock and state ---------------------------- */

struct session_ref {
    char name[NAME_MAX_LEN + 1];
    char dir[ENTRY_MAX];
    int lock_fd;
    cJSON *state; /* state.json */
};

static void path_in(const struct session_ref *s, const char *file, char *out, size_t size)
{
    snprintf(out, size, "%s/%s", s->dir, file);
}

static void session_release(struct session_ref *s)
{
    if (s->lock_fd >= 0)
        close(s->lock_fd); /* and the lock with it */
    s->lock_fd = -1;
    cJSON_Delete(s->state);
    s->state = NULL;
}

/* Opens, locks and reads session `name` of this user. */
static int session_open(const char *runtime, const char *name, struct session_ref *s,
                        struct asys_err *err)
{
    memset(s, 0, sizeof *s);
    s->lock_fd = -1;
    if (check_name(name, err) != 0)
        return -1;
    snprintf(s->name, sizeof s->name, "%s", name);
    snprintf(s->dir, sizeof s->dir, "%s/%s", runtime, name);
    if (!runtime[0] || (access(s->dir, F_OK) != 0 && errno == ENOENT))
        return asys_fail(err, "no session '%s' (asys sessions list)", name);
    if (check_private_dir(s->dir, err) != 0)
        return -1;
    char path[FILE_MAX];
    path_in(s, LOCK_FILE, path, sizeof path);
    s->lock_fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (s->lock_fd < 0 || flock(s->lock_fd, LOCK_EX) != 0) {
        asys_fail_errno(err, errno, "cannot lock '%s'", path);
        goto fail;
    }
    path_in(s, STATE_FILE, path, sizeof path);
    s->state = asys_json_load(path, err);
    if (!s->state || !cJSON_IsObject(s->state)) {
        asys_err_wrap(err, "session '%s' has no readable state", name);
        goto fail;
    }
    return 0;
fail:
    session_release(s);
    return -1;
}

/* state.json replaced whole (a reader never sees half of it). */
static int session_save(const struct session_ref *s, struct asys_err *err)
{
    char path[FILE_MAX], tmp[FILE_MAX + 8];
    path_in(s, STATE_FILE, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    if (asys_json_save(tmp, s->state, err) != 0)
        return -1;
    if (rename(tmp, path) != 0) {
        unlink(tmp);
        return asys_fail_errno(err, errno, "cannot write '%s'", path);
    }
    return 0;
}

static const char *state_str(const struct session_ref *s, const char *key)
{
    return asys_json_get_str(s->state, key, "");
}

static int64_t state_int(const struct session_ref *s, const char *key)
{
    int64_t v = 0;
    return asys_json_get_i64(s->state, key, &v) == 0 ? v : 0;
}

static void state_set_str(struct session_ref *s, const char *key, const char *value)
{
    cJSON_DeleteItemFromObjectCaseSensitive(s->state, key);
    cJSON_AddStringToObject(s->state, key, value);
}

static void state_set_int(struct session_ref *s, const char *key, int64_t value)
{
    cJSON_DeleteItemFromObjectCaseSensitive(s->state, key);
    asys_json_add_i64(s->state, key, value);
}

/* Removes RUNTIME/NAME (held locked: a command waiting for the lock finds
 * the session gone). */
static int remove_entry(const struct session_ref *s, struct asys_err *err)
{
    char path[FILE_MAX];
    path_in(s, STATE_FILE, path, sizeof path);
    unlink(path);
    path_in(s, LOCK_FILE, path, sizeof path);
    unlink(path);
    if (rmdir(s->dir) != 0)
        return asys_fail_errno(err, errno, "cannot remove '%s'", s->dir);
    return 0;
}

/* ---- processes: alive, and the same process (start time) ----------------- */

/* /proc/PID/stat's start time (clock ticks since boot); 0 when the process
 * is gone or a zombie. */
static uint64_t process_start(pid_t pid)
{
    char text[1024];
    const char *p = asys_proc_stat(pid, text, sizeof text, NULL, NULL);
    if (!p || p[0] != ' ' || p[1] == 'Z')
        return 0;
    /* fields after COMM: state is field 3, starttime field 22 (p at the
     * space before field 3, each step to the space before the next) */
    for (int field = 4; field <= 22 && p; field++)
        p = strchr(p + 1, ' ');
    return p ? strtoull(p + 1, NULL, 10) : 0;
}

static int alive(const struct session_ref *s, const char *pid_key, const char *start_key)
{
    uint64_t start = process_start((pid_t)state_int(s, pid_key));
    return start && start == (uint64_t)state_int(s, start_key);
}

/* launched, recording, stopped, or dead (with why in `why`). */
static const char *session_state(const struct session_ref *s, char *why, size_t size)
{
    why[0] = '\0';
    if (!strcmp(state_str(s, "state"), "ended")) {
        int64_t status = state_int(s, "exit_status");
        snprintf(why, size, "the program %s %d", status >= 128 ? "was killed by signal" : "exited",
                 (int)(status >= 128 ? status - 128 : status));
        return "dead";
    }
    if (!alive(s, "pid", "pid_start")) {
        snprintf(why, size, "the program is gone");
        return "dead";
    }
    if (!alive(s, "launcher_pid", "launcher_start")) {
        snprintf(why, size, "the launcher is gone");
        return "dead";
    }
    return state_str(s, "state");
}

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- the recording window ------------------------------------------------- */

/* Closes the open window and writes its report: session.json (the
 * manifest's start) gets the window and the report's name. */
static int write_window(struct session_ref *s, struct asys_err *err)
{
    const char *session_dir = state_str(s, "session_dir");
    const char *report = state_str(s, "report");
    uint64_t end_ns = monotonic_ns();
    if (asys_session_set_recording(session_dir, 0, 0, 0, err) != 0)
        return -1;
    if (state_int(s, "samplers") &&
        asys_session_wait_samplers(session_dir, 0, SAMPLERS_STOP_WAIT_MS) != 0)
        fprintf(stderr,
                "asys: warning: session '%s': the launcher's samplers did not stop in "
                "%d s; the report may lack their samples\n",
                s->name, SAMPLERS_STOP_WAIT_MS / 1000);
    /* the window's device work reaches the segments at CUPTI's next flush */
    int64_t flush_ms = state_int(s, "device_flush_ms");
    if (flush_ms > 0 && flush_ms < 10000) {
        struct timespec pause = {flush_ms / 1000, (flush_ms % 1000) * 1000000};
        nanosleep(&pause, NULL);
    }
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/%s", session_dir, ASYS_SESSION_FILE);
    cJSON *desc = asys_json_load(path, err);
    if (!desc)
        return -1;
    cJSON_DeleteItemFromObjectCaseSensitive(desc, "recording_window");
    cJSON *w = cJSON_AddObjectToObject(desc, "recording_window");
    asys_json_add_u64(w, "index", (uint64_t)state_int(s, "window"));
    asys_json_add_u64(w, "start_ns", (uint64_t)state_int(s, "window_start_ns"));
    asys_json_add_u64(w, "end_ns", end_ns);
    cJSON_AddStringToObject(w, "session", s->name);
    if (state_int(s, "window_options") & ASYS_WINDOW_NO_SAMPLERS)
        cJSON_AddStringToObject(cJSON_AddObjectToObject(w, "options"), "sample", "none");
    cJSON *info = cJSON_GetObjectItemCaseSensitive(desc, "session");
    if (cJSON_IsObject(info)) {
        cJSON_DeleteItemFromObjectCaseSensitive(info, "report");
        cJSON_AddStringToObject(info, "report", report);
    }
    int rc = asys_json_save(path, desc, err);
    cJSON_Delete(desc);
    if (rc != 0)
        return -1;
    struct asys_finalize_result res;
    if (asys_finalize(session_dir, report, (int)state_int(s, "force"), NULL, NULL, &res, err) != 0)
        return asys_err_wrap(err, "cannot write '%s'", report);
    fprintf(stderr, "asys: report written: '%s' (%" PRIu64 " records)\n", report, res.records);
    asys_finalize_warn_damage(&res);
    return 0;
}

/* ---- asys launch ---------------------------------------------------------- */

/* Options `asys launch` cannot take: each chooses when to record. */
static int check_launch_options(const struct asys_profile_options *o, struct asys_err *err)
{
    static const char *const refused[] = {"duration", "delay", "capture-range", "stats", "export"};
    char expanded[PATH_MAX];
    /* -o: the default of asys start's, checked now (%p and %n at start) */
    if (o->output &&
        asys_output_pattern_expand(o->output, 0, expanded, sizeof expanded, err) != 0) {
        err->kind = ASYS_ERR_USAGE; /* as asys profile -o's: exit 2 */
        return asys_err_wrap(err, "-o '%s'", o->output);
    }
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        if (asys_profile_value(o, refused[i])->given)
            return asys_fail_kind(err, ASYS_ERR_USAGE,
                                  "--%s is not an option of asys launch (asys start and stop "
                                  "choose when to record)",
                                  refused[i]);
    return 0;
}

/* The default name: the program's base name and the launcher's pid. */
static void default_name(const char *program, char *out, size_t size)
{
    char copy[PATH_MAX];
    snprintf(copy, sizeof copy, "%s", program);
    char base[NAME_MAX_LEN - 12];
    snprintf(base, sizeof base, "%s", basename(copy));
    for (char *c = base; *c; c++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", *c))
            *c = '_';
    if (base[0] == '.')
        base[0] = '_';
    snprintf(out, size, "%s-%d", base, (int)getpid());
}

static cJSON *launch_state(const char *name, const struct asys_profile_options *o,
                           const struct asys_session *session, pid_t pid)
{
    cJSON *st = cJSON_CreateObject();
    char cwd[PATH_MAX];
    cJSON_AddStringToObject(st, "name", name);
    cJSON *program = cJSON_AddArrayToObject(st, "program");
    for (int i = 0; i < o->target_argc; i++)
        cJSON_AddItemToArray(program, cJSON_CreateString(o->target_argv[i]));
    asys_json_add_i64(st, "pid", pid);
    asys_json_add_i64(st, "pid_start", (int64_t)process_start(pid));
    asys_json_add_i64(st, "launcher_pid", getpid());
    asys_json_add_i64(st, "launcher_start", (int64_t)process_start(getpid()));
    cJSON_AddStringToObject(st, "session_dir", session->dir);
    cJSON_AddStringToObject(st, "cwd", getcwd(cwd, sizeof cwd) ? cwd : "/");
    cJSON_AddStringToObject(st, "state", "launched");
    asys_json_add_i64(st, "window", 0);
    if (o->output)
        cJSON_AddStringToObject(st, "output", o->output);
    asys_json_add_i64(st, "force", o->force_overwrite);
    asys_json_add_i64(st, "samplers", asys_samplers_any(o));
    for (const struct asys_collector *const *c = asys_collectors; *c; c++)
        if ((*c)->feature == ASYS_FEATURE_HGGC && asys_profile_collects(o, *c))
            asys_json_add_i64(st, "device_flush_ms", DEVICE_FLUSH_MS);
    return st;
}

/* The program ended: the open window's report, and the session marked dead
 * (shutdown removes it), or removed when the user interrupted asys launch
 * (Ctrl-C, kill: nothing is left of it).  A session shut down meanwhile is
 * gone: nothing to do. */
static void launch_ended(const char *runtime, const char *name, const struct asys_target *t)
{
    struct session_ref s;
    struct asys_err err = {0};
    if (session_open(runtime, name, &s, &err) != 0)
        return; /* shut down */
    if (!strcmp(state_str(&s, "state"), "recording") && write_window(&s, &err) != 0)
        fprintf(stderr, "asys launch: %s\n", err.text);
    state_set_str(&s, "state", "ended");
    state_set_int(&s, "exit_status", asys_target_exit_code(t));
    if ((t->interrupts ? remove_entry(&s, &err) : session_save(&s, &err)) != 0)
        fprintf(stderr, "asys launch: %s\n", err.text);
    session_release(&s);
}

/* The launcher's samplers, run for the recordings the control block opens. */
struct launch_samplers {
    struct asys_session *session;
    struct asys_arena_control *control; /* NULL: no sampler to run */
    struct asys_collector_setup setup;
    struct asys_samplers samplers;
    pid_t pid;
    uint32_t window; /* the recording they run for; 0: stopped */
    unsigned ticks;
};

static void samplers_stop(struct launch_samplers *ls)
{
    if (!ls->window)
        return;
    asys_samplers_stop(&ls->samplers); /* their segments written */
    ls->window = 0;
    __atomic_store_n(&ls->control->samplers_window, 0u, __ATOMIC_RELEASE);
}

/* The samplers follow the control block: on for a recording (unless it
 * was started with -s none), off, their segments written, when it ends. */
static void samplers_follow(struct launch_samplers *ls)
{
    struct asys_arena_control *c = ls->control;
    uint32_t on = __atomic_load_n(&c->session_recording, __ATOMIC_ACQUIRE);
    uint32_t window = __atomic_load_n(&c->session_window, __ATOMIC_ACQUIRE);
    uint32_t options = __atomic_load_n(&c->window_options, __ATOMIC_ACQUIRE);
    uint32_t want = on && !(options & ASYS_WINDOW_NO_SAMPLERS) ? window : 0;
    if (want == ls->window)
        return;
    samplers_stop(ls);
    if (!want)
        return;
    /* the last recording's segments are in its report: the samplers
     * write theirs anew */
    asys_session_remove_sampler_segments(ls->session->dir);
    ls->setup.recording = want;
    asys_samplers_start(&ls->setup, ls->pid, ASYS_SAMPLERS_ALL, &ls->samplers);
    ls->window = want;
    __atomic_store_n(&c->samplers_window, want, __ATOMIC_RELEASE);
}

static void launch_tick(void *arg)
{
    struct launch_samplers *ls = arg;
    if (++ls->ticks % CLOCK_PAIR_TICKS == 0)
        asys_session_clock_pair(ls->session);
    if (ls->control)
        samplers_follow(ls);
}

/* Removes RUNTIME/NAME. */
static void remove_session_entry(const char *dir)
{
    asys_session_remove_dir(dir);
}

struct launch {
    const struct asys_profile_options *o;
    char runtime[PATH_MAX];
    char name[NAME_MAX_LEN + 1];
    char entry[ENTRY_MAX];
    struct asys_session session;
    char inject[PATH_MAX];
    uint64_t merged_features; /* the collectors compiled into that build */
    int have_entry, have_session;
};

static int launch_spawn(struct launch *l, struct asys_target *target, struct asys_err *err)
{
    static struct asys_env env; /* 16 KiB of text: not on the stack */
    memset(&env, 0, sizeof env);
    if (asys_inject_library_path(l->inject, sizeof l->inject) != 0)
        return asys_fail(err, "cannot find '" ASYS_INJECT_LIBRARY_NAME
                              "' (looked in ../lib next to asys; set ASYS_INJECT_LIB)");
    if (asys_profile_start_session(l->o, "", &l->session, err) != 0)
        return -1;
    l->have_session = 1;
    l->merged_features = asys_profile_merge_inject(l->o, l->inject, sizeof l->inject);
    struct asys_collector_setup setup = {l->o, l->inject, l->session.dir, 0, 0, l->merged_features,
                                         NULL, 0};
    if (asys_profile_target_environment(&setup, &l->session, &env, err) != 0 ||
        asys_env_set(&env, "ASYS_CAPTURE_RANGE", "session", err) != 0 ||
        asys_profile_add_env_vars(l->o, &env, err) != 0)
        return -1;
    if (asys_target_spawn(target, l->o->target_argv, &env, l->o->kill_on_exit, !l->o->show_output,
                          NULL, NULL, err) != 0)
        return asys_err_wrap(err, "cannot run '%s'", l->o->target_argv[0]);
    asys_session_release_arena_fd(&l->session);
    return 0;
}

static int launch_session(struct launch *l, struct asys_err *err)
{
    const struct asys_option_value *name = asys_profile_value(l->o, "session-new");
    if (name->given)
        snprintf(l->name, sizeof l->name, "%.*s", NAME_MAX_LEN, name->text);
    else
        default_name(l->o->target_argv[0], l->name, sizeof l->name);
    if ((name->given && check_name(name->text, err) != 0) ||
        runtime_dir(l->runtime, sizeof l->runtime, 1, err) != 0)
        return -1;
    snprintf(l->entry, sizeof l->entry, "%s/%s", l->runtime, l->name);
    if (mkdir(l->entry, 0700) != 0)
        return errno == EEXIST ? asys_fail(err, "session '%s' exists (asys sessions list)", l->name)
                               : asys_fail_errno(err, errno, "cannot create '%s'", l->entry);
    l->have_entry = 1;
    return 0;
}

int asys_cmd_launch(int argc, char **argv)
{
    struct asys_profile_options o;
    struct asys_err err = {0};
    struct launch l = {.o = &o};
    struct asys_target target;
    int rc = ASYS_EXIT_FAILURE;
    if (asys_profile_parse(argc, argv, &o, &err) != 0 ||
        (!o.show_help && check_launch_options(&o, &err) != 0)) {
        fprintf(stderr, "asys launch: %s\n", err.text);
        return asys_exit_code(&err);
    }
    if (o.show_help) {
        printf("usage: asys launch [asys profile options] <program> [args...]\n\n"
               "Runs <program> with the recorder injected and records nothing until\n"
               "'asys start'; stays in the foreground until the program ends.\n"
               "See asys profile --help for the options (not --duration, --delay,\n"
               "--capture-range, --stats, --export).\n");
        return 0;
    }
    int e = asys_profile_program_error(o.target_argv[0]);
    if (e) {
        asys_fail_errno(&err, e, "cannot run '%s'", o.target_argv[0]);
        fprintf(stderr, "asys launch: %s\n", err.text);
        return asys_exec_exit_code(&err);
    }
    asys_target_block_signals();
    if (launch_session(&l, &err) != 0 || launch_spawn(&l, &target, &err) != 0) {
        fprintf(stderr, "asys launch: %s\n", err.text);
        rc = err.kind == ASYS_ERR_USAGE ? ASYS_EXIT_USAGE : ASYS_EXIT_FAILURE;
        goto out;
    }
    struct session_ref s = {.lock_fd = -1,
                            .state = launch_state(l.name, &o, &l.session, target.pid)};
    snprintf(s.dir, sizeof s.dir, "%s", l.entry);
    if (session_save(&s, &err) != 0) {
        cJSON_Delete(s.state);
        fprintf(stderr, "asys launch: %s\n", err.text);
        kill(target.pid, SIGTERM);
        asys_target_wait(&target, ASYS_WAIT_PRIMARY, NULL, NULL, 1000);
        goto out;
    }
    cJSON_Delete(s.state);
    fprintf(stderr,
            "asys: session '%s': '%s' runs as pid %d, not recorded until 'asys start "
            "--session %s'\n",
            l.name, o.target_argv[0], (int)target.pid, l.name);
    struct launch_samplers ls = {
        .session = &l.session,
        .setup = {&o, l.inject, l.session.dir, 1, 0, l.merged_features, NULL, 0},
        .pid = target.pid};
    if (asys_samplers_any(&o) && !(ls.control = asys_session_control_map(l.session.dir, &err)))
        fprintf(stderr, "asys launch: warning: the samplers cannot run: %s\n", err.text);
    asys_target_wait(&target, o.wait, launch_tick, &ls, LAUNCH_TICK_MS);
    if (ls.control) /* a recording the program's end closes */
        samplers_stop(&ls);
    asys_session_control_unmap(ls.control);
    asys_session_close_launcher(&l.session);
    launch_ended(l.runtime, l.name, &target);
    l.have_entry = 0; /* kept, as dead, for sessions list and shutdown (or removed) */
    rc = asys_target_exit_code(&target);
out:
    if (l.have_session) {
        asys_session_close_launcher(&l.session);
        asys_session_remove_dir(l.session.dir);
    }
    if (l.have_entry)
        remove_session_entry(l.entry);
    return rc;
}

/* ---- the control commands' common part ------------------------------------ */

struct control_args {
    const char *session;
    const char *output;
    int force, force_given;
    const char *kill;
    int signal; /* --kill's */
    int help;
    uint32_t window_options; /* asys start's collector options: ASYS_WINDOW_* */
    int collector_count; /* asys start's collector options, to check */
    char *collector_args[START_OPTIONS_MAX];
};

struct kill_choice {
    const char *name;
    int signal;
};
static const struct kill_choice kill_choices[] = {
    {"none", 0}, {"sigterm", SIGTERM}, {"sigkill", SIGKILL}, {"sigint", SIGINT}};

static int parse_kill_choice(const char *text, int *sig, struct asys_err *err)
{
    for (size_t i = 0; i < sizeof kill_choices / sizeof kill_choices[0]; i++)
        if (!strcasecmp(text, kill_choices[i].name)) {
            *sig = kill_choices[i].signal;
            return 0;
        }
    char *end;
    long n = strtol(text, &end, 10);
    if (*text && !*end && n > 0 && n < NSIG) {
        *sig = (int)n;
        return 0;
    }
    return asys_fail_kind(err, ASYS_ERR_USAGE, "--kill '%s': none, sigterm, sigkill or a number",
                          text);
}

/* A value of `arg` (--name=value, or the next argument). */
static const char *option_value(int argc, char **argv, int *i, const char *arg, const char *name)
{
    size_t n = strlen(name);
    if (strncmp(arg, name, n) != 0)
        return NULL;
    if (arg[n] == '=')
        return arg + n + 1;
    if (arg[n] || *i + 1 >= argc)
        return NULL;
    return argv[++*i];
}

/* The options of start/stop/cancel/shutdown; `allowed` names those the
 * command takes ("o" output, "f" force, "k" kill). */
static int parse_control(int argc, char **argv, const char *allowed, struct control_args *a,
                         struct asys_err *err)
{
    memset(a, 0, sizeof *a);
    a->signal = SIGTERM; /* nsys shutdown's default */
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *v;
        if (!strcmp(arg, "-h") || !strcmp(arg, "--help"))
            a->help = 1;
        else if ((v = option_value(argc, argv, &i, arg, "--session")) != NULL)
            a->session = v;
        else if (strchr(allowed, 'o') && ((v = option_value(argc, argv, &i, arg, "--output")) ||
                                          (v = option_value(argc, argv, &i, arg, "-o"))))
            a->output = v;
        else if (strchr(allowed, 'f') && (!strcmp(arg, "-f") || !strcmp(arg, "--force-overwrite") ||
                                          !strcmp(arg, "--force-overwrite=true")))
            a->force = a->force_given = 1;
        else if (strchr(allowed, 'f') && !strcmp(arg, "--force-overwrite=false"))
            a->force_given = 1;
        else if (strchr(allowed, 'k') && (v = option_value(argc, argv, &i, arg, "--kill"))) {
            if (parse_kill_choice(v, &a->signal, err) != 0)
                return -1;
            a->kill = v;
        } else if (arg[0] == '-' && strchr(allowed, 'c')) {
            /* a collector option, checked by check_start_options, with its value */
            if (a->collector_count + 2 > START_OPTIONS_MAX)
                return asys_fail_kind(err, ASYS_ERR_USAGE, "too many options");
            a->collector_args[a->collector_count++] = argv[i];
            if (!strchr(arg, '=') && i + 1 < argc && argv[i + 1][0] != '-')
                a->collector_args[a->collector_count++] = argv[++i];
        } else if (arg[0] == '-')
            return asys_fail_kind(err, ASYS_ERR_USAGE, "unknown option '%s'", arg);
        else
            return asys_fail_kind(err, ASYS_ERR_USAGE, "unexpected argument '%s'", arg);
    }
    return 0;
}

/* asys start's collector options.  The injected library and the
 * collectors' settings are fixed when asys launch starts the program (its
 * environment, hooks installed at load), so a recording cannot add or
 * change them; what it can choose is to leave the launcher's samplers off:
 * -s/--sample none.  Any other option of asys profile is refused by name. */
static int check_start_options(struct control_args *a, struct asys_err *err)
{
    struct asys_profile_options o;
    char *args[START_OPTIONS_MAX + 2];
    char start[] = "start";
    int n = 0;
    if (!a->collector_count)
        return 0;
    args[n++] = start;
    for (int i = 0; i < a->collector_count && i < START_OPTIONS_MAX; i++)
        args[n++] = a->collector_args[i];
    args[n] = NULL;
    if (asys_profile_parse_options(n, args, &o, err) != 0)
        return -1;
    for (int i = 0; i < o.given_count; i++) {
        const struct asys_given_option *g = &o.given[i];
        if (!strcmp(g->name, "sample") &&
            !strcmp(asys_profile_value(&o, "sample")->canonical, "none"))
            continue;
        return asys_fail_kind(err, ASYS_ERR_USAGE,
                              "--%s%s%s cannot be given to asys start: the collectors and their "
                              "options are set when asys launch starts the program (give it "
                              "there); asys start takes -s none only (this recording without CPU "
                              "sampling and the other launcher samplers)",
                              g->name, g->value ? " " : "", g->value ? g->value : "");
    }
    if (o.target_argc != 0) /* not an option, nor an option's value */
        return asys_fail_kind(err, ASYS_ERR_USAGE, "unexpected argument '%s'", o.target_argv[0]);
    a->window_options |= ASYS_WINDOW_NO_SAMPLERS;
    return 0;
}

/* --session S, or the only session of this user (that is not dead, unless
 * `dead_too`: shutdown cleans dead ones). */
static int pick_session(const char *given, const char *runtime, int dead_too, char *out,
                        size_t size, struct asys_err *err)
{
    if (given) {
        snprintf(out, size, "%s", given);
        return check_name(given, err);
    }
    DIR *d = runtime[0] ? opendir(runtime) : NULL;
    int found = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        struct session_ref s;
        struct asys_err ignored = {0};
        char why[128];
        if (e->d_name[0] == '.' || session_open(runtime, e->d_name, &s, &ignored) != 0)
            continue;
        if ((dead_too || strcmp(session_state(&s, why, sizeof why), "dead") != 0) && found++ == 0)
            snprintf(out, size, "%.*s", NAME_MAX_LEN, e->d_name);
        session_release(&s);
    }
    if (d)
        closedir(d);
    if (found == 1)
        return 0;
    return found
               ? asys_fail(err, "%d sessions; name one with --session (asys sessions list)", found)
               : asys_fail(err, "no session (asys launch starts one)");
}

/* The control commands hold these while they change a session, so that an
 * interrupt cannot leave it half changed. */
static void block_interrupts(sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGQUIT);
    sigprocmask(SIG_BLOCK, &set, old);
}

typedef int (*control_fn)(struct session_ref *s, const struct control_args *a,
                          struct asys_err *err);

/* Finds, locks and reads the session, runs `fn`, says the outcome. */
static int control(const char *cmd, int argc, char **argv, const char *allowed, const char *usage,
                   control_fn fn)
{
    struct control_args a;
    struct asys_err err = {0};
    struct session_ref s = {.lock_fd = -1};
    char runtime[PATH_MAX], name[NAME_MAX_LEN + 1];
    sigset_t old;
    int rc;
    if (parse_control(argc, argv, allowed, &a, &err) != 0 || check_start_options(&a, &err) != 0) {
        fprintf(stderr, "asys %s: %s (%s)\n", cmd, err.text, usage);
        return ASYS_EXIT_USAGE;
    }
    if (a.help) {
        printf("%s\n", usage);
        return 0;
    }
    block_interrupts(&old);
    rc = runtime_dir(runtime, sizeof runtime, 0, &err) == 0 &&
                 pick_session(a.session, runtime, strchr(allowed, 'k') != NULL, name, sizeof name,
                              &err) == 0 &&
                 session_open(runtime, name, &s, &err) == 0 && fn(&s, &a, &err) == 0
             ? 0
             : -1;
    session_release(&s);
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (rc == 0)
        return 0;
    fprintf(stderr, "asys %s: cannot %s: %s\n", cmd, cmd, err.text);
    return err.kind == ASYS_ERR_USAGE ? ASYS_EXIT_USAGE : ASYS_EXIT_FAILURE;
}

/* Not dead: the program and its launcher run. */
static int check_live(struct session_ref *s, struct asys_err *err)
{
    char why[128];
    if (!strcmp(session_state(s, why, sizeof why), "dead"))
        return asys_fail(err, "session '%s' is dead (%s); asys shutdown --session %s removes it",
                         s->name, why, s->name);
    return 0;
}

/* ---- asys start / stop / cancel -------------------------------------------- */

/* The report's path: -o (or launch's -o, or reportN), %p the program's. */
static int start_report_path(struct session_ref *s, const struct control_args *a, char *out,
                             size_t size, struct asys_err *err)
{
    const char *pattern = a->output                 ? a->output
                          : *state_str(s, "output") ? state_str(s, "output")
                                                    : NULL;
    int force = a->force_given ? a->force : (int)state_int(s, "force");
    char expanded[PATH_MAX];
    if (pattern && asys_output_pattern_expand(pattern, (long)state_int(s, "pid"), expanded,
                                              sizeof expanded, err) != 0)
        return asys_err_wrap(err, "-o '%s'", pattern);
    if (asys_report_path_resolve(pattern ? expanded : NULL, force, out, size, err) != 0)
        return asys_err_wrap(err, "cannot write '%s'", out);
    char absolute[PATH_MAX];
    if (asys_absolute_path(out, absolute, sizeof absolute) == 0)
        snprintf(out, size, "%s", absolute);
    state_set_int(s, "force", force);
    return 0;
}

static int do_start(struct session_ref *s, const struct control_args *a, struct asys_err *err)
{
    char report[PATH_MAX];
    if (check_live(s, err) != 0)
        return -1;
    if (!strcmp(state_str(s, "state"), "recording"))
        return asys_fail(err, "session '%s' is recording already (into '%s'; asys stop writes it)",
                         s->name, state_str(s, "report"));
    if (start_report_path(s, a, report, sizeof report, err) != 0)
        return -1;
    int64_t window = state_int(s, "window") + 1;
    state_set_str(s, "report", report);
    state_set_int(s, "window", window);
    state_set_int(s, "window_start_ns", (int64_t)monotonic_ns());
    state_set_str(s, "state", "recording");
    state_set_int(s, "window_options", a->window_options);
    const char *session_dir = state_str(s, "session_dir");
    if (session_save(s, err) != 0 ||
        asys_session_set_recording(session_dir, 1, (uint32_t)window, a->window_options, err) != 0)
        return -1;
    /* recording starts once the launcher's samplers run */
    if (state_int(s, "samplers") && !(a->window_options & ASYS_WINDOW_NO_SAMPLERS) &&
        asys_session_wait_samplers(session_dir, (uint32_t)window, SAMPLERS_START_WAIT_MS) != 0)
        fprintf(stderr,
                "asys: warning: session '%s': the launcher's samplers did not start in "
                "%d s\n",
                s->name, SAMPLERS_START_WAIT_MS / 1000);
    fprintf(stderr, "asys: session '%s': recording %d started (asys stop writes '%s')\n", s->name,
            (int)window, report);
    return 0;
}

static int do_stop(struct session_ref *s, const struct control_args *a, struct asys_err *err)
{
    (void)a;
    if (strcmp(state_str(s, "state"), "recording") != 0)
        return asys_fail(err, "session '%s' is not recording (asys start begins a recording)",
                         s->name);
    if (write_window(s, err) != 0)
        return -1;
    state_set_str(s, "state", "stopped");
    return session_save(s, err);
}

static int do_cancel(struct session_ref *s, const struct control_args *a, struct asys_err *err)
{
    (void)a;
    if (strcmp(state_str(s, "state"), "recording") != 0)
        return asys_fail(err, "session '%s' is not recording", s->name);
    if (asys_session_set_recording(state_str(s, "session_dir"), 0, 0, 0, err) != 0)
        return -1;
    state_set_str(s, "state", "stopped");
    if (session_save(s, err) != 0)
        return -1;
    fprintf(stderr, "asys: session '%s': recording %d discarded\n", s->name,
            (int)state_int(s, "window"));
    return 0;
}

/* ---- asys shutdown -------------------------------------------------------- */

/* Waits (bounded) for the program to be gone after its signal. */
static void wait_gone(const struct session_ref *s)
{
    for (int ms = 0; ms < SHUTDOWN_WAIT_MS && alive(s, "pid", "pid_start"); ms += 20) {
        struct timespec pause = {0, 20000000};
        nanosleep(&pause, NULL);
    }
}

static int do_shutdown(struct session_ref *s, const struct control_args *a, struct asys_err *err)
{
    int sig = a->signal;
    const char *session_dir = state_str(s, "session_dir");
    int program_alive = alive(s, "pid", "pid_start") && strcmp(state_str(s, "state"), "ended");
    if (!strcmp(state_str(s, "state"), "recording")) {
        struct asys_err ignored = {0}; /* an open recording is discarded, as nsys does */
        asys_session_set_recording(session_dir, 0, 0, 0, &ignored);
        fprintf(stderr, "asys: session '%s': recording %d discarded\n", s->name,
                (int)state_int(s, "window"));
    }
    if (program_alive && sig) {
        if (kill((pid_t)state_int(s, "pid"), sig) != 0 && errno != ESRCH)
            return asys_fail_errno(err, errno, "cannot signal pid %d", (int)state_int(s, "pid"));
        wait_gone(s);
    }
    /* the session directory is ours (state.json names it): a check before
     * removing what an edited state file could point anywhere */
    if (*session_dir && check_private_dir(session_dir, err) == 0 &&
        strstr(session_dir, "/asys-") != NULL)
        asys_session_remove_dir(session_dir);
    if (remove_entry(s, err) != 0)
        return -1;
    fprintf(stderr, "asys: session '%s' shut down%s\n", s->name,
            program_alive && !sig ? " (the program goes on, not recorded)" : "");
    return 0;
}

int asys_cmd_start(int argc, char **argv)
{
    return control("start", argc, argv, "ofc",
                   "usage: asys start [--session NAME] [-o NAME] [--force-overwrite] [-s none]",
                   do_start);
}

int asys_cmd_stop(int argc, char **argv)
{
    return control("stop", argc, argv, "", "usage: asys stop [--session NAME]", do_stop);
}

int asys_cmd_cancel(int argc, char **argv)
{
    return control("cancel", argc, argv, "", "usage: asys cancel [--session NAME]", do_cancel);
}

int asys_cmd_shutdown(int argc, char **argv)
{
    return control("shutdown", argc, argv, "k",
                   "usage: asys shutdown [--session NAME] [--kill none|sigterm|sigkill|N]",
                   do_shutdown);
}

/* ---- asys sessions list ------------------------------------------------------ */

static void list_one(const char *runtime, const char *name)
{
    struct session_ref s;
    struct asys_err err = {0};
    char why[128], program[256] = "";
    char path[FILE_MAX];
    snprintf(path, sizeof path, "%s/%s/%s", runtime, name, STATE_FILE);
    if (access(path, F_OK) != 0)
        return; /* being launched: listed once its program runs */
    if (session_open(runtime, name, &s, &err) != 0) {
        printf("%-24s %-8d %-10s (%s)\n", name, 0, "dead", err.text);
        return;
    }
    const cJSON *argv = cJSON_GetObjectItemCaseSensitive(s.state, "program"), *arg;
    size_t used = 0;
    cJSON_ArrayForEach(arg, argv) if (cJSON_IsString(arg) && used < sizeof program) used +=
        (size_t)snprintf(program + used, sizeof program - used, "%s%s", used ? " " : "",
                         arg->valuestring);
    const char *state = session_state(&s, why, sizeof why);
    printf("%-24s %-8d %-10s %s%s%s%s\n", name, (int)state_int(&s, "pid"), state, program,
           *why ? " (" : "", why, *why ? ")" : "");
    session_release(&s);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int asys_cmd_sessions(int argc, char **argv)
{
    const char *usage = "usage: asys sessions list";
    struct asys_err err = {0};
    char runtime[PATH_MAX];
    if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        printf("%s\nThis user's sessions: name, program pid, state (launched, recording, "
               "stopped, dead), program.\n",
               usage);
        return 0;
    }
    if (argc != 2 || strcmp(argv[1], "list") != 0) {
        fprintf(stderr, "asys sessions: %s\n", usage);
        return ASYS_EXIT_USAGE;
    }
    if (runtime_dir(runtime, sizeof runtime, 0, &err) != 0) {
        fprintf(stderr, "asys sessions: cannot list: %s\n", err.text);
        return ASYS_EXIT_FAILURE;
    }
    DIR *d = runtime[0] ? opendir(runtime) : NULL;
    char *names[256];
    size_t n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL && n < 256)
        if (e->d_name[0] != '.' && (names[n] = strdup(e->d_name)) != NULL)
            n++;
    if (d)
        closedir(d);
    qsort(names, n, sizeof names[0], by_name);
    printf("%-24s %-8s %-10s %s\n", "NAME", "PID", "STATE", "PROGRAM");
    for (size_t i = 0; i < n; i++) {
        list_one(runtime, names[i]);
        free(names[i]);
    }
    return 0;
}
