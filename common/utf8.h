/* UTF-8 as the outputs need it: every text asys writes (tables, JSON,
 * pftrace, SVG) is valid UTF-8, each byte that does not start a valid
 * sequence replaced by U+FFFD. */
#ifndef ASYS_UTF8_H
#define ASYS_UTF8_H

#include <stddef.h>

/* Length of the valid UTF-8 sequence at s (1..4; at most `left` bytes), or 0
 * when the byte there does not start one (overlong forms, surrogates and
 * code points past U+10FFFF included). */
size_t asys_utf8_sequence(const unsigned char *s, size_t left);

#endif
