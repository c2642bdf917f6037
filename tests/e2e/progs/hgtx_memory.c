/* Every function of NVTX's memory extension (nvToolsExtMem.h and its CUDA
 * runtime part) the way a sub-allocator uses them, with values the test
 * checks exactly (tests/e2e/test_hgtx_extensions.py): a heap of 1 MiB, three
 * regions named, resized, unregistered, a reset, permissions. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtMem.h>
#include <nvtx3/nvToolsExtMemCudaRt.h>

static nvtxMemRegionsRegisterBatch_t regions_batch(nvtxMemHeapHandle_t heap,
                                                   nvtxMemVirtualRangeDesc_t *ranges, size_t n,
                                                   nvtxMemRegionHandle_t *out)
{
    nvtxMemRegionsRegisterBatch_t b = {0};
    b.extCompatID = NVTX_EXT_COMPATID_MEM;
    b.structSize = sizeof b;
    b.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    b.heap = heap;
    b.regionCount = n;
    b.regionDescElementSize = sizeof *ranges;
    b.regionDescElements = ranges;
    b.regionHandleElementsOut = out;
    return b;
}

int main(void)
{
    nvtxDomainHandle_t d = nvtxDomainCreateA("allocator");
    char *pool = malloc(1 << 20);
    nvtxMemVirtualRangeDesc_t whole = {1 << 20, pool};
    nvtxMemHeapDesc_t hd = {0};
    hd.extCompatID = NVTX_EXT_COMPATID_MEM;
    hd.structSize = sizeof hd;
    hd.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
    hd.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    hd.typeSpecificDescSize = sizeof whole;
    hd.typeSpecificDesc = &whole;
    hd.category = 5;
    hd.messageType = NVTX_MESSAGE_TYPE_ASCII;
    hd.message.ascii = "pool";
    nvtxMemHeapHandle_t heap = nvtxMemHeapRegister(d, &hd);

    nvtxMemVirtualRangeDesc_t ranges[3] = {{4096, pool}, {8192, pool + 4096}, {100, pool + 65536}};
    nvtxMemRegionHandle_t handles[3] = {0};
    nvtxMemRegionsRegisterBatch_t reg = regions_batch(heap, ranges, 3, handles);
    nvtxMemRegionsRegister(d, &reg);

    /* names: by pointer, by handle, then a second name for the first */
    nvtxMemRegionNameDesc_t names[3] = {
        {NVTX_MEM_REGION_REF_TYPE_POINTER,
         NVTX_MESSAGE_TYPE_ASCII,
         {.pointer = pool},
         {.ascii = "weights"},
         1,
         0},
        {NVTX_MEM_REGION_REF_TYPE_HANDLE,
         NVTX_MESSAGE_TYPE_ASCII,
         {.handle = handles[1]},
         {.ascii = "activations"},
         2,
         0},
        {NVTX_MEM_REGION_REF_TYPE_POINTER,
         NVTX_MESSAGE_TYPE_ASCII,
         {.pointer = pool + 65536},
         {.ascii = "scratch"},
         0,
         0},
    };
    nvtxMemRegionsNameBatch_t nb = {NVTX_EXT_COMPATID_MEM, sizeof nb, 0, 3,
                                    sizeof *names,         names,     0};
    nvtxMemRegionsName(d, &nb);
    nvtxMemRegionNameDesc_t rename = {NVTX_MEM_REGION_REF_TYPE_POINTER,
                                      NVTX_MESSAGE_TYPE_ASCII,
                                      {.pointer = pool},
                                      {.ascii = "weights v2"},
                                      1,
                                      0};
    nvtxMemRegionsNameBatch_t rb = {NVTX_EXT_COMPATID_MEM, sizeof rb, 0, 1,
                                    sizeof rename,         &rename,   0};
    nvtxMemRegionsName(d, &rb);

    /* the scratch region grows */
    nvtxMemVirtualRangeDesc_t grown = {200, pool + 65536};
    nvtxMemRegionsResizeBatch_t resize = {
        NVTX_EXT_COMPATID_MEM, sizeof resize, NVTX_MEM_TYPE_VIRTUAL_ADDRESS, 1,
        sizeof grown,          &grown};
    nvtxMemRegionsResize(d, &resize);

    /* activations go, by handle */
    nvtxMemRegionRef_t gone = {.handle = handles[1]};
    nvtxMemRegionsUnregisterBatch_t ub = {
        NVTX_EXT_COMPATID_MEM, sizeof ub, NVTX_MEM_REGION_REF_TYPE_HANDLE, 1, sizeof gone, &gone};
    nvtxMemRegionsUnregister(d, &ub);

    /* permissions */
    nvtxMemPermissionsHandle_t perm =
        nvtxMemPermissionsCreate(d, NVTX_MEM_PERMISSIONS_CREATE_FLAGS_NONE);
    nvtxMemPermissionsAssignRegionDesc_t pr = {NVTX_MEM_PERMISSIONS_REGION_FLAGS_READ,
                                               NVTX_MEM_REGION_REF_TYPE_POINTER,
                                               {.pointer = pool}};
    nvtxMemPermissionsAssignBatch_t pa = {
        NVTX_EXT_COMPATID_MEM, sizeof pa, 0, perm, 1, sizeof pr, &pr, 0};
    nvtxMemPermissionsAssign(d, &pa);
    nvtxMemPermissionsBind(d, perm, NVTX_MEM_PERMISSIONS_BIND_SCOPE_CPU_THREAD,
                           NVTX_MEM_PERMISSIONS_BIND_FLAGS_STRICT_WRITE);
    nvtxMemPermissionsUnbind(d, NVTX_MEM_PERMISSIONS_BIND_SCOPE_CPU_THREAD);
    nvtxMemPermissionsReset(d, perm);
    nvtxMemPermissionsDestroy(d, perm);

    /* the CUDA runtime part */
    nvtxMemPermissionsHandle_t process = nvtxMemCudaGetProcessWidePermissions(d);
    nvtxMemPermissionsHandle_t device = nvtxMemCudaGetDeviceWidePermissions(d, 0);
    printf("distinct=%d\n", process != device && process != 0 && device != 0);
    nvtxMemCudaSetPeerAccess(d, device, NVTX_MEM_CUDA_PEER_ALL_DEVICES,
                             NVTX_MEM_PERMISSIONS_REGION_FLAGS_READ);
    nvtxMemVirtualRangeDesc_t init = {4096, pool};
    nvtxMemMarkInitializedBatch_t mi = {
        NVTX_EXT_COMPATID_MEM, sizeof mi, NVTX_MEM_TYPE_VIRTUAL_ADDRESS, 1, sizeof init, &init};
    nvtxMemCudaMarkInitialized(d, (cudaStream_t)0, 0, &mi);

    /* a reset ends what is left; one region after it; the heap goes */
    nvtxMemHeapReset(d, heap);
    nvtxMemVirtualRangeDesc_t after = {512, pool + 1024};
    nvtxMemRegionsRegisterBatch_t reg2 = regions_batch(heap, &after, 1, NULL);
    nvtxMemRegionsRegister(d, &reg2);
    nvtxMemHeapUnregister(d, heap);
    printf("pool=%p\n", (void *)pool);
    printf("done\n");
    free(pool);
    return 0;
}
