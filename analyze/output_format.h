/* Writing a query's rows as column, table, csv, tsv or json.
 *
 * Columns whose name contains "(ns)" are times: --timeunit converts their
 * values and renames the unit in the header.
 *
 * Numbers: column and table round reals for reading (one decimal, three in
 * megabyte columns, the unit's decimals in converted times); csv, tsv and
 * json print every value so that it reads back exactly (the shortest such
 * form, with at least those decimals).  A report that wants rounded figures
 * rounds in its SQL.
 *
 * Text: each byte that does not start valid UTF-8 becomes U+FFFD in every
 * format, so that the output is valid UTF-8 (json writes it as \ufffd). */
#ifndef ASYS_OUTPUT_FORMAT_H
#define ASYS_OUTPUT_FORMAT_H

#include <sqlite3.h>
#include <stdio.h>

#include "asys_error.h"
#include "utf8.h"
#include "json_util.h"

enum asys_format { ASYS_FMT_COLUMN, ASYS_FMT_TABLE, ASYS_FMT_CSV, ASYS_FMT_TSV, ASYS_FMT_JSON };

struct asys_output_options {
    enum asys_format format;
    long long time_divisor; /* 1 ns, 1000 us, ... */
    const char *time_unit; /* "ns", "us", "ms", "s" */
    const char *empty_message; /* column/table: printed instead of an empty table */
    /* column/table: a tree report's label column, indented two spaces per
     * level given by the level column (both by header; NULL: not a tree) */
    const char *tree_label;
    const char *tree_level;
    /* column/table: printed first, once the query has run (a report that
     * fails leaves no title without its rows) */
    const char *title;
    /* column: a line longer than this wraps its last text column onto
     * lines of its own, aligned under it (0: never) */
    int max_width;
};

/* The width column output wraps at: the terminal's when `fd` is one,
 * else $COLUMNS, else 160. */
int asys_output_width(int fd);

int asys_format_from_name(const char *name, enum asys_format *out);
const char *asys_format_extension(enum asys_format f);
/* "ns|nsec", "us|usec", "ms|msec", "s|sec" */
int asys_timeunit_from_name(const char *name, struct asys_output_options *o);

/* Steps `st` to the end, writing its rows.  Returns the number of rows, or
 * -1 with the reason (a query error). */
long long asys_write_rows(FILE *out, sqlite3_stmt *st, const struct asys_output_options *o,
                          struct asys_err *err);

/* A table column declared with this type holds numbers of any size: INTEGER,
 * REAL, or, for an unsigned 64-bit value above INT64_MAX (SQLite's integers
 * are signed), TEXT of its decimal digits.  The type's affinity is BLOB, so
 * SQLite converts nothing on insert; json writes such TEXT as a number when a
 * query selects the column as it is. */
#define ASYS_DECLTYPE_NUMBER "NUMBER BLOB"

/* Writes `v` into buf with at least `min_decimals` decimals and as many more
 * as it needs to read back exactly (strtod gives `v` again): 0.125, 5.0,
 * 33.333333333333336; very large or small magnitudes in exponent form
 * (1e+20).  "nan", "inf", "-inf" for the others.  Returns the length. */
int asys_format_real(char *buf, size_t size, double v, int min_decimals);
/* v's decimal digits into out (ASYS_I64_DIGITS_MAX bytes of room), not
 * terminated; returns how many. */
#define ASYS_I64_DIGITS_MAX 21
size_t asys_format_i64(char *out, int64_t v);

/* Whether `s` is a JSON integer literal of at most 20 digits (as
 * ASYS_DECLTYPE_NUMBER columns hold them). */
int asys_is_integer_text(const char *s);

#endif
