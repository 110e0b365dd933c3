/*
 * gemv.c -- experiment 02's variants: one row each, its launcher on each
 * backend (cpu/gemv.c, gemv.cu). Add a row and its functions; the
 * experiment validates, times, writes and draws it like the others.
 */
#include "gemv.h"

#include <stdio.h>

const gemv_variant gemv_variants[] = {
    {.number = 1, .name = "gemv_fp16_scalar", .role = "scalar", .max_n = 1,
     .what = "one weight at a time: a row per iteration (CPU), a warp per row with 2-byte loads (GPU)",
     .cpu = gemv_scalar_cpu, .cuda = CUDA_ONLY(gemv_scalar_cuda), .cpu_scratch = gemv_scalar_cpu_scratch},
    {.number = 2, .name = "gemv_fp16", .role = "bandwidth", .max_n = GEMV_MAX_BATCH,
     .what = "16-byte loads of 8 halves, several rows per step, FP32 sums: what the memory bus needs",
     .cpu = gemv_fp16_cpu, .cuda = CUDA_ONLY(gemv_fp16_cuda)},
    {.number = 3, .name = "gemm_library", .role = "library", .max_n = 0,
     .what = "the library GEMM: FP16 -> FP32 and OpenBLAS SGEMM (CPU), cublasGemmEx FP16 in, FP32 out (GPU)",
     .cpu = gemv_library_cpu, .cuda = CUDA_ONLY(gemv_library_cuda), .cpu_scratch = gemv_library_cpu_scratch},
    {.number = 4, .name = "gemm_library_tiled", .role = "tiled", .max_n = 0,
     .what = "the library GEMM on blocks of 64 rows: each block FP16 -> FP32 in a thread's cache, "
             "then OpenBLAS SGEMM on it (CPU only: cuBLAS takes FP16 as it is)",
     .cpu = gemv_library_tiled_cpu, .cpu_scratch = gemv_library_tiled_cpu_scratch},
    {0},
};

static bool has(const void *row, int backend)
{
    const gemv_variant *v = row;
    return backend == KERNEL_CUDA ? v->cuda != NULL : v->cpu != NULL;
}

static void detail(const void *row, char *buf, size_t len)
{
    const gemv_variant *v = row;
    if (v->max_n)
        snprintf(buf, len, v->max_n == 1 ? "n = 1" : "n <= %d", v->max_n);
    else
        snprintf(buf, len, "any n");
}

const kernel_family gemv_family = {"gemv", "cpu/gemv.c", "gemv.cu", gemv_variants,
                                   sizeof gemv_variants[0], has, detail, NULL};
