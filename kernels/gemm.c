/*
 * gemm.c -- experiment 04's variants: one row each, its implementation on
 * each backend (cpu/gemm.c, gemm.cu). Add a row and its gemm_impl; the
 * experiment validates, times, writes and draws it like the others.
 */
#include "gemm.h"

#include <stdio.h>

const gemm_variant gemm_variants[] = {
    {.number = 1, .name = "tiled", .role = "own_tiled",
     .what = "own tiled GEMM, FP32: one output tile per thread at a time, a static schedule "
             "(CPU), or per thread block, in shared memory (GPU)",
     .cpu = &gemm_tiled_cpu, .cuda = CUDA_ONLY(&gemm_tiled_cuda)},
    {.number = 2, .name = "blas", .role = "library",
     .what = "the library GEMM: OpenBLAS cblas_sgemm, FP32 (CPU); cuBLAS cublasGemmEx, FP16 in, "
             "FP32 accumulate and out (GPU)",
     .cpu = &gemm_sgemm_cpu, .cuda = CUDA_ONLY(&gemm_cublas_cuda)},
    {0},
};

static bool has(const void *row, int backend)
{
    return gemm_impl_on(row, backend) != NULL;
}

/* The tiles each backend cuts C into, for --list. */
static void detail(const void *row, char *buf, size_t len)
{
    const gemm_variant *v = row;
    const gemm_impl *impl[] = {v->cpu, v->cuda};
    const char *backend[] = {"cpu", "cuda"};
    size_t used = 0;
    buf[0] = '\0';
    for (int b = 0; b < 2; b++)
        if (impl[b] && impl[b]->tile_m && used < len)
            used += (size_t)snprintf(buf + used, len - used, "%s%dx%d tiles (%s)", used ? ", " : "",
                                     impl[b]->tile_m, impl[b]->tile_n, backend[b]);
    if (!buf[0])
        snprintf(buf, len, "the library's own tiles");
}

const kernel_family gemm_family = {"gemm", "cpu/gemm.c", "gemm.cu", gemm_variants,
                                   sizeof gemm_variants[0], has, detail, NULL};
