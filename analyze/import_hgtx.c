/* HGTX (NVTX) records -> hgtx_events, hgtx_domains, hgtx_categories; the
 * extensions' records go to the files named in import_hgtx.h.
 *
 * Push/pop ranges pair up on a per-thread, per-domain stack within one
 * segment.  Start/end ranges pair up by (process image, range id) across
 * segments, whichever of the two is read first.  A range without an end
 * (the program exited or died inside it) is kept with end_ns NULL. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "hgtx_decode.h"
#include "import_hgtx.h"

/* The family's extensions, in the order of their phases (payloads first:
 * counters decode their samples with its schemas). */
static const struct hgtx_extension *const extensions[] = {
    &hgtx_payloads_extension,
    &hgtx_counters_extension,
    &hgtx_objects_extension,
    NULL,
};

static void image_free(void *p)
{
    struct hgtx_image *hi = p;
    asys_u64map_free(&hi->domains);
    asys_u64map_free(&hi->starts);
    asys_u64map_free(&hi->ends);
    asys_u64map_free(&hi->range_events);
    free(hi);
}

/* The image's HGTX state, created on first use.  Out of memory aborts the
 * import at the next allocation check; a static empty state keeps callers
 * simple until then. */
struct hgtx_image *hgtx_image(struct hgtx *h, struct imp_image *img)
{
    if (!img->slot[h->slot]) {
        struct hgtx_image *hi = calloc(1, sizeof *hi);
        if (!hi)
            return NULL;
        asys_u64map_init(&hi->domains);
        asys_u64map_init(&hi->starts);
        asys_u64map_init(&hi->ends);
        asys_u64map_init(&hi->range_events);
        img->slot[h->slot] = hi;
    }
    return img->slot[h->slot];
}

static int hgtx_init(struct asys_importer *imp, void **state, struct asys_err *err)
{
    struct hgtx *h = calloc(1, sizeof *h);
    if (!h)
        return asys_fail(err, "out of memory");
    *state = h;
    h->imp = imp;
    h->next_hgtx_id = 1;
    h->slot = imp_image_slot_new(imp, image_free);
    if (h->slot < 0)
        return asys_fail(err, "too many per-image states");
    h->open_free = -1;
    asys_u64map_init(&h->categories);
    h->domain_cap = 16;
    h->domains = calloc(h->domain_cap, sizeof *h->domains);
    if (!h->domains)
        return asys_fail(err, "out of memory");
    h->domain_count = 1; /* 0: the default domain */
    const char *sql = "INSERT INTO hgtx_events (id, kind, start_ns, end_ns, pid, tid, end_tid, "
                      "domain_id, text_id, category, color, payload_type, payload, nesting_level, "
                      "parent_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
    if (sqlite3_prepare_v3(imp->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &h->insert_hgtx, NULL) !=
        SQLITE_OK)
        return imp_sql_error(imp, err);
    /* the same statement with HGTX_BATCH_ROWS rows of values */
    const char *values = strstr(sql, "(?,");
    size_t head = (size_t)(values - sql), row = strlen(values);
    char *batch = malloc(head + HGTX_BATCH_ROWS * (row + 1) + 1);
    if (!batch)
        return asys_fail(err, "out of memory");
    memcpy(batch, sql, head);
    char *w = batch + head;
    for (size_t i = 0; i < HGTX_BATCH_ROWS; i++) {
        if (i)
            *w++ = ',';
        memcpy(w, values, row);
        w += row;
    }
    *w = '\0';
    int rc =
        sqlite3_prepare_v3(imp->db, batch, -1, SQLITE_PREPARE_PERSISTENT, &h->insert_batch, NULL);
    free(batch);
    if (rc != SQLITE_OK)
        return imp_sql_error(imp, err);
    for (const struct hgtx_extension *const *x = extensions; *x; x++)
        if ((*x)->init && (*x)->init(h, err) != 0)
            return -1;
    return 0;
}

static void hgtx_free(void *state)
{
    struct hgtx *h = state;
    if (!h)
        return;
    for (const struct hgtx_extension *const *x = extensions; *x; x++)
        if ((*x)->free)
            (*x)->free(h);
    sqlite3_finalize(h->insert_hgtx);
    h->insert_hgtx = NULL;
    sqlite3_finalize(h->insert_batch);
    h->insert_batch = NULL;
    free(h->domains);
    free(h->open_pool);
    free(h->end_pool);
    asys_u64map_free(&h->categories);
    for (size_t i = 0; i < h->stack_count; i++)
        free(h->stacks[i].items);
    free(h->stacks);
    free(h);
}

/* ---- domains ---------------------------------------------------------------- */

static uint32_t new_domain(struct hgtx *h)
{
    if (h->domain_count == h->domain_cap) {
        size_t cap = h->domain_cap * 2;
        struct imp_domain *bigger = realloc(h->domains, cap * sizeof *bigger);
        if (!bigger)
            return 0;
        h->domains = bigger;
        h->domain_cap = cap;
    }
    memset(&h->domains[h->domain_count], 0, sizeof *h->domains);
    return (uint32_t)h->domain_count++;
}

/* The global id of a domain of the current image; a placeholder when its
 * DOMAIN record has not been read (yet). */
uint32_t hgtx_domain_global(struct hgtx *h, uint16_t local)
{
    struct asys_importer *imp = h->imp;
    if (local == 0)
        return 0;
    struct imp_image *img = imp->seg.image;
    struct hgtx_image *hi = hgtx_image(h, img);
    if (!hi)
        return 0;
    uint64_t *v = asys_u64map_get(&hi->domains, local);
    if (v)
        return (uint32_t)*v;
    uint32_t id = new_domain(h);
    if (!id)
        return 0;
    h->domains[id].pid = img->pid;
    h->domains[id].pending_uid = img->uid;
    h->domains[id].pending_local = local;
    if (asys_u64map_put(&hi->domains, local, id) != 0)
        return 0;
    return id;
}

static int import_domain(struct hgtx *h, const struct asys_record *rec, uint64_t ns)
{
    struct asys_importer *imp = h->imp;
    const struct asys_rec_hgtx_domain *r = (const void *)rec->data;
    uint32_t id = hgtx_domain_global(h, (uint16_t)rec->arg);
    if (!id)
        return 0;
    struct imp_domain *d = &h->domains[id];
    if (r->destroyed) {
        d->destroyed_ns = ns;
    } else {
        d->name_id = imp_string(imp, imp->seg.image, r->name_string_id);
        d->created_ns = ns;
        d->pending_uid = 0;
    }
    return 0;
}

/* A domain used by a fork child but created by its parent before the fork
 * takes the parent's name. */
static uint32_t inherited_domain_name(struct hgtx *h, const struct imp_domain *d)
{
    struct asys_importer *imp = h->imp;
    struct imp_image *img = imp_image_get(imp, d->pending_uid);
    while (img && img->parent_uid) {
        img = imp_image_get(imp, img->parent_uid);
        struct hgtx_image *hi = img ? hgtx_image(h, img) : NULL;
        uint64_t *v = hi ? asys_u64map_get(&hi->domains, d->pending_local) : NULL;
        if (v && h->domains[*v].name_id)
            return h->domains[*v].name_id;
    }
    return 0;
}

static int finish_domains(struct hgtx *h, struct asys_err *err)
{
    struct asys_importer *imp = h->imp;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(imp->db,
                           "INSERT INTO hgtx_domains (id, pid, name_id, created_ns, "
                           "destroyed_ns) VALUES (?,?,?,?,?)",
                           -1, &st, NULL) != SQLITE_OK)
        return imp_sql_error(imp, err);
    int rc = 0;
    for (size_t id = 0; rc == 0 && id < h->domain_count; id++) {
        struct imp_domain *d = &h->domains[id];
        if (id && !d->name_id && d->pending_uid)
            d->name_id = inherited_domain_name(h, d);
        sqlite3_bind_int64(st, 1, (int64_t)id);
        imp_bind_optional(st, 2, d->pid, id != 0);
        imp_bind_optional(st, 3, d->name_id, d->name_id != 0);
        imp_bind_optional(st, 4, (int64_t)d->created_ns, d->created_ns != 0);
        imp_bind_optional(st, 5, (int64_t)d->destroyed_ns, d->destroyed_ns != 0);
        rc = sqlite3_step(st) == SQLITE_DONE ? 0 : imp_sql_error(imp, err);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    return rc;
}

static int import_category(struct hgtx *h, const struct asys_record *rec)
{
    struct asys_importer *imp = h->imp;
    const struct asys_rec_hgtx_category *r = (const void *)rec->data;
    uint64_t key = (uint64_t)hgtx_domain_global(h, (uint16_t)rec->arg) << 32 | r->category;
    return asys_u64map_put(&h->categories, key, imp_string(imp, imp->seg.image, r->name_string_id));
}

static int finish_categories(struct hgtx *h, struct asys_err *err)
{
    struct asys_importer *imp = h->imp;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(imp->db,
                           "INSERT INTO hgtx_categories (domain_id, category, name_id) "
                           "VALUES (?,?,?)",
                           -1, &st, NULL) != SQLITE_OK)
        return imp_sql_error(imp, err);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < h->categories.capacity; i++) {
        if (!h->categories.used[i])
            continue;
        sqlite3_bind_int64(st, 1, (int64_t)(h->categories.keys[i] >> 32));
        sqlite3_bind_int64(st, 2, (int64_t)(h->categories.keys[i] & 0xffffffffu));
        sqlite3_bind_int64(st, 3, (int64_t)h->categories.values[i]);
        rc = sqlite3_step(st) == SQLITE_DONE ? 0 : imp_sql_error(imp, err);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    return rc;
}

static int import_thread_name(struct hgtx *h, const struct asys_record *rec, uint64_t ns,
                              struct asys_err *err)
{
    struct asys_importer *imp = h->imp;
    const struct asys_rec_hgtx_thread_name *r = (const void *)rec->data;
    struct imp_thread *t = imp_thread_get(imp, imp->seg.pid, r->os_tid);
    if (!t)
        return asys_fail(err, "out of memory");
    if (!t->hgtx_name_id || ns >= t->hgtx_name_ns) {
        t->hgtx_name_id = imp_string(imp, imp->seg.image, r->name_string_id);
        t->hgtx_name_ns = ns;
    }
    return 0;
}

/* ---- events ------------------------------------------------------------------ */

void hgtx_open_plain(struct hgtx *h, struct hgtx_open *o, uint32_t sid, uint64_t ns)
{
    struct asys_importer *imp = h->imp;
    o->start_ns = ns;
    o->pid = imp->seg.pid;
    o->tid = imp->seg.tid;
    o->domain = 0;
    o->text_id = imp_string(imp, imp->seg.image, sid);
    o->category = -1;
    o->color = -1;
    o->payload_type = 0;
    o->payload = 0;
    o->level = -1;
    o->parent = -1;
}

static void open_from_attributes(struct hgtx *h, struct hgtx_open *o,
                                 const struct asys_hgtx_attributes *a, uint64_t ns)
{
    hgtx_open_plain(h, o, a->message_string_id, ns);
    o->domain = hgtx_domain_global(h, a->domain_id);
    if (a->flags & ASYS_HGTX_HAS_CATEGORY)
        o->category = a->category;
    if (a->flags & ASYS_HGTX_HAS_COLOR)
        o->color = a->color_argb;
    if (a->flags & ASYS_HGTX_HAS_PAYLOAD) {
        o->payload_type = a->payload_type;
        o->payload = a->payload;
    }
}

static void bind_payload(sqlite3_stmt *st, int col, uint32_t type, uint64_t bits)
{
    double d;
    switch (type) {
    case 3: /* double */
    case 6: /* float, widened by the recorder */
        memcpy(&d, &bits, sizeof d);
        sqlite3_bind_double(st, col, d);
        break;
    case 2: /* int64 */
    case 5: /* int32, sign-extended */
        sqlite3_bind_int64(st, col, (int64_t)bits);
        break;
    case 1: /* uint64 */
    case 4: /* uint32 */
        if (bits > INT64_MAX) {
            /* beyond SQLite's integers: its decimal digits, exactly (the
             * column's type, ASYS_DECLTYPE_NUMBER, keeps TEXT as it is) */
            char digits[24];
            int n = snprintf(digits, sizeof digits, "%llu", (unsigned long long)bits);
            sqlite3_bind_text(st, col, digits, n, SQLITE_TRANSIENT);
        } else {
            sqlite3_bind_int64(st, col, (int64_t)bits);
        }
        break;
    default:
        sqlite3_bind_null(st, col);
    }
}

/* One row's 15 values from parameter `base` + 1 on. */
static void bind_event(sqlite3_stmt *st, int base, const struct hgtx_row *r)
{
    const struct hgtx_open *o = &r->o;
    sqlite3_bind_int64(st, base + 1, o->id);
    sqlite3_bind_int64(st, base + 2, r->kind);
    sqlite3_bind_int64(st, base + 3, (int64_t)o->start_ns);
    imp_bind_optional(st, base + 4, r->end_ns, r->end_ns >= 0);
    sqlite3_bind_int64(st, base + 5, o->pid);
    sqlite3_bind_int64(st, base + 6, o->tid);
    imp_bind_optional(st, base + 7, r->end_tid, r->end_tid != 0);
    sqlite3_bind_int64(st, base + 8, o->domain);
    imp_bind_optional(st, base + 9, o->text_id, o->text_id != 0);
    imp_bind_optional(st, base + 10, o->category, o->category >= 0);
    imp_bind_optional(st, base + 11, o->color, o->color >= 0);
    imp_bind_optional(st, base + 12, o->payload_type, o->payload_type != 0);
    bind_payload(st, base + 13, o->payload_type, o->payload);
    imp_bind_optional(st, base + 14, o->level, o->level >= 0);
    imp_bind_optional(st, base + 15, o->parent, o->parent >= 0);
}

static int step_insert(struct hgtx *h, sqlite3_stmt *st, struct asys_err *err)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : imp_sql_error(h->imp, err);
}

int hgtx_flush_events(struct hgtx *h, struct asys_err *err)
{
    size_t n = h->batch_count;
    h->batch_count = 0;
    if (n == HGTX_BATCH_ROWS) {
        for (size_t i = 0; i < n; i++)
            bind_event(h->insert_batch, (int)(i * 15), &h->batch[i]);
        return step_insert(h, h->insert_batch, err);
    }
    for (size_t i = 0; i < n; i++) {
        bind_event(h->insert_hgtx, 0, &h->batch[i]);
        if (step_insert(h, h->insert_hgtx, err) != 0)
            return -1;
    }
    return 0;
}

int hgtx_insert_event(struct hgtx *h, int kind, const struct hgtx_open *o, int64_t end_ns,
                      uint32_t end_tid, struct asys_err *err)
{
    struct hgtx_row *r = &h->batch[h->batch_count++];
    r->o = *o;
    r->kind = kind;
    r->end_ns = end_ns;
    r->end_tid = end_tid;
    return h->unbatched || h->batch_count == HGTX_BATCH_ROWS ? hgtx_flush_events(h, err) : 0;
}

/* ---- push / pop ---------------------------------------------------------------- */

static struct hgtx_stack *stack_of(struct hgtx *h, uint16_t domain_local, int create)
{
    for (size_t i = 0; i < h->stack_count; i++)
        if (h->stacks[i].domain_local == domain_local)
            return &h->stacks[i];
    if (!create)
        return NULL;
    struct hgtx_stack *bigger = realloc(h->stacks, (h->stack_count + 1) * sizeof *bigger);
    if (!bigger)
        return NULL;
    h->stacks = bigger;
    struct hgtx_stack *s = &h->stacks[h->stack_count++];
    memset(s, 0, sizeof *s);
    s->domain_local = domain_local;
    return s;
}

int hgtx_push(struct hgtx *h, uint16_t domain_local, struct hgtx_open *o, struct asys_err *err)
{
    struct hgtx_stack *s = stack_of(h, domain_local, 1);
    if (!s)
        return asys_fail(err, "out of memory");
    if (asys_grow(&s->items, &s->cap, s->count, sizeof *s->items, 16))
        return asys_fail(err, "out of memory");
    o->id = h->next_hgtx_id++;
    o->level = (int32_t)s->count;
    o->parent = s->count ? s->items[s->count - 1].id : -1;
    s->items[s->count++] = *o;
    h->last_event = o->id;
    return 0;
}

int hgtx_pop(struct hgtx *h, uint16_t domain_local, uint64_t ns, int64_t *event,
             struct asys_err *err)
{
    struct hgtx_stack *s = stack_of(h, domain_local, 0);
    *event = 0;
    if (!s || !s->count) {
        h->unmatched_pops++;
        return 0;
    }
    const struct hgtx_open *o = &s->items[--s->count];
    *event = o->id;
    return hgtx_insert_event(h, KIND_PUSHPOP, o, (int64_t)ns, 0, err);
}

static int hgtx_segment_end(void *state, struct asys_err *err)
{
    struct hgtx *h = state;
    int rc = 0;
    for (size_t i = 0; i < h->stack_count; i++) {
        struct hgtx_stack *s = &h->stacks[i];
        for (size_t j = 0; rc == 0 && j < s->count; j++) {
            h->open_ranges++;
            rc = hgtx_insert_event(h, KIND_PUSHPOP, &s->items[j], -1, 0, err);
        }
        free(s->items);
    }
    free(h->stacks);
    h->stacks = NULL;
    h->stack_count = 0;
    h->last_event = 0;
    return rc;
}

/* ---- marks ------------------------------------------------------------------------ */

int hgtx_mark(struct hgtx *h, uint16_t domain_local, struct hgtx_open *o, struct asys_err *err)
{
    struct hgtx_stack *s = stack_of(h, domain_local, 0);
    o->id = h->next_hgtx_id++;
    h->last_event = o->id;
    o->parent = s && s->count ? s->items[s->count - 1].id : -1;
    return hgtx_insert_event(h, KIND_MARK, o, (int64_t)o->start_ns, 0, err);
}

/* ---- start / end ---------------------------------------------------------------------- */

static int64_t pool_take(struct hgtx *h)
{
    if (h->open_free >= 0) {
        int64_t i = h->open_free;
        h->open_free = h->open_pool[i].id;
        return i;
    }
    if (asys_grow(&h->open_pool, &h->open_cap, h->open_count, sizeof *h->open_pool, 64))
        return -1;
    return (int64_t)h->open_count++;
}

static void pool_give_back(struct hgtx *h, int64_t i)
{
    h->open_pool[i].id = h->open_free;
    h->open_free = i;
}

int hgtx_start(struct hgtx *h, uint64_t range_id, struct hgtx_open *o, struct asys_err *err)
{
    struct hgtx_image *hi = hgtx_image(h, h->imp->seg.image);
    if (!hi)
        return asys_fail(err, "out of memory");
    o->id = h->next_hgtx_id++;
    h->last_event = o->id;
    if (asys_u64map_put(&hi->range_events, range_id, (uint64_t)o->id) != 0)
        return asys_fail(err, "out of memory");
    uint64_t *end_index = asys_u64map_get(&hi->ends, range_id);
    if (end_index) { /* its end was read first (another thread's segment) */
        struct hgtx_end e = h->end_pool[*end_index];
        asys_u64map_remove(&hi->ends, range_id);
        return hgtx_insert_event(h, KIND_STARTEND, o, (int64_t)e.end_ns, e.tid, err);
    }
    int64_t i = pool_take(h);
    if (i < 0 || asys_u64map_put(&hi->starts, range_id, (uint64_t)i) != 0)
        return asys_fail(err, "out of memory");
    h->open_pool[i] = *o;
    return 0;
}

int hgtx_end(struct hgtx *h, uint64_t range_id, uint64_t ns, struct asys_err *err)
{
    uint32_t tid = h->imp->seg.tid;
    struct hgtx_image *hi = hgtx_image(h, h->imp->seg.image);
    if (!hi)
        return asys_fail(err, "out of memory");
    uint64_t *start_index = asys_u64map_get(&hi->starts, range_id);
    if (start_index) {
        int64_t i = (int64_t)*start_index;
        asys_u64map_remove(&hi->starts, range_id);
        int rc = hgtx_insert_event(h, KIND_STARTEND, &h->open_pool[i], (int64_t)ns, tid, err);
        pool_give_back(h, i);
        return rc;
    }
    if (asys_grow(&h->end_pool, &h->end_cap, h->end_count, sizeof *h->end_pool, 64))
        return asys_fail(err, "out of memory");
    h->end_pool[h->end_count] = (struct hgtx_end){ns, tid};
    if (asys_u64map_put(&hi->ends, range_id, h->end_count++) != 0)
        return asys_fail(err, "out of memory");
    return 0;
}

/* ---- the record handlers -------------------------------------------------------------------- */

static int on_push(void *state, const struct asys_record *rec, uint64_t ns, struct asys_err *err)
{
    struct hgtx_open o;
    hgtx_open_plain(state, &o, rec->arg, ns);
    return hgtx_push(state, 0, &o, err);
}

static int on_push_ex(void *state, const struct asys_record *rec, uint64_t ns, struct asys_err *err)
{
    const struct asys_rec_hgtx_ex *r = (const void *)rec->data;
    struct hgtx_open o;
    open_from_attributes(state, &o, &r->attr, ns);
    return hgtx_push(state, r->attr.domain_id, &o, err);
}

static int on_pop(void *state, const struct asys_record *rec, uint64_t ns, struct asys_err *err)
{
    int64_t event;
    return hgtx_pop(state, (uint16_t)rec->arg, ns, &event, err);
}

static int on_mark(void *state, const struct asys_record *rec, uint64_t ns, struct asys_err *err)
{
    struct hgtx_open o;
    hgtx_open_plain(state, &o, rec->arg, ns);
    return hgtx_mark(state, 0, &o, err);
}

static int on_mark_ex(void *state, const struct asys_record *rec, uint64_t ns, struct asys_err *err)
{
    const struct asys_rec_hgtx_ex *r = (const void *)rec->data;
    struct hgtx_open o;
    open_from_attributes(state, &o, &r->attr, ns);
    return hgtx_mark(state, r->attr.domain_id, &o, err);
}

static int on_start(void *state, const struct asys_record *rec, uint64_t ns, struct asys_err *err)
{
    const struct asys_rec_hgtx_range *r = (const void *)rec->data;
    struct hgtx_open o;
    hgtx_open_plain(state, &o, rec->arg, ns);
    return hgtx_start(state, r->range_id, &o, err);
}

static int on_start_ex(void *state, const struct asys_record *rec, uint64_t ns,
                       struct asys_err *err)
{
    const struct asys_rec_hgtx_start_ex *r = (const void *)rec->data;
    struct hgtx_open o;
    open_from_attributes(state, &o, &r->attr, ns);
    return hgtx_start(state, r->range_id, &o, err);
}

static int on_end(void *state, const struct asys_record *rec, uint64_t ns, struct asys_err *err)
{
    const struct asys_rec_hgtx_range *r = (const void *)rec->data;
    return hgtx_end(state, r->range_id, ns, err);
}

static int on_domain(void *state, const struct asys_record *rec, uint64_t ns, struct asys_err *err)
{
    (void)err;
    return import_domain(state, rec, ns);
}

static int on_category(void *state, const struct asys_record *rec, uint64_t ns,
                       struct asys_err *err)
{
    (void)ns;
    return import_category(state, rec) == 0 ? 0 : asys_fail(err, "out of memory");
}

static int on_thread_name(void *state, const struct asys_record *rec, uint64_t ns,
                          struct asys_err *err)
{
    return import_thread_name(state, rec, ns, err);
}

/* Start/end ranges whose end never came, image by image. */
static int finish_open_ranges(struct asys_importer *imp, struct imp_image *img, void *arg)
{
    (void)imp;
    struct hgtx *h = arg;
    struct hgtx_image *hi = img->slot[h->slot];
    if (!hi)
        return 0;
    for (size_t j = 0; j < hi->starts.capacity; j++) {
        if (!hi->starts.used[j])
            continue;
        h->open_ranges++;
        if (hgtx_insert_event(h, KIND_STARTEND, &h->open_pool[hi->starts.values[j]], -1, 0,
                              h->finish_err) != 0)
            return -1;
    }
    h->unmatched_ends += hi->ends.count;
    return 0;
}

static int hgtx_finish(void *state, struct asys_err *err)
{
    struct hgtx *h = state;
    struct asys_importer *imp = h->imp;
    h->finish_err = err;
    if (imp_each_image(imp, finish_open_ranges, h) != 0 || hgtx_flush_events(h, err) != 0)
        return -1;
    h->unbatched = 1; /* the extensions' finish and derive read and update rows */
    if (h->unmatched_pops)
        imp_warn(imp, "%" PRIu64 " HGTX pops had no matching push (ignored)", h->unmatched_pops);
    if (h->unmatched_ends)
        imp_warn(imp, "%" PRIu64 " HGTX range ends had no matching start (ignored)",
                 h->unmatched_ends);
    imp->stats->hgtx_events = (uint64_t)(h->next_hgtx_id - 1);
    if (imp_session_info(imp, "hgtx_unmatched_pops", NULL, (int64_t)h->unmatched_pops, err) ||
        imp_session_info(imp, "hgtx_unmatched_ends", NULL, (int64_t)h->unmatched_ends, err) ||
        imp_session_info(imp, "hgtx_open_ranges", NULL, (int64_t)h->open_ranges, err))
        return -1;
    if (finish_domains(h, err) != 0 || finish_categories(h, err) != 0)
        return -1;
    for (const struct hgtx_extension *const *x = extensions; *x; x++)
        if ((*x)->finish && (*x)->finish(h, err) != 0)
            return -1;
    return 0;
}

/* Payloads and counter samples are decoded once every schema is known (a
 * schema may be in a segment read after the events that use it). */
static int hgtx_derive(void *state, struct asys_err *err)
{
    struct hgtx *h = state;
    for (const struct hgtx_extension *const *x = extensions; *x; x++)
        if ((*x)->derive && (*x)->derive(h, err) != 0)
            return -1;
    return 0;
}

static const struct imp_record_op hgtx_ops[] = {
    {ASYS_REC_HGTX_PUSH, on_push},
    {ASYS_REC_HGTX_PUSH_EX, on_push_ex},
    {ASYS_REC_HGTX_POP, on_pop},
    {ASYS_REC_HGTX_MARK, on_mark},
    {ASYS_REC_HGTX_MARK_EX, on_mark_ex},
    {ASYS_REC_HGTX_START, on_start},
    {ASYS_REC_HGTX_START_EX, on_start_ex},
    {ASYS_REC_HGTX_END, on_end},
    {ASYS_REC_HGTX_DOMAIN, on_domain},
    {ASYS_REC_HGTX_CATEGORY, on_category},
    {ASYS_REC_HGTX_THREAD_NAME, on_thread_name},
};

/* The extensions' record handlers, dispatched with this family's state. */
static const struct imp_record_ops *const extension_ops[] = {
    &hgtx_payloads_extension.records,
    &hgtx_counters_extension.records,
    &hgtx_objects_extension.records,
    NULL,
};

const struct imp_family imp_family_hgtx = {
    .name = "hgtx",
    .feature = ASYS_FEATURE_HGTX,
    .schema = "hgtx.sql",
    .ops = hgtx_ops,
    .op_count = sizeof hgtx_ops / sizeof hgtx_ops[0],
    .extension_ops = extension_ops,
    .init = hgtx_init,
    .segment_end = hgtx_segment_end,
    .finish = hgtx_finish,
    .derive = hgtx_derive,
    .free = hgtx_free,
};
