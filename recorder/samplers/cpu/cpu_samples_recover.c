/* An interrupted session: the sampler's run saved beside its raw files, so
 * that asys finalize can write its segments later. */
#define _GNU_SOURCE
#include "cpu_samples.h"

/* ---- an interrupted session ------------------------------------------------------- */

struct run_field {
    const char *key;
    size_t offset, size; /* in struct run_image */
    uint64_t max; /* what a value read back may be */
};

/* Everything of a run that is not a pointer, as one struct. */
struct run_image {
    uint64_t scope, backtrace, period_cycles, depth, stack_bytes;
    uint64_t status, event, period, nominal_mhz, sched_source;
    uint64_t sample_type, regs_mask, cpus, target;
    uint64_t prev_pid_offset, prev_state_offset, prev_state_size, next_pid_offset;
};

#define RUN_FIELD(name, limit) \
    { \
#name, offsetof(struct run_image, name), 8, limit \
    }
static const struct run_field fields[] = {
    RUN_FIELD(scope, ASYS_SAMPLE_SYSTEM_WIDE),
    RUN_FIELD(backtrace, ASYS_BACKTRACE_DWARF),
    RUN_FIELD(period_cycles, 1ull << 40),
    RUN_FIELD(depth, ASYS_CALLCHAIN_MAX_DEPTH),
    RUN_FIELD(stack_bytes, 65528),
    RUN_FIELD(status, ASYS_CPU_SAMPLING_UNAVAILABLE),
    RUN_FIELD(event, ASYS_CPU_EVENT_CPU_CLOCK),
    RUN_FIELD(period, 1ull << 50),
    RUN_FIELD(nominal_mhz, 100000),
    RUN_FIELD(sched_source, ASYS_SCHED_CPU_SWITCH),
    RUN_FIELD(sample_type, UINT64_MAX),
    RUN_FIELD(regs_mask, UINT64_MAX),
    RUN_FIELD(cpus, ASYS_CPU_MAX_CPUS),
    RUN_FIELD(target, UINT32_MAX),
    RUN_FIELD(prev_pid_offset, 4096),
    RUN_FIELD(prev_state_offset, 4096),
    RUN_FIELD(prev_state_size, 8),
    RUN_FIELD(next_pid_offset, 4096),
};

static const struct run_field *run_fields(size_t *count)
{
    *count = sizeof fields / sizeof fields[0];
    return fields;
}

int asys_cpu_run_save(const struct asys_cpu_raw_run *run, struct asys_err *err)
{
    const struct asys_cpu_sampler_config *c = run->config;
    const struct asys_cpu_sampler_result *r = run->result;
    struct run_image img = {c->scope,
                            c->backtrace,
                            c->period_cycles,
                            c->depth,
                            c->stack_bytes,
                            r->status,
                            r->event,
                            r->period,
                            r->nominal_mhz,
                            r->sched_source,
                            run->sample_type,
                            run->regs_mask,
                            (uint64_t)run->cpus,
                            (uint64_t)run->target,
                            run->prev_pid_offset,
                            run->prev_state_offset,
                            run->prev_state_size,
                            run->next_pid_offset};
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return asys_fail(err, "out of memory");
    size_t n;
    const struct run_field *f = run_fields(&n);
    for (size_t i = 0; i < n; i++) {
        uint64_t v;
        memcpy(&v, (const uint8_t *)&img + f[i].offset, 8);
        asys_json_add_u64(root, f[i].key, v);
    }
    cJSON_AddStringToObject(root, "reason", r->reason);
    char path[4300];
    snprintf(path, sizeof path, "%s/%s/%s", run->session_dir, ASYS_CPU_RAW_DIR, ASYS_CPU_RUN_FILE);
    int rc = asys_json_save(path, root, err);
    cJSON_Delete(root);
    return rc;
}

/* The image segments an interrupted write left in the arena lose their slot
 * magic: the ones written again are then the only ones finalize finds. */
static void forget_arena_images(const char *session_dir)
{
    char path[4300];
    struct asys_arena_index index;
    memset(&index, 0, sizeof index);
    struct asys_err err = {0};
    if (asys_arena_path(session_dir, path, sizeof path) != 0 ||
        asys_arena_index_read(path, &index, &err) != 0)
        return;
    int fd = index.count ? open(path, O_WRONLY | O_CLOEXEC) : -1;
    static const char no_magic[sizeof((struct asys_slot_header *)0)->magic];
    for (size_t i = 0; fd >= 0 && i < index.count; i++) {
        const struct asys_arena_segment *seg = &index.segments[i];
        if (!asys_is_sampler_uid(seg->key.process_uid))
            continue;
        for (size_t k = 0; k < seg->count; k++)
            if (pwrite(fd, no_magic, sizeof no_magic, (off_t)seg->slots[k]) != sizeof no_magic)
                break;
    }
    if (fd >= 0)
        close(fd);
    asys_arena_index_free(&index);
}

int asys_cpu_samples_recover(const char *session_dir, struct asys_err *err)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/%s/%s", session_dir, ASYS_CPU_RAW_DIR, ASYS_CPU_RUN_FILE);
    char written[4300];
    snprintf(written, sizeof written, "%s/segments/cpu-sched%s", session_dir, ASYS_SEGMENT_SUFFIX);
    if (access(path, F_OK) != 0 || access(written, F_OK) == 0)
        return 0; /* no sampling, or its segments are written already */
    struct asys_err load_err = {0};
    cJSON *root = asys_json_load(path, &load_err);
    int rc = -1;
    struct run_image img;
    memset(&img, 0, sizeof img);
    if (!root) {
        asys_fail(err, "cannot read '%s': %s", path, load_err.text);
        goto out;
    }
    size_t n;
    const struct run_field *f = run_fields(&n);
    for (size_t i = 0; i < n; i++) {
        uint64_t v;
        if (asys_json_get_u64(root, f[i].key, &v) != 0 || v > f[i].max) {
            asys_fail(err, "cannot read '%s': '%s' missing or out of range", path, f[i].key);
            goto out;
        }
        memcpy((uint8_t *)&img + f[i].offset, &v, 8);
    }
    struct asys_cpu_sampler_config config = {
        .scope = (enum asys_cpu_sampling_scope)img.scope,
        .backtrace = (enum asys_cpu_backtrace)img.backtrace,
        .period_cycles = img.period_cycles,
        .depth = (uint32_t)img.depth,
        .stack_bytes = (uint32_t)img.stack_bytes,
        .session_dir = session_dir,
    };
    struct asys_cpu_sampler_result result = {.status = (enum asys_cpu_sampling_status)img.status,
                                             .event = (enum asys_cpu_sampling_event)img.event,
                                             .period = img.period,
                                             .nominal_mhz = (uint32_t)img.nominal_mhz,
                                             .sched_source =
                                                 (enum asys_sched_source)img.sched_source};
    snprintf(result.reason, sizeof result.reason, "%s", asys_json_get_str(root, "reason", ""));
    struct asys_cpu_raw_run run = {session_dir,
                                   &config,
                                   &result,
                                   img.sample_type,
                                   img.regs_mask,
                                   (int)img.cpus,
                                   (pid_t)img.target,
                                   (uint32_t)img.prev_pid_offset,
                                   (uint32_t)img.prev_state_offset,
                                   (uint32_t)img.prev_state_size,
                                   (uint32_t)img.next_pid_offset};
    forget_arena_images(session_dir);
    rc = asys_cpu_samples_write(&run, err);
out:
    cJSON_Delete(root);
    return rc;
}
