/* Values as users write them on a command line, parsed the same way by every
 * asys program. */
#ifndef ASYS_PARSE_UTIL_H
#define ASYS_PARSE_UTIL_H

#include <stdint.h>

/* "true"/"1"/"yes" (or NULL) -> 1, "false"/"0"/"no" -> 0, else -1. */
int asys_parse_bool(const char *text);
/* "64M", "2G", "4096" -> bytes; -1 when not a size. */
int asys_parse_size(const char *text, uint64_t *out);
/* A non-negative decimal no larger than `max`; -1 otherwise. */
int asys_parse_count(const char *text, uint64_t max, uint64_t *out);

#endif
