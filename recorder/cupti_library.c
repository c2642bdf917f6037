/* Finding libcupti.so.13 (cupti_library.h). */
#include "cupti_library.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

void *asys_cupti_open(char *why, size_t why_size)
{
    const char *explicit_path = getenv("ASYS_CUPTI_LIB");
    if (explicit_path && *explicit_path) {
        void *lib = dlopen(explicit_path, RTLD_NOW | RTLD_LOCAL);
        if (!lib)
            snprintf(why, why_size, "%s", dlerror());
        return lib;
    }
    const char *home = getenv("CUDA_HOME");
    char in_home[2][1024];
    snprintf(in_home[0], sizeof in_home[0], "%s/lib64/libcupti.so.13",
             home ? home : "/usr/local/cuda");
    snprintf(in_home[1], sizeof in_home[1], "%s/extras/CUPTI/lib64/libcupti.so.13",
             home ? home : "/usr/local/cuda");
    const char *candidates[] = {"libcupti.so.13", "libcupti.so", in_home[0], in_home[1]};
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        void *lib = dlopen(candidates[i], RTLD_NOW | RTLD_LOCAL);
        if (lib)
            return lib;
    }
    snprintf(why, why_size, "libcupti.so.13 not found (set ASYS_CUPTI_LIB)");
    return NULL;
}
