/* The partial of a report kept beside it (.NAME.asys-partial), so that a
 * report set analysed again with the same reports and options reads one
 * small file per report instead of opening its analysis database and
 * running the reports again.  The key is the report's identity on disk
 * (device, inode, size, mtime), the asys version and schema, and what
 * shapes the rows (the reports asked for and the options); it is kept in
 * the partial's partial_info ('cache_key').  A directory that cannot be
 * written gets no cache, silently. */
#ifndef ASYS_PARTIAL_CACHE_H
#define ASYS_PARTIAL_CACHE_H

#include <stddef.h>

/* The key of `report` for the options text `options`; 0, or -1 when the
 * report cannot be stat'ed.  `key` is malloc'ed. */
int asys_partial_cache_key(const char *report, const char *options, char **key);

/* Copies the cached partial of `report` to `out` when its key is `key`:
 * 1 when it did, 0 when there is none that matches (or it cannot be read). */
int asys_partial_cache_get(const char *report, const char *key, const char *out);

/* Keeps a copy of the partial at `partial` (whose key is in it) as the
 * cache of `report`; failures are ignored (no cache). */
void asys_partial_cache_put(const char *report, const char *partial);

#endif
