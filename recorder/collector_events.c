/* Event sampling (manual §5: --event-sample with --cpu-core-events,
 * --os-events and their sets): the options, their "help" answers, and the
 * launcher's counters (event_sampler.c).  The events are the catalogue of
 * common/event_catalog.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asys_format.h"
#include "collector.h"
#include "event_catalog.h"
#include "event_sampler.h"
#include "profile_options.h"

#define MAX_EVENTS 64

static const char *const scopes[] = {"system-wide", "process-tree", "none", NULL};

/* "help", "none", or indexes of `group` ("1,2,3"), each checked. */
static int parse_list(enum asys_event_group group, const char *name, const char *v,
                      struct asys_option_value *out, struct asys_err *err)
{
    if (!strcmp(v, "help") || !strcmp(v, "none")) {
        snprintf(out->canonical, sizeof out->canonical, "%s", v);
        return 0;
    }
    size_t used = 0;
    out->canonical[0] = '\0';
    for (const char *p = v; *p;) {
        char *end;
        unsigned long index = strtoul(p, &end, 10);
        if (end == p || (*end && *end != ',') || !asys_event_by_index(group, (unsigned)index))
            return asys_fail_kind(err, ASYS_ERR_USAGE,
                                  "--%s: '%s' is not an event index (see --%s=help)", name, v,
                                  name);
        int n = snprintf(out->canonical + used, sizeof out->canonical - used, "%s%lu",
                         used ? "," : "", index);
        if (n < 0 || (size_t)n >= sizeof out->canonical - used)
            return asys_fail_kind(err, ASYS_ERR_USAGE, "--%s: too many events", name);
        used += (size_t)n;
        p = *end ? end + 1 : end;
    }
    return 0;
}

static int parse_set(enum asys_event_group group, const char *name, const char *v,
                     struct asys_option_value *out, struct asys_err *err)
{
    if (strcmp(v, "help") && strcmp(v, "none") && !asys_event_set_find(group, v))
        return asys_fail_kind(err, ASYS_ERR_USAGE, "--%s: no event set '%s' (see --%s=help)", name,
                              v, name);
    snprintf(out->canonical, sizeof out->canonical, "%s", v);
    return 0;
}

static int parse_core_list(const struct asys_option *o, const char *v,
                           struct asys_option_value *out, struct asys_err *err)
{
    return parse_list(ASYS_EVENT_CPU_CORE, o->name, v, out, err);
}

static int parse_os_list(const struct asys_option *o, const char *v, struct asys_option_value *out,
                         struct asys_err *err)
{
    return parse_list(ASYS_EVENT_OS, o->name, v, out, err);
}

static int parse_core_set(const struct asys_option *o, const char *v, struct asys_option_value *out,
                          struct asys_err *err)
{
    return parse_set(ASYS_EVENT_CPU_CORE, o->name, v, out, err);
}

static int parse_os_set(const struct asys_option *o, const char *v, struct asys_option_value *out,
                        struct asys_err *err)
{
    return parse_set(ASYS_EVENT_OS, o->name, v, out, err);
}

// clang-format off
static const struct asys_option event_options[] = {
    {.name = "event-sample", .type = ASYS_OPT_CHOICE, .metavar = "system-wide|process-tree|none",
     .default_value = "none",
     .help = "count CPU core and OS events per CPU, and with process-tree per thread too "
             "(without --cpu-core-events/--os-events: the fault and sched sets)",
     .choices = scopes},
    {.name = "event-sample-threads", .type = ASYS_OPT_BOOL, .metavar = "true|false",
     .default_value = "true",
     .help = "with --event-sample process-tree: also count each thread on its own (one counter "
             "per event and thread, at most 1024 threads at once)"},
    {.name = "cpu-core-events", .type = ASYS_OPT_TEXT, .metavar = "LIST|help",
     .default_value = "none", .help = "CPU core events by index (help: the list)",
     .parse = parse_core_list},
    {.name = "cpu-core-events-set", .type = ASYS_OPT_TEXT, .metavar = "NAME|help",
     .default_value = "none", .help = "a predefined set of CPU core events (help: the sets)",
     .parse = parse_core_set},
    {.name = "os-events", .type = ASYS_OPT_TEXT, .metavar = "LIST|help", .default_value = "none",
     .help = "OS events (software events, tracepoints) by index (help: the list)",
     .parse = parse_os_list},
    {.name = "os-events-set", .type = ASYS_OPT_TEXT, .metavar = "NAME|help",
     .default_value = "none", .help = "a predefined set of OS events (help: the sets)",
     .parse = parse_os_set},
    {.name = "event-sample-frequency", .type = ASYS_OPT_COUNT, .metavar = "HZ",
     .default_value = "10", .help = "counter readings per second (1-1000)", .min = 1,
     .max = 1000},
};
// clang-format on

static const char *value(const struct asys_profile_options *o, const char *name)
{
    return asys_profile_value(o, name)->canonical;
}

static int events_enabled(const struct asys_profile_options *o)
{
    return strcmp(value(o, "event-sample"), "none") != 0;
}

static void add_id(uint16_t *ids, size_t *count, uint16_t id)
{
    for (size_t i = 0; i < *count; i++)
        if (ids[i] == id)
            return;
    if (*count < MAX_EVENTS)
        ids[(*count)++] = id;
}

static void add_list(uint16_t *ids, size_t *count, enum asys_event_group group, const char *list)
{
    if (!strcmp(list, "none"))
        return;
    for (const char *p = list; *p;) {
        char *end;
        const struct asys_event_def *e = asys_event_by_index(group, (unsigned)strtoul(p, &end, 10));
        if (e)
            add_id(ids, count, e->id);
        p = *end ? end + 1 : end;
    }
}

static void add_set(uint16_t *ids, size_t *count, enum asys_event_group group, const char *name)
{
    const struct asys_event_set *set = asys_event_set_find(group, name);
    for (const uint16_t *i = set ? set->indexes : NULL; i && *i; i++)
        add_id(ids, count, asys_event_by_index(group, *i)->id);
}

/* The events asked for, with the sets merged in (the default: fault, sched). */
static size_t chosen_events(const struct asys_profile_options *o, uint16_t *ids)
{
    size_t count = 0;
    add_list(ids, &count, ASYS_EVENT_CPU_CORE, value(o, "cpu-core-events"));
    add_set(ids, &count, ASYS_EVENT_CPU_CORE, value(o, "cpu-core-events-set"));
    add_list(ids, &count, ASYS_EVENT_OS, value(o, "os-events"));
    add_set(ids, &count, ASYS_EVENT_OS, value(o, "os-events-set"));
    if (!count) {
        add_set(ids, &count, ASYS_EVENT_OS, "fault");
        add_set(ids, &count, ASYS_EVENT_OS, "sched");
    }
    return count;
}

static int events_start(const struct asys_collector_setup *s, pid_t target, void **state,
                        struct asys_err *err)
{
    uint16_t ids[MAX_EVENTS];
    size_t count = chosen_events(s->options, ids);
    int system_wide = !strcmp(value(s->options, "event-sample"), "system-wide");
    int per_thread = !system_wide && asys_profile_value(s->options, "event-sample-threads")->number;
    return asys_event_sampler_start(
        s->session_dir, target, system_wide, per_thread, ids, count,
        asys_profile_value(s->options, "event-sample-frequency")->number,
        (struct event_sampler **)state, err);
}

static int events_stop(void *state, struct asys_err *err)
{
    (void)err; /* it keeps what it sampled as it goes */
    asys_event_sampler_stop(state);
    return 0;
}

static int answer_help(const struct asys_profile_options *o, const struct asys_option *option,
                       const char *value, FILE *out, struct asys_err *err)
{
    (void)err;
    (void)o;
    (void)value;
    enum asys_event_group group =
        strstr(option->name, "cpu-core") ? ASYS_EVENT_CPU_CORE : ASYS_EVENT_OS;
    if (strstr(option->name, "-set"))
        asys_event_print_sets(out, group);
    else
        asys_event_print_list(out, group);
    return 0;
}

const struct asys_collector asys_collector_event_sampling = {
    .name = "event-sampling",
    .feature = ASYS_FEATURE_EVENTS,
    .built = 1,
    .summary = "CPU core and OS event counters, per CPU and per thread",
    .options = event_options,
    .option_count = sizeof event_options / sizeof event_options[0],
    .enabled = events_enabled,
    .start = events_start,
    .start_before_exec = 1, /* the inherited counters see the program from its start */
    .stop = events_stop,
    .answer = answer_help,
};
