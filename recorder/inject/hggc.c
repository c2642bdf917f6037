/* HGGC collector: PPU API calls and device activity through CUPTI.
 *
 * The CUDA driver (or simppu) loads this library through
 * CUDA_INJECTION64_PATH and calls InitializeInjection.  CUPTI is opened with
 * dlopen: where there is none, the program runs on untraced and the report
 * says why.  API calls come from CUPTI's enter/exit callbacks on the calling
 * thread; device activity comes in CUPTI's buffers, which this collector
 * hands out and converts to asys records when CUPTI returns them.  CUPTI
 * stamps device activity with CLOCK_MONOTONIC through the timestamp callback.
 *
 * CUPTI's buffer callbacks carry no user pointer, so the collector's state is
 * one static struct. */
#define _GNU_SOURCE
#include <cupti.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cupti_library.h"
#include "hggc_activity.h"
#include "inject.h"

#define BUFFER_ALIGN 64
#define DEFAULT_BUFFER_SIZE (4u << 20)
#define DEFAULT_FLUSH_PERIOD_MS 250
#define MAX_CBID_SCAN 4096 /* callback ids past the compiled-in table, for newer CUPTIs */

/* The CUPTI functions the collector calls, found with dlsym. */
struct cupti_functions {
    CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
    CUptiResult (*enable_domain)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain);
    CUptiResult (*enable_callback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                                   CUpti_CallbackId);
    CUptiResult (*get_callback_name)(CUpti_CallbackDomain, uint32_t, const char **);
    CUptiResult (*activity_enable)(CUpti_ActivityKind);
    CUptiResult (*activity_register_callbacks)(CUpti_BuffersCallbackRequestFunc,
                                               CUpti_BuffersCallbackCompleteFunc);
    CUptiResult (*activity_get_next_record)(uint8_t *, size_t, CUpti_Activity **);
    CUptiResult (*activity_flush_all)(uint32_t);
    CUptiResult (*activity_flush_period)(uint32_t);
    CUptiResult (*activity_dropped)(CUcontext, uint32_t, size_t *);
    CUptiResult (*register_timestamp)(CUpti_TimestampCallbackFunc);
    CUptiResult (*get_version)(uint32_t *);
    CUptiResult (*get_result_string)(CUptiResult, const char **);
    CUptiResult (*get_graph_id)(CUgraph, uint32_t *);
    CUptiResult (*get_graph_node_id)(CUgraphNode, uint64_t *);
    CUptiResult (*get_graph_exec_id)(CUgraphExec, uint32_t *);
    CUptiResult (*get_stream_id_ex)(CUcontext, CUstream, uint8_t, uint32_t *);
    CUptiResult (*get_context_id)(CUcontext, uint32_t *);
    CUptiResult (*get_device_id)(CUcontext, uint32_t *);
};

/* --hggc-trace-set: what is traced. */
enum trace_set_bit {
    TRACE_KERNEL_ACTIVITY = 1u << 0,
    TRACE_KERNEL_API = 1u << 1,
    TRACE_MEMORY_ACTIVITY = 1u << 2,
    TRACE_MEMORY_API = 1u << 3,
    TRACE_SYNC = 1u << 4,
    TRACE_GRAPH = 1u << 5,
    TRACE_OTHER_API = 1u << 6,
    TRACE_ALL = (1u << 7) - 1,
};

static const struct {
    const char *name;
    unsigned bit;
} trace_set_names[] = {
    {"kernel-activity", TRACE_KERNEL_ACTIVITY},
    {"kernel-api", TRACE_KERNEL_API},
    {"memory-activity", TRACE_MEMORY_ACTIVITY},
    {"memory-api", TRACE_MEMORY_API},
    {"sync", TRACE_SYNC},
    {"graph", TRACE_GRAPH},
    {"other-api", TRACE_OTHER_API},
    {"all", TRACE_ALL},
};

/* A buffer handed to CUPTI: this header, then the records CUPTI writes. */
struct buffer_header {
    struct buffer_header *next; /* pending list */
    size_t valid;
    uint8_t pad[BUFFER_ALIGN - sizeof(void *) - sizeof(size_t)];
};
_Static_assert(sizeof(struct buffer_header) == BUFFER_ALIGN, "records stay aligned");

/* ASYS_START_DATA: every process's start writes the options here */
ASYS_START_DATA static struct {
    int started; /* InitializeInjection ran; attached: asys_proc.cupti_pid */
    void *library;
    struct cupti_functions f;
    CUpti_SubscriberHandle subscriber;
    unsigned trace_set;
    int graph_level; /* --hggc-graph-trace=graph: one record per graph launch */
    int profiler_trigger; /* --capture-range=hggc-profiler-api */
    int profiler_traced; /* the profiler calls are in the trace set */
    uint64_t backtrace_ticks; /* 0: no stacks */
    uint32_t backtrace_depth;
    unsigned memory_kinds; /* --hggc-memory-usage: ASYS_HGGC_MEMORY_DEVICE | _PINNED */
    size_t buffer_size;
    struct buffer_header *pending; /* completed while their thread could not record */
    int completions_in_flight; /* atomic: buffers being converted right now */
} hggc;

/* Per thread: calls in progress and whether this thread is flushing. */
static __thread struct {
    uint32_t runtime_depth; /* runtime API calls in progress (driver calls inside are hidden) */
    uint32_t correlation; /* of the API call in progress, for graph node records */
    int flushing; /* inside this collector's own flush */
} hggc_tls ASYS_TLS;

/* ---- small helpers ------------------------------------------------------------ */

ASYS_START_CODE static unsigned parse_trace_set(const char *list)
{
    if (!list || !*list)
        return TRACE_ALL;
    unsigned set = 0;
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        for (size_t i = 0; i < sizeof trace_set_names / sizeof trace_set_names[0]; i++)
            if (strlen(trace_set_names[i].name) == n && !strncmp(p, trace_set_names[i].name, n))
                set |= trace_set_names[i].bit;
        p += n + (p[n] == ',');
    }
    return set;
}

/* The length of an API name without CUPTI's version and per-thread-stream
 * suffixes: "cudaMemcpyAsync_ptsz_v7000" -> strlen("cudaMemcpyAsync"). */
static size_t api_base_length(const char *name, size_t n)
{
    for (;;) {
        const char *u = memrchr(name, '_', n);
        if (!u)
            return n;
        size_t tail = n - (size_t)(u - name) - 1;
        int version = tail >= 2 && u[1] == 'v' && strspn(u + 2, "0123456789") >= tail - 1;
        int per_thread = tail == 4 && (!strncmp(u + 1, "ptsz", 4) || !strncmp(u + 1, "ptds", 4));
        if (!version && !per_thread)
            return n;
        n = (size_t)(u - name);
    }
}

static int contains(const char *name, size_t n, const char *part)
{
    size_t m = strlen(part);
    for (size_t i = 0; i + m <= n; i++)
        if (!memcmp(name + i, part, m))
            return 1;
    return 0;
}

/* The trace-set category of an API (by name, so it covers every CUPTI version). */
static unsigned api_category(const char *name, size_t n)
{
    if (contains(name, n, "Graphics")) /* graphics interop, not CUDA graphs */
        return TRACE_OTHER_API;
    if (contains(name, n, "Graph") || contains(name, n, "Capture"))
        return TRACE_GRAPH;
    if (contains(name, n, "Launch"))
        return TRACE_KERNEL_API;
    if (contains(name, n, "Synchronize") || contains(name, n, "WaitEvent") ||
        contains(name, n, "EventRecord") || contains(name, n, "EventQuery") ||
        contains(name, n, "StreamQuery") || contains(name, n, "StreamWaitValue"))
        return TRACE_SYNC;
    if (contains(name, n, "Memcpy") || contains(name, n, "Memset") || contains(name, n, "Malloc") ||
        contains(name, n, "Free") || contains(name, n, "HostAlloc") ||
        contains(name, n, "MemAlloc") || contains(name, n, "MemPrefetch") ||
        contains(name, n, "HostRegister") || contains(name, n, "HostUnregister"))
        return TRACE_MEMORY_API;
    return TRACE_OTHER_API;
}

/* ASIGHT_HGGC_TRACE_BLACKLIST=api1,api2: names with or without suffixes. */
static int blacklisted(const char *name, size_t n)
{
    const char *list = getenv("ASIGHT_HGGC_TRACE_BLACKLIST");
    for (const char *p = list ? list : ""; *p;) {
        p += strspn(p, " ,");
        size_t m = strcspn(p, ",");
        size_t item = m;
        while (item && p[item - 1] == ' ')
            item--;
        if (item && api_base_length(p, item) == n && !strncmp(p, name, n))
            return 1;
        p += m;
    }
    return 0;
}

/* ---- status records -------------------------------------------------------------- */

static void write_status(struct asys_thread *t, unsigned code, uint64_t value, const char *message)
{
    if (!t)
        return;
    size_t length = message ? strlen(message) : 0;
    if (length > ASYS_HGGC_STATUS_MESSAGE_MAX)
        length = ASYS_HGGC_STATUS_MESSAGE_MAX;
    uint32_t size = (uint32_t)((sizeof(struct asys_rec_hggc_status) + length + 7) & ~(size_t)7);
    uint32_t delta;
    struct asys_rec_hggc_status *r = asys_segment_reserve(&t->seg, size, asys_now(), &delta);
    if (!r)
        return;
    r->value = value;
    r->message_length = (uint32_t)length;
    r->reserved = 0;
    char *text = (char *)(r + 1);
    memset(text, 0, size - sizeof *r);
    if (length)
        memcpy(text, message, length);
    asys_segment_commit(&r->header, ASYS_REC_WORD(ASYS_REC_HGGC_STATUS, size / 8, code, delta));
}

/* "cuptiSubscribe: CUPTI_ERROR_...": which call failed and why. */
static void status_cupti_error(struct asys_thread *t, unsigned code, const char *call,
                               CUptiResult result)
{
    const char *text = NULL;
    if (!hggc.f.get_result_string || hggc.f.get_result_string(result, &text) != CUPTI_SUCCESS ||
        !text)
        text = "unknown CUPTI error";
    char message[256];
    char *end = message + sizeof message;
    char *p = asys_append_str(message, end, call);
    p = asys_append_str(p, end, ": ");
    asys_append_str(p, end, text);
    write_status(t, code, (uint64_t)result, message);
    asys_debug("hggc: %s", message);
}

/* ---- API callbacks ------------------------------------------------------------------ */

/* nvcc's launch stub calls __cudaLaunchKernel for a <<<>>> launch: shown as
 * cudaLaunchKernel.  Told by the callback id, not a string compare per call. */
static const char *api_display_name(int driver, CUpti_CallbackId cbid, const char *name)
{
    int stub = !driver && (cbid == CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000 ||
                           cbid == CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000);
    return stub ? "cudaLaunchKernel" : name ? name : "?";
}

/* A graph exec record: its instantiation (GRAPH_EXEC) or a launch of it (GRAPH_LAUNCH). */
static void write_exec_record(struct asys_thread *t, unsigned kind, uint32_t exec_id,
                              uint32_t graph_id, uint32_t correlation_id, uint64_t ts)
{
    uint32_t delta;
    struct asys_rec_hggc_graph_exec *r = asys_segment_reserve(&t->seg, sizeof *r, ts, &delta);
    if (!r)
        return;
    r->exec_id = exec_id;
    r->graph_id = graph_id;
    r->correlation_id = correlation_id;
    r->reserved = 0;
    asys_segment_commit(&r->header, ASYS_REC_WORD(kind, sizeof *r / 8, 0, delta));
}

static void write_graph_launch(struct asys_thread *t, CUpti_CallbackId cbid, int driver,
                               const CUpti_CallbackData *data, uint64_t end)
{
    CUgraphExec exec = NULL;
    if (!data->functionParams)
        return;
    if (!driver && (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000 ||
                    cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000))
        exec =
            (CUgraphExec)((const cudaGraphLaunch_v10000_params *)data->functionParams)->graphExec;
    else if (driver && (cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch ||
                        cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz))
        exec = ((const cuGraphLaunch_params *)data->functionParams)->hGraph;
    uint32_t exec_id = 0;
    if (!exec || hggc.f.get_graph_exec_id(exec, &exec_id) != CUPTI_SUCCESS)
        return;
    /* the graph is known from the exec's instantiation */
    write_exec_record(t, ASYS_REC_HGGC_GRAPH_LAUNCH, exec_id, 0, data->correlationId, end);
}

static void api_exit(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                     const CUpti_CallbackData *data, uint64_t start)
{
    uint64_t end = asys_now();
    struct asys_thread *t = asys_thread_enter_at(start);
    if (!t) {
        asys_thread_count_lost(sizeof(struct asys_rec_hggc_api));
        return;
    }
    int driver = domain == CUPTI_CB_DOMAIN_DRIVER_API;
    uint32_t name_id = asys_intern(t, api_display_name(driver, cbid, data->functionName));
    uint32_t chain = 0;
    uint64_t asked = 0;
    uint32_t cupti_kind = 0;
    /* --hggc-memory-usage: every allocation call keeps its stack */
    unsigned allocates =
        hggc.memory_kinds
            ? asys_hggc_allocation(driver, cbid, data->functionParams, &asked, &cupti_kind) &
                  hggc.memory_kinds
            : 0;
    int over_threshold = hggc.backtrace_ticks && end - start >= hggc.backtrace_ticks;
    if (allocates || over_threshold)
        chain = asys_callstack_capture(t, hggc.backtrace_depth);
    /* --python-backtrace=hggc: the calls over --hggcbacktrace's threshold, or all */
    if ((over_threshold || allocates || !hggc.backtrace_ticks) && asys_python_hggc_backtraces())
        asys_python_hggc_stack(t, data->correlationId, chain);
    int32_t result = data->functionReturnValue ? *(const int32_t *)data->functionReturnValue : 0;
    if (allocates && result != 0) {
        uint32_t device = UINT32_MAX, context = 0;
        if (data->context && hggc.f.get_device_id(data->context, &device) != CUPTI_SUCCESS)
            device = UINT32_MAX;
        if (data->context)
            hggc.f.get_context_id(data->context, &context);
        asys_hggc_failed_allocation(t, data->correlationId, asked, cupti_kind, result, device,
                                    context);
    }
    uint32_t delta;
    struct asys_rec_hggc_api *r = asys_segment_reserve(&t->seg, sizeof *r, end, &delta);
    if (r) {
        r->start_ticks = start;
        r->name_string_id = name_id;
        r->correlation_id = data->correlationId;
        r->result = result;
        r->cbid = cbid;
        r->callchain_id = chain;
        r->reserved = 0;
        asys_segment_commit(&r->header,
                            ASYS_REC_WORD(ASYS_REC_HGGC_API, sizeof *r / 8,
                                          driver ? ASYS_HGGC_DRIVER_API : ASYS_HGGC_RUNTIME_API,
                                          delta));
    }
    if (result == 0)
        write_graph_launch(t, cbid, driver, data, end);
    asys_thread_leave();
}

/* cudaProfilerStart/Stop and cuProfilerStart/Stop: +1 start, -1 stop, 0 other. */
static int profiler_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
        return cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000  ? 1
               : cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000 ? -1
                                                                         : 0;
    return cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart  ? 1
           : cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop ? -1
                                                            : 0;
}

/* --capture-range=hggc-profiler-api: a start call opens a window (the call
 * itself is inside it), a stop call closes it once recorded. */
static void profiler_edge(int edge, uint64_t ticks)
{
    struct asys_thread *t = asys_thread_enter();
    if (!t)
        return;
    if (edge > 0)
        asys_capture_begin(t, ticks, 0, NULL);
    else
        asys_capture_end(t, ticks);
    asys_thread_leave();
}

/* Enter: remembers the start in CUPTI's per-call slot (0: not recorded).
 * Driver calls a runtime call makes are that call's detail, and calls made
 * while asys itself runs are not the program's: neither is recorded, nor
 * calls outside the capture range. */
static void on_api(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                   const CUpti_CallbackData *data)
{
    int runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
    uint64_t *slot = data->correlationData;
    int edge = hggc.profiler_trigger && !asys_tls_busy ? profiler_call(domain, cbid) : 0;
    if (data->callbackSite == CUPTI_API_ENTER) {
        if (edge > 0)
            profiler_edge(edge, asys_now());
        int record = !asys_tls_busy && (runtime || !hggc_tls.runtime_depth) && asys_capturing() &&
                     (!edge || hggc.profiler_traced);
        hggc_tls.runtime_depth += (uint32_t)runtime;
        if (record) {
            hggc_tls.correlation = data->correlationId;
            asys_capture_note_correlation(data->correlationId);
        }
        if (slot)
            *slot = record ? asys_now() : 0;
        return;
    }
    if (runtime && hggc_tls.runtime_depth)
        hggc_tls.runtime_depth--;
    uint64_t start = slot ? *slot : 0;
    if (start) {
        hggc_tls.correlation = 0;
        api_exit(domain, cbid, data, start);
    }
    if (edge < 0)
        profiler_edge(edge, asys_now());
}

/* ---- resource callbacks: graph structure, flush at context destroy --------------------- */

static void write_graph_node(struct asys_thread *t, unsigned what, const CUpti_GraphData *g,
                             CUgraphNode other)
{
    uint64_t node_id = 0, other_id = 0;
    uint32_t graph_id = 0;
    if (!g->node || hggc.f.get_graph_node_id(g->node, &node_id) != CUPTI_SUCCESS)
        return;
    if (other && hggc.f.get_graph_node_id(other, &other_id) != CUPTI_SUCCESS)
        other_id = 0;
    if (g->graph && hggc.f.get_graph_id(g->graph, &graph_id) != CUPTI_SUCCESS)
        graph_id = 0;
    uint32_t delta;
    struct asys_rec_hggc_graph_node *r =
        asys_segment_reserve(&t->seg, sizeof *r, asys_now(), &delta);
    if (!r)
        return;
    r->node_id = node_id;
    r->other_node_id = other_id;
    r->graph_id = graph_id;
    r->correlation_id = hggc_tls.correlation;
    r->node_type = (uint32_t)g->nodeType;
    r->reserved = 0;
    asys_segment_commit(&r->header,
                        ASYS_REC_WORD(ASYS_REC_HGGC_GRAPH_NODE, sizeof *r / 8, what, delta));
}

static void write_graph_exec(struct asys_thread *t, const CUpti_GraphData *g)
{
    uint32_t exec_id = 0, graph_id = 0;
    if (!g->graphExec || hggc.f.get_graph_exec_id(g->graphExec, &exec_id) != CUPTI_SUCCESS)
        return;
    CUgraph source = g->originalGraph ? g->originalGraph : g->graph;
    if (source && hggc.f.get_graph_id(source, &graph_id) != CUPTI_SUCCESS)
        graph_id = 0;
    write_exec_record(t, ASYS_REC_HGGC_GRAPH_EXEC, exec_id, graph_id, hggc_tls.correlation,
                      asys_now());
}

static void flush_activity(uint32_t flag);

static void on_resource(CUpti_CallbackId cbid, const CUpti_ResourceData *data)
{
    if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
        flush_activity(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); /* its records go with it */
        return;
    }
    const CUpti_GraphData *g = data ? data->resourceDescriptor : NULL;
    if (!g)
        return;
    struct asys_thread *t = asys_thread_enter();
    if (!t)
        return;
    switch (cbid) {
    case CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED:
        write_graph_node(t, ASYS_HGGC_NODE_CREATED, g, NULL);
        break;
    case CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED:
        write_graph_node(t, ASYS_HGGC_NODE_CLONED, g, g->originalNode);
        break;
    case CUPTI_CBID_RESOURCE_GRAPHNODE_DEPENDENCY_CREATED:
        write_graph_node(t, ASYS_HGGC_NODE_DEPENDENCY, g, g->dependency);
        break;
    case CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED:
        write_graph_exec(t, g);
        break;
    default:
        break;
    }
    asys_thread_leave();
}

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void *cbdata)
{
    (void)userdata;
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API)
        on_api(domain, cbid, cbdata);
    else if (domain == CUPTI_CB_DOMAIN_RESOURCE)
        on_resource(cbid, cbdata);
}

static void convert_buffer(struct asys_thread *t, struct buffer_header *b)
{
    uint8_t *records = (uint8_t *)(b + 1);
    CUpti_Activity *a = NULL;
    while (hggc.f.activity_get_next_record(records, b->valid, &a) == CUPTI_SUCCESS)
        asys_hggc_convert(t, a);
    free(b);
}

/* Buffers completed while their thread could not record (any order: records
 * carry their own times). */
static void convert_pending(struct asys_thread *t)
{
    struct buffer_header *b = __atomic_exchange_n(&hggc.pending, NULL, __ATOMIC_ACQ_REL);
    while (b) {
        struct buffer_header *next = b->next;
        convert_buffer(t, b);
        b = next;
    }
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    struct buffer_header *b = aligned_alloc(BUFFER_ALIGN, sizeof *b + hggc.buffer_size);
    *max_records = 0;
    *buffer = b ? (uint8_t *)(b + 1) : NULL;
    *size = b ? hggc.buffer_size : 0;
}

static void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream, uint8_t *buffer,
                                      size_t size, size_t valid)
{
    (void)context;
    (void)stream;
    (void)size;
    if (!buffer)
        return;
    __atomic_add_fetch(&hggc.completions_in_flight, 1, __ATOMIC_ACQ_REL);
    struct buffer_header *b = (struct buffer_header *)buffer - 1;
    b->valid = valid;
    struct asys_thread *t = NULL;
    int entered = 0;
    if (hggc_tls.flushing) { /* our own flush: this thread is already inside asys */
        t = asys_tls_thread ? asys_tls_thread : asys_thread_register(0);
    } else {
        t = asys_thread_enter();
        entered = t != NULL;
    }
    if (!t) { /* keep it for the next thread that can write */
        b->next = __atomic_load_n(&hggc.pending, __ATOMIC_RELAXED);
        while (!__atomic_compare_exchange_n(&hggc.pending, &b->next, b, 0, __ATOMIC_ACQ_REL,
                                            __ATOMIC_RELAXED))
            ;
    } else {
        convert_pending(t);
        convert_buffer(t, b);
        if (entered)
            asys_thread_leave();
    }
    __atomic_sub_fetch(&hggc.completions_in_flight, 1, __ATOMIC_ACQ_REL);
}

/* Process exit ends every other thread where it stands: buffers CUPTI handed
 * to another thread (its periodic flush) must be converted before that. */
static void wait_for_other_completions(void)
{
    for (int waited_ms = 0; waited_ms < 5000; waited_ms++) {
        if (!__atomic_load_n(&hggc.completions_in_flight, __ATOMIC_ACQUIRE))
            return;
        struct timespec pause = {0, 1000000};
        nanosleep(&pause, NULL);
    }
    asys_debug("hggc: a buffer conversion did not finish by exit");
}

/* Whether CUPTI was attached in this process, not in a parent that forked it
 * (a fork child inherits the state and the exit handler, not CUPTI's threads). */
static int attached_here(void)
{
    uint32_t pid = __atomic_load_n(&asys_proc.cupti_pid, __ATOMIC_ACQUIRE);
    return pid && pid == (uint32_t)getpid();
}

/* Flushes CUPTI's buffers from inside asys (busy): completions land here. */
static void flush_activity(uint32_t flag)
{
    if (!__atomic_load_n(&asys_proc.cupti_pid, __ATOMIC_ACQUIRE))
        return;
    int was_busy = asys_tls_busy;
    asys_tls_busy = 1;
    hggc_tls.flushing = 1;
    hggc.f.activity_flush_all(flag);
    hggc_tls.flushing = 0;
    struct asys_thread *t = asys_tls_thread;
    if (t)
        convert_pending(t);
    asys_tls_busy = was_busy;
}

/* CUPTI's clock: CLOCK_MONOTONIC ns, the time base every report maps to. */
static uint64_t CUPTIAPI monotonic_timestamp(void)
{
    return asys_monotonic_ns();
}

/* At exit: everything CUPTI holds, and how much it could not keep. */
static void hggc_at_exit(void)
{
    if (!attached_here())
        return; /* a fork child's: leave CUPTI alone */
    flush_activity(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    wait_for_other_completions();
    flush_activity(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); /* what they left pending */
    size_t dropped = 0;
    uint64_t teardown_frees, teardown_bytes;
    asys_hggc_frees_after_main(&teardown_frees, &teardown_bytes);
    if (hggc.f.activity_dropped(NULL, 0, &dropped) != CUPTI_SUCCESS)
        dropped = 0;
    if (!dropped && !teardown_frees)
        return;
    int was_busy = asys_tls_busy;
    asys_tls_busy = 1;
    struct asys_thread *t = asys_tls_thread ? asys_tls_thread : asys_thread_register(0);
    if (dropped)
        write_status(t, ASYS_HGGC_CUPTI_DROPPED, dropped, NULL);
    if (teardown_frees) {
        char bytes[24];
        asys_append_u64(bytes, bytes + sizeof bytes, teardown_bytes, 10);
        write_status(t, ASYS_HGGC_FREES_AFTER_MAIN, teardown_frees, bytes);
    }
    asys_tls_busy = was_busy;
}

/* ---- setup ----------------------------------------------------------------------------- */

static int resolve_cupti(void *lib, char *why, size_t why_size)
{
    struct {
        const char *name;
        void **slot;
    } table[] = {
#define F(field, symbol) {symbol, (void **)&hggc.f.field}
        F(subscribe, "cuptiSubscribe"),
        F(enable_domain, "cuptiEnableDomain"),
        F(enable_callback, "cuptiEnableCallback"),
        F(get_callback_name, "cuptiGetCallbackName"),
        F(activity_enable, "cuptiActivityEnable"),
        F(activity_register_callbacks, "cuptiActivityRegisterCallbacks"),
        F(activity_get_next_record, "cuptiActivityGetNextRecord"),
        F(activity_flush_all, "cuptiActivityFlushAll"),
        F(activity_flush_period, "cuptiActivityFlushPeriod"),
        F(activity_dropped, "cuptiActivityGetNumDroppedRecords"),
        F(register_timestamp, "cuptiActivityRegisterTimestampCallback"),
        F(get_version, "cuptiGetVersion"),
        F(get_result_string, "cuptiGetResultString"),
        F(get_graph_id, "cuptiGetGraphId"),
        F(get_graph_node_id, "cuptiGetGraphNodeId"),
        F(get_graph_exec_id, "cuptiGetGraphExecId"),
        F(get_stream_id_ex, "cuptiGetStreamIdEx"),
        F(get_context_id, "cuptiGetContextId"),
        F(get_device_id, "cuptiGetDeviceId"),
#undef F
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        *table[i].slot = dlsym(lib, table[i].name);
        if (!*table[i].slot) {
            char *end = why + why_size;
            asys_append_str(asys_append_str(why, end, "CUPTI lacks "), end, table[i].name);
            return -1;
        }
    }
    return 0;
}

/* Turns off the API callbacks outside the trace set or on the blacklist. */
static void filter_api_callbacks(CUpti_CallbackDomain domain, uint32_t known_count)
{
    uint32_t misses = 0;
    for (uint32_t cbid = 1; cbid < MAX_CBID_SCAN; cbid++) {
        const char *name = NULL;
        if (hggc.f.get_callback_name(domain, cbid, &name) != CUPTI_SUCCESS || !name) {
            if (cbid >= known_count && ++misses > 64) /* past the last id this CUPTI knows */
                break;
            continue;
        }
        misses = 0;
        size_t n = api_base_length(name, strlen(name));
        if (!(hggc.trace_set & api_category(name, n)) || blacklisted(name, n))
            hggc.f.enable_callback(0, hggc.subscriber, domain, cbid);
    }
}

static void enable_activity(struct asys_thread *t, CUpti_ActivityKind kind, const char *what)
{
    CUptiResult rc = hggc.f.activity_enable(kind);
    if (rc != CUPTI_SUCCESS && rc != CUPTI_ERROR_NOT_COMPATIBLE)
        status_cupti_error(t, ASYS_HGGC_CUPTI_ERROR, what, rc);
}

static void enable_activities(struct asys_thread *t)
{
    unsigned set = hggc.trace_set;
    /* inventory: devices, contexts, streams; and CUPTI's own cost */
    enable_activity(t, CUPTI_ACTIVITY_KIND_DEVICE, "cuptiActivityEnable(DEVICE)");
    enable_activity(t, CUPTI_ACTIVITY_KIND_CONTEXT, "cuptiActivityEnable(CONTEXT)");
    enable_activity(t, CUPTI_ACTIVITY_KIND_STREAM, "cuptiActivityEnable(STREAM)");
    enable_activity(t, CUPTI_ACTIVITY_KIND_OVERHEAD, "cuptiActivityEnable(OVERHEAD)");
    if (set & TRACE_GRAPH && hggc.graph_level)
        enable_activity(t, CUPTI_ACTIVITY_KIND_GRAPH_TRACE, "cuptiActivityEnable(GRAPH_TRACE)");
    if (set & TRACE_KERNEL_ACTIVITY)
        enable_activity(t, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                        "cuptiActivityEnable(CONCURRENT_KERNEL)");
    if (set & TRACE_MEMORY_ACTIVITY) {
        enable_activity(t, CUPTI_ACTIVITY_KIND_MEMCPY, "cuptiActivityEnable(MEMCPY)");
        enable_activity(t, CUPTI_ACTIVITY_KIND_MEMCPY2, "cuptiActivityEnable(MEMCPY2)");
        enable_activity(t, CUPTI_ACTIVITY_KIND_MEMSET, "cuptiActivityEnable(MEMSET)");
        enable_activity(t, CUPTI_ACTIVITY_KIND_MEMORY2, "cuptiActivityEnable(MEMORY2)");
    }
    if (set & TRACE_SYNC) {
        enable_activity(t, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
                        "cuptiActivityEnable(SYNCHRONIZATION)");
        enable_activity(t, CUPTI_ACTIVITY_KIND_CUDA_EVENT, "cuptiActivityEnable(CUDA_EVENT)");
    }
}

static void enable_callbacks(void)
{
    CUpti_SubscriberHandle s = hggc.subscriber;
    if (hggc.trace_set &
        (TRACE_KERNEL_API | TRACE_MEMORY_API | TRACE_SYNC | TRACE_GRAPH | TRACE_OTHER_API)) {
        hggc.f.enable_domain(1, s, CUPTI_CB_DOMAIN_RUNTIME_API);
        hggc.f.enable_domain(1, s, CUPTI_CB_DOMAIN_DRIVER_API);
        filter_api_callbacks(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE);
        filter_api_callbacks(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE);
    }
    if (hggc.profiler_trigger) { /* the capture range's triggers, traced or not */
        hggc.f.enable_callback(1, s, CUPTI_CB_DOMAIN_RUNTIME_API,
                               CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000);
        hggc.f.enable_callback(1, s, CUPTI_CB_DOMAIN_RUNTIME_API,
                               CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000);
        hggc.f.enable_callback(1, s, CUPTI_CB_DOMAIN_DRIVER_API,
                               CUPTI_DRIVER_TRACE_CBID_cuProfilerStart);
        hggc.f.enable_callback(1, s, CUPTI_CB_DOMAIN_DRIVER_API,
                               CUPTI_DRIVER_TRACE_CBID_cuProfilerStop);
    }
    hggc.f.enable_callback(1, s, CUPTI_CB_DOMAIN_RESOURCE,
                           CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
    if (hggc.trace_set & TRACE_GRAPH) {
        static const CUpti_CallbackId graph_ids[] = {
            CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED,
            CUPTI_CBID_RESOURCE_GRAPHNODE_DEPENDENCY_CREATED,
            CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED};
        for (size_t i = 0; i < sizeof graph_ids / sizeof graph_ids[0]; i++)
            hggc.f.enable_callback(1, s, CUPTI_CB_DOMAIN_RESOURCE, graph_ids[i]);
    }
}

/* At process start: the options (CUPTI is attached later, when CUDA
 * initializes and calls InitializeInjection). */
ASYS_START_CODE int asys_hggc_init(void)
{
    const char *set = asys_option_text("ASYS_HGGC_TRACE_SET");
    const char *graph = asys_option_text("ASYS_HGGC_GRAPH_TRACE");
    uint64_t backtrace_ns, depth;
    if (!set || !graph || asys_option_u64("ASYS_HGGC_BT_NS", &backtrace_ns) != 0 ||
        asys_option_u64("ASYS_HGGC_BT_DEPTH", &depth) != 0)
        return -1;
    hggc.trace_set = parse_trace_set(set);
    hggc.graph_level = !strcmp(graph, "graph");
    hggc.profiler_trigger = asys_capture_mode() == ASYS_CAPTURE_PROFILER_CALLS;
    hggc.profiler_traced =
        (hggc.trace_set & TRACE_OTHER_API) && !blacklisted("cudaProfilerStart", 17);
    hggc.backtrace_ticks = (uint64_t)((double)backtrace_ns * asys_proc.ticks_per_ns);
    hggc.backtrace_depth =
        (uint32_t)(depth > ASYS_CALLCHAIN_MAX_DEPTH ? ASYS_CALLCHAIN_MAX_DEPTH : depth);
    const char *memory = asys_option_text("ASYS_HGGC_MEMORY_USAGE");
    hggc.memory_kinds = memory ? (strstr(memory, "device") ? ASYS_HGGC_MEMORY_DEVICE : 0) |
                                     (strstr(memory, "pinned") ? ASYS_HGGC_MEMORY_PINNED : 0)
                               : 0;
    /* whole multiples of the alignment, as aligned_alloc wants */
    hggc.buffer_size =
        asys_env_u64("ASYS_HGGC_BUFFER_SIZE", DEFAULT_BUFFER_SIZE) & ~(size_t)(BUFFER_ALIGN - 1);
    if (hggc.buffer_size < 4096)
        hggc.buffer_size = 4096;
    return 0;
}

static void attach(struct asys_thread *t)
{
    char why[512] = "";
    void *lib = asys_cupti_open(why, sizeof why);
    if (!lib || resolve_cupti(lib, why, sizeof why) != 0) {
        write_status(t, ASYS_HGGC_CUPTI_UNAVAILABLE, 0, why);
        asys_debug("hggc: CUPTI unavailable: %s", why);
        return;
    }
    hggc.library = lib;
    CUptiResult rc = hggc.f.subscribe(&hggc.subscriber, on_callback, NULL);
    if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
        status_cupti_error(t, ASYS_HGGC_SUBSCRIBER_BUSY, "cuptiSubscribe", rc);
        return;
    }
    if (rc != CUPTI_SUCCESS) { /* e.g. no driver: CUPTI is there but cannot work */
        status_cupti_error(t, ASYS_HGGC_CUPTI_UNAVAILABLE, "cuptiSubscribe", rc);
        return;
    }
    rc = hggc.f.register_timestamp(monotonic_timestamp);
    if (rc != CUPTI_SUCCESS) /* times would be on another clock: say so, keep going */
        status_cupti_error(t, ASYS_HGGC_CUPTI_ERROR, "cuptiActivityRegisterTimestampCallback", rc);
    rc = hggc.f.activity_register_callbacks(buffer_requested, buffer_completed);
    if (rc != CUPTI_SUCCESS) {
        status_cupti_error(t, ASYS_HGGC_CUPTI_ERROR, "cuptiActivityRegisterCallbacks", rc);
        return;
    }
    __atomic_store_n(&asys_proc.cupti_pid, (uint32_t)getpid(), __ATOMIC_RELEASE);
    enable_callbacks();
    enable_activities(t);
    hggc.f.activity_flush_period(
        (uint32_t)asys_env_u64("ASYS_HGGC_FLUSH_PERIOD_MS", DEFAULT_FLUSH_PERIOD_MS));
    asys_at_exit(hggc_at_exit);
    uint32_t version = 0;
    hggc.f.get_version(&version);
    write_status(t, ASYS_HGGC_ATTACHED, version, NULL);
}

/* CUPTI's ids of objects a program names with NVTX (hgtx_naming.c), so that
 * the names reach the PPU rows; -1 while CUPTI is not attached here. */
ASYS_RUNTIME_API int asys_hggc_stream_id(const void *stream, uint32_t *id)
{
    if (!attached_here())
        return -1;
    return hggc.f.get_stream_id_ex(NULL, (CUstream)(uintptr_t)stream, 0, id) == CUPTI_SUCCESS ? 0
                                                                                              : -1;
}

int asys_hggc_context_id(const void *context, uint32_t *id)
{
    if (!attached_here() || !context)
        return -1;
    return hggc.f.get_context_id((CUcontext)(uintptr_t)context, id) == CUPTI_SUCCESS ? 0 : -1;
}

/* Called by the CUDA driver (and simppu) after loading CUDA_INJECTION64_PATH. */
ASYS_EXPORT int InitializeInjection(void)
{
    asys_inject_init();
    if (!asys_proc.enabled || !(asys_proc.features & ASYS_FEATURE_HGGC))
        return 1;
    if (__atomic_exchange_n(&hggc.started, 1, __ATOMIC_ACQ_REL))
        return 1;
    struct asys_thread *t = asys_thread_enter();
    int was_busy = asys_tls_busy;
    asys_tls_busy = 1; /* CUPTI's own libc calls are not the program's */
    attach(t);
    asys_tls_busy = was_busy;
    if (t)
        asys_thread_leave();
    return 1;
}
