/* HGTX collector: the memory extension (nvToolsExtMem.h and its CUDA
 * runtime part, nvToolsExtMemCudaRt.h).  A sub-allocator tells which heaps
 * it owns and which regions it hands out, with names and permissions; one
 * record per call, a batch call one record per region.  The handles the
 * program gets back are asys's (from 1 up), so that later calls that name a
 * heap or region by handle can be matched offline. */
#define _GNU_SOURCE
#include <string.h>

/* first: it asks NVTX for declarations only (NVTX_NO_IMPL) */
#include "hgtx_internal.h"

#include <nvtx3/nvToolsExtMemCudaRt.h>

#define MAX_BATCH (1u << 20)
#define MAX_DEVICES 64

struct mem_op {
    unsigned op;
    uint16_t domain;
    uint32_t name_id;
    uint64_t heap, address, size, value;
    uint32_t flags, category;
};

static void write_op(struct asys_thread *t, const struct mem_op *m, uint64_t ticks)
{
    uint32_t delta;
    struct asys_rec_hgtx_mem *r = asys_segment_reserve(&t->seg, sizeof *r, ticks, &delta);
    if (!r)
        return;
    r->domain_id = m->domain;
    r->reserved = 0;
    r->name_string_id = m->name_id;
    r->heap = m->heap;
    r->address = m->address;
    r->size = m->size;
    r->value = m->value;
    r->flags = m->flags;
    r->category = m->category;
    asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_HGTX_MEM, sizeof *r / 8, m->op, delta));
}

/* Records one operation that needs no string. */
static void record(const struct mem_op *m)
{
    struct asys_thread *t = asys_thread_enter();
    if (!t)
        return;
    write_op(t, m, asys_now());
    asys_thread_leave();
}

static uint64_t handle_value(const void *handle)
{
    return (uint64_t)(uintptr_t)handle;
}

/* ---- heaps ------------------------------------------------------------------- */

static nvtxMemHeapHandle_t NVTX_API heap_register(nvtxDomainHandle_t domain,
                                                  nvtxMemHeapDesc_t const *desc)
{
    uint64_t handle = asys_hgtx_new_handle();
    struct asys_thread *t = asys_thread_enter();
    if (!t)
        return (nvtxMemHeapHandle_t)(uintptr_t)handle;
    struct mem_op m = {
        .op = ASYS_HGTX_MEM_HEAP_REGISTER, .domain = asys_hgtx_domain_id(domain), .heap = handle};
    if (desc && desc->structSize >= offsetof(nvtxMemHeapDesc_t, message) + sizeof desc->message) {
        m.flags = (desc->usage & 0xffffu) << 16 | (desc->type & 0xffffu);
        m.category = desc->category;
        m.name_id = asys_hgtx_message_id(t, (int32_t)desc->messageType, desc->message);
        if (desc->type == NVTX_MEM_TYPE_VIRTUAL_ADDRESS && desc->typeSpecificDesc &&
            desc->typeSpecificDescSize >= sizeof(nvtxMemVirtualRangeDesc_t)) {
            const nvtxMemVirtualRangeDesc_t *range = desc->typeSpecificDesc;
            m.address = handle_value(range->ptr);
            m.size = range->size;
        }
    }
    write_op(t, &m, asys_now());
    asys_thread_leave();
    return (nvtxMemHeapHandle_t)(uintptr_t)handle;
}

static void NVTX_API heap_unregister(nvtxDomainHandle_t domain, nvtxMemHeapHandle_t heap)
{
    struct mem_op m = {.op = ASYS_HGTX_MEM_HEAP_UNREGISTER,
                       .domain = asys_hgtx_domain_id(domain),
                       .heap = handle_value(heap)};
    record(&m);
}

static void NVTX_API heap_reset(nvtxDomainHandle_t domain, nvtxMemHeapHandle_t heap)
{
    struct mem_op m = {.op = ASYS_HGTX_MEM_HEAP_RESET,
                       .domain = asys_hgtx_domain_id(domain),
                       .heap = handle_value(heap)};
    record(&m);
}

/* ---- regions --------------------------------------------------------------------- */

/* Where a region descriptor of `type` starts and how big it is. */
static int region_extent(uint32_t type, const void *element, size_t element_size, uint64_t *address,
                         uint64_t *size)
{
    if (type == NVTX_MEM_TYPE_VIRTUAL_ADDRESS &&
        element_size >= sizeof(nvtxMemVirtualRangeDesc_t)) {
        const nvtxMemVirtualRangeDesc_t *r = element;
        *address = handle_value(r->ptr);
        *size = r->size;
        return 0;
    }
    if ((type == NVTX_MEM_TYPE_CUDA_ARRAY || type == NVTX_MEM_TYPE_CU_ARRAY) &&
        element_size >= sizeof(nvtxMemCudaArrayRangeDesc_t)) {
        const nvtxMemCudaArrayRangeDesc_t *r = element; /* same layout for both kinds */
        *address = handle_value(r->src);
        uint64_t n = 1;
        for (int i = 0; i < 3; i++)
            n *= r->extent[i] ? r->extent[i] : 1;
        *size = n;
        return 0;
    }
    return -1;
}

/* A batch's elements are read in place, `stride` bytes apart (the struct
 * size the program was built with), at most MAX_BATCH of them. */
static size_t batch_count(size_t count)
{
    return count < MAX_BATCH ? count : MAX_BATCH;
}

static const void *batch_element(const void *first, size_t stride, size_t i)
{
    return (const uint8_t *)first + i * stride;
}

static void NVTX_API regions_register(nvtxDomainHandle_t domain,
                                      nvtxMemRegionsRegisterBatch_t const *desc)
{
    if (!desc || desc->structSize < sizeof *desc || !desc->regionDescElements)
        return;
    struct asys_thread *t = asys_thread_enter();
    uint64_t ticks = t ? asys_now() : 0;
    uint16_t domain_id = asys_hgtx_domain_id(domain); /* once per batch */
    size_t count = batch_count(desc->regionCount);
    for (size_t i = 0; i < count; i++) {
        const void *element =
            batch_element(desc->regionDescElements, desc->regionDescElementSize, i);
        struct mem_op m = {.op = ASYS_HGTX_MEM_REGION_REGISTER,
                           .domain = domain_id,
                           .heap = handle_value(desc->heap),
                           .value = asys_hgtx_new_handle(),
                           .flags = desc->regionType};
        if (desc->regionHandleElementsOut)
            desc->regionHandleElementsOut[i] = (nvtxMemRegionHandle_t)(uintptr_t)m.value;
        if (t && region_extent(desc->regionType, element, desc->regionDescElementSize, &m.address,
                               &m.size) == 0)
            write_op(t, &m, ticks);
    }
    if (t)
        asys_thread_leave();
}

static void NVTX_API regions_resize(nvtxDomainHandle_t domain,
                                    nvtxMemRegionsResizeBatch_t const *desc)
{
    if (!desc || desc->structSize < sizeof *desc || !desc->regionDescElements)
        return;
    struct asys_thread *t = asys_thread_enter();
    if (!t)
        return;
    uint64_t ticks = asys_now();
    uint16_t domain_id = asys_hgtx_domain_id(domain); /* once per batch */
    size_t count = batch_count(desc->regionDescCount);
    for (size_t i = 0; i < count; i++) {
        const void *element =
            batch_element(desc->regionDescElements, desc->regionDescElementSize, i);
        struct mem_op m = {
            .op = ASYS_HGTX_MEM_REGION_RESIZE, .domain = domain_id, .flags = desc->regionType};
        if (region_extent(desc->regionType, element, desc->regionDescElementSize, &m.address,
                          &m.size) == 0)
            write_op(t, &m, ticks);
    }
    asys_thread_leave();
}

static uint64_t region_ref(uint32_t ref_type, nvtxMemRegionRef_t ref)
{
    return ref_type == NVTX_MEM_REGION_REF_TYPE_HANDLE ? handle_value(ref.handle)
                                                       : handle_value(ref.pointer);
}

static void NVTX_API regions_unregister(nvtxDomainHandle_t domain,
                                        nvtxMemRegionsUnregisterBatch_t const *desc)
{
    if (!desc || desc->structSize < sizeof *desc || !desc->refElements ||
        desc->refElementSize < sizeof(nvtxMemRegionRef_t))
        return;
    struct asys_thread *t = asys_thread_enter();
    if (!t)
        return;
    uint64_t ticks = asys_now();
    uint16_t domain_id = asys_hgtx_domain_id(domain); /* once per batch */
    size_t count = batch_count(desc->refCount);
    for (size_t i = 0; i < count; i++) {
        const nvtxMemRegionRef_t *ref = batch_element(desc->refElements, desc->refElementSize, i);
        struct mem_op m = {.op = ASYS_HGTX_MEM_REGION_UNREGISTER,
                           .domain = domain_id,
                           .address = region_ref(desc->refType, *ref),
                           .flags = desc->refType};
        write_op(t, &m, ticks);
    }
    asys_thread_leave();
}

static void NVTX_API regions_name(nvtxDomainHandle_t domain, nvtxMemRegionsNameBatch_t const *desc)
{
    if (!desc || desc->structSize < sizeof *desc || !desc->regionElements ||
        desc->regionElementSize < sizeof(nvtxMemRegionNameDesc_t))
        return;
    struct asys_thread *t = asys_thread_enter();
    if (!t)
        return;
    uint64_t ticks = asys_now();
    uint16_t domain_id = asys_hgtx_domain_id(domain); /* once per batch */
    size_t count = batch_count(desc->regionCount);
    for (size_t i = 0; i < count; i++) {
        const nvtxMemRegionNameDesc_t *n =
            batch_element(desc->regionElements, desc->regionElementSize, i);
        struct mem_op m = {.op = ASYS_HGTX_MEM_REGION_NAME,
                           .domain = domain_id,
                           .address = region_ref(n->regionRefType, n->region),
                           .flags = n->regionRefType,
                           .category = n->category};
        m.name_id = asys_hgtx_message_id(t, (int32_t)n->nameType, n->name);
        write_op(t, &m, ticks);
    }
    asys_thread_leave();
}

/* ---- permissions -------------------------------------------------------------------- */

static void NVTX_API permissions_assign(nvtxDomainHandle_t domain,
                                        nvtxMemPermissionsAssignBatch_t const *desc)
{
    if (!desc || desc->structSize < sizeof *desc || !desc->regionElements ||
        desc->regionElementSize < sizeof(nvtxMemPermissionsAssignRegionDesc_t))
        return;
    struct asys_thread *t = asys_thread_enter();
    if (!t)
        return;
    uint64_t ticks = asys_now();
    uint16_t domain_id = asys_hgtx_domain_id(domain); /* once per batch */
    size_t count = batch_count(desc->regionCount);
    for (size_t i = 0; i < count; i++) {
        const nvtxMemPermissionsAssignRegionDesc_t *r =
            batch_element(desc->regionElements, desc->regionElementSize, i);
        struct mem_op m = {.op = ASYS_HGTX_MEM_PERMISSIONS_ASSIGN,
                           .domain = domain_id,
                           .value = handle_value(desc->permissions),
                           .address = region_ref(r->regionRefType, r->region),
                           .size = r->flags,
                           .flags = r->regionRefType};
        write_op(t, &m, ticks);
    }
    asys_thread_leave();
}

static nvtxMemPermissionsHandle_t NVTX_API permissions_create(nvtxDomainHandle_t domain,
                                                              int32_t flags)
{
    struct mem_op m = {.op = ASYS_HGTX_MEM_PERMISSIONS_CREATE,
                       .domain = asys_hgtx_domain_id(domain),
                       .value = asys_hgtx_new_handle(),
                       .flags = (uint32_t)flags};
    record(&m);
    return (nvtxMemPermissionsHandle_t)(uintptr_t)m.value;
}

static void permissions_op(nvtxDomainHandle_t domain, unsigned op,
                           nvtxMemPermissionsHandle_t permissions, uint64_t size, uint32_t flags)
{
    struct mem_op m = {.op = op,
                       .domain = asys_hgtx_domain_id(domain),
                       .value = handle_value(permissions),
                       .size = size,
                       .flags = flags};
    record(&m);
}

static void NVTX_API permissions_destroy(nvtxDomainHandle_t domain, nvtxMemPermissionsHandle_t p)
{
    permissions_op(domain, ASYS_HGTX_MEM_PERMISSIONS_DESTROY, p, 0, 0);
}

static void NVTX_API permissions_reset(nvtxDomainHandle_t domain, nvtxMemPermissionsHandle_t p)
{
    permissions_op(domain, ASYS_HGTX_MEM_PERMISSIONS_RESET, p, 0, 0);
}

static void NVTX_API permissions_bind(nvtxDomainHandle_t domain, nvtxMemPermissionsHandle_t p,
                                      uint32_t scope, uint32_t flags)
{
    permissions_op(domain, ASYS_HGTX_MEM_PERMISSIONS_BIND, p, scope, flags);
}

static void NVTX_API permissions_unbind(nvtxDomainHandle_t domain, uint32_t scope)
{
    permissions_op(domain, ASYS_HGTX_MEM_PERMISSIONS_UNBIND, NULL, scope, 0);
}

/* ---- the CUDA runtime part ------------------------------------------------------------ */

/* One handle for the process-wide and one per device, made on first use. */
static uint64_t process_wide_permissions;
static uint64_t device_permissions[MAX_DEVICES];

static uint64_t handle_once(uint64_t *slot)
{
    uint64_t h = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (h)
        return h;
    uint64_t fresh = asys_hgtx_new_handle();
    return __atomic_compare_exchange_n(slot, &h, fresh, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)
               ? fresh
               : h;
}

static nvtxMemPermissionsHandle_t NVTX_API cuda_process_permissions(nvtxDomainHandle_t domain)
{
    struct mem_op m = {.op = ASYS_HGTX_MEM_CUDA_PROCESS_PERMISSIONS,
                       .domain = asys_hgtx_domain_id(domain),
                       .value = handle_once(&process_wide_permissions)};
    record(&m);
    return (nvtxMemPermissionsHandle_t)(uintptr_t)m.value;
}

static nvtxMemPermissionsHandle_t NVTX_API cuda_device_permissions(nvtxDomainHandle_t domain,
                                                                   int device)
{
    if (device < 0 || device >= MAX_DEVICES)
        return NVTX_MEM_PERMISSIONS_HANDLE_NO_TOOL;
    struct mem_op m = {.op = ASYS_HGTX_MEM_CUDA_DEVICE_PERMISSIONS,
                       .domain = asys_hgtx_domain_id(domain),
                       .value = handle_once(&device_permissions[device]),
                       .size = (uint64_t)device};
    record(&m);
    return (nvtxMemPermissionsHandle_t)(uintptr_t)m.value;
}

static void NVTX_API cuda_peer_access(nvtxDomainHandle_t domain, nvtxMemPermissionsHandle_t p,
                                      int peer, uint32_t flags)
{
    permissions_op(domain, ASYS_HGTX_MEM_CUDA_PEER_ACCESS, p, (uint64_t)(int64_t)peer, flags);
}

static void NVTX_API cuda_mark_initialized(nvtxDomainHandle_t domain, cudaStream_t stream,
                                           uint8_t per_thread,
                                           nvtxMemMarkInitializedBatch_t const *desc)
{
    if (!desc || desc->structSize < sizeof *desc || !desc->regionDescElements)
        return;
    struct asys_thread *t = asys_thread_enter();
    if (!t)
        return;
    uint64_t ticks = asys_now();
    uint16_t domain_id = asys_hgtx_domain_id(domain); /* once per batch */
    size_t count = batch_count(desc->regionDescCount);
    for (size_t i = 0; i < count; i++) {
        const void *element =
            batch_element(desc->regionDescElements, desc->regionDescElementSize, i);
        struct mem_op m = {.op = ASYS_HGTX_MEM_CUDA_INITIALIZED,
                           .domain = domain_id,
                           .value = handle_value(stream),
                           .flags = per_thread};
        if (region_extent(desc->regionType, element, desc->regionDescElementSize, &m.address,
                          &m.size) == 0)
            write_op(t, &m, ticks);
    }
    asys_thread_leave();
}

#define HOOK ASYS_HGTX_HOOK
static const struct asys_hgtx_hook mem_hooks[] = {
    HOOK(NVTX3EXT_CBID_nvtxMemHeapRegister, heap_register),
    HOOK(NVTX3EXT_CBID_nvtxMemHeapUnregister, heap_unregister),
    HOOK(NVTX3EXT_CBID_nvtxMemHeapReset, heap_reset),
    HOOK(NVTX3EXT_CBID_nvtxMemRegionsRegister, regions_register),
    HOOK(NVTX3EXT_CBID_nvtxMemRegionsResize, regions_resize),
    HOOK(NVTX3EXT_CBID_nvtxMemRegionsUnregister, regions_unregister),
    HOOK(NVTX3EXT_CBID_nvtxMemRegionsName, regions_name),
    HOOK(NVTX3EXT_CBID_nvtxMemPermissionsAssign, permissions_assign),
    HOOK(NVTX3EXT_CBID_nvtxMemPermissionsCreate, permissions_create),
    HOOK(NVTX3EXT_CBID_nvtxMemPermissionsDestroy, permissions_destroy),
    HOOK(NVTX3EXT_CBID_nvtxMemPermissionsReset, permissions_reset),
    HOOK(NVTX3EXT_CBID_nvtxMemPermissionsBind, permissions_bind),
    HOOK(NVTX3EXT_CBID_nvtxMemPermissionsUnbind, permissions_unbind),
    HOOK(NVTX3EXT_CBID_nvtxMemCudaGetProcessWidePermissions, cuda_process_permissions),
    HOOK(NVTX3EXT_CBID_nvtxMemCudaGetDeviceWidePermissions, cuda_device_permissions),
    HOOK(NVTX3EXT_CBID_nvtxMemCudaSetPeerAccess, cuda_peer_access),
    HOOK(NVTX3EXT_CBID_nvtxMemCudaMarkInitialized, cuda_mark_initialized),
};

const struct asys_hgtx_ext_module asys_hgtx_mem_module = {
    NVTX_EXT_MODULEID_MEM, "memory", mem_hooks, sizeof mem_hooks / sizeof mem_hooks[0]};
