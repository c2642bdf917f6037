/* The HGGC collector (CUDA-compatible API calls and device activity through
 * CUPTI; the target side is inject/hggc.c): its options, the CUDA injection
 * variable, and at finalize the manifest's "hggc" object — per process
 * whether CUPTI attached (and if not, why), plus CUPTI's dropped records and
 * overhead. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asys_format.h"
#include "collector.h"
#include "profile_options.h"

#define MAX_ERRORS 16

struct process_status {
    uint32_t pid;
    unsigned code; /* enum asys_hggc_status_code: the most telling seen */
    uint64_t cupti_version;
    char message[ASYS_HGGC_STATUS_MESSAGE_MAX + 1];
};

struct hggc_tally {
    struct process_status *processes;
    size_t count, cap;
    uint64_t dropped_records;
    uint64_t frees_after_main, frees_after_main_bytes;
    uint64_t overhead_records;
    uint64_t overhead_ns;
    char *errors[MAX_ERRORS];
    size_t error_count;
};

static void tally_free(struct hggc_tally *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->error_count; i++)
        free(t->errors[i]);
    free(t->processes);
    free(t);
}

static struct process_status *process_of(struct hggc_tally *t, uint32_t pid)
{
    for (size_t i = 0; i < t->count; i++)
        if (t->processes[i].pid == pid)
            return &t->processes[i];
    if (t->count == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 8;
        struct process_status *bigger = realloc(t->processes, cap * sizeof *bigger);
        if (!bigger)
            return NULL;
        t->processes = bigger;
        t->cap = cap;
    }
    struct process_status *p = &t->processes[t->count++];
    memset(p, 0, sizeof *p);
    p->pid = pid;
    return p;
}

/* Unavailable or busy outranks attached: a process reports one of them. */
static int rank(unsigned code)
{
    return code == ASYS_HGGC_CUPTI_UNAVAILABLE || code == ASYS_HGGC_SUBSCRIBER_BUSY ? 2
           : code == ASYS_HGGC_ATTACHED                                             ? 1
                                                                                    : 0;
}

static void add_status(struct hggc_tally *t, uint32_t pid, const struct asys_record *rec)
{
    const struct asys_rec_hggc_status *s = (const void *)rec->data;
    size_t length = s->message_length;
    if (length > rec->size - sizeof *s)
        length = rec->size - sizeof *s;
    if (length > ASYS_HGGC_STATUS_MESSAGE_MAX)
        length = ASYS_HGGC_STATUS_MESSAGE_MAX;
    const char *text = (const char *)(s + 1);
    if (rec->arg == ASYS_HGGC_CUPTI_DROPPED) {
        t->dropped_records += s->value;
        return;
    }
    if (rec->arg == ASYS_HGGC_FREES_AFTER_MAIN) {
        char bytes[24];
        snprintf(bytes, sizeof bytes, "%.*s", (int)length, text);
        t->frees_after_main += s->value;
        t->frees_after_main_bytes += strtoull(bytes, NULL, 10);
        return;
    }
    if (rec->arg == ASYS_HGGC_CUPTI_ERROR) {
        if (t->error_count < MAX_ERRORS && (t->errors[t->error_count] = strndup(text, length)))
            t->error_count++;
        return;
    }
    struct process_status *p = process_of(t, pid);
    if (!p || rank(rec->arg) < rank(p->code))
        return;
    p->code = rec->arg;
    if (rec->arg == ASYS_HGGC_ATTACHED)
        p->cupti_version = s->value;
    memcpy(p->message, text, length);
    p->message[length] = '\0';
}

static void *tally_begin(void)
{
    return calloc(1, sizeof(struct hggc_tally));
}

static void tally_record(void *state, const struct asys_segment_header *h,
                         const struct asys_record *rec)
{
    struct hggc_tally *t = state;
    if (!t)
        return;
    if (rec->type == ASYS_REC_HGGC_STATUS && rec->size >= sizeof(struct asys_rec_hggc_status)) {
        add_status(t, h->pid, rec);
    } else if (rec->type == ASYS_REC_HGGC_OVERHEAD &&
               rec->size >= sizeof(struct asys_rec_hggc_overhead)) {
        const struct asys_rec_hggc_overhead *o = (const void *)rec->data;
        t->overhead_records++;
        if (o->end_ns > o->start_ns)
            t->overhead_ns += o->end_ns - o->start_ns;
    }
}

static const char *status_name(unsigned code)
{
    switch (code) {
    case ASYS_HGGC_ATTACHED:
        return "attached";
    case ASYS_HGGC_CUPTI_UNAVAILABLE:
        return "cupti unavailable";
    case ASYS_HGGC_SUBSCRIBER_BUSY:
        return "subscriber busy";
    default:
        return "unknown";
    }
}

static cJSON *tally_json(const struct hggc_tally *t)
{
    if (!t || (!t->count && !t->error_count && !t->overhead_records))
        return NULL;
    cJSON *o = cJSON_CreateObject();
    /* the whole run: attached only if every process attached */
    const struct process_status *worst = NULL;
    for (size_t i = 0; i < t->count; i++)
        if (!worst || rank(t->processes[i].code) > rank(worst->code))
            worst = &t->processes[i];
    cJSON_AddStringToObject(o, "status", worst ? status_name(worst->code) : "unknown");
    if (worst && worst->message[0])
        cJSON_AddStringToObject(o, "message", worst->message);
    for (size_t i = 0; i < t->count; i++)
        if (t->processes[i].cupti_version) {
            cJSON_AddNumberToObject(o, "cupti_version", (double)t->processes[i].cupti_version);
            break;
        }
    cJSON_AddNumberToObject(o, "cupti_dropped_records", (double)t->dropped_records);
    if (t->frees_after_main) {
        cJSON_AddNumberToObject(o, "frees_after_main", (double)t->frees_after_main);
        cJSON_AddNumberToObject(o, "frees_after_main_bytes", (double)t->frees_after_main_bytes);
    }
    cJSON_AddNumberToObject(o, "cupti_overhead_records", (double)t->overhead_records);
    cJSON_AddNumberToObject(o, "cupti_overhead_ns", (double)t->overhead_ns);
    cJSON *processes = cJSON_AddArrayToObject(o, "processes");
    for (size_t i = 0; i < t->count; i++) {
        cJSON *p = cJSON_CreateObject();
        cJSON_AddNumberToObject(p, "pid", t->processes[i].pid);
        cJSON_AddStringToObject(p, "status", status_name(t->processes[i].code));
        if (t->processes[i].message[0])
            cJSON_AddStringToObject(p, "message", t->processes[i].message);
        cJSON_AddItemToArray(processes, p);
    }
    if (t->error_count) {
        cJSON *errors = cJSON_AddArrayToObject(o, "errors");
        for (size_t i = 0; i < t->error_count; i++)
            cJSON_AddItemToArray(errors, cJSON_CreateString(t->errors[i]));
    }
    return o;
}

static int tally_end(void *state, cJSON **object, struct asys_err *err)
{
    const struct hggc_tally *t = state;
    if (!t) /* its memory could not be had at finalize_begin */
        return asys_fail_kind(err, ASYS_ERR_NOMEM, "out of memory");
    int has_data = t->count || t->error_count || t->overhead_records;
    *object = tally_json(t);
    tally_free(state);
    return *object || !has_data ? 0 : asys_fail_kind(err, ASYS_ERR_NOMEM, "out of memory");
}

/* ---- options ------------------------------------------------------------------ */

/* --hggc-trace-set: the collector's subsets (inject/hggc.c). */
static const char *const subsets[] = {"kernel-activity", "kernel-api", "memory-activity",
                                      "memory-api",      "sync",       "graph",
                                      "other-api",       "all",        NULL};

static int parse_trace_set(const struct asys_option *o, const char *v,
                           struct asys_option_value *out, struct asys_err *err)
{
    (void)o;
    if (!*v || strlen(v) >= sizeof out->canonical)
        return asys_fail_kind(err, ASYS_ERR_USAGE,
                              "--hggc-trace-set takes a list of subsets, not '%s'", v);
    for (const char *p = v; *p;) {
        size_t n = strcspn(p, ",");
        int known = 0;
        for (const char *const *name = subsets; *name; name++)
            known |= strlen(*name) == n && !strncmp(p, *name, n);
        if (!known)
            return asys_fail_kind(
                err, ASYS_ERR_USAGE,
                "unknown --hggc-trace-set subset '%.*s' (valid: kernel-activity, "
                "kernel-api, memory-activity, memory-api, sync, graph, other-api, all)",
                (int)n, p);
        p += n + (p[n] == ',');
    }
    strcpy(out->canonical, v);
    return 0;
}

/* "all:NS" (the manual's form) or "none"; the collector receives NS (0: none). */
static int parse_backtrace(const struct asys_option *o, const char *v,
                           struct asys_option_value *out, struct asys_err *err)
{
    (void)o;
    uint64_t ns = 0;
    if (strcmp(v, "none") &&
        (strncmp(v, "all:", 4) != 0 || asys_parse_count(v + 4, UINT64_MAX / 4, &ns) || !ns))
        return asys_fail_kind(err, ASYS_ERR_USAGE,
                              "--hggcbacktrace takes all:NS (NS > 0) or none, not '%s'", v);
    out->number = ns;
    out->has_number = 1;
    snprintf(out->canonical, sizeof out->canonical, "%llu", (unsigned long long)ns);
    return 0;
}

/* --hggc-memory-usage: true (device; pinned too with --host-memory-sampling,
 * as the manual says: see prepare), false, or device, pinned, device,pinned. */
static int parse_memory_usage(const struct asys_option *o, const char *v,
                              struct asys_option_value *out, struct asys_err *err)
{
    (void)o;
    static const char *const accepted[] = {"true",          "false",         "device", "pinned",
                                           "device,pinned", "pinned,device", NULL};
    for (const char *const *a = accepted; *a; a++)
        if (!strcmp(v, *a)) {
            const char *canonical = !strcmp(v, "false")           ? "none"
                                    : !strcmp(v, "pinned,device") ? "device,pinned"
                                                                  : v;
            snprintf(out->canonical, sizeof out->canonical, "%s", canonical);
            return 0;
        }
    return asys_fail_kind(err, ASYS_ERR_USAGE,
                          "--hggc-memory-usage takes true, false, device, pinned or "
                          "device,pinned, not '%s'",
                          v);
}

static const char *const graph_levels[] = {"node", "graph", NULL};

// clang-format off
static const struct asys_option hggc_options[] = {
    {.name = "hggc-trace-set", .type = ASYS_OPT_TEXT, .metavar = "LIST", .default_value = "all",
     .help = "HGGC subsets: kernel-activity (kernels on the device), kernel-api (launch calls), "
             "memory-activity (copies, sets, allocations), memory-api (memory calls), sync "
             "(synchronization, events, waits), graph (graph calls and structure), other-api (every "
             "other call); ASIGHT_HGGC_TRACE_BLACKLIST=api1,api2 turns single APIs off",
     .env = "ASYS_HGGC_TRACE_SET", .parse = parse_trace_set},
    {.name = "hggc-graph-trace", .type = ASYS_OPT_CHOICE, .metavar = "node|graph",
     .default_value = "node",
     .help = "a graph launch as its nodes' kernels and copies, or as one range (cheaper)",
     .env = "ASYS_HGGC_GRAPH_TRACE", .choices = graph_levels},
    {.name = "hggcbacktrace", .type = ASYS_OPT_TEXT, .metavar = "all:NS|none",
     .default_value = "none", .help = "host call stacks of HGGC calls lasting at least NS",
     .env = "ASYS_HGGC_BT_NS", .parse = parse_backtrace},
    {.name = "hggc-backtrace-depth", .type = ASYS_OPT_COUNT, .metavar = "N", .default_value = "24",
     .help = "frames per HGGC call stack (0-128)", .env = "ASYS_HGGC_BT_DEPTH",
     .max = ASYS_CALLCHAIN_MAX_DEPTH},
    {.name = "hggc-memory-usage", .type = ASYS_OPT_TEXT,
     .metavar = "true|false|device|pinned|device,pinned", .default_value = "false",
     .help = "call stacks of device and pinned allocations, and failed allocations (true: "
             "device, and pinned too with --host-memory-sampling)",
     .env = "ASYS_HGGC_MEMORY_USAGE", .parse = parse_memory_usage},
};
// clang-format on

/* The CUDA driver (or simppu) loads the library when CUDA initializes and
 * calls its InitializeInjection. */
static int prepare(const struct asys_collector_setup *s, struct asys_env *env, struct asys_err *err)
{
    const char *usage = asys_profile_value(s->options, "hggc-memory-usage")->canonical;
    if (!strcmp(usage, "true")) {
        int pinned = asys_profile_value(s->options, "host-memory-sampling")->number != 0;
        if (asys_env_set(env, "ASYS_HGGC_MEMORY_USAGE", pinned ? "device,pinned" : "device", err) !=
            0)
            return -1;
    }
    return asys_env_set(env, "CUDA_INJECTION64_PATH", s->inject_library, err);
}

const struct asys_collector asys_collector_hggc = {
    .name = "hggc",
    .alias = "cuda",
    .feature = ASYS_FEATURE_HGGC,
    .built = 1,
    .traced = 1,
    .summary = "CUDA-compatible API calls and device activity (CUPTI)",
    .options = hggc_options,
    .option_count = sizeof hggc_options / sizeof hggc_options[0],
    .prepare = prepare,
    .finalize_begin = tally_begin,
    .finalize_record = tally_record,
    .finalize_end = tally_end,
};
