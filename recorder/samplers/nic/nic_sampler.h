/* NIC metrics: a launcher thread that reads the counters of the RDMA ports
 * and network interfaces from sysfs into a segment of its own
 * (nic_sampler.c; the records are schema/asys_format.h's NIC_*). */
#ifndef ASYS_NIC_SAMPLER_H
#define ASYS_NIC_SAMPLER_H

#include <stdint.h>

#include "asys_error.h"

struct nic_sampler;

/* The device filter of --nic-device-include: "all", or comma-separated
 * PCRE2 patterns (a device is sampled when any of them matches its name). */
struct nic_filter;
int asys_nic_filter_new(const char *rules, struct nic_filter **out, struct asys_err *err);
/* 1 when a rule matches `name`; a rule that fails (match limit) is
 * remembered and said at start. */
int asys_nic_filter_match(struct nic_filter *f, const char *name);
void asys_nic_filter_free(struct nic_filter *f);

/* The sysfs root: $ASYS_NIC_SYSFS_ROOT, or /sys. */
const char *asys_nic_sysfs_root(void);

/* Finds the devices under the sysfs root that `rules` selects and starts
 * sampling them into SESSION/segments/nic.seg.  *out stays NULL (and a
 * notice says so) when there is nothing to sample. */
int asys_nic_sampler_start(const char *session_dir, const char *rules, uint64_t frequency_hz,
                           struct nic_sampler **out, struct asys_err *err);
/* Takes a last sample, writes the rate record, says once when the rate fell
 * short of the one asked for, closes the segment; frees `s` (NULL is fine). */
void asys_nic_sampler_stop(struct nic_sampler *s);

#endif
