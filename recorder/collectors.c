/* The collector registry: one line per collector, in --help order. */
#include <stdio.h>
#include <string.h>

#include <limits.h>
#include <unistd.h>

#include "collector.h"
#include "install_paths.h"

extern const struct asys_collector asys_collector_hggc, asys_collector_hgtx, asys_collector_acdnn,
    asys_collector_acblas, asys_collector_pccl, asys_collector_osrt, asys_collector_hgvideo,
    asys_collector_cpu_sampling, asys_collector_event_sampling, asys_collector_ppu_metrics,
    asys_collector_memory, asys_collector_python, asys_collector_nic;

const struct asys_collector *const asys_collectors[] = {
    &asys_collector_hggc,
    &asys_collector_hgtx,
    &asys_collector_acdnn,
    &asys_collector_acblas,
    &asys_collector_pccl,
    &asys_collector_osrt,
    &asys_collector_hgvideo,
    &asys_collector_cpu_sampling,
    &asys_collector_event_sampling,
    &asys_collector_ppu_metrics,
    &asys_collector_memory,
    &asys_collector_python,
    &asys_collector_nic,
    NULL,
};

const struct asys_collector *asys_collector_find(const char *name, size_t len)
{
    for (const struct asys_collector *const *c = asys_collectors; *c; c++)
        if ((strlen((*c)->name) == len && !strncmp(name, (*c)->name, len)) ||
            ((*c)->alias && strlen((*c)->alias) == len && !strncmp(name, (*c)->alias, len)))
            return *c;
    return NULL;
}

void asys_collector_names(uint64_t features, int built_only, const char *sep, char *out,
                          size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (const struct asys_collector *const *c = asys_collectors; *c; c++) {
        if (!(features & (*c)->feature) || (built_only && !(*c)->built))
            continue;
        int n = snprintf(out + used, size - used, "%s%s", used ? sep : "", (*c)->name);
        if (n < 0 || (size_t)n >= size - used)
            return;
        used += (size_t)n;
    }
}

int asys_collector_preload(const struct asys_collector_setup *s, const char *library,
                           struct asys_env *env, struct asys_err *err)
{
    char path[PATH_MAX];
    if (asys_inject_sibling_path(s->inject_library, library, path, sizeof path) != 0 ||
        access(path, R_OK) != 0)
        return asys_fail(err, "cannot find '%s' beside '%s'", library, s->inject_library);
    return asys_env_append(env, "LD_PRELOAD", path, ':', err);
}
