/* HGGC collector, device side: CUPTI activity records -> asys records.  The
 * records keep CUPTI's meaning (and its times: CLOCK_MONOTONIC ns, through
 * the timestamp callback); names are interned, devices get their index on
 * the machine. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "hggc_activity.h"

/* Reserves a record stamped now (activity carries its own times in the body). */
static void *reserve_activity(struct asys_thread *t, uint32_t size, uint32_t *delta)
{
    return asys_segment_reserve(&t->seg, size, asys_now(), delta);
}

#define COMMIT(r, type, arg) \
    asys_segment_commit(&(r)->header, ASYS_REC_WORD(type, sizeof *(r) / 8, arg, delta))

static void convert_kernel(struct asys_thread *t, const CUpti_ActivityKernel10 *k)
{
    uint32_t name_id = asys_intern(t, k->name ? k->name : "?");
    uint32_t delta;
    struct asys_rec_hggc_kernel *r = reserve_activity(t, sizeof *r, &delta);
    if (!r)
        return;
    memset((uint8_t *)r + sizeof r->header, 0, sizeof *r - sizeof r->header);
    r->start_ns = k->start;
    r->end_ns = k->end;
    r->queued_ns = k->queued == CUPTI_TIMESTAMP_UNKNOWN ? 0 : k->queued;
    r->submitted_ns = k->submitted == CUPTI_TIMESTAMP_UNKNOWN ? 0 : k->submitted;
    r->device = k->deviceId;
    r->context = k->contextId;
    r->stream = k->streamId;
    r->correlation_id = k->correlationId;
    r->grid[0] = k->gridX;
    r->grid[1] = k->gridY;
    r->grid[2] = k->gridZ;
    r->block[0] = k->blockX;
    r->block[1] = k->blockY;
    r->block[2] = k->blockZ;
    r->static_shared_memory = k->staticSharedMemory;
    r->dynamic_shared_memory = k->dynamicSharedMemory;
    r->registers_per_thread = k->registersPerThread;
    r->launch_type = k->launchType;
    r->name_string_id = name_id;
    r->graph_node_id = k->graphNodeId;
    r->graph_id = k->graphId;
    COMMIT(r, ASYS_REC_HGGC_KERNEL, 0);
}

static void write_memcpy(struct asys_thread *t, uint64_t start, uint64_t end, uint64_t bytes,
                         uint32_t device, uint32_t context, uint32_t stream, uint32_t correlation,
                         const uint8_t kinds[4], uint32_t graph_id, uint64_t graph_node,
                         uint32_t src_device, uint32_t dst_device)
{
    uint32_t delta;
    struct asys_rec_hggc_memcpy *r = reserve_activity(t, sizeof *r, &delta);
    if (!r)
        return;
    r->start_ns = start;
    r->end_ns = end;
    r->bytes = bytes;
    r->device = device;
    r->context = context;
    r->stream = stream;
    r->correlation_id = correlation;
    r->copy_kind = kinds[0];
    r->src_kind = kinds[1];
    r->dst_kind = kinds[2];
    r->flags = kinds[3] & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC ? 1 : 0;
    r->graph_id = graph_id;
    r->graph_node_id = graph_node;
    r->src_device = src_device;
    r->dst_device = dst_device;
    COMMIT(r, ASYS_REC_HGGC_MEMCPY, 0);
}

static void convert_memcpy(struct asys_thread *t, const CUpti_ActivityMemcpy6 *m)
{
    const uint8_t kinds[4] = {m->copyKind, m->srcKind, m->dstKind, m->flags};
    write_memcpy(t, m->start, m->end, m->bytes, m->deviceId, m->contextId, m->streamId,
                 m->correlationId, kinds, m->graphId, m->graphNodeId, UINT32_MAX, UINT32_MAX);
}

static void convert_peer_memcpy(struct asys_thread *t, const CUpti_ActivityMemcpyPtoP4 *m)
{
    const uint8_t kinds[4] = {m->copyKind, m->srcKind, m->dstKind, m->flags};
    write_memcpy(t, m->start, m->end, m->bytes, m->deviceId, m->contextId, m->streamId,
                 m->correlationId, kinds, m->graphId, m->graphNodeId, m->srcDeviceId,
                 m->dstDeviceId);
}

static void convert_memset(struct asys_thread *t, const CUpti_ActivityMemset4 *m)
{
    uint32_t delta;
    struct asys_rec_hggc_memset *r = reserve_activity(t, sizeof *r, &delta);
    if (!r)
        return;
    r->start_ns = m->start;
    r->end_ns = m->end;
    r->bytes = m->bytes;
    r->device = m->deviceId;
    r->context = m->contextId;
    r->stream = m->streamId;
    r->correlation_id = m->correlationId;
    r->value = m->value;
    r->flags = m->flags & CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC ? 1 : 0;
    r->memory_kind = m->memoryKind;
    r->graph_id = m->graphId;
    r->reserved = 0;
    r->graph_node_id = m->graphNodeId;
    COMMIT(r, ASYS_REC_HGGC_MEMSET, 0);
}

static void convert_sync(struct asys_thread *t, const CUpti_ActivitySynchronization2 *s)
{
    uint32_t delta;
    struct asys_rec_hggc_sync *r = reserve_activity(t, sizeof *r, &delta);
    if (!r)
        return;
    r->start_ns = s->start;
    r->end_ns = s->end;
    r->context = s->contextId;
    r->stream = s->streamId;
    r->correlation_id = s->correlationId;
    r->event_id = s->cudaEventId;
    r->event_sync_id = s->cudaEventSyncId;
    COMMIT(r, ASYS_REC_HGGC_SYNC, (unsigned)s->type);
}

static void convert_event(struct asys_thread *t, const CUpti_ActivityCudaEvent2 *e)
{
    uint32_t delta;
    struct asys_rec_hggc_event_record *r = reserve_activity(t, sizeof *r, &delta);
    if (!r)
        return;
    r->device_ns = e->deviceTimestamp;
    r->device = e->deviceId;
    r->context = e->contextId;
    r->stream = e->streamId;
    r->correlation_id = e->correlationId;
    r->event_id = e->eventId;
    r->reserved = 0;
    r->event_sync_id = e->cudaEventSyncId;
    COMMIT(r, ASYS_REC_HGGC_EVENT_RECORD, 0);
}

static struct {
    uint64_t count, bytes; /* atomic */
} frees_after_main;

void asys_hggc_frees_after_main(uint64_t *count, uint64_t *bytes)
{
    *count = __atomic_load_n(&frees_after_main.count, __ATOMIC_RELAXED);
    *bytes = __atomic_load_n(&frees_after_main.bytes, __ATOMIC_RELAXED);
}

/* A free after main returned is the runtime's teardown (main_return.c):
 * not collected, as the manual says, only counted. */
static int freed_by_teardown(const CUpti_ActivityMemory4 *m)
{
    uint64_t main_returned = __atomic_load_n(&asys_proc.main_returned_ns, __ATOMIC_ACQUIRE);
    if (m->memoryOperationType != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE || !main_returned ||
        m->timestamp < main_returned)
        return 0;
    __atomic_fetch_add(&frees_after_main.count, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&frees_after_main.bytes, m->bytes, __ATOMIC_RELAXED);
    return 1;
}

static void convert_memory(struct asys_thread *t, const CUpti_ActivityMemory4 *m)
{
    if (freed_by_teardown(m))
        return;
    uint32_t delta;
    struct asys_rec_hggc_memory *r = reserve_activity(t, sizeof *r, &delta);
    if (!r)
        return;
    r->timestamp_ns = m->timestamp;
    r->address = m->address;
    r->bytes = m->bytes;
    r->device = m->deviceId;
    r->context = m->contextId;
    r->stream = m->streamId;
    r->correlation_id = m->correlationId;
    r->memory_kind = (uint32_t)m->memoryKind;
    r->error = 0;
    COMMIT(r, ASYS_REC_HGGC_MEMORY, (unsigned)m->memoryOperationType);
}

static void convert_graph_trace(struct asys_thread *t, const CUpti_ActivityGraphTrace2 *g)
{
    uint32_t delta;
    struct asys_rec_hggc_graph_trace *r = reserve_activity(t, sizeof *r, &delta);
    if (!r)
        return;
    r->start_ns = g->start;
    r->end_ns = g->end;
    r->device = g->deviceId;
    r->context = g->contextId;
    r->stream = g->streamId;
    r->correlation_id = g->correlationId;
    r->graph_id = g->graphId;
    r->reserved = 0;
    COMMIT(r, ASYS_REC_HGGC_GRAPH_TRACE, 0);
}

/* NVML, declared here (the toolkit ships no nvml.h): only what finds a
 * device's machine index from its UUID. */
typedef struct nvml_device_st *nvml_device;
struct nvml_functions {
    int (*init)(void);
    int (*handle_by_uuid)(const char *, nvml_device *);
    int (*index)(nvml_device, unsigned *);
};

static int nvml_open(struct nvml_functions *f)
{
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return -1;
    f->init = (int (*)(void))dlsym(lib, "nvmlInit_v2");
    f->handle_by_uuid =
        (int (*)(const char *, nvml_device *))dlsym(lib, "nvmlDeviceGetHandleByUUID");
    f->index = (int (*)(nvml_device, unsigned *))dlsym(lib, "nvmlDeviceGetIndex");
    return f->init && f->handle_by_uuid && f->index && f->init() == 0 ? 0 : -1;
}

/* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as NVML names devices. */
static void uuid_text(const uint8_t uuid[16], char out[41])
{
    char *p = out;
    p = asys_append_str(p, out + 41, "GPU-");
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            *p++ = '-';
        *p++ = "0123456789abcdef"[uuid[i] >> 4];
        *p++ = "0123456789abcdef"[uuid[i] & 15];
    }
    *p = '\0';
}

/* The machine's index of CUDA device `ordinal`: CUDA_VISIBLE_DEVICES renumbers
 * devices (and CUDA's own order need not be PCI order), the report shows them
 * as the machine numbers them: NVML's index of the device's UUID, else the
 * position in CUDA_VISIBLE_DEVICES. */
static uint32_t physical_index(uint32_t ordinal, const uint8_t uuid[16])
{
    static struct nvml_functions nvml;
    static int nvml_state; /* 0 untried, 1 usable, -1 not there */
    if (!nvml_state)
        nvml_state = nvml_open(&nvml) == 0 ? 1 : -1;
    char text[41];
    uuid_text(uuid, text);
    nvml_device device;
    unsigned index;
    if (nvml_state > 0 && nvml.handle_by_uuid(text, &device) == 0 &&
        nvml.index(device, &index) == 0)
        return index;
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    if (!visible || !*visible)
        return ordinal;
    const char *p = visible;
    for (uint32_t i = 0; i < ordinal && *p; i++) {
        p += strcspn(p, ",");
        p += *p == ',';
    }
    if (*p >= '0' && *p <= '9')
        return (uint32_t)strtoul(p, NULL, 10);
    return UINT32_MAX;
}

static void convert_device(struct asys_thread *t, const CUpti_ActivityDevice5 *d)
{
    uint32_t name_id = asys_intern(t, d->name ? d->name : "?");
    uint8_t uuid[16];
    memcpy(uuid, &d->uuid, sizeof uuid);
    uint32_t physical = physical_index(d->id, uuid);
    uint32_t delta;
    struct asys_rec_hggc_device *r = reserve_activity(t, sizeof *r, &delta);
    if (!r)
        return;
    r->global_memory_bytes = d->globalMemorySize;
    r->multiprocessors = d->numMultiprocessors;
    r->compute_major = d->computeCapabilityMajor;
    r->compute_minor = d->computeCapabilityMinor;
    r->name_string_id = name_id;
    memcpy(r->uuid, uuid, sizeof r->uuid);
    r->physical_index = physical;
    r->reserved = 0;
    COMMIT(r, ASYS_REC_HGGC_DEVICE, d->id & 0xffffu);
}

static void convert_context(struct asys_thread *t, const CUpti_ActivityContext3 *c)
{
    uint32_t delta;
    struct asys_rec_hggc_context *r = reserve_activity(t, sizeof *r, &delta);
    if (!r)
        return;
    r->context = c->contextId;
    r->device = c->deviceId;
    r->null_stream = c->nullStreamId;
    r->reserved = 0;
    COMMIT(r, ASYS_REC_HGGC_CONTEXT, 0);
}

static void convert_stream(struct asys_thread *t, const CUpti_ActivityStream *s)
{
    uint32_t delta;
    struct asys_rec_hggc_stream *r = reserve_activity(t, sizeof *r, &delta);
    if (!r)
        return;
    r->context = s->contextId;
    r->stream = s->streamId;
    r->priority = (int32_t)s->priority;
    r->flags = s->flag == CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NON_BLOCKING ? 1 : 0;
    r->correlation_id = s->correlationId;
    r->reserved = 0;
    COMMIT(r, ASYS_REC_HGGC_STREAM, 0);
}

static void convert_overhead(struct asys_thread *t, const CUpti_ActivityOverhead3 *o)
{
    uint32_t delta;
    struct asys_rec_hggc_overhead *r = reserve_activity(t, sizeof *r, &delta);
    if (!r)
        return;
    r->start_ns = o->start;
    r->end_ns = o->end;
    r->overhead_kind = (uint32_t)o->overheadKind;
    r->object_kind = (uint32_t)o->objectKind;
    COMMIT(r, ASYS_REC_HGGC_OVERHEAD, 0);
}

/* The API call behind a device activity record; 0 for the inventory
 * (devices, contexts, streams) and CUPTI's overhead, which are always kept. */
static uint32_t activity_correlation(const CUpti_Activity *a)
{
    switch (a->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        return ((const CUpti_ActivityKernel10 *)a)->correlationId;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        return ((const CUpti_ActivityMemcpy6 *)a)->correlationId;
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
        return ((const CUpti_ActivityMemcpyPtoP4 *)a)->correlationId;
    case CUPTI_ACTIVITY_KIND_MEMSET:
        return ((const CUpti_ActivityMemset4 *)a)->correlationId;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
        return ((const CUpti_ActivitySynchronization2 *)a)->correlationId;
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT:
        return ((const CUpti_ActivityCudaEvent2 *)a)->correlationId;
    case CUPTI_ACTIVITY_KIND_MEMORY2:
        return ((const CUpti_ActivityMemory4 *)a)->correlationId;
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE:
        return ((const CUpti_ActivityGraphTrace2 *)a)->correlationId;
    default:
        return 0;
    }
}

int asys_hggc_convert(struct asys_thread *t, const CUpti_Activity *a)
{
    uint32_t correlation = activity_correlation(a);
    if (correlation && !asys_capture_keeps(correlation))
        return 1; /* caused by a call outside the capture range */
    switch (a->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        convert_kernel(t, (const CUpti_ActivityKernel10 *)a);
        break;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        convert_memcpy(t, (const CUpti_ActivityMemcpy6 *)a);
        break;
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
        convert_peer_memcpy(t, (const CUpti_ActivityMemcpyPtoP4 *)a);
        break;
    case CUPTI_ACTIVITY_KIND_MEMSET:
        convert_memset(t, (const CUpti_ActivityMemset4 *)a);
        break;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
        convert_sync(t, (const CUpti_ActivitySynchronization2 *)a);
        break;
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT:
        convert_event(t, (const CUpti_ActivityCudaEvent2 *)a);
        break;
    case CUPTI_ACTIVITY_KIND_MEMORY2:
        convert_memory(t, (const CUpti_ActivityMemory4 *)a);
        break;
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE:
        convert_graph_trace(t, (const CUpti_ActivityGraphTrace2 *)a);
        break;
    case CUPTI_ACTIVITY_KIND_DEVICE:
        convert_device(t, (const CUpti_ActivityDevice5 *)a);
        break;
    case CUPTI_ACTIVITY_KIND_CONTEXT:
        convert_context(t, (const CUpti_ActivityContext3 *)a);
        break;
    case CUPTI_ACTIVITY_KIND_STREAM:
        convert_stream(t, (const CUpti_ActivityStream *)a);
        break;
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
        convert_overhead(t, (const CUpti_ActivityOverhead3 *)a);
        break;
    default:
        return 0;
    }
    return 1;
}
