/* SQL functions the reports use: median(x) and stdev(x) aggregates
 * (stdev is the sample standard deviation, 0 for a single value), and
 * covered_ns(start, end), the length of the union of intervals. */
#ifndef ASYS_SQL_FUNCTIONS_H
#define ASYS_SQL_FUNCTIONS_H

#include <sqlite3.h>

int asys_sql_register_functions(sqlite3 *db);

#endif
