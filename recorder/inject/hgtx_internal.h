/* Shared by the HGTX collector's files: the core API (hgtx.c), the
 * extension modules (hgtx_ext.c: payload, counters, memory) and the naming
 * modules (hgtx_naming.c: CUDA, CUDA runtime, OpenCL, resources, user
 * synchronization). */
#ifndef ASYS_HGTX_INTERNAL_H
#define ASYS_HGTX_INTERNAL_H

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCounters.h>
#include <nvtx3/nvToolsExtMem.h>
#include <nvtx3/nvToolsExtPayload.h>
#include <nvtx3/nvToolsExtSync.h>

#include "inject.h"

/* One slot of an NVTX function table: callback id -> our hook. */
struct asys_hgtx_hook {
    unsigned cbid;
    void (*fn)(void);
};
#define ASYS_HGTX_HOOK(id, f) \
    { \
        id, (void (*)(void))(f) \
    }

/* The domain id of an NVTX domain handle (asys hands out small integers). */
uint16_t asys_hgtx_domain_id(nvtxDomainHandle_t domain);

/* The string id of an NVTX message (ASCII, wide or registered); 0: none. */
uint32_t asys_hgtx_message_id(struct asys_thread *t, int32_t type, nvtxMessageValue_t value);

/* Ids the tool generates (schemas, counters, scopes, time domains): from
 * 2^32 up, process-wide. */
uint64_t asys_hgtx_dynamic_id(void);

/* Handles asys returns for heaps, regions, permissions, resources, sync
 * objects: from 1 up, process-wide, never 0 or -1. */
uint64_t asys_hgtx_new_handle(void);

/* Whole record size in header words (ASYS_REC_EXTENDED past 254 words). */
static inline unsigned asys_hgtx_size_words(uint32_t size)
{
    return size / 8 < ASYS_REC_EXTENDED ? size / 8 : ASYS_REC_EXTENDED;
}

/* Payload records (hgtx_payload.c).  `data` is nvtxPayloadData_t[count]. */
void asys_hgtx_write_payloads(struct asys_thread *t, uint16_t domain, unsigned event,
                              uint64_t range_id, const nvtxPayloadData_t *data, size_t count,
                              uint64_t ticks);
/* After an ...Ex call: its NVTX_PAYLOAD_TYPE_EXT payloads, if any. */
void asys_hgtx_attach_payloads(struct asys_thread *t, uint16_t domain,
                               const nvtxEventAttributes_t *a, uint64_t ticks);
/* Push/pop levels shared with the core API. */
int asys_hgtx_push_level(struct asys_thread *t, uint16_t domain);
int asys_hgtx_pop_level(struct asys_thread *t, uint16_t domain);
uint64_t asys_hgtx_new_range_id(struct asys_thread *t);

/* At process exit: second readings of the timer sources (hgtx_payload.c). */
void asys_hgtx_timers_at_exit(void);

/* The extension modules' function tables (InitializeInjectionNvtxExtension). */
struct asys_hgtx_ext_module {
    uint16_t module_id;
    const char *name;
    const struct asys_hgtx_hook *hooks;
    size_t hook_count;
};
extern const struct asys_hgtx_ext_module asys_hgtx_payload_module, asys_hgtx_counters_module,
    asys_hgtx_mem_module;

/* nvtxDomainResourceCreate/Destroy (hgtx_naming.c), in the core table. */
nvtxResourceHandle_t NVTX_API asys_hgtx_resource_create(nvtxDomainHandle_t domain,
                                                        nvtxResourceAttributes_t *attribs);
void NVTX_API asys_hgtx_resource_destroy(nvtxResourceHandle_t resource);

/* The naming modules' tables (InitializeInjectionNvtx2). */
struct asys_hgtx_core_module {
    int module; /* NvtxCallbackModule */
    const struct asys_hgtx_hook *hooks;
    size_t hook_count;
};
extern const struct asys_hgtx_core_module asys_hgtx_naming_modules[];
extern const size_t asys_hgtx_naming_module_count;

/* HGGC (hggc.c): CUPTI's id of a stream or context, when CUPTI is attached. */
ASYS_RUNTIME_API int asys_hggc_stream_id(const void *stream, uint32_t *id);
int asys_hggc_context_id(const void *context, uint32_t *id);

#endif
