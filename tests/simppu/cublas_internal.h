/* simppu's cuBLAS stand-in: what its generated part (gen_cublas_rest.py) calls. */
#ifndef SIMPPU_CUBLAS_INTERNAL_H
#define SIMPPU_CUBLAS_INTERNAL_H

#include <cublas_v2.h>

/* A routine without a model of its own: checks the handle, launches one
 * simulated kernel `kernel` on its stream. */
cublasStatus_t cublas_stand_in_routine(cublasHandle_t handle, const char *kernel);

#endif
