// session_ticker PERIOD_MS STOP_FILE: every PERIOD_MS, HGTX range "tick N"
// around one kernel launch and a synchronize, until STOP_FILE exists (the
// session tests: each report's kernels are those of its ticks).
#include <time.h>
#include <nvtx3/nvToolsExt.h>
#include <unistd.h>

#include "samples_common.h"

__global__ void tick_kernel(float *data, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        data[i] += 1.0f;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    long period_ms = atol(argv[1]);
    const int n = 1024;
    float *device = NULL;
    CHECK(cudaMalloc(&device, n * sizeof(float)));
    printf("ready\n");
    fflush(stdout);
    struct timespec pause = {period_ms / 1000, (period_ms % 1000) * 1000000L};
    for (long i = 1; access(argv[2], F_OK) != 0; i++) {
        char name[64];
        snprintf(name, sizeof name, "tick %ld", i);
        nvtxRangePushA(name);
        tick_kernel<<<n / 256, 256>>>(device, n);
        CHECK(cudaDeviceSynchronize());
        nanosleep(&pause, NULL);
        nvtxRangePop();
    }
    CHECK(cudaFree(device));
    printf("done\n");
    return 0;
}
