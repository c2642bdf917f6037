/* Hash maps, clock conversion, SQL functions, report headers, member names. */
#include "clock_map.h"
#include "demangle.h"
#include "hashmap.h"
#include "key_sort.h"
#include "report_catalog.h"
#include "report_reader.h"
#include "report_merge.h"
#include "report_run.h"
#include "embedded_files.h"
#include "sql_functions.h"
#include "importer.h"
#include "json_util.h"
#include "cleanup.h"
#include "asys_error.h"
#include "parse_util.h"
#include "test_util.h"

#include <errno.h>

START_TEST(u64map_against_a_reference)
{
    struct asys_u64map m;
    asys_u64map_init(&m);
    enum { N = 20000 };
    static uint64_t ref[N];
    static int present[N];
    uint64_t x = 12345;
    for (int round = 0; round < 200000; round++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        int k = (int)((x >> 33) % N);
        uint64_t key = (uint64_t)k * 0x9e3779b97f4a7c15ull; /* spread, include big keys */
        if ((x >> 20) % 3 == 0) {
            ck_assert_int_eq(asys_u64map_remove(&m, key), present[k]);
            present[k] = 0;
        } else {
            ck_assert_int_eq(asys_u64map_put(&m, key, x), 0);
            ref[k] = x;
            present[k] = 1;
        }
    }
    size_t count = 0;
    for (int k = 0; k < N; k++) {
        uint64_t *v = asys_u64map_get(&m, (uint64_t)k * 0x9e3779b97f4a7c15ull);
        if (present[k]) {
            ck_assert_ptr_nonnull(v);
            ck_assert_uint_eq(*v, ref[k]);
            count++;
        } else {
            ck_assert_ptr_null(v);
        }
    }
    ck_assert_uint_eq(m.count, count);
    asys_u64map_free(&m);
}
END_TEST

/* Sorted by key over the whole signed range, equal keys in their order, as
 * a stable comparison sort gives them. */
START_TEST(key_index_sort_is_stable)
{
    enum { N = 5000 };
    static struct asys_key_index items[N], want[N];
    uint64_t x = 88172645463325252ull;
    for (uint32_t i = 0; i < N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int64_t keys[] = {INT64_MIN, -1, 0, 7, INT64_MAX, (int64_t)x, (int64_t)(x % 64)};
        items[i] = (struct asys_key_index){keys[x % 7], i};
    }
    memcpy(want, items, sizeof want);
    for (size_t i = 1; i < N; i++) /* insertion sort: stable */
        for (size_t k = i; k > 0 && want[k - 1].key > want[k].key; k--) {
            struct asys_key_index t = want[k];
            want[k] = want[k - 1];
            want[k - 1] = t;
        }
    ck_assert_int_eq(asys_key_index_sort(items, N), 0);
    for (size_t i = 0; i < N; i++) {
        ck_assert_int_eq(items[i].key, want[i].key);
        ck_assert_uint_eq(items[i].index, want[i].index);
    }
    ck_assert_int_eq(asys_key_index_sort(items, N), 0); /* sorted already */
    ck_assert_int_eq(asys_key_index_sort(items, 0), 0);
}
END_TEST

/* A random tree of every kind of value: numbers around the integer path's
 * edges (10^15, -0, 2^53, fractions, NaN), strings with every control byte,
 * quotes and UTF-8, empty and nested arrays and objects. */
static cJSON *random_json(uint64_t *x, int depth)
{
    *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
    static const double numbers[] = {0,
                                     -0.0,
                                     1,
                                     -1,
                                     7,
                                     2147483647,
                                     2147483648.0,
                                     -2147483649.0,
                                     999999999999999,
                                     1e15,
                                     -1e15,
                                     1234567890123456,
                                     9007199254740993.0,
                                     0.1,
                                     -2.5,
                                     1e-7,
                                     6.18,
                                     2599998146.6103354,
                                     1e300,
                                     NAN,
                                     INFINITY,
                                     4294967296.0};
    int kind = depth > 3 ? (int)(*x % 5) : (int)(*x % 7);
    switch (kind) {
    case 0:
        return cJSON_CreateNull();
    case 1:
        return cJSON_CreateBool(*x & 8);
    case 2:
        return cJSON_CreateNumber(*x & 16 ? numbers[(*x >> 8) % (sizeof numbers / sizeof *numbers)]
                                          : (double)(int64_t)(*x >> 20) / ((*x & 32) ? 1 : 1000));
    case 3:
    case 4: {
        char text[40];
        size_t n = (*x >> 8) % (sizeof text - 1);
        for (size_t i = 0; i < n; i++)
            text[i] = (char)(1 + (*x >> (i % 48)) % 255); /* every byte but NUL */
        text[n] = '\0';
        return cJSON_CreateString(text);
    }
    default: {
        cJSON *c = kind == 5 ? cJSON_CreateArray() : cJSON_CreateObject();
        int n = (int)((*x >> 12) % 5);
        for (int i = 0; i < n; i++) {
            cJSON *v = random_json(x, depth + 1);
            if (kind == 5) {
                cJSON_AddItemToArray(c, v);
            } else {
                char key[16];
                snprintf(key, sizeof key, i == 1 ? "k\"\t%d" : "key%d", i);
                cJSON_AddItemToObject(c, key, v);
            }
        }
        return c;
    }
    }
}

/* asys_json_print writes what cJSON's printer writes, formatted or not. */
START_TEST(json_print_is_cjsons)
{
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int round = 0; round < 400; round++) {
        cJSON *root = random_json(&x, 0);
        for (int formatted = 0; formatted < 2; formatted++) {
            char *want = formatted ? cJSON_Print(root) : cJSON_PrintUnformatted(root);
            char *got = asys_json_print(root, formatted);
            ck_assert_ptr_nonnull(want);
            ck_assert_ptr_nonnull(got);
            ck_assert_str_eq(got, want);
            cJSON_free(want);
            free(got);
        }
        cJSON_Delete(root);
    }
    cJSON *raw = cJSON_CreateRaw(NULL); /* cJSON cannot print it either */
    ck_assert_ptr_null(asys_json_print(raw, 1));
    cJSON_Delete(raw);
    ck_assert_ptr_null(asys_json_print(NULL, 0));
}
END_TEST

static uint64_t next_random(uint64_t *x)
{
    *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
    return *x;
}

/* asys_decimal_u64 accepts what strtoull accepts whole (no sign, space or
 * overflow), up to the stop character, and gives the same value. */
START_TEST(decimal_u64_is_strtoulls)
{
    uint64_t x = 0x2545f4914f6cdd1dull;
    static const char alphabet[] = "0123456789012345678901234567890123456789:+- x";
    for (int round = 0; round < 20000; round++) {
        char text[32];
        size_t len = (size_t)(next_random(&x) % 24);
        for (size_t i = 0; i < len; i++)
            text[i] = alphabet[next_random(&x) % (sizeof alphabet - 1)];
        text[len] = '\0';
        if (round % 4 == 0 && len) /* near 2^64 */
            snprintf(text, sizeof text, "1844674407370955%d%d", (int)(next_random(&x) % 10),
                     (int)(next_random(&x) % 100));
        char *end;
        errno = 0;
        unsigned long long want = strtoull(text, &end, 10);
        int whole = text[0] >= '0' && text[0] <= '9' && errno != ERANGE;
        const char *cursor = text;
        uint64_t got = 7;
        int rc = asys_decimal_u64(&cursor, '\0', &got);
        if (whole && *end == '\0') {
            ck_assert_msg(rc == 0 && got == want && cursor == end, "'%s'", text);
        } else {
            ck_assert_msg(rc == -1 && got == 7 && cursor == text, "'%s'", text);
        }
        /* the same digits before a ':' stop there, the cursor on it */
        char *colon = strchr(text, ':');
        if (whole && end == colon) {
            cursor = text;
            ck_assert_int_eq(asys_decimal_u64(&cursor, ':', &got), 0);
            ck_assert_uint_eq(got, want);
            ck_assert_ptr_eq(cursor, colon);
        }
    }
}
END_TEST

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static int has_text(const char *path, const char *text)
{
    char buf[64] = "";
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strcmp(buf, text) == 0;
}

static int entries(const char *dir)
{
    char cmd[PATH_MAX + 32];
    snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 1", dir);
    return system(cmd) == 0 ? 1 : 0;
}

/* What is published replaces a file, a link, nothing; never a directory;
 * the old file and the temporary are gone, other names of the old file
 * keep it. */
START_TEST(publish_replaces_what_the_path_names)
{
    char dir[PATH_MAX], path[PATH_MAX + 16], tmp[PATH_MAX + 16], other[PATH_MAX + 16];
    test_mkdtemp(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/out", dir);
    snprintf(tmp, sizeof tmp, "%s/.out.tmp", dir);
    snprintf(other, sizeof other, "%s/../%s-other", dir, strrchr(dir, '/') + 1);
    struct asys_err err = {0};
    for (int round = 0; round < 4; round++) {
        if (round == 2) { /* a second name of the old file */
            ck_assert_int_eq(link(path, other), 0);
        } else if (round == 3) { /* a link to that file */
            ck_assert_int_eq(unlink(path), 0);
            ck_assert_int_eq(symlink(other, path), 0);
        }
        char text[16];
        snprintf(text, sizeof text, "new %d", round);
        write_text(tmp, text);
        ck_assert_int_eq(asys_publish_temp(tmp, path, ASYS_PUBLISH_REPLACE, &err), 0);
        ck_assert_msg(has_text(path, text), "round %d", round);
        struct stat st;
        ck_assert_int_eq(lstat(path, &st), 0);
        ck_assert(S_ISREG(st.st_mode));
        ck_assert_msg(entries(dir), "round %d: the old file or the temporary is left", round);
        if (round >= 2)
            ck_assert(has_text(other, "new 1"));
    }
    unlink(other);
    ck_assert_int_eq(unlink(path), 0);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    write_text(tmp, "new");
    ck_assert_int_ne(asys_publish_temp(tmp, path, ASYS_PUBLISH_REPLACE, &err), 0);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert(S_ISDIR(st.st_mode));
    ck_assert_msg(entries(dir), "the temporary is left");
    test_rmdir(dir);
}
END_TEST

START_TEST(strmap_interns_by_content)
{
    struct asys_strmap m;
    asys_strmap_init(&m);
    char key[32];
    for (uint32_t i = 1; i <= 5000; i++) {
        int n = snprintf(key, sizeof key, "name-%u", i);
        ck_assert_int_eq(asys_strmap_put(&m, key, (size_t)n, i), 0);
    }
    ck_assert_uint_eq(asys_strmap_get(&m, "name-4321", 9), 4321);
    ck_assert_uint_eq(asys_strmap_get(&m, "name-4321x", 10), 0);
    ck_assert_int_eq(asys_strmap_put(&m, "", 0, 7), 0);
    ck_assert_uint_eq(asys_strmap_get(&m, "", 0), 7);
    ck_assert_uint_eq(asys_strmap_get(&m, "a\0b", 3), 0);
    asys_strmap_free(&m);
}
END_TEST

START_TEST(clock_map_interpolates)
{
    struct asys_clock_map m;
    asys_clock_map_init(&m);
    /* 2 ticks per ns, then 4 ticks per ns; pairs given out of order plus one bad sample */
    asys_clock_map_add(&m, 3000, 1500);
    asys_clock_map_add(&m, 1000, 500);
    asys_clock_map_add(&m, 7000, 2500);
    asys_clock_map_add(&m, 5000, 100); /* time running backwards: dropped */
    ck_assert_uint_eq(asys_clock_map_build(&m), 3);
    ck_assert_uint_eq(asys_clock_map_ns(&m, 1000), 500);
    ck_assert_uint_eq(asys_clock_map_ns(&m, 2000), 1000);
    ck_assert_uint_eq(asys_clock_map_ns(&m, 5000), 2000);
    ck_assert_uint_eq(asys_clock_map_ns(&m, 9000), 3000); /* extrapolated, last slope */
    ck_assert_uint_eq(asys_clock_map_ns(&m, 0), 0); /* before the first pair */
    ck_assert_uint_eq(asys_clock_map_ns(&m, 800), 400);
    asys_clock_map_free(&m);
}
END_TEST

static double scalar(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    double v = sqlite3_column_type(st, 0) == SQLITE_NULL ? -1 : sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    return v;
}

START_TEST(median_and_stdev)
{
    sqlite3 *db;
    ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
    ck_assert_int_eq(asys_sql_register_functions(db), 0);
    sqlite3_exec(db, "CREATE TABLE t(v); INSERT INTO t VALUES (5),(1),(9),(3),(7);", 0, 0, 0);
    ck_assert_double_eq(scalar(db, "SELECT median(v) FROM t"), 5);
    sqlite3_exec(db, "INSERT INTO t VALUES (11);", 0, 0, 0);
    ck_assert_double_eq(scalar(db, "SELECT median(v) FROM t"), 6);
    ck_assert_double_eq_tol(scalar(db, "SELECT stdev(v) FROM t"), 3.7416573867739413, 1e-9);
    ck_assert_double_eq(scalar(db, "SELECT stdev(v) FROM t WHERE v = 5"), 0);
    ck_assert_double_eq(scalar(db, "SELECT median(v) FROM t WHERE v > 100"), -1);
    sqlite3_exec(db,
                 "DELETE FROM t; WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c "
                 "WHERE i < 100001) INSERT INTO t SELECT (i * 7919) % 100001 FROM c;",
                 0, 0, 0);
    ck_assert_double_eq(scalar(db, "SELECT median(v) FROM t"), 50000);
    sqlite3_close(db);
}
END_TEST

START_TEST(covered_length_of_intervals)
{
    sqlite3 *db;
    ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
    ck_assert_int_eq(asys_sql_register_functions(db), 0);
    /* out of order; nested, overlapping, touching, disjoint, empty and reversed */
    sqlite3_exec(db,
                 "CREATE TABLE t(s, e); INSERT INTO t VALUES (50, 60), (0, 10), (2, 5), (8, 20),"
                 "(20, 25), (40, 40), (45, 30), (100, NULL), (55, 70);",
                 0, 0, 0);
    ck_assert_double_eq(scalar(db, "SELECT covered_ns(s, e) FROM t"), 25 + 20);
    ck_assert_double_eq(scalar(db, "SELECT covered_ns(s, e) FROM t WHERE s > 1000"), 0);
    /* many random intervals against a brute-force count over a small range */
    sqlite3_exec(db,
                 "DELETE FROM t; WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c "
                 "WHERE i < 1000) INSERT INTO t SELECT (i * 7919) % 4999, "
                 "(i * 7919) % 4999 + (i * 104729) % 37 FROM c;",
                 0, 0, 0);
    double covered = scalar(db, "SELECT covered_ns(s, e) FROM t");
    double brute = scalar(db, "WITH RECURSIVE p(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM p "
                              "WHERE x < 5100) SELECT COUNT(*) FROM p WHERE EXISTS "
                              "(SELECT 1 FROM t WHERE t.s <= p.x AND p.x < t.e)");
    ck_assert_double_eq(covered, brute);
    sqlite3_close(db);
}
END_TEST

START_TEST(report_headers)
{
    struct asys_report_def d;
    struct asys_err err;
    const char *text = "-- name: my_sum\n-- alias: a1, a2\n-- title: My Summary\n-- default: yes\n"
                       "-- description: first line\n--   second line\n-- columns: A, B\n"
                       "SELECT 1 AS A, 2 AS B;\n";
    ck_assert_int_eq(asys_report_def_parse(text, "x.sql", &d, &err), 0);
    ck_assert_str_eq(d.name, "my_sum");
    ck_assert_int_eq(d.alias_count, 2);
    ck_assert_str_eq(d.aliases[1], "a2");
    ck_assert_str_eq(d.title, "My Summary");
    ck_assert_str_eq(d.description, "first line second line");
    ck_assert_int_eq(d.is_default, 1);
    struct asys_report_catalog cat = {&d, 1};
    ck_assert_ptr_eq(asys_catalog_find(&cat, "a1:arg"), &d);
    ck_assert_ptr_null(asys_catalog_find(&cat, "my"));
    asys_report_def_free(&d);
    ck_assert_int_eq(asys_report_def_parse("SELECT 1;", "y.sql", &d, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.text, "name"));
}
END_TEST

START_TEST(builtin_reports_parse_and_have_aliases)
{
    struct asys_report_catalog cat = {0};
    struct asys_err err;
    ck_assert_int_eq(asys_catalog_load_builtin(&cat, &err), 0);
    ck_assert_ptr_nonnull(asys_catalog_find(&cat, "hgtx_sum"));
    ck_assert_ptr_eq(asys_catalog_find(&cat, "nvtx_sum"), asys_catalog_find(&cat, "hgtx_sum"));
    ck_assert_ptr_nonnull(asys_catalog_find(&cat, "report_info"));
    ck_assert_ptr_nonnull(asys_catalog_find(&cat, "nvtx_pushpop_trace"));
    const char *hggc[] = {"cuda_api_sum",         "cuda_api_trace",        "cuda_gpu_kern_sum",
                          "cuda_gpu_trace",       "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum",
                          "cuda_kern_exec_trace", "cuda_kern_exec_sum",    "hggc_graph_sum",
                          "stream_pct",           "ppu_device_sum",        "ppu_util_trace",
                          "nvtx_gpu_proj_trace",  "nvtx_gpu_proj_sum",     "nvtx_kern_sum"};
    for (size_t i = 0; i < sizeof hggc / sizeof hggc[0]; i++)
        ck_assert_msg(asys_catalog_find(&cat, hggc[i]), "no report %s", hggc[i]);
    /* a report that needs data it may not have says which, once */
    const struct asys_report_def *sched = asys_catalog_find(&cat, "thread_sched_sum");
    ck_assert_ptr_nonnull(sched);
    ck_assert_str_eq(sched->requires_table, "sched_slices");
    ck_assert_ptr_nonnull(strstr(sched->requires_message, "-s process-tree"));
    ck_assert_ptr_eq(asys_catalog_find(&cat, "cpu_flat"), asys_catalog_find(&cat, "stack_flat"));
    asys_catalog_free(&cat);
}
END_TEST

/* An empty analysis database: what the importer makes of an empty report
 * (every family's schema, the derived tables, the counters). */
static sqlite3 *empty_database(void)
{
    sqlite3 *db = NULL;
    struct asys_import_stats stats;
    struct asys_err err = {0};
    memset(&stats, 0, sizeof stats);
    ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
    ck_assert_int_eq(asys_sql_register_functions(db), 0);
    ck_assert_msg(asys_import_report(NULL, db, NULL, NULL, NULL, NULL, NULL, &stats, &err) == 0,
                  "%s", err.text);
    return db;
}

/* A multi-report report's merged statement over the partial of `db`. */
static void merged_statement(sqlite3 *db, const struct asys_report_def *d,
                             const struct asys_report_params *p, struct asys_merge *m,
                             sqlite3_stmt **st)
{
    struct asys_err err = {0};
    char path[] = "/tmp/asys-partial-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    struct asys_partial_item item = {d, d->name};
    ck_assert_msg(asys_partial_write(db, "empty", &item, 1, p, NULL, path, &err) == 0, "%s: %s",
                  d->name, err.text);
    ck_assert_int_eq(asys_merge_open(m, &item, 1, &err), 0);
    ck_assert_msg(asys_merge_add(m, path, 0, &err) == 0, "%s: %s", d->name, err.text);
    unlink(path);
    ck_assert_msg(asys_merge_prepare(m, 0, &item, p, st, &err) == 0, "%s: %s", d->name, err.text);
}

/* What a report's header says it returns is what its query returns. */
START_TEST(report_columns_are_what_the_header_says)
{
    struct asys_report_catalog cat = {0};
    struct asys_err err;
    ck_assert_int_eq(asys_catalog_load_builtin(&cat, &err), 0);
    sqlite3 *db = empty_database();
    struct asys_report_params p;
    asys_report_params_init(&p, db);
    for (size_t i = 0; i < cat.count; i++) {
        struct asys_report_def unchecked = cat.defs[i]; /* its columns, on an empty database */
        unchecked.requires_table = NULL;
        const struct asys_report_def *d = &unchecked;
        ck_assert_msg(d->columns, "%s declares no -- columns:", d->name);
        sqlite3_stmt *st = NULL;
        struct asys_merge m = {0};
        if (d->merge_sql) /* a multi-report report: its columns are the merge's */
            merged_statement(db, d, &p, &m, &st);
        else
            ck_assert_msg(asys_report_prepare(db, d, d->name, &p, &st, &err) == 0, "%s: %s",
                          d->name, err.text);
        char actual[2048] = "";
        size_t used = 0;
        for (int c = 0; c < sqlite3_column_count(st); c++)
            used += (size_t)snprintf(actual + used, sizeof actual - used, "%s%s", c ? ", " : "",
                                     sqlite3_column_name(st, c));
        ck_assert_msg(!strcmp(actual, d->columns), "%s: declares '%s', returns '%s'", d->name,
                      d->columns, actual);
        sqlite3_finalize(st);
        if (d->merge_sql)
            asys_merge_close(&m);
    }
    sqlite3_close(db);
    asys_catalog_free(&cat);
}
END_TEST

/* A summary report: samples in, the shared statistics out, by key. */
START_TEST(summary_reports_wrap_their_samples)
{
    sqlite3 *db = empty_database();
    struct asys_report_def d;
    struct asys_err err;
    const char *text = "-- name: x_sum\n-- summary: Calls\n"
                       "SELECT k AS \"Key\", v FROM (SELECT 'a' AS k, 10 AS v UNION ALL "
                       "SELECT 'a', 30 UNION ALL SELECT 'b', 60);\n";
    ck_assert_int_eq(asys_report_def_parse(text, "x.sql", &d, &err), 0);
    ck_assert_str_eq(d.summary, "Calls");
    struct asys_report_params p;
    asys_report_params_init(&p, db);
    sqlite3_stmt *st = NULL;
    ck_assert_int_eq(asys_report_prepare(db, &d, "x_sum", &p, &st, &err), 0);
    ck_assert_int_eq(sqlite3_column_count(st), 9);
    ck_assert_str_eq(sqlite3_column_name(st, 2), "Calls");
    ck_assert_str_eq(sqlite3_column_name(st, 8), "Key");
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW); /* b first: the larger total */
    ck_assert_str_eq((const char *)sqlite3_column_text(st, 8), "b");
    ck_assert_double_eq_tol(sqlite3_column_double(st, 0), 60.0, 1e-9);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    ck_assert_str_eq((const char *)sqlite3_column_text(st, 8), "a");
    ck_assert_int_eq(sqlite3_column_int64(st, 1), 40);
    ck_assert_int_eq(sqlite3_column_int64(st, 2), 2);
    ck_assert_double_eq_tol(sqlite3_column_double(st, 3), 20.0, 1e-9);
    ck_assert_int_eq(sqlite3_column_int64(st, 5), 10);
    ck_assert_int_eq(sqlite3_column_int64(st, 6), 30);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    asys_report_def_free(&d);
    /* a samples query with nothing to group by is refused, with a reason */
    ck_assert_int_eq(
        asys_report_def_parse("-- name: y\n-- summary: N\nSELECT 1;", "y.sql", &d, &err), 0);
    ck_assert_int_eq(asys_report_prepare(db, &d, "y", &p, &st, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.text, "key columns"));
    asys_report_def_free(&d);
    sqlite3_close(db);
}
END_TEST

START_TEST(report_arguments)
{
    struct asys_report_def d;
    struct asys_err err;
    ck_assert_int_eq(asys_report_def_parse("-- name: k\n-- arguments: base, mangled\nSELECT 1;",
                                           "k.sql", &d, &err),
                     0);
    ck_assert_int_eq(asys_report_check_argument(&d, "k", &err), 0);
    ck_assert_int_eq(asys_report_check_argument(&d, "k:base", &err), 0);
    ck_assert_int_eq(asys_report_check_argument(&d, "k:mangled", &err), 0);
    ck_assert_int_eq(asys_report_check_argument(&d, "k:bas", &err), -1);
    ck_assert_ptr_nonnull(strstr(err.text, "no argument 'bas' (valid: base, mangled)"));
    asys_report_def_free(&d);
    ck_assert_int_eq(asys_report_def_parse("-- name: t\nSELECT 1;", "t.sql", &d, &err), 0);
    ck_assert_int_eq(asys_report_check_argument(&d, "t:x", &err), -1);
    ck_assert_ptr_null(d.tree_label);
    ck_assert_ptr_nonnull(strstr(err.text, "takes no argument"));
    asys_report_def_free(&d);
}
END_TEST

START_TEST(kernel_names)
{
    static const struct {
        const char *mangled, *demangled, *base;
    } cases[] = {
        {"_Z10add_kernelPfPKfi", "add_kernel(float*, float const*, int)", "add_kernel"},
        {"_ZN2ns5scaleIfEEvPT_", "void ns::scale<float>(float*)", "ns::scale<float>"},
        {"_Z6reduceILi256EEvPKfPfi", "void reduce<256>(float const*, float*, int)", "reduce<256>"},
        {"_ZZ4mainENKUlvE_clEv", "main::{lambda()#1}::operator()() const",
         "main::{lambda()#1}::operator()"},
        {"_ZN1AltERKS_", "A::operator<(A const&)", "A::operator<"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *d = asys_demangle(cases[i].mangled);
        ck_assert_ptr_nonnull(d);
        ck_assert_str_eq(d, cases[i].demangled);
        char base[128];
        ck_assert_uint_eq(asys_base_name(d, base, sizeof base), strlen(cases[i].base));
        ck_assert_str_eq(base, cases[i].base);
        free(d);
    }
    ck_assert_ptr_null(asys_demangle("plain_c_kernel")); /* C names stay as they are */
    ck_assert_ptr_null(asys_demangle("_Zbroken"));
    char small[4];
    ck_assert_uint_eq(asys_base_name("add_kernel(int)", small, sizeof small), 10);
    ck_assert_str_eq(small, "add"); /* cut to fit, length still told */
}
END_TEST

START_TEST(member_names)
{
    ck_assert(asys_member_name_is_safe("segments/a.seg"));
    ck_assert(asys_member_name_is_safe("manifest.json"));
    ck_assert(!asys_member_name_is_safe("../x"));
    ck_assert(!asys_member_name_is_safe("segments/../../x"));
    ck_assert(!asys_member_name_is_safe("/etc/passwd"));
    ck_assert(!asys_member_name_is_safe("a//b"));
    ck_assert(!asys_member_name_is_safe(""));
    ck_assert(asys_member_name_is_safe("a/..b"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("analyze");
    TCase *tc = tcase_create("analyze");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, u64map_against_a_reference);
    tcase_add_test(tc, strmap_interns_by_content);
    tcase_add_test(tc, key_index_sort_is_stable);
    tcase_add_test(tc, json_print_is_cjsons);
    tcase_add_test(tc, decimal_u64_is_strtoulls);
    tcase_add_test(tc, publish_replaces_what_the_path_names);
    tcase_add_test(tc, clock_map_interpolates);
    tcase_add_test(tc, median_and_stdev);
    tcase_add_test(tc, covered_length_of_intervals);
    tcase_add_test(tc, report_headers);
    tcase_add_test(tc, builtin_reports_parse_and_have_aliases);
    tcase_add_test(tc, member_names);
    tcase_add_test(tc, report_arguments);
    tcase_add_test(tc, report_columns_are_what_the_header_says);
    tcase_add_test(tc, summary_reports_wrap_their_samples);
    tcase_add_test(tc, kernel_names);
    suite_add_tcase(s, tc);
    return test_run(&s, 1);
}
