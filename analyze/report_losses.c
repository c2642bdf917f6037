#include "report_losses.h"

#include <stdio.h>

int asys_report_losses_read(sqlite3 *db, struct asys_report_losses *out)
{
    static const char sql[] =
        "SELECT COALESCE(SUM(dropped_records), 0) + COALESCE(SUM(lost_thread_records), 0)\n"
        "           + COALESCE(SUM(lost_process_records), 0),\n"
        "       COALESCE(SUM(dropped_records > 0), 0) + COALESCE(SUM(lost_threads), 0),\n"
        "       COALESCE(SUM(lost_processes), 0)\n"
        "FROM segments";
    sqlite3_stmt *st = NULL;
    int rc = -1;
    *out = (struct asys_report_losses){0, 0, 0};
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        goto out;
    if (sqlite3_step(st) != SQLITE_ROW)
        goto out;
    out->records = sqlite3_column_int64(st, 0);
    out->threads = sqlite3_column_int64(st, 1);
    out->processes = sqlite3_column_int64(st, 2);
    rc = 0;
out:
    sqlite3_finalize(st);
    return rc;
}

void asys_report_losses_warn(const char *prog, const struct asys_report_losses *l)
{
    if (l->records <= 0 && l->threads <= 0 && l->processes <= 0)
        return;
    char processes[64] = "";
    if (l->processes > 0)
        snprintf(processes, sizeof processes, " and %lld process%s", (long long)l->processes,
                 l->processes == 1 ? "" : "es");
    fprintf(stderr, "%s: warning: %lld records lost in %lld thread%s%s; see report_info\n", prog,
            (long long)l->records, (long long)l->threads, l->threads == 1 ? "" : "s", processes);
}
