/* The NIC metrics collector (--nic-metrics): the launcher samples the
 * counters of the RDMA ports and network interfaces from sysfs
 * (nic_sampler.c).  Nothing runs inside the target. */
#include <stdio.h>
#include <string.h>

#include "asys_format.h"
#include "collector.h"
#include "nic_sampler.h"
#include "profile_options.h"

// clang-format off
static const struct asys_option nic_options[] = {
    {.name = "nic-metrics", .type = ASYS_OPT_BOOL, .metavar = "true|false",
     .default_value = "false",
     .help = "sample the RDMA NICs' counters (and network interfaces') from sysfs: "
             "$ASYS_NIC_SYSFS_ROOT, default /sys"},
    {.name = "nic-device-include", .type = ASYS_OPT_TEXT, .metavar = "REGEX,...",
     .default_value = "all",
     .help = "NIC devices to sample: a device whose name any regular expression (PCRE2) "
             "matches; all: every one"},
    {.name = "nic-metrics-frequency", .type = ASYS_OPT_COUNT, .metavar = "HZ",
     .default_value = "1000",
     .help = "NIC samples per second (1-100000; a slower driver lowers it, and asys says so)",
     .min = 1, .max = 100000},
};
// clang-format on

static int nic_enabled(const struct asys_profile_options *o)
{
    return asys_profile_value(o, "nic-metrics")->number != 0;
}

/* The device rules compile (one line on no), before anything is recorded. */
static int nic_check(const struct asys_profile_options *o, struct asys_err *err)
{
    struct nic_filter *f = NULL;
    int rc = asys_nic_filter_new(asys_profile_value(o, "nic-device-include")->canonical, &f, err);
    asys_nic_filter_free(f);
    return rc;
}

static int nic_start(const struct asys_collector_setup *s, pid_t target, void **state,
                     struct asys_err *err)
{
    const struct asys_profile_options *o = s->options;
    (void)target;
    *state = NULL;
    if (!nic_enabled(o))
        return 0;
    return asys_nic_sampler_start(
        s->session_dir, asys_profile_value(o, "nic-device-include")->canonical,
        asys_profile_value(o, "nic-metrics-frequency")->number, (struct nic_sampler **)state, err);
}

static int nic_stop(void *state, struct asys_err *err)
{
    (void)err; /* it keeps what it sampled as it goes */
    asys_nic_sampler_stop(state);
    return 0;
}

const struct asys_collector asys_collector_nic = {
    .name = "nic-metrics",
    .feature = ASYS_FEATURE_NIC,
    .built = 1,
    .summary = "RDMA and Ethernet NIC counters",
    .options = nic_options,
    .option_count = sizeof nic_options / sizeof nic_options[0],
    .enabled = nic_enabled,
    .check = nic_check,
    .start = nic_start,
    .stop = nic_stop,
};
