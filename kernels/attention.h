/*
 * attention.h -- experiment 07's kernels: scaled dot-product attention at
 * decode (one new token per sequence against its KV cache) and at
 * prefill (n tokens against each other), fused or with the scores
 * materialized in memory.
 *
 * For each query row q (dim values) and the keys and values it attends:
 *
 *   s[j] = (q . K[j]) / sqrt(dim),  p = softmax(s),  out = sum_j p[j] V[j]
 *
 * Decode: batch sequences, each with its own cache of ctx keys and values
 * for each of heads_kv KV heads; heads_q = group x heads_kv query heads,
 * query head h reading KV head h / group (grouped-query attention; group
 * 1 is multi-head attention). Prefill: heads independent heads of n
 * tokens, every query against every key (no causal mask: the score matrix
 * is n x n).
 *
 * Layouts, row-major, FP16 in and FP32 out:
 *   decode   q [batch][heads_q][dim], k and v [batch][heads_kv][ctx][dim],
 *            out [batch][heads_q][dim];
 *   prefill  q, k and v [heads][ctx][dim], out [heads][ctx][dim].
 *
 * The fused variants never write a score to memory (online softmax: a
 * running maximum and sum rescale the partial output as key blocks
 * arrive, as FlashAttention does); the materialized ones write S = Q K^T,
 * apply softmax to it in place, then read it again for P V, as an eager
 * framework does with its library GEMMs.
 *
 * One table (attention.c) names each variant's launcher on each backend:
 * attention.cu (CUDA) and cpu/attention.c (C + OpenMP, OpenBLAS); the
 * reference is in ref/attention.c.
 */
#ifndef KERNELS_ATTENTION_H
#define KERNELS_ATTENTION_H

#include "common.h"
#include "half.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum attention_phase { ATTN_DECODE = 0, ATTN_PREFILL = 1 } attention_phase;

typedef struct attention_args {
    float *out;
    const fp16 *q, *k, *v;
    int batch;    /* decode: sequences; prefill: heads */
    int heads_q;  /* decode: query heads per sequence; prefill: 1 */
    int heads_kv; /* decode: KV heads per sequence; prefill: 1 */
    int ctx;      /* decode: the cache's length L; prefill: the tokens n */
    int dim;      /* the head dimension: 64 or 128 (a multiple of 32) */
    void *scratch; /* attention_scratch_bytes() of it (materialized variants) */
    struct CUstream_st *stream; /* CUDA only */
} attention_args;

/* attention_call: a launcher and its arguments (kernels/common.h). */
KERNEL_CALL_TYPE(attention, attention_args)

typedef struct attention_variant {
    KERNEL_VARIANT_HEAD;
    attention_phase phase;
    bool fused;
    void (*cpu)(const attention_args *a);
    void (*cuda)(const attention_args *a);
} attention_variant;

extern const attention_variant attention_variants[]; /* ended by a zero row */
extern const kernel_family attention_family;

/* The launchers (cpu/attention.c, attention.cu). */
void attention_decode_fused_cpu(const attention_args *a);
void attention_decode_materialized_cpu(const attention_args *a);
void attention_prefill_fused_cpu(const attention_args *a);
void attention_prefill_materialized_cpu(const attention_args *a);
void attention_decode_split_cuda(const attention_args *a);
void attention_decode_materialized_cuda(const attention_args *a);
void attention_prefill_fused_cuda(const attention_args *a);
void attention_prefill_materialized_cuda(const attention_args *a);

/* ---- counting ------------------------------------------------------------- */

/* The two matrix products, 2 FLOPs per multiply-add each (softmax's few
 * operations per score not counted, as ggml and FlashAttention count). */
static inline double attention_flops(attention_phase ph, const attention_args *a)
{
    double queries = ph == ATTN_DECODE ? (double)a->batch * a->heads_q
                                       : (double)a->batch * a->ctx;
    return 4.0 * queries * a->ctx * a->dim;
}

/* Scores per call: one per query row and key. */
static inline double attention_scores(attention_phase ph, const attention_args *a)
{
    return ph == ATTN_DECODE ? (double)a->batch * a->heads_q * a->ctx
                             : (double)a->batch * a->ctx * a->ctx;
}

/* The KV cache's bytes (decode): batch x ctx x heads_kv x dim x 2
 * tensors x 2 B; prefill's K and V alike. */
static inline double attention_kv_bytes(attention_phase ph, const attention_args *a)
{
    double heads = ph == ATTN_DECODE ? (double)a->heads_kv : 1.0;
    return (double)a->batch * a->ctx * heads * a->dim * 2.0 * 2.0;
}

/* The bytes a materialized path moves per score: S written in FP32 (4 B),
 * read for softmax (4 B), P written (CPU: FP32 in place, 4 B; CUDA: FP16
 * for the tensor-core P V, 2 B) and read for P V (4 B or 2 B). */
static inline double attention_score_bytes(int backend) { return backend == KERNEL_CUDA ? 12.0 : 16.0; }

/* The least traffic of each path: Q read (2 B), K and V read (each
 * once: a head's K and V are reused from the cache between query blocks),
 * out written (4 B); the materialized path adds its scores' bytes. */
static inline double attention_bytes(attention_phase ph, bool fused, int backend,
                                     const attention_args *a)
{
    double queries = ph == ATTN_DECODE ? (double)a->batch * a->heads_q
                                       : (double)a->batch * a->ctx;
    double b = attention_kv_bytes(ph, a) + queries * a->dim * (2.0 + 4.0);
    return fused ? b : b + attention_score_bytes(backend) * attention_scores(ph, a);
}

/* The CUDA split-K decode cuts each cache into at most this many pieces,
 * one block each, whose partial outputs a second kernel merges; a piece
 * holds at least ATTN_SPLIT_MIN_KEYS keys (the last may hold fewer), one
 * 16-key step for each of the block's 4 warps, and writes G x (dim + 2)
 * floats that the merge reads back. */
enum { ATTN_MAX_SPLITS = 64, ATTN_SPLIT_MIN_KEYS = 64 };

/* The split-K decode's launch plan, host-only (the static GPU model and
 * the tests compute it without a GPU): into how many pieces each of the
 * pairs = batch x heads_kv caches is cut, so that pairs x splits blocks
 * fill at least one wave of sm_count x blocks_per_sm resident blocks (the
 * occupancy API's count), unless the pieces would fall under
 * ATTN_SPLIT_MIN_KEYS or exceed ATTN_MAX_SPLITS. Each piece holds
 * attention_decode_chunk(ctx, splits) keys but the last, which holds at
 * least one: none is empty. Arguments under 1 count as 1. */
int attention_decode_splits(int ctx, int pairs, int sm_count, int blocks_per_sm);

/* The keys of each piece but the last: ceil(ctx / splits). */
int attention_decode_chunk(int ctx, int splits);

/* The fused kernels' blocks, for their launchers and the static model:
 * the split-K decode's warps, its most query heads a KV head, and the
 * dynamic shared memory of a block (Q's A fragments, dim x 32 bytes that
 * every warp reads; each warp's unnormalized output, G x dim floats; its
 * maximum and sum per head); the prefill's key tile and the shared memory
 * of its stages (a K and a V tile each, ATTN_PREFILL_KEYS rows of dim + 8
 * halves). */
enum { ATTN_DECODE_WARPS = 4, ATTN_DECODE_MAX_GROUP = 8, ATTN_PREFILL_KEYS = 64 };
RL_HD size_t attention_decode_smem_bytes(int dim, int G)
{
    return (size_t)dim * 32 + (size_t)ATTN_DECODE_WARPS * (G * dim + 2 * ATTN_DECODE_MAX_GROUP) * sizeof(float);
}
RL_HD size_t attention_prefill_smem_bytes(int dim, int stages)
{
    return (size_t)stages * 2 * ATTN_PREFILL_KEYS * (dim + 8) * 2;
}

/* The scratch a variant needs on a backend (KERNEL_CPU or KERNEL_CUDA), 0
 * for none: the scores in FP32 (materialized), the FP32 copies of Q, K
 * and V that OpenBLAS multiplies (the CPU's materialized prefill), the
 * split-K kernel's partial results (attention.c). */
size_t attention_scratch_bytes(const attention_variant *v, int backend, const attention_args *a);

/* ---- the reference (ref/attention.c) --------------------------------------- */

/* Out rows [first, first + count) of the call, in double precision: want
 * holds count x dim values (decode rows are (sequence, query head) pairs
 * in order; prefill rows (head, token)). */
void attention_reference(double *want, const attention_args *a, attention_phase ph, size_t first,
                         size_t count);

/* Random q, k, v in [-1, 1] give scores of spread ~0.3 and a softmax
 * near uniform: each output is the mean of ctx values, ~0.01. Float
 * error stays under 1e-6 there, and the GPU's FP16 copy of P adds ~1e-5
 * at ctx 512; 4e-5 still fails a kernel that drops a key or misreads one
 * value (an error of ~0.5 / ctx, 6e-5 at ctx 8192). */
#define ATTENTION_ATOL 4e-5
#define ATTENTION_RTOL 1e-3
/* What the CUDA materialized path adds: it writes P in FP16 (attention.cu:
 * 2 bytes a score), each p rounded by up to 2^-11 of itself, so an output
 * sum_j p_j v_j (sum_j p_j = 1, |v_j| <= 1 in the checks' inputs) moves by
 * up to 2^-11. At a short cache the softmax is concentrated and that is
 * reached (6e-5 to 8e-5 at 31 to 64 keys, by a replay of its arithmetic
 * on the CPU), past ATTENTION_ATOL. */
#define ATTENTION_FP16_P_ATOL (1.0 / 2048)

/* The absolute tolerance of v's rows on backend (KERNEL_CPU, KERNEL_CUDA):
 * ATTENTION_ATOL against the double reference, plus ATTENTION_FP16_P_ATOL
 * where the GPU's materialized output is either the rows checked or
 * (vs_materialized: a fused kernel's rows past the reference's) what they
 * are checked against. */
double attention_atol(const attention_variant *v, int backend, bool vs_materialized);

#ifdef __cplusplus
}
#endif
#endif
