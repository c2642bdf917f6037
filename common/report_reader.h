/* Reading NAME.asys-rep: a streaming pass over the archive.  manifest.json
 * must come first; segments follow and are handed out one at a time. */
#ifndef ASYS_REPORT_READER_H
#define ASYS_REPORT_READER_H

#include <cJSON.h>
#include <stdint.h>

#include "asys_error.h"
#include "segment_stream.h"

struct asys_report_reader;

/* Opens the report and reads its manifest; checks the format version. */
int asys_report_reader_open(struct asys_report_reader **out, const char *path,
                            struct asys_err *err);
/* Borrowed; valid until close. */
const cJSON *asys_report_manifest(const struct asys_report_reader *r);
/* symbols.json (FORMAT.md §6), or NULL when the report has no call stacks. */
const cJSON *asys_report_symbols(const struct asys_report_reader *r);
/* Positions `s` on the next segment member.  Returns 1, 0 at the end, -1 on
 * an archive error (the report is damaged).  A segment whose header is bad
 * is returned as 1 with `bad` set and the reason in err (the caller skips it). */
int asys_report_next_segment(struct asys_report_reader *r, struct asys_segment_stream *s,
                             const char **member, int *bad, struct asys_err *err);
void asys_report_reader_close(struct asys_report_reader *r);

/* Why reading a member's data failed (the archive itself is damaged), or NULL. */
const char *asys_report_archive_error(const struct asys_report_reader *r);

/* Checks a member name: relative, no "..", no empty components. */
int asys_member_name_is_safe(const char *name);

#endif
