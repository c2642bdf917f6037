/* HGTX payloads, schemas and time domains -> hgtx_payload_schemas,
 * hgtx_payload_entries, hgtx_payloads, hgtx_payload_fields, hgtx_scopes,
 * hgtx_time_domains, hgtx_time_points; and the events that payloads make
 * (nvtxMarkPayload, nvtxRangePushPayload... and deferred events).
 *
 * While segments are read, payloads are stored as they came and their
 * events are made with the messages they lack; once every segment is read
 * (a schema may be in a later segment), derive decodes each payload by its
 * schema into fields and gives its event the message, colour and category
 * the payload holds, and the times of a deferred event. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "hgtx_payload.h"
#include "import_hgtx.h"
#include "json_util.h"

/* NVTX timestamp types asys can convert (nvToolsExtPayload.h). */
enum {
    TS_TOOL_PROVIDED = 1,
    TS_CPU_TSC = 10,
    TS_REALTIME = 12,
    TS_MONOTONIC = 14,
    TS_CPP_STEADY = 50,
    TS_CPP_SYSTEM = 52,
    TIME_DOMAIN_STATIC_START = 1 << 24,
};

struct imp_schema {
    uint64_t image;
    uint32_t domain; /* global */
    struct hgtx_schema s;
    struct asys_hgtx_schema_entry *entries;
    struct asys_hgtx_enum_entry *enums;
};

struct schema_key {
    uint64_t image;
    uint64_t id;
    uint32_t domain;
    uint32_t pad;
};

struct time_domain {
    uint64_t image;
    uint32_t domain;
    uint64_t id;
    uint64_t timestamp_type;
    uint64_t ticks_per_s;
};

/* A known relation between a time domain (or type) and another. */
struct time_point {
    uint64_t image;
    uint64_t source, target; /* target 0: CLOCK_MONOTONIC ns (a timer source) */
    int64_t source_ts, target_ts;
    double slope; /* 0: a point, not a factor */
};

/* A payload waiting to be decoded. */
struct pending {
    int64_t row; /* hgtx_payloads.id */
    int64_t event; /* hgtx_events.id; 0: not known yet */
    uint64_t image;
    uint64_t range_id; /* END payloads whose start came later */
    uint64_t schema_id;
    uint64_t ns;
    uint32_t domain;
    uint32_t pid, tid;
    uint8_t event_kind; /* enum asys_hgtx_payload_event */
};

/* Bounds on what a report can make the importer keep and search (real
 * programs register a few time domains and sync points). */
#define MAX_TIME_DOMAINS 1024
#define MAX_TIME_POINTS 1024

struct hgtx_payloads {
    struct imp_schema *schemas;
    size_t schema_count, schema_cap;
    struct asys_strmap schema_index; /* struct schema_key -> index + 1 */
    struct time_domain *domains;
    size_t domain_count, domain_cap;
    struct time_point *points;
    size_t point_count, point_cap;
    struct pending *pending;
    size_t pending_count, pending_cap;
    int64_t next_payload_row;
    int64_t realtime_minus_monotonic;
    int has_realtime_offset;
    int session_clock_tsc; /* the recording's ticks are the TSC: rdtsc values convert */
    sqlite3_stmt *insert_schema, *insert_entry, *insert_payload, *insert_field;
    sqlite3_stmt *insert_scope, *insert_time_domain, *insert_time_point;
    /* derive */
    sqlite3_stmt *read_payload, *read_string, *set_event, *update_event, *fill_event,
        *mark_deferred;
    struct asys_u64map texts; /* global string id -> index in text_pool + 1 */
    char **text_pool;
    size_t text_count, text_cap;
    uint64_t deferred_unknown_time;
    /* the decoder handed out by hgtx_payload_decoder */
    struct hgtx_decoder decoder;
    struct hgtx *h;
    uint64_t decoder_image;
    uint32_t decoder_domain;
};

/* ---- state ------------------------------------------------------------------- */

static int hgtx_payloads_init(struct hgtx *h, struct asys_err *err)
{
    struct asys_importer *imp = h->imp;
    struct hgtx_payloads *p = calloc(1, sizeof *p);
    if (!p)
        return asys_fail(err, "out of memory");
    h->payloads = p;
    p->h = h;
    p->next_payload_row = 1;
    asys_strmap_init(&p->schema_index);
    asys_u64map_init(&p->texts);
    const cJSON *clock = cJSON_GetObjectItemCaseSensitive(imp->manifest, "clock");
    p->has_realtime_offset =
        asys_json_get_i64(clock, "realtime_minus_monotonic_ns", &p->realtime_minus_monotonic) == 0;
    p->session_clock_tsc = !strcmp(asys_json_get_str(clock, "kind", ""), "tsc");
    return imp_prepare(imp,
                       "INSERT INTO hgtx_payload_schemas (id, pid, domain_id, schema_id, kind, "
                       "name_id, schema_type, flags, static_size, entries) "
                       "VALUES (?,?,?,?,?,?,?,?,?,?)",
                       &p->insert_schema, err) ||
                   imp_prepare(imp,
                               "INSERT OR IGNORE INTO hgtx_payload_entries (schema_row, entry, "
                               "name_id, description_id, type, type_name, flags, detail, offset, "
                               "unit_id, value) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                               &p->insert_entry, err) ||
                   imp_prepare(imp,
                               "INSERT INTO hgtx_payloads (id, event_id, at, payload, pid, "
                               "domain_id, schema_id, flags, data) VALUES (?,?,?,?,?,?,?,?,?)",
                               &p->insert_payload, err) ||
                   imp_prepare(imp,
                               "INSERT INTO hgtx_scopes (pid, domain_id, scope_id, parent_id, "
                               "path_id) VALUES (?,?,?,?,?)",
                               &p->insert_scope, err) ||
                   imp_prepare(imp,
                               "INSERT INTO hgtx_time_domains (pid, domain_id, time_domain_id, "
                               "scope_id, timestamp_type, timer_flags, ticks_per_s, timer_start) "
                               "VALUES (?,?,?,?,?,?,?,?)",
                               &p->insert_time_domain, err) ||
                   imp_prepare(imp,
                               "INSERT INTO hgtx_time_points (pid, domain_id, kind, source, "
                               "target, source_ts, target_ts, slope) VALUES (?,?,?,?,?,?,?,?)",
                               &p->insert_time_point, err)
               ? -1
               : 0;
}

static void hgtx_payloads_free(struct hgtx *h)
{
    struct hgtx_payloads *p = h->payloads;
    if (!p)
        return;
    for (size_t i = 0; i < p->schema_count; i++) {
        free(p->schemas[i].entries);
        free(p->schemas[i].enums);
    }
    free(p->schemas);
    asys_strmap_free(&p->schema_index);
    free(p->domains);
    free(p->points);
    free(p->pending);
    for (size_t i = 0; i < p->text_count; i++)
        free(p->text_pool[i]);
    free(p->text_pool);
    asys_u64map_free(&p->texts);
    sqlite3_stmt *statements[] = {p->insert_schema,     p->insert_entry, p->insert_payload,
                                  p->insert_field,      p->insert_scope, p->insert_time_domain,
                                  p->insert_time_point, p->read_payload, p->read_string,
                                  p->set_event,         p->update_event, p->fill_event,
                                  p->mark_deferred};
    for (size_t i = 0; i < sizeof statements / sizeof statements[0]; i++)
        sqlite3_finalize(statements[i]);
    free(p);
    h->payloads = NULL;
}

/* ---- schemas ------------------------------------------------------------------ */

static struct schema_key key_of(uint64_t image, uint32_t domain, uint64_t id)
{
    struct schema_key k;
    memset(&k, 0, sizeof k);
    k.image = image;
    k.domain = domain;
    k.id = id;
    return k;
}

/* A schema of image `image` or of the image it was forked from. */
static const struct imp_schema *find_schema(struct hgtx *h, uint64_t image, uint32_t domain,
                                            uint64_t id)
{
    struct hgtx_payloads *p = h->payloads;
    for (int depth = 0; image && depth < 64; depth++) {
        struct schema_key k = key_of(image, domain, id);
        uint32_t i = asys_strmap_get(&p->schema_index, (const char *)&k, sizeof k);
        if (i)
            return &p->schemas[i - 1];
        struct imp_image *img = imp_image_get(h->imp, image);
        image = img ? img->parent_uid : 0;
    }
    return NULL;
}

static const char *entry_type_name(uint64_t type)
{
    return hgtx_type_name(type);
}

static int insert_schema_rows(struct hgtx *h, const struct imp_schema *s, int64_t row,
                              struct asys_err *err)
{
    struct asys_importer *imp = h->imp;
    struct hgtx_payloads *p = h->payloads;
    struct imp_image *img = imp->seg.image;
    sqlite3_stmt *st = p->insert_schema;
    uint32_t name = imp_string(imp, img, s->s.name_sid);
    int is_enum = s->s.kind == ASYS_HGTX_SCHEMA_ENUM;
    sqlite3_bind_int64(st, 1, row);
    sqlite3_bind_int64(st, 2, imp->seg.pid);
    sqlite3_bind_int64(st, 3, s->domain);
    sqlite3_bind_int64(st, 4, (int64_t)s->s.id);
    sqlite3_bind_text(st, 5, is_enum ? "enum" : "schema", -1, SQLITE_STATIC);
    imp_bind_optional(st, 6, name, name != 0);
    imp_bind_optional(st, 7, s->s.type, !is_enum);
    sqlite3_bind_int64(st, 8, 0);
    sqlite3_bind_int64(st, 9, (int64_t)s->s.static_size);
    sqlite3_bind_int64(st, 10, s->s.entry_count);
    if (imp_step(imp, st, err) != 0)
        return -1;
    st = p->insert_entry;
    for (uint32_t i = 0; i < s->s.entry_count; i++) {
        sqlite3_bind_int64(st, 1, row);
        sqlite3_bind_int64(st, 2, i);
        if (is_enum) {
            const struct asys_hgtx_enum_entry *e = &s->enums[i];
            uint32_t en = imp_string(imp, img, e->name_string_id);
            imp_bind_optional(st, 3, en, en != 0);
            for (int c = 4; c <= 10; c++)
                sqlite3_bind_null(st, c);
            sqlite3_bind_int64(st, 11, (int64_t)e->value);
        } else {
            const struct asys_hgtx_schema_entry *e = &s->entries[i];
            uint32_t en = imp_string(imp, img, e->name_string_id);
            uint32_t desc = imp_string(imp, img, e->description_string_id);
            uint32_t unit = imp_string(imp, img, e->unit_string_id);
            const char *tn = entry_type_name(e->type);
            imp_bind_optional(st, 3, en, en != 0);
            imp_bind_optional(st, 4, desc, desc != 0);
            sqlite3_bind_int64(st, 5, (int64_t)e->type);
            if (tn)
                sqlite3_bind_text(st, 6, tn, -1, SQLITE_STATIC);
            else
                sqlite3_bind_null(st, 6);
            sqlite3_bind_int64(st, 7, (int64_t)e->flags);
            sqlite3_bind_int64(st, 8, (int64_t)e->array_or_union_detail);
            sqlite3_bind_int64(st, 9, (int64_t)e->offset);
            imp_bind_optional(st, 10, unit, unit != 0);
            sqlite3_bind_null(st, 11);
        }
        if (imp_step(imp, st, err) != 0)
            return -1;
    }
    return 0;
}

static int hgtx_on_schema(void *state, const struct asys_record *rec, uint64_t ns,
                          struct asys_err *err)
{
    (void)ns;
    struct hgtx *h = state;
    struct hgtx_payloads *p = h->payloads;
    struct asys_importer *imp = h->imp;
    const struct asys_rec_hgtx_schema *r = (const void *)rec->data;
    int is_enum = r->kind == ASYS_HGTX_SCHEMA_ENUM;
    if (!imp->seg.image || (!is_enum && r->kind != ASYS_HGTX_SCHEMA_PAYLOAD))
        return 0;
    size_t entry_size =
        is_enum ? sizeof(struct asys_hgtx_enum_entry) : sizeof(struct asys_hgtx_schema_entry);
    size_t room = (rec->size - sizeof *r) / entry_size; /* what the record holds */
    uint32_t count = r->entry_count <= room ? r->entry_count : (uint32_t)room;
    if (count < r->entry_count)
        imp_warn(imp, "%s: HGTX schema %" PRIu64 " holds %u of its %u entries", imp->seg.member,
                 r->schema_id, count, r->entry_count);
    uint32_t domain = hgtx_domain_global(h, (uint16_t)rec->arg);
    struct schema_key k = key_of(imp->seg.image->uid, domain, r->schema_id);
    if (asys_strmap_get(&p->schema_index, (const char *)&k, sizeof k))
        return 0; /* registered twice: the first stays */
    if (asys_grow(&p->schemas, &p->schema_cap, p->schema_count, sizeof *p->schemas, 16))
        return asys_fail(err, "out of memory");
    struct imp_schema *s = &p->schemas[p->schema_count];
    memset(s, 0, sizeof *s);
    s->image = imp->seg.image->uid;
    s->domain = domain;
    s->s = (struct hgtx_schema){.id = r->schema_id,
                                .kind = r->kind,
                                .type = r->schema_type,
                                .static_size = r->static_size,
                                .pack_align = r->pack_align,
                                .name_sid = r->name_string_id,
                                .entry_count = count};
    if (count) {
        void *copy = malloc((size_t)count * entry_size);
        if (!copy)
            return asys_fail(err, "out of memory");
        memcpy(copy, r + 1, (size_t)count * entry_size);
        if (is_enum)
            s->enums = copy;
        else
            s->entries = copy;
    }
    s->s.entries = s->entries;
    s->s.enums = s->enums;
    p->schema_count++;
    if (p->schema_count > UINT32_MAX - 1 ||
        asys_strmap_put(&p->schema_index, (const char *)&k, sizeof k, (uint32_t)p->schema_count))
        return asys_fail(err, "out of memory");
    return insert_schema_rows(h, s, (int64_t)p->schema_count, err);
}

/* ---- payload records --------------------------------------------------------------- */

static const char *const at_names[] = {"begin", "end"};

static int store_payload(struct hgtx *h, const struct asys_hgtx_payload_data *d,
                         const uint8_t *bytes, size_t index, int at_end, uint32_t domain,
                         int64_t *row, struct asys_err *err)
{
    struct hgtx_payloads *p = h->payloads;
    struct asys_importer *imp = h->imp;
    sqlite3_stmt *st = p->insert_payload;
    *row = p->next_payload_row++;
    sqlite3_bind_int64(st, 1, *row);
    sqlite3_bind_null(st, 2); /* its event, set by derive */
    sqlite3_bind_text(st, 3, at_names[at_end], -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, (int64_t)index);
    sqlite3_bind_int64(st, 5, imp->seg.pid);
    sqlite3_bind_int64(st, 6, domain);
    sqlite3_bind_int64(st, 7, (int64_t)d->schema_id);
    sqlite3_bind_int64(st, 8, d->flags);
    sqlite3_bind_blob(st, 9, bytes, (int)d->size, SQLITE_STATIC);
    return imp_step(imp, st, err);
}

/* The event a payload record makes or belongs to (0: not known yet). */
static int payload_event(struct hgtx *h, const struct asys_record *rec,
                         const struct asys_rec_hgtx_payload *r, uint64_t ns, int64_t *event,
                         struct asys_err *err)
{
    uint16_t local = (uint16_t)rec->arg;
    struct hgtx_open o;
    hgtx_open_plain(h, &o, 0, ns);
    o.domain = hgtx_domain_global(h, local);
    *event = 0;
    switch (r->event) {
    case ASYS_HGTX_PAYLOAD_ATTACHED:
        *event = h->last_event;
        return 0;
    case ASYS_HGTX_PAYLOAD_MARK:
        if (hgtx_mark(h, local, &o, err) != 0)
            return -1;
        *event = o.id;
        return 0;
    case ASYS_HGTX_PAYLOAD_PUSH:
        if (hgtx_push(h, local, &o, err) != 0)
            return -1;
        *event = o.id;
        return 0;
    case ASYS_HGTX_PAYLOAD_POP:
        return hgtx_pop(h, local, ns, event, err);
    case ASYS_HGTX_PAYLOAD_START:
        if (hgtx_start(h, r->range_id, &o, err) != 0)
            return -1;
        *event = o.id;
        return 0;
    case ASYS_HGTX_PAYLOAD_END: {
        if (hgtx_end(h, r->range_id, ns, err) != 0)
            return -1;
        struct hgtx_image *hi = hgtx_image(h, h->imp->seg.image);
        uint64_t *id = hi ? asys_u64map_get(&hi->range_events, r->range_id) : NULL;
        *event = id ? (int64_t)*id : 0;
        return 0;
    }
    default: /* SUBMIT, BATCH: events made by derive */
        return 0;
    }
}

static int hgtx_on_payload(void *state, const struct asys_record *rec, uint64_t ns,
                           struct asys_err *err)
{
    struct hgtx *h = state;
    struct hgtx_payloads *p = h->payloads;
    struct asys_importer *imp = h->imp;
    const struct asys_rec_hgtx_payload *r = (const void *)rec->data;
    if (!imp->seg.image || r->event < ASYS_HGTX_PAYLOAD_ATTACHED ||
        r->event > ASYS_HGTX_PAYLOAD_BATCH)
        return 0;
    int64_t event;
    if (payload_event(h, rec, r, ns, &event, err) != 0)
        return -1;
    int at_end = r->event == ASYS_HGTX_PAYLOAD_POP || r->event == ASYS_HGTX_PAYLOAD_END;
    uint32_t domain = hgtx_domain_global(h, (uint16_t)rec->arg);
    const uint8_t *cur = (const uint8_t *)(r + 1);
    const uint8_t *end = rec->data + rec->size;
    for (size_t i = 0; i < r->payload_count; i++) {
        struct asys_hgtx_payload_data d;
        if ((size_t)(end - cur) < sizeof d)
            break;
        memcpy(&d, cur, sizeof d);
        cur += sizeof d;
        size_t padded = ((size_t)d.size + 7) & ~(size_t)7;
        if ((size_t)(end - cur) < padded) {
            imp_warn(imp, "%s: HGTX payload %zu at offset %" PRIu64 " is longer than its record",
                     imp->seg.member, i, rec->offset);
            break;
        }
        int64_t row;
        if (store_payload(h, &d, cur, i, at_end, domain, &row, err) != 0)
            return -1;
        cur += padded;
        if (d.schema_id == ASYS_NVTX_SCHEMA_RAW || d.schema_id == ASYS_NVTX_SCHEMA_REFERENCED)
            continue; /* kept, never decoded */
        if (asys_grow(&p->pending, &p->pending_cap, p->pending_count, sizeof *p->pending, 64))
            return asys_fail(err, "out of memory");
        p->pending[p->pending_count++] = (struct pending){
            .row = row,
            .event = event,
            .image = imp->seg.image->uid,
            .range_id = r->range_id,
            .schema_id = d.schema_id,
            .ns = ns,
            .domain = domain,
            .pid = imp->seg.pid,
            .tid = imp->seg.tid,
            .event_kind = (uint8_t)r->event,
        };
    }
    return 0;
}

/* ---- scopes and time ---------------------------------------------------------------- */

static int hgtx_on_time(void *state, const struct asys_record *rec, uint64_t ns,
                        struct asys_err *err)
{
    (void)ns;
    struct hgtx *h = state;
    struct hgtx_payloads *p = h->payloads;
    struct asys_importer *imp = h->imp;
    const struct asys_rec_hgtx_time *r = (const void *)rec->data;
    if (!imp->seg.image)
        return 0;
    uint64_t image = imp->seg.image->uid;
    uint32_t domain = hgtx_domain_global(h, r->domain_id);
    sqlite3_stmt *st;
    switch (rec->arg) {
    case ASYS_HGTX_TIME_SCOPE: {
        uint32_t path = imp_string(imp, imp->seg.image, r->text_string_id);
        st = p->insert_scope;
        sqlite3_bind_int64(st, 1, imp->seg.pid);
        sqlite3_bind_int64(st, 2, domain);
        sqlite3_bind_int64(st, 3, (int64_t)r->id);
        sqlite3_bind_int64(st, 4, (int64_t)r->a);
        imp_bind_optional(st, 5, path, path != 0);
        return imp_step(imp, st, err);
    }
    case ASYS_HGTX_TIME_DOMAIN:
        if (p->domain_count < MAX_TIME_DOMAINS) {
            if (asys_grow(&p->domains, &p->domain_cap, p->domain_count, sizeof *p->domains, 8))
                return asys_fail(err, "out of memory");
            p->domains[p->domain_count++] = (struct time_domain){image, domain, r->id, r->b, r->d};
        }
        st = p->insert_time_domain;
        sqlite3_bind_int64(st, 1, imp->seg.pid);
        sqlite3_bind_int64(st, 2, domain);
        sqlite3_bind_int64(st, 3, (int64_t)r->id);
        sqlite3_bind_int64(st, 4, (int64_t)r->a);
        sqlite3_bind_int64(st, 5, (int64_t)r->b);
        sqlite3_bind_int64(st, 6, (int64_t)r->c);
        sqlite3_bind_int64(st, 7, (int64_t)r->d);
        sqlite3_bind_int64(st, 8, (int64_t)r->e);
        return imp_step(imp, st, err);
    case ASYS_HGTX_TIME_SOURCE:
    case ASYS_HGTX_TIME_SYNC_POINT:
    case ASYS_HGTX_TIME_CONVERSION: {
        struct time_point tp = {.image = image, .source = r->id};
        const char *kind;
        double slope = 0;
        if (rec->arg == ASYS_HGTX_TIME_SOURCE) {
            kind = "timer source";
            tp.source_ts = (int64_t)r->b;
            tp.target_ts = (int64_t)r->c;
        } else if (rec->arg == ASYS_HGTX_TIME_SYNC_POINT) {
            kind = "sync point";
            tp.target = r->a;
            tp.source_ts = (int64_t)r->b;
            tp.target_ts = (int64_t)r->c;
        } else {
            kind = "conversion";
            tp.target = r->a;
            memcpy(&slope, &r->b, sizeof slope);
            tp.slope = slope == slope ? slope : 0; /* NaN: no factor */
            tp.source_ts = (int64_t)r->c;
            tp.target_ts = (int64_t)r->d;
        }
        if (p->point_count < MAX_TIME_POINTS) { /* all are stored; these many are used */
            if (asys_grow(&p->points, &p->point_cap, p->point_count, sizeof *p->points, 8))
                return asys_fail(err, "out of memory");
            p->points[p->point_count++] = tp;
        }
        st = p->insert_time_point;
        sqlite3_bind_int64(st, 1, imp->seg.pid);
        sqlite3_bind_int64(st, 2, domain);
        sqlite3_bind_text(st, 3, kind, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 4, (int64_t)tp.source);
        imp_bind_optional(st, 5, (int64_t)tp.target, rec->arg != ASYS_HGTX_TIME_SOURCE);
        sqlite3_bind_int64(st, 6, tp.source_ts);
        sqlite3_bind_int64(st, 7, tp.target_ts);
        if (rec->arg == ASYS_HGTX_TIME_CONVERSION)
            sqlite3_bind_double(st, 8, tp.slope);
        else
            sqlite3_bind_null(st, 8);
        return imp_step(imp, st, err);
    }
    default:
        return 0;
    }
}

static int64_t convert(struct hgtx *h, uint64_t image, uint64_t source, int64_t ts, int depth);

/* A timestamp type asys knows, as CLOCK_MONOTONIC ns; -1: unknown. */
static int64_t convert_type(struct hgtx *h, uint64_t type, int64_t ts)
{
    struct hgtx_payloads *p = h->payloads;
    switch (type) {
    case 0:
    case TS_TOOL_PROVIDED: /* nvtxTimestampGet: asys's clock */
    case TS_MONOTONIC:
    case TS_CPP_STEADY: /* std::chrono::steady_clock on Linux */
        return ts;
    case TS_REALTIME:
    case TS_CPP_SYSTEM:
        return p->has_realtime_offset ? ts - p->realtime_minus_monotonic : -1;
    case TS_CPU_TSC:
        return p->session_clock_tsc && h->imp->has_clock_pairs
                   ? (int64_t)asys_clock_map_ns(&h->imp->clock, (uint64_t)ts)
                   : -1;
    default:
        return -1;
    }
}

/* Through the relations recorded for `source`: a timer source's pairs or
 * sync points with a domain that converts (two points: a line; one point
 * and a resolution: an offset), or a conversion factor. */
static int64_t convert_by_points(struct hgtx *h, uint64_t image, uint64_t source, int64_t ts,
                                 int depth)
{
    struct hgtx_payloads *p = h->payloads;
    double x[2], y[2];
    int n = 0;
    for (size_t i = 0; i < p->point_count && n < 2; i++) {
        const struct time_point *tp = &p->points[i];
        if (tp->image != image || tp->source != source)
            continue;
        int64_t target =
            tp->target ? convert(h, image, tp->target, tp->target_ts, depth + 1) : tp->target_ts;
        if (target < 0)
            continue;
        if (tp->slope) /* a factor: one relation is enough */
            return target + (int64_t)(tp->slope * (double)(ts - tp->source_ts));
        if (n == 1 && x[0] == (double)tp->source_ts)
            continue;
        x[n] = (double)tp->source_ts;
        y[n] = (double)target;
        n++;
    }
    if (n == 2)
        return (int64_t)(y[0] + (y[1] - y[0]) * ((double)ts - x[0]) / (x[1] - x[0]));
    if (n == 1) {
        for (size_t i = 0; i < p->domain_count; i++)
            if (p->domains[i].image == image && p->domains[i].id == source &&
                p->domains[i].ticks_per_s)
                return (int64_t)(y[0] +
                                 ((double)ts - x[0]) * 1e9 / (double)p->domains[i].ticks_per_s);
    }
    return -1;
}

static int64_t convert(struct hgtx *h, uint64_t image, uint64_t source, int64_t ts, int depth)
{
    struct hgtx_payloads *p = h->payloads;
    if (depth > 3)
        return -1;
    if (source < TIME_DOMAIN_STATIC_START) {
        int64_t v = convert_type(h, source, ts);
        return v >= 0 ? v : convert_by_points(h, image, source, ts, depth);
    }
    for (size_t i = 0; i < p->domain_count; i++) {
        const struct time_domain *d = &p->domains[i];
        if (d->image != image || d->id != source)
            continue;
        int64_t v = convert_type(h, d->timestamp_type, ts);
        if (v >= 0 && d->timestamp_type)
            return v;
        break;
    }
    return convert_by_points(h, image, source, ts, depth);
}

int64_t hgtx_time_to_ns(struct hgtx *h, uint64_t image_uid, uint32_t domain, uint64_t time_domain,
                        int64_t timestamp)
{
    (void)domain; /* time domain ids are unique in a process */
    for (int depth = 0; image_uid && depth < 64; depth++) {
        int64_t v = convert(h, image_uid, time_domain, timestamp, 0);
        if (v >= 0)
            return v;
        struct imp_image *img = imp_image_get(h->imp, image_uid);
        image_uid = img ? img->parent_uid : 0;
    }
    return -1;
}

static int hgtx_payloads_finish(struct hgtx *h, struct asys_err *err)
{
    (void)h;
    (void)err;
    return 0;
}

/* ---- decoding (derive) ----------------------------------------------------------------- */

static const struct hgtx_schema *decoder_schema(void *ctx, uint64_t id)
{
    struct hgtx_payloads *p = ctx;
    const struct imp_schema *s = find_schema(p->h, p->decoder_image, p->decoder_domain, id);
    return s ? &s->s : NULL;
}

/* The text of a global string id, read once from the strings table. */
static const char *global_text(struct hgtx_payloads *p, uint32_t id)
{
    uint64_t *at = asys_u64map_get(&p->texts, id);
    if (at)
        return p->text_pool[*at - 1];
    sqlite3_stmt *st = p->read_string;
    sqlite3_bind_int64(st, 1, id);
    const char *text = NULL;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0)) {
        char *copy = strdup((const char *)sqlite3_column_text(st, 0));
        if (copy &&
            !asys_grow(&p->text_pool, &p->text_cap, p->text_count, sizeof *p->text_pool, 64)) {
            p->text_pool[p->text_count++] = copy;
            if (asys_u64map_put(&p->texts, id, p->text_count) == 0)
                text = copy;
        } else {
            free(copy);
        }
    }
    sqlite3_reset(st);
    return text;
}

static const char *decoder_text(void *ctx, uint32_t sid)
{
    struct hgtx_payloads *p = ctx;
    struct imp_image *img = imp_image_get(p->h->imp, p->decoder_image);
    uint32_t id = img ? imp_string(p->h->imp, img, sid) : 0;
    return id ? global_text(p, id) : NULL;
}

struct hgtx_decoder *hgtx_payload_decoder(struct hgtx *h, uint64_t image_uid, uint32_t domain,
                                          int (*field)(void *, const struct hgtx_field *),
                                          void *ctx)
{
    struct hgtx_payloads *p = h->payloads;
    p->decoder_image = image_uid;
    p->decoder_domain = domain;
    p->decoder.schema = decoder_schema;
    p->decoder.text = decoder_text;
    p->decoder.field = field;
    p->decoder.ctx = p;
    p->decoder.field_ctx = ctx;
    return &p->decoder; /* its counts of what it could not decode go on */
}

/* The attributes of an event that its payload holds. */
struct event_attributes {
    const char *message;
    size_t message_length;
    int64_t color, category; /* -1: none */
    int64_t begin, end, mark; /* CLOCK_MONOTONIC ns; -1: none */
    int unknown_time;
};

struct decode_ctx {
    struct hgtx *h;
    const struct pending *pending;
    struct event_attributes attr;
    int64_t payload_row;
    const char *prefix; /* batch element "[i]." */
    int failed;
    struct asys_err *err;
};

static void bind_field_value(sqlite3_stmt *st, int col, const struct hgtx_field *f)
{
    char digits[24];
    switch (f->kind) {
    case HGTX_INT:
        sqlite3_bind_int64(st, col, f->i);
        break;
    case HGTX_UINT:
        if (f->u > INT64_MAX) {
            int n = snprintf(digits, sizeof digits, "%" PRIu64, f->u);
            sqlite3_bind_text(st, col, digits, n, SQLITE_TRANSIENT);
        } else {
            sqlite3_bind_int64(st, col, (int64_t)f->u);
        }
        break;
    case HGTX_REAL:
        sqlite3_bind_double(st, col, f->d);
        break;
    case HGTX_TEXT:
    default:
        sqlite3_bind_text(st, col, f->text, (int)f->text_length, SQLITE_TRANSIENT);
        break;
    }
}

static int64_t field_integer(const struct hgtx_field *f)
{
    return f->kind == HGTX_INT    ? f->i
           : f->kind == HGTX_UINT ? (f->u > INT64_MAX ? -1 : (int64_t)f->u)
           : f->kind == HGTX_REAL ? (int64_t)f->d
                                  : -1;
}

/* What a field says of its event. */
static void note_attribute(struct decode_ctx *c, const struct hgtx_field *f)
{
    struct event_attributes *a = &c->attr;
    uint64_t kind = f->entry_flags & ASYS_NVTX_FLAG_KIND_MASK;
    if (kind == ASYS_NVTX_FLAG_EVENT_MESSAGE && f->kind == HGTX_TEXT && !a->message) {
        a->message = f->text;
        a->message_length = f->text_length;
    } else if (f->entry_type == ASYS_NVTX_TYPE_COLOR_ARGB && a->color < 0) {
        a->color = field_integer(f) & 0xffffffff;
    } else if (f->entry_type == ASYS_NVTX_TYPE_CATEGORY && a->category < 0) {
        a->category = field_integer(f) & 0xffffffff;
    } else if (kind == ASYS_NVTX_FLAG_TIMESTAMP) {
        int64_t ns = hgtx_time_to_ns(c->h, c->pending->image, c->pending->domain, f->time_domain,
                                     field_integer(f));
        if (ns < 0) {
            a->unknown_time = 1;
            return;
        }
        uint64_t event = f->entry_flags & ASYS_NVTX_FLAG_EVENT_MASK;
        if (event == ASYS_NVTX_FLAG_RANGE_END)
            a->end = ns;
        else if (event == ASYS_NVTX_FLAG_MARK)
            a->mark = ns;
        else if (a->begin < 0)
            a->begin = ns;
    }
}

static int on_field(void *ctx, const struct hgtx_field *f)
{
    struct decode_ctx *c = ctx;
    struct hgtx_payloads *p = c->h->payloads;
    if (f->kind == HGTX_TEXT &&
        (f->entry_flags & ASYS_NVTX_FLAG_KIND_MASK) == ASYS_NVTX_FLAG_EVENT_MESSAGE) {
        /* the message text lives only while the decoder runs: intern it now */
        uint32_t id;
        if (imp_intern_text(c->h->imp, f->text, f->text_length, &id, c->err) != 0) {
            c->failed = 1;
            return -1;
        }
        if (!c->attr.message) {
            c->attr.message = global_text(p, id);
            c->attr.message_length = c->attr.message ? strlen(c->attr.message) : 0;
        }
    } else {
        note_attribute(c, f);
    }
    sqlite3_stmt *st = p->insert_field;
    char path[600];
    snprintf(path, sizeof path, "%s%s", c->prefix ? c->prefix : "", f->path);
    sqlite3_bind_int64(st, 1, c->payload_row);
    sqlite3_bind_text(st, 2, path, -1, SQLITE_TRANSIENT);
    if (f->type)
        sqlite3_bind_text(st, 3, f->type, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 3);
    bind_field_value(st, 4, f);
    if (imp_step(c->h->imp, st, c->err) != 0) {
        c->failed = 1;
        return -1;
    }
    return 0;
}

static int prepare_derive(struct hgtx *h, struct asys_err *err)
{
    struct hgtx_payloads *p = h->payloads;
    struct asys_importer *imp = h->imp;
    return imp_prepare(imp,
                       "INSERT INTO hgtx_payload_fields (payload_id, field, type, value) "
                       "VALUES (?,?,?,?)",
                       &p->insert_field, err) ||
                   imp_prepare(imp, "SELECT data, flags FROM hgtx_payloads WHERE id = ?",
                               &p->read_payload, err) ||
                   imp_prepare(imp, "SELECT value FROM strings WHERE id = ?", &p->read_string,
                               err) ||
                   imp_prepare(imp, "UPDATE hgtx_payloads SET event_id = ? WHERE id = ?",
                               &p->set_event, err) ||
                   /* payload events and pops/ends: the payload's attributes win */
                   imp_prepare(imp,
                               "UPDATE hgtx_events SET text_id = COALESCE(?, text_id), "
                               "color = COALESCE(?, color), category = COALESCE(?, category) "
                               "WHERE id = ?",
                               &p->update_event, err) ||
                   /* an Ex call's attached payload fills only what the call did not give */
                   imp_prepare(imp,
                               "UPDATE hgtx_events SET text_id = COALESCE(text_id, ?), "
                               "color = COALESCE(color, ?), category = COALESCE(category, ?) "
                               "WHERE id = ?",
                               &p->fill_event, err) ||
                   imp_prepare(imp, "UPDATE hgtx_events SET deferred = 1 WHERE id = ?",
                               &p->mark_deferred, err)
               ? -1
               : 0;
}

static int apply_attributes(struct hgtx *h, const struct pending *pd, int64_t event,
                            const struct event_attributes *a, struct asys_err *err)
{
    struct hgtx_payloads *p = h->payloads;
    struct asys_importer *imp = h->imp;
    uint32_t text = 0;
    if (a->message && imp_intern_text(imp, a->message, a->message_length, &text, err) != 0)
        return -1;
    if (!text && a->color < 0 && a->category < 0)
        return 0;
    sqlite3_stmt *st =
        pd->event_kind == ASYS_HGTX_PAYLOAD_ATTACHED ? p->fill_event : p->update_event;
    imp_bind_optional(st, 1, text, text != 0);
    imp_bind_optional(st, 2, a->color, a->color >= 0);
    imp_bind_optional(st, 3, a->category, a->category >= 0);
    sqlite3_bind_int64(st, 4, event);
    return imp_step(imp, st, err);
}

/* A deferred event (nvtxEventSubmit, one element of a batch) from its attributes. */
static int make_deferred(struct hgtx *h, const struct pending *pd, const struct event_attributes *a,
                         int64_t *event, struct asys_err *err)
{
    struct hgtx_payloads *p = h->payloads;
    struct asys_importer *imp = h->imp;
    *event = 0;
    int64_t start = a->begin >= 0 ? a->begin : a->mark;
    if (start < 0) {
        p->deferred_unknown_time++;
        return 0;
    }
    struct hgtx_open o;
    memset(&o, 0, sizeof o);
    o.id = h->next_hgtx_id++;
    o.start_ns = (uint64_t)start;
    o.pid = pd->pid;
    o.tid = pd->tid;
    o.domain = pd->domain;
    o.category = a->category;
    o.color = a->color;
    o.level = -1;
    o.parent = -1;
    if (a->message && imp_intern_text(imp, a->message, a->message_length, &o.text_id, err) != 0)
        return -1;
    int range = a->begin >= 0 && a->end >= a->begin;
    if (hgtx_insert_event(h, range ? KIND_STARTEND : KIND_MARK, &o, range ? a->end : start,
                          range ? pd->tid : 0, err) != 0)
        return -1;
    sqlite3_bind_int64(p->mark_deferred, 1, o.id);
    if (imp_step(imp, p->mark_deferred, err) != 0)
        return -1;
    *event = o.id;
    return 0;
}

static void attributes_reset(struct event_attributes *a)
{
    memset(a, 0, sizeof *a);
    a->color = a->category = a->begin = a->end = a->mark = -1;
}

/* The elements of a batch of deferred events, one after the other. */
static int decode_batch(struct hgtx *h, const struct pending *pd, const uint8_t *data, size_t size,
                        uint32_t flags, struct decode_ctx *c, struct asys_err *err)
{
    struct hgtx_decoder *d = hgtx_payload_decoder(h, pd->image, pd->domain, on_field, c);
    uint64_t element = hgtx_payload_size(d, pd->schema_id);
    if (!element) {
        d->unsupported++;
        return 0;
    }
    char prefix[32];
    for (uint64_t i = 0, at = 0; at + element <= size && i < (1u << 20); i++, at += element) {
        snprintf(prefix, sizeof prefix, "[%" PRIu64 "].", i);
        c->prefix = prefix;
        attributes_reset(&c->attr);
        if (hgtx_decode(d, pd->schema_id, data + at, element, flags) < 0 && c->failed)
            return -1;
        int64_t event;
        if (make_deferred(h, pd, &c->attr, &event, err) != 0)
            return -1;
    }
    return 0;
}

static int decode_one(struct hgtx *h, const struct pending *pd, struct asys_err *err)
{
    struct hgtx_payloads *p = h->payloads;
    struct asys_importer *imp = h->imp;
    int64_t event = pd->event;
    if (!event && pd->event_kind == ASYS_HGTX_PAYLOAD_END) { /* its start came later */
        struct imp_image *img = imp_image_get(imp, pd->image);
        struct hgtx_image *hi = img ? hgtx_image(h, img) : NULL;
        uint64_t *id = hi ? asys_u64map_get(&hi->range_events, pd->range_id) : NULL;
        event = id ? (int64_t)*id : 0;
    }
    sqlite3_stmt *st = p->read_payload;
    sqlite3_bind_int64(st, 1, pd->row);
    if (sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_reset(st);
        return 0;
    }
    const uint8_t *data = sqlite3_column_blob(st, 0);
    size_t size = (size_t)sqlite3_column_bytes(st, 0);
    uint32_t flags = (uint32_t)sqlite3_column_int64(st, 1);
    struct decode_ctx c = {.h = h, .pending = pd, .payload_row = pd->row, .err = err};
    attributes_reset(&c.attr);
    int rc = 0;
    if (pd->event_kind == ASYS_HGTX_PAYLOAD_BATCH) {
        rc = decode_batch(h, pd, data, size, flags, &c, err);
    } else {
        struct hgtx_decoder *d = hgtx_payload_decoder(h, pd->image, pd->domain, on_field, &c);
        if (hgtx_decode(d, pd->schema_id, data, size, flags) < 0 && c.failed)
            rc = -1;
        if (rc == 0 && pd->event_kind == ASYS_HGTX_PAYLOAD_SUBMIT)
            rc = make_deferred(h, pd, &c.attr, &event, err);
        else if (rc == 0 && event)
            rc = apply_attributes(h, pd, event, &c.attr, err);
    }
    sqlite3_reset(st);
    if (rc != 0 || !event)
        return rc;
    sqlite3_bind_int64(p->set_event, 1, event);
    sqlite3_bind_int64(p->set_event, 2, pd->row);
    return imp_step(imp, p->set_event, err);
}

static int hgtx_payloads_derive(struct hgtx *h, struct asys_err *err)
{
    struct hgtx_payloads *p = h->payloads;
    struct asys_importer *imp = h->imp;
    if (prepare_derive(h, err) != 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < p->pending_count; i++)
        rc = decode_one(h, &p->pending[i], err);
    if (rc != 0)
        return -1;
    uint64_t unsupported = p->decoder.unsupported, cut = p->decoder.cut;
    if (unsupported)
        imp_warn(imp,
                 "%" PRIu64 " HGTX payload entries could not be decoded (unions, unknown "
                 "schemas, arrays sized by another payload)",
                 unsupported);
    if (cut)
        imp_warn(imp, "%" PRIu64 " HGTX payload entries reach past their payload's bytes", cut);
    if (p->deferred_unknown_time)
        imp_warn(imp, "%" PRIu64 " deferred HGTX events have times asys cannot convert (skipped)",
                 p->deferred_unknown_time);
    return imp_session_info(imp, "hgtx_payloads_undecoded", NULL, (int64_t)unsupported, err);
}

static const struct imp_record_op payloads_ops[] = {
    {ASYS_REC_HGTX_SCHEMA, hgtx_on_schema},
    {ASYS_REC_HGTX_PAYLOAD, hgtx_on_payload},
    {ASYS_REC_HGTX_TIME, hgtx_on_time},
};

const struct hgtx_extension hgtx_payloads_extension = {
    .name = "payloads",
    .records = {payloads_ops, sizeof payloads_ops / sizeof payloads_ops[0]},
    .init = hgtx_payloads_init,
    .finish = hgtx_payloads_finish,
    .derive = hgtx_payloads_derive,
    .free = hgtx_payloads_free,
};
