// graph_memory_nodes: memory that graphs and streams allocate.
//   1. a graph built by hand: alloc node -> fill kernel -> copy out -> free node,
//      launched twice;
//   2. the same by stream capture of cudaMallocAsync ... cudaFreeAsync, launched twice;
//   3. stream-ordered allocation from the device's default pool (release
//      threshold raised) three times, and once from a pool of its own;
//   4. managed memory with a prefetch, an advice and a stream attachment.
#include <stdint.h>
#include <string.h>

#include "samples_common.h"

__global__ void fill(int *d, int value, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        d[i] = value;
}

int main(void)
{
    const int n = 1 << 18;
    const size_t bytes = n * sizeof(int);
    int *host = NULL;
    CHECK(cudaMallocHost(&host, bytes));
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    // 1. by hand
    cudaGraph_t g;
    CHECK(cudaGraphCreate(&g, 0));
    cudaMemAllocNodeParams ap;
    memset(&ap, 0, sizeof ap);
    ap.poolProps.allocType = cudaMemAllocationTypePinned;
    ap.poolProps.location.type = cudaMemLocationTypeDevice;
    ap.poolProps.location.id = 0;
    ap.bytesize = bytes;
    cudaGraphNode_t alloc, kern, copy, release;
    CHECK(cudaGraphAddMemAllocNode(&alloc, g, NULL, 0, &ap));
    int *dptr = (int *)ap.dptr;
    int value = 7, count = n;
    void *args[] = {&dptr, &value, &count};
    cudaKernelNodeParams kp;
    memset(&kp, 0, sizeof kp);
    kp.func = (void *)fill;
    kp.gridDim = dim3(n / 256);
    kp.blockDim = dim3(256);
    kp.kernelParams = args;
    CHECK(cudaGraphAddKernelNode(&kern, g, &alloc, 1, &kp));
    CHECK(cudaGraphAddMemcpyNode1D(&copy, g, &kern, 1, host, dptr, bytes, cudaMemcpyDeviceToHost));
    CHECK(cudaGraphAddMemFreeNode(&release, g, &copy, 1, dptr));
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, g, 0));
    for (int i = 0; i < 2; i++)
        CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaStreamSynchronize(s));
    unsigned long long used_high = 0;
    CHECK(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh, &used_high));
    printf("graph memory high water mark %llu bytes\n", used_high);

    // 2. by stream capture
    cudaGraph_t captured;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    int *cptr = NULL;
    CHECK(cudaMallocAsync(&cptr, bytes, s));
    fill<<<n / 256, 256, 0, s>>>(cptr, 8, n);
    CHECK(cudaMemcpyAsync(host, cptr, bytes, cudaMemcpyDeviceToHost, s));
    CHECK(cudaFreeAsync(cptr, s));
    CHECK(cudaStreamEndCapture(s, &captured));
    cudaGraphExec_t cexec;
    CHECK(cudaGraphInstantiate(&cexec, captured, 0));
    for (int i = 0; i < 2; i++)
        CHECK(cudaGraphLaunch(cexec, s));
    CHECK(cudaStreamSynchronize(s));

    // 3. stream-ordered allocation
    cudaMemPool_t pool;
    CHECK(cudaDeviceGetDefaultMemPool(&pool, 0));
    uint64_t threshold = UINT64_MAX;
    CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
    for (int i = 0; i < 3; i++) {
        int *p = NULL;
        CHECK(cudaMallocAsync(&p, bytes, s));
        fill<<<n / 256, 256, 0, s>>>(p, i, n);
        CHECK(cudaFreeAsync(p, s));
    }
    CHECK(cudaStreamSynchronize(s));
    uint64_t reserved = 0, used = 0;
    CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
    CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
    printf("default pool: %llu reserved, %llu used\n", (unsigned long long)reserved,
           (unsigned long long)used);
    cudaMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    cudaMemPool_t own;
    CHECK(cudaMemPoolCreate(&own, &props));
    int *q = NULL;
    CHECK(cudaMallocFromPoolAsync((void **)&q, bytes, own, s));
    fill<<<n / 256, 256, 0, s>>>(q, 9, n);
    CHECK(cudaFreeAsync(q, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemPoolTrimTo(own, 0));
    CHECK(cudaMemPoolDestroy(own));

    // 4. managed memory
    int *m = NULL;
    CHECK(cudaMallocManaged(&m, bytes, cudaMemAttachGlobal));
    for (int i = 0; i < n; i++)
        m[i] = i;
    cudaMemLocation device0 = {cudaMemLocationTypeDevice, 0};
    CHECK(cudaMemAdvise(m, bytes, cudaMemAdviseSetPreferredLocation, device0));
    CHECK(cudaMemPrefetchAsync(m, bytes, device0, 0, s));
    CHECK(cudaStreamAttachMemAsync(s, m, 0, cudaMemAttachSingle));
    fill<<<n / 256, 256, 0, s>>>(m, 3, n);
    CHECK(cudaStreamSynchronize(s));
    cudaPointerAttributes pa;
    CHECK(cudaPointerGetAttributes(&pa, m));
    printf("managed pointer type %d\n", (int)pa.type);
    CHECK(cudaFree(m));

    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphExecDestroy(cexec));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaGraphDestroy(captured));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFreeHost(host));
    printf("done\n");
    return 0;
}
