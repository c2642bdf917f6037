// device_query: every device's properties and attributes (the two must
// agree), versions, limits, cache configurations, a kernel's attributes and
// its occupancy (the cudaOccupancyMaxPotentialBlockSize template too), stream
// attributes, memory information and error names.  Prints "Result = PASS"
// when every query succeeded and agreed.
#include <string.h>

#include "samples_common.h"

__global__ void saxpy(float a, const float *x, float *y, int n)
{
    extern __shared__ float tile[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        tile[threadIdx.x] = x[i];
        y[i] = a * tile[threadIdx.x] + y[i];
    }
}

static int mismatches;

static void agree(const char *what, long long prop, int device, cudaDeviceAttr attr)
{
    int value = 0;
    CHECK(cudaDeviceGetAttribute(&value, attr, device));
    if (prop != value) {
        printf("MISMATCH %s: property %lld, attribute %d\n", what, prop, value);
        mismatches++;
    }
}

int main(void)
{
    int driver = 0, runtime = 0, count = 0;
    CHECK(cudaDriverGetVersion(&driver));
    CHECK(cudaRuntimeGetVersion(&runtime));
    CHECK(cudaGetDeviceCount(&count));
    printf("driver %d runtime %d, %d device(s)\n", driver, runtime, count);
    for (int dev = 0; dev < count; dev++) {
        cudaDeviceProp p;
        CHECK(cudaGetDeviceProperties(&p, dev));
        int clock = 0, memory_clock = 0;
        CHECK(cudaDeviceGetAttribute(&clock, cudaDevAttrClockRate, dev));
        CHECK(cudaDeviceGetAttribute(&memory_clock, cudaDevAttrMemoryClockRate, dev));
        printf("Device %d: \"%s\"\n", dev, p.name);
        printf("  compute capability %d.%d\n", p.major, p.minor);
        printf("  global memory %zu bytes\n", p.totalGlobalMem);
        printf("  multiprocessors %d\n", p.multiProcessorCount);
        printf("  clock rate %d kHz, memory clock rate %d kHz, bus width %d bits\n", clock,
               memory_clock, p.memoryBusWidth);
        printf("  L2 cache %d bytes\n", p.l2CacheSize);
        printf("  max threads per block %d, per multiprocessor %d\n", p.maxThreadsPerBlock,
               p.maxThreadsPerMultiProcessor);
        printf("  block dims %d x %d x %d, grid dims %d x %d x %d\n", p.maxThreadsDim[0],
               p.maxThreadsDim[1], p.maxThreadsDim[2], p.maxGridSize[0], p.maxGridSize[1],
               p.maxGridSize[2]);
        printf("  shared memory per block %zu (opt-in %zu), per multiprocessor %zu\n",
               p.sharedMemPerBlock, p.sharedMemPerBlockOptin, p.sharedMemPerMultiprocessor);
        printf("  registers per block %d, warp size %d\n", p.regsPerBlock, p.warpSize);
        printf("  async engines %d, concurrent kernels %d, unified addressing %d, managed %d\n",
               p.asyncEngineCount, p.concurrentKernels, p.unifiedAddressing, p.managedMemory);
        printf("  PCI domain %d bus %d device %d\n", p.pciDomainID, p.pciBusID, p.pciDeviceID);
        char bus_id[32];
        CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, dev));
        int by_bus = -1;
        CHECK(cudaDeviceGetByPCIBusId(&by_bus, bus_id));
        printf("  PCI bus id %s (device %d)\n", bus_id, by_bus);
        agree("multiProcessorCount", p.multiProcessorCount, dev, cudaDevAttrMultiProcessorCount);
        agree("major", p.major, dev, cudaDevAttrComputeCapabilityMajor);
        agree("minor", p.minor, dev, cudaDevAttrComputeCapabilityMinor);
        agree("maxThreadsPerBlock", p.maxThreadsPerBlock, dev, cudaDevAttrMaxThreadsPerBlock);
        agree("warpSize", p.warpSize, dev, cudaDevAttrWarpSize);
        agree("sharedMemPerBlock", (long long)p.sharedMemPerBlock, dev,
              cudaDevAttrMaxSharedMemoryPerBlock);
        agree("sharedMemPerBlockOptin", (long long)p.sharedMemPerBlockOptin, dev,
              cudaDevAttrMaxSharedMemoryPerBlockOptin);
        agree("l2CacheSize", p.l2CacheSize, dev, cudaDevAttrL2CacheSize);
        agree("memoryBusWidth", p.memoryBusWidth, dev, cudaDevAttrGlobalMemoryBusWidth);
        agree("maxGridSize[0]", p.maxGridSize[0], dev, cudaDevAttrMaxGridDimX);
        agree("pciBusID", p.pciBusID, dev, cudaDevAttrPciBusId);
        agree("asyncEngineCount", p.asyncEngineCount, dev, cudaDevAttrAsyncEngineCount);
        agree("managedMemory", p.managedMemory, dev, cudaDevAttrManagedMemory);
        agree("cooperativeLaunch", p.cooperativeLaunch, dev, cudaDevAttrCooperativeLaunch);
        agree("memoryPoolsSupported", p.memoryPoolsSupported, dev, cudaDevAttrMemoryPoolsSupported);
        agree("maxBlocksPerMultiProcessor", p.maxBlocksPerMultiProcessor, dev,
              cudaDevAttrMaxBlocksPerMultiprocessor);
        int value = 0;
        EXPECT_ERROR(cudaDeviceGetAttribute(&value, (cudaDeviceAttr)92, dev),
                     cudaErrorInvalidValue);
        EXPECT_ERROR(cudaGetDeviceProperties(&p, count), cudaErrorInvalidDevice);
    }

    CHECK(cudaSetDevice(0));
    size_t heap = 0;
    CHECK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 64 << 20));
    CHECK(cudaDeviceGetLimit(&heap, cudaLimitMallocHeapSize));
    size_t stack = 0;
    CHECK(cudaDeviceGetLimit(&stack, cudaLimitStackSize));
    printf("malloc heap %zu, stack %zu\n", heap, stack);
    CHECK(cudaDeviceSetCacheConfig(cudaFuncCachePreferShared));
    cudaFuncCache cache;
    CHECK(cudaDeviceGetCacheConfig(&cache));
    printf("cache config %d\n", (int)cache);
    CHECK(cudaFuncSetCacheConfig(saxpy, cudaFuncCachePreferL1));
    CHECK(cudaFuncSetAttribute(saxpy, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024));

    cudaFuncAttributes fa;
    CHECK(cudaFuncGetAttributes(&fa, saxpy));
    printf("saxpy: %d registers, max %d threads, max dynamic shared %d\n", fa.numRegs,
           fa.maxThreadsPerBlock, fa.maxDynamicSharedSizeBytes);
    int blocks = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, saxpy, 256, 256 * sizeof(float)));
    printf("occupancy: %d blocks of 256 per multiprocessor\n", blocks);
    int min_grid = 0, block = 0;
    CHECK(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, saxpy, 0, 0));
    printf("potential block size %d, minimum grid %d\n", block, min_grid);
    size_t dyn = 0;
    CHECK(cudaOccupancyAvailableDynamicSMemPerBlock(&dyn, saxpy, 4, 256));
    printf("dynamic shared memory for 4 blocks of 256: %zu\n", dyn);

    unsigned flags = 0;
    CHECK(cudaSetDeviceFlags(cudaDeviceScheduleYield));
    CHECK(cudaGetDeviceFlags(&flags));
    printf("device flags 0x%x\n", flags);
    size_t free_bytes = 0, total = 0;
    CHECK(cudaMemGetInfo(&free_bytes, &total));
    printf("memory: %zu free of %zu\n", free_bytes, total);

    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    cudaStreamAttrValue window;
    memset(&window, 0, sizeof window);
    window.accessPolicyWindow.num_bytes = 1 << 20;
    window.accessPolicyWindow.hitRatio = 0.5f;
    window.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    window.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    CHECK(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &window));
    cudaStreamAttrValue back;
    CHECK(cudaStreamGetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &back));
    printf("access policy window %zu bytes, hit ratio %.2f\n", back.accessPolicyWindow.num_bytes,
           back.accessPolicyWindow.hitRatio);
    CHECK(cudaCtxResetPersistingL2Cache());
    CHECK(cudaStreamDestroy(s));

    const cudaError_t codes[] = {cudaSuccess,
                                 cudaErrorInvalidValue,
                                 cudaErrorMemoryAllocation,
                                 cudaErrorInvalidDevice,
                                 cudaErrorPeerAccessAlreadyEnabled,
                                 cudaErrorNotSupported,
                                 cudaErrorStreamCaptureInvalidated,
                                 cudaErrorGraphExecUpdateFailure,
                                 cudaErrorUnknown};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        printf("error %d: %s: %s\n", (int)codes[i], cudaGetErrorName(codes[i]),
               cudaGetErrorString(codes[i]));
    CHECK(cudaDeviceReset());
    printf("Result = %s\ndone\n", mismatches ? "FAIL" : "PASS");
    return mismatches ? 1 : 0;
}
