#include "parse_util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int asys_parse_bool(const char *text)
{
    if (!text || !strcmp(text, "true") || !strcmp(text, "1") || !strcmp(text, "yes"))
        return 1;
    if (!strcmp(text, "false") || !strcmp(text, "0") || !strcmp(text, "no"))
        return 0;
    return -1;
}

int asys_parse_size(const char *text, uint64_t *out)
{
    char *end;
    if (!text || !*text || *text == '-')
        return -1;
    errno = 0;
    unsigned long long n = strtoull(text, &end, 10);
    if (end == text || errno == ERANGE) /* beyond 2^64 would become UINT64_MAX */
        return -1;
    uint64_t scale = 1;
    switch (*end) {
    case '\0':
        break;
    case 'k':
    case 'K':
        scale = 1ull << 10;
        end++;
        break;
    case 'm':
    case 'M':
        scale = 1ull << 20;
        end++;
        break;
    case 'g':
    case 'G':
        scale = 1ull << 30;
        end++;
        break;
    case 't':
    case 'T':
        scale = 1ull << 40;
        end++;
        break;
    default:
        return -1;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end || n > UINT64_MAX / scale)
        return -1;
    *out = n * scale;
    return 0;
}

int asys_parse_count(const char *text, uint64_t max, uint64_t *out)
{
    uint64_t n;
    if (!text || asys_decimal_u64(&text, '\0', &n) != 0 || n > max)
        return -1;
    *out = n;
    return 0;
}
