#include "timeline_ranks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

#define PID_SHIFT 22

/* A report's own id space: ids of different reports never meet.  Track
 * uuids count from 1 and name ids stay below 2^42, so the report's index in
 * the low bits keeps them small (a varint in every event); anything larger
 * is hashed, which keeps it apart too. */
static uint64_t mix(uint64_t id, uint32_t index)
{
    if (!id)
        return 0;
    if (id < (UINT64_C(1) << 54))
        return (id << 9) | index;
    uint64_t x = id ^ ((uint64_t)(index + 1) * UINT64_C(0x9e3779b97f4a7c15));
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return (x ^ (x >> 31)) | (UINT64_C(1) << 63);
}

static uint32_t move_id(uint32_t id, uint32_t index)
{
    return id ? id + ((index + 1) << PID_SHIFT) : 0;
}

/* Flow ids keep their space (the top four bits) and their number (below
 * 2^48); the report's index goes between. */
static uint64_t flow_id(uint64_t id, uint32_t index)
{
    return (id & ~((UINT64_C(1) << 60) - 1)) | ((uint64_t)index << 48) |
           (id & ((UINT64_C(1) << 48) - 1));
}

static int view_track(void *ctx, const struct tl_track *t)
{
    struct tl_rank_view *v = ctx;
    struct tl_track copy = *t;
    copy.uuid = mix(t->uuid, v->index);
    copy.parent_uuid = t->parent_uuid ? mix(t->parent_uuid, v->index) : 0;
    if (t->kind == TL_PROCESS || t->kind == TL_THREAD) {
        copy.pid = move_id(t->pid, v->index);
        copy.tid = move_id(t->tid, v->index);
        copy.ppid = t->kind == TL_PROCESS ? move_id(t->ppid, v->index) : t->ppid;
    }
    if (!t->parent_uuid) { /* a top level track: which rank it is, in rank order */
        snprintf(v->name, sizeof v->name, "%s: %s", v->label, t->name ? t->name : "");
        copy.name = v->name;
        if (t->label) {
            snprintf(v->label_name, sizeof v->label_name, "%s: %s", v->label, t->label);
            copy.label = v->label_name;
        }
        copy.order = (v->index + 1) * 1000 + (t->order % 1000);
        copy.sort_index = ((uint64_t)(v->index + 1) << 48) | (t->sort_index >> 16);
    }
    return v->ops->track(v->sink, &copy);
}

/* The flows of one event in the report's id space (NULL stays NULL). */
static const struct tl_flows *view_flows(struct tl_rank_view *v, const struct tl_flows *f,
                                         struct tl_flows *out)
{
    if (!f)
        return NULL;
    size_t total = f->out_count + f->in_count + f->late_count;
    if (total > v->flow_cap) {
        uint64_t *bigger = realloc(v->flows, total * sizeof *bigger);
        if (!bigger)
            return NULL;
        v->flows = bigger;
        v->flow_cap = total;
    }
    *out = *f;
    uint64_t *p = v->flows;
    const uint64_t *lists[3] = {f->out, f->in, f->late};
    size_t counts[3] = {f->out_count, f->in_count, f->late_count};
    const uint64_t **targets[3] = {&out->out, &out->in, &out->late};
    for (int k = 0; k < 3; k++) {
        *targets[k] = counts[k] ? p : NULL;
        for (size_t i = 0; i < counts[k]; i++)
            *p++ = flow_id(lists[k][i], v->index);
    }
    return out;
}

static int view_begin(void *ctx, uint64_t track, int64_t start, int64_t end, struct tl_name name,
                      struct tl_category cat, const struct tl_flows *flows,
                      const struct tl_args *args)
{
    struct tl_rank_view *v = ctx;
    struct tl_flows moved;
    name.iid = mix(name.iid, v->index);
    return v->ops->begin(v->sink, mix(track, v->index), start + v->shift_ns, end + v->shift_ns,
                         name, cat, view_flows(v, flows, &moved), args);
}

static int view_end(void *ctx, uint64_t track, int64_t ts)
{
    struct tl_rank_view *v = ctx;
    return v->ops->end(v->sink, mix(track, v->index), ts + v->shift_ns);
}

static int view_instant(void *ctx, uint64_t track, int64_t ts, struct tl_name name,
                        struct tl_category cat, const struct tl_flows *flows,
                        const struct tl_args *args)
{
    struct tl_rank_view *v = ctx;
    struct tl_flows moved;
    name.iid = mix(name.iid, v->index);
    return v->ops->instant(v->sink, mix(track, v->index), ts + v->shift_ns, name, cat,
                           view_flows(v, flows, &moved), args);
}

static int view_counter(void *ctx, uint64_t track, int64_t ts, double value)
{
    struct tl_rank_view *v = ctx;
    return v->ops->counter(v->sink, mix(track, v->index), ts + v->shift_ns, value);
}

const struct tl_sink_ops tl_rank_view_ops = {view_track, view_begin, view_end, view_instant,
                                             view_counter};

void tl_rank_view_free(struct tl_rank_view *v)
{
    free(v->flows);
    v->flows = NULL;
    v->flow_cap = 0;
}
