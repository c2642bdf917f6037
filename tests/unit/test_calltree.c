/* The call-tree builder and its views (call_tree, stack_* reports), on stacks
 * written by hand into an analysis database. */
#include <sqlite3.h>

#include "calltree.h"
#include "embedded_files.h"
#include "sql_functions.h"
#include "stack_samples.h"
#include "test_util.h"

static void exec(sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    ck_assert_msg(sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK, "%s: %s", sql,
                  msg ? msg : "");
}

/* Functions 1 main, 2 middle, 3 burn_a, 4 burn_b, 5 rec, 6 other (frames = functions);
 * chains leaf first: 1 = burn_a<-middle<-main, 2 = burn_b<-middle<-main,
 * 3 = rec<-rec<-rec<-main, 4 = other, 5 = read's caller middle<-main. */
static sqlite3 *stacks_database(void)
{
    sqlite3 *db = NULL;
    ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
    ck_assert_int_eq(asys_sql_register_functions(db), 0);
    const char *files[] = {"core.sql", "stacks.sql", "osrt.sql"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        exec(db, asys_schema_text(files[i]));
    exec(db, "CREATE TABLE IF NOT EXISTS cpu_samples (id INTEGER PRIMARY KEY, timestamp_ns INTEGER "
             "NOT NULL, pid INTEGER NOT NULL, tid INTEGER NOT NULL, cpu INTEGER, callchain_id "
             "INTEGER)");
    exec(db,
         "INSERT INTO strings (id, value) VALUES (1, 'main'), (2, 'middle'), (3, 'burn_a'), "
         "(4, 'burn_b'), (5, 'rec'), (6, 'other'), (7, '/bin/prog'), (8, 'read'), "
         "(9, 'worker');"
         "INSERT INTO modules VALUES (1, 1, 7, 0, 100000, 0, NULL);"
         "INSERT INTO frames (id, pid, address, module_id, function_id) VALUES "
         "(1, 1, 10, 1, 1), (2, 1, 20, 1, 2), (3, 1, 30, 1, 3), (4, 1, 40, 1, 4), "
         "(5, 1, 50, 1, 5), (6, 2, 60, NULL, 6), (7, 1, 55, 1, 5);"
         "INSERT INTO callchains VALUES (1, 1, 3), (2, 1, 3), (3, 1, 4), (4, 2, 1), (5, 1, 2);"
         "INSERT INTO callchain_frames VALUES (1, 0, 3), (1, 1, 2), (1, 2, 1), "
         "(2, 0, 4), (2, 1, 2), (2, 2, 1), (3, 0, 5), (3, 1, 7), (3, 2, 5), (3, 3, 1), "
         "(4, 0, 6), (5, 0, 2), (5, 1, 1);"
         "INSERT INTO threads (pid, tid, name_id, is_main) VALUES (1, 1, 9, 1), (2, 2, NULL, 1);");
    /* pid 1: 80 samples in burn_a, 20 in burn_b, 10 in rec; pid 2: 5 in other;
     * sample i at time 1000 + i */
    exec(db, "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 114)\n"
             "INSERT INTO cpu_samples (timestamp_ns, pid, tid, cpu, callchain_id)\n"
             "SELECT 1000 + i, CASE WHEN i >= 110 THEN 2 ELSE 1 END,\n"
             "       CASE WHEN i >= 110 THEN 2 ELSE 1 END, 0,\n"
             "       CASE WHEN i < 80 THEN 1 WHEN i < 100 THEN 2 WHEN i < 110 THEN 3 ELSE 4 END\n"
             "FROM n");
    exec(db, "INSERT INTO osrt_calls (start_ns, end_ns, pid, tid, name_id, callchain_id) VALUES "
             "(100, 400, 1, 1, 8, 5), (500, 600, 1, 1, 8, 5), (700, 800, 1, 1, 8, NULL)");
    return db;
}

static struct stack_set *load(sqlite3 *db, const char *source, long long start, long long end,
                              long long pid)
{
    struct stack_set *set = NULL;
    struct asys_err err = {0};
    struct stack_filter f = {start, end, pid, -1};
    ck_assert_msg(stack_set_load(db, stack_source_find(source), &f, &set, &err) == 0, "%s",
                  err.text);
    return set;
}

static const char *name_of(const struct calltree *t, uint32_t node)
{
    return t->set->functions[t->nodes[node].function].name;
}

/* The first child of `parent` named `name`, or CALLTREE_NONE. */
static uint32_t find_child(const struct calltree *t, uint32_t parent, const char *name)
{
    for (uint32_t c = t->nodes[parent].first_child; c != CALLTREE_NONE;
         c = t->nodes[c].next_sibling)
        if (!strcmp(name_of(t, c), name))
            return c;
    return CALLTREE_NONE;
}

START_TEST(top_down_tree_sums_weights_along_paths)
{
    sqlite3 *db = stacks_database();
    struct stack_set *set = load(db, "cpu", LLONG_MIN, LLONG_MAX, 1);
    struct calltree *t = NULL;
    struct asys_err err = {0};
    ck_assert_int_eq(calltree_build(set, CALLTREE_TOP_DOWN, &t, &err), 0);
    ck_assert_uint_eq(t->nodes[CALLTREE_ROOT].total, 110);
    uint32_t main_node = find_child(t, CALLTREE_ROOT, "main");
    ck_assert_uint_ne(main_node, CALLTREE_NONE);
    ck_assert_uint_eq(t->nodes[main_node].total, 110);
    ck_assert_uint_eq(t->nodes[main_node].self, 0);
    /* siblings by weight: middle (100) before rec (10) */
    uint32_t middle = t->nodes[main_node].first_child;
    ck_assert_str_eq(name_of(t, middle), "middle");
    ck_assert_uint_eq(t->nodes[middle].total, 100);
    ck_assert_str_eq(name_of(t, t->nodes[middle].next_sibling), "rec");
    uint32_t a = find_child(t, middle, "burn_a"), b = find_child(t, middle, "burn_b");
    ck_assert_uint_eq(t->nodes[a].self, 80);
    ck_assert_uint_eq(t->nodes[b].self, 20);
    ck_assert_uint_eq(t->nodes[a].depth, 3);
    /* recursion is a path: rec > rec > rec */
    uint32_t r1 = find_child(t, main_node, "rec"), r2 = find_child(t, r1, "rec");
    uint32_t r3 = find_child(t, r2, "rec");
    ck_assert_uint_ne(r3, CALLTREE_NONE);
    ck_assert_uint_eq(t->nodes[r3].self, 10);
    ck_assert_uint_eq(t->nodes[r1].self, 0);
    calltree_free(t);
    stack_set_free(set);
    sqlite3_close(db);
}
END_TEST

START_TEST(bottom_up_tree_starts_at_the_sampled_function)
{
    sqlite3 *db = stacks_database();
    struct stack_set *set = load(db, "cpu", LLONG_MIN, LLONG_MAX, -1);
    struct calltree *t = NULL;
    struct asys_err err = {0};
    ck_assert_int_eq(calltree_build(set, CALLTREE_BOTTOM_UP, &t, &err), 0);
    uint32_t first = t->nodes[CALLTREE_ROOT].first_child;
    ck_assert_str_eq(name_of(t, first), "burn_a");
    ck_assert_uint_eq(t->nodes[first].total, 80);
    uint32_t caller = t->nodes[first].first_child;
    ck_assert_str_eq(name_of(t, caller), "middle");
    ck_assert_str_eq(name_of(t, t->nodes[caller].first_child), "main");
    uint32_t other = find_child(t, CALLTREE_ROOT, "[unknown]");
    ck_assert_uint_eq(other, CALLTREE_NONE); /* other has a symbol, no module */
    ck_assert_uint_eq(t->nodes[find_child(t, CALLTREE_ROOT, "other")].total, 5);
    calltree_free(t);
    stack_set_free(set);
    sqlite3_close(db);
}
END_TEST

START_TEST(flat_profile_counts_recursion_once)
{
    sqlite3 *db = stacks_database();
    struct stack_set *set = load(db, "cpu", LLONG_MIN, LLONG_MAX, -1);
    struct calltree_flat_row *rows = NULL;
    size_t n = 0;
    struct asys_err err = {0};
    ck_assert_int_eq(calltree_flat(set, &rows, &n, &err), 0);
    ck_assert_uint_eq(n, 6);
    ck_assert_str_eq(set->functions[rows[0].function].name, "burn_a");
    ck_assert_uint_eq(rows[0].self, 80);
    for (size_t i = 0; i < n; i++) {
        const char *name = set->functions[rows[i].function].name;
        if (!strcmp(name, "rec")) {
            ck_assert_uint_eq(rows[i].self, 10);
            ck_assert_uint_eq(rows[i].total, 10); /* not 30: once per sample */
        } else if (!strcmp(name, "main")) {
            ck_assert_uint_eq(rows[i].self, 0);
            ck_assert_uint_eq(rows[i].total, 110);
        }
    }
    free(rows);
    stack_set_free(set);
    sqlite3_close(db);
}
END_TEST

START_TEST(filters_and_sources)
{
    sqlite3 *db = stacks_database();
    /* samples 1000..1079 are burn_a: a window over the first 10 */
    struct stack_set *set = load(db, "cpu", 1000, 1009, -1);
    ck_assert_uint_eq(set->total_weight, 10);
    ck_assert_uint_eq(set->chain_count, 1);
    stack_set_free(set);
    set = load(db, "cpu", LLONG_MIN, LLONG_MAX, 2);
    ck_assert_uint_eq(set->total_weight, 5);
    ck_assert_uint_eq(set->thread_count, 1);
    ck_assert_ptr_null(set->threads[0].name);
    stack_set_free(set);
    /* OS runtime calls: their duration, clipped, the call itself as the leaf;
     * the call without a stack is left out */
    set = load(db, "osrt", 200, 550, -1);
    ck_assert_uint_eq(set->total_weight, 200 + 50);
    ck_assert_uint_eq(set->chain_count, 1);
    const struct stack_chain *c = &set->chains[0];
    ck_assert_uint_eq(c->depth, 3);
    ck_assert_str_eq(set->functions[set->chain_functions[c->first]].name, "read");
    ck_assert_str_eq(set->threads[0].name, "worker");
    stack_set_free(set);
    /* nothing there: an error that says what is missing */
    struct asys_err err = {0};
    struct stack_filter f = {5000, 6000, -1, -1};
    ck_assert_int_eq(stack_set_load(db, stack_source_find("cpu"), &f, &set, &err), -1);
    ck_assert_ptr_null(set);
    ck_assert_ptr_nonnull(strstr(err.text, "no CPU samples"));
    exec(db, "DROP TABLE cpu_samples");
    f = (struct stack_filter){LLONG_MIN, LLONG_MAX, -1, -1};
    ck_assert_int_eq(stack_set_load(db, stack_source_find("cpu"), &f, &set, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.text, "no CPU samples"));
    ck_assert_ptr_null(stack_source_find("gpu"));
    sqlite3_close(db);
}
END_TEST

/* The SQL view: rows depth first with parent ids, as the reports read them. */
START_TEST(call_tree_table_function)
{
    sqlite3 *db = stacks_database();
    sqlite3_stmt *st = NULL;
    ck_assert_int_eq(sqlite3_prepare_v2(db,
                                        "SELECT id, parent_id, level, function, self, total, "
                                        "total_pct FROM call_tree('cpu', 'topdown', NULL, NULL, 1)",
                                        -1, &st, NULL),
                     SQLITE_OK);
    const char *expected[] = {"main", "middle", "burn_a", "burn_b", "rec", "rec", "rec"};
    const int levels[] = {0, 1, 2, 2, 1, 2, 3};
    const int parents[] = {0, 1, 2, 2, 1, 5, 6};
    int row = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        ck_assert_int_lt(row, 7);
        ck_assert_int_eq(sqlite3_column_int(st, 0), row + 1);
        ck_assert_int_eq(sqlite3_column_int(st, 1), parents[row]);
        ck_assert_int_eq(sqlite3_column_int(st, 2), levels[row]);
        ck_assert_str_eq((const char *)sqlite3_column_text(st, 3), expected[row]);
        row++;
    }
    ck_assert_int_eq(row, 7);
    sqlite3_finalize(st);
    ck_assert_int_eq(
        sqlite3_prepare_v2(db, "SELECT * FROM call_tree('cpu', 'sideways')", -1, &st, NULL),
        SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ERROR);
    ck_assert_ptr_nonnull(strstr(sqlite3_errmsg(db), "unknown call tree view"));
    sqlite3_finalize(st);
    ck_assert_int_ne(sqlite3_prepare_v2(db, "SELECT * FROM call_tree", -1, &st, NULL), SQLITE_OK);
    sqlite3_finalize(st);
    sqlite3_close(db);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("calltree");
    TCase *tc = tcase_create("calltree");
    /* Check's default is 4 s: an ASan build on a loaded CI machine ran over */
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, top_down_tree_sums_weights_along_paths);
    tcase_add_test(tc, bottom_up_tree_starts_at_the_sampled_function);
    tcase_add_test(tc, flat_profile_counts_recursion_once);
    tcase_add_test(tc, filters_and_sources);
    tcase_add_test(tc, call_tree_table_function);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
