/* --filter-time and the session's times, shared by asys-stats, asys-deps and
 * asys-export. */
#ifndef ASYS_TIME_FILTER_H
#define ASYS_TIME_FILTER_H

#include <sqlite3.h>
#include <stdint.h>

/* "START/END" relative to the session start: each a number with an optional
 * unit (ns default, us, ms, s); either side may be empty ("2s/", "/1.5s").
 * Sets *start and *end in ns (*end = LLONG_MAX when open); 0 or -1. */
int asys_parse_filter_time(const char *spec, long long *start, long long *end);

/* A time of session_info ('start_ns', 'end_ns'); 0 when absent. */
long long asys_session_time(sqlite3 *db, const char *key);
/* The integer session_info holds under `key`: 1, or 0 when it holds none. */
int asys_session_value(sqlite3 *db, const char *key, int64_t *value);

#endif
