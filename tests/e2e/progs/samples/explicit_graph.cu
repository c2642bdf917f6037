// explicit_graph: graphs built node by node.
//
// Graph 1:  memset M -> kernel A -> {kernel B, kernel C} -> copy D -> host H
//           A -> child graph G (kernel X -> kernel Y);  {G, H} -> empty E
//           E -> event record R.  The edge C -> D is added afterwards
//           (cudaGraphAddDependencies).  Instantiated and launched 3 times:
//           between the launches one kernel node's grid is changed in the exec,
//           then the exec is updated from a clone of the graph.  The clone is
//           instantiated and launched once too.
//           The graph is built inside the HGTX range "build graph 1".
// Graph 2:  kernel P -> wait on the event of R -> {IF (default 1): kernel I,
//           WHILE (default 0): kernel W}; launched twice.
#include <nvtx3/nvToolsExt.h>
#include <string.h>

#include "samples_common.h"

__global__ void k_a(float *d, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        d[i] += 1.0f;
}
__global__ void k_b(float *d, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        d[i] *= 2.0f;
}
__global__ void k_c(float *d, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        d[i] -= 1.0f;
}
__global__ void k_x(float *d, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        d[i] = -d[i];
}
__global__ void k_y(float *d, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        d[i] = d[i] * d[i];
}
__global__ void k_pre(float *d)
{
    d[0] = 0.0f;
}
__global__ void k_if(float *d)
{
    d[1] = 1.0f;
}
__global__ void k_while(float *d)
{
    d[2] = 2.0f;
}

static int host_calls;
static void CUDART_CB count_host(void *data)
{
    (void)data;
    host_calls++;
}

static const char *type_name(cudaGraphNodeType t)
{
    switch (t) {
    case cudaGraphNodeTypeKernel:
        return "kernel";
    case cudaGraphNodeTypeMemcpy:
        return "memcpy";
    case cudaGraphNodeTypeMemset:
        return "memset";
    case cudaGraphNodeTypeHost:
        return "host";
    case cudaGraphNodeTypeGraph:
        return "graph";
    case cudaGraphNodeTypeEmpty:
        return "empty";
    case cudaGraphNodeTypeEventRecord:
        return "event-record";
    default:
        return "other";
    }
}

static cudaKernelNodeParams kernel(void *func, void **args, unsigned grid)
{
    cudaKernelNodeParams p;
    memset(&p, 0, sizeof p);
    p.func = func;
    p.gridDim = dim3(grid);
    p.blockDim = dim3(256);
    p.kernelParams = args;
    return p;
}

int main(void)
{
    const int n = 1 << 12;
    float *d = NULL, *host = NULL;
    CHECK(cudaMalloc(&d, n * sizeof(float)));
    CHECK(cudaMallocHost(&host, n * sizeof(float)));
    int count = n;
    void *args[] = {&d, &count};
    void *args1[] = {&d};
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t ev;
    CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));

    // the child graph: X -> Y
    cudaGraph_t child;
    cudaGraphNode_t X, Y;
    CHECK(cudaGraphCreate(&child, 0));
    cudaKernelNodeParams px = kernel((void *)k_x, args, n / 256);
    cudaKernelNodeParams py = kernel((void *)k_y, args, n / 256);
    CHECK(cudaGraphAddKernelNode(&X, child, NULL, 0, &px));
    CHECK(cudaGraphAddKernelNode(&Y, child, &X, 1, &py));

    // graph 1, built inside an HGTX range: its work projects onto that range
    nvtxRangePushA("build graph 1");
    cudaGraph_t g;
    cudaGraphNode_t M, A, B, C, D, H, G, E, R;
    CHECK(cudaGraphCreate(&g, 0));
    cudaMemsetParams ms;
    memset(&ms, 0, sizeof ms);
    ms.dst = d;
    ms.value = 0;
    ms.elementSize = 4;
    ms.width = n;
    ms.height = 1;
    CHECK(cudaGraphAddMemsetNode(&M, g, NULL, 0, &ms));
    cudaKernelNodeParams pa = kernel((void *)k_a, args, n / 256);
    cudaKernelNodeParams pb = kernel((void *)k_b, args, n / 256);
    cudaKernelNodeParams pc = kernel((void *)k_c, args, n / 256);
    CHECK(cudaGraphAddKernelNode(&A, g, &M, 1, &pa));
    CHECK(cudaGraphAddKernelNode(&B, g, &A, 1, &pb));
    CHECK(cudaGraphAddKernelNode(&C, g, &A, 1, &pc));
    CHECK(
        cudaGraphAddMemcpyNode1D(&D, g, &B, 1, host, d, n * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(cudaGraphAddDependencies(g, &C, &D, NULL, 1));
    cudaHostNodeParams ph = {count_host, NULL};
    CHECK(cudaGraphAddHostNode(&H, g, &D, 1, &ph));
    CHECK(cudaGraphAddChildGraphNode(&G, g, &A, 1, child));
    cudaGraphNode_t before_e[] = {G, H};
    CHECK(cudaGraphAddEmptyNode(&E, g, before_e, 2));
    CHECK(cudaGraphAddEventRecordNode(&R, g, &E, 1, ev));
    nvtxRangePop();

    size_t nodes = 0, roots = 0, edges = 0;
    CHECK(cudaGraphGetNodes(g, NULL, &nodes));
    CHECK(cudaGraphGetRootNodes(g, NULL, &roots));
    CHECK(cudaGraphGetEdges(g, NULL, NULL, NULL, &edges));
    printf("graph 1: %zu nodes, %zu root, %zu edges\n", nodes, roots, edges);
    cudaGraphNode_t all[16];
    size_t got = 16;
    CHECK(cudaGraphGetNodes(g, all, &got));
    printf("types:");
    for (size_t i = 0; i < got; i++) {
        cudaGraphNodeType t;
        CHECK(cudaGraphNodeGetType(all[i], &t));
        printf(" %s", type_name(t));
    }
    printf("\n");
    size_t deps_of_d = 0;
    CHECK(cudaGraphNodeGetDependencies(D, NULL, NULL, &deps_of_d));
    printf("the copy waits for %zu nodes\n", deps_of_d);

    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, g, 0));
    CHECK(cudaGraphUpload(exec, s));
    CHECK(cudaGraphLaunch(exec, s));
    cudaKernelNodeParams wider = kernel((void *)k_b, args, 2 * (n / 256));
    CHECK(cudaGraphExecKernelNodeSetParams(exec, B, &wider));
    CHECK(cudaGraphLaunch(exec, s));

    cudaGraph_t clone;
    CHECK(cudaGraphClone(&clone, g));
    cudaGraphNode_t B_in_clone;
    CHECK(cudaGraphNodeFindInClone(&B_in_clone, B, clone));
    cudaGraphExecUpdateResultInfo info;
    CHECK(cudaGraphExecUpdate(exec, clone, &info));
    printf("exec update: result %d\n", (int)info.result);
    CHECK(cudaGraphLaunch(exec, s));

    cudaGraphExec_t clone_exec;
    CHECK(cudaGraphInstantiateWithFlags(&clone_exec, clone, 0));
    CHECK(cudaGraphLaunch(clone_exec, s));

    // graph 2: P -> wait(ev) -> {IF: I, WHILE: W}
    cudaGraph_t g2;
    cudaGraphNode_t P, W8, IF, WH, I, WB;
    CHECK(cudaGraphCreate(&g2, 0));
    cudaKernelNodeParams pp = kernel((void *)k_pre, args1, 1);
    CHECK(cudaGraphAddKernelNode(&P, g2, NULL, 0, &pp));
    CHECK(cudaGraphAddEventWaitNode(&W8, g2, &P, 1, ev));
    cudaGraphConditionalHandle run_once, never;
    CHECK(cudaGraphConditionalHandleCreate(&run_once, g2, 1, cudaGraphCondAssignDefault));
    CHECK(cudaGraphConditionalHandleCreate(&never, g2, 0, cudaGraphCondAssignDefault));
    cudaGraphNodeParams cp = {cudaGraphNodeTypeConditional};
    cp.conditional.handle = run_once;
    cp.conditional.type = cudaGraphCondTypeIf;
    cp.conditional.size = 1;
    CHECK(cudaGraphAddNode(&IF, g2, &W8, NULL, 1, &cp));
    cudaGraph_t if_body = cp.conditional.phGraph_out[0];
    cudaGraphNodeParams wp = {cudaGraphNodeTypeConditional};
    wp.conditional.handle = never;
    wp.conditional.type = cudaGraphCondTypeWhile;
    wp.conditional.size = 1;
    CHECK(cudaGraphAddNode(&WH, g2, &W8, NULL, 1, &wp));
    cudaGraph_t while_body = wp.conditional.phGraph_out[0];
    cudaGraphNodeParams kp = {cudaGraphNodeTypeKernel};
    kp.kernel.func = (void *)k_if;
    kp.kernel.gridDim = dim3(1);
    kp.kernel.blockDim = dim3(32);
    kp.kernel.kernelParams = args1;
    CHECK(cudaGraphAddNode(&I, if_body, NULL, NULL, 0, &kp));
    kp.kernel.func = (void *)k_while;
    CHECK(cudaGraphAddNode(&WB, while_body, NULL, NULL, 0, &kp));
    EXPECT_ERROR(cudaGraphClone(&clone, g2), cudaErrorNotSupported);

    cudaGraphExec_t exec2;
    CHECK(cudaGraphInstantiate(&exec2, g2, 0));
    CHECK(cudaGraphLaunch(exec2, 0));
    CHECK(cudaGraphLaunch(exec2, 0));

    CHECK(cudaDeviceSynchronize());
    printf("host node ran %d times\n", host_calls);
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphExecDestroy(clone_exec));
    CHECK(cudaGraphExecDestroy(exec2));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaGraphDestroy(clone));
    CHECK(cudaGraphDestroy(g2));
    CHECK(cudaGraphDestroy(child));
    CHECK(cudaEventDestroy(ev));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(d));
    CHECK(cudaFreeHost(host));
    printf("done\n");
    return 0;
}
