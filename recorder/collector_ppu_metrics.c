/* PPU metrics (manual §2): --ppu-metrics-device, -set, -list, -frequency
 * and --check-ppu-metrics-list; the "help" answers in the manual's layouts;
 * the launcher's sampler (ppu_metrics.c).  The metrics and sets are the
 * catalogue of ppu_metric_catalog.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asys_format.h"
#include "collector.h"
#include "ppu_devices.h"
#include "ppu_metrics.h"
#include "profile_options.h"

static int parse_devices(const struct asys_option *o, const char *v, struct asys_option_value *out,
                         struct asys_err *err)
{
    if (!strcmp(v, "all") || !strcmp(v, "none") || !strcmp(v, "help")) {
        snprintf(out->canonical, sizeof out->canonical, "%s", v);
        return 0;
    }
    for (const char *p = v; *p;) {
        char *end;
        unsigned long id = strtoul(p, &end, 10);
        if (end == p || (*end && *end != ',') || id >= PPU_MAX_DEVICES)
            return asys_fail_kind(err, ASYS_ERR_USAGE,
                                  "--%s: '%s' is not all, none or a list of device ids (see "
                                  "--%s help)",
                                  o->name, v, o->name);
        p = *end ? end + 1 : end;
    }
    snprintf(out->canonical, sizeof out->canonical, "%s", v);
    return 0;
}

static int parse_set(const struct asys_option *o, const char *v, struct asys_option_value *out,
                     struct asys_err *err)
{
    if (strcmp(v, "none") && strcmp(v, "help") && !ppu_metric_set_find(v))
        return asys_fail_kind(err, ASYS_ERR_USAGE, "--%s: no metric set '%s' (see --%s help)",
                              o->name, v, o->name);
    snprintf(out->canonical, sizeof out->canonical, "%s", v);
    return 0;
}

/* Each name of a comma-separated list is a metric of the catalogue. */
static int check_names(const char *option, const char *v, struct asys_err *err)
{
    char name[256];
    for (const char *p = v; *p;) {
        size_t len = strcspn(p, ",");
        if (!len || len >= sizeof name)
            return asys_fail_kind(err, ASYS_ERR_USAGE, "--%s: bad metric list '%s'", option, v);
        memcpy(name, p, len);
        name[len] = '\0';
        if (!ppu_metric_find(name))
            return asys_fail_kind(err, ASYS_ERR_USAGE,
                                  "--%s: unknown PPU metric '%s' (see --ppu-metrics-list help)",
                                  option, name);
        p += len + (p[len] == ',');
    }
    return 0;
}

static int parse_list(const struct asys_option *o, const char *v, struct asys_option_value *out,
                      struct asys_err *err)
{
    if (strcmp(v, "none") && strcmp(v, "help") && check_names(o->name, v, err) != 0)
        return -1;
    if (strlen(v) >= sizeof out->canonical)
        return asys_fail_kind(err, ASYS_ERR_USAGE, "--%s: the list is too long", o->name);
    snprintf(out->canonical, sizeof out->canonical, "%s", v);
    return 0;
}

// clang-format off
static const struct asys_option ppu_metrics_options[] = {
    {.name = "ppu-metrics-device", .type = ASYS_OPT_TEXT, .metavar = "all|none|ID,...|help",
     .default_value = "none",
     .help = "sample the performance metrics of these PPUs (physical indices; help: the "
             "devices)", .parse = parse_devices},
    {.name = "ppu-metrics-set", .type = ASYS_OPT_TEXT, .metavar = "NAME|none|help",
     .default_value = "summary", .help = "a predefined set of PPU metrics (help: the sets)",
     .parse = parse_set},
    {.name = "ppu-metrics-list", .type = ASYS_OPT_TEXT, .metavar = "METRIC,...|help",
     .default_value = "none",
     .help = "PPU metrics sampled with the set's (help: every metric)", .parse = parse_list},
    {.name = "ppu-metrics-frequency", .type = ASYS_OPT_COUNT, .metavar = "HZ",
     .default_value = "1000",
     .help = "PPU metric samples per second (1-100000; NVML GPM: at most 10)", .min = 1,
     .max = 100000},
    {.name = "check-ppu-metrics-list", .type = ASYS_OPT_TEXT, .metavar = "METRIC,...",
     .help = "check that the metrics fit the PPU's sampling capacity, then exit (0: pass, "
             "1: fail)", .question = 1},
};
// clang-format on

static const char *value(const struct asys_profile_options *o, const char *name)
{
    return asys_profile_value(o, name)->canonical;
}

static int ppu_enabled(const struct asys_profile_options *o)
{
    return strcmp(value(o, "ppu-metrics-device"), "none") != 0;
}

static void add_metric(struct ppu_metrics_plan *plan, const struct ppu_metric *m)
{
    for (size_t i = 0; i < plan->metric_count; i++)
        if (plan->metrics[i] == m)
            return;
    if (m && plan->metric_count < PPU_MAX_METRICS)
        plan->metrics[plan->metric_count++] = m;
}

static void add_list(struct ppu_metrics_plan *plan, const char *list)
{
    char name[256];
    if (!strcmp(list, "none") || !strcmp(list, "help"))
        return;
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        snprintf(name, sizeof name, "%.*s", (int)len, p);
        add_metric(plan, ppu_metric_find(name));
        p += len + (p[len] == ',');
    }
}

/* The set's metrics, then the list's (the manual: merged). */
static void plan_metrics(const struct asys_profile_options *o, struct ppu_metrics_plan *plan)
{
    const struct ppu_metric_set *set = ppu_metric_set_find(value(o, "ppu-metrics-set"));
    for (const char *const *m = set ? set->metrics : NULL; m && *m; m++)
        add_metric(plan, ppu_metric_find(*m));
    add_list(plan, value(o, "ppu-metrics-list"));
}

/* The devices asked for, each one checked against the machine's. */
static int plan_devices(const char *asked, struct ppu_metrics_plan *plan, struct asys_err *err)
{
    struct ppu_device_list list;
    ppu_devices_list(&list);
    if (!list.count)
        return asys_fail_kind(err, ASYS_ERR_USAGE,
                              "--ppu-metrics-device: no PPU metrics sampling devices: %s",
                              list.why);
    if (!strcmp(asked, "all") || !strcmp(asked, "none")) {
        for (size_t i = 0; i < list.count; i++)
            plan->devices[plan->device_count++] = list.devices[i].index;
        return 0;
    }
    for (const char *p = asked; *p;) {
        char *end;
        unsigned long id = strtoul(p, &end, 10);
        int known = 0;
        for (size_t i = 0; i < list.count; i++)
            known |= list.devices[i].index == id;
        if (!known)
            return asys_fail_kind(err, ASYS_ERR_USAGE,
                                  "--ppu-metrics-device: no device %lu (this machine has %zu; see "
                                  "--ppu-metrics-device help)",
                                  id, list.count);
        int seen = 0;
        for (size_t i = 0; i < plan->device_count; i++)
            seen |= plan->devices[i] == id;
        if (!seen)
            plan->devices[plan->device_count++] = (unsigned)id;
        p = *end ? end + 1 : end;
    }
    return 0;
}

static int ppu_check(const struct asys_profile_options *o, struct asys_err *err)
{
    struct ppu_metrics_plan plan = {0};
    if (!strcmp(value(o, "ppu-metrics-set"), "help") ||
        !strcmp(value(o, "ppu-metrics-list"), "help"))
        return 0;
    plan_metrics(o, &plan);
    if (!plan.metric_count)
        return asys_fail_kind(err, ASYS_ERR_USAGE,
                              "--ppu-metrics-set none with no --ppu-metrics-list: no metric to "
                              "sample");
    return plan_devices(value(o, "ppu-metrics-device"), &plan, err);
}

static int ppu_start(const struct asys_collector_setup *s, pid_t target, void **state,
                     struct asys_err *err)
{
    (void)target;
    struct ppu_metrics_plan plan = {0};
    plan_metrics(s->options, &plan);
    if (plan_devices(value(s->options, "ppu-metrics-device"), &plan, err) != 0)
        return -1;
    plan.interval_ns =
        1000000000u / asys_profile_value(s->options, "ppu-metrics-frequency")->number;
    return asys_ppu_metrics_start(s->session_dir, &plan, (struct ppu_metrics **)state, err);
}

static int ppu_stop(void *state, struct asys_err *err)
{
    (void)err; /* it keeps what it sampled as it goes */
    asys_ppu_metrics_stop(state);
    return 0;
}

/* --check-ppu-metrics-list: the manual's PASS text, or FAIL naming the
 * first metric from which the list no longer fits. */
static int check_capacity(const struct asys_profile_options *o, const char *list, FILE *out,
                          struct asys_err *err)
{
    struct ppu_metrics_plan plan = {0};
    char why[PPU_WHY_MAX] = "";
    size_t passes = 0;
    const char *devices = value(o, "ppu-metrics-device");
    if (check_names("check-ppu-metrics-list", list, err) != 0 ||
        plan_devices(!strcmp(devices, "none") ? "all" : devices, &plan, err) != 0)
        return -1;
    add_list(&plan, list);
    unsigned device = plan.devices[0];
    const struct ppu_backend *b = &ppu_backend_cupti;
    enum asys_ppu_metrics_status st =
        b->passes(device, plan.metrics, plan.metric_count, &passes, why);
    if (st == ASYS_PPU_METRICS_UNAVAILABLE) {
        b = &ppu_backend_gpm;
        st = b->passes(device, plan.metrics, plan.metric_count, &passes, why);
    }
    if (st != ASYS_PPU_METRICS_SAMPLING)
        return asys_fail_kind(err, ASYS_ERR_USAGE, "cannot check the metrics list on PPU %u: %s",
                              device, why);
    if (passes <= 1) {
        fprintf(out, "Check sampling metrics list result: PASS.\n"
                     "Metrics list is suitable for PPU sampling capacity.\n");
        return 0;
    }
    size_t fits = 0; /* the longest prefix that fits one pass */
    for (size_t n = 1; n <= plan.metric_count; n++) {
        size_t p = 0;
        if (b->passes(device, plan.metrics, n, &p, why) != ASYS_PPU_METRICS_SAMPLING || p > 1)
            break;
        fits = n;
    }
    fprintf(out,
            "Check sampling metrics list result: FAIL.\n"
            "Metrics list exceeds PPU %u's sampling capacity: it needs %zu passes, one is "
            "possible.\n",
            device, passes);
    fprintf(out, "The first %zu metrics fit; these exceed the capacity:", fits);
    for (size_t i = fits; i < plan.metric_count; i++)
        fprintf(out, "%s %s", i > fits ? "," : "", plan.metrics[i]->name);
    fprintf(out, "\n");
    return 1;
}

static int answer(const struct asys_profile_options *o, const struct asys_option *option,
                  const char *v, FILE *out, struct asys_err *err)
{
    if (option->question)
        return check_capacity(o, v, out, err);
    if (!strcmp(option->name, "ppu-metrics-device"))
        ppu_devices_print_help(out);
    else if (!strcmp(option->name, "ppu-metrics-set"))
        ppu_metric_print_sets(out);
    else
        ppu_metric_print_list(out);
    return 0;
}

/* The manifest: per device, whether it was sampled, how, or why not. */
static void *tally_begin(void)
{
    return cJSON_CreateArray();
}

static void tally_record(void *state, const struct asys_segment_header *h,
                         const struct asys_record *rec)
{
    static const char *const statuses[] = {"sampled", "unavailable", "busy", "over capacity",
                                           "failed"};
    static const char *const backends[] = {"none", "CUPTI PM sampling", "NVML GPM"};
    (void)h;
    if (rec->type != ASYS_REC_PPU_METRICS_DEVICE ||
        rec->size < sizeof(struct asys_rec_ppu_metrics_device))
        return;
    const struct asys_rec_ppu_metrics_device *d = (const void *)rec->data;
    size_t room = rec->size - sizeof *d;
    size_t len = d->text_length < room ? d->text_length : room;
    char text[512];
    snprintf(text, sizeof text, "%.*s", (int)len, (const char *)(d + 1));
    char *pci = strchr(text, '\n');
    char *reason = pci ? strchr(pci + 1, '\n') : NULL;
    if (pci)
        *pci++ = '\0';
    if (reason)
        *reason++ = '\0';
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "device", (double)ASYS_REC_ARG(*(const asys_rec_word *)rec->data));
    cJSON_AddStringToObject(o, "name", text);
    cJSON_AddStringToObject(o, "pci_bus_id", pci ? pci : "");
    cJSON_AddStringToObject(o, "status", d->status < 5 ? statuses[d->status] : "unknown");
    cJSON_AddStringToObject(o, "backend", d->backend < 3 ? backends[d->backend] : "unknown");
    if (d->interval_ns)
        cJSON_AddNumberToObject(o, "frequency_hz", 1e9 / (double)d->interval_ns);
    if (reason && *reason)
        cJSON_AddStringToObject(o, "reason", reason);
    cJSON_AddItemToArray(state, o);
}

static int tally_end(void *state, cJSON **object, struct asys_err *err)
{
    cJSON *o = cJSON_CreateObject();
    if (!o || !state || !cJSON_AddItemToObject(o, "devices", state)) {
        cJSON_Delete(o);
        cJSON_Delete(state);
        return asys_fail_kind(err, ASYS_ERR_NOMEM, "out of memory");
    }
    *object = o;
    return 0;
}

const struct asys_collector asys_collector_ppu_metrics = {
    .name = "ppu-metrics",
    .feature = ASYS_FEATURE_PPU_METRICS,
    .built = 1,
    .summary = "PPU performance counters (CUPTI PM sampling, NVML GPM), sampled by the launcher",
    .options = ppu_metrics_options,
    .option_count = sizeof ppu_metrics_options / sizeof ppu_metrics_options[0],
    .enabled = ppu_enabled,
    .check = ppu_check,
    .answer = answer,
    .start = ppu_start,
    .stop = ppu_stop,
    .finalize_begin = tally_begin,
    .finalize_record = tally_record,
    .finalize_end = tally_end,
};
