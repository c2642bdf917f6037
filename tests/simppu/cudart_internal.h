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
    uint64_t not_before_ts; /* the launching call's start on CUPTI's clock */
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
extern __thread uint64_t current_enter_ts;    /* its start, as CUPTI reports it */

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
};

#define API(fn_name, version, params_ptr)                                                          \
    struct api_call call_ = {CUPTI_RUNTIME_TRACE_CBID_##fn_name##_##version,                       \
                             #fn_name,                                                             \
                             params_ptr,                                                           \
                             0,                                                                    \
                             cudaSuccess,                                                          \
                             0,                                                                    \
                             0,                                                                    \
                             0,                                                                    \
                             0,                                                                    \
                             {0}};                                                                 \
    api_enter(&call_)
#define RETURN(result) return api_exit(&call_, (result))

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
                 uint64_t bytes, uint32_t value, int async, uint64_t graph_node, uint32_t graph_id);
void run_host_fn(cudaHostFn_t fn, void *data, uint64_t start);
struct sim_op *op_new(enum op_kind kind);
uint64_t enqueue(struct sim_stream *s, struct sim_op *op);
void host_wait(struct sim_stream *s, uint64_t seq);
int valid_device(int device);
struct sim_node *capture_node(struct sim_stream *s, CUgraphNodeType type);
void fill_graph_and_emit(struct sim_op *op, struct sim_stream *s, uint64_t start);

#endif
