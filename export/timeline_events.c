/* Event sampling on the timeline (--event-sample): a counter track per
 * event and CPU under the CPU Group ("page-faults/s (CPU 0)"), and with
 * --event-sample process-tree one per event under each thread
 * ("page-faults/s").  A value is the event's rate over the interval between
 * two readings, drawn from the interval's start, so the steps show when the
 * events happened; each series ends with 0 at its last reading. */
#include <stdio.h>
#include <string.h>

#include "event_catalog.h"
#include "timeline_walk.h"

/* The interval of each reading: the previous reading of its series, in the
 * window (the rows the walk draws; a series is (event, cpu) or (event, tid)). */
#define RATES_SQL(table, series) \
    "SELECT * FROM (SELECT s.event, " series ", s.ns, s.delta,\n" \
    "    LAG(s.ns) OVER (PARTITION BY s.event, " series " ORDER BY s.ns) AS previous_ns\n" \
    "  FROM " table " AS s)\n" \
    "WHERE :all OR (ns >= :lo AND ns <= :hi)\n"

static const char *event_name(int64_t id)
{
    const struct asys_event_def *d = id > 0 && id <= 0xffff ? asys_event_by_id((unsigned)id) : NULL;
    return d ? d->name : "event";
}

/* The row of (event, cpu) under the CPU Group, created on first use. */
static uint32_t cpu_event_row(struct walk *w, int64_t event, int64_t cpu)
{
    char key[48], name[96];
    int n = snprintf(key, sizeof key, "cpu-event/%lld/%lld", (long long)event, (long long)cpu);
    uint32_t row = tw_row_find(w, key, (size_t)n);
    if (row)
        return row;
    struct row *g = tw_row_at(w, tw_cpu_group(w));
    if (!g)
        return 0;
    snprintf(name, sizeof name, "%s/s (CPU %lld)", event_name(event), (long long)cpu);
    /* after the cores' rows (rank cpu + 1) */
    uint32_t order = cpu >= 0 && cpu < 126 ? 129 + (uint32_t)cpu : 255;
    return tw_counter_row_new(w, key, (size_t)n, g->lanes[0].uuid, g->sort_index, name, order, NULL,
                              "events/s");
}

/* One reading: the rate since the previous one from there, or where a
 * series starts, the end of the previous series on that row. */
static int emit_rate(struct walk *w, uint32_t row, sqlite3_stmt *st, int64_t *last_ns,
                     uint32_t *last_row)
{
    int64_t ns = sqlite3_column_int64(st, 3);
    if (row != *last_row) {
        if (*last_row && tw_emit_counter(w, *last_row, *last_ns, 0) != 0)
            return -1;
        *last_row = row;
    }
    *last_ns = ns;
    if (sqlite3_column_type(st, 5) == SQLITE_NULL)
        return 0; /* the series' first reading: where it starts */
    int64_t previous = sqlite3_column_int64(st, 5);
    double rate =
        ns > previous ? (double)sqlite3_column_int64(st, 4) * 1e9 / (double)(ns - previous) : 0;
    return tw_emit_counter(w, row, previous, rate);
}

/* A counter track per row of `sql`'s readings, the row found by `row_of`. */
static int walk_rates(struct walk *w, const char *sql,
                      uint32_t (*row_of)(struct walk *w, sqlite3_stmt *st))
{
    sqlite3_stmt *st = tw_prepare(w, sql);
    if (!st)
        return -1;
    int64_t last_ns = 0;
    uint32_t last_row = 0;
    while (!w->failed && sqlite3_step(st) == SQLITE_ROW) {
        uint32_t row = row_of(w, st);
        if (!row || emit_rate(w, row, st, &last_ns, &last_row) != 0)
            break;
    }
    if (!w->failed && last_row)
        tw_emit_counter(w, last_row, last_ns, 0);
    sqlite3_finalize(st);
    return w->failed ? -1 : 0;
}

static uint32_t cpu_rate_row(struct walk *w, sqlite3_stmt *st)
{
    return cpu_event_row(w, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1));
}

static int walk_cpu_events(struct walk *w)
{
    return walk_rates(w, RATES_SQL("event_samples", "s.cpu, 0") "ORDER BY 1, 2, 4", cpu_rate_row);
}

static void thread_event_name(struct walk *w, int64_t sub, char *out, size_t size)
{
    (void)w;
    snprintf(out, size, "%s/s", event_name(sub));
}

/* under the thread, after its other rows */
static const struct tl_thread_row thread_event_row = {TL_RANK_EVENT_RATES, thread_event_name, 1,
                                                      "events/s"};

static uint32_t thread_rate_row(struct walk *w, sqlite3_stmt *st)
{
    return tw_thread_child_row(w, (uint32_t)sqlite3_column_int64(st, 1),
                               (uint32_t)sqlite3_column_int64(st, 2), &thread_event_row,
                               sqlite3_column_int64(st, 0));
}

static int walk_thread_events(struct walk *w)
{
    return walk_rates(w, RATES_SQL("event_thread_samples", "s.pid, s.tid") "ORDER BY 2, 3, 1, 4",
                      thread_rate_row);
}

const struct tl_family tl_family_cpu_events = {"event_samples", 1, walk_cpu_events};
const struct tl_family tl_family_thread_events = {"event_thread_samples", 1, walk_thread_events};
