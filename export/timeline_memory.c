/* Memory on the timeline: per process, the heap in use (estimated from the
 * sampled allocations), and the RSS and high-water mark the launcher read;
 * per thread, a "Heap" row with each sampled allocation as an instant (size,
 * address, the bytes it stands for, its call stack) and its free; with
 * --heap-report-interval, each row of aggregates (the allocations of a stack
 * over an interval, freed together) as one instant. */
#include <stdio.h>

#include "timeline_walk.h"

/* --unified-memory-scale: the host memory counters of a process share a y-axis. */
static const char *memory_axis(const struct walk *w)
{
    return w->o->unified_memory_scale ? "host memory (bytes)" : NULL;
}

/* The estimated bytes in use after each sampled allocation and free. */
static int walk_heap_usage(struct walk *w)
{
    sqlite3_stmt *st =
        tw_prepare(w, "WITH changes(pid, ts, delta) AS (\n"
                      "  SELECT pid, start_ns, weight_bytes FROM heap_allocations\n"
                      "  UNION ALL SELECT pid, end_ns, -weight_bytes FROM heap_allocations\n"
                      "  WHERE end_ns IS NOT NULL),\n"
                      "per_instant(pid, ts, delta) AS (\n"
                      "  SELECT pid, ts, SUM(delta) FROM changes GROUP BY pid, ts)\n"
                      "SELECT pid, ts, SUM(delta) OVER (PARTITION BY pid ORDER BY ts\n"
                      "                                 ROWS UNBOUNDED PRECEDING)\n"
                      "FROM per_instant WHERE ts <= :hi ORDER BY pid, ts");
    if (!st)
        return -1;
    while (!w->failed && sqlite3_step(st) == SQLITE_ROW) {
        uint32_t row =
            tw_process_counter(w, (uint32_t)sqlite3_column_int64(st, 0), "heap", 0, NULL,
                               "Heap memory (bytes, estimated)", 900010, memory_axis(w), "bytes");
        double bytes = sqlite3_column_double(st, 2);
        if (!row || tw_emit_counter(w, row, sqlite3_column_int64(st, 1), bytes < 0 ? 0 : bytes))
            break;
    }
    sqlite3_finalize(st);
    return w->failed ? -1 : 0;
}

static void heap_row_name(struct walk *w, int64_t sub, char *out, size_t size)
{
    (void)w;
    (void)sub;
    snprintf(out, size, "Heap");
}

/* after the OS runtime row */
static const struct tl_thread_row heap_row = {TL_RANK_HEAP, heap_row_name, 0, NULL};

static int walk_heap_events(struct walk *w)
{
    sqlite3_stmt *st = tw_prepare(
        w, "SELECT a.pid, a.tid, a.start_ns, fn.value, a.size, a.address, a.weight_bytes,\n"
           "       (SELECT group_concat(frame, ' <- ') FROM (\n"
           "          SELECT COALESCE(demangle(fs.value), printf('0x%x', f.address)) AS frame\n"
           "          FROM callchain_frames AS cf JOIN frames AS f ON f.id = cf.frame_id\n"
           "          LEFT JOIN strings AS fs ON fs.id = f.function_id\n"
           "          WHERE cf.callchain_id = a.callchain_id ORDER BY cf.level)),\n"
           "       a.end_ns, a.free_tid, ff.value, a.samples\n"
           "FROM heap_allocations AS a JOIN strings AS fn ON fn.id = a.function_id\n"
           "LEFT JOIN strings AS ff ON ff.id = a.free_function_id\n"
           "WHERE (:all OR (a.start_ns >= :lo AND a.start_ns <= :hi))\n"
           "ORDER BY a.pid, a.tid, a.start_ns, a.id");
    if (!st)
        return -1;
    struct tl_args args;
    while (!w->failed && sqlite3_step(st) == SQLITE_ROW) {
        uint32_t pid = (uint32_t)sqlite3_column_int64(st, 0);
        uint32_t row =
            tw_thread_child_row(w, pid, (uint32_t)sqlite3_column_int64(st, 1), &heap_row, 0);
        char name[160], address[32];
        int summed = sqlite3_column_type(st, 5) == SQLITE_NULL;
        if (summed)
            snprintf(name, sizeof name, "%s x%lld", (const char *)sqlite3_column_text(st, 3),
                     (long long)sqlite3_column_int64(st, 11));
        else
            snprintf(name, sizeof name, "%s %lld B", (const char *)sqlite3_column_text(st, 3),
                     (long long)sqlite3_column_int64(st, 4));
        args.count = 0;
        tw_arg_int(&args, summed ? "largest" : "size", sqlite3_column_int64(st, 4));
        if (summed) {
            tw_arg_int(&args, "samples", sqlite3_column_int64(st, 11));
        } else {
            snprintf(address, sizeof address, "0x%llx",
                     (unsigned long long)sqlite3_column_int64(st, 5));
            tw_arg_string(&args, "address", address);
        }
        tw_arg_double(&args, "bytes_estimated", sqlite3_column_double(st, 6));
        if (sqlite3_column_type(st, 7) != SQLITE_NULL)
            tw_arg_string(&args, "stack", (const char *)sqlite3_column_text(st, 7));
        if (sqlite3_column_type(st, 8) != SQLITE_NULL)
            tw_arg_int(&args, "lifetime_ns",
                       sqlite3_column_int64(st, 8) - sqlite3_column_int64(st, 2));
        if (!row || tw_emit_instant(w, row, sqlite3_column_int64(st, 2), tw_synthetic_name(w, name),
                                    tw_category(w, "heap"), &args) != 0)
            break;
    }
    sqlite3_finalize(st);
    return w->failed ? -1 : 0;
}

static int walk_heap(struct walk *w)
{
    return walk_heap_usage(w) == 0 ? walk_heap_events(w) : -1;
}

/* RSS and its high-water mark, as sampled. */
static int walk_host_memory(struct walk *w)
{
    sqlite3_stmt *st = tw_prepare(w, "SELECT pid, ns, rss_bytes, hwm_bytes FROM host_memory\n"
                                     "WHERE (:all OR (ns >= :lo AND ns <= :hi))\n"
                                     "ORDER BY pid, ns");
    if (!st)
        return -1;
    while (!w->failed && sqlite3_step(st) == SQLITE_ROW) {
        uint32_t pid = (uint32_t)sqlite3_column_int64(st, 0);
        int64_t ts = sqlite3_column_int64(st, 1);
        /* ranks in name order: Perfetto sorts a process's own tracks by name */
        uint32_t rss = tw_process_counter(w, pid, "rss", 0, NULL, "RSS (bytes)", 900012,
                                          memory_axis(w), "bytes");
        uint32_t hwm = tw_process_counter(w, pid, "hwm", 0, NULL, "High-water mark (bytes)", 900011,
                                          memory_axis(w), "bytes");
        if (!rss || !hwm || tw_emit_counter(w, rss, ts, (double)sqlite3_column_int64(st, 2)) != 0 ||
            tw_emit_counter(w, hwm, ts, (double)sqlite3_column_int64(st, 3)) != 0)
            break;
    }
    sqlite3_finalize(st);
    return w->failed ? -1 : 0;
}

const struct tl_family tl_family_heap = {"heap_allocations", 3, walk_heap};
const struct tl_family tl_family_host_memory = {"host_memory", 2, walk_host_memory};
