/* CPU sampling and scheduling (-s/--sample): perf events the launcher opens
 * on the program before it execs and drains while it runs (cpu_sampler.c);
 * the program runs unmodified.  Finalize puts what the sampler did into the
 * manifest under "cpu-sampling". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asys_format.h"
#include "collector.h"
#include "cpu_sampler.h"
#include "json_util.h"
#include "profile_options.h"
#include "notes.h"

static const char *const scope_choices[] = {"process-tree", "system-wide", "none", NULL};
static const char *const backtrace_choices[] = {"dwarf", "fp", "none", NULL};

// clang-format off
static const struct asys_option sampling_options[] = {
    {.name = "sample", .short_name = 's', .type = ASYS_OPT_CHOICE,
     .metavar = "process-tree|system-wide|none", .default_value = "process-tree",
     .help = "CPU sampling and scheduling of the process tree or of every process",
     .choices = scope_choices},
    {.name = "cpuctxsw", .type = ASYS_OPT_CHOICE, .metavar = "process-tree|system-wide|none",
     .help = "thread scheduling: none records CPU samples only; the others must agree with -s "
             "(scheduling comes from the sampling events; default: as -s)",
     .choices = scope_choices},
    {.name = "backtrace", .short_name = 'b', .type = ASYS_OPT_CHOICE, .metavar = "dwarf|fp|none",
     .default_value = "dwarf", .help = "call stack method of CPU samples",
     .choices = backtrace_choices},
    {.name = "sample-period", .type = ASYS_OPT_COUNT, .metavar = "CYCLES",
     .default_value = "2000000",
     .help = "CPU cycles between samples (cpu-clock ns at the nominal frequency where the "
             "PMU has no cycles event)",
     .min = 1, .max = 1ull << 40},
    {.name = "sample-frequency", .type = ASYS_OPT_COUNT, .metavar = "HZ",
     .help = "samples per second per CPU instead of --sample-period: the period is this rate "
             "at the nominal frequency (exact with cpu-clock)",
     .min = 1, .max = 100000},
    {.name = "sample-backtrace-depth", .type = ASYS_OPT_COUNT, .metavar = "N",
     .default_value = "24", .help = "frames per CPU sample call stack (1-128)", .min = 1,
     .max = ASYS_CALLCHAIN_MAX_DEPTH},
    {.name = "sample-stack-size", .type = ASYS_OPT_SIZE, .metavar = "BYTES",
     .default_value = "8K", .help = "user stack copied per sample for -b dwarf", .min = 512,
     .max = 65528},
};
// clang-format on

static const char *value_text(const struct asys_profile_options *o, const char *name)
{
    const struct asys_option_value *v = asys_profile_value(o, name);
    return v ? v->canonical : "";
}

static uint64_t value_number(const struct asys_profile_options *o, const char *name)
{
    const struct asys_option_value *v = asys_profile_value(o, name);
    return v ? v->number : 0;
}

static int sampling_enabled(const struct asys_profile_options *o)
{
    return strcmp(value_text(o, "sample"), "none") != 0;
}

/* One way to say how often: a period or a rate. */
static int sampling_check(const struct asys_profile_options *o, struct asys_err *err)
{
    const struct asys_option_value *ctxsw = asys_profile_value(o, "cpuctxsw");
    if (ctxsw->given && strcmp(ctxsw->canonical, "none") &&
        strcmp(ctxsw->canonical, value_text(o, "sample")))
        return asys_fail_kind(err, ASYS_ERR_USAGE,
                              "--cpuctxsw %s needs -s %s: asys records scheduling with the CPU "
                              "sampling events",
                              ctxsw->canonical, ctxsw->canonical);
    if (asys_profile_value(o, "sample-frequency")->given &&
        asys_profile_value(o, "sample-period")->given)
        return asys_fail_kind(err, ASYS_ERR_USAGE,
                              "--sample-period and --sample-frequency cannot be used together");
    return 0;
}

static int sampling_start(const struct asys_collector_setup *s, pid_t target, void **state,
                          struct asys_err *err)
{
    const struct asys_profile_options *o = s->options;
    const char *bt = value_text(o, "backtrace");
    struct asys_cpu_sampler_config cfg = {
        .scope = !strcmp(value_text(o, "sample"), "system-wide") ? ASYS_SAMPLE_SYSTEM_WIDE
                                                                 : ASYS_SAMPLE_PROCESS_TREE,
        .backtrace = !strcmp(bt, "dwarf") ? ASYS_BACKTRACE_DWARF
                     : !strcmp(bt, "fp")  ? ASYS_BACKTRACE_FP
                                          : ASYS_BACKTRACE_NONE,
        .period_cycles = value_number(o, "sample-period"),
        .frequency_hz = asys_profile_value(o, "sample-frequency")->given
                            ? (uint32_t)value_number(o, "sample-frequency")
                            : 0,
        .depth = (uint32_t)value_number(o, "sample-backtrace-depth"),
        .no_scheduling = !strcmp(value_text(o, "cpuctxsw"), "none"),
        .stack_bytes = (uint32_t)(value_number(o, "sample-stack-size") & ~7ull),
        .session_dir = s->session_dir,
        .target_running = s->target_running,
        .recording = s->recording,
        .symbolizer = s->symbolizer,
        .exits_after = s->exits_after,
    };
    struct asys_cpu_sampler *sampler = NULL;
    if (asys_cpu_sampler_start(&cfg, target, &sampler, err) != 0)
        return -1;
    const struct asys_cpu_sampler_result *r = asys_cpu_sampler_result(sampler);
    if (r->status == ASYS_CPU_SAMPLING_UNAVAILABLE)
        asys_note(ASYS_NOTE_WARNING, "cpu sampling unavailable: %s; recording without it",
                  r->reason);
    else if (r->reason[0]) /* every run on such a machine: one short line, the rest in report_info
                            */
        asys_note(ASYS_NOTE_NOTICE, "cpu sampling: %s; see report_info",
                  r->sched_source == ASYS_SCHED_TRACEPOINT ? "user-space samples only"
                  : r->sched_source == ASYS_SCHED_NONE     ? "no scheduling data"
                  : r->sched_source == ASYS_SCHED_CPU_SWITCH
                      ? "scheduling from every CPU's context switches (no sched:sched_switch)"
                      : "scheduling from the program's own context switches (no "
                        "sched:sched_switch)");
    *state = sampler;
    return 0;
}

static int sampling_stop(void *state, struct asys_err *err)
{
    return asys_cpu_sampler_finish(state, err);
}

/* ---- finalize: the manifest's "cpu-sampling" object ---- */

struct sampling_tally {
    struct asys_rec_cpu_sampling_info info;
    int have_info;
    char reason[ASYS_CPU_SAMPLING_REASON_MAX + 1];
};

static void *tally_begin(void)
{
    return calloc(1, sizeof(struct sampling_tally));
}

static void tally_record(void *state, const struct asys_segment_header *h,
                         const struct asys_record *rec)
{
    (void)h;
    struct sampling_tally *t = state;
    if (!t)
        return;
    if (rec->type != ASYS_REC_CPU_SAMPLING_INFO || rec->size < sizeof t->info)
        return;
    memcpy(&t->info, rec->data, sizeof t->info);
    t->have_info = 1;
    size_t n = t->info.reason_length;
    if (n > rec->size - sizeof t->info || n > ASYS_CPU_SAMPLING_REASON_MAX)
        n = 0; /* a damaged record: no reason rather than bytes past it */
    memcpy(t->reason, rec->data + sizeof t->info, n);
    t->reason[n] = '\0';
}

static int tally_end(void *state, cJSON **object, struct asys_err *err)
{
    struct sampling_tally *t = state;
    cJSON *o = NULL;
    int rc = 0;
    if (!t) /* its memory could not be had at finalize_begin */
        return asys_fail_kind(err, ASYS_ERR_NOMEM, "out of memory");
    if (!t->have_info)
        goto out;
    const struct asys_rec_cpu_sampling_info *i = &t->info;
    o = cJSON_CreateObject();
    if (!o) {
        rc = asys_fail_kind(err, ASYS_ERR_NOMEM, "out of memory");
        goto out;
    }
    char status[ASYS_CPU_SAMPLING_REASON_MAX + 32];
    const char *reason = t->reason;
    if (i->status == ASYS_CPU_SAMPLING_UNAVAILABLE)
        snprintf(status, sizeof status, "unavailable (%s)", reason);
    else
        snprintf(status, sizeof status, "recorded");
    cJSON_AddStringToObject(o, "status", status);
    cJSON_AddStringToObject(o, "scope",
                            i->scope == ASYS_SAMPLE_SYSTEM_WIDE ? "system-wide" : "process-tree");
    if (i->status == ASYS_CPU_SAMPLING_RECORDED) {
        cJSON_AddStringToObject(o, "event",
                                i->event == ASYS_CPU_EVENT_CYCLES ? "cycles" : "cpu-clock");
        asys_json_add_u64(o, "period", i->period);
        cJSON_AddStringToObject(o, "period_unit",
                                i->event == ASYS_CPU_EVENT_CYCLES ? "cycles" : "ns");
        asys_json_add_u64(o, "requested_period_cycles", i->requested_cycles);
        cJSON_AddNumberToObject(o, "nominal_mhz", i->nominal_mhz);
        cJSON_AddStringToObject(o, "backtrace",
                                i->backtrace == ASYS_BACKTRACE_DWARF ? "dwarf"
                                : i->backtrace == ASYS_BACKTRACE_FP  ? "fp"
                                                                     : "none");
        asys_json_add_u64(o, "samples", i->samples);
        asys_json_add_u64(o, "lost_samples", i->lost_samples);
        asys_json_add_u64(o, "throttled", i->throttled);
        asys_json_add_u64(o, "unwind_failed", i->unwind_failed);
        asys_json_add_u64(o, "sched_switches", i->sched_switches);
        asys_json_add_u64(o, "lost_switches", i->lost_switches);
        cJSON_AddStringToObject(o, "scheduling", asys_sched_source_name(i->sched_source));
        if (reason[0])
            cJSON_AddStringToObject(o, "note", reason);
    }
out:
    free(t);
    *object = o;
    return rc;
}

const struct asys_collector asys_collector_cpu_sampling = {
    .name = "cpu-sampling",
    .feature = ASYS_FEATURE_CPU_SAMPLING,
    .built = 1,
    .summary = "CPU sampling and thread scheduling (perf events of the launcher)",
    .options = sampling_options,
    .option_count = sizeof sampling_options / sizeof sampling_options[0],
    .enabled = sampling_enabled,
    .check = sampling_check,
    .start = sampling_start,
    .start_before_exec = 1, /* the events are inherited from the program's first instruction */
    .stop = sampling_stop,
    .finalize_begin = tally_begin,
    .finalize_record = tally_record,
    .finalize_end = tally_end,
    .recover = asys_cpu_samples_recover,
};
