/*
 * cublas_handle.cuh -- the one cuBLAS handle of the process, for every
 * family that calls cuBLAS (gemm.cu defines it): created on first use
 * (outside any timing: every variant runs once for validation before it
 * is timed), bound to the caller's stream when that changes.
 */
#ifndef KERNELS_CUBLAS_HANDLE_CUH
#define KERNELS_CUBLAS_HANDLE_CUH

#include <cublas_v2.h>

cublasHandle_t rl_cublas_on(struct CUstream_st *stream);

#endif
