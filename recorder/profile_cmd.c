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

#include "asys_commands.h"
#include "finalize.h"
#include "install_paths.h"
#include "manifest.h"
#include "profile_options.h"
#include "session.h"
#include "target_process.h"

#define PROG "asys profile"
#define REPORT_SUFFIX ".asys-rep"
#define CLOCK_PAIR_INTERVAL_MS 1000

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

/* The report path: NAME(.asys-rep) or the first free reportN.asys-rep. */
static int resolve_report_path(const struct asys_profile_options *o, char *out, size_t size,
                               struct asys_err *err)
{
    if (o->output) {
        int n = snprintf(out, size, "%s%s", o->output,
                         ends_with(o->output, REPORT_SUFFIX) ? "" : REPORT_SUFFIX);
        if (n < 0 || (size_t)n >= size)
            return asys_fail(err, "report name is too long");
        if (!o->force_overwrite && access(out, F_OK) == 0)
            return asys_fail(err, "file exists (use --force-overwrite)");
    } else {
        for (int i = 1;; i++) {
            snprintf(out, size, "report%d%s", i, REPORT_SUFFIX);
            if (access(out, F_OK) != 0)
                break;
        }
    }
    char copy[PATH_MAX];
    snprintf(copy, sizeof copy, "%s", out);
    const char *dir = dirname(copy);
    if (access(dir, W_OK) != 0)
        return asys_fail(err, "directory '%s' is not writable: %s", dir, strerror(errno));
    return 0;
}

static int is_executable_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* The errno execvp would fail with for `name` (0 if it can be run), checked
 * before anything is printed or created. */
static int program_error(const char *name)
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
    char names[256] = "";
    size_t used = 0;
    for (const struct asys_trace_name *t = asys_trace_names; t->name; t++) {
        if ((o->trace_mask & t->bit) && !t->available) {
            int n = snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "", t->name);
            if (n > 0 && (size_t)n < sizeof names - used)
                used += (size_t)n;
        }
    }
    if (used)
        fprintf(stderr, "%s: warning: not built into this asys yet, recording without: %s\n", PROG,
                names);
    for (int i = 0; i < o->given_count; i++)
        if (!o->given[i].supported)
            fprintf(stderr, "%s: warning: --%s is not implemented in this asys yet; ignored\n",
                    PROG, o->given[i].name);
}

/* Collectors the injected library should run, as it parses them. */
static void inject_collectors(uint32_t mask, char *out, size_t size)
{
    uint32_t available = 0;
    for (const struct asys_trace_name *t = asys_trace_names; t->name; t++)
        if (t->available)
            available |= t->bit;
    asys_trace_list_string(mask & available, out, size);
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

static int record(const struct asys_profile_options *o, const char *report_path)
{
    struct asys_err err = {{0}};
    char inject[PATH_MAX];
    if (asys_inject_library_path(inject, sizeof inject) != 0) {
        fprintf(stderr,
                "%s: cannot find 'libasys-inject.so' (looked in ../lib next to asys; set "
                "ASYS_INJECT_LIB)\n",
                PROG);
        return 1;
    }
    if (strpbrk(inject, " :"))
        fprintf(stderr, "%s: warning: '%s' contains a space or colon; LD_PRELOAD cannot name it\n",
                PROG, inject);

    asys_target_block_signals();
    struct asys_session session;
    if (asys_session_create(&session, &err) != 0) {
        fprintf(stderr, "%s: cannot start a session: %s\n", PROG, err.text);
        return 1;
    }
    char session_file[PATH_MAX + 32];
    snprintf(session_file, sizeof session_file, "%s/%s", session.dir, ASYS_SESSION_FILE);
    cJSON *desc = asys_session_json_new(o, &session, report_path);
    int saved = asys_json_save(session_file, desc, &err);
    cJSON_Delete(desc);
    if (saved != 0) {
        fprintf(stderr, "%s: cannot start a session: %s\n", PROG, err.text);
        asys_session_remove_dir(session.dir);
        return 1;
    }

    char collectors[128], chunk[32], max_size[32], tick_hz[32], osrt_ns[32], osrt_bt_ns[32],
        osrt_depth[16], hggc_bt_ns[32], hggc_depth[16];
    inject_collectors(o->trace_mask, collectors, sizeof collectors);
    snprintf(chunk, sizeof chunk, "%" PRIu64, o->chunk_size);
    snprintf(max_size, sizeof max_size, "%" PRIu64, o->max_segment_size);
    snprintf(tick_hz, sizeof tick_hz, "%" PRIu64, asys_session_tick_hz(&session));
    snprintf(osrt_ns, sizeof osrt_ns, "%" PRIu64, o->osrt_threshold_ns);
    snprintf(osrt_bt_ns, sizeof osrt_bt_ns, "%" PRIu64, o->osrt_backtrace_ns);
    snprintf(osrt_depth, sizeof osrt_depth, "%" PRIu32, o->osrt_backtrace_depth);
    snprintf(hggc_bt_ns, sizeof hggc_bt_ns, "%" PRIu64, o->hggc_backtrace_ns);
    snprintf(hggc_depth, sizeof hggc_depth, "%" PRIu32, o->hggc_backtrace_depth);
    int hggc = (o->trace_mask & ASYS_TRACE_HGGC) != 0;
    const struct asys_env_var vars[] = {
        {"LD_PRELOAD", inject},
        {"NVTX_INJECTION64_PATH", inject},
        {"ASYS_SESSION_DIR", session.dir},
        {"ASYS_COLLECTORS", collectors},
        {"ASYS_CLOCK", asys_clock_name(session.clock_kind)},
        {"ASYS_CHUNK_SIZE", chunk},
        {"ASYS_MAX_SEGMENT_SIZE", max_size},
        {"ASYS_TICK_HZ", tick_hz},
        {"ASYS_OSRT_THRESHOLD_NS", osrt_ns},
        {"ASYS_OSRT_BACKTRACE_NS", osrt_bt_ns},
        {"ASYS_OSRT_BACKTRACE_DEPTH", osrt_depth},
        {"ASYS_HGGC_TRACE_SET", o->hggc_trace_set},
        {"ASYS_HGGC_GRAPH_TRACE", o->hggc_graph_level ? "graph" : "node"},
        {"ASYS_HGGC_BT_NS", hggc_bt_ns},
        {"ASYS_HGGC_BT_DEPTH", hggc_depth},
        /* the CUDA driver loads it at initialization and calls InitializeInjection;
         * kept last: left out when HGGC is not traced */
        {"CUDA_INJECTION64_PATH", inject},
    };
    int var_count = (int)(sizeof vars / sizeof *vars) - (hggc ? 0 : 1);
    struct asys_target target;
    if (asys_target_spawn(&target, o->target_argv, vars, var_count, &err) != 0) {
        fprintf(stderr, "%s: cannot run '%s': %s\n", PROG, o->target_argv[0], err.text);
        asys_session_close_launcher(&session);
        asys_session_remove_dir(session.dir);
        return strstr(err.text, "ermission") ? 126 : 127;
    }
    asys_target_wait(&target, o->wait, tick, &session, CLOCK_PAIR_INTERVAL_MS);
    asys_session_close_launcher(&session);

    if (WIFSIGNALED(target.status))
        fprintf(stderr, "asys: '%s' was terminated by signal %d (%s)\n", o->target_argv[0],
                WTERMSIG(target.status), strsignal(WTERMSIG(target.status)));
    struct asys_finalize_result res;
    int rc = asys_finalize(session.dir, report_path, o->force_overwrite, &target, &res, &err);
    if (getenv("ASYS_KEEP_SESSION"))
        fprintf(stderr, "asys: session kept in '%s'\n", session.dir);
    else
        asys_session_remove_dir(session.dir);
    if (rc != 0) {
        fprintf(stderr, "%s: cannot write '%s': %s\n", PROG, report_path, err.text);
        return 1;
    }
    char size[32];
    format_size(res.report_bytes, size, sizeof size);
    fprintf(stderr, "asys: report written: '%s' (%s, %" PRIu64 " records", report_path, size,
            res.records);
    if (res.dropped_records)
        fprintf(stderr, ", %" PRIu64 " dropped", res.dropped_records);
    fprintf(stderr, ")\n");
    return asys_target_exit_code(&target);
}

int asys_cmd_profile(int argc, char **argv)
{
    struct asys_profile_options opts;
    struct asys_err err = {{0}};
    if (asys_profile_parse(argc, argv, &opts, &err) != 0) {
        fprintf(stderr, "%s: %s\n", PROG, err.text);
        return 2;
    }
    if (opts.show_help) {
        asys_profile_print_help(stdout);
        return 0;
    }
    char report_path[PATH_MAX];
    if (resolve_report_path(&opts, report_path, sizeof report_path, &err) != 0) {
        fprintf(stderr, "%s: cannot write '%s': %s\n", PROG, report_path, err.text);
        return 1;
    }
    int e = program_error(opts.target_argv[0]);
    if (e) {
        fprintf(stderr, "%s: cannot run '%s': %s\n", PROG, opts.target_argv[0], strerror(e));
        return e == EACCES ? 126 : 127;
    }
    warn_unavailable(&opts);
    return record(&opts, report_path);
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
    struct asys_profile_options o;
    memset(&o, 0, sizeof o);
    o.output = output ? output : "recovered";
    o.force_overwrite = force;
    char report_path[PATH_MAX];
    struct asys_err err = {{0}};
    if (resolve_report_path(&o, report_path, sizeof report_path, &err) != 0) {
        fprintf(stderr, "asys finalize: cannot write '%s': %s\n", report_path, err.text);
        return 1;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "asys finalize: cannot open '%s': not a session directory\n", dir);
        return 1;
    }
    struct asys_finalize_result res;
    if (asys_finalize(dir, report_path, force, NULL, &res, &err) != 0) {
        fprintf(stderr, "asys finalize: cannot write '%s': %s\n", report_path, err.text);
        return 1;
    }
    fprintf(stderr, "asys: report written: '%s' (%" PRIu64 " records)\n", report_path, res.records);
    return 0;
}
