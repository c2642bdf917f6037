/* asys-stats: summary reports of a report, as SQL over its analysis database. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "allocator_tuning.h"
#include "cleanup.h"
#include "cli_args.h"
#include "parse_util.h"
#include "output_format.h"
#include "partial_cache.h"
#include "report_catalog.h"
#include "hgtx_window.h"
#include "import_progress.h"
#include "report_losses.h"
#include "report_db.h"
#include "report_merge.h"
#include "report_partial.h"
#include "report_run.h"
#include "stats_multi.h"
#include "time_filter.h"

#define PROG "asys-stats"
#define MAX_REPORTS 64
#define MAX_INPUTS 65536
#define MAX_FORWARD 256

struct stats_args {
    struct asys_report_limits limits; /* --max-expansion ... */
    const char *reports[MAX_REPORTS];
    struct asys_cli_texts report_texts; /* what reports[] points into */
    int report_count;
    const char *format_name;
    const char *output;
    const char *timeunit;
    const char *filter;
    const char *filter_nvtx; /* --filter-nvtx RANGE[@DOMAIN][/N] */
    const char *report_dir;
    const char *sqlite_path;
    const char *help_report; /* --help-reports NAME, or "" for the list */
    int help_reports;
    int help_formats; /* --help-formats */
    int force_export;
    int quiet;
    int force_overwrite; /* --force-overwrite: --sqlite may replace any file */
    int help;
    const char *group_by; /* --group-by base|hgtx */
    const char *api_name_mode; /* --api-name-mode host|kernel */
    long long buckets; /* --buckets N */
    long long pid, tid; /* --pid / --tid; -1: every one */
    long long query_timeout_s; /* --query-timeout S */
    int forward_from; /* parse_args: where the option being read starts */
    long long filter_start, filter_end; /* --filter-time, relative to each session start */
    const char *input; /* the report of a single-report run */
    const char **inputs; /* every report, directory or (--merge) partial given */
    int input_count;
    const char *partial_out; /* --partial OUT */
    int merge; /* --merge: the inputs are partials */
    long long jobs; /* -j N; 0: the number of cores */
    const char *scheduler; /* --scheduler ADDR or DASK_SCHEDULER_ADDRESS */
    char *forward[MAX_FORWARD]; /* the options a Dask task's asys-stats --partial gets */
    int forward_count;
    const char *kernel; /* --kernel NAME[#N] or a correlation id */
    enum asys_format formats[MAX_REPORTS]; /* -f's list: one, or one per report of -r */
    int format_count;
};

static const char *const groupings[] = {"base", "hgtx", NULL};
static const char *const api_name_modes[] = {"host", "kernel", NULL};

static const struct asys_option stats_options[] = {
    /* -r and --help-reports are parsed on their own (a repeatable list, an
     * optional name); they are here for --help */
    {.name = "report",
     .short_name = 'r',
     .type = ASYS_OPT_TEXT,
     .metavar = "NAME[,NAME...]",
     .help = "reports to run (repeatable; NAME:ARG passes ARG); default: every report marked "
             "default"},
    {.name = "format",
     .short_name = 'f',
     .type = ASYS_OPT_TEXT,
     .metavar = "FMT[,FMT...]",
     .help = "column, table, csv, tsv, json (one, or one per report); default: column on the "
             "console, csv for files"},
    {.name = "help-formats", .type = ASYS_OPT_FLAG, .help = "what each format writes"},
    {.name = "output",
     .short_name = 'o',
     .type = ASYS_OPT_TEXT,
     .metavar = "-|@CMD|BASE",
     .help = "stdout (default), pipe into CMD, or files BASE_REPORTNAME.EXT"},
    {.name = "timeunit",
     .type = ASYS_OPT_TEXT,
     .metavar = "UNIT",
     .help = "ns (default), us, ms, s for the (ns) columns"},
    {.name = "filter-time",
     .type = ASYS_OPT_TEXT,
     .metavar = "START/END",
     .help = "only this window, relative to the session start; e.g. 1.5s/3s, 2000000/ (ns by "
             "default)"},
    {.name = "filter-nvtx",
     .type = ASYS_OPT_TEXT,
     .metavar = "RANGE[@DOMAIN|@*][/N]",
     .help = "only the time of the Nth instance (from 0) of that HGTX range (default domain "
             "unless @DOMAIN; exit 1 when the report has none)"},
    {.name = "group-by",
     .type = ASYS_OPT_CHOICE,
     .metavar = "base|hgtx",
     .choices = groupings,
     .help = "kernels grouped by base name (default) or by the innermost HGTX range open at the "
             "launch"},
    {.name = "group-kernels",
     .type = ASYS_OPT_CHOICE,
     .metavar = "base|hgtx",
     .choices = groupings,
     .help = "the same as --group-by (asys-export's old name)"},
    {.name = "api-name-mode",
     .type = ASYS_OPT_CHOICE,
     .metavar = "host|kernel",
     .choices = api_name_modes,
     .help = "launch calls shown by their own name (default) or by the kernel they launched"},
    {.name = "buckets",
     .type = ASYS_OPT_COUNT,
     .metavar = "N",
     .min = 1,
     .max = 100000,
     .help = "time buckets of series reports (default 50)"},
    {.name = "kernel",
     .type = ASYS_OPT_TEXT,
     .metavar = "NAME[#N]|ID",
     .help = "kernel_profile_cmd: the kernel (base, demangled or mangled name), its launch N "
             "(from 0), or the launch of correlation id ID"},
    {.name = "pid",
     .type = ASYS_OPT_COUNT,
     .metavar = "PID",
     .max = INT32_MAX,
     .help = "only this process (the call-tree reports: stack_topdown, stack_bottomup, ...)"},
    {.name = "tid",
     .type = ASYS_OPT_COUNT,
     .metavar = "TID",
     .max = INT32_MAX,
     .help = "only this thread"},
    {.name = "query-timeout",
     .type = ASYS_OPT_COUNT,
     .metavar = "S",
     .max = 1u << 30,
     .default_value = "600",
     .help = "stop a report's query after S seconds (0: never)"},
    {.name = "report-dir",
     .type = ASYS_OPT_TEXT,
     .metavar = "DIR",
     .help = "add or replace reports with DIR/*.sql"},
    {.name = "help-reports",
     .type = ASYS_OPT_TEXT,
     .metavar = "[NAME]",
     .help = "list the reports, or describe one"},
    ASYS_CLI_SQLITE_OPTION,
    {.name = "force-overwrite",
     .type = ASYS_OPT_BOOL,
     .metavar = "[true]",
     .help = "--sqlite may replace a file that is not one (no short form: -f is --format, as in "
             "nsys stats)"},
    {.name = "force-export",
     .type = ASYS_OPT_BOOL,
     .metavar = "[true]",
     .help = "rebuild the analysis database"},
    {.name = "jobs",
     .short_name = 'j',
     .type = ASYS_OPT_COUNT,
     .metavar = "N",
     .min = 1,
     .max = 4096,
     .help = "import and summarize N reports at once (default: the number of cores)"},
    {.name = "partial",
     .type = ASYS_OPT_TEXT,
     .metavar = "OUT",
     .help = "write the report's partial result to OUT (for --merge) instead of printing reports"},
    {.name = "merge",
     .type = ASYS_OPT_FLAG,
     .help = "the inputs are partials: merge and print them"},
    {.name = "scheduler",
     .type = ASYS_OPT_TEXT,
     .metavar = "ADDR",
     .help = "make the partials on the Dask cluster of that scheduler (default: "
             "$DASK_SCHEDULER_ADDRESS; needs python3-distributed; reports on a shared filesystem)"},
    {.name = "quiet", .short_name = 'q', .type = ASYS_OPT_FLAG, .help = "no progress messages"},
    ASYS_CLI_HELP_OPTIONS,
};
#define STATS_OPTION_COUNT (sizeof stats_options / sizeof stats_options[0])

static void usage(FILE *out)
{
    fprintf(out, "usage: asys-stats [options] REPORT.asys-rep|DIR...\n"
                 "       asys-stats --partial OUT [options] REPORT.asys-rep\n"
                 "       asys-stats --merge [options] PARTIAL...\n\n"
                 "Imports the report into REPORT.sqlite (once; rebuilt when the report or\n"
                 "the schema changes) and prints summary reports.  Several reports, or\n"
                 "directories of reports (one per rank), make one analysis: each report's\n"
                 "rows behind Rank and Host columns, and the multi-report reports\n"
                 "(rank_sum, pccl_skew, rank_outliers).\n\n");
    asys_cli_print_options(out, stats_options, STATS_OPTION_COUNT);
    fputs(asys_cli_limits_help, out);
}

/* The options that shape a report's rows, which a Dask task's asys-stats
 * --partial gets as they were given; those of the output (-f, -o,
 * --timeunit), of the run (-j, -q, --scheduler, --partial, --merge) and the
 * inputs stay here. */
static int forward_previous(struct stats_args *a, const struct asys_cli *c, int last)
{
    if (a->forward_from < 1)
        return 0;
    static const char *const local[] = {
        "-f",        "--format", "-o",       "--output",         "--timeunit",
        "-q",        "--quiet",  "-j",       "--jobs",           "--scheduler",
        "--partial", "--merge",  "--sqlite", "--force-overwrite"};
    const char *first = c->argv[a->forward_from];
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(first, "="), first);
    if (first[0] != '-' || !first[1])
        return 0; /* an input */
    for (size_t i = 0; i < sizeof local / sizeof local[0]; i++)
        if (!strcmp(name, local[i]))
            return 0;
    for (int i = a->forward_from; i <= last && i < c->argc; i++) {
        if (a->forward_count == MAX_FORWARD) {
            fprintf(stderr, "%s: too many options\n", PROG);
            return -1;
        }
        a->forward[a->forward_count++] = c->argv[i];
    }
    return 0;
}

static void take_values(const struct asys_cli_options *o, struct stats_args *a)
{
    a->format_name = asys_cli_text(o, "format");
    a->help_formats = asys_cli_given(o, "help-formats");
    a->output = asys_cli_text(o, "output");
    a->timeunit = asys_cli_text(o, "timeunit");
    a->filter = asys_cli_text(o, "filter-time");
    a->filter_nvtx = asys_cli_text(o, "filter-nvtx");
    /* --group-by, else its old name --group-kernels */
    a->group_by = asys_cli_text(o, "group-by");
    if (!a->group_by)
        a->group_by = asys_cli_text(o, "group-kernels");
    a->api_name_mode = asys_cli_text(o, "api-name-mode");
    a->buckets = (long long)asys_cli_number(o, "buckets");
    a->kernel = asys_cli_text(o, "kernel");
    a->pid = asys_cli_given(o, "pid") ? (long long)asys_cli_number(o, "pid") : -1;
    a->tid = asys_cli_given(o, "tid") ? (long long)asys_cli_number(o, "tid") : -1;
    a->query_timeout_s = (long long)asys_cli_number(o, "query-timeout");
    a->report_dir = asys_cli_text(o, "report-dir");
    a->sqlite_path = asys_cli_text(o, "sqlite");
    a->force_overwrite = asys_cli_number(o, "force-overwrite") != 0;
    a->force_export = asys_cli_number(o, "force-export") != 0;
    a->jobs = (long long)asys_cli_number(o, "jobs");
    a->partial_out = asys_cli_text(o, "partial");
    a->merge = asys_cli_given(o, "merge");
    a->scheduler = asys_cli_text(o, "scheduler");
    a->quiet = asys_cli_given(o, "quiet");
}

/* --help-reports [NAME]: an optional name, the next argument unless it is an
 * option or a report. */
static void take_help_reports(struct asys_cli *c, struct stats_args *a)
{
    a->help_reports = 1;
    if (c->value)
        a->help_report = c->value;
    else if (c->i + 1 < c->argc && c->argv[c->i + 1][0] != '-' &&
             !strstr(c->argv[c->i + 1], ".asys-rep"))
        a->help_report = c->argv[++c->i];
}

/* One argument: 1 taken, 0 not an option of asys-stats (an input), -1 refused. */
static int take_argument(struct asys_cli *c, struct asys_cli_options *o, struct stats_args *a)
{
    int limit = asys_cli_take_limits(c, &a->limits);
    if (limit != 0)
        return limit;
    if (asys_cli_is(c, "-r", "--report"))
        return asys_cli_list(c, a->reports, &a->report_count, MAX_REPORTS, &a->report_texts) == 0
                   ? 1
                   : -1;
    if (asys_cli_is(c, NULL, "--help-reports")) {
        take_help_reports(c, a);
        return 1;
    }
    return asys_cli_take_option(c, o);
}

static int parse_args(int argc, char **argv, struct stats_args *a)
{
    memset(a, 0, sizeof *a);
    struct asys_cli c;
    struct asys_cli_options o = {0};
    int rc = -1;
    a->inputs = calloc((size_t)argc + 1, sizeof *a->inputs);
    if (!a->inputs) {
        fprintf(stderr, "%s: out of memory\n", PROG);
        goto out;
    }
    asys_report_limits_default(&a->limits);
    asys_cli_init(&c, PROG, argc, argv);
    if (asys_cli_options_init(&o, PROG, stats_options, STATS_OPTION_COUNT) != 0)
        goto out;
    while (asys_cli_next(&c)) {
        if (forward_previous(a, &c, c.i - 1) != 0)
            goto out;
        a->forward_from = c.i;
        int taken = take_argument(&c, &o, a);
        if (taken < 0 ||
            (!taken && asys_cli_positionals(&c, a->inputs, &a->input_count, MAX_INPUTS) != 0))
            goto out;
        if ((a->help = asys_cli_asked(&o)) != 0) {
            rc = 0;
            goto out;
        }
    }
    if (forward_previous(a, &c, argc - 1) != 0)
        goto out;
    take_values(&o, a);
    a->input = a->input_count ? a->inputs[0] : NULL;
    if (!a->scheduler && getenv("DASK_SCHEDULER_ADDRESS") && *getenv("DASK_SCHEDULER_ADDRESS"))
        a->scheduler = getenv("DASK_SCHEDULER_ADDRESS");
    rc = 0;
out:
    asys_cli_options_free(&o);
    return rc;
}

/* --help-reports: the list of reports, or one described. */
static void print_help_reports(const struct asys_report_catalog *cat, const char *name)
{
    if (name && *name && strcmp(name, "ALL") != 0) {
        const struct asys_report_def *d = asys_catalog_find(cat, name);
        if (!d) {
            fprintf(stderr, "%s: unknown report '%s' (see --help-reports)\n", PROG, name);
            return;
        }
        printf("%s -- %s\n", d->name, d->title);
        if (d->alias_count) {
            printf("  aliases:");
            for (int i = 0; i < d->alias_count; i++)
                printf(" %s", d->aliases[i]);
            printf("\n");
        }
        if (d->description)
            printf("\n  %s\n", d->description);
        if (d->columns)
            printf("\n  columns: %s\n", d->columns);
        if (d->arguments)
            printf("\n  arguments (NAME:ARG): %s\n", d->arguments);
        printf("\n  source: %s%s\n", d->origin, d->is_default ? " (run by default)" : "");
        return;
    }
    printf("Reports (default ones marked *):\n\n");
    for (size_t i = 0; i < cat->count; i++) {
        const struct asys_report_def *d = &cat->defs[i];
        printf("  %c %-24s %s", d->is_default ? '*' : ' ', d->name, d->title);
        if (d->alias_count) {
            printf(" (alias:");
            for (int a = 0; a < d->alias_count; a++)
                printf(" %s", d->aliases[a]);
            printf(")");
        }
        printf("\n");
    }
    printf("\n'asys-stats --help-reports NAME' describes one report.\n");
}

static void warn(void *ctx, const char *text)
{
    const struct stats_args *a = ctx;
    (void)a;
    fprintf(stderr, "%s: warning: %s\n", PROG, text);
}

/* Progress goes to a terminal only: scripts get a clean stderr. */
static void on_build(void *ctx, const char *report, const char *db_path)
{
    const struct stats_args *a = ctx;
    if (!a->quiet && isatty(STDERR_FILENO))
        fprintf(stderr, "%s: importing '%s' into '%s'\n", PROG, report, db_path);
}

/* A report the recording has no data for: SKIPPED with the reason, in
 * place of its table for a reader, on stderr beside an empty result for a
 * script (a JSON array or a CSV header stays parseable). */
static int skipped(const struct asys_report_def *d, const struct asys_output_options *o, FILE *out,
                   int with_title, const char *title, const char *input, const char *why)
{
    if (with_title) {
        fprintf(out, "%sSKIPPED: '%s' has no data for this report: %s\n", title, input, why);
        return 0;
    }
    fprintf(stderr, "%s: SKIPPED: report '%s': '%s' has no data for it: %s\n", PROG, d->name, input,
            why);
    if (o->format == ASYS_FMT_JSON)
        fputs("[]\n", out);
    return 0;
}

/* Where the reports' rows come from: one analysis database, or the merge
 * of several reports' partials. */
struct source {
    sqlite3 *db; /* one report */
    struct asys_merge *merge; /* several */
    const struct asys_partial_item *items; /* the merge's reports, in order */
    const char *input; /* what messages call it */
};

static int source_prepare(const struct source *src, int idx, const struct asys_report_def *d,
                          const char *requested, const struct asys_report_params *p,
                          sqlite3_stmt **st, struct asys_err *err)
{
    if (src->merge)
        return asys_merge_prepare(src->merge, idx, &src->items[idx], p, st, err);
    return asys_report_prepare(src->db, d, requested, p, st, err);
}

/* Runs one report into `out`.  Returns 0, or -1 after printing the error. */
static int run_report(const struct source *src, int idx, const struct asys_report_def *d,
                      const char *requested, const struct asys_report_params *p,
                      const struct asys_output_options *o, FILE *out, int with_title)
{
    sqlite3_stmt *st = NULL;
    struct asys_err prepare_err = {0};
    const char *input = src->input;
    char title[512];
    snprintf(title, sizeof title, "\n ** %s (%s):\n\n", d->title, d->name);
    if (source_prepare(src, idx, d, requested, p, &st, &prepare_err) != 0) {
        if (prepare_err.kind == ASYS_ERR_NO_DATA) /* SKIPPED, as a report without rows */
            return skipped(d, o, out, with_title, title, input, prepare_err.text);
        fprintf(stderr, "%s: cannot run report '%s' on '%s': %s\n", PROG, d->name, input,
                prepare_err.text);
        return -1;
    }
    char empty[PATH_MAX + 64];
    snprintf(empty, sizeof empty, "SKIPPED: '%s' has no data for this report.", input);
    struct asys_output_options opts = *o;
    opts.empty_message = with_title ? empty : NULL;
    opts.title = with_title ? title : NULL;
    opts.tree_label = d->tree_label;
    opts.tree_level = d->tree_level;
    struct asys_err err = {0};
    long long rows = asys_write_rows(out, st, &opts, &err);
    sqlite3_finalize(st);
    if (rows < 0 && p->guard && p->guard->fired)
        asys_fail(&err, "it ran longer than --query-timeout (%lld s)", p->guard->timeout_s);
    if (rows < 0) {
        fprintf(stderr, "%s: cannot run report '%s' on '%s': %s\n", PROG, d->name, input, err.text);
        return -1;
    }
    return 0;
}

/* BASE_NAME.EXT; when BASE is a directory, DIR/REPORT_NAME.EXT with the
 * input report's name (so -o . writes report1_hgtx_sum.csv, not a hidden
 * ._hgtx_sum.csv). */
static void output_path(const struct stats_args *a, const char *name, const char *extension,
                        char *out, size_t size)
{
    struct stat st;
    if (stat(a->output, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(out, size, "%s_%s.%s", a->output, name, extension);
        return;
    }
    /* a directory of reports (runs/): its own name */
    char input[PATH_MAX];
    snprintf(input, sizeof input, "%s", a->input);
    for (size_t n = strlen(input); n > 1 && input[n - 1] == '/'; n--)
        input[n - 1] = '\0';
    const char *base = strrchr(input, '/') ? strrchr(input, '/') + 1 : input;
    size_t len = strlen(base);
    const char *suffix = ".asys-rep";
    if (len > strlen(suffix) && !strcmp(base + len - strlen(suffix), suffix))
        len -= strlen(suffix);
    snprintf(out, size, "%s%s%.*s_%s.%s", a->output,
             a->output[strlen(a->output) - 1] == '/' ? "" : "/", (int)len, base, name, extension);
}

/* Writes one report to BASE_NAME.EXT through a temporary file. */
static int run_to_file(const struct source *src, int idx, const struct asys_report_def *d,
                       const char *requested, const struct asys_report_params *p,
                       const struct asys_output_options *o, const struct stats_args *a)
{
    char path[PATH_MAX], tmp[PATH_MAX + 32];
    output_path(a, d->name, asys_format_extension(o->format), path, sizeof path);
    asys_remove_stale_temps(path, 1);
    asys_temp_template(path, 1, tmp, sizeof tmp);
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd >= 0)
        asys_cleanup_add(tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        fprintf(stderr, "%s: cannot write '%s': %s\n", PROG, path, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
            asys_cleanup_remove(tmp);
        }
        return -1;
    }
    int rc = run_report(src, idx, d, requested, p, o, f, 0);
    if (fclose(f) != 0 && rc == 0) {
        fprintf(stderr, "%s: cannot write '%s': %s\n", PROG, path, strerror(errno));
        rc = -1;
    }
    struct asys_err err = {0};
    if (rc == 0 && asys_publish_temp(tmp, path, ASYS_PUBLISH_REPLACE, &err) != 0) {
        fprintf(stderr, "%s: cannot write '%s': %s\n", PROG, path, err.text);
        rc = -1;
    } else if (rc != 0) {
        unlink(tmp);
        asys_cleanup_remove(tmp);
    }
    if (rc == 0 && !a->quiet && isatty(STDERR_FILENO))
        fprintf(stderr, "%s: wrote '%s'\n", PROG, path);
    return rc;
}

/* The reports to run, checked before anything is imported: every default
 * one, or those asked for.  Returns how many, or -1 after printing why. */
static int select_reports(const struct asys_report_catalog *cat, const struct stats_args *a,
                          const struct asys_report_def **defs, const char **requested)
{
    int n = 0;
    if (!a->report_count) {
        for (size_t i = 0; i < cat->count && n < MAX_REPORTS; i++)
            if (cat->defs[i].is_default) {
                defs[n] = &cat->defs[i];
                requested[n++] = cat->defs[i].name;
            }
    }
    for (int i = 0; i < a->report_count; i++) {
        defs[n] = asys_catalog_find(cat, a->reports[i]);
        if (!defs[n]) {
            fprintf(stderr, "%s: unknown report '%s' (see %s --help-reports)\n", PROG,
                    a->reports[i], PROG);
            return -1;
        }
        struct asys_err arg_err = {0};
        if (asys_report_check_argument(defs[n], a->reports[i], &arg_err) != 0) {
            fprintf(stderr, "%s: %s\n", PROG, arg_err.text);
            return -1;
        }
        requested[n++] = a->reports[i];
    }
    return n;
}

/* -f FMT or -f FMT,FMT,... (one per report of -r, in order, as nsys stats
 * takes them): the first in o->format, all of them in formats[]. */
static int parse_formats(struct stats_args *a, struct asys_output_options *o)
{
    const char *p = a->format_name;
    int count = 0;
    do {
        size_t len = strcspn(p, ",");
        char name[32];
        snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1), p);
        enum asys_format f;
        if (count == MAX_REPORTS || asys_format_from_name(name, &f) != 0) {
            fprintf(stderr, "%s: unknown format '%.*s' (see %s --help-formats)\n", PROG, (int)len,
                    p, PROG);
            return -1;
        }
        a->formats[count++] = f;
        p += len;
    } while (*p++ == ',');
    if (count > 1 && count != a->report_count) {
        fprintf(stderr,
                "%s: --format lists %d formats for %d reports (give one, or one per "
                "report of -r)\n",
                PROG, count, a->report_count);
        return -1;
    }
    a->format_count = count;
    o->format = a->formats[0];
    return 0;
}

/* The output options from the command line; -1 after printing why not. */
static int output_options(struct stats_args *a, struct asys_output_options *o)
{
    *o = (struct asys_output_options){.format = ASYS_FMT_COLUMN,
                                      .time_divisor = 1,
                                      .time_unit = "ns",
                                      .max_width = asys_output_width(STDOUT_FILENO)};
    if (a->output && strcmp(a->output, "-") && a->output[0] != '@')
        o->format = ASYS_FMT_CSV; /* files */
    if (a->format_name && parse_formats(a, o) != 0)
        return -1;
    if (a->timeunit && asys_timeunit_from_name(a->timeunit, o) != 0) {
        fprintf(stderr, "%s: unknown time unit '%s' (ns, us, ms, s)\n", PROG, a->timeunit);
        return -1;
    }
    return 0;
}

/* Runs the reports into files, a pipe or stdout; returns how many failed. */
static int run_reports(const struct source *src, const struct asys_report_def **defs,
                       const char **requested, int n, const struct asys_report_params *p,
                       const struct asys_output_options *o, const struct stats_args *a)
{
    int failures = 0;
    int to_files = a->output && strcmp(a->output, "-") && a->output[0] != '@';
    FILE *pipe_out = NULL;
    if (a->output && a->output[0] == '@') {
        pipe_out = popen(a->output + 1, "w");
        if (!pipe_out) {
            fprintf(stderr, "%s: cannot run '%s': %s\n", PROG, a->output + 1, strerror(errno));
            return 1;
        }
    }
    FILE *out = pipe_out ? pipe_out : stdout;
    /* several reports as JSON on one stream: one document, keyed by report */
    int one_document = !to_files && n > 1 && o->format == ASYS_FMT_JSON && a->format_count <= 1;
    if (one_document)
        fputs("{\n", out);
    for (int i = 0; !failures && i < n; i++) {
        struct asys_output_options mine = *o;
        if (a->format_count > 1)
            mine.format = a->formats[i];
        if (one_document)
            fprintf(out, "%s\"%s\": ", i ? ",\n" : "", requested[i]);
        if (to_files)
            failures += run_to_file(src, i, defs[i], requested[i], p, &mine, a) != 0;
        else
            failures +=
                run_report(src, i, defs[i], requested[i], p, &mine, out,
                           mine.format == ASYS_FMT_COLUMN || mine.format == ASYS_FMT_TABLE) != 0;
    }
    if (one_document && !failures)
        fputs("}\n", out);
    if (pipe_out && pclose(pipe_out) != 0 && !failures) {
        fprintf(stderr, "%s: '%s' failed\n", PROG, a->output + 1);
        failures++;
    }
    if (fflush(stdout) != 0 && !failures) {
        fprintf(stderr, "%s: cannot write to standard output: %s\n", PROG, strerror(errno));
        failures++;
    }
    return failures;
}

/* Opens the analysis database of `input` and fills in the parameters the
 * reports run with (each report's own session start and --filter-nvtx
 * window).  ASYS_EXIT_OK, or the exit status after printing why not. */
static int open_report(const char *input, struct stats_args *a, int quiet,
                       struct asys_report_db *rdb, struct asys_report_params *p,
                       struct asys_query_guard *guard)
{
    struct asys_err err = {0};
    struct asys_db_options dbo = {.sqlite_path = a->sqlite_path,
                                  .force_rebuild = a->force_export,
                                  .warn = warn,
                                  .warn_ctx = a,
                                  .on_build = quiet ? NULL : on_build,
                                  .limits = &a->limits,
                                  .force_overwrite = a->force_overwrite};
    if (asys_report_db_open_shown(input, &dbo, PROG, quiet, rdb, &err) != 0) {
        asys_err_print(PROG, "open", input, &err);
        return ASYS_EXIT_FAILURE;
    }
    asys_report_params_init(p, rdb->db);
    *guard = (struct asys_query_guard){a->query_timeout_s, 0, 0};
    p->guard = guard;
    if (a->buckets)
        p->buckets = a->buckets;
    p->pid = a->pid;
    p->tid = a->tid;
    if (a->group_by)
        p->group_by = a->group_by;
    if (a->api_name_mode)
        p->api_name_mode = a->api_name_mode;
    int rc = ASYS_EXIT_OK;
    if (a->kernel && asys_kernel_choice_parse(a->kernel, p, &err) != 0) {
        fprintf(stderr, "%s: %s\n", PROG, err.text);
        rc = ASYS_EXIT_USAGE;
    }
    /* without --filter-time nothing is clipped, not even before the session start */
    p->filter_start = a->filter ? p->session_start + a->filter_start : LLONG_MIN;
    p->filter_end =
        a->filter && a->filter_end != LLONG_MAX ? p->session_start + a->filter_end : LLONG_MAX;
    int64_t lo, hi;
    if (rc == ASYS_EXIT_OK && a->filter_nvtx) {
        if (asys_hgtx_window(rdb->db, a->filter_nvtx, &lo, &hi, &err) != 0) {
            fprintf(stderr, "%s: %s\n", PROG, err.text);
            rc = err.kind == ASYS_ERR_USAGE ? ASYS_EXIT_USAGE : ASYS_EXIT_FAILURE;
        } else {
            p->filter_start = lo;
            p->filter_end = hi;
        }
    }
    if (rc != ASYS_EXIT_OK)
        asys_report_db_close(rdb);
    return rc;
}

/* The reports of the run as partial items. */
static void make_items(const struct asys_report_def **defs, const char **requested, int n,
                       struct asys_partial_item *items)
{
    for (int i = 0; i < n; i++)
        items[i] = (struct asys_partial_item){defs[i], requested[i]};
}

/* What a -j worker, --partial and a Dask task run: one report's partial. */
struct partial_job {
    struct stats_args *a;
    const struct asys_partial_item *items;
    int count;
};

/* The cache key of `input`'s partial (partial_cache.h): what shapes its
 * rows is the options a Dask task gets and the reports asked for.  NULL: no
 * cache (--sqlite, --force-export, --report-dir, whose files may change). */
static char *partial_key(const struct partial_job *job, const char *input)
{
    const struct stats_args *a = job->a;
    if (a->sqlite_path || a->force_export || a->report_dir)
        return NULL;
    char *options = NULL, *key = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&options, &len);
    if (!f)
        return NULL;
    for (int i = 0; i < a->forward_count; i++)
        fprintf(f, "%s\x1f", a->forward[i]);
    for (int i = 0; i < job->count; i++)
        fprintf(f, "\x1e%s", job->items[i].requested);
    fclose(f);
    if (asys_partial_cache_key(input, options, &key) != 0)
        key = NULL;
    free(options);
    return key;
}

static int make_partial(void *ctx, const char *input, const char *path)
{
    struct partial_job *job = ctx;
    struct asys_report_db rdb = {0};
    struct asys_report_params p;
    struct asys_query_guard guard;
    struct asys_err err = {0};
    char *key = partial_key(job, input);
    if (key && asys_partial_cache_get(input, key, path)) {
        free(key);
        return 0;
    }
    if (open_report(input, job->a, 1, &rdb, &p, &guard) != ASYS_EXIT_OK) {
        free(key);
        return -1;
    }
    int rc = asys_partial_write(rdb.db, input, job->items, job->count, &p, key, path, &err);
    if (rc != 0)
        fprintf(stderr, "%s: cannot summarize '%s': %s\n", PROG, input, err.text);
    else if (key)
        asys_partial_cache_put(input, path);
    asys_report_db_close(&rdb);
    free(key);
    return rc;
}

/* The single-report run, as asys-stats always did it. */
static int run_single(struct stats_args *a, const struct asys_report_def **defs,
                      const char **requested, int n, const struct asys_output_options *o)
{
    struct asys_report_db rdb = {0};
    struct asys_report_params p;
    struct asys_query_guard guard;
    int rc = open_report(a->input, a, a->quiet, &rdb, &p, &guard);
    if (rc != ASYS_EXIT_OK)
        return rc;
    struct source src = {.db = rdb.db, .input = a->input};
    rc = run_reports(&src, defs, requested, n, &p, o, a) ? ASYS_EXIT_FAILURE : ASYS_EXIT_OK;
    /* the last line says what the report lost, as nsys does */
    struct asys_report_losses losses;
    if (asys_report_losses_read(rdb.db, &losses) == 0)
        asys_report_losses_warn(PROG, &losses);
    asys_report_db_close(&rdb);
    return rc;
}

/* Merges the partials (in order: a report without a rank takes its place)
 * and runs the reports on them. */
static int run_merged(struct stats_args *a, char **partials, char **inputs, int count,
                      const struct asys_report_def **defs, const char **requested, int n,
                      const struct asys_output_options *o)
{
    struct asys_partial_item items[MAX_REPORTS];
    struct asys_merge m;
    struct asys_err err = {0};
    int rc = ASYS_EXIT_FAILURE;
    make_items(defs, requested, n, items);
    if (asys_merge_open(&m, items, n, &err) != 0) {
        fprintf(stderr, "%s: %s\n", PROG, err.text);
        goto out;
    }
    for (int i = 0; i < count; i++)
        if (asys_merge_add(&m, partials[i], i, &err) != 0) {
            fprintf(stderr, "%s: cannot merge '%s': %s\n", PROG, inputs[i], err.text);
            goto out;
        }
    char label[64];
    snprintf(label, sizeof label, "%d reports", count);
    struct asys_report_params p;
    asys_report_params_init(&p, m.db);
    struct asys_query_guard guard = {a->query_timeout_s, 0, 0};
    p.guard = &guard;
    struct source src = {.merge = &m, .items = items, .input = count > 1 ? label : inputs[0]};
    rc = run_reports(&src, defs, requested, n, &p, o, a) ? ASYS_EXIT_FAILURE : ASYS_EXIT_OK;
out:
    asys_merge_close(&m);
    return rc;
}

/* --partial OUT REPORT: the partial of one report. */
static int run_partial(struct stats_args *a, const struct asys_report_def **defs,
                       const char **requested, int n)
{
    struct asys_partial_item items[MAX_REPORTS];
    make_items(defs, requested, n, items);
    if (a->input_count != 1) {
        fprintf(stderr, "%s: --partial takes one report (got %d)\n", PROG, a->input_count);
        return ASYS_EXIT_USAGE;
    }
    struct partial_job job = {a, items, n};
    return make_partial(&job, a->input, a->partial_out) == 0 ? ASYS_EXIT_OK : ASYS_EXIT_FAILURE;
}

/* Several reports: their partials by -j workers (or on Dask), merged here. */
static int run_multi(struct stats_args *a, const struct asys_report_inputs *in,
                     const struct asys_report_def **defs, const char **requested, int n,
                     const struct asys_output_options *o)
{
    struct asys_partial_item items[MAX_REPORTS];
    make_items(defs, requested, n, items);
    struct partial_job job = {a, items, n};
    asys_report_db_warm(); /* once, shared by the workers forked after it */
    struct stats_pool pool = {.prog = PROG,
                              .inputs = in,
                              .jobs = a->jobs,
                              .quiet = a->quiet,
                              .partial = make_partial,
                              .ctx = &job,
                              .scheduler = a->scheduler,
                              .forward = a->forward,
                              .forward_count = a->forward_count};
    char dir[PATH_MAX];
    int failed = stats_pool_run(&pool, dir, sizeof dir);
    if (failed < 0)
        return ASYS_EXIT_FAILURE;
    int rc = ASYS_EXIT_FAILURE;
    char **partials = calloc((size_t)in->count, sizeof *partials);
    for (int i = 0; partials && i < in->count; i++)
        if (asprintf(&partials[i], "%s/%d.partial", dir, i) < 0)
            partials[i] = NULL;
    if (!failed && partials)
        rc = run_merged(a, partials, in->paths, in->count, defs, requested, n, o);
    for (int i = 0; partials && i < in->count; i++)
        free(partials[i]);
    free(partials);
    stats_pool_clean(dir, in->count);
    return rc;
}

/* Whether the run is one report as before: no multi-report report asked
 * for, one input that is not a directory. */
static int is_single(const struct stats_args *a, const struct asys_report_inputs *in,
                     const struct asys_report_def **defs, int n)
{
    for (int i = 0; i < n; i++)
        if (defs[i]->merge_sql)
            return 0;
    return in->count == 1 && !a->scheduler;
}

static int print_help_formats(void)
{
    printf("Output formats (-f, --format; a list gives one per report of -r):\n\n"
           "  column  aligned columns, for reading (the default on standard output)\n"
           "  table   columns with borders\n"
           "  csv     comma-separated values with a header row (the default with -o)\n"
           "  tsv     tab-separated values with a header row\n"
           "  json    an array of objects, one per row; several reports on standard output\n"
           "          make one object keyed by report name\n");
    return ASYS_EXIT_OK;
}

/* The checks of the options before anything runs; ASYS_EXIT_OK or the
 * status after printing why not. */
static int check_options(struct stats_args *a)
{
    if (a->filter && a->filter_nvtx) {
        fprintf(stderr, "%s: --filter-time and --filter-nvtx do not go together\n", PROG);
        return ASYS_EXIT_USAGE;
    }
    a->filter_start = 0;
    a->filter_end = LLONG_MAX;
    if (a->filter && asys_parse_filter_time(a->filter, &a->filter_start, &a->filter_end) != 0) {
        fprintf(stderr, "%s: bad --filter-time '%s' (START/END, e.g. 1.5s/3s)\n", PROG, a->filter);
        return ASYS_EXIT_USAGE;
    }
    if (!a->input) {
        fprintf(stderr, "%s: no report file given (usage: asys-stats [options] REPORT.asys-rep)\n",
                PROG);
        return ASYS_EXIT_USAGE;
    }
    if (a->merge && a->partial_out) {
        fprintf(stderr, "%s: --partial and --merge do not go together\n", PROG);
        return ASYS_EXIT_USAGE;
    }
    return ASYS_EXIT_OK;
}

/* The reports' run once the options are read: one report, its partial,
 * partials merged, or several reports. */
static int run(struct stats_args *a, const struct asys_report_def **defs, const char **requested,
               int n, const struct asys_output_options *o)
{
    if (a->partial_out)
        return run_partial(a, defs, requested, n);
    if (a->merge)
        return run_merged(a, (char **)a->inputs, (char **)a->inputs, a->input_count, defs,
                          requested, n, o);
    struct asys_report_inputs in;
    struct asys_err err = {0};
    if (asys_report_inputs_expand(a->inputs, a->input_count, &in, &err) != 0) {
        fprintf(stderr, "%s: %s\n", PROG, err.text);
        return ASYS_EXIT_FAILURE;
    }
    int rc;
    if (in.count > 1 && a->sqlite_path) {
        fprintf(stderr, "%s: --sqlite names one report's database (got %d reports)\n", PROG,
                in.count);
        rc = ASYS_EXIT_USAGE;
    } else if (is_single(a, &in, defs, n)) {
        a->input = in.paths[0];
        rc = run_single(a, defs, requested, n, o);
    } else {
        rc = run_multi(a, &in, defs, requested, n, o);
    }
    asys_report_inputs_free(&in);
    return rc;
}

int main(int argc, char **argv)
{
    asys_tune_allocator(argv);
    asys_cleanup_set_program(PROG);
    struct stats_args a;
    struct asys_report_catalog cat = {0};
    struct asys_err err = {0};
    struct asys_output_options o;
    const struct asys_report_def *defs[MAX_REPORTS];
    const char *requested[MAX_REPORTS];
    int rc = ASYS_EXIT_USAGE;
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
    if (asys_catalog_load_builtin(&cat, &err) != 0 ||
        (a.report_dir && asys_catalog_load_dir(&cat, a.report_dir, &err) != 0)) {
        fprintf(stderr, "%s: %s\n", PROG, err.text);
        goto out;
    }
    if (a.help_formats) {
        rc = print_help_formats();
        goto out;
    }
    if (a.help_reports) {
        print_help_reports(&cat, a.help_report);
        int known = !a.help_report || !*a.help_report || !strcmp(a.help_report, "ALL") ||
                    asys_catalog_find(&cat, a.help_report);
        rc = known ? ASYS_EXIT_OK : ASYS_EXIT_USAGE;
        goto out;
    }
    if (output_options(&a, &o) != 0)
        goto out;
    int n = select_reports(&cat, &a, defs, requested);
    if (n < 0 || (rc = check_options(&a)) != ASYS_EXIT_OK) {
        rc = ASYS_EXIT_USAGE;
        goto out;
    }
    rc = run(&a, defs, requested, n, &o);
out:
    asys_catalog_free(&cat);
    asys_cli_texts_free(&a.report_texts);
    free(a.inputs);
    return rc;
}
