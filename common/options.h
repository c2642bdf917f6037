/* One `asys profile` option: its spelling, type, the one default, help, and
 * the environment variable that carries its value to the injected library.
 *
 * The launcher's own options (profile_options.c) and each collector's
 * (collector_*.c) are written as tables of these; parsing, --help, the
 * manifest and the target's environment all read the same tables, so a
 * default is written once, as text, where the option is declared. */
#ifndef ASYS_OPTIONS_H
#define ASYS_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "asys_error.h"
#include "parse_util.h"

enum asys_option_type {
    ASYS_OPT_FLAG, /* no value (--help) */
    ASYS_OPT_BOOL, /* an optional true|false: "--x", "--x=false", "--x true" */
    ASYS_OPT_TEXT, /* any non-empty text */
    ASYS_OPT_CHOICE, /* one of `choices` */
    ASYS_OPT_LIST, /* comma-separated `choices` */
    ASYS_OPT_COUNT, /* an integer in [min, max] */
    ASYS_OPT_NS, /* nanoseconds, an integer in [min, max] */
    ASYS_OPT_SIZE, /* bytes: 4096, 64K, 2M, 1G; in [min, max] */
};

#define ASYS_OPTION_TEXT_MAX 2048 /* a metric list names up to 64 metrics */

struct asys_option;

/* The value an option ended up with (given or default). */
struct asys_option_value {
    const struct asys_option *option;
    const char *text; /* as given (borrowed), or the default */
    char canonical[ASYS_OPTION_TEXT_MAX]; /* what the collector receives ("1000", "graph") */
    uint64_t number; /* numeric types and custom parses that set it */
    int has_number;
    int given;
};

struct asys_option {
    const char *name; /* long name, without dashes */
    char short_name; /* 0: none */
    enum asys_option_type type;
    const char *metavar; /* in --help: "NS", "true|false" */
    const char *default_value; /* the one default, as a user would write it; NULL: none */
    const char *help;
    const char *env; /* carries `canonical` to the target; NULL: launcher only */
    const char *const *choices; /* CHOICE and LIST: NULL-terminated */
    uint64_t min, max; /* COUNT, NS, SIZE (max 0: no upper bound) */
    /* a parse of its own: checks `text` and fills v->canonical (and number);
     * NULL parses by type */
    int (*parse)(const struct asys_option *o, const char *text, struct asys_option_value *v,
                 struct asys_err *err);
    int planned; /* of the manual, not implemented: accepted, reported, recorded */
    /* a question whatever its value (--check-ppu-metrics-list LIST): its
     * collector answers and asys exits without running a program */
    int question;
};

/* Checks `text` (NULL for a flag or a bare boolean) and fills *v.  Errors
 * are one line naming the option (kind USAGE). */
int asys_option_parse(const struct asys_option *o, const char *text, struct asys_option_value *v,
                      struct asys_err *err);

/* One --help entry. */
/* The column where --help's texts start. */
#define ASYS_HELP_INDENT 32

void asys_option_print_help(FILE *out, const struct asys_option *o);

#endif
