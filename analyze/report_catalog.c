#define _GNU_SOURCE
#include "report_catalog.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embedded_files.h"

static char *dup_range(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

static char *trimmed(const char *s, size_t n)
{
    while (n && (*s == ' ' || *s == '\t')) {
        s++;
        n--;
    }
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        n--;
    return dup_range(s, n);
}

/* Appends " text" to *field (continuation lines). */
static int append_text(char **field, const char *text, size_t n)
{
    char *add = trimmed(text, n);
    if (!add)
        return -1;
    if (!*field) {
        *field = add;
        return 0;
    }
    size_t old = strlen(*field);
    char *joined = realloc(*field, old + strlen(add) + 2);
    if (!joined) {
        free(add);
        return -1;
    }
    joined[old] = ' ';
    strcpy(joined + old + 1, add);
    free(add);
    *field = joined;
    return 0;
}

static int add_aliases(struct asys_report_def *def, const char *value, size_t n)
{
    const char *p = value, *end = value + n;
    while (p < end) {
        size_t len = strcspn(p, ",");
        if (p + len > end)
            len = (size_t)(end - p);
        char *alias = trimmed(p, len);
        if (!alias)
            return -1;
        if (*alias && def->alias_count < ASYS_MAX_ALIASES)
            def->aliases[def->alias_count++] = alias;
        else
            free(alias);
        p += len + 1;
    }
    return 0;
}

int asys_report_def_parse(const char *text, const char *origin, struct asys_report_def *def,
                          struct asys_err *err)
{
    memset(def, 0, sizeof *def);
    const char *p = text;
    char **last = NULL; /* field a continuation line extends */
    int oom = 0;
    while (*p == '-' && p[1] == '-') {
        const char *line = p + 2;
        size_t len = strcspn(line, "\n");
        p = line + len + (line[len] == '\n');
        const char *colon = memchr(line, ':', len);
        const char *key = line;
        while (key < line + len && *key == ' ')
            key++;
        size_t key_len = colon ? (size_t)(colon - key) : 0;
        const char *value = colon ? colon + 1 : NULL;
        size_t value_len = colon ? len - (size_t)(value - line) : 0;
        int indented = len >= 3 && line[0] == ' ' && line[1] == ' ' && line[2] == ' ';
        if (indented && last) {
            oom |= append_text(last, line, len);
            continue;
        }
        last = NULL;
        if (!colon)
            continue;
        if (key_len == 4 && !strncmp(key, "name", 4)) {
            free(def->name);
            def->name = trimmed(value, value_len);
        } else if (key_len == 5 && !strncmp(key, "alias", 5)) {
            oom |= add_aliases(def, value, value_len);
        } else if (key_len == 5 && !strncmp(key, "title", 5)) {
            oom |= append_text(&def->title, value, value_len);
        } else if (key_len == 7 && !strncmp(key, "default", 7)) {
            char *v = trimmed(value, value_len);
            def->is_default = v && (!strcmp(v, "yes") || !strcmp(v, "true"));
            free(v);
        } else if (key_len == 11 && !strncmp(key, "description", 11)) {
            oom |= append_text(&def->description, value, value_len);
            last = &def->description;
        } else if (key_len == 7 && !strncmp(key, "columns", 7)) {
            oom |= append_text(&def->columns, value, value_len);
            last = &def->columns;
        } else if (key_len == 4 && !strncmp(key, "tree", 4)) {
            const char *comma = memchr(value, ',', value_len);
            size_t first = comma ? (size_t)(comma - value) : value_len;
            free(def->tree_label);
            free(def->tree_level);
            def->tree_label = trimmed(value, first);
            def->tree_level = comma ? trimmed(comma + 1, value_len - first - 1) : NULL;
            oom |= !def->tree_label || (comma && !def->tree_level);
        } else if (key_len == 7 && !strncmp(key, "summary", 7)) {
            free(def->summary);
            def->summary = trimmed(value, value_len);
            oom |= !def->summary;
        } else if (key_len == 8 && !strncmp(key, "requires", 8)) {
            /* "TABLE: message" */
            const char *colon = memchr(value, ':', value_len);
            size_t first = colon ? (size_t)(colon - value) : value_len;
            free(def->requires_table);
            free(def->requires_message);
            def->requires_table = trimmed(value, first);
            def->requires_message = colon ? trimmed(colon + 1, value_len - first - 1) : NULL;
            oom |= !def->requires_table || (colon && !def->requires_message);
        } else if (key_len == 9 && !strncmp(key, "arguments", 9)) {
            oom |= append_text(&def->arguments, value, value_len);
            last = &def->arguments;
        }
    }
    /* "-- merge" on a line of its own: the partial query above, the merge below */
    const char *merge = strstr(text, "\n-- merge\n");
    def->sql = merge ? dup_range(text, (size_t)(merge - text) + 1) : strdup(text);
    if (merge)
        oom |= !(def->merge_sql = strdup(merge + strlen("\n-- merge\n")));
    def->origin = strdup(origin);
    if (oom || !def->sql || !def->origin) {
        asys_report_def_free(def);
        return asys_fail(err, "out of memory");
    }
    if (!def->name || !*def->name) {
        asys_report_def_free(def);
        return asys_fail(err, "no '-- name:' header");
    }
    if (!def->title)
        def->title = strdup(def->name);
    return 0;
}

void asys_report_def_free(struct asys_report_def *def)
{
    free(def->name);
    for (int i = 0; i < def->alias_count; i++)
        free(def->aliases[i]);
    free(def->title);
    free(def->description);
    free(def->columns);
    free(def->arguments);
    free(def->tree_label);
    free(def->tree_level);
    free(def->summary);
    free(def->requires_table);
    free(def->requires_message);
    free(def->sql);
    free(def->merge_sql);
    free(def->origin);
    memset(def, 0, sizeof *def);
}

static int add_def(struct asys_report_catalog *cat, struct asys_report_def *def,
                   struct asys_err *err)
{
    for (size_t i = 0; i < cat->count; i++) {
        if (!strcmp(cat->defs[i].name, def->name)) {
            asys_report_def_free(&cat->defs[i]);
            cat->defs[i] = *def;
            return 0;
        }
    }
    struct asys_report_def *bigger = realloc(cat->defs, (cat->count + 1) * sizeof *bigger);
    if (!bigger)
        return asys_fail(err, "out of memory");
    cat->defs = bigger;
    cat->defs[cat->count++] = *def;
    return 0;
}

int asys_catalog_load_builtin(struct asys_report_catalog *cat, struct asys_err *err)
{
    for (const struct asys_embedded_file *f = asys_query_files; f->name; f++) {
        struct asys_report_def def;
        if (asys_report_def_parse(f->text, "built-in", &def, err) != 0)
            return asys_fail(err, "built-in report '%s' is broken", f->name);
        if (add_def(cat, &def, err) != 0) {
            asys_report_def_free(&def);
            return -1;
        }
    }
    return 0;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return NULL;
    char *text = NULL;
    size_t size = 0, used = 0;
    for (;;) {
        if (used + 4097 > size) {
            size = size ? size * 2 : 8192;
            char *bigger = realloc(text, size);
            if (!bigger) {
                free(text);
                fclose(f);
                return NULL;
            }
            text = bigger;
        }
        size_t n = fread(text + used, 1, size - used - 1, f);
        used += n;
        if (!n)
            break;
    }
    fclose(f);
    text[used] = '\0';
    return text;
}

int asys_catalog_load_dir(struct asys_report_catalog *cat, const char *dir, struct asys_err *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return asys_fail(err, "cannot open report directory '%s': %s", dir, strerror(errno));
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".sql") != 0)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        char *text = read_file(path);
        if (!text) {
            rc = asys_fail(err, "cannot read '%s': %s", path, strerror(errno));
            break;
        }
        struct asys_report_def def;
        struct asys_err why;
        if (asys_report_def_parse(text, path, &def, &why) != 0)
            rc = asys_fail(err, "report file '%s': %s", path, why.text);
        else if (add_def(cat, &def, err) != 0) {
            asys_report_def_free(&def);
            rc = -1;
        }
        free(text);
    }
    closedir(d);
    return rc;
}

const struct asys_report_def *asys_catalog_find(const struct asys_report_catalog *cat,
                                                const char *name)
{
    size_t n = strcspn(name, ":");
    for (size_t i = 0; i < cat->count; i++) {
        const struct asys_report_def *d = &cat->defs[i];
        if (strlen(d->name) == n && !strncmp(d->name, name, n))
            return d;
        for (int a = 0; a < d->alias_count; a++)
            if (strlen(d->aliases[a]) == n && !strncmp(d->aliases[a], name, n))
                return d;
    }
    return NULL;
}

void asys_catalog_free(struct asys_report_catalog *cat)
{
    for (size_t i = 0; i < cat->count; i++)
        asys_report_def_free(&cat->defs[i]);
    free(cat->defs);
    cat->defs = NULL;
    cat->count = 0;
}

void asys_report_request_parse(const char *requested, struct asys_report_request *out)
{
    memset(out, 0, sizeof *out);
    const char *p = strchr(requested, ':');
    while (p) {
        const char *part = p + 1;
        p = strchr(part, ':');
        size_t len = p ? (size_t)(p - part) : strlen(part);
        if (len == strlen(ASYS_REPORT_NVTX_NAME) && !strncmp(part, ASYS_REPORT_NVTX_NAME, len)) {
            out->nvtx_name = 1;
        } else if (!out->arg) {
            out->arg = part;
            out->arg_len = len;
        }
    }
}

/* Whether `arg` (len bytes) is in the report's comma-separated list. */
static int report_takes(const struct asys_report_def *def, const char *arg, size_t n)
{
    /* "NUMBER" in the list: a positive decimal number (rank_outliers:K) */
    char number[32], *end = NULL;
    snprintf(number, sizeof number, "%.*s", (int)(n < sizeof number ? n : sizeof number - 1), arg);
    double v = strtod(number, &end);
    if (def->arguments && strstr(def->arguments, "NUMBER") && n && n < sizeof number &&
        end != number && !*end && v > 0 && v < 1e9)
        return 1;
    for (const char *p = def->arguments; p && *p;) {
        p += strspn(p, ", ");
        size_t len = strcspn(p, ",");
        size_t word = len;
        while (word && p[word - 1] == ' ')
            word--;
        if (word && word == n && !strncmp(p, arg, n))
            return 1;
        p += len;
    }
    return 0;
}

int asys_report_check_argument(const struct asys_report_def *def, const char *requested,
                               struct asys_err *err)
{
    const char *colon = strchr(requested, ':');
    if (!colon)
        return 0;
    if (!def->arguments)
        return asys_fail(err, "report '%s' takes no argument (got '%s')", def->name, colon + 1);
    int others = 0;
    for (const char *part = colon + 1;; part++) {
        size_t n = strcspn(part, ":");
        if (!report_takes(def, part, n))
            return asys_fail(err, "report '%s' has no argument '%.*s' (valid: %s)", def->name,
                             (int)n, part, def->arguments);
        if (n != strlen(ASYS_REPORT_NVTX_NAME) || strncmp(part, ASYS_REPORT_NVTX_NAME, n))
            others++;
        if (others > 1)
            return asys_fail(err, "report '%s' takes one of %s (got '%s')", def->name,
                             def->arguments, colon + 1);
        part += n;
        if (!*part)
            return 0;
    }
}
