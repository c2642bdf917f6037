/* Bytes and numbers as lowercase hex digits (build ids, report ids, offsets). */
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

/* `v` in lowercase hex digits, without leading zeros ("0" for 0), and a NUL
 * into `out` (17 bytes); the number of digits. */
static inline size_t asys_hex_u64(uint64_t v, char *out)
{
    static const char digits[] = "0123456789abcdef";
    size_t n = 1;
    for (uint64_t rest = v >> 4; rest; rest >>= 4)
        n++;
    for (size_t i = n; i-- > 0; v >>= 4)
        out[i] = digits[v & 15];
    out[n] = '\0';
    return n;
}

#endif
