/* A user's own NCCL profiler plugin, for the PCCL tests: asys must keep
 * calling it.  Built twice: libnccl-profiler-counter.so (interface v4) and,
 * with -DUSER_PLUGIN_V5, libnccl-profiler-counter5.so (v5).  It asks for
 * Coll, P2p, ProxyOp and ProxyStep events, checks that each event's parent
 * is a live handle of its own of the right type, and at each finalize
 * appends one line to $PCCL_USER_PLUGIN_OUT:
 *   version V colls C p2ps P ops O steps S states T bad_parents B unexpected U
 * (the states: recorded so far in the process, on any of its handles). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pccl_abi.h"

#define MAGIC 0x75736572u

struct event {
    unsigned magic;
    uint64_t type;
};

struct ctx {
    long colls, p2ps, ops, steps, bad_parents, unexpected;
};

static const uint64_t wanted = PCCL_EV_COLL | PCCL_EV_P2P | PCCL_EV_PROXY_OP | PCCL_EV_PROXY_STEP;

static int parent_is(void *parent, uint64_t types)
{
    struct event *e = parent;
    return e && e->magic == MAGIC && (e->type & types);
}

static void *start(struct ctx *c, uint64_t type, void *parent)
{
    if (!c)
        return NULL;
    if (!(type & wanted)) {
        /* NCCL starts groups and API events for any of these bits; the
         * others only when asked for */
        if (type & (PCCL_EV_PROXY_CTRL | PCCL_EV_KERNEL_CH | PCCL_EV_NET))
            __atomic_fetch_add(&c->unexpected, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    if ((type == PCCL_EV_PROXY_OP && !parent_is(parent, PCCL_EV_COLL | PCCL_EV_P2P)) ||
        (type == PCCL_EV_PROXY_STEP && !parent_is(parent, PCCL_EV_PROXY_OP)))
        __atomic_fetch_add(&c->bad_parents, 1, __ATOMIC_RELAXED);
    /* NCCL's proxy thread starts ProxyOps and ProxySteps while the user's
     * thread starts Colls and P2ps: each count is the thread's own, and
     * atomic (a `+= 0` of the other thread's count lost its increments) */
    long *count = type == PCCL_EV_COLL         ? &c->colls
                  : type == PCCL_EV_P2P        ? &c->p2ps
                  : type == PCCL_EV_PROXY_OP   ? &c->ops
                  : type == PCCL_EV_PROXY_STEP ? &c->steps
                                               : NULL;
    if (count)
        __atomic_fetch_add(count, 1, __ATOMIC_RELAXED);
    struct event *e = malloc(sizeof *e);
    if (e) {
        e->magic = MAGIC;
        e->type = type;
    }
    return e;
}

static long states; /* every context's: handles do not say whose they are */

/* A stopped event stays: NCCL names a stopped Coll as its ProxyOps' parent
 * (a real plugin counts references; a test may leak). */
static pccl_result_t stop(void *handle)
{
    (void)handle;
    return PCCL_SUCCESS;
}

static pccl_result_t finalize_with(void *ctx, int version)
{
    struct ctx *c = ctx;
    const char *path = getenv("PCCL_USER_PLUGIN_OUT");
    FILE *f = path ? fopen(path, "a") : NULL;
    if (f && c) {
        fprintf(f,
                "version %d colls %ld p2ps %ld ops %ld steps %ld states %ld bad_parents %ld "
                "unexpected %ld\n",
                version, c->colls, c->p2ps, c->ops, c->steps,
                __atomic_load_n(&states, __ATOMIC_RELAXED), c->bad_parents, c->unexpected);
    }
    if (f)
        fclose(f);
    free(c);
    return PCCL_SUCCESS;
}

static pccl_result_t record(void *handle, int state, union pccl_state_args_v4 *args)
{
    (void)state, (void)args;
    if (handle)
        __atomic_fetch_add(&states, 1, __ATOMIC_RELAXED);
    return PCCL_SUCCESS;
}

#ifdef USER_PLUGIN_V5
static pccl_result_t init5(void **ctx, uint64_t comm_id, int *mask, const char *name, int nnodes,
                           int nranks, int rank, pccl_log_fn log)
{
    (void)comm_id, (void)name, (void)nnodes, (void)nranks, (void)rank, (void)log;
    *ctx = calloc(1, sizeof(struct ctx));
    *mask = (int)wanted;
    return PCCL_SUCCESS;
}

static pccl_result_t start5(void *ctx, void **handle, struct pccl_descr_v5 *d)
{
    *handle = start(ctx, d->type, d->parent);
    return PCCL_SUCCESS;
}

static pccl_result_t finalize5(void *ctx)
{
    return finalize_with(ctx, 5);
}

__attribute__((visibility("default")))
const struct pccl_plugin_v5 ncclProfiler_v5 = {"counter", init5, start5, stop, record, finalize5};
#else
static pccl_result_t init4(void **ctx, int *mask, const char *name, uint64_t comm_hash, int nnodes,
                           int nranks, int rank, pccl_log_fn log)
{
    (void)comm_hash, (void)name, (void)nnodes, (void)nranks, (void)rank, (void)log;
    *ctx = calloc(1, sizeof(struct ctx));
    *mask = (int)wanted;
    return PCCL_SUCCESS;
}

static pccl_result_t start4(void *ctx, void **handle, struct pccl_descr_v4 *d)
{
    *handle = start(ctx, d->type, d->parent);
    return PCCL_SUCCESS;
}

static pccl_result_t finalize4(void *ctx)
{
    return finalize_with(ctx, 4);
}

__attribute__((visibility("default")))
const struct pccl_plugin_v4 ncclProfiler_v4 = {"counter", init4, start4, stop, record, finalize4};
#endif
