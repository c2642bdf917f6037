/* --hggc-memory-usage on the API side: which calls allocate device or pinned
 * memory and how much they ask for (from CUPTI's parameter structs), and a
 * record for each such call that failed (CUPTI's MEMORY2 activity only
 * reports the allocations that succeeded). */
#include <time.h>

#include "hggc_activity.h"

enum size_rule {
    SIZE_SECOND, /* { ptr, size_t size, ... } */
    SIZE_PITCH, /* cudaMallocPitch: width * height */
    SIZE_PITCH_CU, /* cuMemAllocPitch: WidthInBytes * Height */
    SIZE_3D, /* cudaMalloc3D: the extent */
};

struct allocation_api {
    int driver;
    CUpti_CallbackId cbid;
    unsigned kind; /* ASYS_HGGC_MEMORY_DEVICE or _PINNED */
    uint32_t cupti_kind; /* CUpti_ActivityMemoryKind of what it allocates */
    enum size_rule size;
};

#define RT(name, kind, cupti, rule) \
    { \
        0, CUPTI_RUNTIME_TRACE_CBID_##name, kind, cupti, rule \
    }
#define DRV(name, kind, cupti, rule) \
    { \
        1, CUPTI_DRIVER_TRACE_CBID_##name, kind, cupti, rule \
    }
#define DEVICE ASYS_HGGC_MEMORY_DEVICE
#define PINNED ASYS_HGGC_MEMORY_PINNED
#define K_DEVICE CUPTI_ACTIVITY_MEMORY_KIND_DEVICE
#define K_PINNED CUPTI_ACTIVITY_MEMORY_KIND_PINNED
#define K_MANAGED CUPTI_ACTIVITY_MEMORY_KIND_MANAGED

static const struct allocation_api allocation_apis[] = {
    RT(cudaMalloc_v3020, DEVICE, K_DEVICE, SIZE_SECOND),
    RT(cudaMallocManaged_v6000, DEVICE, K_MANAGED, SIZE_SECOND),
    RT(cudaMallocPitch_v3020, DEVICE, K_DEVICE, SIZE_PITCH),
    RT(cudaMalloc3D_v3020, DEVICE, K_DEVICE, SIZE_3D),
    RT(cudaMallocAsync_v11020, DEVICE, K_DEVICE, SIZE_SECOND),
    RT(cudaMallocAsync_ptsz_v11020, DEVICE, K_DEVICE, SIZE_SECOND),
    RT(cudaMallocFromPoolAsync_v11020, DEVICE, K_DEVICE, SIZE_SECOND),
    RT(cudaMallocFromPoolAsync_ptsz_v11020, DEVICE, K_DEVICE, SIZE_SECOND),
    RT(cudaMallocHost_v3020, PINNED, K_PINNED, SIZE_SECOND),
    RT(cudaHostAlloc_v3020, PINNED, K_PINNED, SIZE_SECOND),
    RT(cudaHostRegister_v4000, PINNED, K_PINNED, SIZE_SECOND),
    DRV(cuMemAlloc_v2, DEVICE, K_DEVICE, SIZE_SECOND),
    DRV(cuMemAllocManaged, DEVICE, K_MANAGED, SIZE_SECOND),
    DRV(cuMemAllocPitch_v2, DEVICE, K_DEVICE, SIZE_PITCH_CU),
    DRV(cuMemAllocAsync, DEVICE, K_DEVICE, SIZE_SECOND),
    DRV(cuMemAllocAsync_ptsz, DEVICE, K_DEVICE, SIZE_SECOND),
    DRV(cuMemAllocFromPoolAsync, DEVICE, K_DEVICE, SIZE_SECOND),
    DRV(cuMemAllocFromPoolAsync_ptsz, DEVICE, K_DEVICE, SIZE_SECOND),
    DRV(cuMemAllocHost_v2, PINNED, K_PINNED, SIZE_SECOND),
    DRV(cuMemHostAlloc, PINNED, K_PINNED, SIZE_SECOND),
    DRV(cuMemHostRegister_v2, PINNED, K_PINNED, SIZE_SECOND),
};

struct any_sized { /* the common layout: a pointer, then the size */
    void *out;
    size_t size;
};

static uint64_t asked_size(enum size_rule rule, const void *params)
{
    switch (rule) {
    case SIZE_PITCH: {
        const cudaMallocPitch_v3020_params *p = params;
        return (uint64_t)p->width * p->height;
    }
    case SIZE_PITCH_CU: {
        const cuMemAllocPitch_v2_params *p = params;
        return (uint64_t)p->WidthInBytes * p->Height;
    }
    case SIZE_3D: {
        const cudaMalloc3D_v3020_params *p = params;
        return (uint64_t)p->extent.width * p->extent.height * p->extent.depth;
    }
    case SIZE_SECOND:
    default:
        return ((const struct any_sized *)params)->size;
    }
}

unsigned asys_hggc_allocation(int driver, CUpti_CallbackId cbid, const void *params, uint64_t *size,
                              uint32_t *cupti_kind)
{
    for (size_t i = 0; i < sizeof allocation_apis / sizeof allocation_apis[0]; i++) {
        const struct allocation_api *a = &allocation_apis[i];
        if (a->cbid != cbid || a->driver != driver)
            continue;
        *size = params ? asked_size(a->size, params) : 0;
        *cupti_kind = a->cupti_kind;
        return a->kind;
    }
    return 0;
}

void asys_hggc_failed_allocation(struct asys_thread *t, uint32_t correlation_id, uint64_t size,
                                 uint32_t cupti_kind, int32_t error, uint32_t device,
                                 uint32_t context)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    uint32_t delta;
    struct asys_rec_hggc_memory *r = asys_segment_reserve(&t->seg, sizeof *r, asys_now(), &delta);
    if (!r)
        return;
    r->timestamp_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
    r->address = 0;
    r->bytes = size;
    r->device = device;
    r->context = context;
    r->stream = UINT32_MAX;
    r->correlation_id = correlation_id;
    r->memory_kind = cupti_kind;
    r->error = (uint32_t)error;
    asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_HGGC_MEMORY, sizeof *r / 8,
                                                  ASYS_HGGC_MEMORY_FAILED, delta));
}
