/* simppu libcudart.so.13: stream capture, graphs, their instantiation and
 * launch. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cudart_internal.h"

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
struct sim_node *capture_node(struct sim_stream *s, CUgraphNodeType type)
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
void fill_graph_and_emit(struct sim_op *op, struct sim_stream *s, uint64_t start)
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
