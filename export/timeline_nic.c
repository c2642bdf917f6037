/* NIC metrics on the timeline: a top-level group per sampled NIC whose
 * counters moved ("NIC mlx5_0 port 1", "NIC eth0"), with one counter track
 * per metric, its unit in the name.  The receive and transmit tracks of a
 * kind share a y-axis (speed, packets, packet size, CNPs), so they can be
 * overlaid or stacked on one scale; each value holds over the interval
 * between the two readings it was made from. */
#include <stdio.h>
#include <string.h>

#include "timeline_walk.h"

struct nic_track {
    const char *metric;
    const char *name; /* the manual's words, then the unit */
    const char *axis;
    const char *unit;
};

static const struct nic_track tracks[] = {
    {"rx_speed", "Network receive speed (B/s)", "nic speed (B/s)", "B/s"},
    {"tx_speed", "Network transmit speed (B/s)", "nic speed (B/s)", "B/s"},
    {"rx_packet_size", "Network receive packet size (B)", "nic packet size (B)", "bytes"},
    {"tx_packet_size", "Network transmit packet size (B)", "nic packet size (B)", "bytes"},
    {"rx_packet_rate", "Network receive packets (packets/s)", "nic packets (packets/s)",
     "packets/s"},
    {"tx_packet_rate", "Network transmit packets (packets/s)", "nic packets (packets/s)",
     "packets/s"},
    {"rx_cnp_rate", "Network receive CNP rate (CNP/s)", "nic CNPs (CNP/s)", "CNP/s"},
    {"tx_cnp_rate", "Network transmit CNP rate (CNP/s)", "nic CNPs (CNP/s)", "CNP/s"},
    {"send_wait", "Send wait (ticks/s)", NULL, "ticks/s"},
};
#define TRACK_COUNT (sizeof tracks / sizeof tracks[0])

/* The group of device `id` (created on first use). */
static uint32_t nic_group(struct walk *w, int64_t id, const char *name, int64_t port,
                          const char *kind)
{
    char key[48], label[96];
    int n = snprintf(key, sizeof key, "nic/%lld", (long long)id);
    uint32_t row = tw_row_find(w, key, (size_t)n);
    if (row)
        return row;
    if (!strcmp(kind, "rdma"))
        snprintf(label, sizeof label, "NIC %s port %lld", name, (long long)port);
    else
        snprintf(label, sizeof label, "NIC %s", name);
    return tw_row_new(w, key, (size_t)n, 0, 0, TL_GROUP, label, 300 + (uint32_t)(id & 0xff), 0);
}

static uint32_t nic_track_row(struct walk *w, uint32_t group, int64_t id, size_t track)
{
    char key[64];
    int n = snprintf(key, sizeof key, "nic/%lld/%s", (long long)id, tracks[track].metric);
    uint32_t row = tw_row_find(w, key, (size_t)n);
    if (row)
        return row;
    struct row *g = tw_row_at(w, group);
    if (!g)
        return 0;
    return tw_counter_row_new(w, key, (size_t)n, g->lanes[0].uuid, g->sort_index,
                              tracks[track].name, (uint32_t)track + 1, tracks[track].axis,
                              tracks[track].unit);
}

static int walk_nic(struct walk *w)
{
    sqlite3_stmt *st =
        tw_prepare(w, "SELECT d.id, d.name, d.port, d.kind, m.metric, m.start_ns, m.value\n"
                      "FROM nic_metrics AS m JOIN nic_devices AS d ON d.id = m.device\n"
                      "WHERE d.active AND " IN_WINDOW("m") "\n"
                                                           "ORDER BY d.id, m.metric, m.start_ns");
    if (!st)
        return -1;
    while (!w->failed && sqlite3_step(st) == SQLITE_ROW) {
        const char *metric = (const char *)sqlite3_column_text(st, 4);
        size_t track = 0;
        while (track < TRACK_COUNT && (!metric || strcmp(tracks[track].metric, metric)))
            track++;
        if (track == TRACK_COUNT)
            continue; /* a metric this version does not draw */
        int64_t id = sqlite3_column_int64(st, 0);
        const char *name = (const char *)sqlite3_column_text(st, 1);
        const char *kind = (const char *)sqlite3_column_text(st, 3);
        uint32_t group =
            nic_group(w, id, name ? name : "?", sqlite3_column_int64(st, 2), kind ? kind : "");
        uint32_t row = group ? nic_track_row(w, group, id, track) : 0;
        if (!row ||
            tw_emit_counter(w, row, sqlite3_column_int64(st, 5), sqlite3_column_double(st, 6)) != 0)
            break;
    }
    sqlite3_finalize(st);
    return w->failed ? -1 : 0;
}

const struct tl_family tl_family_nic = {"nic_metrics", 1, walk_nic};
