/* The injected library's collector registry: what each collector's records
 * are (the segment's feature mask) and what it does when a traced process
 * starts.  The entry points that external loaders call (NVTX's
 * InitializeInjectionNvtx2, the CUDA driver's InitializeInjection) live in
 * the collectors' own files. */
#include "inject.h"

const struct asys_inject_collector asys_inject_collectors[] = {
    {"hgtx", ASYS_FEATURE_HGTX, ASYS_FEATURE_HGTX, asys_hgtx_init},
    {"osrt", ASYS_FEATURE_OSRT, ASYS_FEATURE_OSRT | ASYS_FEATURE_STACKS, asys_osrt_init},
    {"hggc", ASYS_FEATURE_HGGC, ASYS_FEATURE_HGGC | ASYS_FEATURE_STACKS, asys_hggc_init},
    {"memory", ASYS_FEATURE_MEMORY, ASYS_FEATURE_MEMORY | ASYS_FEATURE_STACKS, asys_heap_init},
    {"python", ASYS_FEATURE_PYTHON, ASYS_FEATURE_PYTHON | ASYS_FEATURE_HGTX, asys_python_init},
    {"pccl", ASYS_FEATURE_PCCL, ASYS_FEATURE_PCCL, asys_pccl_init},
    {"acdnn", ASYS_FEATURE_ACDNN, ASYS_FEATURE_ACDNN | ASYS_FEATURE_STACKS, asys_acdnn_init},
    {"acblas", ASYS_FEATURE_ACBLAS, ASYS_FEATURE_ACBLAS | ASYS_FEATURE_STACKS, asys_acblas_init},
    {"hgvideo", ASYS_FEATURE_HGVIDEO, ASYS_FEATURE_HGVIDEO, asys_video_init},
    {NULL, 0, 0, NULL},
};
