/* The CPU samples' segments: one per process image (in the session's arena)
 * and the scheduling segment (a file, written last). */
#define _GNU_SOURCE
#include "cpu_samples.h"
#include "notes.h"

/* ---- writing segments --------------------------------------------------------------- */

struct out_segment {
    struct asys_segment_writer w;
    uint32_t next_string;
    int open;
};

/* A process image's segment goes into the session's arena, beside the
 * traced threads' segments: a file per sampled process cost its creation, a
 * truncate and an unlink at the end, each waiting for ext4's discard (0.25 s
 * of the launcher's 0.59 s for 500 processes).  The scheduling segment,
 * written last, stays a file: it says the rings were unwound (recovery).
 * Files where there is no arena (sessions of older launchers). */
static int segment_open(struct out_segment *o, const struct writer_state *w, const char *name,
                        uint32_t pid, uint32_t ppid, uint64_t uid, uint8_t *slot_buffer,
                        uint64_t base, struct asys_err *err)
{
    const struct asys_cpu_raw_run *run = w->run;
    char path[4300];
    snprintf(path, sizeof path, "%s/segments/%s%s", run->session_dir, name, ASYS_SEGMENT_SUFFIX);
    struct asys_segment_header h;
    memset(&h, 0, sizeof h);
    h.collector = ASYS_SEGMENT_THREAD;
    h.feature_mask = ASYS_FEATURE_CORE | ASYS_FEATURE_STACKS | ASYS_FEATURE_CPU_SAMPLING;
    h.pid = pid;
    h.tid = pid;
    h.ppid = ppid;
    h.thread_index = 1 + run->config->recording; /* a session's recordings apart */
    h.process_uid = uid;
    h.clock_kind = ASYS_CLOCK_MONOTONIC;
    h.base_ticks = base;
    int in_arena = slot_buffer && w->arena.control;
    int rc = in_arena ? asys_segment_open_staged(&o->w, &w->arena, &h, SEGMENT_MAX, slot_buffer)
                      : asys_segment_open(&o->w, path, &h, SEGMENT_CHUNK, SEGMENT_MAX);
    if (rc != 0)
        return asys_fail_errno(err, -rc, "cannot create '%s'", in_arena ? w->arena.path : path);
    o->open = 1;
    o->next_string = 1;
    return 0;
}

/* Closes `o`: a staged segment's records reach the arena only now.  `rc`,
 * or -1 when they could not be written. */
static int segment_close(struct out_segment *o, const struct writer_state *w, int rc,
                         struct asys_err *err)
{
    if (!o->open)
        return rc;
    o->open = 0;
    int closed = asys_segment_close(&o->w);
    if (closed != 0 && rc == 0)
        return asys_fail_errno(err, -closed, "cannot write '%s'", w->arena.path);
    return rc;
}

static void *reserve(struct out_segment *o, uint32_t size, uint64_t time, uint32_t *delta)
{
    return asys_segment_reserve(&o->w, size, time, delta);
}

/* A STRING_DEF; its id, or 0 when it could not be written. */
static uint32_t put_string(struct out_segment *o, const char *text, uint64_t time)
{
    size_t len = strnlen(text, MAX_PATH_TEXT);
    uint32_t size = (uint32_t)((sizeof(struct asys_rec_string_def) + len + 7) & ~7ull);
    uint32_t delta;
    struct asys_rec_string_def *d = reserve(o, size, time, &delta);
    if (!d)
        return 0;
    memset(d + 1, 0, size - sizeof *d);
    d->string_id = o->next_string++;
    d->length = (uint32_t)len;
    d->flags = 0;
    memcpy(d + 1, text, len);
    unsigned words = size / 8;
    d->size_bytes = words > 254 ? size : 0;
    asys_segment_commit(
        &d->header,
        ASYS_REC_WORD(ASYS_REC_STRING_DEF, words > 254 ? ASYS_REC_EXTENDED : words, 0, delta));
    return d->string_id;
}

static void put_module(struct out_segment *o, const struct module *m, uint32_t path_id,
                       uint64_t time)
{
    uint32_t delta;
    struct asys_rec_module *r = reserve(o, sizeof *r, time, &delta);
    if (!r)
        return;
    r->load_bias = m->bias;
    r->start = m->start;
    r->end = m->end;
    r->path_string_id = path_id;
    r->build_id_length = m->build_id_length;
    memset(r->build_id, 0, sizeof r->build_id);
    memcpy(r->build_id, m->build_id, m->build_id_length);
    asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_MODULE, sizeof *r / 8, 0, delta));
}

static void put_chain(struct out_segment *o, uint32_t id, const uint64_t *f, uint32_t n,
                      uint64_t time)
{
    uint32_t delta, size = (uint32_t)(sizeof(struct asys_rec_callchain) + 8 * n);
    struct asys_rec_callchain *c = reserve(o, size, time, &delta);
    if (!c)
        return;
    c->callchain_id = id;
    c->depth = n;
    memcpy(c + 1, f, 8 * n);
    asys_segment_commit(&c->header, ASYS_REC_WORD(ASYS_REC_CALLCHAIN, size / 8, 0, delta));
}

/* Whether the image mapped executable code that no file it can be read
 * from holds: anonymous memory, a memfd, a deleted file (the vdso aside).
 * Only there can a JIT map name anything, as file-backed modules win an
 * overlap; the others are not looked for (an access() per image, 1,215
 * in a make -j2 recording). */
static int may_hold_jit_code(const struct image *img)
{
    for (size_t i = 0; i < img->module_count; i++) {
        const char *p = img->modules[i].path;
        if ((p[0] != '/' && strcmp(p, "[vdso]") != 0 && strcmp(p, "[vsyscall]") != 0) ||
            !strncmp(p, "//anon", 6) || !strncmp(p, "/memfd:", 7) || strstr(p, " (deleted)"))
            return 1;
    }
    return 0;
}

/* The process's JIT map, when it wrote one, as a module over the code it
 * names: finalize's symbolizer reads the names of the sampled addresses
 * into the report (file-backed modules come first and win an overlap). */
static void put_jit_module(struct out_segment *o, const struct image *img, uint64_t time)
{
    if (!may_hold_jit_code(img))
        return;
    char path[64];
    asys_perf_map_path(path, sizeof path, img->pid);
    if (access(path, F_OK) != 0)
        return;
    struct asys_err err = {0};
    struct asys_perf_map *map = asys_perf_map_read(path, &err);
    struct module jit = {.start = 0};
    if (map)
        asys_perf_map_span(map, &jit.start, &jit.end);
    else
        asys_note(ASYS_NOTE_DEBUG, "cpu sampling: %s", err.text);
    if (jit.end > jit.start)
        put_module(o, &jit, put_string(o, path, time), time);
    asys_perf_map_free(map);
}

/* The chains' slots by id (id - 1), for their records; NULL when out of
 * memory. */
static const struct chain_slot **chains_by_id(const struct chain_table *t)
{
    const struct chain_slot **by_id = calloc(t->count + 1, sizeof *by_id);
    for (size_t j = 0; by_id && j < t->slot_cap; j++)
        if (t->slots[j].hash && t->slots[j].id && t->slots[j].id <= t->count)
            by_id[t->slots[j].id - 1] = &t->slots[j];
    return by_id;
}

uint64_t cpu_image_uid(const struct image *img)
{
    /* a uid no injected process uses: the high byte tags the sampler's images */
    return (uint64_t)ASYS_SAMPLER_UID_TAG << 56 | (uint64_t)img->index << 32 | img->pid;
}

int cpu_write_image(const struct writer_state *w, struct image_output *out, struct image *img,
                    struct asys_err *err)
{
    struct out_segment o = {0};
    const struct chain_slot **chain_of = NULL; /* by id; set to NULL once written */
    int rc = -1;
    if (!img->sample_count) {
        rc = 0;
        goto out;
    }
    for (size_t i = 0; i < img->sample_count; i++) /* what was not unwound as it came */
        if (img->samples[i].rec)
            cpu_unwind_sample(w, out, img, &img->samples[i]);
    cpu_resolve_modules(out, img);
    chain_of = chains_by_id(&img->chains);
    if (!chain_of) {
        asys_fail(err, "out of memory");
        goto out;
    }
    char name[64];
    snprintf(name, sizeof name, "cpu-p%u-%zu", img->pid, img->index);
    uint64_t t0 = img->first_time;
    if (segment_open(&o, w, name, img->pid, img->ppid, cpu_image_uid(img), out->slot_buffer, t0,
                     err) != 0)
        goto out;
    uint32_t exe = put_string(&o, img->exe ? img->exe : "", t0);
    uint32_t comm = 0;
    for (size_t i = 0; i < img->name_count; i++)
        if (img->names[i].tid == img->pid)
            comm = put_string(&o, img->names[i].name, t0);
    uint32_t delta;
    struct asys_rec_process_info *pi = reserve(&o, sizeof *pi, t0, &delta);
    if (pi) {
        *pi = (struct asys_rec_process_info){0, img->pid, img->ppid, exe, comm, ASYS_PROCESS_FORKED,
                                             0};
        asys_segment_commit(&pi->header,
                            ASYS_REC_WORD(ASYS_REC_PROCESS_INFO, sizeof *pi / 8, 0, delta));
    }
    for (size_t i = 0; i < img->name_count; i++) {
        uint32_t id = put_string(&o, img->names[i].name, t0);
        struct asys_rec_thread *t = reserve(&o, sizeof *t, t0, &delta);
        if (t) {
            t->tid = img->names[i].tid;
            t->name_string_id = id;
            asys_segment_commit(&t->header,
                                ASYS_REC_WORD(ASYS_REC_THREAD_START, sizeof *t / 8, 0, delta));
        }
    }
    for (size_t i = 0; i < img->module_count; i++)
        if (img->modules[i].bias_known)
            put_module(&o, &img->modules[i], put_string(&o, img->modules[i].path, t0), t0);
    struct module kernel = {.start = KERNEL_MODULE_START, .end = UINT64_MAX, .bias = 0};
    put_module(
        &o, &kernel,
        put_string(&o, w->kernel_symbols ? KERNEL_SYMBOLS_MODULE_NAME : KERNEL_MODULE_NAME, t0),
        t0);
    put_jit_module(&o, img, t0);
    for (size_t i = 0; i < img->sample_count; i++) {
        const struct sample *s = &img->samples[i];
        const struct chain_slot *c = s->callchain_id ? chain_of[s->callchain_id - 1] : NULL;
        if (c) { /* each chain's record before the first sample that names it */
            put_chain(&o, c->id, img->chains.frames + c->offset, c->depth, s->time);
            chain_of[s->callchain_id - 1] = NULL;
        }
        out->unwind_failed += (s->flags & ASYS_CPU_SAMPLE_UNWIND_FAILED) != 0;
        struct asys_rec_cpu_sample *r = reserve(&o, sizeof *r, s->time, &delta);
        if (!r)
            continue;
        r->tid = s->tid;
        r->cpu = s->cpu;
        r->callchain_id = s->callchain_id;
        r->flags = s->flags;
        asys_segment_commit(&r->header,
                            ASYS_REC_WORD(ASYS_REC_CPU_SAMPLE, sizeof *r / 8, 0, delta));
        out->samples++;
    }
    rc = 0;
out:
    rc = segment_close(&o, w, rc, err);
    free(chain_of);
    img->written = 1;
    return rc;
}

/* ---- the scheduling segment -------------------------------------------------------- */

static int scan_sched(struct writer_state *w, struct asys_err *err)
{
    w->event_count = 0;
    int context_switches = w->run->result->sched_source == ASYS_SCHED_CONTEXT_SWITCH ||
                           w->run->result->sched_source == ASYS_SCHED_CPU_SWITCH;
    for (int i = 0; i < w->file_count; i++)
        if ((w->files[i].sched || context_switches) &&
            cpu_scan_raw_file(w, &w->files[i], PASS_SCHED, err) != 0)
            return -1;
    if (w->event_count)
        qsort(w->events, w->event_count, sizeof *w->events, cpu_events_by_time);
    return 0;
}

/* The process of a thread of the traced tree; 0 for any other (system-wide
 * sampling sees every process, whose threads are not the tree's). */
static uint32_t pid_of(struct writer_state *w, uint32_t tid)
{
    uint64_t *v = tid ? asys_u64map_get(&w->tid_pid, tid) : NULL;
    if (!v)
        return 0;
    uint32_t pid = (uint32_t)*v;
    if (w->run->config->scope == ASYS_SAMPLE_SYSTEM_WIDE && !asys_u64map_get(&w->tree, pid))
        return 0;
    return pid;
}

/* A sampled thread's own switch (context_switch records): in, or out with
 * whether it was still runnable (the state of a thread that blocked, S or
 * D, is not told: Waiting). */
static void put_task_switch(struct writer_state *w, struct out_segment *o, const struct event *e)
{
    struct perf_event_header h;
    memcpy(&h, e->rec, sizeof h);
    int exit = h.type == PERF_RECORD_EXIT;
    uint32_t pid = get_u32(e->rec + (exit ? 8 : e->size - 24));
    uint32_t tid = get_u32(e->rec + (exit ? 16 : e->size - 20));
    uint32_t cpu = get_u32(e->rec + e->size - 8);
    int out = exit || (h.misc & PERF_RECORD_MISC_SWITCH_OUT) != 0;
    uint32_t delta;
    struct asys_rec_sched_switch *r = reserve(o, sizeof *r, e->time, &delta);
    if (!r)
        return;
    r->cpu = cpu;
    r->prev_tid = out ? tid : 0;
    r->next_tid = out ? 0 : tid;
    r->prev_pid = out ? pid : 0;
    r->next_pid = out ? 0 : pid;
    r->prev_state = exit ? ASYS_TASK_DEAD_MASK
                    : !out || (h.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT)
                        ? 0
                        : ASYS_TASK_INTERRUPTIBLE;
    asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_SCHED_SWITCH, sizeof *r / 8, 0, delta));
    w->switches++;
}

/* A CPU's switch seen by its system-wide event (SWITCH_CPU_WIDE, out): the
 * task in the sample id went out, next_prev came in; as the tracepoint's,
 * but a thread that blocked is Waiting whether S or D. */
static void put_cpu_switch(struct writer_state *w, struct out_segment *o, const struct event *e)
{
    struct perf_event_header h;
    memcpy(&h, e->rec, sizeof h);
    uint32_t delta;
    struct asys_rec_sched_switch *r = reserve(o, sizeof *r, e->time, &delta);
    if (!r)
        return;
    r->cpu = get_u32(e->rec + e->size - 8);
    r->prev_tid = get_u32(e->rec + e->size - 20);
    r->next_tid = get_u32(e->rec + 12);
    r->prev_pid = pid_of(w, r->prev_tid);
    r->next_pid = pid_of(w, r->next_tid);
    r->prev_state = (h.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) ? 0 : ASYS_TASK_INTERRUPTIBLE;
    asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_SCHED_SWITCH, sizeof *r / 8, 0, delta));
    w->switches++;
}

static void put_switch(struct writer_state *w, struct out_segment *o, const struct event *e)
{
    const struct asys_cpu_raw_run *run = w->run;
    struct perf_event_header h;
    memcpy(&h, e->rec, sizeof h);
    if (h.type == PERF_RECORD_SWITCH_CPU_WIDE) {
        put_cpu_switch(w, o, e);
        return;
    }
    if (h.type == PERF_RECORD_SWITCH || h.type == PERF_RECORD_EXIT) {
        put_task_switch(w, o, e);
        return;
    }
    /* TIME, CPU (+res), RAW size, raw data */
    if (e->size < 8 + 8 + 8 + 4)
        return;
    uint32_t cpu = get_u32(e->rec + 16);
    uint32_t raw_size = get_u32(e->rec + 24);
    const uint8_t *raw = e->rec + 28;
    if (raw_size > e->size - 28)
        return;
    uint32_t need = run->next_pid_offset + 4;
    if (run->prev_state_offset + run->prev_state_size > need)
        need = run->prev_state_offset + run->prev_state_size;
    if (run->prev_pid_offset + 4 > need)
        need = run->prev_pid_offset + 4;
    if (raw_size < need)
        return;
    uint32_t delta;
    struct asys_rec_sched_switch *r = reserve(o, sizeof *r, e->time, &delta);
    if (!r)
        return;
    r->cpu = cpu;
    r->prev_tid = get_u32(raw + run->prev_pid_offset);
    r->next_tid = get_u32(raw + run->next_pid_offset);
    r->prev_pid = pid_of(w, r->prev_tid);
    r->next_pid = pid_of(w, r->next_tid);
    r->prev_state = get_u32(raw + run->prev_state_offset); /* the low half of a long */
    asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_SCHED_SWITCH, sizeof *r / 8, 0, delta));
    w->switches++;
}

int cpu_write_sched(struct writer_state *w, struct asys_err *err)
{
    struct out_segment o = {0};
    const struct asys_cpu_raw_run *run = w->run;
    int rc = -1;
    if (scan_sched(w, err) != 0)
        goto out;
    uint64_t t0 = w->event_count ? w->events[0].time : w->first_time;
    if (!t0) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        t0 = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    }
    if (segment_open(&o, w, "cpu-sched", (uint32_t)run->target, 0,
                     (uint64_t)ASYS_SAMPLER_UID_TAG << 56 | 0xffffffull << 32 |
                         (uint32_t)run->target,
                     NULL, t0, err) != 0)
        goto out;
    uint64_t t_last = t0;
    for (size_t i = 0; i < w->event_count; i++) {
        put_switch(w, &o, &w->events[i]);
        t_last = w->events[i].time;
    }
    uint32_t delta;
    size_t reason = strnlen(run->result->reason, sizeof run->result->reason);
    uint32_t size = (uint32_t)((sizeof(struct asys_rec_cpu_sampling_info) + reason + 7) & ~7ull);
    struct asys_rec_cpu_sampling_info *info = reserve(&o, size, t_last, &delta);
    if (info) {
        memset((uint8_t *)info + 8, 0, size - 8);
        memcpy(info + 1, run->result->reason, reason);
        info->status = run->result->status;
        info->event = run->result->event;
        info->period = run->result->period;
        info->requested_cycles = run->config->period_cycles;
        info->samples = w->samples;
        info->lost_samples = w->lost_samples;
        info->throttled = w->throttled;
        info->unwind_failed = w->unwind_failed;
        info->sched_switches = w->switches;
        info->backtrace = run->config->backtrace;
        info->scope = run->config->scope;
        info->sched_source = run->result->sched_source;
        info->reason_length = (uint32_t)reason;
        info->stack_bytes =
            run->config->backtrace == ASYS_BACKTRACE_DWARF ? run->config->stack_bytes : 0;
        info->nominal_mhz = run->result->nominal_mhz;
        info->backtrace_depth = run->config->depth;
        info->lost_switches = w->lost_switches;
        asys_segment_commit(&info->header,
                            ASYS_REC_WORD(ASYS_REC_CPU_SAMPLING_INFO, size / 8, 0, delta));
    }
    rc = 0;
out:
    return segment_close(&o, w, rc, err);
}

/* Removes the raw files: they are never part of the report. */
