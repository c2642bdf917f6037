/* PPU_METRICS_DEVICE, PPU_METRIC_DEF, PPU_METRIC_SAMPLE and PPU_METRICS_END
 * records -> ppu_metric_devices, ppu_metrics, ppu_metric_samples.  A
 * sample's values are matched to the device's metrics by slot; values
 * without a DEF are dropped with a warning. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "import_family.h"

#define MAX_TEXT 1024

struct ppu_metrics {
    struct asys_importer *imp;
    sqlite3_stmt *insert_device;
    sqlite3_stmt *insert_metric;
    sqlite3_stmt *insert_sample;
    sqlite3_stmt *set_end;
    struct asys_u64map metric_ids; /* device << 16 | slot -> metrics.id */
    int64_t next_id;
    int warned_orphan;
};

static int ppu_init(struct asys_importer *imp, void **state, struct asys_err *err)
{
    struct ppu_metrics *p = calloc(1, sizeof *p);
    if (!p)
        return asys_fail(err, "out of memory");
    *state = p;
    p->imp = imp;
    p->next_id = 1;
    asys_u64map_init(&p->metric_ids);
    if (imp_prepare(imp,
                    "INSERT OR REPLACE INTO ppu_metric_devices (device, name, pci_bus_id, status, "
                    "backend, interval_ns, reason) VALUES (?,?,?,?,?,?,?)",
                    &p->insert_device, err) != 0 ||
        imp_prepare(imp,
                    "INSERT INTO ppu_metrics (id, device, slot, name, unit) VALUES (?,?,?,?,?)",
                    &p->insert_metric, err) != 0 ||
        imp_prepare(imp,
                    "INSERT INTO ppu_metric_samples (ns, duration_ns, metric_id, value) "
                    "VALUES (?,?,?,?)",
                    &p->insert_sample, err) != 0)
        return -1;
    return imp_prepare(imp,
                       "UPDATE ppu_metric_devices SET samples = ?, overflows = ? "
                       "WHERE device = ?",
                       &p->set_end, err);
}

static void ppu_free(void *state)
{
    struct ppu_metrics *p = state;
    if (!p)
        return;
    sqlite3_finalize(p->insert_device);
    sqlite3_finalize(p->insert_metric);
    sqlite3_finalize(p->insert_sample);
    sqlite3_finalize(p->set_end);
    asys_u64map_free(&p->metric_ids);
    free(p);
}

/* The text after a record's fixed part, bounded by the record; split at
 * '\n' into up to `n` parts (missing ones are empty). */
static void split_text(const struct asys_record *rec, size_t fixed, uint32_t length, char *text,
                       const char **parts, size_t n)
{
    size_t room = rec->size > fixed ? rec->size - fixed : 0;
    size_t len = length < room ? length : room;
    if (len >= MAX_TEXT)
        len = MAX_TEXT - 1;
    memcpy(text, rec->data + fixed, len);
    text[len] = '\0';
    char *p = text;
    for (size_t i = 0; i < n; i++) {
        parts[i] = p;
        char *nl = strchr(p, '\n');
        if (nl) {
            *nl = '\0';
            p = nl + 1;
        } else {
            p += strlen(p);
        }
    }
}

static int import_device(void *state, const struct asys_record *rec, uint64_t ns,
                         struct asys_err *err)
{
    static const char *const statuses[] = {"sampled", "unavailable", "busy", "over capacity",
                                           "failed"};
    static const char *const backends[] = {"none", "CUPTI PM sampling", "NVML GPM"};
    (void)ns;
    struct ppu_metrics *p = state;
    const struct asys_rec_ppu_metrics_device *r = (const void *)rec->data;
    char text[MAX_TEXT];
    const char *parts[3];
    split_text(rec, sizeof *r, r->text_length, text, parts, 3);
    sqlite3_stmt *st = p->insert_device;
    sqlite3_bind_int64(st, 1, rec->arg);
    sqlite3_bind_text(st, 2, parts[0], -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, parts[1], -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 4, r->status < 5 ? statuses[r->status] : "unknown", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, r->backend < 3 ? backends[r->backend] : "unknown", -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 6, r->interval_ns > INT64_MAX ? INT64_MAX : (int64_t)r->interval_ns);
    if (*parts[2])
        sqlite3_bind_text(st, 7, parts[2], -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, 7);
    return imp_step(p->imp, st, err);
}

static int import_def(void *state, const struct asys_record *rec, uint64_t ns, struct asys_err *err)
{
    (void)ns;
    struct ppu_metrics *p = state;
    const struct asys_rec_ppu_metric_def *r = (const void *)rec->data;
    char text[MAX_TEXT];
    const char *parts[2];
    uint64_t key = (uint64_t)(r->device & 0xffffu) << 16 | rec->arg;
    if (r->device > 0xffffu || asys_u64map_get(&p->metric_ids, key)) {
        imp_warn(p->imp, "%s: PPU metric %u of device %u defined twice or out of range; ignored",
                 p->imp->seg.member, rec->arg, r->device);
        return 0;
    }
    split_text(rec, sizeof *r, r->text_length, text, parts, 2);
    int64_t id = p->next_id++;
    if (asys_u64map_put(&p->metric_ids, key, (uint64_t)id) != 0)
        return asys_fail(err, "out of memory");
    sqlite3_stmt *st = p->insert_metric;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, r->device);
    sqlite3_bind_int64(st, 3, rec->arg);
    sqlite3_bind_text(st, 4, parts[0], -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 5, parts[1], -1, SQLITE_TRANSIENT);
    return imp_step(p->imp, st, err);
}

static int import_sample(void *state, const struct asys_record *rec, uint64_t ns,
                         struct asys_err *err)
{
    struct ppu_metrics *p = state;
    const struct asys_rec_ppu_metric_sample *r = (const void *)rec->data;
    size_t room = (rec->size - sizeof *r) / 8;
    size_t count = r->value_count < room ? r->value_count : room;
    if (ns > INT64_MAX)
        return 0;
    for (size_t slot = 0; slot < count && slot <= 0xffffu; slot++) {
        uint64_t *id = asys_u64map_get(&p->metric_ids, (uint64_t)rec->arg << 16 | slot);
        if (!id) {
            if (!p->warned_orphan++)
                imp_warn(p->imp,
                         "%s: PPU metric values of device %u without a definition; "
                         "ignored",
                         p->imp->seg.member, rec->arg);
            continue;
        }
        double v;
        memcpy(&v, rec->data + sizeof *r + 8 * slot, sizeof v);
        sqlite3_stmt *st = p->insert_sample;
        sqlite3_bind_int64(st, 1, (int64_t)ns);
        sqlite3_bind_int64(st, 2, r->duration_ns);
        sqlite3_bind_int64(st, 3, (int64_t)*id);
        if (isfinite(v))
            sqlite3_bind_double(st, 4, v);
        else
            sqlite3_bind_null(st, 4);
        if (imp_step(p->imp, st, err) != 0)
            return -1;
    }
    return 0;
}

static int import_end(void *state, const struct asys_record *rec, uint64_t ns, struct asys_err *err)
{
    (void)ns;
    struct ppu_metrics *p = state;
    const struct asys_rec_ppu_metrics_end *r = (const void *)rec->data;
    sqlite3_stmt *st = p->set_end;
    sqlite3_bind_int64(st, 1, r->samples > INT64_MAX ? INT64_MAX : (int64_t)r->samples);
    sqlite3_bind_int64(st, 2, r->overflows);
    sqlite3_bind_int64(st, 3, rec->arg);
    return imp_step(p->imp, st, err);
}

static const struct imp_record_op ppu_ops[] = {
    {ASYS_REC_PPU_METRICS_DEVICE, import_device},
    {ASYS_REC_PPU_METRIC_DEF, import_def},
    {ASYS_REC_PPU_METRIC_SAMPLE, import_sample},
    {ASYS_REC_PPU_METRICS_END, import_end},
};

const struct imp_family imp_family_ppu_metrics = {
    .name = "ppu-metrics",
    .feature = ASYS_FEATURE_PPU_METRICS,
    .schema = "ppu_metrics.sql",
    .ops = ppu_ops,
    .op_count = sizeof ppu_ops / sizeof ppu_ops[0],
    .init = ppu_init,
    .free = ppu_free,
};
