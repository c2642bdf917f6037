#define _GNU_SOURCE
#include "manifest.h"
#include "read_file.h"
#include "json_util.h"
#include "rank_env.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#ifndef ASYS_VERSION
#define ASYS_VERSION "0.0.0"
#endif

/* Value of `key` in a "key: value" or key=value text file, into out. */
static int read_keyed_line(const char *path, const char *key, char sep, char *out, size_t size)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    char line[1024];
    size_t klen = strlen(key);
    int found = -1;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, klen) != 0)
            continue;
        char *p = line + klen;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p != sep)
            continue;
        p++;
        while (*p == ' ' || *p == '"')
            p++;
        p[strcspn(p, "\"\n")] = '\0';
        snprintf(out, size, "%s", p);
        found = 0;
        break;
    }
    fclose(f);
    return found;
}

static cJSON *host_json(void)
{
    cJSON *host = cJSON_CreateObject();
    char name[256] = "";
    gethostname(name, sizeof name - 1);
    cJSON_AddStringToObject(host, "hostname", name);
    struct utsname u;
    if (uname(&u) == 0) {
        char kernel[sizeof u.sysname + sizeof u.release + sizeof u.machine + 4];
        snprintf(kernel, sizeof kernel, "%s %s %s", u.sysname, u.release, u.machine);
        cJSON_AddStringToObject(host, "kernel", kernel);
    }
    char os[256] = "unknown";
    read_keyed_line("/etc/os-release", "PRETTY_NAME", '=', os, sizeof os);
    cJSON_AddStringToObject(host, "os", os);
    return host;
}

static cJSON *cpu_json(int clock_kind)
{
    cJSON *cpu = cJSON_CreateObject();
    char model[256] = "unknown";
    read_keyed_line("/proc/cpuinfo", "model name", ':', model, sizeof model);
    cJSON_AddStringToObject(cpu, "model", model);
    cJSON_AddNumberToObject(cpu, "logical_cpus", (double)sysconf(_SC_NPROCESSORS_ONLN));
    cJSON_AddBoolToObject(cpu, "invariant_tsc", clock_kind == ASYS_CLOCK_TSC);
    return cpu;
}

/* Every option with the value the run used (given or default): numbers as
 * numbers, the rest as the collector receives them; `given` lists what the
 * user wrote. */
static cJSON *options_json(const struct asys_profile_options *o, const char *report_path)
{
    cJSON *opts = cJSON_CreateObject();
    for (size_t i = 0; i < o->value_count; i++) {
        const struct asys_option_value *v = &o->values[i].value;
        const struct asys_option *spec = v->option;
        if (spec->planned || spec->type == ASYS_OPT_FLAG || (!v->given && !spec->default_value))
            continue;
        if (spec->type == ASYS_OPT_BOOL)
            cJSON_AddBoolToObject(opts, spec->name, v->number != 0);
        else if (v->has_number && spec->type != ASYS_OPT_TEXT)
            asys_json_add_u64(opts, spec->name, v->number);
        else if (!strcmp(spec->name, "output"))
            cJSON_AddStringToObject(opts, spec->name, report_path);
        else
            cJSON_AddStringToObject(opts, spec->name, v->canonical);
    }
    if (!cJSON_GetObjectItemCaseSensitive(opts, "output"))
        cJSON_AddStringToObject(opts, "output", report_path);
    cJSON *given = cJSON_AddArrayToObject(opts, "given");
    for (int i = 0; i < o->given_count; i++) {
        cJSON *g = cJSON_CreateObject();
        cJSON_AddStringToObject(g, "name", o->given[i].name);
        if (o->given[i].value)
            cJSON_AddStringToObject(g, "value", o->given[i].value);
        cJSON_AddBoolToObject(g, "supported", o->given[i].supported);
        cJSON_AddItemToArray(given, g);
    }
    return opts;
}

static cJSON *collectors_json(const struct asys_profile_options *o)
{
    cJSON *c = cJSON_CreateObject();
    cJSON *enabled = cJSON_AddArrayToObject(c, "enabled");
    cJSON *unavailable = cJSON_AddArrayToObject(c, "unavailable");
    for (const struct asys_collector *const *col = asys_collectors; *col; col++) {
        if (!(*col)->feature || !(o->features & (*col)->feature))
            continue;
        if ((*col)->built) {
            cJSON_AddItemToArray(enabled, cJSON_CreateString((*col)->name));
        } else {
            cJSON *u = cJSON_CreateObject();
            cJSON_AddStringToObject(u, "name", (*col)->name);
            cJSON_AddStringToObject(u, "reason",
                                    (*col)->unbuilt_reason ? (*col)->unbuilt_reason
                                                           : "not built into this asys yet");
            cJSON_AddItemToArray(unavailable, u);
        }
    }
    for (int i = 0; i < o->given_count; i++) {
        if (o->given[i].supported)
            continue;
        cJSON *u = cJSON_CreateObject();
        cJSON_AddStringToObject(u, "name", o->given[i].name);
        cJSON_AddStringToObject(u, "reason", "option not implemented in this asys yet");
        cJSON_AddItemToArray(unavailable, u);
    }
    return c;
}

/* --multi-node-mode true: this recording's rank, as its launcher set it
 * (asys profile checked it before the program started) */
static void multi_node_json(cJSON *root, const struct asys_profile_options *o)
{
    if (!asys_profile_value(o, "multi-node-mode")->number)
        return;
    cJSON *mn = cJSON_AddObjectToObject(root, "multi_node");
    struct asys_err err = {0};
    struct asys_rank r;
    if (asys_rank_detect(&r, &err) == 1)
        asys_rank_json(mn, &r);
}

void asys_rank_json(cJSON *obj, const struct asys_rank *r)
{
    if (!r)
        return;
    cJSON_AddNumberToObject(obj, "rank", (double)r->rank);
    if (r->local_rank >= 0)
        cJSON_AddNumberToObject(obj, "local_rank", (double)r->local_rank);
    if (r->world_size >= 0)
        cJSON_AddNumberToObject(obj, "world_size", (double)r->world_size);
    cJSON_AddStringToObject(obj, "source", r->source);
}

int asys_absolute_path(const char *path, char *out, size_t size)
{
    char cwd[PATH_MAX];
    int n = path[0] == '/'            ? snprintf(out, size, "%s", path)
            : getcwd(cwd, sizeof cwd) ? snprintf(out, size, "%s/%s", cwd, path)
                                      : -1;
    return n > 0 && (size_t)n < size ? 0 : -1;
}

/* How far CLOCK_REALTIME can be trusted to put this host's records beside
 * another host's (the multi-report analysis states it per rank). */
static void clock_sync_json(cJSON *clock)
{
    struct asys_clock_sync sync;
    if (asys_clock_sync_read(&sync) == 0) {
        cJSON *j = cJSON_AddObjectToObject(clock, "sync");
        cJSON_AddBoolToObject(j, "synchronized", sync.synchronized);
        asys_json_add_u64(j, "maxerror_ns", sync.maxerror_ns);
        asys_json_add_u64(j, "esterror_ns", sync.esterror_ns);
        cJSON_AddNumberToObject(j, "status", sync.status);
        cJSON_AddNumberToObject(j, "state", sync.state);
    }
    int64_t shift = asys_clock_test_realtime_shift();
    if (shift) /* a report never hides that its clock was moved */
        asys_json_add_i64(clock, "test_realtime_shift_ns", shift);
}

cJSON *asys_session_json_new(const struct asys_profile_options *o, const struct asys_session *s,
                             const char *report_path)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "format_version", ASYS_FORMAT_VERSION);
    cJSON_AddStringToObject(root, "asys_version", ASYS_VERSION);
    cJSON *cmd = cJSON_AddArrayToObject(root, "command");
    for (int i = 0; i < o->target_argc; i++)
        cJSON_AddItemToArray(cmd, cJSON_CreateString(o->target_argv[i]));
    cJSON_AddItemToObject(root, "options", options_json(o, report_path));
    cJSON_AddItemToObject(root, "host", host_json());
    cJSON_AddItemToObject(root, "cpu", cpu_json(s->clock_kind));
    cJSON *clock = cJSON_AddObjectToObject(root, "clock");
    cJSON_AddStringToObject(clock, "kind", asys_clock_name(s->clock_kind));
    char boot[64] = "";
    asys_read_first_line(ASYS_BOOT_ID_FILE, boot, sizeof boot);
    if (boot[0]) /* finalize recovers a session's clock only on the same boot */
        cJSON_AddStringToObject(clock, "boot_id", boot);
    asys_json_add_i64(clock, "realtime_minus_monotonic_ns",
                      (int64_t)s->start.realtime_ns - (int64_t)s->start.monotonic_ns);
    /* at the start: time asleep during the recording moves it (not followed) */
    asys_json_add_i64(clock, "boottime_minus_monotonic_ns", asys_clock_offset_ns(CLOCK_BOOTTIME));
    clock_sync_json(clock);
    cJSON *session = cJSON_AddObjectToObject(root, "session");
    asys_json_add_u64(session, "start_monotonic_ns", s->start.monotonic_ns);
    asys_json_add_u64(session, "start_realtime_ns", s->start.realtime_ns);
    cJSON_AddNumberToObject(session, "launcher_pid", (double)getpid());
    char report[PATH_MAX];
    if (asys_absolute_path(report_path, report, sizeof report) == 0) /* for asys finalize */
        cJSON_AddStringToObject(session, "report", report);
    cJSON_AddItemToObject(root, "collectors", collectors_json(o));
    multi_node_json(root, o);
    return root;
}

int asys_json_save(const char *path, const cJSON *root, struct asys_err *err)
{
    char *text = asys_json_print(root, 1);
    if (!text)
        return asys_fail(err, "out of memory");
    int rc = 0;
    FILE *f = fopen(path, "we");
    if (!f || fputs(text, f) < 0)
        rc = asys_fail(err, "cannot write '%s': %s", path, strerror(errno));
    if (f && fclose(f) != 0 && rc == 0)
        rc = asys_fail(err, "cannot write '%s': %s", path, strerror(errno));
    free(text);
    return rc;
}

/* session.json and the like: a regular file of at most JSON_FILE_MAX bytes (a
 * hostile session directory may hold a FIFO or /dev/zero's twin there). */
#define JSON_FILE_MAX (64u << 20)

cJSON *asys_json_load(const char *path, struct asys_err *err)
{
    char *text = NULL;
    if (asys_read_regular_file(path, JSON_FILE_MAX, &text, NULL, err) != 0) {
        asys_err_wrap(err, "cannot open '%s'", path);
        return NULL;
    }
    cJSON *root = cJSON_Parse(text);
    free(text);
    if (!root)
        asys_fail(err, "'%s' is not valid JSON", path);
    return root;
}
