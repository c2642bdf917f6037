/* libcublas.so.13 stand-in (a test fixture): the subset of cuBLAS that the
 * tests call, against the toolkit's cublas_v2.h, launching simulated kernels
 * with cuBLAS's kernel names on the handle's stream.  cublasGemmEx calls
 * cublasLtMatmul as the real library does (a nested call for the tracer).
 * Every other routine that takes the handle first is generated at build time
 * (gen_cublas_rest.py: one kernel named after the routine). */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <stdlib.h>
#include <string.h>

#include "aclib.h"
#include "cublas_internal.h"

#define HANDLE_MAGIC 0x63626c73u

struct cublas_handle {
    uint32_t magic;
    cudaStream_t stream;
    cublasMath_t math_mode;
    cublasPointerMode_t pointer_mode;
    void *workspace;
    size_t workspace_bytes;
    cublasLtHandle_t lt;
};

static struct cublas_handle *get(cublasHandle_t handle)
{
    struct cublas_handle *h = (struct cublas_handle *)handle;
    return h && h->magic == HANDLE_MAGIC ? h : NULL;
}

EXPORT cublasStatus_t cublasCreate_v2(cublasHandle_t *handle)
{
    if (!handle)
        return CUBLAS_STATUS_INVALID_VALUE;
    struct cublas_handle *h = calloc(1, sizeof *h);
    if (!h)
        return CUBLAS_STATUS_ALLOC_FAILED;
    cublasStatus_t s = cublasLtCreate(&h->lt);
    if (s != CUBLAS_STATUS_SUCCESS) {
        free(h);
        return s;
    }
    h->magic = HANDLE_MAGIC;
    *handle = (cublasHandle_t)h;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasDestroy_v2(cublasHandle_t handle)
{
    struct cublas_handle *h = get(handle);
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    cublasLtDestroy(h->lt);
    h->magic = 0;
    free(h);
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasGetVersion_v2(cublasHandle_t handle, int *version)
{
    if (!get(handle))
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!version)
        return CUBLAS_STATUS_INVALID_VALUE;
    *version = CUBLAS_VERSION;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream)
{
    struct cublas_handle *h = get(handle);
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    h->stream = stream;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasGetStream_v2(cublasHandle_t handle, cudaStream_t *stream)
{
    struct cublas_handle *h = get(handle);
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!stream)
        return CUBLAS_STATUS_INVALID_VALUE;
    *stream = h->stream;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void *workspace, size_t bytes)
{
    struct cublas_handle *h = get(handle);
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    h->workspace = workspace;
    h->workspace_bytes = bytes;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode)
{
    struct cublas_handle *h = get(handle);
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    h->math_mode = mode;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t *mode)
{
    struct cublas_handle *h = get(handle);
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!mode)
        return CUBLAS_STATUS_INVALID_VALUE;
    *mode = h->math_mode;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t mode)
{
    struct cublas_handle *h = get(handle);
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    h->pointer_mode = mode;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT const char *cublasGetStatusName(cublasStatus_t status)
{
    switch (status) {
    case CUBLAS_STATUS_SUCCESS:
        return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED:
        return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_INVALID_VALUE:
        return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_EXECUTION_FAILED:
        return "CUBLAS_STATUS_EXECUTION_FAILED";
    default:
        return "CUBLAS_STATUS_UNKNOWN";
    }
}

EXPORT const char *cublasGetStatusString(cublasStatus_t status)
{
    return cublasGetStatusName(status);
}

static cublasStatus_t gemm(cublasHandle_t handle, const char *kernel, int64_t m, int64_t n,
                           int64_t k, int64_t batch)
{
    struct cublas_handle *h = get(handle);
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (m < 0 || n < 0 || k < 0 || batch < 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (aclib_launch(kernel, aclib_gemm_ns(m, n, k, batch), h->stream) != 0)
        return CUBLAS_STATUS_EXECUTION_FAILED;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublas_stand_in_routine(cublasHandle_t handle, const char *kernel)
{
    struct cublas_handle *h = get(handle);
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (aclib_launch(kernel, 3000, h->stream) != 0)
        return CUBLAS_STATUS_EXECUTION_FAILED;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                     cublasOperation_t transb, int m, int n, int k,
                                     const float *alpha, const float *A, int lda, const float *B,
                                     int ldb, const float *beta, float *C, int ldc)
{
    (void)transa, (void)transb, (void)alpha, (void)A, (void)lda, (void)B, (void)ldb, (void)beta;
    (void)C, (void)ldc;
    return gemm(handle, "ampere_sgemm_128x64_nn", m, n, k, 1);
}

EXPORT cublasStatus_t cublasDgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                     cublasOperation_t transb, int m, int n, int k,
                                     const double *alpha, const double *A, int lda, const double *B,
                                     int ldb, const double *beta, double *C, int ldc)
{
    (void)transa, (void)transb, (void)alpha, (void)A, (void)lda, (void)B, (void)ldb, (void)beta;
    (void)C, (void)ldc;
    return gemm(handle, "ampere_dgemm_64x64_nn", m, n, 2 * (int64_t)k, 1);
}

EXPORT cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                                cublasOperation_t transb, int m, int n, int k,
                                                const float *alpha, const float *A, int lda,
                                                long long int strideA, const float *B, int ldb,
                                                long long int strideB, const float *beta, float *C,
                                                int ldc, long long int strideC, int batchCount)
{
    (void)transa, (void)transb, (void)alpha, (void)A, (void)lda, (void)strideA, (void)B;
    (void)ldb, (void)strideB, (void)beta, (void)C, (void)ldc, (void)strideC;
    return gemm(handle, "ampere_sgemm_128x128_batched_nn", m, n, k, batchCount);
}

EXPORT cublasStatus_t cublasSaxpy_v2(cublasHandle_t handle, int n, const float *alpha,
                                     const float *x, int incx, float *y, int incy)
{
    (void)alpha, (void)x, (void)incx, (void)y, (void)incy;
    struct cublas_handle *h = get(handle);
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (aclib_launch("axpy_kernel_val<float, float, 0>", 1000 + (uint64_t)(n > 0 ? n : 0) / 100,
                     h->stream) != 0)
        return CUBLAS_STATUS_EXECUTION_FAILED;
    return CUBLAS_STATUS_SUCCESS;
}

/* Through cuBLASLt, as cuBLAS 12+ does for most GEMMs. */
EXPORT cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                                   cublasOperation_t transb, int m, int n, int k, const void *alpha,
                                   const void *A, cudaDataType Atype, int lda, const void *B,
                                   cudaDataType Btype, int ldb, const void *beta, void *C,
                                   cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                                   cublasGemmAlgo_t algo)
{
    (void)transa, (void)transb, (void)algo, (void)lda, (void)ldb, (void)ldc;
    struct cublas_handle *h = get(handle);
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    cublasLtMatmulDesc_t desc = NULL;
    cublasLtMatrixLayout_t a = NULL, b = NULL, c = NULL;
    cublasStatus_t s = cublasLtMatmulDescCreate(&desc, computeType, Ctype);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatrixLayoutCreate(&a, Atype, (uint64_t)m, (uint64_t)k, m);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatrixLayoutCreate(&b, Btype, (uint64_t)k, (uint64_t)n, k);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatrixLayoutCreate(&c, Ctype, (uint64_t)m, (uint64_t)n, m);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatmul(h->lt, desc, alpha, A, a, B, b, beta, C, c, C, c, NULL, h->workspace,
                           h->workspace_bytes, h->stream);
    cublasLtMatrixLayoutDestroy(c);
    cublasLtMatrixLayoutDestroy(b);
    cublasLtMatrixLayoutDestroy(a);
    cublasLtMatmulDescDestroy(desc);
    return s;
}
