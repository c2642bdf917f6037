/* simppu: the interface between the simulated runtime (libcudart.so.13) and
 * the simulated CUPTI (libcupti.so.13).  A test fixture and demo device: it
 * is never linked into asys.
 *
 * The runtime calls the hooks CUPTI installs: API callbacks at the entry and
 * exit of every runtime call, resource callbacks (contexts, streams, graphs),
 * and activity records in the exact cupti_activity.h layouts.  Times are
 * CLOCK_MONOTONIC ns on the runtime's side; CUPTI converts them to the
 * tool's clock. */
#ifndef SIMPPU_INTERNAL_H
#define SIMPPU_INTERNAL_H

#include <cupti.h>
#include <stddef.h>
#include <stdint.h>

struct simppu_hooks {
    /* runtime API callback (CUPTI_CB_DOMAIN_RUNTIME_API) */
    void (*api)(CUpti_CallbackId cbid, const CUpti_CallbackData *data);
    /* resource callback (CUPTI_CB_DOMAIN_RESOURCE) */
    void (*resource)(CUpti_CallbackId cbid, const void *data);
    /* whether records of `kind` are wanted; then their delivery */
    int (*activity_enabled)(CUpti_ActivityKind kind);
    void (*activity)(const CUpti_Activity *record, size_t size);
    /* CLOCK_MONOTONIC ns -> the timestamps CUPTI hands out */
    uint64_t (*timestamp)(uint64_t monotonic_ns);
    /* driver API callback (CUPTI_CB_DOMAIN_DRIVER_API), from libcuda.so.1's entry points */
    void (*driver_api)(CUpti_CallbackId cbid, const CUpti_CallbackData *data);
};

/* Exported by libcudart.so.13, called by libcupti.so.13. */
void simppu_install_hooks(const struct simppu_hooks *hooks);
/* Ids CUPTI reports for runtime handles. */
uint32_t simppu_context_id(const void *context);
uint32_t simppu_context_device(const void *context);
uint32_t simppu_stream_id(const void *stream);
uint32_t simppu_graph_id(const void *graph);
uint64_t simppu_graph_node_id(const void *node);
uint32_t simppu_graph_exec_id(const void *exec);
/* Emits DEVICE and CONTEXT records for what exists (activity kind enabled late). */
void simppu_report_inventory(void);
/* CLOCK_MONOTONIC ns. */
uint64_t simppu_now_ns(void);

#endif
