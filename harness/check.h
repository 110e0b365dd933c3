/*
 * check.h -- every CUDA, cuBLAS and NVML call goes through one of these.
 *
 * A failed call prints the library's message, the expression, the file and
 * the line, removes temporary outputs, and exits with code 1:
 *
 *   rooflab: CUDA error: out of memory
 *     in  cudaMalloc(&p, bytes)
 *     at  harness/backend_cuda.cu:88
 *
 * Kernels include this header only; it depends on nothing else here.
 * Compiled by nvcc, it refuses a CUDA older than 12.
 */
#ifndef ROOFLAB_CHECK_H
#define ROOFLAB_CHECK_H

#ifdef __cplusplus
extern "C" {
#endif

void rl_fail_check(const char *library, const char *message, const char *expr, const char *file,
                   int line) __attribute__((noreturn));

#ifdef __cplusplus
}
#endif

/* A launcher's precondition on its arguments: a broken one fails here,
 * with why (a string), the condition, the file and the line, rather than
 * calling through a bad index or launching a wrong grid. */
#define RL_REQUIRE(cond, why)                                                    \
    do {                                                                         \
        if (!(cond))                                                             \
            rl_fail_check("argument", (why), #cond, __FILE__, __LINE__);         \
    } while (0)

#ifdef __CUDACC__
#include <cuda_runtime.h>

/* The code needs CUDA 12: the three-argument cudaGraphInstantiate (CUDA
 * 12 dropped the five-argument one), cudaSetDevice creating the context. */
#if CUDART_VERSION < 12000
#error "rooflab needs CUDA 12 or newer: this nvcc's runtime is older (make NVCC=/usr/local/cuda-12.x/bin/nvcc)"
#endif

#define RL_CUDA_CHECK(expr)                                                                \
    do {                                                                                   \
        cudaError_t rl_err_ = (expr);                                                      \
        if (rl_err_ != cudaSuccess)                                                        \
            rl_fail_check("CUDA", cudaGetErrorString(rl_err_), #expr, __FILE__, __LINE__); \
    } while (0)

/* After every kernel launch: a bad configuration fails here, at its line.
 * Faults inside the kernel surface at the next checked synchronization. */
#define RL_CUDA_CHECK_LAUNCH() RL_CUDA_CHECK(cudaGetLastError())

#define RL_CUBLAS_CHECK(expr)                                                                  \
    do {                                                                                       \
        cublasStatus_t rl_st_ = (expr);                                                        \
        if (rl_st_ != CUBLAS_STATUS_SUCCESS)                                                   \
            rl_fail_check("cuBLAS", cublasGetStatusString(rl_st_), #expr, __FILE__, __LINE__); \
    } while (0)
#endif /* __CUDACC__ */

#endif
