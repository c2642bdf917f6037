/* A do-nothing NCCL profiler plugin (v5) that asks for every event: the
 * anchor of the PCCL collector's cost (bench/pccl.py).  Its handle is one
 * static object, so NCCL (the stand-in) makes every state and stop call. */
#include <stdint.h>

#include "pccl_abi.h"

static int dummy;

static pccl_result_t init(void **ctx, uint64_t comm_id, int *mask, const char *name, int nnodes,
                          int nranks, int rank, pccl_log_fn log)
{
    (void)comm_id, (void)name, (void)nnodes, (void)nranks, (void)rank, (void)log;
    *ctx = &dummy;
    *mask = PCCL_EVENTS_V5;
    return PCCL_SUCCESS;
}

static pccl_result_t start(void *ctx, void **handle, struct pccl_descr_v5 *d)
{
    (void)ctx, (void)d;
    *handle = &dummy;
    return PCCL_SUCCESS;
}

static pccl_result_t stop(void *handle)
{
    (void)handle;
    return PCCL_SUCCESS;
}

static pccl_result_t record(void *handle, int state, union pccl_state_args_v4 *args)
{
    (void)handle, (void)state, (void)args;
    return PCCL_SUCCESS;
}

static pccl_result_t finalize(void *ctx)
{
    (void)ctx;
    return PCCL_SUCCESS;
}

__attribute__((visibility("default")))
const struct pccl_plugin_v5 ncclProfiler_v5 = {"null", init, start, stop, record, finalize};
