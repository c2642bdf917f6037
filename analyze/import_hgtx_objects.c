/* HGTX objects -> hgtx_mem_heaps, hgtx_mem_regions, hgtx_mem_calls (the
 * memory extension), hgtx_resources (named objects), hgtx_sync_objects and
 * hgtx_sync_ranges (user synchronization); and the notice that a program
 * replaced NVTX_INJECTION64_PATH.
 *
 * Heaps and regions are kept by their handle and address per process
 * image: a resize or a new name ends a region's row and starts the next,
 * so a region's names and sizes read over time.  Lock states pair up per
 * object and thread. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "import_hgtx.h"

/* nvToolsExtMem.h */
enum { REF_POINTER = 1, REF_HANDLE = 2 };

struct heap {
    uint64_t image;
    uint32_t pid, domain;
    uint64_t handle, address, size;
    uint32_t usage, type, name_id, category;
    uint64_t registered_ns, unregistered_ns;
    uint32_t resets;
    int registered;
};

struct region {
    uint64_t image;
    uint32_t pid;
    int64_t heap; /* index + 1, 0: none */
    uint64_t handle, address, size;
    uint32_t type, name_id, category;
    uint64_t start_ns;
    int open;
};

struct sync_object {
    uint64_t image;
    uint32_t pid, domain, name_id;
    uint64_t handle;
    uint64_t created_ns, destroyed_ns;
};

/* A thread's state on one lock. */
struct sync_state {
    uint64_t acquire_ns; /* 0: not acquiring */
    uint64_t held_ns; /* 0: not held */
};

struct hgtx_objects {
    struct heap *heaps;
    size_t heap_count, heap_cap;
    struct asys_strmap heap_index; /* (image, handle) -> index + 1 */
    struct region *regions;
    size_t region_count, region_cap;
    struct asys_strmap open_regions; /* (image, address) -> index + 1 of the open region */
    struct asys_strmap region_handles; /* (image, handle) -> index + 1 of its latest row */
    struct sync_object *syncs;
    size_t sync_count, sync_cap;
    struct asys_strmap sync_index; /* (image, handle) -> index + 1 */
    struct asys_strmap sync_states; /* (sync index, tid) -> index + 1 in states */
    struct sync_state *states;
    size_t state_count, state_cap;
    struct sync_state_key {
        uint64_t sync;
        uint32_t pid, tid;
    } * state_keys;
    size_t state_key_cap;
    struct asys_strmap resources; /* (image, handle) -> hgtx_resources.id */
    int64_t next_resource;
    sqlite3_stmt *insert_call, *insert_region, *insert_resource, *destroy_resource, *insert_range;
    uint64_t unknown_regions, unknown_syncs;
};

struct pair_key {
    uint64_t image;
    uint64_t value;
};

static uint32_t pair_get(const struct asys_strmap *m, uint64_t image, uint64_t value)
{
    struct pair_key k = {image, value};
    return asys_strmap_get(m, (const char *)&k, sizeof k);
}

static int pair_put(struct asys_strmap *m, uint64_t image, uint64_t value, size_t index)
{
    struct pair_key k = {image, value};
    return index >= UINT32_MAX ? -1
                               : asys_strmap_put(m, (const char *)&k, sizeof k, (uint32_t)index);
}

static int hgtx_objects_init(struct hgtx *h, struct asys_err *err)
{
    struct hgtx_objects *o = calloc(1, sizeof *o);
    if (!o)
        return asys_fail(err, "out of memory");
    h->objects = o;
    o->next_resource = 1;
    asys_strmap_init(&o->heap_index);
    asys_strmap_init(&o->open_regions);
    asys_strmap_init(&o->region_handles);
    asys_strmap_init(&o->sync_index);
    asys_strmap_init(&o->sync_states);
    asys_strmap_init(&o->resources);
    struct asys_importer *imp = h->imp;
    return imp_prepare(imp,
                       "INSERT INTO hgtx_mem_calls (ns, pid, tid, domain_id, call, heap, address, "
                       "size, value, flags, name_id) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                       &o->insert_call, err) ||
                   imp_prepare(imp,
                               "INSERT INTO hgtx_mem_regions (pid, heap_id, handle, address, size, "
                               "type, name_id, category, start_ns, end_ns, ended_by) "
                               "VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                               &o->insert_region, err) ||
                   imp_prepare(imp,
                               "INSERT INTO hgtx_resources (id, pid, domain_id, type, type_name, "
                               "identifier, handle, cupti_id, name_id, created_ns) "
                               "VALUES (?,?,?,?,?,?,?,?,?,?)",
                               &o->insert_resource, err) ||
                   imp_prepare(imp, "UPDATE hgtx_resources SET destroyed_ns = ? WHERE id = ?",
                               &o->destroy_resource, err) ||
                   imp_prepare(imp,
                               "INSERT INTO hgtx_sync_ranges (object_id, pid, tid, kind, start_ns, "
                               "end_ns, outcome) VALUES (?,?,?,?,?,?,?)",
                               &o->insert_range, err)
               ? -1
               : 0;
}

static void hgtx_objects_free(struct hgtx *h)
{
    struct hgtx_objects *o = h->objects;
    if (!o)
        return;
    free(o->heaps);
    free(o->regions);
    free(o->syncs);
    free(o->states);
    free(o->state_keys);
    struct asys_strmap *maps[] = {&o->heap_index, &o->open_regions, &o->region_handles,
                                  &o->sync_index, &o->sync_states,  &o->resources};
    for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++)
        asys_strmap_free(maps[i]);
    sqlite3_stmt *statements[] = {o->insert_call, o->insert_region, o->insert_resource,
                                  o->destroy_resource, o->insert_range};
    for (size_t i = 0; i < sizeof statements / sizeof statements[0]; i++)
        sqlite3_finalize(statements[i]);
    free(o);
    h->objects = NULL;
}

/* ---- memory ------------------------------------------------------------------------ */

static const char *const mem_calls[] = {
    [ASYS_HGTX_MEM_HEAP_REGISTER] = "heap register",
    [ASYS_HGTX_MEM_HEAP_UNREGISTER] = "heap unregister",
    [ASYS_HGTX_MEM_HEAP_RESET] = "heap reset",
    [ASYS_HGTX_MEM_REGION_REGISTER] = "regions register",
    [ASYS_HGTX_MEM_REGION_RESIZE] = "regions resize",
    [ASYS_HGTX_MEM_REGION_UNREGISTER] = "regions unregister",
    [ASYS_HGTX_MEM_REGION_NAME] = "regions name",
    [ASYS_HGTX_MEM_PERMISSIONS_ASSIGN] = "permissions assign",
    [ASYS_HGTX_MEM_PERMISSIONS_CREATE] = "permissions create",
    [ASYS_HGTX_MEM_PERMISSIONS_DESTROY] = "permissions destroy",
    [ASYS_HGTX_MEM_PERMISSIONS_RESET] = "permissions reset",
    [ASYS_HGTX_MEM_PERMISSIONS_BIND] = "permissions bind",
    [ASYS_HGTX_MEM_PERMISSIONS_UNBIND] = "permissions unbind",
    [ASYS_HGTX_MEM_CUDA_PROCESS_PERMISSIONS] = "cuda get process-wide permissions",
    [ASYS_HGTX_MEM_CUDA_DEVICE_PERMISSIONS] = "cuda get device-wide permissions",
    [ASYS_HGTX_MEM_CUDA_PEER_ACCESS] = "cuda set peer access",
    [ASYS_HGTX_MEM_CUDA_INITIALIZED] = "cuda mark initialized",
};

/* The heap of `handle` in this image, created on first sight; -1: out of memory. */
static int64_t heap_of(struct hgtx *h, uint64_t handle)
{
    struct hgtx_objects *o = h->objects;
    struct asys_importer *imp = h->imp;
    uint64_t image = imp->seg.image->uid;
    uint32_t at = pair_get(&o->heap_index, image, handle);
    if (at)
        return at - 1;
    if (asys_grow(&o->heaps, &o->heap_cap, o->heap_count, sizeof *o->heaps, 16))
        return -1;
    struct heap *hp = &o->heaps[o->heap_count];
    memset(hp, 0, sizeof *hp);
    hp->image = image;
    hp->pid = imp->seg.pid;
    hp->handle = handle;
    if (pair_put(&o->heap_index, image, handle, o->heap_count + 1) != 0)
        return -1;
    return (int64_t)o->heap_count++;
}

static int write_region(struct hgtx *h, const struct region *r, int64_t end_ns, const char *why,
                        struct asys_err *err)
{
    struct hgtx_objects *o = h->objects;
    sqlite3_stmt *st = o->insert_region;
    sqlite3_bind_int64(st, 1, r->pid);
    imp_bind_optional(st, 2, r->heap, r->heap != 0);
    imp_bind_optional(st, 3, (int64_t)r->handle, r->handle != 0);
    sqlite3_bind_int64(st, 4, (int64_t)r->address);
    sqlite3_bind_int64(st, 5, (int64_t)r->size);
    sqlite3_bind_int64(st, 6, r->type);
    imp_bind_optional(st, 7, r->name_id, r->name_id != 0);
    imp_bind_optional(st, 8, r->category, r->category != 0);
    sqlite3_bind_int64(st, 9, (int64_t)r->start_ns);
    imp_bind_optional(st, 10, end_ns, end_ns >= 0);
    if (why)
        sqlite3_bind_text(st, 11, why, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 11);
    return imp_step(h->imp, st, err);
}

/* Ends region i's row at ns (it stays known by handle). */
static int close_region(struct hgtx *h, size_t i, uint64_t ns, const char *why,
                        struct asys_err *err)
{
    struct region *r = &h->objects->regions[i];
    if (!r->open)
        return 0;
    r->open = 0;
    struct pair_key k = {r->image, r->address};
    struct asys_strmap *m = &h->objects->open_regions;
    if (asys_strmap_get(m, (const char *)&k, sizeof k) == i + 1)
        asys_strmap_put(m, (const char *)&k, sizeof k, 0);
    return write_region(h, r, (int64_t)ns, why, err);
}

static int open_region(struct hgtx *h, const struct region *r, struct asys_err *err)
{
    struct hgtx_objects *o = h->objects;
    if (asys_grow(&o->regions, &o->region_cap, o->region_count, sizeof *o->regions, 64))
        return asys_fail(err, "out of memory");
    o->regions[o->region_count] = *r;
    o->regions[o->region_count].open = 1;
    size_t index = ++o->region_count;
    if (pair_put(&o->open_regions, r->image, r->address, index) != 0 ||
        (r->handle && pair_put(&o->region_handles, r->image, r->handle, index) != 0))
        return asys_fail(err, "out of memory");
    return 0;
}

/* The open region a call names by address or handle; -1: none. */
static int64_t named_region(struct hgtx *h, uint64_t ref, uint32_t ref_type)
{
    struct hgtx_objects *o = h->objects;
    uint64_t image = h->imp->seg.image->uid;
    uint32_t at = ref_type == REF_HANDLE ? pair_get(&o->region_handles, image, ref)
                                         : pair_get(&o->open_regions, image, ref);
    if (!at || !o->regions[at - 1].open) {
        o->unknown_regions++;
        return -1;
    }
    return at - 1;
}

/* A resized or renamed region: its row ends, the next begins. */
static int change_region(struct hgtx *h, size_t i, uint64_t ns, const char *why, uint64_t size,
                         uint32_t name, uint32_t category, struct asys_err *err)
{
    struct region next = h->objects->regions[i];
    if (close_region(h, i, ns, why, err) != 0)
        return -1;
    next.start_ns = ns;
    if (size)
        next.size = size;
    if (name) {
        next.name_id = name;
        next.category = category;
    }
    return open_region(h, &next, err);
}

static int end_heap_regions(struct hgtx *h, size_t heap, uint64_t ns, const char *why,
                            struct asys_err *err)
{
    struct hgtx_objects *o = h->objects;
    for (size_t i = 0; i < o->region_count; i++)
        if (o->regions[i].open && o->regions[i].heap == (int64_t)heap + 1 &&
            close_region(h, i, ns, why, err) != 0)
            return -1;
    return 0;
}

static int mem_region_op(struct hgtx *h, unsigned op, const struct asys_rec_hgtx_mem *r,
                         uint64_t ns, uint32_t name, struct asys_err *err)
{
    struct asys_importer *imp = h->imp;
    int64_t i;
    switch (op) {
    case ASYS_HGTX_MEM_REGION_REGISTER: {
        int64_t heap = heap_of(h, r->heap);
        if (heap < 0)
            return asys_fail(err, "out of memory");
        uint32_t at = pair_get(&h->objects->open_regions, imp->seg.image->uid, r->address);
        if (at && close_region(h, at - 1, ns, "registered again", err) != 0)
            return -1;
        struct region n = {.image = imp->seg.image->uid,
                           .pid = imp->seg.pid,
                           .heap = heap + 1,
                           .handle = r->value,
                           .address = r->address,
                           .size = r->size,
                           .type = r->flags,
                           .start_ns = ns};
        return open_region(h, &n, err);
    }
    case ASYS_HGTX_MEM_REGION_RESIZE:
        i = named_region(h, r->address, REF_POINTER);
        return i < 0 ? 0 : change_region(h, (size_t)i, ns, "resize", r->size, 0, 0, err);
    case ASYS_HGTX_MEM_REGION_UNREGISTER:
        i = named_region(h, r->address, r->flags);
        return i < 0 ? 0 : close_region(h, (size_t)i, ns, "unregister", err);
    case ASYS_HGTX_MEM_REGION_NAME: {
        i = named_region(h, r->address, r->flags);
        if (i < 0)
            return 0;
        struct region *reg = &h->objects->regions[i];
        if (!reg->name_id) { /* named as it is registered: the same row */
            reg->name_id = name;
            reg->category = r->category;
            return 0;
        }
        return change_region(h, (size_t)i, ns, "name", 0, name, r->category, err);
    }
    default:
        return 0;
    }
}

static int mem_heap_op(struct hgtx *h, unsigned op, const struct asys_rec_hgtx_mem *r, uint64_t ns,
                       uint32_t name, struct asys_err *err)
{
    int64_t i = heap_of(h, r->heap);
    if (i < 0)
        return asys_fail(err, "out of memory");
    struct heap *hp = &h->objects->heaps[i];
    switch (op) {
    case ASYS_HGTX_MEM_HEAP_REGISTER:
        hp->registered = 1;
        hp->domain = hgtx_domain_global(h, r->domain_id);
        hp->usage = r->flags >> 16;
        hp->type = r->flags & 0xffff;
        hp->address = r->address;
        hp->size = r->size;
        hp->name_id = name;
        hp->category = r->category;
        hp->registered_ns = ns;
        return 0;
    case ASYS_HGTX_MEM_HEAP_UNREGISTER:
        hp->unregistered_ns = ns;
        return end_heap_regions(h, (size_t)i, ns, "heap unregister", err);
    case ASYS_HGTX_MEM_HEAP_RESET:
        hp->resets++;
        return end_heap_regions(h, (size_t)i, ns, "heap reset", err);
    default:
        return 0;
    }
}

static int hgtx_on_mem(void *state, const struct asys_record *rec, uint64_t ns,
                       struct asys_err *err)
{
    struct hgtx *h = state;
    struct hgtx_objects *o = h->objects;
    struct asys_importer *imp = h->imp;
    const struct asys_rec_hgtx_mem *r = (const void *)rec->data;
    unsigned op = rec->arg;
    if (!imp->seg.image || op >= sizeof mem_calls / sizeof mem_calls[0] || !mem_calls[op])
        return 0;
    uint32_t name = imp_string(imp, imp->seg.image, r->name_string_id);
    sqlite3_stmt *st = o->insert_call;
    sqlite3_bind_int64(st, 1, (int64_t)ns);
    sqlite3_bind_int64(st, 2, imp->seg.pid);
    sqlite3_bind_int64(st, 3, imp->seg.tid);
    sqlite3_bind_int64(st, 4, hgtx_domain_global(h, r->domain_id));
    sqlite3_bind_text(st, 5, mem_calls[op], -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 6, (int64_t)r->heap);
    sqlite3_bind_int64(st, 7, (int64_t)r->address);
    sqlite3_bind_int64(st, 8, (int64_t)r->size);
    sqlite3_bind_int64(st, 9, (int64_t)r->value);
    sqlite3_bind_int64(st, 10, r->flags);
    imp_bind_optional(st, 11, name, name != 0);
    if (imp_step(imp, st, err) != 0)
        return -1;
    if (op <= ASYS_HGTX_MEM_HEAP_RESET)
        return mem_heap_op(h, op, r, ns, name, err);
    return mem_region_op(h, op, r, ns, name, err);
}

static int finish_mem(struct hgtx *h, struct asys_err *err)
{
    struct hgtx_objects *o = h->objects;
    struct asys_importer *imp = h->imp;
    for (size_t i = 0; i < o->region_count; i++)
        if (o->regions[i].open && write_region(h, &o->regions[i], -1, NULL, err) != 0)
            return -1;
    sqlite3_stmt *st = NULL;
    if (imp_prepare(imp,
                    "INSERT INTO hgtx_mem_heaps (id, pid, domain_id, handle, usage, type, "
                    "address, size, name_id, category, registered_ns, unregistered_ns, resets) "
                    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    &st, err) != 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < o->heap_count; i++) {
        const struct heap *hp = &o->heaps[i];
        sqlite3_bind_int64(st, 1, (int64_t)i + 1);
        sqlite3_bind_int64(st, 2, hp->pid);
        sqlite3_bind_int64(st, 3, hp->domain);
        sqlite3_bind_int64(st, 4, (int64_t)hp->handle);
        imp_bind_optional(st, 5, hp->usage, hp->registered);
        imp_bind_optional(st, 6, hp->type, hp->registered);
        imp_bind_optional(st, 7, (int64_t)hp->address, hp->size != 0);
        imp_bind_optional(st, 8, (int64_t)hp->size, hp->size != 0);
        imp_bind_optional(st, 9, hp->name_id, hp->name_id != 0);
        imp_bind_optional(st, 10, hp->category, hp->category != 0);
        imp_bind_optional(st, 11, (int64_t)hp->registered_ns, hp->registered);
        imp_bind_optional(st, 12, (int64_t)hp->unregistered_ns, hp->unregistered_ns != 0);
        sqlite3_bind_int64(st, 13, hp->resets);
        rc = imp_step(imp, st, err);
    }
    sqlite3_finalize(st);
    if (rc == 0 && o->unknown_regions)
        imp_warn(imp, "%" PRIu64 " HGTX memory calls name a region that is not registered",
                 o->unknown_regions);
    return rc;
}

/* ---- named resources ------------------------------------------------------------------- */

static const char *resource_type_name(uint32_t type)
{
    static const struct {
        uint32_t type;
        const char *name;
    } names[] = {
        {0x10001, "generic pointer"},
        {0x10002, "generic handle"},
        {0x10003, "os thread"},
        {0x10004, "pthread"},
        {0x20001, "os mutex"},
        {0x20002, "os semaphore"},
        {0x20003, "os event"},
        {0x20004, "os critical section"},
        {0x20005, "os spinlock"},
        {0x20006, "os seqlock"},
        {0x20007, "os rcu"},
        {0x30001, "pthread mutex"},
        {0x30002, "pthread condition"},
        {0x30003, "pthread rwlock"},
        {0x30004, "pthread barrier"},
        {0x30005, "pthread spinlock"},
        {0x30006, "pthread once"},
        {0x40001, "cuda device"},
        {0x40002, "cuda context"},
        {0x40003, "cuda stream"},
        {0x40004, "cuda event"},
        {0x50000, "cudart device"},
        {0x50001, "cudart stream"},
        {0x50002, "cudart event"},
        {0x60001, "opencl device"},
        {0x60002, "opencl context"},
        {0x60003, "opencl command queue"},
        {0x60004, "opencl memory object"},
        {0x60005, "opencl sampler"},
        {0x60006, "opencl program"},
        {0x60007, "opencl event"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].type == type)
            return names[i].name;
    return NULL;
}

static int hgtx_on_resource(void *state, const struct asys_record *rec, uint64_t ns,
                            struct asys_err *err)
{
    struct hgtx *h = state;
    struct hgtx_objects *o = h->objects;
    struct asys_importer *imp = h->imp;
    const struct asys_rec_hgtx_resource *r = (const void *)rec->data;
    if (!imp->seg.image)
        return 0;
    uint64_t image = imp->seg.image->uid;
    if (r->flags & ASYS_HGTX_RESOURCE_DESTROYED) {
        uint32_t id = pair_get(&o->resources, image, r->handle);
        if (!id)
            return 0;
        sqlite3_bind_int64(o->destroy_resource, 1, (int64_t)ns);
        sqlite3_bind_int64(o->destroy_resource, 2, id);
        return imp_step(imp, o->destroy_resource, err);
    }
    int64_t id = o->next_resource++;
    if (r->handle && pair_put(&o->resources, image, r->handle, (size_t)id) != 0)
        return asys_fail(err, "out of memory");
    uint32_t name = imp_string(imp, imp->seg.image, r->name_string_id);
    const char *type = resource_type_name(r->type);
    sqlite3_stmt *st = o->insert_resource;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, imp->seg.pid);
    sqlite3_bind_int64(st, 3, hgtx_domain_global(h, (uint16_t)rec->arg));
    sqlite3_bind_int64(st, 4, r->type);
    if (type)
        sqlite3_bind_text(st, 5, type, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 5);
    sqlite3_bind_int64(st, 6, (int64_t)r->identifier);
    imp_bind_optional(st, 7, (int64_t)r->handle, !(r->flags & ASYS_HGTX_RESOURCE_NAMED));
    imp_bind_optional(st, 8, r->cupti_id, (r->flags & ASYS_HGTX_RESOURCE_HAS_ID) != 0);
    imp_bind_optional(st, 9, name, name != 0);
    sqlite3_bind_int64(st, 10, (int64_t)ns);
    return imp_step(imp, st, err);
}

/* ---- user synchronization ------------------------------------------------------------------ */

static int64_t sync_of(struct hgtx *h, uint64_t handle)
{
    struct hgtx_objects *o = h->objects;
    struct asys_importer *imp = h->imp;
    uint64_t image = imp->seg.image->uid;
    uint32_t at = pair_get(&o->sync_index, image, handle);
    if (at)
        return at - 1;
    if (asys_grow(&o->syncs, &o->sync_cap, o->sync_count, sizeof *o->syncs, 16))
        return -1;
    struct sync_object *s = &o->syncs[o->sync_count];
    memset(s, 0, sizeof *s);
    s->image = image;
    s->pid = imp->seg.pid;
    s->handle = handle;
    if (pair_put(&o->sync_index, image, handle, o->sync_count + 1) != 0)
        return -1;
    return (int64_t)o->sync_count++;
}

static struct sync_state *state_of(struct hgtx *h, size_t sync)
{
    struct hgtx_objects *o = h->objects;
    struct sync_state_key k = {sync, h->imp->seg.pid, h->imp->seg.tid};
    uint32_t at = asys_strmap_get(&o->sync_states, (const char *)&k, sizeof k);
    if (at)
        return &o->states[at - 1];
    if (asys_grow(&o->states, &o->state_cap, o->state_count, sizeof *o->states, 16) ||
        asys_grow(&o->state_keys, &o->state_key_cap, o->state_count, sizeof *o->state_keys, 16) ||
        o->state_count >= UINT32_MAX - 1)
        return NULL;
    memset(&o->states[o->state_count], 0, sizeof *o->states);
    o->state_keys[o->state_count] = k;
    if (asys_strmap_put(&o->sync_states, (const char *)&k, sizeof k,
                        (uint32_t)(o->state_count + 1)) != 0)
        return NULL;
    return &o->states[o->state_count++];
}

static int insert_range(struct hgtx *h, size_t sync, uint32_t pid, uint32_t tid, const char *kind,
                        uint64_t start, int64_t end, const char *outcome, struct asys_err *err)
{
    sqlite3_stmt *st = h->objects->insert_range;
    sqlite3_bind_int64(st, 1, (int64_t)sync + 1);
    sqlite3_bind_int64(st, 2, pid);
    sqlite3_bind_int64(st, 3, tid);
    sqlite3_bind_text(st, 4, kind, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 5, (int64_t)start);
    imp_bind_optional(st, 6, end, end >= 0);
    if (outcome)
        sqlite3_bind_text(st, 7, outcome, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 7);
    return imp_step(h->imp, st, err);
}

static int hgtx_on_sync(void *state, const struct asys_record *rec, uint64_t ns,
                        struct asys_err *err)
{
    struct hgtx *h = state;
    struct asys_importer *imp = h->imp;
    const struct asys_rec_hgtx_sync *r = (const void *)rec->data;
    if (!imp->seg.image)
        return 0;
    int64_t i = sync_of(h, r->handle);
    if (i < 0)
        return asys_fail(err, "out of memory");
    struct sync_object *s = &h->objects->syncs[i];
    if (rec->arg == ASYS_HGTX_SYNC_CREATE) {
        s->name_id = imp_string(imp, imp->seg.image, r->name_string_id);
        s->domain = hgtx_domain_global(h, r->domain_id);
        s->created_ns = ns;
        return 0;
    }
    if (rec->arg == ASYS_HGTX_SYNC_DESTROY) {
        s->destroyed_ns = ns;
        return 0;
    }
    struct sync_state *st = state_of(h, (size_t)i);
    if (!st)
        return asys_fail(err, "out of memory");
    uint32_t pid = imp->seg.pid, tid = imp->seg.tid;
    int rc = 0;
    switch (rec->arg) {
    case ASYS_HGTX_SYNC_ACQUIRE_START:
        st->acquire_ns = ns;
        break;
    case ASYS_HGTX_SYNC_ACQUIRE_SUCCESS:
    case ASYS_HGTX_SYNC_ACQUIRE_FAILED: {
        int ok = rec->arg == ASYS_HGTX_SYNC_ACQUIRE_SUCCESS;
        if (st->acquire_ns)
            rc = insert_range(h, (size_t)i, pid, tid, "acquire", st->acquire_ns, (int64_t)ns,
                              ok ? "success" : "failed", err);
        st->acquire_ns = 0;
        if (ok)
            st->held_ns = ns;
        break;
    }
    case ASYS_HGTX_SYNC_RELEASING:
        if (st->held_ns)
            rc = insert_range(h, (size_t)i, pid, tid, "held", st->held_ns, (int64_t)ns, NULL, err);
        st->held_ns = 0;
        break;
    default:
        break;
    }
    return rc;
}

static int finish_sync(struct hgtx *h, struct asys_err *err)
{
    struct hgtx_objects *o = h->objects;
    struct asys_importer *imp = h->imp;
    for (size_t i = 0; i < o->state_count; i++) { /* never released or never got */
        const struct sync_state_key *k = &o->state_keys[i];
        if ((o->states[i].acquire_ns &&
             insert_range(h, k->sync, k->pid, k->tid, "acquire", o->states[i].acquire_ns, -1, NULL,
                          err) != 0) ||
            (o->states[i].held_ns && insert_range(h, k->sync, k->pid, k->tid, "held",
                                                  o->states[i].held_ns, -1, NULL, err) != 0))
            return -1;
    }
    sqlite3_stmt *st = NULL;
    if (imp_prepare(imp,
                    "INSERT INTO hgtx_sync_objects (id, pid, domain_id, handle, name_id, "
                    "created_ns, destroyed_ns) VALUES (?,?,?,?,?,?,?)",
                    &st, err) != 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < o->sync_count; i++) {
        const struct sync_object *s = &o->syncs[i];
        sqlite3_bind_int64(st, 1, (int64_t)i + 1);
        sqlite3_bind_int64(st, 2, s->pid);
        sqlite3_bind_int64(st, 3, s->domain);
        sqlite3_bind_int64(st, 4, (int64_t)s->handle);
        imp_bind_optional(st, 5, s->name_id, s->name_id != 0);
        imp_bind_optional(st, 6, (int64_t)s->created_ns, s->created_ns != 0);
        imp_bind_optional(st, 7, (int64_t)s->destroyed_ns, s->destroyed_ns != 0);
        rc = imp_step(imp, st, err);
    }
    sqlite3_finalize(st);
    return rc;
}

/* ---- NVTX_INJECTION64_PATH replaced ---------------------------------------------------------- */

static int hgtx_on_injection(void *state, const struct asys_record *rec, uint64_t ns,
                             struct asys_err *err)
{
    (void)ns;
    struct hgtx *h = state;
    struct asys_importer *imp = h->imp;
    const struct asys_rec_hgtx_injection *r = (const void *)rec->data;
    size_t room = rec->size - sizeof *r;
    size_t length = r->path_length <= room ? r->path_length : room;
    char text[600];
    if (length)
        snprintf(text, sizeof text, "process %u set NVTX_INJECTION64_PATH to '%.*s'", imp->seg.pid,
                 (int)(length > 400 ? 400 : length), (const char *)(r + 1));
    else
        snprintf(text, sizeof text, "process %u removed NVTX_INJECTION64_PATH", imp->seg.pid);
    char line[800];
    if (r->modules_attached)
        snprintf(line, sizeof line,
                 "%s: HGTX events of the %u NVTX modules that started before are recorded, "
                 "of any that started later not",
                 text, r->modules_attached);
    else
        snprintf(line, sizeof line, "%s: its HGTX annotations were not recorded", text);
    imp_warn(imp, "%s", line);
    return imp_session_info(imp, "hgtx_injection_replaced", line, 0, err);
}

static int hgtx_objects_finish(struct hgtx *h, struct asys_err *err)
{
    return finish_mem(h, err) == 0 && finish_sync(h, err) == 0 ? 0 : -1;
}

static const struct imp_record_op objects_ops[] = {
    {ASYS_REC_HGTX_MEM, hgtx_on_mem},
    {ASYS_REC_HGTX_RESOURCE, hgtx_on_resource},
    {ASYS_REC_HGTX_SYNC, hgtx_on_sync},
    {ASYS_REC_HGTX_INJECTION, hgtx_on_injection},
};

const struct hgtx_extension hgtx_objects_extension = {
    .name = "objects",
    .records = {objects_ops, sizeof objects_ops / sizeof objects_ops[0]},
    .init = hgtx_objects_init,
    .finish = hgtx_objects_finish,
    .free = hgtx_objects_free,
};
