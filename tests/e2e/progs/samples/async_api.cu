// async_api: copies and a kernel issued asynchronously between
// cudaProfilerStart and cudaProfilerStop while the host counts how often it
// finds the stop event not yet reached.
#include <cuda_profiler_api.h>

#include "samples_common.h"

__global__ void increment(int *data, int by, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        data[i] += by;
}

int main(void)
{
    const int n = 1 << 20;
    int *host = NULL, *device = NULL;
    CHECK(cudaMallocHost(&host, n * sizeof(int)));
    CHECK(cudaMalloc(&device, n * sizeof(int)));
    CHECK(cudaMemset(device, 0, n * sizeof(int)));
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));

    CHECK(cudaProfilerStart());
    CHECK(cudaEventRecord(start, 0));
    CHECK(cudaMemcpyAsync(device, host, n * sizeof(int), cudaMemcpyHostToDevice, 0));
    increment<<<n / 512, 512, 0, 0>>>(device, 26, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpyAsync(host, device, n * sizeof(int), cudaMemcpyDeviceToHost, 0));
    CHECK(cudaEventRecord(stop, 0));
    unsigned long long polls = 0;
    while (cudaEventQuery(stop) == cudaErrorNotReady)
        polls++;
    CHECK(cudaProfilerStop());

    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    printf("device time %.3f ms; the host polled %llu times meanwhile\n", ms, polls);
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    CHECK(cudaFreeHost(host));
    CHECK(cudaFree(device));
    printf("done\n");
    return 0;
}
