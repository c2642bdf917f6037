/* simppu libcudart.so.13: what the runtime's files share (objects, global
 * state, the API call path, the stream engine).  A test fixture: never linked
 * into asys. */
#ifndef CUDART_INTERNAL_H
#define CUDART_INTERNAL_H

#include <cuda_runtime_api.h>
#include <cupti.h> /* includes the generated API parameter structs */
#include <pthread.h>
#include <stdint.h>

#include "simppu_internal.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_DEVICES 16
#define MAX_STREAMS 256
#define MAX_EVENTS 4096
#define MAX_DEPS 64
#define END_RING 4096
#define SLEEP_AHEAD_NS 200000 /* workers only sleep when this far ahead of real time */
#define SIMPPU_PRIORITY_LEAST 0
#define SIMPPU_PRIORITY_GREATEST (-5)
#define SIMPPU_DEFAULT_DYNAMIC_SHARED (48 * 1024)

/* ---- objects -------------------------------------------------------------------- */

struct sim_kernel {
    const void *host_fun;
    char *name; /* mangled */
    uint64_t duration_ns;
    /* what cudaFuncSetAttribute / cudaFuncSetCacheConfig set */
    int max_dynamic_shared;
    int carveout;
    int cluster[3];
    int non_portable_cluster;
    int cluster_policy;
    enum cudaFuncCache cache_config;
    struct sim_kernel *next;
};

enum op_kind { OP_KERNEL, OP_MEMCPY, OP_MEMSET, OP_EVENT_RECORD, OP_WAIT, OP_GRAPH, OP_HOST };

struct sim_stream;
struct sim_event;
struct sim_exec;
struct sim_graph;
struct sim_pool;

struct dependency {
    struct sim_stream *stream;
    uint64_t seq;
};

/* Memory in rows and slices: width bytes x height rows x depth slices, rows
 * `pitch` bytes apart, slices `slice` bytes apart. */
struct region {
    char *base;
    size_t pitch, slice;
    size_t width, height, depth;
};

/* A copy, classified: where the bytes go and come from, as CUPTI names them. */
struct copy_plan {
    struct region dst, src;
    uint64_t bytes;
    uint8_t copy_kind, src_kind, dst_kind;
    int src_device, dst_device;
};

/* A memset: `value` in elements of element_size bytes (1, 2 or 4). */
struct set_plan {
    struct region dst;
    uint64_t bytes;
    uint32_t value;
    unsigned element_size;
    uint8_t memory_kind;
};

struct sim_node;

struct sim_op {
    enum op_kind kind;
    struct sim_op *next;
    uint64_t seq;
    uint64_t enqueue_ns;
    uint64_t not_before_ts; /* the launching call's start on CUPTI's clock */
    uint32_t correlation;
    int ndeps;
    struct dependency deps[MAX_DEPS];
    /* kernel */
    const struct sim_kernel *kernel;
    uint64_t duration_ns; /* 0: the kernel's own */
    void (*observer)(void *, uint64_t, uint64_t); /* simppu_next_launch */
    void *observer_ctx;
    dim3 grid, block;
    size_t shared_memory;
    uint8_t launch_type; /* CUpti_ActivityLaunchType */
    /* memcpy / memset */
    uint64_t bytes;
    uint8_t copy_kind, src_kind, dst_kind, is_async;
    int src_device, dst_device; /* peer copies */
    uint32_t memset_value;
    uint8_t memory_kind;
    /* event record */
    struct sim_event *event;
    uint64_t sync_id;
    /* graph launch: per node of the exec (by index), this launch's event
     * record sync ids, event waits and node parameters */
    struct sim_exec *exec;
    uint64_t *node_sync_ids;
    struct dependency *node_waits;
    struct sim_node *node_params; /* each node as it was when launched */
    /* host function, or a stream callback (cudaStreamAddCallback) */
    cudaHostFn_t host_fn;
    void *host_data;
    cudaStreamCallback_t callback;
    cudaStream_t callback_stream;
};

struct sim_context {
    uint32_t id;
    int device;
    struct sim_stream *legacy;
};

#define STREAM_ATTRIBUTES 32

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
    /* cudaStreamSetAttribute */
    cudaLaunchAttributeValue attributes[STREAM_ATTRIBUTES];
    uint32_t attributes_set;
    /* stream capture */
    struct sim_graph *capture;
    struct sim_node **tail_nodes;
    int tail_count;
    unsigned long long capture_id;
    enum cudaStreamCaptureMode capture_mode;
    int capture_into_user_graph; /* cudaStreamBeginCaptureToGraph */
    int capture_invalid; /* an operation the capture could not take */
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

/* A conditional node's handle (cudaGraphConditionalHandleCreate). */
struct sim_conditional {
    struct sim_graph *graph;
    unsigned default_value;
    unsigned flags;
};

struct sim_node {
    uint64_t id;
    CUgraphNodeType type;
    struct sim_graph *graph; /* the graph it is in */
    int index; /* in an exec: its place among every node, nested ones too */
    int disabled; /* in an exec: cudaGraphNodeSetEnabled(0) */
    struct sim_node **deps;
    int ndeps, deps_cap;
    struct sim_node *original; /* for clones */
    /* kernel */
    const struct sim_kernel *kernel;
    dim3 grid, block;
    size_t shared_memory;
    /* memcpy and memset: the bytes move when the node runs */
    struct copy_plan copy;
    struct set_plan set;
    /* host function */
    cudaHostFn_t host_fn;
    void *host_data;
    /* event record and wait */
    struct sim_event *event;
    /* child graph (one body) and conditional (its bodies) */
    struct sim_graph **bodies;
    unsigned body_count;
    enum cudaGraphConditionalNodeType conditional_type;
    struct sim_conditional *conditional;
    /* memory alloc and free: the address (fixed when the alloc node is made) */
    void *address;
    size_t alloc_bytes;
    int alloc_device;
    /* simulated times of the current launch */
    uint64_t start, end;
};

struct sim_graph {
    uint32_t id;
    struct sim_node **nodes;
    int count, cap;
    struct sim_node *owner; /* a child graph or conditional body: its node */
};

struct sim_exec {
    uint32_t id;
    struct sim_graph *source;
    struct sim_graph *graph; /* clones of the source's nodes, in dependency order */
    int node_total; /* nodes, nested graphs' included */
    unsigned long long flags;
    /* launches of one exec run one after the other */
    struct sim_stream *last_stream;
    uint64_t last_seq;
};

struct sim_device {
    int physical;
    uint64_t memory_total;
    uint64_t memory_used;
    struct sim_context *ctx;
    unsigned flags; /* cudaSetDeviceFlags */
    size_t limits[8]; /* cudaDeviceSetLimit, by enum cudaLimit */
    int limits_set; /* the defaults are in */
    enum cudaFuncCache cache_config;
    uint32_t peers; /* bit d: peer access to device d enabled */
    struct sim_pool *default_pool, *current_pool;
    /* memory of graph alloc nodes (cudaDeviceGetGraphMemAttribute) */
    uint64_t graph_used, graph_used_high, graph_reserved, graph_reserved_high;
};

/* A memory pool (cudaMemPoolCreate, or a device's default pool). */
struct sim_pool {
    int device;
    int is_default;
    uint64_t release_threshold;
    uint64_t reserved, reserved_high, used, used_high;
    int reuse[3]; /* cudaMemPoolReuse* attributes 1..3 */
    size_t max_size;
    uint32_t access; /* bit d: device d may read and write (cudaMemPoolSetAccess) */
    struct sim_pool *next;
};

/* An allocation the runtime knows. */
struct allocation {
    uintptr_t base;
    size_t size;
    int device; /* -1: host memory (managed memory: the device it was made on) */
    uint8_t kind; /* CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, _PINNED, _MANAGED or _ARRAY */
    uint8_t registered; /* cudaHostRegister: the program's memory, not ours to free */
    uint8_t graph; /* a graph alloc node's address: allocated while `live` */
    uint8_t live;
    uint8_t is_static; /* a __device__ variable */
    unsigned flags; /* cudaHostAlloc, cudaHostRegister or cudaMallocManaged flags */
    struct sim_pool *pool; /* stream-ordered allocations */
    struct allocation *next;
};

/* ---- global state ------------------------------------------------------------------ */

struct runtime {
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
    struct sim_pool *pools;
    uint32_t next_id; /* contexts, streams, events, graphs, execs share one counter */
    uint64_t next_node_id;
    uint32_t next_correlation;
    uint64_t default_kernel_ns;
    char *kernel_times;
    double pageable_gbps, pinned_gbps, device_gbps, memset_gbps;
    const struct simppu_hooks *hooks;
};
extern struct runtime rt;

extern __thread int current_device;
extern __thread cudaError_t last_error;
extern __thread uint32_t current_correlation; /* of the API call in progress */
extern __thread uint64_t current_enter_ts; /* its start, as CUPTI reports it */

/* ---- API calls: callbacks at entry and exit ------------------------------------------------- */

struct api_call {
    CUpti_CallbackId cbid;
    const char *name;
    const void *params;
    uint64_t correlation_data;
    cudaError_t result;
    uint32_t saved_correlation;
    uint64_t start_ns;
    uint64_t start_ts, saved_enter_ts; /* the start on CUPTI's clock */
    CUpti_CallbackData data;
    int driver; /* a driver API call (libcuda.so.1): CUPTI_CB_DOMAIN_DRIVER_API */
    int hidden; /* a runtime call made by a driver call: no callbacks, the driver call's correlation
                 */
};

#define API(fn_name, version, params_ptr) \
    struct api_call call_ = {CUPTI_RUNTIME_TRACE_CBID_##fn_name##_##version, \
                             #fn_name, \
                             params_ptr, \
                             0, \
                             cudaSuccess, \
                             0, \
                             0, \
                             0, \
                             0, \
                             {0}, \
                             0, \
                             0}; \
    api_enter(&call_)
#define RETURN(result) return api_exit(&call_, (result))
/* API with the call's parameters as CUPTI hands them to a tool (the generated
 * cudaX_vN_params struct of cupti's generated_cuda_runtime_api_meta.h) */
#define APIP(fn_name, version, ...) \
    struct fn_name##_##version##_params_st params_ = {__VA_ARGS__}; \
    API(fn_name, version, &params_)

static inline struct cudaPitchedPtr pitched_ptr(void *p, size_t pitch, size_t x, size_t y)
{
    struct cudaPitchedPtr r = {p, pitch, x, y};
    return r;
}

static inline struct cudaExtent extent_of(size_t width, size_t height, size_t depth)
{
    struct cudaExtent r = {width, height, depth};
    return r;
}

/* ---- shared between the runtime's files ---------------------------------------------- */

void api_enter(struct api_call *c);
cudaError_t api_exit(struct api_call *c, cudaError_t result);
/* api_exit for the calls that report an error without setting it (cudaGetLastError) */
cudaError_t api_finish(struct api_call *c, cudaError_t result, int sets_last_error);
struct span {
    uint64_t start, end;
};
struct span device_span(const struct sim_op *op, uint64_t start, uint64_t end);
uint32_t new_id(void);
const struct simppu_hooks *hooks(void);
int wants(CUpti_ActivityKind kind);
uint64_t ts(uint64_t ns);
void emit(const void *record, size_t size);
void graph_resource(CUpti_CallbackId cbid, CUpti_GraphData *graph);
void ensure_init(void);
struct sim_context *context_of(int device);
struct sim_stream *resolve_stream(cudaStream_t handle);
uint64_t kernel_duration(const struct sim_kernel *k);
uint64_t copy_duration(uint64_t bytes, uint8_t copy_kind, uint8_t src, uint8_t dst);
void emit_kernel(const struct sim_op *op, struct sim_stream *s, uint64_t start, uint64_t end,
                 uint64_t graph_node, uint32_t graph_id, const struct sim_kernel *kernel, dim3 grid,
                 dim3 block, size_t shared);
void emit_peer_memcpy(const struct sim_op *op, struct sim_stream *s, uint64_t start, uint64_t end,
                      uint64_t bytes, int src_device, int dst_device, int async,
                      uint64_t graph_node, uint32_t graph_id);
void emit_memcpy(const struct sim_op *op, struct sim_stream *s, uint64_t start, uint64_t end,
                 uint64_t bytes, uint8_t copy_kind, uint8_t src, uint8_t dst, int async,
                 uint64_t graph_node, uint32_t graph_id);
void emit_memset(const struct sim_op *op, struct sim_stream *s, uint64_t start, uint64_t end,
                 uint64_t bytes, uint32_t value, uint8_t memory_kind, int async,
                 uint64_t graph_node, uint32_t graph_id);
void run_host_fn(cudaHostFn_t fn, void *data, uint64_t start);
struct sim_op *op_new(enum op_kind kind);
uint64_t enqueue(struct sim_stream *s, struct sim_op *op);
void host_wait(struct sim_stream *s, uint64_t seq);
int valid_device(int device);
void emit_device(int device);
struct sim_kernel *kernel_of(const void *host_fun);
/* libcuda.so.1's entry points: a driver API call wraps the runtime calls that implement it */
void simppu_driver_enter(struct api_call *c);
int simppu_driver_exit(struct api_call *c, int result);
void *simppu_context_handle(int device);
struct sim_kernel *simppu_module_function(const char *name);
int simppu_blocks_per_multiprocessor(const struct sim_kernel *k, int block_size,
                                     size_t dynamic_shared);
int blocks_per_multiprocessor(const struct sim_kernel *k, int block_size, size_t dynamic_shared);
struct sim_node *capture_node(struct sim_stream *s, CUgraphNodeType type);
uint64_t fill_graph_and_emit(struct sim_op *op, struct sim_stream *s, uint64_t start);
void emit_event_record(const struct sim_op *op, struct sim_stream *s, const struct sim_event *e,
                       uint64_t sync_id, uint64_t at);
uint64_t wait_decided(struct sim_stream *s, uint64_t seq);
void resource(CUpti_CallbackId cbid, const void *data);
struct sim_event *resolve_event(cudaEvent_t handle);
cudaError_t check_launch(const struct sim_kernel *k, dim3 grid, dim3 block, size_t shared);
cudaError_t symbol_address(const void *symbol, size_t offset, size_t count, char **at);
void sleep_until(uint64_t ns);

/* memory (cudart_memory.c) */
uint8_t memory_kind_of(const void *p, int *device); /* CUPTI memory kind; device or -1 */
void emit_memory_at(CUpti_ActivityMemoryOperationType op, uint8_t kind, const void *address,
                    uint64_t bytes, int device, uint32_t stream, uint32_t correlation,
                    uint64_t timestamp, const struct sim_pool *pool);
void pools_release(int device);
void memory_reset_device(int device);
void *graph_memory_reserve(size_t bytes, int device);
void graph_memory_mark(void *address, int live);
void graph_memory_record(CUpti_ActivityMemoryOperationType type, void *address,
                         const struct sim_op *op, struct sim_stream *s, uint64_t timestamp);
cudaError_t plan_copy(struct copy_plan *p, struct region dst, struct region src,
                      enum cudaMemcpyKind kind);
cudaError_t plan_copy_3d(struct copy_plan *p, const struct cudaMemcpy3DParms *parms);
void run_copy(const struct copy_plan *p);
cudaError_t submit_copy(const struct copy_plan *p, struct sim_stream *s, int async);
void track_array_memory(void *p, size_t size, int device);
void untrack_array_memory(void *p);

/* arrays (cudart_array.c) */
cudaError_t array_region(cudaArray_const_t array, size_t x, size_t y, size_t z, size_t width,
                         size_t height, size_t depth, struct region *r);
size_t array_element(cudaArray_const_t array);
cudaError_t plan_set(struct set_plan *p, struct region dst, uint32_t value, unsigned element_size);
void run_set(const struct set_plan *p);

/* capture (cudart_graph.c) */
cudaError_t capture_invalidate(struct sim_stream *s, cudaError_t error);
cudaError_t capture_mem_alloc(struct sim_stream *s, void **ptr, size_t size, int device);
cudaError_t capture_mem_free(struct sim_stream *s, void *ptr);

#endif
