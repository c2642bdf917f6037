#include "json_util.h"

#include "utf8.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

cJSON *asys_json_u64(uint64_t v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%" PRIu64, v);
    return cJSON_CreateString(buf);
}

void asys_json_add_u64(cJSON *obj, const char *key, uint64_t v)
{
    cJSON_AddItemToObject(obj, key, asys_json_u64(v));
}

void asys_json_add_i64(cJSON *obj, const char *key, int64_t v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%" PRId64, v);
    cJSON_AddStringToObject(obj, key, buf);
}

int asys_json_to_u64(const cJSON *item, uint64_t *out)
{
    if (cJSON_IsNumber(item)) {
        /* a double from a file: only one that fits converts (no UB on 1e300 or NaN) */
        if (!(item->valuedouble >= 0 && item->valuedouble < 18446744073709551616.0))
            return -1;
        *out = (uint64_t)item->valuedouble;
        return 0;
    }
    if (!cJSON_IsString(item) || !item->valuestring[0] || item->valuestring[0] == '-')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(item->valuestring, &end, 10);
    if (*end || errno)
        return -1;
    *out = v;
    return 0;
}

int asys_json_to_i64(const cJSON *item, int64_t *out)
{
    if (cJSON_IsNumber(item)) {
        if (!(item->valuedouble >= -9223372036854775808.0 &&
              item->valuedouble < 9223372036854775808.0))
            return -1;
        *out = (int64_t)item->valuedouble;
        return 0;
    }
    if (!cJSON_IsString(item) || !item->valuestring[0])
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(item->valuestring, &end, 10);
    if (*end || errno)
        return -1;
    *out = v;
    return 0;
}

int asys_json_get_u64(const cJSON *obj, const char *key, uint64_t *out)
{
    return asys_json_to_u64(cJSON_GetObjectItemCaseSensitive(obj, key), out);
}

int asys_json_get_i64(const cJSON *obj, const char *key, int64_t *out)
{
    return asys_json_to_i64(cJSON_GetObjectItemCaseSensitive(obj, key), out);
}

const char *asys_json_get_str(const cJSON *obj, const char *key, const char *fallback)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(item) ? item->valuestring : fallback;
}

void asys_json_write_string(FILE *out, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', out);
    for (size_t i = 0; i < len;) {
        unsigned c = p[i];
        size_t n = asys_utf8_sequence(p + i, len - i);
        if (n == 0) {
            fputs("\\ufffd", out);
            i++;
            continue;
        }
        if (n > 1) {
            fwrite(p + i, 1, n, out);
            i += n;
            continue;
        }
        switch (c) {
        case '"':
            fputs("\\\"", out);
            break;
        case '\\':
            fputs("\\\\", out);
            break;
        case '\n':
            fputs("\\n", out);
            break;
        case '\r':
            fputs("\\r", out);
            break;
        case '\t':
            fputs("\\t", out);
            break;
        default:
            if (c < 0x20 || c == 0x7f)
                fprintf(out, "\\u%04x", c);
            else
                fputc((int)c, out);
        }
        i++;
    }
    fputc('"', out);
}
