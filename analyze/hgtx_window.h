/* --filter-nvtx RANGE[@DOMAIN][/N]: the time window of the Nth instance
 * (from 0, in start order) of an HGTX push/pop or start/end range, as nsys
 * stats takes it.  Without @DOMAIN the range is looked up in the default
 * domain (as --hgtx-capture does); @ followed by a star is any domain. */
#ifndef ASYS_HGTX_WINDOW_H
#define ASYS_HGTX_WINDOW_H

#include <sqlite3.h>
#include <stdint.h>

#include "asys_error.h"

/* 0 with the window in start and end (ns, the database's clock); -1 with why
 * (kind USAGE for a malformed spec, INPUT when the report has no such range). */
int asys_hgtx_window(sqlite3 *db, const char *spec, int64_t *start, int64_t *end,
                     struct asys_err *err);

#endif
