/* libcudnn_graph.so.9 stand-in (a test fixture): the backend (graph) API,
 * which the stand-in libcudnn.so.9 loads with dlopen on its first backend
 * call and calls through dlsym, as the real cuDNN 9 loads its sub-libraries.
 * An execution plan launches one simulated fused kernel on the handle's
 * stream. */
#include <stdlib.h>
#include <string.h>

#include "aclib.h"
#include "cudnn_internal.h"

#define DESC_MAGIC 0x62646573u

struct backend_desc {
    uint32_t magic;
    cudnnBackendDescriptorType_t type;
    int finalized;
};

static struct backend_desc *desc(cudnnBackendDescriptor_t d)
{
    struct backend_desc *b = (struct backend_desc *)d;
    return b && b->magic == DESC_MAGIC ? b : NULL;
}

EXPORT cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t type,
                                                  cudnnBackendDescriptor_t *descriptor)
{
    if (!descriptor)
        return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    struct backend_desc *b = calloc(1, sizeof *b);
    if (!b)
        return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    b->magic = DESC_MAGIC;
    b->type = type;
    *descriptor = (cudnnBackendDescriptor_t)b;
    return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t descriptor)
{
    struct backend_desc *b = desc(descriptor);
    if (!b)
        return CUDNN_STATUS_BAD_PARAM;
    b->magic = 0;
    free(b);
    return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnBackendInitialize(cudnnBackendDescriptor_t descriptor)
{
    return desc(descriptor) ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_BAD_PARAM;
}

EXPORT cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t descriptor,
                                              cudnnBackendAttributeName_t name,
                                              cudnnBackendAttributeType_t type, int64_t count,
                                              const void *elements)
{
    (void)name, (void)type;
    struct backend_desc *b = desc(descriptor);
    if (!b)
        return CUDNN_STATUS_BAD_PARAM;
    if (b->finalized)
        return CUDNN_STATUS_NOT_SUPPORTED;
    return count < 0 || (count > 0 && !elements) ? CUDNN_STATUS_BAD_PARAM : CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const descriptor,
                                              cudnnBackendAttributeName_t name,
                                              cudnnBackendAttributeType_t type, int64_t requested,
                                              int64_t *count, void *elements)
{
    (void)name, (void)type, (void)requested, (void)elements;
    if (!desc(descriptor))
        return CUDNN_STATUS_BAD_PARAM;
    if (count)
        *count = 0;
    return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t descriptor)
{
    struct backend_desc *b = desc(descriptor);
    if (!b)
        return CUDNN_STATUS_BAD_PARAM;
    b->finalized = 1;
    return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnBackendExecute(cudnnHandle_t handle, cudnnBackendDescriptor_t plan,
                                         cudnnBackendDescriptor_t pack)
{
    struct cudnn_handle *h = cudnn_handle_get(handle);
    if (!h)
        return CUDNN_STATUS_NOT_INITIALIZED;
    struct backend_desc *p = desc(plan), *v = desc(pack);
    if (!p || !v || !p->finalized || !v->finalized)
        return CUDNN_STATUS_BAD_PARAM;
    if (aclib_launch("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x128_"
                     "4x1x1_kernel0_0",
                     40000, h->stream) != 0)
        return CUDNN_STATUS_EXECUTION_FAILED;
    return CUDNN_STATUS_SUCCESS;
}
