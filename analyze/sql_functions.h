/* SQL functions the reports use: median(x) and stdev(x) aggregates
 * (stdev is the sample standard deviation, 0 for a single value),
 * covered_ns(start, end), the length of the union of intervals,
 * demangle(name), and the call_tree table-valued function (calltree_vtab.c). */
#ifndef ASYS_SQL_FUNCTIONS_H
#define ASYS_SQL_FUNCTIONS_H

#include <sqlite3.h>

int asys_sql_register_functions(sqlite3 *db);
/* call_tree(source, view, filter_start, filter_end, pid, tid) */
int asys_sql_register_call_tree(sqlite3 *db);

/* A text column, "" when NULL: a cached database is not trusted to keep its
 * NOT NULL promises, and a reader must not crash when it does not. */
static inline const char *asys_column_text(sqlite3_stmt *st, int col)
{
    const unsigned char *t = sqlite3_column_text(st, col);
    return t ? (const char *)t : "";
}

#endif
