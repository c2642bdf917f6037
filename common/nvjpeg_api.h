/* The part of nvJPEG (libnvjpeg.so, CUDA toolkit) asys traces, declared
 * here: this machine's toolkit has no nvjpeg.h.  Types, codes and
 * signatures follow NVIDIA's public nvJPEG documentation (docs.nvidia.com,
 * "nvJPEG API Reference", CUDA 12/13); handles are opaque pointers, enums
 * are passed as int (their C ABI).  Used by the video collector
 * (recorder/inject/video.c) and by simppu's libnvjpeg.so.13. */
#ifndef ASYS_NVJPEG_API_H
#define ASYS_NVJPEG_API_H

#include <stddef.h>

typedef int nvjpegStatus_t;
enum {
    NVJPEG_STATUS_SUCCESS = 0,
    NVJPEG_STATUS_NOT_INITIALIZED = 1,
    NVJPEG_STATUS_INVALID_PARAMETER = 2,
    NVJPEG_STATUS_BAD_JPEG = 3,
    NVJPEG_STATUS_JPEG_NOT_SUPPORTED = 4,
    NVJPEG_STATUS_ALLOCATOR_FAILURE = 5,
    NVJPEG_STATUS_EXECUTION_FAILED = 6,
    NVJPEG_STATUS_ARCH_MISMATCH = 7,
    NVJPEG_STATUS_INTERNAL_ERROR = 8,
    NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED = 9,
    NVJPEG_STATUS_INCOMPLETE_BITSTREAM = 10,
};
typedef int nvjpegBackend_t; /* NVJPEG_BACKEND_DEFAULT 0, HYBRID 1, GPU_HYBRID 2, HARDWARE 3 */
typedef int nvjpegOutputFormat_t; /* NVJPEG_OUTPUT_UNCHANGED 0, YUV 1, Y 2, RGB 3, BGR 4, RGBI 5 */
typedef int nvjpegInputFormat_t; /* NVJPEG_INPUT_RGB 3, BGR 4, RGBI 5, BGRI 6 */
typedef int nvjpegChromaSubsampling_t; /* NVJPEG_CSS_444 0 ... GRAY 6, UNKNOWN -1 */
typedef int nvjpegLibraryPropertyType_t; /* libraryPropertyType: MAJOR 0, MINOR 1, PATCH 2 */
enum { NVJPEG_BACKEND_DEFAULT = 0, NVJPEG_OUTPUT_RGB = 3, NVJPEG_OUTPUT_RGBI = 5 };

#define NVJPEG_MAX_COMPONENT 4
typedef struct {
    unsigned char *channel[NVJPEG_MAX_COMPONENT];
    size_t pitch[NVJPEG_MAX_COMPONENT];
} nvjpegImage_t;

typedef struct {
    int (*dev_malloc)(void **, size_t);
    int (*dev_free)(void *);
} nvjpegDevAllocator_t;
typedef struct {
    int (*pinned_malloc)(void **, size_t, unsigned int);
    int (*pinned_free)(void *);
} nvjpegPinnedAllocator_t;

typedef struct nvjpegHandle *nvjpegHandle_t;
typedef struct nvjpegJpegState *nvjpegJpegState_t;
typedef struct nvjpegJpegDecoder *nvjpegJpegDecoder_t;
typedef struct nvjpegJpegStream *nvjpegJpegStream_t;
typedef struct nvjpegDecodeParams *nvjpegDecodeParams_t;
typedef struct nvjpegBufferPinned *nvjpegBufferPinned_t;
typedef struct nvjpegBufferDevice *nvjpegBufferDevice_t;
typedef struct nvjpegEncoderState *nvjpegEncoderState_t;
typedef struct nvjpegEncoderParams *nvjpegEncoderParams_t;
typedef struct CUstream_st *nvjpegCudaStream_t; /* cudaStream_t */

/* The traced entry points: name, parameter list, argument list, the handle
 * the call acts on (an expression of the arguments, 0: none) and the stream
 * it takes (NULL: none).  X(name, params, args, handle, stream) */
// clang-format off
#define ASYS_NVJPEG_FUNCTIONS(X)                                                                   \
    X(nvjpegGetProperty, (nvjpegLibraryPropertyType_t type, int *value), (type, value), 0, NULL)   \
    X(nvjpegGetCudartProperty, (nvjpegLibraryPropertyType_t type, int *value), (type, value), 0,   \
      NULL)                                                                                        \
    X(nvjpegCreate, (nvjpegBackend_t backend, nvjpegDevAllocator_t *dev_allocator,                 \
                     nvjpegHandle_t *handle), (backend, dev_allocator, handle),                    \
      VIDEO_OUT(handle), NULL)                                                                     \
    X(nvjpegCreateSimple, (nvjpegHandle_t *handle), (handle), VIDEO_OUT(handle), NULL)             \
    X(nvjpegCreateEx, (nvjpegBackend_t backend, nvjpegDevAllocator_t *dev_allocator,               \
                       nvjpegPinnedAllocator_t *pinned_allocator, unsigned int flags,              \
                       nvjpegHandle_t *handle),                                                    \
      (backend, dev_allocator, pinned_allocator, flags, handle), VIDEO_OUT(handle), NULL)          \
    X(nvjpegDestroy, (nvjpegHandle_t handle), (handle), handle, NULL)                              \
    X(nvjpegSetDeviceMemoryPadding, (size_t padding, nvjpegHandle_t handle), (padding, handle),    \
      handle, NULL)                                                                                \
    X(nvjpegSetPinnedMemoryPadding, (size_t padding, nvjpegHandle_t handle), (padding, handle),    \
      handle, NULL)                                                                                \
    X(nvjpegJpegStateCreate, (nvjpegHandle_t handle, nvjpegJpegState_t *state), (handle, state),   \
      handle, NULL)                                                                                \
    X(nvjpegJpegStateDestroy, (nvjpegJpegState_t state), (state), state, NULL)                     \
    X(nvjpegGetImageInfo, (nvjpegHandle_t handle, const unsigned char *data, size_t length,        \
                           int *components, nvjpegChromaSubsampling_t *subsampling, int *widths,   \
                           int *heights),                                                          \
      (handle, data, length, components, subsampling, widths, heights), handle, NULL)              \
    X(nvjpegDecode, (nvjpegHandle_t handle, nvjpegJpegState_t state, const unsigned char *data,    \
                     size_t length, nvjpegOutputFormat_t output_format,                            \
                     nvjpegImage_t *destination, nvjpegCudaStream_t stream),                       \
      (handle, state, data, length, output_format, destination, stream), handle, stream)           \
    X(nvjpegDecodeBatchedInitialize, (nvjpegHandle_t handle, nvjpegJpegState_t state,              \
                                      int batch_size, int max_cpu_threads,                         \
                                      nvjpegOutputFormat_t output_format),                         \
      (handle, state, batch_size, max_cpu_threads, output_format), handle, NULL)                   \
    X(nvjpegDecodeBatched, (nvjpegHandle_t handle, nvjpegJpegState_t state,                        \
                            const unsigned char *const *data, const size_t *lengths,               \
                            nvjpegImage_t *destinations, nvjpegCudaStream_t stream),               \
      (handle, state, data, lengths, destinations, stream), handle, stream)                        \
    X(nvjpegDecoderCreate, (nvjpegHandle_t handle, nvjpegBackend_t backend,                        \
                            nvjpegJpegDecoder_t *decoder), (handle, backend, decoder), handle,     \
      NULL)                                                                                        \
    X(nvjpegDecoderDestroy, (nvjpegJpegDecoder_t decoder), (decoder), decoder, NULL)               \
    X(nvjpegDecoderStateCreate, (nvjpegHandle_t handle, nvjpegJpegDecoder_t decoder,               \
                                 nvjpegJpegState_t *state), (handle, decoder, state), handle,      \
      NULL)                                                                                        \
    X(nvjpegJpegStreamCreate, (nvjpegHandle_t handle, nvjpegJpegStream_t *jpeg_stream),            \
      (handle, jpeg_stream), handle, NULL)                                                         \
    X(nvjpegJpegStreamDestroy, (nvjpegJpegStream_t jpeg_stream), (jpeg_stream), jpeg_stream, NULL) \
    X(nvjpegJpegStreamParse, (nvjpegHandle_t handle, const unsigned char *data, size_t length,     \
                              int save_metadata, int save_stream, nvjpegJpegStream_t jpeg_stream), \
      (handle, data, length, save_metadata, save_stream, jpeg_stream), handle, NULL)               \
    X(nvjpegDecodeParamsCreate, (nvjpegHandle_t handle, nvjpegDecodeParams_t *params),             \
      (handle, params), handle, NULL)                                                              \
    X(nvjpegDecodeParamsDestroy, (nvjpegDecodeParams_t params), (params), params, NULL)            \
    X(nvjpegDecodeParamsSetOutputFormat, (nvjpegDecodeParams_t params,                             \
                                          nvjpegOutputFormat_t output_format),                     \
      (params, output_format), params, NULL)                                                       \
    X(nvjpegDecodeJpegHost, (nvjpegHandle_t handle, nvjpegJpegDecoder_t decoder,                   \
                             nvjpegJpegState_t state, nvjpegDecodeParams_t params,                 \
                             nvjpegJpegStream_t jpeg_stream),                                      \
      (handle, decoder, state, params, jpeg_stream), handle, NULL)                                 \
    X(nvjpegDecodeJpegTransferToDevice, (nvjpegHandle_t handle, nvjpegJpegDecoder_t decoder,       \
                                         nvjpegJpegState_t state, nvjpegJpegStream_t jpeg_stream,  \
                                         nvjpegCudaStream_t stream),                               \
      (handle, decoder, state, jpeg_stream, stream), handle, stream)                               \
    X(nvjpegDecodeJpegDevice, (nvjpegHandle_t handle, nvjpegJpegDecoder_t decoder,                 \
                               nvjpegJpegState_t state, nvjpegImage_t *destination,                \
                               nvjpegCudaStream_t stream),                                         \
      (handle, decoder, state, destination, stream), handle, stream)                               \
    X(nvjpegDecodeJpeg, (nvjpegHandle_t handle, nvjpegJpegDecoder_t decoder,                       \
                         nvjpegJpegState_t state, nvjpegJpegStream_t jpeg_stream,                  \
                         nvjpegImage_t *destination, nvjpegDecodeParams_t params,                  \
                         nvjpegCudaStream_t stream),                                               \
      (handle, decoder, state, jpeg_stream, destination, params, stream), handle, stream)          \
    X(nvjpegBufferPinnedCreate, (nvjpegHandle_t handle, nvjpegPinnedAllocator_t *allocator,        \
                                 nvjpegBufferPinned_t *buffer), (handle, allocator, buffer),       \
      handle, NULL)                                                                                \
    X(nvjpegBufferPinnedDestroy, (nvjpegBufferPinned_t buffer), (buffer), buffer, NULL)            \
    X(nvjpegBufferDeviceCreate, (nvjpegHandle_t handle, nvjpegDevAllocator_t *allocator,           \
                                 nvjpegBufferDevice_t *buffer), (handle, allocator, buffer),       \
      handle, NULL)                                                                                \
    X(nvjpegBufferDeviceDestroy, (nvjpegBufferDevice_t buffer), (buffer), buffer, NULL)            \
    X(nvjpegStateAttachPinnedBuffer, (nvjpegJpegState_t state, nvjpegBufferPinned_t buffer),       \
      (state, buffer), state, NULL)                                                                \
    X(nvjpegStateAttachDeviceBuffer, (nvjpegJpegState_t state, nvjpegBufferDevice_t buffer),       \
      (state, buffer), state, NULL)                                                                \
    X(nvjpegEncoderStateCreate, (nvjpegHandle_t handle, nvjpegEncoderState_t *state,               \
                                 nvjpegCudaStream_t stream), (handle, state, stream), handle,      \
      stream)                                                                                      \
    X(nvjpegEncoderStateDestroy, (nvjpegEncoderState_t state), (state), state, NULL)               \
    X(nvjpegEncoderParamsCreate, (nvjpegHandle_t handle, nvjpegEncoderParams_t *params,            \
                                  nvjpegCudaStream_t stream), (handle, params, stream), handle,    \
      stream)                                                                                      \
    X(nvjpegEncoderParamsDestroy, (nvjpegEncoderParams_t params), (params), params, NULL)          \
    X(nvjpegEncoderParamsSetQuality, (nvjpegEncoderParams_t params, const int quality,             \
                                      nvjpegCudaStream_t stream), (params, quality, stream),       \
      params, stream)                                                                              \
    X(nvjpegEncoderParamsSetSamplingFactors, (nvjpegEncoderParams_t params,                        \
                                              const nvjpegChromaSubsampling_t subsampling,         \
                                              nvjpegCudaStream_t stream),                          \
      (params, subsampling, stream), params, stream)                                               \
    X(nvjpegEncodeYUV, (nvjpegHandle_t handle, nvjpegEncoderState_t state,                         \
                        const nvjpegEncoderParams_t params, const nvjpegImage_t *source,           \
                        nvjpegChromaSubsampling_t subsampling, int width, int height,              \
                        nvjpegCudaStream_t stream),                                                \
      (handle, state, params, source, subsampling, width, height, stream), handle, stream)         \
    X(nvjpegEncodeImage, (nvjpegHandle_t handle, nvjpegEncoderState_t state,                       \
                          const nvjpegEncoderParams_t params, const nvjpegImage_t *source,         \
                          nvjpegInputFormat_t input_format, int width, int height,                 \
                          nvjpegCudaStream_t stream),                                              \
      (handle, state, params, source, input_format, width, height, stream), handle, stream)        \
    X(nvjpegEncodeRetrieveBitstream, (nvjpegHandle_t handle, nvjpegEncoderState_t state,           \
                                      unsigned char *data, size_t *length,                         \
                                      nvjpegCudaStream_t stream),                                  \
      (handle, state, data, length, stream), handle, stream)
// clang-format on

#endif
