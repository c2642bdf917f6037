/* asys-export: a report as a Perfetto trace (.pftrace), Chrome JSON, CSV files
 * (one per table or per stats report) or a standalone SQLite database. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pcre2.h>

#include "allocator_tuning.h"
#include "sql_functions.h"
#include "cleanup.h"
#include "cli_args.h"
#include "flame.h"
#include "grow.h"
#include "out_file.h"
#include "output_format.h"
#include "parse_util.h"
#include "report_catalog.h"
#include "embedded_files.h"
#include "import_progress.h"
#include "report_losses.h"
#include "report_db.h"
#include "report_inputs.h"
#include "report_run.h"
#include "sink_json.h"
#include "sink_pftrace.h"
#include "time_filter.h"
#include "timeline.h"
#include "timeline_ranks.h"

#define PROG "asys-export"
#define MAX_REPORTS 64

enum export_type { TYPE_PFTRACE, TYPE_JSON, TYPE_CSV, TYPE_SQLITE, TYPE_FLAME };
static const char *const type_names[] = {"pftrace", "json", "csv", "sqlite"};
#define TYPE_LIST "pftrace, json, csv, sqlite, folded, speedscope, pprof, svg"

#define MAX_INPUTS TL_RANKS_MAX

struct export_args {
    const char *input; /* the first of inputs */
    const char *inputs[MAX_INPUTS]; /* reports and directories as given */
    int input_count;
    struct asys_report_limits limits; /* --max-expansion ... */
    int help; /* --help: print the usage, do nothing else */
    enum export_type type;
    const struct flame_format *flame; /* TYPE_FLAME: which one */
    const char *stacks; /* --stacks SOURCE */
    long long pid, tid; /* --pid / --tid; -1: every one */
    int unified_memory_scale; /* --unified-memory-scale */
    const char *output;
    const char *tables;
    const char *schema; /* --schema asys|nsys (sqlite) */
    const char *filter;
    const char *api_name_mode;
    const char *group_kernels;
    const char *reports[MAX_REPORTS];
    struct asys_cli_texts report_texts; /* what reports[] points into */
    int report_count;
    const char *sqlite_path;
    int gzip;
    int force;
    int quiet;
    int verbose;
};

static const char *const schemas[] = {"asys", "nsys", NULL};
static const char *const api_name_modes[] = {"host", "kernel", NULL};
static const char *const groupings[] = {"base", "hgtx", NULL};

static const struct asys_option export_options[] = {
    {.name = "type",
     .short_name = 't',
     .type = ASYS_OPT_TEXT,
     .metavar = "TYPE",
     .help = "pftrace (default): Perfetto's native protobuf; json: Chrome Trace Event Format "
             "(chrome://tracing, Perfetto); csv: one file per table, or per stats report with "
             "--report; sqlite: the analysis database as one file; folded, speedscope, pprof, "
             "svg: the call stacks of --stacks as folded stacks (flamegraph.pl), a speedscope "
             "profile, a gzipped pprof profile (go tool pprof) or an SVG flame graph"},
    {.name = "stacks",
     .type = ASYS_OPT_TEXT,
     .metavar = "SOURCE",
     .help = "flame types: cpu (CPU samples, default), osrt, hggc, acdnn or acblas (calls with "
             "their stacks), python (Python samples), heap (allocated bytes), leaks (not freed), "
             "device, pinned (device and pinned allocations)"},
    {.name = "pid",
     .type = ASYS_OPT_COUNT,
     .metavar = "PID",
     .max = INT32_MAX,
     .help = "flame types: only this process"},
    {.name = "tid",
     .type = ASYS_OPT_COUNT,
     .metavar = "TID",
     .max = INT32_MAX,
     .help = "flame types: only this thread"},
    {.name = "output",
     .short_name = 'o',
     .type = ASYS_OPT_TEXT,
     .metavar = "PATH",
     .help = "the file (csv: the base of BASE_NAME.csv); default: beside the report, "
             "REPORT.pftrace, REPORT.json, REPORT_NAME.csv, REPORT.sqlite, REPORT.folded, "
             "REPORT.speedscope.json, REPORT.pb.gz, REPORT.svg"},
    {.name = "schema",
     .type = ASYS_OPT_CHOICE,
     .metavar = "asys|nsys",
     .choices = schemas,
     .help = "sqlite: asys's tables (default), or Nsight Systems' export tables (StringIds, "
             "CUPTI_ACTIVITY_KIND_*, NVTX_EVENTS, OSRT_API, ...) for nsys users' SQL"},
    {.name = "tables",
     .type = ASYS_OPT_TEXT,
     .metavar = "REGEX",
     .help = "only what comes from the tables whose name matches (PCRE2), e.g. 'hggc|ppu'"},
    {.name = "filter-time",
     .type = ASYS_OPT_TEXT,
     .metavar = "START/END",
     .help = "only this window, relative to the session start (pftrace, json, csv with "
             "--report, flame types)"},
    {.name = "api-name-mode",
     .type = ASYS_OPT_CHOICE,
     .metavar = "host|kernel",
     .choices = api_name_modes,
     .help = "launch calls named by themselves (default) or by the kernel they launched"},
    {.name = "group-by",
     .type = ASYS_OPT_CHOICE,
     .metavar = "base|hgtx",
     .choices = groupings,
     .help = "kernel rows per base name (default) or per innermost HGTX range at the launch"},
    {.name = "group-kernels",
     .type = ASYS_OPT_CHOICE,
     .metavar = "base|hgtx",
     .choices = groupings,
     .help = "the same as --group-by (its old name)"},
    {.name = "unified-memory-scale",
     .type = ASYS_OPT_BOOL,
     .metavar = "[true]",
     .help = "pftrace: memory counters of one kind share a y-axis (a device's, a process's host "
             "memory)"},
    /* parsed as a repeatable list (asys_cli_list), listed here for --help */
    {.name = "report",
     .short_name = 'r',
     .type = ASYS_OPT_TEXT,
     .metavar = "NAME[,NAME...]",
     .help = "csv: stats reports instead of tables"},
    {.name = "gzip", .type = ASYS_OPT_FLAG, .help = "compress (pftrace, json, csv): adds .gz"},
    {.name = "force-overwrite",
     .short_name = 'f',
     .type = ASYS_OPT_BOOL,
     .metavar = "[true]",
     .help = "replace existing output files"},
    ASYS_CLI_SQLITE_OPTION,
    {.name = "quiet",
     .short_name = 'q',
     .type = ASYS_OPT_FLAG,
     .help = "no progress bar, and no line per file written"},
    {.name = "verbose",
     .short_name = 'v',
     .type = ASYS_OPT_FLAG,
     .help = "say what was written, also with --quiet"},
    ASYS_CLI_HELP_OPTIONS,
};
#define EXPORT_OPTION_COUNT (sizeof export_options / sizeof export_options[0])

static void usage(FILE *out)
{
    fprintf(out, "usage: asys-export [options] REPORT.asys-rep\n"
                 "       asys-export [-t pftrace|json] -o OUT REPORT|DIR...\n\n"
                 "Writes the report's timeline or data in another format; several reports (or\n"
                 "the .asys-rep files of a directory) go into one timeline, each rank its own\n"
                 "process group on one time axis (the hosts' CLOCK_REALTIME).\n\n");
    asys_cli_print_options(out, export_options, EXPORT_OPTION_COUNT);
    fputs(asys_cli_limits_help, out);
}

static int parse_type(const char *v, struct export_args *a)
{
    for (size_t i = 0; i < sizeof type_names / sizeof type_names[0]; i++)
        if (!strcmp(v, type_names[i])) {
            a->type = (enum export_type)i;
            a->flame = NULL;
            return 0;
        }
    if (!(a->flame = flame_format_find(v)))
        return -1;
    a->type = TYPE_FLAME;
    return 0;
}

static int take_values(const struct asys_cli_options *o, struct export_args *a)
{
    const char *type = asys_cli_text(o, "type");
    if (type && parse_type(type, a) != 0) {
        fprintf(stderr, "%s: unknown type '%s' (" TYPE_LIST ")\n", PROG, type);
        return -1;
    }
    a->stacks = asys_cli_text(o, "stacks");
    a->pid = asys_cli_given(o, "pid") ? (long long)asys_cli_number(o, "pid") : -1;
    a->tid = asys_cli_given(o, "tid") ? (long long)asys_cli_number(o, "tid") : -1;
    a->output = asys_cli_text(o, "output");
    a->schema = asys_cli_text(o, "schema");
    a->tables = asys_cli_text(o, "tables");
    a->filter = asys_cli_text(o, "filter-time");
    a->api_name_mode = asys_cli_text(o, "api-name-mode");
    /* --group-by, else its old name --group-kernels */
    a->group_kernels = asys_cli_text(o, "group-by");
    if (asys_cli_given(o, "group-kernels") && !a->group_kernels)
        a->group_kernels = asys_cli_text(o, "group-kernels");
    a->unified_memory_scale = asys_cli_number(o, "unified-memory-scale") != 0;
    a->gzip = asys_cli_given(o, "gzip");
    a->force = asys_cli_number(o, "force-overwrite") != 0;
    a->sqlite_path = asys_cli_text(o, "sqlite");
    a->quiet = asys_cli_given(o, "quiet");
    a->verbose = asys_cli_given(o, "verbose");
    return 0;
}

static int take_input(struct asys_cli *c, struct export_args *a)
{
    const char *input = NULL;
    if (asys_cli_positional(c, &input) != 0)
        return -1;
    if (a->input_count == MAX_INPUTS) {
        fprintf(stderr, "%s: more than %d reports\n", PROG, MAX_INPUTS);
        return -1;
    }
    a->inputs[a->input_count++] = input;
    return 0;
}

static int parse_args(int argc, char **argv, struct export_args *a)
{
    memset(a, 0, sizeof *a);
    a->pid = a->tid = -1;
    asys_report_limits_default(&a->limits);
    struct asys_cli c;
    struct asys_cli_options o;
    int rc = -1;
    asys_cli_init(&c, PROG, argc, argv);
    if (asys_cli_options_init(&o, PROG, export_options, EXPORT_OPTION_COUNT) != 0)
        goto out;
    while (asys_cli_next(&c)) {
        int limit = asys_cli_take_limits(&c, &a->limits);
        if (limit < 0)
            goto out;
        if (limit)
            continue;
        if (asys_cli_is(&c, "-r", "--report")) {
            if (asys_cli_list(&c, a->reports, &a->report_count, MAX_REPORTS, &a->report_texts) != 0)
                goto out;
            continue;
        }
        int taken = asys_cli_take_option(&c, &o);
        if (taken < 0 || (!taken && take_input(&c, a) != 0))
            goto out;
        if ((a->help = asys_cli_asked(&o)) != 0) {
            rc = 0;
            goto out;
        }
    }
    if (take_values(&o, a) != 0)
        goto out;
    a->input = a->input_count ? a->inputs[0] : NULL;
    rc = 0;
out:
    asys_cli_options_free(&o);
    return rc;
}

/* Options that do not apply to the chosen type are refused, not ignored. */
static int check_flame_options(const struct export_args *a)
{
    if (!a->flame) {
        if (a->stacks || a->pid >= 0 || a->tid >= 0) {
            fprintf(stderr, "%s: %s applies to the flame types (folded, speedscope, pprof, svg)\n",
                    PROG,
                    a->stacks     ? "--stacks"
                    : a->pid >= 0 ? "--pid"
                                  : "--tid");
            return -1;
        }
        return 0;
    }
    char names[64];
    stack_source_names(names, sizeof names);
    if (a->stacks && !stack_source_find(a->stacks)) {
        fprintf(stderr, "%s: unknown --stacks '%s' (%s)\n", PROG, a->stacks, names);
        return -1;
    }
    if (a->tables || a->report_count) {
        fprintf(stderr, "%s: %s does not apply to %s\n", PROG, a->tables ? "--tables" : "--report",
                a->flame->name);
        return -1;
    }
    if (a->gzip && a->flame->gzip) {
        fprintf(stderr, "%s: %s is always gzip-compressed; --gzip is not needed\n", PROG,
                a->flame->name);
        return -1;
    }
    return 0;
}

static int check_combination(const struct export_args *a)
{
    const char *type = a->flame ? a->flame->name : type_names[a->type];
    if (a->input_count > 1 && a->type != TYPE_PFTRACE && a->type != TYPE_JSON) {
        fprintf(stderr, "%s: several reports go into one timeline: -t pftrace or json, not %s\n",
                PROG, type);
        return -1;
    }
    if (!a->input) {
        fprintf(stderr, "%s: no report file given (usage: %s [options] REPORT.asys-rep)\n", PROG,
                PROG);
        return -1;
    }
    if (a->report_count && a->type != TYPE_CSV) {
        fprintf(stderr, "%s: --report needs --type csv\n", PROG);
        return -1;
    }
    if (a->report_count && a->tables) {
        fprintf(stderr, "%s: --report and --tables do not go together\n", PROG);
        return -1;
    }
    if (a->filter && (a->type == TYPE_SQLITE || (a->type == TYPE_CSV && !a->report_count))) {
        fprintf(stderr,
                "%s: --filter-time applies to pftrace, json and csv with --report, not %s\n", PROG,
                a->type == TYPE_SQLITE ? "sqlite" : "csv tables");
        return -1;
    }
    if (a->schema && a->type != TYPE_SQLITE) {
        fprintf(stderr, "%s: --schema applies to sqlite, not %s\n", PROG, type);
        return -1;
    }
    if (a->schema && !strcmp(a->schema, "nsys") && a->tables) {
        fprintf(stderr, "%s: --schema nsys and --tables do not go together\n", PROG);
        return -1;
    }
    if (a->gzip && a->type == TYPE_SQLITE) {
        fprintf(stderr, "%s: --gzip does not apply to %s\n", PROG, type);
        return -1;
    }
    if (check_flame_options(a) != 0)
        return -1;
    return 0;
}

/* ---- progress ------------------------------------------------------------------------------ */

struct progress {
    int enabled; /* stderr is a terminal and not --quiet */
    int shown; /* percent last drawn, -1: none */
    const char *what;
};

static void progress_draw(void *ctx, double done)
{
    struct progress *p = ctx;
    int pct = done >= 1 ? 100 : (int)(done * 100);
    if (!p->enabled || pct == p->shown)
        return;
    p->shown = pct;
    char bar[41];
    int filled = pct * 40 / 100;
    for (int i = 0; i < 40; i++)
        bar[i] = i < filled ? '#' : '.';
    bar[40] = '\0';
    fprintf(stderr, "\r%s: %s [%s] %3d%%", PROG, p->what, bar, pct);
}

static void progress_clear(struct progress *p)
{
    if (p->enabled && p->shown >= 0)
        fprintf(stderr, "\r\033[K");
    p->shown = -1;
}

/* Opens `path` (through a temporary file) or prints why not. */
static FILE *open_output(const struct export_args *a, const char *path, struct asys_out_file **file)
{
    struct asys_err err = {0};
    FILE *out = NULL;
    if (asys_out_file_open(file, path, a->force, a->gzip, &out, &err) != 0) {
        asys_err_print(PROG, "write", path, &err);
        return NULL;
    }
    return out;
}

/* ---- pftrace and json ---------------------------------------------------------------------- */

/* What a timeline is drawn from: one report's database, or several. */
struct timeline_source {
    int (*walk)(void *ctx, const struct tl_sink_ops *ops, void *sink, struct tl_stats *stats,
                struct asys_err *err);
    void *ctx;
    long long session_start;
    int has_boottime;
    int64_t boottime_minus_monotonic;
};

struct one_report {
    sqlite3 *db;
    const struct tl_options *opts;
};

static int walk_one(void *ctx, const struct tl_sink_ops *ops, void *sink, struct tl_stats *stats,
                    struct asys_err *err)
{
    const struct one_report *r = ctx;
    return asys_timeline_walk(r->db, r->opts, ops, sink, stats, err);
}

static int export_timeline(const struct export_args *a, const struct timeline_source *from,
                           const char *path, struct progress *bar)
{
    struct asys_err err = {0};
    struct asys_out_file *file = NULL;
    FILE *out = open_output(a, path, &file);
    if (!out)
        return -1;
    struct tl_stats stats;
    int rc;
    if (a->type == TYPE_PFTRACE) {
        struct asys_pftrace_sink *sink = asys_pftrace_sink_new(out, from->session_start);
        if (sink && from->has_boottime)
            asys_pftrace_sink_set_boottime(sink, from->boottime_minus_monotonic);
        rc = sink ? from->walk(from->ctx, &asys_pftrace_sink_ops, sink, &stats, &err)
                  : asys_fail(&err, "out of memory");
        if (rc == 0 && asys_pftrace_sink_finish(sink) != 0)
            rc = asys_fail(&err, "%s", strerror(errno));
        asys_pftrace_sink_free(sink);
    } else {
        struct asys_json_sink *sink = asys_json_sink_new(out, from->session_start);
        rc = sink ? from->walk(from->ctx, &asys_json_sink_ops, sink, &stats, &err)
                  : asys_fail(&err, "out of memory");
        if (rc == 0 && asys_json_sink_finish(sink) != 0)
            rc = asys_fail(&err, "%s", strerror(errno));
        asys_json_sink_free(sink);
    }
    progress_clear(bar);
    if (rc == 0 && ferror(out))
        rc = asys_fail(&err, "%s", strerror(errno));
    if (rc != 0) {
        asys_out_file_discard(file);
        asys_err_print(PROG, "write", path, &err);
        return -1;
    }
    if (asys_out_file_close(file, 1, &err) != 0) {
        asys_err_print(PROG, "write", path, &err);
        return -1;
    }
    if (a->verbose || !a->quiet)
        fprintf(stderr,
                "%s: wrote '%s': %llu slices, %llu instants, %llu counter values, %llu flows, "
                "%llu tracks\n",
                PROG, path, (unsigned long long)stats.slices, (unsigned long long)stats.instants,
                (unsigned long long)stats.counter_values, (unsigned long long)stats.flows,
                (unsigned long long)stats.tracks);
    return 0;
}

/* ---- several reports: one timeline ------------------------------------------------------- */

struct rank_input {
    const char *path; /* borrowed from the set's inputs */
    long long rank; /* LLONG_MAX: none recorded (after the ranked ones) */
    size_t order; /* as given, for reports without a rank */
    char host[128];
    int64_t realtime_offset; /* CLOCK_REALTIME - CLOCK_MONOTONIC of its host */
    int64_t start; /* session start, CLOCK_MONOTONIC */
};

struct rank_set {
    const struct export_args *a;
    struct asys_report_inputs inputs; /* the reports, directories expanded */
    struct asys_db_options *dbo;
    struct rank_input *items;
    size_t count, cap;
    long long filter_start, filter_end; /* --filter-time, relative to the first start */
    long long session_start; /* on the first report's clock */
    pcre2_code *re;
    struct progress *bar;
};

static int rank_set_add(struct rank_set *set, const char *path)
{
    if (set->count == TL_RANKS_MAX ||
        asys_grow(&set->items, &set->cap, set->count, sizeof *set->items, 16) != 0) {
        fprintf(stderr, "%s: more than %d reports for one timeline\n", PROG, TL_RANKS_MAX);
        return -1;
    }
    struct rank_input *in = &set->items[set->count];
    memset(in, 0, sizeof *in);
    in->path = path;
    in->order = set->count++;
    return 0;
}

static void rank_set_free(struct rank_set *set)
{
    free(set->items);
    asys_report_inputs_free(&set->inputs);
}

/* The report's rank, host and clock, from its analysis database (built now
 * when missing). */
static int rank_read(struct rank_set *set, struct rank_input *in)
{
    struct asys_report_db rdb = {0};
    struct asys_err err = {0};
    if (asys_report_db_open_shown(in->path, set->dbo, PROG, set->a->quiet, &rdb, &err) != 0) {
        asys_err_print(PROG, "open", in->path, &err);
        return -1;
    }
    int64_t v;
    in->rank = asys_session_value(rdb.db, "rank", &v) ? v : LLONG_MAX;
    in->realtime_offset = asys_session_value(rdb.db, "realtime_minus_monotonic_ns", &v) ? v : 0;
    in->start = asys_session_value(rdb.db, "start_ns", &v) ? v : 0;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(rdb.db, "SELECT value FROM session_info WHERE key = 'hostname'", -1, &st,
                           NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        snprintf(in->host, sizeof in->host, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    asys_report_db_close(&rdb);
    return 0;
}

static int by_rank(const void *x, const void *y)
{
    const struct rank_input *a = x, *b = y;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

/* Every report's facts, in rank order; two reports of one rank refused. */
static int rank_set_prepare(struct rank_set *set)
{
    for (size_t i = 0; i < set->count; i++)
        if (rank_read(set, &set->items[i]) != 0)
            return -1;
    qsort(set->items, set->count, sizeof *set->items, by_rank);
    for (size_t i = 1; i < set->count; i++)
        if (set->items[i].rank != LLONG_MAX && set->items[i].rank == set->items[i - 1].rank) {
            fprintf(stderr, "%s: '%s' and '%s' are both rank %lld\n", PROG, set->items[i - 1].path,
                    set->items[i].path, set->items[i].rank);
            return -1;
        }
    set->session_start = LLONG_MAX;
    for (size_t i = 0; i < set->count; i++) {
        const struct rank_input *in = &set->items[i];
        long long start = in->start + (in->realtime_offset - set->items[0].realtime_offset);
        set->session_start = start < set->session_start ? start : set->session_start;
    }
    return 0;
}

/* Each report through its view, on the first report's clock. */
static int walk_ranks(void *ctx, const struct tl_sink_ops *ops, void *sink, struct tl_stats *total,
                      struct asys_err *err)
{
    struct rank_set *set = ctx;
    memset(total, 0, sizeof *total);
    for (size_t i = 0; i < set->count; i++) {
        const struct rank_input *in = &set->items[i];
        struct tl_rank_view view = {.ops = ops, .sink = sink, .index = (uint32_t)i};
        view.shift_ns = in->realtime_offset - set->items[0].realtime_offset;
        if (in->rank != LLONG_MAX)
            snprintf(view.label, sizeof view.label, "rank %lld (%s)", in->rank, in->host);
        else
            snprintf(view.label, sizeof view.label, "report %zu (%s)", i, in->host);
        struct asys_report_db rdb = {0};
        if (asys_report_db_open(in->path, set->dbo, &rdb, err) != 0)
            return asys_err_wrap(err, "'%s'", in->path);
        /* --filter-time: the same window of the shared axis in every report */
        struct tl_options opts = {
            set->a->filter ? set->session_start + set->filter_start - view.shift_ns : LLONG_MIN,
            set->a->filter && set->filter_end != LLONG_MAX
                ? set->session_start + set->filter_end - view.shift_ns
                : LLONG_MAX,
            set->a->group_kernels ? set->a->group_kernels : "base",
            set->a->api_name_mode ? set->a->api_name_mode : "host",
            set->re,
            set->a->unified_memory_scale,
            progress_draw,
            set->bar};
        struct tl_stats stats;
        int rc = asys_timeline_walk(rdb.db, &opts, &tl_rank_view_ops, &view, &stats, err);
        asys_report_db_close(&rdb);
        tl_rank_view_free(&view);
        if (rc != 0)
            return asys_err_wrap(err, "'%s'", in->path);
        total->slices += stats.slices;
        total->instants += stats.instants;
        total->counter_values += stats.counter_values;
        total->tracks += stats.tracks;
        total->flows += stats.flows;
    }
    return 0;
}

static int export_ranks(const struct export_args *a, struct asys_db_options *dbo,
                        long long filter_start, long long filter_end, pcre2_code *re)
{
    struct progress bar = {!a->quiet && isatty(STDERR_FILENO), -1, "exporting"};
    struct rank_set set = {.a = a,
                           .dbo = dbo,
                           .filter_start = filter_start,
                           .filter_end = filter_end,
                           .re = re,
                           .bar = &bar};
    int rc = -1;
    if (a->type != TYPE_PFTRACE && a->type != TYPE_JSON) {
        fprintf(stderr, "%s: several reports go into one timeline: -t pftrace or json\n", PROG);
        goto out;
    }
    if (!a->output) {
        fprintf(stderr, "%s: several reports need -o OUT for their timeline\n", PROG);
        goto out;
    }
    struct asys_err err = {0};
    if (asys_report_inputs_expand(a->inputs, a->input_count, &set.inputs, &err) != 0) {
        fprintf(stderr, "%s: %s\n", PROG, err.text);
        goto out;
    }
    for (int i = 0; i < set.inputs.count; i++)
        if (rank_set_add(&set, set.inputs.paths[i]) != 0)
            goto out;
    if (rank_set_prepare(&set) != 0)
        goto out;
    struct timeline_source from = {walk_ranks, &set, set.session_start, 0, 0};
    struct asys_report_db first = {0};
    if (asys_report_db_open(set.items[0].path, dbo, &first, &err) == 0) {
        from.has_boottime = asys_session_value(first.db, "boottime_minus_monotonic_ns",
                                               &from.boottime_minus_monotonic);
        asys_report_db_close(&first);
    }
    rc = export_timeline(a, &from, a->output, &bar);
out:
    rank_set_free(&set);
    return rc;
}

/* ---- csv --------------------------------------------------------------------------------- */

/* The files of one csv export, committed together so that a failure leaves
 * none of them behind: every target is checked before the first rename, and
 * a rename that still fails takes back the files renamed before it that did
 * not exist before. */
struct csv_file {
    struct asys_out_file *file;
    char path[PATH_MAX];
    long long rows;
    int existed; /* replaced (-f): cannot be taken back */
};

struct file_set {
    struct csv_file *files;
    size_t count, cap;
    int force;
};

static int file_set_add(struct file_set *s, struct asys_out_file *f, const char *path,
                        long long rows)
{
    if (asys_grow(&s->files, &s->cap, s->count, sizeof *s->files, 16))
        return -1;
    struct csv_file *c = &s->files[s->count++];
    c->file = f;
    snprintf(c->path, sizeof c->path, "%s", path);
    c->rows = rows;
    c->existed = 0;
    return 0;
}

/* Whether every target can still be written (it may have appeared since
 * it was opened); prints why not. */
static int file_set_check(struct file_set *s)
{
    for (size_t i = 0; i < s->count; i++) {
        struct stat st;
        struct csv_file *c = &s->files[i];
        c->existed = lstat(c->path, &st) == 0;
        const char *why = !c->existed           ? NULL
                          : S_ISDIR(st.st_mode) ? "it is a directory (give a file name)"
                          : !s->force           ? "file exists (use --force-overwrite)"
                                                : NULL;
        if (why) {
            fprintf(stderr, "%s: cannot write '%s': %s\n", PROG, c->path, why);
            return -1;
        }
    }
    return 0;
}

/* Commits every file (ok) or discards them all; frees the set. */
static int file_set_close(struct file_set *s, int ok, const struct export_args *a)
{
    int rc = ok ? file_set_check(s) : -1;
    size_t committed = 0;
    for (size_t i = 0; i < s->count; i++) {
        struct asys_err err = {0};
        if (rc != 0) {
            asys_out_file_discard(s->files[i].file);
        } else if (asys_out_file_commit(s->files[i].file, &err) != 0) {
            asys_err_print(PROG, "write", s->files[i].path, &err);
            rc = -1;
        } else {
            committed++;
        }
    }
    for (size_t i = 0; i < committed; i++) {
        if (rc != 0 && !s->files[i].existed)
            unlink(s->files[i].path);
        else if (rc == 0 && (a->verbose || !a->quiet))
            fprintf(stderr, "%s: wrote '%s': %lld rows\n", PROG, s->files[i].path,
                    s->files[i].rows);
    }
    free(s->files);
    return rc;
}

/* Writes the rows of `st` to BASE_NAME.csv[.gz] and adds it to `set`. */
static int write_csv(const struct export_args *a, const char *base, const char *name,
                     sqlite3_stmt *st, struct file_set *set)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s_%s.csv%s", base, name, a->gzip ? ".gz" : "") >=
        (int)sizeof path) {
        fprintf(stderr, "%s: cannot write '%s_%s.csv': path too long\n", PROG, base, name);
        return -1;
    }
    struct asys_err err = {0};
    struct asys_out_file *file = NULL;
    FILE *out = open_output(a, path, &file);
    if (!out)
        return -1;
    struct asys_output_options o = {.format = ASYS_FMT_CSV, .time_divisor = 1, .time_unit = "ns"};
    long long rows = asys_write_rows(out, st, &o, &err);
    if (rows < 0 || ferror(out) || asys_out_file_finish(file, &err) != 0) {
        if (rows >= 0 && !err.text[0])
            asys_fail(&err, "%s", strerror(errno));
        asys_err_print(PROG, "write", path, &err);
        asys_out_file_discard(file);
        return -1;
    }
    if (file_set_add(set, file, path, rows) != 0) {
        asys_out_file_discard(file);
        fprintf(stderr, "%s: out of memory\n", PROG);
        return -1;
    }
    return 0;
}

/* One csv file per table of the analysis database (matching --tables). */
static int export_csv_tables(const struct export_args *a, sqlite3 *db, const char *base,
                             pcre2_code *re)
{
    sqlite3_stmt *list = NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT name FROM sqlite_schema WHERE type = 'table'\n"
                           "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
                           -1, &list, NULL) != SQLITE_OK) {
        fprintf(stderr, "%s: cannot list the tables: %s\n", PROG, sqlite3_errmsg(db));
        return -1;
    }
    struct file_set set = {.force = a->force};
    int rc = 0, written = 0;
    while (rc == 0 && sqlite3_step(list) == SQLITE_ROW) {
        const char *table = asys_column_text(list, 0);
        if (!tl_table_matches(re, table))
            continue;
        char *sql = sqlite3_mprintf("SELECT * FROM \"%w\"", table);
        sqlite3_stmt *st = NULL;
        if (!sql || sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
            fprintf(stderr, "%s: cannot read table '%s': %s\n", PROG, table, sqlite3_errmsg(db));
            rc = -1;
        } else {
            rc = write_csv(a, base, table, st, &set);
            written++;
        }
        sqlite3_finalize(st);
        sqlite3_free(sql);
    }
    sqlite3_finalize(list);
    if (rc == 0 && !written) {
        fprintf(stderr, "%s: no table matches --tables '%s'\n", PROG, a->tables);
        rc = -1;
    }
    return file_set_close(&set, rc == 0, a);
}

/* The --report names, checked before anything is imported; 0 or -1 after
 * printing why. */
static int find_reports(const struct export_args *a, struct asys_report_catalog *cat,
                        const struct asys_report_def **defs)
{
    struct asys_err err = {0};
    if (asys_catalog_load_builtin(cat, &err) != 0) {
        fprintf(stderr, "%s: cannot load the reports: %s\n", PROG, err.text);
        return -1;
    }
    for (int i = 0; i < a->report_count; i++) {
        defs[i] = asys_catalog_find(cat, a->reports[i]);
        if (!defs[i]) {
            fprintf(stderr, "%s: unknown report '%s' (see asys-stats --help-reports)\n", PROG,
                    a->reports[i]);
            return -1;
        }
        if (asys_report_check_argument(defs[i], a->reports[i], &err) != 0) {
            fprintf(stderr, "%s: %s\n", PROG, err.text);
            return -1;
        }
    }
    return 0;
}

/* One csv file per stats report, with the report parameters of the options. */
static int export_csv_reports(const struct export_args *a, sqlite3 *db, const char *base,
                              const struct asys_report_def *const *defs,
                              const struct asys_report_params *p)
{
    struct asys_err err = {0};
    struct file_set set = {.force = a->force};
    int rc = 0;
    for (int i = 0; rc == 0 && i < a->report_count; i++) {
        sqlite3_stmt *st = NULL;
        if (asys_report_prepare(db, defs[i], a->reports[i], p, &st, &err) != 0) {
            if (err.kind == ASYS_ERR_NO_DATA) { /* as asys-stats: SKIPPED, no file */
                fprintf(stderr, "%s: SKIPPED: report '%s' has no data: %s\n", PROG, defs[i]->name,
                        err.text);
                err = (struct asys_err){0};
                continue;
            }
            fprintf(stderr, "%s: cannot run report '%s': %s\n", PROG, defs[i]->name, err.text);
            rc = -1;
        } else {
            rc = write_csv(a, base, defs[i]->name, st, &set);
        }
        sqlite3_finalize(st);
    }
    return file_set_close(&set, rc == 0, a);
}

/* ---- sqlite ------------------------------------------------------------------------------- */

/* Drops the tables that do not match, then the views that no longer work. */
static int keep_tables(sqlite3 *db, pcre2_code *re, struct asys_err *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT type, name FROM sqlite_schema WHERE type IN ('table', 'view')\n"
                           "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'\n"
                           "ORDER BY type = 'view'",
                           -1, &st, NULL) != SQLITE_OK)
        return asys_fail(err, "%s", sqlite3_errmsg(db));
    /* names first: the schema changes under a running statement otherwise */
    char **names = NULL;
    int *views = NULL;
    size_t count = 0;
    int rc = 0;
    while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
        char **more_names = realloc(names, (count + 1) * sizeof *names);
        int *more_views = realloc(views, (count + 1) * sizeof *views);
        if (more_names)
            names = more_names;
        if (more_views)
            views = more_views;
        if (!more_names || !more_views || !(names[count] = strdup(asys_column_text(st, 1)))) {
            rc = asys_fail(err, "out of memory");
            break;
        }
        views[count++] = !strcmp(asys_column_text(st, 0), "view");
    }
    sqlite3_finalize(st);
    for (size_t i = 0; rc == 0 && i < count; i++) {
        char *sql = NULL;
        if (!views[i] && !tl_table_matches(re, names[i])) {
            sql = sqlite3_mprintf("DROP TABLE \"%w\"", names[i]);
        } else if (views[i]) {
            char *probe = sqlite3_mprintf("SELECT * FROM \"%w\" LIMIT 0", names[i]);
            sqlite3_stmt *test = NULL;
            if (probe && sqlite3_prepare_v2(db, probe, -1, &test, NULL) != SQLITE_OK)
                sql = sqlite3_mprintf("DROP VIEW \"%w\"", names[i]);
            sqlite3_finalize(test);
            sqlite3_free(probe);
        }
        if (sql && sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
            rc = asys_fail(err, "%s", sqlite3_errmsg(db));
        sqlite3_free(sql);
    }
    for (size_t i = 0; i < count; i++)
        free(names[i]);
    free(names);
    free(views);
    return rc;
}

/* --schema nsys: nsys's export tables made in the copy (export/nsys_schema.sql),
 * then asys's own dropped. */
static int make_nsys_tables(sqlite3 *copy, struct asys_err *err)
{
    const char *sql = NULL;
    for (const struct asys_embedded_file *f = asys_nsys_schema_files; f->name; f++)
        if (!strcmp(f->name, "nsys_schema.sql"))
            sql = f->text;
    if (!sql)
        return asys_fail(err, "nsys_schema.sql is not built in");
    char *message = NULL;
    if (sqlite3_exec(copy, sql, NULL, NULL, &message) != SQLITE_OK) {
        asys_fail(err, "nsys tables: %s", message ? message : sqlite3_errmsg(copy));
        sqlite3_free(message);
        return -1;
    }
    int code = 0;
    PCRE2_SIZE offset = 0;
    pcre2_code *nsys = pcre2_compile(
        (PCRE2_SPTR) "^(StringIds|ThreadNames|TARGET_INFO_.*|CUPTI_ACTIVITY_KIND_.*|NVTX_EVENTS|"
                     "OSRT_API|ENUM_.*)$",
        PCRE2_ZERO_TERMINATED, 0, &code, &offset, NULL);
    if (!nsys)
        return asys_fail(err, "out of memory");
    int rc = keep_tables(copy, nsys, err);
    pcre2_code_free(nsys);
    return rc;
}

static int export_sqlite(const struct export_args *a, struct asys_report_db *rdb, const char *path,
                         pcre2_code *re)
{
    int nsys = a->schema && !strcmp(a->schema, "nsys");
    char real_out[PATH_MAX], real_db[PATH_MAX];
    if (realpath(path, real_out) && realpath(rdb->path, real_db) && !strcmp(real_out, real_db)) {
        if (re || nsys) {
            fprintf(stderr,
                    "%s: cannot write '%s': it is the analysis database; give --output for a "
                    "copy with %s\n",
                    PROG, path, nsys ? "nsys's tables" : "only some tables");
            return -1;
        }
        if (a->verbose || !a->quiet)
            fprintf(stderr, "%s: '%s' is the analysis database, up to date\n", PROG, path);
        return 0;
    }
    struct asys_err err = {0};
    struct asys_out_file *file = NULL;
    if (asys_out_file_open(&file, path, a->force, 0, NULL, &err) != 0) {
        asys_err_print(PROG, "write", path, &err);
        return -1;
    }
    const char *tmp = asys_out_file_temp_path(file);
    char *sql = sqlite3_mprintf("VACUUM INTO %Q", tmp);
    int rc = sql && sqlite3_exec(rdb->db, sql, NULL, NULL, NULL) == SQLITE_OK
                 ? 0
                 : asys_fail(&err, "%s", sqlite3_errmsg(rdb->db));
    sqlite3_free(sql);
    if (rc == 0 && (re || nsys)) {
        sqlite3 *copy = NULL;
        if (sqlite3_open_v2(tmp, &copy, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
            rc = asys_fail(&err, "%s", sqlite3_errmsg(copy));
        else if ((nsys ? make_nsys_tables(copy, &err) : keep_tables(copy, re, &err)) == 0 &&
                 sqlite3_exec(copy, "VACUUM", NULL, NULL, NULL) != SQLITE_OK)
            rc = asys_fail(&err, "%s", sqlite3_errmsg(copy));
        else if (err.text[0])
            rc = -1;
        sqlite3_close(copy);
    }
    if (rc != 0 || asys_out_file_close(file, 1, &err) != 0) {
        if (rc != 0)
            asys_out_file_discard(file);
        asys_err_print(PROG, "write", path, &err);
        return -1;
    }
    if (a->verbose || !a->quiet)
        fprintf(stderr, "%s: wrote '%s'\n", PROG, path);
    return 0;
}

/* ---- main ------------------------------------------------------------------------------------ */

static void warn(void *ctx, const char *text)
{
    (void)ctx;
    fprintf(stderr, "%s: warning: %s\n", PROG, text);
}

static void on_build(void *ctx, const char *report, const char *db_path)
{
    const struct export_args *a = ctx;
    if (!a->quiet && isatty(STDERR_FILENO))
        fprintf(stderr, "%s: importing '%s' into '%s'\n", PROG, report, db_path);
}

static pcre2_code *compile_tables(const char *pattern)
{
    int code;
    PCRE2_SIZE offset;
    pcre2_code *re =
        pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, 0, &code, &offset, NULL);
    if (!re) {
        PCRE2_UCHAR message[256];
        pcre2_get_error_message(code, message, sizeof message);
        fprintf(stderr, "%s: bad --tables '%s': %s at offset %zu\n", PROG, pattern,
                (const char *)message, (size_t)offset);
    }
    return re;
}

/* The default output: beside the report, named after it. */
static void default_output(const struct export_args *a, const struct asys_report_db *rdb, char *out,
                           size_t size)
{
    char base[PATH_MAX];
    asys_report_base(a->input, base, sizeof base);
    if (a->type == TYPE_CSV)
        snprintf(out, size, "%s", base);
    else if (a->flame)
        snprintf(out, size, "%s.%s%s", base, a->flame->extension, a->gzip ? ".gz" : "");
    else if (a->type == TYPE_SQLITE)
        snprintf(out, size, "%s", rdb->path);
    else
        snprintf(out, size, "%s.%s%s", base, type_names[a->type], a->gzip ? ".gz" : "");
}

/* ---- flame types ------------------------------------------------------------------------- */

static int export_flame(const struct export_args *a, sqlite3 *db, const char *path,
                        const struct asys_report_params *p)
{
    char title[PATH_MAX];
    asys_report_base(a->input, title, sizeof title);
    const char *slash = strrchr(title, '/');
    struct flame_request r = {a->flame,
                              stack_source_find(a->stacks ? a->stacks : "cpu"),
                              {p->filter_start, p->filter_end, a->pid, a->tid},
                              path,
                              slash ? slash + 1 : title,
                              a->force,
                              a->gzip};
    struct asys_err err = {0};
    if (flame_export(db, &r, &err) != 0) {
        asys_err_print(PROG, "export", a->input, &err);
        return -1;
    }
    if (a->verbose || !a->quiet)
        fprintf(stderr, "%s: wrote '%s'\n", PROG, path);
    return 0;
}

/* Writes the export of the chosen type to `path`; 0 or -1 (the reason printed). */
static int export_to(const struct export_args *a, struct asys_report_db *rdb, const char *path,
                     const struct asys_report_params *p, const struct asys_report_def **defs,
                     pcre2_code *re)
{
    if (a->type == TYPE_PFTRACE || a->type == TYPE_JSON) {
        struct progress bar = {!a->quiet && isatty(STDERR_FILENO), -1, "exporting"};
        struct tl_options opts = {
            p->filter_start,         p->filter_end, p->group_by, p->api_name_mode, re,
            a->unified_memory_scale, progress_draw, &bar};
        struct one_report one = {rdb->db, &opts};
        struct timeline_source from = {walk_one, &one, p->session_start, 0, 0};
        from.has_boottime = asys_session_value(rdb->db, "boottime_minus_monotonic_ns",
                                               &from.boottime_minus_monotonic);
        return export_timeline(a, &from, path, &bar);
    }
    if (a->flame)
        return export_flame(a, rdb->db, path, p);
    if (a->type == TYPE_CSV)
        return a->report_count ? export_csv_reports(a, rdb->db, path, defs, p)
                               : export_csv_tables(a, rdb->db, path, re);
    return export_sqlite(a, rdb, path, re);
}

int main(int argc, char **argv)
{
    asys_tune_allocator(argv);
    asys_cleanup_set_program(PROG);
    struct export_args a;
    struct asys_report_catalog cat = {0};
    struct asys_report_db rdb = {0};
    struct asys_err err = {0};
    const struct asys_report_def *defs[MAX_REPORTS];
    pcre2_code *re = NULL;
    int rc = ASYS_EXIT_USAGE, have_db = 0;
    if (parse_args(argc, argv, &a) != 0)
        goto out;
    if (a.help == ASYS_CLI_VERSION) {
        asys_cli_print_version(PROG);
        rc = ASYS_EXIT_OK;
        goto out;
    }
    if (a.help) {
        usage(stdout);
        rc = ASYS_EXIT_OK;
        goto out;
    }
    if (check_combination(&a) != 0)
        goto out;
    long long filter_start = 0, filter_end = LLONG_MAX;
    if (a.filter && asys_parse_filter_time(a.filter, &filter_start, &filter_end) != 0) {
        fprintf(stderr, "%s: bad --filter-time '%s' (START/END, e.g. 1.5s/3s)\n", PROG, a.filter);
        goto out;
    }
    if (a.tables && !(re = compile_tables(a.tables)))
        goto out;
    if (a.report_count && find_reports(&a, &cat, defs) != 0)
        goto out; /* an unknown report is a usage error, as in asys-stats */
    rc = ASYS_EXIT_FAILURE;
    struct asys_db_options dbo = {.sqlite_path = a.sqlite_path,
                                  .warn = warn,
                                  .warn_ctx = &a,
                                  .on_build = on_build,
                                  .limits = &a.limits,
                                  .force_overwrite = a.force};
    struct stat input_st;
    if (a.input_count > 1 || (stat(a.input, &input_st) == 0 && S_ISDIR(input_st.st_mode))) {
        rc = export_ranks(&a, &dbo, filter_start, filter_end, re) == 0 ? ASYS_EXIT_OK
                                                                       : ASYS_EXIT_FAILURE;
        goto out;
    }
    if (asys_report_db_open_shown(a.input, &dbo, PROG, a.quiet, &rdb, &err) != 0) {
        asys_err_print(PROG, "open", a.input, &err);
        goto out;
    }
    have_db = 1;
    struct asys_report_params p;
    asys_report_params_init(&p, rdb.db);
    if (a.group_kernels)
        p.group_by = a.group_kernels;
    if (a.api_name_mode)
        p.api_name_mode = a.api_name_mode;
    p.filter_start = a.filter ? p.session_start + filter_start : LLONG_MIN;
    p.filter_end = a.filter && filter_end != LLONG_MAX ? p.session_start + filter_end : LLONG_MAX;
    char path[PATH_MAX + 64];
    if (a.output)
        snprintf(path, sizeof path, "%s", a.output);
    else
        default_output(&a, &rdb, path, sizeof path);
    rc = export_to(&a, &rdb, path, &p, defs, re) == 0 ? ASYS_EXIT_OK : ASYS_EXIT_FAILURE;
    /* the last line says what the report lost, as nsys does */
    struct asys_report_losses losses;
    if (asys_report_losses_read(rdb.db, &losses) == 0)
        asys_report_losses_warn(PROG, &losses);
out:
    if (have_db)
        asys_report_db_close(&rdb);
    pcre2_code_free(re);
    asys_catalog_free(&cat);
    asys_cli_texts_free(&a.report_texts);
    return rc;
}
