/* simppu libcuda.so.1: the driver API entry points that cuda-samples'
 * driver-API programs and the vendor libraries use, on the simulated device
 * of libcudart.so.13 (this library sits on the runtime: each entry point is
 * carried out by the runtime calls that do the same, hidden inside it).
 *
 * Every entry point calls CUPTI's driver-domain callbacks with the cbid and
 * the parameter struct real CUPTI gives (cupti_driver_cbid.h,
 * generated_cuda_meta.h), and the launches, copies and memsets it causes
 * carry its correlation id.  The names are the ABI's: cuda.h maps cuMemAlloc
 * to cuMemAlloc_v2 and so on, and both spellings are exported where older
 * binaries use the older one.  Modules are not parsed: a function is known by
 * its name, and its kernel lasts as SIMPPU_KERNEL_NS / SIMPPU_KERNEL_TIMES say.
 * A test fixture: never linked into asys. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudart_internal.h"

/* the older spellings cuda.h maps to newer ones, exported for older binaries */
#undef cuCtxCreate
#undef cuEventElapsedTime
#undef cuGetProcAddress
CUresult CUDAAPI cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev);
CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);
CUresult CUDAAPI cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd);
CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                  cuuint64_t flags);

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void **args,
                               size_t shared, cudaStream_t stream);

static int initialized;

#define CALL_INIT(fn, params_ptr) \
    struct api_call call_; \
    memset(&call_, 0, sizeof call_); \
    call_.cbid = CUPTI_DRIVER_TRACE_CBID_##fn; \
    call_.name = #fn; \
    call_.params = params_ptr; \
    simppu_driver_enter(&call_)
/* an entry point that needs cuInit first */
#define DRV(fn, ...) \
    struct fn##_params_st params_ = {__VA_ARGS__}; \
    CALL_INIT(fn, &params_); \
    if (!__atomic_load_n(&initialized, __ATOMIC_ACQUIRE)) \
    DONE(CUDA_ERROR_NOT_INITIALIZED)
/* one that does not */
#define DRVI(fn, ...) \
    struct fn##_params_st params_ = {__VA_ARGS__}; \
    CALL_INIT(fn, &params_)
#define DONE(result) return (CUresult)simppu_driver_exit(&call_, (int)(result))

/* The runtime's error as the driver's. */
static CUresult cu(cudaError_t e)
{
    switch (e) {
    case cudaSuccess:
        return CUDA_SUCCESS;
    case cudaErrorInvalidValue:
    case cudaErrorInvalidConfiguration:
    case cudaErrorInvalidPitchValue:
    case cudaErrorInvalidMemcpyDirection:
        return CUDA_ERROR_INVALID_VALUE;
    case cudaErrorMemoryAllocation:
        return CUDA_ERROR_OUT_OF_MEMORY;
    case cudaErrorInitializationError:
        return CUDA_ERROR_NOT_INITIALIZED;
    case cudaErrorInvalidDevice:
        return CUDA_ERROR_INVALID_DEVICE;
    case cudaErrorNoDevice:
        return CUDA_ERROR_NO_DEVICE;
    case cudaErrorInvalidResourceHandle:
    case cudaErrorInvalidDeviceFunction:
        return CUDA_ERROR_INVALID_HANDLE;
    case cudaErrorNotReady:
        return CUDA_ERROR_NOT_READY;
    default:
        return (CUresult)e;
    }
}

static void *dptr(CUdeviceptr p)
{
    return (void *)(uintptr_t)p;
}

/* ---- initialization, version, errors ------------------------------------------------------- */

#define EXPORT __attribute__((visibility("default")))

EXPORT CUresult cuInit(unsigned int Flags)
{
    DRVI(cuInit, Flags);
    if (Flags != 0)
        DONE(CUDA_ERROR_INVALID_VALUE);
    __atomic_store_n(&initialized, 1, __ATOMIC_RELEASE);
    DONE(CUDA_SUCCESS);
}

EXPORT CUresult cuDriverGetVersion(int *driverVersion)
{
    DRVI(cuDriverGetVersion, driverVersion);
    if (!driverVersion)
        DONE(CUDA_ERROR_INVALID_VALUE);
    *driverVersion = CUDA_VERSION;
    DONE(CUDA_SUCCESS);
}

struct error_text {
    CUresult code;
    const char *name, *text;
};
static const struct error_text error_texts[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_DEINITIALIZED, "CUDA_ERROR_DEINITIALIZED", "driver shutting down"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_FILE_NOT_FOUND, "CUDA_ERROR_FILE_NOT_FOUND", "file not found"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

static const struct error_text *error_text(CUresult code)
{
    for (size_t i = 0; i < sizeof error_texts / sizeof error_texts[0]; i++)
        if (error_texts[i].code == code)
            return &error_texts[i];
    return NULL;
}

EXPORT CUresult cuGetErrorString(CUresult error, const char **pStr)
{
    DRVI(cuGetErrorString, error, pStr);
    const struct error_text *t = error_text(error);
    if (!pStr)
        DONE(CUDA_ERROR_INVALID_VALUE);
    *pStr = t ? t->text : NULL;
    DONE(t ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE);
}

EXPORT CUresult cuGetErrorName(CUresult error, const char **pStr)
{
    DRVI(cuGetErrorName, error, pStr);
    const struct error_text *t = error_text(error);
    if (!pStr)
        DONE(CUDA_ERROR_INVALID_VALUE);
    *pStr = t ? t->name : NULL;
    DONE(t ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE);
}

/* Names whose signature changed: the version a program built against
 * `cuda_version` gets (the others: the highest this library exports, which
 * is what cuda.h maps the name to). */
static const struct {
    const char *name;
    int since; /* CUDA_VERSION that introduced `suffix` */
    const char *suffix, *before;
} versioned[] = {
    {"cuCtxCreate", 12050, "_v4", "_v2"},
    {"cuEventElapsedTime", 12080, "_v2", ""},
    {"cuGetProcAddress", 12000, "_v2", ""},
};

/* The entry point for a name, as cuGetProcAddress finds it. */
static CUresult proc_address(const char *symbol, int cuda_version, void **pfn,
                             CUdriverProcAddressQueryResult *status)
{
    if (!symbol || !pfn)
        return CUDA_ERROR_INVALID_VALUE;
    *pfn = NULL;
    Dl_info info;
    void *self = dladdr((void *)cuInit, &info) && info.dli_fname
                     ? dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD)
                     : NULL;
    const char *suffixes[] = {"_v4", "_v3", "_v2", ""};
    size_t count = sizeof suffixes / sizeof suffixes[0], first = 0;
    for (size_t i = 0; i < sizeof versioned / sizeof versioned[0]; i++) {
        if (!strcmp(symbol, versioned[i].name)) {
            suffixes[3] =
                cuda_version >= versioned[i].since ? versioned[i].suffix : versioned[i].before;
            first = 3;
        }
    }
    char name[256];
    for (size_t i = first; self && !*pfn && i < count; i++) {
        if (snprintf(name, sizeof name, "%s%s", symbol, suffixes[i]) < (int)sizeof name)
            *pfn = dlsym(self, name);
    }
    if (self)
        dlclose(self);
    if (status)
        *status = *pfn ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return *pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                    cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus)
{
    DRVI(cuGetProcAddress_v2, symbol, pfn, cudaVersion, flags, symbolStatus);
    DONE(proc_address(symbol, cudaVersion, pfn, symbolStatus));
}

EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    DRVI(cuGetProcAddress, symbol, pfn, cudaVersion, flags);
    DONE(proc_address(symbol, cudaVersion, pfn, NULL));
}

/* ---- devices ------------------------------------------------------------------------------- */

static int device_count(void)
{
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

EXPORT CUresult cuDeviceGetCount(int *count)
{
    DRV(cuDeviceGetCount, count);
    if (!count)
        DONE(CUDA_ERROR_INVALID_VALUE);
    *count = device_count();
    DONE(CUDA_SUCCESS);
}

EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    DRV(cuDeviceGet, device, ordinal);
    if (!device)
        DONE(CUDA_ERROR_INVALID_VALUE);
    if (ordinal < 0 || ordinal >= device_count())
        DONE(CUDA_ERROR_INVALID_DEVICE);
    *device = ordinal;
    DONE(CUDA_SUCCESS);
}

EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    DRV(cuDeviceGetName, name, len, dev);
    struct cudaDeviceProp prop;
    if (!name || len <= 0)
        DONE(CUDA_ERROR_INVALID_VALUE);
    cudaError_t rc = cudaGetDeviceProperties(&prop, dev);
    if (rc == cudaSuccess)
        snprintf(name, (size_t)len, "%s", prop.name);
    DONE(cu(rc));
}

EXPORT CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    DRV(cuDeviceGetAttribute, pi, attrib, dev);
    /* the runtime's cudaDeviceAttr values are the driver's; the driver's own
     * (deprecated in the runtime) follow from the ones that replaced them */
    int attr = (int)attrib;
    if (attrib == CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH)
        attr = CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH;
    else if (attrib == CU_DEVICE_ATTRIBUTE_GPU_OVERLAP)
        attr = CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT;
    cudaError_t rc = cudaDeviceGetAttribute(pi, (enum cudaDeviceAttr)attr, dev);
    if (rc == cudaSuccess && attr != (int)attrib)
        *pi = *pi > 0;
    DONE(cu(rc));
}

EXPORT CUresult cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev, CUdevice peerDev)
{
    DRV(cuDeviceCanAccessPeer, canAccessPeer, dev, peerDev);
    DONE(cu(cudaDeviceCanAccessPeer(canAccessPeer, dev, peerDev)));
}

EXPORT CUresult cuDeviceComputeCapability(int *major, int *minor, CUdevice dev)
{
    DRV(cuDeviceComputeCapability, major, minor, dev);
    if (!major || !minor)
        DONE(CUDA_ERROR_INVALID_VALUE);
    cudaError_t rc = cudaDeviceGetAttribute(major, cudaDevAttrComputeCapabilityMajor, dev);
    if (rc == cudaSuccess)
        rc = cudaDeviceGetAttribute(minor, cudaDevAttrComputeCapabilityMinor, dev);
    DONE(cu(rc));
}

EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    DRV(cuDeviceTotalMem_v2, bytes, dev);
    struct cudaDeviceProp prop;
    if (!bytes)
        DONE(CUDA_ERROR_INVALID_VALUE);
    cudaError_t rc = cudaGetDeviceProperties(&prop, dev);
    if (rc == cudaSuccess)
        *bytes = prop.totalGlobalMem;
    DONE(cu(rc));
}

/* ---- contexts: one (the primary) per device; the current one per thread -------------------- */

static __thread CUcontext current_context;

static CUresult make_current(CUcontext ctx)
{
    if (ctx && cudaSetDevice((int)simppu_context_device(ctx)) != cudaSuccess)
        return CUDA_ERROR_INVALID_CONTEXT;
    current_context = ctx;
    return CUDA_SUCCESS;
}

static CUresult context_create(CUcontext *pctx, CUdevice dev)
{
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    CUcontext ctx = dev >= 0 && dev < device_count() ? simppu_context_handle(dev) : NULL;
    if (!ctx)
        return CUDA_ERROR_INVALID_DEVICE;
    *pctx = ctx;
    return make_current(ctx);
}

EXPORT CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    DRV(cuCtxCreate_v2, pctx, flags, dev);
    DONE(context_create(pctx, dev));
}

EXPORT CUresult cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    DRV(cuCtxCreate, pctx, flags, dev);
    DONE(context_create(pctx, dev));
}

EXPORT CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams,
                               unsigned int flags, CUdevice dev)
{
    DRV(cuCtxCreate_v4, pctx, ctxCreateParams, flags, dev);
    DONE(context_create(pctx, dev));
}

EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx)
{
    DRV(cuCtxDestroy_v2, ctx);
    if (!ctx)
        DONE(CUDA_ERROR_INVALID_VALUE);
    /* the context's work finishes; the device's context stays (the primary one) */
    int device = 0;
    cudaGetDevice(&device);
    cudaSetDevice((int)simppu_context_device(ctx));
    cudaError_t rc = cudaDeviceSynchronize();
    cudaSetDevice(device);
    if (current_context == ctx)
        current_context = NULL;
    DONE(cu(rc));
}

EXPORT CUresult cuCtxSynchronize(void)
{
    CALL_INIT(cuCtxSynchronize, NULL);
    DONE(cu(cudaDeviceSynchronize()));
}

EXPORT CUresult cuCtxGetCurrent(CUcontext *pctx)
{
    DRV(cuCtxGetCurrent, pctx);
    if (!pctx)
        DONE(CUDA_ERROR_INVALID_VALUE);
    *pctx = current_context;
    DONE(CUDA_SUCCESS);
}

EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
    DRV(cuCtxSetCurrent, ctx);
    DONE(make_current(ctx));
}

EXPORT CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
    DRV(cuCtxPushCurrent_v2, ctx);
    DONE(ctx ? make_current(ctx) : CUDA_ERROR_INVALID_CONTEXT);
}

EXPORT CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
    DRV(cuCtxPopCurrent_v2, pctx);
    if (!current_context)
        DONE(CUDA_ERROR_INVALID_CONTEXT);
    if (pctx)
        *pctx = current_context;
    current_context = NULL;
    DONE(CUDA_SUCCESS);
}

EXPORT CUresult cuCtxGetDevice(CUdevice *device)
{
    DRV(cuCtxGetDevice, device);
    if (!device)
        DONE(CUDA_ERROR_INVALID_VALUE);
    if (!current_context)
        DONE(CUDA_ERROR_INVALID_CONTEXT);
    *device = (CUdevice)simppu_context_device(current_context);
    DONE(CUDA_SUCCESS);
}

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    DRV(cuDevicePrimaryCtxRetain, pctx, dev);
    if (!pctx)
        DONE(CUDA_ERROR_INVALID_VALUE);
    *pctx = dev >= 0 && dev < device_count() ? simppu_context_handle(dev) : NULL;
    DONE(*pctx ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE);
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    DRV(cuDevicePrimaryCtxRelease_v2, dev);
    DONE(dev >= 0 && dev < device_count() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE);
}

/* ---- modules and launches ------------------------------------------------------------------ */

#define MODULE_MAGIC 0x73696d6d6f64756cull

struct sim_module {
    uint64_t magic;
};

static CUresult module_new(CUmodule *module, const void *image)
{
    if (!module || !image)
        return CUDA_ERROR_INVALID_VALUE;
    struct sim_module *m = malloc(sizeof *m);
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    m->magic = MODULE_MAGIC;
    *module = (CUmodule)m;
    return CUDA_SUCCESS;
}

static int valid_module(CUmodule module)
{
    return module && ((struct sim_module *)module)->magic == MODULE_MAGIC;
}

EXPORT CUresult cuModuleLoad(CUmodule *module, const char *fname)
{
    DRV(cuModuleLoad, module, fname);
    FILE *f = fname ? fopen(fname, "rb") : NULL;
    if (!f)
        DONE(CUDA_ERROR_FILE_NOT_FOUND);
    fclose(f);
    DONE(module_new(module, fname));
}

EXPORT CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
    DRV(cuModuleLoadData, module, image);
    DONE(module_new(module, image));
}

EXPORT CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
                                   CUjit_option *options, void **optionValues)
{
    DRV(cuModuleLoadDataEx, module, image, numOptions, options, optionValues);
    DONE(module_new(module, image));
}

EXPORT CUresult cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin)
{
    DRV(cuModuleLoadFatBinary, module, fatCubin);
    DONE(module_new(module, fatCubin));
}

EXPORT CUresult cuModuleUnload(CUmodule hmod)
{
    DRV(cuModuleUnload, hmod);
    if (!valid_module(hmod))
        DONE(CUDA_ERROR_INVALID_HANDLE);
    ((struct sim_module *)hmod)->magic = 0;
    free(hmod);
    DONE(CUDA_SUCCESS);
}

EXPORT CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
    DRV(cuModuleGetFunction, hfunc, hmod, name);
    if (!hfunc || !name)
        DONE(CUDA_ERROR_INVALID_VALUE);
    if (!valid_module(hmod))
        DONE(CUDA_ERROR_INVALID_HANDLE);
    struct sim_kernel *k = simppu_module_function(name);
    *hfunc = (CUfunction)k;
    DONE(k ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY);
}

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                               unsigned int gridDimZ, unsigned int blockDimX,
                               unsigned int blockDimY, unsigned int blockDimZ,
                               unsigned int sharedMemBytes, CUstream hStream, void **kernelParams,
                               void **extra)
{
    DRV(cuLaunchKernel, f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
        sharedMemBytes, hStream, kernelParams, extra);
    if (!f)
        DONE(CUDA_ERROR_INVALID_HANDLE);
    call_.data.symbolName = ((struct sim_kernel *)f)->name;
    dim3 grid = {gridDimX, gridDimY, gridDimZ}, block = {blockDimX, blockDimY, blockDimZ};
    DONE(cu(__cudaLaunchKernel((cudaKernel_t)f, grid, block, kernelParams, sharedMemBytes,
                               (cudaStream_t)hStream)));
}

/* ---- occupancy ----------------------------------------------------------------------------- */

EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, CUfunction func,
                                                            int blockSize, size_t dynamicSMemSize)
{
    DRV(cuOccupancyMaxActiveBlocksPerMultiprocessor, numBlocks, func, blockSize, dynamicSMemSize);
    if (!numBlocks)
        DONE(CUDA_ERROR_INVALID_VALUE);
    if (!func)
        DONE(CUDA_ERROR_INVALID_HANDLE);
    *numBlocks =
        simppu_blocks_per_multiprocessor((struct sim_kernel *)func, blockSize, dynamicSMemSize);
    DONE(CUDA_SUCCESS);
}

/* The block size (a multiple of 32) that keeps the most threads resident,
 * and the grid that fills the device with it. */
EXPORT CUresult cuOccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize, CUfunction func,
                                                 CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                                 size_t dynamicSMemSize, int blockSizeLimit)
{
    DRV(cuOccupancyMaxPotentialBlockSize, minGridSize, blockSize, func, blockSizeToDynamicSMemSize,
        dynamicSMemSize, blockSizeLimit);
    if (!minGridSize || !blockSize)
        DONE(CUDA_ERROR_INVALID_VALUE);
    if (!func)
        DONE(CUDA_ERROR_INVALID_HANDLE);
    int limit = blockSizeLimit > 0 && blockSizeLimit < 1024 ? blockSizeLimit : 1024;
    int best = 0, best_blocks = 0, device = 0, sms = 0;
    for (int size = 32; size <= limit; size += 32) {
        size_t shared =
            blockSizeToDynamicSMemSize ? blockSizeToDynamicSMemSize(size) : dynamicSMemSize;
        int blocks = simppu_blocks_per_multiprocessor((struct sim_kernel *)func, size, shared);
        if (blocks * size >= best_blocks * best && blocks > 0) {
            best = size;
            best_blocks = blocks;
        }
    }
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    *blockSize = best;
    *minGridSize = best_blocks * sms;
    DONE(CUDA_SUCCESS);
}

/* ---- memory -------------------------------------------------------------------------------- */

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr_out, size_t bytesize)
{
    DRV(cuMemAlloc_v2, dptr_out, bytesize);
    void *p = NULL;
    if (!dptr_out)
        DONE(CUDA_ERROR_INVALID_VALUE);
    cudaError_t rc = bytesize ? cudaMalloc(&p, bytesize) : cudaErrorInvalidValue;
    *dptr_out = (CUdeviceptr)(uintptr_t)p;
    DONE(cu(rc));
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr ptr)
{
    DRV(cuMemFree_v2, ptr);
    DONE(cu(cudaFree(dptr(ptr))));
}

EXPORT CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{
    DRV(cuMemAllocHost_v2, pp, bytesize);
    DONE(cu(cudaMallocHost(pp, bytesize)));
}

EXPORT CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
    DRV(cuMemHostAlloc, pp, bytesize, Flags);
    DONE(cu(cudaHostAlloc(pp, bytesize, Flags)));
}

EXPORT CUresult cuMemFreeHost(void *p)
{
    DRV(cuMemFreeHost, p);
    DONE(cu(cudaFreeHost(p)));
}

EXPORT CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total)
{
    DRV(cuMemGetInfo_v2, free_bytes, total);
    DONE(cu(cudaMemGetInfo(free_bytes, total)));
}

EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
    DRV(cuMemcpyHtoD_v2, dstDevice, srcHost, ByteCount);
    DONE(cu(cudaMemcpy(dptr(dstDevice), srcHost, ByteCount, cudaMemcpyHostToDevice)));
}

EXPORT CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
    DRV(cuMemcpyDtoH_v2, dstHost, srcDevice, ByteCount);
    DONE(cu(cudaMemcpy(dstHost, dptr(srcDevice), ByteCount, cudaMemcpyDeviceToHost)));
}

EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)
{
    DRV(cuMemcpyDtoD_v2, dstDevice, srcDevice, ByteCount);
    DONE(cu(cudaMemcpy(dptr(dstDevice), dptr(srcDevice), ByteCount, cudaMemcpyDeviceToDevice)));
}

EXPORT CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
    DRV(cuMemcpy, dst, src, ByteCount);
    DONE(cu(cudaMemcpy(dptr(dst), dptr(src), ByteCount, cudaMemcpyDefault)));
}

EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount,
                                     CUstream hStream)
{
    DRV(cuMemcpyHtoDAsync_v2, dstDevice, srcHost, ByteCount, hStream);
    DONE(cu(cudaMemcpyAsync(dptr(dstDevice), srcHost, ByteCount, cudaMemcpyHostToDevice,
                            (cudaStream_t)hStream)));
}

EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
                                     CUstream hStream)
{
    DRV(cuMemcpyDtoHAsync_v2, dstHost, srcDevice, ByteCount, hStream);
    DONE(cu(cudaMemcpyAsync(dstHost, dptr(srcDevice), ByteCount, cudaMemcpyDeviceToHost,
                            (cudaStream_t)hStream)));
}

EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,
                                     CUstream hStream)
{
    DRV(cuMemcpyDtoDAsync_v2, dstDevice, srcDevice, ByteCount, hStream);
    DONE(cu(cudaMemcpyAsync(dptr(dstDevice), dptr(srcDevice), ByteCount, cudaMemcpyDeviceToDevice,
                            (cudaStream_t)hStream)));
}

EXPORT CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream)
{
    DRV(cuMemcpyAsync, dst, src, ByteCount, hStream);
    DONE(cu(cudaMemcpyAsync(dptr(dst), dptr(src), ByteCount, cudaMemcpyDefault,
                            (cudaStream_t)hStream)));
}

EXPORT CUresult cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
    DRV(cuMemsetD8_v2, dstDevice, uc, N);
    DONE(cu(cudaMemset(dptr(dstDevice), uc, N)));
}

EXPORT CUresult cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream)
{
    DRV(cuMemsetD8Async, dstDevice, uc, N, hStream);
    DONE(cu(cudaMemsetAsync(dptr(dstDevice), uc, N, (cudaStream_t)hStream)));
}

/* A 32-bit pattern: the device runs a memset of N*4 bytes; a pattern whose
 * bytes differ is then written once the memset has run (device memory is
 * host memory here). */
static cudaError_t memset_d32(CUdeviceptr dst, unsigned int ui, size_t N, cudaStream_t stream,
                              int async)
{
    if (dst % 4)
        return cudaErrorInvalidValue;
    unsigned char b = (unsigned char)ui;
    cudaError_t rc =
        async ? cudaMemsetAsync(dptr(dst), b, N * 4, stream) : cudaMemset(dptr(dst), b, N * 4);
    if (rc != cudaSuccess || ui == b * 0x01010101u)
        return rc;
    rc = async ? cudaStreamSynchronize(stream) : cudaDeviceSynchronize();
    uint32_t *p = dptr(dst);
    for (size_t i = 0; rc == cudaSuccess && i < N; i++)
        p[i] = ui;
    return rc;
}

EXPORT CUresult cuMemsetD32_v2(CUdeviceptr dstDevice, unsigned int ui, size_t N)
{
    DRV(cuMemsetD32_v2, dstDevice, ui, N);
    DONE(cu(memset_d32(dstDevice, ui, N, NULL, 0)));
}

EXPORT CUresult cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream)
{
    DRV(cuMemsetD32Async, dstDevice, ui, N, hStream);
    DONE(cu(memset_d32(dstDevice, ui, N, (cudaStream_t)hStream, 1)));
}

/* ---- streams and events -------------------------------------------------------------------- */

EXPORT CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    DRV(cuStreamCreate, phStream, Flags);
    DONE(cu(cudaStreamCreateWithFlags((cudaStream_t *)phStream, Flags)));
}

EXPORT CUresult cuStreamDestroy_v2(CUstream hStream)
{
    DRV(cuStreamDestroy_v2, hStream);
    DONE(cu(cudaStreamDestroy((cudaStream_t)hStream)));
}

EXPORT CUresult cuStreamSynchronize(CUstream hStream)
{
    DRV(cuStreamSynchronize, hStream);
    DONE(cu(cudaStreamSynchronize((cudaStream_t)hStream)));
}

EXPORT CUresult cuStreamQuery(CUstream hStream)
{
    DRV(cuStreamQuery, hStream);
    DONE(cu(cudaStreamQuery((cudaStream_t)hStream)));
}

EXPORT CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    DRV(cuStreamWaitEvent, hStream, hEvent, Flags);
    DONE(cu(cudaStreamWaitEvent((cudaStream_t)hStream, (cudaEvent_t)hEvent, Flags)));
}

EXPORT CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
    DRV(cuEventCreate, phEvent, Flags);
    DONE(cu(cudaEventCreateWithFlags((cudaEvent_t *)phEvent, Flags)));
}

EXPORT CUresult cuEventRecord(CUevent hEvent, CUstream hStream)
{
    DRV(cuEventRecord, hEvent, hStream);
    DONE(cu(cudaEventRecord((cudaEvent_t)hEvent, (cudaStream_t)hStream)));
}

EXPORT CUresult cuEventSynchronize(CUevent hEvent)
{
    DRV(cuEventSynchronize, hEvent);
    DONE(cu(cudaEventSynchronize((cudaEvent_t)hEvent)));
}

EXPORT CUresult cuEventQuery(CUevent hEvent)
{
    DRV(cuEventQuery, hEvent);
    DONE(cu(cudaEventQuery((cudaEvent_t)hEvent)));
}

EXPORT CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    DRV(cuEventElapsedTime, pMilliseconds, hStart, hEnd);
    DONE(cu(cudaEventElapsedTime(pMilliseconds, (cudaEvent_t)hStart, (cudaEvent_t)hEnd)));
}

EXPORT CUresult cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    DRV(cuEventElapsedTime_v2, pMilliseconds, hStart, hEnd);
    DONE(cu(cudaEventElapsedTime(pMilliseconds, (cudaEvent_t)hStart, (cudaEvent_t)hEnd)));
}

EXPORT CUresult cuEventDestroy_v2(CUevent hEvent)
{
    DRV(cuEventDestroy_v2, hEvent);
    DONE(cu(cudaEventDestroy((cudaEvent_t)hEvent)));
}
