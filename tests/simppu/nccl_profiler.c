/* simppu libnccl.so.2: the profiler plugin loader, as NCCL 2.28's
 * (src/plugin/profiler.cc, plugin_open.cc, profiler/profiler_v*.cc).
 *
 * NCCL_PROFILER_PLUGIN names the library: "none" disables it; a value is
 * dlopen'd as given, then (a bare name) as libnccl-profiler-<value>.so;
 * unset, libnccl-profiler.so.  The first of ncclProfiler_v5, _v4, _v3, _v2
 * found is used (SIMPPU_NCCL_PROFILER_VERSION=N starts the search at vN, as
 * an older NCCL would), older tables through adapters that convert the v5
 * event descriptors and state arguments exactly as NCCL's do.  Loaded at
 * the first communicator's init, closed after the last one's finalize. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "nccl_internal.h"

struct profiler *nccl_profiler;
int nccl_profiler_mask;
__thread int nccl_bucket;

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static int refs;
static int failed;
static void *lib;
static struct profiler table;
static const struct pccl_plugin_v4 *v4;
static const struct pccl_plugin_v3 *v3; /* v3 or v2 */

/* ---- v4 adapter ---- */
static pccl_result_t v4_init(void **ctx, uint64_t comm_id, int *mask, const char *name, int nnodes,
                             int nranks, int rank, pccl_log_fn log)
{
    return v4->init(ctx, mask, name, comm_id, nnodes, nranks, rank, log);
}

static pccl_result_t v4_start(void *ctx, void **handle, struct pccl_descr_v5 *d)
{
    struct pccl_descr_v4 e;
    e.type = (uint8_t)d->type;
    e.parent = d->parent;
    e.rank = d->rank;
    switch (d->type) {
    case PCCL_EV_GROUP:
    case PCCL_EV_PROXY_CTRL:
        break;
    case PCCL_EV_COLL:
        e.coll.seq = d->coll.seq;
        e.coll.func = d->coll.func;
        e.coll.send = d->coll.send;
        e.coll.recv = d->coll.recv;
        e.coll.count = d->coll.count;
        e.coll.root = d->coll.root;
        e.coll.datatype = d->coll.datatype;
        e.coll.channels = d->coll.channels;
        e.coll.warps = d->coll.warps;
        e.coll.algo = d->coll.algo;
        e.coll.proto = d->coll.proto;
        e.parent = d->coll.parent_group;
        break;
    case PCCL_EV_P2P:
        e.p2p.func = d->p2p.func;
        e.p2p.buff = d->p2p.buff;
        e.p2p.count = d->p2p.count;
        e.p2p.datatype = d->p2p.datatype;
        e.p2p.peer = d->p2p.peer;
        e.parent = d->p2p.parent_group;
        break;
    case PCCL_EV_PROXY_OP:
        e.proxy_op.pid = d->proxy_op.pid;
        e.proxy_op.channel = d->proxy_op.channel;
        e.proxy_op.peer = d->proxy_op.peer;
        e.proxy_op.steps = d->proxy_op.steps;
        e.proxy_op.chunk_size = d->proxy_op.chunk_size;
        e.proxy_op.is_send = d->proxy_op.is_send;
        break;
    case PCCL_EV_PROXY_STEP:
        e.proxy_step.step = d->proxy_step.step;
        break;
    case PCCL_EV_KERNEL_CH:
        e.kernel_ch.channel = d->kernel_ch.channel;
        e.kernel_ch.ptimer = d->kernel_ch.ptimer;
        break;
    case PCCL_EV_NET:
        e.net.id = d->net.id;
        e.net.data = d->net.data;
        break;
    default:
        return PCCL_SUCCESS; /* the handle is left as it was */
    }
    return v4->start(ctx, handle, &e);
}

static pccl_result_t v4_record(void *handle, int state, union pccl_state_args_v4 *args)
{
    union pccl_state_args_v4 a;
    switch (state) {
    case PCCL_ST_PROXY_OP_IN_PROGRESS:
        break;
    case PCCL_ST_STEP_SEND_GPU_WAIT:
    case PCCL_ST_STEP_SEND_PEER_WAIT:
    case PCCL_ST_STEP_SEND_WAIT:
    case PCCL_ST_STEP_RECV_WAIT:
    case PCCL_ST_STEP_RECV_FLUSH_WAIT:
    case PCCL_ST_STEP_RECV_GPU_WAIT:
        a.proxy_step.trans_size = args->proxy_step.trans_size;
        break;
    case PCCL_ST_NET_UPDATE:
        a.net.data = args->net.data;
        break;
    case PCCL_ST_KERNEL_CH_STOP:
        a.kernel_ch.ptimer = args->kernel_ch.ptimer;
        break;
    case PCCL_ST_CTRL_IDLE:
    case PCCL_ST_CTRL_ACTIVE:
    case PCCL_ST_CTRL_SLEEP:
    case PCCL_ST_CTRL_WAKEUP:
    case PCCL_ST_CTRL_APPEND:
    case PCCL_ST_CTRL_APPEND_END:
        a.proxy_ctrl.appended = args->proxy_ctrl.appended;
        break;
    default:
        return PCCL_SUCCESS;
    }
    return v4->record(handle, state, &a);
}

/* ---- v3 and v2 adapters ---- */
static pccl_result_t v3_init(void **ctx, uint64_t comm_id, int *mask, const char *name, int nnodes,
                             int nranks, int rank, pccl_log_fn log)
{
    (void)comm_id, (void)name, (void)nnodes, (void)nranks, (void)rank, (void)log;
    return v3->init(ctx, mask);
}

static pccl_result_t v3_start(void *ctx, void **handle, struct pccl_descr_v5 *d)
{
    *handle = NULL;
    int v2 = table.version == 2;
    struct pccl_descr_v3 e3;
    struct pccl_descr_v2 e2;
    memset(&e3, 0, sizeof e3);
    memset(&e2, 0, sizeof e2);
    e3.type = e2.type = (uint8_t)d->type;
    e3.parent = e2.parent = d->parent;
    e3.rank = e2.rank = d->rank;
    switch (d->type) {
    case PCCL_EV_GROUP:
    case PCCL_EV_PROXY_CTRL:
        break;
    case PCCL_EV_COLL: /* name and commHash: removed in v4, given as NULL and 0 */
        e3.parent = e2.parent = d->coll.parent_group;
        e3.coll.seq = e2.coll.seq = d->coll.seq;
        e3.coll.func = e2.coll.func = d->coll.func;
        e3.coll.send = e2.coll.send = d->coll.send;
        e3.coll.recv = e2.coll.recv = d->coll.recv;
        e3.coll.count = e2.coll.count = d->coll.count;
        e3.coll.root = e2.coll.root = d->coll.root;
        e3.coll.datatype = e2.coll.datatype = d->coll.datatype;
        e3.coll.channels = e2.coll.channels = d->coll.channels;
        e3.coll.warps = e2.coll.warps = d->coll.warps;
        e3.coll.algo = e2.coll.algo = d->coll.algo;
        e3.coll.proto = e2.coll.proto = d->coll.proto;
        break;
    case PCCL_EV_P2P:
        e3.parent = e2.parent = d->p2p.parent_group;
        e3.p2p.func = e2.p2p.func = d->p2p.func;
        e3.p2p.buff = e2.p2p.buff = d->p2p.buff;
        e3.p2p.count = e2.p2p.count = d->p2p.count;
        e3.p2p.datatype = e2.p2p.datatype = d->p2p.datatype;
        e3.p2p.peer = e2.p2p.peer = d->p2p.peer;
        break;
    case PCCL_EV_PROXY_OP:
        e3.proxy_op.pid = e2.proxy_op.pid = d->proxy_op.pid;
        e3.proxy_op.channel = e2.proxy_op.channel = d->proxy_op.channel;
        e3.proxy_op.peer = e2.proxy_op.peer = d->proxy_op.peer;
        e3.proxy_op.steps = e2.proxy_op.steps = d->proxy_op.steps;
        e3.proxy_op.chunk_size = e2.proxy_op.chunk_size = d->proxy_op.chunk_size;
        e3.proxy_op.is_send = e2.proxy_op.is_send = d->proxy_op.is_send;
        break;
    case PCCL_EV_PROXY_STEP:
        e3.proxy_step.step = e2.proxy_step.step = d->proxy_step.step;
        break;
    case PCCL_EV_KERNEL_CH:
        if (v2)
            return PCCL_SUCCESS;
        e3.kernel_ch.channel = d->kernel_ch.channel;
        break;
    case PCCL_EV_NET:
        if (v2)
            return PCCL_SUCCESS;
        e3.net.id = d->net.id;
        e3.net.data = d->net.data;
        break;
    default:
        return PCCL_SUCCESS;
    }
    return v3->start(ctx, handle, v2 ? (void *)&e2 : (void *)&e3);
}

static pccl_result_t v3_record(void *handle, int state, union pccl_state_args_v4 *args)
{
    union pccl_state_args_v3 a;
    memset(&a, 0, sizeof a);
    switch (state) {
    case PCCL_ST_CTRL_IDLE:
    case PCCL_ST_CTRL_ACTIVE:
    case PCCL_ST_CTRL_SLEEP:
    case PCCL_ST_CTRL_WAKEUP:
    case PCCL_ST_CTRL_APPEND:
    case PCCL_ST_CTRL_APPEND_END:
        a.proxy_ctrl.appended = args->proxy_ctrl.appended;
        break;
    case PCCL_ST_STEP_SEND_GPU_WAIT:
    case PCCL_ST_STEP_SEND_WAIT:
    case PCCL_ST_STEP_RECV_WAIT:
    case PCCL_ST_STEP_RECV_FLUSH_WAIT:
    case PCCL_ST_STEP_RECV_GPU_WAIT:
        break;
    default:
        return PCCL_SUCCESS;
    }
    return v3->record(handle, state, &a);
}

/* ---- SIMPPU_NCCL_TIMING: the table's calls timed ----
 * Each call's duration is kept (up to MAX_SAMPLES per bucket and call) so
 * that the median can be taken: a call preempted on a loaded machine counts
 * as one slow call, not as time spread over all of them. */
#define MAX_SAMPLES 300000
enum { CALL_START, CALL_RECORD, CALL_STOP, CALL_COUNT };
static struct profiler real;
static const char *timing_path;
static struct {
    uint64_t calls, ns;
    uint32_t *samples;
} spent[BUCKET_COUNT][CALL_COUNT];
static uint64_t collectives, steps;

static uint64_t now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void account(uint64_t t0, int call)
{
    uint64_t d = now() - t0;
    int b = nccl_bucket;
    uint64_t n = __atomic_fetch_add(&spent[b][call].calls, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&spent[b][call].ns, d, __ATOMIC_RELAXED);
    if (spent[b][call].samples && n < MAX_SAMPLES)
        spent[b][call].samples[n] = d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
}

static pccl_result_t timed_start(void *ctx, void **handle, struct pccl_descr_v5 *d)
{
    if (d->type == PCCL_EV_COLL || d->type == PCCL_EV_P2P)
        __atomic_fetch_add(&collectives, 1, __ATOMIC_RELAXED);
    if (d->type == PCCL_EV_PROXY_STEP)
        __atomic_fetch_add(&steps, 1, __ATOMIC_RELAXED);
    uint64_t t0 = now();
    pccl_result_t rc = real.start(ctx, handle, d);
    account(t0, CALL_START);
    return rc;
}

static pccl_result_t timed_stop(void *handle)
{
    uint64_t t0 = now();
    pccl_result_t rc = real.stop(handle);
    account(t0, CALL_STOP);
    return rc;
}

static pccl_result_t timed_record(void *handle, int state, union pccl_state_args_v4 *args)
{
    uint64_t t0 = now();
    pccl_result_t rc = real.record(handle, state, args);
    account(t0, CALL_RECORD);
    return rc;
}

static int by_value(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* One line: the counts, then per bucket and call: calls, total ns, median ns. */
static void timing_write(void)
{
    FILE *f = fopen(timing_path, "a");
    if (f) {
        fprintf(f, "collectives %llu steps %llu", (unsigned long long)collectives,
                (unsigned long long)steps);
        static const char *const buckets[BUCKET_COUNT] = {"app", "proxy", "step"};
        static const char *const calls[CALL_COUNT] = {"start", "record", "stop"};
        for (int b = 0; b < BUCKET_COUNT; b++)
            for (int c = 0; c < CALL_COUNT; c++) {
                uint64_t n = spent[b][c].calls, kept = n < MAX_SAMPLES ? n : MAX_SAMPLES;
                uint32_t median = 0;
                if (kept && spent[b][c].samples) {
                    qsort(spent[b][c].samples, kept, sizeof(uint32_t), by_value);
                    median = spent[b][c].samples[kept / 2];
                }
                fprintf(f, " %s_%s_calls %llu %s_%s_ns %llu %s_%s_median %u", buckets[b], calls[c],
                        (unsigned long long)n, buckets[b], calls[c],
                        (unsigned long long)spent[b][c].ns, buckets[b], calls[c], median);
            }
        fprintf(f, "\n");
        fclose(f);
    }
    for (int b = 0; b < BUCKET_COUNT; b++)
        for (int c = 0; c < CALL_COUNT; c++) {
            free(spent[b][c].samples);
            spent[b][c].samples = NULL;
            spent[b][c].calls = spent[b][c].ns = 0;
        }
    collectives = steps = 0;
}

/* ---- loading ---- */
static void *open_plugin(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "%s", name && *name ? name : "libnccl-profiler.so");
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h || !name || !*name || strchr(name, '/'))
        return h;
    size_t n = strlen(name);
    if (!strncmp(name, "lib", 3) || (n >= 3 && !strcmp(name + n - 3, ".so")))
        return NULL;
    snprintf(path, sizeof path, "libnccl-profiler-%s.so", name);
    return dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

static int find_table(void)
{
    const char *cap = getenv("SIMPPU_NCCL_PROFILER_VERSION");
    int max = cap ? atoi(cap) : 5;
    void *t;
    if (max >= 5 && (t = dlsym(lib, "ncclProfiler_v5")) != NULL) {
        const struct pccl_plugin_v5 *v5 = t;
        table = (struct profiler){5, v5->init, v5->start, v5->stop, v5->record, v5->finalize};
        return 0;
    }
    if (max >= 4 && (t = dlsym(lib, "ncclProfiler_v4")) != NULL) {
        v4 = t;
        table = (struct profiler){4, v4_init, v4_start, v4->stop, v4_record, v4->finalize};
        return 0;
    }
    for (int v = max < 3 ? max : 3; v >= 2; v--) {
        if ((t = dlsym(lib, v == 3 ? "ncclProfiler_v3" : "ncclProfiler_v2")) != NULL) {
            v3 = t;
            table = (struct profiler){v, v3_init, v3_start, v3->stop, v3_record, v3->finalize};
            return 0;
        }
    }
    return -1; /* ncclProfiler_v1: this stand-in has no adapter for it */
}

void nccl_profiler_load(void)
{
    pthread_mutex_lock(&load_lock);
    if (failed)
        goto out;
    if (nccl_profiler) {
        refs++;
        goto out;
    }
    const char *name = getenv("NCCL_PROFILER_PLUGIN");
    if (name && !strcasecmp(name, "none")) {
        failed = 1;
        goto out;
    }
    lib = open_plugin(name);
    if (!lib || find_table() != 0) {
        if (lib)
            dlclose(lib);
        lib = NULL;
        failed = 1;
        goto out;
    }
    timing_path = getenv("SIMPPU_NCCL_TIMING");
    if (timing_path && *timing_path) {
        for (int b = 0; b < BUCKET_COUNT; b++)
            for (int c = 0; c < CALL_COUNT; c++)
                spent[b][c].samples = calloc(MAX_SAMPLES, sizeof(uint32_t));
        real = table;
        table.start = timed_start;
        table.stop = timed_stop;
        table.record = timed_record;
    } else {
        timing_path = NULL;
    }
    nccl_profiler = &table;
    refs = 1;
out:
    pthread_mutex_unlock(&load_lock);
}

void nccl_profiler_unload(void)
{
    pthread_mutex_lock(&load_lock);
    if (nccl_profiler && --refs == 0) {
        if (timing_path)
            timing_write();
        nccl_profiler = NULL;
        dlclose(lib);
        lib = NULL;
        /* like NCCL: loadable again by a later communicator */
    }
    pthread_mutex_unlock(&load_lock);
}
