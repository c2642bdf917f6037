/* The stand-ins' simulated kernels (see aclib.h). */
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include "aclib.h"

extern void **__cudaRegisterFatBinary(void *fat_cubin);
extern void __cudaRegisterFatBinaryEnd(void **handle);
extern void __cudaRegisterFunction(void **handle, const char *host_fun, char *device_fun,
                                   const char *device_name, int thread_limit, uint3 *tid,
                                   uint3 *bid, dim3 *block, dim3 *grid, int *warp_size);

#define MAX_KERNELS 32
static struct {
    const char *name;
    char stub;
} kernels[MAX_KERNELS];
static int kernel_count;
static void **fat_handle;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static const void *kernel(const char *name)
{
    const void *stub = NULL;
    pthread_mutex_lock(&lock);
    if (!fat_handle) {
        static struct {
            int magic, version;
            const void *data;
            void *filename;
        } wrapper = {0x466243b1, 1, NULL, NULL};
        fat_handle = __cudaRegisterFatBinary(&wrapper);
        __cudaRegisterFatBinaryEnd(fat_handle);
    }
    for (int i = 0; i < kernel_count && !stub; i++)
        if (!strcmp(kernels[i].name, name))
            stub = &kernels[i].stub;
    if (!stub && kernel_count < MAX_KERNELS) {
        kernels[kernel_count].name = name;
        stub = &kernels[kernel_count].stub;
        __cudaRegisterFunction(fat_handle, stub, (char *)name, name, -1, NULL, NULL, NULL, NULL,
                               NULL);
        kernel_count++;
    }
    pthread_mutex_unlock(&lock);
    return stub;
}

int aclib_launch(const char *name, uint64_t ns, cudaStream_t stream)
{
    typedef void (*next_launch_fn)(uint64_t, void (*)(void *, uint64_t, uint64_t), void *);
    static next_launch_fn next_launch;
    if (!next_launch)
        next_launch = (next_launch_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "simppu_next_launch");
    const void *stub = kernel(name);
    if (!stub)
        return cudaErrorInvalidDeviceFunction;
    if (next_launch)
        next_launch(ns, NULL, NULL);
    dim3 grid = {64, 1, 1}, block = {256, 1, 1};
    void *args[1] = {NULL};
    return cudaLaunchKernel(stub, grid, block, args, 0, stream);
}

uint64_t aclib_gemm_ns(int64_t m, int64_t n, int64_t k, int64_t batch)
{
    double flops = 2.0 * (double)m * (double)n * (double)k * (double)(batch > 0 ? batch : 1);
    uint64_t ns = (uint64_t)(flops / 20000.0);
    return ns < 2000 ? 2000 : ns;
}
