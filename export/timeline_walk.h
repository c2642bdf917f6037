/* The timeline walk's shared state and helpers (timeline_rows.c for rows,
 * lanes, names, queries and flows; timeline_threads.c for the process and
 * thread rows), and the timeline families: one per kind of rows
 * (timeline_hggc_api.c, timeline_hgtx.c, timeline_osrt.c, timeline_device.c),
 * registered in timeline.c. */
#ifndef ASYS_TIMELINE_WALK_H
#define ASYS_TIMELINE_WALK_H

#include <sqlite3.h>
#include <stdint.h>

#include "hashmap.h"
#include "timeline.h"

/* An open slice: when it ends, and the flows that end on the instant drawn
 * at its end (with the slice's name and category). */
struct open_slice {
    int64_t end;
    uint64_t *late; /* owned; NULL when none */
    size_t late_count;
    struct tl_name late_name; /* text owned when late_count */
    struct tl_category late_cat;
};

/* One stack of a row: its events come in time order and nest. */
struct lane {
    uint64_t uuid;
    int64_t last_ts;
    struct open_slice *open; /* outermost first */
    uint32_t depth;
    size_t cap;
};

/* A row: a track that receives events; its lanes are tracks of the same name. */
struct row {
    uint64_t parent;
    char *name;
    uint32_t order;
    uint64_t sort_index;
    struct lane *lanes;
    uint32_t lane_count;
    int flat; /* concurrent work: a slice inside another goes to a lane, not under it */
};

/* A flow of a slice, as the database lists it: its id and the times of the
 * slice at its other end. */
struct flow_ref {
    uint64_t id;
    int64_t start, end;
};

/* Flow ids of one slice, grown as needed (a graph launch can start thousands). */
struct id_list {
    uint64_t *ids;
    size_t count, cap;
};

struct walk;
struct activity_list;

/* A timeline family: draws the rows of one source table. */
struct tl_family {
    const char *table; /* the source table: --tables selects it, its rows count for progress */
    uint32_t events_per_row; /* for progress: events drawn per row of `table` */
    int (*walk)(struct walk *w);
};

struct walk {
    sqlite3 *db;
    const struct tl_options *o;
    const struct tl_sink_ops *ops;
    void *sink;
    struct tl_stats *stats;
    struct asys_err *err;
    uint64_t next_uuid;
    struct row *rows; /* index + 1 = the row's id in the maps below */
    size_t row_count, row_cap;
    struct asys_strmap rows_by_key; /* binary or text key -> row id */
    struct asys_u64map names; /* string id -> char * (text of the database's strings) */
    struct asys_strmap synthetic; /* text -> synthetic id - SYNTHETIC_NAME_BASE */
    struct id_list flows_out, flows_in, flows_late; /* the current slice's */
    struct flow_ref *refs; /* a cursor's rows of one key */
    size_t ref_count, ref_cap;
    uint32_t synthetic_count;
    sqlite3_stmt *string_text;
    int64_t last_name_id; /* tw_string_name's last answer */
    const char *last_name_text;
    uint64_t done, total; /* events, for progress */
    uint8_t last_row_key[25]; /* tw_thread_child_row's last answer */
    const char *counter_axis; /* the axis group of the counter row being declared */
    const char *counter_unit; /* and its unit */
    uint32_t process_ppid; /* the process row being declared: its parent, its command */
    const char *process_cmdline;
    uint32_t last_row;
    const char *categories[TL_MAX_CATEGORIES]; /* tw_category's names, by id */
    uint32_t category_count;
    /* the device activities in the window, read once for the families that
     * need them (timeline_activities.c) */
    struct activity_list *activities;
    int failed;
};

/* Whether the row `alias` is drawn (inside the window).  Without
 * --filter-time, :all short-circuits the comparisons (a fifth of an HGTX
 * walk's time otherwise); tw_prepare binds :all, :lo and :hi. */
#define IN_WINDOW(alias) "(:all OR (" alias ".end_ns >= :lo AND " alias ".start_ns <= :hi))"

/* Where a flow ends on its destination slice (tw_flow_place). */
enum flow_place { FLOW_AT_BEGIN, FLOW_AT_END, FLOW_NOWHERE };

/* rows, lanes, events */
struct row *tw_row_at(struct walk *w, uint32_t id);
/* Marks a row as concurrent work (device activities): overlapping slices,
 * one inside the other too, go to lanes of their own, never nest. */
void tw_row_set_flat(struct walk *w, uint32_t id);
int tw_fail(struct walk *w, const char *what);
int tw_sink_failed(struct walk *w);
uint32_t tw_row_new(struct walk *w, const void *key, size_t key_len, uint64_t parent,
                    uint64_t parent_sort, enum tl_track_kind kind, const char *name, uint32_t order,
                    uint32_t pid);
/* The same for a process or thread: its label (the name without the id) and tid. */
uint32_t tw_row_new_entity(struct walk *w, const void *key, size_t key_len, uint64_t parent,
                           uint64_t parent_sort, enum tl_track_kind kind, const char *name,
                           const char *label, uint32_t order, uint32_t pid, uint32_t tid);
/* A counter row whose y-axis is shared with the other counters of `axis`
 * under the same parent (NULL: its own); its values are in `unit` (NULL:
 * none given). */
uint32_t tw_counter_row_new(struct walk *w, const void *key, size_t key_len, uint64_t parent,
                            uint64_t parent_sort, const char *name, uint32_t order,
                            const char *axis, const char *unit);
uint32_t tw_row_find(struct walk *w, const void *key, size_t key_len);
/* flows and args may be NULL */
int tw_emit_slice(struct walk *w, uint32_t row_id, int64_t start, int64_t end, struct tl_name name,
                  struct tl_category cat, const struct tl_flows *flows, const struct tl_args *args);
int tw_emit_instant(struct walk *w, uint32_t row_id, int64_t ts, struct tl_name name,
                    struct tl_category cat, const struct tl_args *args);
void tw_progress(struct walk *w);
void tw_rows_finish(struct walk *w);
void tw_rows_free(struct walk *w);

/* arguments: appended while there is room (TL_MAX_ARGS) */
void tw_arg_int(struct tl_args *a, const char *name, int64_t v);
void tw_arg_uint(struct tl_args *a, const char *name, uint64_t v);
void tw_arg_double(struct tl_args *a, const char *name, double v);
void tw_arg_string(struct tl_args *a, const char *name, const char *v);

/* names */
struct tl_name tw_string_name(struct walk *w, int64_t id);
/* The category of that name (a static string), with its id. */
struct tl_category tw_category(struct walk *w, const char *name);
struct tl_name tw_synthetic_name(struct walk *w, const char *text);
void tw_names_free(struct walk *w);

/* Sorts n items of `size` bytes by cmp, a total order whose leading keys
 * are the items' first key_bytes bytes (their group: a core, a thread, a
 * stream): counted into their groups, then each group sorted unless it
 * came in order, as rows read in rowid order mostly do.  Returns the
 * sorted items: `items`, or a copy with `items` freed; when out of memory
 * `items` unsorted, and the walk failed. */
void *tw_sort_grouped(struct walk *w, void *items, size_t n, size_t size, size_t key_bytes,
                      int (*cmp)(const void *, const void *));

/* queries */
int tw_table_wanted(struct walk *w, const char *table);
sqlite3_stmt *tw_prepare(struct walk *w, const char *sql);

/* References read alongside a walk: a query of (key_a, key_b, id, start, end)
 * sorted by (key_a, key_b) like the walk's own rows, merged in one pass
 * instead of one lookup per row. */
struct ref_cursor {
    sqlite3_stmt *st; /* NULL: nothing wanted */
    int started, has_row;
    int64_t row[5]; /* the current row's columns, read once a step */
};
int tw_cursor_open(struct walk *w, struct ref_cursor *c, const char *sql);
size_t tw_cursor_refs(struct walk *w, struct ref_cursor *c, int64_t key_a, int64_t key_b);
void tw_cursor_close(struct ref_cursor *c);

/* Rows packed at import (ppu_activity_pages, hggc_api_pages: see
 * analyze/activity_pages.h), decoded instead of stepping through their
 * table. */
struct asys_page_row;
struct tw_pages {
    const char *table, *pages; /* the table, and its pages */
    int fields; /* a row's; the id first */
    int start, end; /* the fields of a row's times (the window) */
};
/* Usable when they hold every row of the table and `also` (an SQL
 * condition, NULL: none) holds. */
int tw_pages_usable(struct walk *w, const struct tw_pages *p, const char *also);
/* Each row in the window, in id order, to fn; a corrupt page fails the
 * walk.  fn returns 0, or -1 when the walk failed. */
typedef int tw_page_row_fn(struct walk *w, const struct asys_page_row *row, void *ctx);
int tw_pages_walk(struct walk *w, const struct tw_pages *p, tw_page_row_fn *fn, void *ctx);

/* flows */
int tw_ids_push(struct walk *w, struct id_list *l, uint64_t id);
void tw_refs_push(struct walk *w, uint64_t id, int64_t start, int64_t end);
/* Whether [start, end] is drawn: IN_WINDOW in C. */
int tw_in_window(const struct walk *w, int64_t start, int64_t end);
int64_t tw_clip_start(const struct walk *w, int64_t ts);
int64_t tw_clip_end(const struct walk *w, int64_t ts, int64_t start);
enum flow_place tw_flow_place(int64_t source_start, int64_t dest_start, int64_t dest_end);
void tw_flows_clear(struct walk *w);
void tw_flows_add_out(struct walk *w, uint64_t space, int64_t start);
enum flow_place tw_flows_add_in(struct walk *w, uint64_t id, int64_t source_start, int64_t start,
                                int64_t end);
struct tl_flows tw_flows_of(struct walk *w, int one_to_one);

/* The device tree (timeline_device.c): the row of a stream_pct node by key
 * (0: not in the tree), and a row of its own under a node (created on first
 * use; device summaries, HGTX projection). */
uint32_t tw_node_row(struct walk *w, const char *key);
uint32_t tw_child_row(struct walk *w, uint32_t parent, const char *suffix, const char *name,
                      uint32_t order);
/* The activities on that tree, in time order (timeline_activities.c). */
int tw_walk_activities(struct walk *w);
/* Reads the activities in the window into w->activities, once (the HGGC
 * API walk's flows need them before they are drawn); freed once drawn, or
 * by tw_activities_free. */
int tw_activities_load(struct walk *w);
/* Fills w->refs with those call `api_id` launched, in time order (calls
 * asked in rising id order; none when they are not loaded) and returns how
 * many: a merge over their calls' ids, not a second scan in SQLite. */
size_t tw_activities_launched(struct walk *w, int64_t api_id);
void tw_activities_free(struct walk *w);

/* The "CPU Group" row (timeline_cpu.c), created on first use. */
uint32_t tw_cpu_group(struct walk *w);

/* process and thread rows (timeline_threads.c) */
uint32_t tw_process_row(struct walk *w, uint32_t pid);
/* A kind of row under a thread: each family that draws per-thread rows has one. */
/* The rows under a thread, in the manual's order: what the thread did on
 * the CPU first, then the APIs it called (one list: the families' ranks
 * must not collide; a row with a sub id, an HGTX domain, adds it). */
enum tl_thread_rank {
    TL_RANK_DATA_LOSS = 0, /* first: a gap in the other rows is a loss, not a pause */
    TL_RANK_CPU_UTILIZATION = 1,
    TL_RANK_CPU_CORE = 2,
    TL_RANK_THREAD_STATE = 3,
    TL_RANK_BACKTRACE_SAMPLES = 4,
    TL_RANK_PYTHON_SAMPLES = 5,
    TL_RANK_HGGC_API = 8,
    TL_RANK_ACDNN_API = 9,
    TL_RANK_ACBLAS_API = 10,
    TL_RANK_PCCL_API = 12,
    TL_RANK_VIDEO_API = 13, /* Decode API, Encode API, JPEG API: one rank, ordered by name */
    TL_RANK_OS_RUNTIME = 14,
    TL_RANK_HGTX = 16, /* + the domain */
    TL_RANK_FAILED_ALLOCATIONS = 96,
    TL_RANK_HGTX_LOCKS = 112,
    TL_RANK_HEAP = 128,
    TL_RANK_EVENT_RATES = 160,
};

struct tl_thread_row {
    uint32_t order; /* enum tl_thread_rank; a row with a sub id adds (sub & 0xff) */
    /* the row's name for sub id `sub` (an HGTX domain...); called once per row */
    void (*name)(struct walk *w, int64_t sub, char *out, size_t size);
    int counter; /* a counter row (TL_COUNTER), not slices */
    const char *unit; /* a counter row's unit */
};
/* The row of `kind` (and sub id) under thread (pid, tid), created on first use. */
uint32_t tw_thread_child_row(struct walk *w, uint32_t pid, uint32_t tid,
                             const struct tl_thread_row *kind, int64_t sub);
/* A counter row under process `pid`, keyed by (key_kind, key_id, field) and
 * created on first use (0 when it cannot be), and one value on it (clamped
 * to the window's start). */
uint32_t tw_process_counter(struct walk *w, uint32_t pid, const char *key_kind, int64_t key_id,
                            const char *field, const char *name, uint32_t order, const char *axis,
                            const char *unit);
int tw_emit_counter(struct walk *w, uint32_t row, int64_t ts, double value);

#endif
