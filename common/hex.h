/* Bytes as lowercase hex digits (build ids, report ids). */
#ifndef ASYS_HEX_H
#define ASYS_HEX_H

#include <stddef.h>
#include <stdint.h>

/* Writes 2 * `n` digits and a NUL into `out` (2 * n + 1 bytes). */
static inline void asys_hex_encode(const void *bytes, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    const uint8_t *b = bytes;
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[b[i] >> 4];
        out[2 * i + 1] = digits[b[i] & 15];
    }
    out[2 * n] = '\0';
}

#endif
