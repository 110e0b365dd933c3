/*
 * fusion.c -- experiment 05's variants: one row each, its launcher on each
 * backend (cpu/fusion.c, fusion.cu). "pair" rows apply the op twice, "chain"
 * rows k times (the experiment sweeps k); the names hold for either op.
 * Add a row and its functions; the experiment validates, times, writes and
 * draws it like the others.
 */
#include "fusion.h"

const fusion_variant fusion_variants[] = {
    {.number = 1, .name = "one_op", .role = "one_op", .k = 1, .fused = true,
     .what = "one kernel, one op: the floor",
     .cpu = fusion_fused_cpu, .cuda = CUDA_ONLY(fusion_fused_cuda), .bytes = fusion_bytes_one_pass},
    {.number = 2, .name = "pair_unfused", .role = "pair_unfused", .k = 2, .fused = false,
     .what = "two kernels, one op each: the intermediate goes to memory",
     .cpu = fusion_unfused_cpu, .cuda = CUDA_ONLY(fusion_unfused_cuda), .bytes = fusion_bytes_per_op},
    {.number = 3, .name = "pair_fused", .role = "pair_fused", .k = 2, .fused = true,
     .what = "one kernel, both ops in registers",
     .cpu = fusion_fused_cpu, .cuda = CUDA_ONLY(fusion_fused_cuda), .bytes = fusion_bytes_one_pass},
    {.number = 4, .name = "pair_fused_vec4", .k = 2, .fused = true,
     .what = "as pair_fused, with 16-byte loads and stores",
     .cpu = fusion_fused_vec4_cpu, .cuda = CUDA_ONLY(fusion_fused_vec4_cuda), .bytes = fusion_bytes_one_pass},
    {.number = 5, .name = "chain_unfused", .role = "chain_unfused", .k = 0, .fused = false,
     .what = "k kernels, one op each",
     .cpu = fusion_unfused_cpu, .cuda = CUDA_ONLY(fusion_unfused_cuda), .bytes = fusion_bytes_per_op},
    {.number = 6, .name = "chain_fused", .role = "chain_fused", .k = 0, .fused = true,
     .what = "one kernel, k ops in registers",
     .cpu = fusion_fused_cpu, .cuda = CUDA_ONLY(fusion_fused_cuda), .bytes = fusion_bytes_one_pass},
    /* glibc's scalar cosf, one call per element: a compute-bound element-wise
     * op on a CPU, for op cos only (the GPU's cosf is variant 1's) */
    {.number = 7, .name = "one_op_libm", .k = 1, .fused = true, .libm = true,
     .what = "as one_op with the C library's scalar cosf (op cos only)",
     .cpu = fusion_fused_libm_cpu, .bytes = fusion_bytes_one_pass},
    {.number = 8, .name = "pair_unfused_libm", .role = "pair_unfused_libm", .k = 2, .fused = false,
     .libm = true, .what = "as pair_unfused with the C library's scalar cosf (op cos only)",
     .cpu = fusion_unfused_libm_cpu, .bytes = fusion_bytes_per_op},
    {.number = 9, .name = "pair_fused_libm", .role = "pair_fused_libm", .k = 2, .fused = true,
     .libm = true, .what = "as pair_fused with the C library's scalar cosf (op cos only)",
     .cpu = fusion_fused_libm_cpu, .bytes = fusion_bytes_one_pass},
    {0},
};

static bool has(const void *row, int backend)
{
    const fusion_variant *v = row;
    return backend == KERNEL_CUDA ? v->cuda != NULL : v->cpu != NULL;
}

const kernel_family fusion_family = {"fusion", "cpu/fusion.c", "fusion.cu", fusion_variants,
                                     sizeof fusion_variants[0], has, NULL, NULL};
