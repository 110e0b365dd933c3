/*
 * common.h -- what every kernel family shares, usable from C and CUDA.
 */
#ifndef KERNELS_COMMON_H
#define KERNELS_COMMON_H

/* Functions that run on both sides: one definition serves the CPU
 * reference and the CUDA kernel. */
#ifdef __CUDACC__
#define RL_HD __host__ __device__ __forceinline__
#else
#define RL_HD static inline
#endif

/* cudaStream_t is "struct CUstream_st *"; C code carries it by this name. */
struct CUstream_st;

#endif
