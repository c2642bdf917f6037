// stream_callbacks [STREAMS]: on each stream a kernel, a stream callback
// (cudaStreamAddCallback), a second kernel and a host function
// (cudaLaunchHostFunc); each callback prints its stream, status and the
// CLOCK_MONOTONIC time it ran at.
#include "samples_common.h"

__global__ void work(float *data, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        data[i] = data[i] * 0.5f + 1.0f;
}

struct slot {
    int stream;
    int round;
};

static void CUDART_CB on_stream(cudaStream_t stream, cudaError_t status, void *data)
{
    const struct slot *s = (const struct slot *)data;
    (void)stream;
    printf("callback stream=%d round=%d status=%d t=%llu\n", s->stream, s->round, (int)status,
           monotonic_ns());
    fflush(stdout);
}

static void CUDART_CB host_function(void *data)
{
    const struct slot *s = (const struct slot *)data;
    printf("hostfn stream=%d round=%d t=%llu\n", s->stream, s->round, monotonic_ns());
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int streams = argc > 1 ? atoi(argv[1]) : 4;
    const int n = 1 << 16;
    float *device = NULL;
    CHECK(cudaMalloc(&device, (size_t)n * streams * sizeof(float)));
    cudaStream_t *s = (cudaStream_t *)malloc(streams * sizeof *s);
    struct slot *slots = (struct slot *)malloc(2 * streams * sizeof *slots);
    for (int i = 0; i < streams; i++) {
        CHECK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
        unsigned long long id = 0;
        CHECK(cudaStreamGetId(s[i], &id));
        printf("stream %d id %llu\n", i, id);
    }
    for (int i = 0; i < streams; i++) {
        float *d = device + (size_t)i * n;
        slots[2 * i] = (struct slot){i, 0};
        slots[2 * i + 1] = (struct slot){i, 1};
        work<<<n / 256, 256, 0, s[i]>>>(d, n);
        CHECK(cudaStreamAddCallback(s[i], on_stream, &slots[2 * i], 0));
        work<<<n / 256, 256, 0, s[i]>>>(d, n);
        CHECK(cudaLaunchHostFunc(s[i], host_function, &slots[2 * i + 1]));
    }
    EXPECT_ERROR(cudaStreamAddCallback(s[0], on_stream, &slots[0], 1), cudaErrorInvalidValue);
    CHECK(cudaDeviceSynchronize());
    for (int i = 0; i < streams; i++)
        CHECK(cudaStreamDestroy(s[i]));
    CHECK(cudaFree(device));
    free(s);
    free(slots);
    printf("done\n");
    return 0;
}
