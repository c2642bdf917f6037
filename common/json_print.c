/* cJSON's printer, with integers printed directly (json_util.h).
 *
 * cJSON 1.7.15 (Debian 12's) prints every number with "%1.15g", reads it
 * back with sscanf and prints it again with "%1.17g" where it differs: 1-2 µs
 * a number, 9,000 of them in a 500-process report's manifest.  The text
 * here is byte for byte cJSON_Print's (cJSON_PrintUnformatted's unformatted):
 * integers below 10^15 are what "%1.15g" prints, and every other number goes
 * through cJSON's own rule. */
#include "json_util.h"

#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct text {
    char *p;
    size_t len, cap;
    int failed;
};

static int reserve(struct text *t, size_t more)
{
    if (t->failed)
        return -1;
    if (t->len + more + 1 <= t->cap)
        return 0;
    size_t cap = t->cap ? t->cap : 4096;
    while (cap < t->len + more + 1)
        cap *= 2;
    char *p = realloc(t->p, cap);
    if (!p) {
        t->failed = 1;
        return -1;
    }
    t->p = p;
    t->cap = cap;
    return 0;
}

static void put(struct text *t, const char *s, size_t n)
{
    if (reserve(t, n) != 0)
        return;
    memcpy(t->p + t->len, s, n);
    t->len += n;
}

static void put_char(struct text *t, char c, size_t times)
{
    if (reserve(t, times) != 0)
        return;
    memset(t->p + t->len, c, times);
    t->len += times;
}

/* fabs without libm (the common library does not link it) */
static double magnitude(double d)
{
    return d < 0 ? -d : d;
}

static int same_double(double a, double b)
{
    double larger = magnitude(a) > magnitude(b) ? magnitude(a) : magnitude(b);
    return magnitude(a - b) <= larger * DBL_EPSILON;
}

/* cJSON's rule: 15 significant digits where they give the double back, else
 * 17; the locale's decimal point written as '.'. */
static void put_double(struct text *t, double d)
{
    char buf[32];
    double back = 0;
    int n = snprintf(buf, sizeof buf, "%1.15g", d);
    if (sscanf(buf, "%lg", &back) != 1 || !same_double(back, d))
        n = snprintf(buf, sizeof buf, "%1.17g", d);
    if (n < 0 || (size_t)n >= sizeof buf) {
        t->failed = 1;
        return;
    }
    char point = localeconv()->decimal_point[0];
    for (int i = 0; i < n; i++)
        if (buf[i] == point)
            buf[i] = '.';
    put(t, buf, (size_t)n);
}

static void put_number(struct text *t, double d)
{
    if (d * 0 != 0) { /* NaN, infinities */
        put(t, "null", 4);
        return;
    }
    /* "%1.15g" of an integer below 10^15 is its digits; -0 prints "-0" */
    if (magnitude(d) < 1e15 && d == (double)(int64_t)d && !(d == 0 && signbit(d))) {
        char buf[24], *end = buf + sizeof buf, *at = end;
        uint64_t v = (uint64_t)magnitude(d);
        do
            *--at = (char)('0' + v % 10);
        while ((v /= 10) != 0);
        if (d < 0)
            *--at = '-';
        put(t, at, (size_t)(end - at));
        return;
    }
    put_double(t, d);
}

/* cJSON's escapes: the two that must be, the five short ones, \u00XX for
 * the other controls; every other byte as it is. */
static void put_string(struct text *t, const char *s)
{
    if (!s) {
        put(t, "\"\"", 2);
        return;
    }
    put_char(t, '"', 1);
    const char *run = s;
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        const char *short_escape = NULL;
        switch (*c) {
        case '"':
            short_escape = "\\\"";
            break;
        case '\\':
            short_escape = "\\\\";
            break;
        case '\b':
            short_escape = "\\b";
            break;
        case '\f':
            short_escape = "\\f";
            break;
        case '\n':
            short_escape = "\\n";
            break;
        case '\r':
            short_escape = "\\r";
            break;
        case '\t':
            short_escape = "\\t";
            break;
        default:
            if (*c >= 32)
                continue;
        }
        put(t, run, (size_t)((const char *)c - run));
        if (short_escape) {
            put(t, short_escape, 2);
        } else {
            char u[8];
            snprintf(u, sizeof u, "\\u%04x", *c);
            put(t, u, 6);
        }
        run = (const char *)c + 1;
    }
    put(t, run, strlen(run));
    put_char(t, '"', 1);
}

static void put_value(struct text *t, const cJSON *item, size_t depth, int formatted);

static void put_array(struct text *t, const cJSON *item, size_t depth, int formatted)
{
    put_char(t, '[', 1);
    for (const cJSON *e = item->child; e && !t->failed; e = e->next) {
        put_value(t, e, depth + 1, formatted);
        if (e->next)
            put(t, ", ", formatted ? 2 : 1);
    }
    put_char(t, ']', 1);
}

static void put_object(struct text *t, const cJSON *item, size_t depth, int formatted)
{
    put(t, "{\n", formatted ? 2 : 1);
    for (const cJSON *e = item->child; e && !t->failed; e = e->next) {
        if (formatted)
            put_char(t, '\t', depth + 1);
        put_string(t, e->string);
        put(t, ":\t", formatted ? 2 : 1);
        put_value(t, e, depth + 1, formatted);
        if (e->next)
            put_char(t, ',', 1);
        if (formatted)
            put_char(t, '\n', 1);
    }
    if (formatted)
        put_char(t, '\t', depth);
    put_char(t, '}', 1);
}

static void put_value(struct text *t, const cJSON *item, size_t depth, int formatted)
{
    switch (item->type & 0xff) {
    case cJSON_NULL:
        put(t, "null", 4);
        break;
    case cJSON_False:
        put(t, "false", 5);
        break;
    case cJSON_True:
        put(t, "true", 4);
        break;
    case cJSON_Number:
        put_number(t, item->valuedouble);
        break;
    case cJSON_Raw:
        if (item->valuestring)
            put(t, item->valuestring, strlen(item->valuestring));
        else
            t->failed = 1; /* as cJSON: no text */
        break;
    case cJSON_String:
        put_string(t, item->valuestring);
        break;
    case cJSON_Array:
        put_array(t, item, depth, formatted);
        break;
    case cJSON_Object:
        put_object(t, item, depth, formatted);
        break;
    default:
        t->failed = 1;
    }
}

char *asys_json_print(const cJSON *item, int formatted)
{
    struct text t = {0};
    if (!item)
        return NULL;
    put_value(&t, item, 0, formatted);
    if (reserve(&t, 0) != 0) {
        free(t.p);
        return NULL;
    }
    t.p[t.len] = '\0';
    return t.p;
}
