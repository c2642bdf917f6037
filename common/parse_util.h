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

/* The decimal digits at *text, ending at `stop`: 0 with *out set and *text
 * at the stop character, or -1 (no digit, overflow, another character).
 * Inline and libc-free for the injected library, which parses its
 * environment at each process start: strtoull's and sscanf's code would be
 * paged in and bound there, about 8 µs a process on this project's VMs. */
static inline int asys_decimal_u64(const char **text, char stop, uint64_t *out)
{
    const char *p = *text;
    uint64_t v = 0;
    if (*p < '0' || *p > '9')
        return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        uint64_t digit = (uint64_t)(*p - '0');
        if (v > (UINT64_MAX - digit) / 10)
            return -1;
        v = v * 10 + digit;
    }
    if (*p != stop)
        return -1;
    *text = p;
    *out = v;
    return 0;
}

#endif
