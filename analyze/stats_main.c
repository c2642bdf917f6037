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

#include "output_format.h"
#include "report_catalog.h"
#include "report_db.h"
#include "time_filter.h"

#define PROG "asys-stats"
#define MAX_REPORTS 64

struct stats_args {
    const char *reports[MAX_REPORTS];
    int report_count;
    const char *format_name;
    const char *output;
    const char *timeunit;
    const char *filter;
    const char *report_dir;
    const char *sqlite_path;
    const char *help_report; /* --help-reports NAME, or "" for the list */
    int help_reports;
    int force_export;
    int quiet;
    const char *group_by;      /* --group-by base|hgtx */
    const char *api_name_mode; /* --api-name-mode host|kernel */
    long long buckets;         /* --buckets N */
    const char *input;
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: asys-stats [options] REPORT.asys-rep\n\n"
            "Imports the report into REPORT.sqlite (once; rebuilt when the report or\n"
            "the schema changes) and prints summary reports.\n\n"
            "  -r, --report NAME[,NAME...]   reports to run (repeatable; NAME:ARG passes ARG)\n"
            "                                default: every report marked default\n"
            "  -f, --format FMT              column, table, csv, tsv, json\n"
            "                                default: column on the console, csv for files\n"
            "  -o, --output -|@CMD|BASE      stdout (default), pipe into CMD, or files\n"
            "                                BASE_REPORTNAME.EXT\n"
            "      --timeunit UNIT           ns (default), us, ms, s for the (ns) columns\n"
            "      --filter-time START/END   only this window, relative to the session\n"
            "                                start; e.g. 1.5s/3s, 2000000/ (ns by default)\n"
            "      --group-by base|hgtx      kernels grouped by base name (default) or by\n"
            "                                the innermost HGTX range open at the launch\n"
            "      --api-name-mode host|kernel  launch calls shown by their own name\n"
            "                                (default) or by the kernel they launched\n"
            "      --buckets N               time buckets of series reports (default 50)\n"
            "      --report-dir DIR          add or replace reports with DIR/*.sql\n"
            "      --help-reports [NAME]     list the reports, or describe one\n"
            "      --sqlite PATH             the analysis database to use or build\n"
            "      --force-export [true]     rebuild the analysis database\n"
            "  -q, --quiet                   no progress messages\n"
            "  -h, --help                    this help\n");
}

static int parse_args(int argc, char **argv, struct stats_args *a)
{
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *value = NULL;
        const char *eq = strncmp(arg, "--", 2) == 0 ? strchr(arg, '=') : NULL;
        char name[64];
        snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - arg) : (int)strlen(arg), arg);
        if (eq)
            value = eq + 1;
#define TAKE_VALUE()                                                                               \
    do {                                                                                           \
        if (!value) {                                                                              \
            if (i + 1 >= argc) {                                                                   \
                fprintf(stderr, "%s: option %s needs a value\n", PROG, name);                      \
                return -1;                                                                         \
            }                                                                                      \
            value = argv[++i];                                                                     \
        }                                                                                          \
    } while (0)
        if (!strcmp(name, "-r") || !strcmp(name, "--report")) {
            TAKE_VALUE();
            char *copy = strdup(value); /* lives until exit */
            for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) {
                if (a->report_count == MAX_REPORTS) {
                    fprintf(stderr, "%s: too many reports\n", PROG);
                    return -1;
                }
                a->reports[a->report_count++] = tok;
            }
        } else if (!strcmp(name, "-f") || !strcmp(name, "--format")) {
            TAKE_VALUE();
            a->format_name = value;
        } else if (!strcmp(name, "-o") || !strcmp(name, "--output")) {
            TAKE_VALUE();
            a->output = value;
        } else if (!strcmp(name, "--timeunit")) {
            TAKE_VALUE();
            a->timeunit = value;
        } else if (!strcmp(name, "--filter-time")) {
            TAKE_VALUE();
            a->filter = value;
        } else if (!strcmp(name, "--group-by")) {
            TAKE_VALUE();
            if (strcmp(value, "base") && strcmp(value, "hgtx")) {
                fprintf(stderr, "%s: --group-by takes base or hgtx, not '%s'\n", PROG, value);
                return -1;
            }
            a->group_by = value;
        } else if (!strcmp(name, "--api-name-mode")) {
            TAKE_VALUE();
            if (strcmp(value, "host") && strcmp(value, "kernel")) {
                fprintf(stderr, "%s: --api-name-mode takes host or kernel, not '%s'\n", PROG,
                        value);
                return -1;
            }
            a->api_name_mode = value;
        } else if (!strcmp(name, "--buckets")) {
            TAKE_VALUE();
            char *end;
            a->buckets = strtoll(value, &end, 10);
            if (*end || end == value || a->buckets < 1 || a->buckets > 100000) {
                fprintf(stderr, "%s: --buckets takes 1 to 100000, not '%s'\n", PROG, value);
                return -1;
            }
        } else if (!strcmp(name, "--report-dir")) {
            TAKE_VALUE();
            a->report_dir = value;
        } else if (!strcmp(name, "--sqlite")) {
            TAKE_VALUE();
            a->sqlite_path = value;
        } else if (!strcmp(name, "--help-reports")) {
            a->help_reports = 1;
            if (value)
                a->help_report = value;
            else if (i + 1 < argc && argv[i + 1][0] != '-' && !strstr(argv[i + 1], ".asys-rep"))
                a->help_report = argv[++i];
        } else if (!strcmp(name, "--force-export")) {
            a->force_export = 1;
            if (value)
                a->force_export = strcmp(value, "false") != 0;
            else if (i + 1 < argc &&
                     (!strcmp(argv[i + 1], "true") || !strcmp(argv[i + 1], "false")))
                a->force_export = !strcmp(argv[++i], "true");
        } else if (!strcmp(name, "-q") || !strcmp(name, "--quiet")) {
            a->quiet = 1;
        } else if (!strcmp(name, "-h") || !strcmp(name, "--help")) {
            usage(stdout);
            exit(0);
        } else if (arg[0] == '-' && arg[1]) {
            fprintf(stderr, "%s: unknown option '%s' (see %s --help)\n", PROG, arg, PROG);
            return -1;
        } else if (!a->input) {
            a->input = arg;
        } else {
            fprintf(stderr, "%s: only one report file may be given ('%s' and '%s')\n", PROG,
                    a->input, arg);
            return -1;
        }
#undef TAKE_VALUE
    }
    return 0;
}

/* "1.5s", "200ms", "3000us", "42" (ns) -> ns; -1 if malformed. */
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

struct run_params {
    long long session_start;
    long long session_end;
    long long filter_start;
    long long filter_end;
    long long buckets;
    const char *group_by;
    const char *api_name_mode;
};

static void bind_named(sqlite3_stmt *st, const char *name, long long v)
{
    int i = sqlite3_bind_parameter_index(st, name);
    if (i > 0)
        sqlite3_bind_int64(st, i, v);
}

static void bind_named_text(sqlite3_stmt *st, const char *name, const char *v)
{
    int i = sqlite3_bind_parameter_index(st, name);
    if (i > 0)
        sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
}

/* Runs one report into `out`.  Returns 0, or -1 after printing the error. */
static int run_report(sqlite3 *db, const struct asys_report_def *d, const char *requested,
                      const struct run_params *p, const struct asys_output_options *o, FILE *out,
                      int with_title, const char *input)
{
    sqlite3_stmt *st = NULL;
    const char *tail = NULL;
    if (sqlite3_prepare_v2(db, d->sql, -1, &st, &tail) != SQLITE_OK || !st) {
        fprintf(stderr, "%s: cannot run report '%s': %s\n", PROG, d->name,
                st ? sqlite3_errmsg(db) : sqlite3_errmsg(db));
        sqlite3_finalize(st);
        return -1;
    }
    bind_named(st, ":session_start", p->session_start);
    bind_named(st, ":session_end", p->session_end);
    bind_named(st, ":filter_start", p->filter_start);
    bind_named(st, ":filter_end", p->filter_end);
    bind_named(st, ":buckets", p->buckets);
    bind_named_text(st, ":group_by", p->group_by);
    bind_named_text(st, ":api_name_mode", p->api_name_mode);
    const char *arg = strchr(requested, ':');
    int ai = sqlite3_bind_parameter_index(st, ":report_arg");
    if (ai > 0) {
        if (arg)
            sqlite3_bind_text(st, ai, arg + 1, -1, SQLITE_STATIC);
        else
            sqlite3_bind_null(st, ai);
    }
    if (with_title)
        fprintf(out, "\n ** %s (%s):\n\n", d->title, d->name);
    char empty[PATH_MAX + 64];
    snprintf(empty, sizeof empty, "SKIPPED: '%s' has no data for this report.", input);
    struct asys_output_options opts = *o;
    opts.empty_message = with_title ? empty : NULL;
    opts.tree_label = d->tree_label;
    opts.tree_level = d->tree_level;
    struct asys_err err = {{0}};
    long long rows = asys_write_rows(out, st, &opts, &err);
    sqlite3_finalize(st);
    if (rows < 0) {
        fprintf(stderr, "%s: cannot run report '%s': %s\n", PROG, d->name, err.text);
        return -1;
    }
    return 0;
}

/* mkstemp creates 0600; a report file gets what the umask allows. */
static void give_default_mode(const char *path)
{
    mode_t mask = umask(0);
    umask(mask);
    chmod(path, 0666 & ~mask);
}

/* Writes one report to BASE_NAME.EXT through a temporary file. */
static int run_to_file(sqlite3 *db, const struct asys_report_def *d, const char *requested,
                       const struct run_params *p, const struct asys_output_options *o,
                       const struct stats_args *a)
{
    char path[PATH_MAX], tmp[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s_%s.%s", a->output, d->name, asys_format_extension(o->format));
    snprintf(tmp, sizeof tmp, "%s.XXXXXX", path);
    int fd = mkostemp(tmp, O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        fprintf(stderr, "%s: cannot write '%s': %s\n", PROG, path, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        }
        return -1;
    }
    int rc = run_report(db, d, requested, p, o, f, 0, a->input);
    if (fclose(f) != 0 && rc == 0) {
        fprintf(stderr, "%s: cannot write '%s': %s\n", PROG, path, strerror(errno));
        rc = -1;
    }
    if (rc == 0 && (give_default_mode(tmp), rename(tmp, path) != 0)) {
        fprintf(stderr, "%s: cannot write '%s': %s\n", PROG, path, strerror(errno));
        rc = -1;
    }
    if (rc != 0)
        unlink(tmp);
    else if (!a->quiet && isatty(STDERR_FILENO))
        fprintf(stderr, "%s: wrote '%s'\n", PROG, path);
    return rc;
}

int main(int argc, char **argv)
{
    struct stats_args a;
    if (parse_args(argc, argv, &a) != 0)
        return 2;
    struct asys_report_catalog cat = {0};
    struct asys_err err = {{0}};
    if (asys_catalog_load_builtin(&cat, &err) != 0 ||
        (a.report_dir && asys_catalog_load_dir(&cat, a.report_dir, &err) != 0)) {
        fprintf(stderr, "%s: %s\n", PROG, err.text);
        asys_catalog_free(&cat);
        return 2;
    }
    if (a.help_reports) {
        print_help_reports(&cat, a.help_report);
        int known = !a.help_report || !*a.help_report || !strcmp(a.help_report, "ALL") ||
                    asys_catalog_find(&cat, a.help_report);
        asys_catalog_free(&cat);
        return known ? 0 : 2;
    }

    struct asys_output_options o = {ASYS_FMT_COLUMN, 1, "ns", NULL, NULL, NULL};
    int to_files = a.output && strcmp(a.output, "-") && a.output[0] != '@';
    if (to_files)
        o.format = ASYS_FMT_CSV;
    if (a.format_name && asys_format_from_name(a.format_name, &o.format) != 0) {
        fprintf(stderr, "%s: unknown format '%s' (column, table, csv, tsv, json)\n", PROG,
                a.format_name);
        asys_catalog_free(&cat);
        return 2;
    }
    if (a.timeunit && asys_timeunit_from_name(a.timeunit, &o) != 0) {
        fprintf(stderr, "%s: unknown time unit '%s' (ns, us, ms, s)\n", PROG, a.timeunit);
        asys_catalog_free(&cat);
        return 2;
    }
    long long filter_start = 0, filter_end = LLONG_MAX;
    if (a.filter && asys_parse_filter_time(a.filter, &filter_start, &filter_end) != 0) {
        fprintf(stderr, "%s: bad --filter-time '%s' (START/END, e.g. 1.5s/3s)\n", PROG, a.filter);
        asys_catalog_free(&cat);
        return 2;
    }
    /* the reports to run, checked before anything is imported */
    const struct asys_report_def *defs[MAX_REPORTS];
    const char *requested[MAX_REPORTS];
    int n = 0;
    if (!a.report_count) {
        for (size_t i = 0; i < cat.count && n < MAX_REPORTS; i++)
            if (cat.defs[i].is_default) {
                defs[n] = &cat.defs[i];
                requested[n++] = cat.defs[i].name;
            }
    }
    for (int i = 0; i < a.report_count; i++) {
        defs[n] = asys_catalog_find(&cat, a.reports[i]);
        if (!defs[n]) {
            fprintf(stderr, "%s: unknown report '%s' (see %s --help-reports)\n", PROG, a.reports[i],
                    PROG);
            asys_catalog_free(&cat);
            return 2;
        }
        struct asys_err arg_err = {{0}};
        if (asys_report_check_argument(defs[n], a.reports[i], &arg_err) != 0) {
            fprintf(stderr, "%s: %s\n", PROG, arg_err.text);
            asys_catalog_free(&cat);
            return 2;
        }
        requested[n++] = a.reports[i];
    }
    if (!a.input) {
        fprintf(stderr, "%s: no report file given (usage: asys-stats [options] REPORT.asys-rep)\n",
                PROG);
        asys_catalog_free(&cat);
        return 2;
    }

    struct asys_db_options dbo = {a.sqlite_path, a.force_export, warn, &a, on_build};
    struct asys_report_db rdb;
    if (asys_report_db_open(a.input, &dbo, &rdb, &err) != 0) {
        asys_err_print(PROG, "open", a.input, &err);
        asys_catalog_free(&cat);
        return 1;
    }
    struct run_params p;
    p.session_start = asys_session_time(rdb.db, "start_ns");
    p.session_end = asys_session_time(rdb.db, "end_ns");
    p.buckets = a.buckets ? a.buckets : 50;
    p.group_by = a.group_by ? a.group_by : "base";
    p.api_name_mode = a.api_name_mode ? a.api_name_mode : "host";
    /* without --filter-time nothing is clipped, not even before the session start */
    p.filter_start = a.filter ? p.session_start + filter_start : LLONG_MIN;
    p.filter_end = a.filter && filter_end != LLONG_MAX ? p.session_start + filter_end : LLONG_MAX;

    int failures = 0;
    FILE *pipe_out = NULL;
    if (a.output && a.output[0] == '@') {
        pipe_out = popen(a.output + 1, "w");
        if (!pipe_out) {
            fprintf(stderr, "%s: cannot run '%s': %s\n", PROG, a.output + 1, strerror(errno));
            failures++;
        }
    }
    for (int i = 0; !failures && i < n; i++) {
        if (to_files)
            failures += run_to_file(rdb.db, defs[i], requested[i], &p, &o, &a) != 0;
        else
            failures +=
                run_report(rdb.db, defs[i], requested[i], &p, &o, pipe_out ? pipe_out : stdout,
                           o.format == ASYS_FMT_COLUMN || o.format == ASYS_FMT_TABLE, a.input) != 0;
    }
    if (pipe_out && pclose(pipe_out) != 0 && !failures) {
        fprintf(stderr, "%s: '%s' failed\n", PROG, a.output + 1);
        failures++;
    }
    if (fflush(stdout) != 0 && !failures) {
        fprintf(stderr, "%s: cannot write to standard output: %s\n", PROG, strerror(errno));
        failures++;
    }
    asys_report_db_close(&rdb);
    asys_catalog_free(&cat);
    return failures ? 1 : 0;
}
