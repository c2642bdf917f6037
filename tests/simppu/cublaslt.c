/* libcublasLt.so.13 stand-in (a test fixture): the subset of cuBLASLt that
 * the tests and the stand-in cuBLAS call, against the toolkit's cublasLt.h.
 * cublasLtMatmul launches a simulated GEMM kernel on the stream it is given. */
#include <cublasLt.h>
#include <stdlib.h>
#include <string.h>

#include "aclib.h"

#define LT_MAGIC 0x4c74684cu

struct lt_handle {
    uint32_t magic;
};

EXPORT cublasStatus_t cublasLtCreate(cublasLtHandle_t *handle)
{
    if (!handle)
        return CUBLAS_STATUS_INVALID_VALUE;
    struct lt_handle *h = calloc(1, sizeof *h);
    if (!h)
        return CUBLAS_STATUS_ALLOC_FAILED;
    h->magic = LT_MAGIC;
    *handle = (cublasLtHandle_t)h;
    return CUBLAS_STATUS_SUCCESS;
}

static int valid(cublasLtHandle_t handle)
{
    return handle && ((struct lt_handle *)handle)->magic == LT_MAGIC;
}

EXPORT cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle)
{
    if (!valid(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    ((struct lt_handle *)handle)->magic = 0;
    free(handle);
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT size_t cublasLtGetVersion(void)
{
    return CUBLAS_VERSION;
}

EXPORT cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *desc,
                                               cublasComputeType_t compute_type,
                                               cudaDataType_t scale_type)
{
    if (!desc)
        return CUBLAS_STATUS_INVALID_VALUE;
    cublasLtMatmulDesc_t d = calloc(1, sizeof *d);
    if (!d)
        return CUBLAS_STATUS_ALLOC_FAILED;
    d->data[0] = (uint64_t)compute_type;
    d->data[1] = (uint64_t)scale_type;
    *desc = d;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc)
{
    free(desc);
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *layout, cudaDataType type,
                                                 uint64_t rows, uint64_t cols, int64_t ld)
{
    if (!layout)
        return CUBLAS_STATUS_INVALID_VALUE;
    cublasLtMatrixLayout_t l = calloc(1, sizeof *l);
    if (!l)
        return CUBLAS_STATUS_ALLOC_FAILED;
    l->data[0] = (uint64_t)type;
    l->data[1] = rows;
    l->data[2] = cols;
    l->data[3] = (uint64_t)ld;
    *layout = l;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout)
{
    free(layout);
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                     const void *alpha, const void *A, cublasLtMatrixLayout_t a,
                                     const void *B, cublasLtMatrixLayout_t b, const void *beta,
                                     const void *C, cublasLtMatrixLayout_t c, void *D,
                                     cublasLtMatrixLayout_t d, const cublasLtMatmulAlgo_t *algo,
                                     void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    (void)alpha, (void)A, (void)B, (void)beta, (void)C, (void)c, (void)D, (void)algo;
    (void)workspace, (void)workspace_bytes;
    if (!valid(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!desc || !a || !b || !d)
        return CUBLAS_STATUS_INVALID_VALUE;
    uint64_t m = d->data[1], n = d->data[2], k = a->data[2];
    if (aclib_launch("sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32_warpgroupsize1x1x1_"
                     "execute_segment_k_off_kernel__5x_cublas",
                     aclib_gemm_ns((int64_t)m, (int64_t)n, (int64_t)k, 1), stream) != 0)
        return CUBLAS_STATUS_EXECUTION_FAILED;
    return CUBLAS_STATUS_SUCCESS;
}
