// hyperq [STREAMS]: two dependent kernels on each of many streams; with
// independent work queues the streams' kernels run side by side.
#include "samples_common.h"

__global__ void kernel_A(long long *out, long long cycles)
{
    if (threadIdx.x == 0)
        out[0] = cycles;
}

__global__ void kernel_B(long long *out, long long cycles)
{
    if (threadIdx.x == 0)
        out[0] += cycles;
}

int main(int argc, char **argv)
{
    int streams = argc > 1 ? atoi(argv[1]) : 8;
    long long *d = NULL;
    CHECK(cudaMalloc(&d, streams * sizeof(long long)));
    cudaStream_t *s = (cudaStream_t *)malloc(streams * sizeof *s);
    for (int i = 0; i < streams; i++)
        CHECK(cudaStreamCreate(&s[i]));
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    CHECK(cudaEventRecord(start, 0));
    for (int i = 0; i < streams; i++) {
        kernel_A<<<1, 1, 0, s[i]>>>(&d[i], 1000);
        kernel_B<<<1, 1, 0, s[i]>>>(&d[i], 1000);
    }
    CHECK(cudaEventRecord(stop, 0));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    printf("%d streams: %.3f ms\n", streams, ms);
    for (int i = 0; i < streams; i++)
        CHECK(cudaStreamDestroy(s[i]));
    CHECK(cudaFree(d));
    printf("done\n");
    return 0;
}
