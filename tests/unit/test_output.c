/* Output formats: escaping, time units, alignment. */
#include "output_format.h"
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
static char *render(const char *sql, enum asys_format f, const char *unit)
{
    struct asys_output_options o = {f, 1, "ns", NULL, "Node", "Level"};
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
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, csv_quotes_what_needs_it);
    tcase_add_test(tc, tsv_escapes_separators);
    tcase_add_test(tc, json_escapes_and_types);
    tcase_add_test(tc, time_units_convert_ns_columns);
    tcase_add_test(tc, column_aligns_numbers_right_text_left);
    tcase_add_test(tc, names);
    tcase_add_test(tc, tree_labels_are_indented_by_level);
    suite_add_tcase(s, tc);
    return test_run(&s, 1);
}
