/* simppu's libnvjpeg.so.13: a subset of nvJPEG (declared in
 * common/nvjpeg_api.h from NVIDIA's documentation) whose decode runs as
 * device work on the caller's stream through simppu's runtime, as nvJPEG's
 * GPU backend does: the bitstream copied to the device (cudaMemcpyAsync)
 * and the image written (cudaMemsetAsync, its bytes standing in for the
 * decode kernels).  An image is a baseline JPEG header: SOI, then a SOF0
 * segment that gives its size; anything else is NVJPEG_STATUS_BAD_JPEG. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "nvjpeg_api.h"

#define EXPORT __attribute__((visibility("default")))

struct nvjpegHandle {
    uint32_t magic;
    void *scratch; /* device copy of the bitstream */
    size_t scratch_size;
};
struct nvjpegJpegState {
    uint32_t magic;
};
#define HANDLE_MAGIC 0x4a504547u
#define STATE_MAGIC 0x4a535441u

EXPORT nvjpegStatus_t nvjpegGetProperty(nvjpegLibraryPropertyType_t type, int *value)
{
    if (!value || type < 0 || type > 2)
        return NVJPEG_STATUS_INVALID_PARAMETER;
    static const int version[] = {13, 0, 0};
    *value = version[type];
    return NVJPEG_STATUS_SUCCESS;
}

EXPORT nvjpegStatus_t nvjpegCreateSimple(nvjpegHandle_t *handle)
{
    if (!handle)
        return NVJPEG_STATUS_INVALID_PARAMETER;
    struct nvjpegHandle *h = calloc(1, sizeof *h);
    if (!h)
        return NVJPEG_STATUS_ALLOCATOR_FAILURE;
    h->magic = HANDLE_MAGIC;
    *handle = h;
    return NVJPEG_STATUS_SUCCESS;
}

EXPORT nvjpegStatus_t nvjpegCreateEx(nvjpegBackend_t backend, nvjpegDevAllocator_t *dev_allocator,
                                     nvjpegPinnedAllocator_t *pinned_allocator, unsigned int flags,
                                     nvjpegHandle_t *handle)
{
    (void)backend;
    (void)dev_allocator;
    (void)pinned_allocator;
    (void)flags;
    return nvjpegCreateSimple(handle);
}

EXPORT nvjpegStatus_t nvjpegDestroy(nvjpegHandle_t handle)
{
    if (!handle || handle->magic != HANDLE_MAGIC)
        return NVJPEG_STATUS_INVALID_PARAMETER;
    if (handle->scratch)
        cudaFree(handle->scratch);
    handle->magic = 0;
    free(handle);
    return NVJPEG_STATUS_SUCCESS;
}

EXPORT nvjpegStatus_t nvjpegJpegStateCreate(nvjpegHandle_t handle, nvjpegJpegState_t *state)
{
    if (!handle || handle->magic != HANDLE_MAGIC || !state)
        return NVJPEG_STATUS_INVALID_PARAMETER;
    struct nvjpegJpegState *s = calloc(1, sizeof *s);
    if (!s)
        return NVJPEG_STATUS_ALLOCATOR_FAILURE;
    s->magic = STATE_MAGIC;
    *state = s;
    return NVJPEG_STATUS_SUCCESS;
}

EXPORT nvjpegStatus_t nvjpegJpegStateDestroy(nvjpegJpegState_t state)
{
    if (!state || state->magic != STATE_MAGIC)
        return NVJPEG_STATUS_INVALID_PARAMETER;
    state->magic = 0;
    free(state);
    return NVJPEG_STATUS_SUCCESS;
}

/* The size and components of a baseline JPEG; -1: not one. */
static int parse(const unsigned char *data, size_t length, int *width, int *height, int *components)
{
    if (!data || length < 4 || data[0] != 0xff || data[1] != 0xd8)
        return -1;
    size_t at = 2;
    while (at + 4 <= length && data[at] == 0xff) {
        unsigned marker = data[at + 1];
        size_t size = (size_t)data[at + 2] << 8 | data[at + 3];
        if (size < 2 || at + 2 + size > length)
            return -1;
        if (marker == 0xc0 && size >= 8) {
            *height = data[at + 5] << 8 | data[at + 6];
            *width = data[at + 7] << 8 | data[at + 8];
            *components = data[at + 9];
            return *width > 0 && *height > 0 && *components > 0 ? 0 : -1;
        }
        at += 2 + size;
    }
    return -1;
}

EXPORT nvjpegStatus_t nvjpegGetImageInfo(nvjpegHandle_t handle, const unsigned char *data,
                                         size_t length, int *components,
                                         nvjpegChromaSubsampling_t *subsampling, int *widths,
                                         int *heights)
{
    int w, h, c;
    if (!handle || handle->magic != HANDLE_MAGIC || !components || !widths || !heights)
        return NVJPEG_STATUS_INVALID_PARAMETER;
    if (parse(data, length, &w, &h, &c) != 0)
        return NVJPEG_STATUS_BAD_JPEG;
    *components = c;
    if (subsampling)
        *subsampling = c == 1 ? 6 : 0; /* GRAY, 444 */
    for (int i = 0; i < c && i < NVJPEG_MAX_COMPONENT; i++) {
        widths[i] = w;
        heights[i] = h;
    }
    return NVJPEG_STATUS_SUCCESS;
}

EXPORT nvjpegStatus_t nvjpegDecode(nvjpegHandle_t handle, nvjpegJpegState_t state,
                                   const unsigned char *data, size_t length,
                                   nvjpegOutputFormat_t output_format, nvjpegImage_t *destination,
                                   nvjpegCudaStream_t stream)
{
    int w, h, c;
    if (!handle || handle->magic != HANDLE_MAGIC || !state || state->magic != STATE_MAGIC ||
        !destination || !destination->channel[0])
        return NVJPEG_STATUS_INVALID_PARAMETER;
    if (parse(data, length, &w, &h, &c) != 0)
        return NVJPEG_STATUS_BAD_JPEG;
    if (handle->scratch_size < length) {
        if (handle->scratch)
            cudaFree(handle->scratch);
        handle->scratch = NULL;
        handle->scratch_size = 0;
        if (cudaMalloc(&handle->scratch, length) != cudaSuccess)
            return NVJPEG_STATUS_ALLOCATOR_FAILURE;
        handle->scratch_size = length;
    }
    size_t row = (size_t)w * (output_format == NVJPEG_OUTPUT_RGBI ? 3u : 1u);
    if (destination->pitch[0] < row)
        return NVJPEG_STATUS_INVALID_PARAMETER;
    if (cudaMemcpyAsync(handle->scratch, data, length, cudaMemcpyHostToDevice, stream) !=
            cudaSuccess ||
        cudaMemsetAsync(destination->channel[0], 0x80, destination->pitch[0] * (size_t)h, stream) !=
            cudaSuccess)
        return NVJPEG_STATUS_EXECUTION_FAILED;
    return NVJPEG_STATUS_SUCCESS;
}
