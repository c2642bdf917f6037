// stream_priorities: streams at the lowest and highest priority of the
// device's range (and one asked beyond it, which CUDA clamps), a kernel on
// each, the priorities read back.
#include "samples_common.h"

__global__ void copy_kernel(int *dst, const int *src, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        dst[i] = src[i];
}

int main(void)
{
    int least = 0, greatest = 0;
    CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    printf("priority range: least %d greatest %d\n", least, greatest);
    cudaStream_t low, high, beyond;
    CHECK(cudaStreamCreateWithPriority(&low, cudaStreamNonBlocking, least));
    CHECK(cudaStreamCreateWithPriority(&high, cudaStreamNonBlocking, greatest));
    CHECK(cudaStreamCreateWithPriority(&beyond, cudaStreamNonBlocking, greatest - 10));
    int p_low = 1, p_high = 1, p_beyond = 1;
    CHECK(cudaStreamGetPriority(low, &p_low));
    CHECK(cudaStreamGetPriority(high, &p_high));
    CHECK(cudaStreamGetPriority(beyond, &p_beyond));
    printf("stream priorities: low %d high %d beyond %d\n", p_low, p_high, p_beyond);
    cudaStreamAttrValue value;
    CHECK(cudaStreamGetAttribute(high, cudaStreamAttributePriority, &value));
    printf("priority attribute of the high stream: %d\n", value.priority);

    const int n = 1 << 16;
    int *src = NULL, *dst = NULL;
    CHECK(cudaMalloc(&src, 3 * n * sizeof(int)));
    CHECK(cudaMalloc(&dst, 3 * n * sizeof(int)));
    copy_kernel<<<n / 256, 256, 0, low>>>(dst, src, n);
    copy_kernel<<<n / 256, 256, 0, high>>>(dst + n, src + n, n);
    copy_kernel<<<n / 256, 256, 0, beyond>>>(dst + 2 * n, src + 2 * n, n);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaStreamDestroy(low));
    CHECK(cudaStreamDestroy(high));
    CHECK(cudaStreamDestroy(beyond));
    CHECK(cudaFree(src));
    CHECK(cudaFree(dst));
    printf("done\n");
    return 0;
}
