/*
 * cpu/attention.c -- the C + OpenMP counterparts of attention.cu, and
 * OpenBLAS for the library GEMMs (the table is attention.c, the reference
 * ref/attention.c).
 *
 * Decode attention on a CPU is a stream over each sequence's KV cache,
 * as on a GPU: every key and value is converted from FP16 once (F16C)
 * and used by all G query heads that share it, so the arithmetic per
 * byte is G FLOP/B and the loop must keep the memory bus busy. The
 * fused variant folds each block of 32 keys into a running softmax
 * (its maximum, its sum, the rescaled partial output); the materialized
 * one writes every score to memory, takes the softmax in a second pass
 * and reads the scores again for P V.
 *
 * Prefill is two large matrix products per head; both variants hand
 * them to OpenBLAS SGEMM on FP32 copies of Q, K and V. The materialized
 * variant multiplies whole matrices, the n x n scores in memory between
 * them; the fused one multiplies tiles of BR queries by BC keys in each
 * thread's cache and never writes a score out (OpenBLAS then runs one
 * thread per tile product, the OpenMP threads taking the tiles).
 */
#include "../attention.h"
#include "check.h"
#include "simd.h"
#include "vexp.h"

#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>

enum {
    MAX_GROUP = 8,   /* query heads per KV head: 8 accumulators, one vector sum */
    MAX_DIM = 128,   /* the head dimension the stack buffers hold */
    KEY_BLOCK = 32,  /* keys per online-softmax update at decode (below) */
    ROWS_AT_ONCE = 4, /* values folded into each output vector per load and store */
    BR = 128,        /* prefill tile: queries ... */
    BC = 128         /* ... by keys; with Q, O, S and P, ~200 KiB of a core's cache */
};

/* ---- vector helpers ---------------------------------------------------------- */

/* The sums of eight vectors as one vector: r[i] = sum of a[i]'s lanes, by
 * three rounds of pairwise shuffles and adds instead of eight horizontal
 * sums. */
static inline v8f sum8(const v8f a[8])
{
    const v8i even = {0, 8, 2, 10, 4, 12, 6, 14}, odd = {1, 9, 3, 11, 5, 13, 7, 15};
    const v8i lo2 = {0, 1, 8, 9, 4, 5, 12, 13}, hi2 = {2, 3, 10, 11, 6, 7, 14, 15};
    const v8i lo4 = {0, 1, 2, 3, 8, 9, 10, 11}, hi4 = {4, 5, 6, 7, 12, 13, 14, 15};
    v8f t[4], u[2];
    for (int i = 0; i < 4; i++)
        t[i] = __builtin_shuffle(a[2 * i], a[2 * i + 1], even) +
               __builtin_shuffle(a[2 * i], a[2 * i + 1], odd);
    for (int i = 0; i < 2; i++)
        u[i] = __builtin_shuffle(t[2 * i], t[2 * i + 1], lo2) +
               __builtin_shuffle(t[2 * i], t[2 * i + 1], hi2);
    return __builtin_shuffle(u[0], u[1], lo4) + __builtin_shuffle(u[0], u[1], hi4);
}

static inline v8f splat8(float x) { return (v8f){x, x, x, x, x, x, x, x}; }

/* Every cache line of n rows of d halves, into the L2, not the L1. The
 * fused decode reads a block of K, then the same block of V, then the
 * next K: left to itself, the hardware prefetcher follows one of the two
 * streams at a time and restarts at each switch (a plain read in that
 * order ran well below one that interleaves the two). Prefetching the
 * other stream's rows while computing on this one keeps both in flight.
 * Into the L1 (hint 3), a block's prefetches took the L1's few miss
 * buffers from the loads that needed them and the core stalled; the L2
 * tracks many more misses, and the L1 fetches from it in a few cycles
 * (README: the prefetch hint, measured on Zen 4). */
static inline void prefetch_rows(const fp16 *rows, int n, int d)
{
    for (int i = 0; i < n * d; i += 32) /* 32 halves: 64 B */
        __builtin_prefetch(rows + i, 0, 1);
}

/* s[i] = e^(s[i] - m) for i < n, and their sum. */
static float exp_shifted(float *s, int n, float m)
{
    v8f sum = {0};
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        v8f e = exp8(v8f_load(s + i) - m);
        v8f_store(s + i, e);
        sum += e;
    }
    float total = v8f_sum(sum);
    for (; i < n; i++)
        total += s[i] = expf(s[i] - m);
    return total;
}

static float max_of(const float *s, int n)
{
    float m = -INFINITY;
    for (int i = 0; i < n; i++)
        m = s[i] > m ? s[i] : m;
    return m;
}

/* ---- the three steps every variant is made of ---------------------------------- */

/* Scores of nk keys against G query rows (q pre-scaled, G x d floats):
 * s[g * stride + j] = q[g] . k[j]. Each step takes 8 / G keys so that G x
 * 8/G = 8 dot products are summed at once (sum8); each key's row is
 * converted from FP16 once for all G heads. G is a constant where this
 * is inlined, so the loops unroll into registers. pf, when not NULL, is
 * the other stream's rows to prefetch meanwhile (below). */
static inline __attribute__((always_inline)) void block_scores(float *s, size_t stride,
                                                               const float *q, const fp16 *k,
                                                               int nk, int d, const int G,
                                                               const fp16 *pf)
{
    const int kps = MAX_GROUP / G;
    int j = 0;
    for (; j + kps <= nk; j += kps) {
        v8f acc[8] = {0};
        if (pf)
            prefetch_rows(pf + (size_t)j * d, kps, d);
        for (int c = 0; c < d; c += 8) {
#pragma GCC unroll 8
            for (int u = 0; u < kps; u++) {
                v8f kc = fp16x8_to_v8f(k + (size_t)(j + u) * d + c);
#pragma GCC unroll 8
                for (int g = 0; g < G; g++)
                    acc[u * G + g] = v8f_fma(v8f_load(q + g * d + c), kc, acc[u * G + g]);
            }
        }
        v8f r = sum8(acc);
        for (int u = 0; u < kps; u++)
            for (int g = 0; g < G; g++)
                s[g * stride + j + u] = r[u * G + g];
    }
    for (; j < nk; j++)
        for (int g = 0; g < G; g++) {
            v8f a = {0};
            for (int c = 0; c < d; c += 8)
                a = v8f_fma(v8f_load(q + g * d + c), fp16x8_to_v8f(k + (size_t)j * d + c), a);
            s[g * stride + j] = v8f_sum(a);
        }
}

/* acc[g] += sum_j p[g * stride + j] v[j] over nk values, the rows of V in
 * order: ROWS_AT_ONCE rows converted, then each 8 of a head's output
 * loaded, given all their terms, stored (acc stays in L1; G x d floats
 * would not fit the registers). Row order matters more than registers:
 * walking V column by column (8 of d at a time, down all nk rows) kept
 * the sums in registers but read each cache line d / 32 times, strided,
 * and left the memory bus idle; this order reads each row once, like a
 * stream. pf: as in block_scores. */
static inline __attribute__((always_inline)) void block_accumulate(float *restrict acc,
                                                                   const float *restrict p,
                                                                   size_t stride, const fp16 *v,
                                                                   int nk, int d, const int G,
                                                                   const fp16 *pf)
{
    enum { R = ROWS_AT_ONCE };
    int j = 0;
    for (; j + R <= nk; j += R) {
        if (pf)
            prefetch_rows(pf + (size_t)j * d, R, d);
        for (int c = 0; c < d; c += 8) {
            v8f vc[R];
#pragma GCC unroll 4
            for (int u = 0; u < R; u++)
                vc[u] = fp16x8_to_v8f(v + (size_t)(j + u) * d + c);
#pragma GCC unroll 8
            for (int g = 0; g < G; g++) {
                v8f a = v8f_load(acc + g * d + c);
#pragma GCC unroll 4
                for (int u = 0; u < R; u++)
                    a = v8f_fma(splat8(p[g * stride + j + u]), vc[u], a);
                v8f_store(acc + g * d + c, a);
            }
        }
    }
    for (; j < nk; j++)
        for (int c = 0; c < d; c += 8) {
            v8f vc = fp16x8_to_v8f(v + (size_t)j * d + c);
            for (int g = 0; g < G; g++)
                v8f_store(acc + g * d + c, v8f_fma(splat8(p[g * stride + j]), vc, v8f_load(acc + g * d + c)));
        }
}

/* The online softmax, for rows of scores that arrive a block at a time:
 * each row's running maximum m and sum l, its partial output acc (width
 * floats) rescaled by e^(m_old - m_new) when the maximum grows, and the
 * block's scores turned into e^(s - m_new) in place, ready to weight V. */
static void online_update(float *s, size_t stride, int nk, int rows, float *m, float *l,
                          float *acc, size_t width)
{
    for (int r = 0; r < rows; r++) {
        float *sr = s + r * stride;
        float mn = fmaxf(m[r], max_of(sr, nk));
        float corr = expf(m[r] - mn); /* 0 for the first block, m = -inf */
        l[r] = l[r] * corr + exp_shifted(sr, nk, mn);
        if (corr != 1.0f)
            for (size_t i = 0; i < width; i++)
                acc[r * width + i] *= corr;
        m[r] = mn;
    }
}

/* A row of scores to its softmax, in place: one read and one write of
 * each score where the row does not stay in the cache. */
static void softmax_row(float *s, int n)
{
    float inv = 1.0f / exp_shifted(s, n, max_of(s, n));
    for (int i = 0; i < n; i++)
        s[i] *= inv;
}

static void require_shape(const attention_args *a)
{
    RL_REQUIRE(a->dim % 8 == 0 && a->dim <= MAX_DIM, "the head dimension must be a multiple of 8, at most 128");
    RL_REQUIRE(a->heads_kv > 0 && a->heads_q % a->heads_kv == 0 && a->heads_q / a->heads_kv <= MAX_GROUP &&
                   MAX_GROUP % (a->heads_q / a->heads_kv) == 0,
               "query heads per KV head must be 1, 2, 4 or 8");
}

/* ---- decode ----------------------------------------------------------------------- */

/* One (sequence, KV head): its G query rows, scaled by 1/sqrt(d) and in
 * FP32, and where its cache and outputs are. */
typedef struct decode_task {
    float q[MAX_GROUP * MAX_DIM];
    const fp16 *k, *v;
    float *out;
    size_t first_row; /* (sequence, first query head) as a row of out and of the scores */
} decode_task;

static void decode_task_at(decode_task *t, const attention_args *a, int task)
{
    int b = task / a->heads_kv, kvh = task % a->heads_kv, G = a->heads_q / a->heads_kv;
    size_t d = (size_t)a->dim, L = (size_t)a->ctx;
    t->first_row = (size_t)b * a->heads_q + (size_t)kvh * G;
    float scale = 1.0f / sqrtf((float)a->dim);
    fp16_row_to_float(t->q, a->q + t->first_row * d, (size_t)G * d);
    for (size_t i = 0; i < (size_t)G * d; i++)
        t->q[i] *= scale;
    t->k = a->k + ((size_t)b * a->heads_kv + kvh) * L * d;
    t->v = a->v + ((size_t)b * a->heads_kv + kvh) * L * d;
    t->out = a->out + t->first_row * d;
}

/* One (sequence, KV head): its cache a block at a time, K then V. (Split
 * into 2, 4 or 8 pieces read side by side, flash-decoding's way, ran
 * slower on a 2-core Zen 3: the prefetches of 2 streams already keep a
 * core's misses in flight.) */
static inline __attribute__((always_inline)) void decode_fused_g(const attention_args *a, int task,
                                                                 const int G)
{
    decode_task t;
    decode_task_at(&t, a, task);
    const int d = a->dim, L = a->ctx;
    float acc[MAX_GROUP * MAX_DIM] __attribute__((aligned(32))) = {0};
    float s[MAX_GROUP * KEY_BLOCK], m[MAX_GROUP], l[MAX_GROUP];
    for (int g = 0; g < G; g++)
        m[g] = -INFINITY, l[g] = 0;
    for (int j0 = 0; j0 < L; j0 += KEY_BLOCK) {
        int nk = L - j0 < KEY_BLOCK ? L - j0 : KEY_BLOCK;
        const fp16 *k = t.k + (size_t)j0 * d, *v = t.v + (size_t)j0 * d;
        /* While the scores are made, V's next block; while V is read, the
         * block of K after the next: one block further ahead than the
         * next use, so that the lines arrive before the loop reaches them */
        const fp16 *pf_v = j0 + 2 * KEY_BLOCK <= L ? v + (size_t)KEY_BLOCK * d : NULL;
        const fp16 *pf_k = j0 + 3 * KEY_BLOCK <= L ? k + (size_t)2 * KEY_BLOCK * d : NULL;
        block_scores(s, KEY_BLOCK, t.q, k, nk, d, G, pf_v);
        online_update(s, KEY_BLOCK, nk, G, m, l, acc, (size_t)d);
        block_accumulate(acc, s, KEY_BLOCK, v, nk, d, G, pf_k);
    }
    for (int g = 0; g < G; g++)
        for (int i = 0; i < d; i++)
            t.out[g * d + i] = acc[g * d + i] / l[g];
}

/* The group size as a constant: one specialization each. */
#define FOR_GROUP(G, call1, call2, call4, call8) \
    switch (G) {                                 \
    case 1: call1; break;                        \
    case 2: call2; break;                        \
    case 4: call4; break;                        \
    default: call8; break;                       \
    }

void attention_decode_fused_cpu(const attention_args *a)
{
    require_shape(a);
    int tasks = a->batch * a->heads_kv, G = a->heads_q / a->heads_kv;
#pragma omp parallel for schedule(static)
    for (int t = 0; t < tasks; t++)
        FOR_GROUP(G, decode_fused_g(a, t, 1), decode_fused_g(a, t, 2), decode_fused_g(a, t, 4),
                  decode_fused_g(a, t, 8))
}

/* Pass 1 of the materialized path: one task's scores, ctx per query row. */
static inline __attribute__((always_inline)) void decode_scores_g(const attention_args *a, float *S,
                                                                  int task, const int G)
{
    decode_task t;
    decode_task_at(&t, a, task);
    size_t L = (size_t)a->ctx;
    for (int j0 = 0; j0 < a->ctx; j0 += KEY_BLOCK) {
        int nk = a->ctx - j0 < KEY_BLOCK ? a->ctx - j0 : KEY_BLOCK;
        block_scores(S + t.first_row * L + j0, L, t.q, t.k + (size_t)j0 * a->dim, nk, a->dim, G, NULL);
    }
}

/* Pass 3: P V from the scores in memory. */
static inline __attribute__((always_inline)) void decode_pv_g(const attention_args *a,
                                                              const float *P, int task, const int G)
{
    decode_task t;
    decode_task_at(&t, a, task);
    size_t L = (size_t)a->ctx;
    float acc[MAX_GROUP * MAX_DIM] __attribute__((aligned(32))) = {0};
    for (int j0 = 0; j0 < a->ctx; j0 += KEY_BLOCK) {
        int nk = a->ctx - j0 < KEY_BLOCK ? a->ctx - j0 : KEY_BLOCK;
        block_accumulate(acc, P + t.first_row * L + j0, L, t.v + (size_t)j0 * a->dim, nk, a->dim, G, NULL);
    }
    for (int i = 0; i < G * a->dim; i++)
        t.out[i] = acc[i];
}

void attention_decode_materialized_cpu(const attention_args *a)
{
    require_shape(a);
    int tasks = a->batch * a->heads_kv, G = a->heads_q / a->heads_kv, rows = a->batch * a->heads_q;
    float *S = a->scratch;
#pragma omp parallel
    {
#pragma omp for schedule(static)
        for (int t = 0; t < tasks; t++)
            FOR_GROUP(G, decode_scores_g(a, S, t, 1), decode_scores_g(a, S, t, 2),
                      decode_scores_g(a, S, t, 4), decode_scores_g(a, S, t, 8))
#pragma omp for schedule(static)
        for (int r = 0; r < rows; r++)
            softmax_row(S + (size_t)r * a->ctx, a->ctx);
#pragma omp for schedule(static)
        for (int t = 0; t < tasks; t++)
            FOR_GROUP(G, decode_pv_g(a, S, t, 1), decode_pv_g(a, S, t, 2), decode_pv_g(a, S, t, 4),
                      decode_pv_g(a, S, t, 8))
    }
}

/* ---- prefill ------------------------------------------------------------------------ */

/* FP32 copies of Q, K and V (heads x n x d each) for OpenBLAS, after the
 * scores in the scratch (materialized) or at its start (fused). */
static void copy_operands(const attention_args *a, float *q32, float *k32, float *v32)
{
    size_t n = (size_t)a->batch * a->ctx * a->dim;
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i += 8) {
        v8f_store(q32 + i, fp16x8_to_v8f(a->q + i));
        v8f_store(k32 + i, fp16x8_to_v8f(a->k + i));
        v8f_store(v32 + i, fp16x8_to_v8f(a->v + i));
    }
}

void attention_prefill_materialized_cpu(const attention_args *a)
{
    RL_REQUIRE(a->dim % 8 == 0, "the head dimension must be a multiple of 8");
    const int n = a->ctx, d = a->dim;
    const size_t nd = (size_t)n * d, nn = (size_t)n * n;
    float *S = a->scratch, *q32 = S + (size_t)a->batch * nn;
    float *k32 = q32 + a->batch * nd, *v32 = k32 + a->batch * nd;
    copy_operands(a, q32, k32, v32);
    for (int h = 0; h < a->batch; h++)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, d, 1.0f / sqrtf((float)d),
                    q32 + h * nd, d, k32 + h * nd, d, 0.0f, S + h * nn, n);
#pragma omp parallel for schedule(static)
    for (size_t r = 0; r < (size_t)a->batch * n; r++)
        softmax_row(S + r * n, n);
    for (int h = 0; h < a->batch; h++)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, d, n, 1.0f, S + h * nn, n,
                    v32 + h * nd, d, 0.0f, a->out + h * nd, d);
}

/* One tile of queries of one head against all its keys, BC at a time: S
 * and P (one buffer) and the partial output O stay in this thread's
 * cache. */
static void prefill_tile(const attention_args *a, const float *q32, const float *k32,
                         const float *v32, int h, int i0, float *S, float *O)
{
    const int n = a->ctx, d = a->dim, rows = n - i0 < BR ? n - i0 : BR;
    const size_t nd = (size_t)n * d;
    const float *q = q32 + h * nd + (size_t)i0 * d;
    float m[BR], l[BR];
    for (int r = 0; r < rows; r++)
        m[r] = -INFINITY, l[r] = 0;
    for (size_t i = 0; i < (size_t)rows * d; i++)
        O[i] = 0;
    for (int j0 = 0; j0 < n; j0 += BC) {
        int nk = n - j0 < BC ? n - j0 : BC;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, nk, d, 1.0f / sqrtf((float)d), q,
                    d, k32 + h * nd + (size_t)j0 * d, d, 0.0f, S, BC);
        online_update(S, BC, nk, rows, m, l, O, (size_t)d);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, d, nk, 1.0f, S, BC,
                    v32 + h * nd + (size_t)j0 * d, d, 1.0f, O, d);
    }
    float *out = a->out + h * nd + (size_t)i0 * d;
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < d; c++)
            out[(size_t)r * d + c] = O[(size_t)r * d + c] / l[r];
}

void attention_prefill_fused_cpu(const attention_args *a)
{
    RL_REQUIRE(a->dim % 8 == 0 && a->dim <= MAX_DIM, "the head dimension must be a multiple of 8, at most 128");
    const size_t nd = (size_t)a->ctx * a->dim;
    float *q32 = a->scratch, *k32 = q32 + a->batch * nd, *v32 = k32 + a->batch * nd;
    copy_operands(a, q32, k32, v32);
    const int blocks = (a->ctx + BR - 1) / BR, tasks = a->batch * blocks;
    /* Each OpenMP thread multiplies its own tiles: OpenBLAS on one thread. */
    int blas_threads = openblas_get_num_threads();
    openblas_set_num_threads(1);
#pragma omp parallel
    {
        float *S = malloc(sizeof(float) * BR * BC), *O = malloc(sizeof(float) * BR * MAX_DIM);
        RL_REQUIRE(S && O, "out of memory for a prefill tile");
#pragma omp for schedule(dynamic, 1)
        for (int t = 0; t < tasks; t++)
            prefill_tile(a, q32, k32, v32, t / blocks, t % blocks * BR, S, O);
        free(S);
        free(O);
    }
    openblas_set_num_threads(blas_threads);
}
