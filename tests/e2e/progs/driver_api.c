/* A driver-API program in the style of NVIDIA's vectorAddDrv, built with the
 * toolkit's cuda.h against simppu's libcuda.so.1 (tests/e2e/test_driver_api.py
 * counts its calls): devices, a context, a module and its function, device
 * memory, copies, a 32-bit memset, a stream, events, launches on the stream
 * and on the default stream, an entry point found through cuGetProcAddress,
 * and failing calls.  The data it checks is what copies and memsets move
 * (simppu's kernels run no code).  Prints "done" at the end. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4096

static int failures;

#define CHECK(call) \
    do { \
        CUresult rc_ = (call); \
        if (rc_ != CUDA_SUCCESS) { \
            fprintf(stderr, "%s:%d: %s returned %d\n", __FILE__, __LINE__, #call, (int)rc_); \
            exit(1); \
        } \
    } while (0)

#define EXPECT(cond) \
    do { \
        if (!(cond)) { \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
            failures++; \
        } \
    } while (0)

/* a module image: its contents are not read */
static const char image[] = "simppu module image";

int main(void)
{
    int count = -1;
    /* before cuInit: CUDA_ERROR_NOT_INITIALIZED */
    EXPECT(cuDeviceGetCount(&count) == CUDA_ERROR_NOT_INITIALIZED);
    CHECK(cuInit(0));
    int version = 0;
    CHECK(cuDriverGetVersion(&version));
    EXPECT(version == CUDA_VERSION);
    CHECK(cuDeviceGetCount(&count));
    EXPECT(count >= 1);
    CUdevice dev;
    CHECK(cuDeviceGet(&dev, 0));
    CUdevice bad;
    CUresult rc = cuDeviceGet(&bad, 99);
    EXPECT(rc == CUDA_ERROR_INVALID_DEVICE);
    const char *error = NULL;
    CHECK(cuGetErrorName(rc, &error));
    EXPECT(error && !strcmp(error, "CUDA_ERROR_INVALID_DEVICE"));
    char name[128];
    CHECK(cuDeviceGetName(name, sizeof name, dev));
    int major = 0, minor = -1;
    CHECK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    CHECK(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    EXPECT(major > 0 && minor >= 0);
    int multi = -1; /* a driver attribute the runtime no longer has */
    CHECK(cuDeviceGetAttribute(&multi, CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH, dev));
    EXPECT(multi == 0 || multi == 1);
    size_t total = 0;
    CHECK(cuDeviceTotalMem(&total, dev));
    EXPECT(total > 0);
    printf("Device 0: \"%s\", compute %d.%d, %zu bytes\n", name, major, minor, total);

    CUcontext ctx, current = NULL;
    CHECK(cuCtxCreate(&ctx, NULL, 0, dev));
    CHECK(cuCtxGetCurrent(&current));
    EXPECT(current == ctx);
    CUmodule module;
    CHECK(cuModuleLoadData(&module, image));
    CUfunction scale, add;
    CHECK(cuModuleGetFunction(&scale, module, "vecScale"));
    CHECK(cuModuleGetFunction(&add, module, "vecAdd"));

    int min_grid = 0, block_size = 0;
    CHECK(cuOccupancyMaxPotentialBlockSize(&min_grid, &block_size, scale, NULL, 0, 0));
    EXPECT(block_size > 0 && block_size <= 1024 && block_size % 32 == 0 && min_grid > 0);

    size_t bytes = N * sizeof(unsigned);
    unsigned *host = malloc(bytes), *back = malloc(bytes);
    for (unsigned i = 0; i < N; i++)
        host[i] = i * 7u;
    CUdeviceptr a, b, c;
    CHECK(cuMemAlloc(&a, bytes));
    CHECK(cuMemAlloc(&b, bytes));
    CHECK(cuMemAlloc(&c, bytes));
    CHECK(cuMemcpyHtoD(a, host, bytes));
    CHECK(cuMemcpyHtoD(b, host, bytes));
    CHECK(cuMemsetD32(c, 0xdeadbeefu, N));

    CUstream stream;
    CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    CUevent start, stop;
    CHECK(cuEventCreate(&start, CU_EVENT_DEFAULT));
    CHECK(cuEventCreate(&stop, CU_EVENT_DEFAULT));
    int n = N;
    void *args[] = {&a, &b, &c, &n};
    CHECK(cuEventRecord(start, stream));
    CHECK(cuLaunchKernel(scale, N / 256, 1, 1, 256, 1, 1, 0, stream, args, NULL));
    CHECK(cuLaunchKernel(add, N / 256, 1, 1, 256, 1, 1, 0, stream, args, NULL));
    CHECK(cuEventRecord(stop, stream));
    CHECK(cuMemcpyDtoHAsync(back, c, bytes, stream));
    CHECK(cuStreamSynchronize(stream));
    int pattern = 1;
    for (unsigned i = 0; i < N; i++)
        pattern &= back[i] == 0xdeadbeefu;
    EXPECT(pattern);
    CHECK(cuEventSynchronize(stop));
    float ms = -1;
    CHECK(cuEventElapsedTime(&ms, start, stop));
    EXPECT(ms > 0);
    /* 2048 threads a block: refused */
    EXPECT(cuLaunchKernel(scale, 1, 1, 1, 2048, 1, 1, 0, NULL, args, NULL) ==
           CUDA_ERROR_INVALID_VALUE);
    CHECK(cuLaunchKernel(scale, N / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
    CHECK(cuMemcpyDtoD(c, a, bytes));
    CHECK(cuCtxSynchronize());
    CHECK(cuMemcpyDtoH(back, c, bytes));
    EXPECT(!memcmp(back, host, bytes));

    /* as the runtime and the vendor libraries find their entry points */
    void *fn = NULL;
    CUdriverProcAddressQueryResult found;
    CHECK(cuGetProcAddress("cuMemFree", &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &found));
    EXPECT(fn && found == CU_GET_PROC_ADDRESS_SUCCESS);
    /* cuCtxCreate as a CUDA 12.0 program knows it: (ctx, flags, dev), the _v2 signature */
    void *create_v2 = NULL, *create_v4 = NULL;
    CHECK(cuGetProcAddress("cuCtxCreate", &create_v2, 12000, CU_GET_PROC_ADDRESS_DEFAULT, NULL));
    CHECK(cuGetProcAddress("cuCtxCreate", &create_v4, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT,
                           NULL));
    EXPECT(create_v2 && create_v4 && create_v2 != create_v4 && create_v4 == (void *)cuCtxCreate);
    EXPECT(cuGetProcAddress("cuNoSuchCall", &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT,
                            &found) == CUDA_ERROR_NOT_FOUND &&
           found == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    CHECK(cuGetProcAddress("cuMemFree", &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &found));
    CUresult (*mem_free)(CUdeviceptr) = (CUresult(*)(CUdeviceptr))fn;
    CHECK(mem_free(a));
    CHECK(cuMemFree(b));
    CHECK(cuMemFree(c));
    CHECK(cuEventDestroy(start));
    CHECK(cuEventDestroy(stop));
    CHECK(cuStreamDestroy(stream));
    CHECK(cuModuleUnload(module));
    CHECK(cuCtxDestroy(ctx));
    free(host);
    free(back);
    if (failures)
        return 1;
    printf("done\n");
    return 0;
}
