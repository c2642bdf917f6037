/* simppu libcudart.so.13: the subset of the CUDA runtime that asys's tests
 * and demos use, on a simulated device.  Binaries built by nvcc with
 * -cudart shared run on it unchanged.
 *
 * Device memory is host memory (copies and memsets really move the bytes;
 * kernels do not run code).  Each stream has a worker thread that takes its
 * operations in order and gives each a simulated start and end: a kernel
 * lasts SIMPPU_KERNEL_NS (or SIMPPU_KERNEL_TIMES=name=ns,...), a copy its
 * size over a simulated bandwidth.  An operation starts when it was enqueued,
 * when the previous one on its stream ended, and when what it waits for
 * ended (events, the legacy default stream's implicit synchronization, graph
 * dependencies).  The host sees an operation complete only once its
 * simulated end has passed.
 *
 * Like the driver, it loads CUDA_INJECTION64_PATH on first use and calls
 * InitializeInjection; libcupti.so.13 then installs hooks to receive API
 * callbacks and activity records.  A test fixture: never linked into asys. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <cupti.h> /* includes the generated API parameter structs */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "simppu_internal.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_DEVICES 16
#define MAX_STREAMS 256
#define MAX_EVENTS 4096
#define MAX_DEPS 64
#define END_RING 4096
#define SLEEP_AHEAD_NS 200000 /* workers only sleep when this far ahead of real time */

/* ---- objects -------------------------------------------------------------------- */

struct sim_kernel {
    const void *host_fun;
    char *name; /* mangled */
    uint64_t duration_ns;
    struct sim_kernel *next;
};

enum op_kind { OP_KERNEL, OP_MEMCPY, OP_MEMSET, OP_EVENT_RECORD, OP_WAIT, OP_GRAPH, OP_HOST };

struct sim_stream;
struct sim_event;
struct sim_exec;

struct dependency {
    struct sim_stream *stream;
    uint64_t seq;
};

struct sim_node;

struct sim_op {
    enum op_kind kind;
    struct sim_op *next;
    uint64_t seq;
    uint64_t enqueue_ns;
    uint32_t correlation;
    int ndeps;
    struct dependency deps[MAX_DEPS];
    /* kernel */
    const struct sim_kernel *kernel;
    dim3 grid, block;
    size_t shared_memory;
    /* memcpy / memset */
    uint64_t bytes;
    uint8_t copy_kind, src_kind, dst_kind, is_async;
    int src_device, dst_device; /* peer copies */
    uint32_t memset_value;
    uint16_t memory_kind;
    /* event record */
    struct sim_event *event;
    uint64_t sync_id;
    /* graph launch */
    struct sim_exec *exec;
    /* host function */
    cudaHostFn_t host_fn;
    void *host_data;
};

struct sim_context {
    uint32_t id;
    int device;
    struct sim_stream *legacy;
};

struct sim_stream {
    uint32_t id;
    struct sim_context *ctx;
    unsigned flags;
    int priority;
    int legacy;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct sim_op *head, *tail;
    uint64_t next_seq; /* seq of the next op */
    uint64_t done_seq; /* every op up to this one has its end decided */
    uint64_t end_ns[END_RING];
    uint64_t last_end;
    int worker_started;
    pthread_t worker;
    /* stream capture */
    struct sim_graph *capture;
    struct sim_node **tail_nodes;
    int tail_count;
};

struct sim_event {
    uint32_t id;
    unsigned flags;
    struct sim_stream *stream; /* last record */
    uint64_t seq;
    uint64_t sync_id;
    int recorded;
    /* recorded during a capture: the nodes a wait depends on */
    struct sim_graph *capture;
    struct sim_node **nodes;
    int node_count;
};

struct sim_node {
    uint64_t id;
    CUgraphNodeType type;
    struct sim_node **deps;
    int ndeps;
    struct sim_node *original; /* for clones */
    const struct sim_kernel *kernel;
    dim3 grid, block;
    size_t shared_memory;
    uint64_t bytes;
    uint8_t copy_kind, src_kind, dst_kind;
    int src_device, dst_device;
    uint32_t memset_value;
    cudaHostFn_t host_fn; /* host nodes */
    void *host_data;
    /* simulated times of the current launch */
    uint64_t start, end;
};

struct sim_graph {
    uint32_t id;
    struct sim_node **nodes;
    int count, cap;
};

struct sim_exec {
    uint32_t id;
    struct sim_graph *source;
    struct sim_graph *graph; /* clones of the source's nodes */
};

struct sim_device {
    int physical;
    uint64_t memory_total;
    uint64_t memory_used;
    struct sim_context *ctx;
};

/* An allocation the runtime knows: device memory or pinned host memory. */
struct allocation {
    uintptr_t base;
    size_t size;
    int device; /* -1: pinned host memory */
    struct allocation *next;
};

/* ---- global state ------------------------------------------------------------------ */

static struct {
    pthread_once_t once;
    int injection_state; /* 0 not loaded, 1 loading, 2 done */
    pthread_mutex_t lock;
    int device_count;
    struct sim_device devices[MAX_DEVICES];
    struct sim_stream *streams[MAX_STREAMS];
    int stream_count;
    struct sim_event *events[MAX_EVENTS];
    int event_count;
    struct sim_kernel *kernels;
    struct allocation *allocations;
    uint32_t next_id; /* contexts, streams, events, graphs, execs share one counter */
    uint64_t next_node_id;
    uint32_t next_correlation;
    uint64_t default_kernel_ns;
    char *kernel_times;
    double pageable_gbps, pinned_gbps, device_gbps, memset_gbps;
    const struct simppu_hooks *hooks;
} rt = {.once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER};

static __thread int current_device;
static __thread cudaError_t last_error;
static __thread struct {
    dim3 grid, block;
    size_t shared_memory;
    cudaStream_t stream;
    int pending;
} launch_config;
static __thread uint32_t current_correlation; /* of the API call in progress */

EXPORT uint64_t simppu_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

static uint32_t new_id(void)
{
    return __atomic_add_fetch(&rt.next_id, 1, __ATOMIC_RELAXED);
}

/* ---- hooks --------------------------------------------------------------------------- */

EXPORT void simppu_install_hooks(const struct simppu_hooks *hooks)
{
    __atomic_store_n(&rt.hooks, hooks, __ATOMIC_RELEASE);
}

static const struct simppu_hooks *hooks(void)
{
    return __atomic_load_n(&rt.hooks, __ATOMIC_ACQUIRE);
}

static int wants(CUpti_ActivityKind kind)
{
    const struct simppu_hooks *h = hooks();
    return h && h->activity_enabled(kind);
}

static uint64_t ts(uint64_t ns)
{
    const struct simppu_hooks *h = hooks();
    return h ? h->timestamp(ns) : ns;
}

static void emit(const void *record, size_t size)
{
    const struct simppu_hooks *h = hooks();
    if (h)
        h->activity(record, size);
}

static void resource(CUpti_CallbackId cbid, const void *data)
{
    const struct simppu_hooks *h = hooks();
    if (h)
        h->resource(cbid, data);
}

/* Graph callbacks carry a CUpti_GraphData in the resource data's descriptor. */
static void graph_resource(CUpti_CallbackId cbid, CUpti_GraphData *graph)
{
    CUpti_ResourceData data;
    memset(&data, 0, sizeof data);
    data.resourceDescriptor = graph;
    resource(cbid, &data);
}

/* ---- initialization ----------------------------------------------------------------------- */

static uint64_t env_u64(const char *name, uint64_t fallback)
{
    const char *v = getenv(name);
    return v && *v ? strtoull(v, NULL, 10) : fallback;
}

static double env_double(const char *name, double fallback)
{
    const char *v = getenv(name);
    return v && *v ? strtod(v, NULL) : fallback;
}

/* As the driver does in cuInit: load the injection library and call it. */
static void load_injection(void)
{
    const char *path = getenv("CUDA_INJECTION64_PATH");
    if (!path || !*path)
        return;
    void *lib = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!lib) {
        fprintf(stderr, "simppu: cannot load CUDA_INJECTION64_PATH '%s': %s\n", path, dlerror());
        return;
    }
    int (*init)(void) = (int (*)(void))dlsym(lib, "InitializeInjection");
    if (init)
        init();
}

static void init_runtime(void)
{
    int physical = (int)env_u64("SIMPPU_DEVICES", 1);
    if (physical < 1)
        physical = 1;
    if (physical > MAX_DEVICES)
        physical = MAX_DEVICES;
    /* CUDA_VISIBLE_DEVICES renumbers: ordinal -> physical index */
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    if (visible) {
        char *copy = strdup(visible), *save = NULL;
        for (char *tok = strtok_r(copy, ",", &save); tok && rt.device_count < MAX_DEVICES;
             tok = strtok_r(NULL, ",", &save)) {
            int p = atoi(tok);
            if (p >= 0 && p < physical)
                rt.devices[rt.device_count++].physical = p;
        }
        free(copy);
    } else {
        for (int i = 0; i < physical; i++)
            rt.devices[rt.device_count++].physical = i;
    }
    for (int i = 0; i < rt.device_count; i++)
        rt.devices[i].memory_total = env_u64("SIMPPU_MEMORY_BYTES", 16ull << 30);
    rt.default_kernel_ns = env_u64("SIMPPU_KERNEL_NS", 20000);
    const char *times = getenv("SIMPPU_KERNEL_TIMES");
    rt.kernel_times = times ? strdup(times) : NULL;
    rt.pinned_gbps = env_double("SIMPPU_PINNED_GBPS", 20.0);
    rt.pageable_gbps = env_double("SIMPPU_PAGEABLE_GBPS", 6.0);
    rt.device_gbps = env_double("SIMPPU_DEVICE_GBPS", 400.0);
    rt.memset_gbps = env_double("SIMPPU_MEMSET_GBPS", 800.0);
}

static __thread int loading_injection;

/* The runtime's state, then the injection library: other threads wait for
 * the tool to be set up (as cuInit does), the loading thread may call back in. */
static void ensure_init(void)
{
    pthread_once(&rt.once, init_runtime);
    if (__atomic_load_n(&rt.injection_state, __ATOMIC_ACQUIRE) == 2 || loading_injection)
        return;
    int expected = 0;
    if (__atomic_compare_exchange_n(&rt.injection_state, &expected, 1, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
        loading_injection = 1;
        load_injection();
        loading_injection = 0;
        __atomic_store_n(&rt.injection_state, 2, __ATOMIC_RELEASE);
        return;
    }
    while (__atomic_load_n(&rt.injection_state, __ATOMIC_ACQUIRE) != 2)
        sched_yield();
}

/* ---- API calls: callbacks at entry and exit ------------------------------------------------- */

struct api_call {
    CUpti_CallbackId cbid;
    const char *name;
    const void *params;
    uint64_t correlation_data;
    cudaError_t result;
    uint32_t saved_correlation;
    uint64_t start_ns;
    CUpti_CallbackData data;
};

static struct sim_context *context_of(int device);

static void api_enter(struct api_call *c)
{
    ensure_init();
    c->saved_correlation = current_correlation;
    memset(&c->data, 0, sizeof c->data);
    c->data.correlationId = __atomic_add_fetch(&rt.next_correlation, 1, __ATOMIC_RELAXED);
    current_correlation = c->data.correlationId;
    c->start_ns = simppu_now_ns();
    const struct simppu_hooks *h = hooks();
    if (!h)
        return;
    c->data.callbackSite = CUPTI_API_ENTER;
    c->data.functionName = c->name;
    c->data.functionParams = c->params;
    c->data.functionReturnValue = &c->result;
    c->data.correlationData = &c->correlation_data;
    struct sim_context *ctx =
        current_device < rt.device_count ? rt.devices[current_device].ctx : NULL;
    c->data.context = (CUcontext)ctx;
    c->data.contextUid = ctx ? ctx->id : 0;
    h->api(c->cbid, &c->data);
}

static cudaError_t api_exit(struct api_call *c, cudaError_t result)
{
    c->result = result;
    if (result != cudaSuccess && result != cudaErrorNotReady)
        last_error = result;
    const struct simppu_hooks *h = hooks();
    if (h) {
        c->data.callbackSite = CUPTI_API_EXIT;
        h->api(c->cbid, &c->data);
    }
    if (wants(CUPTI_ACTIVITY_KIND_RUNTIME)) {
        CUpti_ActivityAPI r;
        memset(&r, 0, sizeof r);
        r.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
        r.cbid = c->cbid;
        r.start = ts(c->start_ns);
        r.end = ts(simppu_now_ns());
        r.processId = (uint32_t)getpid();
        r.threadId = (uint32_t)syscall(SYS_gettid);
        r.correlationId = c->data.correlationId;
        r.returnValue = (uint32_t)result;
        emit(&r, sizeof r);
    }
    current_correlation = c->saved_correlation;
    return result;
}

#define API(fn_name, version, params_ptr)                                                          \
    struct api_call call_ = {CUPTI_RUNTIME_TRACE_CBID_##fn_name##_##version,                       \
                             #fn_name,                                                             \
                             params_ptr,                                                           \
                             0,                                                                    \
                             cudaSuccess,                                                          \
                             0,                                                                    \
                             0,                                                                    \
                             {0}};                                                                 \
    api_enter(&call_)
#define RETURN(result) return api_exit(&call_, (result))

/* ---- devices, contexts
 * --------------------------------------------------------------------------- */

static struct sim_stream *stream_new(struct sim_context *ctx, unsigned flags, int priority,
                                     int legacy);

static struct sim_context *context_of(int device)
{
    struct sim_device *d = &rt.devices[device];
    pthread_mutex_lock(&rt.lock);
    struct sim_context *ctx = d->ctx;
    int created = 0;
    if (!ctx) {
        ctx = calloc(1, sizeof *ctx);
        ctx->id = new_id();
        ctx->device = device;
        d->ctx = ctx;
        created = 1;
    }
    pthread_mutex_unlock(&rt.lock);
    if (created) {
        ctx->legacy = stream_new(ctx, 0, 0, 1);
        CUpti_ResourceData data = {.context = (CUcontext)ctx};
        resource(CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &data);
        if (wants(CUPTI_ACTIVITY_KIND_CONTEXT)) {
            CUpti_ActivityContext3 r;
            memset(&r, 0, sizeof r);
            r.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
            r.contextId = ctx->id;
            r.deviceId = (uint32_t)device;
            r.computeApiKind = CUPTI_ACTIVITY_COMPUTE_API_CUDA;
            r.nullStreamId = (uint16_t)ctx->legacy->id;
            emit(&r, sizeof r);
        }
    }
    return ctx;
}

static void emit_device(int device)
{
    CUpti_ActivityDevice5 r;
    memset(&r, 0, sizeof r);
    r.kind = CUPTI_ACTIVITY_KIND_DEVICE;
    r.globalMemoryBandwidth = (uint64_t)(rt.device_gbps * 1e6); /* KB/s */
    r.globalMemorySize = rt.devices[device].memory_total;
    r.numThreadsPerWarp = 32;
    r.coreClockRate = 1500000;
    r.numMemcpyEngines = 2;
    r.numMultiprocessors = 64;
    r.maxThreadsPerBlock = 1024;
    r.maxBlockDimX = 1024;
    r.maxBlockDimY = 1024;
    r.maxBlockDimZ = 64;
    r.maxGridDimX = 0x7fffffff;
    r.maxGridDimY = 65535;
    r.maxGridDimZ = 65535;
    r.computeCapabilityMajor = 9;
    r.computeCapabilityMinor = 0;
    r.id = (uint32_t)device;
    int physical = rt.devices[device].physical;
    memcpy(r.uuid.bytes, "simppu-device-", 14);
    r.uuid.bytes[15] = (char)physical;
    static char names[MAX_DEVICES][32];
    snprintf(names[device], sizeof names[device], "simppu PPU %d", physical);
    r.name = names[device];
    r.isCudaVisible = 1;
    emit(&r, sizeof r);
}

EXPORT void simppu_report_inventory(void)
{
    ensure_init();
    if (wants(CUPTI_ACTIVITY_KIND_DEVICE))
        for (int i = 0; i < rt.device_count; i++)
            emit_device(i);
}

EXPORT uint32_t simppu_context_id(const void *context)
{
    return context ? ((const struct sim_context *)context)->id : 0;
}

EXPORT uint32_t simppu_context_device(const void *context)
{
    return context ? (uint32_t)((const struct sim_context *)context)->device : 0;
}

EXPORT uint32_t simppu_stream_id(const void *stream)
{
    return stream ? ((const struct sim_stream *)stream)->id : 0;
}

EXPORT uint32_t simppu_graph_id(const void *graph)
{
    return graph ? ((const struct sim_graph *)graph)->id : 0;
}

EXPORT uint64_t simppu_graph_node_id(const void *node)
{
    return node ? ((const struct sim_node *)node)->id : 0;
}

EXPORT uint32_t simppu_graph_exec_id(const void *exec)
{
    return exec ? ((const struct sim_exec *)exec)->id : 0;
}

static int valid_device(int device)
{
    ensure_init();
    return device >= 0 && device < rt.device_count;
}

EXPORT cudaError_t cudaGetDeviceCount(int *count)
{
    API(cudaGetDeviceCount, v3020, NULL);
    if (!count)
        RETURN(cudaErrorInvalidValue);
    *count = rt.device_count;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaGetDevice(int *device)
{
    API(cudaGetDevice, v3020, NULL);
    if (!device)
        RETURN(cudaErrorInvalidValue);
    *device = current_device;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaSetDevice(int device)
{
    API(cudaSetDevice, v3020, NULL);
    if (!valid_device(device))
        RETURN(cudaErrorInvalidDevice);
    current_device = device;
    context_of(device);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    API(cudaGetDeviceProperties, v12000, NULL);
    if (!prop)
        RETURN(cudaErrorInvalidValue);
    if (!valid_device(device))
        RETURN(cudaErrorInvalidDevice);
    memset(prop, 0, sizeof *prop);
    int physical = rt.devices[device].physical;
    snprintf(prop->name, sizeof prop->name, "simppu PPU %d", physical);
    memcpy(prop->uuid.bytes, "simppu-device-", 14);
    prop->uuid.bytes[15] = (char)physical;
    prop->totalGlobalMem = rt.devices[device].memory_total;
    prop->sharedMemPerBlock = 48 * 1024;
    prop->regsPerBlock = 65536;
    prop->warpSize = 32;
    prop->maxThreadsPerBlock = 1024;
    prop->maxThreadsDim[0] = prop->maxThreadsDim[1] = 1024;
    prop->maxThreadsDim[2] = 64;
    prop->maxGridSize[0] = 0x7fffffff;
    prop->maxGridSize[1] = prop->maxGridSize[2] = 65535;
    prop->major = 9;
    prop->minor = 0;
    prop->multiProcessorCount = 64;
    prop->pciBusID = 0x10 + physical;
    prop->pciDeviceID = 0;
    prop->pciDomainID = 0;
    prop->asyncEngineCount = 2;
    prop->unifiedAddressing = 1;
    prop->concurrentKernels = 1;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaDriverGetVersion(int *version)
{
    API(cudaDriverGetVersion, v3020, NULL);
    if (!version)
        RETURN(cudaErrorInvalidValue);
    *version = CUDART_VERSION;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaRuntimeGetVersion(int *version)
{
    API(cudaRuntimeGetVersion, v3020, NULL);
    if (!version)
        RETURN(cudaErrorInvalidValue);
    *version = CUDART_VERSION;
    RETURN(cudaSuccess);
}

/* ---- errors --------------------------------------------------------------------------------- */

static const struct {
    cudaError_t code;
    const char *name;
    const char *text;
} error_table[] = {
    {cudaSuccess, "cudaSuccess", "no error"},
    {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
    {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
    {cudaErrorInitializationError, "cudaErrorInitializationError", "initialization error"},
    {cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration",
     "invalid configuration argument"},
    {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
    {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
    {cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
    {cudaErrorInvalidDeviceFunction, "cudaErrorInvalidDeviceFunction", "invalid device function"},
    {cudaErrorStreamCaptureUnsupported, "cudaErrorStreamCaptureUnsupported",
     "operation not permitted when stream is capturing"},
    {cudaErrorStreamCaptureInvalidated, "cudaErrorStreamCaptureInvalidated",
     "operation failed due to a previous error during capture"},
    {cudaErrorIllegalState, "cudaErrorIllegalState", "the resource is not in a valid state"},
    {cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection",
     "invalid copy direction for memcpy"},
};

EXPORT const char *cudaGetErrorString(cudaError_t error)
{
    for (size_t i = 0; i < sizeof error_table / sizeof *error_table; i++)
        if (error_table[i].code == error)
            return error_table[i].text;
    return "unrecognized error code";
}

EXPORT const char *cudaGetErrorName(cudaError_t error)
{
    for (size_t i = 0; i < sizeof error_table / sizeof *error_table; i++)
        if (error_table[i].code == error)
            return error_table[i].name;
    return "cudaErrorUnknown";
}

EXPORT cudaError_t cudaGetLastError(void)
{
    API(cudaGetLastError, v3020, NULL);
    cudaError_t e = last_error;
    last_error = cudaSuccess;
    call_.result = e;
    const struct simppu_hooks *h = hooks();
    if (h) { /* the API itself succeeds; it reports the error */
        call_.data.callbackSite = CUPTI_API_EXIT;
        h->api(call_.cbid, &call_.data);
    }
    current_correlation = call_.saved_correlation;
    return e;
}

EXPORT cudaError_t cudaPeekAtLastError(void)
{
    API(cudaPeekAtLastError, v3020, NULL);
    cudaError_t e = last_error;
    call_.result = e;
    const struct simppu_hooks *h = hooks();
    if (h) {
        call_.data.callbackSite = CUPTI_API_EXIT;
        h->api(call_.cbid, &call_.data);
    }
    current_correlation = call_.saved_correlation;
    return e;
}

/* ---- memory -----------------------------------------------------------------------------------
 */

static void track(void *p, size_t size, int device)
{
    struct allocation *a = malloc(sizeof *a);
    a->base = (uintptr_t)p;
    a->size = size;
    a->device = device;
    pthread_mutex_lock(&rt.lock);
    a->next = rt.allocations;
    rt.allocations = a;
    pthread_mutex_unlock(&rt.lock);
}

/* Removes the allocation at `p`; its device (-1 pinned), or -2 when unknown. */
static int untrack(void *p, size_t *size)
{
    int device = -2;
    pthread_mutex_lock(&rt.lock);
    for (struct allocation **pp = &rt.allocations; *pp; pp = &(*pp)->next) {
        if ((*pp)->base == (uintptr_t)p) {
            struct allocation *a = *pp;
            device = a->device;
            *size = a->size;
            *pp = a->next;
            free(a);
            break;
        }
    }
    pthread_mutex_unlock(&rt.lock);
    return device;
}

/* What `p` points into: CUPTI memory kind and device. */
static uint8_t memory_kind_of(const void *p, int *device)
{
    uint8_t kind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    *device = -1;
    pthread_mutex_lock(&rt.lock);
    for (struct allocation *a = rt.allocations; a; a = a->next) {
        if ((uintptr_t)p >= a->base && (uintptr_t)p < a->base + a->size) {
            kind = a->device >= 0 ? CUPTI_ACTIVITY_MEMORY_KIND_DEVICE
                                  : CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
            *device = a->device;
            break;
        }
    }
    pthread_mutex_unlock(&rt.lock);
    return kind;
}

static void emit_memory(CUpti_ActivityMemoryOperationType op, CUpti_ActivityMemoryKind kind,
                        const void *address, size_t bytes, int device)
{
    if (!wants(CUPTI_ACTIVITY_KIND_MEMORY2))
        return;
    CUpti_ActivityMemory4 r;
    memset(&r, 0, sizeof r);
    r.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    r.memoryOperationType = op;
    r.memoryKind = kind;
    r.correlationId = current_correlation;
    r.address = (uint64_t)(uintptr_t)address;
    r.bytes = bytes;
    r.timestamp = ts(simppu_now_ns());
    r.processId = (uint32_t)getpid();
    r.deviceId = device >= 0 ? (uint32_t)device : 0;
    struct sim_context *ctx = device >= 0 ? rt.devices[device].ctx : NULL;
    r.contextId = ctx ? ctx->id : 0;
    emit(&r, sizeof r);
}

EXPORT cudaError_t cudaMalloc(void **ptr, size_t size)
{
    struct cudaMalloc_v3020_params_st params = {ptr, size};
    API(cudaMalloc, v3020, &params);
    if (!ptr)
        RETURN(cudaErrorInvalidValue);
    struct sim_device *d = &rt.devices[current_device];
    context_of(current_device);
    pthread_mutex_lock(&rt.lock);
    int fits = d->memory_used + size <= d->memory_total;
    if (fits)
        d->memory_used += size;
    pthread_mutex_unlock(&rt.lock);
    void *p = fits ? aligned_alloc(256, (size + 255) & ~(size_t)255) : NULL;
    if (!p) {
        if (fits) {
            pthread_mutex_lock(&rt.lock);
            d->memory_used -= size;
            pthread_mutex_unlock(&rt.lock);
        }
        *ptr = NULL;
        RETURN(cudaErrorMemoryAllocation);
    }
    track(p, size, current_device);
    *ptr = p;
    emit_memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                p, size, current_device);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaFree(void *ptr)
{
    struct cudaFree_v3020_params_st params = {ptr};
    API(cudaFree, v3020, &params);
    if (!ptr)
        RETURN(cudaSuccess);
    size_t size = 0;
    int device = untrack(ptr, &size);
    if (device < 0)
        RETURN(cudaErrorInvalidValue);
    pthread_mutex_lock(&rt.lock);
    rt.devices[device].memory_used -= size;
    pthread_mutex_unlock(&rt.lock);
    emit_memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                ptr, size, device);
    free(ptr);
    RETURN(cudaSuccess);
}

static cudaError_t host_alloc(void **ptr, size_t size)
{
    if (!ptr)
        return cudaErrorInvalidValue;
    void *p = aligned_alloc(4096, (size + 4095) & ~(size_t)4095);
    if (!p)
        return cudaErrorMemoryAllocation;
    track(p, size, -1);
    *ptr = p;
    emit_memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
                p, size, -1);
    return cudaSuccess;
}

EXPORT cudaError_t cudaMallocHost(void **ptr, size_t size)
{
    struct cudaMallocHost_v3020_params_st params = {ptr, size};
    API(cudaMallocHost, v3020, &params);
    RETURN(host_alloc(ptr, size));
}

EXPORT cudaError_t cudaHostAlloc(void **ptr, size_t size, unsigned int flags)
{
    struct cudaHostAlloc_v3020_params_st params = {ptr, size, flags};
    API(cudaHostAlloc, v3020, &params);
    RETURN(host_alloc(ptr, size));
}

EXPORT cudaError_t cudaFreeHost(void *ptr)
{
    struct cudaFreeHost_v3020_params_st params = {ptr};
    API(cudaFreeHost, v3020, &params);
    if (!ptr)
        RETURN(cudaSuccess);
    size_t size = 0;
    if (untrack(ptr, &size) != -1)
        RETURN(cudaErrorInvalidValue);
    emit_memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
                ptr, size, -1);
    free(ptr);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total)
{
    API(cudaMemGetInfo, v3020, NULL);
    if (!free_bytes || !total)
        RETURN(cudaErrorInvalidValue);
    struct sim_device *d = &rt.devices[current_device];
    pthread_mutex_lock(&rt.lock);
    *total = d->memory_total;
    *free_bytes = d->memory_total - d->memory_used;
    pthread_mutex_unlock(&rt.lock);
    RETURN(cudaSuccess);
}

/* ---- streams and their workers -----------------------------------------------------------------
 */

static int stream_registered(struct sim_stream *s)
{
    int found = 0;
    pthread_mutex_lock(&rt.lock);
    for (int i = 0; i < rt.stream_count; i++)
        found |= rt.streams[i] == s;
    pthread_mutex_unlock(&rt.lock);
    return found;
}

/* The calling thread's default stream (cudaStreamPerThread): created on first
 * use, blocking (it synchronizes with the legacy stream, not with others), and
 * like CUDA's never reported as a created stream. */
static struct sim_stream *per_thread_stream(void)
{
    static __thread struct sim_stream *mine[MAX_DEVICES];
    if (!mine[current_device])
        mine[current_device] = stream_new(context_of(current_device), 0, 0, 0);
    return mine[current_device];
}

/* A user's stream handle; NULL when it names nothing. */
static struct sim_stream *resolve_stream(cudaStream_t handle)
{
    if (handle == cudaStreamPerThread)
        return per_thread_stream();
    if (!handle || handle == cudaStreamLegacy)
        return context_of(current_device)->legacy;
    struct sim_stream *s = (struct sim_stream *)handle;
    return stream_registered(s) ? s : NULL;
}

static uint64_t end_of(struct sim_stream *s, uint64_t seq)
{
    return s->end_ns[seq % END_RING];
}

/* Blocks until op `seq` of `s` has its end decided; returns that end. */
static uint64_t wait_decided(struct sim_stream *s, uint64_t seq)
{
    pthread_mutex_lock(&s->lock);
    while (s->done_seq < seq)
        pthread_cond_wait(&s->cond, &s->lock);
    uint64_t end = end_of(s, seq);
    pthread_mutex_unlock(&s->lock);
    return end;
}

static void fill_graph_and_emit(struct sim_op *op, struct sim_stream *s, uint64_t start);

static uint64_t kernel_duration(const struct sim_kernel *k)
{
    return k ? k->duration_ns : rt.default_kernel_ns;
}

static uint64_t copy_duration(uint64_t bytes, uint8_t copy_kind, uint8_t src, uint8_t dst)
{
    double gbps = rt.device_gbps;
    if (copy_kind != CUPTI_ACTIVITY_MEMCPY_KIND_DTOD) {
        int pinned =
            src == CUPTI_ACTIVITY_MEMORY_KIND_PINNED || dst == CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
        gbps = pinned ? rt.pinned_gbps : rt.pageable_gbps;
    }
    return 2000 + (uint64_t)((double)bytes / gbps); /* bytes / (GB/s) = ns */
}

/* With graph-level tracing, a graph launch is one GraphTrace record: its
 * nodes' own records are not produced (CUPTI's overhead saving). */
static int graph_level(uint64_t graph_node)
{
    return graph_node && wants(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
}

static void emit_kernel(const struct sim_op *op, struct sim_stream *s, uint64_t start, uint64_t end,
                        uint64_t graph_node, uint32_t graph_id, const struct sim_kernel *kernel,
                        dim3 grid, dim3 block, size_t shared)
{
    if ((!wants(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) && !wants(CUPTI_ACTIVITY_KIND_KERNEL)) ||
        graph_level(graph_node))
        return;
    CUpti_ActivityKernel10 r;
    memset(&r, 0, sizeof r);
    r.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    r.registersPerThread = 32;
    r.start = ts(start);
    r.end = ts(end);
    r.completed = r.end;
    r.queued = ts(op->enqueue_ns);
    r.submitted = ts(op->enqueue_ns);
    r.deviceId = (uint32_t)s->ctx->device;
    r.contextId = s->ctx->id;
    r.streamId = s->id;
    r.gridX = (int32_t)grid.x;
    r.gridY = (int32_t)grid.y;
    r.gridZ = (int32_t)grid.z;
    r.blockX = (int32_t)block.x;
    r.blockY = (int32_t)block.y;
    r.blockZ = (int32_t)block.z;
    r.staticSharedMemory = 0;
    r.dynamicSharedMemory = (int32_t)shared;
    r.correlationId = op->correlation;
    r.name = kernel ? kernel->name : "unknown_kernel";
    r.graphNodeId = graph_node;
    r.graphId = graph_id;
    r.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
    emit(&r, sizeof r);
}

/* A peer copy between devices: CUPTI reports those as MEMCPY2 records. */
static void emit_peer_memcpy(const struct sim_op *op, struct sim_stream *s, uint64_t start,
                             uint64_t end, uint64_t bytes, int src_device, int dst_device,
                             int async, uint64_t graph_node, uint32_t graph_id)
{
    if (!wants(CUPTI_ACTIVITY_KIND_MEMCPY2) || graph_level(graph_node))
        return;
    CUpti_ActivityMemcpyPtoP4 r;
    memset(&r, 0, sizeof r);
    r.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
    r.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
    r.srcKind = r.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    r.flags = async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
    r.bytes = bytes;
    r.start = ts(start);
    r.end = ts(end);
    r.deviceId = (uint32_t)s->ctx->device;
    r.contextId = s->ctx->id;
    r.streamId = s->id;
    r.srcDeviceId = (uint32_t)src_device;
    r.dstDeviceId = (uint32_t)dst_device;
    r.srcContextId = context_of(src_device)->id;
    r.dstContextId = context_of(dst_device)->id;
    r.correlationId = op->correlation;
    r.graphNodeId = graph_node;
    r.graphId = graph_id;
    emit(&r, sizeof r);
}

static void emit_memcpy(const struct sim_op *op, struct sim_stream *s, uint64_t start, uint64_t end,
                        uint64_t bytes, uint8_t copy_kind, uint8_t src, uint8_t dst, int async,
                        uint64_t graph_node, uint32_t graph_id)
{
    if (!wants(CUPTI_ACTIVITY_KIND_MEMCPY) || graph_level(graph_node))
        return;
    CUpti_ActivityMemcpy6 r;
    memset(&r, 0, sizeof r);
    r.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    r.copyKind = copy_kind;
    r.srcKind = src;
    r.dstKind = dst;
    r.flags = async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
    r.bytes = bytes;
    r.start = ts(start);
    r.end = ts(end);
    r.deviceId = (uint32_t)s->ctx->device;
    r.contextId = s->ctx->id;
    r.streamId = s->id;
    r.correlationId = op->correlation;
    r.graphNodeId = graph_node;
    r.graphId = graph_id;
    r.copyCount = 1;
    emit(&r, sizeof r);
}

static void emit_memset(const struct sim_op *op, struct sim_stream *s, uint64_t start, uint64_t end,
                        uint64_t bytes, uint32_t value, int async, uint64_t graph_node,
                        uint32_t graph_id)
{
    if (!wants(CUPTI_ACTIVITY_KIND_MEMSET) || graph_level(graph_node))
        return;
    CUpti_ActivityMemset4 r;
    memset(&r, 0, sizeof r);
    r.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    r.value = value;
    r.bytes = bytes;
    r.start = ts(start);
    r.end = ts(end);
    r.deviceId = (uint32_t)s->ctx->device;
    r.contextId = s->ctx->id;
    r.streamId = s->id;
    r.correlationId = op->correlation;
    r.flags = async ? CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC : 0;
    r.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    r.graphNodeId = graph_node;
    r.graphId = graph_id;
    emit(&r, sizeof r);
}

/* A host function, called once the simulated clock reaches its start. */
static void run_host_fn(cudaHostFn_t fn, void *data, uint64_t start)
{
    if (start > simppu_now_ns())
        sleep_until(start);
    if (fn)
        fn(data);
}

/* Decides when `op` runs and reports it; returns its end. */
static uint64_t run_op(struct sim_stream *s, struct sim_op *op)
{
    uint64_t start = op->enqueue_ns > s->last_end ? op->enqueue_ns : s->last_end;
    for (int i = 0; i < op->ndeps; i++) {
        uint64_t dep_end = wait_decided(op->deps[i].stream, op->deps[i].seq);
        if (dep_end > start)
            start = dep_end;
    }
    uint64_t end = start;
    switch (op->kind) {
    case OP_KERNEL:
        end = start + kernel_duration(op->kernel);
        emit_kernel(op, s, start, end, 0, 0, op->kernel, op->grid, op->block, op->shared_memory);
        break;
    case OP_MEMCPY:
        end = start + copy_duration(op->bytes, op->copy_kind, op->src_kind, op->dst_kind);
        if (op->copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_PTOP)
            emit_peer_memcpy(op, s, start, end, op->bytes, op->src_device, op->dst_device,
                             op->is_async, 0, 0);
        else
            emit_memcpy(op, s, start, end, op->bytes, op->copy_kind, op->src_kind, op->dst_kind,
                        op->is_async, 0, 0);
        break;
    case OP_MEMSET:
        end = start + 1000 + (uint64_t)((double)op->bytes / rt.memset_gbps);
        emit_memset(op, s, start, end, op->bytes, op->memset_value, op->is_async, 0, 0);
        break;
    case OP_EVENT_RECORD:
        if (wants(CUPTI_ACTIVITY_KIND_CUDA_EVENT)) {
            CUpti_ActivityCudaEvent2 r;
            memset(&r, 0, sizeof r);
            r.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
            r.correlationId = op->correlation;
            r.contextId = s->ctx->id;
            r.streamId = s->id;
            r.eventId = op->event->id;
            r.deviceId = (uint32_t)s->ctx->device;
            r.deviceTimestamp = ts(start);
            r.cudaEventSyncId = op->sync_id;
            emit(&r, sizeof r);
        }
        break;
    case OP_WAIT:
        break;
    case OP_HOST: /* no device work and no record: the function runs in stream order */
        run_host_fn(op->host_fn, op->host_data, start);
        break;
    case OP_GRAPH:
        fill_graph_and_emit(op, s, start);
        end = start;
        for (int i = 0; i < op->exec->graph->count; i++)
            if (op->exec->graph->nodes[i]->end > end)
                end = op->exec->graph->nodes[i]->end;
        if (wants(CUPTI_ACTIVITY_KIND_GRAPH_TRACE)) {
            CUpti_ActivityGraphTrace2 r;
            memset(&r, 0, sizeof r);
            r.kind = CUPTI_ACTIVITY_KIND_GRAPH_TRACE;
            r.correlationId = op->correlation;
            r.start = ts(start);
            r.end = ts(end);
            r.deviceId = r.endDeviceId = (uint32_t)s->ctx->device;
            r.graphId = op->exec->source->id;
            r.contextId = r.endContextId = s->ctx->id;
            r.streamId = s->id;
            emit(&r, sizeof r);
        }
        break;
    }
    return end;
}

static void *stream_worker(void *arg)
{
    struct sim_stream *s = arg;
    for (;;) {
        pthread_mutex_lock(&s->lock);
        while (!s->head)
            pthread_cond_wait(&s->cond, &s->lock);
        struct sim_op *op = s->head;
        pthread_mutex_unlock(&s->lock);

        uint64_t end = run_op(s, op);
        /* runs no further ahead of real time than SLEEP_AHEAD_NS */
        uint64_t now = simppu_now_ns();
        if (end > now + SLEEP_AHEAD_NS)
            sleep_until(end - SLEEP_AHEAD_NS);

        pthread_mutex_lock(&s->lock);
        s->head = op->next;
        if (!s->head)
            s->tail = NULL;
        s->end_ns[op->seq % END_RING] = end;
        s->last_end = end;
        s->done_seq = op->seq;
        pthread_cond_broadcast(&s->cond);
        pthread_mutex_unlock(&s->lock);
        free(op);
    }
    return NULL;
}

static struct sim_stream *stream_new(struct sim_context *ctx, unsigned flags, int priority,
                                     int legacy)
{
    struct sim_stream *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->id = new_id();
    s->ctx = ctx;
    s->flags = flags;
    s->priority = priority;
    s->legacy = legacy;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->cond, NULL);
    pthread_mutex_lock(&rt.lock);
    if (rt.stream_count < MAX_STREAMS)
        rt.streams[rt.stream_count++] = s;
    pthread_mutex_unlock(&rt.lock);
    CUpti_ResourceData data = {.context = (CUcontext)ctx};
    data.resourceHandle.stream = (CUstream)s;
    resource(CUPTI_CBID_RESOURCE_STREAM_CREATED, &data);
    return s;
}

/* The legacy default stream waits for every blocking stream of its context,
 * and blocking streams wait for it (CUDA's implicit synchronization). */
static void add_implicit_dependencies(struct sim_stream *s, struct sim_op *op)
{
    if (s->flags & cudaStreamNonBlocking)
        return;
    struct sim_stream *legacy = s->ctx->legacy;
    if (!s->legacy) {
        pthread_mutex_lock(&legacy->lock);
        uint64_t last = legacy->next_seq;
        pthread_mutex_unlock(&legacy->lock);
        if (last > 0 && op->ndeps < MAX_DEPS)
            op->deps[op->ndeps++] = (struct dependency){legacy, last};
        return;
    }
    pthread_mutex_lock(&rt.lock);
    for (int i = 0; i < rt.stream_count; i++) {
        struct sim_stream *other = rt.streams[i];
        if (other == s || other->ctx != s->ctx || (other->flags & cudaStreamNonBlocking))
            continue;
        pthread_mutex_lock(&other->lock);
        uint64_t last = other->next_seq;
        pthread_mutex_unlock(&other->lock);
        if (last > 0 && op->ndeps < MAX_DEPS)
            op->deps[op->ndeps++] = (struct dependency){other, last};
    }
    pthread_mutex_unlock(&rt.lock);
}

static struct sim_op *op_new(enum op_kind kind)
{
    struct sim_op *op = calloc(1, sizeof *op);
    op->kind = kind;
    op->enqueue_ns = simppu_now_ns();
    op->correlation = current_correlation;
    return op;
}

/* Queues `op` on `s`; returns its seq. */
static uint64_t enqueue(struct sim_stream *s, struct sim_op *op)
{
    if (op->kind != OP_WAIT)
        add_implicit_dependencies(s, op);
    pthread_mutex_lock(&s->lock);
    op->seq = ++s->next_seq;
    if (s->tail)
        s->tail->next = op;
    else
        s->head = op;
    s->tail = op;
    if (!s->worker_started) {
        s->worker_started = 1;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_create(&s->worker, &attr, stream_worker, s);
        pthread_attr_destroy(&attr);
    }
    pthread_cond_broadcast(&s->cond);
    uint64_t seq = op->seq;
    pthread_mutex_unlock(&s->lock);
    return seq;
}

/* Host-side wait: op `seq` of `s` decided, and its simulated end passed. */
static void host_wait(struct sim_stream *s, uint64_t seq)
{
    if (seq == 0)
        return;
    uint64_t end = wait_decided(s, seq);
    if (end > simppu_now_ns())
        sleep_until(end);
}

static void host_wait_stream(struct sim_stream *s)
{
    pthread_mutex_lock(&s->lock);
    uint64_t last = s->next_seq;
    pthread_mutex_unlock(&s->lock);
    host_wait(s, last);
}

static void emit_sync(CUpti_ActivitySynchronizationType type, uint64_t start, struct sim_stream *s,
                      struct sim_event *e, uint64_t sync_id, struct sim_context *ctx)
{
    if (!wants(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION))
        return;
    CUpti_ActivitySynchronization2 r;
    memset(&r, 0, sizeof r);
    r.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    r.type = type;
    r.start = ts(start);
    r.end = ts(simppu_now_ns());
    r.correlationId = current_correlation;
    r.contextId = ctx ? ctx->id : (s ? s->ctx->id : 0);
    r.streamId = s ? s->id : 0xffffffffu;
    r.cudaEventId = e ? e->id : 0xffffffffu;
    r.cudaEventSyncId = e ? sync_id : 0xffffffffffffffffull;
    emit(&r, sizeof r);
}

static cudaError_t stream_create(cudaStream_t *stream, unsigned int flags, int priority)
{
    if (!stream)
        return cudaErrorInvalidValue;
    struct sim_stream *s = stream_new(context_of(current_device), flags, priority, 0);
    if (!s)
        return cudaErrorMemoryAllocation;
    if (wants(CUPTI_ACTIVITY_KIND_STREAM)) {
        CUpti_ActivityStream r;
        memset(&r, 0, sizeof r);
        r.kind = CUPTI_ACTIVITY_KIND_STREAM;
        r.contextId = s->ctx->id;
        r.streamId = s->id;
        r.priority = (uint32_t)priority;
        r.flag = (flags & cudaStreamNonBlocking) ? CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NON_BLOCKING
                                                 : CUPTI_ACTIVITY_STREAM_CREATE_FLAG_DEFAULT;
        r.correlationId = current_correlation;
        emit(&r, sizeof r);
    }
    *stream = (cudaStream_t)s;
    return cudaSuccess;
}

EXPORT cudaError_t cudaStreamCreateWithPriority(cudaStream_t *stream, unsigned int flags,
                                                int priority)
{
    API(cudaStreamCreateWithPriority, v5050, NULL);
    RETURN(stream_create(stream, flags, priority));
}

EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags)
{
    API(cudaStreamCreateWithFlags, v5000, NULL);
    RETURN(stream_create(stream, flags, 0));
}

EXPORT cudaError_t cudaStreamCreate(cudaStream_t *stream)
{
    API(cudaStreamCreate, v3020, NULL);
    RETURN(stream_create(stream, cudaStreamDefault, 0));
}

EXPORT cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    API(cudaStreamDestroy, v5050, NULL);
    struct sim_stream *s = resolve_stream(stream);
    if (!s || s->legacy)
        RETURN(cudaErrorInvalidResourceHandle);
    /* pending work still completes; the worker lives on (a test fixture) */
    pthread_mutex_lock(&rt.lock);
    for (int i = 0; i < rt.stream_count; i++)
        if (rt.streams[i] == s)
            rt.streams[i] = rt.streams[--rt.stream_count];
    pthread_mutex_unlock(&rt.lock);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    API(cudaStreamSynchronize, v3020, NULL);
    struct sim_stream *s = resolve_stream(stream);
    if (!s)
        RETURN(cudaErrorInvalidResourceHandle);
    uint64_t start = simppu_now_ns();
    host_wait_stream(s);
    emit_sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, start, s, NULL, 0, NULL);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaStreamQuery(cudaStream_t stream)
{
    API(cudaStreamQuery, v3020, NULL);
    struct sim_stream *s = resolve_stream(stream);
    if (!s)
        RETURN(cudaErrorInvalidResourceHandle);
    pthread_mutex_lock(&s->lock);
    int done = s->done_seq == s->next_seq && (!s->next_seq || s->last_end <= simppu_now_ns());
    pthread_mutex_unlock(&s->lock);
    RETURN(done ? cudaSuccess : cudaErrorNotReady);
}

/* Waits until every stream of the context has finished its work. */
static void context_drain(struct sim_context *ctx)
{
    struct sim_stream *list[MAX_STREAMS];
    int n = 0;
    pthread_mutex_lock(&rt.lock);
    for (int i = 0; i < rt.stream_count; i++)
        if (rt.streams[i]->ctx == ctx)
            list[n++] = rt.streams[i];
    pthread_mutex_unlock(&rt.lock);
    for (int i = 0; i < n; i++)
        host_wait_stream(list[i]);
}

EXPORT cudaError_t cudaDeviceSynchronize(void)
{
    API(cudaDeviceSynchronize, v3020, NULL);
    struct sim_context *ctx = context_of(current_device);
    uint64_t start = simppu_now_ns();
    context_drain(ctx);
    emit_sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, start, NULL, NULL, 0, ctx);
    RETURN(cudaSuccess);
}

/* Destroys the current device's context: its work finishes, tools hear of it
 * (CUPTI flushes there), its streams and memory are gone; the next call makes
 * a new context. */
EXPORT cudaError_t cudaDeviceReset(void)
{
    API(cudaDeviceReset, v3020, NULL);
    struct sim_device *d = &rt.devices[current_device];
    struct sim_context *ctx = d->ctx;
    if (!ctx)
        RETURN(cudaSuccess);
    context_drain(ctx);
    CUpti_ResourceData data = {.context = (CUcontext)ctx};
    resource(CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, &data);
    pthread_mutex_lock(&rt.lock);
    int kept = 0;
    for (int i = 0; i < rt.stream_count; i++)
        if (rt.streams[i]->ctx != ctx)
            rt.streams[kept++] = rt.streams[i];
    rt.stream_count = kept; /* their handles are invalid now; workers stay idle */
    for (struct allocation **pp = &rt.allocations; *pp;) {
        struct allocation *a = *pp;
        if (a->device == current_device) {
            *pp = a->next;
            free((void *)a->base);
            free(a);
        } else {
            pp = &a->next;
        }
    }
    d->memory_used = 0;
    d->ctx = NULL;
    pthread_mutex_unlock(&rt.lock);
    RETURN(cudaSuccess);
}

/* ---- stream capture and graphs ------------------------------------------------------------------
 */

static struct sim_graph *graph_new(void)
{
    struct sim_graph *g = calloc(1, sizeof *g);
    g->id = new_id();
    CUpti_GraphData data;
    memset(&data, 0, sizeof data);
    data.graph = (CUgraph)g;
    graph_resource(CUPTI_CBID_RESOURCE_GRAPH_CREATED, &data);
    return g;
}

static struct sim_node *node_add(struct sim_graph *g, CUgraphNodeType type, struct sim_node **deps,
                                 int ndeps, struct sim_node *original)
{
    struct sim_node *n = calloc(1, sizeof *n);
    n->id = __atomic_add_fetch(&rt.next_node_id, 1, __ATOMIC_RELAXED);
    n->type = type;
    n->original = original;
    if (ndeps) {
        n->deps = malloc((size_t)ndeps * sizeof *n->deps);
        memcpy(n->deps, deps, (size_t)ndeps * sizeof *deps);
        n->ndeps = ndeps;
    }
    if (g->count == g->cap) {
        g->cap = g->cap ? g->cap * 2 : 16;
        g->nodes = realloc(g->nodes, (size_t)g->cap * sizeof *g->nodes);
    }
    g->nodes[g->count++] = n;
    CUpti_GraphData data;
    memset(&data, 0, sizeof data);
    data.graph = (CUgraph)g;
    data.node = (CUgraphNode)n;
    data.nodeType = type;
    if (original) {
        data.originalNode = (CUgraphNode)original;
        graph_resource(CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED, &data);
    } else {
        graph_resource(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, &data);
    }
    for (int i = 0; i < ndeps; i++) {
        data.dependency = (CUgraphNode)deps[i];
        graph_resource(CUPTI_CBID_RESOURCE_GRAPHNODE_DEPENDENCY_CREATED, &data);
    }
    return n;
}

/* During capture, an operation becomes a node after the stream's current tail. */
static struct sim_node *capture_node(struct sim_stream *s, CUgraphNodeType type)
{
    struct sim_node *n = node_add(s->capture, type, s->tail_nodes, s->tail_count, NULL);
    s->tail_nodes = realloc(s->tail_nodes, sizeof *s->tail_nodes);
    s->tail_nodes[0] = n;
    s->tail_count = 1;
    return n;
}

EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
    (void)mode;
    API(cudaStreamBeginCapture, v10000, NULL);
    struct sim_stream *s = resolve_stream(stream);
    if (!s)
        RETURN(cudaErrorInvalidResourceHandle);
    if (s->legacy)
        RETURN(cudaErrorStreamCaptureUnsupported);
    if (s->capture)
        RETURN(cudaErrorIllegalState);
    s->capture = graph_new();
    s->tail_count = 0;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *graph)
{
    API(cudaStreamEndCapture, v10000, NULL);
    struct sim_stream *s = resolve_stream(stream);
    if (!s || !graph)
        RETURN(cudaErrorInvalidValue);
    if (!s->capture)
        RETURN(cudaErrorIllegalState);
    struct sim_graph *g = s->capture;
    /* every stream pulled into this capture (through events) ends with it */
    pthread_mutex_lock(&rt.lock);
    for (int i = 0; i < rt.stream_count; i++) {
        if (rt.streams[i]->capture == g) {
            rt.streams[i]->capture = NULL;
            rt.streams[i]->tail_count = 0;
        }
    }
    pthread_mutex_unlock(&rt.lock);
    *graph = (cudaGraph_t)g;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *status)
{
    API(cudaStreamIsCapturing, v10000, NULL);
    struct sim_stream *s = resolve_stream(stream);
    if (!s || !status)
        RETURN(cudaErrorInvalidValue);
    *status = s->capture ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph,
                                        unsigned long long flags)
{
    (void)flags;
    API(cudaGraphInstantiate, v12000, NULL);
    struct sim_graph *g = (struct sim_graph *)graph;
    if (!exec || !g)
        RETURN(cudaErrorInvalidValue);
    struct sim_exec *x = calloc(1, sizeof *x);
    x->id = new_id();
    x->source = g;
    x->graph = calloc(1, sizeof *x->graph);
    x->graph->id = g->id;
    /* clones keep the order (dependencies come first) and the links */
    for (int i = 0; i < g->count; i++) {
        struct sim_node *o = g->nodes[i];
        struct sim_node *deps[MAX_DEPS];
        int nd = 0;
        for (int d = 0; d < o->ndeps && nd < MAX_DEPS; d++)
            for (int j = 0; j < i; j++)
                if (g->nodes[j] == o->deps[d])
                    deps[nd++] = x->graph->nodes[j];
        struct sim_node *c = node_add(x->graph, o->type, deps, nd, o);
        c->kernel = o->kernel;
        c->grid = o->grid;
        c->block = o->block;
        c->shared_memory = o->shared_memory;
        c->bytes = o->bytes;
        c->copy_kind = o->copy_kind;
        c->src_kind = o->src_kind;
        c->dst_kind = o->dst_kind;
        c->src_device = o->src_device;
        c->dst_device = o->dst_device;
        c->memset_value = o->memset_value;
        c->host_fn = o->host_fn;
        c->host_data = o->host_data;
    }
    CUpti_GraphData data;
    memset(&data, 0, sizeof data);
    data.graph = (CUgraph)x->graph;
    data.originalGraph = (CUgraph)g;
    data.graphExec = (CUgraphExec)x;
    graph_resource(CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED, &data);
    *exec = (cudaGraphExec_t)x;
    RETURN(cudaSuccess);
}

/* A graph launch: nodes start when the launch starts and their dependencies end;
 * independent branches overlap, as on a device. */
static void fill_graph_and_emit(struct sim_op *op, struct sim_stream *s, uint64_t start)
{
    struct sim_graph *g = op->exec->graph;
    uint32_t graph_id = op->exec->source->id;
    for (int i = 0; i < g->count; i++) {
        struct sim_node *n = g->nodes[i];
        n->start = start;
        for (int d = 0; d < n->ndeps; d++)
            if (n->deps[d]->end > n->start)
                n->start = n->deps[d]->end;
        switch (n->type) {
        case CU_GRAPH_NODE_TYPE_KERNEL:
            n->end = n->start + kernel_duration(n->kernel);
            emit_kernel(op, s, n->start, n->end, n->id, graph_id, n->kernel, n->grid, n->block,
                        n->shared_memory);
            break;
        case CU_GRAPH_NODE_TYPE_MEMCPY:
            n->end = n->start + copy_duration(n->bytes, n->copy_kind, n->src_kind, n->dst_kind);
            if (n->copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_PTOP)
                emit_peer_memcpy(op, s, n->start, n->end, n->bytes, n->src_device, n->dst_device, 1,
                                 n->id, graph_id);
            else
                emit_memcpy(op, s, n->start, n->end, n->bytes, n->copy_kind, n->src_kind,
                            n->dst_kind, 1, n->id, graph_id);
            break;
        case CU_GRAPH_NODE_TYPE_MEMSET:
            n->end = n->start + 1000 + (uint64_t)((double)n->bytes / rt.memset_gbps);
            emit_memset(op, s, n->start, n->end, n->bytes, n->memset_value, 1, n->id, graph_id);
            break;
        case CU_GRAPH_NODE_TYPE_HOST:
            n->end = n->start;
            run_host_fn(n->host_fn, n->host_data, n->start);
            break;
        default:
            n->end = n->start;
        }
    }
}

EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream)
{
    struct cudaGraphLaunch_v10000_params_st params = {exec, stream};
    API(cudaGraphLaunch, v10000, &params);
    struct sim_exec *x = (struct sim_exec *)exec;
    struct sim_stream *s = resolve_stream(stream);
    if (!x)
        RETURN(cudaErrorInvalidValue);
    if (!s)
        RETURN(cudaErrorInvalidResourceHandle);
    struct sim_op *op = op_new(OP_GRAPH);
    op->exec = x;
    enqueue(s, op);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec)
{
    API(cudaGraphExecDestroy, v10000, NULL);
    RETURN(exec ? cudaSuccess : cudaErrorInvalidValue); /* kept: launched work may still use it */
}

EXPORT cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
    API(cudaGraphDestroy, v10000, NULL);
    RETURN(graph ? cudaSuccess : cudaErrorInvalidValue);
}

/* ---- copies and memsets ------------------------------------------------------------------------
 */

static uint8_t copy_kind_of(uint8_t src, uint8_t dst)
{
    int src_dev = src == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
        dst_dev = dst == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    if (src_dev && dst_dev)
        return CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
    if (dst_dev)
        return CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    if (src_dev)
        return CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    return CUPTI_ACTIVITY_MEMCPY_KIND_HTOH;
}

static cudaError_t memcpy_common(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                                 struct sim_stream *s, int async)
{
    if (!s)
        return cudaErrorInvalidResourceHandle;
    if ((!dst || !src) && count)
        return cudaErrorInvalidValue;
    if ((int)kind < 0 || kind > cudaMemcpyDefault)
        return cudaErrorInvalidMemcpyDirection;
    int src_device, dst_device;
    uint8_t src_kind = memory_kind_of(src, &src_device);
    uint8_t dst_kind = memory_kind_of(dst, &dst_device);
    uint8_t copy_kind = copy_kind_of(src_kind, dst_kind);
    if (src_device >= 0 && dst_device >= 0 && src_device != dst_device)
        copy_kind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
    if (count)
        memmove(dst, src, count); /* device memory is host memory: the bytes really move */
    if (s->capture) {
        struct sim_node *n = capture_node(s, CU_GRAPH_NODE_TYPE_MEMCPY);
        n->bytes = count;
        n->copy_kind = copy_kind;
        n->src_kind = src_kind;
        n->dst_kind = dst_kind;
        n->src_device = src_device;
        n->dst_device = dst_device;
        return cudaSuccess;
    }
    struct sim_op *op = op_new(OP_MEMCPY);
    op->bytes = count;
    op->copy_kind = copy_kind;
    op->src_kind = src_kind;
    op->dst_kind = dst_kind;
    op->src_device = src_device;
    op->dst_device = dst_device;
    op->is_async = (uint8_t)async;
    uint64_t seq = enqueue(s, op);
    if (!async)
        host_wait(s, seq);
    return cudaSuccess;
}

EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    struct cudaMemcpy_v3020_params_st params = {dst, src, count, kind};
    API(cudaMemcpy, v3020, &params);
    RETURN(memcpy_common(dst, src, count, kind, context_of(current_device)->legacy, 0));
}

EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
                                   enum cudaMemcpyKind kind, cudaStream_t stream)
{
    struct cudaMemcpyAsync_v3020_params_st params = {dst, src, count, kind, stream};
    API(cudaMemcpyAsync, v3020, &params);
    RETURN(memcpy_common(dst, src, count, kind, resolve_stream(stream), 1));
}

/* Peer copies name their devices; the pointers must be device memory there. */
static cudaError_t memcpy_peer(void *dst, int dst_device, const void *src, int src_device,
                               size_t count, struct sim_stream *s, int async)
{
    int found_src, found_dst;
    if (!valid_device(dst_device) || !valid_device(src_device))
        return cudaErrorInvalidDevice;
    if (memory_kind_of(src, &found_src) != CUPTI_ACTIVITY_MEMORY_KIND_DEVICE ||
        memory_kind_of(dst, &found_dst) != CUPTI_ACTIVITY_MEMORY_KIND_DEVICE ||
        found_src != src_device || found_dst != dst_device)
        return cudaErrorInvalidValue;
    return memcpy_common(dst, src, count, cudaMemcpyDeviceToDevice, s, async);
}

EXPORT cudaError_t cudaMemcpyPeer(void *dst, int dst_device, const void *src, int src_device,
                                  size_t count)
{
    API(cudaMemcpyPeer, v4000, NULL);
    RETURN(memcpy_peer(dst, dst_device, src, src_device, count, context_of(current_device)->legacy,
                       0));
}

EXPORT cudaError_t cudaMemcpyPeerAsync(void *dst, int dst_device, const void *src, int src_device,
                                       size_t count, cudaStream_t stream)
{
    API(cudaMemcpyPeerAsync, v4000, NULL);
    RETURN(memcpy_peer(dst, dst_device, src, src_device, count, resolve_stream(stream), 1));
}

EXPORT cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch,
                                size_t width, size_t height, enum cudaMemcpyKind kind)
{
    API(cudaMemcpy2D, v3020, NULL);
    if (width > dpitch || width > spitch)
        RETURN(cudaErrorInvalidValue);
    for (size_t row = 1; row < height; row++)
        memmove((char *)dst + row * dpitch, (const char *)src + row * spitch, width);
    RETURN(
        memcpy_common(dst, src, height ? width : 0, kind, context_of(current_device)->legacy, 0));
}

static cudaError_t memset_common(void *dst, int value, size_t count, struct sim_stream *s,
                                 int async)
{
    if (!s)
        return cudaErrorInvalidResourceHandle;
    int device;
    if (memory_kind_of(dst, &device) != CUPTI_ACTIVITY_MEMORY_KIND_DEVICE)
        return cudaErrorInvalidValue;
    memset(dst, value, count);
    if (s->capture) {
        struct sim_node *n = capture_node(s, CU_GRAPH_NODE_TYPE_MEMSET);
        n->bytes = count;
        n->memset_value = (uint32_t)value;
        return cudaSuccess;
    }
    struct sim_op *op = op_new(OP_MEMSET);
    op->bytes = count;
    op->memset_value = (uint32_t)value;
    op->is_async = (uint8_t)async;
    uint64_t seq = enqueue(s, op);
    if (!async)
        host_wait(s, seq);
    return cudaSuccess;
}

EXPORT cudaError_t cudaMemset(void *dst, int value, size_t count)
{
    API(cudaMemset, v3020, NULL);
    RETURN(memset_common(dst, value, count, context_of(current_device)->legacy, 0));
}

EXPORT cudaError_t cudaMemsetAsync(void *dst, int value, size_t count, cudaStream_t stream)
{
    API(cudaMemsetAsync, v3020, NULL);
    RETURN(memset_common(dst, value, count, resolve_stream(stream), 1));
}

/* ---- events -------------------------------------------------------------------------------------
 */

static struct sim_event *resolve_event(cudaEvent_t handle)
{
    struct sim_event *e = (struct sim_event *)handle;
    int found = 0;
    pthread_mutex_lock(&rt.lock);
    for (int i = 0; i < rt.event_count; i++)
        found |= rt.events[i] == e;
    pthread_mutex_unlock(&rt.lock);
    return found ? e : NULL;
}

static cudaError_t event_create(cudaEvent_t *event, unsigned int flags)
{
    if (!event)
        return cudaErrorInvalidValue;
    struct sim_event *e = calloc(1, sizeof *e);
    e->id = new_id();
    e->flags = flags;
    pthread_mutex_lock(&rt.lock);
    int room = rt.event_count < MAX_EVENTS;
    if (room)
        rt.events[rt.event_count++] = e;
    pthread_mutex_unlock(&rt.lock);
    if (!room) {
        free(e);
        return cudaErrorMemoryAllocation;
    }
    *event = (cudaEvent_t)e;
    return cudaSuccess;
}

EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    API(cudaEventCreateWithFlags, v3020, NULL);
    RETURN(event_create(event, flags));
}

EXPORT cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    API(cudaEventCreate, v3020, NULL);
    RETURN(event_create(event, cudaEventDefault));
}

EXPORT cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    API(cudaEventDestroy, v3020, NULL);
    struct sim_event *e = resolve_event(event);
    if (!e)
        RETURN(cudaErrorInvalidResourceHandle);
    pthread_mutex_lock(&rt.lock);
    for (int i = 0; i < rt.event_count; i++)
        if (rt.events[i] == e)
            rt.events[i] = rt.events[--rt.event_count];
    pthread_mutex_unlock(&rt.lock);
    RETURN(cudaSuccess); /* freed never: a queued record may still point at it */
}

EXPORT cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    API(cudaEventRecord, v3020, NULL);
    struct sim_event *e = resolve_event(event);
    struct sim_stream *s = resolve_stream(stream);
    if (!e || !s)
        RETURN(cudaErrorInvalidResourceHandle);
    if (s->capture) { /* a capture-time record remembers the nodes a wait will join */
        e->capture = s->capture;
        e->nodes =
            realloc(e->nodes, (size_t)(s->tail_count ? s->tail_count : 1) * sizeof *e->nodes);
        memcpy(e->nodes, s->tail_nodes, (size_t)s->tail_count * sizeof *e->nodes);
        e->node_count = s->tail_count;
        RETURN(cudaSuccess);
    }
    e->capture = NULL;
    struct sim_op *op = op_new(OP_EVENT_RECORD);
    op->event = e;
    op->sync_id = ++e->sync_id;
    e->stream = s;
    e->recorded = 1;
    e->seq = enqueue(s, op);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    (void)flags;
    API(cudaStreamWaitEvent, v3020, NULL);
    uint64_t start = simppu_now_ns();
    struct sim_event *e = resolve_event(event);
    struct sim_stream *s = resolve_stream(stream);
    if (!e || !s)
        RETURN(cudaErrorInvalidResourceHandle);
    if (e->capture) { /* joins the capture: the waiting stream continues from the event's nodes */
        if (!s->capture) {
            s->capture = e->capture;
            s->tail_count = 0;
        }
        s->tail_nodes = realloc(s->tail_nodes, (size_t)(s->tail_count + e->node_count + 1) *
                                                   sizeof *s->tail_nodes);
        for (int i = 0; i < e->node_count; i++) {
            int seen = 0;
            for (int j = 0; j < s->tail_count; j++)
                seen |= s->tail_nodes[j] == e->nodes[i];
            if (!seen)
                s->tail_nodes[s->tail_count++] = e->nodes[i];
        }
        RETURN(cudaSuccess);
    }
    if (e->recorded && !(e->stream == s)) {
        struct sim_op *op = op_new(OP_WAIT);
        op->deps[0] = (struct dependency){e->stream, e->seq};
        op->ndeps = 1;
        enqueue(s, op);
    }
    emit_sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, start, s, e, e->sync_id, NULL);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    API(cudaEventSynchronize, v3020, NULL);
    uint64_t start = simppu_now_ns();
    struct sim_event *e = resolve_event(event);
    if (!e)
        RETURN(cudaErrorInvalidResourceHandle);
    if (e->recorded)
        host_wait(e->stream, e->seq);
    emit_sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, start, e->stream, e,
              e->sync_id, NULL);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaEventQuery(cudaEvent_t event)
{
    API(cudaEventQuery, v3020, NULL);
    struct sim_event *e = resolve_event(event);
    if (!e)
        RETURN(cudaErrorInvalidResourceHandle);
    if (!e->recorded)
        RETURN(cudaSuccess);
    pthread_mutex_lock(&e->stream->lock);
    int done = e->stream->done_seq >= e->seq && end_of(e->stream, e->seq) <= simppu_now_ns();
    pthread_mutex_unlock(&e->stream->lock);
    RETURN(done ? cudaSuccess : cudaErrorNotReady);
}

EXPORT cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    API(cudaEventElapsedTime, v3020, NULL);
    struct sim_event *a = resolve_event(start), *b = resolve_event(end);
    if (!ms)
        RETURN(cudaErrorInvalidValue);
    if (!a || !b)
        RETURN(cudaErrorInvalidResourceHandle);
    if (!a->recorded || !b->recorded)
        RETURN(cudaErrorInvalidResourceHandle);
    uint64_t ta = wait_decided(a->stream, a->seq), tb = wait_decided(b->stream, b->seq);
    *ms = (float)(((double)tb - (double)ta) / 1e6);
    RETURN(cudaSuccess);
}

/* ---- kernels
 * ---------------------------------------------------------------------------------------- */

/* The unqualified name inside a mangled one: "_Z10add_kernelPfPKfi" -> "add_kernel",
 * "_ZN2ns5scaleIfEEvPT_" -> "scale". */
static void base_name(const char *mangled, char *out, size_t size)
{
    snprintf(out, size, "%s", mangled);
    if (strncmp(mangled, "_Z", 2) != 0)
        return;
    const char *p = mangled + 2;
    int nested = *p == 'N';
    if (nested)
        p++;
    char last[256] = "";
    while (*p >= '0' && *p <= '9') {
        int len = (int)strtol(p, (char **)&p, 10);
        if (len <= 0 || len >= (int)sizeof last || (int)strlen(p) < len)
            break;
        memcpy(last, p, (size_t)len);
        last[len] = '\0';
        p += len;
        if (!nested)
            break;
        if (*p == 'I') /* template arguments of a nested name end the search */
            break;
    }
    if (last[0])
        snprintf(out, size, "%s", last);
}

static uint64_t configured_duration(const char *mangled)
{
    if (!rt.kernel_times)
        return rt.default_kernel_ns;
    char base[256];
    base_name(mangled, base, sizeof base);
    const char *p = rt.kernel_times;
    while (*p) {
        size_t n = strcspn(p, ",");
        const char *eq = memchr(p, '=', n);
        if (eq) {
            size_t name_len = (size_t)(eq - p);
            if ((strlen(mangled) == name_len && !strncmp(p, mangled, name_len)) ||
                (strlen(base) == name_len && !strncmp(p, base, name_len)))
                return strtoull(eq + 1, NULL, 10);
        }
        p += n + (p[n] == ',');
    }
    return rt.default_kernel_ns;
}

static struct sim_kernel *kernel_of(const void *host_fun)
{
    pthread_mutex_lock(&rt.lock);
    struct sim_kernel *k = rt.kernels;
    while (k && k->host_fun != host_fun)
        k = k->next;
    pthread_mutex_unlock(&rt.lock);
    return k;
}

static struct sim_kernel *kernel_handle(const void *handle)
{
    pthread_mutex_lock(&rt.lock);
    struct sim_kernel *k = rt.kernels;
    while (k && (const void *)k != handle)
        k = k->next;
    pthread_mutex_unlock(&rt.lock);
    return k;
}

static cudaError_t launch(const struct sim_kernel *k, dim3 grid, dim3 block, size_t shared,
                          cudaStream_t stream)
{
    if (!k)
        return cudaErrorInvalidDeviceFunction;
    struct sim_stream *s = resolve_stream(stream);
    if (!s)
        return cudaErrorInvalidResourceHandle;
    uint64_t threads = (uint64_t)block.x * block.y * block.z;
    if (!grid.x || !grid.y || !grid.z || !threads || threads > 1024 || block.z > 64 ||
        shared > 48 * 1024)
        return cudaErrorInvalidConfiguration;
    if (s->capture) {
        struct sim_node *n = capture_node(s, CU_GRAPH_NODE_TYPE_KERNEL);
        n->kernel = k;
        n->grid = grid;
        n->block = block;
        n->shared_memory = shared;
        return cudaSuccess;
    }
    struct sim_op *op = op_new(OP_KERNEL);
    op->kernel = k;
    op->grid = grid;
    op->block = block;
    op->shared_memory = shared;
    enqueue(s, op);
    return cudaSuccess;
}

EXPORT cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
                                    size_t shared, cudaStream_t stream)
{
    (void)args;
    struct cudaLaunchKernel_v7000_params_st params = {func, grid, block, args, shared, stream};
    API(cudaLaunchKernel, v7000, &params);
    struct sim_kernel *k = kernel_of(func);
    call_.data.symbolName = k ? k->name : NULL;
    RETURN(launch(k, grid, block, shared, stream));
}

/* A host function in stream order (a host node when the stream is captured):
 * no device work, so no activity record, as with CUPTI. */
EXPORT cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *user_data)
{
    struct cudaLaunchHostFunc_v10000_params_st params = {stream, fn, user_data};
    API(cudaLaunchHostFunc, v10000, &params);
    struct sim_stream *s = resolve_stream(stream);
    if (!s)
        RETURN(cudaErrorInvalidResourceHandle);
    if (!fn)
        RETURN(cudaErrorInvalidValue);
    if (s->capture) {
        struct sim_node *n = capture_node(s, CU_GRAPH_NODE_TYPE_HOST);
        n->host_fn = fn;
        n->host_data = user_data;
        RETURN(cudaSuccess);
    }
    struct sim_op *op = op_new(OP_HOST);
    op->host_fn = fn;
    op->host_data = user_data;
    enqueue(s, op);
    RETURN(cudaSuccess);
}

/* ---- the entry points nvcc's host code calls
 * ---------------------------------------------------------- */

EXPORT void **__cudaRegisterFatBinary(void *fat_cubin)
{
    ensure_init();
    void **handle = malloc(sizeof *handle);
    *handle = fat_cubin;
    return handle;
}

EXPORT void __cudaRegisterFatBinaryEnd(void **handle)
{
    (void)handle;
}

EXPORT void __cudaUnregisterFatBinary(void **handle)
{
    free(handle);
}

EXPORT char __cudaInitModule(void **handle)
{
    (void)handle;
    return 1;
}

EXPORT void __cudaRegisterFunction(void **handle, const char *host_fun, char *device_fun,
                                   const char *device_name, int thread_limit, uint3 *tid,
                                   uint3 *bid, dim3 *block, dim3 *grid, int *warp_size)
{
    (void)handle;
    (void)device_name;
    (void)thread_limit;
    (void)tid;
    (void)bid;
    (void)block;
    (void)grid;
    (void)warp_size;
    struct sim_kernel *k = calloc(1, sizeof *k);
    k->host_fun = host_fun;
    k->name = strdup(device_fun);
    pthread_mutex_lock(&rt.lock);
    k->next = rt.kernels;
    rt.kernels = k;
    pthread_mutex_unlock(&rt.lock);
    k->duration_ns = configured_duration(k->name);
}

EXPORT unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared, void *stream)
{
    launch_config.grid = grid;
    launch_config.block = block;
    launch_config.shared_memory = shared;
    launch_config.stream = (cudaStream_t)stream;
    launch_config.pending = 1;
    return 0;
}

EXPORT cudaError_t __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shared, void *stream)
{
    if (!launch_config.pending)
        return cudaErrorInvalidConfiguration;
    *grid = launch_config.grid;
    *block = launch_config.block;
    *shared = launch_config.shared_memory;
    *(cudaStream_t *)stream = launch_config.stream;
    launch_config.pending = 0;
    return cudaSuccess;
}

EXPORT cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *host_fun)
{
    ensure_init();
    struct sim_kernel *k = kernel_of(host_fun);
    if (!k)
        return cudaErrorInvalidDeviceFunction;
    *kernel = (cudaKernel_t)k;
    return cudaSuccess;
}

EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void **args,
                                      size_t shared, cudaStream_t stream)
{
    (void)args;
    API(__cudaLaunchKernel, v13000, NULL);
    struct sim_kernel *k = kernel_handle(kernel);
    call_.data.symbolName = k ? k->name : NULL;
    RETURN(launch(k, grid, block, shared, stream));
}
