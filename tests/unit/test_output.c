/* Output formats: escaping, time units, alignment; errors with their causes. */
#include <errno.h>
#include <math.h>
#include <stdint.h>

#include "output_format.h"
#include "asys_error.h"
#include "notes.h"
#include "test_util.h"

static sqlite3 *db;

static void setup(void)
{
    ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
}

static void teardown(void)
{
    sqlite3_close(db);
}

/* Runs `sql` and returns what the format writes (caller frees); a tree when
 * the query has Node and Level columns. */
static int render_width; /* column: where lines wrap (0: never) */

static char *render(const char *sql, enum asys_format f, const char *unit)
{
    struct asys_output_options o = {f, 1, "ns", NULL, "Node", "Level", NULL, render_width};
    if (unit)
        ck_assert_int_eq(asys_timeunit_from_name(unit, &o), 0);
    sqlite3_stmt *st = NULL;
    ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    struct asys_err err;
    ck_assert_int_ge(asys_write_rows(out, st, &o, &err), 0);
    fclose(out);
    sqlite3_finalize(st);
    return text;
}

START_TEST(csv_quotes_what_needs_it)
{
    char *t = render("SELECT 'a,b' AS \"x\", 'say \"hi\"' AS y, 'two\nlines' AS z, 'plain' AS w, "
                     "NULL AS n",
                     ASYS_FMT_CSV, NULL);
    ck_assert_str_eq(t, "x,y,z,w,n\n\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",plain,\n");
    free(t);
}
END_TEST

START_TEST(tsv_escapes_separators)
{
    char *t = render("SELECT 'a\tb' AS x, 'c\\d' AS y", ASYS_FMT_TSV, NULL);
    ck_assert_str_eq(t, "x\ty\na\\tb\tc\\\\d\n");
    free(t);
}
END_TEST

START_TEST(json_escapes_and_types)
{
    char *t = render("SELECT 1 AS i, 2.5 AS r, NULL AS n, 'q\"\\' || char(1) || char(10) AS s, "
                     "CAST(x'41ff42' AS TEXT) AS bad",
                     ASYS_FMT_JSON, NULL);
    ck_assert_str_eq(t, "[\n{\"i\":1,\"r\":2.5,\"n\":null,\"s\":\"q\\\"\\\\\\u0001\\n\","
                        "\"bad\":\"A\\ufffdB\"}\n]\n");
    free(t);
    t = render("SELECT 1 AS i WHERE 0", ASYS_FMT_JSON, NULL);
    ck_assert_str_eq(t, "[]\n");
    free(t);
}
END_TEST

START_TEST(time_units_convert_ns_columns)
{
    char *t =
        render("SELECT 1500 AS \"Total Time (ns)\", 1500 AS \"Count\", 2500.0 AS \"Avg (ns)\"",
               ASYS_FMT_CSV, "us");
    ck_assert_str_eq(t, "Total Time (us),Count,Avg (us)\n1.500,1500,2.500\n");
    free(t);
    t = render("SELECT 1500000000 AS \"T (ns)\"", ASYS_FMT_CSV, "s");
    ck_assert_str_eq(t, "T (s)\n1.500000000\n");
    free(t);
}
END_TEST

/* csv, tsv and json print reals so that they read back exactly; column and
 * table round them for reading. */
START_TEST(reals_read_back_exactly_in_csv_tsv_json)
{
    const char *sql = "SELECT 0.125 AS p, 1.0 / 3 AS third, 5.0 AS five, 1e20 AS big, "
                      "-2.5e-9 AS tiny, 1.048576 AS \"Size (MB)\"";
    char *t = render(sql, ASYS_FMT_CSV, NULL);
    ck_assert_str_eq(t, "p,third,five,big,tiny,Size (MB)\n"
                        "0.125,0.3333333333333333,5.0,1e+20,-2.5e-09,1.048576\n");
    free(t);
    t = render(sql, ASYS_FMT_TSV, NULL);
    ck_assert_str_eq(t, "p\tthird\tfive\tbig\ttiny\tSize (MB)\n"
                        "0.125\t0.3333333333333333\t5.0\t1e+20\t-2.5e-09\t1.048576\n");
    free(t);
    t = render(sql, ASYS_FMT_JSON, NULL);
    ck_assert_str_eq(t, "[\n{\"p\":0.125,\"third\":0.3333333333333333,\"five\":5.0,\"big\":1e+20,"
                        "\"tiny\":-2.5e-09,\"Size (MB)\":1.048576}\n]\n");
    free(t);
    t = render("SELECT 0.125 AS p, 1.0 / 3 AS third, 1.048576 AS \"Size (MB)\"", ASYS_FMT_COLUMN,
               NULL);
    ck_assert_str_eq(t, "   p  third  Size (MB)\n ---  -----  ---------\n 0.1    0.3      1.049\n");
    free(t);
    /* a time unit: exact for integer ns, reals to the ns (an average's
     * fraction of a ns is not a measurement) */
    t = render("SELECT 9007199254740993 AS \"T (ns)\", 2500.25 AS \"Avg (ns)\"", ASYS_FMT_CSV,
               "us");
    ck_assert_str_eq(t, "T (us),Avg (us)\n9007199254740.993,2.500\n");
    free(t);
}
END_TEST

/* Issue 31.16: one precision rule per unit. */
START_TEST(one_precision_per_unit)
{
    /* megabytes to the byte in csv, whatever the double's digits */
    const char *sizes = "SELECT 6291456 / 1e6 AS \"Total (MB)\", 0.0 AS \"StdDev (MB)\"";
    char *t = render(sizes, ASYS_FMT_CSV, NULL);
    ck_assert_str_eq(t, "Total (MB),StdDev (MB)\n6.291456,0.000000\n");
    free(t);
    t = render(sizes, ASYS_FMT_COLUMN, NULL);
    ck_assert_str_eq(
        t, " Total (MB)  StdDev (MB)\n ----------  -----------\n      6.291        0.000\n");
    free(t);
    /* a time in ms reads with three decimals, csv keeps every ns */
    const char *times = "SELECT 130547949 AS \"Total (ns)\", 43515983.3333 AS \"Avg (ns)\"";
    t = render(times, ASYS_FMT_COLUMN, "ms");
    ck_assert_str_eq(t, " Total (ms)  Avg (ms)\n ----------  --------\n    130.548    43.516\n");
    free(t);
    t = render(times, ASYS_FMT_CSV, "ms");
    ck_assert_str_eq(t, "Total (ms),Avg (ms)\n130.547949,43.515983\n");
    free(t);
}
END_TEST

/* Issue 31.16: a long last column wraps under itself in the column format. */
START_TEST(column_format_wraps_the_last_column)
{
    render_width = 40;
    char *t =
        render("SELECT 'Reason' AS Property, 'one two three four five six seven eight nine ten "
               "eleven' AS Value",
               ASYS_FMT_COLUMN, NULL);
    render_width = 0;
    ck_assert_str_eq(t, " Property  Value\n"
                        " --------  -----------------------------\n"
                        " Reason    one two three four five six\n"
                        "           seven eight nine ten eleven\n");
    free(t);
    t = render("SELECT 'Reason' AS Property, 'one two three' AS Value", ASYS_FMT_COLUMN, NULL);
    ck_assert_str_eq(t, " Property  Value\n --------  -------------\n Reason    one two three\n");
    free(t);
}
END_TEST

START_TEST(format_real_is_shortest_round_trip)
{
    char buf[64];
    ck_assert_int_eq(asys_format_real(buf, sizeof buf, 0.1, 1), 3);
    ck_assert_str_eq(buf, "0.1");
    asys_format_real(buf, sizeof buf, 18446744073709551616.0, 1);
    ck_assert_str_eq(buf, "1.8446744073709552e+19");
    asys_format_real(buf, sizeof buf, 2.0, 3);
    ck_assert_str_eq(buf, "2.000");
    asys_format_real(buf, sizeof buf, -0.0, 1);
    ck_assert_str_eq(buf, "-0.0");
    asys_format_real(buf, sizeof buf, 1.0 / 0.0, 1);
    ck_assert_str_eq(buf, "inf");
    /* integers (the fast path) as "%.*f" prints them */
    const double integral[] = {0, 1, -1, 100, -4096, 1e15, 9007199254740991.0, -9007199254740991.0,
                               9007199254740992.0, 1e16};
    for (size_t i = 0; i < sizeof integral / sizeof integral[0]; i++)
        for (int decimals = 0; decimals < 3; decimals++) {
            char expected[64];
            int n = snprintf(expected, sizeof expected, "%.*f", decimals, integral[i]);
            ck_assert_int_eq(asys_format_real(buf, sizeof buf, integral[i], decimals), n);
            ck_assert_str_eq(buf, expected);
        }
    ck_assert_int_eq(asys_format_real(buf, 3, 12345.0, 0), 5); /* cut, as snprintf cuts */
    ck_assert_str_eq(buf, "12");
    /* every double reads back, whatever its magnitude */
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        double v;
        memcpy(&v, &x, sizeof v);
        if (!isfinite(v))
            continue;
        int n = asys_format_real(buf, sizeof buf, v, i % 4);
        ck_assert_int_lt(n, (int)sizeof buf);
        ck_assert_msg(strtod(buf, NULL) == v, "%s does not read back as %.17g", buf, v);
    }
    ck_assert(asys_is_integer_text("18446744073709551615"));
    ck_assert(asys_is_integer_text("-5"));
    ck_assert(!asys_is_integer_text("007"));
    ck_assert(!asys_is_integer_text("1,2"));
    ck_assert(!asys_is_integer_text(""));
    ck_assert(!asys_is_integer_text("123456789012345678901"));
}
END_TEST

/* Each byte that does not start valid UTF-8 becomes U+FFFD in every format. */
START_TEST(invalid_utf8_becomes_replacement_everywhere)
{
    const char *sql = "SELECT CAST(x'41ff42c3' AS TEXT) AS s, CAST(x'c3a9' AS TEXT) AS ok";
    char *t = render(sql, ASYS_FMT_CSV, NULL);
    ck_assert_str_eq(t, "s,ok\nA\xef\xbf\xbd"
                        "B\xef\xbf\xbd,\xc3\xa9\n");
    free(t);
    t = render(sql, ASYS_FMT_TSV, NULL);
    ck_assert_str_eq(t, "s\tok\nA\xef\xbf\xbd"
                        "B\xef\xbf\xbd\t\xc3\xa9\n");
    free(t);
    t = render(sql, ASYS_FMT_COLUMN, NULL);
    ck_assert_str_eq(t, " s     ok\n ----  --\n A\xef\xbf\xbd"
                        "B\xef\xbf\xbd  \xc3\xa9\n");
    free(t);
    t = render("SELECT 1 AS \"bad\xff\"", ASYS_FMT_TABLE, NULL);
    ck_assert_str_eq(t, "+------+\n| bad\xef\xbf\xbd |\n+------+\n|    1 |\n+------+\n");
    free(t);
}
END_TEST

/* A column declared ASYS_DECLTYPE_NUMBER: TEXT digits (a uint64 above
 * INT64_MAX) are numbers in json, anything else stays a string. */
START_TEST(number_columns_print_big_integers_as_numbers)
{
    ck_assert_int_eq(sqlite3_exec(db,
                                  "CREATE TABLE t (v " ASYS_DECLTYPE_NUMBER ", w);"
                                  "INSERT INTO t VALUES ('18446744073709551615', '1'), "
                                  "(-3, 2), ('1,2]', 3), (0.125, 4)",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    char *t = render("SELECT typeof(v) FROM t LIMIT 1", ASYS_FMT_CSV, NULL);
    ck_assert_str_eq(t, "typeof(v)\ntext\n"); /* stored as it came: no conversion */
    free(t);
    t = render("SELECT v, w FROM t", ASYS_FMT_JSON, NULL);
    ck_assert_str_eq(t, "[\n{\"v\":18446744073709551615,\"w\":\"1\"},\n{\"v\":-3,\"w\":2},\n"
                        "{\"v\":\"1,2]\",\"w\":3},\n{\"v\":0.125,\"w\":4}\n]\n");
    free(t);
    t = render("SELECT v FROM t", ASYS_FMT_CSV, NULL);
    ck_assert_str_eq(t, "v\n18446744073709551615\n-3\n\"1,2]\"\n0.125\n");
    free(t);
}
END_TEST

START_TEST(column_aligns_numbers_right_text_left)
{
    char *t =
        render("SELECT 5 AS n, 'ab' AS name UNION ALL SELECT 12345, 'c'", ASYS_FMT_COLUMN, NULL);
    ck_assert_str_eq(t, "     n  name\n -----  ----\n     5  ab\n 12345  c\n");
    free(t);
    t = render("SELECT 'x' || char(10) || 'y' AS s", ASYS_FMT_TABLE, NULL);
    ck_assert_str_eq(t, "+------+\n| s    |\n+------+\n| x\\ny |\n+------+\n");
    free(t);
}
END_TEST

START_TEST(tree_labels_are_indented_by_level)
{
    const char *sql = "SELECT 'root' AS Node, 0 AS Level UNION ALL SELECT 'child', 1 "
                      "UNION ALL SELECT 'leaf', 2";
    char *t = render(sql, ASYS_FMT_COLUMN, NULL);
    ck_assert_str_eq(t, " Node      Level\n --------  -----\n root          0\n"
                        "   child       1\n     leaf      2\n");
    free(t);
    t = render(sql, ASYS_FMT_CSV, NULL); /* flat rows elsewhere */
    ck_assert_str_eq(t, "Node,Level\nroot,0\nchild,1\nleaf,2\n");
    free(t);
}
END_TEST

START_TEST(errors_keep_their_causes)
{
    struct asys_err err = {0};
    ck_assert_int_eq(asys_fail_errno(&err, ENOSPC, "write 'x'"), -1);
    asys_err_wrap(&err, "segment %d", 3);
    asys_err_wrap(&err, "report '%s'", "r.asys-rep");
    ck_assert_str_eq(err.text,
                     "report 'r.asys-rep': segment 3: write 'x': no space left on device");
    ck_assert_int_eq(err.kind, ASYS_ERR_NO_SPACE);
    ck_assert_uint_eq(err.cause_count, 3);
    ck_assert_ptr_nonnull(strstr(err.causes[2].module, "test_output.c"));
    ck_assert_int_gt(err.causes[0].line, 0);

    /* a long context never cuts the root cause off */
    char longer[400];
    memset(longer, 'c', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    asys_fail(&err, "the root cause");
    for (int i = 0; i < 10; i++)
        asys_err_wrap(&err, "%s %d", longer, i);
    ck_assert_uint_eq(err.cause_count, ASYS_ERR_CAUSES);
    ck_assert_uint_eq(err.causes_elided, 10 - (ASYS_ERR_CAUSES - 1));
    size_t len = strlen(err.text);
    ck_assert_str_eq(err.text + len - strlen(": the root cause"), ": the root cause");
    ck_assert_ptr_nonnull(strstr(err.text, "...: c"));
    ck_assert_int_eq(err.kind, ASYS_ERR_FAILED);
    asys_err_clear(&err);
    ck_assert_int_eq(err.kind, ASYS_ERR_NONE);
    ck_assert_str_eq(err.text, "");
}
END_TEST

static void count_note(void *ctx, enum asys_note_level level, const char *text)
{
    (void)text;
    ((int *)ctx)[level]++;
}

START_TEST(notes_go_to_the_sink_and_notices_once)
{
    int seen[ASYS_NOTE_LEVELS] = {0};
    unsigned notices = asys_notes_count(ASYS_NOTE_NOTICE);
    asys_notes_set_sink(count_note, seen);
    for (int i = 0; i < 3; i++) {
        asys_note(ASYS_NOTE_NOTICE, "sampling from the program's own switches (%d)", 7);
        asys_note(ASYS_NOTE_WARNING, "%d records lost", 5);
    }
    asys_note(ASYS_NOTE_NOTICE, "another notice");
    asys_notes_set_sink(NULL, NULL);
    ck_assert_int_eq(seen[ASYS_NOTE_NOTICE], 2); /* each notice once */
    ck_assert_int_eq(seen[ASYS_NOTE_WARNING], 3);
    ck_assert_uint_eq(asys_notes_count(ASYS_NOTE_NOTICE) - notices, 4);
}
END_TEST

START_TEST(names)
{
    enum asys_format f;
    ck_assert_int_eq(asys_format_from_name("tsv", &f), 0);
    ck_assert_int_eq(f, ASYS_FMT_TSV);
    ck_assert_int_eq(asys_format_from_name("xml", &f), -1);
    struct asys_output_options o;
    ck_assert_int_eq(asys_timeunit_from_name("msec", &o), 0);
    ck_assert_int_eq(o.time_divisor, 1000000);
    ck_assert_int_eq(asys_timeunit_from_name("hours", &o), -1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("output");
    TCase *tc = tcase_create("output");
    /* Check's default is 4 s: an ASan build on a loaded CI machine ran over */
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, csv_quotes_what_needs_it);
    tcase_add_test(tc, errors_keep_their_causes);
    tcase_add_test(tc, notes_go_to_the_sink_and_notices_once);
    tcase_add_test(tc, tsv_escapes_separators);
    tcase_add_test(tc, json_escapes_and_types);
    tcase_add_test(tc, time_units_convert_ns_columns);
    tcase_add_test(tc, column_aligns_numbers_right_text_left);
    tcase_add_test(tc, reals_read_back_exactly_in_csv_tsv_json);
    tcase_add_test(tc, format_real_is_shortest_round_trip);
    tcase_add_test(tc, one_precision_per_unit);
    tcase_add_test(tc, column_format_wraps_the_last_column);
    tcase_add_test(tc, invalid_utf8_becomes_replacement_everywhere);
    tcase_add_test(tc, number_columns_print_big_integers_as_numbers);
    tcase_add_test(tc, names);
    tcase_add_test(tc, tree_labels_are_indented_by_level);
    suite_add_tcase(s, tc);
    return test_run(&s, 1);
}
