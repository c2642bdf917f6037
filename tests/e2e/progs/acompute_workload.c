// A cuDNN/cuBLAS program for the ACDNN/ACBLAS tests, written against the
// toolkit's headers and linked with the toolkit's libcudnn.so.9 and
// libcublas.so.13 when it has them: it runs unchanged on simppu's stand-ins.
//
//   acompute_workload MODE [N]
//   blas     cuBLAS: create, stream, 3 Sgemm, 2 Dgemm, 1 GemmEx (through cuBLASLt),
//            1 SgemmStridedBatched, 1 Saxpy, 1 failing Sgemm (NULL handle), destroy
//   dnn      cuDNN: create, stream, descriptors, 2 implicit-GEMM convolutions, 1 GEMM
//            convolution (calls cuBLAS), 2 activations, 1 softmax, a backend graph
//            (create, set, finalize, execute, destroy), destroy
//   dlsym    libcublas.so.13 loaded with dlopen (RTLD_LOCAL) and its functions found with
//            dlsym: create, 2 Sgemm, destroy
//   none     CUDA only: neither library is called
//   loop N   N cublasGetMathMode calls (no device work: the benchmark's loop), timed
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK_CUDA(call) \
    do { \
        cudaError_t e_ = (call); \
        if (e_ != cudaSuccess) { \
            fprintf(stderr, "%s:%d: %s: %d\n", __FILE__, __LINE__, #call, (int)e_); \
            exit(1); \
        } \
    } while (0)
#define CHECK_BLAS(call) \
    do { \
        cublasStatus_t s_ = (call); \
        if (s_ != CUBLAS_STATUS_SUCCESS) { \
            fprintf(stderr, "%s:%d: %s: %d\n", __FILE__, __LINE__, #call, (int)s_); \
            exit(1); \
        } \
    } while (0)
#define CHECK_DNN(call) \
    do { \
        cudnnStatus_t s_ = (call); \
        if (s_ != CUDNN_STATUS_SUCCESS) { \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, \
                    cudnnGetErrorString(s_)); \
            exit(1); \
        } \
    } while (0)

static void blas(void)
{
    cudaStream_t stream;
    CHECK_CUDA(cudaStreamCreate(&stream));
    float *a, *b, *c;
    size_t bytes = 256 * 256 * sizeof(float);
    CHECK_CUDA(cudaMalloc((void **)&a, bytes));
    CHECK_CUDA(cudaMalloc((void **)&b, bytes));
    CHECK_CUDA(cudaMalloc((void **)&c, bytes));
    cublasHandle_t handle;
    CHECK_BLAS(cublasCreate(&handle));
    CHECK_BLAS(cublasSetStream(handle, stream));
    float one = 1.0f, zero = 0.0f;
    double done = 1.0, dzero = 0.0;
    for (int i = 0; i < 3; i++)
        CHECK_BLAS(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &one, a, 256, b,
                               256, &zero, c, 256));
    for (int i = 0; i < 2; i++)
        CHECK_BLAS(cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 128, 128, 128, &done, (double *)a,
                               128, (double *)b, 128, &dzero, (double *)c, 128));
    CHECK_BLAS(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &one, a, CUDA_R_32F,
                            256, b, CUDA_R_32F, 256, &zero, c, CUDA_R_32F, 256,
                            CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
    CHECK_BLAS(cublasSgemmStridedBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &one, a, 64,
                                         4096, b, 64, 4096, &zero, c, 64, 4096, 8));
    CHECK_BLAS(cublasSaxpy(handle, 65536, &one, a, 1, c, 1));
    cublasStatus_t s =
        cublasSgemm(NULL, CUBLAS_OP_N, CUBLAS_OP_N, 16, 16, 16, &one, a, 16, b, 16, &zero, c, 16);
    if (s != CUBLAS_STATUS_NOT_INITIALIZED) {
        fprintf(stderr, "cublasSgemm(NULL): %d, not NOT_INITIALIZED\n", (int)s);
        exit(1);
    }
    CHECK_CUDA(cudaStreamSynchronize(stream));
    CHECK_BLAS(cublasDestroy(handle));
    CHECK_CUDA(cudaFree(a));
    CHECK_CUDA(cudaFree(b));
    CHECK_CUDA(cudaFree(c));
    CHECK_CUDA(cudaStreamDestroy(stream));
}

static void dnn(void)
{
    printf("cudnn %zu\n", cudnnGetVersion());
    cudaStream_t stream;
    CHECK_CUDA(cudaStreamCreate(&stream));
    cudnnHandle_t handle;
    CHECK_DNN(cudnnCreate(&handle));
    CHECK_DNN(cudnnSetStream(handle, stream));
    cudnnTensorDescriptor_t x, y;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
    cudnnActivationDescriptor_t act;
    CHECK_DNN(cudnnCreateTensorDescriptor(&x));
    CHECK_DNN(cudnnCreateTensorDescriptor(&y));
    CHECK_DNN(cudnnCreateFilterDescriptor(&w));
    CHECK_DNN(cudnnCreateConvolutionDescriptor(&conv));
    CHECK_DNN(cudnnCreateActivationDescriptor(&act));
    CHECK_DNN(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 8, 64, 32, 32));
    CHECK_DNN(cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 8, 64, 32, 32));
    CHECK_DNN(cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 64, 64, 3, 3));
    CHECK_DNN(cudnnSetConvolution2dDescriptor(conv, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                              CUDNN_DATA_FLOAT));
    CHECK_DNN(
        cudnnSetActivationDescriptor(act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
    float *bx, *bw, *by, one = 1.0f, zero = 0.0f;
    CHECK_CUDA(cudaMalloc((void **)&bx, 8 * 64 * 32 * 32 * sizeof(float)));
    CHECK_CUDA(cudaMalloc((void **)&bw, 64 * 64 * 9 * sizeof(float)));
    CHECK_CUDA(cudaMalloc((void **)&by, 8 * 64 * 32 * 32 * sizeof(float)));
    for (int i = 0; i < 2; i++)
        CHECK_DNN(cudnnConvolutionForward(handle, &one, x, bx, w, bw, conv,
                                          CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, NULL, 0,
                                          &zero, y, by));
    CHECK_DNN(cudnnConvolutionForward(handle, &one, x, bx, w, bw, conv,
                                      CUDNN_CONVOLUTION_FWD_ALGO_GEMM, NULL, 0, &zero, y, by));
    for (int i = 0; i < 2; i++)
        CHECK_DNN(cudnnActivationForward(handle, act, &one, y, by, &zero, y, by));
    CHECK_DNN(cudnnSoftmaxForward(handle, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one,
                                  y, by, &zero, y, by));
    /* the backend API: an execution plan and a variant pack */
    cudnnBackendDescriptor_t plan, pack;
    CHECK_DNN(cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan));
    CHECK_DNN(cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack));
    CHECK_DNN(cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1,
                                       &handle));
    void *pointers[1] = {by};
    int64_t uids[1] = {1};
    CHECK_DNN(cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                       CUDNN_TYPE_VOID_PTR, 1, pointers));
    CHECK_DNN(cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64,
                                       1, uids));
    CHECK_DNN(cudnnBackendFinalize(plan));
    CHECK_DNN(cudnnBackendFinalize(pack));
    CHECK_DNN(cudnnBackendExecute(handle, plan, pack));
    CHECK_DNN(cudnnBackendDestroyDescriptor(pack));
    CHECK_DNN(cudnnBackendDestroyDescriptor(plan));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    CHECK_DNN(cudnnDestroyActivationDescriptor(act));
    CHECK_DNN(cudnnDestroyConvolutionDescriptor(conv));
    CHECK_DNN(cudnnDestroyFilterDescriptor(w));
    CHECK_DNN(cudnnDestroyTensorDescriptor(y));
    CHECK_DNN(cudnnDestroyTensorDescriptor(x));
    CHECK_DNN(cudnnDestroy(handle));
    CHECK_CUDA(cudaFree(bx));
    CHECK_CUDA(cudaFree(bw));
    CHECK_CUDA(cudaFree(by));
    CHECK_CUDA(cudaStreamDestroy(stream));
}

static void dlsym_path(void)
{
    void *lib = dlopen("libcublas.so.13", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "dlopen libcublas.so.13: %s\n", dlerror());
        exit(1);
    }
    cublasStatus_t (*create)(cublasHandle_t *);
    cublasStatus_t (*destroy)(cublasHandle_t);
    cublasStatus_t (*sgemm)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                            const float *, const float *, int, const float *, int, const float *,
                            float *, int);
    *(void **)&create = dlsym(lib, "cublasCreate_v2");
    *(void **)&destroy = dlsym(lib, "cublasDestroy_v2");
    *(void **)&sgemm = dlsym(lib, "cublasSgemm_v2");
    if (!create || !destroy || !sgemm) {
        fprintf(stderr, "dlsym: %s\n", dlerror());
        exit(1);
    }
    cublasHandle_t handle;
    CHECK_BLAS(create(&handle));
    float one = 1.0f, zero = 0.0f;
    for (int i = 0; i < 2; i++)
        CHECK_BLAS(sgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 128, 128, 128, &one, NULL, 128, NULL,
                         128, &zero, NULL, 128));
    CHECK_CUDA(cudaDeviceSynchronize());
    CHECK_BLAS(destroy(handle));
}

static void none(void)
{
    void *p;
    CHECK_CUDA(cudaMalloc(&p, 1 << 20));
    CHECK_CUDA(cudaMemset(p, 0, 1 << 20));
    CHECK_CUDA(cudaDeviceSynchronize());
    CHECK_CUDA(cudaFree(p));
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void loop(long n)
{
    cublasHandle_t handle;
    CHECK_BLAS(cublasCreate(&handle));
    cublasMath_t mode;
    double start = now_ns();
    for (long i = 0; i < n; i++)
        CHECK_BLAS(cublasGetMathMode(handle, &mode));
    double end = now_ns();
    printf("ns_per_call %.2f\n", n ? (end - start) / (double)n : 0.0);
    CHECK_BLAS(cublasDestroy(handle));
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "blas";
    long n = argc > 2 ? atol(argv[2]) : 1000000;
    if (!strcmp(mode, "blas"))
        blas();
    else if (!strcmp(mode, "dnn"))
        dnn();
    else if (!strcmp(mode, "dlsym"))
        dlsym_path();
    else if (!strcmp(mode, "none"))
        none();
    else if (!strcmp(mode, "loop"))
        loop(n);
    else {
        fprintf(stderr, "usage: acompute_workload blas|dnn|dlsym|none|loop [N]\n");
        return 2;
    }
    return 0;
}
