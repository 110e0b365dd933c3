/*
 * quant.c -- experiment 03's variants: one row each, its launcher on each
 * backend (cpu/quant.c, cpu/quant_dot.c, quant.cu), the scratch each
 * backend's path needs and whether it rounds the weights to FP16. Every
 * variant runs every format. Add a row and its functions; the experiment
 * validates, times, writes and draws it like the others.
 */
#include "quant.h"

#include <stdio.h>

const quant_variant quant_variants[] = {
    {.number = 1, .name = "gemv_dequant", .role = "decode_dequant", .phase = QUANT_DECODE,
     .what = "decode: 8 weights at a time dequantized in registers, FP32 sums: rows per thread "
             "(CPU), a warp per 1-2 rows (GPU); F16: experiment 02's gemv_fp16",
     .cpu = quant_decode_dequant_cpu, .cpu_scratch = quant_decode_dequant_cpu_scratch,
     .cuda = CUDA_ONLY(quant_decode_dequant_cuda)},
    {.number = 2, .name = "dequant_gemm", .role = "prefill", .phase = QUANT_PREFILL,
     .what = "prefill: dequantize the matrix, then the library GEMM: FP32 and OpenBLAS SGEMM "
             "(CPU), FP16 and cuBLAS (GPU)",
     .cpu = quant_prefill_cpu, .cpu_scratch = quant_prefill_cpu_scratch,
     .cuda = CUDA_ONLY(quant_prefill_cuda), .cuda_scratch = CUDA_ONLY(quant_prefill_cuda_scratch),
     .cuda_rounds_to_fp16 = true},
    {.number = 3, .name = "gemv_int8", .role = "decode_int8", .phase = QUANT_DECODE,
     .what = "decode: x quantized to int8 once per call, integer dot products (AVX2 maddubs, "
             "VNNI dpbusd on the CPU; dp4a on the GPU, x in shared memory), scales once per "
             "32 weights; F16: gemv_fp16",
     .cpu = quant_decode_int8_best, .cpu_scratch = quant_int8_scratch,
     .cuda = CUDA_ONLY(quant_decode_dp4a_cuda), .quantizes_x = true},
    {.number = 4, .name = "gemm_int8", .role = "batch_int8", .phase = QUANT_BATCH,
     .what = "a few tokens: each token's x quantized to int8 once, each block of weights read "
             "once and dotted with every token (4 at a time), integer dot products as gemv_int8; "
             "F16: gemv_fp16, 8 tokens at a time over panels of rows in the L2 past 8",
     .cpu = quant_batch_int8_best, .cpu_scratch = quant_batch_int8_scratch, .quantizes_x = true},
    {.number = 5, .name = "gemm_mma", .role = "batch_mma", .phase = QUANT_BATCH,
     .what = "a few tokens on the tensor cores (Marlin's design): the weights read packed, "
             "dequantized in registers into the MMA's FP16 operand (q4 in half arithmetic), x "
             "staged in shared memory, m16n8k16 with FP32 sums, k split over thread blocks where "
             "the rows are few (quant_mma.cuh); F16 through the same kernel",
     .cuda = CUDA_ONLY(quant_batch_mma_cuda), .cuda_scratch = CUDA_ONLY(quant_batch_mma_cuda_scratch),
     .cuda_rounds_to_fp16 = true},
    {0},
};

static bool has(const void *row, int backend)
{
    return quant_launcher(row, backend) != NULL;
}

static void detail(const void *row, char *buf, size_t len)
{
    const quant_variant *v = row;
    static const char *const PHASE[] = {"decode, n = 1", "prefill, any n", "batch, any n"};
    snprintf(buf, len, "%s%s", PHASE[v->phase], v->quantizes_x ? ", x in 8 bits" : "");
}

const kernel_family quant_family = {"quant", "cpu/quant.c", "quant.cu", quant_variants,
                                    sizeof quant_variants[0], has, detail, "gemv.cu"};
