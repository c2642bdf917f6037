/* simppu libcudart.so.13: CUDA arrays, channel descriptors, texture and
 * surface objects.
 *
 * An array is device memory laid out row after row (no tiling), so copies to
 * and from it are copies of rows: CUPTI sees them as HtoA, AtoH, DtoA, AtoD
 * and AtoA copies, and the array's allocation as the ARRAY memory kind.
 * Texture and surface objects are handles that remember what they were made
 * of: no kernel samples them here. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "cudart_internal.h"

struct sim_array {
    struct cudaChannelFormatDesc desc;
    size_t element; /* bytes per element */
    size_t width, height, depth; /* elements, rows, slices (1 where the array has none) */
    struct cudaExtent extent; /* as it was asked for */
    unsigned flags;
    char *data;
    int device;
    struct sim_array *next;
};

static struct sim_array *arrays;

static struct sim_array *array_of(cudaArray_const_t handle)
{
    pthread_mutex_lock(&rt.lock);
    struct sim_array *a = arrays;
    while (a && a != (const struct sim_array *)handle)
        a = a->next;
    pthread_mutex_unlock(&rt.lock);
    return a;
}

EXPORT struct cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w,
                                                          enum cudaChannelFormatKind f)
{
    APIP(cudaCreateChannelDesc, v3020, x, y, z, w, f);
    struct cudaChannelFormatDesc d = {x, y, z, w, f};
    api_exit(&call_, cudaSuccess);
    return d;
}

/* Bytes per element; 0 when the descriptor makes no sense. */
static size_t element_size(const struct cudaChannelFormatDesc *d)
{
    int bits[] = {d->x, d->y, d->z, d->w};
    size_t total = 0;
    for (int i = 0; i < 4; i++) {
        if (bits[i] < 0 || bits[i] % 8 || bits[i] > 32)
            return 0;
        total += (size_t)bits[i] / 8;
    }
    return total;
}

static cudaError_t array_new(cudaArray_t *out, const struct cudaChannelFormatDesc *desc,
                             struct cudaExtent extent, unsigned flags)
{
    if (!out || !desc)
        return cudaErrorInvalidValue;
    size_t element = element_size(desc);
    if (!element || !extent.width || (extent.depth && !extent.height) ||
        ((flags & cudaArrayCubemap) && (extent.depth != 6 || extent.width != extent.height)))
        return cudaErrorInvalidValue;
    struct sim_array *a = calloc(1, sizeof *a);
    a->desc = *desc;
    a->element = element;
    a->extent = extent;
    a->width = extent.width;
    a->height = extent.height ? extent.height : 1;
    a->depth = extent.depth ? extent.depth : 1;
    a->flags = flags;
    a->device = current_device;
    size_t bytes = a->width * a->height * a->depth * element;
    struct sim_device *d = &rt.devices[current_device];
    pthread_mutex_lock(&rt.lock);
    int fits = d->memory_used + bytes <= d->memory_total;
    if (fits)
        d->memory_used += bytes;
    pthread_mutex_unlock(&rt.lock);
    a->data = fits ? aligned_alloc(512, (bytes + 511) & ~(size_t)511) : NULL;
    if (!a->data) {
        if (fits) {
            pthread_mutex_lock(&rt.lock);
            d->memory_used -= bytes;
            pthread_mutex_unlock(&rt.lock);
        }
        free(a);
        return cudaErrorMemoryAllocation;
    }
    memset(a->data, 0, bytes);
    track_array_memory(a->data, bytes, a->device);
    pthread_mutex_lock(&rt.lock);
    a->next = arrays;
    arrays = a;
    pthread_mutex_unlock(&rt.lock);
    emit_memory_at(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION,
                   CUPTI_ACTIVITY_MEMORY_KIND_ARRAY, a->data, bytes, a->device, 0,
                   current_correlation, ts(simppu_now_ns()), NULL);
    *out = (cudaArray_t)a;
    return cudaSuccess;
}

EXPORT cudaError_t cudaMallocArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc,
                                   size_t width, size_t height, unsigned int flags)
{
    APIP(cudaMallocArray, v3020, array, desc, width, height, flags);
    context_of(current_device);
    if (flags & (cudaArrayLayered | cudaArrayCubemap))
        RETURN(cudaErrorInvalidValue);
    RETURN(array_new(array, desc, extent_of(width, height, 0), flags));
}

EXPORT cudaError_t cudaMalloc3DArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc,
                                     struct cudaExtent extent, unsigned int flags)
{
    APIP(cudaMalloc3DArray, v3020, array, desc, extent, flags);
    context_of(current_device);
    RETURN(array_new(array, desc, extent, flags));
}

EXPORT cudaError_t cudaFreeArray(cudaArray_t array)
{
    APIP(cudaFreeArray, v3020, array);
    if (!array)
        RETURN(cudaSuccess);
    pthread_mutex_lock(&rt.lock);
    struct sim_array *a = NULL;
    for (struct sim_array **pp = &arrays; *pp; pp = &(*pp)->next) {
        if (*pp == (struct sim_array *)array) {
            a = *pp;
            *pp = a->next;
            break;
        }
    }
    pthread_mutex_unlock(&rt.lock);
    if (!a)
        RETURN(cudaErrorInvalidResourceHandle);
    size_t bytes = a->width * a->height * a->depth * a->element;
    untrack_array_memory(a->data);
    pthread_mutex_lock(&rt.lock);
    rt.devices[a->device].memory_used -= bytes;
    pthread_mutex_unlock(&rt.lock);
    emit_memory_at(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, CUPTI_ACTIVITY_MEMORY_KIND_ARRAY,
                   a->data, bytes, a->device, 0, current_correlation, ts(simppu_now_ns()), NULL);
    free(a->data);
    free(a);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaArrayGetInfo(struct cudaChannelFormatDesc *desc, struct cudaExtent *extent,
                                    unsigned int *flags, cudaArray_t array)
{
    APIP(cudaArrayGetInfo, v4010, desc, extent, flags, array);
    struct sim_array *a = array_of(array);
    if (!a)
        RETURN(cudaErrorInvalidResourceHandle);
    if (desc)
        *desc = a->desc;
    if (extent)
        *extent = a->extent;
    if (flags)
        *flags = a->flags;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaGetChannelDesc(struct cudaChannelFormatDesc *desc, cudaArray_const_t array)
{
    APIP(cudaGetChannelDesc, v3020, desc, array);
    struct sim_array *a = array_of(array);
    if (!desc)
        RETURN(cudaErrorInvalidValue);
    if (!a)
        RETURN(cudaErrorInvalidResourceHandle);
    *desc = a->desc;
    RETURN(cudaSuccess);
}

cudaError_t array_region(cudaArray_const_t array, size_t x, size_t y, size_t z, size_t width,
                         size_t height, size_t depth, struct region *r)
{
    struct sim_array *a = array_of(array);
    if (!a)
        return cudaErrorInvalidResourceHandle;
    if (x + width > a->width || y + height > a->height || z + depth > a->depth)
        return cudaErrorInvalidValue;
    size_t pitch = a->width * a->element;
    r->pitch = pitch;
    r->slice = pitch * a->height;
    r->base = a->data + z * r->slice + y * pitch + x * a->element;
    r->width = width * a->element;
    r->height = height;
    r->depth = depth;
    return cudaSuccess;
}

size_t array_element(cudaArray_const_t array)
{
    struct sim_array *a = array_of(array);
    return a ? a->element : 0;
}

/* A region of `array` from byte offset (w_offset, h_offset) on, `bytes`
 * long in whole rows or one partial row (the old 1D-style array copies). */
static cudaError_t linear_region(cudaArray_const_t array, size_t w_offset, size_t h_offset,
                                 size_t bytes, struct region *r)
{
    struct sim_array *a = array_of(array);
    if (!a)
        return cudaErrorInvalidResourceHandle;
    size_t pitch = a->width * a->element;
    size_t at = h_offset * pitch + w_offset;
    if (at + bytes > pitch * a->height * a->depth)
        return cudaErrorInvalidValue;
    struct region one = {a->data + at, bytes, bytes, bytes, 1, 1};
    *r = one;
    return cudaSuccess;
}

static struct region linear(const void *p, size_t pitch, size_t width, size_t height)
{
    struct region r = {(char *)p, pitch, pitch * height, width, height, 1};
    return r;
}

static cudaError_t copy(struct region dst, struct region src, enum cudaMemcpyKind kind,
                        cudaStream_t stream, int async)
{
    struct copy_plan p;
    cudaError_t rc = plan_copy(&p, dst, src, kind);
    return rc != cudaSuccess ? rc : submit_copy(&p, resolve_stream(stream), async);
}

EXPORT cudaError_t cudaMemcpyToArray(cudaArray_t dst, size_t w_offset, size_t h_offset,
                                     const void *src, size_t count, enum cudaMemcpyKind kind)
{
    APIP(cudaMemcpyToArray, v3020, dst, w_offset, h_offset, src, count, kind);
    struct region d;
    cudaError_t rc = linear_region(dst, w_offset, h_offset, count, &d);
    RETURN(rc != cudaSuccess ? rc : copy(d, linear(src, count, count, 1), kind, 0, 0));
}

EXPORT cudaError_t cudaMemcpyFromArray(void *dst, cudaArray_const_t src, size_t w_offset,
                                       size_t h_offset, size_t count, enum cudaMemcpyKind kind)
{
    APIP(cudaMemcpyFromArray, v3020, dst, src, w_offset, h_offset, count, kind);
    struct region s;
    cudaError_t rc = linear_region(src, w_offset, h_offset, count, &s);
    RETURN(rc != cudaSuccess ? rc : copy(linear(dst, count, count, 1), s, kind, 0, 0));
}

/* A width x height rectangle of an array at byte column w_offset, row h_offset. */
static cudaError_t rectangle(cudaArray_const_t array, size_t w_offset, size_t h_offset,
                             size_t width, size_t height, struct region *r)
{
    size_t element = array_element(array);
    if (!element)
        return cudaErrorInvalidResourceHandle;
    if (w_offset % element || width % element)
        return cudaErrorInvalidValue;
    return array_region(array, w_offset / element, h_offset, 0, width / element, height, 1, r);
}

static cudaError_t to_array_2d(cudaArray_t dst, size_t w_offset, size_t h_offset, const void *src,
                               size_t spitch, size_t width, size_t height, enum cudaMemcpyKind kind,
                               cudaStream_t stream, int async)
{
    if (width > spitch)
        return cudaErrorInvalidPitchValue;
    struct region d;
    cudaError_t rc = rectangle(dst, w_offset, h_offset, width, height, &d);
    return rc != cudaSuccess ? rc
                             : copy(d, linear(src, spitch, width, height), kind, stream, async);
}

static cudaError_t from_array_2d(void *dst, size_t dpitch, cudaArray_const_t src, size_t w_offset,
                                 size_t h_offset, size_t width, size_t height,
                                 enum cudaMemcpyKind kind, cudaStream_t stream, int async)
{
    if (width > dpitch)
        return cudaErrorInvalidPitchValue;
    struct region s;
    cudaError_t rc = rectangle(src, w_offset, h_offset, width, height, &s);
    return rc != cudaSuccess ? rc
                             : copy(linear(dst, dpitch, width, height), s, kind, stream, async);
}

EXPORT cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t w_offset, size_t h_offset,
                                       const void *src, size_t spitch, size_t width, size_t height,
                                       enum cudaMemcpyKind kind)
{
    APIP(cudaMemcpy2DToArray, v3020, dst, w_offset, h_offset, src, spitch, width, height, kind);
    RETURN(to_array_2d(dst, w_offset, h_offset, src, spitch, width, height, kind, 0, 0));
}

EXPORT cudaError_t cudaMemcpy2DToArrayAsync(cudaArray_t dst, size_t w_offset, size_t h_offset,
                                            const void *src, size_t spitch, size_t width,
                                            size_t height, enum cudaMemcpyKind kind,
                                            cudaStream_t stream)
{
    APIP(cudaMemcpy2DToArrayAsync, v3020, dst, w_offset, h_offset, src, spitch, width, height, kind,
         stream);
    RETURN(to_array_2d(dst, w_offset, h_offset, src, spitch, width, height, kind, stream, 1));
}

EXPORT cudaError_t cudaMemcpy2DFromArray(void *dst, size_t dpitch, cudaArray_const_t src,
                                         size_t w_offset, size_t h_offset, size_t width,
                                         size_t height, enum cudaMemcpyKind kind)
{
    APIP(cudaMemcpy2DFromArray, v3020, dst, dpitch, src, w_offset, h_offset, width, height, kind);
    RETURN(from_array_2d(dst, dpitch, src, w_offset, h_offset, width, height, kind, 0, 0));
}

EXPORT cudaError_t cudaMemcpy2DFromArrayAsync(void *dst, size_t dpitch, cudaArray_const_t src,
                                              size_t w_offset, size_t h_offset, size_t width,
                                              size_t height, enum cudaMemcpyKind kind,
                                              cudaStream_t stream)
{
    APIP(cudaMemcpy2DFromArrayAsync, v3020, dst, dpitch, src, w_offset, h_offset, width, height,
         kind, stream);
    RETURN(from_array_2d(dst, dpitch, src, w_offset, h_offset, width, height, kind, stream, 1));
}

EXPORT cudaError_t cudaMemcpy2DArrayToArray(cudaArray_t dst, size_t w_offset_dst,
                                            size_t h_offset_dst, cudaArray_const_t src,
                                            size_t w_offset_src, size_t h_offset_src, size_t width,
                                            size_t height, enum cudaMemcpyKind kind)
{
    APIP(cudaMemcpy2DArrayToArray, v3020, dst, w_offset_dst, h_offset_dst, src, w_offset_src,
         h_offset_src, width, height, kind);
    struct region d, s;
    cudaError_t rc = rectangle(dst, w_offset_dst, h_offset_dst, width, height, &d);
    if (rc == cudaSuccess)
        rc = rectangle(src, w_offset_src, h_offset_src, width, height, &s);
    RETURN(rc != cudaSuccess ? rc : copy(d, s, kind, 0, 0));
}

/* ---- texture and surface objects --------------------------------------------------------------
 */

struct sim_object {
    unsigned long long handle;
    int surface;
    struct cudaResourceDesc resource;
    struct cudaTextureDesc texture;
    struct cudaResourceViewDesc view;
    int has_view;
    struct sim_object *next;
};

static struct sim_object *objects;
static unsigned long long next_object = 0x1000;

static cudaError_t check_resource(const struct cudaResourceDesc *r)
{
    if (!r)
        return cudaErrorInvalidValue;
    switch (r->resType) {
    case cudaResourceTypeArray:
        return array_of(r->res.array.array) ? cudaSuccess : cudaErrorInvalidResourceHandle;
    case cudaResourceTypeLinear:
    case cudaResourceTypePitch2D:
        return r->res.linear.devPtr ? cudaSuccess : cudaErrorInvalidValue;
    default:
        return cudaErrorInvalidValue; /* mipmapped arrays are not simulated */
    }
}

static unsigned long long object_new(int surface, const struct cudaResourceDesc *resource,
                                     const struct cudaTextureDesc *texture,
                                     const struct cudaResourceViewDesc *view)
{
    struct sim_object *o = calloc(1, sizeof *o);
    o->surface = surface;
    o->resource = *resource;
    if (texture)
        o->texture = *texture;
    if (view) {
        o->view = *view;
        o->has_view = 1;
    }
    pthread_mutex_lock(&rt.lock);
    o->handle = ++next_object;
    o->next = objects;
    objects = o;
    pthread_mutex_unlock(&rt.lock);
    return o->handle;
}

static struct sim_object *object_of(unsigned long long handle, int surface, int unlink)
{
    pthread_mutex_lock(&rt.lock);
    struct sim_object *found = NULL;
    for (struct sim_object **pp = &objects; *pp; pp = &(*pp)->next) {
        if ((*pp)->handle == handle && (*pp)->surface == surface) {
            found = *pp;
            if (unlink)
                *pp = found->next;
            break;
        }
    }
    pthread_mutex_unlock(&rt.lock);
    return found;
}

EXPORT cudaError_t cudaCreateTextureObject(cudaTextureObject_t *object,
                                           const struct cudaResourceDesc *resource,
                                           const struct cudaTextureDesc *texture,
                                           const struct cudaResourceViewDesc *view)
{
    APIP(cudaCreateTextureObject, v5000, object, resource, texture, view);
    if (!object || !texture)
        RETURN(cudaErrorInvalidValue);
    cudaError_t rc = check_resource(resource);
    if (rc != cudaSuccess)
        RETURN(rc);
    *object = object_new(0, resource, texture, view);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaDestroyTextureObject(cudaTextureObject_t object)
{
    APIP(cudaDestroyTextureObject, v5000, object);
    struct sim_object *o = object_of(object, 0, 1);
    if (!o)
        RETURN(object ? cudaErrorInvalidValue : cudaSuccess);
    free(o);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaGetTextureObjectResourceDesc(struct cudaResourceDesc *resource,
                                                    cudaTextureObject_t object)
{
    APIP(cudaGetTextureObjectResourceDesc, v5000, resource, object);
    struct sim_object *o = object_of(object, 0, 0);
    if (!o || !resource)
        RETURN(cudaErrorInvalidValue);
    *resource = o->resource;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaGetTextureObjectTextureDesc(struct cudaTextureDesc *texture,
                                                   cudaTextureObject_t object)
{
    APIP(cudaGetTextureObjectTextureDesc, v5000, texture, object);
    struct sim_object *o = object_of(object, 0, 0);
    if (!o || !texture)
        RETURN(cudaErrorInvalidValue);
    *texture = o->texture;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaCreateSurfaceObject(cudaSurfaceObject_t *object,
                                           const struct cudaResourceDesc *resource)
{
    APIP(cudaCreateSurfaceObject, v5000, object, resource);
    if (!object)
        RETURN(cudaErrorInvalidValue);
    cudaError_t rc = check_resource(resource);
    if (rc != cudaSuccess)
        RETURN(rc);
    if (resource->resType != cudaResourceTypeArray)
        RETURN(cudaErrorInvalidValue); /* surfaces are made of arrays */
    *object = object_new(1, resource, NULL, NULL);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaDestroySurfaceObject(cudaSurfaceObject_t object)
{
    APIP(cudaDestroySurfaceObject, v5000, object);
    struct sim_object *o = object_of(object, 1, 1);
    if (!o)
        RETURN(object ? cudaErrorInvalidValue : cudaSuccess);
    free(o);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaGetSurfaceObjectResourceDesc(struct cudaResourceDesc *resource,
                                                    cudaSurfaceObject_t object)
{
    APIP(cudaGetSurfaceObjectResourceDesc, v5000, resource, object);
    struct sim_object *o = object_of(object, 1, 0);
    if (!o || !resource)
        RETURN(cudaErrorInvalidValue);
    *resource = o->resource;
    RETURN(cudaSuccess);
}
