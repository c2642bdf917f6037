/* ACDNN/ACBLAS collector (libasys-acompute.so): what the generated
 * wrappers (acompute_wrap_*.c, from recorder/inject/acompute_gen.py) call.
 *
 * A wrapper finds the real function (acompute_real: resolved once, then one
 * load), asks acompute_enter whether to trace (the library's collector is
 * on and asys is not itself inside the call), calls it and hands the result
 * to acompute_leave, which keeps the handle's stream and writes the call's
 * record.  Nothing on the way allocates, locks or makes a system call. */
#ifndef ASYS_ACOMPUTE_H
#define ASYS_ACOMPUTE_H

#include <stdint.h>

#include "acompute_api.h"
#include "inject.h"

/* What a wrapper knows about its function (generated per wrapper). */
enum acompute_call_flags {
    ACOMPUTE_HAS_HANDLE = 1u << 0, /* the first parameter is the library's handle */
    ACOMPUTE_CREATES = 1u << 1, /* it creates a handle (the first parameter points to it) */
    ACOMPUTE_STREAM_ARG = 1u << 2, /* a cudaStream_t parameter names the stream */
    ACOMPUTE_SETS_STREAM = 1u << 3, /* XSetStream(handle, stream) */
    ACOMPUTE_DESTROYS = 1u << 4, /* XDestroy(handle) */
    ACOMPUTE_STATUS = 1u << 5, /* returns cudnnStatus_t / cublasStatus_t */
    ACOMPUTE_RESULT = 1u << 6, /* returns another integer (a version, a size) */
};

struct acompute_frame {
    uint64_t start;
};

extern ASYS_TLS __thread uint32_t acompute_tls_depth;
/* per library (enum asys_acompute_library): its collector is on */
extern uint8_t acompute_library_on[8];
extern void *acompute_real_table[ACOMPUTE_API_COUNT + 1];

/* The real function of API `id` (resolved on first use; NULL: not found). */
void *acompute_resolve(uint32_t id);
static inline void *acompute_real(uint32_t id)
{
    void *p = __atomic_load_n(&acompute_real_table[id], __ATOMIC_ACQUIRE);
    return ASYS_LIKELY(p != 0) ? p : acompute_resolve(id);
}

/* 1: trace this call (then acompute_leave must follow it). */
static inline int acompute_enter(struct acompute_frame *f, uint32_t id)
{
    if (ASYS_LIKELY(
            !__atomic_load_n(&acompute_library_on[acompute_api_library[id]], __ATOMIC_RELAXED)))
        return 0;
    if (ASYS_UNLIKELY(asys_tls_busy))
        return 0; /* asys itself calls the library: not the program's call */
    f->start = asys_now();
    acompute_tls_depth++;
    return 1;
}

void acompute_leave(struct acompute_frame *f, uint32_t id, uint32_t flags, int64_t status,
                    uint64_t handle, uint64_t stream);

#endif
