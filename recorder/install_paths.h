/* Where asys's own files are: relative to the running executable, so the
 * build tree (build/bin, build/lib) and an install (PREFIX/bin, PREFIX/lib)
 * both work without configuration. */
#ifndef ASYS_INSTALL_PATHS_H
#define ASYS_INSTALL_PATHS_H

#include <stddef.h>

/* The injected library's file name (the launcher loads it; stacks leave its frames out). */
#define ASYS_INJECT_LIBRARY_NAME "libasys-inject.so"

/* The libraries of the collectors whose wrappers interpose libc, beside it
 * (preloaded only when their collector is chosen). */
#define ASYS_OSRT_LIBRARY_NAME "libasys-osrt.so"
#define ASYS_HEAP_LIBRARY_NAME "libasys-heap.so"
/* ACDNN/ACBLAS: every cuDNN/cuBLAS entry point, preloaded when either is chosen */
#define ASYS_ACOMPUTE_LIBRARY_NAME "libasys-acompute.so"
/* the video libraries' entry points and dlsym (-t hgvideo) */
#define ASYS_VIDEO_LIBRARY_NAME "libasys-video.so"

/* Whether a file name (no directory) is one of asys's injected libraries. */
int asys_is_injected_library(const char *base);

/* out = <directory of this executable>/<relative>; returns 0 or -1. */
int asys_sibling_path(const char *relative, char *out, size_t size);

/* The injected library: $ASYS_INJECT_LIB, else <bindir>/../lib/ASYS_INJECT_LIBRARY_NAME. */
int asys_inject_library_path(char *out, size_t size);

/* The library `name` in the injected library's directory; 0 or -1. */
int asys_inject_sibling_path(const char *inject_library, const char *name, char *out, size_t size);

#endif
