/* Where CUPTI is: ASYS_CUPTI_LIB, the library path, then CUDA_HOME (or
 * /usr/local/cuda)'s lib64 and extras/CUPTI/lib64.  Shared by the HGGC
 * collector in the target and the PPU metrics sampler in the launcher. */
#ifndef ASYS_CUPTI_LIBRARY_H
#define ASYS_CUPTI_LIBRARY_H

#include <stddef.h>

/* dlopen's handle, or NULL with the reason in `why`. */
void *asys_cupti_open(char *why, size_t why_size);

#endif
