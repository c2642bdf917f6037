/* HGTX collector: NVTX's extension modules.
 *
 * Each module of a program (executable or library) compiled with an
 * extension header (payload, counters, memory) calls
 * InitializeInjectionNvtxExtension once per extension with that module's
 * function slots; we fill the slots we implement (by callback id), NVTX
 * turns the rest into no-ops.  Returning 0 makes every function of that
 * extension a no-op in that module (NVTX then also answers 0 to
 * nvtxDomainIsEnabled). */
#define _GNU_SOURCE
#include <stddef.h>

#include "hgtx_internal.h"

/* The extension registry: which module id is which table. */
static const struct asys_hgtx_ext_module *const ext_modules[] = {
    &asys_hgtx_payload_module,
    &asys_hgtx_counters_module,
    &asys_hgtx_mem_module,
};

static const struct asys_hgtx_ext_module *find_module(uint16_t module_id)
{
    for (size_t i = 0; i < sizeof ext_modules / sizeof ext_modules[0]; i++)
        if (ext_modules[i]->module_id == module_id)
            return ext_modules[i];
    return NULL;
}

ASYS_EXPORT int InitializeInjectionNvtxExtension(nvtxExtModuleInfo_t *info)
{
    asys_inject_init();
    if (!asys_proc.enabled || !(asys_proc.features & ASYS_FEATURE_HGTX) || !info ||
        info->structSize < offsetof(nvtxExtModuleInfo_t, extInfo) || !info->segments)
        return 0;
    const struct asys_hgtx_ext_module *m = find_module(info->moduleId);
    if (!m) {
        asys_debug("NVTX extension module %u is not known; its calls are no-ops",
                   (unsigned)info->moduleId);
        return 0;
    }
    for (size_t s = 0; s < info->segmentsCount; s++) {
        nvtxExtModuleSegment_t *segment = &info->segments[s];
        if (!segment->functionSlots)
            continue;
        for (size_t i = 0; i < m->hook_count; i++)
            if (m->hooks[i].cbid < segment->slotCount)
                segment->functionSlots[m->hooks[i].cbid] = (intptr_t)m->hooks[i].fn;
    }
    asys_debug("NVTX %s extension attached (compatibility 0x%x)", m->name,
               (unsigned)info->compatId);
    return 1;
}
