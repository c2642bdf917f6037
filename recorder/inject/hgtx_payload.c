/* HGTX collector: the payload extension (nvToolsExtPayload.h).
 *
 * Schemas and enums are written once as registered; payloads are copied
 * as the program passed them, to be decoded offline.  The one thing done
 * here is what cannot be done later: a pointer to a string inside a payload
 * with a fixed layout is replaced by the string's id (its text is interned
 * now, while it exists).  Scopes, time domains, timer sources and sync
 * points are written as given; deferred events (nvtxEventSubmit) carry
 * their own timestamps. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

/* first: it asks NVTX for declarations only (NVTX_NO_IMPL) */
#include "hgtx_internal.h"

#include <nvtx3/nvToolsExtSemanticsCounters.h>
#include <nvtx3/nvToolsExtSemanticsTime.h>
#include "hgtx_payload.h"

/* ---- what the recorder keeps of a schema ------------------------------------ */

#define MAX_SCHEMAS 1024 /* a power of two */
#define MAX_STRING_POINTERS 16
#define MAX_PAYLOADS 64
#define MAX_STRING_BYTES 4096
#define MAX_MEASURED_BYTES 65536

struct schema_info {
    uint64_t id; /* 0: free slot; written last */
    uint16_t domain;
    uint8_t fixed; /* size and align are known */
    uint8_t measured_by_strlen; /* one embedded NUL-terminated string (SIZE_MAX payloads) */
    uint8_t pointer_count; /* string pointers at fixed offsets */
    uint32_t pointers[MAX_STRING_POINTERS];
    uint64_t size, align;
};

static struct {
    pthread_mutex_t lock;
    struct schema_info slots[MAX_SCHEMAS];
} schemas = {.lock = PTHREAD_MUTEX_INITIALIZER};

static size_t schema_slot(uint16_t domain, uint64_t id)
{
    return (size_t)((id * 0x9e3779b97f4a7c15ull) ^ domain) & (MAX_SCHEMAS - 1);
}

static const struct schema_info *schema_find(uint16_t domain, uint64_t id)
{
    if (!id)
        return NULL;
    for (size_t n = 0, i = schema_slot(domain, id); n < MAX_SCHEMAS;
         n++, i = (i + 1) & (MAX_SCHEMAS - 1)) {
        uint64_t key = __atomic_load_n(&schemas.slots[i].id, __ATOMIC_ACQUIRE);
        if (!key)
            return NULL;
        if (key == id && schemas.slots[i].domain == domain)
            return &schemas.slots[i];
    }
    return NULL;
}

/* Publishes what was learned of a schema; a full table only loses the
 * string replacement of later schemas (their pointers stay raw). */
static void schema_add(const struct schema_info *info)
{
    pthread_mutex_lock(&schemas.lock);
    for (size_t n = 0, i = schema_slot(info->domain, info->id); n < MAX_SCHEMAS;
         n++, i = (i + 1) & (MAX_SCHEMAS - 1)) {
        struct schema_info *s = &schemas.slots[i];
        uint64_t key = __atomic_load_n(&s->id, __ATOMIC_RELAXED);
        if (key == info->id && s->domain == info->domain)
            break; /* registered twice: the first layout stays */
        if (!key) {
            uint64_t id = info->id;
            *s = *info;
            s->id = 0;
            __atomic_store_n(&s->id, id, __ATOMIC_RELEASE);
            break;
        }
    }
    pthread_mutex_unlock(&schemas.lock);
}

static int nested_size(void *ctx, uint64_t id, uint64_t *size, uint64_t *align)
{
    const struct schema_info *s = schema_find(*(const uint16_t *)ctx, id);
    if (!s || !s->fixed)
        return 0;
    *size = s->size;
    *align = s->align;
    return 1;
}

/* The string pointers of a nested schema (or of each element of an array
 * of it) at their places in the outer one. */
static void add_nested_pointers(struct schema_info *info, const nvtxPayloadSchemaEntry_t *e,
                                uint64_t offset, uint64_t size)
{
    const struct schema_info *inner = schema_find(info->domain, e->type);
    if (!inner || !inner->fixed || !inner->pointer_count || !inner->size ||
        (e->flags & NVTX_PAYLOAD_ENTRY_FLAG_POINTER))
        return;
    for (uint64_t at = offset; at + inner->size <= offset + size; at += inner->size)
        for (unsigned k = 0; k < inner->pointer_count; k++)
            if (info->pointer_count < MAX_STRING_POINTERS && at + inner->pointers[k] <= UINT32_MAX)
                info->pointers[info->pointer_count++] = (uint32_t)(at + inner->pointers[k]);
}

/* The layout of a schema, as far as it does not depend on the data. */
static void learn_layout(struct schema_info *info, const nvtxPayloadSchemaAttr_t *attr,
                         size_t count)
{
    uint64_t end = 0, max_align = 1;
    uint64_t pack =
        (attr->fieldMask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ALIGNMENT) ? attr->packAlign : 0;
    int fixed = attr->type == NVTX_PAYLOAD_SCHEMA_TYPE_STATIC ||
                attr->type == NVTX_PAYLOAD_SCHEMA_TYPE_DYNAMIC;
    for (size_t i = 0; fixed && i < count; i++) {
        const nvtxPayloadSchemaEntry_t *e = &attr->entries[i];
        struct asys_hgtx_layout_entry le = {e->flags, e->type, e->arrayOrUnionDetail, e->offset};
        uint64_t size, align;
        if (asys_hgtx_entry_extent(&le, nested_size, &info->domain, &size, &align) != 0) {
            /* one embedded string alone: measurable when passed with SIZE_MAX */
            info->measured_by_strlen =
                count == 1 && (e->type == NVTX_PAYLOAD_ENTRY_TYPE_CSTRING ||
                               e->type == NVTX_PAYLOAD_ENTRY_TYPE_CSTRING_UTF8);
            fixed = 0;
            break;
        }
        uint64_t offset = asys_hgtx_entry_offset(&le, i, end, align, pack);
        if (asys_hgtx_is_string_pointer(&le) && e->type <= NVTX_PAYLOAD_ENTRY_TYPE_CSTRING_UTF8 &&
            info->pointer_count < MAX_STRING_POINTERS && offset <= UINT32_MAX)
            info->pointers[info->pointer_count++] = (uint32_t)offset;
        else
            add_nested_pointers(info, e, offset, size);
        if (offset + size > end)
            end = offset + size;
        if (align > max_align)
            max_align = align;
    }
    info->fixed = (uint8_t)fixed;
    if (!fixed)
        return;
    if (pack && pack < max_align)
        max_align = pack;
    info->align = max_align;
    info->size = end % max_align ? end + max_align - end % max_align : end;
    if ((attr->fieldMask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE) && attr->payloadStaticSize)
        info->size = attr->payloadStaticSize;
}

/* ---- schemas and enums ------------------------------------------------------ */

static uint64_t schema_id_for(uint64_t mask, uint64_t mask_bit, uint64_t given)
{
    if ((mask & mask_bit) && given >= NVTX_PAYLOAD_SCHEMA_ID_STATIC_START &&
        given < NVTX_PAYLOAD_SCHEMA_ID_DYNAMIC_START)
        return given;
    return asys_hgtx_dynamic_id();
}

/* The semantics asys reads from an entry's list. */
static void read_semantics(struct asys_thread *t, const nvtxSemanticsHeader_t *s,
                           struct asys_hgtx_schema_entry *out)
{
    for (int n = 0; s && n < 16; s = s->next, n++) {
        if (s->semanticId == NVTX_SEMANTIC_ID_TIME_V1 &&
            s->structSize >= sizeof(nvtxSemanticsTime_t)) {
            out->time_domain = ((const nvtxSemanticsTime_t *)s)->timeDomainId;
        } else if (s->semanticId == NVTX_SEMANTIC_ID_COUNTERS_V1 &&
                   s->structSize >= sizeof(nvtxSemanticsCounter_t)) {
            const nvtxSemanticsCounter_t *c = (const void *)s;
            out->counter_flags = (uint32_t)c->flags;
            out->unit_string_id = c->unit ? asys_intern(t, c->unit) : 0;
        }
    }
}

#define MAX_ENTRIES \
    ((ASYS_REC_MAX_SIZE - sizeof(struct asys_rec_hgtx_schema)) / \
     sizeof(struct asys_hgtx_schema_entry))

/* Writes a SCHEMA record: `fields` (all but its header, size and entry
 * count), then `count` entries of `entry_size` bytes. */
static void commit_schema(struct asys_thread *t, uint16_t domain,
                          const struct asys_rec_hgtx_schema *fields, const void *entries,
                          size_t entry_size, size_t count)
{
    uint32_t size = (uint32_t)(sizeof *fields + count * entry_size);
    uint32_t delta;
    struct asys_rec_hgtx_schema *r = asys_segment_reserve(&t->seg, size, asys_now(), &delta);
    if (!r)
        return;
    unsigned words = asys_hgtx_size_words(size);
    memcpy((uint8_t *)r + sizeof r->header, (const uint8_t *)fields + sizeof r->header,
           sizeof *r - sizeof r->header);
    r->size_bytes = words == ASYS_REC_EXTENDED ? size : 0;
    r->entry_count = (uint32_t)count;
    if (count)
        memcpy(r + 1, entries, count * entry_size);
    asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_HGTX_SCHEMA, words, domain, delta));
}

static void write_schema(struct asys_thread *t, uint16_t domain, uint64_t id,
                         const nvtxPayloadSchemaAttr_t *attr, size_t count, size_t given)
{
    /* strings first: interning writes records of its own */
    uint32_t name = (attr->fieldMask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NAME) && attr->name
                        ? asys_intern(t, attr->name)
                        : 0;
    struct asys_hgtx_schema_entry *entries = NULL;
    if (count) {
        entries = calloc(count, sizeof *entries);
        if (!entries)
            count = 0;
    }
    for (size_t i = 0; i < count; i++) {
        const nvtxPayloadSchemaEntry_t *e = &attr->entries[i];
        entries[i].flags = e->flags;
        entries[i].type = e->type;
        entries[i].name_string_id = e->name ? asys_intern(t, e->name) : 0;
        entries[i].description_string_id = e->description ? asys_intern(t, e->description) : 0;
        entries[i].array_or_union_detail = e->arrayOrUnionDetail;
        entries[i].offset = e->offset;
        read_semantics(t, e->semantics, &entries[i]);
    }
    struct asys_rec_hgtx_schema fields = {
        .kind = ASYS_HGTX_SCHEMA_PAYLOAD,
        .schema_id = id,
        .name_string_id = name,
        .schema_type = (uint32_t)attr->type,
        .flags = (attr->fieldMask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_FLAGS) ? attr->flags : 0,
        .static_size = (attr->fieldMask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE)
                           ? attr->payloadStaticSize
                           : 0,
        .pack_align =
            (attr->fieldMask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ALIGNMENT) ? attr->packAlign : 0,
        .entries_given = given > UINT32_MAX ? UINT32_MAX : (uint32_t)given,
    };
    commit_schema(t, domain, &fields, entries, sizeof *entries, count);
    free(entries);
}

static uint64_t NVTX_API schema_register(nvtxDomainHandle_t domain_handle,
                                         const nvtxPayloadSchemaAttr_t *attr)
{
    if (!attr)
        return 0;
    uint16_t domain = asys_hgtx_domain_id(domain_handle);
    uint64_t id =
        schema_id_for(attr->fieldMask, NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_SCHEMA_ID, attr->schemaId);
    size_t given = (attr->fieldMask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES) && attr->entries
                       ? attr->numEntries
                       : 0;
    size_t count = given < MAX_ENTRIES ? given : MAX_ENTRIES;
    struct schema_info info = {.id = id, .domain = domain};
    learn_layout(&info, attr, count);
    schema_add(&info);
    struct asys_thread *t = asys_thread_enter();
    if (t) {
        write_schema(t, domain, id, attr, count, given);
        asys_thread_leave();
    }
    return id;
}

#define MAX_ENUM_ENTRIES \
    ((ASYS_REC_MAX_SIZE - sizeof(struct asys_rec_hgtx_schema)) / \
     sizeof(struct asys_hgtx_enum_entry))

static void write_enum(struct asys_thread *t, uint16_t domain, uint64_t id,
                       const nvtxPayloadEnumAttr_t *attr, size_t count, size_t given)
{
    uint32_t name = (attr->fieldMask & NVTX_PAYLOAD_ENUM_ATTR_FIELD_NAME) && attr->name
                        ? asys_intern(t, attr->name)
                        : 0;
    struct asys_hgtx_enum_entry *entries = count ? calloc(count, sizeof *entries) : NULL;
    if (!entries)
        count = 0;
    for (size_t i = 0; i < count; i++) {
        entries[i].name_string_id =
            attr->entries[i].name ? asys_intern(t, attr->entries[i].name) : 0;
        entries[i].is_flag = attr->entries[i].isFlag != 0;
        entries[i].value = attr->entries[i].value;
    }
    struct asys_rec_hgtx_schema fields = {
        .kind = ASYS_HGTX_SCHEMA_ENUM,
        .schema_id = id,
        .name_string_id = name,
        .static_size = (attr->fieldMask & NVTX_PAYLOAD_ENUM_ATTR_FIELD_SIZE) ? attr->sizeOfEnum : 0,
        .entries_given = given > UINT32_MAX ? UINT32_MAX : (uint32_t)given,
    };
    commit_schema(t, domain, &fields, entries, sizeof *entries, count);
    free(entries);
}

static uint64_t NVTX_API enum_register(nvtxDomainHandle_t domain_handle,
                                       const nvtxPayloadEnumAttr_t *attr)
{
    if (!attr)
        return 0;
    uint16_t domain = asys_hgtx_domain_id(domain_handle);
    uint64_t id =
        schema_id_for(attr->fieldMask, NVTX_PAYLOAD_ENUM_ATTR_FIELD_SCHEMA_ID, attr->schemaId);
    size_t given = (attr->fieldMask & NVTX_PAYLOAD_ENUM_ATTR_FIELD_NUM_ENTRIES) && attr->entries
                       ? attr->numEntries
                       : 0;
    size_t count = given < MAX_ENUM_ENTRIES ? given : MAX_ENUM_ENTRIES;
    uint64_t size = (attr->fieldMask & NVTX_PAYLOAD_ENUM_ATTR_FIELD_SIZE) ? attr->sizeOfEnum : 4;
    struct schema_info info = {.id = id,
                               .domain = domain,
                               .fixed = size && size <= 8,
                               .size = size,
                               .align = size ? size : 1};
    schema_add(&info);
    struct asys_thread *t = asys_thread_enter();
    if (t) {
        write_enum(t, domain, id, attr, count, given);
        asys_thread_leave();
    }
    return id;
}

/* ---- payloads ------------------------------------------------------------------- */

struct payload_plan {
    const void *bytes;
    uint32_t size;
    uint32_t flags;
    const struct schema_info *schema;
    uint32_t strings[MAX_STRING_POINTERS]; /* ids for the schema's string pointers */
};

static int is_narrow_string_type(uint64_t type)
{
    return type == NVTX_PAYLOAD_ENTRY_TYPE_CSTRING || type == NVTX_PAYLOAD_ENTRY_TYPE_CSTRING_UTF8;
}

/* How many bytes of payload `d` to keep, and the string ids its pointers need. */
static uint32_t plan_payload(struct asys_thread *t, uint16_t domain, const nvtxPayloadData_t *d,
                             struct payload_plan *p, uint32_t room)
{
    memset(p, 0, sizeof *p);
    p->bytes = d->payload;
    p->schema = schema_find(domain, d->schemaId);
    size_t size = d->payload ? d->size : 0;
    if (size == SIZE_MAX) {
        if (p->schema && p->schema->fixed) {
            size = p->schema->size;
        } else if (is_narrow_string_type(d->schemaId) ||
                   (p->schema && p->schema->measured_by_strlen)) {
            size = strnlen(d->payload, MAX_MEASURED_BYTES - 1) + 1;
        } else {
            size = 0;
            p->flags |= ASYS_HGTX_PAYLOAD_SIZE_UNKNOWN;
        }
    }
    if (size > room) {
        size = room;
        p->flags |= ASYS_HGTX_PAYLOAD_CUT;
    }
    p->size = (uint32_t)size;
    if (p->schema && p->schema->pointer_count) {
        p->flags |= ASYS_HGTX_PAYLOAD_STRINGS;
        for (unsigned i = 0; i < p->schema->pointer_count; i++) {
            uint32_t at = p->schema->pointers[i];
            const char *text = NULL;
            if ((uint64_t)at + sizeof text <= p->size)
                memcpy(&text, (const uint8_t *)p->bytes + at, sizeof text);
            p->strings[i] = text ? asys_intern_len(t, text, strnlen(text, MAX_STRING_BYTES)) : 0;
        }
    }
    return p->size;
}

static uint32_t padded(uint32_t n)
{
    return (n + 7u) & ~7u;
}

void asys_hgtx_write_payloads(struct asys_thread *t, uint16_t domain, unsigned event,
                              uint64_t range_id, const nvtxPayloadData_t *data, size_t count,
                              uint64_t ticks)
{
    struct payload_plan plans[MAX_PAYLOADS];
    if (!data)
        count = 0;
    if (count > MAX_PAYLOADS)
        count = MAX_PAYLOADS;
    uint32_t size = sizeof(struct asys_rec_hgtx_payload);
    const uint32_t head = sizeof(struct asys_hgtx_payload_data);
    for (size_t i = 0; i < count; i++) {
        if (size + head > ASYS_REC_MAX_SIZE) { /* no room left: the rest are not kept */
            count = i;
            break;
        }
        uint32_t room = (ASYS_REC_MAX_SIZE - size - head) & ~7u;
        size += head + padded(plan_payload(t, domain, &data[i], &plans[i], room));
    }
    uint32_t delta;
    struct asys_rec_hgtx_payload *r = asys_segment_reserve(&t->seg, size, ticks, &delta);
    if (!r)
        return;
    unsigned words = asys_hgtx_size_words(size);
    r->size_bytes = words == ASYS_REC_EXTENDED ? size : 0;
    r->event = (uint16_t)event;
    r->payload_count = (uint16_t)count;
    r->range_id = range_id;
    uint8_t *p = (uint8_t *)(r + 1);
    for (size_t i = 0; i < count; i++) {
        struct asys_hgtx_payload_data *h = (void *)p;
        h->schema_id = data[i].schemaId;
        h->size = plans[i].size;
        h->flags = plans[i].flags;
        p += sizeof *h;
        if (plans[i].size)
            memcpy(p, plans[i].bytes, plans[i].size);
        memset(p + plans[i].size, 0, padded(plans[i].size) - plans[i].size);
        const struct schema_info *s = plans[i].schema;
        for (unsigned k = 0; s && k < s->pointer_count; k++) {
            uint64_t id = plans[i].strings[k];
            if ((uint64_t)s->pointers[k] + sizeof id <= plans[i].size)
                memcpy(p + s->pointers[k], &id, sizeof id);
        }
        p += padded(plans[i].size);
    }
    asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_HGTX_PAYLOAD, words, domain, delta));
}

void asys_hgtx_attach_payloads(struct asys_thread *t, uint16_t domain,
                               const nvtxEventAttributes_t *a, uint64_t ticks)
{
    if (!a || a->size < offsetof(nvtxEventAttributes_t, reserved0) + sizeof a->reserved0 ||
        a->payloadType != NVTX_PAYLOAD_TYPE_EXT || !a->payload.ullValue)
        return;
    size_t count = a->reserved0 > 0 ? (size_t)a->reserved0 : 1;
    asys_hgtx_write_payloads(t, domain, ASYS_HGTX_PAYLOAD_ATTACHED, 0,
                             (const nvtxPayloadData_t *)(uintptr_t)a->payload.ullValue, count,
                             ticks);
}

/* ---- events with payloads ------------------------------------------------------- */

/* One payload event; `level` in/out for push/pop. */
static void payload_event(nvtxDomainHandle_t domain_handle, unsigned event, uint64_t range_id,
                          const nvtxPayloadData_t *data, size_t count)
{
    struct asys_thread *t = asys_thread_enter();
    uint64_t ticks = t ? asys_now() : 0;
    if (!t) {
        asys_thread_count_lost(sizeof(struct asys_rec_hgtx_payload));
        return;
    }
    asys_hgtx_write_payloads(t, asys_hgtx_domain_id(domain_handle), event, range_id, data, count,
                             ticks);
    asys_thread_leave();
}

static void NVTX_API mark_payload(nvtxDomainHandle_t domain, const nvtxPayloadData_t *data,
                                  size_t count)
{
    if (asys_capturing())
        payload_event(domain, ASYS_HGTX_PAYLOAD_MARK, 0, data, count);
}

static int NVTX_API push_payload(nvtxDomainHandle_t domain, const nvtxPayloadData_t *data,
                                 size_t count)
{
    struct asys_thread *t = asys_thread_enter();
    uint64_t ticks = t ? asys_now() : 0;
    int level = asys_hgtx_push_level(t, asys_hgtx_domain_id(domain));
    if (t) {
        if (asys_capturing())
            asys_hgtx_write_payloads(t, asys_hgtx_domain_id(domain), ASYS_HGTX_PAYLOAD_PUSH, 0,
                                     data, count, ticks);
        asys_thread_leave();
    } else if (asys_capturing()) {
        asys_thread_count_lost(sizeof(struct asys_rec_hgtx_payload));
    }
    return level;
}

static int NVTX_API pop_payload(nvtxDomainHandle_t domain, const nvtxPayloadData_t *data,
                                size_t count)
{
    struct asys_thread *t = asys_thread_enter();
    uint64_t ticks = t ? asys_now() : 0;
    int level = asys_hgtx_pop_level(t, asys_hgtx_domain_id(domain));
    if (t) {
        if (level >= 0 && asys_capturing())
            asys_hgtx_write_payloads(t, asys_hgtx_domain_id(domain), ASYS_HGTX_PAYLOAD_POP, 0, data,
                                     count, ticks);
        asys_thread_leave();
    } else if (level >= 0 && asys_capturing()) {
        asys_thread_count_lost(sizeof(struct asys_rec_hgtx_payload));
    }
    return level;
}

static nvtxRangeId_t NVTX_API start_payload(nvtxDomainHandle_t domain,
                                            const nvtxPayloadData_t *data, size_t count)
{
    struct asys_thread *t = asys_thread_enter();
    uint64_t ticks = t ? asys_now() : 0;
    if (!t) {
        if (asys_capturing())
            asys_thread_count_lost(sizeof(struct asys_rec_hgtx_payload));
        return 0;
    }
    nvtxRangeId_t id = asys_hgtx_new_range_id(t);
    if (asys_capturing())
        asys_hgtx_write_payloads(t, asys_hgtx_domain_id(domain), ASYS_HGTX_PAYLOAD_START, id, data,
                                 count, ticks);
    asys_thread_leave();
    return id;
}

static void NVTX_API end_payload(nvtxDomainHandle_t domain, nvtxRangeId_t id,
                                 const nvtxPayloadData_t *data, size_t count)
{
    if (id && asys_capturing())
        payload_event(domain, ASYS_HGTX_PAYLOAD_END, id, data, count);
}

static void NVTX_API event_submit(nvtxDomainHandle_t domain, const nvtxPayloadData_t *data,
                                  size_t count)
{
    if (asys_capturing())
        payload_event(domain, ASYS_HGTX_PAYLOAD_SUBMIT, 0, data, count);
}

static void NVTX_API event_batch_submit(nvtxDomainHandle_t domain, const nvtxEventBatch_t *batch)
{
    if (!batch || !asys_capturing())
        return;
    nvtxPayloadData_t data[2] = {
        {batch->eventSchemaId, batch->size, batch->events},
        {NVTX_TYPE_PAYLOAD_SCHEMA_REFERENCED, batch->flexDataSize, batch->flexData}};
    payload_event(domain, ASYS_HGTX_PAYLOAD_BATCH, batch->scope, data,
                  batch->flexData && batch->flexDataSize ? 2 : 1);
}

/* Every domain records while HGTX does (the calls outside a capture range
 * are cheap no-ops anyway). */
static uint8_t NVTX_API domain_is_enabled(nvtxDomainHandle_t domain)
{
    (void)domain;
    return 1;
}

/* ---- scopes and time ------------------------------------------------------------ */

static void write_time(uint16_t domain, unsigned kind, const char *text, uint64_t id,
                       const uint64_t v[5])
{
    struct asys_thread *t = asys_thread_enter();
    if (!t)
        return;
    uint32_t text_id = text ? asys_intern(t, text) : 0;
    uint32_t delta;
    struct asys_rec_hgtx_time *r = asys_segment_reserve(&t->seg, sizeof *r, asys_now(), &delta);
    if (r) {
        r->domain_id = domain;
        r->reserved = 0;
        r->text_string_id = text_id;
        r->id = id;
        r->a = v[0];
        r->b = v[1];
        r->c = v[2];
        r->d = v[3];
        r->e = v[4];
        asys_segment_commit(&r->header,
                            ASYS_REC_WORD(ASYS_REC_HGTX_TIME, sizeof *r / 8, kind, delta));
    }
    asys_thread_leave();
}

static uint64_t static_or_dynamic(uint64_t given, uint64_t start, uint64_t end)
{
    return given >= start && given < end ? given : asys_hgtx_dynamic_id();
}

static uint64_t NVTX_API scope_register(nvtxDomainHandle_t domain, const nvtxScopeAttr_t *attr)
{
    if (!attr || attr->structSize < sizeof *attr)
        return NVTX_SCOPE_NONE;
    uint64_t id =
        static_or_dynamic(attr->scopeId, NVTX_SCOPE_ID_STATIC_START, NVTX_SCOPE_ID_DYNAMIC_START);
    uint64_t v[5] = {attr->parentScope, 0, 0, 0, 0};
    write_time(asys_hgtx_domain_id(domain), ASYS_HGTX_TIME_SCOPE, attr->path ? attr->path : "", id,
               v);
    return id;
}

/* asys's clock for timestamps the program takes from the tool: CLOCK_MONOTONIC
 * ns, the time base of every report. */
static int64_t NVTX_API timestamp_get(void)
{
    return (int64_t)asys_monotonic_ns();
}

static uint64_t NVTX_API time_domain_register(nvtxDomainHandle_t domain,
                                              const nvtxTimeDomainAttr_t *attr)
{
    if (!attr)
        return NVTX_TIME_DOMAIN_ID_NONE;
    uint64_t id = static_or_dynamic(attr->timeDomainId, NVTX_TIME_DOMAIN_ID_STATIC_START,
                                    NVTX_TIME_DOMAIN_ID_DYNAMIC_START);
    uint64_t v[5] = {attr->scopeId, attr->timestampTypeId, attr->timerFlags,
                     (uint64_t)attr->timerResolution, attr->timerStart};
    write_time(asys_hgtx_domain_id(domain), ASYS_HGTX_TIME_DOMAIN, NULL, id, v);
    return id;
}

/* Timer sources are read when registered and again at exit (when safe):
 * two pairs give the importer a line from their clock to asys's. */
#define MAX_TIMERS 16
static struct {
    pthread_mutex_t lock;
    unsigned count;
    int at_exit_registered;
    struct timer {
        uint16_t domain;
        uint64_t time_domain;
        int64_t (*read)(void);
        int64_t (*read_with)(void *);
        void *data;
    } timers[MAX_TIMERS];
} timers = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void write_timer_pair(const struct timer *tm, uint64_t flags)
{
    int64_t value = tm->read ? tm->read() : tm->read_with(tm->data);
    uint64_t v[5] = {flags, (uint64_t)value, asys_monotonic_ns(), 0, 0};
    write_time(tm->domain, ASYS_HGTX_TIME_SOURCE, NULL, tm->time_domain, v);
}

void asys_hgtx_timers_at_exit(void)
{
    pthread_mutex_lock(&timers.lock);
    for (unsigned i = 0; i < timers.count; i++)
        write_timer_pair(&timers.timers[i], NVTX_TIMER_SOURCE_SAFE_CALL_AFTER_PROCESS_TEARDOWN);
    pthread_mutex_unlock(&timers.lock);
}

static void add_timer(nvtxDomainHandle_t domain, uint64_t time_domain, uint64_t flags,
                      int64_t (*read)(void), int64_t (*read_with)(void *), void *data)
{
    if (!read && !read_with)
        return;
    struct timer tm = {asys_hgtx_domain_id(domain), time_domain, read, read_with, data};
    write_timer_pair(&tm, flags);
    if (flags != NVTX_TIMER_SOURCE_SAFE_CALL_AFTER_PROCESS_TEARDOWN)
        return; /* read once only */
    pthread_mutex_lock(&timers.lock);
    if (timers.count < MAX_TIMERS)
        timers.timers[timers.count++] = tm;
    if (!timers.at_exit_registered) {
        timers.at_exit_registered = 1;
        asys_at_exit(asys_hgtx_timers_at_exit);
    }
    pthread_mutex_unlock(&timers.lock);
}

static void NVTX_API timer_source(nvtxDomainHandle_t domain, uint64_t time_domain, uint64_t flags,
                                  int64_t (*read)(void))
{
    add_timer(domain, time_domain, flags, read, NULL, NULL);
}

static void NVTX_API timer_source_with_data(nvtxDomainHandle_t domain, uint64_t time_domain,
                                            uint64_t flags, int64_t (*read)(void *), void *data)
{
    add_timer(domain, time_domain, flags, NULL, read, data);
}

static void NVTX_API time_sync_point(nvtxDomainHandle_t domain, uint64_t d1, uint64_t d2,
                                     int64_t t1, int64_t t2)
{
    uint64_t v[5] = {d2, (uint64_t)t1, (uint64_t)t2, 0, 0};
    write_time(asys_hgtx_domain_id(domain), ASYS_HGTX_TIME_SYNC_POINT, NULL, d1, v);
}

#define MAX_SYNC_POINTS 4096
static void NVTX_API time_sync_point_table(nvtxDomainHandle_t domain, uint64_t src, uint64_t dst,
                                           const nvtxSyncPoint_t *points, size_t count)
{
    for (size_t i = 0; points && i < count && i < MAX_SYNC_POINTS; i++)
        time_sync_point(domain, src, dst, points[i].src, points[i].dst);
}

static void NVTX_API timestamp_conversion(nvtxDomainHandle_t domain, uint64_t src, uint64_t dst,
                                          double slope, int64_t ts_src, int64_t ts_dst)
{
    uint64_t bits;
    memcpy(&bits, &slope, sizeof bits);
    uint64_t v[5] = {dst, bits, (uint64_t)ts_src, (uint64_t)ts_dst, 0};
    write_time(asys_hgtx_domain_id(domain), ASYS_HGTX_TIME_CONVERSION, NULL, src, v);
}

/* ---- the module ------------------------------------------------------------------- */

#define HOOK ASYS_HGTX_HOOK
static const struct asys_hgtx_hook payload_hooks[] = {
    HOOK(NVTX3EXT_CBID_nvtxPayloadSchemaRegister, schema_register),
    HOOK(NVTX3EXT_CBID_nvtxPayloadEnumRegister, enum_register),
    HOOK(NVTX3EXT_CBID_nvtxMarkPayload, mark_payload),
    HOOK(NVTX3EXT_CBID_nvtxRangePushPayload, push_payload),
    HOOK(NVTX3EXT_CBID_nvtxRangePopPayload, pop_payload),
    HOOK(NVTX3EXT_CBID_nvtxRangeStartPayload, start_payload),
    HOOK(NVTX3EXT_CBID_nvtxRangeEndPayload, end_payload),
    HOOK(NVTX3EXT_CBID_nvtxDomainIsEnabled, domain_is_enabled),
    HOOK(NVTX3EXT_CBID_nvtxScopeRegister, scope_register),
    HOOK(NVTX3EXT_CBID_nvtxTimestampGet, timestamp_get),
    HOOK(NVTX3EXT_CBID_nvtxTimeDomainRegister, time_domain_register),
    HOOK(NVTX3EXT_CBID_nvtxTimerSource, timer_source),
    HOOK(NVTX3EXT_CBID_nvtxTimerSourceWithData, timer_source_with_data),
    HOOK(NVTX3EXT_CBID_nvtxTimeSyncPoint, time_sync_point),
    HOOK(NVTX3EXT_CBID_nvtxTimeSyncPointTable, time_sync_point_table),
    HOOK(NVTX3EXT_CBID_nvtxTimestampConversionFactor, timestamp_conversion),
    HOOK(NVTX3EXT_CBID_nvtxEventSubmit, event_submit),
    HOOK(NVTX3EXT_CBID_nvtxEventBatchSubmit, event_batch_submit),
};

const struct asys_hgtx_ext_module asys_hgtx_payload_module = {
    NVTX_EXT_PAYLOAD_MODULEID, "payload", payload_hooks,
    sizeof payload_hooks / sizeof payload_hooks[0]};
