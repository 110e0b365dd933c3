/*
 * cpu/layer_backward.c -- the C + OpenMP launchers of the backward pass
 * (layer.h's LAYER_OP_GEMM_DX .. LAYER_OP_CONCAT; the table is layer.c,
 * the reference ref/layer_backward.c).
 *
 * The products are OpenBLAS SGEMM on the activations' own layouts, as in
 * cpu/layer_products.c, on OpenMP's threads (layer_vec.h's one pool): a
 * linear layer's two gradients are one large product each, a slab of its
 * columns a thread; the attention's are one small product per (sequence,
 * head) that the threads take whole.
 *
 * The rest are streams, written as cpu/layer.c's are and for the same
 * reason (each should take the time of a copy of its bytes): a vector at
 * a time (layer_vec.h), gelu' from vexp.h's exp and never the C library
 * per value, each thread a contiguous run of rows, each input read from
 * memory once (a row's later passes read it from the cache). The two
 * reductions over the tokens (a bias's gradient, gamma's and beta's)
 * give each thread a contiguous block of rows and a row of partial sums
 * in its cache, added along the columns a vector at a time; the threads'
 * partial sums are then added in thread order, so that a call gives the
 * same bits each time (no atomics, no order set by timing).
 */
#include "check.h"
#include "layer_vec.h"

#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

enum { CHUNK = 8192 }; /* floats per task of a flat element-wise step (as cpu/layer.c) */

static void require_rows(const layer_args *a, const char *why)
{
    RL_REQUIRE(a->rows >= 0 && a->cols >= 1, "an activation needs rows >= 0 and cols >= 1");
    RL_REQUIRE(a->y && a->x && a->r, why);
}

/* ---- a linear layer's gradients ------------------------------------------------ */

static void require_linear(const layer_args *a)
{
    RL_REQUIRE(a->rows >= 1 && a->cols >= 1 && a->k >= 1, "a GEMM's gradient needs rows, cols and k >= 1");
    RL_REQUIRE(a->y && a->x, "a GEMM's gradient needs x (the output's gradient) and y");
}

/* dX (rows x k) = dY (rows x cols) W (cols x k) */
void layer_gemm_dx_cpu(const layer_args *a)
{
    require_linear(a);
    RL_REQUIRE(a->w, "GEMM_DX needs w");
    layer_sgemm_one_pool(false, false, a->rows, a->k, a->cols, a->x, a->cols, a->w, a->k, a->y, a->k);
}

/* dW (cols x k) = dY^T (cols x rows) X (rows x k): the sum over the
 * tokens is the product's inner dimension. */
void layer_gemm_dw_cpu(const layer_args *a)
{
    require_linear(a);
    RL_REQUIRE(a->r, "GEMM_DW needs r, the GEMM's input");
    layer_sgemm_one_pool(true, false, a->cols, a->k, a->rows, a->x, a->cols, a->r, a->k, a->y, a->k);
}

/* ---- the attention's gradients ------------------------------------------------- */

/* Where sequence b's head h starts in an array of rows n heads x
 * head_dim wide (the context's gradient, dV, dQ dK): rows n head_dim
 * apart. */
static inline size_t head_at(const layer_args *a, int n, int b, int h)
{
    return (size_t)b * a->seq * n * a->head_dim + (size_t)h * a->head_dim;
}

/* The attention's gradients are many small products, as the forward's:
 * each thread takes whole ones, OpenBLAS single-threaded inside them. */
static void for_each_task(const layer_args *a, int tasks, void (*task)(const layer_args *, int))
{
    int blas_threads = openblas_get_num_threads();
    openblas_set_num_threads(1);
#pragma omp parallel for schedule(static)
    for (int t = 0; t < tasks; t++)
        task(a, t);
    openblas_set_num_threads(blas_threads);
}

/* dP (seq x seq) = dO V^T for sequence b and query head h (p = b heads + h). */
static void context_dp_pair(const layer_args *a, int p)
{
    int b = p / a->heads, h = p % a->heads, n = a->seq;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, a->head_dim, 1.0f,
                a->x + head_at(a, a->heads, b, h), a->heads * a->head_dim, value_of(a, a->r, b, h),
                (int)qkv_ld(a), 0.0f, a->y + (size_t)p * n * n, n);
}

/* A KV head's gradients sum over the query heads that read it; one task
 * owns each (sequence, KV head) and adds them in head order (beta 1 after
 * the first), so that no two threads write one value. p = b heads_kv + g. */
static void context_dv_pair(const layer_args *a, int p)
{
    const int b = p / a->heads_kv, g = p % a->heads_kv, group = a->heads / a->heads_kv, n = a->seq;
    float *dv = a->y + head_at(a, a->heads_kv, b, g);
    for (int j = 0; j < group; j++) {
        int h = g * group + j;
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n, a->head_dim, n, 1.0f,
                    a->x + ((size_t)b * a->heads + h) * n * n, n, a->r + head_at(a, a->heads, b, h),
                    a->heads * a->head_dim, j ? 1.0f : 0.0f, dv, a->heads_kv * a->head_dim);
    }
}

/* dQ = dS K for each query head of KV head g, and dK = the sum of their
 * dS^T Q: both products of a head read its dS while it is in the cache. */
static void scores_backward_pair(const layer_args *a, int p)
{
    const int b = p / a->heads_kv, g = p % a->heads_kv, group = a->heads / a->heads_kv, n = a->seq,
              d = a->head_dim, ld = (int)qkv_ld(a), ldy = (a->heads + a->heads_kv) * d;
    float *dk = a->y + head_at(a, a->heads + a->heads_kv, b, a->heads + g);
    for (int j = 0; j < group; j++) {
        int h = g * group + j;
        const float *ds = a->x + ((size_t)b * a->heads + h) * n * n;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, d, n, 1.0f, ds, n, key_of(a, a->r, b, h), ld,
                    0.0f, a->y + head_at(a, a->heads + a->heads_kv, b, h), ldy);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n, d, n, 1.0f, ds, n, query_of(a, a->r, b, h), ld,
                    j ? 1.0f : 0.0f, dk, ldy);
    }
}

void layer_context_dp_cpu(const layer_args *a)
{
    require_qkv(a);
    RL_REQUIRE(a->r, "CONTEXT_DP reads V from r, the QKV output");
    for_each_task(a, a->batch * a->heads, context_dp_pair);
}

void layer_context_dv_cpu(const layer_args *a)
{
    require_qkv(a);
    RL_REQUIRE(a->r, "CONTEXT_DV needs r, the context's gradient");
    for_each_task(a, a->batch * a->heads_kv, context_dv_pair);
}

void layer_scores_backward_cpu(const layer_args *a)
{
    require_qkv(a);
    RL_REQUIRE(a->r, "SCORES_BACKWARD reads Q and K from r, the QKV output");
    for_each_task(a, a->batch * a->heads_kv, scores_backward_pair);
}

/* dQKV's rows: dQ dK (k values), then dV. A row's two copies are the C
 * library's memcpy, already a vector copy at the memory's speed. */
void layer_concat_cpu(const layer_args *a)
{
    RL_REQUIRE(a->rows >= 0 && a->k >= 0 && a->k <= a->cols && a->cols >= 1, "CONCAT needs 0 <= k <= cols");
    RL_REQUIRE(a->y && (a->x || !a->k) && (a->r || a->k == a->cols), "CONCAT needs x, r and y");
    const size_t cols = (size_t)a->cols, k = (size_t)a->k;
#pragma omp parallel for schedule(static)
    for (int i = 0; i < a->rows; i++) {
        float *y = a->y + (size_t)i * cols;
        if (k)
            memcpy(y, a->x + (size_t)i * k, k * sizeof(float));
        if (k < cols)
            memcpy(y + k, a->r + (size_t)i * (cols - k), (cols - k) * sizeof(float));
    }
}

/* ---- GELU's gradient ------------------------------------------------------------ */

/* gelu'(x), the tanh form. With u = C (x + A x^3) and s = sigmoid(2u):
 * 1 + tanh u = 2s and 1 - tanh^2 u = 4 s (1 - s), so
 *   gelu'(x) = (1 + tanh u) / 2 + x (1 - tanh^2 u) u' / 2
 *            = s (1 + x (1 - s) (2C + 6CA x^2)),
 * with e = e^-2u, s = 1 / (1 + e) and 1 - s = e s (no cancellation as s
 * nears 1). e is held below e^80: for x below about -10, s = 1 / (1 +
 * e^88) would be a subnormal float, slow on some cores; e^-80 still makes
 * gelu' 0 to far below the reference's tolerance. x is held to [-20, 20]
 * (NaN kept): past it gelu' is 1, or 0 to within 1e-30, and the square
 * of an x past 1e19 would be infinite, times e s = 0 a NaN. */
static inline vf gelu_grad_vf(vf x)
{
    const float c2 = (float)(2 * LAYER_GELU_C), c2a = (float)(2 * LAYER_GELU_C * LAYER_GELU_A),
                c6a = (float)(6 * LAYER_GELU_C * LAYER_GELU_A);
    x = vexp_clamp(x, -20.0f, 20.0f);
    vf x2 = x * x;
    vf e = exp_vf(vexp_clamp(-x * vf_fma(x2, splat(c2a), splat(c2)), -88.0f, 80.0f));
    vf s = 1.0f / (1.0f + e);
    return s * vf_fma(x * (e * s), vf_fma(x2, splat(c6a), splat(c2)), splat(1.0f));
}

static inline vf times_gelu_grad(vf dy, vf x) { return dy * gelu_grad_vf(x); }

void layer_gelu_backward_cpu(const layer_args *a)
{
    require_rows(a, "GELU_BACKWARD needs x (the gradient), r (the GELU's input) and y");
    const size_t n = (size_t)a->rows * (size_t)a->cols, chunks = (n + CHUNK - 1) / CHUNK;
#pragma omp parallel for schedule(static)
    for (size_t c = 0; c < chunks; c++) {
        size_t lo = c * CHUNK;
        map2(a->y + lo, a->x + lo, a->r + lo, MIN((size_t)CHUNK, n - lo), times_gelu_grad);
    }
}

/* ---- softmax's gradient --------------------------------------------------------- */

/* The sum of x y over a row, two sums (as row_sum). */
static inline float row_dot(const float *x, const float *y, size_t n)
{
    vf s0 = {0}, s1 = {0};
    size_t i = 0;
    for (; i + 2 * VF_LANES <= n; i += 2 * VF_LANES) {
        s0 = vf_fma(vf_load(x + i), vf_load(y + i), s0);
        s1 = vf_fma(vf_load(x + i + VF_LANES), vf_load(y + i + VF_LANES), s1);
    }
    for (; i + VF_LANES <= n; i += VF_LANES)
        s0 = vf_fma(vf_load(x + i), vf_load(y + i), s0);
    if (i < n)
        s1 = vf_fma(load_part(x + i, (int)(n - i), 0), load_part(y + i, (int)(n - i), 0), s1);
    return vf_sum(s0 + s1);
}

/* y = p (dp - the sum of dp p): the row read from memory by the sum, from
 * the cache by the second pass. */
static inline void softmax_backward_row(float *y, const float *dp, const float *p, size_t n)
{
    vf s = splat(row_dot(dp, p, n));
    size_t i = 0;
    for (; i + VF_LANES <= n; i += VF_LANES)
        vf_store(y + i, vf_load(p + i) * (vf_load(dp + i) - s));
    if (i < n) {
        int t = (int)(n - i);
        store_part(y + i, load_part(p + i, t, 0) * (load_part(dp + i, t, 0) - s), t);
    }
}

void layer_softmax_backward_cpu(const layer_args *a)
{
    require_rows(a, "SOFTMAX_BACKWARD needs x (the gradient), r (the probabilities) and y");
    const size_t n = (size_t)a->cols;
#pragma omp parallel for schedule(static)
    for (int i = 0; i < a->rows; i++)
        softmax_backward_row(a->y + (size_t)i * n, a->x + (size_t)i * n, a->r + (size_t)i * n, n);
}

/* ---- layer norm's gradients ----------------------------------------------------- */

/* A row's statistics, recomputed from the norm's input r as the forward
 * computed them: the mean, then the biased variance from r - mean (two
 * passes: the second from the cache). */
typedef struct row_stats {
    float mean, rstd;
} row_stats;

static inline row_stats stats_of(const float *r, size_t n, float eps)
{
    float mean = row_sum(r, n) / (float)n;
    return (row_stats){mean, 1.0f / sqrtf(row_sum_sq(r, n, mean) / (float)n + eps)};
}

/* The sums of g = dy gamma and of g (r - mean) over a row, in the pass
 * that reads dy from memory (r from the cache). */
static inline void grad_sums(const float *dy, const float *r, const float *gamma, size_t n, float mean,
                             float *sg, float *sgc)
{
    vf a0 = {0}, a1 = {0}, vm = splat(mean);
    size_t i = 0;
    for (; i + VF_LANES <= n; i += VF_LANES) {
        vf g = vf_load(dy + i) * vf_load(gamma + i);
        a0 += g, a1 = vf_fma(g, vf_load(r + i) - vm, a1);
    }
    if (i < n) {
        int t = (int)(n - i);
        vf g = load_part(dy + i, t, 0) * load_part(gamma + i, t, 0);
        a0 += g, a1 = vf_fma(g, load_part(r + i, t, mean) - vm, a1);
    }
    *sg = vf_sum(a0), *sgc = vf_sum(a1);
}

/* y = (g - mean(g) - h mean(g h)) rstd, h = (r - mean) rstd: with
 * mean(g h) = rstd sgc / n, h mean(g h) = (r - mean) rstd^2 sgc / n. */
static inline void layernorm_backward_row(float *y, const float *dy, const float *r, const float *gamma,
                                          size_t n, float eps, ahead pf)
{
    row_stats st = stats_of(r, n, eps);
    float sg, sgc;
    grad_sums(dy, r, gamma, n, st.mean, &sg, &sgc);
    vf vm = splat(st.mean), vr = splat(st.rstd), mg = splat(sg / (float)n),
       k = splat(st.rstd * st.rstd * sgc / (float)n);
    size_t i = 0;
    for (; i + VF_LANES <= n; i += VF_LANES, prefetch_ahead(pf, i)) {
        vf g = vf_load(dy + i) * vf_load(gamma + i);
        vf_store(y + i, vf_fma(vm - vf_load(r + i), k, g - mg) * vr);
    }
    if (i < n) {
        int t = (int)(n - i);
        vf g = load_part(dy + i, t, 0) * load_part(gamma + i, t, 0);
        store_part(y + i, vf_fma(vm - load_part(r + i, t, 0), k, g - mg) * vr, t);
    }
}

void layer_layernorm_backward_cpu(const layer_args *a)
{
    require_rows(a, "LAYERNORM_BACKWARD needs x (the gradient), r (the norm's input) and y");
    RL_REQUIRE(a->gamma, "LAYERNORM_BACKWARD needs gamma");
    const size_t n = (size_t)a->cols;
#pragma omp parallel for schedule(static)
    for (int i = 0; i < a->rows; i++) {
        const float *dy = a->x + (size_t)i * n, *r = a->r + (size_t)i * n;
        layernorm_backward_row(a->y + (size_t)i * n, dy, r, a->gamma, n, a->eps, ahead_of(dy, r, n));
    }
}

/* ---- the sums over the tokens ----------------------------------------------------- */

/* Each thread's partial sums, width floats over its block of rows, a
 * stride of whole cache lines apart (no line written by two threads). */
typedef struct partials {
    float *sums;
    int threads;
    size_t width, stride;
} partials;

static partials partials_new(size_t width)
{
    partials p = {NULL, omp_get_max_threads(), width, (width + 15) / 16 * 16};
    p.sums = aligned_alloc(64, (size_t)p.threads * p.stride * sizeof(float));
    RL_REQUIRE(p.sums, "out of memory for the partial sums over the tokens");
    memset(p.sums, 0, (size_t)p.threads * p.stride * sizeof(float));
    return p;
}

static float *partials_of(const partials *p, int t) { return p->sums + (size_t)t * p->stride; }

/* Thread t of nt's contiguous block of rows: [*lo, *hi). */
static void rows_of_thread(int rows, int t, int nt, int *lo, int *hi)
{
    *lo = (int)((long long)rows * t / nt), *hi = (int)((long long)rows * (t + 1) / nt);
}

/* y = the sum of the first nt threads' partial sums, in thread order;
 * inside a parallel region, after a barrier: the columns shared. */
static void partials_combine(const partials *p, int nt, float *y)
{
    const size_t blocks = (p->width + VF_LANES - 1) / VF_LANES;
#pragma omp for schedule(static)
    for (size_t b = 0; b < blocks; b++) {
        size_t c = b * VF_LANES;
        int t = (int)MIN((size_t)VF_LANES, p->width - c);
        vf s = {0};
        for (int th = 0; th < nt; th++)
            s += load_part(partials_of(p, th) + c, t, 0);
        store_part(y + c, s, t);
    }
}

void layer_bias_grad_cpu(const layer_args *a)
{
    RL_REQUIRE(a->rows >= 0 && a->cols >= 1, "an activation needs rows >= 0 and cols >= 1");
    RL_REQUIRE(a->y && a->x, "BIAS_GRAD needs x (the gradient) and y");
    const size_t cols = (size_t)a->cols;
    partials p = partials_new(cols);
#pragma omp parallel num_threads(p.threads)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads(), lo, hi;
        float *acc = partials_of(&p, t);
        rows_of_thread(a->rows, t, nt, &lo, &hi);
        for (int i = lo; i < hi; i++)
            map2(acc, acc, a->x + (size_t)i * cols, cols, add);
#pragma omp barrier
        partials_combine(&p, nt, a->y);
    }
    free(p.sums);
}

/* One row into gamma's and beta's partial sums: dg += dy h, db += dy,
 * h = (r - mean) rstd. The row's dy comes from memory while the sums are
 * loaded and stored in L1: the next rows' inputs are asked for ahead, as
 * the norms' last pass does (without, the step read 0.44 of its roof). */
static inline void param_grad_row(float *dg, float *db, const float *dy, const float *r, size_t n, row_stats st,
                                  ahead pf)
{
    vf vm = splat(st.mean), vr = splat(st.rstd);
    size_t i = 0;
    for (; i + VF_LANES <= n; i += VF_LANES, prefetch_ahead(pf, i)) {
        vf x = vf_load(dy + i);
        vf_store(dg + i, vf_fma(x, (vf_load(r + i) - vm) * vr, vf_load(dg + i)));
        vf_store(db + i, vf_load(db + i) + x);
    }
    if (i < n) {
        int t = (int)(n - i);
        vf x = load_part(dy + i, t, 0);
        store_part(dg + i, vf_fma(x, (load_part(r + i, t, 0) - vm) * vr, load_part(dg + i, t, 0)), t);
        store_part(db + i, load_part(db + i, t, 0) + x, t);
    }
}

void layer_layernorm_param_grad_cpu(const layer_args *a)
{
    require_rows(a, "LAYERNORM_PARAM_GRAD needs x (the gradient), r (the norm's input) and y");
    const size_t cols = (size_t)a->cols;
    partials p = partials_new(2 * cols); /* gamma's then beta's, as y */
#pragma omp parallel num_threads(p.threads)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads(), lo, hi;
        float *dg = partials_of(&p, t);
        rows_of_thread(a->rows, t, nt, &lo, &hi);
        for (int i = lo; i < hi; i++) {
            const float *r = a->r + (size_t)i * cols, *dy = a->x + (size_t)i * cols;
            param_grad_row(dg, dg + cols, dy, r, cols, stats_of(r, cols, a->eps), ahead_of(dy, r, cols));
        }
#pragma omp barrier
        partials_combine(&p, nt, a->y);
    }
    free(p.sums);
}
