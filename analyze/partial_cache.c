#define _GNU_SOURCE
#include "partial_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "report_db.h"
#include "report_partial.h"

#ifndef ASYS_VERSION
#define ASYS_VERSION "0.0.0"
#endif

#define MAX_PARTIAL_BYTES (256u << 20) /* no partial of a real report is near this */

/* DIR/.NAME.asys-partial for DIR/NAME.asys-rep */
static void cache_path(const char *report, char *out, size_t size)
{
    char base[PATH_MAX];
    asys_report_base(report, base, sizeof base);
    const char *slash = strrchr(base, '/');
    int dir = slash ? (int)(slash - base + 1) : 0;
    snprintf(out, size, "%.*s.%s.asys-partial", dir, base, base + dir);
}

int asys_partial_cache_key(const char *report, const char *options, char **key)
{
    struct stat st;
    *key = NULL;
    if (stat(report, &st) != 0)
        return -1;
    return asprintf(key, "1|%s|%d|%d|%llu|%llu|%lld|%lld.%09ld|%s", ASYS_VERSION,
                    ASYS_SCHEMA_VERSION, ASYS_PARTIAL_VERSION, (unsigned long long)st.st_dev,
                    (unsigned long long)st.st_ino, (long long)st.st_size,
                    (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec, options) < 0
               ? -1
               : 0;
}

/* Whether the partial at `path` has the key `key`. */
static int key_matches(const char *path, const char *key)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int match = 0;
    if (asys_db_open_untrusted(path, &db) != 0)
        return 0;
    if (sqlite3_prepare_v2(db, "SELECT value FROM partial_info WHERE key = 'cache_key'", -1, &st,
                           NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
        const unsigned char *v = sqlite3_column_text(st, 0);
        match = v && !strcmp((const char *)v, key);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return match;
}

/* Copies `from` to `to` through a temporary file renamed into place. */
static int copy_file(const char *from, const char *to)
{
    char tmp[PATH_MAX + 64];
    int in = open(from, O_RDONLY | O_CLOEXEC), out = -1, rc = -1;
    struct stat st;
    char *data = NULL;
    if (in < 0 || fstat(in, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        (uint64_t)st.st_size > MAX_PARTIAL_BYTES || !(data = malloc((size_t)st.st_size)) ||
        read(in, data, (size_t)st.st_size) != st.st_size)
        goto out;
    if (asys_temp_template(to, 1, tmp, sizeof tmp) != 0 || (out = mkostemp(tmp, O_CLOEXEC)) < 0)
        goto out;
    asys_cleanup_add(tmp);
    if (write(out, data, (size_t)st.st_size) == st.st_size && close(out) == 0) {
        struct asys_err ignored = {0}; /* a partial not kept is made again next time */
        out = -1;
        rc = asys_publish_temp(tmp, to, ASYS_PUBLISH_REPLACE, &ignored);
    } else {
        unlink(tmp);
        asys_cleanup_remove(tmp);
    }
out:
    if (out >= 0)
        close(out);
    if (in >= 0)
        close(in);
    free(data);
    return rc;
}

int asys_partial_cache_get(const char *report, const char *key, const char *out)
{
    char path[PATH_MAX + 32];
    struct stat st;
    cache_path(report, path, sizeof path);
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || !key_matches(path, key))
        return 0;
    return copy_file(path, out) == 0;
}

void asys_partial_cache_put(const char *report, const char *partial)
{
    char path[PATH_MAX + 32];
    cache_path(report, path, sizeof path);
    (void)copy_file(partial, path);
}
