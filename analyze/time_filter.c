#include "time_filter.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static long long parse_time(const char *s, size_t n)
{
    char buf[64];
    if (n == 0 || n >= sizeof buf)
        return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (end == buf || errno || v < 0)
        return -1;
    double scale = 1;
    if (!strcmp(end, "s") || !strcmp(end, "sec"))
        scale = 1e9;
    else if (!strcmp(end, "ms") || !strcmp(end, "msec"))
        scale = 1e6;
    else if (!strcmp(end, "us") || !strcmp(end, "usec"))
        scale = 1e3;
    else if (*end && strcmp(end, "ns") && strcmp(end, "nsec"))
        return -1;
    return (long long)(v * scale + 0.5);
}

int asys_parse_filter_time(const char *spec, long long *start, long long *end)
{
    const char *slash = strchr(spec, '/');
    if (!slash)
        return -1;
    *start = slash == spec ? 0 : parse_time(spec, (size_t)(slash - spec));
    *end = slash[1] ? parse_time(slash + 1, strlen(slash + 1)) : LLONG_MAX;
    return *start < 0 || *end < 0 || *end < *start ? -1 : 0;
}

int asys_session_value(sqlite3 *db, const char *key, int64_t *value)
{
    sqlite3_stmt *st = NULL;
    int found = sqlite3_prepare_v2(db, "SELECT value FROM session_info WHERE key = ?", -1, &st,
                                   NULL) == SQLITE_OK &&
                sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC) == SQLITE_OK &&
                sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_INTEGER;
    if (found)
        *value = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return found;
}

long long asys_session_time(sqlite3 *db, const char *key)
{
    sqlite3_stmt *st = NULL;
    long long v = 0;
    if (sqlite3_prepare_v2(db, "SELECT value FROM session_info WHERE key = ?", -1, &st, NULL) ==
            SQLITE_OK &&
        sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}
