/* What the cuDNN/cuBLAS stand-ins share (aclib.c, compiled into each):
 * simulated kernels with the libraries' names, launched through simppu's
 * runtime on the caller's stream, so the HGGC collector sees their launches
 * and their device activity as it would the real libraries'. */
#ifndef SIMPPU_ACLIB_H
#define SIMPPU_ACLIB_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))

/* Launches kernel `name` (registered on first use) on `stream`, running
 * `ns` nanoseconds of device time; 0 or a cudaError_t. */
int aclib_launch(const char *name, uint64_t ns, cudaStream_t stream);
/* Device time of a GEMM of m x n x k at 20 TFLOP/s, at least 2 us. */
uint64_t aclib_gemm_ns(int64_t m, int64_t n, int64_t k, int64_t batch);

#endif
