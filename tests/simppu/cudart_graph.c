/* simppu libcudart.so.13: graphs, built by stream capture or by hand, their
 * instantiation, update and launch.
 *
 * Every node and edge is announced to CUPTI as the driver does (resource
 * callbacks GRAPH_CREATED, GRAPHNODE_CREATED, GRAPHNODE_DEPENDENCY_CREATED,
 * GRAPH_CLONED, GRAPHNODE_CLONED, GRAPHEXEC_CREATED ...), so a tool maps
 * nodes to the calls that made them and clones to their originals.
 * Instantiation clones the graph, nested graphs too, into dependency order;
 * a launch is one operation of its stream whose nodes start when the launch
 * starts and their dependencies end (independent branches overlap), each
 * node's work reported with the graph's id, the node's id and the launch's
 * correlation id.  Copies and memsets of graph nodes move the bytes when the
 * node runs.
 *
 * Conditional nodes: no device code runs here, so a handle keeps its default
 * value for the whole launch.  IF runs body 0 when the value is non-zero,
 * else body 1 when there is one; WHILE runs its body once when the value is
 * non-zero (as if the body's kernels then set it to zero) and never when it
 * is zero; SWITCH runs body[value] when value < size. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudart_internal.h"

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

static void dependency_callback(CUpti_CallbackId cbid, struct sim_node *n, struct sim_node *dep)
{
    CUpti_GraphData data;
    memset(&data, 0, sizeof data);
    data.graph = (CUgraph)n->graph;
    data.node = (CUgraphNode)n;
    data.nodeType = n->type;
    data.dependency = (CUgraphNode)dep;
    graph_resource(cbid, &data);
}

/* `n` waits for `dep` (once). */
static void add_dependency(struct sim_node *n, struct sim_node *dep, int announce)
{
    for (int i = 0; i < n->ndeps; i++)
        if (n->deps[i] == dep)
            return;
    if (n->ndeps == n->deps_cap) {
        n->deps_cap = n->deps_cap ? n->deps_cap * 2 : 4;
        n->deps = realloc(n->deps, (size_t)n->deps_cap * sizeof *n->deps);
    }
    n->deps[n->ndeps++] = dep;
    if (announce)
        dependency_callback(CUPTI_CBID_RESOURCE_GRAPHNODE_DEPENDENCY_CREATED, n, dep);
}

static struct sim_node *node_add(struct sim_graph *g, CUgraphNodeType type,
                                 struct sim_node *const *deps, int ndeps, struct sim_node *original)
{
    struct sim_node *n = calloc(1, sizeof *n);
    n->id = __atomic_add_fetch(&rt.next_node_id, 1, __ATOMIC_RELAXED);
    n->type = type;
    n->graph = g;
    n->original = original;
    n->alloc_device = -1;
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
    for (int i = 0; i < ndeps; i++)
        add_dependency(n, deps[i], 1);
    return n;
}

static int in_graph(const struct sim_graph *g, const struct sim_node *n)
{
    return n && n->graph == g;
}

/* Dependencies for a new node of `g`: each must be a node of `g`. */
static cudaError_t check_deps(const struct sim_graph *g, const cudaGraphNode_t *deps, size_t n)
{
    if (n && !deps)
        return cudaErrorInvalidValue;
    for (size_t i = 0; i < n; i++)
        if (!in_graph(g, (const struct sim_node *)deps[i]))
            return cudaErrorInvalidValue;
    return cudaSuccess;
}

/* ---- stream capture
 * ------------------------------------------------------------------------------ */

static __thread enum cudaStreamCaptureMode thread_capture_mode = cudaStreamCaptureModeGlobal;
static unsigned long long capture_ids;

static void set_tail(struct sim_stream *s, struct sim_node *const *nodes, int count)
{
    s->tail_nodes = realloc(s->tail_nodes, (size_t)(count ? count : 1) * sizeof *s->tail_nodes);
    if (count)
        memcpy(s->tail_nodes, nodes, (size_t)count * sizeof *nodes);
    s->tail_count = count;
}

/* During capture, an operation becomes a node after the stream's current tail
 * (NULL once the capture was invalidated). */
struct sim_node *capture_node(struct sim_stream *s, CUgraphNodeType type)
{
    if (s->capture_invalid)
        return NULL;
    struct sim_node *n = node_add(s->capture, type, s->tail_nodes, s->tail_count, NULL);
    set_tail(s, &n, 1);
    return n;
}

cudaError_t capture_invalidate(struct sim_stream *s, cudaError_t error)
{
    s->capture_invalid = 1;
    return error;
}

cudaError_t capture_mem_alloc(struct sim_stream *s, void **ptr, size_t size, int device)
{
    void *address = graph_memory_reserve(size, device);
    if (!address)
        return cudaErrorMemoryAllocation;
    struct sim_node *n = capture_node(s, CU_GRAPH_NODE_TYPE_MEM_ALLOC);
    if (!n)
        return cudaErrorStreamCaptureInvalidated;
    n->address = address;
    n->alloc_bytes = size;
    n->alloc_device = device;
    *ptr = address;
    return cudaSuccess;
}

cudaError_t capture_mem_free(struct sim_stream *s, void *ptr)
{
    struct sim_node *n = capture_node(s, CU_GRAPH_NODE_TYPE_MEM_FREE);
    if (!n)
        return cudaErrorStreamCaptureInvalidated;
    n->address = ptr;
    return cudaSuccess;
}

static cudaError_t begin_capture(struct sim_stream *s, struct sim_graph *g,
                                 struct sim_node *const *deps, int ndeps,
                                 enum cudaStreamCaptureMode mode, int into_user_graph)
{
    if (!s)
        return cudaErrorInvalidResourceHandle;
    if ((unsigned)mode > cudaStreamCaptureModeRelaxed)
        return cudaErrorInvalidValue;
    if (s->legacy)
        return cudaErrorStreamCaptureUnsupported;
    if (s->capture)
        return cudaErrorIllegalState;
    s->capture = g;
    s->capture_mode = mode;
    s->capture_into_user_graph = into_user_graph;
    s->capture_invalid = 0;
    s->capture_id = __atomic_add_fetch(&capture_ids, 1, __ATOMIC_RELAXED);
    set_tail(s, deps, ndeps);
    return cudaSuccess;
}

EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
    APIP(cudaStreamBeginCapture, v10000, stream, mode);
    struct sim_stream *s = resolve_stream(stream);
    if (s && !s->legacy && !s->capture && (unsigned)mode <= cudaStreamCaptureModeRelaxed)
        RETURN(begin_capture(s, graph_new(), NULL, 0, mode, 0));
    RETURN(begin_capture(s, NULL, NULL, 0, mode, 0));
}

EXPORT cudaError_t cudaStreamBeginCaptureToGraph(cudaStream_t stream, cudaGraph_t graph,
                                                 const cudaGraphNode_t *dependencies,
                                                 const cudaGraphEdgeData *edge_data, size_t count,
                                                 enum cudaStreamCaptureMode mode)
{
    APIP(cudaStreamBeginCaptureToGraph, v12030, stream, graph, dependencies, edge_data, count,
         mode);
    struct sim_graph *g = (struct sim_graph *)graph;
    if (!g)
        RETURN(cudaErrorInvalidValue);
    cudaError_t rc = check_deps(g, dependencies, count);
    if (rc != cudaSuccess)
        RETURN(rc);
    RETURN(begin_capture(resolve_stream(stream), g, (struct sim_node *const *)dependencies,
                         (int)count, mode, 1));
}

EXPORT cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *graph)
{
    APIP(cudaStreamEndCapture, v10000, stream, graph);
    struct sim_stream *s = resolve_stream(stream);
    if (!s)
        RETURN(cudaErrorInvalidResourceHandle);
    if (!s->capture)
        RETURN(cudaErrorIllegalState);
    if (!graph && !s->capture_into_user_graph)
        RETURN(cudaErrorInvalidValue);
    struct sim_graph *g = s->capture;
    int invalid = 0;
    /* every stream pulled into this capture (through events) ends with it */
    pthread_mutex_lock(&rt.lock);
    for (int i = 0; i < rt.stream_count; i++) {
        struct sim_stream *o = rt.streams[i];
        if (o->capture == g) {
            invalid |= o->capture_invalid;
            o->capture = NULL;
            o->tail_count = 0;
            o->capture_invalid = 0;
        }
    }
    pthread_mutex_unlock(&rt.lock);
    if (graph)
        *graph = invalid ? NULL : (cudaGraph_t)g;
    RETURN(invalid ? cudaErrorStreamCaptureInvalidated : cudaSuccess);
}

static enum cudaStreamCaptureStatus capture_status(const struct sim_stream *s)
{
    if (!s->capture)
        return cudaStreamCaptureStatusNone;
    return s->capture_invalid ? cudaStreamCaptureStatusInvalidated : cudaStreamCaptureStatusActive;
}

EXPORT cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *status)
{
    APIP(cudaStreamIsCapturing, v10000, stream, status);
    struct sim_stream *s = resolve_stream(stream);
    if (!s)
        RETURN(cudaErrorInvalidResourceHandle);
    if (!status)
        RETURN(cudaErrorInvalidValue);
    *status = capture_status(s);
    RETURN(cudaSuccess);
}

/* Every edge of a capture is a default edge: their data are zeros. */
static const cudaGraphEdgeData default_edges[256];

EXPORT cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream,
                                            enum cudaStreamCaptureStatus *status,
                                            unsigned long long *id, cudaGraph_t *graph,
                                            const cudaGraphNode_t **dependencies,
                                            const cudaGraphEdgeData **edge_data, size_t *count)
{
    APIP(cudaStreamGetCaptureInfo, v12030, stream, status, id, graph, dependencies, edge_data,
         count);
    struct sim_stream *s = resolve_stream(stream);
    if (!s)
        RETURN(cudaErrorInvalidResourceHandle);
    if (!status)
        RETURN(cudaErrorInvalidValue);
    *status = capture_status(s);
    int active = *status == cudaStreamCaptureStatusActive;
    if (id)
        *id = active ? s->capture_id : 0;
    if (graph)
        *graph = active ? (cudaGraph_t)s->capture : NULL;
    if (dependencies)
        *dependencies = active ? (const cudaGraphNode_t *)s->tail_nodes : NULL;
    if (edge_data)
        *edge_data = active && s->tail_count <= 256 ? default_edges : NULL;
    if (count)
        *count = active ? (size_t)s->tail_count : 0;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t stream,
                                                       cudaGraphNode_t *dependencies,
                                                       const cudaGraphEdgeData *edge_data,
                                                       size_t count, unsigned int flags)
{
    APIP(cudaStreamUpdateCaptureDependencies, v12030, stream, dependencies, edge_data, count,
         flags);
    struct sim_stream *s = resolve_stream(stream);
    if (!s)
        RETURN(cudaErrorInvalidResourceHandle);
    if (!s->capture)
        RETURN(cudaErrorIllegalState);
    if (flags != cudaStreamAddCaptureDependencies && flags != cudaStreamSetCaptureDependencies)
        RETURN(cudaErrorInvalidValue);
    cudaError_t rc = check_deps(s->capture, dependencies, count);
    if (rc != cudaSuccess)
        RETURN(rc);
    if (flags == cudaStreamSetCaptureDependencies) {
        set_tail(s, (struct sim_node *const *)dependencies, (int)count);
        RETURN(cudaSuccess);
    }
    s->tail_nodes =
        realloc(s->tail_nodes, (size_t)(s->tail_count + (int)count + 1) * sizeof *s->tail_nodes);
    for (size_t i = 0; i < count; i++) {
        int seen = 0;
        for (int j = 0; j < s->tail_count; j++)
            seen |= s->tail_nodes[j] == (struct sim_node *)dependencies[i];
        if (!seen)
            s->tail_nodes[s->tail_count++] = (struct sim_node *)dependencies[i];
    }
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode)
{
    APIP(cudaThreadExchangeStreamCaptureMode, v10010, mode);
    if (!mode || (unsigned)*mode > cudaStreamCaptureModeRelaxed)
        RETURN(cudaErrorInvalidValue);
    enum cudaStreamCaptureMode old = thread_capture_mode;
    thread_capture_mode = *mode;
    *mode = old;
    RETURN(cudaSuccess);
}

/* ---- graphs by hand
 * ---------------------------------------------------------------------------------- */

EXPORT cudaError_t cudaGraphCreate(cudaGraph_t *graph, unsigned int flags)
{
    APIP(cudaGraphCreate, v10000, graph, flags);
    if (!graph || flags != 0)
        RETURN(cudaErrorInvalidValue);
    ensure_init();
    *graph = (cudaGraph_t)graph_new();
    RETURN(cudaSuccess);
}

/* A new node of `graph` after `deps`, checked; NULL with *rc set when it cannot be. */
static struct sim_node *new_node(cudaGraphNode_t *out, cudaGraph_t graph,
                                 const cudaGraphNode_t *deps, size_t ndeps, CUgraphNodeType type,
                                 cudaError_t *rc)
{
    struct sim_graph *g = (struct sim_graph *)graph;
    *rc = !out || !g ? cudaErrorInvalidValue : check_deps(g, deps, ndeps);
    if (*rc != cudaSuccess)
        return NULL;
    struct sim_node *n = node_add(g, type, (struct sim_node *const *)deps, (int)ndeps, NULL);
    *out = (cudaGraphNode_t)n;
    return n;
}

static cudaError_t kernel_params(const struct cudaKernelNodeParams *p, const struct sim_kernel **k)
{
    if (!p)
        return cudaErrorInvalidValue;
    *k = kernel_of(p->func);
    return check_launch(*k, p->gridDim, p->blockDim, p->sharedMemBytes);
}

static void set_kernel(struct sim_node *n, const struct sim_kernel *k,
                       const struct cudaKernelNodeParams *p)
{
    n->kernel = k;
    n->grid = p->gridDim;
    n->block = p->blockDim;
    n->shared_memory = p->sharedMemBytes;
}

EXPORT cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t *node, cudaGraph_t graph,
                                          const cudaGraphNode_t *deps, size_t ndeps,
                                          const struct cudaKernelNodeParams *params)
{
    APIP(cudaGraphAddKernelNode, v10000, node, graph, deps, ndeps, params);
    const struct sim_kernel *k = NULL;
    cudaError_t rc = kernel_params(params, &k);
    if (rc != cudaSuccess)
        RETURN(rc);
    struct sim_node *n = new_node(node, graph, deps, ndeps, CU_GRAPH_NODE_TYPE_KERNEL, &rc);
    if (n)
        set_kernel(n, k, params);
    RETURN(rc);
}

static struct sim_node *node_of(cudaGraphNode_t node, CUgraphNodeType type)
{
    struct sim_node *n = (struct sim_node *)node;
    return n && n->type == type ? n : NULL;
}

static void node_updated(struct sim_node *n, int in_exec)
{
    CUpti_GraphData data;
    memset(&data, 0, sizeof data);
    data.graph = (CUgraph)n->graph;
    data.node = (CUgraphNode)n;
    data.nodeType = n->type;
    graph_resource(in_exec ? CUPTI_CBID_RESOURCE_GRAPH_NODE_SET_PARAMS
                           : CUPTI_CBID_RESOURCE_GRAPH_NODE_UPDATED,
                   &data);
}

EXPORT cudaError_t cudaGraphKernelNodeGetParams(cudaGraphNode_t node,
                                                struct cudaKernelNodeParams *params)
{
    APIP(cudaGraphKernelNodeGetParams, v10000, node, params);
    struct sim_node *n = node_of(node, CU_GRAPH_NODE_TYPE_KERNEL);
    if (!n || !params)
        RETURN(cudaErrorInvalidValue);
    memset(params, 0, sizeof *params);
    params->func = n->kernel ? (void *)n->kernel->host_fun : NULL;
    params->gridDim = n->grid;
    params->blockDim = n->block;
    params->sharedMemBytes = (unsigned)n->shared_memory;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaGraphKernelNodeSetParams(cudaGraphNode_t node,
                                                const struct cudaKernelNodeParams *params)
{
    APIP(cudaGraphKernelNodeSetParams, v10000, node, params);
    struct sim_node *n = node_of(node, CU_GRAPH_NODE_TYPE_KERNEL);
    const struct sim_kernel *k = NULL;
    if (!n)
        RETURN(cudaErrorInvalidValue);
    cudaError_t rc = kernel_params(params, &k);
    if (rc != cudaSuccess)
        RETURN(rc);
    set_kernel(n, k, params);
    node_updated(n, 0);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t *node, cudaGraph_t graph,
                                          const cudaGraphNode_t *deps, size_t ndeps,
                                          const struct cudaMemcpy3DParms *params)
{
    APIP(cudaGraphAddMemcpyNode, v10000, node, graph, deps, ndeps, params);
    struct copy_plan plan;
    cudaError_t rc = plan_copy_3d(&plan, params);
    if (rc != cudaSuccess)
        RETURN(rc);
    struct sim_node *n = new_node(node, graph, deps, ndeps, CU_GRAPH_NODE_TYPE_MEMCPY, &rc);
    if (n)
        n->copy = plan;
    RETURN(rc);
}

static cudaError_t plan_copy_1d(struct copy_plan *p, void *dst, const void *src, size_t count,
                                enum cudaMemcpyKind kind)
{
    struct region d = {(char *)dst, count, count, count, 1, 1};
    struct region s = {(char *)src, count, count, count, 1, 1};
    return plan_copy(p, d, s, kind);
}

EXPORT cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t *node, cudaGraph_t graph,
                                            const cudaGraphNode_t *deps, size_t ndeps, void *dst,
                                            const void *src, size_t count, enum cudaMemcpyKind kind)
{
    APIP(cudaGraphAddMemcpyNode1D, v11010, node, graph, deps, ndeps, dst, src, count, kind);
    struct copy_plan plan;
    cudaError_t rc = plan_copy_1d(&plan, dst, src, count, kind);
    if (rc != cudaSuccess)
        RETURN(rc);
    struct sim_node *n = new_node(node, graph, deps, ndeps, CU_GRAPH_NODE_TYPE_MEMCPY, &rc);
    if (n)
        n->copy = plan;
    RETURN(rc);
}

EXPORT cudaError_t cudaGraphAddMemcpyNodeToSymbol(cudaGraphNode_t *node, cudaGraph_t graph,
                                                  const cudaGraphNode_t *deps, size_t ndeps,
                                                  const void *symbol, const void *src, size_t count,
                                                  size_t offset, enum cudaMemcpyKind kind)
{
    APIP(cudaGraphAddMemcpyNodeToSymbol, v11010, node, graph, deps, ndeps, symbol, src, count,
         offset, kind);
    char *at = NULL;
    struct copy_plan plan;
    cudaError_t rc = symbol_address(symbol, offset, count, &at);
    if (rc == cudaSuccess)
        rc = plan_copy_1d(&plan, at, src, count, kind);
    if (rc != cudaSuccess)
        RETURN(rc);
    struct sim_node *n = new_node(node, graph, deps, ndeps, CU_GRAPH_NODE_TYPE_MEMCPY, &rc);
    if (n)
        n->copy = plan;
    RETURN(rc);
}

EXPORT cudaError_t cudaGraphAddMemcpyNodeFromSymbol(cudaGraphNode_t *node, cudaGraph_t graph,
                                                    const cudaGraphNode_t *deps, size_t ndeps,
                                                    void *dst, const void *symbol, size_t count,
                                                    size_t offset, enum cudaMemcpyKind kind)
{
    APIP(cudaGraphAddMemcpyNodeFromSymbol, v11010, node, graph, deps, ndeps, dst, symbol, count,
         offset, kind);
    char *at = NULL;
    struct copy_plan plan;
    cudaError_t rc = symbol_address(symbol, offset, count, &at);
    if (rc == cudaSuccess)
        rc = plan_copy_1d(&plan, dst, at, count, kind);
    if (rc != cudaSuccess)
        RETURN(rc);
    struct sim_node *n = new_node(node, graph, deps, ndeps, CU_GRAPH_NODE_TYPE_MEMCPY, &rc);
    if (n)
        n->copy = plan;
    RETURN(rc);
}

/* The parameters a memcpy node was made with, as far as pitched pointers tell them. */
static void copy_parms_of(const struct copy_plan *p, struct cudaMemcpy3DParms *out)
{
    memset(out, 0, sizeof *out);
    size_t drows = p->dst.pitch ? p->dst.slice / p->dst.pitch : 0;
    size_t srows = p->src.pitch ? p->src.slice / p->src.pitch : 0;
    out->srcPtr = pitched_ptr(p->src.base, p->src.pitch, p->src.width, srows);
    out->dstPtr = pitched_ptr(p->dst.base, p->dst.pitch, p->dst.width, drows);
    out->extent = extent_of(p->src.width, p->src.height, p->src.depth);
    out->kind = cudaMemcpyDefault;
}

EXPORT cudaError_t cudaGraphMemcpyNodeGetParams(cudaGraphNode_t node,
                                                struct cudaMemcpy3DParms *params)
{
    APIP(cudaGraphMemcpyNodeGetParams, v10000, node, params);
    struct sim_node *n = node_of(node, CU_GRAPH_NODE_TYPE_MEMCPY);
    if (!n || !params)
        RETURN(cudaErrorInvalidValue);
    copy_parms_of(&n->copy, params);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaGraphMemcpyNodeSetParams(cudaGraphNode_t node,
                                                const struct cudaMemcpy3DParms *params)
{
    APIP(cudaGraphMemcpyNodeSetParams, v10000, node, params);
    struct sim_node *n = node_of(node, CU_GRAPH_NODE_TYPE_MEMCPY);
    struct copy_plan plan;
    if (!n)
        RETURN(cudaErrorInvalidValue);
    cudaError_t rc = plan_copy_3d(&plan, params);
    if (rc == cudaSuccess) {
        n->copy = plan;
        node_updated(n, 0);
    }
    RETURN(rc);
}

EXPORT cudaError_t cudaGraphMemcpyNodeSetParams1D(cudaGraphNode_t node, void *dst, const void *src,
                                                  size_t count, enum cudaMemcpyKind kind)
{
    APIP(cudaGraphMemcpyNodeSetParams1D, v11010, node, dst, src, count, kind);
    struct sim_node *n = node_of(node, CU_GRAPH_NODE_TYPE_MEMCPY);
    struct copy_plan plan;
    if (!n)
        RETURN(cudaErrorInvalidValue);
    cudaError_t rc = plan_copy_1d(&plan, dst, src, count, kind);
    if (rc == cudaSuccess) {
        n->copy = plan;
        node_updated(n, 0);
    }
    RETURN(rc);
}

static cudaError_t plan_memset_params(struct set_plan *plan, const struct cudaMemsetParams *p)
{
    if (!p)
        return cudaErrorInvalidValue;
    size_t height = p->height ? p->height : 1;
    struct region d = {
        (char *)p->dst, p->pitch ? p->pitch : p->width * p->elementSize, 0, p->width, height, 1};
    d.slice = d.pitch * height;
    return plan_set(plan, d, p->value, p->elementSize);
}

EXPORT cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t *node, cudaGraph_t graph,
                                          const cudaGraphNode_t *deps, size_t ndeps,
                                          const struct cudaMemsetParams *params)
{
    APIP(cudaGraphAddMemsetNode, v10000, node, graph, deps, ndeps, params);
    struct set_plan plan;
    cudaError_t rc = plan_memset_params(&plan, params);
    if (rc != cudaSuccess)
        RETURN(rc);
    struct sim_node *n = new_node(node, graph, deps, ndeps, CU_GRAPH_NODE_TYPE_MEMSET, &rc);
    if (n)
        n->set = plan;
    RETURN(rc);
}

EXPORT cudaError_t cudaGraphMemsetNodeGetParams(cudaGraphNode_t node,
                                                struct cudaMemsetParams *params)
{
    APIP(cudaGraphMemsetNodeGetParams, v10000, node, params);
    struct sim_node *n = node_of(node, CU_GRAPH_NODE_TYPE_MEMSET);
    if (!n || !params)
        RETURN(cudaErrorInvalidValue);
    memset(params, 0, sizeof *params);
    params->dst = n->set.dst.base;
    params->pitch = n->set.dst.pitch;
    params->value = n->set.value;
    params->elementSize = n->set.element_size;
    params->width = n->set.dst.width;
    params->height = n->set.dst.height;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaGraphMemsetNodeSetParams(cudaGraphNode_t node,
                                                const struct cudaMemsetParams *params)
{
    APIP(cudaGraphMemsetNodeSetParams, v10000, node, params);
    struct sim_node *n = node_of(node, CU_GRAPH_NODE_TYPE_MEMSET);
    struct set_plan plan;
    if (!n)
        RETURN(cudaErrorInvalidValue);
    cudaError_t rc = plan_memset_params(&plan, params);
    if (rc == cudaSuccess) {
        n->set = plan;
        node_updated(n, 0);
    }
    RETURN(rc);
}

EXPORT cudaError_t cudaGraphAddHostNode(cudaGraphNode_t *node, cudaGraph_t graph,
                                        const cudaGraphNode_t *deps, size_t ndeps,
                                        const struct cudaHostNodeParams *params)
{
    APIP(cudaGraphAddHostNode, v10000, node, graph, deps, ndeps, params);
    if (!params || !params->fn)
        RETURN(cudaErrorInvalidValue);
    cudaError_t rc;
    struct sim_node *n = new_node(node, graph, deps, ndeps, CU_GRAPH_NODE_TYPE_HOST, &rc);
    if (n) {
        n->host_fn = params->fn;
        n->host_data = params->userData;
    }
    RETURN(rc);
}

EXPORT cudaError_t cudaGraphHostNodeGetParams(cudaGraphNode_t node,
                                              struct cudaHostNodeParams *params)
{
    APIP(cudaGraphHostNodeGetParams, v10000, node, params);
    struct sim_node *n = node_of(node, CU_GRAPH_NODE_TYPE_HOST);
    if (!n || !params)
        RETURN(cudaErrorInvalidValue);
    params->fn = n->host_fn;
    params->userData = n->host_data;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaGraphHostNodeSetParams(cudaGraphNode_t node,
                                              const struct cudaHostNodeParams *params)
{
    APIP(cudaGraphHostNodeSetParams, v10000, node, params);
    struct sim_node *n = node_of(node, CU_GRAPH_NODE_TYPE_HOST);
    if (!n || !params || !params->fn)
        RETURN(cudaErrorInvalidValue);
    n->host_fn = params->fn;
    n->host_data = params->userData;
    node_updated(n, 0);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t *node, cudaGraph_t graph,
                                         const cudaGraphNode_t *deps, size_t ndeps)
{
    APIP(cudaGraphAddEmptyNode, v10000, node, graph, deps, ndeps);
    cudaError_t rc;
    new_node(node, graph, deps, ndeps, CU_GRAPH_NODE_TYPE_EMPTY, &rc);
    RETURN(rc);
}

/* A copy of `src`'s nodes and edges in a new graph, each node CLONED from its
 * original (nested graphs copied too); NULL when `src` holds a conditional
 * node (such graphs cannot be cloned). */
static struct sim_graph *graph_copy(const struct sim_graph *src, struct sim_node *owner);

static void copy_payload(struct sim_node *c, const struct sim_node *o)
{
    c->kernel = o->kernel;
    c->grid = o->grid;
    c->block = o->block;
    c->shared_memory = o->shared_memory;
    c->copy = o->copy;
    c->set = o->set;
    c->host_fn = o->host_fn;
    c->host_data = o->host_data;
    c->event = o->event;
    c->address = o->address;
    c->alloc_bytes = o->alloc_bytes;
    c->alloc_device = o->alloc_device;
    c->conditional_type = o->conditional_type;
    c->conditional = o->conditional;
}

static int holds_conditional(const struct sim_graph *g)
{
    for (int i = 0; i < g->count; i++)
        if (g->nodes[i]->type == CU_GRAPH_NODE_TYPE_CONDITIONAL)
            return 1;
    return 0;
}

static struct sim_graph *graph_copy(const struct sim_graph *src, struct sim_node *owner)
{
    if (holds_conditional(src))
        return NULL;
    struct sim_graph *g = calloc(1, sizeof *g);
    g->id = new_id();
    g->owner = owner;
    CUpti_GraphData data;
    memset(&data, 0, sizeof data);
    data.graph = (CUgraph)g;
    data.originalGraph = (CUgraph)src;
    graph_resource(CUPTI_CBID_RESOURCE_GRAPH_CLONED, &data);
    for (int i = 0; i < src->count; i++) {
        const struct sim_node *o = src->nodes[i];
        struct sim_node *c = node_add(g, o->type, NULL, 0, (struct sim_node *)o);
        copy_payload(c, o);
        if (o->body_count) {
            c->bodies = calloc(o->body_count, sizeof *c->bodies);
            c->body_count = o->body_count;
            for (unsigned b = 0; b < o->body_count; b++)
                c->bodies[b] = graph_copy(o->bodies[b], c);
        }
    }
    for (int i = 0; i < src->count; i++)
        for (int d = 0; d < src->nodes[i]->ndeps; d++)
            for (int j = 0; j < src->count; j++)
                if (src->nodes[j] == src->nodes[i]->deps[d])
                    add_dependency(g->nodes[i], g->nodes[j], 1);
    return g;
}

EXPORT cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t *node, cudaGraph_t graph,
                                              const cudaGraphNode_t *deps, size_t ndeps,
                                              cudaGraph_t child)
{
    APIP(cudaGraphAddChildGraphNode, v10000, node, graph, deps, ndeps, child);
    struct sim_graph *c = (struct sim_graph *)child;
    if (!c || c == (struct sim_graph *)graph || holds_conditional(c))
        RETURN(cudaErrorInvalidValue);
    cudaError_t rc;
    struct sim_node *n = new_node(node, graph, deps, ndeps, CU_GRAPH_NODE_TYPE_GRAPH, &rc);
    if (n) { /* the node holds a copy of the child graph */
        n->bodies = calloc(1, sizeof *n->bodies);
        n->bodies[0] = graph_copy(c, n);
        n->body_count = 1;
    }
    RETURN(rc);
}

EXPORT cudaError_t cudaGraphChildGraphNodeGetGraph(cudaGraphNode_t node, cudaGraph_t *graph)
{
    APIP(cudaGraphChildGraphNodeGetGraph, v10000, node, graph);
    struct sim_node *n = node_of(node, CU_GRAPH_NODE_TYPE_GRAPH);
    if (!n || !graph)
        RETURN(cudaErrorInvalidValue);
    *graph = (cudaGraph_t)n->bodies[0];
    RETURN(cudaSuccess);
}

static cudaError_t add_event_node(cudaGraphNode_t *node, cudaGraph_t graph,
                                  const cudaGraphNode_t *deps, size_t ndeps, cudaEvent_t event,
                                  CUgraphNodeType type)
{
    struct sim_event *e = resolve_event(event);
    if (!e)
        return cudaErrorInvalidResourceHandle;
    cudaError_t rc;
    struct sim_node *n = new_node(node, graph, deps, ndeps, type, &rc);
    if (n)
        n->event = e;
    return rc;
}

EXPORT cudaError_t cudaGraphAddEventRecordNode(cudaGraphNode_t *node, cudaGraph_t graph,
                                               const cudaGraphNode_t *deps, size_t ndeps,
                                               cudaEvent_t event)
{
    APIP(cudaGraphAddEventRecordNode, v11010, node, graph, deps, ndeps, event);
    RETURN(add_event_node(node, graph, deps, ndeps, event, CU_GRAPH_NODE_TYPE_EVENT_RECORD));
}

EXPORT cudaError_t cudaGraphAddEventWaitNode(cudaGraphNode_t *node, cudaGraph_t graph,
                                             const cudaGraphNode_t *deps, size_t ndeps,
                                             cudaEvent_t event)
{
    APIP(cudaGraphAddEventWaitNode, v11010, node, graph, deps, ndeps, event);
    RETURN(add_event_node(node, graph, deps, ndeps, event, CU_GRAPH_NODE_TYPE_WAIT_EVENT));
}

EXPORT cudaError_t cudaGraphEventRecordNodeGetEvent(cudaGraphNode_t node, cudaEvent_t *event)
{
    APIP(cudaGraphEventRecordNodeGetEvent, v11010, node, event);
    struct sim_node *n = node_of(node, CU_GRAPH_NODE_TYPE_EVENT_RECORD);
    if (!n || !event)
        RETURN(cudaErrorInvalidValue);
    *event = (cudaEvent_t)n->event;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaGraphEventRecordNodeSetEvent(cudaGraphNode_t node, cudaEvent_t event)
{
    APIP(cudaGraphEventRecordNodeSetEvent, v11010, node, event);
    struct sim_node *n = node_of(node, CU_GRAPH_NODE_TYPE_EVENT_RECORD);
    struct sim_event *e = resolve_event(event);
    if (!n || !e)
        RETURN(cudaErrorInvalidValue);
    n->event = e;
    node_updated(n, 0);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaGraphEventWaitNodeGetEvent(cudaGraphNode_t node, cudaEvent_t *event)
{
    APIP(cudaGraphEventWaitNodeGetEvent, v11010, node, event);
    struct sim_node *n = node_of(node, CU_GRAPH_NODE_TYPE_WAIT_EVENT);
    if (!n || !event)
        RETURN(cudaErrorInvalidValue);
    *event = (cudaEvent_t)n->event;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaGraphEventWaitNodeSetEvent(cudaGraphNode_t node, cudaEvent_t event)
{
    APIP(cudaGraphEventWaitNodeSetEvent, v11010, node, event);
    struct sim_node *n = node_of(node, CU_GRAPH_NODE_TYPE_WAIT_EVENT);
    struct sim_event *e = resolve_event(event);
    if (!n || !e)
        RETURN(cudaErrorInvalidValue);
    n->event = e;
    node_updated(n, 0);
    RETURN(cudaSuccess);
}

/* The allocation's address is decided here and fixed for the graph's life. */
static cudaError_t add_alloc_node(cudaGraphNode_t *node, cudaGraph_t graph,
                                  const cudaGraphNode_t *deps, size_t ndeps,
                                  const struct cudaMemPoolProps *props, size_t bytes, void **dptr)
{
    if (!props || !dptr || bytes == 0 || props->location.type != cudaMemLocationTypeDevice)
        return cudaErrorInvalidValue;
    if (!valid_device(props->location.id))
        return cudaErrorInvalidDevice;
    cudaError_t rc;
    struct sim_node *n = new_node(node, graph, deps, ndeps, CU_GRAPH_NODE_TYPE_MEM_ALLOC, &rc);
    if (!n)
        return rc;
    n->address = graph_memory_reserve(bytes, props->location.id);
    if (!n->address)
        return cudaErrorMemoryAllocation;
    n->alloc_bytes = bytes;
    n->alloc_device = props->location.id;
    *dptr = n->address;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t *node, cudaGraph_t graph,
                                            const cudaGraphNode_t *deps, size_t ndeps,
                                            struct cudaMemAllocNodeParams *params)
{
    APIP(cudaGraphAddMemAllocNode, v11040, node, graph, deps, ndeps, params);
    if (!params)
        RETURN(cudaErrorInvalidValue);
    RETURN(add_alloc_node(node, graph, deps, ndeps, &params->poolProps, params->bytesize,
                          &params->dptr));
}

EXPORT cudaError_t cudaGraphMemAllocNodeGetParams(cudaGraphNode_t node,
                                                  struct cudaMemAllocNodeParams *params)
{
    APIP(cudaGraphMemAllocNodeGetParams, v11040, node, params);
    struct sim_node *n = node_of(node, CU_GRAPH_NODE_TYPE_MEM_ALLOC);
    if (!n || !params)
        RETURN(cudaErrorInvalidValue);
    memset(params, 0, sizeof *params);
    params->poolProps.allocType = cudaMemAllocationTypePinned;
    params->poolProps.location.type = cudaMemLocationTypeDevice;
    params->poolProps.location.id = n->alloc_device;
    params->bytesize = n->alloc_bytes;
    params->dptr = n->address;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t *node, cudaGraph_t graph,
                                           const cudaGraphNode_t *deps, size_t ndeps, void *dptr)
{
    APIP(cudaGraphAddMemFreeNode, v11040, node, graph, deps, ndeps, dptr);
    int device;
    if (!dptr || memory_kind_of(dptr, &device) != CUPTI_ACTIVITY_MEMORY_KIND_DEVICE)
        RETURN(cudaErrorInvalidValue);
    cudaError_t rc;
    struct sim_node *n = new_node(node, graph, deps, ndeps, CU_GRAPH_NODE_TYPE_MEM_FREE, &rc);
    if (n)
        n->address = dptr;
    RETURN(rc);
}

EXPORT cudaError_t cudaGraphMemFreeNodeGetParams(cudaGraphNode_t node, void *dptr_out)
{
    APIP(cudaGraphMemFreeNodeGetParams, v11040, node, dptr_out);
    struct sim_node *n = node_of(node, CU_GRAPH_NODE_TYPE_MEM_FREE);
    if (!n || !dptr_out)
        RETURN(cudaErrorInvalidValue);
    *(void **)dptr_out = n->address;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaGraphConditionalHandleCreate(cudaGraphConditionalHandle *handle,
                                                    cudaGraph_t graph, unsigned int default_value,
                                                    unsigned int flags)
{
    APIP(cudaGraphConditionalHandleCreate, v12030, handle, graph, default_value, flags);
    if (!handle || !graph || (flags & ~(unsigned)cudaGraphCondAssignDefault))
        RETURN(cudaErrorInvalidValue);
    struct sim_conditional *c = calloc(1, sizeof *c);
    c->graph = (struct sim_graph *)graph;
    c->default_value = default_value;
    c->flags = flags;
    *handle = (cudaGraphConditionalHandle)(uintptr_t)c;
    RETURN(cudaSuccess);
}

/* A conditional node: its body graphs are made with it, empty, for the
 * program to fill (by hand or by cudaStreamBeginCaptureToGraph). */
static cudaError_t add_conditional(struct sim_node *n, struct cudaConditionalNodeParams *p)
{
    struct sim_conditional *c = (struct sim_conditional *)(uintptr_t)p->handle;
    if (!c || c->graph != n->graph)
        return cudaErrorInvalidValue;
    unsigned size = p->size;
    if ((p->type == cudaGraphCondTypeIf && (size < 1 || size > 2)) ||
        (p->type == cudaGraphCondTypeWhile && size != 1) ||
        (p->type == cudaGraphCondTypeSwitch && size < 1) || (unsigned)p->type > 2)
        return cudaErrorInvalidValue;
    n->conditional = c;
    n->conditional_type = p->type;
    n->bodies = calloc(size, sizeof *n->bodies);
    n->body_count = size;
    for (unsigned i = 0; i < size; i++) {
        n->bodies[i] = graph_new();
        n->bodies[i]->owner = n;
    }
    p->phGraph_out = (cudaGraph_t *)n->bodies;
    return cudaSuccess;
}

/* cudaGraphAddNode / cudaGraphNodeSetParams for one type, on node `n`. */
static cudaError_t set_node_params(struct sim_node *n, struct cudaGraphNodeParams *p, int adding)
{
    cudaError_t rc = cudaSuccess;
    switch (p->type) {
    case cudaGraphNodeTypeKernel: {
        const struct cudaKernelNodeParams k = {p->kernel.func,         p->kernel.gridDim,
                                               p->kernel.blockDim,     p->kernel.sharedMemBytes,
                                               p->kernel.kernelParams, p->kernel.extra};
        const struct sim_kernel *sk = NULL;
        rc = kernel_params(&k, &sk);
        if (rc == cudaSuccess)
            set_kernel(n, sk, &k);
        break;
    }
    case cudaGraphNodeTypeMemcpy:
        rc = plan_copy_3d(&n->copy, &p->memcpy.copyParams);
        break;
    case cudaGraphNodeTypeMemset: {
        const struct cudaMemsetParams m = {p->memset.dst,   p->memset.pitch,
                                           p->memset.value, p->memset.elementSize,
                                           p->memset.width, p->memset.height};
        rc = plan_memset_params(&n->set, &m);
        break;
    }
    case cudaGraphNodeTypeHost:
        if (!p->host.fn)
            return cudaErrorInvalidValue;
        n->host_fn = p->host.fn;
        n->host_data = p->host.userData;
        break;
    case cudaGraphNodeTypeGraph: {
        struct sim_graph *c = (struct sim_graph *)p->graph.graph;
        if (!adding || !c || holds_conditional(c))
            return cudaErrorInvalidValue;
        n->bodies = calloc(1, sizeof *n->bodies);
        n->bodies[0] = graph_copy(c, n);
        n->body_count = 1;
        break;
    }
    case cudaGraphNodeTypeWaitEvent:
    case cudaGraphNodeTypeEventRecord: {
        struct sim_event *e = resolve_event(
            p->type == cudaGraphNodeTypeWaitEvent ? p->eventWait.event : p->eventRecord.event);
        if (!e)
            return cudaErrorInvalidResourceHandle;
        n->event = e;
        break;
    }
    case cudaGraphNodeTypeMemAlloc: {
        if (!adding || p->alloc.bytesize == 0 ||
            p->alloc.poolProps.location.type != cudaMemLocationTypeDevice)
            return cudaErrorInvalidValue;
        if (!valid_device(p->alloc.poolProps.location.id))
            return cudaErrorInvalidDevice;
        n->address = graph_memory_reserve(p->alloc.bytesize, p->alloc.poolProps.location.id);
        if (!n->address)
            return cudaErrorMemoryAllocation;
        n->alloc_bytes = p->alloc.bytesize;
        n->alloc_device = p->alloc.poolProps.location.id;
        p->alloc.dptr = n->address;
        break;
    }
    case cudaGraphNodeTypeMemFree:
        if (!adding || !p->free.dptr)
            return cudaErrorInvalidValue;
        n->address = p->free.dptr;
        break;
    case cudaGraphNodeTypeConditional:
        if (!adding)
            return cudaErrorInvalidValue;
        rc = add_conditional(n, &p->conditional);
        break;
    case cudaGraphNodeTypeEmpty:
        break;
    default: /* external semaphores: not simulated */
        return cudaErrorNotSupported;
    }
    return rc;
}

EXPORT cudaError_t cudaGraphAddNode(cudaGraphNode_t *node, cudaGraph_t graph,
                                    const cudaGraphNode_t *deps, const cudaGraphEdgeData *edge_data,
                                    size_t ndeps, struct cudaGraphNodeParams *params)
{
    APIP(cudaGraphAddNode, v12030, node, graph, deps, edge_data, ndeps, params);
    struct sim_graph *g = (struct sim_graph *)graph;
    if (!node || !g || !params || (unsigned)params->type >= cudaGraphNodeTypeCount)
        RETURN(cudaErrorInvalidValue);
    cudaError_t rc = check_deps(g, deps, ndeps);
    if (rc != cudaSuccess)
        RETURN(rc);
    /* checked on a scratch node first: a node that cannot be made is not announced */
    struct sim_node scratch;
    memset(&scratch, 0, sizeof scratch);
    scratch.graph = g;
    scratch.type = (CUgraphNodeType)params->type;
    if (params->type != cudaGraphNodeTypeConditional && params->type != cudaGraphNodeTypeGraph &&
        params->type != cudaGraphNodeTypeMemAlloc) {
        rc = set_node_params(&scratch, params, 1);
        if (rc != cudaSuccess)
            RETURN(rc);
    }
    struct sim_node *n = node_add(g, (CUgraphNodeType)params->type, (struct sim_node *const *)deps,
                                  (int)ndeps, NULL);
    if (params->type == cudaGraphNodeTypeConditional || params->type == cudaGraphNodeTypeGraph ||
        params->type == cudaGraphNodeTypeMemAlloc)
        rc = set_node_params(n, params, 1);
    else
        copy_payload(n, &scratch);
    *node = (cudaGraphNode_t)n;
    RETURN(rc);
}

EXPORT cudaError_t cudaGraphNodeSetParams(cudaGraphNode_t node, struct cudaGraphNodeParams *params)
{
    APIP(cudaGraphNodeSetParams, v12020, node, params);
    struct sim_node *n = (struct sim_node *)node;
    if (!n || !params || (CUgraphNodeType)params->type != n->type)
        RETURN(cudaErrorInvalidValue);
    cudaError_t rc = set_node_params(n, params, 0);
    if (rc == cudaSuccess)
        node_updated(n, 0);
    RETURN(rc);
}

/* ---- structure
 * ------------------------------------------------------------------------------------ */

EXPORT cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t *from,
                                            const cudaGraphNode_t *to,
                                            const cudaGraphEdgeData *edge_data, size_t count)
{
    APIP(cudaGraphAddDependencies, v12030, graph, from, to, edge_data, count);
    struct sim_graph *g = (struct sim_graph *)graph;
    if (!g || (count && (!from || !to)))
        RETURN(cudaErrorInvalidValue);
    for (size_t i = 0; i < count; i++)
        if (!in_graph(g, (struct sim_node *)from[i]) || !in_graph(g, (struct sim_node *)to[i]) ||
            from[i] == to[i])
            RETURN(cudaErrorInvalidValue);
    for (size_t i = 0; i < count; i++)
        add_dependency((struct sim_node *)to[i], (struct sim_node *)from[i], 1);
    RETURN(cudaSuccess);
}

static int remove_dependency(struct sim_node *n, struct sim_node *dep)
{
    for (int i = 0; i < n->ndeps; i++) {
        if (n->deps[i] == dep) {
            dependency_callback(CUPTI_CBID_RESOURCE_GRAPHNODE_DEPENDENCY_DESTROY_STARTING, n, dep);
            memmove(n->deps + i, n->deps + i + 1, (size_t)(n->ndeps - i - 1) * sizeof *n->deps);
            n->ndeps--;
            return 1;
        }
    }
    return 0;
}

EXPORT cudaError_t cudaGraphRemoveDependencies(cudaGraph_t graph, const cudaGraphNode_t *from,
                                               const cudaGraphNode_t *to,
                                               const cudaGraphEdgeData *edge_data, size_t count)
{
    APIP(cudaGraphRemoveDependencies, v12030, graph, from, to, edge_data, count);
    struct sim_graph *g = (struct sim_graph *)graph;
    if (!g || (count && (!from || !to)))
        RETURN(cudaErrorInvalidValue);
    for (size_t i = 0; i < count; i++) {
        struct sim_node *t = (struct sim_node *)to[i], *f = (struct sim_node *)from[i];
        if (!in_graph(g, t) || !in_graph(g, f))
            RETURN(cudaErrorInvalidValue);
        int found = 0;
        for (int d = 0; d < t->ndeps; d++)
            found |= t->deps[d] == f;
        if (!found)
            RETURN(cudaErrorInvalidValue);
    }
    for (size_t i = 0; i < count; i++)
        remove_dependency((struct sim_node *)to[i], (struct sim_node *)from[i]);
    RETURN(cudaSuccess);
}

/* Hands out `count` handles as CUDA's queries do: with `out` NULL only the
 * number; else up to *size of them, the rest of *size NULLs. */
static void hand_out(void *const *items, size_t count, void **out, size_t *size)
{
    if (out) {
        for (size_t i = 0; i < *size; i++)
            out[i] = i < count ? items[i] : NULL;
        if (count < *size)
            *size = count;
        return;
    }
    *size = count;
}

EXPORT cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t *nodes, size_t *count)
{
    APIP(cudaGraphGetNodes, v10000, graph, nodes, count);
    struct sim_graph *g = (struct sim_graph *)graph;
    if (!g || !count)
        RETURN(cudaErrorInvalidValue);
    hand_out((void *const *)g->nodes, (size_t)g->count, (void **)nodes, count);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaGraphGetRootNodes(cudaGraph_t graph, cudaGraphNode_t *roots, size_t *count)
{
    APIP(cudaGraphGetRootNodes, v10000, graph, roots, count);
    struct sim_graph *g = (struct sim_graph *)graph;
    if (!g || !count)
        RETURN(cudaErrorInvalidValue);
    void **found = malloc((size_t)(g->count ? g->count : 1) * sizeof *found);
    size_t n = 0;
    for (int i = 0; i < g->count; i++)
        if (!g->nodes[i]->ndeps)
            found[n++] = g->nodes[i];
    hand_out(found, n, (void **)roots, count);
    free(found);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaGraphGetEdges(cudaGraph_t graph, cudaGraphNode_t *from, cudaGraphNode_t *to,
                                     cudaGraphEdgeData *edge_data, size_t *count)
{
    APIP(cudaGraphGetEdges, v12030, graph, from, to, edge_data, count);
    struct sim_graph *g = (struct sim_graph *)graph;
    if (!g || !count || (!from != !to))
        RETURN(cudaErrorInvalidValue);
    size_t total = 0;
    for (int i = 0; i < g->count; i++)
        total += (size_t)g->nodes[i]->ndeps;
    if (!from) {
        *count = total;
        RETURN(cudaSuccess);
    }
    size_t k = 0;
    for (int i = 0; i < g->count; i++) {
        for (int d = 0; d < g->nodes[i]->ndeps; d++, k++) {
            if (k >= *count)
                continue;
            from[k] = (cudaGraphNode_t)g->nodes[i]->deps[d];
            to[k] = (cudaGraphNode_t)g->nodes[i];
            if (edge_data)
                memset(&edge_data[k], 0, sizeof edge_data[k]);
        }
    }
    for (size_t i = total; i < *count; i++)
        from[i] = to[i] = NULL;
    if (total < *count)
        *count = total;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t node, cudaGraphNode_t *deps,
                                                cudaGraphEdgeData *edge_data, size_t *count)
{
    APIP(cudaGraphNodeGetDependencies, v12030, node, deps, edge_data, count);
    struct sim_node *n = (struct sim_node *)node;
    if (!n || !count)
        RETURN(cudaErrorInvalidValue);
    if (deps && edge_data)
        for (size_t i = 0; i < *count; i++)
            memset(&edge_data[i], 0, sizeof edge_data[i]);
    hand_out((void *const *)n->deps, (size_t)n->ndeps, (void **)deps, count);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaGraphNodeGetDependentNodes(cudaGraphNode_t node, cudaGraphNode_t *dependents,
                                                  cudaGraphEdgeData *edge_data, size_t *count)
{
    APIP(cudaGraphNodeGetDependentNodes, v12030, node, dependents, edge_data, count);
    struct sim_node *n = (struct sim_node *)node;
    if (!n || !count)
        RETURN(cudaErrorInvalidValue);
    struct sim_graph *g = n->graph;
    void **found = malloc((size_t)(g->count ? g->count : 1) * sizeof *found);
    size_t k = 0;
    for (int i = 0; i < g->count; i++)
        for (int d = 0; d < g->nodes[i]->ndeps; d++)
            if (g->nodes[i]->deps[d] == n)
                found[k++] = g->nodes[i];
    if (dependents && edge_data)
        for (size_t i = 0; i < *count; i++)
            memset(&edge_data[i], 0, sizeof edge_data[i]);
    hand_out(found, k, (void **)dependents, count);
    free(found);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node, enum cudaGraphNodeType *type)
{
    APIP(cudaGraphNodeGetType, v10000, node, type);
    struct sim_node *n = (struct sim_node *)node;
    if (!n || !type)
        RETURN(cudaErrorInvalidValue);
    *type = (enum cudaGraphNodeType)n->type;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaGraphDestroyNode(cudaGraphNode_t node)
{
    APIP(cudaGraphDestroyNode, v10000, node);
    struct sim_node *n = (struct sim_node *)node;
    if (!n)
        RETURN(cudaErrorInvalidValue);
    struct sim_graph *g = n->graph;
    for (int i = 0; i < g->count; i++)
        remove_dependency(g->nodes[i], n);
    CUpti_GraphData data;
    memset(&data, 0, sizeof data);
    data.graph = (CUgraph)g;
    data.node = (CUgraphNode)n;
    data.nodeType = n->type;
    graph_resource(CUPTI_CBID_RESOURCE_GRAPHNODE_DESTROY_STARTING, &data);
    for (int i = 0; i < g->count; i++) {
        if (g->nodes[i] == n) {
            memmove(g->nodes + i, g->nodes + i + 1, (size_t)(g->count - i - 1) * sizeof *g->nodes);
            g->count--;
            break;
        }
    }
    n->graph = NULL; /* the node's memory stays: a tool may still hold its id */
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaGraphClone(cudaGraph_t *clone, cudaGraph_t original)
{
    APIP(cudaGraphClone, v10000, clone, original);
    struct sim_graph *o = (struct sim_graph *)original;
    if (!clone || !o)
        RETURN(cudaErrorInvalidValue);
    struct sim_graph *c = graph_copy(o, NULL);
    if (!c)
        RETURN(cudaErrorNotSupported); /* graphs with conditional nodes cannot be cloned */
    *clone = (cudaGraph_t)c;
    RETURN(cudaSuccess);
}

static struct sim_node *find_clone(struct sim_graph *g, const struct sim_node *original)
{
    for (int i = 0; i < g->count; i++) {
        struct sim_node *n = g->nodes[i];
        if (n->original == original)
            return n;
        for (unsigned b = 0; b < n->body_count; b++) {
            struct sim_node *found = find_clone(n->bodies[b], original);
            if (found)
                return found;
        }
    }
    return NULL;
}

EXPORT cudaError_t cudaGraphNodeFindInClone(cudaGraphNode_t *node, cudaGraphNode_t original,
                                            cudaGraph_t clone)
{
    APIP(cudaGraphNodeFindInClone, v10000, node, original, clone);
    struct sim_graph *c = (struct sim_graph *)clone;
    if (!node || !original || !c)
        RETURN(cudaErrorInvalidValue);
    struct sim_node *n = find_clone(c, (struct sim_node *)original);
    if (!n)
        RETURN(cudaErrorInvalidValue);
    *node = (cudaGraphNode_t)n;
    RETURN(cudaSuccess);
}

static const char *node_type_name(CUgraphNodeType type)
{
    static const char *const names[] = {"kernel",         "memcpy",       "memset",
                                        "host",           "graph",        "empty",
                                        "wait event",     "event record", "semaphore signal",
                                        "semaphore wait", "mem alloc",    "mem free",
                                        "batch mem op",   "conditional"};
    return (unsigned)type < sizeof names / sizeof *names ? names[type] : "node";
}

static void dot_graph(FILE *f, const struct sim_graph *g)
{
    for (int i = 0; i < g->count; i++) {
        const struct sim_node *n = g->nodes[i];
        fprintf(f, "  n%llu [label=\"%s %llu%s%s\"];\n", (unsigned long long)n->id,
                node_type_name(n->type), (unsigned long long)n->id, n->kernel ? "\\n" : "",
                n->kernel ? n->kernel->name : "");
        for (int d = 0; d < n->ndeps; d++)
            fprintf(f, "  n%llu -> n%llu;\n", (unsigned long long)n->deps[d]->id,
                    (unsigned long long)n->id);
        for (unsigned b = 0; b < n->body_count; b++) {
            fprintf(f, "  subgraph cluster_%llu_%u {\n", (unsigned long long)n->id, b);
            dot_graph(f, n->bodies[b]);
            fprintf(f, "  }\n");
        }
    }
}

EXPORT cudaError_t cudaGraphDebugDotPrint(cudaGraph_t graph, const char *path, unsigned int flags)
{
    APIP(cudaGraphDebugDotPrint, v11030, graph, path, flags);
    struct sim_graph *g = (struct sim_graph *)graph;
    if (!g || !path)
        RETURN(cudaErrorInvalidValue);
    FILE *f = fopen(path, "w");
    if (!f)
        RETURN(cudaErrorOperatingSystem);
    fprintf(f, "digraph graph_%u {\n", g->id);
    dot_graph(f, g);
    fprintf(f, "}\n");
    fclose(f);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
    APIP(cudaGraphDestroy, v10000, graph);
    struct sim_graph *g = (struct sim_graph *)graph;
    if (!g)
        RETURN(cudaErrorInvalidValue);
    CUpti_GraphData data;
    memset(&data, 0, sizeof data);
    data.graph = (CUgraph)g;
    graph_resource(CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING, &data);
    RETURN(cudaSuccess); /* kept: instantiated execs may still point at its nodes */
}

/* ---- instantiation
 * ------------------------------------------------------------------------------- */

/* `src`'s nodes in dependency order (NULL when there is a cycle). */
static struct sim_node **dependency_order(const struct sim_graph *src)
{
    int n = src->count;
    struct sim_node **order = malloc((size_t)(n ? n : 1) * sizeof *order);
    int *placed = calloc((size_t)(n ? n : 1), sizeof *placed);
    int done = 0;
    for (int progress = 1; progress && done < n;) {
        progress = 0;
        for (int i = 0; i < n; i++) {
            if (placed[i])
                continue;
            int ready = 1;
            for (int d = 0; d < src->nodes[i]->ndeps && ready; d++) {
                ready = 0;
                for (int j = 0; j < n; j++)
                    if (src->nodes[j] == src->nodes[i]->deps[d])
                        ready = placed[j];
            }
            if (ready) {
                placed[i] = 1;
                order[done++] = src->nodes[i];
                progress = 1;
            }
        }
    }
    free(placed);
    if (done < n) {
        free(order);
        return NULL;
    }
    return order;
}

/* The exec's copy of `src` (nested graphs too), nodes in dependency order,
 * each node numbered for the per-launch tables. */
static struct sim_graph *exec_copy(const struct sim_graph *src, struct sim_node *owner,
                                   int *next_index, struct sim_node **bad)
{
    struct sim_node **order = dependency_order(src);
    if (!order) {
        *bad = src->count ? src->nodes[0] : NULL;
        return NULL;
    }
    struct sim_graph *g = calloc(1, sizeof *g);
    g->id = src->id;
    g->owner = owner;
    for (int i = 0; i < src->count; i++) {
        struct sim_node *o = order[i];
        struct sim_node *c = node_add(g, o->type, NULL, 0, o);
        copy_payload(c, o);
        c->index = (*next_index)++;
        for (int d = 0; d < o->ndeps; d++)
            for (int j = 0; j < i; j++)
                if (order[j] == o->deps[d])
                    add_dependency(c, g->nodes[j], 1);
        if (o->body_count) {
            c->bodies = calloc(o->body_count, sizeof *c->bodies);
            c->body_count = o->body_count;
            for (unsigned b = 0; b < o->body_count; b++) {
                c->bodies[b] = exec_copy(o->bodies[b], c, next_index, bad);
                if (!c->bodies[b]) {
                    free(order);
                    return NULL;
                }
            }
        }
    }
    free(order);
    return g;
}

static cudaError_t instantiate(cudaGraphExec_t *exec, struct sim_graph *g, unsigned long long flags,
                               cudaGraphNode_t *error_node, cudaGraphInstantiateResult *result)
{
    if (!exec || !g)
        return cudaErrorInvalidValue;
    if (flags & ~(unsigned long long)(cudaGraphInstantiateFlagAutoFreeOnLaunch |
                                      cudaGraphInstantiateFlagUpload |
                                      cudaGraphInstantiateFlagDeviceLaunch |
                                      cudaGraphInstantiateFlagUseNodePriority))
        return cudaErrorInvalidValue;
    ensure_init();
    struct sim_exec *x = calloc(1, sizeof *x);
    x->id = new_id();
    x->source = g;
    x->flags = flags;
    struct sim_node *bad = NULL;
    x->graph = exec_copy(g, NULL, &x->node_total, &bad);
    if (!x->graph) {
        free(x);
        if (error_node)
            *error_node = (cudaGraphNode_t)bad;
        if (result)
            *result = cudaGraphInstantiateInvalidStructure;
        return cudaErrorInvalidValue; /* a cycle */
    }
    CUpti_GraphData data;
    memset(&data, 0, sizeof data);
    data.graph = (CUgraph)x->graph;
    data.originalGraph = (CUgraph)g;
    data.graphExec = (CUgraphExec)x;
    graph_resource(CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED, &data);
    if (result)
        *result = cudaGraphInstantiateSuccess;
    *exec = (cudaGraphExec_t)x;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph,
                                        unsigned long long flags)
{
    APIP(cudaGraphInstantiate, v12000, exec, graph, flags);
    RETURN(instantiate(exec, (struct sim_graph *)graph, flags, NULL, NULL));
}

EXPORT cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *exec, cudaGraph_t graph,
                                                 unsigned long long flags)
{
    APIP(cudaGraphInstantiateWithFlags, v11040, exec, graph, flags);
    RETURN(instantiate(exec, (struct sim_graph *)graph, flags, NULL, NULL));
}

EXPORT cudaError_t cudaGraphInstantiateWithParams(cudaGraphExec_t *exec, cudaGraph_t graph,
                                                  cudaGraphInstantiateParams *params)
{
    APIP(cudaGraphInstantiateWithParams, v12000, exec, graph, params);
    if (!params)
        RETURN(cudaErrorInvalidValue);
    params->errNode_out = NULL;
    cudaError_t rc = instantiate(exec, (struct sim_graph *)graph, params->flags,
                                 &params->errNode_out, &params->result_out);
    if (rc == cudaSuccess && (params->flags & cudaGraphInstantiateFlagUpload) &&
        !resolve_stream(params->uploadStream))
        rc = cudaErrorInvalidResourceHandle;
    RETURN(rc);
}

EXPORT cudaError_t cudaGraphExecGetFlags(cudaGraphExec_t exec, unsigned long long *flags)
{
    APIP(cudaGraphExecGetFlags, v12000, exec, flags);
    struct sim_exec *x = (struct sim_exec *)exec;
    if (!x || !flags)
        RETURN(cudaErrorInvalidValue);
    *flags = x->flags;
    RETURN(cudaSuccess);
}

/* The exec's node standing for node `original` of the graph (or of its nested graphs). */
static struct sim_node *exec_node(struct sim_exec *x, cudaGraphNode_t original,
                                  CUgraphNodeType type)
{
    if (!x || !original)
        return NULL;
    struct sim_node *n = find_clone(x->graph, (const struct sim_node *)original);
    return n && n->type == type ? n : NULL;
}

EXPORT cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                    const struct cudaKernelNodeParams *params)
{
    APIP(cudaGraphExecKernelNodeSetParams, v10010, exec, node, params);
    struct sim_node *n = exec_node((struct sim_exec *)exec, node, CU_GRAPH_NODE_TYPE_KERNEL);
    const struct sim_kernel *k = NULL;
    if (!n)
        RETURN(cudaErrorInvalidValue);
    cudaError_t rc = kernel_params(params, &k);
    if (rc != cudaSuccess)
        RETURN(rc);
    set_kernel(n, k, params);
    node_updated(n, 1);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaGraphExecMemcpyNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                    const struct cudaMemcpy3DParms *params)
{
    APIP(cudaGraphExecMemcpyNodeSetParams, v10020, exec, node, params);
    struct sim_node *n = exec_node((struct sim_exec *)exec, node, CU_GRAPH_NODE_TYPE_MEMCPY);
    struct copy_plan plan;
    if (!n)
        RETURN(cudaErrorInvalidValue);
    cudaError_t rc = plan_copy_3d(&plan, params);
    if (rc == cudaSuccess) {
        n->copy = plan;
        node_updated(n, 1);
    }
    RETURN(rc);
}

EXPORT cudaError_t cudaGraphExecMemcpyNodeSetParams1D(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                      void *dst, const void *src, size_t count,
                                                      enum cudaMemcpyKind kind)
{
    APIP(cudaGraphExecMemcpyNodeSetParams1D, v11010, exec, node, dst, src, count, kind);
    struct sim_node *n = exec_node((struct sim_exec *)exec, node, CU_GRAPH_NODE_TYPE_MEMCPY);
    struct copy_plan plan;
    if (!n)
        RETURN(cudaErrorInvalidValue);
    cudaError_t rc = plan_copy_1d(&plan, dst, src, count, kind);
    if (rc == cudaSuccess) {
        n->copy = plan;
        node_updated(n, 1);
    }
    RETURN(rc);
}

EXPORT cudaError_t cudaGraphExecMemsetNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                    const struct cudaMemsetParams *params)
{
    APIP(cudaGraphExecMemsetNodeSetParams, v10020, exec, node, params);
    struct sim_node *n = exec_node((struct sim_exec *)exec, node, CU_GRAPH_NODE_TYPE_MEMSET);
    struct set_plan plan;
    if (!n)
        RETURN(cudaErrorInvalidValue);
    cudaError_t rc = plan_memset_params(&plan, params);
    if (rc == cudaSuccess) {
        n->set = plan;
        node_updated(n, 1);
    }
    RETURN(rc);
}

EXPORT cudaError_t cudaGraphExecHostNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                  const struct cudaHostNodeParams *params)
{
    APIP(cudaGraphExecHostNodeSetParams, v10020, exec, node, params);
    struct sim_node *n = exec_node((struct sim_exec *)exec, node, CU_GRAPH_NODE_TYPE_HOST);
    if (!n || !params || !params->fn)
        RETURN(cudaErrorInvalidValue);
    n->host_fn = params->fn;
    n->host_data = params->userData;
    node_updated(n, 1);
    RETURN(cudaSuccess);
}

static cudaError_t exec_set_event(cudaGraphExec_t exec, cudaGraphNode_t node, cudaEvent_t event,
                                  CUgraphNodeType type)
{
    struct sim_node *n = exec_node((struct sim_exec *)exec, node, type);
    struct sim_event *e = resolve_event(event);
    if (!n || !e)
        return cudaErrorInvalidValue;
    n->event = e;
    node_updated(n, 1);
    return cudaSuccess;
}

EXPORT cudaError_t cudaGraphExecEventRecordNodeSetEvent(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                        cudaEvent_t event)
{
    APIP(cudaGraphExecEventRecordNodeSetEvent, v11010, exec, node, event);
    RETURN(exec_set_event(exec, node, event, CU_GRAPH_NODE_TYPE_EVENT_RECORD));
}

EXPORT cudaError_t cudaGraphExecEventWaitNodeSetEvent(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                      cudaEvent_t event)
{
    APIP(cudaGraphExecEventWaitNodeSetEvent, v11010, exec, node, event);
    RETURN(exec_set_event(exec, node, event, CU_GRAPH_NODE_TYPE_WAIT_EVENT));
}

EXPORT cudaError_t cudaGraphExecNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                              struct cudaGraphNodeParams *params)
{
    APIP(cudaGraphExecNodeSetParams, v12020, exec, node, params);
    if (!params)
        RETURN(cudaErrorInvalidValue);
    struct sim_node *n = exec_node((struct sim_exec *)exec, node, (CUgraphNodeType)params->type);
    if (!n)
        RETURN(cudaErrorInvalidValue);
    cudaError_t rc = set_node_params(n, params, 0);
    if (rc == cudaSuccess)
        node_updated(n, 1);
    RETURN(rc);
}

/* Kernel, memcpy and memset nodes may be switched off in an exec: they then run as empty nodes. */
EXPORT cudaError_t cudaGraphNodeSetEnabled(cudaGraphExec_t exec, cudaGraphNode_t node,
                                           unsigned int enabled)
{
    APIP(cudaGraphNodeSetEnabled, v11060, exec, node, enabled);
    struct sim_node *o = (struct sim_node *)node;
    if (!o || (o->type != CU_GRAPH_NODE_TYPE_KERNEL && o->type != CU_GRAPH_NODE_TYPE_MEMCPY &&
               o->type != CU_GRAPH_NODE_TYPE_MEMSET))
        RETURN(cudaErrorInvalidValue);
    struct sim_node *n = exec_node((struct sim_exec *)exec, node, o->type);
    if (!n)
        RETURN(cudaErrorInvalidValue);
    n->disabled = !enabled;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaGraphNodeGetEnabled(cudaGraphExec_t exec, cudaGraphNode_t node,
                                           unsigned int *enabled)
{
    APIP(cudaGraphNodeGetEnabled, v11060, exec, node, enabled);
    struct sim_node *o = (struct sim_node *)node;
    struct sim_node *n = o ? exec_node((struct sim_exec *)exec, node, o->type) : NULL;
    if (!n || !enabled)
        RETURN(cudaErrorInvalidValue);
    *enabled = !n->disabled;
    RETURN(cudaSuccess);
}

/* Pairs the nodes of `from` (in dependency order) with those of the exec's
 * copy; the topology must be the same, node by node. */
static enum cudaGraphExecUpdateResult update_graph(struct sim_graph *into,
                                                   const struct sim_graph *from,
                                                   cudaGraphNode_t *error_node,
                                                   cudaGraphNode_t *error_from)
{
    struct sim_node **order = dependency_order(from);
    if (!order)
        return cudaGraphExecUpdateErrorTopologyChanged;
    enum cudaGraphExecUpdateResult result = cudaGraphExecUpdateSuccess;
    if (from->count != into->count)
        result = cudaGraphExecUpdateErrorTopologyChanged;
    for (int i = 0; i < from->count && result == cudaGraphExecUpdateSuccess; i++) {
        struct sim_node *o = order[i], *c = into->nodes[i];
        *error_node = (cudaGraphNode_t)o;
        if (o->type != c->type) {
            result = cudaGraphExecUpdateErrorNodeTypeChanged;
            break;
        }
        if (o->ndeps != c->ndeps || o->body_count != c->body_count) {
            result = cudaGraphExecUpdateErrorTopologyChanged;
            break;
        }
        for (int d = 0; d < o->ndeps && result == cudaGraphExecUpdateSuccess; d++) {
            int found = 0;
            for (int j = 0; j < i; j++)
                for (int e = 0; e < c->ndeps && order[j] == o->deps[d]; e++)
                    found |= c->deps[e] == into->nodes[j];
            if (!found) {
                *error_from = (cudaGraphNode_t)o->deps[d];
                result = cudaGraphExecUpdateErrorTopologyChanged;
            }
        }
        if (o->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC || o->type == CU_GRAPH_NODE_TYPE_MEM_FREE) {
            if (o->address != c->address)
                result = cudaGraphExecUpdateErrorNotSupported;
            continue;
        }
        for (unsigned b = 0; b < o->body_count && result == cudaGraphExecUpdateSuccess; b++)
            result = update_graph(c->bodies[b], o->bodies[b], error_node, error_from);
    }
    if (result == cudaGraphExecUpdateSuccess) { /* the checks passed: take the parameters */
        for (int i = 0; i < from->count; i++) {
            struct sim_node *o = order[i], *c = into->nodes[i];
            int index = c->index;
            copy_payload(c, o);
            c->index = index;
            c->original = o;
        }
        *error_node = *error_from = NULL;
    }
    free(order);
    return result;
}

EXPORT cudaError_t cudaGraphExecUpdate(cudaGraphExec_t exec, cudaGraph_t graph,
                                       cudaGraphExecUpdateResultInfo *info)
{
    APIP(cudaGraphExecUpdate, v10020, exec, graph, info);
    struct sim_exec *x = (struct sim_exec *)exec;
    struct sim_graph *g = (struct sim_graph *)graph;
    if (!x || !g || !info)
        RETURN(cudaErrorInvalidValue);
    cudaGraphNode_t error_node = NULL, error_from = NULL;
    enum cudaGraphExecUpdateResult result = update_graph(x->graph, g, &error_node, &error_from);
    info->result = result;
    info->errorNode = result == cudaGraphExecUpdateSuccess ? NULL : error_node;
    info->errorFromNode = result == cudaGraphExecUpdateSuccess ? NULL : error_from;
    if (result != cudaGraphExecUpdateSuccess)
        RETURN(cudaErrorGraphExecUpdateFailure);
    CUpti_GraphData data;
    memset(&data, 0, sizeof data);
    data.graph = (CUgraph)x->graph;
    data.originalGraph = (CUgraph)g;
    data.graphExec = (CUgraphExec)x;
    for (int i = 0; i < x->graph->count; i++) {
        data.node = (CUgraphNode)x->graph->nodes[i];
        data.nodeType = x->graph->nodes[i]->type;
        graph_resource(CUPTI_CBID_RESOURCE_GRAPH_NODE_UPDATED, &data);
    }
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec)
{
    APIP(cudaGraphExecDestroy, v10000, exec);
    struct sim_exec *x = (struct sim_exec *)exec;
    if (!x)
        RETURN(cudaErrorInvalidValue);
    CUpti_GraphData data;
    memset(&data, 0, sizeof data);
    data.graph = (CUgraph)x->graph;
    data.graphExec = (CUgraphExec)x;
    graph_resource(CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING, &data);
    RETURN(cudaSuccess); /* kept: launched work may still use it */
}

/* ---- launch
 * --------------------------------------------------------------------------------------- */

/* Per launch: each node's parameters, a new sync id for each event record
 * node, and for each wait node the event's last record as the launch sees it. */
static void launch_tables(struct sim_op *op, const struct sim_graph *g, struct sim_stream *s)
{
    for (int i = 0; i < g->count; i++) {
        const struct sim_node *n = g->nodes[i];
        op->node_params[n->index] = *n; /* later changes to the exec are for later launches */
        if (n->type == CU_GRAPH_NODE_TYPE_EVENT_RECORD && n->event)
            op->node_sync_ids[n->index] =
                __atomic_add_fetch(&n->event->sync_id, 1, __ATOMIC_RELAXED);
        if (n->type == CU_GRAPH_NODE_TYPE_WAIT_EVENT && n->event && n->event->recorded &&
            n->event->stream != s)
            op->node_waits[n->index] = (struct dependency){n->event->stream, n->event->seq};
        for (unsigned b = 0; b < n->body_count; b++)
            launch_tables(op, n->bodies[b], s);
    }
}

/* After the enqueue: the events the graph records are last recorded by this launch. */
static void launch_records(const struct sim_op *op, const struct sim_graph *g, struct sim_stream *s,
                           uint64_t seq)
{
    for (int i = 0; i < g->count; i++) {
        const struct sim_node *n = g->nodes[i];
        if (n->type == CU_GRAPH_NODE_TYPE_EVENT_RECORD && n->event) {
            n->event->capture = NULL;
            n->event->stream = s;
            n->event->seq = seq;
            n->event->recorded = 1;
        }
        if (n->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC || n->type == CU_GRAPH_NODE_TYPE_MEM_FREE)
            graph_memory_mark(n->address, n->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC);
        for (unsigned b = 0; b < n->body_count; b++)
            launch_records(op, n->bodies[b], s, seq);
    }
}

EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream)
{
    APIP(cudaGraphLaunch, v10000, exec, stream);
    struct sim_exec *x = (struct sim_exec *)exec;
    struct sim_stream *s = resolve_stream(stream);
    if (!x)
        RETURN(cudaErrorInvalidValue);
    if (!s)
        RETURN(cudaErrorInvalidResourceHandle);
    if (s->capture) { /* launched into a capture: the graph becomes a child graph node */
        struct sim_node *n = capture_node(s, CU_GRAPH_NODE_TYPE_GRAPH);
        if (!n)
            RETURN(cudaErrorStreamCaptureInvalidated);
        n->bodies = calloc(1, sizeof *n->bodies);
        n->bodies[0] = graph_copy(x->source, n);
        n->body_count = n->bodies[0] ? 1 : 0;
        RETURN(n->bodies[0] ? cudaSuccess : capture_invalidate(s, cudaErrorNotSupported));
    }
    struct sim_op *op = op_new(OP_GRAPH);
    op->exec = x;
    size_t total = (size_t)(x->node_total ? x->node_total : 1);
    op->node_sync_ids = calloc(total, sizeof *op->node_sync_ids);
    op->node_waits = calloc(total, sizeof *op->node_waits);
    op->node_params = calloc(total, sizeof *op->node_params);
    launch_tables(op, x->graph, s);
    pthread_mutex_lock(&rt.lock);
    /* a launch runs after the exec's previous launch, on whatever stream that was */
    if (x->last_stream && x->last_stream != s && op->ndeps < MAX_DEPS)
        op->deps[op->ndeps++] = (struct dependency){x->last_stream, x->last_seq};
    pthread_mutex_unlock(&rt.lock);
    uint64_t seq = enqueue(s, op);
    pthread_mutex_lock(&rt.lock);
    x->last_stream = s;
    x->last_seq = seq;
    pthread_mutex_unlock(&rt.lock);
    launch_records(op, x->graph, s, seq);
    RETURN(cudaSuccess);
}

/* Stream-ordered upload of the exec: nothing to upload to a simulated device. */
EXPORT cudaError_t cudaGraphUpload(cudaGraphExec_t exec, cudaStream_t stream)
{
    APIP(cudaGraphUpload, v10000, exec, stream);
    if (!exec)
        RETURN(cudaErrorInvalidValue);
    if (!resolve_stream(stream))
        RETURN(cudaErrorInvalidResourceHandle);
    RETURN(cudaSuccess);
}

/* Which bodies of a conditional node run in a launch (see the file comment). */
static int conditional_runs(const struct sim_node *n, unsigned body)
{
    unsigned value = n->conditional ? n->conditional->default_value : 0;
    switch (n->conditional_type) {
    case cudaGraphCondTypeIf:
        return body == 0 ? value != 0 : value == 0;
    case cudaGraphCondTypeWhile:
        return value != 0;
    case cudaGraphCondTypeSwitch:
        return body == value;
    }
    return 0;
}

/* Runs graph `g` of a launch from `start`; returns when its last node ends. */
static uint64_t run_graph(struct sim_op *op, struct sim_stream *s, struct sim_graph *g,
                          uint64_t start, uint32_t graph_id)
{
    uint64_t last = start;
    for (int i = 0; i < g->count; i++) {
        struct sim_node *n = g->nodes[i];
        const struct sim_node *p = &op->node_params[n->index]; /* as it was at the launch */
        n->start = start;
        for (int d = 0; d < n->ndeps; d++)
            if (n->deps[d]->end > n->start)
                n->start = n->deps[d]->end;
        n->end = n->start;
        switch (p->disabled ? CU_GRAPH_NODE_TYPE_EMPTY : n->type) {
        case CU_GRAPH_NODE_TYPE_KERNEL:
            n->end = n->start + kernel_duration(p->kernel);
            emit_kernel(op, s, n->start, n->end, n->id, graph_id, p->kernel, p->grid, p->block,
                        p->shared_memory);
            break;
        case CU_GRAPH_NODE_TYPE_MEMCPY: {
            const struct copy_plan *c = &p->copy;
            run_copy(c);
            n->end = n->start + copy_duration(c->bytes, c->copy_kind, c->src_kind, c->dst_kind);
            if (c->copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_PTOP)
                emit_peer_memcpy(op, s, n->start, n->end, c->bytes, c->src_device, c->dst_device, 1,
                                 n->id, graph_id);
            else
                emit_memcpy(op, s, n->start, n->end, c->bytes, c->copy_kind, c->src_kind,
                            c->dst_kind, 1, n->id, graph_id);
            break;
        }
        case CU_GRAPH_NODE_TYPE_MEMSET:
            run_set(&p->set);
            n->end = n->start + 1000 + (uint64_t)((double)p->set.bytes / rt.memset_gbps);
            emit_memset(op, s, n->start, n->end, p->set.bytes, p->set.value, p->set.memory_kind, 1,
                        n->id, graph_id);
            break;
        case CU_GRAPH_NODE_TYPE_HOST: /* the nodes after it wait until it has returned */
            run_host_fn(p->host_fn, p->host_data, n->start);
            n->end = simppu_now_ns() > n->start ? simppu_now_ns() : n->start;
            break;
        case CU_GRAPH_NODE_TYPE_GRAPH:
            n->end = run_graph(op, s, n->bodies[0], n->start, graph_id);
            break;
        case CU_GRAPH_NODE_TYPE_CONDITIONAL:
            for (unsigned b = 0; b < n->body_count; b++)
                if (conditional_runs(n, b))
                    n->end = run_graph(op, s, n->bodies[b], n->start, graph_id);
            break;
        case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
            if (p->event)
                emit_event_record(op, s, p->event, op->node_sync_ids[n->index], n->start);
            break;
        case CU_GRAPH_NODE_TYPE_WAIT_EVENT: {
            struct dependency w = op->node_waits[n->index];
            if (w.stream && !(w.stream == s && w.seq >= op->seq)) {
                uint64_t ready = wait_decided(w.stream, w.seq);
                if (ready > n->start)
                    n->start = n->end = ready;
            }
            break;
        }
        case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
            graph_memory_record(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, p->address, op, s,
                                device_span(op, n->start, n->start).start);
            break;
        case CU_GRAPH_NODE_TYPE_MEM_FREE:
            graph_memory_record(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, p->address, op, s,
                                device_span(op, n->start, n->start).start);
            break;
        default:
            break;
        }
        if (n->end > last)
            last = n->end;
    }
    return last;
}

/* A graph launch, on its stream's worker; returns when its last node ends. */
uint64_t fill_graph_and_emit(struct sim_op *op, struct sim_stream *s, uint64_t start)
{
    return run_graph(op, s, op->exec->graph, start, op->exec->source->id);
}
