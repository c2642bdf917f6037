/* cJSON keeps numbers as doubles, exact only below 2^53: 64-bit times and
 * ticks go into JSON as decimal strings.  Readers accept either form. */
#ifndef ASYS_JSON_UTIL_H
#define ASYS_JSON_UTIL_H

#include <cJSON.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

void asys_json_add_u64(cJSON *obj, const char *key, uint64_t v);
void asys_json_add_i64(cJSON *obj, const char *key, int64_t v);
cJSON *asys_json_u64(uint64_t v);
/* 0 when `item` is a number or a decimal string; -1 otherwise. */
int asys_json_to_u64(const cJSON *item, uint64_t *out);
int asys_json_to_i64(const cJSON *item, int64_t *out);
int asys_json_get_u64(const cJSON *obj, const char *key, uint64_t *out);
int asys_json_get_i64(const cJSON *obj, const char *key, int64_t *out);
/* The string at obj.key, or `fallback`. */
const char *asys_json_get_str(const cJSON *obj, const char *key, const char *fallback);

/* Writes `s` as a JSON string literal: the one escaper of every JSON asys
 * writes by hand (stats reports, Chrome JSON, speedscope): controls escaped,
 * each byte that does not start valid UTF-8 written as U+FFFD. */
void asys_json_write_string(FILE *out, const char *s, size_t len);

/* cJSON_Print's text (formatted) or cJSON_PrintUnformatted's, faster for
 * integers (json_print.c); NULL when out of memory or `item` cannot be
 * printed.  free() it. */
char *asys_json_print(const cJSON *item, int formatted);
#endif
