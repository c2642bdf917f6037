/* NIC_DEVICE, NIC_SAMPLE and NIC_RATE records -> nic_devices, nic_metrics,
 * session_info.  A device's samples come in time order from the launcher's
 * one segment: each sample after the first makes the rates over the
 * interval since the previous one.  A counter that went down wrapped or was
 * reset (schema/FORMAT.md says which is taken when); one that jumped further
 * than the link can carry is taken as a reset too, counted, and its interval
 * left out (a flipping or rewritten counter must not read as 10^20 B/s).
 * Devices whose counters
 * never moved keep their nic_devices row (active = 0) and lose their rows of
 * zeros at derive. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "import_family.h"

struct nic_device {
    int defined;
    unsigned kind;
    uint32_t mask;
    uint64_t samples, wraps, resets;
    uint32_t speed_mbps; /* 0: unknown */
    int active;
    uint64_t last_ns;
    uint32_t last_mask; /* the counters of the previous reading */
    uint64_t last[ASYS_NIC_COUNTER_COUNT];
};

struct nic {
    struct asys_importer *imp;
    sqlite3_stmt *insert_device;
    sqlite3_stmt *insert_metric;
    sqlite3_stmt *update_device;
    struct nic_device devices[ASYS_NIC_MAX_DEVICES];
    int warned_unknown;
};

static int nic_init(struct asys_importer *imp, void **state, struct asys_err *err)
{
    struct nic *n = calloc(1, sizeof *n);
    if (!n)
        return asys_fail(err, "out of memory");
    *state = n;
    n->imp = imp;
    if (imp_prepare(
            imp,
            "INSERT OR REPLACE INTO nic_devices (id, name, kind, port, speed_mbps, samples, "
            "active, wraps, resets) VALUES (?,?,?,?,?,0,0,0,0)",
            &n->insert_device, err) != 0 ||
        imp_prepare(imp,
                    "UPDATE nic_devices SET samples = ?, active = ?, wraps = ?, resets = ? "
                    "WHERE id = ?",
                    &n->update_device, err) != 0)
        return -1;
    return imp_prepare(imp,
                       "INSERT INTO nic_metrics (device, metric, unit, start_ns, end_ns, value) "
                       "VALUES (?,?,?,?,?,?)",
                       &n->insert_metric, err);
}

static void nic_free(void *state)
{
    struct nic *n = state;
    if (!n)
        return;
    sqlite3_finalize(n->insert_device);
    sqlite3_finalize(n->insert_metric);
    sqlite3_finalize(n->update_device);
    free(n);
}

static int import_device(void *state, const struct asys_record *rec, uint64_t ns,
                         struct asys_err *err)
{
    (void)ns;
    struct nic *n = state;
    const struct asys_rec_nic_device *r = (const void *)rec->data;
    if (r->device >= ASYS_NIC_MAX_DEVICES ||
        (r->kind != ASYS_NIC_RDMA && r->kind != ASYS_NIC_ETHERNET)) {
        imp_warn(n->imp, "%s: NIC device %u of kind %u; ignored", n->imp->seg.member, r->device,
                 r->kind);
        return 0;
    }
    struct nic_device *d = &n->devices[r->device];
    memset(d, 0, sizeof *d);
    d->defined = 1;
    d->kind = r->kind;
    d->mask = r->metric_mask & ((1u << ASYS_NIC_COUNTER_COUNT) - 1);
    d->speed_mbps = r->speed_mbps;
    sqlite3_stmt *st = n->insert_device;
    sqlite3_bind_int64(st, 1, r->device);
    sqlite3_bind_text(st, 2, r->name, (int)strnlen(r->name, sizeof r->name), SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, r->kind == ASYS_NIC_RDMA ? "rdma" : "ethernet", -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, r->port);
    imp_bind_optional(st, 5, r->speed_mbps, r->speed_mbps != 0);
    return imp_step(n->imp, st, err);
}

/* The counter's increase from `previous` to `now`: a 32-bit counter that
 * wrapped, a 64-bit one, or one reset to 0. */
static uint64_t increase(uint64_t previous, uint64_t now, int *wrapped)
{
    *wrapped = now < previous;
    if (!*wrapped)
        return now - previous;
    if (previous >= 1ull << 31 && previous < 1ull << 32)
        return now + ((1ull << 32) - previous);
    if (previous >= 1ull << 63)
        return now - previous; /* modulo 2^64 */
    return now;
}

/* The most a counter can grow over `seconds` on this device: bytes at the
 * link's speed (8 Tb/s when unknown), packets and CNPs no smaller than 32
 * bytes, wait ticks at 10^12 a second; over the interval plus 10 s, since
 * some drivers update their counters only every few seconds. */
static double most_possible(const struct nic_device *d, unsigned counter, double seconds)
{
    double bytes_per_s = d->speed_mbps ? d->speed_mbps * 1e6 / 8 : 1e12;
    double words = d->kind == ASYS_NIC_RDMA ? 4.0 : 1.0; /* RDMA data counters: 4-byte words */
    double per_s = counter == ASYS_NIC_RX_BYTES || counter == ASYS_NIC_TX_BYTES
                       ? bytes_per_s / words
                   : counter == ASYS_NIC_XMIT_WAIT ? 1e12
                                                   : bytes_per_s / 32;
    return per_s * (seconds + 10.0);
}

static int put_metric(struct nic *n, unsigned device, const char *metric, const char *unit,
                      uint64_t start, uint64_t end, double value, struct asys_err *err)
{
    sqlite3_stmt *st = n->insert_metric;
    sqlite3_bind_int64(st, 1, device);
    sqlite3_bind_text(st, 2, metric, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, unit, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, (int64_t)start);
    sqlite3_bind_int64(st, 5, (int64_t)end);
    sqlite3_bind_double(st, 6, value);
    return imp_step(n->imp, st, err);
}

static int import_sample(void *state, const struct asys_record *rec, uint64_t ns,
                         struct asys_err *err)
{
    struct nic *n = state;
    const struct asys_rec_nic_sample *r = (const void *)rec->data;
    struct nic_device *d = rec->arg < ASYS_NIC_MAX_DEVICES ? &n->devices[rec->arg] : NULL;
    uint32_t mask = r->metric_mask & ((1u << ASYS_NIC_COUNTER_COUNT) - 1);
    if (!d || !d->defined || r->metric_mask != mask ||
        r->count != (uint32_t)__builtin_popcount(mask) || rec->size < sizeof *r + 8ull * r->count ||
        ns > INT64_MAX) {
        if (!n->warned_unknown++)
            imp_warn(n->imp,
                     "%s: NIC sample of an unknown device or with a bad counter list; "
                     "ignored",
                     n->imp->seg.member);
        return 0;
    }
    uint64_t values[ASYS_NIC_COUNTER_COUNT] = {0};
    const uint8_t *p = (const uint8_t *)(r + 1);
    for (unsigned c = 0, i = 0; c < ASYS_NIC_COUNTER_COUNT; c++)
        if (mask & 1u << c)
            memcpy(&values[c], p + 8 * i++, 8);
    d->samples++;
    uint64_t start = d->last_ns;
    uint32_t both = mask & d->last_mask;
    int first = d->samples == 1;
    uint64_t inc[ASYS_NIC_COUNTER_COUNT] = {0};
    double interval = ns > start ? (double)(ns - start) / 1e9 : 0;
    for (unsigned c = 0; c < ASYS_NIC_COUNTER_COUNT; c++) {
        if (!(both & 1u << c))
            continue;
        int wrapped;
        inc[c] = increase(d->last[c], values[c], &wrapped);
        if ((double)inc[c] > most_possible(d, c, interval)) {
            d->resets++;
            both &= ~(1u << c); /* its interval is unknown: left out */
            inc[c] = 0;
            continue;
        }
        d->wraps += (uint64_t)wrapped;
        d->active |= inc[c] != 0;
    }
    for (unsigned c = 0; c < ASYS_NIC_COUNTER_COUNT; c++)
        if (mask & 1u << c)
            d->last[c] = values[c];
    d->last_mask = mask;
    d->last_ns = ns;
    if (first || ns <= start)
        return 0;
    double seconds = interval;
    double unit = d->kind == ASYS_NIC_RDMA ? 4.0 : 1.0; /* RDMA data counters: 4-byte words */
    unsigned dev = rec->arg;
#define HAS(c) (both & 1u << (c))
#define PUT(metric, u, v) \
    do { \
        if (put_metric(n, dev, metric, u, start, ns, v, err) != 0) \
            return -1; \
    } while (0)
    double rx = (double)inc[ASYS_NIC_RX_BYTES] * unit, tx = (double)inc[ASYS_NIC_TX_BYTES] * unit;
    if (HAS(ASYS_NIC_RX_BYTES))
        PUT("rx_speed", "B/s", rx / seconds);
    if (HAS(ASYS_NIC_TX_BYTES))
        PUT("tx_speed", "B/s", tx / seconds);
    if (HAS(ASYS_NIC_RX_PACKETS))
        PUT("rx_packet_rate", "packets/s", (double)inc[ASYS_NIC_RX_PACKETS] / seconds);
    if (HAS(ASYS_NIC_TX_PACKETS))
        PUT("tx_packet_rate", "packets/s", (double)inc[ASYS_NIC_TX_PACKETS] / seconds);
    if (HAS(ASYS_NIC_RX_BYTES) && HAS(ASYS_NIC_RX_PACKETS) && inc[ASYS_NIC_RX_PACKETS])
        PUT("rx_packet_size", "B", rx / (double)inc[ASYS_NIC_RX_PACKETS]);
    if (HAS(ASYS_NIC_TX_BYTES) && HAS(ASYS_NIC_TX_PACKETS) && inc[ASYS_NIC_TX_PACKETS])
        PUT("tx_packet_size", "B", tx / (double)inc[ASYS_NIC_TX_PACKETS]);
    if (HAS(ASYS_NIC_CNP_HANDLED) || HAS(ASYS_NIC_CNP_IGNORED))
        PUT("rx_cnp_rate", "CNP/s",
            (double)(inc[ASYS_NIC_CNP_HANDLED] + inc[ASYS_NIC_CNP_IGNORED]) / seconds);
    if (HAS(ASYS_NIC_CNP_SENT))
        PUT("tx_cnp_rate", "CNP/s", (double)inc[ASYS_NIC_CNP_SENT] / seconds);
    if (HAS(ASYS_NIC_XMIT_WAIT))
        PUT("send_wait", "ticks/s", (double)inc[ASYS_NIC_XMIT_WAIT] / seconds);
#undef PUT
#undef HAS
    return 0;
}

static int import_rate(void *state, const struct asys_record *rec, uint64_t ns,
                       struct asys_err *err)
{
    (void)ns;
    struct nic *n = state;
    const struct asys_rec_nic_rate *r = (const void *)rec->data;
    if (r->sample_mhz > INT64_MAX || r->update_mhz > INT64_MAX)
        return 0;
    if (imp_session_info(n->imp, "nic_requested_hz", NULL, r->requested_hz, err) != 0 ||
        imp_session_info(n->imp, "nic_sample_mhz", NULL, (int64_t)r->sample_mhz, err) != 0)
        return -1;
    return r->update_mhz
               ? imp_session_info(n->imp, "nic_update_mhz", NULL, (int64_t)r->update_mhz, err)
               : 0;
}

static int nic_finish(void *state, struct asys_err *err)
{
    struct nic *n = state;
    int idle = 0;
    for (unsigned i = 0; i < ASYS_NIC_MAX_DEVICES; i++) {
        const struct nic_device *d = &n->devices[i];
        if (!d->defined)
            continue;
        sqlite3_stmt *st = n->update_device;
        sqlite3_bind_int64(st, 1, (int64_t)d->samples);
        sqlite3_bind_int64(st, 2, d->active);
        sqlite3_bind_int64(st, 3, (int64_t)d->wraps);
        sqlite3_bind_int64(st, 4, (int64_t)d->resets);
        sqlite3_bind_int64(st, 5, i);
        if (imp_step(n->imp, st, err) != 0)
            return -1;
        if (d->resets)
            imp_warn(n->imp,
                     "NIC device %u: %" PRIu64 " counter readings jumped further than the link "
                     "can carry; taken as resets, their intervals left out",
                     i, d->resets);
        idle |= !d->active;
    }
    return idle ? imp_exec(n->imp,
                           "DELETE FROM nic_metrics WHERE device IN "
                           "(SELECT id FROM nic_devices WHERE active = 0)",
                           err)
                : 0;
}

static const struct imp_record_op nic_ops[] = {
    {ASYS_REC_NIC_DEVICE, import_device},
    {ASYS_REC_NIC_SAMPLE, import_sample},
    {ASYS_REC_NIC_RATE, import_rate},
};

const struct imp_family imp_family_nic = {
    .name = "nic-metrics",
    .feature = ASYS_FEATURE_NIC,
    .schema = "nic.sql",
    .ops = nic_ops,
    .op_count = sizeof nic_ops / sizeof nic_ops[0],
    .init = nic_init,
    .finish = nic_finish,
    .free = nic_free,
};
