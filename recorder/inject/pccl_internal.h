/* The PCCL collector's shared state (pccl.c: the plugin NCCL calls;
 * pccl_chain.c: the user's own plugin, called alongside). */
#ifndef ASYS_PCCL_INTERNAL_H
#define ASYS_PCCL_INTERNAL_H

#include <stdint.h>

#include "pccl_abi.h"

/* The user's own plugin (NCCL_PROFILER_PLUGIN before asys set it). */
struct pccl_user {
    int version; /* 5, 4, 3, 2; 0: none */
    void *lib;
    const struct pccl_plugin_v5 *v5;
    const struct pccl_plugin_v4 *v4;
    const struct pccl_plugin_v3 *v3; /* v3 and v2 share the table's shape */
    char name[200];
};

/* Loads the plugin NCCL would load for `spec` (NCCL_PROFILER_PLUGIN's
 * value; "" for the default libnccl-profiler.so), refusing `self` (our own
 * tables).  0, or -1 with `why` set. */
int pccl_user_load(struct pccl_user *u, const char *spec, const void *self, char *why,
                   size_t why_size);

/* Calls into the user's plugin with NCCL's conventions for its version:
 * the event descriptor converted from v5 as NCCL 2.28's adapters convert
 * it (`parent` and `parent_group` already its own handles), the state
 * arguments likewise.  Events of types its version does not have are not
 * passed on (*handle stays NULL). */
pccl_result_t pccl_user_init(const struct pccl_user *u, void **ctx, uint64_t comm_id, int *mask,
                             const char *comm_name, int nnodes, int nranks, int rank,
                             pccl_log_fn log);
void pccl_user_start(const struct pccl_user *u, void *ctx, void **handle,
                     const struct pccl_descr_v5 *d);
void pccl_user_record(const struct pccl_user *u, void *handle, int state,
                      const union pccl_state_args_v4 *args);
void pccl_user_stop(const struct pccl_user *u, void *handle);
void pccl_user_finalize(const struct pccl_user *u, void *ctx);

#endif
