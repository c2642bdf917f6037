/* Python (manual §8): --python-sampling and its frequency and depth; the
 * sampler runs inside every Python interpreter of the tree (inject/python.c).
 * Python backtraces on HGGC events and function tracing are planned. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asys_format.h"
#include "collector.h"
#include "profile_options.h"

#define PLANNED(option_name, meta, def, text)                                                      \
    {                                                                                              \
        .name = option_name, .type = ASYS_OPT_TEXT, .metavar = meta, .default_value = def,         \
        .help = text, .planned = 1                                                                 \
    }

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
    PLANNED("python-functions-trace", "SPEC|FILE", "none", "trace Python functions as HGTX ranges"),
    PLANNED("python-functions-threshold", "NS", "80000",
            "record traced Python functions longer than NS"),
};
// clang-format on

static int backtraces(const struct asys_profile_options *o)
{
    return !strcmp(asys_profile_value(o, "python-backtrace")->canonical, "hggc");
}

static int python_enabled(const struct asys_profile_options *o)
{
    return asys_profile_value(o, "python-sampling")->number != 0 || backtraces(o);
}

/* Python stacks on HGGC calls need the HGGC collector. */
static int python_check(const struct asys_profile_options *o, struct asys_err *err)
{
    if (backtraces(o) && !(o->features & ASYS_FEATURE_HGGC))
        return asys_fail_kind(err, ASYS_ERR_USAGE,
                              "--python-backtrace=hggc needs the HGGC collector (-t hggc)");
    return 0;
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
    static const char *const statuses[] = {"?", "sampled", "aliased interpreter", "unsupported",
                                           "stopped"};
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
        fprintf(stderr,
                "asys: notice: '%.*s' (pid %u) is a Python interpreter under another name: "
                "Python data is collected from interpreters named python or python3 only\n",
                len, text, h->pid);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "pid", h->pid);
    cJSON_AddStringToObject(o, "status", rec->arg < 5 ? statuses[rec->arg] : "?");
    char buf[600];
    snprintf(buf, sizeof buf, "%.*s", len, text);
    cJSON_AddStringToObject(o, rec->arg == ASYS_PYTHON_SAMPLING ? "version" : "detail", buf);
    cJSON_AddItemToArray(t->processes, o);
}

static cJSON *tally_end(void *state)
{
    struct tally *t = state;
    if (!t)
        return NULL;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "processes", t->processes);
    free(t);
    return o;
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
    .finalize_begin = tally_begin,
    .finalize_record = tally_record,
    .finalize_end = tally_end,
};
