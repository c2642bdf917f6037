/* The benchmark's anchor for HGGC: a CUPTI tool that subscribes to the same
 * callbacks and activity kinds as asys, gives CUPTI the same clock
 * (CLOCK_MONOTONIC through the timestamp callback: without one CUPTI, and
 * simppu, convert every time stamp to CLOCK_REALTIME, two clock reads more
 * a call) and does nothing with them, so that "asys minus this" is asys's
 * own cost, apart from CUPTI's (or simppu's).
 * Loaded through CUDA_INJECTION64_PATH like asys.  NULL_TOOL_CALLBACKS_ONLY=1:
 * API callbacks only, no activity. */
#include <cupti.h>
#include <stdlib.h>
#include <time.h>

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void *data)
{
    (void)userdata;
    (void)domain;
    (void)cbid;
    (void)data;
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *size = 4u << 20;
    *buffer = aligned_alloc(64, *size);
    *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream, uint8_t *buffer,
                                      size_t size, size_t valid)
{
    (void)context;
    (void)stream;
    (void)size;
    CUpti_Activity *record = NULL;
    volatile size_t records = 0;
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS)
        records++;
    free(buffer);
}

static uint64_t CUPTIAPI monotonic_timestamp(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

static void flush_at_exit(void)
{
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

__attribute__((visibility("default"))) int InitializeInjection(void)
{
    CUpti_SubscriberHandle subscriber;
    if (cuptiSubscribe(&subscriber, on_callback, NULL) != CUPTI_SUCCESS)
        return 1;
    cuptiActivityRegisterTimestampCallback(monotonic_timestamp);
    cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
    cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
    const char *callbacks_only = getenv("NULL_TOOL_CALLBACKS_ONLY");
    if (callbacks_only && *callbacks_only == '1')
        return 1;
    cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
    const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_DEVICE,
                                        CUPTI_ACTIVITY_KIND_CONTEXT,
                                        CUPTI_ACTIVITY_KIND_STREAM,
                                        CUPTI_ACTIVITY_KIND_OVERHEAD,
                                        CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                        CUPTI_ACTIVITY_KIND_MEMCPY,
                                        CUPTI_ACTIVITY_KIND_MEMCPY2,
                                        CUPTI_ACTIVITY_KIND_MEMSET,
                                        CUPTI_ACTIVITY_KIND_MEMORY2,
                                        CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
                                        CUPTI_ACTIVITY_KIND_CUDA_EVENT};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        cuptiActivityEnable(kinds[i]);
    cuptiActivityFlushPeriod(250);
    atexit(flush_at_exit);
    return 1;
}
