// p2p: peer access between two devices, with the errors CUDA gives for
// enabling it twice, for a device itself and for disabling it twice; peer
// copies both ways and a kernel on each device reading the other's memory.
#include "samples_common.h"

__global__ void add_one(float *dst, const float *src, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        dst[i] = src[i] + 1.0f;
}

int main(void)
{
    int count = 0;
    CHECK(cudaGetDeviceCount(&count));
    if (count < 2) {
        printf("two devices needed, %d found\n", count);
        return 2;
    }
    int can01 = 0, can10 = 0, can00 = 1;
    CHECK(cudaDeviceCanAccessPeer(&can01, 0, 1));
    CHECK(cudaDeviceCanAccessPeer(&can10, 1, 0));
    CHECK(cudaDeviceCanAccessPeer(&can00, 0, 0));
    printf("peer access 0->1 %d, 1->0 %d, 0->0 %d\n", can01, can10, can00);
    int rank = -1, supported = 0;
    CHECK(cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrPerformanceRank, 0, 1));
    CHECK(cudaDeviceGetP2PAttribute(&supported, cudaDevP2PAttrAccessSupported, 0, 1));
    printf("p2p performance rank %d, access supported %d\n", rank, supported);

    const int n = 1 << 18;
    size_t bytes = n * sizeof(float);
    float *a = NULL, *b = NULL, *host = NULL;
    CHECK(cudaSetDevice(0));
    CHECK(cudaDeviceEnablePeerAccess(1, 0));
    EXPECT_ERROR(cudaDeviceEnablePeerAccess(1, 0), cudaErrorPeerAccessAlreadyEnabled);
    EXPECT_ERROR(cudaDeviceEnablePeerAccess(0, 0), cudaErrorInvalidDevice);
    CHECK(cudaMalloc(&a, bytes));
    CHECK(cudaSetDevice(1));
    CHECK(cudaDeviceEnablePeerAccess(0, 0));
    CHECK(cudaMalloc(&b, bytes));
    CHECK(cudaMallocHost(&host, bytes));
    for (int i = 0; i < n; i++)
        host[i] = (float)i;

    CHECK(cudaSetDevice(0));
    CHECK(cudaMemcpy(a, host, bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpyPeer(b, 1, a, 0, bytes));          // 0 -> 1
    CHECK(cudaMemcpy(a, b, bytes, cudaMemcpyDefault)); // 1 -> 0, unified addressing
    add_one<<<n / 256, 256>>>(a, b, n);                // device 0 reads device 1
    CHECK(cudaGetLastError());
    CHECK(cudaSetDevice(1));
    add_one<<<n / 256, 256>>>(b, a, n); // device 1 reads device 0
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(host, b, bytes, cudaMemcpyDeviceToHost));

    CHECK(cudaDeviceDisablePeerAccess(0));
    EXPECT_ERROR(cudaDeviceDisablePeerAccess(0), cudaErrorPeerAccessNotEnabled);
    CHECK(cudaSetDevice(0));
    CHECK(cudaDeviceDisablePeerAccess(1));
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFreeHost(host));
    printf("done\n");
    return 0;
}
