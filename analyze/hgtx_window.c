#include "hgtx_window.h"

#include <stdlib.h>
#include <string.h>

#include "parse_util.h"

/* Splits RANGE[@DOMAIN][/N] into its parts (text borrowed into `buf`). */
static int parse_spec(const char *spec, char *buf, size_t size, const char **range,
                      const char **domain, uint64_t *instance, struct asys_err *err)
{
    if (strlen(spec) >= size)
        return asys_fail_kind(err, ASYS_ERR_USAGE, "--filter-nvtx: the range name is too long");
    memcpy(buf, spec, strlen(spec) + 1);
    *instance = 0;
    char *slash = strrchr(buf, '/');
    if (slash) {
        *slash = '\0';
        if (asys_parse_count(slash + 1, 1u << 30, instance) != 0)
            return asys_fail_kind(err, ASYS_ERR_USAGE,
                                  "--filter-nvtx takes RANGE[@DOMAIN][/N] with N a count from 0, "
                                  "not '%s'",
                                  spec);
    }
    char *at = strrchr(buf, '@');
    *domain = NULL;
    if (at) {
        *at = '\0';
        *domain = at + 1;
    }
    *range = buf;
    if (!**range || (*domain && !**domain))
        return asys_fail_kind(err, ASYS_ERR_USAGE,
                              "--filter-nvtx takes RANGE[@DOMAIN][/N], not '%s'", spec);
    return 0;
}

int asys_hgtx_window(sqlite3 *db, const char *spec, int64_t *start, int64_t *end,
                     struct asys_err *err)
{
    char buf[1024];
    const char *range = NULL, *domain = NULL;
    uint64_t instance = 0;
    if (parse_spec(spec, buf, sizeof buf, &range, &domain, &instance, err) != 0)
        return -1;
    static const char sql[] =
        "SELECT e.start_ns, e.end_ns FROM hgtx_events AS e\n"
        "JOIN strings AS s ON s.id = e.text_id\n"
        "LEFT JOIN hgtx_domains AS d ON d.id = e.domain_id\n"
        "LEFT JOIN strings AS ds ON ds.id = d.name_id\n"
        "WHERE e.kind IN (1, 2) AND e.end_ns IS NOT NULL AND s.value = ?1\n"
        "  AND (?2 = '*' OR (?2 IS NULL AND d.name_id IS NULL) OR ds.value = ?2)\n"
        "ORDER BY e.start_ns, e.id LIMIT 1 OFFSET ?3";
    sqlite3_stmt *st = NULL;
    int rc = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        asys_fail(err, "%s", sqlite3_errmsg(db));
        goto out;
    }
    sqlite3_bind_text(st, 1, range, -1, SQLITE_STATIC);
    if (domain)
        sqlite3_bind_text(st, 2, domain, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, (sqlite3_int64)instance);
    int step = sqlite3_step(st);
    if (step != SQLITE_ROW) {
        if (step == SQLITE_DONE)
            asys_fail_kind(err, ASYS_ERR_INPUT,
                           "--filter-nvtx: the report has no HGTX range '%s'%s%s%s instance %llu",
                           range, domain ? " in domain '" : " in the default domain",
                           domain ? domain : "", domain ? "'," : ",", (unsigned long long)instance);
        else
            asys_fail(err, "%s", sqlite3_errmsg(db));
        goto out;
    }
    *start = sqlite3_column_int64(st, 0);
    *end = sqlite3_column_int64(st, 1);
    rc = 0;
out:
    sqlite3_finalize(st);
    return rc;
}
