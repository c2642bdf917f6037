// array_texture: a 2D CUDA array filled from the host, read through a
// texture object and written through a surface object by kernels, copied to
// device memory, to a layered 3D array and back to the host.
#include <string.h>

#include "samples_common.h"

__global__ void transform(float *out, cudaTextureObject_t tex, int width, int height)
{
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height)
        out[y * width + x] = tex2D<float>(tex, x + 0.5f, y + 0.5f) * 2.0f;
}

__global__ void scribble(cudaSurfaceObject_t surf, int width, int height)
{
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height)
        surf2Dwrite((float)(x + y), surf, x * sizeof(float), y);
}

int main(void)
{
    const int width = 256, height = 128, layers = 4;
    size_t row = width * sizeof(float);
    float *host = (float *)malloc(row * height), *device = NULL;
    for (int i = 0; i < width * height; i++)
        host[i] = (float)i;
    cudaChannelFormatDesc desc = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
    cudaArray_t array, layered;
    CHECK(cudaMallocArray(&array, &desc, width, height, cudaArraySurfaceLoadStore));
    CHECK(cudaMalloc3DArray(&layered, &desc, make_cudaExtent(width, height, layers),
                            cudaArrayLayered));
    CHECK(cudaMalloc(&device, row * height));
    CHECK(cudaMemcpy2DToArray(array, 0, 0, host, row, row, height, cudaMemcpyHostToDevice));

    cudaResourceDesc res;
    memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypeArray;
    res.res.array.array = array;
    cudaTextureDesc td;
    memset(&td, 0, sizeof td);
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModePoint;
    td.readMode = cudaReadModeElementType;
    cudaTextureObject_t tex = 0;
    cudaSurfaceObject_t surf = 0;
    CHECK(cudaCreateTextureObject(&tex, &res, &td, NULL));
    CHECK(cudaCreateSurfaceObject(&surf, &res));
    dim3 block(16, 16), grid(width / 16, height / 16);
    transform<<<grid, block>>>(device, tex, width, height);
    scribble<<<grid, block>>>(surf, width, height);
    CHECK(cudaGetLastError());

    // array -> layer 2 of the layered array, then that layer -> host
    cudaMemcpy3DParms p;
    memset(&p, 0, sizeof p);
    p.srcArray = array;
    p.dstArray = layered;
    p.dstPos = make_cudaPos(0, 0, 2);
    p.extent = make_cudaExtent(width, height, 1);
    p.kind = cudaMemcpyDeviceToDevice;
    CHECK(cudaMemcpy3D(&p));
    memset(&p, 0, sizeof p);
    p.srcArray = layered;
    p.srcPos = make_cudaPos(0, 0, 2);
    p.dstPtr = make_cudaPitchedPtr(host, row, width, height);
    p.extent = make_cudaExtent(width, height, 1);
    p.kind = cudaMemcpyDeviceToHost;
    CHECK(cudaMemcpy3D(&p));
    CHECK(cudaMemcpy2DFromArray(device, row, array, 0, 0, row, height, cudaMemcpyDeviceToDevice));
    CHECK(cudaMemcpy2DFromArray(host, row, array, 0, 0, row, height, cudaMemcpyDeviceToHost));
    CHECK(cudaDeviceSynchronize());

    cudaExtent extent;
    unsigned flags = 0;
    CHECK(cudaArrayGetInfo(&desc, &extent, &flags, layered));
    printf("layered array: %zu x %zu x %zu, %d-bit elements, flags 0x%x\n", extent.width,
           extent.height, extent.depth, desc.x, flags);
    CHECK(cudaDestroySurfaceObject(surf));
    CHECK(cudaDestroyTextureObject(tex));
    CHECK(cudaFreeArray(array));
    CHECK(cudaFreeArray(layered));
    EXPECT_ERROR(cudaFreeArray(layered), cudaErrorInvalidResourceHandle);
    CHECK(cudaFree(device));
    free(host);
    printf("done\n");
    return 0;
}
