/* simppu libcudart.so.13: devices and what they can do (attributes,
 * properties, flags, limits, cache configurations, peers), kernels'
 * attributes and occupancy, versions, errors, profiler control.
 *
 * The simulated device is one table, device_attribute(): cudaDeviceGetAttribute
 * reads it, cudaGetDeviceProperties and the CUPTI DEVICE record are filled
 * from it, so every view of a device agrees.  It is a compute capability 9.0
 * part with 64 multiprocessors; its memory clock and bus width give the
 * bandwidth of SIMPPU_DEVICE_GBPS, its memory size SIMPPU_MEMORY_BYTES. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudart_internal.h"

#define MULTIPROCESSORS 64
#define CLOCK_KHZ 1500000
#define BUS_WIDTH_BITS 1024
#define SHARED_PER_BLOCK (48 * 1024)
#define SHARED_PER_BLOCK_OPTIN (227 * 1024)
#define SHARED_PER_SM (228 * 1024)
#define RESERVED_SHARED_PER_BLOCK 1024
#define REGISTERS_PER_SM 65536
#define THREADS_PER_SM 2048
#define BLOCKS_PER_SM 32
#define L2_BYTES (50 * 1024 * 1024)
#define PERSISTING_L2_MAX (30 * 1024 * 1024)
#define KERNEL_REGISTERS 32 /* per thread, as the kernel records say */

int valid_device(int device)
{
    ensure_init();
    return device >= 0 && device < rt.device_count;
}

/* The device's value of `attr`; 0 with *known = 0 for reserved ids. */
static int device_attribute(int device, enum cudaDeviceAttr attr, int *known)
{
    *known = 1;
    switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock:
        return 1024;
    case cudaDevAttrMaxBlockDimX:
    case cudaDevAttrMaxBlockDimY:
        return 1024;
    case cudaDevAttrMaxBlockDimZ:
        return 64;
    case cudaDevAttrMaxGridDimX:
        return 0x7fffffff;
    case cudaDevAttrMaxGridDimY:
    case cudaDevAttrMaxGridDimZ:
        return 65535;
    case cudaDevAttrMaxSharedMemoryPerBlock:
        return SHARED_PER_BLOCK;
    case cudaDevAttrTotalConstantMemory:
        return 65536;
    case cudaDevAttrWarpSize:
        return 32;
    case cudaDevAttrMaxPitch:
        return 0x7fffffff;
    case cudaDevAttrMaxRegistersPerBlock:
    case cudaDevAttrMaxRegistersPerMultiprocessor:
        return REGISTERS_PER_SM;
    case cudaDevAttrClockRate:
        return CLOCK_KHZ;
    case cudaDevAttrTextureAlignment:
    case cudaDevAttrSurfaceAlignment:
        return 512;
    case cudaDevAttrGpuOverlap:
        return 1;
    case cudaDevAttrMultiProcessorCount:
        return MULTIPROCESSORS;
    case cudaDevAttrKernelExecTimeout:
    case cudaDevAttrIntegrated:
        return 0;
    case cudaDevAttrCanMapHostMemory:
        return 1;
    case cudaDevAttrComputeMode:
        return cudaComputeModeDefault;
    case cudaDevAttrMaxTexture1DWidth:
    case cudaDevAttrMaxTexture2DWidth:
    case cudaDevAttrMaxTexture1DLinearWidth:
    case cudaDevAttrMaxTexture2DLinearWidth:
    case cudaDevAttrMaxSurface2DWidth:
        return 131072;
    case cudaDevAttrMaxTexture2DHeight:
    case cudaDevAttrMaxSurface2DHeight:
        return 65536;
    case cudaDevAttrMaxTexture3DWidth:
    case cudaDevAttrMaxTexture3DHeight:
    case cudaDevAttrMaxTexture3DDepth:
    case cudaDevAttrMaxSurface3DWidth:
    case cudaDevAttrMaxSurface3DHeight:
    case cudaDevAttrMaxSurface3DDepth:
        return 16384;
    case cudaDevAttrMaxTexture3DWidthAlt:
    case cudaDevAttrMaxTexture3DHeightAlt:
        return 8192;
    case cudaDevAttrMaxTexture3DDepthAlt:
        return 32768;
    case cudaDevAttrMaxTexture2DLayeredWidth:
    case cudaDevAttrMaxTexture2DLayeredHeight:
    case cudaDevAttrMaxTexture1DLayeredWidth:
    case cudaDevAttrMaxTexture2DGatherWidth:
    case cudaDevAttrMaxTexture2DGatherHeight:
    case cudaDevAttrMaxTextureCubemapWidth:
    case cudaDevAttrMaxTextureCubemapLayeredWidth:
    case cudaDevAttrMaxSurface1DWidth:
    case cudaDevAttrMaxSurface1DLayeredWidth:
    case cudaDevAttrMaxSurface2DLayeredWidth:
    case cudaDevAttrMaxSurface2DLayeredHeight:
    case cudaDevAttrMaxSurfaceCubemapWidth:
    case cudaDevAttrMaxSurfaceCubemapLayeredWidth:
    case cudaDevAttrMaxTexture2DMipmappedWidth:
    case cudaDevAttrMaxTexture2DMipmappedHeight:
    case cudaDevAttrMaxTexture1DMipmappedWidth:
        return 32768;
    case cudaDevAttrMaxTexture2DLayeredLayers:
    case cudaDevAttrMaxTexture1DLayeredLayers:
    case cudaDevAttrMaxSurface1DLayeredLayers:
    case cudaDevAttrMaxSurface2DLayeredLayers:
        return 2048;
    case cudaDevAttrMaxTextureCubemapLayeredLayers:
    case cudaDevAttrMaxSurfaceCubemapLayeredLayers:
        return 2046;
    case cudaDevAttrMaxTexture2DLinearHeight:
        return 65000;
    case cudaDevAttrMaxTexture2DLinearPitch:
        return 2097120;
    case cudaDevAttrConcurrentKernels:
        return 1;
    case cudaDevAttrEccEnabled:
        return 0;
    case cudaDevAttrPciBusId:
        return 0x10 + rt.devices[device].physical;
    case cudaDevAttrPciDeviceId:
    case cudaDevAttrPciDomainId:
    case cudaDevAttrTccDriver:
        return 0;
    case cudaDevAttrMemoryClockRate: /* kHz: double data rate over the bus gives the bandwidth */
        return (int)(rt.device_gbps * 1e9 / 2.0 / (BUS_WIDTH_BITS / 8) / 1e3);
    case cudaDevAttrGlobalMemoryBusWidth:
        return BUS_WIDTH_BITS;
    case cudaDevAttrL2CacheSize:
        return L2_BYTES;
    case cudaDevAttrMaxThreadsPerMultiProcessor:
        return THREADS_PER_SM;
    case cudaDevAttrAsyncEngineCount:
        return 2;
    case cudaDevAttrUnifiedAddressing:
        return 1;
    case cudaDevAttrTexturePitchAlignment:
        return 32;
    case cudaDevAttrComputeCapabilityMajor:
        return 9;
    case cudaDevAttrComputeCapabilityMinor:
        return 0;
    case cudaDevAttrStreamPrioritiesSupported:
    case cudaDevAttrGlobalL1CacheSupported:
    case cudaDevAttrLocalL1CacheSupported:
        return 1;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor:
        return SHARED_PER_SM;
    case cudaDevAttrManagedMemory:
        return 1;
    case cudaDevAttrIsMultiGpuBoard:
        return 0;
    case cudaDevAttrMultiGpuBoardGroupID:
        return rt.devices[device].physical;
    case cudaDevAttrHostNativeAtomicSupported:
        return 0;
    case cudaDevAttrSingleToDoublePrecisionPerfRatio:
        return 2;
    case cudaDevAttrPageableMemoryAccess:
        return 0;
    case cudaDevAttrConcurrentManagedAccess:
    case cudaDevAttrComputePreemptionSupported:
    case cudaDevAttrCanUseHostPointerForRegisteredMem:
    case cudaDevAttrCooperativeLaunch:
        return 1;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin:
        return SHARED_PER_BLOCK_OPTIN;
    case cudaDevAttrCanFlushRemoteWrites:
    case cudaDevAttrPageableMemoryAccessUsesHostPageTables:
    case cudaDevAttrDirectManagedMemAccessFromHost:
        return 0;
    case cudaDevAttrHostRegisterSupported:
        return 1;
    case cudaDevAttrMaxBlocksPerMultiprocessor:
        return BLOCKS_PER_SM;
    case cudaDevAttrMaxPersistingL2CacheSize:
        return PERSISTING_L2_MAX;
    case cudaDevAttrMaxAccessPolicyWindowSize:
        return 134213632;
    case cudaDevAttrReservedSharedMemoryPerBlock:
        return RESERVED_SHARED_PER_BLOCK;
    case cudaDevAttrSparseCudaArraySupported:
    case cudaDevAttrHostRegisterReadOnlySupported:
    case cudaDevAttrTimelineSemaphoreInteropSupported:
    case cudaDevAttrMemoryPoolsSupported:
        return 1;
    case cudaDevAttrGPUDirectRDMASupported:
    case cudaDevAttrGPUDirectRDMAFlushWritesOptions:
    case cudaDevAttrGPUDirectRDMAWritesOrdering:
        return 0;
    case cudaDevAttrMemoryPoolSupportedHandleTypes:
        return cudaMemHandleTypePosixFileDescriptor;
    case cudaDevAttrClusterLaunch:
    case cudaDevAttrDeferredMappingCudaArraySupported:
    case cudaDevAttrIpcEventSupport:
        return 1;
    case cudaDevAttrMemSyncDomainCount:
        return 4;
    case cudaDevAttrNumaConfig:
        return cudaDeviceNumaConfigNone;
    case cudaDevAttrNumaId:
    case cudaDevAttrHostNumaId:
        return -1;
    case cudaDevAttrMpsEnabled:
    case cudaDevAttrD3D12CigSupported:
    case cudaDevAttrVulkanCigSupported:
    case cudaDevAttrGpuPciDeviceId:
    case cudaDevAttrGpuPciSubsystemId:
    case cudaDevAttrHostNumaMemoryPoolsSupported:
    case cudaDevAttrHostNumaMultinodeIpcSupported:
    case cudaDevAttrHostMemoryPoolsSupported:
    case cudaDevAttrOnlyPartialHostNativeAtomicSupported:
        return 0;
    default:
        *known = 0;
        return 0;
    }
}

static int attr(int device, enum cudaDeviceAttr a)
{
    int known;
    return device_attribute(device, a, &known);
}

static void device_name(int device, char *out, size_t size)
{
    snprintf(out, size, "simppu PPU %d", rt.devices[device].physical);
}

static void device_uuid(int device, char bytes[16])
{
    memset(bytes, 0, 16);
    memcpy(bytes, "simppu-device-", 14);
    bytes[15] = (char)rt.devices[device].physical;
}

void emit_device(int device)
{
    CUpti_ActivityDevice5 r;
    memset(&r, 0, sizeof r);
    r.kind = CUPTI_ACTIVITY_KIND_DEVICE;
    r.globalMemoryBandwidth = (uint64_t)(rt.device_gbps * 1e6); /* KB/s */
    r.globalMemorySize = rt.devices[device].memory_total;
    r.constantMemorySize = (uint32_t)attr(device, cudaDevAttrTotalConstantMemory);
    r.l2CacheSize = (uint32_t)attr(device, cudaDevAttrL2CacheSize);
    r.numThreadsPerWarp = (uint32_t)attr(device, cudaDevAttrWarpSize);
    r.coreClockRate = (uint32_t)attr(device, cudaDevAttrClockRate);
    r.numMemcpyEngines = (uint32_t)attr(device, cudaDevAttrAsyncEngineCount);
    r.numMultiprocessors = (uint32_t)attr(device, cudaDevAttrMultiProcessorCount);
    r.maxIPC = 4;
    r.maxWarpsPerMultiprocessor = (uint32_t)(attr(device, cudaDevAttrMaxThreadsPerMultiProcessor) /
                                             attr(device, cudaDevAttrWarpSize));
    r.maxBlocksPerMultiprocessor = (uint32_t)attr(device, cudaDevAttrMaxBlocksPerMultiprocessor);
    r.maxSharedMemoryPerMultiprocessor =
        (uint32_t)attr(device, cudaDevAttrMaxSharedMemoryPerMultiprocessor);
    r.maxRegistersPerMultiprocessor =
        (uint32_t)attr(device, cudaDevAttrMaxRegistersPerMultiprocessor);
    r.maxRegistersPerBlock = (uint32_t)attr(device, cudaDevAttrMaxRegistersPerBlock);
    r.maxSharedMemoryPerBlock = (uint32_t)attr(device, cudaDevAttrMaxSharedMemoryPerBlock);
    r.maxThreadsPerBlock = (uint32_t)attr(device, cudaDevAttrMaxThreadsPerBlock);
    r.maxBlockDimX = (uint32_t)attr(device, cudaDevAttrMaxBlockDimX);
    r.maxBlockDimY = (uint32_t)attr(device, cudaDevAttrMaxBlockDimY);
    r.maxBlockDimZ = (uint32_t)attr(device, cudaDevAttrMaxBlockDimZ);
    r.maxGridDimX = (uint32_t)attr(device, cudaDevAttrMaxGridDimX);
    r.maxGridDimY = (uint32_t)attr(device, cudaDevAttrMaxGridDimY);
    r.maxGridDimZ = (uint32_t)attr(device, cudaDevAttrMaxGridDimZ);
    r.computeCapabilityMajor = (uint32_t)attr(device, cudaDevAttrComputeCapabilityMajor);
    r.computeCapabilityMinor = (uint32_t)attr(device, cudaDevAttrComputeCapabilityMinor);
    r.id = (uint32_t)device;
    r.eccEnabled = (uint32_t)attr(device, cudaDevAttrEccEnabled);
    device_uuid(device, r.uuid.bytes);
    static char names[MAX_DEVICES][32];
    device_name(device, names[device], sizeof names[device]);
    r.name = names[device];
    r.isCudaVisible = 1;
    r.isMigEnabled = 0;
    emit(&r, sizeof r);
}

EXPORT cudaError_t cudaGetDeviceCount(int *count)
{
    APIP(cudaGetDeviceCount, v3020, count);
    if (!count)
        RETURN(cudaErrorInvalidValue);
    *count = rt.device_count;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaGetDevice(int *device)
{
    APIP(cudaGetDevice, v3020, device);
    if (!device)
        RETURN(cudaErrorInvalidValue);
    *device = current_device;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaSetDevice(int device)
{
    APIP(cudaSetDevice, v3020, device);
    if (!valid_device(device))
        RETURN(cudaErrorInvalidDevice);
    current_device = device;
    context_of(device);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaInitDevice(int device, unsigned int device_flags, unsigned int flags)
{
    APIP(cudaInitDevice, v12000, device, device_flags, flags);
    if (!valid_device(device))
        RETURN(cudaErrorInvalidDevice);
    if (flags & ~(unsigned)cudaInitDeviceFlagsAreValid)
        RETURN(cudaErrorInvalidValue);
    if (flags & cudaInitDeviceFlagsAreValid)
        rt.devices[device].flags = device_flags;
    context_of(device);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaSetValidDevices(int *devices, int len)
{
    APIP(cudaSetValidDevices, v3020, devices, len);
    if (len < 0 || (len > 0 && !devices))
        RETURN(cudaErrorInvalidValue);
    for (int i = 0; i < len; i++)
        if (!valid_device(devices[i]))
            RETURN(cudaErrorInvalidDevice);
    RETURN(cudaSuccess); /* every device is as good as another here */
}

EXPORT cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attribute, int device)
{
    APIP(cudaDeviceGetAttribute, v5000, value, attribute, device);
    if (!value)
        RETURN(cudaErrorInvalidValue);
    if (!valid_device(device))
        RETURN(cudaErrorInvalidDevice);
    int known;
    int v = device_attribute(device, attribute, &known);
    if (!known)
        RETURN(cudaErrorInvalidValue);
    *value = v;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    APIP(cudaGetDeviceProperties, v12000, prop, device);
    if (!prop)
        RETURN(cudaErrorInvalidValue);
    if (!valid_device(device))
        RETURN(cudaErrorInvalidDevice);
    memset(prop, 0, sizeof *prop);
    int d = device;
    device_name(d, prop->name, sizeof prop->name);
    device_uuid(d, prop->uuid.bytes);
    prop->totalGlobalMem = rt.devices[d].memory_total;
    prop->sharedMemPerBlock = (size_t)attr(d, cudaDevAttrMaxSharedMemoryPerBlock);
    prop->regsPerBlock = attr(d, cudaDevAttrMaxRegistersPerBlock);
    prop->warpSize = attr(d, cudaDevAttrWarpSize);
    prop->memPitch = (size_t)attr(d, cudaDevAttrMaxPitch);
    prop->maxThreadsPerBlock = attr(d, cudaDevAttrMaxThreadsPerBlock);
    prop->maxThreadsDim[0] = attr(d, cudaDevAttrMaxBlockDimX);
    prop->maxThreadsDim[1] = attr(d, cudaDevAttrMaxBlockDimY);
    prop->maxThreadsDim[2] = attr(d, cudaDevAttrMaxBlockDimZ);
    prop->maxGridSize[0] = attr(d, cudaDevAttrMaxGridDimX);
    prop->maxGridSize[1] = attr(d, cudaDevAttrMaxGridDimY);
    prop->maxGridSize[2] = attr(d, cudaDevAttrMaxGridDimZ);
    prop->totalConstMem = (size_t)attr(d, cudaDevAttrTotalConstantMemory);
    prop->major = attr(d, cudaDevAttrComputeCapabilityMajor);
    prop->minor = attr(d, cudaDevAttrComputeCapabilityMinor);
    prop->textureAlignment = (size_t)attr(d, cudaDevAttrTextureAlignment);
    prop->texturePitchAlignment = (size_t)attr(d, cudaDevAttrTexturePitchAlignment);
    prop->multiProcessorCount = attr(d, cudaDevAttrMultiProcessorCount);
    prop->integrated = attr(d, cudaDevAttrIntegrated);
    prop->canMapHostMemory = attr(d, cudaDevAttrCanMapHostMemory);
    prop->maxTexture1D = attr(d, cudaDevAttrMaxTexture1DWidth);
    prop->maxTexture1DMipmap = attr(d, cudaDevAttrMaxTexture1DMipmappedWidth);
    prop->maxTexture2D[0] = attr(d, cudaDevAttrMaxTexture2DWidth);
    prop->maxTexture2D[1] = attr(d, cudaDevAttrMaxTexture2DHeight);
    prop->maxTexture2DMipmap[0] = attr(d, cudaDevAttrMaxTexture2DMipmappedWidth);
    prop->maxTexture2DMipmap[1] = attr(d, cudaDevAttrMaxTexture2DMipmappedHeight);
    prop->maxTexture2DLinear[0] = attr(d, cudaDevAttrMaxTexture2DLinearWidth);
    prop->maxTexture2DLinear[1] = attr(d, cudaDevAttrMaxTexture2DLinearHeight);
    prop->maxTexture2DLinear[2] = attr(d, cudaDevAttrMaxTexture2DLinearPitch);
    prop->maxTexture2DGather[0] = attr(d, cudaDevAttrMaxTexture2DGatherWidth);
    prop->maxTexture2DGather[1] = attr(d, cudaDevAttrMaxTexture2DGatherHeight);
    prop->maxTexture3D[0] = attr(d, cudaDevAttrMaxTexture3DWidth);
    prop->maxTexture3D[1] = attr(d, cudaDevAttrMaxTexture3DHeight);
    prop->maxTexture3D[2] = attr(d, cudaDevAttrMaxTexture3DDepth);
    prop->maxTexture3DAlt[0] = attr(d, cudaDevAttrMaxTexture3DWidthAlt);
    prop->maxTexture3DAlt[1] = attr(d, cudaDevAttrMaxTexture3DHeightAlt);
    prop->maxTexture3DAlt[2] = attr(d, cudaDevAttrMaxTexture3DDepthAlt);
    prop->maxTextureCubemap = attr(d, cudaDevAttrMaxTextureCubemapWidth);
    prop->maxTexture1DLayered[0] = attr(d, cudaDevAttrMaxTexture1DLayeredWidth);
    prop->maxTexture1DLayered[1] = attr(d, cudaDevAttrMaxTexture1DLayeredLayers);
    prop->maxTexture2DLayered[0] = attr(d, cudaDevAttrMaxTexture2DLayeredWidth);
    prop->maxTexture2DLayered[1] = attr(d, cudaDevAttrMaxTexture2DLayeredHeight);
    prop->maxTexture2DLayered[2] = attr(d, cudaDevAttrMaxTexture2DLayeredLayers);
    prop->maxTextureCubemapLayered[0] = attr(d, cudaDevAttrMaxTextureCubemapLayeredWidth);
    prop->maxTextureCubemapLayered[1] = attr(d, cudaDevAttrMaxTextureCubemapLayeredLayers);
    prop->maxSurface1D = attr(d, cudaDevAttrMaxSurface1DWidth);
    prop->maxSurface2D[0] = attr(d, cudaDevAttrMaxSurface2DWidth);
    prop->maxSurface2D[1] = attr(d, cudaDevAttrMaxSurface2DHeight);
    prop->maxSurface3D[0] = attr(d, cudaDevAttrMaxSurface3DWidth);
    prop->maxSurface3D[1] = attr(d, cudaDevAttrMaxSurface3DHeight);
    prop->maxSurface3D[2] = attr(d, cudaDevAttrMaxSurface3DDepth);
    prop->maxSurface1DLayered[0] = attr(d, cudaDevAttrMaxSurface1DLayeredWidth);
    prop->maxSurface1DLayered[1] = attr(d, cudaDevAttrMaxSurface1DLayeredLayers);
    prop->maxSurface2DLayered[0] = attr(d, cudaDevAttrMaxSurface2DLayeredWidth);
    prop->maxSurface2DLayered[1] = attr(d, cudaDevAttrMaxSurface2DLayeredHeight);
    prop->maxSurface2DLayered[2] = attr(d, cudaDevAttrMaxSurface2DLayeredLayers);
    prop->maxSurfaceCubemap = attr(d, cudaDevAttrMaxSurfaceCubemapWidth);
    prop->maxSurfaceCubemapLayered[0] = attr(d, cudaDevAttrMaxSurfaceCubemapLayeredWidth);
    prop->maxSurfaceCubemapLayered[1] = attr(d, cudaDevAttrMaxSurfaceCubemapLayeredLayers);
    prop->surfaceAlignment = (size_t)attr(d, cudaDevAttrSurfaceAlignment);
    prop->concurrentKernels = attr(d, cudaDevAttrConcurrentKernels);
    prop->ECCEnabled = attr(d, cudaDevAttrEccEnabled);
    prop->pciBusID = attr(d, cudaDevAttrPciBusId);
    prop->pciDeviceID = attr(d, cudaDevAttrPciDeviceId);
    prop->pciDomainID = attr(d, cudaDevAttrPciDomainId);
    prop->tccDriver = attr(d, cudaDevAttrTccDriver);
    prop->asyncEngineCount = attr(d, cudaDevAttrAsyncEngineCount);
    prop->unifiedAddressing = attr(d, cudaDevAttrUnifiedAddressing);
    prop->memoryBusWidth = attr(d, cudaDevAttrGlobalMemoryBusWidth);
    prop->l2CacheSize = attr(d, cudaDevAttrL2CacheSize);
    prop->persistingL2CacheMaxSize = attr(d, cudaDevAttrMaxPersistingL2CacheSize);
    prop->maxThreadsPerMultiProcessor = attr(d, cudaDevAttrMaxThreadsPerMultiProcessor);
    prop->streamPrioritiesSupported = attr(d, cudaDevAttrStreamPrioritiesSupported);
    prop->globalL1CacheSupported = attr(d, cudaDevAttrGlobalL1CacheSupported);
    prop->localL1CacheSupported = attr(d, cudaDevAttrLocalL1CacheSupported);
    prop->sharedMemPerMultiprocessor = (size_t)attr(d, cudaDevAttrMaxSharedMemoryPerMultiprocessor);
    prop->regsPerMultiprocessor = attr(d, cudaDevAttrMaxRegistersPerMultiprocessor);
    prop->managedMemory = attr(d, cudaDevAttrManagedMemory);
    prop->isMultiGpuBoard = attr(d, cudaDevAttrIsMultiGpuBoard);
    prop->multiGpuBoardGroupID = attr(d, cudaDevAttrMultiGpuBoardGroupID);
    prop->hostNativeAtomicSupported = attr(d, cudaDevAttrHostNativeAtomicSupported);
    prop->pageableMemoryAccess = attr(d, cudaDevAttrPageableMemoryAccess);
    prop->concurrentManagedAccess = attr(d, cudaDevAttrConcurrentManagedAccess);
    prop->computePreemptionSupported = attr(d, cudaDevAttrComputePreemptionSupported);
    prop->canUseHostPointerForRegisteredMem = attr(d, cudaDevAttrCanUseHostPointerForRegisteredMem);
    prop->cooperativeLaunch = attr(d, cudaDevAttrCooperativeLaunch);
    prop->sharedMemPerBlockOptin = (size_t)attr(d, cudaDevAttrMaxSharedMemoryPerBlockOptin);
    prop->pageableMemoryAccessUsesHostPageTables =
        attr(d, cudaDevAttrPageableMemoryAccessUsesHostPageTables);
    prop->directManagedMemAccessFromHost = attr(d, cudaDevAttrDirectManagedMemAccessFromHost);
    prop->maxBlocksPerMultiProcessor = attr(d, cudaDevAttrMaxBlocksPerMultiprocessor);
    prop->accessPolicyMaxWindowSize = attr(d, cudaDevAttrMaxAccessPolicyWindowSize);
    prop->reservedSharedMemPerBlock = (size_t)attr(d, cudaDevAttrReservedSharedMemoryPerBlock);
    prop->hostRegisterSupported = attr(d, cudaDevAttrHostRegisterSupported);
    prop->sparseCudaArraySupported = attr(d, cudaDevAttrSparseCudaArraySupported);
    prop->hostRegisterReadOnlySupported = attr(d, cudaDevAttrHostRegisterReadOnlySupported);
    prop->timelineSemaphoreInteropSupported = attr(d, cudaDevAttrTimelineSemaphoreInteropSupported);
    prop->memoryPoolsSupported = attr(d, cudaDevAttrMemoryPoolsSupported);
    prop->gpuDirectRDMASupported = attr(d, cudaDevAttrGPUDirectRDMASupported);
    prop->gpuDirectRDMAFlushWritesOptions =
        (unsigned)attr(d, cudaDevAttrGPUDirectRDMAFlushWritesOptions);
    prop->gpuDirectRDMAWritesOrdering = attr(d, cudaDevAttrGPUDirectRDMAWritesOrdering);
    prop->memoryPoolSupportedHandleTypes =
        (unsigned)attr(d, cudaDevAttrMemoryPoolSupportedHandleTypes);
    prop->deferredMappingCudaArraySupported = attr(d, cudaDevAttrDeferredMappingCudaArraySupported);
    prop->ipcEventSupported = attr(d, cudaDevAttrIpcEventSupport);
    prop->clusterLaunch = attr(d, cudaDevAttrClusterLaunch);
    prop->unifiedFunctionPointers = 1;
    prop->deviceNumaConfig = attr(d, cudaDevAttrNumaConfig);
    prop->deviceNumaId = attr(d, cudaDevAttrNumaId);
    prop->mpsEnabled = attr(d, cudaDevAttrMpsEnabled);
    prop->hostNumaId = attr(d, cudaDevAttrHostNumaId);
    prop->gpuPciDeviceID = (unsigned)attr(d, cudaDevAttrGpuPciDeviceId);
    prop->gpuPciSubsystemID = (unsigned)attr(d, cudaDevAttrGpuPciSubsystemId);
    prop->hostNumaMultinodeIpcSupported = attr(d, cudaDevAttrHostNumaMultinodeIpcSupported);
    RETURN(cudaSuccess);
}

/* The first device that matches what `prop` asks for in compute capability
 * (every simppu device is alike). */
EXPORT cudaError_t cudaChooseDevice(int *device, const struct cudaDeviceProp *prop)
{
    APIP(cudaChooseDevice, v3020, device, prop);
    if (!device || !prop)
        RETURN(cudaErrorInvalidValue);
    ensure_init();
    *device = 0;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaDeviceGetPCIBusId(char *bus_id, int len, int device)
{
    APIP(cudaDeviceGetPCIBusId, v4010, bus_id, len, device);
    if (!bus_id || len <= 0)
        RETURN(cudaErrorInvalidValue);
    if (!valid_device(device))
        RETURN(cudaErrorInvalidDevice);
    snprintf(bus_id, (size_t)len, "%08x:%02x:%02x.0", attr(device, cudaDevAttrPciDomainId),
             attr(device, cudaDevAttrPciBusId), attr(device, cudaDevAttrPciDeviceId));
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaDeviceGetByPCIBusId(int *device, const char *bus_id)
{
    APIP(cudaDeviceGetByPCIBusId, v4010, device, bus_id);
    if (!device || !bus_id)
        RETURN(cudaErrorInvalidValue);
    ensure_init();
    unsigned domain = 0, bus = 0, slot = 0;
    const char *p = bus_id;
    if (sscanf(p, "%x:%x:%x", &domain, &bus, &slot) != 3) {
        domain = 0;
        if (sscanf(p, "%x:%x", &bus, &slot) != 2)
            RETURN(cudaErrorInvalidValue);
    }
    for (int d = 0; d < rt.device_count; d++) {
        if ((int)bus == attr(d, cudaDevAttrPciBusId) && domain == 0 && slot == 0) {
            *device = d;
            RETURN(cudaSuccess);
        }
    }
    RETURN(cudaErrorInvalidDevice);
}

/* ---- flags, limits, cache configurations ------------------------------------------------------
 */

#define DEVICE_FLAGS \
    (cudaDeviceScheduleMask | cudaDeviceMapHost | cudaDeviceLmemResizeToMax | cudaDeviceSyncMemops)

EXPORT cudaError_t cudaSetDeviceFlags(unsigned int flags)
{
    APIP(cudaSetDeviceFlags, v3020, flags);
    ensure_init();
    unsigned schedule = flags & cudaDeviceScheduleMask;
    if ((flags & ~(unsigned)DEVICE_FLAGS) || schedule == 3 ||
        schedule > cudaDeviceScheduleBlockingSync)
        RETURN(cudaErrorInvalidValue);
    rt.devices[current_device].flags = flags;
    RETURN(cudaSuccess);
}

/* As CUDA does on devices with unified addressing: host memory is always mapped. */
EXPORT cudaError_t cudaGetDeviceFlags(unsigned int *flags)
{
    APIP(cudaGetDeviceFlags, v7000, flags);
    if (!flags)
        RETURN(cudaErrorInvalidValue);
    ensure_init();
    *flags = rt.devices[current_device].flags | cudaDeviceMapHost;
    RETURN(cudaSuccess);
}

static void limits_defaults(struct sim_device *d)
{
    if (d->limits_set)
        return;
    d->limits[cudaLimitStackSize] = 1024;
    d->limits[cudaLimitPrintfFifoSize] = 1 << 20;
    d->limits[cudaLimitMallocHeapSize] = 8 << 20;
    d->limits[cudaLimitDevRuntimeSyncDepth] = 2;
    d->limits[cudaLimitDevRuntimePendingLaunchCount] = 2048;
    d->limits[cudaLimitMaxL2FetchGranularity] = 64;
    d->limits[cudaLimitPersistingL2CacheSize] = 0;
    d->limits_set = 1;
}

EXPORT cudaError_t cudaDeviceSetLimit(enum cudaLimit limit, size_t value)
{
    APIP(cudaDeviceSetLimit, v3020, limit, value);
    ensure_init();
    struct sim_device *d = &rt.devices[current_device];
    if ((unsigned)limit > cudaLimitPersistingL2CacheSize)
        RETURN(cudaErrorUnsupportedLimit);
    if ((limit == cudaLimitMaxL2FetchGranularity && value > 128) ||
        (limit == cudaLimitPersistingL2CacheSize && value > PERSISTING_L2_MAX) ||
        (limit == cudaLimitStackSize && value == 0))
        RETURN(cudaErrorInvalidValue);
    pthread_mutex_lock(&rt.lock);
    limits_defaults(d);
    d->limits[limit] = value;
    pthread_mutex_unlock(&rt.lock);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaDeviceGetLimit(size_t *value, enum cudaLimit limit)
{
    APIP(cudaDeviceGetLimit, v3020, value, limit);
    if (!value)
        RETURN(cudaErrorInvalidValue);
    ensure_init();
    if ((unsigned)limit > cudaLimitPersistingL2CacheSize)
        RETURN(cudaErrorUnsupportedLimit);
    struct sim_device *d = &rt.devices[current_device];
    pthread_mutex_lock(&rt.lock);
    limits_defaults(d);
    *value = d->limits[limit];
    pthread_mutex_unlock(&rt.lock);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaCtxResetPersistingL2Cache(void)
{
    API(cudaCtxResetPersistingL2Cache, v11000, NULL);
    ensure_init();
    RETURN(cudaSuccess); /* no cache to reset */
}

static int valid_cache_config(enum cudaFuncCache config)
{
    return (unsigned)config <= cudaFuncCachePreferEqual;
}

EXPORT cudaError_t cudaDeviceSetCacheConfig(enum cudaFuncCache config)
{
    APIP(cudaDeviceSetCacheConfig, v3020, config);
    ensure_init();
    if (!valid_cache_config(config))
        RETURN(cudaErrorInvalidValue);
    rt.devices[current_device].cache_config = config;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaDeviceGetCacheConfig(enum cudaFuncCache *config)
{
    APIP(cudaDeviceGetCacheConfig, v3020, config);
    if (!config)
        RETURN(cudaErrorInvalidValue);
    ensure_init();
    *config = rt.devices[current_device].cache_config;
    RETURN(cudaSuccess);
}

/* Shared memory banks are 4 bytes wide on this device; the setters are accepted and ignored. */
EXPORT cudaError_t cudaDeviceSetSharedMemConfig(enum cudaSharedMemConfig config)
{
    APIP(cudaDeviceSetSharedMemConfig, v4020, config);
    ensure_init();
    RETURN((unsigned)config <= cudaSharedMemBankSizeEightByte ? cudaSuccess
                                                              : cudaErrorInvalidValue);
}

EXPORT cudaError_t cudaDeviceGetSharedMemConfig(enum cudaSharedMemConfig *config)
{
    APIP(cudaDeviceGetSharedMemConfig, v4020, config);
    if (!config)
        RETURN(cudaErrorInvalidValue);
    *config = cudaSharedMemBankSizeFourByte;
    RETURN(cudaSuccess);
}

/* Priorities from 0 (lowest) to -5 (highest), as on a compute capability 9.0 part. */
EXPORT cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest)
{
    APIP(cudaDeviceGetStreamPriorityRange, v5050, least, greatest);
    ensure_init();
    if (least)
        *least = SIMPPU_PRIORITY_LEAST;
    if (greatest)
        *greatest = SIMPPU_PRIORITY_GREATEST;
    RETURN(cudaSuccess);
}

/* ---- kernels: attributes and occupancy --------------------------------------------------------
 */

EXPORT cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attributes, const void *func)
{
    APIP(cudaFuncGetAttributes, v3020, attributes, func);
    if (!attributes)
        RETURN(cudaErrorInvalidValue);
    struct sim_kernel *k = kernel_of(func);
    if (!k)
        RETURN(cudaErrorInvalidDeviceFunction);
    memset(attributes, 0, sizeof *attributes);
    attributes->sharedSizeBytes = 0;
    attributes->constSizeBytes = 0;
    attributes->localSizeBytes = 0;
    attributes->maxThreadsPerBlock = 1024;
    attributes->numRegs = KERNEL_REGISTERS;
    attributes->ptxVersion = 90;
    attributes->binaryVersion = 90;
    attributes->cacheModeCA = 0;
    attributes->maxDynamicSharedSizeBytes = k->max_dynamic_shared;
    attributes->preferredShmemCarveout = k->carveout;
    attributes->requiredClusterWidth = k->cluster[0];
    attributes->requiredClusterHeight = k->cluster[1];
    attributes->requiredClusterDepth = k->cluster[2];
    attributes->clusterSchedulingPolicyPreference = k->cluster_policy;
    attributes->nonPortableClusterSizeAllowed = k->non_portable_cluster;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attribute,
                                        int value)
{
    APIP(cudaFuncSetAttribute, v9000, func, attribute, value);
    struct sim_kernel *k = kernel_of(func);
    if (!k)
        RETURN(cudaErrorInvalidDeviceFunction);
    switch (attribute) {
    case cudaFuncAttributeMaxDynamicSharedMemorySize:
        if (value < 0 || value > SHARED_PER_BLOCK_OPTIN)
            RETURN(cudaErrorInvalidValue);
        k->max_dynamic_shared = value;
        break;
    case cudaFuncAttributePreferredSharedMemoryCarveout:
        if (value < -1 || value > 100)
            RETURN(cudaErrorInvalidValue);
        k->carveout = value;
        break;
    case cudaFuncAttributeClusterDimMustBeSet:
        RETURN(cudaErrorInvalidValue); /* read-only */
    case cudaFuncAttributeRequiredClusterWidth:
    case cudaFuncAttributeRequiredClusterHeight:
    case cudaFuncAttributeRequiredClusterDepth:
        if (value < 0 || value > 16)
            RETURN(cudaErrorInvalidValue);
        k->cluster[attribute - cudaFuncAttributeRequiredClusterWidth] = value;
        break;
    case cudaFuncAttributeNonPortableClusterSizeAllowed:
        k->non_portable_cluster = value != 0;
        break;
    case cudaFuncAttributeClusterSchedulingPolicyPreference:
        k->cluster_policy = value;
        break;
    default:
        RETURN(cudaErrorInvalidValue);
    }
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaFuncSetCacheConfig(const void *func, enum cudaFuncCache config)
{
    APIP(cudaFuncSetCacheConfig, v3020, func, config);
    struct sim_kernel *k = kernel_of(func);
    if (!k)
        RETURN(cudaErrorInvalidDeviceFunction);
    if (!valid_cache_config(config))
        RETURN(cudaErrorInvalidValue);
    k->cache_config = config;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaFuncSetSharedMemConfig(const void *func, enum cudaSharedMemConfig config)
{
    APIP(cudaFuncSetSharedMemConfig, v4020, func, config);
    if (!kernel_of(func))
        RETURN(cudaErrorInvalidDeviceFunction);
    RETURN((unsigned)config <= cudaSharedMemBankSizeEightByte ? cudaSuccess
                                                              : cudaErrorInvalidValue);
}

EXPORT cudaError_t cudaFuncGetName(const char **name, const void *func)
{
    APIP(cudaFuncGetName, v12030, name, func);
    if (!name)
        RETURN(cudaErrorInvalidValue);
    struct sim_kernel *k = kernel_of(func);
    if (!k)
        RETURN(cudaErrorInvalidDeviceFunction);
    *name = k->name;
    RETURN(cudaSuccess);
}

/* Blocks of `block_size` threads with `dynamic_shared` bytes that fit on one
 * multiprocessor: limited by threads (in whole warps), registers, shared
 * memory and the block slots. */
int blocks_per_multiprocessor(const struct sim_kernel *k, int block_size, size_t dynamic_shared)
{
    if (block_size <= 0 || block_size > 1024 || dynamic_shared > (size_t)k->max_dynamic_shared)
        return 0;
    int warps = (block_size + 31) / 32;
    int blocks = BLOCKS_PER_SM;
    int by_threads = THREADS_PER_SM / (warps * 32);
    int by_registers = REGISTERS_PER_SM / (warps * 32 * KERNEL_REGISTERS);
    int by_shared = (int)(SHARED_PER_SM / (dynamic_shared + RESERVED_SHARED_PER_BLOCK));
    if (by_threads < blocks)
        blocks = by_threads;
    if (by_registers < blocks)
        blocks = by_registers;
    if (by_shared < blocks)
        blocks = by_shared;
    return blocks;
}

static cudaError_t max_active_blocks(int *blocks, const void *func, int block_size,
                                     size_t dynamic_shared, unsigned flags)
{
    if (!blocks || (flags & ~(unsigned)cudaOccupancyDisableCachingOverride))
        return cudaErrorInvalidValue;
    struct sim_kernel *k = kernel_of(func);
    if (!k)
        return cudaErrorInvalidDeviceFunction;
    *blocks = blocks_per_multiprocessor(k, block_size, dynamic_shared);
    return cudaSuccess;
}

EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, const void *func,
                                                                 int block_size,
                                                                 size_t dynamic_shared)
{
    APIP(cudaOccupancyMaxActiveBlocksPerMultiprocessor, v6050, blocks, func, block_size,
         dynamic_shared);
    RETURN(max_active_blocks(blocks, func, block_size, dynamic_shared, 0));
}

EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    int *blocks, const void *func, int block_size, size_t dynamic_shared, unsigned int flags)
{
    APIP(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, v7000, blocks, func, block_size,
         dynamic_shared, flags);
    RETURN(max_active_blocks(blocks, func, block_size, dynamic_shared, flags));
}

EXPORT cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t *dynamic_shared,
                                                             const void *func, int blocks,
                                                             int block_size)
{
    APIP(cudaOccupancyAvailableDynamicSMemPerBlock, v10200, dynamic_shared, func, blocks,
         block_size);
    if (!dynamic_shared || blocks <= 0 || block_size <= 0 || block_size > 1024)
        RETURN(cudaErrorInvalidValue);
    struct sim_kernel *k = kernel_of(func);
    if (!k)
        RETURN(cudaErrorInvalidDeviceFunction);
    if (blocks_per_multiprocessor(k, block_size, 0) < blocks) {
        *dynamic_shared = 0;
        RETURN(cudaSuccess);
    }
    size_t per_block = SHARED_PER_SM / (size_t)blocks;
    per_block = per_block > RESERVED_SHARED_PER_BLOCK ? per_block - RESERVED_SHARED_PER_BLOCK : 0;
    if (per_block > (size_t)k->max_dynamic_shared)
        per_block = (size_t)k->max_dynamic_shared;
    *dynamic_shared = per_block;
    RETURN(cudaSuccess);
}

/* Clusters: up to 8 blocks portably, 16 where the kernel allows it. */
EXPORT cudaError_t cudaOccupancyMaxPotentialClusterSize(int *size, const void *func,
                                                        const cudaLaunchConfig_t *config)
{
    APIP(cudaOccupancyMaxPotentialClusterSize, v11070, size, func, config);
    if (!size || !config)
        RETURN(cudaErrorInvalidValue);
    struct sim_kernel *k = kernel_of(func);
    if (!k)
        RETURN(cudaErrorInvalidDeviceFunction);
    *size = k->non_portable_cluster ? 16 : 8;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaOccupancyMaxActiveClusters(int *clusters, const void *func,
                                                  const cudaLaunchConfig_t *config)
{
    APIP(cudaOccupancyMaxActiveClusters, v11070, clusters, func, config);
    if (!clusters || !config)
        RETURN(cudaErrorInvalidValue);
    struct sim_kernel *k = kernel_of(func);
    if (!k)
        RETURN(cudaErrorInvalidDeviceFunction);
    unsigned cluster = 1;
    for (unsigned i = 0; i < config->numAttrs; i++)
        if (config->attrs[i].id == cudaLaunchAttributeClusterDimension)
            cluster = config->attrs[i].val.clusterDim.x * config->attrs[i].val.clusterDim.y *
                      config->attrs[i].val.clusterDim.z;
    int per_sm = blocks_per_multiprocessor(
        k, (int)(config->blockDim.x * config->blockDim.y * config->blockDim.z),
        config->dynamicSmemBytes);
    *clusters = cluster ? (int)((unsigned)(per_sm * MULTIPROCESSORS) / cluster) : 0;
    RETURN(cudaSuccess);
}

/* ---- peers
 * ---------------------------------------------------------------------------------------
 */

/* Every pair of simppu devices can reach each other; a device is not its own peer. */
EXPORT cudaError_t cudaDeviceCanAccessPeer(int *can_access, int device, int peer)
{
    APIP(cudaDeviceCanAccessPeer, v4000, can_access, device, peer);
    if (!can_access)
        RETURN(cudaErrorInvalidValue);
    if (!valid_device(device) || !valid_device(peer))
        RETURN(cudaErrorInvalidDevice);
    *can_access = device != peer;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int flags)
{
    APIP(cudaDeviceEnablePeerAccess, v4000, peer, flags);
    if (!valid_device(peer) || peer == current_device)
        RETURN(cudaErrorInvalidDevice);
    if (flags != 0)
        RETURN(cudaErrorInvalidValue);
    struct sim_device *d = &rt.devices[current_device];
    context_of(current_device);
    pthread_mutex_lock(&rt.lock);
    int already = (d->peers >> peer) & 1;
    d->peers |= 1u << peer;
    pthread_mutex_unlock(&rt.lock);
    RETURN(already ? cudaErrorPeerAccessAlreadyEnabled : cudaSuccess);
}

EXPORT cudaError_t cudaDeviceDisablePeerAccess(int peer)
{
    APIP(cudaDeviceDisablePeerAccess, v4000, peer);
    if (!valid_device(peer) || peer == current_device)
        RETURN(cudaErrorInvalidDevice);
    struct sim_device *d = &rt.devices[current_device];
    pthread_mutex_lock(&rt.lock);
    int enabled = (d->peers >> peer) & 1;
    d->peers &= ~(1u << peer);
    pthread_mutex_unlock(&rt.lock);
    RETURN(enabled ? cudaSuccess : cudaErrorPeerAccessNotEnabled);
}

EXPORT cudaError_t cudaDeviceGetP2PAttribute(int *value, enum cudaDeviceP2PAttr attribute, int src,
                                             int dst)
{
    APIP(cudaDeviceGetP2PAttribute, v8000, value, attribute, src, dst);
    if (!value)
        RETURN(cudaErrorInvalidValue);
    if (!valid_device(src) || !valid_device(dst) || src == dst)
        RETURN(cudaErrorInvalidDevice);
    switch (attribute) {
    case cudaDevP2PAttrPerformanceRank:
        *value = 0;
        break;
    case cudaDevP2PAttrAccessSupported:
    case cudaDevP2PAttrNativeAtomicSupported:
    case cudaDevP2PAttrCudaArrayAccessSupported:
        *value = 1;
        break;
    default:
        RETURN(cudaErrorInvalidValue);
    }
    RETURN(cudaSuccess);
}

/* ---- versions, profiler control
 * ------------------------------------------------------------------
 */

EXPORT cudaError_t cudaDriverGetVersion(int *version)
{
    APIP(cudaDriverGetVersion, v3020, version);
    if (!version)
        RETURN(cudaErrorInvalidValue);
    *version = CUDART_VERSION;
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaRuntimeGetVersion(int *version)
{
    APIP(cudaRuntimeGetVersion, v3020, version);
    if (!version)
        RETURN(cudaErrorInvalidValue);
    *version = CUDART_VERSION;
    RETURN(cudaSuccess);
}

/* API calls a profiler sees (CUPTI callbacks and records); they change nothing here. */
EXPORT cudaError_t cudaProfilerStart(void)
{
    API(cudaProfilerStart, v4000, NULL);
    ensure_init();
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaProfilerStop(void)
{
    API(cudaProfilerStop, v4000, NULL);
    ensure_init();
    RETURN(cudaSuccess);
}

/* ---- errors -------------------------------------------------------------------------------------
 */

/* every cudaError_t name, generated from driver_types.h (CMakeLists.txt) */
struct simppu_error_name {
    int code;
    const char *name;
};
extern const struct simppu_error_name simppu_error_names[];
extern const unsigned simppu_error_names_count;

/* The texts CUDA's cudaGetErrorString gives; other known codes read as their name. */
static const struct {
    cudaError_t code;
    const char *text;
} error_texts[] = {
    {cudaSuccess, "no error"},
    {cudaErrorInvalidValue, "invalid argument"},
    {cudaErrorMemoryAllocation, "out of memory"},
    {cudaErrorInitializationError, "initialization error"},
    {cudaErrorCudartUnloading, "driver shutting down"},
    {cudaErrorProfilerDisabled, "profiler disabled while using external profiling tool"},
    {cudaErrorInvalidConfiguration, "invalid configuration argument"},
    {cudaErrorInvalidPitchValue, "invalid pitch argument"},
    {cudaErrorInvalidSymbol, "invalid device symbol"},
    {cudaErrorInvalidHostPointer, "invalid host pointer"},
    {cudaErrorInvalidDevicePointer, "invalid device pointer"},
    {cudaErrorInvalidTexture, "invalid texture reference"},
    {cudaErrorInvalidChannelDescriptor, "invalid channel descriptor"},
    {cudaErrorInvalidMemcpyDirection, "invalid copy direction for memcpy"},
    {cudaErrorInsufficientDriver, "CUDA driver version is insufficient for CUDA runtime version"},
    {cudaErrorMissingConfiguration, "__global__ function call is not configured"},
    {cudaErrorInvalidDeviceFunction, "invalid device function"},
    {cudaErrorNoDevice, "no CUDA-capable device is detected"},
    {cudaErrorInvalidDevice, "invalid device ordinal"},
    {cudaErrorStartupFailure, "device init failed"},
    {cudaErrorInvalidKernelImage, "device kernel image is invalid"},
    {cudaErrorDeviceUninitialized, "invalid device context"},
    {cudaErrorNoKernelImageForDevice, "no kernel image is available for execution on the device"},
    {cudaErrorUnsupportedLimit, "limit is not supported on this architecture"},
    {cudaErrorPeerAccessUnsupported, "peer access is not supported between these two devices"},
    {cudaErrorInvalidResourceHandle, "invalid resource handle"},
    {cudaErrorIllegalState, "the resource is not in a valid state"},
    {cudaErrorSymbolNotFound, "named symbol not found"},
    {cudaErrorNotReady, "device not ready"},
    {cudaErrorIllegalAddress, "an illegal memory access was encountered"},
    {cudaErrorLaunchOutOfResources, "too many resources requested for launch"},
    {cudaErrorLaunchTimeout, "the launch timed out and was terminated"},
    {cudaErrorPeerAccessAlreadyEnabled, "peer access is already enabled"},
    {cudaErrorPeerAccessNotEnabled, "peer access has not been enabled"},
    {cudaErrorSetOnActiveProcess, "cannot set while device is active in this process"},
    {cudaErrorContextIsDestroyed, "context is destroyed"},
    {cudaErrorAssert, "device-side assert triggered"},
    {cudaErrorHostMemoryAlreadyRegistered,
     "part or all of the requested memory range is already mapped"},
    {cudaErrorHostMemoryNotRegistered, "pointer does not correspond to a registered memory region"},
    {cudaErrorLaunchFailure, "unspecified launch failure"},
    {cudaErrorCooperativeLaunchTooLarge, "too many blocks in cooperative launch"},
    {cudaErrorNotPermitted, "operation not permitted"},
    {cudaErrorNotSupported, "operation not supported"},
    {cudaErrorStreamCaptureUnsupported, "operation not permitted when stream is capturing"},
    {cudaErrorStreamCaptureInvalidated, "operation failed due to a previous error during capture"},
    {cudaErrorStreamCaptureMerge,
     "operation would result in a merge of separate capture sequences"},
    {cudaErrorStreamCaptureUnmatched, "capture was not ended in the same stream as it began"},
    {cudaErrorStreamCaptureUnjoined, "capturing stream has unjoined work"},
    {cudaErrorStreamCaptureIsolation, "dependency created on uncaptured work in another stream"},
    {cudaErrorStreamCaptureImplicit,
     "operation would make the legacy stream depend on a capturing blocking stream"},
    {cudaErrorCapturedEvent, "operation not permitted on an event last recorded in a capturing "
                             "stream"},
    {cudaErrorStreamCaptureWrongThread,
     "attempt to terminate a thread-local capture sequence from another thread"},
    {cudaErrorTimeout, "wait operation timed out"},
    {cudaErrorGraphExecUpdateFailure, "the graph update was not performed because it included "
                                      "changes which violated constraints specific to "
                                      "instantiated graph update"},
    {cudaErrorInvalidClusterSize, "invalid cluster size"},
    {cudaErrorUnknown, "unknown error"},
};

EXPORT const char *cudaGetErrorString(cudaError_t error)
{
    for (size_t i = 0; i < sizeof error_texts / sizeof *error_texts; i++)
        if (error_texts[i].code == error)
            return error_texts[i].text;
    for (unsigned i = 0; i < simppu_error_names_count; i++)
        if (simppu_error_names[i].code == (int)error)
            return simppu_error_names[i].name;
    return "unrecognized error code";
}

EXPORT const char *cudaGetErrorName(cudaError_t error)
{
    for (unsigned i = 0; i < simppu_error_names_count; i++)
        if (simppu_error_names[i].code == (int)error)
            return simppu_error_names[i].name;
    return "unrecognized error code";
}

EXPORT cudaError_t cudaGetLastError(void)
{
    API(cudaGetLastError, v3020, NULL);
    cudaError_t e = last_error;
    last_error = cudaSuccess;
    return api_finish(&call_, e, 0); /* it reports the error, it does not set it */
}

EXPORT cudaError_t cudaPeekAtLastError(void)
{
    API(cudaPeekAtLastError, v3020, NULL);
    return api_finish(&call_, last_error, 0);
}
