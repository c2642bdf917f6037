/* CPU_SAMPLE, SCHED_SWITCH and CPU_SAMPLING_INFO records -> cpu_samples,
 * sched_slices, cpu_sampling_info, and the threads' scheduling states in
 * thread_states (Running, Preempted, Waiting, Uninterruptible), which
 * replace OSRT's estimates ("Possibly Running/Waiting") for every thread the
 * scheduler data covers (schema/cpu_sampling.sql). */
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "import_family.h"

struct sched_switch {
    uint64_t ns;
    uint32_t cpu, prev_tid, next_tid, prev_pid, next_pid, prev_state;
    uint32_t order;
};

struct cpu_sampling {
    struct asys_importer *imp;
    sqlite3_stmt *insert_sample;
    struct sched_switch *switches;
    size_t switch_count, switch_cap;
    struct asys_rec_cpu_sampling_info info;
    char reason[ASYS_CPU_SAMPLING_REASON_MAX + 1];
    int have_info;
};

static int sampling_init(struct asys_importer *imp, void **state, struct asys_err *err)
{
    struct cpu_sampling *c = calloc(1, sizeof *c);
    if (!c)
        return asys_fail(err, "out of memory");
    *state = c;
    c->imp = imp;
    return imp_prepare(imp,
                       "INSERT INTO cpu_samples (timestamp_ns, pid, tid, cpu, callchain_id) "
                       "VALUES (?,?,?,?,?)",
                       &c->insert_sample, err);
}

static void sampling_free(void *state)
{
    struct cpu_sampling *c = state;
    if (!c)
        return;
    sqlite3_finalize(c->insert_sample);
    free(c->switches);
    free(c);
}

/* A sampled or scheduled thread of the tree is one of the report's threads,
 * alive at least from its first to its last sign of life. */
static int saw_thread(struct asys_importer *imp, uint32_t pid, uint32_t tid, uint64_t start_ns,
                      uint64_t end_ns, struct asys_err *err)
{
    struct imp_thread *t = imp_thread_get(imp, pid, tid);
    struct imp_process *p = imp_process_get(imp, pid);
    if (!t || !p)
        return asys_fail(err, "out of memory");
    t->seen = 1;
    if (start_ns < t->start_ns)
        t->start_ns = start_ns;
    if (end_ns > t->end_ns)
        t->end_ns = end_ns;
    if (start_ns < p->start_ns)
        p->start_ns = start_ns;
    if (end_ns > p->end_ns)
        p->end_ns = end_ns;
    return 0;
}

static int import_sample(void *state, const struct asys_record *rec, uint64_t ns,
                         struct asys_err *err)
{
    struct cpu_sampling *c = state;
    struct asys_importer *imp = c->imp;
    const struct asys_rec_cpu_sample *r = (const void *)rec->data;
    int64_t chain = r->callchain_id ? imp_callchain(imp, r->callchain_id) : 0;
    if (saw_thread(imp, imp->seg.pid, r->tid, ns, ns, err) != 0)
        return -1;
    sqlite3_stmt *st = c->insert_sample;
    sqlite3_bind_int64(st, 1, (int64_t)ns);
    sqlite3_bind_int64(st, 2, imp->seg.pid);
    sqlite3_bind_int64(st, 3, r->tid);
    sqlite3_bind_int64(st, 4, r->cpu);
    imp_bind_optional(st, 5, chain, chain != 0);
    return imp_step(imp, st, err);
}

/* Context switches are kept until every segment is read: slices need each
 * core's switches in time order. */
static int import_switch(void *state, const struct asys_record *rec, uint64_t ns,
                         struct asys_err *err)
{
    struct cpu_sampling *c = state;
    const struct asys_rec_sched_switch *r = (const void *)rec->data;
    if (asys_grow(&c->switches, &c->switch_cap, c->switch_count, sizeof *c->switches, 4096))
        return asys_fail(err, "out of memory");
    c->switches[c->switch_count] =
        (struct sched_switch){ns,          r->cpu,      r->prev_tid,   r->next_tid,
                              r->prev_pid, r->next_pid, r->prev_state, (uint32_t)c->switch_count};
    c->switch_count++;
    return 0;
}

static int import_info(void *state, const struct asys_record *rec, uint64_t ns,
                       struct asys_err *err)
{
    (void)ns;
    (void)err;
    struct cpu_sampling *c = state;
    memcpy(&c->info, rec->data, sizeof c->info);
    size_t n = c->info.reason_length;
    if (n > rec->size - sizeof c->info || n > ASYS_CPU_SAMPLING_REASON_MAX) {
        imp_warn(c->imp, "%s: cpu sampling reason of %zu bytes ignored", c->imp->seg.member, n);
        n = 0;
    }
    memcpy(c->reason, rec->data + sizeof c->info, n);
    c->reason[n] = '\0';
    c->have_info = 1;
    return 0;
}

static int by_cpu_then_time(const void *a, const void *b)
{
    const struct sched_switch *x = a, *y = b;
    if (x->cpu != y->cpu)
        return x->cpu < y->cpu ? -1 : 1;
    if (x->ns != y->ns)
        return x->ns < y->ns ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static const char *state_after(uint32_t prev_state)
{
    if (prev_state & ASYS_TASK_DEAD_MASK)
        return "Exited";
    if (prev_state & ASYS_TASK_UNINTERRUPTIBLE)
        return "Uninterruptible";
    if ((prev_state & 0xff) == 0)
        return "Preempted"; /* still runnable (R, R+) */
    return "Waiting"; /* S, I (idle), and the stopped states */
}

/* A thread's time on one core, bounded by two of the core's switches. */
struct slice {
    uint64_t start, end;
    uint32_t cpu, pid, tid;
    uint8_t repaired; /* its switch in was missing: the start is an upper bound's guess */
    uint8_t dropped;
    const char *state_after;
};

/* Each core's consecutive switches bound the slice of the thread switched
 * in by the first (the idle task's are left out). */
static size_t slices_from_switches(const struct sched_switch *sw, size_t count,
                                   struct slice *slices, uint64_t *repaired)
{
    size_t n = 0;
    for (size_t i = 0; i + 1 < count; i++) {
        const struct sched_switch *in = &sw[i], *out = &sw[i + 1];
        if (in->cpu != out->cpu)
            continue;
        uint32_t tid = in->next_tid;
        int guessed = 0;
        if (out->prev_tid != in->next_tid) {
            (*repaired)++;
            /* A switch between them is missing (the kernel drops a tracepoint
             * event that fires inside another software event, without a LOST
             * record).  When the core had gone idle, the thread switched out
             * next is the one the lost switch brought in: it ran at most from
             * the idle start (clipped below to its last slice elsewhere).
             * Otherwise who ran is not known. */
            if (in->next_tid || !out->prev_tid)
                continue;
            tid = out->prev_tid;
            guessed = 1;
        }
        if (!tid)
            continue;
        uint32_t pid = tid == in->next_tid && in->next_pid ? in->next_pid : out->prev_pid;
        slices[n++] = (struct slice){
            in->ns, out->ns, in->cpu, pid, tid, (uint8_t)guessed, 0, state_after(out->prev_state)};
    }
    return n;
}

static int by_thread_then_end(const void *a, const void *b)
{
    const struct slice *x = *(const struct slice *const *)a, *y = *(const struct slice *const *)b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* A slice whose switch in was lost cannot have begun before the thread's
 * previous slice on any core ended: a thread that migrated from a busy core
 * to an idle one would otherwise run on both at once, which draws as
 * overlapping states.  Slices emptied by that, or overlapping a known one,
 * are dropped. */
static int clip_guessed_slices(struct slice *slices, size_t n)
{
    struct slice **order = malloc((n ? n : 1) * sizeof *order);
    if (!order)
        return -1;
    for (size_t i = 0; i < n; i++)
        order[i] = &slices[i];
    qsort(order, n, sizeof *order, by_thread_then_end);
    uint64_t ran_until = 0;
    for (size_t i = 0; i < n; i++) {
        struct slice *s = order[i];
        if (i == 0 || order[i - 1]->tid != s->tid)
            ran_until = 0;
        if (s->repaired && s->start < ran_until) {
            s->start = ran_until;
            s->dropped = s->start >= s->end;
        }
        /* nor while a slice the switches bound ran on: the guess is wrong */
        const struct slice *next = i + 1 < n ? order[i + 1] : NULL;
        if (s->repaired && next && next->tid == s->tid && !next->repaired && next->start < s->end)
            s->dropped = 1;
        if (!s->dropped && s->end > ran_until)
            ran_until = s->end;
    }
    free(order);
    return 0;
}

static int write_slices(struct cpu_sampling *c, struct asys_err *err)
{
    struct asys_importer *imp = c->imp;
    sqlite3_stmt *st = NULL;
    struct slice *slices = NULL;
    int rc = -1;
    if (c->switch_count)
        qsort(c->switches, c->switch_count, sizeof *c->switches, by_cpu_then_time);
    slices = malloc((c->switch_count ? c->switch_count : 1) * sizeof *slices);
    if (!slices) {
        asys_fail(err, "out of memory");
        goto out;
    }
    uint64_t repaired = 0; /* switches found missing */
    size_t n = slices_from_switches(c->switches, c->switch_count, slices, &repaired);
    if (repaired && clip_guessed_slices(slices, n) != 0) {
        asys_fail(err, "out of memory");
        goto out;
    }
    if (imp_prepare(imp,
                    "INSERT INTO sched_slices (cpu, pid, tid, in_tree, start_ns, end_ns, "
                    "state_after) VALUES (?,?,?,?,?,?,?)",
                    &st, err) != 0)
        goto out;
    for (size_t i = 0; i < n; i++) {
        const struct slice *s = &slices[i];
        if (s->dropped)
            continue;
        sqlite3_bind_int64(st, 1, s->cpu);
        imp_bind_optional(st, 2, s->pid, s->pid != 0);
        sqlite3_bind_int64(st, 3, s->tid);
        sqlite3_bind_int64(st, 4, s->pid != 0);
        sqlite3_bind_int64(st, 5, (int64_t)s->start);
        sqlite3_bind_int64(st, 6, (int64_t)s->end);
        sqlite3_bind_text(st, 7, s->state_after, -1, SQLITE_STATIC);
        if (imp_step(imp, st, err) != 0 ||
            (s->pid && saw_thread(imp, s->pid, s->tid, s->start, s->end, err) != 0))
            goto out;
    }
    if (repaired && imp_session_info(imp, "sched_switches_missing", NULL, (int64_t)repaired, err))
        goto out;
    rc = 0;
out:
    free(slices);
    sqlite3_finalize(st);
    return rc;
}

static int write_info(struct cpu_sampling *c, struct asys_err *err)
{
    struct asys_importer *imp = c->imp;
    const struct asys_rec_cpu_sampling_info *i = &c->info;
    sqlite3_stmt *st = NULL;
    int rc = -1;
    int cycles = i->event == ASYS_CPU_EVENT_CYCLES;
    const char *backtrace = i->backtrace == ASYS_BACKTRACE_DWARF ? "dwarf"
                            : i->backtrace == ASYS_BACKTRACE_FP  ? "fp"
                                                                 : "none";
    const char *status = i->status == ASYS_CPU_SAMPLING_RECORDED ? "recorded" : "unavailable";
    const char *scheduling = asys_sched_source_name(i->sched_source);
    if (imp_prepare(imp,
                    "INSERT INTO cpu_sampling_info (status, reason, scope, event, period, "
                    "period_unit, requested_period_cycles, nominal_mhz, backtrace, "
                    "backtrace_depth, stack_bytes, samples, lost_samples, throttled, "
                    "unwind_failed, scheduling, sched_switches, lost_switches) "
                    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    &st, err) != 0)
        goto out;
    sqlite3_bind_text(st, 1, status, -1, SQLITE_STATIC);
    if (c->reason[0])
        sqlite3_bind_text(st, 2, c->reason, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 2);
    sqlite3_bind_text(st, 3, i->scope == ASYS_SAMPLE_SYSTEM_WIDE ? "system-wide" : "process-tree",
                      -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, cycles ? "cycles" : "cpu-clock", -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 5, (int64_t)i->period);
    sqlite3_bind_text(st, 6, cycles ? "cycles" : "ns", -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 7, (int64_t)i->requested_cycles);
    sqlite3_bind_int64(st, 8, i->nominal_mhz);
    sqlite3_bind_text(st, 9, backtrace, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 10, i->backtrace_depth);
    sqlite3_bind_int64(st, 11, i->stack_bytes);
    sqlite3_bind_int64(st, 12, (int64_t)i->samples);
    sqlite3_bind_int64(st, 13, (int64_t)i->lost_samples);
    sqlite3_bind_int64(st, 14, (int64_t)i->throttled);
    sqlite3_bind_int64(st, 15, (int64_t)i->unwind_failed);
    sqlite3_bind_text(st, 16, scheduling, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 17, (int64_t)i->sched_switches);
    sqlite3_bind_int64(st, 18, (int64_t)i->lost_switches);
    if (imp_step(imp, st, err) != 0)
        goto out;
    rc = 0;
out:
    sqlite3_finalize(st);
    return rc;
}

static int sampling_finish(void *state, struct asys_err *err)
{
    struct cpu_sampling *c = state;
    if (c->have_info && write_info(c, err) != 0)
        return -1;
    return write_slices(c, err);
}

/* The scheduler's states of the sampled tree's threads; they replace OSRT's
 * estimates for those threads (the OSRT calls themselves stay).  The
 * threads are one set, built once: a subquery per estimate scanned every
 * slice (indexes come after the load), 10 s for a 607-process make. */
static const char thread_states_sql[] =
    "DELETE FROM thread_states WHERE state LIKE 'Possibly %' AND (pid, tid) IN\n"
    "  (SELECT pid, tid FROM sched_slices WHERE in_tree);\n"
    "INSERT INTO thread_states (pid, tid, state, start_ns, end_ns)\n"
    "SELECT pid, tid, 'Running', start_ns, end_ns FROM sched_slices WHERE in_tree\n"
    "UNION ALL\n"
    "SELECT pid, tid, state_after, end_ns, next_start FROM (\n"
    "  SELECT pid, tid, end_ns, state_after,\n"
    "         LEAD(start_ns) OVER (PARTITION BY pid, tid ORDER BY start_ns) AS next_start\n"
    "  FROM sched_slices WHERE in_tree)\n"
    "WHERE next_start > end_ns AND state_after <> 'Exited';\n";

static int sampling_derive(void *state, struct asys_err *err)
{
    struct cpu_sampling *c = state;
    if (!c->switch_count)
        return 0;
    return imp_exec(c->imp, thread_states_sql, err);
}

static const struct imp_record_op sampling_ops[] = {
    {ASYS_REC_CPU_SAMPLE, import_sample},
    {ASYS_REC_SCHED_SWITCH, import_switch},
    {ASYS_REC_CPU_SAMPLING_INFO, import_info},
};

const struct imp_family imp_family_cpu_sampling = {
    .name = "cpu_sampling",
    .feature = ASYS_FEATURE_CPU_SAMPLING,
    .schema = "cpu_sampling.sql",
    .ops = sampling_ops,
    .op_count = sizeof sampling_ops / sizeof sampling_ops[0],
    .init = sampling_init,
    .finish = sampling_finish,
    .derive = sampling_derive,
    .free = sampling_free,
};
