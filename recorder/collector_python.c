/* Python (manual §8): --python-sampling and its frequency and depth; the
 * sampler runs inside every Python interpreter of the tree (inject/python.c).
 * --python-backtrace=hggc: the Python stack of each HGGC API call.
 * --python-functions-trace: the functions named become HGTX ranges
 * (inject/python_trace.c); the spec is read and checked here. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asys_format.h"
#include "collector.h"
#include "read_file.h"
#include "profile_options.h"
#include "notes.h"

static const char *const backtrace_choices[] = {"hggc", "none", NULL};

// clang-format off
static const struct asys_option python_options[] = {
    {.name = "python-sampling", .type = ASYS_OPT_BOOL, .metavar = "true|false",
     .default_value = "true",
     .help = "sample the call stacks of every Python thread of the Python interpreters "
             "(python, python3) of the tree", .env = "ASYS_PYTHON_SAMPLING"},
    {.name = "python-sampling-frequency", .type = ASYS_OPT_COUNT, .metavar = "HZ",
     .default_value = "500", .help = "Python samples per second (1-1000)",
     .env = "ASYS_PYTHON_SAMPLING_HZ", .min = 1, .max = 1000},
    {.name = "python-backtrace-depth", .type = ASYS_OPT_COUNT, .metavar = "N",
     .default_value = "24", .help = "frames per Python call stack (1-128)",
     .env = "ASYS_PYTHON_BACKTRACE_DEPTH", .min = 1, .max = 128},
    {.name = "python-backtrace", .type = ASYS_OPT_CHOICE, .metavar = "hggc|none",
     .default_value = "none",
     .help = "the Python stack of each HGGC API call (over --hggcbacktrace's threshold when "
             "set), joined with its native stack", .env = "ASYS_PYTHON_BACKTRACE",
     .choices = backtrace_choices},
    {.name = "python-functions-trace", .type = ASYS_OPT_TEXT, .metavar = "module:NAME|FILE.json",
     .default_value = "none",
     .help = "trace Python functions as HGTX ranges (domain 'Python Hgtx' unless the JSON file "
             "says another): module:NAME, every function of module NAME and its submodules, or "
             "a JSON file of rules (manual 8.2); for each function the last rule that names it "
             "(its module or itself) decides its domains"},
    {.name = "python-functions-threshold", .type = ASYS_OPT_NS, .metavar = "NS",
     .default_value = "80000", .help = "record traced Python function calls lasting at least NS",
     .env = "ASYS_PYTHON_TRACE_THRESHOLD_NS", .max = UINT64_MAX / 4},
};
// clang-format on

static int tracing(const struct asys_profile_options *o)
{
    return strcmp(asys_profile_value(o, "python-functions-trace")->canonical, "none") != 0;
}

static int backtraces(const struct asys_profile_options *o)
{
    return !strcmp(asys_profile_value(o, "python-backtrace")->canonical, "hggc");
}

static int python_enabled(const struct asys_profile_options *o)
{
    return asys_profile_value(o, "python-sampling")->number != 0 || backtraces(o) || tracing(o);
}

/* ---- --python-functions-trace: the spec to rules ---------------------------------------
 *
 * Rules go to the target as text, one per line: ENTRY TAB MODULE TAB FUNCTION TAB DOMAIN
 * (FUNCTION empty: every function of MODULE and its submodules).  ENTRY numbers the spec's
 * top-level elements: for a function, the last entry with a rule that matches it decides
 * its domains (all of that entry's rules that match it: a function object with a domain of
 * its own is recorded in its parent's domain and in its own). */

#define RULES_MAX 12000 /* the target's environment holds 16 KiB in all */
#define DEFAULT_DOMAIN "Python Hgtx"

struct spec {
    const char *file;
    const char *text; /* the file's text (key lines are looked up in it) */
    char *out;
    size_t used, size;
};

static int line_of(const char *text, const char *at)
{
    int line = 1;
    for (const char *p = text; p < at && *p; p++)
        line += *p == '\n';
    return line;
}

/* The line of the first `"key"` in the file (cJSON keeps no positions). */
static int key_line(const struct spec *s, const char *key)
{
    char quoted[300];
    snprintf(quoted, sizeof quoted, "\"%s\"", key);
    const char *at = strstr(s->text, quoted);
    return at ? line_of(s->text, at) : 1;
}

static int spec_fail(const struct spec *s, const char *key, const char *what, struct asys_err *err)
{
    return asys_fail_kind(err, ASYS_ERR_USAGE, "--python-functions-trace: %s:%d: %s \"%s\"",
                          s->file, key_line(s, key), what, key);
}

#define NAME_MAX_CHARS 200

/* Why `name` cannot be a rule's module, function or domain; NULL when it can. */
static const char *name_problem(const char *name)
{
    if (!*name)
        return "needs a non-empty name";
    if (strlen(name) > NAME_MAX_CHARS)
        return "holds a name longer than 200 bytes";
    for (const char *p = name; *p; p++)
        if (*p == '\t' || *p == '\n' || *p == '\r')
            return "holds a name with a tab or a line break";
    return NULL;
}

static int add_rule(struct spec *s, int entry, const char *module, const char *function,
                    const char *domain, struct asys_err *err)
{
    if (!strcmp(module, "__main__") || !strncmp(module, "__main__.", 9))
        return asys_fail_kind(err, ASYS_ERR_USAGE,
                              "--python-functions-trace: %s:%d: functions of __main__ cannot be "
                              "traced (asys cannot know them before the program runs): \"%s\"",
                              s->file, key_line(s, "__main__"), module);
    int n = snprintf(s->out + s->used, s->size - s->used, "%d\t%s\t%s\t%s\n", entry, module,
                     function, domain);
    if (n < 0 || (size_t)n >= s->size - s->used)
        return asys_fail_kind(err, ASYS_ERR_USAGE,
                              "--python-functions-trace: %s: too many rules (%d bytes at most)",
                              s->file, RULES_MAX);
    s->used += (size_t)n;
    return 0;
}

/* A string member of object `o`; NULL when absent, -1 in *bad when it is not a usable
 * name. */
static const char *member_text(const struct spec *s, const cJSON *o, const char *key, int *bad,
                               struct asys_err *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v)
        return NULL;
    const char *problem = cJSON_IsString(v) ? name_problem(v->valuestring) : "needs a name";
    if (problem) {
        char what[96];
        snprintf(what, sizeof what, "%s as its value:", problem);
        *bad = spec_fail(s, key, what, err);
        return NULL;
    }
    return v->valuestring;
}

static int check_keys(const struct spec *s, const cJSON *o, const char *const *keys,
                      struct asys_err *err)
{
    for (const cJSON *m = o->child; m; m = m->next) {
        int known = 0;
        for (const char *const *k = keys; *k; k++)
            known |= !strcmp(m->string, *k);
        if (!known)
            return spec_fail(s, m->string, "unknown key", err);
    }
    return 0;
}

static int function_rules(struct spec *s, int entry, const cJSON *f, const char *module,
                          const char *domain, struct asys_err *err)
{
    static const char *const keys[] = {"function", "module", "domain", NULL};
    if (cJSON_IsString(f)) {
        const char *problem = name_problem(f->valuestring);
        if (problem) {
            char what[96];
            snprintf(what, sizeof what, "%s among its functions:", problem);
            return spec_fail(s, "functions", what, err);
        }
        return add_rule(s, entry, module, f->valuestring, domain, err);
    }
    if (!cJSON_IsObject(f))
        return spec_fail(s, "functions", "holds neither names nor objects:", err);
    if (check_keys(s, f, keys, err) != 0)
        return -1;
    int bad = 0;
    const char *name = member_text(s, f, "function", &bad, err);
    const char *own_module = member_text(s, f, "module", &bad, err);
    const char *own_domain = member_text(s, f, "domain", &bad, err);
    if (bad)
        return -1;
    if (!name)
        return spec_fail(s, "functions", "has an object without a \"function\" key:", err);
    if (own_module)
        module = own_module;
    if (add_rule(s, entry, module, name, domain, err) != 0)
        return -1;
    if (own_domain && strcmp(own_domain, domain) != 0)
        return add_rule(s, entry, module, name, own_domain, err);
    return 0;
}

static int entry_rules(struct spec *s, int entry, const cJSON *e, struct asys_err *err)
{
    static const char *const keys[] = {"module", "functions", "domain", NULL};
    if (!cJSON_IsObject(e))
        return asys_fail_kind(err, ASYS_ERR_USAGE,
                              "--python-functions-trace: %s: element %d is not an object with a "
                              "\"module\" key",
                              s->file, entry + 1);
    if (check_keys(s, e, keys, err) != 0)
        return -1;
    int bad = 0;
    const char *module = member_text(s, e, "module", &bad, err);
    const char *domain = member_text(s, e, "domain", &bad, err);
    if (bad)
        return -1;
    if (!module)
        return asys_fail_kind(err, ASYS_ERR_USAGE,
                              "--python-functions-trace: %s: element %d has no \"module\" key",
                              s->file, entry + 1);
    if (!domain)
        domain = DEFAULT_DOMAIN;
    const cJSON *functions = cJSON_GetObjectItemCaseSensitive(e, "functions");
    if (!functions)
        return add_rule(s, entry, module, "", domain, err);
    if (!cJSON_IsArray(functions))
        return spec_fail(s, "functions", "needs a list as its value:", err);
    for (const cJSON *f = functions->child; f; f = f->next)
        if (function_rules(s, entry, f, module, domain, err) != 0)
            return -1;
    return 0;
}

/* A rules file: a regular file of at most RULES_FILE_MAX bytes (a FIFO or
 * /dev/zero is refused, not waited on or read without end). */
#define RULES_FILE_MAX (4u << 20)

static char *read_file(const char *path, struct asys_err *err)
{
    char *text = NULL;
    if (asys_read_regular_file(path, RULES_FILE_MAX, &text, NULL, err) != 0) {
        asys_err_wrap(err, "--python-functions-trace: %s", path);
        err->kind = ASYS_ERR_USAGE;
        return NULL;
    }
    return text;
}

/* The rules of the spec `value` into out (RULES_MAX bytes); -1 with one line naming the
 * file, line and key. */
static int spec_rules(const char *value, char *out, struct asys_err *err)
{
    struct spec s = {.file = value, .out = out, .size = RULES_MAX};
    out[0] = '\0';
    if (!strncmp(value, "module:", 7)) {
        s.text = "";
        const char *problem = name_problem(value + 7);
        if (problem)
            return asys_fail_kind(err, ASYS_ERR_USAGE, "--python-functions-trace: module: %s",
                                  problem);
        return add_rule(&s, 0, value + 7, "", DEFAULT_DOMAIN, err);
    }
    char *text = read_file(value, err);
    if (!text)
        return -1;
    s.text = text;
    int rc = -1;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
    if (!root) {
        const char *at = end ? end : cJSON_GetErrorPtr();
        rc = asys_fail_kind(err, ASYS_ERR_USAGE, "--python-functions-trace: %s:%d: not valid JSON",
                            value, at ? line_of(text, at) : 1);
        goto out;
    }
    if (cJSON_IsObject(root)) {
        rc = entry_rules(&s, 0, root, err);
        goto out;
    }
    if (!cJSON_IsArray(root)) {
        rc = asys_fail_kind(err, ASYS_ERR_USAGE,
                            "--python-functions-trace: %s:1: needs a list of objects", value);
        goto out;
    }
    int entry = 0;
    rc = 0;
    for (const cJSON *e = root->child; e && rc == 0; e = e->next)
        rc = entry_rules(&s, entry++, e, err);
    if (rc == 0 && !s.used)
        rc = asys_fail_kind(err, ASYS_ERR_USAGE, "--python-functions-trace: %s:1: names no module",
                            value);
out:
    cJSON_Delete(root);
    free(text);
    return rc;
}

/* Python stacks on HGGC calls need the HGGC collector; a function tracing
 * spec must read well. */
static int python_check(const struct asys_profile_options *o, struct asys_err *err)
{
    if (backtraces(o) && !(o->features & ASYS_FEATURE_HGGC))
        return asys_fail_kind(err, ASYS_ERR_USAGE,
                              "--python-backtrace=hggc needs the HGGC collector (-t hggc)");
    if (!tracing(o))
        return 0;
    char *rules = malloc(RULES_MAX);
    if (!rules)
        return asys_fail(err, "out of memory");
    int rc = spec_rules(asys_profile_value(o, "python-functions-trace")->canonical, rules, err);
    free(rules);
    return rc;
}

static int python_prepare(const struct asys_collector_setup *s, struct asys_env *env,
                          struct asys_err *err)
{
    if (!tracing(s->options))
        return 0;
    char *rules = malloc(RULES_MAX);
    if (!rules)
        return asys_fail(err, "out of memory");
    int rc =
        spec_rules(asys_profile_value(s->options, "python-functions-trace")->canonical, rules, err);
    if (rc == 0)
        rc = asys_env_set(env, "ASYS_PYTHON_TRACE_RULES", rules, err);
    free(rules);
    return rc;
}

/* Finalize: the manifest says per process what the sampler did; an
 * interpreter under another name is said once (the injected library
 * prints nothing). */
struct tally {
    cJSON *processes;
    int aliased_said;
};

static void *tally_begin(void)
{
    struct tally *t = calloc(1, sizeof *t);
    if (t)
        t->processes = cJSON_CreateArray();
    return t;
}

static void tally_record(void *state, const struct asys_segment_header *h,
                         const struct asys_record *rec)
{
    static const char *const statuses[] = {
        "?", "sampled", "aliased interpreter", "unsupported", "stopped", "tracing", "tracing off"};
    struct tally *t = state;
    if (!t || rec->type != ASYS_REC_PYTHON_STATUS ||
        rec->size < sizeof(struct asys_rec_python_status))
        return;
    const struct asys_rec_python_status *s = (const void *)rec->data;
    size_t room = rec->size - sizeof *s;
    int len = (int)(s->text_length < room ? s->text_length : room);
    const char *text = (const char *)(s + 1);
    if (rec->arg == ASYS_PYTHON_STOPPED)
        return;
    if (rec->arg == ASYS_PYTHON_ALIASED && !t->aliased_said++)
        asys_note(ASYS_NOTE_NOTICE,
                  "'%.*s' (pid %u) is a Python interpreter under another name: Python data is "
                  "collected from interpreters named python or python3 only",
                  len, text, h->pid);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "pid", h->pid);
    cJSON_AddStringToObject(o, "status", rec->arg < 7 ? statuses[rec->arg] : "?");
    char buf[600];
    snprintf(buf, sizeof buf, "%.*s", len, text);
    cJSON_AddStringToObject(o, rec->arg == ASYS_PYTHON_SAMPLING ? "version" : "detail", buf);
    cJSON_AddItemToArray(t->processes, o);
}

static int tally_end(void *state, cJSON **object, struct asys_err *err)
{
    struct tally *t = state;
    if (!t)
        return asys_fail_kind(err, ASYS_ERR_NOMEM, "out of memory");
    cJSON *o = cJSON_CreateObject();
    int rc = 0;
    if (!o || !t->processes || !cJSON_AddItemToObject(o, "processes", t->processes)) {
        cJSON_Delete(o);
        cJSON_Delete(t->processes);
        o = NULL;
        rc = asys_fail_kind(err, ASYS_ERR_NOMEM, "out of memory");
    }
    free(t);
    *object = o;
    return rc;
}

const struct asys_collector asys_collector_python = {
    .name = "python",
    .feature = ASYS_FEATURE_PYTHON,
    .built = 1,
    .summary = "Python call stack sampling inside the interpreters",
    .options = python_options,
    .option_count = sizeof python_options / sizeof python_options[0],
    .enabled = python_enabled,
    .check = python_check,
    .prepare = python_prepare,
    .finalize_begin = tally_begin,
    .finalize_record = tally_record,
    .finalize_end = tally_end,
};
