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
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cudart_internal.h"
#include "device_state.h"

struct runtime rt = {.once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER};

__thread int current_device;
__thread cudaError_t last_error;
static __thread struct {
    dim3 grid, block;
    size_t shared_memory;
    cudaStream_t stream;
    int pending;
} launch_config;
/* simppu_next_launch: what the thread's next kernel launch carries */
static __thread struct {
    int pending;
    uint64_t duration_ns;
    void (*observer)(void *, uint64_t, uint64_t);
    void *ctx;
} next_launch;
__thread uint32_t current_correlation; /* of the API call in progress */
__thread uint64_t current_enter_ts; /* its start, as CUPTI reports it */

EXPORT uint64_t simppu_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void sleep_until(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

uint32_t new_id(void)
{
    return __atomic_add_fetch(&rt.next_id, 1, __ATOMIC_RELAXED);
}

/* ---- hooks --------------------------------------------------------------------------- */

EXPORT void simppu_install_hooks(const struct simppu_hooks *hooks)
{
    __atomic_store_n(&rt.hooks, hooks, __ATOMIC_RELEASE);
}

const struct simppu_hooks *hooks(void)
{
    return __atomic_load_n(&rt.hooks, __ATOMIC_ACQUIRE);
}

int wants(CUpti_ActivityKind kind)
{
    const struct simppu_hooks *h = hooks();
    return h && h->activity_enabled(kind);
}

uint64_t ts(uint64_t ns)
{
    const struct simppu_hooks *h = hooks();
    return h ? h->timestamp(ns) : ns;
}

void emit(const void *record, size_t size)
{
    const struct simppu_hooks *h = hooks();
    if (h)
        h->activity(record, size);
}

void resource(CUpti_CallbackId cbid, const void *data)
{
    const struct simppu_hooks *h = hooks();
    if (h)
        h->resource(cbid, data);
}

/* Graph callbacks carry a CUpti_GraphData in the resource data's descriptor. */
void graph_resource(CUpti_CallbackId cbid, CUpti_GraphData *graph)
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
    simppu_state_prepare(); /* a stream worker's first kernel does not wait for the file */
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
void ensure_init(void)
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

/* driver API calls in progress on this thread: the runtime calls that
 * implement them are not the program's (no callbacks, no records) */
static __thread int driver_depth;

void api_enter(struct api_call *c)
{
    ensure_init();
    c->hidden = driver_depth > 0 && !c->driver;
    c->saved_correlation = current_correlation;
    memset(&c->data, 0, sizeof c->data);
    c->data.correlationId = c->hidden
                                ? current_correlation
                                : __atomic_add_fetch(&rt.next_correlation, 1, __ATOMIC_RELAXED);
    current_correlation = c->data.correlationId;
    c->start_ns = simppu_now_ns();
    /* the call's start as CUPTI reports it: no device work it causes starts before */
    c->saved_enter_ts = current_enter_ts;
    c->start_ts = c->hidden ? current_enter_ts : ts(c->start_ns);
    current_enter_ts = c->start_ts;
    const struct simppu_hooks *h = hooks();
    if (!h || c->hidden)
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
    if (!c->driver)
        h->api(c->cbid, &c->data);
    else if (h->driver_api)
        h->driver_api(c->cbid, &c->data);
}

cudaError_t api_finish(struct api_call *c, cudaError_t result, int sets_last_error)
{
    c->result = result;
    if (c->hidden) {
        current_correlation = c->saved_correlation;
        current_enter_ts = c->saved_enter_ts;
        return result;
    }
    if (sets_last_error && result != cudaSuccess && result != cudaErrorNotReady)
        last_error = result;
    const struct simppu_hooks *h = hooks();
    if (h) {
        c->data.callbackSite = CUPTI_API_EXIT;
        if (!c->driver)
            h->api(c->cbid, &c->data);
        else if (h->driver_api)
            h->driver_api(c->cbid, &c->data);
    }
    CUpti_ActivityKind kind = c->driver ? CUPTI_ACTIVITY_KIND_DRIVER : CUPTI_ACTIVITY_KIND_RUNTIME;
    if (wants(kind)) {
        CUpti_ActivityAPI r;
        memset(&r, 0, sizeof r);
        r.kind = kind;
        r.cbid = c->cbid;
        r.start = c->start_ts;
        r.end = ts(simppu_now_ns());
        r.processId = (uint32_t)getpid();
        r.threadId = (uint32_t)syscall(SYS_gettid);
        r.correlationId = c->data.correlationId;
        r.returnValue = (uint32_t)result;
        emit(&r, sizeof r);
    }
    current_correlation = c->saved_correlation;
    current_enter_ts = c->saved_enter_ts;
    return result;
}

cudaError_t api_exit(struct api_call *c, cudaError_t result)
{
    return api_finish(c, result, 1);
}

/* A driver API call (libcuda.so.1): callbacks in the driver domain, and the
 * runtime calls that carry it out are hidden inside it. */
EXPORT void simppu_driver_enter(struct api_call *c)
{
    c->driver = 1;
    api_enter(c);
    driver_depth++;
}

EXPORT int simppu_driver_exit(struct api_call *c, int result)
{
    driver_depth--;
    api_finish(c, (cudaError_t)result, 0);
    return result;
}

/* ---- devices, contexts
 * --------------------------------------------------------------------------- */

static struct sim_stream *stream_new(struct sim_context *ctx, unsigned flags, int priority,
                                     int legacy);

struct sim_context *context_of(int device)
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
struct sim_stream *resolve_stream(cudaStream_t handle)
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
uint64_t wait_decided(struct sim_stream *s, uint64_t seq)
{
    pthread_mutex_lock(&s->lock);
    while (s->done_seq < seq)
        pthread_cond_wait(&s->cond, &s->lock);
    uint64_t end = end_of(s, seq);
    pthread_mutex_unlock(&s->lock);
    return end;
}

uint64_t kernel_duration(const struct sim_kernel *k)
{
    return k ? k->duration_ns : rt.default_kernel_ns;
}

uint64_t copy_duration(uint64_t bytes, uint8_t copy_kind, uint8_t src, uint8_t dst)
{
    double gbps = rt.device_gbps;
    int on_device = copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOD ||
                    copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_ATOA ||
                    copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_ATOD ||
                    copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOA;
    if (!on_device) {
        int pinned =
            src == CUPTI_ACTIVITY_MEMORY_KIND_PINNED || dst == CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
        gbps = pinned ? rt.pinned_gbps : rt.pageable_gbps;
    }
    return 2000 + (uint64_t)((double)bytes / gbps); /* bytes / (GB/s) = ns */
}

/* A device activity's start and end on CUPTI's clock: never before the start
 * of the call that launched it, as CUPTI reports that call (where the tool's
 * clock is not CLOCK_MONOTONIC, converting the two at different moments could
 * otherwise put the work a few hundred ns before its launch). */
struct span device_span(const struct sim_op *op, uint64_t start, uint64_t end)
{
    struct span r = {ts(start), ts(end)};
    if (r.end < r.start)
        r.end = r.start;
    if (r.start < op->not_before_ts) {
        uint64_t shift = op->not_before_ts - r.start;
        r.start += shift;
        r.end += shift;
    }
    return r;
}

/* With graph-level tracing, a graph launch is one GraphTrace record: its
 * nodes' own records are not produced (CUPTI's overhead saving). */
static int graph_level(uint64_t graph_node)
{
    return graph_node && wants(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
}

void emit_kernel(const struct sim_op *op, struct sim_stream *s, uint64_t start, uint64_t end,
                 uint64_t graph_node, uint32_t graph_id, const struct sim_kernel *kernel, dim3 grid,
                 dim3 block, size_t shared)
{
    if ((!wants(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) && !wants(CUPTI_ACTIVITY_KIND_KERNEL)) ||
        graph_level(graph_node))
        return;
    CUpti_ActivityKernel10 r;
    memset(&r, 0, sizeof r);
    r.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    r.registersPerThread = 32;
    struct span t = device_span(op, start, end);
    r.start = t.start;
    r.end = t.end;
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
    r.launchType = graph_node ? CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR : op->launch_type;
    emit(&r, sizeof r);
}

/* A peer copy between devices: CUPTI reports those as MEMCPY2 records. */
void emit_peer_memcpy(const struct sim_op *op, struct sim_stream *s, uint64_t start, uint64_t end,
                      uint64_t bytes, int src_device, int dst_device, int async,
                      uint64_t graph_node, uint32_t graph_id)
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
    struct span t = device_span(op, start, end);
    r.start = t.start;
    r.end = t.end;
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

void emit_memcpy(const struct sim_op *op, struct sim_stream *s, uint64_t start, uint64_t end,
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
    struct span t = device_span(op, start, end);
    r.start = t.start;
    r.end = t.end;
    r.deviceId = (uint32_t)s->ctx->device;
    r.contextId = s->ctx->id;
    r.streamId = s->id;
    r.correlationId = op->correlation;
    r.graphNodeId = graph_node;
    r.graphId = graph_id;
    r.copyCount = 1;
    emit(&r, sizeof r);
}

void emit_memset(const struct sim_op *op, struct sim_stream *s, uint64_t start, uint64_t end,
                 uint64_t bytes, uint32_t value, uint8_t memory_kind, int async,
                 uint64_t graph_node, uint32_t graph_id)
{
    if (!wants(CUPTI_ACTIVITY_KIND_MEMSET) || graph_level(graph_node))
        return;
    CUpti_ActivityMemset4 r;
    memset(&r, 0, sizeof r);
    r.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    r.value = value;
    r.bytes = bytes;
    struct span t = device_span(op, start, end);
    r.start = t.start;
    r.end = t.end;
    r.deviceId = (uint32_t)s->ctx->device;
    r.contextId = s->ctx->id;
    r.streamId = s->id;
    r.correlationId = op->correlation;
    r.flags = async ? CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC : 0;
    r.memoryKind = memory_kind;
    r.graphNodeId = graph_node;
    r.graphId = graph_id;
    emit(&r, sizeof r);
}

/* An event reached on the device (a record in a stream, or an event record node). */
void emit_event_record(const struct sim_op *op, struct sim_stream *s, const struct sim_event *e,
                       uint64_t sync_id, uint64_t at)
{
    if (!wants(CUPTI_ACTIVITY_KIND_CUDA_EVENT))
        return;
    CUpti_ActivityCudaEvent2 r;
    memset(&r, 0, sizeof r);
    r.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
    r.correlationId = op->correlation;
    r.contextId = s->ctx->id;
    r.streamId = s->id;
    r.eventId = e->id;
    r.deviceId = (uint32_t)s->ctx->device;
    r.deviceTimestamp = device_span(op, at, at).start;
    r.cudaEventSyncId = sync_id;
    emit(&r, sizeof r);
}

/* A host function, called once the simulated clock reaches its start. */
void run_host_fn(cudaHostFn_t fn, void *data, uint64_t start)
{
    if (start > simppu_now_ns())
        sleep_until(start);
    if (fn)
        fn(data);
}

/* The device-wide view (device_state.h) a PM sampler reads. */
static enum simppu_work_kind work_kind(uint8_t copy_kind)
{
    switch (copy_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
        return SIMPPU_WORK_HTOD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
        return SIMPPU_WORK_DTOH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
        return SIMPPU_WORK_PEER;
    default:
        return SIMPPU_WORK_DTOD;
    }
}

static void share_work(const struct sim_stream *s, enum simppu_work_kind kind, uint64_t start,
                       uint64_t end, uint64_t bytes)
{
    int device = s->ctx->device;
    if (device >= 0 && device < rt.device_count)
        simppu_state_record(rt.devices[device].physical, kind, start, end, bytes);
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
        end = start + (op->duration_ns ? op->duration_ns : kernel_duration(op->kernel));
        share_work(s, SIMPPU_WORK_KERNEL, start, end, 0);
        emit_kernel(op, s, start, end, 0, 0, op->kernel, op->grid, op->block, op->shared_memory);
        if (op->observer)
            op->observer(op->observer_ctx, start, end);
        break;
    case OP_MEMCPY:
        end = start + copy_duration(op->bytes, op->copy_kind, op->src_kind, op->dst_kind);
        share_work(s, work_kind(op->copy_kind), start, end, op->bytes);
        if (op->copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_PTOP)
            emit_peer_memcpy(op, s, start, end, op->bytes, op->src_device, op->dst_device,
                             op->is_async, 0, 0);
        else
            emit_memcpy(op, s, start, end, op->bytes, op->copy_kind, op->src_kind, op->dst_kind,
                        op->is_async, 0, 0);
        break;
    case OP_MEMSET:
        end = start + 1000 + (uint64_t)((double)op->bytes / rt.memset_gbps);
        share_work(s, SIMPPU_WORK_MEMSET, start, end, op->bytes);
        emit_memset(op, s, start, end, op->bytes, op->memset_value, op->memory_kind, op->is_async,
                    0, 0);
        break;
    case OP_EVENT_RECORD:
        emit_event_record(op, s, op->event, op->sync_id, start);
        break;
    case OP_WAIT:
        break;
    case OP_HOST: /* no device work and no record: the function runs in stream order */
        if (op->callback) {
            if (start > simppu_now_ns())
                sleep_until(start);
            op->callback(op->callback_stream, cudaSuccess, op->host_data);
        } else {
            run_host_fn(op->host_fn, op->host_data, start);
        }
        end = simppu_now_ns(); /* the work after it waits until it has returned */
        if (end < start)
            end = start;
        break;
    case OP_GRAPH:
        end = fill_graph_and_emit(op, s, start);
        if (wants(CUPTI_ACTIVITY_KIND_GRAPH_TRACE)) {
            CUpti_ActivityGraphTrace2 r;
            memset(&r, 0, sizeof r);
            r.kind = CUPTI_ACTIVITY_KIND_GRAPH_TRACE;
            r.correlationId = op->correlation;
            struct span t = device_span(op, start, end);
            r.start = t.start;
            r.end = t.end;
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
        free(op->node_sync_ids);
        free(op->node_waits);
        free(op->node_params);
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

struct sim_op *op_new(enum op_kind kind)
{
    struct sim_op *op = calloc(1, sizeof *op);
    op->kind = kind;
    op->enqueue_ns = simppu_now_ns();
    op->not_before_ts = current_enter_ts;
    op->correlation = current_correlation;
    return op;
}

/* Queues `op` on `s`; returns its seq. */
uint64_t enqueue(struct sim_stream *s, struct sim_op *op)
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
void host_wait(struct sim_stream *s, uint64_t seq)
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

/* Priorities outside the device's range are clamped to it, as CUDA does. */
static int clamp_priority(int priority)
{
    if (priority > SIMPPU_PRIORITY_LEAST)
        return SIMPPU_PRIORITY_LEAST;
    if (priority < SIMPPU_PRIORITY_GREATEST)
        return SIMPPU_PRIORITY_GREATEST;
    return priority;
}

static cudaError_t stream_create(cudaStream_t *stream, unsigned int flags, int priority)
{
    if (!stream || (flags & ~(unsigned)cudaStreamNonBlocking))
        return cudaErrorInvalidValue;
    priority = clamp_priority(priority);
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
    APIP(cudaStreamCreateWithPriority, v5050, stream, flags, priority);
    RETURN(stream_create(stream, flags, priority));
}

EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags)
{
    APIP(cudaStreamCreateWithFlags, v5000, stream, flags);
    RETURN(stream_create(stream, flags, 0));
}

EXPORT cudaError_t cudaStreamCreate(cudaStream_t *stream)
{
    APIP(cudaStreamCreate, v3020, stream);
    RETURN(stream_create(stream, cudaStreamDefault, 0));
}

EXPORT cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    APIP(cudaStreamDestroy, v5050, stream);
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
    APIP(cudaStreamSynchronize, v3020, stream);
    struct sim_stream *s = resolve_stream(stream);
    if (!s)
        RETURN(cudaErrorInvalidResourceHandle);
    uint64_t start = simppu_now_ns();
    host_wait_stream(s);
    pools_release(s->ctx->device);
    emit_sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, start, s, NULL, 0, NULL);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaStreamQuery(cudaStream_t stream)
{
    APIP(cudaStreamQuery, v3020, stream);
    struct sim_stream *s = resolve_stream(stream);
    if (!s)
        RETURN(cudaErrorInvalidResourceHandle);
    pthread_mutex_lock(&s->lock);
    int done = s->done_seq == s->next_seq && (!s->next_seq || s->last_end <= simppu_now_ns());
    pthread_mutex_unlock(&s->lock);
    RETURN(done ? cudaSuccess : cudaErrorNotReady);
}

EXPORT cudaError_t cudaStreamGetPriority(cudaStream_t stream, int *priority)
{
    APIP(cudaStreamGetPriority, v5050, stream, priority);
    struct sim_stream *s = resolve_stream(stream);
    if (!s)
        RETURN(cudaErrorInvalidResourceHandle);
    if (!priority)
        RETURN(cudaErrorInvalidValue);
    *priority = s->priority;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaStreamGetFlags(cudaStream_t stream, unsigned int *flags)
{
    APIP(cudaStreamGetFlags, v5050, stream, flags);
    struct sim_stream *s = resolve_stream(stream);
    if (!s)
        RETURN(cudaErrorInvalidResourceHandle);
    if (!flags)
        RETURN(cudaErrorInvalidValue);
    *flags = s->flags;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaStreamGetId(cudaStream_t stream, unsigned long long *id)
{
    APIP(cudaStreamGetId, v12000, stream, id);
    struct sim_stream *s = resolve_stream(stream);
    if (!s)
        RETURN(cudaErrorInvalidResourceHandle);
    if (!id)
        RETURN(cudaErrorInvalidValue);
    *id = s->id;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaStreamGetDevice(cudaStream_t stream, int *device)
{
    APIP(cudaStreamGetDevice, v12080, stream, device);
    struct sim_stream *s = resolve_stream(stream);
    if (!s)
        RETURN(cudaErrorInvalidResourceHandle);
    if (!device)
        RETURN(cudaErrorInvalidValue);
    *device = s->ctx->device;
    RETURN(cudaSuccess);
}

/* The attributes a stream keeps (the others are launch attributes only). */
static int stream_attribute(cudaStreamAttrID id)
{
    return id == cudaStreamAttributeAccessPolicyWindow ||
           id == cudaStreamAttributeSynchronizationPolicy || id == cudaStreamAttributePriority ||
           id == cudaStreamAttributeMemSyncDomainMap || id == cudaStreamAttributeMemSyncDomain;
}

EXPORT cudaError_t cudaStreamSetAttribute(cudaStream_t stream, cudaStreamAttrID id,
                                          const cudaStreamAttrValue *value)
{
    APIP(cudaStreamSetAttribute, v11000, stream, id, value);
    struct sim_stream *s = resolve_stream(stream);
    if (!s)
        RETURN(cudaErrorInvalidResourceHandle);
    if (!value || !stream_attribute(id) || (unsigned)id >= STREAM_ATTRIBUTES)
        RETURN(cudaErrorInvalidValue);
    if (id == cudaStreamAttributeAccessPolicyWindow) {
        const struct cudaAccessPolicyWindow *w = &value->accessPolicyWindow;
        if (w->num_bytes > 134213632 || w->hitRatio < 0.0f || w->hitRatio > 1.0f)
            RETURN(cudaErrorInvalidValue);
    }
    pthread_mutex_lock(&s->lock);
    if (id == cudaStreamAttributePriority)
        s->priority = clamp_priority(value->priority);
    s->attributes[id] = *value;
    s->attributes_set |= 1u << id;
    pthread_mutex_unlock(&s->lock);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaStreamGetAttribute(cudaStream_t stream, cudaStreamAttrID id,
                                          cudaStreamAttrValue *value)
{
    APIP(cudaStreamGetAttribute, v11000, stream, id, value);
    struct sim_stream *s = resolve_stream(stream);
    if (!s)
        RETURN(cudaErrorInvalidResourceHandle);
    if (!value || !stream_attribute(id) || (unsigned)id >= STREAM_ATTRIBUTES)
        RETURN(cudaErrorInvalidValue);
    pthread_mutex_lock(&s->lock);
    if (s->attributes_set & (1u << id))
        *value = s->attributes[id];
    else
        memset(value, 0, sizeof *value);
    if (id == cudaStreamAttributePriority)
        value->priority = s->priority;
    pthread_mutex_unlock(&s->lock);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaStreamCopyAttributes(cudaStream_t dst, cudaStream_t src)
{
    APIP(cudaStreamCopyAttributes, v11000, dst, src);
    struct sim_stream *d = resolve_stream(dst), *s = resolve_stream(src);
    if (!d || !s)
        RETURN(cudaErrorInvalidResourceHandle);
    pthread_mutex_lock(&s->lock);
    cudaLaunchAttributeValue values[STREAM_ATTRIBUTES];
    memcpy(values, s->attributes, sizeof values);
    uint32_t set = s->attributes_set;
    int priority = s->priority;
    pthread_mutex_unlock(&s->lock);
    pthread_mutex_lock(&d->lock);
    memcpy(d->attributes, values, sizeof values);
    d->attributes_set = set;
    d->priority = priority;
    pthread_mutex_unlock(&d->lock);
    RETURN(cudaSuccess);
}

/* A callback in stream order, on the stream's worker once the work before it
 * is done, with the status of that work (always cudaSuccess here: simulated
 * work does not fail).  No device work, so no activity record.  Not allowed
 * in a capture (cudaLaunchHostFunc is). */
EXPORT cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback,
                                         void *user_data, unsigned int flags)
{
    APIP(cudaStreamAddCallback, v5000, stream, callback, user_data, flags);
    struct sim_stream *s = resolve_stream(stream);
    if (!s)
        RETURN(cudaErrorInvalidResourceHandle);
    if (!callback || flags != 0)
        RETURN(cudaErrorInvalidValue);
    if (s->capture)
        RETURN(capture_invalidate(s, cudaErrorStreamCaptureUnsupported));
    struct sim_op *op = op_new(OP_HOST);
    op->callback = callback;
    op->callback_stream = stream;
    op->host_data = user_data;
    enqueue(s, op);
    RETURN(cudaSuccess);
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
    pools_release(ctx->device);
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
    d->ctx = NULL;
    pthread_mutex_unlock(&rt.lock);
    memory_reset_device(current_device);
    RETURN(cudaSuccess);
}

/* ---- events -------------------------------------------------------------------------------------
 */

struct sim_event *resolve_event(cudaEvent_t handle)
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
    APIP(cudaEventCreateWithFlags, v3020, event, flags);
    RETURN(event_create(event, flags));
}

/* ---- IPC event handles: the creating process's id and the event's
 * -------------------------------- Opened in another process, a handle gives an event of that
 * process's own (interprocess, no timing): it orders that process's streams; simppu's processes
 * share no device, so a record in one is not seen by another. */

#define IPC_MAGIC 0x43504953u /* "SIPC" */

struct ipc_event_handle {
    uint32_t magic;
    uint32_t pid;
    uint32_t event_id;
    unsigned flags;
};
_Static_assert(sizeof(struct ipc_event_handle) <= sizeof(cudaIpcEventHandle_t), "IPC handle");

EXPORT cudaError_t cudaIpcGetEventHandle(cudaIpcEventHandle_t *handle, cudaEvent_t event)
{
    APIP(cudaIpcGetEventHandle, v4010, handle, event);
    struct sim_event *e = resolve_event(event);
    if (!handle)
        RETURN(cudaErrorInvalidValue);
    if (!e || !(e->flags & cudaEventInterprocess) || !(e->flags & cudaEventDisableTiming))
        RETURN(cudaErrorInvalidResourceHandle);
    struct ipc_event_handle h = {IPC_MAGIC, (uint32_t)getpid(), e->id, e->flags};
    memset(handle, 0, sizeof *handle);
    memcpy(handle, &h, sizeof h);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaIpcOpenEventHandle(cudaEvent_t *event, cudaIpcEventHandle_t handle)
{
    APIP(cudaIpcOpenEventHandle, v4010, event, handle);
    struct ipc_event_handle h;
    memcpy(&h, &handle, sizeof h);
    if (!event || h.magic != IPC_MAGIC)
        RETURN(cudaErrorInvalidValue);
    if (h.pid == (uint32_t)getpid()) /* as CUDA: not in the process that made it */
        RETURN(cudaErrorInvalidResourceHandle);
    RETURN(event_create(event, h.flags));
}

EXPORT cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    APIP(cudaEventCreate, v3020, event);
    RETURN(event_create(event, cudaEventDefault));
}

EXPORT cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    APIP(cudaEventDestroy, v3020, event);
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

static cudaError_t event_record(cudaEvent_t event, cudaStream_t stream)
{
    struct sim_event *e = resolve_event(event);
    struct sim_stream *s = resolve_stream(stream);
    if (!e || !s)
        return cudaErrorInvalidResourceHandle;
    if (s->capture) { /* a capture-time record remembers the nodes a wait will join */
        e->capture = s->capture;
        e->nodes =
            realloc(e->nodes, (size_t)(s->tail_count ? s->tail_count : 1) * sizeof *e->nodes);
        memcpy(e->nodes, s->tail_nodes, (size_t)s->tail_count * sizeof *e->nodes);
        e->node_count = s->tail_count;
        return cudaSuccess;
    }
    e->capture = NULL;
    struct sim_op *op = op_new(OP_EVENT_RECORD);
    op->event = e;
    op->sync_id = ++e->sync_id;
    e->stream = s;
    e->recorded = 1;
    e->seq = enqueue(s, op);
    return cudaSuccess;
}

EXPORT cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    APIP(cudaEventRecord, v3020, event, stream);
    RETURN(event_record(event, stream));
}

/* cudaEventRecordExternal matters to graphs only: recorded like any other. */
EXPORT cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream,
                                            unsigned int flags)
{
    APIP(cudaEventRecordWithFlags, v11010, event, stream, flags);
    if (flags & ~(unsigned)cudaEventRecordExternal)
        RETURN(cudaErrorInvalidValue);
    RETURN(event_record(event, stream));
}

EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    (void)flags;
    APIP(cudaStreamWaitEvent, v3020, stream, event, flags);
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
    APIP(cudaEventSynchronize, v3020, event);
    uint64_t start = simppu_now_ns();
    struct sim_event *e = resolve_event(event);
    if (!e)
        RETURN(cudaErrorInvalidResourceHandle);
    if (e->recorded) {
        host_wait(e->stream, e->seq);
        pools_release(e->stream->ctx->device);
    }
    emit_sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, start, e->stream, e,
              e->sync_id, NULL);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaEventQuery(cudaEvent_t event)
{
    APIP(cudaEventQuery, v3020, event);
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
    APIP(cudaEventElapsedTime, v12080, ms, start, end);
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

struct sim_kernel *kernel_of(const void *host_fun)
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

/* What the device can run: blocks of at most 1024 threads, the kernel's shared memory. */
cudaError_t check_launch(const struct sim_kernel *k, dim3 grid, dim3 block, size_t shared)
{
    if (!k)
        return cudaErrorInvalidDeviceFunction;
    uint64_t threads = (uint64_t)block.x * block.y * block.z;
    if (!grid.x || !grid.y || !grid.z || !threads || threads > 1024 || block.z > 64 ||
        grid.y > 65535 || grid.z > 65535 || shared > (size_t)k->max_dynamic_shared)
        return cudaErrorInvalidConfiguration;
    return cudaSuccess;
}

/* A library built for simppu (the NCCL stand-in) sets how long its next
 * kernel lasts (0: as its name says) and learns when it runs: `observer` is
 * called from the stream's worker with the kernel's simulated start and end
 * (CLOCK_MONOTONIC ns), or at once with 0, 0 when the launch does not run
 * (an error, stream capture). */
EXPORT void simppu_next_launch(uint64_t duration_ns, void (*observer)(void *, uint64_t, uint64_t),
                               void *ctx)
{
    next_launch.pending = 1;
    next_launch.duration_ns = duration_ns;
    next_launch.observer = observer;
    next_launch.ctx = ctx;
}

static cudaError_t launch_observed(const struct sim_kernel *k, dim3 grid, dim3 block, size_t shared,
                                   cudaStream_t stream, uint8_t launch_type);

static cudaError_t launch(const struct sim_kernel *k, dim3 grid, dim3 block, size_t shared,
                          cudaStream_t stream, uint8_t launch_type)
{
    if (!next_launch.pending)
        return launch_observed(k, grid, block, shared, stream, launch_type);
    next_launch.pending = 0;
    cudaError_t rc = launch_observed(k, grid, block, shared, stream, launch_type);
    if (next_launch.observer) /* not consumed: it will not run */
        next_launch.observer(next_launch.ctx, 0, 0);
    next_launch.observer = NULL;
    next_launch.duration_ns = 0;
    return rc;
}

static cudaError_t launch_observed(const struct sim_kernel *k, dim3 grid, dim3 block, size_t shared,
                                   cudaStream_t stream, uint8_t launch_type)
{
    if (!k)
        return cudaErrorInvalidDeviceFunction;
    struct sim_stream *s = resolve_stream(stream);
    if (!s)
        return cudaErrorInvalidResourceHandle;
    cudaError_t rc = check_launch(k, grid, block, shared);
    if (rc != cudaSuccess)
        return rc;
    uint64_t threads = (uint64_t)block.x * block.y * block.z;
    if (launch_type == CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE &&
        (uint64_t)grid.x * grid.y * grid.z >
            (uint64_t)blocks_per_multiprocessor(k, (int)threads, shared) * 64)
        return cudaErrorCooperativeLaunchTooLarge; /* every block must be resident at once */
    if (s->capture) {
        struct sim_node *n = capture_node(s, CU_GRAPH_NODE_TYPE_KERNEL);
        if (!n)
            return cudaErrorStreamCaptureInvalidated;
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
    op->launch_type = launch_type;
    op->duration_ns = next_launch.duration_ns;
    op->observer = next_launch.observer;
    op->observer_ctx = next_launch.ctx;
    next_launch.observer = NULL; /* consumed: the worker calls it */
    enqueue(s, op);
    return cudaSuccess;
}

EXPORT cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
                                    size_t shared, cudaStream_t stream)
{
    (void)args;
    APIP(cudaLaunchKernel, v7000, func, grid, block, args, shared, stream);
    struct sim_kernel *k = kernel_of(func);
    call_.data.symbolName = k ? k->name : NULL;
    RETURN(launch(k, grid, block, shared, stream, CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR));
}

EXPORT cudaError_t cudaLaunchCooperativeKernel(const void *func, dim3 grid, dim3 block, void **args,
                                               size_t shared, cudaStream_t stream)
{
    APIP(cudaLaunchCooperativeKernel, v9000, func, grid, block, args, shared, stream);
    struct sim_kernel *k = kernel_of(func);
    call_.data.symbolName = k ? k->name : NULL;
    RETURN(launch(k, grid, block, shared, stream,
                  CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE));
}

/* cudaLaunchKernelEx's entry point: the configuration with its attributes
 * (cooperative launches are told apart; clusters, priorities and the others
 * do not change the simulation). */
EXPORT cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func,
                                       void **args)
{
    APIP(cudaLaunchKernelExC, v11060, config, func, args);
    struct sim_kernel *k = kernel_of(func);
    call_.data.symbolName = k ? k->name : NULL;
    if (!config || (config->numAttrs && !config->attrs))
        RETURN(cudaErrorInvalidValue);
    uint8_t type = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
    for (unsigned i = 0; i < config->numAttrs; i++)
        if (config->attrs[i].id == cudaLaunchAttributeCooperative &&
            config->attrs[i].val.cooperative)
            type = CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE;
    RETURN(launch(k, config->gridDim, config->blockDim, config->dynamicSmemBytes, config->stream,
                  type));
}

/* A host function in stream order (a host node when the stream is captured):
 * no device work, so no activity record, as with CUPTI. */
EXPORT cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *user_data)
{
    APIP(cudaLaunchHostFunc, v10000, stream, fn, user_data);
    struct sim_stream *s = resolve_stream(stream);
    if (!s)
        RETURN(cudaErrorInvalidResourceHandle);
    if (!fn)
        RETURN(cudaErrorInvalidValue);
    if (s->capture) {
        struct sim_node *n = capture_node(s, CU_GRAPH_NODE_TYPE_HOST);
        if (!n)
            RETURN(cudaErrorStreamCaptureInvalidated);
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
    k->max_dynamic_shared = SIMPPU_DEFAULT_DYNAMIC_SHARED;
    k->carveout = -1;
    pthread_mutex_lock(&rt.lock);
    k->next = rt.kernels;
    rt.kernels = k;
    pthread_mutex_unlock(&rt.lock);
    k->duration_ns = configured_duration(k->name);
}

/* A kernel of a module loaded through the driver API, by its (mangled) name:
 * one per name, as for registered kernels; its handle is the CUfunction. */
EXPORT struct sim_kernel *simppu_module_function(const char *name)
{
    pthread_mutex_lock(&rt.lock);
    struct sim_kernel *k = rt.kernels;
    while (k && (k->host_fun || strcmp(k->name, name) != 0))
        k = k->next;
    if (!k && (k = calloc(1, sizeof *k)) != NULL) {
        k->name = strdup(name);
        k->max_dynamic_shared = SIMPPU_DEFAULT_DYNAMIC_SHARED;
        k->carveout = -1;
        k->next = rt.kernels;
        rt.kernels = k;
    }
    pthread_mutex_unlock(&rt.lock);
    if (k && !k->duration_ns)
        k->duration_ns = configured_duration(k->name);
    return k;
}

/* Blocks of `block_size` threads one multiprocessor holds at once (driver occupancy calls). */
EXPORT int simppu_blocks_per_multiprocessor(const struct sim_kernel *k, int block_size,
                                            size_t dynamic_shared)
{
    return k ? blocks_per_multiprocessor(k, block_size, dynamic_shared) : 0;
}

/* The device's context (the primary one), created on first use; NULL for no device. */
EXPORT void *simppu_context_handle(int device)
{
    ensure_init();
    return valid_device(device) ? context_of(device) : NULL;
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
    RETURN(launch(k, grid, block, shared, stream, CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR));
}
