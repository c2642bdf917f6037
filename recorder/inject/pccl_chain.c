/* The user's own NCCL profiler plugin, called alongside asys's.
 *
 * NCCL loads one profiler plugin.  When NCCL_PROFILER_PLUGIN already named
 * one, the launcher moves its value to ASYS_PCCL_CHAIN and points NCCL at
 * libasys-inject.so; this file loads the user's plugin the way NCCL 2.28's
 * loader would (src/plugin/plugin_open.cc: the value as given, then
 * libnccl-profiler-<value>.so; unset: libnccl-profiler.so; then the
 * ncclProfiler_v5 .. _v2 tables, newest first) and hands it every event it
 * asked for, converted to its interface version as NCCL's own adapters
 * convert them (src/plugin/profiler/profiler_v*.cc), with its own handles as
 * parents.  It sees what it would have seen without asys, except events
 * asys could not give a slot (counted in COMM_END). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "pccl_internal.h"

static int is_library_name(const char *s)
{
    size_t n = strlen(s);
    return !strncmp(s, "lib", 3) || (n >= 3 && !strcmp(s + n - 3, ".so"));
}

/* `tried`: the names tried, ", " between them; the last is the one opened. */
static void *open_like_nccl(const char *spec, char *tried, size_t tried_size, const char **opened)
{
    char name[256];
    snprintf(name, sizeof name, "%s", *spec ? spec : "libnccl-profiler.so");
    snprintf(tried, tried_size, "%s", name);
    *opened = tried;
    void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib || !*spec || strchr(spec, '/') || is_library_name(spec))
        return lib;
    snprintf(name, sizeof name, "libnccl-profiler-%s.so", spec);
    size_t used = strlen(tried);
    snprintf(tried + used, tried_size - used, ", %s", name);
    *opened = tried + (used + 2 < tried_size ? used + 2 : used);
    return dlopen(name, RTLD_NOW | RTLD_LOCAL);
}

int pccl_user_load(struct pccl_user *u, const char *spec, const void *self, char *why,
                   size_t why_size)
{
    char tried[600];
    const char *opened = tried;
    memset(u, 0, sizeof *u);
    void *lib = open_like_nccl(spec, tried, sizeof tried, &opened);
    if (!lib) {
        const char *error = dlerror();
        snprintf(why, why_size, "%s: %s", tried, error ? error : "cannot be opened");
        return -1;
    }
    static const char *const symbols[] = {"ncclProfiler_v5", "ncclProfiler_v4", "ncclProfiler_v3",
                                          "ncclProfiler_v2"};
    void *table = NULL;
    int version = 0;
    for (int i = 0; i < 4 && !table; i++)
        if ((table = dlsym(lib, symbols[i])) != NULL)
            version = 5 - i;
    Dl_info mine, theirs;
    if (table && dladdr(self, &mine) && dladdr(table, &theirs) &&
        mine.dli_fbase == theirs.dli_fbase) {
        snprintf(why, why_size, "%s is asys's own library", tried);
        dlclose(lib);
        return -1;
    }
    if (!table) {
        snprintf(why, why_size,
                 "%s: no ncclProfiler_v5, _v4, _v3 or _v2 (a v1 plugin is not "
                 "called)",
                 tried);
        dlclose(lib);
        return -1;
    }
    u->lib = lib;
    u->version = version;
    if (version == 5)
        u->v5 = table;
    else if (version == 4)
        u->v4 = table;
    else
        u->v3 = table;
    const char *plugin = version == 5 ? u->v5->name : version == 4 ? u->v4->name : u->v3->name;
    snprintf(u->name, sizeof u->name, "%s (%s)", opened, plugin ? plugin : "?");
    return 0;
}

pccl_result_t pccl_user_init(const struct pccl_user *u, void **ctx, uint64_t comm_id, int *mask,
                             const char *comm_name, int nnodes, int nranks, int rank,
                             pccl_log_fn log)
{
    switch (u->version) {
    case 5:
        return u->v5->init(ctx, comm_id, mask, comm_name, nnodes, nranks, rank, log);
    case 4:
        return u->v4->init(ctx, mask, comm_name, comm_id, nnodes, nranks, rank, log);
    case 3:
    case 2:
        return u->v3->init(ctx, mask);
    default:
        return PCCL_INTERNAL_ERROR;
    }
}

static void start_v4(const struct pccl_user *u, void *ctx, void **handle,
                     const struct pccl_descr_v5 *d)
{
    struct pccl_descr_v4 e;
    memset(&e, 0, sizeof e);
    e.type = (uint8_t)d->type;
    e.parent = d->parent;
    e.rank = d->rank;
    switch (d->type) {
    case PCCL_EV_GROUP:
    case PCCL_EV_PROXY_CTRL:
        break;
    case PCCL_EV_COLL:
        e.parent = d->coll.parent_group;
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
        break;
    case PCCL_EV_P2P:
        e.parent = d->p2p.parent_group;
        e.p2p.func = d->p2p.func;
        e.p2p.buff = d->p2p.buff;
        e.p2p.datatype = d->p2p.datatype;
        e.p2p.count = d->p2p.count;
        e.p2p.peer = d->p2p.peer;
        e.p2p.channels = d->p2p.channels;
        break;
    case PCCL_EV_PROXY_OP:
        memcpy(&e.proxy_op, &d->proxy_op, sizeof e.proxy_op);
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
        return; /* the API events are v5's */
    }
    u->v4->start(ctx, handle, &e);
}

/* v3 and v2 (which has no KernelCh or NetPlugin, and trafficBytes in Coll). */
static void start_v3(const struct pccl_user *u, void *ctx, void **handle,
                     const struct pccl_descr_v5 *d)
{
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
    case PCCL_EV_COLL:
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
    case PCCL_EV_P2P: /* one layout in both */
        e3.parent = d->p2p.parent_group;
        e3.p2p.func = d->p2p.func;
        e3.p2p.buff = d->p2p.buff;
        e3.p2p.datatype = d->p2p.datatype;
        e3.p2p.count = d->p2p.count;
        e3.p2p.peer = d->p2p.peer;
        memcpy(&e2, &e3, sizeof e2 < sizeof e3 ? sizeof e2 : sizeof e3);
        break;
    case PCCL_EV_PROXY_OP:
        memcpy(&e3.proxy_op, &d->proxy_op, sizeof e3.proxy_op);
        memcpy(&e2.proxy_op, &d->proxy_op, sizeof e2.proxy_op);
        break;
    case PCCL_EV_PROXY_STEP:
        e3.proxy_step.step = e2.proxy_step.step = d->proxy_step.step;
        break;
    case PCCL_EV_KERNEL_CH:
        if (u->version == 2)
            return;
        e3.kernel_ch.channel = d->kernel_ch.channel;
        break;
    case PCCL_EV_NET:
        if (u->version == 2)
            return;
        e3.net.id = d->net.id;
        e3.net.data = d->net.data;
        break;
    default:
        return;
    }
    u->v3->start(ctx, handle, u->version == 2 ? (void *)&e2 : (void *)&e3);
}

void pccl_user_start(const struct pccl_user *u, void *ctx, void **handle,
                     const struct pccl_descr_v5 *d)
{
    *handle = NULL;
    if (u->version == 5) {
        struct pccl_descr_v5 copy = *d;
        u->v5->start(ctx, handle, &copy);
    } else if (u->version == 4) {
        start_v4(u, ctx, handle, d);
    } else if (u->version == 3 || u->version == 2) {
        start_v3(u, ctx, handle, d);
    }
}

void pccl_user_record(const struct pccl_user *u, void *handle, int state,
                      const union pccl_state_args_v4 *args)
{
    union pccl_state_args_v4 a4;
    memset(&a4, 0, sizeof a4);
    if (args)
        a4 = *args;
    if (u->version >= 4) {
        /* v5's own; v4 gets every state but the group API ones */
        if (u->version == 4 &&
            (state == PCCL_ST_GROUP_START_API_STOP || state == PCCL_ST_GROUP_END_API_START))
            return;
        if (u->version == 5)
            u->v5->record(handle, state, &a4);
        else
            u->v4->record(handle, state, &a4);
        return;
    }
    /* v3 and v2: proxy control states with their count, step states (but the
     * peer wait of v4) without a size, nothing else */
    union pccl_state_args_v3 a3;
    memset(&a3, 0, sizeof a3);
    if (state >= PCCL_ST_CTRL_IDLE && state <= PCCL_ST_CTRL_APPEND_END)
        a3.proxy_ctrl.appended = a4.proxy_ctrl.appended;
    else if (state < PCCL_ST_STEP_SEND_GPU_WAIT || state > PCCL_ST_STEP_RECV_GPU_WAIT)
        return;
    u->v3->record(handle, state, &a3);
}

void pccl_user_stop(const struct pccl_user *u, void *handle)
{
    if (u->version == 5)
        u->v5->stop(handle);
    else if (u->version == 4)
        u->v4->stop(handle);
    else if (u->version == 3 || u->version == 2)
        u->v3->stop(handle);
}

void pccl_user_finalize(const struct pccl_user *u, void *ctx)
{
    if (u->version == 5)
        u->v5->finalize(ctx);
    else if (u->version == 4)
        u->v4->finalize(ctx);
    else if (u->version == 3 || u->version == 2)
        u->v3->finalize(ctx);
}
