/* HGTX collector: names for things that are not ranges.
 *
 * nvtxNameCu* / nvtxNameCuda* / nvtxNameCl* name CUDA and OpenCL objects;
 * nvtxDomainResourceCreate names any object (a pointer, a handle, a thread)
 * in a domain; nvtxDomainSyncUser* tells when a user-defined lock is being
 * acquired, got or released.  Each call is one record; streams and
 * contexts get CUPTI's id too, so their names can label the PPU rows. */
#define _GNU_SOURCE
#include <string.h>

#include "hgtx_internal.h"

/* NVTX's resource types: class << 16 | index (nvToolsExtCuda.h,
 * nvToolsExtCudaRt.h, nvToolsExtOpenCL.h). */
#define RESOURCE(class, index) ((uint32_t)(class) << 16 | (uint32_t)(index))
enum { CLASS_CUDA = 4, CLASS_CUDART = 5, CLASS_OPENCL = 6 };

static void write_resource(struct asys_thread *t, uint16_t domain, uint32_t type, uint32_t name_id,
                           uint64_t identifier, uint64_t handle, uint32_t flags)
{
    uint32_t cupti_id = 0;
    const void *object = (const void *)(uintptr_t)identifier;
    if ((type == RESOURCE(CLASS_CUDA, 3) || type == RESOURCE(CLASS_CUDART, 1)) &&
        asys_hggc_stream_id(object, &cupti_id) == 0)
        flags |= ASYS_HGTX_RESOURCE_HAS_ID;
    else if (type == RESOURCE(CLASS_CUDA, 2) && asys_hggc_context_id(object, &cupti_id) == 0)
        flags |= ASYS_HGTX_RESOURCE_HAS_ID;
    uint32_t delta;
    struct asys_rec_hgtx_resource *r = asys_segment_reserve(&t->seg, sizeof *r, asys_now(), &delta);
    if (!r)
        return;
    r->type = type;
    r->name_string_id = name_id;
    r->identifier = identifier;
    r->handle = handle;
    r->cupti_id = cupti_id;
    r->flags = flags;
    asys_segment_commit(&r->header,
                        ASYS_REC_WORD(ASYS_REC_HGTX_RESOURCE, sizeof *r / 8, domain, delta));
}

/* ---- nvtxName{Cu,Cuda,Cl}*: one pair of hooks (A, W) per object kind ------------ */

static void name_object(uint32_t type, uint64_t identifier, const char *ascii, const wchar_t *wide)
{
    struct asys_thread *t = asys_thread_enter();
    if (!t)
        return;
    uint32_t name = ascii ? asys_intern(t, ascii) : asys_intern_wide(t, wide ? wide : L"");
    write_resource(t, ASYS_HGTX_DEFAULT_DOMAIN, type, name, identifier, 0,
                   ASYS_HGTX_RESOURCE_NAMED);
    asys_thread_leave();
}

/* The handle types differ (an int ordinal or a pointer); both fit in 64 bits. */
#define NAMING_HOOKS(fn, object_type, type) \
    static void NVTX_API fn##_a(object_type object, const char *name) \
    { \
        name_object(type, (uint64_t)(uintptr_t)object, name ? name : "", NULL); \
    } \
    static void NVTX_API fn##_w(object_type object, const wchar_t *name) \
    { \
        name_object(type, (uint64_t)(uintptr_t)object, NULL, name ? name : L""); \
    }

NAMING_HOOKS(name_cu_device, int, RESOURCE(CLASS_CUDA, 1))
NAMING_HOOKS(name_cu_context, const void *, RESOURCE(CLASS_CUDA, 2))
NAMING_HOOKS(name_cu_stream, const void *, RESOURCE(CLASS_CUDA, 3))
NAMING_HOOKS(name_cu_event, const void *, RESOURCE(CLASS_CUDA, 4))
NAMING_HOOKS(name_cuda_device, int, RESOURCE(CLASS_CUDART, 0))
NAMING_HOOKS(name_cuda_stream, const void *, RESOURCE(CLASS_CUDART, 1))
NAMING_HOOKS(name_cuda_event, const void *, RESOURCE(CLASS_CUDART, 2))
NAMING_HOOKS(name_cl_device, const void *, RESOURCE(CLASS_OPENCL, 1))
NAMING_HOOKS(name_cl_context, const void *, RESOURCE(CLASS_OPENCL, 2))
NAMING_HOOKS(name_cl_queue, const void *, RESOURCE(CLASS_OPENCL, 3))
NAMING_HOOKS(name_cl_memory, const void *, RESOURCE(CLASS_OPENCL, 4))
NAMING_HOOKS(name_cl_sampler, const void *, RESOURCE(CLASS_OPENCL, 5))
NAMING_HOOKS(name_cl_program, const void *, RESOURCE(CLASS_OPENCL, 6))
NAMING_HOOKS(name_cl_event, const void *, RESOURCE(CLASS_OPENCL, 7))

/* ---- nvtxDomainResourceCreate / Destroy ------------------------------------------- */

nvtxResourceHandle_t NVTX_API asys_hgtx_resource_create(nvtxDomainHandle_t domain,
                                                        nvtxResourceAttributes_t *attribs)
{
    uint64_t handle = asys_hgtx_new_handle();
    struct asys_thread *t = asys_thread_enter();
    if (!t)
        return (nvtxResourceHandle_t)(uintptr_t)handle;
    uint32_t type = 0, name = 0;
    uint64_t identifier = 0;
    if (attribs &&
        attribs->size >= offsetof(nvtxResourceAttributes_t, message) + sizeof attribs->message) {
        type = (uint32_t)attribs->identifierType;
        identifier = attribs->identifier.ullValue;
        name = asys_hgtx_message_id(t, attribs->messageType, attribs->message);
    }
    write_resource(t, asys_hgtx_domain_id(domain), type, name, identifier, handle, 0);
    asys_thread_leave();
    return (nvtxResourceHandle_t)(uintptr_t)handle;
}

void NVTX_API asys_hgtx_resource_destroy(nvtxResourceHandle_t resource)
{
    struct asys_thread *t = asys_thread_enter();
    if (!t)
        return;
    write_resource(t, ASYS_HGTX_DEFAULT_DOMAIN, 0, 0, 0, (uint64_t)(uintptr_t)resource,
                   ASYS_HGTX_RESOURCE_DESTROYED);
    asys_thread_leave();
}

/* ---- user synchronization ------------------------------------------------------------ */

static void write_sync(struct asys_thread *t, unsigned op, uint64_t handle, uint16_t domain,
                       uint32_t name)
{
    uint32_t delta;
    struct asys_rec_hgtx_sync *r = asys_segment_reserve(&t->seg, sizeof *r, asys_now(), &delta);
    if (!r)
        return;
    r->name_string_id = name;
    r->domain_id = domain;
    r->reserved = 0;
    r->handle = handle;
    asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_HGTX_SYNC, sizeof *r / 8, op, delta));
}

static nvtxSyncUser_t NVTX_API sync_create(nvtxDomainHandle_t domain,
                                           const nvtxSyncUserAttributes_t *attribs)
{
    uint64_t handle = asys_hgtx_new_handle();
    struct asys_thread *t = asys_thread_enter();
    if (!t)
        return (nvtxSyncUser_t)(uintptr_t)handle;
    uint32_t name = 0;
    if (attribs &&
        attribs->size >= offsetof(nvtxSyncUserAttributes_t, message) + sizeof attribs->message)
        name = asys_hgtx_message_id(t, attribs->messageType, attribs->message);
    write_sync(t, ASYS_HGTX_SYNC_CREATE, handle, asys_hgtx_domain_id(domain), name);
    asys_thread_leave();
    return (nvtxSyncUser_t)(uintptr_t)handle;
}

/* The states of a lock are events on the thread: outside a capture range
 * they are not recorded; creating and destroying is. */
static void sync_event(unsigned op, nvtxSyncUser_t handle)
{
    if (op != ASYS_HGTX_SYNC_DESTROY && !asys_capturing())
        return;
    struct asys_thread *t = asys_thread_enter();
    if (!t) {
        if (asys_capturing())
            asys_thread_count_lost(sizeof(struct asys_rec_hgtx_sync));
        return;
    }
    write_sync(t, op, (uint64_t)(uintptr_t)handle, 0, 0);
    asys_thread_leave();
}

static void NVTX_API sync_destroy(nvtxSyncUser_t h)
{
    sync_event(ASYS_HGTX_SYNC_DESTROY, h);
}

static void NVTX_API sync_acquire_start(nvtxSyncUser_t h)
{
    sync_event(ASYS_HGTX_SYNC_ACQUIRE_START, h);
}

static void NVTX_API sync_acquire_failed(nvtxSyncUser_t h)
{
    sync_event(ASYS_HGTX_SYNC_ACQUIRE_FAILED, h);
}

static void NVTX_API sync_acquire_success(nvtxSyncUser_t h)
{
    sync_event(ASYS_HGTX_SYNC_ACQUIRE_SUCCESS, h);
}

static void NVTX_API sync_releasing(nvtxSyncUser_t h)
{
    sync_event(ASYS_HGTX_SYNC_RELEASING, h);
}

/* ---- the modules ---------------------------------------------------------------------- */

#define HOOK ASYS_HGTX_HOOK
static const struct asys_hgtx_hook cuda_hooks[] = {
    HOOK(NVTX_CBID_CUDA_NameCuDeviceA, name_cu_device_a),
    HOOK(NVTX_CBID_CUDA_NameCuDeviceW, name_cu_device_w),
    HOOK(NVTX_CBID_CUDA_NameCuContextA, name_cu_context_a),
    HOOK(NVTX_CBID_CUDA_NameCuContextW, name_cu_context_w),
    HOOK(NVTX_CBID_CUDA_NameCuStreamA, name_cu_stream_a),
    HOOK(NVTX_CBID_CUDA_NameCuStreamW, name_cu_stream_w),
    HOOK(NVTX_CBID_CUDA_NameCuEventA, name_cu_event_a),
    HOOK(NVTX_CBID_CUDA_NameCuEventW, name_cu_event_w),
};

static const struct asys_hgtx_hook cudart_hooks[] = {
    HOOK(NVTX_CBID_CUDART_NameCudaDeviceA, name_cuda_device_a),
    HOOK(NVTX_CBID_CUDART_NameCudaDeviceW, name_cuda_device_w),
    HOOK(NVTX_CBID_CUDART_NameCudaStreamA, name_cuda_stream_a),
    HOOK(NVTX_CBID_CUDART_NameCudaStreamW, name_cuda_stream_w),
    HOOK(NVTX_CBID_CUDART_NameCudaEventA, name_cuda_event_a),
    HOOK(NVTX_CBID_CUDART_NameCudaEventW, name_cuda_event_w),
};

static const struct asys_hgtx_hook opencl_hooks[] = {
    HOOK(NVTX_CBID_OPENCL_NameClDeviceA, name_cl_device_a),
    HOOK(NVTX_CBID_OPENCL_NameClDeviceW, name_cl_device_w),
    HOOK(NVTX_CBID_OPENCL_NameClContextA, name_cl_context_a),
    HOOK(NVTX_CBID_OPENCL_NameClContextW, name_cl_context_w),
    HOOK(NVTX_CBID_OPENCL_NameClCommandQueueA, name_cl_queue_a),
    HOOK(NVTX_CBID_OPENCL_NameClCommandQueueW, name_cl_queue_w),
    HOOK(NVTX_CBID_OPENCL_NameClMemObjectA, name_cl_memory_a),
    HOOK(NVTX_CBID_OPENCL_NameClMemObjectW, name_cl_memory_w),
    HOOK(NVTX_CBID_OPENCL_NameClSamplerA, name_cl_sampler_a),
    HOOK(NVTX_CBID_OPENCL_NameClSamplerW, name_cl_sampler_w),
    HOOK(NVTX_CBID_OPENCL_NameClProgramA, name_cl_program_a),
    HOOK(NVTX_CBID_OPENCL_NameClProgramW, name_cl_program_w),
    HOOK(NVTX_CBID_OPENCL_NameClEventA, name_cl_event_a),
    HOOK(NVTX_CBID_OPENCL_NameClEventW, name_cl_event_w),
};

static const struct asys_hgtx_hook sync_hooks[] = {
    HOOK(NVTX_CBID_SYNC_DomainSyncUserCreate, sync_create),
    HOOK(NVTX_CBID_SYNC_DomainSyncUserDestroy, sync_destroy),
    HOOK(NVTX_CBID_SYNC_DomainSyncUserAcquireStart, sync_acquire_start),
    HOOK(NVTX_CBID_SYNC_DomainSyncUserAcquireFailed, sync_acquire_failed),
    HOOK(NVTX_CBID_SYNC_DomainSyncUserAcquireSuccess, sync_acquire_success),
    HOOK(NVTX_CBID_SYNC_DomainSyncUserReleasing, sync_releasing),
};

#define MODULE(id, hooks) \
    { \
        id, hooks, sizeof hooks / sizeof hooks[0] \
    }
const struct asys_hgtx_core_module asys_hgtx_naming_modules[] = {
    MODULE(NVTX_CB_MODULE_CUDA, cuda_hooks),
    MODULE(NVTX_CB_MODULE_CUDART, cudart_hooks),
    MODULE(NVTX_CB_MODULE_OPENCL, opencl_hooks),
    MODULE(NVTX_CB_MODULE_SYNC, sync_hooks),
};
const size_t asys_hgtx_naming_module_count =
    sizeof asys_hgtx_naming_modules / sizeof asys_hgtx_naming_modules[0];
