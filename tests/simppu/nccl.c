/* simppu libnccl.so.2: a stand-in for NCCL 2.28 on the simulated PPU.
 *
 * ABI-compatible with the toolkit's nccl.h: a program built against the
 * real header and library runs on it unchanged (simppu-run puts it first on
 * the library path).  It moves no data and its ranks do not wait for each
 * other; what it does exactly as NCCL 2.28 does is drive the profiler
 * plugin: the same calls in the same order, from the same threads, with the
 * same descriptors (see nccl_profiler.c for the loader):
 *
 *   a collective call:  GroupApi start, GroupStartApiStop, CollApi start/stop
 *                       (P2pApi for send/recv); then, at the outermost group
 *                       end, GroupEndApiStart and per communicator and plan:
 *                       KernelLaunch start, the kernel launch (cudaLaunchKernel
 *                       on the given stream, a simulated kernel), KernelLaunch
 *                       stop, Group start, Coll/P2p starts, the proxy ops
 *                       posted, Coll/P2p stops, Group stop; GroupApi stop.
 *   the proxy thread:   ProxyCtrl (sleep/wakeup, append, idle/active),
 *                       ProxyOp start at append, InProgress, ProxyStep
 *                       start, states, stop (at most NCCL_STEPS in flight per
 *                       op), ProxyOp stop; KernelCh start/stop (GPU timer:
 *                       CLOCK_REALTIME ns of the simulated kernel).
 *
 * What it simulates (SIMPPU_NCCL_CHANNELS, _CHUNK_BYTES, _LATENCY_NS, _GBPS):
 * every collective uses all channels (default 2), the ring algorithm and the
 * SIMPLE protocol.  Per channel it moves part = ceil(bytes / channels)
 * (bytes: count x type size as the Coll event reports it) in
 * chunks = max(1, ceil(part / chunk)) chunks of step_bytes = ceil(part / chunks);
 * a rank sends to rank+1 and receives from rank-1.  Steps per op:
 * AllReduce 2(n-1) x chunks, AllGather and ReduceScatter (n-1) x chunks,
 * Broadcast and Reduce chunks (a chain: the root receives nothing in a
 * Broadcast, the rank before the root sends nothing; reversed for Reduce).
 * Send and Recv use one channel (peer mod channels), chunks steps of their
 * bytes.  One rank: no proxy ops.  Every peer is treated as reached through
 * the network transport, so the proxy path always runs.  A task lasts
 * latency + step_bytes x steps / GB/s inside its plan's kernel; the tasks
 * of a plan run one after the other. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "nccl_internal.h"

#define COMM_MAGIC 0x6e63636cu

struct nccl_settings nccl_settings;
static pthread_once_t settings_once = PTHREAD_ONCE_INIT;

/* simppu_next_launch (simppu's libcudart.so.13), found at run time */
typedef void (*next_launch_fn)(uint64_t, void (*)(void *, uint64_t, uint64_t), void *);
static next_launch_fn next_launch;

/* ncclProfilerApiState and ncclGroupDepth: per thread, as in NCCL */
static __thread int group_depth;
static __thread struct ncclComm *group_head;
static __thread struct {
    int mask;
    void *group_api, *coll_api, *p2p_api;
    int depth;
    int state; /* 0 none, 1 started, 2 stopped, 3 reset */
} api;

uint64_t nccl_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void nccl_sleep_until(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

static long env_long(const char *name, long fallback, long lo, long hi)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return fallback;
    long n = strtol(v, NULL, 10);
    return n < lo ? lo : n > hi ? hi : n;
}

static void read_settings(void)
{
    nccl_settings.channels = (int)env_long("SIMPPU_NCCL_CHANNELS", 2, 1, MAX_CHANNELS);
    nccl_settings.chunk_bytes = (int)env_long("SIMPPU_NCCL_CHUNK_BYTES", 131072, 64, 1 << 30);
    nccl_settings.latency_ns = (uint64_t)env_long("SIMPPU_NCCL_LATENCY_NS", 4000, 0, 1000000000);
    nccl_settings.gbps = (double)env_long("SIMPPU_NCCL_GBPS", 50, 1, 100000);
    nccl_settings.net_events = (int)env_long("SIMPPU_NCCL_NET_EVENTS", 0, 0, 1);
    struct timespec rt, mono;
    clock_gettime(CLOCK_REALTIME, &rt);
    clock_gettime(CLOCK_MONOTONIC, &mono);
    nccl_settings.realtime_offset_ns =
        ((int64_t)rt.tv_sec - (int64_t)mono.tv_sec) * 1000000000 + (rt.tv_nsec - mono.tv_nsec);
    next_launch = (next_launch_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "simppu_next_launch");
}

static void settings(void)
{
    pthread_once(&settings_once, read_settings);
}

const char *nccl_func_name(int func)
{
    static const char *const names[FUNC_COUNT] = {
        "Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce", "SendRecv",
        "Send",      "Recv",   "AlltoAll",  "Scatter",       "Gather"};
    return func >= 0 && func < FUNC_COUNT ? names[func] : "Invalid";
}

static const char *datatype_name(int type)
{
    static const char *const names[] = {"ncclInt8",     "Unknown",        "ncclInt32",
                                        "ncclUint32",   "ncclInt64",      "ncclUint64",
                                        "ncclFloat16",  "ncclFloat32",    "ncclFloat64",
                                        "ncclBfloat16", "ncclFloat8e4m3", "ncclFloat8e5m2"};
    return type >= 0 && type < (int)(sizeof names / sizeof *names) ? names[type] : "Unknown";
}

static size_t type_size(int type)
{
    static const size_t sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
    return type >= 0 && type < (int)(sizeof sizes / sizeof *sizes) ? sizes[type] : 0;
}

/* ---- the simulated kernels: one per function, NCCL's naming ---- */
static char kernel_stubs[FUNC_COUNT + 1];
static pthread_once_t kernels_once = PTHREAD_ONCE_INIT;
extern void **__cudaRegisterFatBinary(void *fat_cubin);
extern void __cudaRegisterFatBinaryEnd(void **handle);
extern void __cudaRegisterFunction(void **handle, const char *host_fun, char *device_fun,
                                   const char *device_name, int thread_limit, uint3 *tid,
                                   uint3 *bid, dim3 *block, dim3 *grid, int *warp_size);

static void register_kernels(void)
{
    static struct {
        int magic, version;
        const void *data;
        void *filename;
    } wrapper = {0x466243b1, 1, NULL, NULL};
    void **handle = __cudaRegisterFatBinary(&wrapper);
    for (int f = 0; f <= FUNC_COUNT; f++) {
        char name[64], mangled[160];
        if (f == FUNC_COUNT)
            snprintf(name, sizeof name, "ncclDevKernel_Generic");
        else if (f == FUNC_SEND || f == FUNC_RECV || f == FUNC_SENDRECV)
            snprintf(name, sizeof name, "ncclDevKernel_SendRecv");
        else
            snprintf(name, sizeof name, "ncclDevKernel_%s_RING_SIMPLE", nccl_func_name(f));
        /* void NAME(ncclDevKernelArgsStorage<4096ul>) */
        snprintf(mangled, sizeof mangled, "_Z%zu%s24ncclDevKernelArgsStorageILm4096EE",
                 strlen(name), name);
        __cudaRegisterFunction(handle, &kernel_stubs[f], mangled, mangled, -1, NULL, NULL, NULL,
                               NULL, NULL);
    }
    __cudaRegisterFatBinaryEnd(handle);
}

/* ---- communicators ---- */
static int valid(const struct ncclComm *c)
{
    return c && c->magic == COMM_MAGIC;
}

static uint64_t hash_id(const ncclUniqueId *id)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a over the id's bytes */
    for (int i = 0; i < NCCL_UNIQUE_ID_BYTES; i++)
        h = (h ^ (uint8_t)id->internal[i]) * 0x100000001b3ull;
    return h;
}

static void no_log(int level, unsigned long flags, const char *file, int line, const char *fmt, ...)
{
    (void)level, (void)flags, (void)file, (void)line, (void)fmt;
}

static ncclResult_t comm_new(ncclComm_t *out, int nranks, const ncclUniqueId *id, int rank,
                             const char *name)
{
    settings();
    pthread_once(&kernels_once, register_kernels);
    if (!out || nranks < 1 || rank < 0 || rank >= nranks)
        return ncclInvalidArgument;
    struct ncclComm *c = calloc(1, sizeof *c);
    if (!c)
        return ncclSystemError;
    c->magic = COMM_MAGIC;
    c->rank = rank;
    c->nranks = nranks;
    c->channels = nccl_settings.channels;
    c->hash = hash_id(id);
    if (cudaGetDevice(&c->device) != cudaSuccess)
        c->device = 0;
    if (name) {
        snprintf(c->name, sizeof c->name, "%s", name);
        c->has_name = 1;
    }
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->cond, NULL);
    nccl_profiler_load();
    if (nccl_profiler &&
        nccl_profiler->init(&c->profiler_ctx, c->hash, &nccl_profiler_mask,
                            c->has_name ? c->name : NULL, 1, nranks, rank, no_log) != PCCL_SUCCESS)
        c->profiler_ctx = NULL; /* NCCL continues without it */
    if (proxy_start(c) != 0) {
        free(c);
        return ncclSystemError;
    }
    *out = c;
    return ncclSuccess;
}

static void comm_free(struct ncclComm *c)
{
    proxy_stop(c);
    if (nccl_profiler && c->profiler_ctx)
        nccl_profiler->finalize(c->profiler_ctx);
    nccl_profiler_unload();
    c->magic = 0;
    free(c->tasks);
    free(c);
}

/* ---- the profiler calls of the API side (NCCL's src/plugin/profiler.cc) ---- */
#define GROUP_API_MASK \
    (PCCL_EV_GROUP_API | PCCL_EV_P2P_API | PCCL_EV_COLL_API | PCCL_EV_KERNEL_LAUNCH | \
     PCCL_EV_GROUP | PCCL_EV_COLL | PCCL_EV_P2P | PCCL_EV_PROXY_OP | PCCL_EV_PROXY_STEP | \
     PCCL_EV_KERNEL_CH | PCCL_EV_NET)
#define TASK_MASK (PCCL_EV_PROXY_OP | PCCL_EV_PROXY_STEP | PCCL_EV_KERNEL_CH | PCCL_EV_NET)

static void group_api_start(struct ncclComm *c)
{
    api.mask = __atomic_load_n(&nccl_profiler_mask, __ATOMIC_RELAXED);
    if (nccl_profiler && (api.mask & GROUP_API_MASK) && api.depth == 0) {
        struct pccl_descr_v5 d;
        memset(&d, 0, sizeof d);
        d.type = PCCL_EV_GROUP_API;
        d.group_api.depth = group_depth;
        nccl_profiler->start(c->profiler_ctx, &api.group_api, &d);
        api.depth = group_depth;
        api.state = 1;
    }
}

static void group_api_state(int state)
{
    int record = 0;
    if (state == PCCL_ST_GROUP_START_API_STOP && api.state == 1) {
        api.state = 2;
        record = 1;
    } else if (state == PCCL_ST_GROUP_END_API_START && api.state == 2) {
        api.state = 3;
        record = 1;
    }
    if (nccl_profiler && api.group_api && record)
        nccl_profiler->record(api.group_api, state, NULL);
}

static void group_api_stop(void)
{
    if (nccl_profiler && api.group_api && api.depth == 0) {
        nccl_profiler->stop(api.group_api);
        api.group_api = NULL;
    }
}

/* ---- tasks ---- */

/* What a task simulates (the header's rules). */
static void task_shape(const struct ncclComm *c, struct task *t)
{
    size_t bytes =
        t->count *
        (t->func == FUNC_ALLGATHER || t->func == FUNC_BROADCAST ? 1 : type_size(t->datatype));
    int n = c->nranks, chunk = nccl_settings.chunk_bytes;
    t->send_steps = t->recv_steps = 0;
    t->send_peer = (c->rank + 1) % n;
    t->recv_peer = (c->rank + n - 1) % n;
    if (t->is_p2p) {
        t->channels = 1;
        t->channel0 = t->root_or_peer % c->channels;
        size_t chunks = bytes ? (bytes + (size_t)chunk - 1) / (size_t)chunk : 1;
        t->step_bytes = (int)(bytes ? (bytes + chunks - 1) / chunks : 0);
        if (t->root_or_peer != c->rank) {
            if (t->func == FUNC_SEND) {
                t->send_steps = (int)chunks;
                t->send_peer = t->root_or_peer;
            } else {
                t->recv_steps = (int)chunks;
                t->recv_peer = t->root_or_peer;
            }
        }
    } else {
        t->channels = c->channels;
        t->channel0 = 0;
        size_t part = (bytes + (size_t)c->channels - 1) / (size_t)c->channels;
        size_t chunks = part > (size_t)chunk ? (part + (size_t)chunk - 1) / (size_t)chunk : 1;
        t->step_bytes = (int)((part + chunks - 1) / chunks);
        int factor = 0, sends = n > 1, recvs = n > 1;
        switch (t->func) {
        case FUNC_ALLREDUCE:
            factor = 2 * (n - 1);
            break;
        case FUNC_ALLGATHER:
        case FUNC_REDUCESCATTER:
            factor = n - 1;
            break;
        case FUNC_BROADCAST:
            factor = 1;
            recvs = recvs && c->rank != t->root_or_peer;
            sends = sends && c->rank != (t->root_or_peer + n - 1) % n;
            break;
        case FUNC_REDUCE:
            factor = 1;
            sends = sends && c->rank != t->root_or_peer;
            recvs = recvs && c->rank != (t->root_or_peer + 1) % n;
            break;
        }
        t->send_steps = sends ? factor * (int)chunks : 0;
        t->recv_steps = recvs ? factor * (int)chunks : 0;
    }
    int steps = t->send_steps > t->recv_steps ? t->send_steps : t->recv_steps;
    t->duration_ns =
        nccl_settings.latency_ns + (uint64_t)((double)t->step_bytes * steps / nccl_settings.gbps);
}

static ncclResult_t task_add(struct ncclComm *c, const struct task *t)
{
    if (c->ntasks == c->task_cap) {
        int cap = c->task_cap ? 2 * c->task_cap : 16;
        struct task *bigger = realloc(c->tasks, (size_t)cap * sizeof *bigger);
        if (!bigger)
            return ncclSystemError;
        c->tasks = bigger;
        c->task_cap = cap;
    }
    c->tasks[c->ntasks++] = *t;
    if (!c->in_group) {
        c->in_group = 1;
        c->group_next = group_head;
        group_head = c;
    }
    return ncclSuccess;
}

/* ---- launching a group: per communicator, plans of at most MAX_PLAN_TASKS ---- */
static void kernel_observed(void *arg, uint64_t start, uint64_t end)
{
    struct plan *p = arg;
    struct ncclComm *c = p->comm;
    pthread_mutex_lock(&c->lock);
    p->start_ns = start;
    p->end_ns = end;
    p->decided = 1;
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
}

static void task_event_start(struct ncclComm *c, struct plan *p, struct task *t)
{
    t->handle = NULL;
    if (!nccl_profiler)
        return;
    struct pccl_descr_v5 d;
    memset(&d, 0, sizeof d);
    d.rank = c->rank;
    d.parent = t->api;
    if (!t->is_p2p) {
        if (!(t->mask & (PCCL_EV_COLL | TASK_MASK)))
            return;
        d.type = PCCL_EV_COLL;
        d.coll.parent_group = p->group;
        d.coll.seq = c->seq[t->func];
        d.coll.func = nccl_func_name(t->func);
        d.coll.send = t->send;
        d.coll.recv = t->recv;
        d.coll.count = t->count;
        d.coll.root = t->root_or_peer;
        d.coll.datatype = datatype_name(t->datatype);
        d.coll.channels = (uint8_t)t->channels;
        d.coll.warps = 16;
        d.coll.algo = "RING";
        d.coll.proto = "SIMPLE";
    } else {
        if (!(t->mask & (PCCL_EV_P2P | TASK_MASK)))
            return;
        d.type = PCCL_EV_P2P;
        d.p2p.parent_group = p->group;
        d.p2p.func = nccl_func_name(t->func);
        d.p2p.buff = t->func == FUNC_SEND ? (void *)(uintptr_t)t->send : t->recv;
        d.p2p.count = t->count;
        d.p2p.datatype = datatype_name(t->datatype);
        d.p2p.peer = t->root_or_peer;
        d.p2p.channels = (uint8_t)t->channels;
    }
    nccl_profiler->start(c->profiler_ctx, &t->handle, &d);
}

static ncclResult_t launch_plan(struct ncclComm *c, struct task *tasks, int ntasks)
{
    struct plan *p = calloc(1, sizeof *p);
    if (!p)
        return ncclSystemError;
    p->tasks = malloc((size_t)ntasks * sizeof *p->tasks);
    if (!p->tasks) {
        free(p);
        return ncclSystemError;
    }
    memcpy(p->tasks, tasks, (size_t)ntasks * sizeof *tasks);
    p->comm = c;
    p->refs = 2;
    p->ntasks = ntasks;
    p->stream = tasks[0].stream;
    /* one kernel per function; send and receive share one; a mixed plan the generic */
#define KERNEL_OF(f) ((f) == FUNC_SEND || (f) == FUNC_RECV ? FUNC_SENDRECV : (f))
    int func = KERNEL_OF(tasks[0].func);
    for (int i = 0; i < ntasks; i++) {
        struct task *t = &p->tasks[i];
        task_shape(c, t);
        t->offset_ns = p->kernel_ns;
        p->kernel_ns += t->duration_ns;
        if (t->channel0 + t->channels > p->channels)
            p->channels = t->channel0 + t->channels;
        if (KERNEL_OF(t->func) != func)
            func = FUNC_COUNT;
    }
    cudaSetDevice(c->device);
    /* ncclLaunchKernel */
    int mask = 0;
    void *group_api = NULL;
    for (int i = 0; i < ntasks && !mask; i++) {
        mask = p->tasks[i].mask;
        group_api = p->tasks[i].group_api;
    }
    if (nccl_profiler && (mask & PCCL_EV_KERNEL_LAUNCH)) {
        struct pccl_descr_v5 d;
        memset(&d, 0, sizeof d);
        d.type = PCCL_EV_KERNEL_LAUNCH;
        d.parent = group_api;
        d.kernel_launch.stream = p->stream;
        nccl_profiler->start(c->profiler_ctx, &p->kernel_launch, &d);
    }
    if (next_launch)
        next_launch(p->kernel_ns, kernel_observed, p);
    else
        kernel_observed(p, 0, 0);
    dim3 grid = {(unsigned)p->channels, 1, 1}, block = {512, 1, 1};
    void *args[1] = {NULL};
    cudaError_t launched = cudaLaunchKernel(&kernel_stubs[func], grid, block, args, 0, p->stream);
    if (nccl_profiler && p->kernel_launch)
        nccl_profiler->stop(p->kernel_launch);
    /* hostStreamPlanTask, called directly after the launch */
    if (nccl_profiler && (mask & (PCCL_EV_GROUP | PCCL_EV_COLL | PCCL_EV_P2P | TASK_MASK))) {
        struct pccl_descr_v5 d;
        memset(&d, 0, sizeof d);
        d.type = PCCL_EV_GROUP;
        nccl_profiler->start(c->profiler_ctx, &p->group, &d);
    }
    for (int i = 0; i < ntasks; i++) {
        task_event_start(c, p, &p->tasks[i]);
        if (!p->tasks[i].is_p2p)
            __atomic_fetch_add(&c->seq[p->tasks[i].func], 1, __ATOMIC_RELAXED);
    }
    proxy_post(c, p); /* the proxy thread frees it */
    for (int i = 0; i < ntasks; i++)
        if (nccl_profiler && p->tasks[i].handle)
            nccl_profiler->stop(p->tasks[i].handle);
    if (nccl_profiler && p->group)
        nccl_profiler->stop(p->group);
    plan_release(p);
    return launched == cudaSuccess ? ncclSuccess : ncclUnhandledCudaError;
}

void plan_release(struct plan *p)
{
    if (__atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        free(p->tasks);
        free(p);
    }
}

static ncclResult_t launch_group(void)
{
    ncclResult_t rc = ncclSuccess;
    int device = 0;
    cudaGetDevice(&device);
    struct ncclComm *c = group_head;
    group_head = NULL;
    while (c) {
        struct ncclComm *next = c->group_next;
        for (int i = 0; i < c->ntasks; i += MAX_PLAN_TASKS) {
            int n = c->ntasks - i < MAX_PLAN_TASKS ? c->ntasks - i : MAX_PLAN_TASKS;
            ncclResult_t r = launch_plan(c, c->tasks + i, n);
            if (r != ncclSuccess)
                rc = r;
        }
        c->ntasks = 0;
        c->in_group = 0;
        c->group_next = NULL;
        c = next;
    }
    cudaSetDevice(device);
    return rc;
}

static ncclResult_t group_end_internal(void)
{
    ncclResult_t rc = ncclSuccess;
    if (group_depth == 0)
        return ncclInvalidUsage;
    if (api.depth > 0)
        api.depth--;
    if (api.depth == 0)
        group_api_state(PCCL_ST_GROUP_END_API_START);
    if (--group_depth == 0)
        rc = launch_group();
    group_api_stop();
    return rc;
}

/* ncclEnqueueCheck + collTaskAppend / p2pTaskAppend */
static ncclResult_t enqueue(struct ncclComm *c, int func, const void *send, void *recv,
                            size_t count, ncclDataType_t datatype, int root_or_peer,
                            cudaStream_t stream)
{
    if (!valid(c))
        return ncclInvalidArgument;
    if ((int)datatype < 0 || (int)datatype >= ncclNumTypes)
        return ncclInvalidArgument;
    int p2p = func == FUNC_SEND || func == FUNC_RECV;
    if ((p2p || func == FUNC_BROADCAST || func == FUNC_REDUCE) &&
        (root_or_peer < 0 || root_or_peer >= c->nranks))
        return ncclInvalidArgument;
    if (api.depth > 0)
        api.depth++;
    group_depth++;
    group_api_start(c);
    group_api_state(PCCL_ST_GROUP_START_API_STOP);
    struct task t;
    memset(&t, 0, sizeof t);
    t.func = func;
    t.is_p2p = p2p;
    t.count = count;
    t.datatype = datatype;
    if (func == FUNC_ALLGATHER || func == FUNC_BROADCAST) { /* as NCCL schedules them */
        t.count = count * type_size(datatype);
        t.datatype = ncclInt8;
    }
    t.root_or_peer = root_or_peer;
    t.send = send;
    t.recv = recv;
    t.stream = stream;
    t.mask = api.mask;
    t.group_api = api.group_api;
    struct pccl_descr_v5 d;
    memset(&d, 0, sizeof d);
    d.parent = api.group_api;
    if (!p2p) {
        if (nccl_profiler && (api.mask & (PCCL_EV_COLL_API | PCCL_EV_COLL | TASK_MASK))) {
            d.type = PCCL_EV_COLL_API;
            d.coll_api.func = nccl_func_name(func);
            d.coll_api.count = count;
            d.coll_api.datatype = datatype_name(datatype);
            d.coll_api.stream = stream;
            d.coll_api.root = root_or_peer;
            nccl_profiler->start(c->profiler_ctx, &api.coll_api, &d);
        }
        t.api = api.coll_api;
    } else {
        if (nccl_profiler && (api.mask & (PCCL_EV_P2P_API | PCCL_EV_P2P | TASK_MASK))) {
            d.type = PCCL_EV_P2P_API;
            d.p2p_api.func = nccl_func_name(func);
            d.p2p_api.count = count;
            d.p2p_api.datatype = datatype_name(datatype);
            d.p2p_api.stream = stream;
            nccl_profiler->start(c->profiler_ctx, &api.p2p_api, &d);
        }
        t.api = api.p2p_api;
    }
    ncclResult_t rc = task_add(c, &t);
    if (!p2p) {
        if (nccl_profiler && api.coll_api)
            nccl_profiler->stop(api.coll_api); /* NCCL keeps the handle: the Coll's parent */
    } else if (nccl_profiler && api.p2p_api) {
        nccl_profiler->stop(api.p2p_api);
        api.p2p_api = NULL;
    }
    ncclResult_t end = group_end_internal();
    return rc != ncclSuccess ? rc : end;
}

/* ---- the API ---- */
#define API(ret, name, ...) \
    EXPORT ret name(__VA_ARGS__) __attribute__((alias("p" #name))); \
    EXPORT ret p##name(__VA_ARGS__)

API(ncclResult_t, ncclGetVersion, int *version)
{
    if (!version)
        return ncclInvalidArgument;
    *version = NCCL_VERSION_CODE;
    return ncclSuccess;
}

API(ncclResult_t, ncclGetUniqueId, ncclUniqueId *id)
{
    if (!id)
        return ncclInvalidArgument;
    memset(id, 0, sizeof *id);
    uint64_t words[3] = {(uint64_t)getpid(), nccl_now_ns(), 0};
    if (getrandom(&words[2], sizeof words[2], 0) != (ssize_t)sizeof words[2])
        words[2] = (uint64_t)(uintptr_t)id ^ words[1];
    memcpy(id->internal, words, sizeof words);
    return ncclSuccess;
}

API(ncclResult_t, ncclCommInitRank, ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
    return comm_new(comm, nranks, &id, rank, NULL);
}

API(ncclResult_t, ncclCommInitRankConfig, ncclComm_t *comm, int nranks, ncclUniqueId id, int rank,
    ncclConfig_t *config)
{
    const char *name = NULL;
    if (config && config->magic == 0xcafebeef &&
        config->size >= offsetof(ncclConfig_t, commName) + sizeof config->commName)
        name = config->commName;
    return comm_new(comm, nranks, &id, rank, name);
}

API(ncclResult_t, ncclCommInitAll, ncclComm_t *comms, int ndev, const int *devlist)
{
    if (!comms || ndev < 1)
        return ncclInvalidArgument;
    ncclUniqueId id;
    pncclGetUniqueId(&id);
    int saved = 0;
    cudaGetDevice(&saved);
    for (int i = 0; i < ndev; i++) {
        cudaSetDevice(devlist ? devlist[i] : i);
        ncclResult_t rc = comm_new(&comms[i], ndev, &id, i, NULL);
        if (rc != ncclSuccess) {
            cudaSetDevice(saved);
            return rc;
        }
    }
    cudaSetDevice(saved);
    return ncclSuccess;
}

API(ncclResult_t, ncclCommFinalize, ncclComm_t comm)
{
    if (!valid(comm))
        return ncclInvalidArgument;
    proxy_drain(comm);
    return ncclSuccess;
}

API(ncclResult_t, ncclCommDestroy, ncclComm_t comm)
{
    if (!comm)
        return ncclSuccess;
    if (!valid(comm))
        return ncclInvalidArgument;
    comm_free(comm);
    return ncclSuccess;
}

API(ncclResult_t, ncclCommAbort, ncclComm_t comm)
{
    return pncclCommDestroy(comm);
}

API(const char *, ncclGetErrorString, ncclResult_t result)
{
    switch (result) {
    case ncclSuccess:
        return "no error";
    case ncclUnhandledCudaError:
        return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError:
        return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError:
        return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument:
        return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage:
        return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError:
        return "remote process exited or there was a network error";
    case ncclInProgress:
        return "NCCL operation in progress";
    default:
        return "unknown result code";
    }
}

API(const char *, ncclGetLastError, ncclComm_t comm)
{
    (void)comm;
    return "";
}

API(ncclResult_t, ncclCommGetAsyncError, ncclComm_t comm, ncclResult_t *error)
{
    if (!valid(comm) || !error)
        return ncclInvalidArgument;
    *error = ncclSuccess;
    return ncclSuccess;
}

API(ncclResult_t, ncclCommCount, const ncclComm_t comm, int *count)
{
    if (!valid(comm) || !count)
        return ncclInvalidArgument;
    *count = comm->nranks;
    return ncclSuccess;
}

API(ncclResult_t, ncclCommCuDevice, const ncclComm_t comm, int *device)
{
    if (!valid(comm) || !device)
        return ncclInvalidArgument;
    *device = comm->device;
    return ncclSuccess;
}

API(ncclResult_t, ncclCommUserRank, const ncclComm_t comm, int *rank)
{
    if (!valid(comm) || !rank)
        return ncclInvalidArgument;
    *rank = comm->rank;
    return ncclSuccess;
}

API(ncclResult_t, ncclMemAlloc, void **ptr, size_t size)
{
    return cudaMalloc(ptr, size) == cudaSuccess ? ncclSuccess : ncclUnhandledCudaError;
}

API(ncclResult_t, ncclMemFree, void *ptr)
{
    return cudaFree(ptr) == cudaSuccess ? ncclSuccess : ncclUnhandledCudaError;
}

API(ncclResult_t, ncclCommRegister, const ncclComm_t comm, void *buff, size_t size, void **handle)
{
    (void)buff, (void)size;
    if (!valid(comm) || !handle)
        return ncclInvalidArgument;
    *handle = NULL;
    return ncclSuccess;
}

API(ncclResult_t, ncclCommDeregister, const ncclComm_t comm, void *handle)
{
    (void)handle;
    return valid(comm) ? ncclSuccess : ncclInvalidArgument;
}

API(ncclResult_t, ncclRedOpCreatePreMulSum, ncclRedOp_t *op, void *scalar, ncclDataType_t datatype,
    ncclScalarResidence_t residence, ncclComm_t comm)
{
    (void)scalar, (void)datatype, (void)residence;
    if (!valid(comm) || !op)
        return ncclInvalidArgument;
    *op = (ncclRedOp_t)ncclNumOps;
    return ncclSuccess;
}

API(ncclResult_t, ncclRedOpDestroy, ncclRedOp_t op, ncclComm_t comm)
{
    (void)op;
    return valid(comm) ? ncclSuccess : ncclInvalidArgument;
}

API(ncclResult_t, ncclGroupStart, void)
{
    group_depth++;
    return ncclSuccess;
}

API(ncclResult_t, ncclGroupEnd, void)
{
    return group_end_internal();
}

API(ncclResult_t, ncclAllReduce, const void *sendbuff, void *recvbuff, size_t count,
    ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)
{
    (void)op;
    return enqueue(comm, FUNC_ALLREDUCE, sendbuff, recvbuff, count, datatype, 0, stream);
}

API(ncclResult_t, ncclAllGather, const void *sendbuff, void *recvbuff, size_t sendcount,
    ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream)
{
    return enqueue(comm, FUNC_ALLGATHER, sendbuff, recvbuff, sendcount, datatype, 0, stream);
}

API(ncclResult_t, ncclReduceScatter, const void *sendbuff, void *recvbuff, size_t recvcount,
    ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)
{
    (void)op;
    return enqueue(comm, FUNC_REDUCESCATTER, sendbuff, recvbuff, recvcount, datatype, 0, stream);
}

API(ncclResult_t, ncclBroadcast, const void *sendbuff, void *recvbuff, size_t count,
    ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream)
{
    return enqueue(comm, FUNC_BROADCAST, sendbuff, recvbuff, count, datatype, root, stream);
}

API(ncclResult_t, ncclBcast, void *buff, size_t count, ncclDataType_t datatype, int root,
    ncclComm_t comm, cudaStream_t stream)
{
    return enqueue(comm, FUNC_BROADCAST, buff, buff, count, datatype, root, stream);
}

API(ncclResult_t, ncclReduce, const void *sendbuff, void *recvbuff, size_t count,
    ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream)
{
    (void)op;
    return enqueue(comm, FUNC_REDUCE, sendbuff, recvbuff, count, datatype, root, stream);
}

API(ncclResult_t, ncclSend, const void *sendbuff, size_t count, ncclDataType_t datatype, int peer,
    ncclComm_t comm, cudaStream_t stream)
{
    return enqueue(comm, FUNC_SEND, sendbuff, NULL, count, datatype, peer, stream);
}

API(ncclResult_t, ncclRecv, void *recvbuff, size_t count, ncclDataType_t datatype, int peer,
    ncclComm_t comm, cudaStream_t stream)
{
    return enqueue(comm, FUNC_RECV, NULL, recvbuff, count, datatype, peer, stream);
}
