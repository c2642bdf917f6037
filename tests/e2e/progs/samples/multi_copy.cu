// multi_copy [STREAMS] [REPS]: copies in, kernels and copies out on several
// streams from write-combined and portable pinned memory, so that the copies
// of one stream overlap the kernels of another.
#include "samples_common.h"

__global__ void inc_kernel(int *out, const int *in, int n, int inner)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        for (int k = 0; k < inner; k++)
            out[i] = in[i] + 1;
}

int main(int argc, char **argv)
{
    int streams = argc > 1 ? atoi(argv[1]) : 4;
    int reps = argc > 2 ? atoi(argv[2]) : 2;
    const int n = 1 << 18;
    size_t bytes = n * sizeof(int);
    int **h_in = (int **)malloc(streams * sizeof *h_in);
    int **h_out = (int **)malloc(streams * sizeof *h_out);
    int **d_in = (int **)malloc(streams * sizeof *d_in);
    int **d_out = (int **)malloc(streams * sizeof *d_out);
    cudaStream_t *s = (cudaStream_t *)malloc(streams * sizeof *s);
    for (int i = 0; i < streams; i++) {
        CHECK(cudaHostAlloc((void **)&h_in[i], bytes, cudaHostAllocWriteCombined));
        CHECK(cudaHostAlloc((void **)&h_out[i], bytes, cudaHostAllocPortable));
        unsigned flags = 0;
        CHECK(cudaHostGetFlags(&flags, h_in[i]));
        if (i == 0)
            printf("write-combined buffer flags 0x%x\n", flags);
        CHECK(cudaMalloc((void **)&d_in[i], bytes));
        CHECK(cudaMalloc((void **)&d_out[i], bytes));
        CHECK(cudaStreamCreate(&s[i]));
    }
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    CHECK(cudaEventRecord(start, 0));
    for (int r = 0; r < reps; r++) {
        for (int i = 0; i < streams; i++) {
            CHECK(cudaMemcpyAsync(d_in[i], h_in[i], bytes, cudaMemcpyHostToDevice, s[i]));
            inc_kernel<<<n / 256, 256, 0, s[i]>>>(d_out[i], d_in[i], n, 8);
            CHECK(cudaMemcpyAsync(h_out[i], d_out[i], bytes, cudaMemcpyDeviceToHost, s[i]));
        }
    }
    CHECK(cudaEventRecord(stop, 0));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    printf("%d streams, %d reps: %.3f ms, %.2f GB/s\n", streams, reps, ms,
           2.0 * bytes * streams * reps / (ms * 1e6));
    for (int i = 0; i < streams; i++) {
        CHECK(cudaFreeHost(h_in[i]));
        CHECK(cudaFreeHost(h_out[i]));
        CHECK(cudaFree(d_in[i]));
        CHECK(cudaFree(d_out[i]));
        CHECK(cudaStreamDestroy(s[i]));
    }
    printf("done\n");
    return 0;
}
