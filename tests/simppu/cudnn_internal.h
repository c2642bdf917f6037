/* What the cuDNN stand-in (libcudnn.so.9) and its lazily loaded sub-library
 * (libcudnn_graph.so.9) share: the handle's layout. */
#ifndef SIMPPU_CUDNN_INTERNAL_H
#define SIMPPU_CUDNN_INTERNAL_H

#include <cublas_v2.h>
#include <cudnn.h>

#define CUDNN_HANDLE_MAGIC 0x63646e6eu

struct cudnn_handle {
    uint32_t magic;
    cudaStream_t stream;
    cublasHandle_t blas; /* created on the first GEMM convolution */
};

static inline struct cudnn_handle *cudnn_handle_get(cudnnHandle_t handle)
{
    struct cudnn_handle *h = (struct cudnn_handle *)handle;
    return h && h->magic == CUDNN_HANDLE_MAGIC ? h : NULL;
}

#endif
