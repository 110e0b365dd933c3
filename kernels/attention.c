/*
 * attention.c -- experiment 07's variants: one row each, its launcher on
 * each backend (cpu/attention.c, attention.cu). Add a row and its
 * functions; the experiment validates, times, writes and draws it like
 * the others.
 */
#include "attention.h"

#include <stdio.h>

const attention_variant attention_variants[] = {
    {.number = 1, .name = "decode_fused", .role = "decode_fused", .phase = ATTN_DECODE, .fused = true,
     .what = "one pass over each sequence's K and V, online softmax; the GPU splits the cache "
             "among blocks and merges their partial sums (flash-decoding)",
     .cpu = attention_decode_fused_cpu, .cuda = CUDA_ONLY(attention_decode_split_cuda),
     .key = {"fused", "split-K fused"}},
    {.number = 2, .name = "decode_materialized", .role = "decode_materialized", .phase = ATTN_DECODE,
     .what = "S = q K^T written out, softmax in place, then P V: three passes (cuBLAS on the GPU)",
     .cpu = attention_decode_materialized_cpu, .cuda = CUDA_ONLY(attention_decode_materialized_cuda),
     .key = {"materialized", "materialized (cuBLAS)"}},
    {.number = 3, .name = "prefill_materialized", .role = "prefill_materialized",
     .phase = ATTN_PREFILL,
     .what = "S = Q K^T by the library GEMM (n x n FP32 in memory), softmax in place, P V by the "
             "library GEMM (OpenBLAS SGEMM / cuBLAS)",
     .cpu = attention_prefill_materialized_cpu, .cuda = CUDA_ONLY(attention_prefill_materialized_cuda),
     .key = {"materialized (OpenBLAS)", "materialized (cuBLAS)"}},
    {.number = 4, .name = "prefill_fused", .role = "prefill_fused", .phase = ATTN_PREFILL, .fused = true,
     .what = "tiled: a block of queries against blocks of keys, scores in cache or shared memory "
             "only, online softmax (FlashAttention's loop; the CPU's tile products by SGEMM)",
     .cpu = attention_prefill_fused_cpu, .cuda = CUDA_ONLY(attention_prefill_fused_cuda),
     .key = {"fused (tiled)", "fused (tiled)"}},
    {0},
};

static bool has(const void *row, int backend)
{
    const attention_variant *v = row;
    return backend == KERNEL_CUDA ? v->cuda != NULL : v->cpu != NULL;
}

static void detail(const void *row, char *buf, size_t len)
{
    const attention_variant *v = row;
    snprintf(buf, len, "%s", v->phase == ATTN_DECODE ? "decode" : "prefill");
}

const kernel_family attention_family = {"attention", "cpu/attention.c", "attention.cu",
                                        attention_variants, sizeof attention_variants[0], has,
                                        detail, NULL};

/* Decode: the scores of every (sequence, query head), ctx floats each.
 * Prefill: every head's n x n scores. On the CPU, P overwrites S, and both
 * prefill variants keep FP32 copies of Q, K and V for OpenBLAS; on the
 * GPU, P is an FP16 copy beside S, for the tensor cores. */
size_t attention_scratch_bytes(const attention_variant *v, int backend, const attention_args *a)
{
    size_t scores = v->phase == ATTN_DECODE ? (size_t)a->batch * a->heads_q * a->ctx
                                            : (size_t)a->batch * a->ctx * a->ctx;
    if (backend == KERNEL_CUDA) {
        if (v->fused && v->phase == ATTN_DECODE) /* split-K: partial outputs, maxima, sums */
            return (size_t)a->batch * a->heads_q * ATTN_MAX_SPLITS * (a->dim + 2) * sizeof(float);
        return v->fused ? 0 : scores * (sizeof(float) + sizeof(fp16));
    }
    size_t copies = v->phase == ATTN_PREFILL ? 3 * (size_t)a->batch * a->ctx * a->dim : 0;
    return (copies + (v->fused ? 0 : scores)) * sizeof(float);
}
