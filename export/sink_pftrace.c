/* Perfetto's native format: a Trace is repeated TracePacket (field 1).  Field
 * numbers from Perfetto's published protos (trace_packet, track_descriptor,
 * track_event, debug_annotation, interned_data, clock_snapshot).
 *
 * Track descriptors go on sequence 1.  Every track that has events gets a
 * sequence of its own: its first packet clears the incremental state, sets
 * the track as the default of its events and defines clock 64 as an
 * incremental clock over CLOCK_MONOTONIC, so each event's timestamp is a small
 * delta; event names, categories and argument names are interned per
 * sequence.  Arguments are debug annotations (trace_processor's args table,
 * keys "debug.NAME").
 *
 * How trace_processor reads the tree (track_event_tracker.cc at ec5d16b):
 *  - a process is a track with a ProcessDescriptor, a thread one with a
 *    ThreadDescriptor (pid, tid, name: thread_track and thread_slice see its
 *    rows);
 *  - a child of a process or thread track is not nested under it but becomes
 *    a top-level track of that process or thread, ordered by name: a thread's
 *    rows therefore hang under a plain track of the thread's name ("nest"),
 *    which orders them explicitly;
 *  - processes and threads are ordered by their rank only when the root
 *    descriptor (uuid 0) asks for it (process_ordering, thread_ordering);
 *  - sibling tracks of one name are merged unless sibling_merge_behavior is
 *    NONE: every track here is one stack (a row, or a lane of it) and says so;
 *  - the clock snapshot relates CLOCK_MONOTONIC (the events' clock) to
 *    CLOCK_BOOTTIME with the offset the launcher read at the start: without
 *    it trace_processor counts clock_sync_unrelatable_clock_domains (an
 *    error) on every load; a report without that offset (older asys)
 *    claims MONOTONIC only, never a made-up BOOTTIME. */
#include "sink_pftrace.h"

#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "out_file.h"
#include "output_format.h"
#include "protobuf.h"

enum {
    /* Trace */
    F_TRACE_PACKET = 1,
    /* TracePacket */
    F_CLOCK_SNAPSHOT = 6,
    F_TIMESTAMP = 8,
    F_SEQUENCE_ID = 10,
    F_TRACK_EVENT = 11,
    F_INTERNED_DATA = 12,
    F_SEQUENCE_FLAGS = 13,
    F_TIMESTAMP_CLOCK_ID = 58,
    F_PACKET_DEFAULTS = 59,
    F_TRACK_DESCRIPTOR = 60,
    /* TracePacketDefaults */
    F_DEFAULTS_CLOCK_ID = 58,
    F_DEFAULTS_TRACK_EVENT = 11,
    /* TrackEventDefaults */
    F_DEFAULT_TRACK_UUID = 11,
    /* ClockSnapshot, Clock */
    F_SNAPSHOT_CLOCKS = 1,
    F_SNAPSHOT_PRIMARY = 2,
    F_CLOCK_ID = 1,
    F_CLOCK_TIMESTAMP = 2,
    F_CLOCK_INCREMENTAL = 3,
    /* TrackDescriptor */
    F_TD_UUID = 1,
    F_TD_NAME = 2,
    F_TD_PROCESS = 3,
    F_TD_THREAD = 4,
    F_TD_PARENT = 5,
    F_TD_COUNTER = 8,
    F_CD_UNIT = 3, /* CounterDescriptor */
    F_CD_UNIT_NAME = 6,
    F_CD_Y_AXIS_SHARE_KEY = 7,
    F_TD_CHILD_ORDERING = 11,
    F_TD_SIBLING_RANK = 12,
    F_TD_SIBLING_MERGE = 15,
    F_TD_PROCESS_ORDERING = 19,
    F_TD_THREAD_ORDERING = 20,
    /* ProcessDescriptor */
    F_PD_PID = 1,
    F_PD_CMDLINE = 2,
    F_PD_NAME = 6,
    /* TracePacket.process_tree; ProcessTree.processes: Process */
    F_PROCESS_TREE = 3,
    F_PT_PROCESSES = 1,
    F_PTP_PID = 1,
    F_PTP_PPID = 2,
    F_PTP_CMDLINE = 3,
    /* ThreadDescriptor */
    F_THD_PID = 1,
    F_THD_TID = 2,
    F_THD_NAME = 5,
    /* TrackEvent */
    F_TE_CATEGORY_IIDS = 3,
    F_TE_DEBUG_ANNOTATIONS = 4,
    F_TE_TYPE = 9,
    F_TE_NAME_IID = 10,
    F_TE_COUNTER_DOUBLE = 44,
    F_TE_FLOW_IDS = 47,
    F_TE_TERMINATING_FLOW_IDS = 48,
    /* DebugAnnotation */
    F_DA_NAME_IID = 1,
    F_DA_UINT = 3,
    F_DA_INT = 4,
    F_DA_DOUBLE = 5,
    F_DA_STRING = 6,
    F_DA_NAME = 10,
    /* InternedData, EventName / EventCategory / DebugAnnotationName */
    F_ID_CATEGORIES = 1,
    F_ID_NAMES = 2,
    F_ID_ARG_NAMES = 3,
    F_IID = 1,
    F_INTERNED_NAME = 2,
};

enum { TYPE_BEGIN = 1, TYPE_END = 2, TYPE_INSTANT = 3, TYPE_COUNTER = 4 };
enum { CLOCK_MONOTONIC_ID = 3, CLOCK_BOOTTIME_ID = 6, CLOCK_INCREMENTAL_ID = 64 };
enum { SEQ_INCREMENTAL_STATE_CLEARED = 1 };
enum { CHILD_ORDERING_EXPLICIT = 3, SIBLING_MERGE_NONE = 2 };
enum { PROCESS_ORDERING_EXPLICIT = 1, THREAD_ORDERING_EXPLICIT = 1 };
#define DESCRIPTOR_SEQUENCE 1
/* The uuid of a thread's nest track (the walk's uuids are small counts). */
#define NEST_UUID(uuid) ((uuid) | (1ull << 62))
/* Argument names interned per sequence: the first 64 (then written as text). */
#define INTERNED_ARG_NAMES 64

/* A track's sequence: incremental clock and interning state. */
struct sequence {
    uint32_t id;
    int64_t last_ts;
    struct asys_u64map names; /* name iids defined on this sequence */
    uint64_t last_name; /* the iid defined or used last (runs of one name) */
    uint32_t categories; /* bit per defined category */
    uint64_t arg_names; /* bit per defined argument name (iid - 1) */
};

#define FLUSH_AT (1u << 20)
#define ARG_NAME_CACHE 31 /* slots: a prime, text addresses are aligned */

struct asys_pftrace_sink {
    FILE *out;
    int64_t start_ns; /* for the first clock snapshot */
    int64_t boottime_offset;
    int has_boottime;
    uint32_t next_sequence;
    struct asys_u64map sequences; /* track uuid -> struct sequence * */
    uint64_t last_track; /* sequences' last answer */
    struct sequence *last_sequence;
    struct pb_buf out_buf; /* whole packets waiting to be written */
    struct pb_buf packet, inner, inner2, text;
    struct asys_u64map threads; /* uuid of a thread track -> 1 (its rows go under its nest) */
    struct asys_strmap arg_names; /* argument name -> iid */
    uint32_t arg_name_count;
    /* argument names met, by where their text is (arg_name_iid) */
    struct {
        const char *at;
        char text[24];
        uint32_t iid;
    } recent_args[ARG_NAME_CACHE];
    int clock_written;
    int failed;
};

struct asys_pftrace_sink *asys_pftrace_sink_new(FILE *out, int64_t start_ns)
{
    struct asys_pftrace_sink *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->out = out;
    s->start_ns = start_ns;
    s->next_sequence = DESCRIPTOR_SEQUENCE + 1;
    asys_u64map_init(&s->sequences);
    asys_u64map_init(&s->threads);
    asys_strmap_init(&s->arg_names);
    return s;
}

void asys_pftrace_sink_free(struct asys_pftrace_sink *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->sequences.capacity; i++)
        if (s->sequences.used[i]) {
            struct sequence *q = (struct sequence *)(uintptr_t)s->sequences.values[i];
            asys_u64map_free(&q->names);
            free(q);
        }
    asys_u64map_free(&s->sequences);
    asys_u64map_free(&s->threads);
    asys_strmap_free(&s->arg_names);
    pb_free(&s->packet);
    pb_free(&s->inner);
    pb_free(&s->inner2);
    pb_free(&s->out_buf);
    pb_free(&s->text);
    free(s);
}

/* A string field with valid UTF-8 (protobuf strings must be): each byte that
 * does not start a valid sequence becomes U+FFFD, as in the JSON export. */
static void put_text(struct asys_pftrace_sink *s, struct pb_buf *b, uint32_t field,
                     const char *text)
{
    const unsigned char *p = (const unsigned char *)text;
    size_t len = strlen(text), i = 0;
    while (i < len && p[i] < 0x80)
        i++;
    if (i == len) {
        pb_bytes(b, field, text, len);
        return;
    }
    static const unsigned char replacement[] = {0xef, 0xbf, 0xbd};
    struct pb_buf *clean = &s->text;
    pb_reset(clean);
    pb_raw(clean, p, i);
    while (i < len) {
        size_t n = asys_utf8_sequence(p + i, len - i);
        if (n)
            pb_raw(clean, p + i, n);
        else
            pb_raw(clean, replacement, sizeof replacement);
        i += n ? n : 1;
    }
    pb_bytes(b, field, clean->data, clean->len);
}

/* Writes out what is waiting (all of it, or once there is enough). */
static int write_out(struct asys_pftrace_sink *s, int all)
{
    struct pb_buf *b = &s->out_buf;
    if (b->oom)
        s->failed = 1;
    if (!s->failed && (all || b->len >= FLUSH_AT) && b->len &&
        asys_out_write(s->out, b->data, b->len) != 0)
        s->failed = 1;
    if (all || b->len >= FLUSH_AT)
        pb_reset(b);
    return s->failed ? -1 : 0;
}

/* Queues s->packet as one Trace.packet. */
static int flush_packet(struct asys_pftrace_sink *s)
{
    pb_message(&s->out_buf, F_TRACE_PACKET, &s->packet);
    pb_reset(&s->packet);
    return write_out(s, 0);
}

int asys_pftrace_sink_finish(struct asys_pftrace_sink *s)
{
    return write_out(s, 1);
}

void asys_pftrace_sink_set_boottime(struct asys_pftrace_sink *s, int64_t boottime_minus_monotonic)
{
    s->boottime_offset = boottime_minus_monotonic;
    s->has_boottime = 1;
}

/* The trace's clock: CLOCK_MONOTONIC, what asys records, and CLOCK_BOOTTIME
 * beside it when the recording read their offset.  Then the root descriptor
 * (uuid 0): processes and threads in the order of their ranks. */
static int write_trace_start(struct asys_pftrace_sink *s)
{
    s->clock_written = 1;
    struct pb_buf *snapshot = &s->inner, *clock = &s->inner2;
    pb_reset(snapshot);
    pb_reset(clock);
    pb_uint(clock, F_CLOCK_ID, CLOCK_MONOTONIC_ID);
    pb_uint(clock, F_CLOCK_TIMESTAMP, (uint64_t)s->start_ns);
    pb_message(snapshot, F_SNAPSHOT_CLOCKS, clock);
    if (s->has_boottime) {
        pb_reset(clock);
        pb_uint(clock, F_CLOCK_ID, CLOCK_BOOTTIME_ID);
        pb_uint(clock, F_CLOCK_TIMESTAMP, (uint64_t)(s->start_ns + s->boottime_offset));
        pb_message(snapshot, F_SNAPSHOT_CLOCKS, clock);
    }
    pb_uint(snapshot, F_SNAPSHOT_PRIMARY, CLOCK_MONOTONIC_ID);
    pb_uint(&s->packet, F_SEQUENCE_ID, DESCRIPTOR_SEQUENCE);
    pb_message(&s->packet, F_CLOCK_SNAPSHOT, snapshot);
    if (flush_packet(s) != 0)
        return -1;
    struct pb_buf *d = &s->inner;
    pb_reset(d);
    pb_uint(d, F_TD_UUID, 0);
    pb_uint(d, F_TD_PROCESS_ORDERING, PROCESS_ORDERING_EXPLICIT);
    pb_uint(d, F_TD_THREAD_ORDERING, THREAD_ORDERING_EXPLICIT);
    pb_uint(&s->packet, F_SEQUENCE_ID, DESCRIPTOR_SEQUENCE);
    pb_message(&s->packet, F_TRACK_DESCRIPTOR, d);
    return flush_packet(s);
}

/* Queues the descriptor in s->inner as a packet. */
static int descriptor_packet(struct asys_pftrace_sink *s)
{
    pb_uint(&s->packet, F_SEQUENCE_ID, DESCRIPTOR_SEQUENCE);
    pb_message(&s->packet, F_TRACK_DESCRIPTOR, &s->inner);
    return flush_packet(s);
}

/* A track of the tree: a row, a lane, a group, a counter (one stack each:
 * never merged with a sibling of the same name). */
/* CounterDescriptor.Unit of the units Perfetto knows; 0: say it by name */
enum { UNIT_TIME_NS = 1, UNIT_SIZE_BYTES = 3 };

static int known_unit(const char *unit)
{
    return !strcmp(unit, "bytes") ? UNIT_SIZE_BYTES : !strcmp(unit, "ns") ? UNIT_TIME_NS : 0;
}

static void plain_descriptor(struct asys_pftrace_sink *s, uint64_t uuid, uint64_t parent,
                             const char *name, int counter, const char *axis, const char *unit,
                             uint32_t rank)
{
    struct pb_buf *d = &s->inner;
    pb_reset(d);
    pb_uint(d, F_TD_UUID, uuid);
    if (parent)
        pb_uint(d, F_TD_PARENT, asys_u64map_get(&s->threads, parent) ? NEST_UUID(parent) : parent);
    put_text(s, d, F_TD_NAME, name);
    if (counter) {
        pb_reset(&s->inner2);
        if (axis) /* counters of one key under one parent share their y-axis */
            pb_string(&s->inner2, F_CD_Y_AXIS_SHARE_KEY, axis);
        if (unit && known_unit(unit))
            pb_uint(&s->inner2, F_CD_UNIT, (uint64_t)known_unit(unit));
        else if (unit)
            pb_string(&s->inner2, F_CD_UNIT_NAME, unit);
        pb_message(d, F_TD_COUNTER, &s->inner2); /* else an empty CounterDescriptor */
    } else {
        pb_uint(d, F_TD_CHILD_ORDERING, CHILD_ORDERING_EXPLICIT);
    }
    pb_sint(d, F_TD_SIBLING_RANK, (int64_t)rank);
    pb_uint(d, F_TD_SIBLING_MERGE, SIBLING_MERGE_NONE);
}

/* The process's parent, which only a ProcessTree says (trace_processor's
 * process.parent_upid), with its command line. */
static int process_tree_packet(struct asys_pftrace_sink *s, const struct tl_track *t)
{
    struct pb_buf *tree = &s->inner, *process = &s->inner2;
    pb_reset(tree);
    pb_reset(process);
    pb_uint(process, F_PTP_PID, t->pid);
    pb_uint(process, F_PTP_PPID, t->ppid);
    if (t->cmdline)
        put_text(s, process, F_PTP_CMDLINE, t->cmdline);
    pb_message(tree, F_PT_PROCESSES, process);
    pb_uint(&s->packet, F_TIMESTAMP, (uint64_t)s->start_ns);
    pb_uint(&s->packet, F_TIMESTAMP_CLOCK_ID, CLOCK_MONOTONIC_ID);
    pb_uint(&s->packet, F_SEQUENCE_ID, DESCRIPTOR_SEQUENCE);
    pb_message(&s->packet, F_PROCESS_TREE, tree);
    return flush_packet(s);
}

static int track(void *sink, const struct tl_track *t)
{
    struct asys_pftrace_sink *s = sink;
    if (!s->clock_written && write_trace_start(s) != 0)
        return -1;
    struct pb_buf *d = &s->inner, *sub = &s->inner2;
    const char *label = t->label ? t->label : t->name;
    if (t->kind == TL_PROCESS) {
        /* the UI shows the pid after the process name: the name alone */
        pb_reset(d);
        pb_uint(d, F_TD_UUID, t->uuid);
        put_text(s, d, F_TD_NAME, t->name);
        pb_reset(sub);
        pb_uint(sub, F_PD_PID, t->pid);
        if (t->cmdline)
            put_text(s, sub, F_PD_CMDLINE, t->cmdline);
        put_text(s, sub, F_PD_NAME, label);
        pb_message(d, F_TD_PROCESS, sub);
        pb_sint(d, F_TD_SIBLING_RANK, (int64_t)t->order);
        if (descriptor_packet(s) != 0)
            return -1;
        return t->ppid ? process_tree_packet(s, t) : 0;
    }
    if (t->kind == TL_THREAD) {
        pb_reset(d);
        pb_uint(d, F_TD_UUID, t->uuid);
        if (t->parent_uuid)
            pb_uint(d, F_TD_PARENT, t->parent_uuid);
        put_text(s, d, F_TD_NAME, t->name);
        pb_reset(sub);
        pb_uint(sub, F_THD_PID, t->pid);
        pb_uint(sub, F_THD_TID, t->tid);
        put_text(s, sub, F_THD_NAME, label);
        pb_message(d, F_TD_THREAD, sub);
        pb_sint(d, F_TD_SIBLING_RANK, (int64_t)t->order);
        if (descriptor_packet(s) != 0)
            return -1;
        /* its rows go under a plain track of its name: nested and ordered */
        plain_descriptor(s, NEST_UUID(t->uuid), t->uuid, t->name, 0, NULL, NULL, 1);
        if (asys_u64map_put(&s->threads, t->uuid, 1) != 0) {
            s->failed = 1;
            return -1;
        }
        return descriptor_packet(s);
    }
    plain_descriptor(s, t->uuid, t->parent_uuid, t->name, t->kind == TL_COUNTER, t->axis, t->unit,
                     t->order);
    return descriptor_packet(s);
}

/* The sequence of `uuid`, started at `ts` on first use. */
static struct sequence *sequence_of(struct asys_pftrace_sink *s, uint64_t uuid, int64_t ts)
{
    if (s->last_sequence && s->last_track == uuid)
        return s->last_sequence;
    uint64_t *found = asys_u64map_get(&s->sequences, uuid);
    if (found) {
        s->last_track = uuid;
        s->last_sequence = (struct sequence *)(uintptr_t)*found;
        return s->last_sequence;
    }
    struct sequence *q = calloc(1, sizeof *q);
    if (!q || asys_u64map_put(&s->sequences, uuid, (uint64_t)(uintptr_t)q) != 0) {
        free(q);
        s->failed = 1;
        return NULL;
    }
    asys_u64map_init(&q->names);
    q->id = s->next_sequence++;
    q->last_ts = ts;
    /* defaults, then the incremental clock anchored at ts on CLOCK_MONOTONIC */
    struct pb_buf *defaults = &s->inner, *te = &s->inner2;
    pb_reset(te);
    pb_uint(te, F_DEFAULT_TRACK_UUID, uuid);
    pb_reset(defaults);
    pb_uint(defaults, F_DEFAULTS_CLOCK_ID, CLOCK_INCREMENTAL_ID);
    pb_message(defaults, F_DEFAULTS_TRACK_EVENT, te);
    pb_uint(&s->packet, F_SEQUENCE_ID, q->id);
    pb_uint(&s->packet, F_SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
    pb_message(&s->packet, F_PACKET_DEFAULTS, defaults);
    pb_uint(&s->packet, F_TIMESTAMP, (uint64_t)ts);
    pb_uint(&s->packet, F_TIMESTAMP_CLOCK_ID, CLOCK_MONOTONIC_ID);
    struct pb_buf *snapshot = &s->inner, *clock = &s->inner2;
    pb_reset(snapshot);
    pb_reset(clock);
    pb_uint(clock, F_CLOCK_ID, CLOCK_INCREMENTAL_ID);
    pb_uint(clock, F_CLOCK_TIMESTAMP, (uint64_t)ts);
    pb_uint(clock, F_CLOCK_INCREMENTAL, 1);
    pb_message(snapshot, F_SNAPSHOT_CLOCKS, clock);
    pb_reset(clock);
    pb_uint(clock, F_CLOCK_ID, CLOCK_MONOTONIC_ID);
    pb_uint(clock, F_CLOCK_TIMESTAMP, (uint64_t)ts);
    pb_message(snapshot, F_SNAPSHOT_CLOCKS, clock);
    pb_message(&s->packet, F_CLOCK_SNAPSHOT, snapshot);
    if (flush_packet(s) != 0)
        return NULL;
    s->last_track = uuid;
    s->last_sequence = q;
    return q;
}

/* Starts an event packet in place: the delta timestamp and the sequence.
 * Returns where the packet's content begins (for pb_close). */
static size_t packet_open(struct asys_pftrace_sink *s, struct sequence *q, int64_t ts)
{
    size_t packet = pb_open(&s->out_buf, F_TRACE_PACKET);
    pb_uint(&s->out_buf, F_TIMESTAMP, (uint64_t)(ts - q->last_ts));
    q->last_ts = ts;
    pb_uint(&s->out_buf, F_SEQUENCE_ID, q->id);
    return packet;
}

static int packet_close(struct asys_pftrace_sink *s, size_t packet)
{
    pb_close(&s->out_buf, packet);
    return write_out(s, 0);
}

/* The iid of an argument name (1, 2, ...), given on first use.  Names are
 * mostly the same few literals: a slot per text address, checked with
 * strcmp (the text at an address may change), spares hashing each. */
static uint32_t arg_name_iid(struct asys_pftrace_sink *s, const char *name)
{
    size_t slot = (uintptr_t)name % ARG_NAME_CACHE;
    if (s->recent_args[slot].at == name && !strcmp(s->recent_args[slot].text, name))
        return s->recent_args[slot].iid;
    size_t len = strlen(name);
    uint32_t iid = asys_strmap_get(&s->arg_names, name, len);
    if (!iid) {
        iid = ++s->arg_name_count;
        if (asys_strmap_put(&s->arg_names, name, len, iid) != 0)
            s->failed = 1;
    }
    if (len < sizeof s->recent_args[slot].text) {
        s->recent_args[slot].at = name;
        memcpy(s->recent_args[slot].text, name, len + 1);
        s->recent_args[slot].iid = iid;
    }
    return iid;
}

/* Interns a name, a category and argument names on the sequence:
 * interned_data when one is new.  iids[i]: argument i's name iid, 0 when it
 * goes as text. */
static void intern(struct asys_pftrace_sink *s, struct sequence *q, struct tl_name name,
                   struct tl_category cat, const struct tl_args *args, uint32_t *iids)
{
    int new_name = q->last_name != name.iid && !asys_u64map_get(&q->names, name.iid);
    int new_category = !(q->categories & (1u << cat.id));
    uint64_t new_args = 0;
    for (size_t i = 0; args && i < args->count; i++) {
        iids[i] = arg_name_iid(s, args->items[i].name);
        if (iids[i] > INTERNED_ARG_NAMES)
            iids[i] = 0;
        else if (!(q->arg_names & (1ull << (iids[i] - 1))))
            new_args |= 1ull << (iids[i] - 1);
    }
    q->last_name = name.iid;
    if (!new_name && !new_category && !new_args)
        return;
    struct pb_buf *b = &s->out_buf;
    size_t data = pb_open(b, F_INTERNED_DATA);
    if (new_name) {
        if (asys_u64map_put(&q->names, name.iid, 1) != 0)
            s->failed = 1;
        size_t entry = pb_open(b, F_ID_NAMES);
        pb_uint(b, F_IID, name.iid);
        put_text(s, b, F_INTERNED_NAME, name.text);
        pb_close(b, entry);
    }
    if (new_category) {
        q->categories |= 1u << cat.id;
        size_t entry = pb_open(b, F_ID_CATEGORIES);
        pb_uint(b, F_IID, (uint64_t)cat.id + 1);
        pb_string(b, F_INTERNED_NAME, cat.name);
        pb_close(b, entry);
    }
    for (size_t i = 0; new_args && i < args->count; i++) {
        uint64_t bit = iids[i] ? 1ull << (iids[i] - 1) : 0;
        if (!(new_args & bit))
            continue;
        new_args &= ~bit;
        q->arg_names |= bit;
        size_t entry = pb_open(b, F_ID_ARG_NAMES);
        pb_uint(b, F_IID, iids[i]);
        put_text(s, b, F_INTERNED_NAME, args->items[i].name);
        pb_close(b, entry);
    }
    pb_close(b, data);
}

/* The event's arguments as debug annotations. */
static void put_args(struct asys_pftrace_sink *s, const struct tl_args *args, const uint32_t *iids)
{
    struct pb_buf *b = &s->out_buf;
    for (size_t i = 0; args && i < args->count; i++) {
        const struct tl_arg *a = &args->items[i];
        size_t entry = pb_open(b, F_TE_DEBUG_ANNOTATIONS);
        if (iids[i])
            pb_uint(b, F_DA_NAME_IID, iids[i]);
        else
            put_text(s, b, F_DA_NAME, a->name);
        switch (a->type) {
        case TL_ARG_INT:
            pb_sint(b, F_DA_INT, a->value.i);
            break;
        case TL_ARG_UINT:
            pb_uint(b, F_DA_UINT, a->value.u);
            break;
        case TL_ARG_DOUBLE:
            pb_double(b, F_DA_DOUBLE, a->value.d);
            break;
        case TL_ARG_STRING:
            put_text(s, b, F_DA_STRING, a->value.s);
            break;
        }
        pb_close(b, entry);
    }
}

/* A BEGIN or INSTANT event with its name, category, arguments and flows. */
static int named_event(struct asys_pftrace_sink *s, uint64_t track, int64_t ts, int type,
                       struct tl_name name, struct tl_category cat, const struct tl_flows *flows,
                       const struct tl_args *args)
{
    struct sequence *q = sequence_of(s, track, ts);
    if (!q)
        return -1;
    struct pb_buf *b = &s->out_buf;
    size_t packet = packet_open(s, q, ts);
    uint32_t iids[TL_MAX_ARGS];
    intern(s, q, name, cat, args, iids);
    size_t te = pb_open(b, F_TRACK_EVENT);
    pb_uint(b, F_TE_CATEGORY_IIDS, (uint64_t)cat.id + 1);
    pb_uint(b, F_TE_TYPE, (uint64_t)type);
    pb_uint(b, F_TE_NAME_IID, name.iid);
    put_args(s, args, iids);
    for (size_t i = 0; flows && i < flows->out_count; i++)
        pb_fixed64(b, F_TE_FLOW_IDS, flows->out[i]);
    for (size_t i = 0; flows && i < flows->in_count; i++)
        pb_fixed64(b, F_TE_TERMINATING_FLOW_IDS, flows->in[i]);
    pb_close(b, te);
    return packet_close(s, packet);
}

static int begin(void *sink, uint64_t track, int64_t start, int64_t end, struct tl_name name,
                 struct tl_category cat, const struct tl_flows *flows, const struct tl_args *args)
{
    (void)end; /* END comes as its own event */
    return named_event(sink, track, start, TYPE_BEGIN, name, cat, flows, args);
}

/* Starts an event of type `type` without a name (END, COUNTER) in place:
 * returns where its packet begins and sets *te, or 0 on failure. */
static size_t unnamed_event_open(struct asys_pftrace_sink *s, uint64_t track, int64_t ts, int type,
                                 size_t *te)
{
    struct sequence *q = sequence_of(s, track, ts);
    if (!q)
        return 0;
    size_t packet = packet_open(s, q, ts);
    *te = pb_open(&s->out_buf, F_TRACK_EVENT);
    pb_uint(&s->out_buf, F_TE_TYPE, (uint64_t)type);
    return packet;
}

static int unnamed_event_close(struct asys_pftrace_sink *s, size_t packet, size_t te)
{
    pb_close(&s->out_buf, te);
    return packet_close(s, packet);
}

static int end(void *sink, uint64_t track, int64_t ts)
{
    /* no flows here: trace_processor binds them to the slice this ends,
     * which began before them */
    struct asys_pftrace_sink *s = sink;
    size_t te, packet = unnamed_event_open(s, track, ts, TYPE_END, &te);
    if (!packet)
        return -1;
    return unnamed_event_close(s, packet, te);
}

static int instant(void *sink, uint64_t track, int64_t ts, struct tl_name name,
                   struct tl_category cat, const struct tl_flows *flows, const struct tl_args *args)
{
    return named_event(sink, track, ts, TYPE_INSTANT, name, cat, flows, args);
}

static int counter(void *sink, uint64_t track, int64_t ts, double value)
{
    struct asys_pftrace_sink *s = sink;
    size_t te, packet = unnamed_event_open(s, track, ts, TYPE_COUNTER, &te);
    if (!packet)
        return -1;
    pb_double(&s->out_buf, F_TE_COUNTER_DOUBLE, value);
    return unnamed_event_close(s, packet, te);
}

const struct tl_sink_ops asys_pftrace_sink_ops = {track, begin, end, instant, counter};
