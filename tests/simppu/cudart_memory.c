/* simppu libcudart.so.13: allocations (device, pinned, registered, managed,
 * pitched, stream-ordered from memory pools, __device__ variables), copies
 * and memsets in one, two and three dimensions, pointer queries.
 *
 * Device memory is host memory: copies and memsets really move the bytes,
 * at the call for stream operations (so the host sees their result however
 * the simulated time runs), when the node runs for graph nodes.  Managed
 * memory is reported as CUPTI's MANAGED kind, pool allocations with their
 * pool in the MEMORY2 record, pools themselves in MEMORY_POOL records.
 * Prefetches, advice and stream attachment of managed memory are accepted
 * and change nothing: there is no second memory to migrate to. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cudart_internal.h"

#define PITCH_ALIGNMENT 512

/* ---- allocations --------------------------------------------------------------------------------
 */

static struct allocation *track(void *p, size_t size, int device, uint8_t kind, unsigned flags)
{
    struct allocation *a = calloc(1, sizeof *a);
    a->base = (uintptr_t)p;
    a->size = size;
    a->device = device;
    a->kind = kind;
    a->flags = flags;
    a->live = 1;
    pthread_mutex_lock(&rt.lock);
    a->next = rt.allocations;
    rt.allocations = a;
    pthread_mutex_unlock(&rt.lock);
    return a;
}

/* The allocation `p` points into (rt.lock held). */
static struct allocation *find_locked(const void *p)
{
    for (struct allocation *a = rt.allocations; a; a = a->next)
        if ((uintptr_t)p >= a->base && (uintptr_t)p < a->base + (a->size ? a->size : 1))
            return a;
    return NULL;
}

/* Unlinks the allocation that starts at `p` (rt.lock held); NULL when none. */
static struct allocation *unlink_locked(const void *p)
{
    for (struct allocation **pp = &rt.allocations; *pp; pp = &(*pp)->next) {
        if ((*pp)->base == (uintptr_t)p) {
            struct allocation *a = *pp;
            *pp = a->next;
            return a;
        }
    }
    return NULL;
}

void track_array_memory(void *p, size_t size, int device)
{
    track(p, size, device, CUPTI_ACTIVITY_MEMORY_KIND_ARRAY, 0);
}

void untrack_array_memory(void *p)
{
    pthread_mutex_lock(&rt.lock);
    struct allocation *a = unlink_locked(p);
    pthread_mutex_unlock(&rt.lock);
    free(a);
}

uint8_t memory_kind_of(const void *p, int *device)
{
    uint8_t kind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    *device = -1;
    pthread_mutex_lock(&rt.lock);
    struct allocation *a = find_locked(p);
    if (a && (a->live || a->graph)) {
        kind = a->kind;
        *device = a->kind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED ? -1 : a->device;
    }
    pthread_mutex_unlock(&rt.lock);
    return kind;
}

/* Takes `bytes` of device `device`'s memory; 0 when they are not there. */
static int reserve(int device, uint64_t bytes)
{
    struct sim_device *d = &rt.devices[device];
    pthread_mutex_lock(&rt.lock);
    int fits = d->memory_used + bytes <= d->memory_total;
    if (fits)
        d->memory_used += bytes;
    pthread_mutex_unlock(&rt.lock);
    return fits;
}

static void unreserve(int device, uint64_t bytes)
{
    pthread_mutex_lock(&rt.lock);
    rt.devices[device].memory_used -= bytes;
    pthread_mutex_unlock(&rt.lock);
}

static void *device_bytes(size_t size)
{
    return aligned_alloc(256, (size + 255) & ~(size_t)255);
}

void emit_memory_at(CUpti_ActivityMemoryOperationType op, uint8_t kind, const void *address,
                    uint64_t bytes, int device, uint32_t stream, uint32_t correlation,
                    uint64_t timestamp, const struct sim_pool *pool)
{
    if (!wants(CUPTI_ACTIVITY_KIND_MEMORY2))
        return;
    CUpti_ActivityMemory4 r;
    memset(&r, 0, sizeof r);
    r.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    r.memoryOperationType = op;
    r.memoryKind = (CUpti_ActivityMemoryKind)kind;
    r.correlationId = correlation;
    r.address = (uint64_t)(uintptr_t)address;
    r.bytes = bytes;
    r.timestamp = timestamp;
    r.processId = (uint32_t)getpid();
    r.deviceId = device >= 0 ? (uint32_t)device : 0;
    struct sim_context *ctx = device >= 0 ? rt.devices[device].ctx : NULL;
    r.contextId = ctx ? ctx->id : 0;
    r.streamId = stream ? stream : CUPTI_INVALID_STREAM_ID;
    r.isAsync = stream != 0;
    if (pool) {
        r.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
        r.memoryPoolConfig.address = (uint64_t)(uintptr_t)pool;
        r.memoryPoolConfig.releaseThreshold = pool->release_threshold;
        r.memoryPoolConfig.pool.size = pool->reserved;
        r.memoryPoolConfig.utilizedSize = pool->used;
    }
    emit(&r, sizeof r);
}

/* A MEMORY2 record of the API call in progress, now. */
static void emit_memory(CUpti_ActivityMemoryOperationType op, uint8_t kind, const void *address,
                        uint64_t bytes, int device, uint32_t stream, const struct sim_pool *pool)
{
    emit_memory_at(op, kind, address, bytes, device, stream, current_correlation,
                   ts(simppu_now_ns()), pool);
}

EXPORT cudaError_t cudaMalloc(void **ptr, size_t size)
{
    APIP(cudaMalloc, v3020, ptr, size);
    if (!ptr)
        RETURN(cudaErrorInvalidValue);
    context_of(current_device);
    if (size == 0) {
        *ptr = NULL;
        RETURN(cudaSuccess);
    }
    int fits = reserve(current_device, size);
    void *p = fits ? device_bytes(size) : NULL;
    if (!p) {
        if (fits)
            unreserve(current_device, size);
        *ptr = NULL;
        RETURN(cudaErrorMemoryAllocation);
    }
    track(p, size, current_device, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0);
    *ptr = p;
    emit_memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                p, size, current_device, 0, NULL);
    RETURN(cudaSuccess);
}

/* ---- IPC memory handles
 * ---------------------------------------------------------------------------- A handle names the
 * allocation: the creating process, its address and size. Opened in another process it maps device
 * memory of that process's own, of the same size (simppu's processes share no device: bytes written
 * by one are not seen by the other); cudaIpcCloseMemHandle unmaps it. */

#define IPC_MEM_MAGIC 0x4d504953u /* "SIPM" */
#define IPC_OPENED 0x80000000u /* allocation flags: an opened IPC mapping */

struct ipc_mem_handle {
    uint32_t magic;
    uint32_t pid;
    uint64_t base;
    uint64_t size;
    int32_t device;
    uint32_t reserved;
};
_Static_assert(sizeof(struct ipc_mem_handle) <= sizeof(cudaIpcMemHandle_t), "IPC handle");

EXPORT cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t *handle, void *devPtr)
{
    APIP(cudaIpcGetMemHandle, v4010, handle, devPtr);
    if (!handle)
        RETURN(cudaErrorInvalidValue);
    pthread_mutex_lock(&rt.lock);
    struct allocation *a = find_locked(devPtr);
    struct ipc_mem_handle h = {IPC_MEM_MAGIC,   (uint32_t)getpid(), a ? a->base : 0,
                               a ? a->size : 0, a ? a->device : -1, 0};
    int shareable = a && a->kind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE && !a->pool && !a->graph &&
                    !a->is_static && !(a->flags & IPC_OPENED);
    pthread_mutex_unlock(&rt.lock);
    if (!shareable)
        RETURN(cudaErrorInvalidValue);
    memset(handle, 0, sizeof *handle);
    memcpy(handle, &h, sizeof h);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaIpcOpenMemHandle(void **devPtr, cudaIpcMemHandle_t handle,
                                        unsigned int flags)
{
    APIP(cudaIpcOpenMemHandle, v4010, devPtr, handle, flags);
    struct ipc_mem_handle h;
    memcpy(&h, &handle, sizeof h);
    if (!devPtr || h.magic != IPC_MEM_MAGIC || !h.size || flags & ~cudaIpcMemLazyEnablePeerAccess)
        RETURN(cudaErrorInvalidValue);
    if (h.pid == (uint32_t)getpid()) /* as CUDA: not in the process that made it */
        RETURN(cudaErrorDeviceUninitialized);
    if (!valid_device(h.device))
        RETURN(cudaErrorInvalidDevice);
    context_of(current_device);
    void *p = device_bytes(h.size);
    if (!p)
        RETURN(cudaErrorMemoryAllocation);
    track(p, h.size, h.device, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, IPC_OPENED);
    *devPtr = p;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaIpcCloseMemHandle(void *devPtr)
{
    APIP(cudaIpcCloseMemHandle, v4010, devPtr);
    pthread_mutex_lock(&rt.lock);
    struct allocation *a = find_locked(devPtr);
    int opened = a && a->base == (uintptr_t)devPtr && (a->flags & IPC_OPENED);
    if (opened)
        unlink_locked(devPtr);
    pthread_mutex_unlock(&rt.lock);
    if (!opened)
        RETURN(cudaErrorInvalidValue);
    free(devPtr);
    free(a);
    RETURN(cudaSuccess);
}

/* Managed memory: one address for host and device (here it is simply host
 * memory), reported as CUPTI's MANAGED kind; like CUDA, it may oversubscribe
 * the device, so it does not count against its memory. */
EXPORT cudaError_t cudaMallocManaged(void **ptr, size_t size, unsigned int flags)
{
    APIP(cudaMallocManaged, v6000, ptr, size, flags);
    if (!ptr || size == 0 || (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost))
        RETURN(cudaErrorInvalidValue);
    context_of(current_device);
    void *p = aligned_alloc(4096, (size + 4095) & ~(size_t)4095);
    if (!p)
        RETURN(cudaErrorMemoryAllocation);
    memset(p, 0, size);
    track(p, size, current_device, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED, flags);
    *ptr = p;
    emit_memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED,
                p, size, current_device, 0, NULL);
    RETURN(cudaSuccess);
}

static void pool_give_back(struct sim_pool *pool, uint64_t bytes);
static void graph_memory_free_live(struct allocation *a, uint32_t stream);

EXPORT cudaError_t cudaFree(void *ptr)
{
    APIP(cudaFree, v3020, ptr);
    if (!ptr)
        RETURN(cudaSuccess);
    pthread_mutex_lock(&rt.lock);
    struct allocation *a = find_locked(ptr);
    int freeable = a && a->base == (uintptr_t)ptr && !a->is_static &&
                   a->kind != CUPTI_ACTIVITY_MEMORY_KIND_PINNED && !(a->flags & IPC_OPENED);
    if (freeable && a->graph) { /* a graph allocation freed outside its graph */
        pthread_mutex_unlock(&rt.lock);
        if (!a->live)
            RETURN(cudaErrorInvalidValue);
        graph_memory_free_live(a, 0);
        RETURN(cudaSuccess);
    }
    if (freeable)
        unlink_locked(ptr);
    pthread_mutex_unlock(&rt.lock);
    if (!freeable)
        RETURN(cudaErrorInvalidValue);
    if (a->pool)
        pool_give_back(a->pool, a->size);
    else if (a->kind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE)
        unreserve(a->device, a->size);
    emit_memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, a->kind, ptr, a->size, a->device, 0,
                a->pool);
    free(ptr);
    free(a);
    RETURN(cudaSuccess);
}

/* Pitched allocations: rows padded to PITCH_ALIGNMENT bytes. */
EXPORT cudaError_t cudaMallocPitch(void **ptr, size_t *pitch, size_t width, size_t height)
{
    APIP(cudaMallocPitch, v3020, ptr, pitch, width, height);
    if (!ptr || !pitch)
        RETURN(cudaErrorInvalidValue);
    size_t p = (width + PITCH_ALIGNMENT - 1) / PITCH_ALIGNMENT * PITCH_ALIGNMENT;
    size_t size = p * height;
    void *base = size && reserve(current_device, size) ? device_bytes(size) : NULL;
    if (size && !base)
        RETURN(cudaErrorMemoryAllocation);
    if (base) {
        track(base, size, current_device, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0);
        emit_memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION,
                    CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, base, size, current_device, 0, NULL);
    }
    *ptr = base;
    *pitch = p;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaMalloc3D(struct cudaPitchedPtr *pitched, struct cudaExtent extent)
{
    APIP(cudaMalloc3D, v3020, pitched, extent);
    if (!pitched)
        RETURN(cudaErrorInvalidValue);
    size_t p = (extent.width + PITCH_ALIGNMENT - 1) / PITCH_ALIGNMENT * PITCH_ALIGNMENT;
    size_t size = p * extent.height * extent.depth;
    void *base = size && reserve(current_device, size) ? device_bytes(size) : NULL;
    if (size && !base)
        RETURN(cudaErrorMemoryAllocation);
    if (base) {
        track(base, size, current_device, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0);
        emit_memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION,
                    CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, base, size, current_device, 0, NULL);
    }
    *pitched = pitched_ptr(base, p, extent.width, extent.height);
    RETURN(cudaSuccess);
}

/* ---- host memory: pinned, mapped, registered
 * ------------------------------------------------------ */

static cudaError_t host_alloc(void **ptr, size_t size, unsigned flags)
{
    if (!ptr)
        return cudaErrorInvalidValue;
    if (flags &
        ~(unsigned)(cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined))
        return cudaErrorInvalidValue;
    void *p = aligned_alloc(4096, (size + 4095) & ~(size_t)4095);
    if (!p)
        return cudaErrorMemoryAllocation;
    track(p, size, -1, CUPTI_ACTIVITY_MEMORY_KIND_PINNED, flags);
    *ptr = p;
    emit_memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
                p, size, -1, 0, NULL);
    return cudaSuccess;
}

EXPORT cudaError_t cudaMallocHost(void **ptr, size_t size)
{
    APIP(cudaMallocHost, v3020, ptr, size);
    RETURN(host_alloc(ptr, size, cudaHostAllocDefault));
}

EXPORT cudaError_t cudaHostAlloc(void **ptr, size_t size, unsigned int flags)
{
    APIP(cudaHostAlloc, v3020, ptr, size, flags);
    RETURN(host_alloc(ptr, size, flags));
}

EXPORT cudaError_t cudaFreeHost(void *ptr)
{
    APIP(cudaFreeHost, v3020, ptr);
    if (!ptr)
        RETURN(cudaSuccess);
    pthread_mutex_lock(&rt.lock);
    struct allocation *a = find_locked(ptr);
    int ours = a && a->base == (uintptr_t)ptr && a->kind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED &&
               !a->registered;
    if (ours)
        unlink_locked(ptr);
    pthread_mutex_unlock(&rt.lock);
    if (!ours)
        RETURN(cudaErrorInvalidValue);
    emit_memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
                ptr, a->size, -1, 0, NULL);
    free(ptr);
    free(a);
    RETURN(cudaSuccess);
}

/* The program's own memory becomes pinned: copies from and to it run at the
 * pinned bandwidth.  No allocation, so no MEMORY2 record. */
EXPORT cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
    APIP(cudaHostRegister, v4000, ptr, size, flags);
    if (!ptr || !size ||
        (flags & ~(unsigned)(cudaHostRegisterPortable | cudaHostRegisterMapped |
                             cudaHostRegisterIoMemory | cudaHostRegisterReadOnly)))
        RETURN(cudaErrorInvalidValue);
    ensure_init();
    pthread_mutex_lock(&rt.lock);
    int overlaps = 0;
    for (struct allocation *a = rt.allocations; a; a = a->next)
        overlaps |= (uintptr_t)ptr < a->base + a->size && a->base < (uintptr_t)ptr + size;
    pthread_mutex_unlock(&rt.lock);
    if (overlaps)
        RETURN(cudaErrorHostMemoryAlreadyRegistered);
    struct allocation *a = track(ptr, size, -1, CUPTI_ACTIVITY_MEMORY_KIND_PINNED, flags);
    a->registered = 1;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaHostUnregister(void *ptr)
{
    APIP(cudaHostUnregister, v4000, ptr);
    if (!ptr)
        RETURN(cudaErrorInvalidValue);
    pthread_mutex_lock(&rt.lock);
    struct allocation *a = find_locked(ptr);
    int registered = a && a->base == (uintptr_t)ptr && a->registered;
    if (registered)
        unlink_locked(ptr);
    pthread_mutex_unlock(&rt.lock);
    if (!registered)
        RETURN(cudaErrorHostMemoryNotRegistered);
    free(a);
    RETURN(cudaSuccess);
}

/* Unified addressing: a pinned host pointer is its own device pointer. */
EXPORT cudaError_t cudaHostGetDevicePointer(void **device_ptr, void *host_ptr, unsigned int flags)
{
    APIP(cudaHostGetDevicePointer, v3020, device_ptr, host_ptr, flags);
    if (!device_ptr || flags != 0)
        RETURN(cudaErrorInvalidValue);
    int device;
    if (memory_kind_of(host_ptr, &device) != CUPTI_ACTIVITY_MEMORY_KIND_PINNED)
        RETURN(cudaErrorInvalidValue);
    *device_ptr = host_ptr;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaHostGetFlags(unsigned int *flags, void *host_ptr)
{
    APIP(cudaHostGetFlags, v3020, flags, host_ptr);
    if (!flags)
        RETURN(cudaErrorInvalidValue);
    pthread_mutex_lock(&rt.lock);
    struct allocation *a = find_locked(host_ptr);
    int pinned = a && a->kind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
    unsigned f = pinned ? a->flags : 0;
    pthread_mutex_unlock(&rt.lock);
    if (!pinned)
        RETURN(cudaErrorInvalidValue);
    *flags = f | cudaHostAllocMapped; /* always mapped with unified addressing */
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attributes,
                                            const void *ptr)
{
    APIP(cudaPointerGetAttributes, v4000, attributes, ptr);
    if (!attributes)
        RETURN(cudaErrorInvalidValue);
    ensure_init();
    memset(attributes, 0, sizeof *attributes);
    pthread_mutex_lock(&rt.lock);
    struct allocation *a = find_locked(ptr);
    if (!a) {
        attributes->type = cudaMemoryTypeUnregistered;
        attributes->device = -2;
        attributes->hostPointer = (void *)ptr;
    } else if (a->kind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED) {
        attributes->type = cudaMemoryTypeHost;
        attributes->device = current_device;
        attributes->devicePointer = attributes->hostPointer = (void *)ptr;
    } else if (a->kind == CUPTI_ACTIVITY_MEMORY_KIND_MANAGED) {
        attributes->type = cudaMemoryTypeManaged;
        attributes->device = a->device;
        attributes->devicePointer = attributes->hostPointer = (void *)ptr;
    } else {
        attributes->type = cudaMemoryTypeDevice;
        attributes->device = a->device;
        attributes->devicePointer = (void *)ptr;
    }
    pthread_mutex_unlock(&rt.lock);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total)
{
    APIP(cudaMemGetInfo, v3020, free_bytes, total);
    if (!free_bytes || !total)
        RETURN(cudaErrorInvalidValue);
    ensure_init();
    struct sim_device *d = &rt.devices[current_device];
    pthread_mutex_lock(&rt.lock);
    *total = d->memory_total;
    *free_bytes = d->memory_total - d->memory_used;
    pthread_mutex_unlock(&rt.lock);
    RETURN(cudaSuccess);
}

/* ---- managed memory hints: nothing to migrate --------------------------------------------------
 */

static cudaError_t check_location(struct cudaMemLocation location)
{
    if (location.type == cudaMemLocationTypeDevice)
        return valid_device(location.id) ? cudaSuccess : cudaErrorInvalidDevice;
    if (location.type == cudaMemLocationTypeHost || location.type == cudaMemLocationTypeHostNuma ||
        location.type == cudaMemLocationTypeHostNumaCurrent)
        return cudaSuccess;
    return cudaErrorInvalidValue;
}

EXPORT cudaError_t cudaMemPrefetchAsync(const void *ptr, size_t count,
                                        struct cudaMemLocation location, unsigned int flags,
                                        cudaStream_t stream)
{
    APIP(cudaMemPrefetchAsync, v12020, ptr, count, location, flags, stream);
    if (!resolve_stream(stream))
        RETURN(cudaErrorInvalidResourceHandle);
    if (!ptr || flags != 0)
        RETURN(cudaErrorInvalidValue);
    RETURN(check_location(location));
}

EXPORT cudaError_t cudaMemAdvise(const void *ptr, size_t count, enum cudaMemoryAdvise advice,
                                 struct cudaMemLocation location)
{
    APIP(cudaMemAdvise, v12020, ptr, count, advice, location);
    if (!ptr || (unsigned)advice < cudaMemAdviseSetReadMostly ||
        (unsigned)advice > cudaMemAdviseUnsetAccessedBy)
        RETURN(cudaErrorInvalidValue);
    int device;
    if (memory_kind_of(ptr, &device) != CUPTI_ACTIVITY_MEMORY_KIND_MANAGED)
        RETURN(cudaErrorInvalidValue);
    if (advice == cudaMemAdviseSetReadMostly || advice == cudaMemAdviseUnsetReadMostly)
        RETURN(cudaSuccess); /* the location is ignored */
    RETURN(check_location(location));
}

EXPORT cudaError_t cudaStreamAttachMemAsync(cudaStream_t stream, void *ptr, size_t length,
                                            unsigned int flags)
{
    APIP(cudaStreamAttachMemAsync, v6000, stream, ptr, length, flags);
    if (!resolve_stream(stream))
        RETURN(cudaErrorInvalidResourceHandle);
    if (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost && flags != cudaMemAttachSingle)
        RETURN(cudaErrorInvalidValue);
    int device;
    if (memory_kind_of(ptr, &device) != CUPTI_ACTIVITY_MEMORY_KIND_MANAGED)
        RETURN(cudaErrorInvalidValue);
    RETURN(cudaSuccess);
}

/* ---- memory pools and stream-ordered allocation
 * -------------------------------------------------- */

static void emit_pool(CUpti_ActivityMemoryPoolOperationType op, const struct sim_pool *pool,
                      uint64_t min_bytes_to_keep)
{
    if (!wants(CUPTI_ACTIVITY_KIND_MEMORY_POOL))
        return;
    CUpti_ActivityMemoryPool3 r;
    memset(&r, 0, sizeof r);
    r.kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
    r.memoryPoolOperationType = op;
    r.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
    r.correlationId = current_correlation;
    r.processId = (uint32_t)getpid();
    r.deviceId = (uint32_t)pool->device;
    r.minBytesToKeep = min_bytes_to_keep;
    r.address = (uint64_t)(uintptr_t)pool;
    r.size = pool->reserved;
    r.releaseThreshold = pool->release_threshold;
    r.timestamp = ts(simppu_now_ns());
    r.utilizedSize = pool->used;
    emit(&r, sizeof r);
}

static struct sim_pool *pool_new(int device, int is_default, size_t max_size)
{
    struct sim_pool *p = calloc(1, sizeof *p);
    p->device = device;
    p->is_default = is_default;
    p->max_size = max_size;
    p->reuse[0] = p->reuse[1] = p->reuse[2] = 1;
    p->access = 1u << device;
    pthread_mutex_lock(&rt.lock);
    p->next = rt.pools;
    rt.pools = p;
    pthread_mutex_unlock(&rt.lock);
    emit_pool(CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED, p, 0);
    return p;
}

static int pool_known(const struct sim_pool *pool)
{
    int found = 0;
    pthread_mutex_lock(&rt.lock);
    for (struct sim_pool *p = rt.pools; p && !found; p = p->next)
        found = p == pool;
    pthread_mutex_unlock(&rt.lock);
    return found;
}

static struct sim_pool *default_pool(int device)
{
    struct sim_device *d = &rt.devices[device];
    context_of(device);
    if (!__atomic_load_n(&d->default_pool, __ATOMIC_ACQUIRE)) {
        struct sim_pool *p = pool_new(device, 1, 0);
        struct sim_pool *expected = NULL;
        if (__atomic_compare_exchange_n(&d->default_pool, &expected, p, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)) {
            pthread_mutex_lock(&rt.lock);
            if (!d->current_pool)
                d->current_pool = p;
            pthread_mutex_unlock(&rt.lock);
        }
    }
    return d->default_pool;
}

static struct sim_pool *current_pool(int device)
{
    struct sim_pool *def = default_pool(device);
    pthread_mutex_lock(&rt.lock);
    struct sim_pool *p = rt.devices[device].current_pool ? rt.devices[device].current_pool : def;
    pthread_mutex_unlock(&rt.lock);
    return p;
}

/* Takes `bytes` from the pool, growing what it holds from the device when it must. */
static int pool_take(struct sim_pool *pool, uint64_t bytes)
{
    struct sim_device *d = &rt.devices[pool->device];
    pthread_mutex_lock(&rt.lock);
    uint64_t used = pool->used + bytes;
    uint64_t grow = used > pool->reserved ? used - pool->reserved : 0;
    int fits = d->memory_used + grow <= d->memory_total &&
               (!pool->max_size || pool->reserved + grow <= pool->max_size);
    if (fits) {
        d->memory_used += grow;
        pool->reserved += grow;
        pool->used = used;
        if (pool->reserved > pool->reserved_high)
            pool->reserved_high = pool->reserved;
        if (pool->used > pool->used_high)
            pool->used_high = pool->used;
    }
    pthread_mutex_unlock(&rt.lock);
    return fits;
}

/* Freed pool memory stays reserved until the pool is trimmed or synchronized. */
static void pool_give_back(struct sim_pool *pool, uint64_t bytes)
{
    pthread_mutex_lock(&rt.lock);
    pool->used -= bytes < pool->used ? bytes : pool->used;
    pthread_mutex_unlock(&rt.lock);
}

/* Gives the device what a pool holds beyond max(in use, keep) (rt.lock held). */
static void pool_shrink_locked(struct sim_pool *pool, uint64_t keep)
{
    uint64_t floor = pool->used > keep ? pool->used : keep;
    if (pool->reserved > floor) {
        rt.devices[pool->device].memory_used -= pool->reserved - floor;
        pool->reserved = floor;
    }
}

/* At a synchronization: each pool of the device lets go of what it holds
 * beyond its release threshold, as CUDA's allocator does. */
void pools_release(int device)
{
    pthread_mutex_lock(&rt.lock);
    for (struct sim_pool *p = rt.pools; p; p = p->next)
        if (p->device == device)
            pool_shrink_locked(p, p->release_threshold);
    pthread_mutex_unlock(&rt.lock);
}

static cudaError_t malloc_async(void **ptr, size_t size, struct sim_pool *pool, cudaStream_t stream)
{
    struct sim_stream *s = resolve_stream(stream);
    if (!s)
        return cudaErrorInvalidResourceHandle;
    if (!ptr)
        return cudaErrorInvalidValue;
    if (size == 0) {
        *ptr = NULL;
        return cudaSuccess;
    }
    if (s->capture) /* becomes a graph alloc node */
        return capture_mem_alloc(s, ptr, size, pool->device);
    if (!pool_take(pool, size))
        return cudaErrorMemoryAllocation;
    void *p = device_bytes(size);
    if (!p) {
        pool_give_back(pool, size);
        return cudaErrorMemoryAllocation;
    }
    struct allocation *a = track(p, size, pool->device, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0);
    a->pool = pool;
    *ptr = p;
    emit_memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                p, size, pool->device, s->id, pool);
    return cudaSuccess;
}

EXPORT cudaError_t cudaMallocAsync(void **ptr, size_t size, cudaStream_t stream)
{
    APIP(cudaMallocAsync, v11020, ptr, size, stream);
    struct sim_stream *s = resolve_stream(stream);
    if (!s)
        RETURN(cudaErrorInvalidResourceHandle);
    RETURN(malloc_async(ptr, size, current_pool(s->ctx->device), stream));
}

EXPORT cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t pool,
                                           cudaStream_t stream)
{
    APIP(cudaMallocFromPoolAsync, v11020, ptr, size, pool, stream);
    if (!pool_known((struct sim_pool *)pool))
        RETURN(cudaErrorInvalidValue);
    RETURN(malloc_async(ptr, size, (struct sim_pool *)pool, stream));
}

/* Stream-ordered free: the memory goes back to its pool (a device allocation
 * made by cudaMalloc is freed outright). */
EXPORT cudaError_t cudaFreeAsync(void *ptr, cudaStream_t stream)
{
    APIP(cudaFreeAsync, v11020, ptr, stream);
    struct sim_stream *s = resolve_stream(stream);
    if (!s)
        RETURN(cudaErrorInvalidResourceHandle);
    if (!ptr)
        RETURN(cudaSuccess);
    if (s->capture)
        RETURN(capture_mem_free(s, ptr));
    pthread_mutex_lock(&rt.lock);
    struct allocation *a = find_locked(ptr);
    int freeable = a && a->base == (uintptr_t)ptr && !a->is_static &&
                   a->kind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    if (freeable && a->graph) {
        pthread_mutex_unlock(&rt.lock);
        if (!a->live)
            RETURN(cudaErrorInvalidValue);
        graph_memory_free_live(a, s->id);
        RETURN(cudaSuccess);
    }
    if (freeable)
        unlink_locked(ptr);
    pthread_mutex_unlock(&rt.lock);
    if (!freeable)
        RETURN(cudaErrorInvalidValue);
    if (a->pool)
        pool_give_back(a->pool, a->size);
    else
        unreserve(a->device, a->size);
    emit_memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, a->kind, ptr, a->size, a->device,
                s->id, a->pool);
    free(ptr);
    free(a);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaMemPoolCreate(cudaMemPool_t *pool, const struct cudaMemPoolProps *props)
{
    APIP(cudaMemPoolCreate, v11020, pool, props);
    if (!pool || !props || props->allocType != cudaMemAllocationTypePinned ||
        props->location.type != cudaMemLocationTypeDevice)
        RETURN(cudaErrorInvalidValue);
    if (!valid_device(props->location.id))
        RETURN(cudaErrorInvalidDevice);
    context_of(props->location.id);
    *pool = (cudaMemPool_t)pool_new(props->location.id, 0, props->maxSize);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool)
{
    APIP(cudaMemPoolDestroy, v11020, pool);
    struct sim_pool *p = (struct sim_pool *)pool;
    if (!pool_known(p) || p->is_default)
        RETURN(cudaErrorInvalidValue);
    pthread_mutex_lock(&rt.lock);
    for (struct sim_pool **pp = &rt.pools; *pp; pp = &(*pp)->next) {
        if (*pp == p) {
            *pp = p->next;
            break;
        }
    }
    struct sim_device *d = &rt.devices[p->device];
    if (d->current_pool == p)
        d->current_pool = d->default_pool;
    pool_shrink_locked(p, 0);
    pthread_mutex_unlock(&rt.lock);
    emit_pool(CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED, p, 0);
    /* the struct stays: allocations still in use point at it */
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t min_bytes_to_keep)
{
    APIP(cudaMemPoolTrimTo, v11020, pool, min_bytes_to_keep);
    struct sim_pool *p = (struct sim_pool *)pool;
    if (!pool_known(p))
        RETURN(cudaErrorInvalidValue);
    pthread_mutex_lock(&rt.lock);
    pool_shrink_locked(p, min_bytes_to_keep);
    pthread_mutex_unlock(&rt.lock);
    emit_pool(CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED, p, min_bytes_to_keep);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr attribute,
                                           void *value)
{
    APIP(cudaMemPoolSetAttribute, v11020, pool, attribute, value);
    struct sim_pool *p = (struct sim_pool *)pool;
    if (!pool_known(p) || !value)
        RETURN(cudaErrorInvalidValue);
    cudaError_t rc = cudaSuccess;
    pthread_mutex_lock(&rt.lock);
    switch (attribute) {
    case cudaMemPoolReuseFollowEventDependencies:
    case cudaMemPoolReuseAllowOpportunistic:
    case cudaMemPoolReuseAllowInternalDependencies:
        p->reuse[attribute - 1] = *(const int *)value != 0;
        break;
    case cudaMemPoolAttrReleaseThreshold:
        p->release_threshold = *(const uint64_t *)value;
        break;
    case cudaMemPoolAttrReservedMemHigh: /* watermarks can only be reset, to zero */
    case cudaMemPoolAttrUsedMemHigh:
        if (*(const uint64_t *)value != 0)
            rc = cudaErrorInvalidValue;
        else if (attribute == cudaMemPoolAttrReservedMemHigh)
            p->reserved_high = p->reserved;
        else
            p->used_high = p->used;
        break;
    default:
        rc = cudaErrorInvalidValue;
    }
    pthread_mutex_unlock(&rt.lock);
    RETURN(rc);
}

EXPORT cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr attribute,
                                           void *value)
{
    APIP(cudaMemPoolGetAttribute, v11020, pool, attribute, value);
    struct sim_pool *p = (struct sim_pool *)pool;
    if (!pool_known(p) || !value)
        RETURN(cudaErrorInvalidValue);
    cudaError_t rc = cudaSuccess;
    pthread_mutex_lock(&rt.lock);
    switch (attribute) {
    case cudaMemPoolReuseFollowEventDependencies:
    case cudaMemPoolReuseAllowOpportunistic:
    case cudaMemPoolReuseAllowInternalDependencies:
        *(int *)value = p->reuse[attribute - 1];
        break;
    case cudaMemPoolAttrReleaseThreshold:
        *(uint64_t *)value = p->release_threshold;
        break;
    case cudaMemPoolAttrReservedMemCurrent:
        *(uint64_t *)value = p->reserved;
        break;
    case cudaMemPoolAttrReservedMemHigh:
        *(uint64_t *)value = p->reserved_high;
        break;
    case cudaMemPoolAttrUsedMemCurrent:
        *(uint64_t *)value = p->used;
        break;
    case cudaMemPoolAttrUsedMemHigh:
        *(uint64_t *)value = p->used_high;
        break;
    default:
        rc = cudaErrorInvalidValue;
    }
    pthread_mutex_unlock(&rt.lock);
    RETURN(rc);
}

EXPORT cudaError_t cudaMemPoolSetAccess(cudaMemPool_t pool, const struct cudaMemAccessDesc *list,
                                        size_t count)
{
    APIP(cudaMemPoolSetAccess, v11020, pool, list, count);
    struct sim_pool *p = (struct sim_pool *)pool;
    if (!pool_known(p) || (count && !list))
        RETURN(cudaErrorInvalidValue);
    for (size_t i = 0; i < count; i++) {
        if (list[i].location.type != cudaMemLocationTypeDevice)
            RETURN(cudaErrorInvalidValue);
        if (!valid_device(list[i].location.id))
            RETURN(cudaErrorInvalidDevice);
        if (list[i].location.id == p->device && list[i].flags != cudaMemAccessFlagsProtReadWrite)
            RETURN(cudaErrorInvalidDevice); /* the pool's own device keeps its access */
    }
    pthread_mutex_lock(&rt.lock);
    for (size_t i = 0; i < count; i++) {
        uint32_t bit = 1u << list[i].location.id;
        p->access =
            list[i].flags == cudaMemAccessFlagsProtNone ? p->access & ~bit : p->access | bit;
    }
    pthread_mutex_unlock(&rt.lock);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaMemPoolGetAccess(enum cudaMemAccessFlags *flags, cudaMemPool_t pool,
                                        struct cudaMemLocation *location)
{
    APIP(cudaMemPoolGetAccess, v11020, flags, pool, location);
    struct sim_pool *p = (struct sim_pool *)pool;
    if (!pool_known(p) || !flags || !location || location->type != cudaMemLocationTypeDevice)
        RETURN(cudaErrorInvalidValue);
    if (!valid_device(location->id))
        RETURN(cudaErrorInvalidDevice);
    *flags = (p->access >> location->id) & 1 ? cudaMemAccessFlagsProtReadWrite
                                             : cudaMemAccessFlagsProtNone;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *pool, int device)
{
    APIP(cudaDeviceGetDefaultMemPool, v11020, pool, device);
    if (!pool)
        RETURN(cudaErrorInvalidValue);
    if (!valid_device(device))
        RETURN(cudaErrorInvalidDevice);
    *pool = (cudaMemPool_t)default_pool(device);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaDeviceGetMemPool(cudaMemPool_t *pool, int device)
{
    APIP(cudaDeviceGetMemPool, v11020, pool, device);
    if (!pool)
        RETURN(cudaErrorInvalidValue);
    if (!valid_device(device))
        RETURN(cudaErrorInvalidDevice);
    *pool = (cudaMemPool_t)current_pool(device);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t pool)
{
    APIP(cudaDeviceSetMemPool, v11020, device, pool);
    if (!valid_device(device))
        RETURN(cudaErrorInvalidDevice);
    struct sim_pool *p = (struct sim_pool *)pool;
    if (!pool_known(p) || p->device != device)
        RETURN(cudaErrorInvalidValue);
    default_pool(device);
    pthread_mutex_lock(&rt.lock);
    rt.devices[device].current_pool = p;
    pthread_mutex_unlock(&rt.lock);
    RETURN(cudaSuccess);
}

/* ---- graph memory: the addresses of alloc nodes
 * -------------------------------------------------- */

/* An alloc node's address, fixed when the node is made; allocated while
 * its graph has run the alloc node and not yet a free of it. */
void *graph_memory_reserve(size_t bytes, int device)
{
    void *p = device_bytes(bytes ? bytes : 1);
    if (!p)
        return NULL;
    struct allocation *a = track(p, bytes, device, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0);
    pthread_mutex_lock(&rt.lock);
    a->graph = 1;
    a->live = 0;
    pthread_mutex_unlock(&rt.lock);
    return p;
}

/* A launch allocates (live = 1) or frees (live = 0) a graph allocation: in
 * the order of the API calls, as the program sees it (the records follow
 * when the nodes run). */
void graph_memory_mark(void *address, int live)
{
    pthread_mutex_lock(&rt.lock);
    struct allocation *a = find_locked(address);
    if (a && a->graph && a->live != live) {
        struct sim_device *d = &rt.devices[a->device];
        if (live) {
            d->memory_used += a->size;
            d->graph_used += a->size;
            d->graph_reserved += a->size;
            if (d->graph_used > d->graph_used_high)
                d->graph_used_high = d->graph_used;
            if (d->graph_reserved > d->graph_reserved_high)
                d->graph_reserved_high = d->graph_reserved;
        } else {
            d->memory_used -= a->size;
            d->graph_used -= a->size;
            d->graph_reserved -= a->size;
        }
        a->live = (uint8_t)live;
    }
    pthread_mutex_unlock(&rt.lock);
}

/* An alloc or free node of the launch of `op` on `s` runs at `timestamp`. */
void graph_memory_record(CUpti_ActivityMemoryOperationType type, void *address,
                         const struct sim_op *op, struct sim_stream *s, uint64_t timestamp)
{
    pthread_mutex_lock(&rt.lock);
    struct allocation *a = find_locked(address);
    int graph = a && a->graph;
    size_t size = graph ? a->size : 0;
    int device = graph ? a->device : 0;
    pthread_mutex_unlock(&rt.lock);
    if (graph)
        emit_memory_at(type, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, address, size, device, s->id,
                       op->correlation, timestamp, NULL);
}

static int graph_memory_release_locked(struct allocation *a)
{
    if (!a || !a->graph || !a->live)
        return 0;
    a->live = 0;
    struct sim_device *d = &rt.devices[a->device];
    d->memory_used -= a->size;
    d->graph_used -= a->size;
    d->graph_reserved -= a->size;
    return 1;
}

/* A graph's allocation freed by cudaFree or cudaFreeAsync. */
static void graph_memory_free_live(struct allocation *a, uint32_t stream)
{
    pthread_mutex_lock(&rt.lock);
    int released = graph_memory_release_locked(a);
    pthread_mutex_unlock(&rt.lock);
    if (released)
        emit_memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                    (void *)a->base, a->size, a->device, stream, NULL);
}

EXPORT cudaError_t cudaDeviceGraphMemTrim(int device)
{
    APIP(cudaDeviceGraphMemTrim, v11040, device);
    if (!valid_device(device))
        RETURN(cudaErrorInvalidDevice);
    RETURN(cudaSuccess); /* graph memory is returned as soon as it is freed */
}

EXPORT cudaError_t cudaDeviceGetGraphMemAttribute(int device, enum cudaGraphMemAttributeType attr,
                                                  void *value)
{
    APIP(cudaDeviceGetGraphMemAttribute, v11040, device, attr, value);
    if (!valid_device(device))
        RETURN(cudaErrorInvalidDevice);
    if (!value)
        RETURN(cudaErrorInvalidValue);
    struct sim_device *d = &rt.devices[device];
    cudaError_t rc = cudaSuccess;
    pthread_mutex_lock(&rt.lock);
    switch (attr) {
    case cudaGraphMemAttrUsedMemCurrent:
        *(uint64_t *)value = d->graph_used;
        break;
    case cudaGraphMemAttrUsedMemHigh:
        *(uint64_t *)value = d->graph_used_high;
        break;
    case cudaGraphMemAttrReservedMemCurrent:
        *(uint64_t *)value = d->graph_reserved;
        break;
    case cudaGraphMemAttrReservedMemHigh:
        *(uint64_t *)value = d->graph_reserved_high;
        break;
    default:
        rc = cudaErrorInvalidValue;
    }
    pthread_mutex_unlock(&rt.lock);
    RETURN(rc);
}

EXPORT cudaError_t cudaDeviceSetGraphMemAttribute(int device, enum cudaGraphMemAttributeType attr,
                                                  void *value)
{
    APIP(cudaDeviceSetGraphMemAttribute, v11040, device, attr, value);
    if (!valid_device(device))
        RETURN(cudaErrorInvalidDevice);
    if (!value || *(const uint64_t *)value != 0 ||
        (attr != cudaGraphMemAttrUsedMemHigh && attr != cudaGraphMemAttrReservedMemHigh))
        RETURN(cudaErrorInvalidValue);
    struct sim_device *d = &rt.devices[device];
    pthread_mutex_lock(&rt.lock);
    if (attr == cudaGraphMemAttrUsedMemHigh)
        d->graph_used_high = d->graph_used;
    else
        d->graph_reserved_high = d->graph_reserved;
    pthread_mutex_unlock(&rt.lock);
    RETURN(cudaSuccess);
}

/* A context reset: the device's allocations, pools and state are gone
 * (the program's registered memory stays the program's). */
void memory_reset_device(int device)
{
    struct sim_device *d = &rt.devices[device];
    pthread_mutex_lock(&rt.lock);
    for (struct allocation **pp = &rt.allocations; *pp;) {
        struct allocation *a = *pp;
        if (a->device == device && !a->registered && !a->is_static) {
            *pp = a->next;
            free((void *)a->base);
            free(a);
        } else {
            pp = &a->next;
        }
    }
    for (struct sim_pool *p = rt.pools; p; p = p->next) {
        if (p->device == device) {
            p->reserved = p->used = p->reserved_high = p->used_high = 0;
            p->release_threshold = 0;
        }
    }
    d->memory_used = 0;
    d->current_pool = d->default_pool;
    d->graph_used = d->graph_used_high = d->graph_reserved = d->graph_reserved_high = 0;
    d->flags = 0;
    d->limits_set = 0;
    d->peers = 0;
    d->cache_config = cudaFuncCachePreferNone;
    pthread_mutex_unlock(&rt.lock);
}

/* ---- __device__ and __managed__ variables
 * --------------------------------------------------------- */

struct symbol {
    const void *host; /* what the program names it by */
    void *device; /* its storage */
    size_t size;
    struct symbol *next;
};
static struct symbol *symbols;

static void add_symbol(const void *host, void *device, size_t size)
{
    struct symbol *s = calloc(1, sizeof *s);
    s->host = host;
    s->device = device;
    s->size = size;
    pthread_mutex_lock(&rt.lock);
    s->next = symbols;
    symbols = s;
    pthread_mutex_unlock(&rt.lock);
}

static struct symbol *find_symbol(const void *host)
{
    pthread_mutex_lock(&rt.lock);
    struct symbol *s = symbols;
    while (s && s->host != host)
        s = s->next;
    pthread_mutex_unlock(&rt.lock);
    return s;
}

/* A __device__ or __constant__ variable: its own device storage, starting
 * with the value of the program's host copy (both come from one initializer). */
EXPORT void __cudaRegisterVar(void **handle, char *host_var, char *device_address,
                              const char *device_name, int ext, size_t size, int constant,
                              int global)
{
    (void)handle;
    (void)device_address;
    (void)device_name;
    (void)ext;
    (void)constant;
    (void)global;
    ensure_init();
    void *storage = device_bytes(size ? size : 1);
    if (!storage)
        return;
    memcpy(storage, host_var, size);
    struct allocation *a = track(storage, size, 0, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0);
    a->is_static = 1;
    add_symbol(host_var, storage, size);
}

/* A __managed__ variable: the program reaches it through the pointer at
 * `host_var_ptr`, which gets zeroed managed storage (its initializer is in the
 * device code, which simppu does not run). */
EXPORT void __cudaRegisterManagedVar(void **handle, void **host_var_ptr, char *device_address,
                                     const char *device_name, int ext, size_t size, int constant,
                                     int global)
{
    (void)handle;
    (void)device_address;
    (void)device_name;
    (void)ext;
    (void)constant;
    (void)global;
    ensure_init();
    void *storage = calloc(1, size ? size : 1);
    if (!storage)
        return;
    struct allocation *a = track(storage, size, 0, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED, 0);
    a->is_static = 1;
    *host_var_ptr = storage;
    add_symbol(host_var_ptr, storage, size);
}

EXPORT cudaError_t cudaGetSymbolAddress(void **address, const void *symbol)
{
    APIP(cudaGetSymbolAddress, v3020, address, symbol);
    if (!address)
        RETURN(cudaErrorInvalidValue);
    struct symbol *s = find_symbol(symbol);
    if (!s)
        RETURN(cudaErrorInvalidSymbol);
    *address = s->device;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaGetSymbolSize(size_t *size, const void *symbol)
{
    APIP(cudaGetSymbolSize, v3020, size, symbol);
    if (!size)
        RETURN(cudaErrorInvalidValue);
    struct symbol *s = find_symbol(symbol);
    if (!s)
        RETURN(cudaErrorInvalidSymbol);
    *size = s->size;
    RETURN(cudaSuccess);
}

/* ---- copies
 * ---------------------------------------------------------------------------------------- */

static int device_like(uint8_t kind)
{
    return kind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE || kind == CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
}

static uint8_t copy_kind_of(uint8_t src, uint8_t dst)
{
    int src_array = src == CUPTI_ACTIVITY_MEMORY_KIND_ARRAY,
        dst_array = dst == CUPTI_ACTIVITY_MEMORY_KIND_ARRAY;
    if (src_array && dst_array)
        return CUPTI_ACTIVITY_MEMCPY_KIND_ATOA;
    if (src_array)
        return device_like(dst) ? CUPTI_ACTIVITY_MEMCPY_KIND_ATOD : CUPTI_ACTIVITY_MEMCPY_KIND_ATOH;
    if (dst_array)
        return device_like(src) ? CUPTI_ACTIVITY_MEMCPY_KIND_DTOA : CUPTI_ACTIVITY_MEMCPY_KIND_HTOA;
    if (device_like(src) && device_like(dst))
        return CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
    if (device_like(dst))
        return CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    if (device_like(src))
        return CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    return CUPTI_ACTIVITY_MEMCPY_KIND_HTOH;
}

static struct region region_of(void *base, size_t pitch, size_t rows, size_t width, size_t height,
                               size_t depth)
{
    struct region r = {(char *)base, pitch, pitch * rows, width, height, depth};
    return r;
}

cudaError_t plan_copy(struct copy_plan *p, struct region dst, struct region src,
                      enum cudaMemcpyKind kind)
{
    memset(p, 0, sizeof *p);
    if ((int)kind < 0 || kind > cudaMemcpyDefault)
        return cudaErrorInvalidMemcpyDirection;
    p->bytes = (uint64_t)src.width * src.height * src.depth;
    if (p->bytes && (!dst.base || !src.base))
        return cudaErrorInvalidValue;
    if ((src.height > 1 || src.depth > 1) && (src.width > src.pitch || dst.width > dst.pitch))
        return cudaErrorInvalidPitchValue;
    p->dst = dst;
    p->src = src;
    p->src_kind = memory_kind_of(src.base, &p->src_device);
    p->dst_kind = memory_kind_of(dst.base, &p->dst_device);
    p->copy_kind = copy_kind_of(p->src_kind, p->dst_kind);
    if (p->src_device >= 0 && p->dst_device >= 0 && p->src_device != p->dst_device &&
        p->src_kind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE &&
        p->dst_kind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE)
        p->copy_kind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
    return cudaSuccess;
}

/* Device memory is host memory: the bytes really move. */
void run_copy(const struct copy_plan *p)
{
    if (!p->bytes)
        return;
    for (size_t z = 0; z < p->src.depth; z++)
        for (size_t y = 0; y < p->src.height; y++)
            memmove(p->dst.base + z * p->dst.slice + y * p->dst.pitch,
                    p->src.base + z * p->src.slice + y * p->src.pitch, p->src.width);
}

cudaError_t submit_copy(const struct copy_plan *p, struct sim_stream *s, int async)
{
    if (!s)
        return cudaErrorInvalidResourceHandle;
    if (s->capture) { /* a memcpy node: it moves the bytes when it runs */
        struct sim_node *n = capture_node(s, CU_GRAPH_NODE_TYPE_MEMCPY);
        if (!n)
            return cudaErrorStreamCaptureInvalidated;
        n->copy = *p;
        return cudaSuccess;
    }
    run_copy(p);
    struct sim_op *op = op_new(OP_MEMCPY);
    op->bytes = p->bytes;
    op->copy_kind = p->copy_kind;
    op->src_kind = p->src_kind;
    op->dst_kind = p->dst_kind;
    op->src_device = p->src_device;
    op->dst_device = p->dst_device;
    op->is_async = (uint8_t)async;
    uint64_t seq = enqueue(s, op);
    if (!async)
        host_wait(s, seq);
    return cudaSuccess;
}

static cudaError_t copy_1d(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                           struct sim_stream *s, int async)
{
    struct copy_plan p;
    cudaError_t rc = plan_copy(&p, region_of(dst, count, 1, count, 1, 1),
                               region_of((void *)src, count, 1, count, 1, 1), kind);
    return rc != cudaSuccess ? rc : submit_copy(&p, s, async);
}

static struct sim_stream *legacy_stream(void)
{
    ensure_init();
    return context_of(current_device)->legacy;
}

EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    APIP(cudaMemcpy, v3020, dst, src, count, kind);
    RETURN(copy_1d(dst, src, count, kind, legacy_stream(), 0));
}

EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
                                   enum cudaMemcpyKind kind, cudaStream_t stream)
{
    APIP(cudaMemcpyAsync, v3020, dst, src, count, kind, stream);
    RETURN(copy_1d(dst, src, count, kind, resolve_stream(stream), 1));
}

/* Peer copies name their devices; the pointers must be device memory there. */
static cudaError_t copy_peer(void *dst, int dst_device, const void *src, int src_device,
                             size_t count, struct sim_stream *s, int async)
{
    int found_src, found_dst;
    if (!valid_device(dst_device) || !valid_device(src_device))
        return cudaErrorInvalidDevice;
    if (memory_kind_of(src, &found_src) != CUPTI_ACTIVITY_MEMORY_KIND_DEVICE ||
        memory_kind_of(dst, &found_dst) != CUPTI_ACTIVITY_MEMORY_KIND_DEVICE ||
        found_src != src_device || found_dst != dst_device)
        return cudaErrorInvalidValue;
    return copy_1d(dst, src, count, cudaMemcpyDeviceToDevice, s, async);
}

EXPORT cudaError_t cudaMemcpyPeer(void *dst, int dst_device, const void *src, int src_device,
                                  size_t count)
{
    APIP(cudaMemcpyPeer, v4000, dst, dst_device, src, src_device, count);
    RETURN(copy_peer(dst, dst_device, src, src_device, count, legacy_stream(), 0));
}

EXPORT cudaError_t cudaMemcpyPeerAsync(void *dst, int dst_device, const void *src, int src_device,
                                       size_t count, cudaStream_t stream)
{
    APIP(cudaMemcpyPeerAsync, v4000, dst, dst_device, src, src_device, count, stream);
    RETURN(copy_peer(dst, dst_device, src, src_device, count, resolve_stream(stream), 1));
}

static cudaError_t copy_2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                           size_t height, enum cudaMemcpyKind kind, struct sim_stream *s, int async)
{
    if (width > dpitch || width > spitch)
        return cudaErrorInvalidPitchValue;
    struct copy_plan p;
    cudaError_t rc = plan_copy(&p, region_of(dst, dpitch, height, width, height, 1),
                               region_of((void *)src, spitch, height, width, height, 1), kind);
    return rc != cudaSuccess ? rc : submit_copy(&p, s, async);
}

EXPORT cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch,
                                size_t width, size_t height, enum cudaMemcpyKind kind)
{
    APIP(cudaMemcpy2D, v3020, dst, dpitch, src, spitch, width, height, kind);
    RETURN(copy_2d(dst, dpitch, src, spitch, width, height, kind, legacy_stream(), 0));
}

EXPORT cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch,
                                     size_t width, size_t height, enum cudaMemcpyKind kind,
                                     cudaStream_t stream)
{
    APIP(cudaMemcpy2DAsync, v3020, dst, dpitch, src, spitch, width, height, kind, stream);
    RETURN(copy_2d(dst, dpitch, src, spitch, width, height, kind, resolve_stream(stream), 1));
}

/* One side of a 3D copy: a CUDA array (position and extent in its elements)
 * or a pitched pointer (x in bytes, the extent in the array's elements when
 * the other side is an array, else in bytes). */
static cudaError_t copy_side(cudaArray_const_t array, const struct cudaPitchedPtr *ptr,
                             const struct cudaPos *pos, struct cudaExtent extent, size_t element,
                             struct region *r)
{
    size_t height = extent.height ? extent.height : 1, depth = extent.depth ? extent.depth : 1;
    if (array)
        return array_region(array, pos->x, pos->y, pos->z, extent.width, height, depth, r);
    if (!ptr->ptr)
        return cudaErrorInvalidValue;
    size_t slice = ptr->pitch * ptr->ysize;
    r->base = (char *)ptr->ptr + pos->z * slice + pos->y * ptr->pitch + pos->x;
    r->pitch = ptr->pitch;
    r->slice = slice;
    r->width = extent.width * element;
    r->height = height;
    r->depth = depth;
    return cudaSuccess;
}

cudaError_t plan_copy_3d(struct copy_plan *p, const struct cudaMemcpy3DParms *parms)
{
    if (!parms)
        return cudaErrorInvalidValue;
    size_t element = 1;
    if (parms->srcArray || parms->dstArray) {
        element = array_element(parms->srcArray ? parms->srcArray : parms->dstArray);
        if (!element)
            return cudaErrorInvalidResourceHandle;
    }
    struct region src, dst;
    cudaError_t rc =
        copy_side(parms->srcArray, &parms->srcPtr, &parms->srcPos, parms->extent, element, &src);
    if (rc == cudaSuccess)
        rc = copy_side(parms->dstArray, &parms->dstPtr, &parms->dstPos, parms->extent, element,
                       &dst);
    return rc != cudaSuccess ? rc : plan_copy(p, dst, src, parms->kind);
}

EXPORT cudaError_t cudaMemcpy3D(const struct cudaMemcpy3DParms *parms)
{
    APIP(cudaMemcpy3D, v3020, parms);
    struct copy_plan p;
    cudaError_t rc = plan_copy_3d(&p, parms);
    RETURN(rc != cudaSuccess ? rc : submit_copy(&p, legacy_stream(), 0));
}

EXPORT cudaError_t cudaMemcpy3DAsync(const struct cudaMemcpy3DParms *parms, cudaStream_t stream)
{
    APIP(cudaMemcpy3DAsync, v3020, parms, stream);
    struct copy_plan p;
    cudaError_t rc = plan_copy_3d(&p, parms);
    RETURN(rc != cudaSuccess ? rc : submit_copy(&p, resolve_stream(stream), 1));
}

static cudaError_t copy_3d_peer(const struct cudaMemcpy3DPeerParms *parms, struct sim_stream *s,
                                int async)
{
    if (!parms)
        return cudaErrorInvalidValue;
    if (!valid_device(parms->srcDevice) || !valid_device(parms->dstDevice))
        return cudaErrorInvalidDevice;
    struct cudaMemcpy3DParms same = {0};
    same.srcArray = parms->srcArray;
    same.srcPos = parms->srcPos;
    same.srcPtr = parms->srcPtr;
    same.dstArray = parms->dstArray;
    same.dstPos = parms->dstPos;
    same.dstPtr = parms->dstPtr;
    same.extent = parms->extent;
    same.kind = cudaMemcpyDeviceToDevice;
    struct copy_plan p;
    cudaError_t rc = plan_copy_3d(&p, &same);
    return rc != cudaSuccess ? rc : submit_copy(&p, s, async);
}

EXPORT cudaError_t cudaMemcpy3DPeer(const struct cudaMemcpy3DPeerParms *parms)
{
    APIP(cudaMemcpy3DPeer, v4000, parms);
    RETURN(copy_3d_peer(parms, legacy_stream(), 0));
}

EXPORT cudaError_t cudaMemcpy3DPeerAsync(const struct cudaMemcpy3DPeerParms *parms,
                                         cudaStream_t stream)
{
    APIP(cudaMemcpy3DPeerAsync, v4000, parms, stream);
    RETURN(copy_3d_peer(parms, resolve_stream(stream), 1));
}

cudaError_t symbol_address(const void *symbol, size_t offset, size_t count, char **at)
{
    struct symbol *sym = find_symbol(symbol);
    if (!sym)
        return cudaErrorInvalidSymbol;
    if (offset > sym->size || count > sym->size - offset)
        return cudaErrorInvalidValue;
    *at = (char *)sym->device + offset;
    return cudaSuccess;
}

static cudaError_t copy_symbol(const void *symbol, size_t offset, void *other, size_t count,
                               int to_symbol, enum cudaMemcpyKind kind, struct sim_stream *s,
                               int async)
{
    struct symbol *sym = find_symbol(symbol);
    if (!sym)
        return cudaErrorInvalidSymbol;
    if (offset > sym->size || count > sym->size - offset)
        return cudaErrorInvalidValue;
    char *at = (char *)sym->device + offset;
    return to_symbol ? copy_1d(at, other, count, kind, s, async)
                     : copy_1d(other, at, count, kind, s, async);
}

EXPORT cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count,
                                      size_t offset, enum cudaMemcpyKind kind)
{
    APIP(cudaMemcpyToSymbol, v3020, symbol, src, count, offset, kind);
    RETURN(copy_symbol(symbol, offset, (void *)src, count, 1, kind, legacy_stream(), 0));
}

EXPORT cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset,
                                        enum cudaMemcpyKind kind)
{
    APIP(cudaMemcpyFromSymbol, v3020, dst, symbol, count, offset, kind);
    RETURN(copy_symbol(symbol, offset, dst, count, 0, kind, legacy_stream(), 0));
}

EXPORT cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count,
                                           size_t offset, enum cudaMemcpyKind kind,
                                           cudaStream_t stream)
{
    APIP(cudaMemcpyToSymbolAsync, v3020, symbol, src, count, offset, kind, stream);
    RETURN(copy_symbol(symbol, offset, (void *)src, count, 1, kind, resolve_stream(stream), 1));
}

EXPORT cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t count,
                                             size_t offset, enum cudaMemcpyKind kind,
                                             cudaStream_t stream)
{
    APIP(cudaMemcpyFromSymbolAsync, v3020, dst, symbol, count, offset, kind, stream);
    RETURN(copy_symbol(symbol, offset, dst, count, 0, kind, resolve_stream(stream), 1));
}

/* ---- memsets
 * ----------------------------------------------------------------------------------------- */

cudaError_t plan_set(struct set_plan *p, struct region dst, uint32_t value, unsigned element_size)
{
    memset(p, 0, sizeof *p);
    if (element_size != 1 && element_size != 2 && element_size != 4)
        return cudaErrorInvalidValue;
    if ((dst.height > 1 || dst.depth > 1) && dst.width * element_size > dst.pitch)
        return cudaErrorInvalidPitchValue;
    int device;
    p->memory_kind = memory_kind_of(dst.base, &device);
    if (p->memory_kind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE)
        return cudaErrorInvalidValue;
    p->dst = dst;
    p->value = value;
    p->element_size = element_size;
    p->bytes = (uint64_t)dst.width * element_size * dst.height * dst.depth;
    return cudaSuccess;
}

void run_set(const struct set_plan *p)
{
    for (size_t z = 0; z < p->dst.depth; z++) {
        for (size_t y = 0; y < p->dst.height; y++) {
            char *row = p->dst.base + z * p->dst.slice + y * p->dst.pitch;
            if (p->element_size == 1) {
                memset(row, (int)(p->value & 0xff), p->dst.width);
                continue;
            }
            for (size_t x = 0; x < p->dst.width; x++)
                memcpy(row + x * p->element_size, &p->value, p->element_size); /* little-endian */
        }
    }
}

static cudaError_t submit_set(const struct set_plan *p, struct sim_stream *s, int async)
{
    if (!s)
        return cudaErrorInvalidResourceHandle;
    if (s->capture) {
        struct sim_node *n = capture_node(s, CU_GRAPH_NODE_TYPE_MEMSET);
        if (!n)
            return cudaErrorStreamCaptureInvalidated;
        n->set = *p;
        return cudaSuccess;
    }
    run_set(p);
    struct sim_op *op = op_new(OP_MEMSET);
    op->bytes = p->bytes;
    op->memset_value = p->value;
    op->memory_kind = p->memory_kind;
    op->is_async = (uint8_t)async;
    uint64_t seq = enqueue(s, op);
    if (!async)
        host_wait(s, seq);
    return cudaSuccess;
}

static cudaError_t set_3d(void *dst, size_t pitch, size_t rows, int value, size_t width,
                          size_t height, size_t depth, struct sim_stream *s, int async)
{
    struct set_plan p;
    cudaError_t rc =
        plan_set(&p, region_of(dst, pitch, rows, width, height, depth), (uint8_t)value, 1);
    return rc != cudaSuccess ? rc : submit_set(&p, s, async);
}

EXPORT cudaError_t cudaMemset(void *dst, int value, size_t count)
{
    APIP(cudaMemset, v3020, dst, value, count);
    RETURN(set_3d(dst, count, 1, value, count, 1, 1, legacy_stream(), 0));
}

EXPORT cudaError_t cudaMemsetAsync(void *dst, int value, size_t count, cudaStream_t stream)
{
    APIP(cudaMemsetAsync, v3020, dst, value, count, stream);
    RETURN(set_3d(dst, count, 1, value, count, 1, 1, resolve_stream(stream), 1));
}

EXPORT cudaError_t cudaMemset2D(void *dst, size_t pitch, int value, size_t width, size_t height)
{
    APIP(cudaMemset2D, v3020, dst, pitch, value, width, height);
    RETURN(set_3d(dst, pitch, height, value, width, height, 1, legacy_stream(), 0));
}

EXPORT cudaError_t cudaMemset2DAsync(void *dst, size_t pitch, int value, size_t width,
                                     size_t height, cudaStream_t stream)
{
    APIP(cudaMemset2DAsync, v3020, dst, pitch, value, width, height, stream);
    RETURN(set_3d(dst, pitch, height, value, width, height, 1, resolve_stream(stream), 1));
}

EXPORT cudaError_t cudaMemset3D(struct cudaPitchedPtr dst, int value, struct cudaExtent extent)
{
    APIP(cudaMemset3D, v3020, dst, value, extent);
    RETURN(set_3d(dst.ptr, dst.pitch, dst.ysize, value, extent.width, extent.height, extent.depth,
                  legacy_stream(), 0));
}

EXPORT cudaError_t cudaMemset3DAsync(struct cudaPitchedPtr dst, int value, struct cudaExtent extent,
                                     cudaStream_t stream)
{
    APIP(cudaMemset3DAsync, v3020, dst, value, extent, stream);
    RETURN(set_3d(dst.ptr, dst.pitch, dst.ysize, value, extent.width, extent.height, extent.depth,
                  resolve_stream(stream), 1));
}
