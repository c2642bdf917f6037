/* libcudnn.so.9 stand-in (a test fixture): the subset of cuDNN 9 the tests
 * call, against the toolkit's cudnn.h, launching simulated kernels with
 * cuDNN's kernel names on the handle's stream.  Like the real library it is
 * a front that loads a sub-library lazily: the backend (graph) API lives in
 * libcudnn_graph.so.9, loaded with dlopen on first use and called through
 * dlsym on its handle.  A convolution with the GEMM algorithm calls cuBLAS
 * (cublasSgemm_v2 on the handle's own cuBLAS handle): a nested call. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aclib.h"
#include "cudnn_internal.h"

static __thread char last_error[256];

static cudnnStatus_t fail(cudnnStatus_t status, const char *what)
{
    snprintf(last_error, sizeof last_error, "%s", what);
    return status;
}

EXPORT size_t cudnnGetVersion(void)
{
    return CUDNN_VERSION;
}

EXPORT size_t cudnnGetCudartVersion(void)
{
    return CUDART_VERSION;
}

EXPORT const char *cudnnGetErrorString(cudnnStatus_t status)
{
    switch (status) {
    case CUDNN_STATUS_SUCCESS:
        return "CUDNN_STATUS_SUCCESS";
    case CUDNN_STATUS_NOT_INITIALIZED:
        return "CUDNN_STATUS_NOT_INITIALIZED";
    case CUDNN_STATUS_BAD_PARAM:
        return "CUDNN_STATUS_BAD_PARAM";
    case CUDNN_STATUS_BAD_PARAM_NULL_POINTER:
        return "CUDNN_STATUS_BAD_PARAM_NULL_POINTER";
    case CUDNN_STATUS_NOT_SUPPORTED:
        return "CUDNN_STATUS_NOT_SUPPORTED";
    case CUDNN_STATUS_EXECUTION_FAILED:
        return "CUDNN_STATUS_EXECUTION_FAILED";
    default:
        return "CUDNN_STATUS_UNKNOWN";
    }
}

EXPORT void cudnnGetLastErrorString(char *message, size_t max_size)
{
    if (message && max_size) {
        snprintf(message, max_size, "%s", last_error);
        last_error[0] = '\0';
    }
}

EXPORT cudnnStatus_t cudnnCreate(cudnnHandle_t *handle)
{
    if (!handle)
        return fail(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, "cudnnCreate: handle is NULL");
    struct cudnn_handle *h = calloc(1, sizeof *h);
    if (!h)
        return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    h->magic = CUDNN_HANDLE_MAGIC;
    *handle = (cudnnHandle_t)h;
    return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnDestroy(cudnnHandle_t handle)
{
    struct cudnn_handle *h = cudnn_handle_get(handle);
    if (!h)
        return fail(CUDNN_STATUS_NOT_INITIALIZED, "cudnnDestroy: not a handle");
    if (h->blas)
        cublasDestroy_v2(h->blas);
    h->magic = 0;
    free(h);
    return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t stream)
{
    struct cudnn_handle *h = cudnn_handle_get(handle);
    if (!h)
        return fail(CUDNN_STATUS_NOT_INITIALIZED, "cudnnSetStream: not a handle");
    h->stream = stream;
    if (h->blas)
        cublasSetStream_v2(h->blas, stream);
    return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnGetStream(cudnnHandle_t handle, cudaStream_t *stream)
{
    struct cudnn_handle *h = cudnn_handle_get(handle);
    if (!h)
        return fail(CUDNN_STATUS_NOT_INITIALIZED, "cudnnGetStream: not a handle");
    if (!stream)
        return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    *stream = h->stream;
    return CUDNN_STATUS_SUCCESS;
}

/* ---- descriptors: small structs of the stand-in's own ---- */

struct tensor {
    int n, c, h, w;
};
struct filter {
    int k, c, h, w;
};
struct conv {
    int pad_h, pad_w, u, v;
};
struct activation {
    cudnnActivationMode_t mode;
};

#define CREATE(fn, type, struct_name) \
    EXPORT cudnnStatus_t fn(type *desc) \
    { \
        if (!desc) \
            return CUDNN_STATUS_BAD_PARAM_NULL_POINTER; \
        void *p = calloc(1, sizeof(struct struct_name)); \
        if (!p) \
            return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED; \
        *desc = (type)p; \
        return CUDNN_STATUS_SUCCESS; \
    }
#define DESTROY(fn, type) \
    EXPORT cudnnStatus_t fn(type desc) \
    { \
        free((void *)desc); \
        return CUDNN_STATUS_SUCCESS; \
    }
CREATE(cudnnCreateTensorDescriptor, cudnnTensorDescriptor_t, tensor)
DESTROY(cudnnDestroyTensorDescriptor, cudnnTensorDescriptor_t)
CREATE(cudnnCreateFilterDescriptor, cudnnFilterDescriptor_t, filter)
DESTROY(cudnnDestroyFilterDescriptor, cudnnFilterDescriptor_t)
CREATE(cudnnCreateConvolutionDescriptor, cudnnConvolutionDescriptor_t, conv)
DESTROY(cudnnDestroyConvolutionDescriptor, cudnnConvolutionDescriptor_t)
CREATE(cudnnCreateActivationDescriptor, cudnnActivationDescriptor_t, activation)
DESTROY(cudnnDestroyActivationDescriptor, cudnnActivationDescriptor_t)

EXPORT cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t desc,
                                                cudnnTensorFormat_t format, cudnnDataType_t type,
                                                int n, int c, int h, int w)
{
    (void)format, (void)type;
    struct tensor *t = (struct tensor *)desc;
    if (!t || n <= 0 || c <= 0 || h <= 0 || w <= 0)
        return fail(CUDNN_STATUS_BAD_PARAM, "cudnnSetTensor4dDescriptor: bad dimensions");
    *t = (struct tensor){n, c, h, w};
    return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t desc, cudnnDataType_t type,
                                                cudnnTensorFormat_t format, int k, int c, int h,
                                                int w)
{
    (void)format, (void)type;
    struct filter *f = (struct filter *)desc;
    if (!f || k <= 0 || c <= 0 || h <= 0 || w <= 0)
        return fail(CUDNN_STATUS_BAD_PARAM, "cudnnSetFilter4dDescriptor: bad dimensions");
    *f = (struct filter){k, c, h, w};
    return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t desc, int pad_h,
                                                     int pad_w, int u, int v, int dilation_h,
                                                     int dilation_w, cudnnConvolutionMode_t mode,
                                                     cudnnDataType_t type)
{
    (void)dilation_h, (void)dilation_w, (void)mode, (void)type;
    struct conv *c = (struct conv *)desc;
    if (!c || u <= 0 || v <= 0)
        return fail(CUDNN_STATUS_BAD_PARAM, "cudnnSetConvolution2dDescriptor: bad stride");
    *c = (struct conv){pad_h, pad_w, u, v};
    return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnSetActivationDescriptor(cudnnActivationDescriptor_t desc,
                                                  cudnnActivationMode_t mode,
                                                  cudnnNanPropagation_t nan, double coef)
{
    (void)nan, (void)coef;
    struct activation *a = (struct activation *)desc;
    if (!a)
        return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    a->mode = mode;
    return CUDNN_STATUS_SUCCESS;
}

static uint64_t elements(const struct tensor *t)
{
    return (uint64_t)t->n * (uint64_t)t->c * (uint64_t)t->h * (uint64_t)t->w;
}

EXPORT cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t handle, const void *alpha,
                                             const cudnnTensorDescriptor_t xDesc, const void *x,
                                             const cudnnFilterDescriptor_t wDesc, const void *w,
                                             const cudnnConvolutionDescriptor_t convDesc,
                                             cudnnConvolutionFwdAlgo_t algo, void *workSpace,
                                             size_t workSpaceSizeInBytes, const void *beta,
                                             const cudnnTensorDescriptor_t yDesc, void *y)
{
    (void)alpha, (void)x, (void)w, (void)workSpace, (void)workSpaceSizeInBytes, (void)beta, (void)y;
    struct cudnn_handle *h = cudnn_handle_get(handle);
    if (!h)
        return fail(CUDNN_STATUS_NOT_INITIALIZED, "cudnnConvolutionForward: not a handle");
    const struct tensor *in = (const struct tensor *)xDesc, *out = (const struct tensor *)yDesc;
    const struct filter *f = (const struct filter *)wDesc;
    if (!in || !out || !f || !convDesc || in->c != f->c)
        return fail(CUDNN_STATUS_BAD_PARAM, "cudnnConvolutionForward: descriptors do not match");
    int64_t m = f->k, n = (int64_t)out->n * out->h * out->w, k = (int64_t)f->c * f->h * f->w;
    if (algo == CUDNN_CONVOLUTION_FWD_ALGO_GEMM) {
        /* im2col, then a cuBLAS GEMM on the handle's own cuBLAS handle */
        if (!h->blas && (cublasCreate_v2(&h->blas) != CUBLAS_STATUS_SUCCESS ||
                         cublasSetStream_v2(h->blas, h->stream) != CUBLAS_STATUS_SUCCESS))
            return fail(CUDNN_STATUS_INTERNAL_ERROR, "cudnnConvolutionForward: no cuBLAS");
        if (aclib_launch("im2col4d_kernel", 2000 + elements(in) / 1000, h->stream) != 0)
            return CUDNN_STATUS_EXECUTION_FAILED;
        float one = 1.0f, zero = 0.0f;
        if (cublasSgemm_v2(h->blas, CUBLAS_OP_N, CUBLAS_OP_N, (int)m, (int)n, (int)k, &one, NULL,
                           (int)m, NULL, (int)k, &zero, NULL, (int)m) != CUBLAS_STATUS_SUCCESS)
            return CUDNN_STATUS_EXECUTION_FAILED;
        return CUDNN_STATUS_SUCCESS;
    }
    if (aclib_launch("sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x"
                     "128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_kernel_cudnn",
                     aclib_gemm_ns(m, n, k, 1), h->stream) != 0)
        return CUDNN_STATUS_EXECUTION_FAILED;
    return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnActivationForward(cudnnHandle_t handle,
                                            cudnnActivationDescriptor_t activationDesc,
                                            const void *alpha, const cudnnTensorDescriptor_t xDesc,
                                            const void *x, const void *beta,
                                            const cudnnTensorDescriptor_t yDesc, void *y)
{
    (void)alpha, (void)x, (void)beta, (void)yDesc, (void)y;
    struct cudnn_handle *h = cudnn_handle_get(handle);
    if (!h)
        return fail(CUDNN_STATUS_NOT_INITIALIZED, "cudnnActivationForward: not a handle");
    if (!activationDesc || !xDesc)
        return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    if (aclib_launch("cudnn::ops::activation_fw_4d_kernel",
                     1500 + elements((const void *)xDesc) / 500, h->stream) != 0)
        return CUDNN_STATUS_EXECUTION_FAILED;
    return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnSoftmaxForward(cudnnHandle_t handle, cudnnSoftmaxAlgorithm_t algo,
                                         cudnnSoftmaxMode_t mode, const void *alpha,
                                         const cudnnTensorDescriptor_t xDesc, const void *x,
                                         const void *beta, const cudnnTensorDescriptor_t yDesc,
                                         void *y)
{
    (void)algo, (void)mode, (void)alpha, (void)x, (void)beta, (void)yDesc, (void)y;
    struct cudnn_handle *h = cudnn_handle_get(handle);
    if (!h)
        return fail(CUDNN_STATUS_NOT_INITIALIZED, "cudnnSoftmaxForward: not a handle");
    if (!xDesc)
        return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    if (aclib_launch("cudnn::ops::softmax_fw_kernel", 1500 + elements((const void *)xDesc) / 500,
                     h->stream) != 0)
        return CUDNN_STATUS_EXECUTION_FAILED;
    return CUDNN_STATUS_SUCCESS;
}

/* ---- the backend API, in the lazily loaded sub-library ---- */

static struct {
    pthread_once_t once;
    void *library;
    cudnnStatus_t (*create)(cudnnBackendDescriptorType_t, cudnnBackendDescriptor_t *);
    cudnnStatus_t (*destroy)(cudnnBackendDescriptor_t);
    cudnnStatus_t (*initialize)(cudnnBackendDescriptor_t);
    cudnnStatus_t (*set)(cudnnBackendDescriptor_t, cudnnBackendAttributeName_t,
                         cudnnBackendAttributeType_t, int64_t, const void *);
    cudnnStatus_t (*get)(cudnnBackendDescriptor_t const, cudnnBackendAttributeName_t,
                         cudnnBackendAttributeType_t, int64_t, int64_t *, void *);
    cudnnStatus_t (*finalize)(cudnnBackendDescriptor_t);
    cudnnStatus_t (*execute)(cudnnHandle_t, cudnnBackendDescriptor_t, cudnnBackendDescriptor_t);
} graph = {.once = PTHREAD_ONCE_INIT};

static void load_graph(void)
{
    graph.library = dlopen("libcudnn_graph.so.9", RTLD_NOW | RTLD_LOCAL);
    if (!graph.library)
        return;
#define FIND(field, name) *(void **)&graph.field = dlsym(graph.library, name)
    FIND(create, "cudnnBackendCreateDescriptor");
    FIND(destroy, "cudnnBackendDestroyDescriptor");
    FIND(initialize, "cudnnBackendInitialize");
    FIND(set, "cudnnBackendSetAttribute");
    FIND(get, "cudnnBackendGetAttribute");
    FIND(finalize, "cudnnBackendFinalize");
    FIND(execute, "cudnnBackendExecute");
#undef FIND
}

static int graph_loaded(void)
{
    pthread_once(&graph.once, load_graph);
    return graph.library && graph.create && graph.destroy && graph.initialize && graph.set &&
           graph.get && graph.finalize && graph.execute;
}

#define SUBLIBRARY_MISSING \
    fail(CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED, "libcudnn_graph.so.9 could not be loaded")

EXPORT cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t type,
                                                  cudnnBackendDescriptor_t *descriptor)
{
    return graph_loaded() ? graph.create(type, descriptor) : SUBLIBRARY_MISSING;
}

EXPORT cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t descriptor)
{
    return graph_loaded() ? graph.destroy(descriptor) : SUBLIBRARY_MISSING;
}

EXPORT cudnnStatus_t cudnnBackendInitialize(cudnnBackendDescriptor_t descriptor)
{
    return graph_loaded() ? graph.initialize(descriptor) : SUBLIBRARY_MISSING;
}

EXPORT cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t descriptor,
                                              cudnnBackendAttributeName_t name,
                                              cudnnBackendAttributeType_t type, int64_t count,
                                              const void *elements)
{
    return graph_loaded() ? graph.set(descriptor, name, type, count, elements) : SUBLIBRARY_MISSING;
}

EXPORT cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const descriptor,
                                              cudnnBackendAttributeName_t name,
                                              cudnnBackendAttributeType_t type, int64_t requested,
                                              int64_t *count, void *elements)
{
    return graph_loaded() ? graph.get(descriptor, name, type, requested, count, elements)
                          : SUBLIBRARY_MISSING;
}

EXPORT cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t descriptor)
{
    return graph_loaded() ? graph.finalize(descriptor) : SUBLIBRARY_MISSING;
}

EXPORT cudnnStatus_t cudnnBackendExecute(cudnnHandle_t handle, cudnnBackendDescriptor_t plan,
                                         cudnnBackendDescriptor_t pack)
{
    return graph_loaded() ? graph.execute(handle, plan, pack) : SUBLIBRARY_MISSING;
}
