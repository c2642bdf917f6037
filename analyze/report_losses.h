/* What a report lost while it was recorded, summed over its segments, for
 * the one warning line the tools end with when it lost anything (as nsys
 * does); report_info has the causes, the drops table the time windows. */
#ifndef ASYS_REPORT_LOSSES_H
#define ASYS_REPORT_LOSSES_H

#include <sqlite3.h>
#include <stdint.h>

struct asys_report_losses {
    int64_t records; /* records dropped by writers, and events of threads and processes
                        that could not record */
    int64_t threads; /* threads that dropped records or could not record */
    int64_t processes; /* processes that could not record at all */
};

/* 0, or -1 when the database cannot say (an older cache: nothing is claimed). */
int asys_report_losses_read(sqlite3 *db, struct asys_report_losses *out);

/* "PROG: warning: N records lost in M threads; see report_info" on stderr,
 * nothing when nothing was lost. */
void asys_report_losses_warn(const char *prog, const struct asys_report_losses *l);

#endif
