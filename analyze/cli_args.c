#include "cli_args.h"

#include <inttypes.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse_util.h"
#include "report_reader.h"

void asys_cli_init(struct asys_cli *c, const char *prog, int argc, char **argv)
{
    memset(c, 0, sizeof *c);
    c->prog = prog;
    c->argc = argc;
    c->argv = argv;
    c->i = 0;
}

int asys_cli_next(struct asys_cli *c)
{
    if (++c->i >= c->argc)
        return 0;
    c->arg = c->argv[c->i];
    const char *eq = strncmp(c->arg, "--", 2) == 0 ? strchr(c->arg, '=') : NULL;
    snprintf(c->name, sizeof c->name, "%.*s", eq ? (int)(eq - c->arg) : (int)strlen(c->arg),
             c->arg);
    c->value = eq ? eq + 1 : NULL;
    return 1;
}

int asys_cli_is(const struct asys_cli *c, const char *short_name, const char *long_name)
{
    return (short_name && !strcmp(c->name, short_name)) || !strcmp(c->name, long_name);
}

const char *asys_cli_value(struct asys_cli *c)
{
    if (c->value)
        return c->value;
    if (c->i + 1 >= c->argc) {
        fprintf(stderr, "%s: option %s needs a value\n", c->prog, c->name);
        return NULL;
    }
    c->value = c->argv[++c->i];
    return c->value;
}

void asys_cli_texts_free(struct asys_cli_texts *t)
{
    for (int i = 0; i < t->count; i++)
        free(t->texts[i]);
    t->count = 0;
}

int asys_cli_list(struct asys_cli *c, const char **list, int *count, int max,
                  struct asys_cli_texts *texts)
{
    const char *v = asys_cli_value(c);
    if (v && texts->count == (int)(sizeof texts->texts / sizeof texts->texts[0])) {
        fprintf(stderr, "%s: %s given too many times\n", c->prog, c->name);
        return -1;
    }
    char *copy = v ? strdup(v) : NULL; /* the items point into it */
    if (!copy) {
        if (v)
            fprintf(stderr, "%s: out of memory\n", c->prog);
        return -1;
    }
    texts->texts[texts->count++] = copy;
    /* an empty name ('', 'a,,b', 'a,') is a mistake, not "the defaults" */
    for (char *tok = copy, *next; tok; tok = next) {
        next = strchr(tok, ',');
        if (next)
            *next++ = '\0';
        if (!*tok) {
            fprintf(stderr, "%s: %s needs a name%s, not '%s'\n", c->prog, c->name,
                    *v ? " between the commas" : "", v);
            return -1;
        }
        if (*count == max) {
            fprintf(stderr, "%s: more than %d names given to %s\n", c->prog, max, c->name);
            return -1;
        }
        list[(*count)++] = tok;
    }
    return 0;
}

void asys_cli_print_version(const char *prog)
{
    printf("%s %s\n", prog, ASYS_VERSION);
}

int asys_cli_positional(struct asys_cli *c, const char **input)
{
    if (c->arg[0] == '-' && c->arg[1]) {
        fprintf(stderr, "%s: unknown option '%s' (see %s --help)\n", c->prog, c->arg, c->prog);
        return -1;
    }
    if (*input) {
        fprintf(stderr, "%s: only one report file may be given ('%s' and '%s')\n", c->prog, *input,
                c->arg);
        return -1;
    }
    *input = c->arg;
    return 0;
}

int asys_cli_positionals(struct asys_cli *c, const char **inputs, int *count, int max)
{
    if (c->arg[0] == '-' && c->arg[1]) {
        fprintf(stderr, "%s: unknown option '%s' (see %s --help)\n", c->prog, c->arg, c->prog);
        return -1;
    }
    if (*count >= max) {
        fprintf(stderr, "%s: more than %d inputs (give their directory)\n", c->prog, max);
        return -1;
    }
    inputs[(*count)++] = c->arg;
    return 0;
}

int asys_cli_options_init(struct asys_cli_options *o, const char *prog,
                          const struct asys_option *table, size_t count)
{
    struct asys_err err = {0};
    o->table = table;
    o->count = count;
    o->values = calloc(count ? count : 1, sizeof *o->values);
    if (!o->values) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        o->values[i].option = &table[i];
        if (table[i].default_value &&
            asys_option_parse(&table[i], table[i].default_value, &o->values[i], &err) != 0) {
            fprintf(stderr, "%s: %s\n", prog, err.text);
            return -1;
        }
    }
    return 0;
}

void asys_cli_options_free(struct asys_cli_options *o)
{
    free(o->values);
    o->values = NULL;
    o->count = 0;
}

/* The table entry the current argument names: "--name" or "-n". */
static const struct asys_option *find_option(const struct asys_cli *c,
                                             const struct asys_cli_options *o)
{
    for (size_t i = 0; i < o->count; i++) {
        const struct asys_option *t = &o->table[i];
        if ((c->name[0] == '-' && c->name[1] == '-' && !strcmp(c->name + 2, t->name)) ||
            (t->short_name && c->name[0] == '-' && c->name[1] == t->short_name && !c->name[2]))
            return t;
    }
    return NULL;
}

int asys_cli_take_option(struct asys_cli *c, struct asys_cli_options *o)
{
    const struct asys_option *t = find_option(c, o);
    if (!t)
        return 0;
    const char *text = NULL;
    if (t->type == ASYS_OPT_BOOL) {
        /* an optional true|false, given after '=' or as the next argument */
        text = c->value;
        if (!text && c->i + 1 < c->argc &&
            (!strcmp(c->argv[c->i + 1], "true") || !strcmp(c->argv[c->i + 1], "false")))
            text = c->argv[++c->i];
        if (!text)
            text = "true";
    } else if (t->type == ASYS_OPT_FLAG) {
        text = c->value;
    } else if (!(text = asys_cli_value(c))) {
        return -1;
    }
    struct asys_option_value *v = &o->values[t - o->table];
    struct asys_err err = {0};
    if (asys_option_parse(t, text, v, &err) != 0) {
        fprintf(stderr, "%s: %s\n", c->prog, err.text);
        return -1;
    }
    v->given = 1;
    return 1;
}

const struct asys_option_value *asys_cli_get(const struct asys_cli_options *o, const char *name)
{
    for (size_t i = 0; i < o->count; i++)
        if (!strcmp(o->table[i].name, name))
            return &o->values[i];
    return NULL; /* a name the tool does not declare: a programming error */
}

const char *asys_cli_text(const struct asys_cli_options *o, const char *name)
{
    const struct asys_option_value *v = asys_cli_get(o, name);
    return v && (v->given || v->option->default_value) ? v->text : NULL;
}

uint64_t asys_cli_number(const struct asys_cli_options *o, const char *name)
{
    const struct asys_option_value *v = asys_cli_get(o, name);
    return v ? v->number : 0;
}

int asys_cli_given(const struct asys_cli_options *o, const char *name)
{
    const struct asys_option_value *v = asys_cli_get(o, name);
    return v && v->given;
}

int asys_cli_asked(const struct asys_cli_options *o)
{
    return asys_cli_given(o, "help")      ? ASYS_CLI_HELP
           : asys_cli_given(o, "version") ? ASYS_CLI_VERSION
                                          : 0;
}

void asys_cli_print_options(FILE *out, const struct asys_option *table, size_t count)
{
    for (size_t i = 0; i < count; i++)
        asys_option_print_help(out, &table[i]);
}

const char asys_cli_limits_help[] =
    "      --max-expansion RATIO     refuse a report that decompresses to more than\n"
    "                                RATIO times its size (default 1000; 0: no limit)\n"
    "      --max-report-size SIZE    refuse one that decompresses to more than SIZE\n"
    "                                (default 1T; 0: no limit)\n"
    "      --max-segment-records N   refuse a segment of more than N records\n"
    "                                (default 4294967296; 0: no limit)\n";

int asys_cli_take_limits(struct asys_cli *c, struct asys_report_limits *limits)
{
    const char *v;
    uint64_t n;
    if (asys_cli_is(c, NULL, "--max-expansion")) {
        if (!(v = asys_cli_value(c)))
            return -1;
        if (asys_parse_count(v, UINT32_MAX, &n) != 0) {
            fprintf(stderr, "%s: --max-expansion takes a ratio (0 to %u), not '%s'\n", c->prog,
                    UINT32_MAX, v);
            return -1;
        }
        limits->max_expansion = (uint32_t)n;
        return 1;
    }
    if (asys_cli_is(c, NULL, "--max-report-size")) {
        if (!(v = asys_cli_value(c)))
            return -1;
        if (asys_parse_size(v, &limits->max_bytes) != 0) {
            fprintf(stderr, "%s: --max-report-size takes a size (64G, 2T), not '%s'\n", c->prog, v);
            return -1;
        }
        return 1;
    }
    if (asys_cli_is(c, NULL, "--max-segment-records")) {
        if (!(v = asys_cli_value(c)))
            return -1;
        if (asys_parse_count(v, UINT64_MAX, &limits->max_segment_records) != 0) {
            fprintf(stderr, "%s: --max-segment-records takes a count, not '%s'\n", c->prog, v);
            return -1;
        }
        return 1;
    }
    return 0;
}
