/* EVENT_COUNT, EVENT_THREAD_COUNT and EVENT_STATUS records -> event_samples,
 * event_thread_samples, event_types (and the per-thread summary into
 * session_info).  The readings of one counter come in time order from one
 * segment, so each delta is the difference to the previous reading of that
 * (event, CPU) or (event, thread). */
#include <stdlib.h>
#include <string.h>

#include "event_catalog.h"
#include "import_family.h"
#include "json_util.h"

struct events {
    struct asys_importer *imp;
    sqlite3_stmt *insert_sample;
    sqlite3_stmt *insert_thread_sample;
    sqlite3_stmt *insert_type;
    sqlite3_stmt *set_error;
    struct asys_u64map last; /* event << 32 | cpu -> the previous scaled value + 1 */
    struct asys_u64map last_thread; /* event << 32 | tid -> the same per thread */
    struct asys_u64map known; /* event ids in event_types */
    /* per-CPU readings are scaled by enabled / running (system-wide only) */
    int scale_per_cpu;
};

static int events_init(struct asys_importer *imp, void **state, struct asys_err *err)
{
    struct events *e = calloc(1, sizeof *e);
    if (!e)
        return asys_fail(err, "out of memory");
    *state = e;
    e->imp = imp;
    /* A process tree's per-CPU counter is a task's: enabled while the task
     * runs on any CPU, running only on its own CPU, so running < enabled
     * means the task ran elsewhere, not that the counter was multiplexed
     * (scaling it would count the task's events once per CPU it ran on).
     * Counters of the whole system (pid -1) and a thread's own (CPU -1)
     * differ only when the kernel multiplexed them. */
    const cJSON *options = cJSON_GetObjectItemCaseSensitive(imp->manifest, "options");
    e->scale_per_cpu = !strcmp(asys_json_get_str(options, "event-sample", ""), "system-wide");
    asys_u64map_init(&e->last);
    asys_u64map_init(&e->last_thread);
    asys_u64map_init(&e->known);
    if (imp_prepare(imp,
                    "INSERT INTO event_samples (ns, event, cpu, value, delta) VALUES (?,?,?,?,?)",
                    &e->insert_sample, err) != 0 ||
        imp_prepare(imp,
                    "INSERT INTO event_thread_samples (ns, event, pid, tid, value, delta) "
                    "VALUES (?,?,?,?,?,?)",
                    &e->insert_thread_sample, err) != 0 ||
        imp_prepare(imp,
                    "INSERT OR IGNORE INTO event_types (id, grp, idx, name, description) "
                    "VALUES (?,?,?,?,?)",
                    &e->insert_type, err) != 0)
        return -1;
    return imp_prepare(imp, "UPDATE event_types SET error = ? WHERE id = ?", &e->set_error, err);
}

static void events_free(void *state)
{
    struct events *e = state;
    if (!e)
        return;
    sqlite3_finalize(e->insert_sample);
    sqlite3_finalize(e->insert_thread_sample);
    sqlite3_finalize(e->insert_type);
    sqlite3_finalize(e->set_error);
    asys_u64map_free(&e->last);
    asys_u64map_free(&e->last_thread);
    asys_u64map_free(&e->known);
    free(e);
}

/* The event of a record, named in event_types the first time; NULL (with a
 * warning) when this version does not know it. */
static const struct asys_event_def *event_of(struct events *e, unsigned id, struct asys_err *err,
                                             int *failed)
{
    const struct asys_event_def *d = asys_event_by_id(id);
    *failed = 0;
    if (!d) {
        imp_warn(e->imp, "%s: unknown event %u; record ignored", e->imp->seg.member, id);
        return NULL;
    }
    if (asys_u64map_get(&e->known, id))
        return d;
    sqlite3_stmt *st = e->insert_type;
    sqlite3_bind_int64(st, 1, d->id);
    sqlite3_bind_text(st, 2, d->group == ASYS_EVENT_CPU_CORE ? "cpu-core" : "os", -1,
                      SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, d->index);
    sqlite3_bind_text(st, 4, d->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, d->description, -1, SQLITE_STATIC);
    if (imp_step(e->imp, st, err) != 0 || asys_u64map_put(&e->known, id, 1) != 0) {
        *failed = 1;
        if (!err->kind)
            asys_fail(err, "out of memory");
        return NULL;
    }
    return d;
}

/* A reading's count, scaled (when `scale`) where the kernel multiplexed the
 * counter (it counted only part of the time); -1 past what the database
 * holds. */
static int scaled_value(struct events *e, int scale, uint64_t value, uint64_t enabled,
                        uint64_t running, uint64_t ns, uint64_t *out)
{
    double scaled = scale && running && running < enabled
                        ? (double)value * (double)enabled / (double)running
                        : (double)value;
    if (!(scaled < 9e18) || ns > INT64_MAX) {
        imp_warn(e->imp, "%s: event count past 2^63; ignored", e->imp->seg.member);
        return -1;
    }
    *out = (uint64_t)scaled;
    return 0;
}

/* The count since the previous reading of `key` in `last` (which then
 * holds `value`).  A reading below the previous one is a new counter (a
 * thread id the system gave again): all of it is new. */
static int delta_of(struct asys_u64map *last, uint64_t key, uint64_t value, uint64_t *delta,
                    struct asys_err *err)
{
    uint64_t *previous = asys_u64map_get(last, key);
    uint64_t before = previous ? *previous - 1 : 0;
    if (asys_u64map_put(last, key, value + 1) != 0)
        return asys_fail(err, "out of memory");
    *delta = value >= before ? value - before : value;
    return 0;
}

static int import_count(void *state, const struct asys_record *rec, uint64_t ns,
                        struct asys_err *err)
{
    struct events *e = state;
    const struct asys_rec_event_count *r = (const void *)rec->data;
    int failed;
    uint64_t value, delta = 0;
    if (!event_of(e, rec->arg, err, &failed))
        return failed ? -1 : 0;
    if (scaled_value(e, e->scale_per_cpu, r->value, r->enabled_ns, r->running_ns, ns, &value) != 0)
        return 0;
    if (delta_of(&e->last, (uint64_t)rec->arg << 32 | r->cpu, value, &delta, err) != 0)
        return -1;
    sqlite3_stmt *st = e->insert_sample;
    sqlite3_bind_int64(st, 1, (int64_t)ns);
    sqlite3_bind_int64(st, 2, rec->arg);
    sqlite3_bind_int64(st, 3, r->cpu);
    sqlite3_bind_int64(st, 4, (int64_t)value);
    sqlite3_bind_int64(st, 5, (int64_t)delta);
    return imp_step(e->imp, st, err);
}

static int import_thread_count(void *state, const struct asys_record *rec, uint64_t ns,
                               struct asys_err *err)
{
    struct events *e = state;
    const struct asys_rec_event_thread_count *r = (const void *)rec->data;
    int failed;
    uint64_t value, delta = 0;
    if (!event_of(e, rec->arg, err, &failed))
        return failed ? -1 : 0;
    if (!r->pid || !r->tid) {
        imp_warn(e->imp, "%s: a thread's event count without a pid or tid; ignored",
                 e->imp->seg.member);
        return 0;
    }
    if (scaled_value(e, 1, r->value, r->enabled_ns, r->running_ns, ns, &value) != 0)
        return 0;
    if (delta_of(&e->last_thread, (uint64_t)rec->arg << 32 | r->tid, value, &delta, err) != 0)
        return -1;
    sqlite3_stmt *st = e->insert_thread_sample;
    sqlite3_bind_int64(st, 1, (int64_t)ns);
    sqlite3_bind_int64(st, 2, rec->arg);
    sqlite3_bind_int64(st, 3, r->pid);
    sqlite3_bind_int64(st, 4, r->tid);
    sqlite3_bind_int64(st, 5, (int64_t)value);
    sqlite3_bind_int64(st, 6, (int64_t)delta);
    return imp_step(e->imp, st, err);
}

/* The per-thread summary: threads not followed, and why (the last errno). */
static int import_threads_status(struct events *e, const struct asys_rec_event_status *r,
                                 struct asys_err *err)
{
    if (imp_session_info(e->imp, "event_threads_not_followed", NULL, r->threads_not_followed,
                         err) != 0)
        return -1;
    return r->error ? imp_session_info(e->imp, "event_threads_error", NULL, r->error, err) : 0;
}

static int import_status(void *state, const struct asys_record *rec, uint64_t ns,
                         struct asys_err *err)
{
    (void)ns;
    struct events *e = state;
    const struct asys_rec_event_status *r = (const void *)rec->data;
    int failed;
    if (rec->arg == ASYS_EVENT_THREADS_STATUS)
        return import_threads_status(e, r, err);
    if (!event_of(e, rec->arg, err, &failed))
        return failed ? -1 : 0;
    sqlite3_bind_int64(e->set_error, 1, r->error);
    sqlite3_bind_int64(e->set_error, 2, rec->arg);
    return imp_step(e->imp, e->set_error, err);
}

static const struct imp_record_op events_ops[] = {
    {ASYS_REC_EVENT_COUNT, import_count},
    {ASYS_REC_EVENT_STATUS, import_status},
    {ASYS_REC_EVENT_THREAD_COUNT, import_thread_count},
};

const struct imp_family imp_family_events = {
    .name = "event-sampling",
    .feature = ASYS_FEATURE_EVENTS,
    .schema = "events.sql",
    .ops = events_ops,
    .op_count = sizeof events_ops / sizeof events_ops[0],
    .init = events_init,
    .free = events_free,
};
