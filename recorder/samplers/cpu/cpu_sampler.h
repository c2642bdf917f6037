/* The CPU sampler of the launcher (collector_cpu_sampling.c).
 *
 * cpu_sampler.c opens the perf events (one sampling event per CPU inherited
 * by the program's threads and children, one sched:sched_switch event per
 * CPU) before the program execs, and a thread of the launcher copies their
 * rings into raw files of the session directory while it runs.
 * cpu_samples_write.c turns those files, once the program is done, into the
 * report's segments: stacks unwound, call chains deduplicated, one segment
 * per sampled process image and one of context switches (FORMAT.md, "cpu
 * sampling records"). */
#ifndef ASYS_CPU_SAMPLER_H
#define ASYS_CPU_SAMPLER_H

#include <stdint.h>
#include <sys/types.h>

#include "asys_error.h"
#include "asys_format.h"

/* Where the raw ring copies go, under the session directory (never packed:
 * finalize packs segments/ only). */
#define ASYS_CPU_RAW_DIR "cpu-sampling"
#define ASYS_CPU_MAX_CPUS 256

/* Test only: the errno perf_event_open is made to fail with ("EACCES",
 * "EPERM"), to check what a user without the privilege sees. */
#define ASYS_TEST_PERF_ERRNO_ENV "ASYS_TEST_PERF_EVENT_ERRNO"
/* Test only: sched:sched_switch is taken as unavailable (no tracefs). */
#define ASYS_TEST_NO_TRACEPOINT_ENV "ASYS_TEST_NO_SCHED_TRACEPOINT"
/* Set (tests): the images are unwound and written on one thread, whatever
 * their number (the same report as two threads write). */
#define ASYS_TEST_ONE_IMAGE_THREAD_ENV "ASYS_TEST_ONE_IMAGE_THREAD"
/* Set (tests): every sample is unwound after the program, none while it
 * runs (the same report). */
#define ASYS_TEST_UNWIND_AT_END_ENV "ASYS_TEST_UNWIND_AT_END"
/* Set (tests): the bytes of a raw file one online pass reads at most (a
 * thread that cannot keep up, and its passes taken in parts). */
#define ASYS_TEST_ONLINE_PASS_BYTES_ENV "ASYS_TEST_ONLINE_PASS_BYTES"

struct asys_symbolizer;

struct asys_cpu_sampler_config {
    enum asys_cpu_sampling_scope scope;
    enum asys_cpu_backtrace backtrace;
    uint64_t period_cycles;
    uint32_t frequency_hz; /* nonzero: period_cycles from this rate at the nominal frequency */
    uint32_t depth;
    uint32_t stack_bytes;
    int no_scheduling; /* --cpuctxsw none: no context switches recorded */
    int target_running; /* the program runs already (a session's recording), no exec to wait for */
    /* the session's recording number (0: asys profile): the thread index of
     * the segments, so that each recording's are told apart in the arena */
    uint32_t recording;
    const char *session_dir;
    /* the images' frames resolved as they are written while the program
     * runs (symbolize.h); NULL: at finalize */
    struct asys_symbolizer *symbolizer;
    /* the launcher exits after this recording: the images, their unwinder's
     * ELF files and the mapped raw files are left to the exit (unless
     * ASYS_FREE_BEFORE_EXIT), 2 ms of the pipelines' end on a VM */
    int exits_after;
};

/* What the sampler used and counted: the CPU_SAMPLING_INFO record. */
struct asys_cpu_sampler_result {
    enum asys_cpu_sampling_status status;
    enum asys_cpu_sampling_event event;
    uint64_t period;
    uint32_t nominal_mhz;
    int nominal_guessed; /* no frequency found: 2 GHz assumed */
    enum asys_sched_source sched_source;
    char reason[256]; /* unavailable: why; else why scheduling is missing, or "" */
};

struct asys_cpu_sampler;

/* Opens the events for the (not yet exec'd) program `target` and starts the
 * drain thread.  perf_event_open refused is not an error: *out is a sampler
 * whose result says unavailable, with the reason and its fix.  -1 only for
 * what stops the launcher's own work (memory, the session directory). */
int asys_cpu_sampler_start(const struct asys_cpu_sampler_config *cfg, pid_t target,
                           struct asys_cpu_sampler **out, struct asys_err *err);

/* Stops the thread, drains the rings, writes the segments into
 * SESSION/segments and frees the sampler; -1 (err set) when the samples
 * could not be written. */
int asys_cpu_sampler_finish(struct asys_cpu_sampler *s, struct asys_err *err);

const struct asys_cpu_sampler_result *asys_cpu_sampler_result(const struct asys_cpu_sampler *s);

/* ---- cpu_samples_write.c ---- */

/* The raw rings of one run, as cpu_sampler.c left them. */
struct asys_cpu_raw_run {
    const char *session_dir;
    const struct asys_cpu_sampler_config *config;
    const struct asys_cpu_sampler_result *result;
    uint64_t sample_type; /* of the sampling events */
    uint64_t regs_mask; /* PERF_SAMPLE_REGS_USER mask */
    int cpus;
    pid_t target;
    /* sched_switch's raw fields: offsets (bytes into the raw data) */
    uint32_t prev_pid_offset, prev_state_offset, prev_state_size, next_pid_offset;
};

/* Reads SESSION/cpu-sampling, unwinds and writes the segments. */
int asys_cpu_samples_write(const struct asys_cpu_raw_run *run, struct asys_err *err);

/* ---- cpu_samples_online.c ---- */

/* The samples' images built, unwound and written by a thread of their own
 * while the program runs, from what the drain thread copied; NULL where it
 * cannot start (then everything is done at the end, as by
 * asys_cpu_samples_write). */
struct asys_cpu_online;
struct asys_cpu_online *asys_cpu_online_start(const struct asys_cpu_raw_run *run);
/* The drain thread, its copies flushed: every record before `before`
 * (CLOCK_MONOTONIC ns) is in the raw files. */
void asys_cpu_online_publish(struct asys_cpu_online *o, uint64_t before);
/* After the last drain, the raw files closed: the rest, as
 * asys_cpu_samples_write does; frees `o` (or leaves it to the exit:
 * config.exits_after). */
int asys_cpu_online_finish(struct asys_cpu_online *o, struct asys_err *err);
/* Stops the thread and frees `o`, nothing written (the sampler did not start). */
void asys_cpu_online_cancel(struct asys_cpu_online *o);

/* What the rings need to be read later (SESSION/cpu-sampling/run.json),
 * written when sampling starts. */
#define ASYS_CPU_RUN_FILE "run.json"
int asys_cpu_run_save(const struct asys_cpu_raw_run *run, struct asys_err *err);
/* `asys finalize` of a session whose launcher died: the segments the launcher
 * would have written at the end, from the rings it left.  0 also when there
 * is nothing to recover. */
int asys_cpu_samples_recover(const char *session_dir, struct asys_err *err);

#endif
