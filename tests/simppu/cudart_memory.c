/* simppu libcudart.so.13: allocations, copies and memsets.  Device memory is
 * host memory: copies and memsets really move the bytes. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cudart_internal.h"

/* ---- memory -----------------------------------------------------------------------------------
 */

static void track(void *p, size_t size, int device)
{
    struct allocation *a = malloc(sizeof *a);
    a->base = (uintptr_t)p;
    a->size = size;
    a->device = device;
    pthread_mutex_lock(&rt.lock);
    a->next = rt.allocations;
    rt.allocations = a;
    pthread_mutex_unlock(&rt.lock);
}

/* Removes the allocation at `p`; its device (-1 pinned), or -2 when unknown. */
static int untrack(void *p, size_t *size)
{
    int device = -2;
    pthread_mutex_lock(&rt.lock);
    for (struct allocation **pp = &rt.allocations; *pp; pp = &(*pp)->next) {
        if ((*pp)->base == (uintptr_t)p) {
            struct allocation *a = *pp;
            device = a->device;
            *size = a->size;
            *pp = a->next;
            free(a);
            break;
        }
    }
    pthread_mutex_unlock(&rt.lock);
    return device;
}

/* What `p` points into: CUPTI memory kind and device. */
static uint8_t memory_kind_of(const void *p, int *device)
{
    uint8_t kind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    *device = -1;
    pthread_mutex_lock(&rt.lock);
    for (struct allocation *a = rt.allocations; a; a = a->next) {
        if ((uintptr_t)p >= a->base && (uintptr_t)p < a->base + a->size) {
            kind = a->device >= 0 ? CUPTI_ACTIVITY_MEMORY_KIND_DEVICE
                                  : CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
            *device = a->device;
            break;
        }
    }
    pthread_mutex_unlock(&rt.lock);
    return kind;
}

static void emit_memory(CUpti_ActivityMemoryOperationType op, CUpti_ActivityMemoryKind kind,
                        const void *address, size_t bytes, int device)
{
    if (!wants(CUPTI_ACTIVITY_KIND_MEMORY2))
        return;
    CUpti_ActivityMemory4 r;
    memset(&r, 0, sizeof r);
    r.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    r.memoryOperationType = op;
    r.memoryKind = kind;
    r.correlationId = current_correlation;
    r.address = (uint64_t)(uintptr_t)address;
    r.bytes = bytes;
    r.timestamp = ts(simppu_now_ns());
    r.processId = (uint32_t)getpid();
    r.deviceId = device >= 0 ? (uint32_t)device : 0;
    struct sim_context *ctx = device >= 0 ? rt.devices[device].ctx : NULL;
    r.contextId = ctx ? ctx->id : 0;
    emit(&r, sizeof r);
}

EXPORT cudaError_t cudaMalloc(void **ptr, size_t size)
{
    struct cudaMalloc_v3020_params_st params = {ptr, size};
    API(cudaMalloc, v3020, &params);
    if (!ptr)
        RETURN(cudaErrorInvalidValue);
    struct sim_device *d = &rt.devices[current_device];
    context_of(current_device);
    pthread_mutex_lock(&rt.lock);
    int fits = d->memory_used + size <= d->memory_total;
    if (fits)
        d->memory_used += size;
    pthread_mutex_unlock(&rt.lock);
    void *p = fits ? aligned_alloc(256, (size + 255) & ~(size_t)255) : NULL;
    if (!p) {
        if (fits) {
            pthread_mutex_lock(&rt.lock);
            d->memory_used -= size;
            pthread_mutex_unlock(&rt.lock);
        }
        *ptr = NULL;
        RETURN(cudaErrorMemoryAllocation);
    }
    track(p, size, current_device);
    *ptr = p;
    emit_memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                p, size, current_device);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaFree(void *ptr)
{
    struct cudaFree_v3020_params_st params = {ptr};
    API(cudaFree, v3020, &params);
    if (!ptr)
        RETURN(cudaSuccess);
    size_t size = 0;
    int device = untrack(ptr, &size);
    if (device < 0)
        RETURN(cudaErrorInvalidValue);
    pthread_mutex_lock(&rt.lock);
    rt.devices[device].memory_used -= size;
    pthread_mutex_unlock(&rt.lock);
    emit_memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                ptr, size, device);
    free(ptr);
    RETURN(cudaSuccess);
}

static cudaError_t host_alloc(void **ptr, size_t size)
{
    if (!ptr)
        return cudaErrorInvalidValue;
    void *p = aligned_alloc(4096, (size + 4095) & ~(size_t)4095);
    if (!p)
        return cudaErrorMemoryAllocation;
    track(p, size, -1);
    *ptr = p;
    emit_memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
                p, size, -1);
    return cudaSuccess;
}

EXPORT cudaError_t cudaMallocHost(void **ptr, size_t size)
{
    struct cudaMallocHost_v3020_params_st params = {ptr, size};
    API(cudaMallocHost, v3020, &params);
    RETURN(host_alloc(ptr, size));
}

EXPORT cudaError_t cudaHostAlloc(void **ptr, size_t size, unsigned int flags)
{
    struct cudaHostAlloc_v3020_params_st params = {ptr, size, flags};
    API(cudaHostAlloc, v3020, &params);
    RETURN(host_alloc(ptr, size));
}

EXPORT cudaError_t cudaFreeHost(void *ptr)
{
    struct cudaFreeHost_v3020_params_st params = {ptr};
    API(cudaFreeHost, v3020, &params);
    if (!ptr)
        RETURN(cudaSuccess);
    size_t size = 0;
    if (untrack(ptr, &size) != -1)
        RETURN(cudaErrorInvalidValue);
    emit_memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
                ptr, size, -1);
    free(ptr);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total)
{
    API(cudaMemGetInfo, v3020, NULL);
    if (!free_bytes || !total)
        RETURN(cudaErrorInvalidValue);
    struct sim_device *d = &rt.devices[current_device];
    pthread_mutex_lock(&rt.lock);
    *total = d->memory_total;
    *free_bytes = d->memory_total - d->memory_used;
    pthread_mutex_unlock(&rt.lock);
    RETURN(cudaSuccess);
}

/* ---- copies and memsets ------------------------------------------------------------------------
 */

static uint8_t copy_kind_of(uint8_t src, uint8_t dst)
{
    int src_dev = src == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
        dst_dev = dst == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    if (src_dev && dst_dev)
        return CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
    if (dst_dev)
        return CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    if (src_dev)
        return CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    return CUPTI_ACTIVITY_MEMCPY_KIND_HTOH;
}

static cudaError_t memcpy_common(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                                 struct sim_stream *s, int async)
{
    if (!s)
        return cudaErrorInvalidResourceHandle;
    if ((!dst || !src) && count)
        return cudaErrorInvalidValue;
    if ((int)kind < 0 || kind > cudaMemcpyDefault)
        return cudaErrorInvalidMemcpyDirection;
    int src_device, dst_device;
    uint8_t src_kind = memory_kind_of(src, &src_device);
    uint8_t dst_kind = memory_kind_of(dst, &dst_device);
    uint8_t copy_kind = copy_kind_of(src_kind, dst_kind);
    if (src_device >= 0 && dst_device >= 0 && src_device != dst_device)
        copy_kind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
    if (count)
        memmove(dst, src, count); /* device memory is host memory: the bytes really move */
    if (s->capture) {
        struct sim_node *n = capture_node(s, CU_GRAPH_NODE_TYPE_MEMCPY);
        n->bytes = count;
        n->copy_kind = copy_kind;
        n->src_kind = src_kind;
        n->dst_kind = dst_kind;
        n->src_device = src_device;
        n->dst_device = dst_device;
        return cudaSuccess;
    }
    struct sim_op *op = op_new(OP_MEMCPY);
    op->bytes = count;
    op->copy_kind = copy_kind;
    op->src_kind = src_kind;
    op->dst_kind = dst_kind;
    op->src_device = src_device;
    op->dst_device = dst_device;
    op->is_async = (uint8_t)async;
    uint64_t seq = enqueue(s, op);
    if (!async)
        host_wait(s, seq);
    return cudaSuccess;
}

EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    struct cudaMemcpy_v3020_params_st params = {dst, src, count, kind};
    API(cudaMemcpy, v3020, &params);
    RETURN(memcpy_common(dst, src, count, kind, context_of(current_device)->legacy, 0));
}

EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
                                   enum cudaMemcpyKind kind, cudaStream_t stream)
{
    struct cudaMemcpyAsync_v3020_params_st params = {dst, src, count, kind, stream};
    API(cudaMemcpyAsync, v3020, &params);
    RETURN(memcpy_common(dst, src, count, kind, resolve_stream(stream), 1));
}

/* Peer copies name their devices; the pointers must be device memory there. */
static cudaError_t memcpy_peer(void *dst, int dst_device, const void *src, int src_device,
                               size_t count, struct sim_stream *s, int async)
{
    int found_src, found_dst;
    if (!valid_device(dst_device) || !valid_device(src_device))
        return cudaErrorInvalidDevice;
    if (memory_kind_of(src, &found_src) != CUPTI_ACTIVITY_MEMORY_KIND_DEVICE ||
        memory_kind_of(dst, &found_dst) != CUPTI_ACTIVITY_MEMORY_KIND_DEVICE ||
        found_src != src_device || found_dst != dst_device)
        return cudaErrorInvalidValue;
    return memcpy_common(dst, src, count, cudaMemcpyDeviceToDevice, s, async);
}

EXPORT cudaError_t cudaMemcpyPeer(void *dst, int dst_device, const void *src, int src_device,
                                  size_t count)
{
    API(cudaMemcpyPeer, v4000, NULL);
    RETURN(memcpy_peer(dst, dst_device, src, src_device, count, context_of(current_device)->legacy,
                       0));
}

EXPORT cudaError_t cudaMemcpyPeerAsync(void *dst, int dst_device, const void *src, int src_device,
                                       size_t count, cudaStream_t stream)
{
    API(cudaMemcpyPeerAsync, v4000, NULL);
    RETURN(memcpy_peer(dst, dst_device, src, src_device, count, resolve_stream(stream), 1));
}

EXPORT cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch,
                                size_t width, size_t height, enum cudaMemcpyKind kind)
{
    API(cudaMemcpy2D, v3020, NULL);
    if (width > dpitch || width > spitch)
        RETURN(cudaErrorInvalidValue);
    for (size_t row = 1; row < height; row++)
        memmove((char *)dst + row * dpitch, (const char *)src + row * spitch, width);
    RETURN(
        memcpy_common(dst, src, height ? width : 0, kind, context_of(current_device)->legacy, 0));
}

static cudaError_t memset_common(void *dst, int value, size_t count, struct sim_stream *s,
                                 int async)
{
    if (!s)
        return cudaErrorInvalidResourceHandle;
    int device;
    if (memory_kind_of(dst, &device) != CUPTI_ACTIVITY_MEMORY_KIND_DEVICE)
        return cudaErrorInvalidValue;
    memset(dst, value, count);
    if (s->capture) {
        struct sim_node *n = capture_node(s, CU_GRAPH_NODE_TYPE_MEMSET);
        n->bytes = count;
        n->memset_value = (uint32_t)value;
        return cudaSuccess;
    }
    struct sim_op *op = op_new(OP_MEMSET);
    op->bytes = count;
    op->memset_value = (uint32_t)value;
    op->is_async = (uint8_t)async;
    uint64_t seq = enqueue(s, op);
    if (!async)
        host_wait(s, seq);
    return cudaSuccess;
}

EXPORT cudaError_t cudaMemset(void *dst, int value, size_t count)
{
    API(cudaMemset, v3020, NULL);
    RETURN(memset_common(dst, value, count, context_of(current_device)->legacy, 0));
}

EXPORT cudaError_t cudaMemsetAsync(void *dst, int value, size_t count, cudaStream_t stream)
{
    API(cudaMemsetAsync, v3020, NULL);
    RETURN(memset_common(dst, value, count, resolve_stream(stream), 1));
}
