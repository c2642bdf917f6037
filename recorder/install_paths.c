#include "install_paths.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int asys_sibling_path(const char *relative, char *out, size_t size)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    int len = snprintf(out, size, "%s/%s", exe, relative);
    return len > 0 && (size_t)len < size ? 0 : -1;
}

int asys_inject_library_path(char *out, size_t size)
{
    const char *forced = getenv("ASYS_INJECT_LIB");
    if (forced && *forced) { /* as given: a missing file would only get ld.so's warning */
        int len = snprintf(out, size, "%s", forced);
        return len > 0 && (size_t)len < size && access(out, R_OK) == 0 ? 0 : -1;
    }
    char path[PATH_MAX], resolved[PATH_MAX];
    if (asys_sibling_path("../lib/" ASYS_INJECT_LIBRARY_NAME, path, sizeof path) != 0)
        return -1;
    /* canonical, so LD_PRELOAD and NVTX_INJECTION64_PATH name the same file */
    if (!realpath(path, resolved) || access(resolved, R_OK) != 0)
        return -1;
    int len = snprintf(out, size, "%s", resolved);
    return len > 0 && (size_t)len < size ? 0 : -1;
}

int asys_inject_sibling_path(const char *inject_library, const char *name, char *out, size_t size)
{
    const char *slash = strrchr(inject_library, '/');
    int dir = slash ? (int)(slash - inject_library + 1) : 0;
    int len = snprintf(out, size, "%.*s%s", dir, inject_library, name);
    return len > 0 && (size_t)len < size ? 0 : -1;
}

int asys_is_injected_library(const char *base)
{
    /* the builds that hold some collectors too: libasys-inject+osrt.so */
    static const char merged[] = "libasys-inject+";
    size_t len = strlen(base);
    if (!strncmp(base, merged, sizeof merged - 1) && len > 3 && !strcmp(base + len - 3, ".so"))
        return 1;
    return !strcmp(base, ASYS_INJECT_LIBRARY_NAME) || !strcmp(base, ASYS_OSRT_LIBRARY_NAME) ||
           !strcmp(base, ASYS_HEAP_LIBRARY_NAME) || !strcmp(base, ASYS_ACOMPUTE_LIBRARY_NAME) ||
           !strcmp(base, ASYS_VIDEO_LIBRARY_NAME);
}
