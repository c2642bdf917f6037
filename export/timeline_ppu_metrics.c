/* PPU metrics on the timeline: a group per device ("PPU metrics: device 0 (NAME)",
 * after the devices' own rows in name order too),
 * a counter track per metric with its unit in the name.  The tracks of a
 * unit share a y-axis within the device, so the %-of-peak metrics can be
 * overlaid or stacked on one scale. */
#include <stdio.h>
#include <string.h>

#include "timeline_walk.h"

static uint32_t device_group(struct walk *w, int64_t device, const char *device_name)
{
    char key[48], name[160];
    int n = snprintf(key, sizeof key, "ppu-metrics/%lld", (long long)device);
    uint32_t row = tw_row_find(w, key, (size_t)n);
    if (row)
        return row;
    snprintf(name, sizeof name, "PPU metrics: device %lld (%s)", (long long)device,
             device_name ? device_name : "?");
    return tw_row_new(w, key, (size_t)n, 0, 0, TL_GROUP, name, 300 + (uint32_t)device, 0);
}

static uint32_t metric_row(struct walk *w, uint32_t group, int64_t metric_id, int64_t slot,
                           const char *metric, const char *unit)
{
    char key[48], name[320], axis[64];
    int n = snprintf(key, sizeof key, "ppu-metric/%lld", (long long)metric_id);
    uint32_t row = tw_row_find(w, key, (size_t)n);
    struct row *g = tw_row_at(w, group);
    if (row || !g)
        return row;
    snprintf(name, sizeof name, "%s (%s)", metric, unit);
    snprintf(axis, sizeof axis, "ppu metrics (%s)", unit);
    return tw_counter_row_new(w, key, (size_t)n, g->lanes[0].uuid, g->sort_index, name,
                              (uint32_t)slot + 1, axis, unit);
}

static int walk_ppu_metrics(struct walk *w)
{
    sqlite3_stmt *st =
        tw_prepare(w, "SELECT m.id, m.device, m.slot, m.name, m.unit, d.name, s.ns, s.value\n"
                      "FROM ppu_metric_samples AS s JOIN ppu_metrics AS m ON m.id = s.metric_id\n"
                      "LEFT JOIN ppu_metric_devices AS d ON d.device = m.device\n"
                      "WHERE s.value IS NOT NULL AND (:all OR (s.ns >= :lo AND s.ns <= :hi))\n"
                      "ORDER BY m.id, s.ns");
    if (!st)
        return -1;
    int64_t current = -1;
    uint32_t row = 0;
    while (!w->failed && sqlite3_step(st) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        if (id != current) {
            uint32_t group = device_group(w, sqlite3_column_int64(st, 1),
                                          (const char *)sqlite3_column_text(st, 5));
            row = group ? metric_row(w, group, id, sqlite3_column_int64(st, 2),
                                     (const char *)sqlite3_column_text(st, 3),
                                     (const char *)sqlite3_column_text(st, 4))
                        : 0;
            current = id;
        }
        if (!row ||
            tw_emit_counter(w, row, sqlite3_column_int64(st, 6), sqlite3_column_double(st, 7)) != 0)
            break;
    }
    sqlite3_finalize(st);
    return w->failed ? -1 : 0;
}

const struct tl_family tl_family_ppu_metrics = {"ppu_metric_samples", 1, walk_ppu_metrics};
