/* Reading NAME.asys-rep: a streaming pass over the archive.  manifest.json
 * must come first; segments follow and are handed out one at a time. */
#ifndef ASYS_REPORT_READER_H
#define ASYS_REPORT_READER_H

#include <cJSON.h>
#include <stdint.h>

#include "asys_error.h"
#include "segment_stream.h"

struct asys_report_reader;

/* What no real report reaches and a hostile one is stopped by (every
 * analysis tool has options for them). */
struct asys_report_limits {
    uint32_t max_expansion; /* decompressed bytes per compressed byte; 0: no limit */
    uint64_t max_bytes; /* decompressed bytes in all; 0: no limit */
    uint64_t max_segment_records; /* records in one segment; 0: no limit */
    const char *max_bytes_why; /* what max_bytes stands for (NULL: the option) */
    /* called as the report is read: its bytes read so far of its size */
    void (*progress)(void *ctx, uint64_t done, uint64_t total);
    void *progress_ctx;
};
#define ASYS_DEFAULT_MAX_EXPANSION 1000u
#define ASYS_DEFAULT_MAX_REPORT_BYTES (1ull << 40)
#define ASYS_DEFAULT_MAX_SEGMENT_RECORDS (1ull << 32)
void asys_report_limits_default(struct asys_report_limits *l);

/* Opens the report and reads its manifest; checks the format version.
 * `limits` may be NULL (the defaults). */
int asys_report_reader_open(struct asys_report_reader **out, const char *path,
                            const struct asys_report_limits *limits, struct asys_err *err);
/* Borrowed; valid until close. */
const cJSON *asys_report_manifest(const struct asys_report_reader *r);
/* symbols.json (FORMAT.md §6), or NULL when the report has no call stacks. */
const cJSON *asys_report_symbols(const struct asys_report_reader *r);
/* Positions `s` on the next segment member (its buffer is the reader's:
 * close it before asking for the next one).  Returns 1, 0 at the end, -1 on
 * an archive error (the report is damaged).  A segment whose header is bad
 * is returned as 1 with `bad` set and the reason in err (the caller skips it). */
int asys_report_next_segment(struct asys_report_reader *r, struct asys_segment_stream *s,
                             const char **member, int *bad, struct asys_err *err);
void asys_report_reader_close(struct asys_report_reader *r);

/* When reading a member's data failed (the archive is damaged, or past a
 * limit): -1 with the reason in err (may be NULL), else 0. */
int asys_report_archive_failure(const struct asys_report_reader *r, struct asys_err *err);

/* Checks a member name: relative, no "..", no empty components. */
int asys_member_name_is_safe(const char *name);

#endif
