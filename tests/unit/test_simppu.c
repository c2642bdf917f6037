/* simppu as a program sees it: every runtime entry point the classic
 * cuda-samples (and their helper_cuda.h) call resolves in libcudart.so.13;
 * each call reaches CUPTI with the callback id of its own name; device work
 * never starts before the call that launched it, as CUPTI reports both, even
 * on a tool clock that is not CLOCK_MONOTONIC; managed and pool memory come
 * as MEMORY2 and MEMORY_POOL records.  Both libraries are opened with dlopen,
 * as the samples' own libcudart would be. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <dlfcn.h>
#include <time.h>

#include "test_util.h"

/* The runtime API that helper_cuda.h and the classic runtime samples call
 * (0_Introduction, 1_Utilities, 2_Concepts_and_Techniques, 3_CUDA_Features,
 * 5_Domain_Specific, 6_Performance), and what nvcc's host code calls. */
static const char *const sample_symbols[] = {
    /* nvcc's host code */
    "__cudaRegisterFatBinary",
    "__cudaRegisterFatBinaryEnd",
    "__cudaUnregisterFatBinary",
    "__cudaRegisterFunction",
    "__cudaRegisterVar",
    "__cudaRegisterManagedVar",
    "__cudaInitModule",
    "__cudaPushCallConfiguration",
    "__cudaPopCallConfiguration",
    "__cudaGetKernel",
    "__cudaLaunchKernel",
    /* devices */
    "cudaGetDeviceCount",
    "cudaGetDevice",
    "cudaSetDevice",
    "cudaInitDevice",
    "cudaGetDeviceProperties",
    "cudaDeviceGetAttribute",
    "cudaChooseDevice",
    "cudaDeviceGetPCIBusId",
    "cudaDeviceGetByPCIBusId",
    "cudaSetDeviceFlags",
    "cudaGetDeviceFlags",
    "cudaSetValidDevices",
    "cudaDeviceSynchronize",
    "cudaDeviceReset",
    "cudaDeviceSetLimit",
    "cudaDeviceGetLimit",
    "cudaDeviceSetCacheConfig",
    "cudaDeviceGetCacheConfig",
    "cudaDeviceSetSharedMemConfig",
    "cudaDeviceGetSharedMemConfig",
    "cudaDeviceGetStreamPriorityRange",
    "cudaCtxResetPersistingL2Cache",
    "cudaDriverGetVersion",
    "cudaRuntimeGetVersion",
    "cudaProfilerStart",
    "cudaProfilerStop",
    /* peers */
    "cudaDeviceCanAccessPeer",
    "cudaDeviceEnablePeerAccess",
    "cudaDeviceDisablePeerAccess",
    "cudaDeviceGetP2PAttribute",
    /* errors */
    "cudaGetLastError",
    "cudaPeekAtLastError",
    "cudaGetErrorString",
    "cudaGetErrorName",
    /* kernels */
    "cudaLaunchKernel",
    "cudaLaunchCooperativeKernel",
    "cudaLaunchKernelExC",
    "cudaLaunchHostFunc",
    "cudaFuncGetAttributes",
    "cudaFuncSetAttribute",
    "cudaFuncSetCacheConfig",
    "cudaFuncSetSharedMemConfig",
    "cudaFuncGetName",
    "cudaOccupancyMaxActiveBlocksPerMultiprocessor",
    "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
    "cudaOccupancyAvailableDynamicSMemPerBlock",
    "cudaOccupancyMaxPotentialClusterSize",
    "cudaOccupancyMaxActiveClusters",
    /* streams */
    "cudaStreamCreate",
    "cudaStreamCreateWithFlags",
    "cudaStreamCreateWithPriority",
    "cudaStreamDestroy",
    "cudaStreamSynchronize",
    "cudaStreamQuery",
    "cudaStreamWaitEvent",
    "cudaStreamAddCallback",
    "cudaStreamGetPriority",
    "cudaStreamGetFlags",
    "cudaStreamGetId",
    "cudaStreamGetDevice",
    "cudaStreamSetAttribute",
    "cudaStreamGetAttribute",
    "cudaStreamCopyAttributes",
    "cudaStreamAttachMemAsync",
    /* events */
    "cudaEventCreate",
    "cudaEventCreateWithFlags",
    "cudaEventDestroy",
    "cudaEventRecord",
    "cudaEventRecordWithFlags",
    "cudaEventSynchronize",
    "cudaEventQuery",
    "cudaEventElapsedTime",
    /* memory */
    "cudaMalloc",
    "cudaFree",
    "cudaMallocHost",
    "cudaHostAlloc",
    "cudaFreeHost",
    "cudaHostRegister",
    "cudaHostUnregister",
    "cudaHostGetDevicePointer",
    "cudaHostGetFlags",
    "cudaMallocManaged",
    "cudaMallocPitch",
    "cudaMalloc3D",
    "cudaMemGetInfo",
    "cudaPointerGetAttributes",
    "cudaMemPrefetchAsync",
    "cudaMemAdvise",
    "cudaMallocAsync",
    "cudaFreeAsync",
    "cudaMallocFromPoolAsync",
    "cudaMemPoolCreate",
    "cudaMemPoolDestroy",
    "cudaMemPoolSetAttribute",
    "cudaMemPoolGetAttribute",
    "cudaMemPoolTrimTo",
    "cudaMemPoolSetAccess",
    "cudaMemPoolGetAccess",
    "cudaDeviceGetDefaultMemPool",
    "cudaDeviceGetMemPool",
    "cudaDeviceSetMemPool",
    "cudaGetSymbolAddress",
    "cudaGetSymbolSize",
    /* copies and memsets */
    "cudaMemcpy",
    "cudaMemcpyAsync",
    "cudaMemcpyPeer",
    "cudaMemcpyPeerAsync",
    "cudaMemcpy2D",
    "cudaMemcpy2DAsync",
    "cudaMemcpy3D",
    "cudaMemcpy3DAsync",
    "cudaMemcpy3DPeer",
    "cudaMemcpy3DPeerAsync",
    "cudaMemcpyToSymbol",
    "cudaMemcpyFromSymbol",
    "cudaMemcpyToSymbolAsync",
    "cudaMemcpyFromSymbolAsync",
    "cudaMemset",
    "cudaMemsetAsync",
    "cudaMemset2D",
    "cudaMemset2DAsync",
    "cudaMemset3D",
    "cudaMemset3DAsync",
    /* arrays, textures, surfaces */
    "cudaCreateChannelDesc",
    "cudaMallocArray",
    "cudaMalloc3DArray",
    "cudaFreeArray",
    "cudaArrayGetInfo",
    "cudaGetChannelDesc",
    "cudaMemcpyToArray",
    "cudaMemcpyFromArray",
    "cudaMemcpy2DToArray",
    "cudaMemcpy2DFromArray",
    "cudaMemcpy2DToArrayAsync",
    "cudaMemcpy2DFromArrayAsync",
    "cudaMemcpy2DArrayToArray",
    "cudaCreateTextureObject",
    "cudaDestroyTextureObject",
    "cudaGetTextureObjectResourceDesc",
    "cudaGetTextureObjectTextureDesc",
    "cudaCreateSurfaceObject",
    "cudaDestroySurfaceObject",
    "cudaGetSurfaceObjectResourceDesc",
    /* stream capture */
    "cudaStreamBeginCapture",
    "cudaStreamBeginCaptureToGraph",
    "cudaStreamEndCapture",
    "cudaStreamIsCapturing",
    "cudaStreamGetCaptureInfo",
    "cudaStreamUpdateCaptureDependencies",
    "cudaThreadExchangeStreamCaptureMode",
    /* graphs */
    "cudaGraphCreate",
    "cudaGraphDestroy",
    "cudaGraphAddKernelNode",
    "cudaGraphAddMemcpyNode",
    "cudaGraphAddMemcpyNode1D",
    "cudaGraphAddMemsetNode",
    "cudaGraphAddHostNode",
    "cudaGraphAddEmptyNode",
    "cudaGraphAddChildGraphNode",
    "cudaGraphAddEventRecordNode",
    "cudaGraphAddEventWaitNode",
    "cudaGraphAddMemAllocNode",
    "cudaGraphAddMemFreeNode",
    "cudaGraphAddNode",
    "cudaGraphNodeSetParams",
    "cudaGraphAddDependencies",
    "cudaGraphRemoveDependencies",
    "cudaGraphClone",
    "cudaGraphNodeFindInClone",
    "cudaGraphGetNodes",
    "cudaGraphGetRootNodes",
    "cudaGraphGetEdges",
    "cudaGraphNodeGetType",
    "cudaGraphNodeGetDependencies",
    "cudaGraphNodeGetDependentNodes",
    "cudaGraphDestroyNode",
    "cudaGraphKernelNodeGetParams",
    "cudaGraphKernelNodeSetParams",
    "cudaGraphConditionalHandleCreate",
    "cudaGraphInstantiate",
    "cudaGraphInstantiateWithFlags",
    "cudaGraphInstantiateWithParams",
    "cudaGraphExecKernelNodeSetParams",
    "cudaGraphExecMemcpyNodeSetParams",
    "cudaGraphExecMemsetNodeSetParams",
    "cudaGraphExecHostNodeSetParams",
    "cudaGraphExecUpdate",
    "cudaGraphUpload",
    "cudaGraphLaunch",
    "cudaGraphExecDestroy",
    "cudaGraphDebugDotPrint",
    "cudaDeviceGetGraphMemAttribute",
    "cudaDeviceSetGraphMemAttribute",
    "cudaDeviceGraphMemTrim",
};

/* Entry points that take only pointers, integers and small structs: called
 * with every argument zero they fail early (or do nothing) and must still
 * show CUPTI the callback id of their own name. */
static const char *const zero_callable[] = {
    "cudaGetDeviceCount",
    "cudaGetDevice",
    "cudaSetDevice",
    "cudaInitDevice",
    "cudaGetDeviceProperties",
    "cudaDeviceGetAttribute",
    "cudaChooseDevice",
    "cudaDeviceGetPCIBusId",
    "cudaDeviceGetByPCIBusId",
    "cudaSetDeviceFlags",
    "cudaGetDeviceFlags",
    "cudaSetValidDevices",
    "cudaDeviceSynchronize",
    "cudaDeviceSetLimit",
    "cudaDeviceGetLimit",
    "cudaDeviceSetCacheConfig",
    "cudaDeviceGetCacheConfig",
    "cudaDeviceGetStreamPriorityRange",
    "cudaCtxResetPersistingL2Cache",
    "cudaDriverGetVersion",
    "cudaRuntimeGetVersion",
    "cudaProfilerStart",
    "cudaProfilerStop",
    "cudaDeviceCanAccessPeer",
    "cudaDeviceEnablePeerAccess",
    "cudaDeviceDisablePeerAccess",
    "cudaDeviceGetP2PAttribute",
    "cudaGetLastError",
    "cudaPeekAtLastError",
    "cudaLaunchKernel",
    "cudaLaunchCooperativeKernel",
    "cudaLaunchKernelExC",
    "cudaLaunchHostFunc",
    "cudaFuncGetAttributes",
    "cudaFuncSetAttribute",
    "cudaFuncSetCacheConfig",
    "cudaFuncGetName",
    "cudaOccupancyMaxActiveBlocksPerMultiprocessor",
    "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
    "cudaOccupancyAvailableDynamicSMemPerBlock",
    "cudaStreamCreate",
    "cudaStreamCreateWithFlags",
    "cudaStreamCreateWithPriority",
    "cudaStreamDestroy",
    "cudaStreamSynchronize",
    "cudaStreamQuery",
    "cudaStreamWaitEvent",
    "cudaStreamAddCallback",
    "cudaStreamGetPriority",
    "cudaStreamGetFlags",
    "cudaStreamGetId",
    "cudaStreamGetDevice",
    "cudaStreamSetAttribute",
    "cudaStreamGetAttribute",
    "cudaStreamAttachMemAsync",
    "cudaEventCreate",
    "cudaEventCreateWithFlags",
    "cudaEventDestroy",
    "cudaEventRecord",
    "cudaEventRecordWithFlags",
    "cudaEventSynchronize",
    "cudaEventQuery",
    "cudaEventElapsedTime",
    "cudaMalloc",
    "cudaFree",
    "cudaMallocHost",
    "cudaHostAlloc",
    "cudaFreeHost",
    "cudaHostRegister",
    "cudaHostUnregister",
    "cudaHostGetDevicePointer",
    "cudaHostGetFlags",
    "cudaMallocManaged",
    "cudaMallocPitch",
    "cudaMemGetInfo",
    "cudaPointerGetAttributes",
    "cudaMemPrefetchAsync",
    "cudaMemAdvise",
    "cudaMallocAsync",
    "cudaFreeAsync",
    "cudaMallocFromPoolAsync",
    "cudaMemPoolCreate",
    "cudaMemPoolDestroy",
    "cudaMemPoolSetAttribute",
    "cudaMemPoolGetAttribute",
    "cudaMemPoolTrimTo",
    "cudaMemPoolSetAccess",
    "cudaDeviceGetDefaultMemPool",
    "cudaDeviceGetMemPool",
    "cudaDeviceSetMemPool",
    "cudaGetSymbolAddress",
    "cudaMemcpy",
    "cudaMemcpyAsync",
    "cudaMemcpyPeer",
    "cudaMemcpy2D",
    "cudaMemcpy2DAsync",
    "cudaMemcpy3D",
    "cudaMemcpyToSymbol",
    "cudaMemcpyFromSymbol",
    "cudaMemset",
    "cudaMemsetAsync",
    "cudaMemset2D",
    "cudaStreamBeginCapture",
    "cudaStreamBeginCaptureToGraph",
    "cudaStreamEndCapture",
    "cudaStreamIsCapturing",
    "cudaStreamGetCaptureInfo",
    "cudaStreamUpdateCaptureDependencies",
    "cudaThreadExchangeStreamCaptureMode",
    "cudaGraphCreate",
    "cudaGraphDestroy",
    "cudaGraphAddKernelNode",
    "cudaGraphAddMemcpyNode",
    "cudaGraphAddMemcpyNode1D",
    "cudaGraphAddMemsetNode",
    "cudaGraphAddHostNode",
    "cudaGraphAddEmptyNode",
    "cudaGraphAddChildGraphNode",
    "cudaGraphAddEventRecordNode",
    "cudaGraphAddEventWaitNode",
    "cudaGraphAddMemAllocNode",
    "cudaGraphAddMemFreeNode",
    "cudaGraphAddNode",
    "cudaGraphAddDependencies",
    "cudaGraphClone",
    "cudaGraphGetNodes",
    "cudaGraphGetRootNodes",
    "cudaGraphNodeGetType",
    "cudaGraphConditionalHandleCreate",
    "cudaGraphInstantiate",
    "cudaGraphInstantiateWithFlags",
    "cudaGraphExecKernelNodeSetParams",
    "cudaGraphExecUpdate",
    "cudaGraphUpload",
    "cudaGraphLaunch",
    "cudaGraphExecDestroy",
    "cudaGraphDebugDotPrint",
    "cudaDeviceGetGraphMemAttribute",
    "cudaDeviceGraphMemTrim",
    "cudaMallocArray",
    "cudaFreeArray",
    "cudaArrayGetInfo",
    "cudaGetChannelDesc",
    "cudaMemcpyToArray",
    "cudaMemcpy2DToArray",
    "cudaMemcpy2DFromArray",
    "cudaCreateTextureObject",
    "cudaDestroyTextureObject",
    "cudaCreateSurfaceObject",
    "cudaDestroySurfaceObject",
};

static void *cudart, *cupti;

static void *sym(void *lib, const char *name)
{
    void *p = dlsym(lib, name);
    ck_assert_msg(p != NULL, "%s does not resolve: %s", name, dlerror());
    return p;
}

#define CUPTI(name) ((__typeof__(&name))sym(cupti, #name))
#define CUDA(name) ((__typeof__(&name))sym(cudart, #name))

static void open_simppu(void)
{
    cudart = dlopen(SIMPPU_CUDART_PATH, RTLD_NOW | RTLD_GLOBAL);
    ck_assert_msg(cudart != NULL, "%s", dlerror());
    cupti = dlopen(SIMPPU_CUPTI_PATH, RTLD_NOW | RTLD_GLOBAL);
    ck_assert_msg(cupti != NULL, "%s", dlerror());
}

START_TEST(every_sample_symbol_resolves)
{
    open_simppu();
    char missing[4096] = "";
    unsigned count = 0;
    for (size_t i = 0; i < sizeof sample_symbols / sizeof *sample_symbols; i++) {
        if (!dlsym(cudart, sample_symbols[i])) {
            strncat(missing, " ", sizeof missing - strlen(missing) - 1);
            strncat(missing, sample_symbols[i], sizeof missing - strlen(missing) - 1);
            count++;
        }
    }
    ck_assert_msg(count == 0, "%u missing:%s", count, missing);
    ck_assert_uint_ge(sizeof sample_symbols / sizeof *sample_symbols, 150);
}
END_TEST

/* ---- callbacks ----------------------------------------------------------------------------------
 */

static struct {
    int enters, exits;
    CUpti_CallbackId cbid;
    char function[128];
    int bad_site;
} seen;

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void *data)
{
    (void)userdata;
    if (domain != CUPTI_CB_DOMAIN_RUNTIME_API)
        return;
    const CUpti_CallbackData *d = data;
    if (d->callbackSite == CUPTI_API_ENTER) {
        seen.enters++;
        seen.cbid = cbid;
        snprintf(seen.function, sizeof seen.function, "%s", d->functionName);
    } else if (d->callbackSite == CUPTI_API_EXIT) {
        seen.exits++;
        seen.bad_site |= cbid != seen.cbid;
    }
}

typedef cudaError_t (*zero_args_fn)(long, long, long, long, long, long, long, long);

START_TEST(each_call_has_its_callback_id)
{
    open_simppu();
    CUpti_SubscriberHandle subscriber;
    ck_assert_int_eq(CUPTI(cuptiSubscribe)(&subscriber, on_callback, NULL), CUPTI_SUCCESS);
    ck_assert_int_eq(CUPTI(cuptiEnableDomain)(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API),
                     CUPTI_SUCCESS);
    __typeof__(&cuptiGetCallbackName) callback_name = CUPTI(cuptiGetCallbackName);
    for (size_t i = 0; i < sizeof zero_callable / sizeof *zero_callable; i++) {
        const char *name = zero_callable[i];
        zero_args_fn fn = (zero_args_fn)sym(cudart, name);
        memset(&seen, 0, sizeof seen);
        fn(0, 0, 0, 0, 0, 0, 0, 0);
        ck_assert_msg(seen.enters == 1 && seen.exits == 1, "%s: %d enter, %d exit callbacks", name,
                      seen.enters, seen.exits);
        ck_assert_msg(!seen.bad_site, "%s: exit with another cbid", name);
        const char *cupti_name = NULL;
        ck_assert_int_eq(callback_name(CUPTI_CB_DOMAIN_RUNTIME_API, seen.cbid, &cupti_name),
                         CUPTI_SUCCESS);
        /* "cudaMalloc_v3020": the name, then its version */
        size_t n = strlen(name);
        ck_assert_msg(!strncmp(cupti_name, name, n) && !strncmp(cupti_name + n, "_v", 2),
                      "%s reports cbid %u (%s)", name, seen.cbid, cupti_name);
        ck_assert_str_eq(seen.function, name);
    }
}
END_TEST

/* ---- activity records ---------------------------------------------------------------------------
 */

#define MAX_RECORDS 4096
static struct {
    uint8_t storage[MAX_RECORDS][256];
    size_t sizes[MAX_RECORDS];
    int count;
} got;

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *size = 1 << 20;
    *buffer = aligned_alloc(8, *size);
    *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream, uint8_t *buffer,
                                      size_t size, size_t valid)
{
    (void)context;
    (void)stream;
    (void)size;
    CUpti_Activity *r = NULL;
    __typeof__(&cuptiActivityGetNextRecord) next = CUPTI(cuptiActivityGetNextRecord);
    while (next(buffer, valid, &r) == CUPTI_SUCCESS && got.count < MAX_RECORDS) {
        memcpy(got.storage[got.count], r, 256);
        got.count++;
    }
    free(buffer);
}

static const void *find(CUpti_ActivityKind kind, int after, int *index)
{
    for (int i = after; i < got.count; i++) {
        if (((const CUpti_Activity *)(const void *)got.storage[i])->kind == kind) {
            *index = i;
            return got.storage[i];
        }
    }
    return NULL;
}

static const CUpti_ActivityAPI *api_record(uint32_t correlation)
{
    for (int i = 0, at; find(CUPTI_ACTIVITY_KIND_RUNTIME, i, &at); i = at + 1) {
        const CUpti_ActivityAPI *a = (const void *)got.storage[at];
        if (a->correlationId == correlation)
            return a;
    }
    return NULL;
}

/* A tool on CLOCK_MONOTONIC whose clock takes a varying while to read (as
 * on a loaded virtual machine): CUPTI must not put work before the start of
 * its launch call as the tool itself timed it. */
static uint64_t monotonic_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t CUPTIAPI slow_monotonic_clock(void)
{
    static __thread uint32_t seed = 12345;
    seed = seed * 1103515245u + 12345u;
    uint64_t until = monotonic_now() + (seed >> 16) % 4000;
    while (monotonic_now() < until)
        ;
    return monotonic_now();
}

#define MAX_CORRELATION 4096
static uint64_t enter_times[MAX_CORRELATION]; /* the tool's own time at each call's entry */

static void CUPTIAPI time_entries(void *userdata, CUpti_CallbackDomain domain,
                                  CUpti_CallbackId cbid, const void *data)
{
    (void)userdata;
    (void)cbid;
    const CUpti_CallbackData *d = data;
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && d->callbackSite == CUPTI_API_ENTER &&
        d->correlationId < MAX_CORRELATION)
        enter_times[d->correlationId] = monotonic_now();
}

/* A tool clock that is not CLOCK_MONOTONIC: ahead of it and a little fast. */
static uint64_t CUPTIAPI skewed_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double ns = (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
    return (uint64_t)(ns * 1.0002 + 5e9);
}

static void start_activity(CUpti_TimestampCallbackFunc clock)
{
    open_simppu();
    if (clock)
        ck_assert_int_eq(CUPTI(cuptiActivityRegisterTimestampCallback)(clock), CUPTI_SUCCESS);
    ck_assert_int_eq(CUPTI(cuptiActivityRegisterCallbacks)(buffer_requested, buffer_completed),
                     CUPTI_SUCCESS);
    const CUpti_ActivityKind kinds[] = {
        CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
        CUPTI_ACTIVITY_KIND_MEMCPY,  CUPTI_ACTIVITY_KIND_MEMSET,
        CUPTI_ACTIVITY_KIND_MEMORY2, CUPTI_ACTIVITY_KIND_MEMORY_POOL};
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
        ck_assert_int_eq(CUPTI(cuptiActivityEnable)(kinds[i]), CUPTI_SUCCESS);
}

static void fake_kernel(void) {}

/* nvcc's registration of a kernel (crt/host_runtime.h declares it for C++ only) */
typedef void (*register_function_fn)(void **handle, const char *host_fun, char *device_fun,
                                     const char *device_name, int thread_limit, uint3 *tid,
                                     uint3 *bid, dim3 *block, dim3 *grid, int *warp_size);

/* 400 kernels and 100 copies, in bursts 20 ms apart (across CUPTI's
 * re-anchoring of a tool clock, every 50 ms), then a flush. */
static void launch_work(void)
{
    static char device_name[] = "_Z11fake_kernelv";
    static int handle_storage;
    void *handle = &handle_storage;
    register_function_fn register_function =
        (register_function_fn)sym(cudart, "__cudaRegisterFunction");
    register_function(&handle, (const char *)fake_kernel, device_name, device_name, -1, NULL, NULL,
                      NULL, NULL, NULL);
    void *device = NULL, *host = malloc(1 << 16);
    memset(host, 1, 1 << 16);
    ck_assert_int_eq(CUDA(cudaMalloc)(&device, 1 << 16), cudaSuccess);
    __typeof__(&cudaLaunchKernel) launch = CUDA(cudaLaunchKernel);
    __typeof__(&cudaMemcpyAsync) copy = CUDA(cudaMemcpyAsync);
    for (int i = 0; i < 400; i++) {
        dim3 grid = {1, 1, 1}, block = {32, 1, 1};
        ck_assert_int_eq(launch((const void *)fake_kernel, grid, block, NULL, 0, 0), cudaSuccess);
        if (i % 4 == 0)
            ck_assert_int_eq(copy(device, host, 1 << 16, cudaMemcpyHostToDevice, 0), cudaSuccess);
        if (i % 50 == 0) {
            struct timespec pause = {0, 20000000};
            nanosleep(&pause, NULL);
        }
    }
    ck_assert_int_eq(CUDA(cudaDeviceSynchronize)(), cudaSuccess);
    ck_assert_int_eq(CUPTI(cuptiActivityFlushAll)(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
    free(host);
}

/* Each kernel and copy starts no earlier than its launch call as CUPTI
 * reports it, and (given `entered`) than the tool's own time of its entry. */
static void check_work_after_launch(const uint64_t *entered)
{
    int kernels = 0, copies = 0;
    for (int i = 0; i < got.count; i++) {
        const CUpti_Activity *r = (const void *)got.storage[i];
        uint64_t start;
        uint32_t correlation;
        if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
            const CUpti_ActivityKernel10 *k = (const void *)r;
            start = k->start;
            correlation = k->correlationId;
            ck_assert_uint_ge(k->end, k->start);
            kernels++;
        } else if (r->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
            const CUpti_ActivityMemcpy6 *m = (const void *)r;
            start = m->start;
            correlation = m->correlationId;
            copies++;
        } else {
            continue;
        }
        const CUpti_ActivityAPI *a = api_record(correlation);
        ck_assert_ptr_nonnull(a);
        ck_assert_msg(start >= a->start, "work starts %lld ns before its launch call",
                      (long long)(a->start - start));
        if (entered) {
            ck_assert_uint_lt(correlation, MAX_CORRELATION);
            ck_assert_msg(start >= entered[correlation],
                          "work starts %lld ns before the tool saw its launch call",
                          (long long)(entered[correlation] - start));
        }
    }
    ck_assert_int_eq(kernels, 400);
    ck_assert_int_eq(copies, 100);
}

START_TEST(device_work_starts_after_its_launch)
{
    start_activity(slow_monotonic_clock);
    CUpti_SubscriberHandle subscriber;
    ck_assert_int_eq(CUPTI(cuptiSubscribe)(&subscriber, time_entries, NULL), CUPTI_SUCCESS);
    ck_assert_int_eq(CUPTI(cuptiEnableDomain)(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API),
                     CUPTI_SUCCESS);
    launch_work();
    check_work_after_launch(enter_times);
}
END_TEST

START_TEST(device_work_starts_after_its_launch_on_another_clock)
{
    start_activity(skewed_clock);
    launch_work();
    check_work_after_launch(NULL);
}
END_TEST

START_TEST(managed_and_pool_memory_records)
{
    start_activity(NULL);
    void *managed = NULL, *pooled = NULL, *own_pooled = NULL;
    ck_assert_int_eq(CUDA(cudaMallocManaged)(&managed, 4096, cudaMemAttachGlobal), cudaSuccess);
    ck_assert_int_eq(CUDA(cudaMallocAsync)(&pooled, 8192, 0), cudaSuccess);
    struct cudaMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    cudaMemPool_t pool;
    ck_assert_int_eq(CUDA(cudaMemPoolCreate)(&pool, &props), cudaSuccess);
    ck_assert_int_eq(CUDA(cudaMallocFromPoolAsync)(&own_pooled, 12288, pool, 0), cudaSuccess);
    ck_assert_int_eq(CUDA(cudaFreeAsync)(own_pooled, 0), cudaSuccess);
    ck_assert_int_eq(CUDA(cudaFreeAsync)(pooled, 0), cudaSuccess);
    ck_assert_int_eq(CUDA(cudaMemPoolTrimTo)(pool, 0), cudaSuccess);
    ck_assert_int_eq(CUDA(cudaMemPoolDestroy)(pool), cudaSuccess);
    ck_assert_int_eq(CUDA(cudaFree)(managed), cudaSuccess);
    ck_assert_int_eq(CUDA(cudaMemPoolDestroy)(pool), cudaErrorInvalidValue);
    ck_assert_int_eq(CUPTI(cuptiActivityFlushAll)(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);

    int managed_records = 0, pool_allocations = 0;
    for (int i = 0, at; find(CUPTI_ACTIVITY_KIND_MEMORY2, i, &at); i = at + 1) {
        const CUpti_ActivityMemory4 *m = (const void *)got.storage[at];
        if (m->memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_MANAGED) {
            ck_assert_uint_eq(m->address, (uintptr_t)managed);
            ck_assert_uint_eq(m->bytes, 4096);
            ck_assert_uint_eq(m->isAsync, 0);
            managed_records++;
        }
        if (m->memoryPoolConfig.memoryPoolType == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL &&
            m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION) {
            ck_assert_uint_eq(m->memoryKind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
            ck_assert_uint_eq(m->isAsync, 1);
            ck_assert_uint_ne(m->streamId, CUPTI_INVALID_STREAM_ID);
            ck_assert_uint_ge(m->memoryPoolConfig.pool.size, m->bytes);
            pool_allocations++;
        }
    }
    ck_assert_int_eq(managed_records, 2); /* allocation and release */
    ck_assert_int_eq(pool_allocations, 2);
    int created = 0, trimmed = 0, destroyed = 0;
    for (int i = 0, at; find(CUPTI_ACTIVITY_KIND_MEMORY_POOL, i, &at); i = at + 1) {
        const CUpti_ActivityMemoryPool3 *p = (const void *)got.storage[at];
        ck_assert_uint_eq(p->memoryPoolType, CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL);
        created += p->memoryPoolOperationType == CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED;
        trimmed += p->memoryPoolOperationType == CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED;
        destroyed +=
            p->memoryPoolOperationType == CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED;
        ck_assert_ptr_nonnull(api_record(p->correlationId));
    }
    ck_assert_int_eq(created, 2); /* the device's default pool and the program's */
    ck_assert_int_eq(trimmed, 1);
    ck_assert_int_eq(destroyed, 1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("simppu");
    TCase *tc = tcase_create("simppu");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, every_sample_symbol_resolves);
    tcase_add_test(tc, each_call_has_its_callback_id);
    tcase_add_test(tc, device_work_starts_after_its_launch);
    tcase_add_test(tc, device_work_starts_after_its_launch_on_another_clock);
    tcase_add_test(tc, managed_and_pool_memory_records);
    suite_add_tcase(s, tc);
    return test_run(&s, 1);
}
