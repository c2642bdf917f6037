#include "options.h"

#include "parse_util.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* "512K", "1G": a size as a user writes it. */
static void size_text(uint64_t bytes, char *out, size_t size)
{
    if (bytes && bytes % (1ull << 30) == 0)
        snprintf(out, size, "%" PRIu64 "G", bytes >> 30);
    else if (bytes && bytes % (1ull << 20) == 0)
        snprintf(out, size, "%" PRIu64 "M", bytes >> 20);
    else if (bytes && bytes % (1ull << 10) == 0)
        snprintf(out, size, "%" PRIu64 "K", bytes >> 10);
    else
        snprintf(out, size, "%" PRIu64, bytes);
}

/* "a, b or c" */
static void choices_text(const char *const *choices, const char *last_sep, char *out, size_t size)
{
    size_t used = 0, n = 0;
    while (choices[n])
        n++;
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        const char *sep = i == 0 ? "" : i + 1 == n ? last_sep : ", ";
        int w = snprintf(out + used, size - used, "%s%s", sep, choices[i]);
        if (w < 0 || (size_t)w >= size - used)
            return;
        used += (size_t)w;
    }
}

static int is_choice(const char *const *choices, const char *text, size_t len)
{
    for (const char *const *c = choices; c && *c; c++)
        if (strlen(*c) == len && !strncmp(*c, text, len))
            return 1;
    return 0;
}

static int set_canonical(struct asys_option_value *v, const char *text, struct asys_err *err)
{
    if (strlen(text) >= sizeof v->canonical)
        return asys_fail_kind(err, ASYS_ERR_USAGE, "--%s: value is too long", v->option->name);
    strcpy(v->canonical, text);
    return 0;
}

static int set_number(struct asys_option_value *v, uint64_t n)
{
    v->number = n;
    v->has_number = 1;
    snprintf(v->canonical, sizeof v->canonical, "%" PRIu64, n);
    return 0;
}

static int parse_by_type(const struct asys_option *o, const char *text, struct asys_option_value *v,
                         struct asys_err *err)
{
    char valid[256];
    uint64_t n;
    switch (o->type) {
    case ASYS_OPT_FLAG:
        return text ? asys_fail_kind(err, ASYS_ERR_USAGE, "option --%s takes no value", o->name)
                    : set_canonical(v, "true", err);
    case ASYS_OPT_BOOL: {
        int b = asys_parse_bool(text);
        if (b < 0)
            return asys_fail_kind(err, ASYS_ERR_USAGE, "--%s takes true or false, not '%s'",
                                  o->name, text);
        v->number = (uint64_t)b;
        v->has_number = 1;
        return set_canonical(v, b ? "true" : "false", err);
    }
    case ASYS_OPT_TEXT:
        if (!*text)
            return asys_fail_kind(err, ASYS_ERR_USAGE, "empty --%s value", o->name);
        return set_canonical(v, text, err);
    case ASYS_OPT_CHOICE:
        if (!is_choice(o->choices, text, strlen(text))) {
            choices_text(o->choices, " or ", valid, sizeof valid);
            return asys_fail_kind(err, ASYS_ERR_USAGE, "--%s takes %s, not '%s'", o->name, valid,
                                  text);
        }
        return set_canonical(v, text, err);
    case ASYS_OPT_LIST:
        for (const char *p = text; *p;) {
            size_t len = strcspn(p, ",");
            if (!is_choice(o->choices, p, len)) {
                choices_text(o->choices, ", ", valid, sizeof valid);
                return asys_fail_kind(err, ASYS_ERR_USAGE, "unknown --%s value '%.*s' (valid: %s)",
                                      o->name, (int)len, p, valid);
            }
            p += len + (p[len] == ',');
        }
        if (!*text)
            return asys_fail_kind(err, ASYS_ERR_USAGE, "empty --%s list", o->name);
        return set_canonical(v, text, err);
    case ASYS_OPT_COUNT:
        if (asys_parse_count(text, o->max ? o->max : UINT64_MAX, &n) != 0 || n < o->min)
            return asys_fail_kind(err, ASYS_ERR_USAGE,
                                  "--%s takes %" PRIu64 " to %" PRIu64 ", not '%s'", o->name,
                                  o->min, o->max ? o->max : UINT64_MAX, text);
        return set_number(v, n);
    case ASYS_OPT_NS:
        if (asys_parse_count(text, o->max ? o->max : UINT64_MAX, &n) != 0 || n < o->min)
            return asys_fail_kind(err, ASYS_ERR_USAGE, "--%s takes nanoseconds, not '%s'", o->name,
                                  text);
        return set_number(v, n);
    case ASYS_OPT_SIZE: {
        char lo[32], hi[32];
        size_text(o->min, lo, sizeof lo);
        size_text(o->max, hi, sizeof hi);
        if (asys_parse_size(text, &n) != 0 || n < o->min || (o->max && n > o->max)) {
            if (o->max)
                return asys_fail_kind(err, ASYS_ERR_USAGE,
                                      "--%s needs a size between %s and %s, not '%s'", o->name, lo,
                                      hi, text);
            return asys_fail_kind(err, ASYS_ERR_USAGE, "--%s needs a size of at least %s, not '%s'",
                                  o->name, lo, text);
        }
        return set_number(v, n);
    }
    }
    return asys_fail_kind(err, ASYS_ERR_USAGE, "--%s: unknown option type", o->name);
}

int asys_option_parse(const struct asys_option *o, const char *text, struct asys_option_value *v,
                      struct asys_err *err)
{
    v->option = o;
    v->has_number = 0;
    v->number = 0;
    v->canonical[0] = '\0';
    if (o->planned) { /* kept as given: the manifest records it */
        v->text = text;
        return set_canonical(v, text ? text : "true", err);
    }
    if (!text && o->type != ASYS_OPT_FLAG && o->type != ASYS_OPT_BOOL)
        return asys_fail_kind(err, ASYS_ERR_USAGE, "option --%s needs a value (%s)", o->name,
                              o->metavar ? o->metavar : "VALUE");
    v->text = text;
    return o->parse ? o->parse(o, text, v, err) : parse_by_type(o, text, v, err);
}

/* --help's layout: the option, then its text from HELP_INDENT on (on a
 * line of its own when the option reaches it), wrapped at HELP_WIDTH. */
#define HELP_INDENT ASYS_HELP_INDENT
#define HELP_WIDTH 100

/* Writes `text` from column `at` (the cursor is there), wrapped at spaces
 * within HELP_WIDTH, continuation lines from HELP_INDENT. */
static void print_wrapped(FILE *out, size_t at, const char *text)
{
    while (*text) {
        size_t room = HELP_WIDTH > at ? HELP_WIDTH - at : 1, len = strlen(text), cut = len;
        if (len > room) {
            cut = room;
            while (cut > room / 2 && text[cut] != ' ')
                cut--;
            if (text[cut] != ' ')
                cut = room; /* one long word: cut it */
        }
        fprintf(out, "%.*s\n", (int)cut, text);
        text += cut;
        while (*text == ' ')
            text++;
        if (*text)
            fprintf(out, "%*s", HELP_INDENT, "");
        at = HELP_INDENT;
    }
}

void asys_option_print_help(FILE *out, const struct asys_option *o)
{
    char head[160], text[2048];
    if (o->short_name)
        snprintf(head, sizeof head, "  -%c, --%s%s%s", o->short_name, o->name,
                 o->metavar ? " " : "", o->metavar ? o->metavar : "");
    else
        snprintf(head, sizeof head, "      --%s%s%s", o->name, o->metavar ? " " : "",
                 o->metavar ? o->metavar : "");
    size_t width = strlen(head);
    if (width + 2 > HELP_INDENT)
        fprintf(out, "%s\n%*s", head, HELP_INDENT, "");
    else
        fprintf(out, "%-*s", HELP_INDENT, head);
    snprintf(text, sizeof text, "%s%s", o->planned ? "[planned] " : "", o->help);
    print_wrapped(out, HELP_INDENT, text);
    if (o->default_value)
        fprintf(out, "%*sdefault: %s\n", HELP_INDENT, "", o->default_value);
}
