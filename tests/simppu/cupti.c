/* simppu libcupti.so.13: the subset of CUPTI asys's HGGC collector uses, fed
 * by the simulated runtime.  One subscriber; callbacks by domain and id;
 * activity records in the exact cupti_activity.h layouts, delivered through
 * the tool's buffer callbacks; timestamps on the tool's clock when it
 * registers a timestamp callback.  SIMPPU_CUPTI_BUSY=1 makes it behave as if
 * another tool (nsys, ncu) already held the subscription.
 * A test fixture: never linked into asys. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <string.h>
#include <time.h>

#include "simppu_internal.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_RUNTIME_CBID 1024
#define MAX_RESOURCE_CBID 64
#define MAX_DRIVER_CBID 1024
#define MAX_KIND 64

static struct {
    pthread_mutex_t lock;
    int hooked;
    int subscribed;
    CUpti_CallbackFunc callback;
    void *userdata;
    uint8_t runtime_enabled[MAX_RUNTIME_CBID];
    uint8_t resource_enabled[MAX_RESOURCE_CBID];
    uint8_t driver_enabled[MAX_DRIVER_CBID];
    uint8_t activity_enabled[MAX_KIND];
    CUpti_BuffersCallbackRequestFunc request;
    CUpti_BuffersCallbackCompleteFunc complete;
    uint8_t *buffer;
    size_t buffer_size;
    size_t buffer_used;
    size_t dropped;
    CUpti_TimestampCallbackFunc timestamp;
    int tool_clock_is_monotonic;
    /* the tool's clock against CLOCK_MONOTONIC: anchor pair and rate */
    pthread_mutex_t clock_lock;
    uint64_t anchor_mono, anchor_tool;
    double rate;
    CUpti_ActivityThreadIdType thread_id_type;
    uint32_t flush_period_ms;
    int flusher_started;
} cupti = {.lock = PTHREAD_MUTEX_INITIALIZER, .clock_lock = PTHREAD_MUTEX_INITIALIZER, .rate = 1.0};

/* Each record in a buffer: its size, then the record (8-byte aligned). */
struct framing {
    uint32_t size;
    uint32_t reserved;
};

/* ---- time -------------------------------------------------------------------- */

static uint64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t hook_timestamp(uint64_t mono)
{
    if (!cupti.timestamp) /* CUPTI's default: CLOCK_REALTIME ns */
        return mono + (realtime_ns() - simppu_now_ns());
    if (cupti.tool_clock_is_monotonic) /* nothing to convert, nothing to get wrong */
        return mono;
    pthread_mutex_lock(&cupti.clock_lock);
    uint64_t now = simppu_now_ns();
    if (now - cupti.anchor_mono > 50000000) { /* re-anchor every 50 ms: follows drift */
        uint64_t tool = cupti.timestamp();
        cupti.rate = (double)(tool - cupti.anchor_tool) / (double)(now - cupti.anchor_mono);
        cupti.anchor_mono = now;
        cupti.anchor_tool = tool;
    }
    double offset = ((double)mono - (double)cupti.anchor_mono) * cupti.rate;
    uint64_t result = (uint64_t)((double)cupti.anchor_tool + offset);
    pthread_mutex_unlock(&cupti.clock_lock);
    return result;
}

EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc fn)
{
    if (!fn)
        return CUPTI_ERROR_INVALID_PARAMETER;
    /* a tool whose clock reads between two CLOCK_MONOTONIC reads, every time,
     * is on CLOCK_MONOTONIC: its timestamps are the runtime's own */
    int monotonic = 1;
    for (int i = 0; i < 16 && monotonic; i++) {
        uint64_t before = simppu_now_ns(), tool = fn(), after = simppu_now_ns();
        monotonic = before <= tool && tool <= after;
    }
    /* otherwise the rate over a first 2 ms; later pairs refine it */
    uint64_t m0 = simppu_now_ns(), t0 = fn();
    uint64_t m1, t1;
    do {
        m1 = simppu_now_ns();
        t1 = fn();
    } while (m1 - m0 < 2000000);
    pthread_mutex_lock(&cupti.clock_lock);
    cupti.timestamp = fn;
    cupti.tool_clock_is_monotonic = monotonic;
    cupti.rate = (double)(t1 - t0) / (double)(m1 - m0);
    cupti.anchor_mono = m1;
    cupti.anchor_tool = t1;
    pthread_mutex_unlock(&cupti.clock_lock);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetTimestamp(uint64_t *timestamp)
{
    if (!timestamp)
        return CUPTI_ERROR_INVALID_PARAMETER;
    *timestamp = cupti.timestamp ? cupti.timestamp() : realtime_ns();
    return CUPTI_SUCCESS;
}

/* ---- hooks the runtime calls ---------------------------------------------------- */

static void hook_api(CUpti_CallbackId cbid, const CUpti_CallbackData *data)
{
    if (!cupti.subscribed || cbid >= MAX_RUNTIME_CBID || !cupti.runtime_enabled[cbid])
        return;
    cupti.callback(cupti.userdata, CUPTI_CB_DOMAIN_RUNTIME_API, cbid, data);
}

CUptiResult cuptiActivityFlushAll(uint32_t flag);

static void hook_resource(CUpti_CallbackId cbid, const void *data)
{
    if (cupti.subscribed && cbid < MAX_RESOURCE_CBID && cupti.resource_enabled[cbid])
        cupti.callback(cupti.userdata, CUPTI_CB_DOMAIN_RESOURCE, cbid, data);
    /* a context's records are delivered before it goes */
    if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)
        cuptiActivityFlushAll(0);
}

static int hook_activity_enabled(CUpti_ActivityKind kind)
{
    return (unsigned)kind < MAX_KIND && cupti.activity_enabled[kind];
}

static void hook_activity(const CUpti_Activity *record, size_t size);

/* Time CUPTI spent on the tool's behalf, as an OVERHEAD record. */
static void report_overhead(CUpti_ActivityOverheadKind kind, uint64_t start, uint64_t end)
{
    if (!cupti.activity_enabled[CUPTI_ACTIVITY_KIND_OVERHEAD])
        return;
    CUpti_ActivityOverhead3 r;
    memset(&r, 0, sizeof r);
    r.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
    r.overheadKind = kind;
    r.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    r.objectId.pt.processId = (uint32_t)getpid();
    r.objectId.pt.threadId = (uint32_t)syscall(SYS_gettid);
    r.start = hook_timestamp(start);
    r.end = hook_timestamp(end);
    hook_activity((const CUpti_Activity *)&r, sizeof r);
}

/* Hands a filled buffer to the tool (called without the lock held). */
static void complete(uint8_t *buffer, size_t size, size_t used)
{
    if (!buffer || !cupti.complete)
        return;
    uint64_t start = simppu_now_ns();
    cupti.complete(NULL, 0, buffer, size, used);
    report_overhead(CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH, start, simppu_now_ns());
}

static void hook_activity(const CUpti_Activity *record, size_t size)
{
    size_t need = sizeof(struct framing) + ((size + 7) & ~(size_t)7);
    uint8_t *full = NULL;
    size_t full_size = 0, full_used = 0;
    pthread_mutex_lock(&cupti.lock);
    if (cupti.buffer && cupti.buffer_used + need > cupti.buffer_size) {
        full = cupti.buffer;
        full_size = cupti.buffer_size;
        full_used = cupti.buffer_used;
        cupti.buffer = NULL;
    }
    if (!cupti.buffer && cupti.request) {
        size_t max_records = 0;
        cupti.request(&cupti.buffer, &cupti.buffer_size, &max_records);
        cupti.buffer_used = 0;
    }
    if (!cupti.buffer || cupti.buffer_used + need > cupti.buffer_size) {
        cupti.dropped++;
    } else {
        struct framing f = {(uint32_t)size, 0};
        memcpy(cupti.buffer + cupti.buffer_used, &f, sizeof f);
        memcpy(cupti.buffer + cupti.buffer_used + sizeof f, record, size);
        cupti.buffer_used += need;
    }
    pthread_mutex_unlock(&cupti.lock);
    complete(full, full_size, full_used);
}

static void hook_driver_api(CUpti_CallbackId cbid, const CUpti_CallbackData *data)
{
    if (!cupti.subscribed || cbid >= MAX_DRIVER_CBID || !cupti.driver_enabled[cbid])
        return;
    cupti.callback(cupti.userdata, CUPTI_CB_DOMAIN_DRIVER_API, cbid, data);
}

static const struct simppu_hooks hooks = {hook_api,      hook_resource,  hook_activity_enabled,
                                          hook_activity, hook_timestamp, hook_driver_api};

static void hook_up(void)
{
    if (!__atomic_exchange_n(&cupti.hooked, 1, __ATOMIC_ACQ_REL))
        simppu_install_hooks(&hooks);
}

/* ---- callback API ----------------------------------------------------------------------- */

EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
                                  void *userdata)
{
    const char *busy = getenv("SIMPPU_CUPTI_BUSY");
    if (!subscriber || !callback)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (cupti.subscribed || (busy && *busy == '1'))
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    cupti.callback = callback;
    cupti.userdata = userdata;
    cupti.subscribed = 1;
    *subscriber = (CUpti_SubscriberHandle)&cupti;
    hook_up();
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
    (void)subscriber;
    cupti.subscribed = 0;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                     CUpti_CallbackDomain domain)
{
    (void)subscriber;
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
        memset(cupti.runtime_enabled, enable ? 1 : 0, sizeof cupti.runtime_enabled);
    else if (domain == CUPTI_CB_DOMAIN_RESOURCE)
        memset(cupti.resource_enabled, enable ? 1 : 0, sizeof cupti.resource_enabled);
    else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) /* libcuda.so.1's entry points */
        memset(cupti.driver_enabled, enable ? 1 : 0, sizeof cupti.driver_enabled);
    else if (domain != CUPTI_CB_DOMAIN_SYNCHRONIZE)
        return CUPTI_ERROR_INVALID_PARAMETER;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                       CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    (void)subscriber;
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid < MAX_RUNTIME_CBID)
        cupti.runtime_enabled[cbid] = enable ? 1 : 0;
    else if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid < MAX_RESOURCE_CBID)
        cupti.resource_enabled[cbid] = enable ? 1 : 0;
    else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid < MAX_DRIVER_CBID)
        cupti.driver_enabled[cbid] = enable ? 1 : 0;
    else
        return CUPTI_ERROR_INVALID_PARAMETER;
    return CUPTI_SUCCESS;
}

/* ---- activity API ------------------------------------------------------------------------- */

EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
    if ((unsigned)kind >= MAX_KIND)
        return CUPTI_ERROR_INVALID_KIND;
    hook_up();
    cupti.activity_enabled[kind] = 1;
    if (kind == CUPTI_ACTIVITY_KIND_DEVICE)
        simppu_report_inventory();
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
    if ((unsigned)kind >= MAX_KIND)
        return CUPTI_ERROR_INVALID_KIND;
    cupti.activity_enabled[kind] = 0;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
                                                  CUpti_BuffersCallbackCompleteFunc done)
{
    if (!request || !done)
        return CUPTI_ERROR_INVALID_PARAMETER;
    hook_up();
    cupti.request = request;
    cupti.complete = done;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid_size,
                                              CUpti_Activity **record)
{
    if (!buffer || !record)
        return CUPTI_ERROR_INVALID_PARAMETER;
    size_t offset = 0;
    if (*record) { /* after the previous record */
        uint8_t *prev = (uint8_t *)*record;
        struct framing f;
        memcpy(&f, prev - sizeof f, sizeof f);
        offset = (size_t)(prev - buffer) + ((f.size + 7) & ~(size_t)7);
    }
    if (offset + sizeof(struct framing) > valid_size)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    struct framing f;
    memcpy(&f, buffer + offset, sizeof f);
    if (!f.size || offset + sizeof f + f.size > valid_size)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *record = (CUpti_Activity *)(buffer + offset + sizeof f);
    return CUPTI_SUCCESS;
}

/* Hands over the current buffer; returns whether there was one. */
static int flush_current(void)
{
    pthread_mutex_lock(&cupti.lock);
    uint8_t *buffer = cupti.buffer;
    size_t size = cupti.buffer_size, used = cupti.buffer_used;
    cupti.buffer = NULL;
    cupti.buffer_used = 0;
    pthread_mutex_unlock(&cupti.lock);
    complete(buffer, size, used);
    return buffer != NULL;
}

EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
    /* a forced flush also delivers the overhead record of its own delivery */
    if (flush_current() && (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED))
        flush_current();
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityFlush(CUcontext context, uint32_t stream_id, uint32_t flag)
{
    (void)context;
    (void)stream_id;
    return cuptiActivityFlushAll(flag);
}

static void *flusher(void *arg)
{
    (void)arg;
    for (;;) {
        uint32_t ms = cupti.flush_period_ms;
        struct timespec pause = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000};
        nanosleep(&pause, NULL);
        cuptiActivityFlushAll(0);
    }
    return NULL;
}

EXPORT CUptiResult cuptiActivityFlushPeriod(uint32_t ms)
{
    cupti.flush_period_ms = ms;
    if (ms && !__atomic_exchange_n(&cupti.flusher_started, 1, __ATOMIC_ACQ_REL)) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_create(&t, &attr, flusher, NULL);
        pthread_attr_destroy(&attr);
    }
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t stream_id,
                                                     size_t *dropped)
{
    (void)context;
    (void)stream_id;
    if (!dropped)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&cupti.lock);
    *dropped = cupti.dropped;
    cupti.dropped = 0;
    pthread_mutex_unlock(&cupti.lock);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType type)
{
    cupti.thread_id_type = type;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetThreadIdType(CUpti_ActivityThreadIdType *type)
{
    if (!type)
        return CUPTI_ERROR_INVALID_PARAMETER;
    *type = cupti.thread_id_type;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiFinalize(void)
{
    cuptiActivityFlushAll(0);
    cupti.subscribed = 0;
    memset(cupti.activity_enabled, 0, sizeof cupti.activity_enabled);
    return CUPTI_SUCCESS;
}

/* ---- ids and names ----------------------------------------------------------------------------
 */

EXPORT CUptiResult cuptiGetContextId(CUcontext context, uint32_t *id)
{
    if (!context || !id)
        return CUPTI_ERROR_INVALID_PARAMETER;
    *id = simppu_context_id(context);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetDeviceId(CUcontext context, uint32_t *device)
{
    if (!context || !device)
        return CUPTI_ERROR_INVALID_PARAMETER;
    *device = simppu_context_device(context);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetStreamIdEx(CUcontext context, CUstream stream, uint8_t per_thread,
                                      uint32_t *id)
{
    (void)context;
    (void)per_thread;
    if (!id)
        return CUPTI_ERROR_INVALID_PARAMETER;
    *id = simppu_stream_id(stream);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetStreamId(CUcontext context, CUstream stream, uint32_t *id)
{
    return cuptiGetStreamIdEx(context, stream, 0, id);
}

EXPORT CUptiResult cuptiGetGraphId(CUgraph graph, uint32_t *id)
{
    if (!graph || !id)
        return CUPTI_ERROR_INVALID_PARAMETER;
    *id = simppu_graph_id(graph);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetGraphNodeId(CUgraphNode node, uint64_t *id)
{
    if (!node || !id)
        return CUPTI_ERROR_INVALID_PARAMETER;
    *id = simppu_graph_node_id(node);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetGraphExecId(CUgraphExec exec, uint32_t *id)
{
    if (!exec || !id)
        return CUPTI_ERROR_INVALID_PARAMETER;
    *id = simppu_graph_exec_id(exec);
    return CUPTI_SUCCESS;
}

extern const char *const simppu_runtime_cbid_names[];
extern const unsigned simppu_runtime_cbid_names_count;
extern const char *const simppu_driver_cbid_names[];
extern const unsigned simppu_driver_cbid_names_count;

EXPORT CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid,
                                        const char **name)
{
    if (!name)
        return CUPTI_ERROR_INVALID_PARAMETER;
    *name = NULL;
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid < simppu_runtime_cbid_names_count)
        *name = simppu_runtime_cbid_names[cbid];
    else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid < simppu_driver_cbid_names_count)
        *name = simppu_driver_cbid_names[cbid];
    return *name ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

EXPORT CUptiResult cuptiGetVersion(uint32_t *version)
{
    if (!version)
        return CUPTI_ERROR_INVALID_PARAMETER;
    *version = CUPTI_API_VERSION;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetResultString(CUptiResult result, const char **text)
{
    if (!text)
        return CUPTI_ERROR_INVALID_PARAMETER;
    switch (result) {
    case CUPTI_SUCCESS:
        *text = "CUPTI_SUCCESS";
        break;
    case CUPTI_ERROR_INVALID_PARAMETER:
        *text = "CUPTI_ERROR_INVALID_PARAMETER";
        break;
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
        *text = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
        break;
    case CUPTI_ERROR_MAX_LIMIT_REACHED:
        *text = "CUPTI_ERROR_MAX_LIMIT_REACHED";
        break;
    case CUPTI_ERROR_INVALID_KIND:
        *text = "CUPTI_ERROR_INVALID_KIND";
        break;
    default:
        *text = "CUPTI_ERROR_UNKNOWN";
    }
    return CUPTI_SUCCESS;
}
