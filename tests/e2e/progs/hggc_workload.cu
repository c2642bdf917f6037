// A CUDA program for the HGGC tests: built by nvcc with -cudart shared, it
// runs unchanged on simppu and on a real GPU.  Each mode exercises one part of
// the runtime; "all" runs every mode but "threads" and "launches".
//
//   hggc_workload MODE [N]
//   streams   kernels on four streams ordered by events and waits
//   graphs    a two-stream capture (kernels, copy, memset) launched N times
//   memcpy    every copy kind, pageable and pinned, sync and async; memsets
//   devices   kernels and a peer copy on two devices (needs two)
//   threads   N threads, each launching kernels on its own stream
//   errors    calls that fail: out of memory, bad launch configuration
//   launches  N empty launches on one stream (the benchmark's loop)
//   calls     N cudaGetDevice calls: API cost without device work
//   one-stream  kernels, a copy and a memset on the legacy default stream only
//   streams3  kernels and a copy on three created streams
//   ranges    nested HGTX ranges around launches; a graph captured in a range
//   names     overloaded and templated kernels
//   bulk      K C R: K kernels and C copies inside R HGTX ranges (benchmarks)
//   bulkdeps K W  K kernels on four streams with W cross-stream waits (benchmarks)
//   deps SHAPE  a dependency shape: fork-join, rerecord, same-stream, satisfied,
//             two-streams, legacy, per-thread, diamond, host-node, two-threads, path
//   reset     work, then cudaDeviceReset, then more work
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static const size_t kBytes = 1 << 20; // every copy moves 1 MiB

__global__ void produce(float *data, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        data[i] = (float)i;
}

__global__ void consume(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i] * 2.0f;
}

namespace ops
{
template <typename T> __global__ void scale(T *data, T factor, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        data[i] *= factor;
}
} // namespace ops

__global__ void empty_kernel() {}

// Overloads and template instances: base names merge the first, keep the second apart.
__global__ void fill(float *data, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        data[i] = 1.0f;
}

__global__ void fill(int *data, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        data[i] = 1;
}

static const int kN = (int)(kBytes / sizeof(float));
static const dim3 kGrid((kN + 255) / 256), kBlock(256);

// Four streams: s0 produces, s1 and s2 wait for it through an event and
// consume, s3 (a blocking stream) then scales after waiting for both.
static void run_streams(void)
{
    nvtxRangePushA("streams");
    cudaStream_t s[4];
    CHECK(cudaStreamCreateWithFlags(&s[0], cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&s[1], cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithPriority(&s[2], cudaStreamNonBlocking, -1));
    CHECK(cudaStreamCreate(&s[3]));
    float *a, *b, *c;
    CHECK(cudaMalloc(&a, kBytes));
    CHECK(cudaMalloc(&b, kBytes));
    CHECK(cudaMalloc(&c, kBytes));
    cudaEvent_t produced, done1, done2;
    CHECK(cudaEventCreate(&produced));
    CHECK(cudaEventCreateWithFlags(&done1, cudaEventDisableTiming));
    CHECK(cudaEventCreateWithFlags(&done2, cudaEventDisableTiming));
    for (int round = 0; round < 3; round++) {
        produce<<<kGrid, kBlock, 0, s[0]>>>(a, kN);
        CHECK(cudaEventRecord(produced, s[0]));
        CHECK(cudaStreamWaitEvent(s[1], produced, 0));
        CHECK(cudaStreamWaitEvent(s[2], produced, 0));
        consume<<<kGrid, kBlock, 0, s[1]>>>(a, b, kN);
        consume<<<kGrid, kBlock, 0, s[2]>>>(a, c, kN);
        CHECK(cudaEventRecord(done1, s[1]));
        CHECK(cudaEventRecord(done2, s[2]));
        CHECK(cudaStreamWaitEvent(s[3], done1, 0));
        CHECK(cudaStreamWaitEvent(s[3], done2, 0));
        ops::scale<float><<<kGrid, kBlock, 0, s[3]>>>(b, 0.5f, kN);
        cudaEventQuery(produced); // may say not ready: not an error
        cudaStreamQuery(s[3]);
    }
    CHECK(cudaEventSynchronize(done2));
    CHECK(cudaStreamSynchronize(s[3]));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, produced, produced));
    CHECK(cudaDeviceSynchronize());
    for (int i = 0; i < 4; i++)
        CHECK(cudaStreamDestroy(s[i]));
    CHECK(cudaEventDestroy(produced));
    CHECK(cudaEventDestroy(done1));
    CHECK(cudaEventDestroy(done2));
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(c));
    nvtxRangePop();
}

// Stream capture across two streams (fork and join through events): the
// graph has produce -> {consume, memset} -> copy.
static void run_graphs(int launches)
{
    nvtxRangePushA("graphs");
    cudaStream_t main_stream, side;
    CHECK(cudaStreamCreateWithFlags(&main_stream, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    float *a, *b, *host;
    CHECK(cudaMalloc(&a, kBytes));
    CHECK(cudaMalloc(&b, kBytes));
    CHECK(cudaMallocHost(&host, kBytes));
    cudaEvent_t fork, join;
    CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));

    cudaGraph_t graph;
    CHECK(cudaStreamBeginCapture(main_stream, cudaStreamCaptureModeGlobal));
    produce<<<kGrid, kBlock, 0, main_stream>>>(a, kN);
    CHECK(cudaEventRecord(fork, main_stream));
    CHECK(cudaStreamWaitEvent(side, fork, 0));
    consume<<<kGrid, kBlock, 0, side>>>(a, b, kN);
    CHECK(cudaMemsetAsync(a, 0, kBytes, main_stream));
    CHECK(cudaEventRecord(join, side));
    CHECK(cudaStreamWaitEvent(main_stream, join, 0));
    CHECK(cudaMemcpyAsync(host, b, kBytes, cudaMemcpyDeviceToHost, main_stream));
    CHECK(cudaStreamEndCapture(main_stream, &graph));

    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    for (int i = 0; i < launches; i++)
        CHECK(cudaGraphLaunch(exec, main_stream));
    CHECK(cudaStreamSynchronize(main_stream));
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));
    CHECK(cudaEventDestroy(fork));
    CHECK(cudaEventDestroy(join));
    CHECK(cudaStreamDestroy(main_stream));
    CHECK(cudaStreamDestroy(side));
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFreeHost(host));
    nvtxRangePop();
}

// HtoD, DtoH, DtoD, HtoH; pageable and pinned host memory; sync and async.
static void run_memcpy(void)
{
    nvtxRangePushA("memcpy");
    char *pageable = (char *)malloc(kBytes), *pageable2 = (char *)malloc(kBytes);
    char *pinned, *pinned2, *device, *device2;
    memset(pageable, 1, kBytes);
    CHECK(cudaMallocHost(&pinned, kBytes));
    CHECK(cudaHostAlloc(&pinned2, kBytes, cudaHostAllocDefault));
    CHECK(cudaMalloc(&device, kBytes));
    CHECK(cudaMalloc(&device2, kBytes));
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaMemcpy(device, pageable, kBytes, cudaMemcpyHostToDevice));  // HtoD pageable
    CHECK(cudaMemcpy(pageable2, device, kBytes, cudaMemcpyDeviceToHost)); // DtoH pageable
    if (memcmp(pageable, pageable2, kBytes) != 0) {                       // the bytes really moved
        fprintf(stderr, "memcpy: data differs\n");
        exit(1);
    }
    CHECK(cudaMemcpy(device, pinned, kBytes, cudaMemcpyHostToDevice));         // HtoD pinned
    CHECK(cudaMemcpy(pinned2, device, kBytes, cudaMemcpyDeviceToHost));        // DtoH pinned
    CHECK(cudaMemcpy(device2, device, kBytes, cudaMemcpyDeviceToDevice));      // DtoD
    CHECK(cudaMemcpy(pinned2, pinned, kBytes, cudaMemcpyHostToHost));          // HtoH pinned
    CHECK(cudaMemcpyAsync(device, pinned, kBytes, cudaMemcpyHostToDevice, s)); // async HtoD
    CHECK(cudaMemcpyAsync(pinned, device, kBytes, cudaMemcpyDeviceToHost, s)); // async DtoH
    CHECK(cudaMemcpyAsync(device2, device, kBytes, cudaMemcpyDefault, s));     // async DtoD
    CHECK(cudaMemset(device, 0, kBytes));
    CHECK(cudaMemsetAsync(device2, 7, kBytes, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(device));
    CHECK(cudaFree(device2));
    CHECK(cudaFreeHost(pinned));
    CHECK(cudaFreeHost(pinned2));
    free(pageable);
    free(pageable2);
    nvtxRangePop();
}

// Work on two devices and a peer copy between them.
static void run_devices(void)
{
    int count = 0;
    CHECK(cudaGetDeviceCount(&count));
    if (count < 2) {
        fprintf(stderr, "devices: needs two devices, found %d\n", count);
        exit(1);
    }
    nvtxRangePushA("devices");
    float *on[2];
    for (int d = 0; d < 2; d++) {
        CHECK(cudaSetDevice(d));
        CHECK(cudaMalloc(&on[d], kBytes));
        produce<<<kGrid, kBlock>>>(on[d], kN);
        CHECK(cudaDeviceSynchronize());
    }
    CHECK(cudaSetDevice(0));
    CHECK(cudaMemcpyPeer(on[1], 1, on[0], 0, kBytes));
    for (int d = 0; d < 2; d++) {
        CHECK(cudaSetDevice(d));
        CHECK(cudaFree(on[d]));
    }
    CHECK(cudaSetDevice(0));
    nvtxRangePop();
}

struct thread_work {
    int launches;
};

static void *launch_thread(void *arg)
{
    const struct thread_work *w = (const struct thread_work *)arg;
    cudaStream_t s;
    float *a;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK(cudaMalloc(&a, kBytes));
    for (int i = 0; i < w->launches; i++)
        produce<<<kGrid, kBlock, 0, s>>>(a, kN);
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaFree(a));
    CHECK(cudaStreamDestroy(s));
    return NULL;
}

static void run_threads(int threads)
{
    pthread_t t[64];
    struct thread_work w = {10};
    if (threads > 64)
        threads = 64;
    for (int i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, launch_thread, &w);
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
}

// Calls that fail, as programs' calls do: the trace shows their results.
static void run_errors(void)
{
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, (size_t)1 << 62);
    printf("errors: cudaMalloc(2^62) = %d (%s)\n", (int)e, cudaGetErrorName(e));
    empty_kernel<<<1, 4096>>>(); // more threads per block than allowed
    e = cudaGetLastError();
    printf("errors: launch with 4096 threads = %d (%s)\n", (int)e, cudaGetErrorName(e));
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

// Prints the mean host time of one launch call (the benchmark reads it).
static void run_launches(int n)
{
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    empty_kernel<<<1, 1, 0, s>>>(); // the first launch pays for setup
    CHECK(cudaStreamSynchronize(s));
    double start = now_ns();
    for (int i = 0; i < n; i++)
        empty_kernel<<<1, 1, 0, s>>>();
    double elapsed = now_ns() - start;
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaStreamDestroy(s));
    printf("launch_ns %.1f\n", elapsed / n);
}

// Prints the mean host time of one cudaMalloc + cudaFree pair of 64 KiB.
static void run_mallocs(int n)
{
    void *p = NULL;
    CHECK(cudaMalloc(&p, 64 << 10)); // the first call pays for setup
    CHECK(cudaFree(p));
    double start = now_ns();
    for (int i = 0; i < n; i++) {
        CHECK(cudaMalloc(&p, 64 << 10));
        CHECK(cudaFree(p));
    }
    printf("malloc_free_ns %.1f\n", (now_ns() - start) / n);
}

// ---- dependency shapes (asys-deps): kernels named by their role ------------------

__global__ void step_a() {}
__global__ void step_b() {}
__global__ void step_c() {}
__global__ void step_d() {}

static void streams_new(cudaStream_t *s, int n, unsigned flags)
{
    for (int i = 0; i < n; i++)
        CHECK(cudaStreamCreateWithFlags(&s[i], flags));
}

static void streams_free(cudaStream_t *s, int n)
{
    CHECK(cudaDeviceSynchronize());
    for (int i = 0; i < n; i++)
        CHECK(cudaStreamDestroy(s[i]));
}

static cudaEvent_t event_new(void)
{
    cudaEvent_t e;
    CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    return e;
}

// a on s0; b on s1 and c on s2 after a; d on s0 after b and c
static void deps_fork_join(void)
{
    cudaStream_t s[3];
    streams_new(s, 3, cudaStreamNonBlocking);
    cudaEvent_t fork = event_new(), join1 = event_new(), join2 = event_new();
    step_a<<<1, 1, 0, s[0]>>>();
    CHECK(cudaEventRecord(fork, s[0]));
    CHECK(cudaStreamWaitEvent(s[1], fork, 0));
    CHECK(cudaStreamWaitEvent(s[2], fork, 0));
    step_b<<<1, 1, 0, s[1]>>>();
    step_c<<<1, 1, 0, s[2]>>>();
    CHECK(cudaEventRecord(join1, s[1]));
    CHECK(cudaEventRecord(join2, s[2]));
    CHECK(cudaStreamWaitEvent(s[0], join1, 0));
    CHECK(cudaStreamWaitEvent(s[0], join2, 0));
    step_d<<<1, 1, 0, s[0]>>>();
    streams_free(s, 3);
}

// one event recorded twice: each wait links to the record it waited for
static void deps_rerecord(void)
{
    cudaStream_t s[3];
    streams_new(s, 3, cudaStreamNonBlocking);
    cudaEvent_t e = event_new();
    step_a<<<1, 1, 0, s[0]>>>();
    CHECK(cudaEventRecord(e, s[0]));
    CHECK(cudaStreamWaitEvent(s[1], e, 0));
    step_b<<<1, 1, 0, s[1]>>>();
    step_c<<<1, 1, 0, s[0]>>>();
    CHECK(cudaEventRecord(e, s[0]));
    CHECK(cudaStreamWaitEvent(s[2], e, 0));
    step_d<<<1, 1, 0, s[2]>>>();
    streams_free(s, 3);
}

// a wait on an event of the waiting stream itself
static void deps_same_stream(void)
{
    cudaStream_t s[1];
    streams_new(s, 1, cudaStreamNonBlocking);
    cudaEvent_t e = event_new();
    step_a<<<1, 1, 0, s[0]>>>();
    CHECK(cudaEventRecord(e, s[0]));
    CHECK(cudaStreamWaitEvent(s[0], e, 0));
    step_b<<<1, 1, 0, s[0]>>>();
    streams_free(s, 1);
}

// the awaited work ended before the waiting kernel was launched
static void deps_satisfied(void)
{
    cudaStream_t s[2];
    streams_new(s, 2, cudaStreamNonBlocking);
    cudaEvent_t e = event_new();
    step_a<<<1, 1, 0, s[0]>>>();
    CHECK(cudaEventRecord(e, s[0]));
    CHECK(cudaEventSynchronize(e));
    CHECK(cudaStreamWaitEvent(s[1], e, 0));
    step_b<<<1, 1, 0, s[1]>>>();
    streams_free(s, 2);
}

// d waits for two events of s0 (only the last counts) and one of s1
static void deps_two_streams(void)
{
    cudaStream_t s[3];
    streams_new(s, 3, cudaStreamNonBlocking);
    cudaEvent_t first = event_new(), second = event_new(), other = event_new();
    step_a<<<1, 1, 0, s[0]>>>();
    CHECK(cudaEventRecord(first, s[0]));
    step_b<<<1, 1, 0, s[0]>>>();
    CHECK(cudaEventRecord(second, s[0]));
    step_c<<<1, 1, 0, s[1]>>>();
    CHECK(cudaEventRecord(other, s[1]));
    CHECK(cudaStreamWaitEvent(s[2], first, 0));
    CHECK(cudaStreamWaitEvent(s[2], second, 0));
    CHECK(cudaStreamWaitEvent(s[2], other, 0));
    step_d<<<1, 1, 0, s[2]>>>();
    streams_free(s, 3);
}

// the legacy default stream waits for a blocking stream, and the other way round;
// a non-blocking stream is left alone
static void deps_legacy(void)
{
    cudaStream_t blocking, free_running;
    CHECK(cudaStreamCreate(&blocking));
    CHECK(cudaStreamCreateWithFlags(&free_running, cudaStreamNonBlocking));
    step_a<<<1, 1, 0, blocking>>>();
    step_c<<<1, 1, 0, free_running>>>();
    step_b<<<1, 1>>>(); // legacy stream
    step_d<<<1, 1, 0, blocking>>>();
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaStreamDestroy(blocking));
    CHECK(cudaStreamDestroy(free_running));
}

// the per-thread default stream is blocking: the legacy stream waits for it, a
// non-blocking stream does not
static void deps_per_thread(void)
{
    cudaStream_t free_running;
    CHECK(cudaStreamCreateWithFlags(&free_running, cudaStreamNonBlocking));
    step_a<<<1, 1, 0, cudaStreamPerThread>>>();
    step_c<<<1, 1, 0, free_running>>>();
    step_b<<<1, 1>>>(); // legacy stream
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaStreamDestroy(free_running));
}

// a diamond captured across two streams: a -> {b, c} -> d
static void deps_diamond(void)
{
    cudaStream_t s[2];
    streams_new(s, 2, cudaStreamNonBlocking);
    cudaEvent_t fork = event_new(), join = event_new();
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CHECK(cudaStreamBeginCapture(s[0], cudaStreamCaptureModeGlobal));
    step_a<<<1, 1, 0, s[0]>>>();
    CHECK(cudaEventRecord(fork, s[0]));
    CHECK(cudaStreamWaitEvent(s[1], fork, 0));
    step_b<<<1, 1, 0, s[0]>>>();
    step_c<<<1, 1, 0, s[1]>>>();
    CHECK(cudaEventRecord(join, s[1]));
    CHECK(cudaStreamWaitEvent(s[0], join, 0));
    step_d<<<1, 1, 0, s[0]>>>();
    CHECK(cudaStreamEndCapture(s[0], &graph));
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    empty_kernel<<<1, 1, 0, s[0]>>>();
    CHECK(cudaGraphLaunch(exec, s[0]));
    streams_free(s, 2);
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));
}

static void host_step(void *calls)
{
    ++*(int *)calls;
}

// a graph whose middle node is a host function (no device work): a -> host -> {b, c};
// b and c depend on a through it
static void deps_host_node(void)
{
    cudaStream_t s[2];
    streams_new(s, 2, cudaStreamNonBlocking);
    cudaEvent_t fork = event_new(), join = event_new();
    static int calls;
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CHECK(cudaStreamBeginCapture(s[0], cudaStreamCaptureModeGlobal));
    step_a<<<1, 1, 0, s[0]>>>();
    CHECK(cudaLaunchHostFunc(s[0], host_step, &calls));
    CHECK(cudaEventRecord(fork, s[0]));
    CHECK(cudaStreamWaitEvent(s[1], fork, 0));
    step_b<<<1, 1, 0, s[0]>>>();
    step_c<<<1, 1, 0, s[1]>>>();
    CHECK(cudaEventRecord(join, s[1]));
    CHECK(cudaStreamWaitEvent(s[0], join, 0));
    CHECK(cudaStreamEndCapture(s[0], &graph));
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    empty_kernel<<<1, 1, 0, s[0]>>>();
    CHECK(cudaGraphLaunch(exec, s[0]));
    CHECK(cudaLaunchHostFunc(s[0], host_step, &calls)); // outside a graph too
    streams_free(s, 2);
    if (calls != 2) {
        fprintf(stderr, "host-node: the host function ran %d times, not 2\n", calls);
        exit(1);
    }
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));
}

static cudaStream_t shared_stream;

static void *launch_on_shared(void *arg)
{
    (void)arg;
    for (int i = 0; i < 5; i++)
        step_b<<<1, 1, 0, shared_stream>>>();
    return NULL;
}

// two threads drive one stream
static void deps_two_threads(void)
{
    CHECK(cudaStreamCreateWithFlags(&shared_stream, cudaStreamNonBlocking));
    pthread_t t;
    pthread_create(&t, NULL, launch_on_shared, NULL);
    for (int i = 0; i < 5; i++)
        step_a<<<1, 1, 0, shared_stream>>>();
    pthread_join(t, NULL);
    CHECK(cudaStreamSynchronize(shared_stream));
    CHECK(cudaStreamDestroy(shared_stream));
}

// a known critical path: a (s0) -> b (s1) -> c (s0); d on s2 ends earlier
static void deps_path(void)
{
    cudaStream_t s[3];
    streams_new(s, 3, cudaStreamNonBlocking);
    cudaEvent_t e1 = event_new(), e2 = event_new();
    step_a<<<1, 1, 0, s[0]>>>();
    CHECK(cudaEventRecord(e1, s[0]));
    CHECK(cudaStreamWaitEvent(s[1], e1, 0));
    step_b<<<1, 1, 0, s[1]>>>();
    CHECK(cudaEventRecord(e2, s[1]));
    CHECK(cudaStreamWaitEvent(s[0], e2, 0));
    step_c<<<1, 1, 0, s[0]>>>();
    step_d<<<1, 1, 0, s[2]>>>();
    streams_free(s, 3);
}

static int run_deps(const char *shape)
{
    static const struct {
        const char *name;
        void (*run)(void);
    } shapes[] = {{"fork-join", deps_fork_join},
                  {"rerecord", deps_rerecord},
                  {"same-stream", deps_same_stream},
                  {"satisfied", deps_satisfied},
                  {"two-streams", deps_two_streams},
                  {"legacy", deps_legacy},
                  {"per-thread", deps_per_thread},
                  {"diamond", deps_diamond},
                  {"host-node", deps_host_node},
                  {"two-threads", deps_two_threads},
                  {"path", deps_path}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        if (!strcmp(shape, shapes[i].name)) {
            shapes[i].run();
            return 0;
        }
    fprintf(stderr, "deps: unknown shape '%s'\n", shape);
    return 2;
}

// Timeline shapes for the percentage tree (durations from SIMPPU_KERNEL_TIMES):
// "one-stream" uses only the legacy default stream (context and stream hidden),
// "streams" three created streams ([All Stream]).
static void run_one_stream(void)
{
    float *a, *pinned;
    CHECK(cudaMalloc(&a, kBytes));
    CHECK(cudaMallocHost(&pinned, kBytes));
    produce<<<kGrid, kBlock>>>(a, kN);
    produce<<<kGrid, kBlock>>>(a, kN);
    consume<<<kGrid, kBlock>>>(a, a, kN);
    CHECK(cudaMemcpy(a, pinned, kBytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(a, 0, kBytes));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaFree(a));
    CHECK(cudaFreeHost(pinned));
}

static void run_three_streams(void)
{
    cudaStream_t s[3];
    float *a, *pinned;
    CHECK(cudaMalloc(&a, kBytes));
    CHECK(cudaMallocHost(&pinned, kBytes));
    for (int i = 0; i < 3; i++)
        CHECK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
    produce<<<kGrid, kBlock, 0, s[0]>>>(a, kN);
    produce<<<kGrid, kBlock, 0, s[0]>>>(a, kN);
    consume<<<kGrid, kBlock, 0, s[1]>>>(a, a, kN);
    CHECK(cudaMemcpyAsync(a, pinned, kBytes, cudaMemcpyHostToDevice, s[2]));
    CHECK(cudaDeviceSynchronize());
    for (int i = 0; i < 3; i++)
        CHECK(cudaStreamDestroy(s[i]));
    CHECK(cudaFree(a));
    CHECK(cudaFreeHost(pinned));
}

// Nested HGTX ranges around launches, and a graph captured inside a range but
// launched outside every range.
static void run_ranges(void)
{
    cudaStream_t s[3];
    float *a, *b;
    CHECK(cudaMalloc(&a, kBytes));
    CHECK(cudaMalloc(&b, kBytes));
    for (int i = 0; i < 3; i++)
        CHECK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
    nvtxRangePushA("outer");
    produce<<<kGrid, kBlock, 0, s[0]>>>(a, kN);
    nvtxRangePushA("inner");
    consume<<<kGrid, kBlock, 0, s[0]>>>(a, b, kN);
    consume<<<kGrid, kBlock, 0, s[1]>>>(a, b, kN);
    nvtxRangePop();
    nvtxRangePop();
    nvtxRangePushA("capture");
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CHECK(cudaStreamBeginCapture(s[2], cudaStreamCaptureModeGlobal));
    ops::scale<float><<<kGrid, kBlock, 0, s[2]>>>(a, 2.0f, kN);
    CHECK(cudaMemsetAsync(b, 0, kBytes, s[2]));
    CHECK(cudaStreamEndCapture(s[2], &graph));
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    nvtxRangePop();
    CHECK(cudaDeviceSynchronize());
    for (int i = 0; i < 2; i++)
        CHECK(cudaGraphLaunch(exec, s[2]));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));
    for (int i = 0; i < 3; i++)
        CHECK(cudaStreamDestroy(s[i]));
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
}

static void run_names(void)
{
    float *f;
    int *i;
    CHECK(cudaMalloc(&f, kBytes));
    CHECK(cudaMalloc(&i, kBytes));
    ops::scale<float><<<kGrid, kBlock>>>(f, 2.0f, kN);
    ops::scale<int><<<kGrid, kBlock>>>(i, 2, kN);
    fill<<<kGrid, kBlock>>>(f, kN);
    fill<<<kGrid, kBlock>>>(i, kN);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaFree(f));
    CHECK(cudaFree(i));
}

// A large report for the analysis benchmarks: `ranges` HGTX ranges, each
// launching its share of `kernels` kernels over four streams and of `copies`
// small device-to-device copies.
static void run_bulk(int kernels, int copies, int ranges)
{
    cudaStream_t s[4];
    char *a;
    CHECK(cudaMalloc(&a, 2 * 4096));
    for (int i = 0; i < 4; i++)
        CHECK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
    int k = 0, c = 0;
    for (int r = 0; r < ranges; r++) {
        nvtxRangePushA(r % 2 ? "step" : "phase");
        int k_end = (int)((long long)kernels * (r + 1) / ranges);
        int c_end = (int)((long long)copies * (r + 1) / ranges);
        for (; k < k_end; k++)
            empty_kernel<<<1, 1, 0, s[k % 4]>>>();
        for (; c < c_end; c++)
            CHECK(cudaMemcpyAsync(a + 4096, a, 4096, cudaMemcpyDeviceToDevice, s[c % 4]));
        nvtxRangePop();
    }
    CHECK(cudaDeviceSynchronize());
    for (int i = 0; i < 4; i++)
        CHECK(cudaStreamDestroy(s[i]));
    CHECK(cudaFree(a));
}

// A large dependency graph for the benchmarks: `kernels` launches over four
// streams, `waits` of them preceded by a wait on the previous stream's event.
static void run_bulk_deps(int kernels, int waits)
{
    cudaStream_t s[4];
    cudaEvent_t e[4];
    for (int i = 0; i < 4; i++) {
        CHECK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
        e[i] = event_new();
    }
    int every = waits ? kernels / waits : kernels + 1;
    for (int k = 0; k < kernels; k++) {
        int i = k % 4;
        if (every && k % every == every - 1) {
            int from = (i + 3) % 4;
            CHECK(cudaEventRecord(e[from], s[from]));
            CHECK(cudaStreamWaitEvent(s[i], e[from], 0));
        }
        empty_kernel<<<1, 1, 0, s[i]>>>();
    }
    CHECK(cudaDeviceSynchronize());
    for (int i = 0; i < 4; i++)
        CHECK(cudaStreamDestroy(s[i]));
}

static double thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

// Prints the mean host time of a call that does no device work, and the
// calling thread's CPU time per call (what a busy machine's other work
// does not inflate).
static void run_calls(int n)
{
    int device;
    CHECK(cudaGetDevice(&device)); // the first call pays for setup
    double cpu = thread_cpu_ns();
    double start = now_ns();
    for (int i = 0; i < n; i++)
        cudaGetDevice(&device);
    double wall = now_ns() - start;
    printf("call_ns %.1f\ncall_cpu_ns %.1f\n", wall / n, (thread_cpu_ns() - cpu) / n);
}

static void run_reset(void)
{
    float *a;
    CHECK(cudaMalloc(&a, kBytes));
    produce<<<kGrid, kBlock>>>(a, kN);
    CHECK(cudaDeviceReset()); // destroys the context: its records are flushed there
    CHECK(cudaMalloc(&a, kBytes));
    produce<<<kGrid, kBlock>>>(a, kN);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaFree(a));
}

// Known allocation patterns for --hggc-memory-usage: three device call sites
// (site_small 10 x 64 KiB, site_large 4 x 4 MiB, site_async 3 x 1 MiB on a
// stream), pinned memory (pinned_site 2 x 256 KiB with cudaMallocHost, one
// 128 KiB cudaHostAlloc), one allocation that fails (more than the device
// has), half of site_small freed by another thread, site_large's last block
// and one pinned block left allocated at exit, and site_teardown's 2 MiB
// freed by an exit handler, after main returned (not collected).
static void *device_blocks[10];
static void *teardown_block;

static void free_at_teardown(void)
{
    cudaFree(teardown_block);
}

__attribute__((noinline)) static void site_teardown(void)
{
    CHECK(cudaMalloc(&teardown_block, 2 << 20));
    atexit(free_at_teardown);
}

__attribute__((noinline)) static void site_small(void)
{
    for (int i = 0; i < 10; i++)
        CHECK(cudaMalloc(&device_blocks[i], 64 << 10));
}

__attribute__((noinline)) static void *site_large(void)
{
    void *p = NULL;
    CHECK(cudaMalloc(&p, 4 << 20));
    return p;
}

__attribute__((noinline)) static void site_async(cudaStream_t s)
{
    for (int i = 0; i < 3; i++) {
        void *p = NULL;
        CHECK(cudaMallocAsync(&p, 1 << 20, s));
        CHECK(cudaFreeAsync(p, s));
    }
}

__attribute__((noinline)) static void *pinned_site(void)
{
    void *p = NULL;
    CHECK(cudaMallocHost(&p, 256 << 10));
    return p;
}

__attribute__((noinline)) static cudaError_t site_too_big(void)
{
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, (size_t)1 << 50); // a petabyte: no device has it
    cudaGetLastError();
    return e;
}

static void *free_half(void *arg)
{
    (void)arg;
    for (int i = 5; i < 10; i++)
        CHECK(cudaFree(device_blocks[i]));
    return NULL;
}

static void run_memory(void)
{
    site_small();
    pthread_t t;
    pthread_create(&t, NULL, free_half, NULL);
    pthread_join(t, NULL);
    for (int i = 0; i < 5; i++)
        CHECK(cudaFree(device_blocks[i]));
    for (int i = 0; i < 3; i++)
        CHECK(cudaFree(site_large()));
    site_large(); // left allocated
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    site_async(s);
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFreeHost(pinned_site()));
    pinned_site(); // left allocated
    void *h = NULL;
    CHECK(cudaHostAlloc(&h, 128 << 10, cudaHostAllocDefault));
    CHECK(cudaFreeHost(h));
    if (site_too_big() == cudaSuccess)
        exit(3);
    site_teardown();
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "all";
    int n = argc > 2 ? atoi(argv[2]) : 0;
    if (!strcmp(mode, "streams"))
        run_streams();
    else if (!strcmp(mode, "graphs"))
        run_graphs(n ? n : 3);
    else if (!strcmp(mode, "memcpy"))
        run_memcpy();
    else if (!strcmp(mode, "devices"))
        run_devices();
    else if (!strcmp(mode, "threads"))
        run_threads(n ? n : 4);
    else if (!strcmp(mode, "errors"))
        run_errors();
    else if (!strcmp(mode, "launches"))
        run_launches(n ? n : 1000);
    else if (!strcmp(mode, "one-stream"))
        run_one_stream();
    else if (!strcmp(mode, "streams3"))
        run_three_streams();
    else if (!strcmp(mode, "ranges"))
        run_ranges();
    else if (!strcmp(mode, "names"))
        run_names();
    else if (!strcmp(mode, "bulk"))
        run_bulk(n ? n : 1000000, argc > 3 ? atoi(argv[3]) : 200000,
                 argc > 4 ? atoi(argv[4]) : 100000);
    else if (!strcmp(mode, "bulkdeps"))
        run_bulk_deps(n ? n : 1000000, argc > 3 ? atoi(argv[3]) : 100000);
    else if (!strcmp(mode, "deps")) {
        if (argc < 3 || run_deps(argv[2]) != 0)
            return 2;
    } else if (!strcmp(mode, "calls"))
        run_calls(n ? n : 1000000);
    else if (!strcmp(mode, "reset"))
        run_reset();
    else if (!strcmp(mode, "memory"))
        run_memory();
    else if (!strcmp(mode, "mallocs"))
        run_mallocs(n ? n : 100000);
    else if (!strcmp(mode, "all")) {
        run_streams();
        run_graphs(n ? n : 3);
        run_memcpy();
        run_errors();
    } else {
        fprintf(stderr,
                "usage: %s streams|graphs N|memcpy|devices|threads N|errors|launches "
                "N|calls N|one-stream|streams3|ranges|names|bulk K C R|bulkdeps K W|deps "
                "SHAPE|reset|memory|mallocs N|all\n",
                argv[0]);
        return 2;
    }
    printf("%s: done\n", mode);
    return 0;
}
