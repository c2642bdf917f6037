/* asys-deps: the dependencies between PPU activities of a report (ppu_deps,
 * built at import), for one activity, as a summary, or as the critical path. */
#define _GNU_SOURCE
#include <limits.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "allocator_tuning.h"
#include "cleanup.h"
#include "cli_args.h"
#include "deps_path.h"
#include "output_format.h"
#include "import_progress.h"
#include "report_db.h"
#include "report_inputs.h"
#include "time_filter.h"

#define PROG "asys-deps"
#define TOP_DELAYS 20

enum selector { SELECT_NONE, SELECT_ACTIVITY, SELECT_CORRELATION, SELECT_KERNEL };

#define MAX_INPUTS 1024

struct deps_args {
    const char *input; /* the report of the run going on */
    const char *inputs[MAX_INPUTS]; /* reports and directories as given */
    int input_count;
    struct asys_report_limits limits; /* --max-expansion ... */
    int help; /* --help: print the usage, do nothing else */
    enum selector selector;
    long long id; /* --activity / --correlation */
    char kernel[1024];
    long long kernel_nth; /* --kernel NAME#N, 1-based */
    int all; /* --mode all */
    int critical_path;
    const char *filter;
    const char *format_name;
    const char *output;
    const char *sqlite_path;
    int quiet;
    int force_overwrite; /* --force-overwrite: --sqlite may replace any file */
};

static int parse_long(const char *v, long long *out)
{
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (!*v || *end || n < 0 || errno == ERANGE)
        return -1;
    *out = n;
    return 0;
}

/* --activity and --correlation: an id, 0 or more */
static int parse_id(const struct asys_option *o, const char *text, struct asys_option_value *v,
                    struct asys_err *err)
{
    long long n;
    if (parse_long(text, &n) != 0)
        return asys_fail_kind(err, ASYS_ERR_USAGE, "--%s takes a number, not '%s'", o->name, text);
    v->number = (uint64_t)n;
    v->has_number = 1;
    snprintf(v->canonical, sizeof v->canonical, "%lld", n);
    return 0;
}

static const char *const modes[] = {"effective", "all", NULL};

static const struct asys_option deps_options[] = {
    {.name = "activity",
     .type = ASYS_OPT_TEXT,
     .metavar = "ID",
     .parse = parse_id,
     .help = "one activity (ppu_activities.id, hggc_gpu_trace)"},
    {.name = "correlation",
     .type = ASYS_OPT_TEXT,
     .metavar = "ID",
     .parse = parse_id,
     .help = "the activities of one API call (CorrId)"},
    {.name = "kernel",
     .type = ASYS_OPT_TEXT,
     .metavar = "NAME[#N]",
     .help = "the N-th run (default 1st) of a kernel, by demangled, base or mangled name"},
    {.name = "mode",
     .type = ASYS_OPT_CHOICE,
     .metavar = "effective|all",
     .choices = modes,
     .default_value = "effective",
     .help = "only the dependencies still unresolved when the work was launched, or every one"},
    {.name = "critical-path",
     .type = ASYS_OPT_FLAG,
     .help = "the chain that decided when the last work ended"},
    {.name = "filter-time",
     .type = ASYS_OPT_TEXT,
     .metavar = "START/END",
     .help = "only this window, relative to the session start"},
    {.name = "format",
     .short_name = 'f',
     .type = ASYS_OPT_TEXT,
     .metavar = "FMT",
     .help = "column (default), table, csv, tsv, json, dot"},
    {.name = "output",
     .short_name = 'o',
     .type = ASYS_OPT_TEXT,
     .metavar = "PATH",
     .help = "write there instead of stdout"},
    ASYS_CLI_SQLITE_OPTION,
    {.name = "force-overwrite",
     .type = ASYS_OPT_BOOL,
     .metavar = "[true]",
     .help = "--sqlite may replace a file that is not one (no short form: -f is --format)"},
    {.name = "quiet", .short_name = 'q', .type = ASYS_OPT_FLAG, .help = "no progress messages"},
    ASYS_CLI_HELP_OPTIONS,
};
#define DEPS_OPTION_COUNT (sizeof deps_options / sizeof deps_options[0])

static void usage(FILE *out)
{
    fprintf(out, "usage: asys-deps [options] REPORT.asys-rep\n\n"
                 "Dependencies between PPU activities: stream order and the legacy default\n"
                 "stream (green), cudaEventRecord + cudaStreamWaitEvent across streams (orange),\n"
                 "graph edges, host waits.  Without a selector: a summary of the report.\n"
                 "Several reports (or directories of them): one section each, headed by the\n"
                 "report and its rank (-f column, table or dot; no selector).\n\n");
    asys_cli_print_options(out, deps_options, DEPS_OPTION_COUNT);
    fputs(asys_cli_limits_help, out);
}

static int parse_kernel(const char *v, struct deps_args *a)
{
    const char *hash = strrchr(v, '#');
    size_t n = hash ? (size_t)(hash - v) : strlen(v);
    if (!n || n >= sizeof a->kernel)
        return -1;
    memcpy(a->kernel, v, n);
    a->kernel[n] = '\0';
    a->kernel_nth = 1;
    if (hash && (parse_long(hash + 1, &a->kernel_nth) != 0 || a->kernel_nth < 1))
        return -1;
    return 0;
}

/* The selector among --activity, --correlation and --kernel (one at most). */
static int take_selector(const struct asys_cli_options *o, struct deps_args *a)
{
    int given = asys_cli_given(o, "activity") + asys_cli_given(o, "correlation") +
                asys_cli_given(o, "kernel");
    if (given > 1) {
        fprintf(stderr, "%s: give one of --activity, --correlation, --kernel\n", PROG);
        return -1;
    }
    if (asys_cli_given(o, "activity") || asys_cli_given(o, "correlation")) {
        int activity = asys_cli_given(o, "activity");
        a->selector = activity ? SELECT_ACTIVITY : SELECT_CORRELATION;
        a->id = (long long)asys_cli_number(o, activity ? "activity" : "correlation");
    } else if (asys_cli_given(o, "kernel")) {
        const char *value = asys_cli_text(o, "kernel");
        if (parse_kernel(value, a) != 0) {
            fprintf(stderr, "%s: --kernel takes NAME or NAME#N (N >= 1), not '%s'\n", PROG, value);
            return -1;
        }
        a->selector = SELECT_KERNEL;
    }
    return 0;
}

static int take_values(const struct asys_cli_options *o, struct deps_args *a)
{
    a->all = !strcmp(asys_cli_text(o, "mode"), "all");
    a->critical_path = asys_cli_given(o, "critical-path");
    a->filter = asys_cli_text(o, "filter-time");
    a->format_name = asys_cli_text(o, "format");
    a->output = asys_cli_text(o, "output");
    a->sqlite_path = asys_cli_text(o, "sqlite");
    a->force_overwrite = asys_cli_number(o, "force-overwrite") != 0;
    a->quiet = asys_cli_given(o, "quiet");
    return take_selector(o, a);
}

static int parse_args(int argc, char **argv, struct deps_args *a)
{
    memset(a, 0, sizeof *a);
    asys_report_limits_default(&a->limits);
    struct asys_cli c;
    struct asys_cli_options o;
    int rc = -1;
    asys_cli_init(&c, PROG, argc, argv);
    if (asys_cli_options_init(&o, PROG, deps_options, DEPS_OPTION_COUNT) != 0)
        goto out;
    while (asys_cli_next(&c)) {
        int limit = asys_cli_take_limits(&c, &a->limits);
        if (limit < 0)
            goto out;
        if (limit)
            continue;
        int taken = asys_cli_take_option(&c, &o);
        if (taken < 0)
            goto out;
        if (!taken && asys_cli_positionals(&c, a->inputs, &a->input_count, MAX_INPUTS) != 0)
            goto out;
        if ((a->help = asys_cli_asked(&o)) != 0) {
            rc = 0;
            goto out;
        }
    }
    if (take_values(&o, a) != 0)
        goto out;
    a->input = a->input_count ? a->inputs[0] : NULL;
    if (!a->input) {
        fprintf(stderr, "%s: no report file given (usage: asys-deps [options] REPORT.asys-rep)\n",
                PROG);
        goto out;
    }
    if (a->critical_path && a->selector != SELECT_NONE) {
        fprintf(stderr, "%s: --critical-path takes no selector\n", PROG);
        goto out;
    }
    rc = 0;
out:
    asys_cli_options_free(&o);
    return rc;
}

/* ---- queries ------------------------------------------------------------------ */

static const char selected_deps_sql[] =
    "SELECT d.activity_id AS \"Activity\", wn.name AS \"Activity Name\",\n"
    "       CASE d.kind WHEN 1 THEN 'stream order' WHEN 2 THEN 'default stream'\n"
    "                   WHEN 3 THEN 'event' WHEN 4 THEN 'graph edge' ELSE 'host wait' END\n"
    "           AS \"Kind\",\n"
    "       d.depends_on AS \"Depends On\", dn.name AS \"Depended Name\",\n"
    "       dp.stream AS \"Depended Stream\", dp.end_ns - :session_start AS \"Depended End "
    "(ns)\",\n"
    "       d.effective AS \"Effective\", d.delay_ns AS \"Delay (ns)\",\n"
    "       rs.value AS \"Record API\", ra.tid AS \"Record TID\",\n"
    "       ra.correlation_id AS \"Record CorrID\",\n"
    "       ws.value AS \"Wait API\", wa.tid AS \"Wait TID\", wa.correlation_id AS \"Wait "
    "CorrID\"\n"
    "FROM temp.selected AS sel\n"
    "JOIN ppu_deps AS d ON d.activity_id = sel.id\n"
    "JOIN ppu_activities AS dp ON dp.id = d.depends_on\n"
    "JOIN ppu_activity_names AS dn ON dn.id = d.depends_on\n"
    "JOIN ppu_activity_names AS wn ON wn.id = d.activity_id\n"
    "LEFT JOIN hggc_api_calls AS ra ON ra.id = d.record_api_id\n"
    "LEFT JOIN strings AS rs ON rs.id = ra.name_id\n"
    "LEFT JOIN hggc_api_calls AS wa ON wa.id = d.wait_api_id\n"
    "LEFT JOIN strings AS ws ON ws.id = wa.name_id\n"
    "WHERE d.effective OR :all\n"
    "ORDER BY d.activity_id, d.delay_ns DESC, d.kind, dp.end_ns DESC";

static const char summary_sql[] =
    "WITH w AS (SELECT d.* FROM ppu_deps AS d\n"
    "           JOIN ppu_activities AS a ON a.id = d.depends_on\n"
    "           WHERE a.end_ns >= :filter_start AND a.start_ns <= :filter_end)\n"
    "SELECT CASE kind WHEN 1 THEN 'stream order' WHEN 2 THEN 'default stream'\n"
    "                 WHEN 3 THEN 'event' WHEN 4 THEN 'graph edge' ELSE 'host wait' END\n"
    "           AS \"Kind\",\n"
    "       COUNT(*) AS \"All\", SUM(effective) AS \"Effective\",\n"
    "       SUM(delay_ns) AS \"Total Delay (ns)\", MAX(delay_ns) AS \"Max Delay (ns)\"\n"
    "FROM w GROUP BY kind ORDER BY kind";

static const char top_sql[] =
    "SELECT d.delay_ns AS \"Delay (ns)\",\n"
    "       CASE d.kind WHEN 1 THEN 'stream order' WHEN 2 THEN 'default stream'\n"
    "                   WHEN 3 THEN 'event' WHEN 4 THEN 'graph edge' ELSE 'host wait' END\n"
    "           AS \"Kind\",\n"
    "       COALESCE(d.activity_id, 'sync ' || d.sync_id) AS \"Waiter\",\n"
    "       COALESCE(wn.name, ws.value) AS \"Waiter Name\", w.stream AS \"Waiter Stream\",\n"
    "       d.depends_on AS \"Depends On\", dn.name AS \"Depended Name\",\n"
    "       dp.stream AS \"Depended Stream\"\n"
    "FROM ppu_deps AS d\n"
    "JOIN ppu_activities AS dp ON dp.id = d.depends_on\n"
    "JOIN ppu_activity_names AS dn ON dn.id = d.depends_on\n"
    "LEFT JOIN ppu_activities AS w ON w.id = d.activity_id\n"
    "LEFT JOIN ppu_activity_names AS wn ON wn.id = d.activity_id\n"
    "LEFT JOIN hggc_api_calls AS wa ON wa.id = d.wait_api_id\n"
    "LEFT JOIN strings AS ws ON ws.id = wa.name_id\n"
    "WHERE (d.effective OR :all) AND d.delay_ns > 0\n"
    "  AND dp.end_ns >= :filter_start AND dp.start_ns <= :filter_end\n"
    "ORDER BY d.delay_ns DESC, d.id LIMIT " /* TOP_DELAYS appended */;

/* Streams whose work came from several threads: their order is a race. */
static const char threads_sql[] =
    "SELECT p.pid, p.stream, COUNT(DISTINCT a.tid) FROM ppu_activities AS p\n"
    "JOIN hggc_api_calls AS a ON a.id = p.api_id\n"
    "WHERE NOT :selected OR (p.pid, p.stream) IN\n"
    "      (SELECT pid, stream FROM ppu_activities WHERE id IN (SELECT id FROM temp.selected))\n"
    "GROUP BY p.pid, p.stream HAVING COUNT(DISTINCT a.tid) > 1";

struct run {
    sqlite3 *db;
    long long session_start;
    long long filter_start, filter_end;
    int all;
    int selected; /* temp.selected holds a selection */
    struct asys_output_options out_opts;
    int dot;
    FILE *out;
};

static void bind_common(sqlite3_stmt *st, const struct run *r)
{
    const struct {
        const char *name;
        long long value;
    } params[] = {{":session_start", r->session_start},
                  {":filter_start", r->filter_start},
                  {":filter_end", r->filter_end},
                  {":all", r->all},
                  {":selected", r->selected}};
    for (size_t i = 0; i < sizeof params / sizeof params[0]; i++) {
        int idx = sqlite3_bind_parameter_index(st, params[i].name);
        if (idx > 0)
            sqlite3_bind_int64(st, idx, params[i].value);
    }
}

static int prepare(struct run *r, const char *sql, sqlite3_stmt **st)
{
    if (sqlite3_prepare_v2(r->db, sql, -1, st, NULL) != SQLITE_OK) {
        fprintf(stderr, "%s: cannot query the analysis database: %s\n", PROG,
                sqlite3_errmsg(r->db));
        return -1;
    }
    bind_common(*st, r);
    return 0;
}

static int exec(struct run *r, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(r->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        fprintf(stderr, "%s: cannot query the analysis database: %s\n", PROG,
                msg ? msg : sqlite3_errmsg(r->db));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

static int write_query(struct run *r, const char *title, const char *sql)
{
    sqlite3_stmt *st = NULL;
    if (prepare(r, sql, &st) != 0)
        return -1;
    if (title && (r->out_opts.format == ASYS_FMT_COLUMN || r->out_opts.format == ASYS_FMT_TABLE))
        fprintf(r->out, "\n ** %s:\n\n", title);
    struct asys_err err = {0};
    long long rows = asys_write_rows(r->out, st, &r->out_opts, &err);
    sqlite3_finalize(st);
    if (rows < 0) {
        fprintf(stderr, "%s: cannot write the result: %s\n", PROG, err.text);
        return -1;
    }
    return 0;
}

static void warn_shared_streams(struct run *r)
{
    sqlite3_stmt *st = NULL;
    if (prepare(r, threads_sql, &st) != 0)
        return;
    while (sqlite3_step(st) == SQLITE_ROW)
        fprintf(stderr,
                "%s: warning: stream %lld of process %lld was driven by %lld threads: its "
                "dependencies follow the order the calls were made in and may be inaccurate\n",
                PROG, (long long)sqlite3_column_int64(st, 1),
                (long long)sqlite3_column_int64(st, 0), (long long)sqlite3_column_int64(st, 2));
    sqlite3_finalize(st);
}

/* Fills temp.selected; returns the number of activities, -1 on error. */
static long long select_activities(struct run *r, const struct deps_args *a)
{
    const char *sql = NULL;
    switch (a->selector) {
    case SELECT_ACTIVITY:
        sql = "INSERT INTO temp.selected SELECT id FROM ppu_activities WHERE id = ?1";
        break;
    case SELECT_CORRELATION:
        sql = "INSERT INTO temp.selected SELECT id FROM ppu_activities WHERE correlation_id = ?1";
        break;
    case SELECT_KERNEL:
        sql = "INSERT INTO temp.selected SELECT p.id FROM ppu_activities AS p\n"
              "JOIN ppu_kernels AS k ON k.id = p.source_id\n"
              "WHERE p.kind = 1 AND ?2 IN ((SELECT value FROM strings WHERE id = p.name_id),\n"
              "                            (SELECT value FROM strings WHERE id = p.base_name_id),\n"
              "                            (SELECT value FROM strings\n"
              "                             WHERE id = k.mangled_name_id))\n"
              "ORDER BY p.start_ns, p.id LIMIT 1 OFFSET ?3";
        break;
    case SELECT_NONE:
        return 0;
    }
    sqlite3_stmt *st = NULL;
    if (prepare(r, sql, &st) != 0)
        return -1;
    sqlite3_bind_int64(st, 1, a->id);
    if (a->selector == SELECT_KERNEL) {
        sqlite3_bind_text(st, 2, a->kernel, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, a->kernel_nth - 1);
    }
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        fprintf(stderr, "%s: cannot query the analysis database: %s\n", PROG,
                sqlite3_errmsg(r->db));
        return -1;
    }
    r->selected = 1;
    return sqlite3_changes(r->db);
}

static int no_match(const struct deps_args *a)
{
    if (a->selector == SELECT_ACTIVITY)
        fprintf(stderr, "%s: no activity %lld in '%s'\n", PROG, a->id, a->input);
    else if (a->selector == SELECT_CORRELATION)
        fprintf(stderr, "%s: no device activity with correlation id %lld in '%s'\n", PROG, a->id,
                a->input);
    else
        fprintf(stderr, "%s: no kernel '%s' #%lld in '%s'\n", PROG, a->kernel, a->kernel_nth,
                a->input);
    return 1;
}

static int open_output(struct run *r, const char *path)
{
    r->out = stdout;
    if (!path || !strcmp(path, "-"))
        return 0;
    r->out = fopen(path, "w");
    if (!r->out) {
        fprintf(stderr, "%s: cannot write '%s': %m\n", PROG, path);
        return -1;
    }
    asys_cleanup_add(path); /* a signal must not leave it half-written */
    return 0;
}

static int run_deps(struct run *r, const struct deps_args *a)
{
    if (a->critical_path) {
        struct asys_err err = {0};
        struct asys_critical_path_window win = {r->filter_start, r->filter_end};
        if (asys_critical_path_build(r->db, &win, &err) != 0) {
            fprintf(stderr, "%s: cannot find the critical path in '%s': %s\n", PROG, a->input,
                    err.text);
            return 1;
        }
        if (r->dot)
            return asys_deps_dot(r->db, r->out, "SELECT activity_id FROM temp.path_steps",
                                 r->session_start, 1, &err)
                       ? 1
                       : 0;
        return write_query(r, "Critical path (first step first)", asys_critical_path_sql) ? 1 : 0;
    }
    if (a->selector != SELECT_NONE) {
        long long n = select_activities(r, a);
        if (n < 0)
            return 1;
        if (n == 0)
            return no_match(a);
        warn_shared_streams(r);
        if (r->dot) {
            struct asys_err err = {0};
            return asys_deps_dot(r->db, r->out, "SELECT id FROM temp.selected", r->session_start,
                                 r->all, &err)
                       ? 1
                       : 0;
        }
        return write_query(r, a->all ? "Dependencies (all)" : "Dependencies (effective)",
                           selected_deps_sql)
                   ? 1
                   : 0;
    }
    warn_shared_streams(r);
    if (r->dot) {
        struct asys_err err = {0};
        char window[256];
        snprintf(window, sizeof window,
                 "CREATE TEMP TABLE window AS SELECT id FROM ppu_activities "
                 "WHERE end_ns >= %lld AND start_ns <= %lld",
                 r->filter_start, r->filter_end);
        if (exec(r, window) != 0)
            return 1;
        return asys_deps_dot(r->db, r->out, "SELECT id FROM temp.window", r->session_start, r->all,
                             &err)
                   ? 1
                   : 0;
    }
    char top[sizeof top_sql + 16];
    snprintf(top, sizeof top, "%s%d", top_sql, TOP_DELAYS);
    if (write_query(r, "Dependencies by kind", summary_sql) != 0 ||
        write_query(r, "Dependencies that delayed work most", top) != 0)
        return 1;
    return 0;
}

static void on_build(void *ctx, const char *report, const char *db_path)
{
    const struct deps_args *a = ctx;
    if (!a->quiet && isatty(STDERR_FILENO))
        fprintf(stderr, "%s: importing '%s' into '%s'\n", PROG, report, db_path);
}

static void warn(void *ctx, const char *message)
{
    const struct deps_args *a = ctx;
    if (!a->quiet)
        fprintf(stderr, "%s: warning: %s\n", PROG, message);
}

/* The output format from the command line; -1 after printing why not. */
static int output_format(const struct deps_args *a, struct run *r)
{
    r->out_opts = (struct asys_output_options){
        .format = ASYS_FMT_COLUMN, .time_divisor = 1, .time_unit = "ns"};
    if (a->format_name && !strcmp(a->format_name, "dot")) {
        r->dot = 1;
    } else if (a->format_name && asys_format_from_name(a->format_name, &r->out_opts.format) != 0) {
        fprintf(stderr, "%s: unknown format '%s' (column, table, csv, tsv, json, dot)\n", PROG,
                a->format_name);
        return -1;
    }
    return 0;
}

/* One report's dependencies; with several (section: 1, 2, ...), a heading
 * names the report and its rank first (dot: each report its own graph). */
static int deps_of_report(const struct deps_args *a, struct run *r, struct asys_db_options *dbo,
                          long long window_start, long long window_end, int section)
{
    struct asys_report_db rdb = {0};
    struct asys_err err = {0};
    if (asys_report_db_open_shown(a->input, dbo, PROG, a->quiet, &rdb, &err) != 0) {
        asys_err_print(PROG, "open", a->input, &err);
        return ASYS_EXIT_FAILURE;
    }
    r->db = rdb.db;
    r->all = a->all;
    r->session_start = asys_session_time(r->db, "start_ns");
    r->filter_start = a->filter ? r->session_start + window_start : LLONG_MIN;
    r->filter_end =
        a->filter && window_end != LLONG_MAX ? r->session_start + window_end : LLONG_MAX;
    int64_t rank;
    if (section && !r->dot) {
        fprintf(r->out, "%s== %s", section > 1 ? "\n" : "", a->input);
        if (asys_session_value(r->db, "rank", &rank))
            fprintf(r->out, " (rank %lld)", (long long)rank);
        fprintf(r->out, " ==\n");
    }
    int rc = exec(r, "CREATE TEMP TABLE selected (id INTEGER PRIMARY KEY)") != 0 || run_deps(r, a)
                 ? ASYS_EXIT_FAILURE
                 : ASYS_EXIT_OK;
    asys_report_db_close(&rdb);
    r->db = NULL;
    return rc;
}

int main(int argc, char **argv)
{
    asys_tune_allocator(argv);
    asys_cleanup_set_program(PROG);
    struct deps_args a;
    struct run r;
    struct asys_report_inputs inputs;
    struct asys_err err = {0};
    int rc = ASYS_EXIT_USAGE, have_inputs = 0;
    memset(&r, 0, sizeof r);
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
    if (output_format(&a, &r) != 0)
        goto out;
    long long window_start = 0, window_end = LLONG_MAX;
    if (a.filter && asys_parse_filter_time(a.filter, &window_start, &window_end) != 0) {
        fprintf(stderr, "%s: bad --filter-time '%s' (START/END, e.g. 1.5s/3s)\n", PROG, a.filter);
        goto out;
    }
    rc = ASYS_EXIT_FAILURE;
    struct asys_db_options dbo = {.sqlite_path = a.sqlite_path,
                                  .warn = warn,
                                  .warn_ctx = &a,
                                  .on_build = on_build,
                                  .limits = &a.limits,
                                  .force_overwrite = a.force_overwrite};
    if (asys_report_inputs_expand(a.inputs, a.input_count, &inputs, &err) != 0) {
        fprintf(stderr, "%s: %s\n", PROG, err.text);
        goto out;
    }
    have_inputs = 1;
    if (inputs.count > 1 &&
        (a.sqlite_path || a.selector != SELECT_NONE ||
         (!r.dot && r.out_opts.format != ASYS_FMT_COLUMN && r.out_opts.format != ASYS_FMT_TABLE))) {
        fprintf(stderr,
                "%s: several reports are shown one section each: -f column, table or dot, "
                "without --sqlite and without an activity selector (ids are per report)\n",
                PROG);
        rc = ASYS_EXIT_USAGE;
        goto out;
    }
    if (open_output(&r, a.output) != 0)
        goto out;
    rc = ASYS_EXIT_OK;
    for (int i = 0; i < inputs.count && rc == ASYS_EXIT_OK; i++) {
        a.input = inputs.paths[i];
        rc = deps_of_report(&a, &r, &dbo, window_start, window_end, inputs.count > 1 ? i + 1 : 0);
    }
    if (r.out != stdout && fclose(r.out) != 0 && rc == ASYS_EXIT_OK) {
        fprintf(stderr, "%s: cannot write '%s': %m\n", PROG, a.output);
        rc = ASYS_EXIT_FAILURE;
    }
    if (rc != ASYS_EXIT_OK && r.out != stdout)
        unlink(a.output); /* nothing half-written */
    if (r.out != stdout)
        asys_cleanup_remove(a.output);
out:
    if (have_inputs)
        asys_report_inputs_free(&inputs);
    return rc;
}
