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

double attention_atol(const attention_variant *v, int backend, bool vs_materialized)
{
    bool fp16_p = backend == KERNEL_CUDA && (!v->fused || vs_materialized);
    return ATTENTION_ATOL + (fp16_p ? ATTENTION_FP16_P_ATOL : 0);
}

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

static int at_least_1(int x) { return x < 1 ? 1 : x; }

int attention_decode_chunk(int ctx, int splits)
{
    ctx = at_least_1(ctx), splits = at_least_1(splits);
    return (ctx + splits - 1) / splits;
}

int attention_decode_splits(int ctx, int pairs, int sm_count, int blocks_per_sm)
{
    ctx = at_least_1(ctx), pairs = at_least_1(pairs);
    /* one wave, in long long: sm_count x blocks_per_sm may not fit an int */
    long long wave = (long long)at_least_1(sm_count) * at_least_1(blocks_per_sm);
    long long want = (wave + pairs - 1) / pairs;
    int most = ctx / ATTN_SPLIT_MIN_KEYS < ATTN_MAX_SPLITS ? ctx / ATTN_SPLIT_MIN_KEYS : ATTN_MAX_SPLITS;
    most = at_least_1(most);
    int splits = want < most ? (int)want : most;
    /* Pieces of ceil(ctx / splits) keys can leave the last ones empty (10
     * keys in 4 pieces of 3: 4, but 10 in 6 of 2 only 5): count those that
     * hold keys. With ATTN_SPLIT_MIN_KEYS >= ATTN_MAX_SPLITS none is empty,
     * so this only guards the constants. */
    int chunk = attention_decode_chunk(ctx, splits);
    return (ctx + chunk - 1) / chunk;
}

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
