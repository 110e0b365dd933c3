/*
 * cpu/layer_vec.h -- the vector helpers experiment 09's CPU steps share
 * (cpu/layer.c, the streams; cpu/layer_products.c, the products and
 * their epilogues; cpu/layer_backward.c, the backward pass): simd.h's vf
 * a whole vector at a time, partial vectors at a row's end, GELU and SiLU
 * on a vector (vexp.h's polynomials), a norm's row sums, where the
 * attention's heads lie in the QKV output.
 */
#ifndef KERNELS_CPU_LAYER_VEC_H
#define KERNELS_CPU_LAYER_VEC_H

#include "../layer.h"
#include "check.h"
#include "simd.h"
#include "vexp.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#define MIN(a, b) ((a) < (b) ? (a) : (b))

/* ---- vector helpers ---------------------------------------------------------- */

static inline vf splat(float x) { return (vf){0} + x; }

/* Lane l holds l: a constant, where a loop that fills the lanes would be
 * a dozen instructions a vector. */
static inline vfi iota(void)
{
#if VF_LANES == 16
    return (vfi){0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
#else
    return (vfi){0, 1, 2, 3, 4, 5, 6, 7};
#endif
}

/* Lanes l < n set. */
static inline vfi lanes_below(int n) { return iota() < ((vfi){0} + n); }

static inline vf select_vf(vfi take, vf v, vf other) { return (vf)(((vfi)v & take) | ((vfi)other & ~take)); }

/* The last n < VF_LANES values of a row, the other lanes fill: a tail
 * takes the same vector arithmetic as the rest of its row. */
static inline vf load_part(const float *p, int n, float fill)
{
    vf v = splat(fill);
    memcpy(&v, p, (size_t)n * sizeof(float));
    return v;
}

static inline void store_part(float *p, vf v, int n) { memcpy(p, &v, (size_t)n * sizeof(float)); }

static inline float vf_max(vf v)
{
#if VF_LANES == 16
    return _mm512_reduce_max_ps((__m512)v);
#else
    float m = v[0];
    for (int l = 1; l < VF_LANES; l++)
        m = v[l] > m ? v[l] : m;
    return m;
#endif
}

/* One instruction where there is one: a compare and a blend are two, on
 * the chain of a row's running maximum. */
static inline vf max_vf(vf a, vf b)
{
#if VF_LANES == 16
    return (vf)_mm512_max_ps((__m512)a, (__m512)b);
#elif defined(__AVX__)
    return (vf)_mm256_max_ps((__m256)a, (__m256)b);
#else
    return select_vf(a > b, a, b);
#endif
}

/* gelu(x) = x sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3): the tanh
 * form (vexp.h, x_sigmoid_vf) */
static inline vf gelu_vf(vf x)
{
    const float c2 = (float)(2 * LAYER_GELU_C), c2a = (float)(2 * LAYER_GELU_C * LAYER_GELU_A);
    return x_sigmoid_vf(x, x * vf_fma(x * x, splat(c2a), splat(c2)));
}

static inline vf add(vf a, vf b) { return a + b; }
static inline vf add_gelu(vf a, vf b) { return gelu_vf(a + b); }
static inline vf silu_times(vf gate, vf up) { return x_sigmoid_vf(gate, gate) * up; }

/* y = f(a) and y = f(a, b) over n values (y may be a: in place). f is a
 * constant where these are inlined, so the loop is the function's body. */
typedef vf (*map1_fn)(vf);
typedef vf (*map2_fn)(vf, vf);

static inline __attribute__((always_inline)) void map1(float *y, const float *a, size_t n, map1_fn f)
{
    size_t i = 0;
    for (; i + VF_LANES <= n; i += VF_LANES)
        vf_store(y + i, f(vf_load(a + i)));
    if (i < n)
        store_part(y + i, f(load_part(a + i, (int)(n - i), 0)), (int)(n - i));
}

static inline __attribute__((always_inline)) void map2(float *y, const float *a, const float *b,
                                                       size_t n, map2_fn f)
{
    size_t i = 0;
    for (; i + VF_LANES <= n; i += VF_LANES)
        vf_store(y + i, f(vf_load(a + i), vf_load(b + i)));
    if (i < n) {
        int t = (int)(n - i);
        store_part(y + i, f(load_part(a + i, t, 0), load_part(b + i, t, 0)), t);
    }
}

static inline float row_max(const float *x, int n)
{
    vf m0 = splat(-INFINITY), m1 = m0;
    int j = 0;
    for (; j + 2 * VF_LANES <= n; j += 2 * VF_LANES)
        m0 = max_vf(m0, vf_load(x + j)), m1 = max_vf(m1, vf_load(x + j + VF_LANES));
    for (; j + VF_LANES <= n; j += VF_LANES)
        m0 = max_vf(m0, vf_load(x + j));
    if (j < n)
        m1 = max_vf(m1, load_part(x + j, n - j, -INFINITY));
    return vf_max(max_vf(m0, m1));
}

/* y = e^(x - mx) and their sum (y may be x). */
static inline float exp_row(float *y, const float *x, int n, float mx)
{
    vf s = {0}, s1 = {0}, vm = splat(mx);
    int j = 0;
    for (; j + 2 * VF_LANES <= n; j += 2 * VF_LANES) {
        vf e0 = exp_vf(vf_load(x + j) - vm), e1 = exp_vf(vf_load(x + j + VF_LANES) - vm);
        vf_store(y + j, e0), vf_store(y + j + VF_LANES, e1);
        s += e0, s1 += e1;
    }
    for (; j + VF_LANES <= n; j += VF_LANES) {
        vf e = exp_vf(vf_load(x + j) - vm);
        vf_store(y + j, e);
        s += e;
    }
    if (j < n) {
        vf e = select_vf(lanes_below(n - j), exp_vf(load_part(x + j, n - j, 0) - vm), splat(0));
        store_part(y + j, e, n - j);
        s += e;
    }
    return vf_sum(s + s1);
}

/* y = x c (y may be x) */
static inline void scale_row(float *y, const float *x, int n, float c)
{
    int j = 0;
    for (; j + VF_LANES <= n; j += VF_LANES)
        vf_store(y + j, vf_load(x + j) * c);
    for (; j < n; j++)
        y[j] = x[j] * c;
}

/* ---- one thread pool ----------------------------------------------------------------- */

/* C (m x n, row-major, ldc) = op(A) op(B), cut into one slab of C's
 * columns per OpenMP thread, each a single-threaded OpenBLAS SGEMM
 * (cpu/layer_products.c). A layer's steps alternate products and streams;
 * were the products OpenBLAS's own threads (a pthread pool) and the
 * streams OpenMP's, each pool would spin on the cores after its step
 * while the other ran its next one, and on a machine of few cores a layer
 * took twice the sum of its steps. On one pool, as PyTorch's CPU build
 * runs its ops and its BLAS, the steps add up. */
void layer_sgemm_one_pool(bool trans_a, bool trans_b, int m, int n, int k, const float *a, int lda,
                          const float *b, int ldb, float *c, int ldc);

/* ---- the norms' rows (forward, cpu/layer.c; backward, cpu/layer_backward.c) ---- */

/* A norm's passes alternate: a read of its row from memory, then the
 * rest in the cache and a write. Left alone, the reads stop while a row
 * of thousands of floats is written, and the step took far longer than a
 * copy of its bytes. So the last pass over each row asks for the inputs
 * AHEAD floats on (the next rows: each thread's rows are contiguous), a
 * line per vector it writes: reads and writes stay in flight together,
 * as in a copy. Into the L2 (hint 2): the next row's first pass reads
 * it from there. Asking for the output's lines as well, or for the
 * softmax's short rows, only got in the hardware prefetcher's way. */
enum { AHEAD_MIN = 2048 };

typedef struct ahead {
    const float *x, *r; /* the inputs AHEAD floats past this row's start (r: or NULL) */
} ahead;

static inline ahead ahead_of(const float *x, const float *r, size_t n)
{
    size_t d = n > AHEAD_MIN ? n : AHEAD_MIN;
    return (ahead){x + d, r ? r + d : NULL};
}

static inline void prefetch_ahead(ahead pf, size_t i)
{
    __builtin_prefetch(pf.x + i, 0, 2);
    if (pf.r)
        __builtin_prefetch(pf.r + i, 0, 2);
}

/* The reductions keep two sums, so that the chain of dependent adds
 * does not set the pace of a row read from the cache. */
static inline float row_sum(const float *x, size_t n)
{
    vf s0 = {0}, s1 = {0};
    size_t i = 0;
    for (; i + 2 * VF_LANES <= n; i += 2 * VF_LANES)
        s0 += vf_load(x + i), s1 += vf_load(x + i + VF_LANES);
    for (; i + VF_LANES <= n; i += VF_LANES)
        s0 += vf_load(x + i);
    if (i < n)
        s1 += load_part(x + i, (int)(n - i), 0);
    return vf_sum(s0 + s1);
}

/* The sum of (x - c)^2; the tail's empty lanes hold c, so add nothing. */
static inline float row_sum_sq(const float *x, size_t n, float c)
{
    vf s0 = {0}, s1 = {0}, vc = splat(c);
    size_t i = 0;
    for (; i + 2 * VF_LANES <= n; i += 2 * VF_LANES) {
        vf d0 = vf_load(x + i) - vc, d1 = vf_load(x + i + VF_LANES) - vc;
        s0 = vf_fma(d0, d0, s0), s1 = vf_fma(d1, d1, s1);
    }
    for (; i + VF_LANES <= n; i += VF_LANES) {
        vf d = vf_load(x + i) - vc;
        s0 = vf_fma(d, d, s0);
    }
    if (i < n) {
        vf d = load_part(x + i, (int)(n - i), c) - vc;
        s1 = vf_fma(d, d, s1);
    }
    return vf_sum(s0 + s1);
}

/* ---- the attention's layouts ------------------------------------------------ */

static inline void require_qkv(const layer_args *a)
{
    RL_REQUIRE(a->batch >= 1 && a->seq >= 1 && a->head_dim >= 1, "attention needs batch, seq, head_dim >= 1");
    RL_REQUIRE(a->heads_kv >= 1 && a->heads >= a->heads_kv && a->heads % a->heads_kv == 0,
               "heads must be a multiple of heads_kv");
    RL_REQUIRE(a->rows == a->batch * a->seq, "rows must be batch x seq");
    RL_REQUIRE(a->y && a->x, "the step needs x and y");
}

static inline size_t qkv_ld(const layer_args *a) { return (size_t)(a->heads + 2 * a->heads_kv) * a->head_dim; }

/* Where sequence b's query head h, and the key and value head it reads,
 * start in the QKV output qkv (rows qkv_ld apart). */
static inline const float *query_of(const layer_args *a, const float *qkv, int b, int h)
{
    return qkv + (size_t)b * a->seq * qkv_ld(a) + (size_t)h * a->head_dim;
}

static inline const float *key_of(const layer_args *a, const float *qkv, int b, int h)
{
    int kvh = h / (a->heads / a->heads_kv);
    return qkv + (size_t)b * a->seq * qkv_ld(a) + (size_t)(a->heads + kvh) * a->head_dim;
}

static inline const float *value_of(const layer_args *a, const float *qkv, int b, int h)
{
    return key_of(a, qkv, b, h) + (size_t)a->heads_kv * a->head_dim;
}

#endif
