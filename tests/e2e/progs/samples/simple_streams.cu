// simple_streams [STREAMS] [REPS]: a pinned (cudaHostRegister'ed) buffer cut
// into one chunk per stream; each stream copies its chunk in, scales it and
// copies it back, REPS times; events on the legacy stream time the whole.
#include <string.h>

#include "samples_common.h"

__global__ void scale_chunk(float *data, float factor, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        data[i] *= factor;
}

int main(int argc, char **argv)
{
    int streams = argc > 1 ? atoi(argv[1]) : 4;
    int reps = argc > 2 ? atoi(argv[2]) : 3;
    const int chunk = 1 << 18; // floats per stream
    size_t bytes = (size_t)chunk * streams * sizeof(float);
    CHECK(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync));
    unsigned flags = 0;
    CHECK(cudaGetDeviceFlags(&flags));
    printf("device flags 0x%x\n", flags);

    float *host = (float *)aligned_alloc(4096, bytes);
    for (int i = 0; i < chunk * streams; i++)
        host[i] = 1.0f;
    CHECK(cudaHostRegister(host, bytes, cudaHostRegisterMapped));
    float *mapped = NULL;
    CHECK(cudaHostGetDevicePointer((void **)&mapped, host, 0));
    printf("mapped pointer %s host pointer\n", mapped == host ? "is the" : "differs from the");
    float *device = NULL;
    CHECK(cudaMalloc(&device, bytes));

    cudaStream_t *s = (cudaStream_t *)malloc(streams * sizeof *s);
    for (int i = 0; i < streams; i++)
        CHECK(cudaStreamCreate(&s[i]));
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));

    CHECK(cudaEventRecord(start, 0));
    for (int r = 0; r < reps; r++) {
        for (int i = 0; i < streams; i++) {
            float *h = host + (size_t)i * chunk, *d = device + (size_t)i * chunk;
            CHECK(cudaMemcpyAsync(d, h, chunk * sizeof(float), cudaMemcpyHostToDevice, s[i]));
            scale_chunk<<<(chunk + 255) / 256, 256, 0, s[i]>>>(d, 2.0f, chunk);
            CHECK(cudaGetLastError());
            CHECK(cudaMemcpyAsync(h, d, chunk * sizeof(float), cudaMemcpyDeviceToHost, s[i]));
        }
    }
    CHECK(cudaEventRecord(stop, 0));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    printf("%d streams x %d reps: %.3f ms\n", streams, reps, ms);

    for (int i = 0; i < streams; i++)
        CHECK(cudaStreamDestroy(s[i]));
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    CHECK(cudaHostUnregister(host));
    EXPECT_ERROR(cudaHostUnregister(host), cudaErrorHostMemoryNotRegistered);
    CHECK(cudaFree(device));
    free(host);
    free(s);
    printf("done\n");
    return 0;
}
