/* Command-line options of the analysis tools (asys-stats, asys-deps,
 * asys-export): "--name=value", "--name value", "-n value"; the reports as
 * positional arguments.  Each tool declares its options as a table of
 * struct asys_option (common/options.h, the same struct asys profile's
 * options use): values are parsed by type and --help is printed from the
 * table, so the help, the docs made from it and the parser cannot disagree.
 * Errors are printed as one line `prog: ...`. */
#ifndef ASYS_CLI_ARGS_H
#define ASYS_CLI_ARGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "options.h"

struct asys_cli {
    const char *prog;
    int argc;
    char **argv;
    int i; /* index of the current argument */
    const char *arg; /* the current argument as given */
    char name[64]; /* its option name, without any "=value" */
    const char *value; /* the text after '=', or NULL */
};

void asys_cli_init(struct asys_cli *c, const char *prog, int argc, char **argv);

/* Moves to the next argument; 0 when there are no more. */
int asys_cli_next(struct asys_cli *c);

/* Whether the current argument is the option `short_name` (may be NULL) or
 * `long_name`. */
int asys_cli_is(const struct asys_cli *c, const char *short_name, const char *long_name);

/* The current option's value: after '=', else the next argument.  NULL
 * after printing "option X needs a value". */
const char *asys_cli_value(struct asys_cli *c);

/* The texts that lists' items point into, owned by the caller's arguments
 * (one per option given; freed by asys_cli_texts_free). */
struct asys_cli_texts {
    char *texts[64];
    int count;
};
void asys_cli_texts_free(struct asys_cli_texts *t);

/* A comma-separated value ("a,b,c") appended to list[*count] (at most max),
 * the items pointing into a copy kept in `texts`; 0, or -1 after printing why. */
int asys_cli_list(struct asys_cli *c, const char **list, int *count, int max,
                  struct asys_cli_texts *texts);

/* What a tool was asked besides its work: -h/--help or --version. */
enum { ASYS_CLI_HELP = 1, ASYS_CLI_VERSION = 2 };

/* "PROG VERSION" on stdout. */
void asys_cli_print_version(const char *prog);

/* A tool's option table and the values its options ended up with (by
 * index; each its default until given). */
struct asys_cli_options {
    const struct asys_option *table;
    size_t count;
    struct asys_option_value *values;
};

/* Values of every option of `table` set to their defaults; 0, or -1 after
 * printing why (out of memory, a default its own type refuses). */
int asys_cli_options_init(struct asys_cli_options *o, const char *prog,
                          const struct asys_option *table, size_t count);
void asys_cli_options_free(struct asys_cli_options *o);
/* Takes the current argument when it is an option of the table: 1 when
 * taken, 0 when it is none of them, -1 after printing why its value is
 * refused.  A BOOL takes an optional true|false ("--x", "--x=false", "--x
 * true"); a FLAG no value. */
int asys_cli_take_option(struct asys_cli *c, struct asys_cli_options *o);
/* The value of option `name` (given, or its default). */
const struct asys_option_value *asys_cli_get(const struct asys_cli_options *o, const char *name);
/* Its text (NULL when neither given nor defaulted), number, or whether given. */
const char *asys_cli_text(const struct asys_cli_options *o, const char *name);
uint64_t asys_cli_number(const struct asys_cli_options *o, const char *name);
int asys_cli_given(const struct asys_cli_options *o, const char *name);
/* The entries every analysis tool's table has: the analysis database to use,
 * and -h/--help, --version (last, as --help lists them). */
#define ASYS_CLI_SQLITE_OPTION \
    { \
        .name = "sqlite", .type = ASYS_OPT_TEXT, .metavar = "PATH", \
        .help = "the analysis database to use or build" \
    }
#define ASYS_CLI_HELP_OPTIONS \
    {.name = "help", .short_name = 'h', .type = ASYS_OPT_FLAG, .help = "this help"}, \
    { \
        .name = "version", .type = ASYS_OPT_FLAG, .help = "the version of asys" \
    }
/* ASYS_CLI_HELP or ASYS_CLI_VERSION when one was given, else 0. */
int asys_cli_asked(const struct asys_cli_options *o);
/* --help's lines for the table. */
void asys_cli_print_options(FILE *out, const struct asys_option *table, size_t count);

struct asys_report_limits;

/* --max-expansion RATIO, --max-report-size SIZE, --max-segment-records N
 * (every analysis tool has them): 1 when taken, 0 when the argument is none
 * of them, -1 after printing why its value is refused. */
int asys_cli_take_limits(struct asys_cli *c, struct asys_report_limits *limits);
/* Their --help lines. */
extern const char asys_cli_limits_help[];

/* The current argument is not a known option: the report when it is the
 * first positional one (*input set, 0), else -1 after printing why. */
int asys_cli_positional(struct asys_cli *c, const char **input);

/* The same for a tool that takes several inputs: appended to inputs[*count]
 * (at most max); 0, or -1 after printing why. */
int asys_cli_positionals(struct asys_cli *c, const char **inputs, int *count, int max);

#endif
