// Shared by the sample-style test programs (tests/e2e/test_samples.py): each is
// a small CUDA program in the manner of NVIDIA's classic runtime samples,
// written from the runtime API documentation, built by nvcc -cudart shared so
// that it runs on simppu and on a GPU alike.
#ifndef SAMPLES_COMMON_H
#define SAMPLES_COMMON_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CHECK(call) \
    do { \
        cudaError_t e_ = (call); \
        if (e_ != cudaSuccess) { \
            fprintf(stderr, "%s:%d: %s: %s (%s)\n", __FILE__, __LINE__, #call, \
                    cudaGetErrorString(e_), cudaGetErrorName(e_)); \
            exit(1); \
        } \
    } while (0)

// A call that must fail with `expected`; prints what it got.
#define EXPECT_ERROR(call, expected) \
    do { \
        cudaError_t e_ = (call); \
        printf("%s -> %s\n", #call, cudaGetErrorName(e_)); \
        if (e_ != (expected)) { \
            fprintf(stderr, "%s:%d: %s gave %s, not %s\n", __FILE__, __LINE__, #call, \
                    cudaGetErrorName(e_), cudaGetErrorName(expected)); \
            exit(1); \
        } \
        cudaGetLastError(); \
    } while (0)

// CLOCK_MONOTONIC ns: the clock of the analysis database.
static inline unsigned long long monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

#endif
