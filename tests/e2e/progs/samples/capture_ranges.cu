// The phases `asys profile --capture-range` selects (tests/e2e/test_capture.py):
// kernels with a name per phase, so a report shows exactly which phases were
// recorded.  Profiler control (cudaProfilerStart/Stop) twice, an HGTX
// push/pop range "step" three times in the default domain and once in the
// domain "mydomain", a start/end range "phase", and an OS runtime call
// (usleep) after every group of launches.
#include <cuda_profiler_api.h>
#include <nvtx3/nvToolsExt.h>
#include <unistd.h>

#include "samples_common.h"

#define PHASE_KERNEL(name)                                                                         \
    __global__ void name(int *p)                                                                   \
    {                                                                                              \
        p[threadIdx.x] += 1;                                                                       \
    }
PHASE_KERNEL(before_start)
PHASE_KERNEL(inside_profiler)
PHASE_KERNEL(between)
PHASE_KERNEL(inside_step)
PHASE_KERNEL(after_step)
PHASE_KERNEL(inside_phase)
PHASE_KERNEL(inside_domain_step)
PHASE_KERNEL(inside_second_profiler)
PHASE_KERNEL(at_the_end)

// n launches of `kernel`, then one OS runtime call (long enough for any
// --osrt-threshold default).
static void run(void (*kernel)(int *), int n, int *d)
{
    for (int i = 0; i < n; i++)
        kernel<<<1, 32>>>(d);
    CHECK(cudaDeviceSynchronize());
    usleep(2000);
}

int main(void)
{
    int *d;
    CHECK(cudaMalloc(&d, 32 * sizeof(int)));
    run(before_start, 3, d);

    CHECK(cudaProfilerStart());
    run(inside_profiler, 5, d);
    nvtxRangePushA("inside-profiler");
    nvtxRangePop();
    CHECK(cudaProfilerStop());

    run(between, 7, d);
    for (int i = 0; i < 3; i++) {
        nvtxRangePushA("step");
        run(inside_step, 4, d);
        nvtxRangePop();
        run(after_step, 1, d);
    }
    nvtxRangeId_t phase = nvtxRangeStartA("phase");
    run(inside_phase, 2, d);
    nvtxRangeEnd(phase);

    nvtxDomainHandle_t domain = nvtxDomainCreateA("mydomain");
    nvtxEventAttributes_t a = {};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = nvtxDomainRegisterStringA(domain, "step");
    nvtxDomainRangePushEx(domain, &a);
    run(inside_domain_step, 6, d);
    nvtxDomainRangePop(domain);

    CHECK(cudaProfilerStart());
    run(inside_second_profiler, 2, d);
    CHECK(cudaProfilerStop());

    run(at_the_end, 1, d);
    CHECK(cudaFree(d));
    printf("done\n");
    return 0;
}
