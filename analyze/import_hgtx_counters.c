/* HGTX counters (nvToolsExtCounters.h) -> hgtx_counters, hgtx_counter_values.
 *
 * A counter gets its row on first sight (its registration or a sample from
 * a segment read earlier).  Integer and float samples are stored at once;
 * samples by reference and batches are decoded by the counter's schema
 * once every segment is read: a group gives one value per field, a batch
 * one sample per element, at its own timestamps. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "hgtx_payload.h"
#include "import_hgtx.h"

#define MAX_BATCH_SAMPLES (1u << 20)

/* nvToolsExtCounters.h */
enum {
    BATCH_BEGIN_INTERVAL = 1,
    BATCH_END_INTERVAL = 2,
};

struct counter_key {
    uint64_t image;
    uint64_t id;
    uint32_t domain;
    uint32_t pad;
};

struct imp_counter {
    uint64_t image;
    uint32_t domain;
    uint32_t pid;
    struct asys_rec_hgtx_counter rec; /* zero until registered */
    int registered;
    uint64_t registered_ns;
};

/* A sample by reference or a batch, decoded by derive. */
struct pending_sample {
    size_t counter; /* index */
    uint64_t ns;
    uint32_t tid;
    uint32_t kind;
    uint64_t batch_flags;
    uint8_t *data;
    size_t data_size;
    int64_t *stamps;
    size_t stamp_count;
};

struct hgtx_counters {
    struct imp_counter *counters;
    size_t count, cap;
    struct asys_strmap index; /* struct counter_key -> index + 1 */
    struct pending_sample *pending;
    size_t pending_count, pending_cap;
    sqlite3_stmt *insert_value;
    uint64_t unknown_time;
};

static int hgtx_counters_init(struct hgtx *h, struct asys_err *err)
{
    struct hgtx_counters *c = calloc(1, sizeof *c);
    if (!c)
        return asys_fail(err, "out of memory");
    h->counters = c;
    asys_strmap_init(&c->index);
    return imp_prepare(h->imp,
                       "INSERT INTO hgtx_counter_values (counter, ts_ns, tid, field, value, "
                       "missing) VALUES (?,?,?,?,?,?)",
                       &c->insert_value, err);
}

static void hgtx_counters_free(struct hgtx *h)
{
    struct hgtx_counters *c = h->counters;
    if (!c)
        return;
    for (size_t i = 0; i < c->pending_count; i++) {
        free(c->pending[i].data);
        free(c->pending[i].stamps);
    }
    free(c->pending);
    free(c->counters);
    asys_strmap_free(&c->index);
    sqlite3_finalize(c->insert_value);
    free(c);
    h->counters = NULL;
}

/* The counter `id` of the current segment's image and domain; -1: out of memory. */
static int64_t counter_of(struct hgtx *h, uint16_t local_domain, uint64_t id)
{
    struct hgtx_counters *c = h->counters;
    struct asys_importer *imp = h->imp;
    struct counter_key k;
    memset(&k, 0, sizeof k);
    k.image = imp->seg.image->uid;
    k.domain = hgtx_domain_global(h, local_domain);
    k.id = id;
    uint32_t at = asys_strmap_get(&c->index, (const char *)&k, sizeof k);
    if (at)
        return at - 1;
    if (c->count >= UINT32_MAX - 1 ||
        asys_grow(&c->counters, &c->cap, c->count, sizeof *c->counters, 16))
        return -1;
    struct imp_counter *n = &c->counters[c->count];
    memset(n, 0, sizeof *n);
    n->image = k.image;
    n->domain = k.domain;
    n->pid = imp->seg.pid;
    n->rec.counter_id = id;
    if (asys_strmap_put(&c->index, (const char *)&k, sizeof k, (uint32_t)(c->count + 1)) != 0)
        return -1;
    return (int64_t)c->count++;
}

static int hgtx_on_counter(void *state, const struct asys_record *rec, uint64_t ns,
                           struct asys_err *err)
{
    struct hgtx *h = state;
    const struct asys_rec_hgtx_counter *r = (const void *)rec->data;
    if (!h->imp->seg.image)
        return 0;
    int64_t i = counter_of(h, (uint16_t)rec->arg, r->counter_id);
    if (i < 0)
        return asys_fail(err, "out of memory");
    struct imp_counter *n = &h->counters->counters[i];
    if (n->registered)
        return 0; /* the first registration stays */
    n->rec = *r;
    n->registered = 1;
    n->registered_ns = ns;
    return 0;
}

static int insert_value(struct hgtx *h, size_t counter, uint64_t ns, uint32_t tid,
                        const char *field, const struct hgtx_field *f, const char *missing,
                        struct asys_err *err)
{
    struct hgtx_counters *c = h->counters;
    sqlite3_stmt *st = c->insert_value;
    char digits[24];
    sqlite3_bind_int64(st, 1, (int64_t)counter + 1);
    sqlite3_bind_int64(st, 2, (int64_t)ns);
    imp_bind_optional(st, 3, tid, tid != 0);
    if (field)
        sqlite3_bind_text(st, 4, field, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, 4);
    if (!f)
        sqlite3_bind_null(st, 5);
    else if (f->kind == HGTX_INT)
        sqlite3_bind_int64(st, 5, f->i);
    else if (f->kind == HGTX_UINT && f->u <= INT64_MAX)
        sqlite3_bind_int64(st, 5, (int64_t)f->u);
    else if (f->kind == HGTX_UINT)
        sqlite3_bind_text(st, 5, digits, snprintf(digits, sizeof digits, "%" PRIu64, f->u),
                          SQLITE_TRANSIENT);
    else if (f->kind == HGTX_REAL)
        sqlite3_bind_double(st, 5, f->d);
    else
        sqlite3_bind_text(st, 5, f->text, (int)f->text_length, SQLITE_TRANSIENT);
    if (missing)
        sqlite3_bind_text(st, 6, missing, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 6);
    return imp_step(h->imp, st, err);
}

static const char *missing_reason(uint8_t reason)
{
    switch (reason) {
    case 0:
        return "zero";
    case 1:
        return "unchanged";
    case 2:
        return "unavailable";
    default:
        return "unknown";
    }
}

/* Copies what a sample by reference or a batch carries, for derive. */
static int keep_pending(struct hgtx *h, size_t counter, const struct asys_rec_hgtx_sample *r,
                        const uint8_t *tail, size_t tail_size, uint64_t ns, struct asys_err *err)
{
    struct hgtx_counters *c = h->counters;
    size_t data = r->data_size <= tail_size ? r->data_size : tail_size;
    size_t padded = (data + 7) & ~(size_t)7;
    size_t stamps =
        r->kind == ASYS_HGTX_SAMPLE_BATCH && padded <= tail_size
            ? (r->timestamps_size <= tail_size - padded ? r->timestamps_size : tail_size - padded)
            : 0;
    if (asys_grow(&c->pending, &c->pending_cap, c->pending_count, sizeof *c->pending, 16))
        return asys_fail(err, "out of memory");
    struct pending_sample *p = &c->pending[c->pending_count];
    memset(p, 0, sizeof *p);
    p->counter = counter;
    p->ns = ns;
    p->tid = h->imp->seg.tid;
    p->kind = r->kind;
    p->batch_flags = r->batch_flags;
    p->data = data ? malloc(data) : NULL;
    p->stamp_count = stamps / sizeof(int64_t);
    p->stamps = p->stamp_count ? malloc(p->stamp_count * sizeof(int64_t)) : NULL;
    if ((data && !p->data) || (p->stamp_count && !p->stamps)) {
        free(p->data);
        free(p->stamps);
        return asys_fail(err, "out of memory");
    }
    if (data)
        memcpy(p->data, tail, data);
    if (p->stamp_count)
        memcpy(p->stamps, tail + padded, p->stamp_count * sizeof(int64_t));
    p->data_size = data;
    c->pending_count++;
    return 0;
}

static int hgtx_on_sample(void *state, const struct asys_record *rec, uint64_t ns,
                          struct asys_err *err)
{
    struct hgtx *h = state;
    const struct asys_rec_hgtx_sample *r = (const void *)rec->data;
    if (!h->imp->seg.image)
        return 0;
    int64_t i = counter_of(h, (uint16_t)rec->arg, r->counter_id);
    if (i < 0)
        return asys_fail(err, "out of memory");
    struct hgtx_field f;
    memset(&f, 0, sizeof f);
    switch (r->kind) {
    case ASYS_HGTX_SAMPLE_INT64:
        f.kind = HGTX_INT;
        f.i = (int64_t)r->value;
        return insert_value(h, (size_t)i, ns, h->imp->seg.tid, NULL, &f, NULL, err);
    case ASYS_HGTX_SAMPLE_FLOAT64:
        f.kind = HGTX_REAL;
        memcpy(&f.d, &r->value, sizeof f.d);
        return insert_value(h, (size_t)i, ns, h->imp->seg.tid, NULL, &f, NULL, err);
    case ASYS_HGTX_SAMPLE_NO_VALUE:
        return insert_value(h, (size_t)i, ns, h->imp->seg.tid, NULL, NULL,
                            missing_reason(r->reason), err);
    case ASYS_HGTX_SAMPLE_DATA:
    case ASYS_HGTX_SAMPLE_BATCH:
        return keep_pending(h, (size_t)i, r, (const uint8_t *)(r + 1), rec->size - sizeof *r, ns,
                            err);
    default:
        return 0;
    }
}

/* ---- derive: samples by their counter's schema ------------------------------------ */

struct sample_ctx {
    struct hgtx *h;
    size_t counter;
    uint64_t ns;
    uint32_t tid;
    int single; /* a predefined type: no field name */
    int failed;
    struct asys_err *err;
};

static int on_sample_field(void *ctx, const struct hgtx_field *f)
{
    struct sample_ctx *s = ctx;
    if ((f->entry_flags & ASYS_NVTX_FLAG_KIND_MASK) == ASYS_NVTX_FLAG_TIMESTAMP)
        return 0; /* the sample's time, not a value */
    if (insert_value(s->h, s->counter, s->ns, s->tid, s->single ? NULL : f->path, f, NULL,
                     s->err) != 0) {
        s->failed = 1;
        return -1;
    }
    return 0;
}

/* The time of sample i of a batch of n. */
static int64_t batch_time(struct hgtx *h, const struct imp_counter *n,
                          const struct pending_sample *p, size_t i, size_t count)
{
    int64_t ts;
    uint64_t style = p->batch_flags >> 32;
    if (style == BATCH_BEGIN_INTERVAL && p->stamp_count >= 2)
        ts = p->stamps[0] + (int64_t)i * p->stamps[1];
    else if (style == BATCH_END_INTERVAL && p->stamp_count >= 2)
        ts = p->stamps[0] - (int64_t)(count - 1 - i) * p->stamps[1];
    else if (i < p->stamp_count)
        ts = p->stamps[i];
    else
        return (int64_t)p->ns; /* no timestamps: when the batch was submitted */
    return hgtx_time_to_ns(h, n->image, n->domain, n->rec.time_domain, ts);
}

static int decode_pending(struct hgtx *h, const struct pending_sample *p, struct asys_err *err)
{
    struct hgtx_counters *c = h->counters;
    const struct imp_counter *n = &c->counters[p->counter];
    struct sample_ctx s = {.h = h, .counter = p->counter, .ns = p->ns, .tid = p->tid, .err = err};
    s.single = hgtx_type_name(n->rec.schema_id) != NULL;
    struct hgtx_decoder *d = hgtx_payload_decoder(h, n->image, n->domain, on_sample_field, &s);
    if (p->kind == ASYS_HGTX_SAMPLE_DATA)
        return hgtx_decode(d, n->rec.schema_id, p->data, p->data_size, 0) < 0 && s.failed ? -1 : 0;
    uint64_t element = hgtx_payload_size(d, n->rec.schema_id);
    if (!element) {
        d->unsupported++;
        return 0;
    }
    size_t count = (size_t)(p->data_size / element);
    for (size_t i = 0; i < count && i < MAX_BATCH_SAMPLES; i++) {
        int64_t ns = batch_time(h, n, p, i, count);
        if (ns < 0) {
            c->unknown_time++;
            continue;
        }
        s.ns = (uint64_t)ns;
        if (hgtx_decode(d, n->rec.schema_id, p->data + i * element, element, 0) < 0 && s.failed)
            return -1;
    }
    return 0;
}

static int write_counters(struct hgtx *h, struct asys_err *err)
{
    struct hgtx_counters *c = h->counters;
    struct asys_importer *imp = h->imp;
    sqlite3_stmt *st = NULL;
    if (imp_prepare(imp,
                    "INSERT INTO hgtx_counters (id, pid, domain_id, counter_id, name_id, "
                    "description_id, schema_id, scope_id, unit_id, flags, limit_type, limit_min, "
                    "limit_max, registered_ns) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    &st, err) != 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < c->count; i++) {
        const struct imp_counter *n = &c->counters[i];
        struct imp_image *img = imp_image_get(imp, n->image);
        uint32_t name = img ? imp_string(imp, img, n->rec.name_string_id) : 0;
        uint32_t desc = img ? imp_string(imp, img, n->rec.description_string_id) : 0;
        uint32_t unit = img ? imp_string(imp, img, n->rec.unit_string_id) : 0;
        sqlite3_bind_int64(st, 1, (int64_t)i + 1);
        sqlite3_bind_int64(st, 2, n->pid);
        sqlite3_bind_int64(st, 3, n->domain);
        sqlite3_bind_int64(st, 4, (int64_t)n->rec.counter_id);
        imp_bind_optional(st, 5, name, name != 0);
        imp_bind_optional(st, 6, desc, desc != 0);
        imp_bind_optional(st, 7, (int64_t)n->rec.schema_id, n->registered);
        imp_bind_optional(st, 8, (int64_t)n->rec.scope_id, n->registered);
        imp_bind_optional(st, 9, unit, unit != 0);
        imp_bind_optional(st, 10, (int64_t)n->rec.semantic_flags, n->registered);
        imp_bind_optional(st, 11, n->rec.limit_type, n->registered && n->rec.limit_type);
        /* limits by their type: 1 int64, 2 uint64, 3 double */
        for (int k = 0; k < 2; k++) {
            uint64_t bits = k ? n->rec.limit_max : n->rec.limit_min;
            double d;
            memcpy(&d, &bits, sizeof d);
            if (!n->registered || !n->rec.limit_type)
                sqlite3_bind_null(st, 12 + k);
            else if (n->rec.limit_type == 3)
                sqlite3_bind_double(st, 12 + k, d);
            else if (n->rec.limit_type == 2 && bits > INT64_MAX) {
                char digits[24];
                sqlite3_bind_text(st, 12 + k, digits,
                                  snprintf(digits, sizeof digits, "%" PRIu64, bits),
                                  SQLITE_TRANSIENT);
            } else
                sqlite3_bind_int64(st, 12 + k, (int64_t)bits);
        }
        imp_bind_optional(st, 14, (int64_t)n->registered_ns, n->registered);
        rc = imp_step(imp, st, err);
    }
    sqlite3_finalize(st);
    return rc;
}

static int hgtx_counters_derive(struct hgtx *h, struct asys_err *err)
{
    struct hgtx_counters *c = h->counters;
    struct asys_importer *imp = h->imp;
    if (write_counters(h, err) != 0)
        return -1;
    for (size_t i = 0; i < c->pending_count; i++)
        if (decode_pending(h, &c->pending[i], err) != 0)
            return -1;
    size_t unregistered = 0;
    for (size_t i = 0; i < c->count; i++)
        unregistered += !c->counters[i].registered;
    if (unregistered)
        imp_warn(imp, "%zu HGTX counters have samples but no registration", unregistered);
    if (c->unknown_time)
        imp_warn(imp, "%" PRIu64 " HGTX counter samples have times asys cannot convert (skipped)",
                 c->unknown_time);
    return 0;
}

static const struct imp_record_op counters_ops[] = {
    {ASYS_REC_HGTX_COUNTER, hgtx_on_counter},
    {ASYS_REC_HGTX_SAMPLE, hgtx_on_sample},
};

const struct hgtx_extension hgtx_counters_extension = {
    .name = "counters",
    .records = {counters_ops, sizeof counters_ops / sizeof counters_ops[0]},
    .init = hgtx_counters_init,
    .derive = hgtx_counters_derive,
    .free = hgtx_counters_free,
};
