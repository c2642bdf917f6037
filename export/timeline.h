/* The timeline an export draws: a tree of tracks (processes > threads > rows
 * per collector; PPU devices > contexts > streams > rows, as stream_pct
 * builds it) and the slices, instants and counter values on them, in an
 * order every backend can stream.  Overlapping work on one row is split into
 * lanes (extra tracks of the same name) so that every track is one stack:
 * a lane's events come in time order and its slices nest.  Events may carry
 * arguments (struct tl_args: HGTX payload, category and color; an API call's
 * result and correlation id).
 *
 * A backend (sink) implements struct tl_sink_ops; asys_timeline_walk() reads
 * the analysis database and calls it. */
#ifndef ASYS_TIMELINE_H
#define ASYS_TIMELINE_H

#include <pcre2.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "asys_error.h"

enum tl_track_kind {
    TL_PROCESS, /* a traced process (pid set) */
    TL_THREAD, /* a thread (pid, tid set), under its process; its rows under it */
    TL_GROUP, /* a top-level group without a process: a PPU device */
    TL_PLAIN, /* any other track, under a parent */
    TL_COUNTER, /* a counter series, under a parent */
};

struct tl_track {
    uint64_t uuid;
    uint64_t parent_uuid; /* 0: top level */
    enum tl_track_kind kind;
    const char *name; /* as shown in the tree: "exe (pid)", "comm (tid)", "HGGC API" */
    /* TL_PROCESS, TL_THREAD: the name without the id ("exe", "comm"), for
     * formats that show the pid or tid themselves; else NULL */
    const char *label;
    uint32_t order; /* rank among its siblings, from 1 */
    uint32_t pid; /* TL_PROCESS, TL_THREAD */
    uint32_t tid; /* TL_THREAD */
    uint32_t lane; /* 0: the row itself; n: its n-th extra lane */
    /* a total order of the tracks for backends with one number per track:
     * the ranks along the track's path, 8 bits a level */
    uint64_t sort_index;
    /* TL_COUNTER: counters of the same axis group under the same parent share
     * their y-axis (--unified-memory-scale); NULL: an axis of its own */
    const char *axis;
    /* TL_COUNTER: the unit of its values ("bytes", "ns", "%", "B/s"...) */
    const char *unit;
    /* TL_PROCESS: the parent process (0: not known) and the command line
     * (arguments joined by spaces; NULL: not known) */
    uint32_t ppid;
    const char *cmdline;
};

/* The collector an event comes from ("hggc", "hgtx", "osrt"): HGGC covers
 * the API calls and the device work (one category, so that flows between them
 * bind in consumers that match a flow to slices of its own category).  `id`
 * is small and stable for equal names within one walk (backends intern by it). */
#define TL_MAX_CATEGORIES 32
struct tl_category {
    uint32_t id; /* 0 .. TL_MAX_CATEGORIES-1 */
    const char *name;
};

/* A name: `iid` is stable for equal text (backends intern by it). */
struct tl_name {
    uint64_t iid;
    const char *text;
};

/* Flows: host API call -> device work, and dependency -> dependent work (a
 * host wait's dependency ends on the waiting API call).  A flow's id is on
 * both its ends; the timeline only names flows whose two ends it draws.
 * Consumers draw a flow from whichever of its two slices starts first
 * (Perfetto's flow tracker), so a flow ends on its destination's begin when
 * that comes after the source's begin; else ("late": a synchronizing call
 * that began before the work it waited for, device work stamped before its
 * launch call) on an instant the walk draws at the destination's end, never
 * on the destination itself, which would draw the arrow backwards. */
struct tl_flows {
    const uint64_t *out; /* start here */
    size_t out_count;
    const uint64_t *in; /* end here */
    size_t in_count;
    /* the walk's: late flows of a slice, ended on the instant at its end;
     * a sink never sees them on begin() */
    const uint64_t *late;
    size_t late_count;
    /* the slice's host flow joins a call to the only work it launched and
     * ends at the begin (formats with one flow per event use it for that) */
    int host_one_to_one;
};

/* Arguments of an event: a few named, typed values.  Events without any
 * pass NULL (most do: an HGTX range without attributes). */
enum tl_arg_type { TL_ARG_INT, TL_ARG_UINT, TL_ARG_DOUBLE, TL_ARG_STRING };
struct tl_arg {
    const char *name; /* a static identifier ("payload", "result") */
    enum tl_arg_type type;
    union {
        int64_t i;
        uint64_t u;
        double d;
        const char *s; /* valid during the call; any bytes (sinks sanitize) */
    } value;
};
#define TL_MAX_ARGS 8
struct tl_args {
    struct tl_arg items[TL_MAX_ARGS];
    size_t count;
};

struct tl_sink_ops {
    /* declared before any event of the track */
    int (*track)(void *sink, const struct tl_track *t);
    /* a slice starts; `end` is when it will end (its end() follows in order);
     * flows and args may be NULL */
    int (*begin)(void *sink, uint64_t track, int64_t start, int64_t end, struct tl_name name,
                 struct tl_category cat, const struct tl_flows *flows, const struct tl_args *args);
    /* the slice ends */
    int (*end)(void *sink, uint64_t track, int64_t ts);
    /* a point in time (an HGTX mark; the end of a slice where late flows
     * end: flows->in); flows and args may be NULL */
    int (*instant)(void *sink, uint64_t track, int64_t ts, struct tl_name name,
                   struct tl_category cat, const struct tl_flows *flows,
                   const struct tl_args *args);
    int (*counter)(void *sink, uint64_t track, int64_t ts, double value);
};

struct tl_options {
    long long filter_start, filter_end; /* absolute ns; LLONG_MIN / LLONG_MAX: open */
    const char *group_kernels; /* "base" or "hgtx" */
    const char *api_name_mode; /* "host" or "kernel" */
    pcre2_code *tables; /* source tables to draw from; NULL: all */
    int unified_memory_scale; /* memory counters of one kind share a y-axis */
    /* called every few thousand events with the share done (0..1) */
    void (*progress)(void *ctx, double done);
    void *progress_ctx;
};

struct tl_stats {
    uint64_t slices;
    uint64_t instants;
    uint64_t counter_values;
    uint64_t tracks;
    uint64_t flows;
};

/* Flow ids: distinct spaces for host->device and dependency flows, below
 * bit 63 (consumers that read ids as int64 would show them negative). */
#define TL_FLOW_HOST (1ull << 61)
#define TL_FLOW_DEPENDENCY (2ull << 61)
#define TL_FLOW_PCCL (3ull << 61) /* a PCCL operation -> a kernel it ran in */
/* a cuDNN/cuBLAS call -> the device work it launched (inside the PCCL space) */
#define TL_FLOW_ACOMPUTE (TL_FLOW_PCCL | (1ull << 60))
/* in the host space: an nvJPEG call -> its work (video_activities.id; below:
 * ppu_activities ids) */
#define TL_FLOW_VIDEO_JPEG (1ull << 60)
#define TL_FLOW_SPACE (3ull << 61)

/* Whether `table` matches --tables (NULL: every table does; timeline_rows.c). */
int tl_table_matches(pcre2_code *tables, const char *table);

int asys_timeline_walk(sqlite3 *db, const struct tl_options *opts, const struct tl_sink_ops *ops,
                       void *sink, struct tl_stats *stats, struct asys_err *err);

#endif
