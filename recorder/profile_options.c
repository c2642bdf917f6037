#include "profile_options.h"

#include <ctype.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "install_paths.h"
#include "segment_writer.h"

/* ---- -t/--trace ---------------------------------------------------------------- */

static void valid_trace_names(char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (const struct asys_collector *const *c = asys_collectors; *c; c++) {
        if (!(*c)->traced)
            continue;
        int n = snprintf(out + used, size - used, "%s%s%s%s", used ? ", " : "", (*c)->name,
                         (*c)->alias ? "/" : "", (*c)->alias ? (*c)->alias : "");
        if (n < 0 || (size_t)n >= size - used)
            return;
        used += (size_t)n;
    }
    snprintf(out + used, size - used, ", none");
}

int asys_parse_trace_list(const char *list, uint64_t *features, struct asys_err *err)
{
    uint64_t result = 0;
    int saw_none = 0;
    const char *p = list;
    if (!*p)
        return asys_fail_kind(err, ASYS_ERR_USAGE, "empty --trace list");
    while (*p) {
        size_t n = strcspn(p, ",");
        const struct asys_collector *c = asys_collector_find(p, n);
        if (c && c->traced) {
            result |= c->feature;
        } else if (n == 4 && !strncmp(p, "none", 4)) {
            saw_none = 1;
        } else {
            char valid[256];
            valid_trace_names(valid, sizeof valid);
            return asys_fail_kind(err, ASYS_ERR_USAGE, "unknown --trace value '%.*s' (valid: %s)",
                                  (int)n, p, valid);
        }
        p += n;
        if (*p == ',')
            p++;
    }
    if (saw_none && result)
        return asys_fail_kind(err, ASYS_ERR_USAGE,
                              "--trace none cannot be combined with other values");
    *features = result;
    return 0;
}

void asys_trace_list_string(uint64_t features, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (const struct asys_collector *const *c = asys_collectors; *c; c++) {
        if (!(*c)->traced || !(features & (*c)->feature))
            continue;
        int n = snprintf(out + used, size - used, "%s%s", used ? "," : "", (*c)->name);
        if (n < 0 || (size_t)n >= size - used)
            return;
        used += (size_t)n;
    }
    if (!used)
        snprintf(out, size, "none");
}

static int parse_trace(const struct asys_option *o, const char *text, struct asys_option_value *v,
                       struct asys_err *err)
{
    (void)o;
    uint64_t features;
    if (asys_parse_trace_list(text, &features, err) != 0)
        return -1;
    v->number = features;
    v->has_number = 1;
    asys_trace_list_string(features, v->canonical, sizeof v->canonical);
    return 0;
}

/* ---- --capture-range ---------------------------------------------------------------- */

/* nsys's names are accepted and mean the same. */
static int parse_capture_range(const struct asys_option *o, const char *text,
                               struct asys_option_value *v, struct asys_err *err)
{
    static const struct {
        const char *name, *canonical;
    } names[] = {{"none", "none"},
                 {"hggc-profiler-api", "hggc-profiler-api"},
                 {"cudaProfilerApi", "hggc-profiler-api"},
                 {"hgtx", "hgtx"},
                 {"nvtx", "hgtx"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (!strcmp(text, names[i].name)) {
            snprintf(v->canonical, sizeof v->canonical, "%s", names[i].canonical);
            return 0;
        }
    }
    return asys_fail_kind(err, ASYS_ERR_USAGE,
                          "--%s takes none, hggc-profiler-api (or cudaProfilerApi) or hgtx (or "
                          "nvtx), not '%s'",
                          o->name, text);
}

/* stop | none | repeat | repeat:N */
static int parse_capture_end(const struct asys_option *o, const char *text,
                             struct asys_option_value *v, struct asys_err *err)
{
    uint64_t n;
    int ok = !strcmp(text, "stop") || !strcmp(text, "none") || !strcmp(text, "repeat") ||
             (!strncmp(text, "repeat:", 7) && asys_parse_count(text + 7, 1u << 12, &n) == 0 && n);
    if (!ok || strlen(text) >= sizeof v->canonical)
        return asys_fail_kind(err, ASYS_ERR_USAGE,
                              "--%s takes stop, none, repeat or repeat:N (N from 1 to 4096), not "
                              "'%s'",
                              o->name, text);
    memcpy(v->canonical, text, strlen(text) + 1);
    return 0;
}

/* "RANGE", "RANGE@DOMAIN" or "RANGE@*" */
static int parse_hgtx_capture(const struct asys_option *o, const char *text,
                              struct asys_option_value *v, struct asys_err *err)
{
    const char *at = strrchr(text, '@');
    if (!*text || at == text || (at && !at[1]))
        return asys_fail_kind(err, ASYS_ERR_USAGE,
                              "--%s takes RANGE, RANGE@DOMAIN or RANGE@*, not '%s'", o->name, text);
    size_t n = strlen(text);
    if (n >= sizeof v->canonical)
        return asys_fail_kind(err, ASYS_ERR_USAGE, "--%s: value is too long", o->name);
    memcpy(v->canonical, text, n + 1);
    return 0;
}

/* ---- the launcher's own options ------------------------------------------------- */

/* --kill: none, sigterm, sigkill or a signal number; canonical is the number */
static int parse_kill(const struct asys_option *o, const char *text, struct asys_option_value *v,
                      struct asys_err *err)
{
    uint64_t n = 0;
    if (!strcmp(text, "none"))
        n = 0;
    else if (!strcmp(text, "sigterm") || !strcmp(text, "SIGTERM"))
        n = SIGTERM;
    else if (!strcmp(text, "sigkill") || !strcmp(text, "SIGKILL"))
        n = SIGKILL;
    else if (asys_parse_count(text, 64, &n) != 0 || n == 0)
        return asys_fail_kind(err, ASYS_ERR_USAGE,
                              "--%s takes none, sigterm, sigkill or a signal number (1-64), not "
                              "'%s'",
                              o->name, text);
    v->number = n;
    snprintf(v->canonical, sizeof v->canonical, "%" PRIu64, n);
    return 0;
}

/* -e A=B,C=D: each a NAME=VALUE pair with a valid name */
static int parse_env_var(const struct asys_option *o, const char *text, struct asys_option_value *v,
                         struct asys_err *err)
{
    const char *p = text;
    while (*p) {
        size_t len = strcspn(p, ",");
        const char *eq = memchr(p, '=', len);
        int named = eq && eq > p && (isalpha((unsigned char)*p) || *p == '_');
        for (const char *c = p; named && c < eq; c++)
            named = isalnum((unsigned char)*c) || *c == '_';
        if (!named)
            return asys_fail_kind(err, ASYS_ERR_USAGE,
                                  "--%s takes NAME=VALUE[,NAME=VALUE...], not "
                                  "'%.*s'",
                                  o->name, (int)len, p);
        p += len + (p[len] == ',');
    }
    if (strlen(text) >= sizeof v->canonical)
        return asys_fail_kind(err, ASYS_ERR_USAGE, "--%s: value is too long", o->name);
    memcpy(v->canonical, text, strlen(text) + 1);
    return 0;
}

static const char *const export_types[] = {"none", "sqlite", "pftrace", "json", "csv", NULL};

static const char *const wait_modes[] = {"all", "primary", NULL};

// clang-format off
static const struct asys_option launcher_options[] = {
    {.name = "trace", .short_name = 't', .type = ASYS_OPT_TEXT, .metavar = "LIST",
     .default_value = "hggc,hgtx,acdnn,acblas",
     .help = "collectors to enable, comma separated (nsys names accepted)", .parse = parse_trace},
    {.name = "output", .short_name = 'o', .type = ASYS_OPT_TEXT, .metavar = "NAME",
     .help = "report name; .asys-rep is appended; report1, report2... when not given; %h host, %p the program's pid, %r the rank (from RANK, OMPI_COMM_WORLD_RANK, PMI_RANK or SLURM_PROCID; an error when none is set), %n the first free number, %q{ENV} a variable's value, %% a %"},
    {.name = "multi-node-mode", .type = ASYS_OPT_BOOL, .metavar = "[true|false]",
     .default_value = "false", .env = "ASYS_MULTI_NODE_MODE",
     .help = "true: this asys profile is one rank of a job (mpirun, srun, torchrun) and writes "
             "its own report (name it with -o's %r); the rank, local rank and world size are "
             "read from RANK/LOCAL_RANK/WORLD_SIZE, OMPI_COMM_WORLD_*, PMI_RANK/PMI_SIZE or "
             "SLURM_PROCID/SLURM_LOCALID/SLURM_NTASKS (the first set, in this order) and kept "
             "in the report; not with --heap-memory-usage. false: a single-process recording, "
             "no rank kept"},
    {.name = "force-overwrite", .short_name = 'f', .type = ASYS_OPT_BOOL,
     .metavar = "[true|false]", .default_value = "false", .help = "replace an existing report"},
    {.name = "wait", .type = ASYS_OPT_CHOICE, .metavar = "all|primary", .default_value = "all",
     .help = "wait for every descendant process, or only for the program",
     .choices = wait_modes},
    {.name = "max-segment-size", .type = ASYS_OPT_SIZE, .metavar = "SIZE", .default_value = "2G",
     .help = "per-thread buffer limit; records beyond it are dropped and counted",
     .env = "ASYS_MAX_SEGMENT_SIZE", .min = ASYS_MIN_CHUNK_SIZE},
    {.name = "chunk-size", .type = ASYS_OPT_SIZE, .metavar = "SIZE", .default_value = "4M",
     .help = "growth step of a per-thread buffer", .env = "ASYS_CHUNK_SIZE",
     .min = ASYS_MIN_CHUNK_SIZE, .max = 1ull << 30},
    {.name = "capture-range", .short_name = 'c', .type = ASYS_OPT_CHOICE,
     .metavar = "none|hggc-profiler-api|hgtx", .default_value = "none",
     .help = "record only inside capture windows: from cudaProfilerStart to cudaProfilerStop "
             "(hggc-profiler-api, also cudaProfilerApi) or over the HGTX range --hgtx-capture "
             "names (hgtx, also nvtx); each process has its own windows",
     .env = "ASYS_CAPTURE_RANGE", .parse = parse_capture_range},
    {.name = "capture-range-end", .type = ASYS_OPT_TEXT, .metavar = "stop|repeat[:N]|none",
     .default_value = "stop",
     .help = "after a window closes: record no more (stop), open another at the next trigger "
             "(repeat, at most N times), or never close the first (none)",
     .env = "ASYS_CAPTURE_RANGE_END", .parse = parse_capture_end},
    {.name = "hgtx-capture", .type = ASYS_OPT_TEXT, .metavar = "RANGE[@DOMAIN|@*]",
     .help = "with --capture-range=hgtx: the range's message, and its domain (default domain "
             "when not given, * for any)",
     .env = "ASYS_HGTX_CAPTURE", .parse = parse_hgtx_capture},
    {.name = "trace-fork-before-exec", .type = ASYS_OPT_BOOL, .metavar = "[true|false]",
     .default_value = "true",
     .help = "record a forked child before it execs (false: from its exec on, as nsys's "
             "default; a child that never execs is not recorded)",
     .env = "ASYS_TRACE_FORK_BEFORE_EXEC"},
    {.name = "kill-on-exit", .type = ASYS_OPT_BOOL, .metavar = "[true|false]",
     .default_value = "true",
     .help = "if asys itself is killed, the program gets SIGTERM (its recording stays in the "
             "session directory for asys finalize); false: it runs on"},
    {.name = "duration", .type = ASYS_OPT_COUNT, .metavar = "SEC",
     .help = "end the recording SEC seconds after the program starts; the program then gets "
             "--kill's signal", .min = 1, .max = 1u << 30},
    {.name = "delay", .short_name = 'y', .type = ASYS_OPT_COUNT, .metavar = "SEC",
     .help = "start recording SEC seconds after the program starts (one capture window from "
             "then on; --duration counts from then); not with --capture-range",
     .max = 1u << 30},
    {.name = "kill", .type = ASYS_OPT_TEXT, .metavar = "none|sigterm|sigkill|N",
     .default_value = "sigterm",
     .help = "what the program gets when --duration ends the recording; none: it goes on "
             "(asys waits for it after writing the report)", .parse = parse_kill},
    {.name = "stop-on-exit", .short_name = 'x', .type = ASYS_OPT_BOOL, .metavar = "[true|false]",
     .default_value = "true",
     .help = "end the recording when the program ends; false: only when --duration ends "
             "(which it then needs)"},
    {.name = "env-var", .short_name = 'e', .type = ASYS_OPT_TEXT,
     .metavar = "NAME=VALUE[,NAME=VALUE...]",
     .help = "set these in the program's environment (LD_PRELOAD: after the recorder's)",
     .parse = parse_env_var},
    {.name = "show-output", .short_name = 'w', .type = ASYS_OPT_BOOL, .metavar = "[true|false]",
     .default_value = "true",
     .help = "the program's stdout and stderr as they are; false: to /dev/null"},
    {.name = "stats", .type = ASYS_OPT_BOOL, .metavar = "[true|false]", .default_value = "false",
     .help = "print asys-stats' default reports of the new report"},
    {.name = "export", .type = ASYS_OPT_LIST, .metavar = "none|sqlite,pftrace,json,csv",
     .default_value = "none",
     .help = "write these exports of the new report (asys-export -t TYPE) beside it",
     .choices = export_types},
    {.name = "session-new", .type = ASYS_OPT_TEXT, .metavar = "NAME",
     .help = "asys launch: the interactive session's name (letters, digits, '.', '_', '-'; "
             "default PROGRAM-PID); asys profile records it only"},
    {.name = "help", .short_name = 'h', .type = ASYS_OPT_FLAG, .help = "show this help"},
};
// clang-format on
#define LAUNCHER_OPTION_COUNT (sizeof launcher_options / sizeof launcher_options[0])

/* ---- the catalogue: launcher options, then each collector's ------------------------- */

static int catalogue_init(struct asys_profile_options *o, struct asys_err *err)
{
    o->value_count = 0;
    for (size_t i = 0; i < LAUNCHER_OPTION_COUNT; i++)
        o->values[o->value_count++] =
            (struct asys_profile_value){.value = {.option = &launcher_options[i]}};
    for (const struct asys_collector *const *c = asys_collectors; *c; c++) {
        for (size_t i = 0; i < (*c)->option_count; i++) {
            if (o->value_count == ASYS_MAX_OPTIONS)
                return asys_fail(err, "too many options in the collector registry");
            o->values[o->value_count++] = (struct asys_profile_value){
                .value = {.option = &(*c)->options[i]}, .collector = *c};
        }
    }
    /* every option starts at its default */
    for (size_t i = 0; i < o->value_count; i++) {
        struct asys_option_value *v = &o->values[i].value;
        const struct asys_option *spec = v->option;
        if (spec->default_value && !spec->planned &&
            asys_option_parse(spec, spec->default_value, v, err) != 0)
            return asys_err_wrap(err, "default of --%s", spec->name);
        v->option = spec;
        v->given = 0;
    }
    return 0;
}

static struct asys_profile_value *find_long(struct asys_profile_options *o, const char *name,
                                            size_t len)
{
    for (size_t i = 0; i < o->value_count; i++) {
        const char *n = o->values[i].value.option->name;
        if (strlen(n) == len && !strncmp(n, name, len))
            return &o->values[i];
    }
    return NULL;
}

/* ---- nsys's spellings ------------------------------------------------------------
 *
 * One table: an nsys option name and the option it is here, and nsys
 * values that are spelled differently here.  --help shows each as
 * "(nsys: --NAME)"; the manifest records the option under its asys name, so
 * an alias gives the same report as its asys spelling. */
struct option_alias {
    const char *nsys; /* nsys's long option name */
    const char *option; /* ours */
    const char *nsys_value; /* a value nsys spells differently, or NULL */
    const char *asys_value; /* what it is here */
};

// clang-format off
static const struct option_alias option_aliases[] = {
    {"nvtx-capture", "hgtx-capture", NULL, NULL},
    {"cuda-memory-usage", "hggc-memory-usage", NULL, NULL},
    {"cuda-graph-trace", "hggc-graph-trace", NULL, NULL},
    {"cudabacktrace", "hggcbacktrace", NULL, NULL},
    {"gpu-metrics-devices", "ppu-metrics-device", NULL, NULL},
    {"gpu-metrics-device", "ppu-metrics-device", NULL, NULL},
    {"gpu-metrics-set", "ppu-metrics-set", NULL, NULL},
    {"gpu-metrics-frequency", "ppu-metrics-frequency", NULL, NULL},
    {"python-backtrace", "python-backtrace", "cuda", "hggc"},
    {"sampling-frequency", "sample-frequency", NULL, NULL},
    {"sampling-period", "sample-period", NULL, NULL},
};
// clang-format on
#define OPTION_ALIAS_COUNT (sizeof option_aliases / sizeof option_aliases[0])

/* The option nsys's `name` is, or NULL. */
static const char *alias_of(const char *name, size_t len)
{
    for (size_t i = 0; i < OPTION_ALIAS_COUNT; i++)
        if (strlen(option_aliases[i].nsys) == len && !strncmp(option_aliases[i].nsys, name, len))
            return option_aliases[i].option;
    return NULL;
}

/* `value` as this option spells it (nsys's value spellings mapped). */
static const char *value_alias(const char *option, const char *value)
{
    for (size_t i = 0; value && i < OPTION_ALIAS_COUNT; i++)
        if (option_aliases[i].nsys_value && !strcmp(option_aliases[i].option, option) &&
            !strcmp(option_aliases[i].nsys_value, value))
            return option_aliases[i].asys_value;
    return value;
}

/* "(nsys: --a, --b)" for --help, or "" when nsys has no other name for it. */
static void alias_note(const char *option, char *out, size_t size)
{
    size_t at = 0;
    out[0] = '\0';
    for (size_t i = 0; i < OPTION_ALIAS_COUNT; i++) {
        const struct option_alias *a = &option_aliases[i];
        if (strcmp(a->option, option) || !strcmp(a->nsys, option))
            continue;
        int n = snprintf(out + at, size - at, "%s--%s", at ? ", " : "(nsys: ", a->nsys);
        if (n < 0 || (size_t)n >= size - at)
            break;
        at += (size_t)n;
    }
    if (at && at + 2 <= size)
        snprintf(out + at, size - at, ")");
}

static struct asys_profile_value *find_short(struct asys_profile_options *o, char c)
{
    for (size_t i = 0; i < o->value_count; i++)
        if (o->values[i].value.option->short_name == c)
            return &o->values[i];
    return NULL;
}

const struct asys_option_value *asys_profile_value(const struct asys_profile_options *o,
                                                   const char *name)
{
    for (size_t i = 0; i < o->value_count; i++)
        if (!strcmp(o->values[i].value.option->name, name))
            return &o->values[i].value;
    return NULL;
}

int asys_profile_collects(const struct asys_profile_options *o, const struct asys_collector *c)
{
    return c->built && (o->features & c->feature);
}

static int remember(struct asys_profile_options *o, struct asys_profile_value *pv,
                    const char *value, struct asys_err *err)
{
    const struct asys_option *spec = pv->value.option;
    if (o->given_count >= ASYS_MAX_GIVEN_OPTIONS)
        return asys_fail_kind(err, ASYS_ERR_USAGE, "too many options");
    int supported = !spec->planned && (!pv->collector || pv->collector->built);
    o->given[o->given_count++] = (struct asys_given_option){spec->name, value, supported};
    if (asys_option_parse(spec, value, &pv->value, err) != 0)
        return -1;
    pv->value.given = 1;
    return 0;
}

/* The launcher's typed fields, from the catalogue's values. */
static void take_launcher_values(struct asys_profile_options *o)
{
    o->features = asys_profile_value(o, "trace")->number;
    const struct asys_option_value *out = asys_profile_value(o, "output");
    o->output = out->given ? out->text : NULL;
    o->force_overwrite = (int)asys_profile_value(o, "force-overwrite")->number;
    o->wait = !strcmp(asys_profile_value(o, "wait")->canonical, "primary") ? ASYS_WAIT_PRIMARY
                                                                           : ASYS_WAIT_ALL;
    o->max_segment_size = asys_profile_value(o, "max-segment-size")->number;
    o->chunk_size = asys_profile_value(o, "chunk-size")->number;
    o->show_help = asys_profile_value(o, "help")->given;
    o->kill_on_exit = (int)asys_profile_value(o, "kill-on-exit")->number;
    const struct asys_option_value *duration = asys_profile_value(o, "duration");
    o->duration_s = duration->given ? duration->number : 0;
    o->kill_signal = (int)asys_profile_value(o, "kill")->number;
    const struct asys_option_value *delay = asys_profile_value(o, "delay");
    o->delay_s = delay->given ? delay->number : 0;
    o->stop_on_exit = (int)asys_profile_value(o, "stop-on-exit")->number;
    const struct asys_option_value *env = asys_profile_value(o, "env-var");
    o->env_vars = env->given ? env->canonical : NULL;
    o->show_output = (int)asys_profile_value(o, "show-output")->number;
    o->run_stats = (int)asys_profile_value(o, "stats")->number;
    o->exports = asys_profile_value(o, "export")->canonical;
    for (const struct asys_collector *const *c = asys_collectors; *c; c++)
        if ((*c)->enabled && (*c)->enabled(o))
            o->features |= (*c)->feature;
}

/* A capture range needs the collector that sees its trigger. */
static int check_capture_range(const struct asys_profile_options *o, struct asys_err *err)
{
    const char *range = asys_profile_value(o, "capture-range")->canonical;
    int hgtx_capture_given = asys_profile_value(o, "hgtx-capture")->given;
    if (!strcmp(range, "hgtx")) {
        if (!(o->features & ASYS_FEATURE_HGTX))
            return asys_fail_kind(err, ASYS_ERR_USAGE, "--capture-range=hgtx needs -t hgtx");
        if (!hgtx_capture_given)
            return asys_fail_kind(err, ASYS_ERR_USAGE,
                                  "--capture-range=hgtx needs --hgtx-capture=RANGE[@DOMAIN]");
    } else if (hgtx_capture_given) {
        return asys_fail_kind(err, ASYS_ERR_USAGE,
                              "--hgtx-capture is used only with --capture-range=hgtx");
    }
    if (o->delay_s && strcmp(range, "none"))
        return asys_fail_kind(err, ASYS_ERR_USAGE,
                              "--delay and --capture-range both choose when to record: give one");
    if (!strcmp(range, "hggc-profiler-api") && !(o->features & ASYS_FEATURE_HGGC))
        return asys_fail_kind(err, ASYS_ERR_USAGE,
                              "--capture-range=hggc-profiler-api needs -t hggc");
    return 0;
}

static int parse(int argc, char **argv, int need_program, struct asys_profile_options *o,
                 struct asys_err *err)
{
    memset(o, 0, sizeof *o);
    if (catalogue_init(o, err) != 0)
        return -1;
    int i = 1;
    for (; i < argc; i++) {
        char *arg = argv[i];
        if (!strcmp(arg, "--")) {
            i++;
            break;
        }
        if (arg[0] != '-' || !arg[1])
            break; /* the program */
        struct asys_profile_value *pv;
        const char *value = NULL;
        if (arg[1] == '-') {
            const char *name = arg + 2;
            const char *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            pv = find_long(o, name, len);
            if (!pv && alias_of(name, len))
                pv = find_long(o, alias_of(name, len), strlen(alias_of(name, len)));
            if (!pv)
                return asys_fail_kind(err, ASYS_ERR_USAGE,
                                      "unknown option '%s' (see asys profile --help)", arg);
            value = eq ? eq + 1 : NULL;
        } else {
            pv = find_short(o, arg[1]);
            if (!pv)
                return asys_fail_kind(err, ASYS_ERR_USAGE,
                                      "unknown option '%s' (see asys profile --help)", arg);
            if (arg[2])
                value = arg[2] == '=' ? arg + 3 : arg + 2;
        }
        const struct asys_option *spec = pv->value.option;
        int takes_value = spec->type != ASYS_OPT_FLAG && spec->type != ASYS_OPT_BOOL;
        if (spec->type == ASYS_OPT_FLAG && value)
            return asys_fail_kind(err, ASYS_ERR_USAGE, "option --%s takes no value", spec->name);
        if (takes_value && !value) {
            if (i + 1 >= argc)
                return asys_fail_kind(err, ASYS_ERR_USAGE, "option --%s needs a value (%s)",
                                      spec->name, spec->metavar ? spec->metavar : "VALUE");
            value = argv[++i];
        }
        /* "-f true" / "-f false"; anything else after a flag is not its value */
        if (spec->type == ASYS_OPT_BOOL && !value && i + 1 < argc &&
            (!strcmp(argv[i + 1], "true") || !strcmp(argv[i + 1], "false")))
            value = argv[++i];
        if (remember(o, pv, value_alias(spec->name, value), err) != 0)
            return -1;
        if (!strcmp(spec->name, "help")) {
            o->show_help = 1;
            return 0;
        }
        if (pv->collector && pv->collector->answer &&
            (spec->question || (value && !strcmp(value, "help")))) {
            o->help_collector = pv->collector;
            o->help_option = spec;
            o->help_value = value;
            return 0;
        }
    }
    take_launcher_values(o);
    o->target_argc = argc - i;
    o->target_argv = argv + i;
    if (o->target_argc <= 0 && need_program)
        return asys_fail_kind(
            err, ASYS_ERR_USAGE,
            "no program to profile (usage: asys profile [options] <program> [args...])");
    if (o->chunk_size > o->max_segment_size)
        return asys_fail_kind(err, ASYS_ERR_USAGE,
                              "--chunk-size is larger than --max-segment-size");
    if (!o->stop_on_exit && !o->duration_s)
        return asys_fail_kind(err, ASYS_ERR_USAGE, "--stop-on-exit=false needs --duration");
    if (check_capture_range(o, err) != 0)
        return -1;
    for (const struct asys_collector *const *c = asys_collectors; *c; c++)
        if ((*c)->check && asys_profile_collects(o, *c) && (*c)->check(o, err) != 0)
            return -1;
    return 0;
}

uint64_t asys_profile_merge_inject(const struct asys_profile_options *o, char *inject, size_t size)
{
    char name[256] = "libasys-inject", path[PATH_MAX];
    size_t used = strlen(name);
    uint64_t features = 0;
    const char *last_part = NULL;
    for (const struct asys_collector *const *c = asys_collectors; *c; c++) {
        if (!(*c)->merged_library || !asys_profile_collects(o, *c))
            continue;
        features |= (*c)->feature;
        /* collectors that share a library are next to each other in the registry */
        if (last_part && !strcmp(last_part, (*c)->merged_library))
            continue;
        last_part = (*c)->merged_library;
        int n = snprintf(name + used, sizeof name - used, "+%s", (*c)->merged_library);
        if (n < 0 || (size_t)n >= sizeof name - used)
            return 0;
        used += (size_t)n;
    }
    if (!features || used + 3 >= sizeof name)
        return 0;
    strcpy(name + used, ".so");
    if (asys_inject_sibling_path(inject, name, path, sizeof path) != 0 || strlen(path) >= size ||
        access(path, R_OK) != 0)
        return 0;
    strcpy(inject, path);
    return features;
}

int asys_profile_environment(const struct asys_profile_options *o,
                             const struct asys_collector_setup *setup, struct asys_env *env,
                             struct asys_err *err)
{
    char names[256];
    asys_collector_names(o->features, 1, ",", names, sizeof names);
    if (asys_env_set(env, "ASYS_COLLECTORS", names, err) != 0)
        return -1;
    for (size_t i = 0; i < o->value_count; i++) {
        const struct asys_profile_value *pv = &o->values[i];
        const struct asys_option *spec = pv->value.option;
        if (!spec->env || spec->planned ||
            (pv->collector && !asys_profile_collects(o, pv->collector)))
            continue;
        if (asys_env_set(env, spec->env, pv->value.canonical, err) != 0)
            return -1;
    }
    for (const struct asys_collector *const *c = asys_collectors; *c; c++)
        if (asys_profile_collects(o, *c) && (*c)->prepare && (*c)->prepare(setup, env, err) != 0)
            return asys_err_wrap(err, "%s", (*c)->name);
    return 0;
}

static void print_option_help(FILE *out, const struct asys_option *o)
{
    char note[256];
    asys_option_print_help(out, o);
    alias_note(o->name, note, sizeof note);
    if (*note)
        fprintf(out, "%*s%s\n", ASYS_HELP_INDENT, "", note);
}

void asys_profile_print_help(FILE *out)
{
    fprintf(out, "usage: asys profile [options] <program> [args...]\n\n"
                 "Records <program> and every process it starts into one report, NAME.asys-rep.\n"
                 "The program's stdin, stdout, stderr and exit status are left as they are.\n\n");
    int any_planned = 0;
    for (const struct asys_collector *const *c = asys_collectors; *c; c++)
        for (size_t i = 0; i < (*c)->option_count; i++)
            any_planned |= (*c)->options[i].planned;
    if (any_planned)
        fprintf(out, "Options marked 'planned' are options of the manual this build does not\n"
                     "implement yet: they are accepted, reported once and recorded in the "
                     "report.\n\n");
    for (size_t i = 0; i < LAUNCHER_OPTION_COUNT; i++)
        print_option_help(out, &launcher_options[i]);
    for (const struct asys_collector *const *c = asys_collectors; *c; c++)
        for (size_t i = 0; i < (*c)->option_count; i++)
            print_option_help(out, &(*c)->options[i]);
    fprintf(out, "\n-t/--trace collectors:\n");
    for (const struct asys_collector *const *c = asys_collectors; *c; c++)
        if ((*c)->traced)
            fprintf(out, "  %-8s %-8s %s%s%s\n", (*c)->name, (*c)->alias ? (*c)->alias : "",
                    (*c)->built ? "available" : "planned (recorded as unavailable)",
                    !(*c)->built && (*c)->unbuilt_reason ? ": " : "",
                    !(*c)->built && (*c)->unbuilt_reason ? (*c)->unbuilt_reason : "");
    fprintf(out, "  %-8s %-8s %s\n", "none", "", "trace nothing (session and process info only)");
}

int asys_profile_parse(int argc, char **argv, struct asys_profile_options *o, struct asys_err *err)
{
    return parse(argc, argv, 1, o, err);
}

int asys_profile_parse_options(int argc, char **argv, struct asys_profile_options *o,
                               struct asys_err *err)
{
    return parse(argc, argv, 0, o, err);
}
