// NVTX's naming modules on a CUDA program (tests/e2e/test_hgtx_extensions.py):
// CUDA driver and runtime objects and OpenCL handles named with nvtxName*,
// resources named in a domain (nvtxDomainResourceCreate/Destroy), and a user
// lock (nvtxDomainSyncUser*) taken once, failed once, taken and released.
#include <cuda.h>
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCuda.h>
#include <nvtx3/nvToolsExtCudaRt.h>
#include <nvtx3/nvToolsExtOpenCL.h>
#include <nvtx3/nvToolsExtSync.h>
#include <pthread.h>
#include <unistd.h>

#include "samples_common.h"

__global__ void on_named_stream(int *p)
{
    p[threadIdx.x] += 1;
}

int main(void)
{
    int *d;
    CHECK(cudaMalloc(&d, 32 * sizeof(int)));
    cudaStream_t copy, compute;
    CHECK(cudaStreamCreate(&copy));
    CHECK(cudaStreamCreate(&compute));
    cudaEvent_t done;
    CHECK(cudaEventCreate(&done));

    nvtxNameCudaDeviceA(0, "main device");
    nvtxNameCudaStreamA(copy, "copy stream");
    nvtxNameCudaStreamW(compute, L"compute stream");
    nvtxNameCudaEventA(done, "done event");
    nvtxNameCuStreamA((CUstream)copy, "copy stream (driver name)");
    nvtxNameCuDeviceW(0, L"main device (driver name)");
    nvtxNameCuEventA((CUevent)done, "done event (driver name)");
    nvtxNameCuContextA((CUcontext)0, "no context");
    nvtxNameClDeviceA((cl_device_id)0x10, "cl device");
    nvtxNameClContextW((cl_context)0x20, L"cl context");
    nvtxNameClCommandQueueA((cl_command_queue)0x30, "cl queue");
    nvtxNameClMemObjectA((cl_mem)0x40, "cl buffer");
    nvtxNameClSamplerA((cl_sampler)0x50, "cl sampler");
    nvtxNameClProgramA((cl_program)0x60, "cl program");
    nvtxNameClEventA((cl_event)0x70, "cl event");

    for (int i = 0; i < 3; i++)
        on_named_stream<<<1, 32, 0, copy>>>(d);
    on_named_stream<<<1, 32, 0, compute>>>(d);
    CHECK(cudaEventRecord(done, compute));
    CHECK(cudaDeviceSynchronize());

    nvtxDomainHandle_t domain = nvtxDomainCreateA("resources");
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    nvtxResourceAttributes_t ra = {};
    ra.version = NVTX_VERSION;
    ra.size = NVTX_RESOURCE_ATTRIB_STRUCT_SIZE;
    ra.identifierType = NVTX_RESOURCE_TYPE_SYNC_PTHREAD_MUTEX;
    ra.identifier.pValue = &lock;
    ra.messageType = NVTX_MESSAGE_TYPE_ASCII;
    ra.message.ascii = "queue lock";
    nvtxResourceHandle_t mutex = nvtxDomainResourceCreate(domain, &ra);
    ra.identifierType = NVTX_RESOURCE_TYPE_GENERIC_POINTER;
    ra.identifier.pValue = d;
    ra.message.ascii = "device buffer";
    nvtxResourceHandle_t buffer = nvtxDomainResourceCreate(domain, &ra);
    nvtxDomainResourceDestroy(buffer);

    nvtxSyncUserAttributes_t sa = {};
    sa.version = NVTX_VERSION;
    sa.size = NVTX_SYNCUSER_ATTRIB_STRUCT_SIZE;
    sa.messageType = NVTX_MESSAGE_TYPE_ASCII;
    sa.message.ascii = "work lock";
    nvtxSyncUser_t user = nvtxDomainSyncUserCreate(domain, &sa);
    nvtxDomainSyncUserAcquireStart(user);
    usleep(2000);
    nvtxDomainSyncUserAcquireSuccess(user);
    usleep(3000);
    nvtxDomainSyncUserReleasing(user);
    nvtxDomainSyncUserAcquireStart(user);
    usleep(1000);
    nvtxDomainSyncUserAcquireFailed(user);
    nvtxDomainSyncUserDestroy(user);
    (void)mutex;

    CHECK(cudaStreamDestroy(copy));
    CHECK(cudaStreamDestroy(compute));
    CHECK(cudaFree(d));
    printf("done\n");
    return 0;
}
