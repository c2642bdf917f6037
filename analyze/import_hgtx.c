/* HGTX (NVTX) records -> hgtx_events, hgtx_domains, hgtx_categories.
 *
 * Push/pop ranges pair up on a per-thread, per-domain stack within one
 * segment.  Start/end ranges pair up by (process image, range id) across
 * segments, whichever of the two is read first.  A range without an end
 * (the program exited or died inside it) is kept with end_ns NULL. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "importer_internal.h"

#define DOMAIN_NONE UINT64_MAX

enum { KIND_PUSHPOP = 1, KIND_STARTEND = 2, KIND_MARK = 3 };

int imp_hgtx_init(struct asys_importer *imp, struct asys_err *err)
{
    imp->open_free = -1;
    asys_u64map_init(&imp->categories);
    imp->domain_cap = 16;
    imp->domains = calloc(imp->domain_cap, sizeof *imp->domains);
    if (!imp->domains)
        return asys_fail(err, "out of memory");
    imp->domain_count = 1; /* 0: the default domain */
    const char *sql = "INSERT INTO hgtx_events (id, kind, start_ns, end_ns, pid, tid, end_tid, "
                      "domain_id, text_id, category, color, payload_type, payload, nesting_level, "
                      "parent_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
    if (sqlite3_prepare_v3(imp->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &imp->insert_hgtx, NULL) !=
        SQLITE_OK)
        return imp_sql_error(imp, err);
    return 0;
}

void imp_hgtx_free(struct asys_importer *imp)
{
    sqlite3_finalize(imp->insert_hgtx);
    imp->insert_hgtx = NULL;
    free(imp->domains);
    free(imp->open_pool);
    free(imp->end_pool);
    asys_u64map_free(&imp->categories);
    for (size_t i = 0; i < imp->seg.stack_count; i++)
        free(imp->seg.stacks[i].items);
    free(imp->seg.stacks);
    imp->seg.stacks = NULL;
    imp->seg.stack_count = 0;
}

/* ---- domains ---------------------------------------------------------------- */

static uint32_t new_domain(struct asys_importer *imp)
{
    if (imp->domain_count == imp->domain_cap) {
        size_t cap = imp->domain_cap * 2;
        struct imp_domain *bigger = realloc(imp->domains, cap * sizeof *bigger);
        if (!bigger)
            return 0;
        imp->domains = bigger;
        imp->domain_cap = cap;
    }
    memset(&imp->domains[imp->domain_count], 0, sizeof *imp->domains);
    return (uint32_t)imp->domain_count++;
}

/* The global id of a domain of the current image; a placeholder when its
 * DOMAIN record has not been read (yet). */
static uint32_t domain_global(struct asys_importer *imp, uint16_t local)
{
    if (local == 0)
        return 0;
    struct imp_image *img = imp->seg.image;
    uint64_t *v = asys_u64map_get(&img->domains, local);
    if (v)
        return (uint32_t)*v;
    uint32_t id = new_domain(imp);
    if (!id)
        return 0;
    imp->domains[id].pid = img->pid;
    imp->domains[id].pending_uid = img->uid;
    imp->domains[id].pending_local = local;
    if (asys_u64map_put(&img->domains, local, id) != 0)
        return 0;
    return id;
}

static int import_domain(struct asys_importer *imp, const struct asys_record *rec, uint64_t ns)
{
    const struct asys_rec_hgtx_domain *r = (const void *)rec->data;
    uint32_t id = domain_global(imp, (uint16_t)rec->arg);
    if (!id)
        return 0;
    struct imp_domain *d = &imp->domains[id];
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
static uint32_t inherited_domain_name(struct asys_importer *imp, const struct imp_domain *d)
{
    struct imp_image *img = imp_image_get(imp, d->pending_uid);
    while (img && img->parent_uid) {
        img = imp_image_get(imp, img->parent_uid);
        uint64_t *v = img ? asys_u64map_get(&img->domains, d->pending_local) : NULL;
        if (v && imp->domains[*v].name_id)
            return imp->domains[*v].name_id;
    }
    return 0;
}

static int finish_domains(struct asys_importer *imp, struct asys_err *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(imp->db,
                           "INSERT INTO hgtx_domains (id, pid, name_id, created_ns, "
                           "destroyed_ns) VALUES (?,?,?,?,?)",
                           -1, &st, NULL) != SQLITE_OK)
        return imp_sql_error(imp, err);
    int rc = 0;
    for (size_t id = 0; rc == 0 && id < imp->domain_count; id++) {
        struct imp_domain *d = &imp->domains[id];
        if (id && !d->name_id && d->pending_uid)
            d->name_id = inherited_domain_name(imp, d);
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

static int import_category(struct asys_importer *imp, const struct asys_record *rec)
{
    const struct asys_rec_hgtx_category *r = (const void *)rec->data;
    uint64_t key = (uint64_t)domain_global(imp, (uint16_t)rec->arg) << 32 | r->category;
    return asys_u64map_put(&imp->categories, key,
                           imp_string(imp, imp->seg.image, r->name_string_id));
}

static int finish_categories(struct asys_importer *imp, struct asys_err *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(imp->db,
                           "INSERT INTO hgtx_categories (domain_id, category, name_id) "
                           "VALUES (?,?,?)",
                           -1, &st, NULL) != SQLITE_OK)
        return imp_sql_error(imp, err);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < imp->categories.capacity; i++) {
        if (!imp->categories.used[i])
            continue;
        sqlite3_bind_int64(st, 1, (int64_t)(imp->categories.keys[i] >> 32));
        sqlite3_bind_int64(st, 2, (int64_t)(imp->categories.keys[i] & 0xffffffffu));
        sqlite3_bind_int64(st, 3, (int64_t)imp->categories.values[i]);
        rc = sqlite3_step(st) == SQLITE_DONE ? 0 : imp_sql_error(imp, err);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    return rc;
}

static int import_thread_name(struct asys_importer *imp, const struct asys_record *rec, uint64_t ns,
                              struct asys_err *err)
{
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

static void open_plain(struct asys_importer *imp, struct hgtx_open *o, uint32_t sid, uint64_t ns)
{
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

static void open_from_attributes(struct asys_importer *imp, struct hgtx_open *o,
                                 const struct asys_hgtx_attributes *a, uint64_t ns)
{
    open_plain(imp, o, a->message_string_id, ns);
    o->domain = domain_global(imp, a->domain_id);
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
        if (bits > INT64_MAX)
            sqlite3_bind_double(st, col, (double)bits);
        else
            sqlite3_bind_int64(st, col, (int64_t)bits);
        break;
    default:
        sqlite3_bind_null(st, col);
    }
}

static int insert_event(struct asys_importer *imp, int kind, const struct hgtx_open *o,
                        int64_t end_ns, uint32_t end_tid, struct asys_err *err)
{
    sqlite3_stmt *st = imp->insert_hgtx;
    sqlite3_bind_int64(st, 1, o->id);
    sqlite3_bind_int64(st, 2, kind);
    sqlite3_bind_int64(st, 3, (int64_t)o->start_ns);
    imp_bind_optional(st, 4, end_ns, end_ns >= 0);
    sqlite3_bind_int64(st, 5, o->pid);
    sqlite3_bind_int64(st, 6, o->tid);
    imp_bind_optional(st, 7, end_tid, end_tid != 0);
    sqlite3_bind_int64(st, 8, o->domain);
    imp_bind_optional(st, 9, o->text_id, o->text_id != 0);
    imp_bind_optional(st, 10, o->category, o->category >= 0);
    imp_bind_optional(st, 11, o->color, o->color >= 0);
    imp_bind_optional(st, 12, o->payload_type, o->payload_type != 0);
    bind_payload(st, 13, o->payload_type, o->payload);
    imp_bind_optional(st, 14, o->level, o->level >= 0);
    imp_bind_optional(st, 15, o->parent, o->parent >= 0);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : imp_sql_error(imp, err);
}

/* ---- push / pop ---------------------------------------------------------------- */

static struct hgtx_stack *stack_of(struct asys_importer *imp, uint16_t domain_local, int create)
{
    struct imp_segment *seg = &imp->seg;
    for (size_t i = 0; i < seg->stack_count; i++)
        if (seg->stacks[i].domain_local == domain_local)
            return &seg->stacks[i];
    if (!create)
        return NULL;
    struct hgtx_stack *bigger = realloc(seg->stacks, (seg->stack_count + 1) * sizeof *bigger);
    if (!bigger)
        return NULL;
    seg->stacks = bigger;
    struct hgtx_stack *s = &seg->stacks[seg->stack_count++];
    memset(s, 0, sizeof *s);
    s->domain_local = domain_local;
    return s;
}

static int push(struct asys_importer *imp, uint16_t domain_local, struct hgtx_open *o,
                struct asys_err *err)
{
    struct hgtx_stack *s = stack_of(imp, domain_local, 1);
    if (!s)
        return asys_fail(err, "out of memory");
    if (asys_grow(&s->items, &s->cap, s->count, sizeof *s->items, 16))
        return asys_fail(err, "out of memory");
    o->id = imp->next_hgtx_id++;
    o->level = (int32_t)s->count;
    o->parent = s->count ? s->items[s->count - 1].id : -1;
    s->items[s->count++] = *o;
    return 0;
}

static int pop(struct asys_importer *imp, uint16_t domain_local, uint64_t ns, struct asys_err *err)
{
    struct hgtx_stack *s = stack_of(imp, domain_local, 0);
    if (!s || !s->count) {
        imp->unmatched_pops++;
        return 0;
    }
    const struct hgtx_open *o = &s->items[--s->count];
    return insert_event(imp, KIND_PUSHPOP, o, (int64_t)ns, 0, err);
}

int imp_hgtx_segment_end(struct asys_importer *imp, struct asys_err *err)
{
    int rc = 0;
    struct imp_segment *seg = &imp->seg;
    for (size_t i = 0; i < seg->stack_count; i++) {
        struct hgtx_stack *s = &seg->stacks[i];
        for (size_t j = 0; rc == 0 && j < s->count; j++) {
            imp->open_ranges++;
            rc = insert_event(imp, KIND_PUSHPOP, &s->items[j], -1, 0, err);
        }
        free(s->items);
    }
    free(seg->stacks);
    seg->stacks = NULL;
    seg->stack_count = 0;
    return rc;
}

/* ---- marks ------------------------------------------------------------------------ */

static int mark(struct asys_importer *imp, uint16_t domain_local, struct hgtx_open *o,
                struct asys_err *err)
{
    struct hgtx_stack *s = stack_of(imp, domain_local, 0);
    o->id = imp->next_hgtx_id++;
    o->parent = s && s->count ? s->items[s->count - 1].id : -1;
    return insert_event(imp, KIND_MARK, o, (int64_t)o->start_ns, 0, err);
}

/* ---- start / end ---------------------------------------------------------------------- */

static int64_t pool_take(struct asys_importer *imp)
{
    if (imp->open_free >= 0) {
        int64_t i = imp->open_free;
        imp->open_free = imp->open_pool[i].id;
        return i;
    }
    if (asys_grow(&imp->open_pool, &imp->open_cap, imp->open_count, sizeof *imp->open_pool, 64))
        return -1;
    return (int64_t)imp->open_count++;
}

static void pool_give_back(struct asys_importer *imp, int64_t i)
{
    imp->open_pool[i].id = imp->open_free;
    imp->open_free = i;
}

static int start(struct asys_importer *imp, uint64_t range_id, struct hgtx_open *o,
                 struct asys_err *err)
{
    struct imp_image *img = imp->seg.image;
    o->id = imp->next_hgtx_id++;
    uint64_t *end_index = asys_u64map_get(&img->ends, range_id);
    if (end_index) { /* its end was read first (another thread's segment) */
        struct hgtx_end e = imp->end_pool[*end_index];
        asys_u64map_remove(&img->ends, range_id);
        return insert_event(imp, KIND_STARTEND, o, (int64_t)e.end_ns, e.tid, err);
    }
    int64_t i = pool_take(imp);
    if (i < 0 || asys_u64map_put(&img->starts, range_id, (uint64_t)i) != 0)
        return asys_fail(err, "out of memory");
    imp->open_pool[i] = *o;
    return 0;
}

static int end(struct asys_importer *imp, uint64_t range_id, uint64_t ns, struct asys_err *err)
{
    struct imp_image *img = imp->seg.image;
    uint64_t *start_index = asys_u64map_get(&img->starts, range_id);
    if (start_index) {
        int64_t i = (int64_t)*start_index;
        asys_u64map_remove(&img->starts, range_id);
        int rc =
            insert_event(imp, KIND_STARTEND, &imp->open_pool[i], (int64_t)ns, imp->seg.tid, err);
        pool_give_back(imp, i);
        return rc;
    }
    if (asys_grow(&imp->end_pool, &imp->end_cap, imp->end_count, sizeof *imp->end_pool, 64))
        return asys_fail(err, "out of memory");
    imp->end_pool[imp->end_count] = (struct hgtx_end){ns, imp->seg.tid};
    if (asys_u64map_put(&img->ends, range_id, imp->end_count++) != 0)
        return asys_fail(err, "out of memory");
    return 0;
}

/* ---- dispatch ------------------------------------------------------------------------------ */

int imp_hgtx_record(struct asys_importer *imp, const struct asys_record *rec, uint64_t ns,
                    struct asys_err *err)
{
    struct hgtx_open o;
    switch (rec->type) {
    case ASYS_REC_HGTX_PUSH:
        open_plain(imp, &o, rec->arg, ns);
        return push(imp, 0, &o, err);
    case ASYS_REC_HGTX_PUSH_EX: {
        const struct asys_rec_hgtx_ex *r = (const void *)rec->data;
        open_from_attributes(imp, &o, &r->attr, ns);
        return push(imp, r->attr.domain_id, &o, err);
    }
    case ASYS_REC_HGTX_POP:
        return pop(imp, (uint16_t)rec->arg, ns, err);
    case ASYS_REC_HGTX_MARK:
        open_plain(imp, &o, rec->arg, ns);
        return mark(imp, 0, &o, err);
    case ASYS_REC_HGTX_MARK_EX: {
        const struct asys_rec_hgtx_ex *r = (const void *)rec->data;
        open_from_attributes(imp, &o, &r->attr, ns);
        return mark(imp, r->attr.domain_id, &o, err);
    }
    case ASYS_REC_HGTX_START: {
        const struct asys_rec_hgtx_range *r = (const void *)rec->data;
        open_plain(imp, &o, rec->arg, ns);
        return start(imp, r->range_id, &o, err);
    }
    case ASYS_REC_HGTX_START_EX: {
        const struct asys_rec_hgtx_start_ex *r = (const void *)rec->data;
        open_from_attributes(imp, &o, &r->attr, ns);
        return start(imp, r->range_id, &o, err);
    }
    case ASYS_REC_HGTX_END:
        return end(imp, ((const struct asys_rec_hgtx_range *)(const void *)rec->data)->range_id, ns,
                   err);
    case ASYS_REC_HGTX_DOMAIN:
        return import_domain(imp, rec, ns);
    case ASYS_REC_HGTX_CATEGORY:
        return import_category(imp, rec) == 0 ? 0 : asys_fail(err, "out of memory");
    case ASYS_REC_HGTX_THREAD_NAME:
        return import_thread_name(imp, rec, ns, err);
    default:
        return 0;
    }
}

int imp_hgtx_finish(struct asys_importer *imp, struct asys_err *err)
{
    for (size_t i = 0; i < imp->images.capacity; i++) {
        if (!imp->images.used[i])
            continue;
        struct imp_image *img = (struct imp_image *)(uintptr_t)imp->images.values[i];
        for (size_t j = 0; j < img->starts.capacity; j++) {
            if (!img->starts.used[j])
                continue;
            imp->open_ranges++;
            if (insert_event(imp, KIND_STARTEND, &imp->open_pool[img->starts.values[j]], -1, 0,
                             err) != 0)
                return -1;
        }
        imp->unmatched_ends += img->ends.count;
    }
    if (imp->unmatched_pops)
        imp_warn(imp, "%" PRIu64 " HGTX pops had no matching push (ignored)", imp->unmatched_pops);
    if (imp->unmatched_ends)
        imp_warn(imp, "%" PRIu64 " HGTX range ends had no matching start (ignored)",
                 imp->unmatched_ends);
    return finish_domains(imp, err) == 0 && finish_categories(imp, err) == 0 ? 0 : -1;
}
