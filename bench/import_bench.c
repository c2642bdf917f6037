/* Import throughput against the floor SQLite sets.
 *
 *   import_bench import REPORT DB   import REPORT into DB (asys's importer)
 *   import_bench raw ROWS DB        ROWS prepared INSERTs into hgtx_events of the
 *                                   same schema, same pragmas, one transaction
 *
 * Prints "<rows> rows in <seconds> s" (rows = HGTX events).  The runner
 * (run_benchmarks.py) runs each in its own process to read its peak RSS. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "embedded_files.h"
#include "importer.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int exec(sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        fprintf(stderr, "import_bench: %s\n", msg);
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

/* A family's schema file: its tables (indexes 0) or the indexes after its
 * "-- after load" line (indexes 1), as the importer runs them. */
static int exec_part(sqlite3 *db, const char *file, int indexes)
{
    const char *text = asys_schema_text(file);
    const char *marker = text ? strstr(text, "\n-- after load") : NULL;
    if (!text)
        return -1;
    if (indexes)
        return marker ? exec(db, marker + 1) : 0;
    char *tables = marker ? strndup(text, (size_t)(marker - text)) : strdup(text);
    int rc = tables ? exec(db, tables) : -1;
    free(tables);
    return rc;
}

/* The same statement, pragmas and transaction as the importer, with values
 * shaped like a push/pop range (ids increase, times increase, few NULLs). */
static int raw(long rows, sqlite3 *db)
{
    if (exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE;"
                 " PRAGMA cache_size=-65536;") ||
        exec_part(db, "hgtx.sql", 0) || exec(db, "BEGIN"))
        return -1;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db,
                           "INSERT INTO hgtx_events (id, kind, start_ns, end_ns, pid, tid, "
                           "end_tid, domain_id, text_id, category, color, payload_type, payload, "
                           "nesting_level, parent_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    long long t = 1000000000LL;
    for (long i = 1; i <= rows; i++) {
        sqlite3_bind_int64(st, 1, i);
        sqlite3_bind_int64(st, 2, 1);
        sqlite3_bind_int64(st, 3, t);
        sqlite3_bind_int64(st, 4, t + 37);
        sqlite3_bind_int64(st, 5, 4242);
        sqlite3_bind_int64(st, 6, 4242);
        sqlite3_bind_null(st, 7);
        sqlite3_bind_int64(st, 8, 0);
        sqlite3_bind_int64(st, 9, 3);
        sqlite3_bind_null(st, 10);
        sqlite3_bind_null(st, 11);
        sqlite3_bind_null(st, 12);
        sqlite3_bind_null(st, 13);
        sqlite3_bind_int64(st, 14, 0);
        sqlite3_bind_null(st, 15);
        if (sqlite3_step(st) != SQLITE_DONE)
            return -1;
        sqlite3_reset(st);
        t += 61;
    }
    sqlite3_finalize(st);
    return exec_part(db, "hgtx.sql", 1) || exec(db, "COMMIT");
}

int main(int argc, char **argv)
{
    if (argc != 4 || (strcmp(argv[1], "import") && strcmp(argv[1], "raw"))) {
        fprintf(stderr, "usage: import_bench import REPORT DB | raw ROWS DB\n");
        return 2;
    }
    unlink(argv[3]);
    sqlite3 *db = NULL;
    if (sqlite3_open(argv[3], &db) != SQLITE_OK)
        return 1;
    double start = now();
    long rows = 0;
    int rc;
    if (!strcmp(argv[1], "raw")) {
        rows = atol(argv[2]);
        rc = raw(rows, db);
    } else {
        struct asys_import_stats stats;
        struct asys_err err = {0};
        rc = asys_import_report(argv[2], db, NULL, NULL, NULL, NULL, NULL, &stats, &err);
        if (rc)
            fprintf(stderr, "import_bench: %s\n", err.text);
        rows = (long)stats.hgtx_events;
    }
    double seconds = now() - start;
    sqlite3_close(db);
    unlink(argv[3]);
    if (rc)
        return 1;
    printf("%ld rows in %.3f s\n", rows, seconds);
    return 0;
}
