/*
 * cpu/layer.c -- the C + OpenMP counterparts of layer.cu's streams: the
 * element-wise steps, the norms, the scores' scale, mask and softmax, and
 * RoPE (the products are cpu/layer_products.c; the table is layer.c, the
 * reference ref/layer.c).
 *
 * These steps are streams: each reads its inputs and writes its output
 * once, and should take the time of a copy of those bytes. So they run a
 * vector at a time (simd.h's vf: 16 lanes with AVX-512), exp and tanh as
 * polynomials on the whole vector (vexp.h), never the C library per
 * value, and each thread takes a contiguous run of rows (a static
 * schedule) that the hardware prefetcher follows. A norm or a softmax
 * reads its row from memory once and then again from the cache (a row of
 * a few thousand floats stays in L1 or L2), so its later passes cost no
 * memory traffic.
 */
#include "check.h"
#include "layer_vec.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

enum {
    CHUNK = 8192,     /* floats per task of a flat element-wise step */
    ROPE_RESTART = 64 /* positions per exact sin and cos; a rotation in between */
};

/* ---- element-wise steps ------------------------------------------------------ */

static void require_activation(const layer_args *a)
{
    RL_REQUIRE(a->rows >= 0 && a->cols >= 1, "an activation needs rows >= 0 and cols >= 1");
    RL_REQUIRE(a->y && a->x, "the step needs x and y");
}

/* A flat step cut into CHUNK-float tasks: the same work whatever the
 * rows' width, and each thread's tasks contiguous in memory. One
 * function per map: the map must be a constant inside the parallel
 * region (OpenMP outlines the region before any inlining). */
#define FLAT_STEP(name, body)                                                      \
    static void name(const layer_args *a)                                          \
    {                                                                              \
        size_t n = (size_t)a->rows * (size_t)a->cols;                              \
        size_t chunks = (n + CHUNK - 1) / CHUNK;                                   \
        _Pragma("omp parallel for schedule(static)")                               \
        for (size_t c = 0; c < chunks; c++) {                                      \
            size_t lo = c * CHUNK, len = MIN((size_t)CHUNK, n - lo);               \
            body;                                                                  \
        }                                                                          \
    }
FLAT_STEP(gelu_flat, map1(a->y + lo, a->x + lo, len, gelu_vf))
FLAT_STEP(add_flat, map2(a->y + lo, a->x + lo, a->r + lo, len, add))

/* A step that needs each value's column (a bias): one task per row. */
#define ROW_STEP(name, body)                                                       \
    static void name(const layer_args *a)                                          \
    {                                                                              \
        const size_t cols = (size_t)a->cols;                                       \
        _Pragma("omp parallel for schedule(static)")                               \
        for (int i = 0; i < a->rows; i++) {                                        \
            float *y = a->y + (size_t)i * cols;                                    \
            const float *x = a->x + (size_t)i * cols;                              \
            body;                                                                  \
        }                                                                          \
    }
ROW_STEP(bias_rows, map2(y, x, a->bias, cols, add))
ROW_STEP(bias_gelu_rows, map2(y, x, a->bias, cols, add_gelu))

/* x's row holds the gate's cols values, then the up projection's. */
static void silu_gate_rows(const layer_args *a)
{
    const size_t cols = (size_t)a->cols;
#pragma omp parallel for schedule(static)
    for (int i = 0; i < a->rows; i++) {
        const float *gate = a->x + (size_t)i * 2 * cols;
        map2(a->y + (size_t)i * cols, gate, gate + cols, cols, silu_times);
    }
}

void layer_bias_cpu(const layer_args *a)
{
    require_activation(a);
    RL_REQUIRE(a->bias, "BIAS needs a bias");
    bias_rows(a);
}

void layer_gelu_cpu(const layer_args *a)
{
    require_activation(a);
    gelu_flat(a);
}

void layer_bias_gelu_cpu(const layer_args *a)
{
    require_activation(a);
    RL_REQUIRE(a->bias, "BIAS_GELU needs a bias");
    bias_gelu_rows(a);
}

void layer_add_cpu(const layer_args *a)
{
    require_activation(a);
    RL_REQUIRE(a->r, "ADD needs r");
    add_flat(a);
}

void layer_silu_gate_cpu(const layer_args *a)
{
    require_activation(a);
    silu_gate_rows(a);
}

/* ---- normalizations ----------------------------------------------------------- */

/* y = (h - mean) rstd gamma + beta, the variance from h - mean (a second
 * pass over a row in the cache, accurate where mean(h^2) - mean^2 would
 * cancel); y may be h. */
static inline void layernorm_finish(float *y, const float *h, size_t n, float mean, const layer_args *a,
                                    ahead pf)
{
    float rstd = 1.0f / sqrtf(row_sum_sq(h, n, mean) / (float)n + a->eps);
    vf vm = splat(mean), vr = splat(rstd);
    size_t i = 0;
    for (; i + VF_LANES <= n; i += VF_LANES, prefetch_ahead(pf, i))
        vf_store(y + i, vf_fma((vf_load(h + i) - vm) * vr, vf_load(a->gamma + i), vf_load(a->beta + i)));
    if (i < n) {
        int t = (int)(n - i);
        vf v = (load_part(h + i, t, 0) - vm) * vr;
        store_part(y + i, vf_fma(v, load_part(a->gamma + i, t, 0), load_part(a->beta + i, t, 0)), t);
    }
}

/* h = x + bias + r into y (bias may be NULL), and h's sum. */
static inline float residual_into(float *y, const float *x, const float *bias, const float *r, size_t n)
{
    vf s = {0};
    size_t i = 0;
    for (; i + VF_LANES <= n; i += VF_LANES) {
        vf h = vf_load(x + i) + vf_load(r + i);
        if (bias)
            h += vf_load(bias + i);
        vf_store(y + i, h);
        s += h;
    }
    if (i < n) {
        int t = (int)(n - i);
        vf h = load_part(x + i, t, 0) + load_part(r + i, t, 0);
        if (bias)
            h += load_part(bias + i, t, 0);
        store_part(y + i, h, t);
        s += h;
    }
    return vf_sum(s);
}

static void require_norm(const layer_args *a)
{
    require_activation(a);
    RL_REQUIRE(a->gamma, "a norm needs gamma");
}

void layer_layernorm_cpu(const layer_args *a)
{
    require_norm(a);
    RL_REQUIRE(a->beta, "LAYERNORM needs beta");
    const size_t n = (size_t)a->cols;
#pragma omp parallel for schedule(static)
    for (int i = 0; i < a->rows; i++) {
        const float *x = a->x + (size_t)i * n;
        layernorm_finish(a->y + (size_t)i * n, x, n, row_sum(x, n) / (float)n, a, ahead_of(x, NULL, n));
    }
}

void layer_bias_add_layernorm_cpu(const layer_args *a)
{
    require_norm(a);
    RL_REQUIRE(a->beta && a->r, "BIAS_ADD_LAYERNORM needs beta and r");
    const size_t n = (size_t)a->cols;
#pragma omp parallel for schedule(static)
    for (int i = 0; i < a->rows; i++) {
        float *y = a->y + (size_t)i * n;
        const float *x = a->x + (size_t)i * n, *r = a->r + (size_t)i * n;
        float sum = residual_into(y, x, a->bias, r, n);
        layernorm_finish(y, y, n, sum / (float)n, a, ahead_of(x, r, n));
    }
}

/* y = h / sqrt(mean(h^2) + eps) gamma */
static inline void rmsnorm_row(float *y, const float *h, size_t n, const layer_args *a, ahead pf)
{
    vf rs = splat(1.0f / sqrtf(row_sum_sq(h, n, 0) / (float)n + a->eps));
    size_t i = 0;
    for (; i + VF_LANES <= n; i += VF_LANES, prefetch_ahead(pf, i))
        vf_store(y + i, vf_load(h + i) * rs * vf_load(a->gamma + i));
    if (i < n) {
        int t = (int)(n - i);
        store_part(y + i, load_part(h + i, t, 0) * rs * load_part(a->gamma + i, t, 0), t);
    }
}

void layer_rmsnorm_cpu(const layer_args *a)
{
    require_norm(a);
    const size_t n = (size_t)a->cols;
#pragma omp parallel for schedule(static)
    for (int i = 0; i < a->rows; i++)
        rmsnorm_row(a->y + (size_t)i * n, a->x + (size_t)i * n, n, a, ahead_of(a->x + (size_t)i * n, NULL, n));
}

void layer_add_rmsnorm_cpu(const layer_args *a)
{
    require_norm(a);
    RL_REQUIRE(a->r && a->y2, "ADD_RMSNORM needs r and y2");
    const size_t n = (size_t)a->cols;
#pragma omp parallel for schedule(static)
    for (int i = 0; i < a->rows; i++) {
        float *h = a->y2 + (size_t)i * n, *y = a->y + (size_t)i * n;
        const float *x = a->x + (size_t)i * n, *r = a->r + (size_t)i * n;
        map2(h, x, r, n, add);
        rmsnorm_row(y, h, n, a, ahead_of(x, r, n));
    }
}

/* ---- scores: scale, mask, softmax -------------------------------------------- */

/* The additive causal mask of query i for keys j .. j + VF_LANES - 1. */
static inline vf causal_at(int j, int i)
{
    return (vf)((vfi)splat(LAYER_MASKED) & (iota() > ((vfi){0} + (i - j))));
}

/* y = x scale + the mask of query i (mrow: its sequence's padding mask),
 * over a row of n keys; the row's maximum when asked (else -inf). */
static inline __attribute__((always_inline)) float scale_mask_row(float *y, const float *x, int n,
                                                                  float scale, const float *mrow,
                                                                  int i, const layer_mask kind,
                                                                  const bool want_max)
{
    vf vs = splat(scale), m = splat(-INFINITY);
    for (int j = 0; j < n; j += VF_LANES) {
        int t = MIN(VF_LANES, n - j);
        bool full = t == VF_LANES;
        vf z = (full ? vf_load(x + j) : load_part(x + j, t, 0)) * vs;
        if (kind == LAYER_MASK_PADDING)
            z += full ? vf_load(mrow + j) : load_part(mrow + j, t, 0);
        else if (kind == LAYER_MASK_CAUSAL)
            z += causal_at(j, i);
        if (full)
            vf_store(y + j, z);
        else
            store_part(y + j, z, t);
        if (want_max)
            m = max_vf(m, full ? z : select_vf(lanes_below(t), z, splat(-INFINITY)));
    }
    return want_max ? vf_max(m) : -INFINITY;
}

/* softmax of x's row into y, given its maximum mx (whose pass brought
 * the row into the cache): e^(x - mx) and their sum into y, then y
 * scaled in place. */
static inline void softmax_row(float *y, const float *x, int n, float mx)
{
    scale_row(y, y, n, 1.0f / exp_row(y, x, n, mx));
}

static void require_scores(const layer_args *a)
{
    RL_REQUIRE(a->batch >= 1 && a->heads >= 1 && a->seq >= 1, "scores need batch, heads and seq >= 1");
    RL_REQUIRE(a->y && a->x, "the step needs x and y");
    RL_REQUIRE(a->mask_kind != LAYER_MASK_PADDING || a->mask, "a padding mask needs mask");
}

/* Row r of the scores (batch x heads x seq rows of seq), its mask. */
static inline const float *mask_row(const layer_args *a, size_t r)
{
    size_t b = r / ((size_t)a->heads * a->seq);
    return a->mask_kind == LAYER_MASK_PADDING ? a->mask + b * a->seq : NULL;
}

void layer_scale_mask_cpu(const layer_args *a)
{
    require_scores(a);
    const int n = a->seq;
    const size_t rows = (size_t)a->batch * a->heads * n;
#pragma omp parallel for schedule(static)
    for (size_t r = 0; r < rows; r++) {
        float *y = a->y + r * n;
        const float *x = a->x + r * n, *m = mask_row(a, r);
        int i = (int)(r % (size_t)n);
        switch (a->mask_kind) {
        case LAYER_MASK_PADDING: scale_mask_row(y, x, n, a->scale, m, i, LAYER_MASK_PADDING, false); break;
        case LAYER_MASK_CAUSAL: scale_mask_row(y, x, n, a->scale, m, i, LAYER_MASK_CAUSAL, false); break;
        default: scale_mask_row(y, x, n, a->scale, m, i, LAYER_MASK_NONE, false); break;
        }
    }
}

void layer_scale_mask_softmax_cpu(const layer_args *a)
{
    require_scores(a);
    const int n = a->seq;
    const size_t rows = (size_t)a->batch * a->heads * n;
#pragma omp parallel for schedule(static)
    for (size_t r = 0; r < rows; r++) {
        float *y = a->y + r * n, mx;
        const float *x = a->x + r * n, *m = mask_row(a, r);
        int i = (int)(r % (size_t)n);
        switch (a->mask_kind) {
        case LAYER_MASK_PADDING: mx = scale_mask_row(y, x, n, a->scale, m, i, LAYER_MASK_PADDING, true); break;
        case LAYER_MASK_CAUSAL: mx = scale_mask_row(y, x, n, a->scale, m, i, LAYER_MASK_CAUSAL, true); break;
        default: mx = scale_mask_row(y, x, n, a->scale, m, i, LAYER_MASK_NONE, true); break;
        }
        softmax_row(y, y, n, mx);
    }
}

void layer_softmax_cpu(const layer_args *a)
{
    require_activation(a);
    const int n = a->cols;
#pragma omp parallel for schedule(static)
    for (int i = 0; i < a->rows; i++) {
        const float *x = a->x + (size_t)i * n;
        softmax_row(a->y + (size_t)i * n, x, n, row_max(x, n));
    }
}

/* ---- RoPE ------------------------------------------------------------------------ */

/* cos and sin of pos theta^(-2c/d) for positions 0 .. npos - 1 and pairs
 * c < d/2, [pos][c]. In double, by rotation: from an exact angle every
 * ROPE_RESTART positions, each next position's is the last one's turned
 * by the step angle (two multiply-adds per value, no C library call). A
 * float angle pos f would be off by half an ulp of pos f, too coarse for
 * the reference's tolerance at positions in the hundreds. */
static void rope_table(float *cs, float *sn, int npos, int d, double theta)
{
    const int half = d / 2;
    double *step = malloc(sizeof(double) * 3 * (size_t)half);
    RL_REQUIRE(step, "out of memory for RoPE's frequencies");
    for (int c = 0; c < half; c++) {
        double f = pow(theta, -2.0 * c / d);
        step[3 * c] = f, step[3 * c + 1] = cos(f), step[3 * c + 2] = sin(f);
    }
    const int blocks = (npos + ROPE_RESTART - 1) / ROPE_RESTART;
#pragma omp parallel for schedule(static)
    for (int blk = 0; blk < blocks; blk++) {
        int p0 = blk * ROPE_RESTART, p1 = MIN(npos, p0 + ROPE_RESTART);
        for (int c = 0; c < half; c++) {
            double co = cos(p0 * step[3 * c]), si = sin(p0 * step[3 * c]);
            for (int p = p0; p < p1; p++) {
                cs[(size_t)p * half + c] = (float)co, sn[(size_t)p * half + c] = (float)si;
                double next = co * step[3 * c + 1] - si * step[3 * c + 2];
                si = si * step[3 * c + 1] + co * step[3 * c + 2];
                co = next;
            }
        }
    }
    free(step);
}

/* One head of one token: the pairs (c, c + d/2) rotated (rotate_half). */
static inline void rope_head(float *y, const float *x, const float *cs, const float *sn, int half)
{
    const float *xh = x + half;
    float *yh = y + half;
    int c = 0;
    for (; c + VF_LANES <= half; c += VF_LANES) {
        vf lo = vf_load(x + c), hi = vf_load(xh + c), co = vf_load(cs + c), si = vf_load(sn + c);
        vf_store(y + c, lo * co - hi * si);
        vf_store(yh + c, hi * co + lo * si);
    }
    if (c < half) {
        int t = half - c;
        vf lo = load_part(x + c, t, 0), hi = load_part(xh + c, t, 0);
        vf co = load_part(cs + c, t, 0), si = load_part(sn + c, t, 0);
        store_part(y + c, lo * co - hi * si, t);
        store_part(yh + c, hi * co + lo * si, t);
    }
}

void layer_rope_cpu(const layer_args *a)
{
    require_qkv(a);
    RL_REQUIRE(a->head_dim % 2 == 0, "RoPE needs an even head_dim");
    const int d = a->head_dim, half = d / 2, rotated = a->heads + a->heads_kv;
    const size_t ld = qkv_ld(a);
    float *cs = malloc(sizeof(float) * 2 * (size_t)a->seq * half);
    RL_REQUIRE(cs, "out of memory for RoPE's table");
    float *sn = cs + (size_t)a->seq * half;
    rope_table(cs, sn, a->seq, d, a->rope_theta);
#pragma omp parallel for schedule(static)
    for (int tok = 0; tok < a->rows; tok++) {
        const float *x = a->x + (size_t)tok * ld;
        float *y = a->y + (size_t)tok * ld;
        size_t pos = (size_t)(tok % a->seq) * half;
        for (int h = 0; h < rotated; h++)
            rope_head(y + (size_t)h * d, x + (size_t)h * d, cs + pos, sn + pos, half);
        memcpy(y + (size_t)rotated * d, x + (size_t)rotated * d, sizeof(float) * a->heads_kv * d);
    }
    free(cs);
}
