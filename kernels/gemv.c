/*
 * gemv.c -- experiment 02's variants: one row each, its launcher on each
 * backend (cpu/gemv.c, gemv.cu). Add a row and its functions; the
 * experiment validates, times, writes and draws it like the others.
 */
#include "gemv.h"

#include <stdint.h>
#include <stdio.h>

const gemv_variant gemv_variants[] = {
    {.number = 1, .name = "gemv_fp16_scalar", .role = "scalar", .max_n = 1,
     .what = "one weight at a time: a row per iteration (CPU), a warp per row with 2-byte loads (GPU)",
     .cpu = gemv_scalar_cpu, .cuda = CUDA_ONLY(gemv_scalar_cuda), .cpu_scratch = gemv_scalar_cpu_scratch},
    {.number = 2, .name = "gemv_fp16", .role = "bandwidth", .max_n = GEMV_MAX_BATCH,
     .what = "16-byte loads of 8 halves, several rows per step, FP32 sums: what the memory bus needs "
             "(GPU: a warp per 16 rows, tensor-core products of all n tokens at once)",
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

/* ---- the CUDA kernel's plan and its preconditions (gemv.h) ---------------- */

static long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

gemv_cuda_plan gemv_cuda_plan_for(int rows, int k, int sms, int blocks_per_sm)
{
    gemv_cuda_plan p = {.rows_per_warp = GEMV_CUDA_TILE_ROWS, .threads = 32 * GEMV_CUDA_BLOCK_WARPS};
    p.tiles = rows > 0 ? ceil_div(rows, GEMV_CUDA_TILE_ROWS) : 0;
    long long steps = k > 0 ? ceil_div(k, 32) : 0; /* 32 halves a step: 4 lanes x 8 */
    long long resident = sms > 0 && blocks_per_sm > 0 ? (long long)sms * blocks_per_sm : 0;
    int split = GEMV_CUDA_MAX_SPLIT;
    /* Halve while the grid would not fit in one wave, or a warp's share of
     * the row would be less than one round of GEMV_CUDA_STEPS steps (and
     * with no rows, nothing to share). */
    while (split > 1 && (!p.tiles || ceil_div(p.tiles, GEMV_CUDA_BLOCK_WARPS / split) > resident ||
                         steps < (long long)split * GEMV_CUDA_STEPS))
        split /= 2;
    p.split = split;
    p.tiles_per_block = GEMV_CUDA_BLOCK_WARPS / split;
    p.blocks = p.tiles ? ceil_div(p.tiles, p.tiles_per_block) : 1;
    return p;
}

bool gemv_cuda_shape_ok(int rows, int k, const void *w, const void *x, char *why, size_t len)
{
    if (rows < 0 || k < 0)
        snprintf(why, len, "gemv_fp16 (CUDA) needs rows >= 0 and k >= 0, got rows = %d, k = %d", rows, k);
    else if (k % 8)
        snprintf(why, len, "gemv_fp16 (CUDA) loads 8 halves of a row at a time (16 bytes): k must be "
                 "a multiple of 8, got k = %d", k);
    else if ((uintptr_t)w % 16)
        snprintf(why, len, "gemv_fp16 (CUDA) reads w with 16-byte loads: w must be 16-byte aligned, "
                 "got %p", w);
    else if ((uintptr_t)x % 16)
        snprintf(why, len, "gemv_fp16 (CUDA) reads x with 16-byte loads: x must be 16-byte aligned, "
                 "got %p", x);
    else
        return true;
    return false;
}

const kernel_family gemv_family = {"gemv", "cpu/gemv.c", "gemv.cu", gemv_variants,
                                   sizeof gemv_variants[0], has, detail, NULL};
