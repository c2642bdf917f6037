/* EVENT_COUNT and EVENT_STATUS records -> event_samples, event_types.  The
 * readings of one counter come in time order from one segment, so each
 * delta is the difference to the previous reading of that (event, CPU). */
#include <stdlib.h>
#include <string.h>

#include "event_catalog.h"
#include "import_family.h"

struct events {
    struct asys_importer *imp;
    sqlite3_stmt *insert_sample;
    sqlite3_stmt *insert_type;
    sqlite3_stmt *set_error;
    struct asys_u64map last;  /* event << 32 | cpu -> the previous scaled value + 1 */
    struct asys_u64map known; /* event ids in event_types */
};

static int events_init(struct asys_importer *imp, void **state, struct asys_err *err)
{
    struct events *e = calloc(1, sizeof *e);
    if (!e)
        return asys_fail(err, "out of memory");
    *state = e;
    e->imp = imp;
    asys_u64map_init(&e->last);
    asys_u64map_init(&e->known);
    if (imp_prepare(imp,
                    "INSERT INTO event_samples (ns, event, cpu, value, delta) VALUES (?,?,?,?,?)",
                    &e->insert_sample, err) != 0 ||
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
    sqlite3_finalize(e->insert_type);
    sqlite3_finalize(e->set_error);
    asys_u64map_free(&e->last);
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

static int import_count(void *state, const struct asys_record *rec, uint64_t ns,
                        struct asys_err *err)
{
    struct events *e = state;
    const struct asys_rec_event_count *r = (const void *)rec->data;
    int failed;
    if (!event_of(e, rec->arg, err, &failed))
        return failed ? -1 : 0;
    /* a multiplexed counter counted only part of the time: scale it */
    double scaled = r->running_ns && r->running_ns < r->enabled_ns
                        ? (double)r->value * (double)r->enabled_ns / (double)r->running_ns
                        : (double)r->value;
    if (!(scaled < 9e18) || ns > INT64_MAX) {
        imp_warn(e->imp, "%s: event count past 2^63; ignored", e->imp->seg.member);
        return 0;
    }
    uint64_t value = (uint64_t)scaled, key = (uint64_t)rec->arg << 32 | r->cpu;
    uint64_t *last = asys_u64map_get(&e->last, key);
    uint64_t previous = last ? *last - 1 : 0;
    if (asys_u64map_put(&e->last, key, value + 1) != 0)
        return asys_fail(err, "out of memory");
    sqlite3_stmt *st = e->insert_sample;
    sqlite3_bind_int64(st, 1, (int64_t)ns);
    sqlite3_bind_int64(st, 2, rec->arg);
    sqlite3_bind_int64(st, 3, r->cpu);
    sqlite3_bind_int64(st, 4, (int64_t)value);
    sqlite3_bind_int64(st, 5, value >= previous ? (int64_t)(value - previous) : 0);
    return imp_step(e->imp, st, err);
}

static int import_status(void *state, const struct asys_record *rec, uint64_t ns,
                         struct asys_err *err)
{
    (void)ns;
    struct events *e = state;
    const struct asys_rec_event_status *r = (const void *)rec->data;
    int failed;
    if (!event_of(e, rec->arg, err, &failed))
        return failed ? -1 : 0;
    sqlite3_bind_int64(e->set_error, 1, r->error);
    sqlite3_bind_int64(e->set_error, 2, rec->arg);
    return imp_step(e->imp, e->set_error, err);
}

static const struct imp_record_op events_ops[] = {
    {ASYS_REC_EVENT_COUNT, import_count},
    {ASYS_REC_EVENT_STATUS, import_status},
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
