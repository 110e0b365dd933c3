/*
 * test_layer_backward.c -- the backward pass's reference (ref/
 * layer_backward.c), that every backward kernel is checked against
 * (test_layer.c), checked itself against the forward's (ref/layer.c):
 * for each value v_i of the input a gradient is of,
 *     grad_i = <dy, f(v + h e_i) - f(v - h e_i)> / 2h,
 * f the forward step (or the attention's chain of them), dy a random
 * gradient of its output, in double on tiny shapes, every value of every
 * gradient, to FD_TOL of the gradient's largest value. h = 1e-5: the
 * central difference's error, h^2 f''' / 6, and the rounding's, 1e-16 /
 * h, both stay below 1e-9, so FD_TOL can be tight; that it is, a GELU
 * gradient of the erf form, statistics with another eps, a flipped sign
 * and a gradient off by 1e-5 all show (a_wrong_gradient_is_caught). Then
 * the CPU's sums over the tokens, the same bits each call, and the counts
 * of a few backward rows, worked by hand for BERT-large.
 */
#include "layer.h"
#include "rl_measure.h"

#include <criterion/criterion.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define H 1e-5
#define FD_TOL 1e-6

/* The differences call the reference thousands of times on a few values
 * each: one thread, so that no call waits on a team (each test is a
 * process of its own, so this stays here). */
static void one_thread(void) { omp_set_num_threads(1); }

TestSuite(layer_backward_ref, .init = one_thread);

static const layer_variant *row_of(layer_op op)
{
    for (const layer_variant *v = layer_variants; v->name; v++)
        if (v->op == op && !v->fused)
            return v;
    cr_assert_fail("no unfused row computes %s", layer_op_name(op));
    return NULL;
}

static double *drawn(size_t n, double lo, double hi, uint64_t seed)
{
    double *d = calloc(n, sizeof(double));
    cr_assert_not_null(d);
    rl_fill_uniform_f64(d, n, lo, hi, seed);
    return d;
}

static double *zeros(size_t n)
{
    double *d = calloc(n, sizeof(double));
    cr_assert_not_null(d);
    return d;
}

/* One reference step: op on shape, inputs io, output y. */
static void step(layer_op op, const layer_args *shape, layer_ref io, double *y)
{
    io.y = y;
    layer_reference(row_of(op), shape, &io);
}

/* A forward function of one of its inputs (which fd_gap perturbs in
 * place): a step, or the attention's chain. */
typedef struct fd_fn {
    void (*run)(const struct fd_fn *f, double *y);
    layer_op op;
    layer_args shape;
    layer_ref io; /* its inputs */
    size_t n_out;
} fd_fn;

static void run_step(const fd_fn *f, double *y) { step(f->op, &f->shape, f->io, y); }

/* The largest gap, over the n values of wrt, between grad and the
 * central difference of <dy, f>, relative to grad's largest value. The
 * step is (v + h) - (v - h) as rounded, so its own rounding adds none. */
static double fd_gap(const fd_fn *f, double *wrt, size_t n, const double *dy, const double *grad)
{
    double *yp = zeros(f->n_out), *ym = zeros(f->n_out), gap = 0, top = 0;
    for (size_t i = 0; i < n; i++) {
        double v = wrt[i], up = v + H, down = v - H, fd = 0;
        wrt[i] = up, f->run(f, yp);
        wrt[i] = down, f->run(f, ym);
        wrt[i] = v;
        for (size_t o = 0; o < f->n_out; o++)
            fd += dy[o] * (yp[o] - ym[o]);
        fd /= up - down;
        gap = fmax(gap, fabs(fd - grad[i])), top = fmax(top, fabs(grad[i]));
    }
    free(yp), free(ym);
    cr_assert_gt(top, 0, "a gradient of zeros checks nothing");
    return gap / top;
}

#define ASSERT_CLOSE(gap, what) cr_assert_lt((gap), FD_TOL, "%s: %.3g of the largest value off", (what), (gap))

/* ---- a linear layer ------------------------------------------------------------- */

Test(layer_backward_ref, a_linear_layers_gradients_match_finite_differences)
{
    layer_args s = {.rows = 3, .cols = 5, .k = 4}; /* x 3 x 4, w 5 x 4, y 3 x 5 */
    double *x = drawn(12, -1, 1, 1), *w = drawn(20, -1, 1, 2), *dy = drawn(15, -1, 1, 3);
    double *dx = zeros(12), *dw = zeros(20), *bias = drawn(5, -1, 1, 4), *db = zeros(5);
    fd_fn gemm = {run_step, LAYER_OP_GEMM, s, {.x = x, .w = w}, 15};
    step(LAYER_OP_GEMM_DX, &s, (layer_ref){.x = dy, .w = w}, dx);
    ASSERT_CLOSE(fd_gap(&gemm, x, 12, dy, dx), "GEMM_DX");
    step(LAYER_OP_GEMM_DW, &s, (layer_ref){.x = dy, .r = x}, dw);
    ASSERT_CLOSE(fd_gap(&gemm, w, 20, dy, dw), "GEMM_DW");
    /* the bias's: y = x' + bias, x' any 3 x 5 */
    fd_fn add_bias = {run_step, LAYER_OP_BIAS, s, {.x = dy, .bias = bias}, 15};
    step(LAYER_OP_BIAS_GRAD, &s, (layer_ref){.x = dy}, db);
    ASSERT_CLOSE(fd_gap(&add_bias, bias, 5, dy, db), "BIAS_GRAD");
    free(x), free(w), free(dy), free(dx), free(dw), free(bias), free(db);
}

/* ---- element-wise and norms --------------------------------------------------- */

/* 3 rows of 7; GELU's input over [-4, 4], where its curve bends. */
static const layer_args ROWS = {.rows = 3, .cols = 7, .eps = 1e-5f};
enum { N = 21 };

Test(layer_backward_ref, gelus_and_softmaxs_gradients_match_finite_differences)
{
    double *x = drawn(N, -4, 4, 10), *dy = drawn(N, -1, 1, 11), *dx = zeros(N), *p = zeros(N);
    fd_fn gelu = {run_step, LAYER_OP_GELU, ROWS, {.x = x}, N};
    step(LAYER_OP_GELU_BACKWARD, &ROWS, (layer_ref){.x = dy, .r = x}, dx);
    ASSERT_CLOSE(fd_gap(&gelu, x, N, dy, dx), "GELU_BACKWARD");
    /* softmax's: r the probabilities the forward gave */
    fd_fn softmax = {run_step, LAYER_OP_SOFTMAX, ROWS, {.x = x}, N};
    step(LAYER_OP_SOFTMAX, &ROWS, (layer_ref){.x = x}, p);
    step(LAYER_OP_SOFTMAX_BACKWARD, &ROWS, (layer_ref){.x = dy, .r = p}, dx);
    ASSERT_CLOSE(fd_gap(&softmax, x, N, dy, dx), "SOFTMAX_BACKWARD");
    free(x), free(dy), free(dx), free(p);
}

Test(layer_backward_ref, layer_norms_gradients_match_finite_differences)
{
    double *x = drawn(N, -1, 1, 20), *dy = drawn(N, -1, 1, 21), *gamma = drawn(7, 0.5, 1.5, 22),
           *beta = drawn(7, -1, 1, 23), *dx = zeros(N), *dp = zeros(14);
    fd_fn norm = {run_step, LAYER_OP_LAYERNORM, ROWS, {.x = x, .gamma = gamma, .beta = beta}, N};
    step(LAYER_OP_LAYERNORM_BACKWARD, &ROWS, (layer_ref){.x = dy, .r = x, .gamma = gamma}, dx);
    ASSERT_CLOSE(fd_gap(&norm, x, N, dy, dx), "LAYERNORM_BACKWARD");
    step(LAYER_OP_LAYERNORM_PARAM_GRAD, &ROWS, (layer_ref){.x = dy, .r = x}, dp);
    ASSERT_CLOSE(fd_gap(&norm, gamma, 7, dy, dp), "LAYERNORM_PARAM_GRAD's gamma");
    ASSERT_CLOSE(fd_gap(&norm, beta, 7, dy, dp + 7), "LAYERNORM_PARAM_GRAD's beta");
    free(x), free(dy), free(gamma), free(beta), free(dx), free(dp);
}

/* ---- the attention ----------------------------------------------------------------- */

/* Two sequences of 5, 4 query heads on 2 KV heads of 3: QKV 10 x 24. */
static const layer_args ATT = {.rows = 10, .batch = 2, .seq = 5, .heads = 4, .heads_kv = 2, .head_dim = 3,
                               .mask_kind = LAYER_MASK_NONE, .scale = 0.57735026f};
enum { QKV = 240, QK = 180, V = 60, SC = 200, O = 120 };

/* The QKV gradient from its parts (either may be zeros): CONCAT. */
static void qkv_grad(const double *dqk, const double *dv, double *y)
{
    layer_args s = {.rows = ATT.rows, .cols = QKV / ATT.rows, .k = QK / ATT.rows};
    step(LAYER_OP_CONCAT, &s, (layer_ref){.x = dqk, .r = dv}, y);
}

/* The scores' rows: batch x heads x seq rows of seq. */
static layer_args score_rows(void) { return (layer_args){.rows = SC / ATT.seq, .cols = ATT.seq}; }

/* scores -> scale (no mask) -> softmax -> context, as the unfused layer
 * runs it; p: the probabilities. */
static void attention(const double *qkv, double *o, double *p)
{
    layer_args rows = score_rows();
    double sc[SC], z[SC];
    step(LAYER_OP_SCORES, &ATT, (layer_ref){.x = qkv}, sc);
    step(LAYER_OP_SCALE_MASK, &ATT, (layer_ref){.x = sc}, z);
    step(LAYER_OP_SOFTMAX, &rows, (layer_ref){.x = z}, p);
    step(LAYER_OP_CONTEXT, &ATT, (layer_ref){.x = p, .r = qkv}, o);
}

static void run_attention(const fd_fn *f, double *o)
{
    double p[SC];
    attention(f->io.x, o, p);
}

Test(layer_backward_ref, the_attentions_gradients_match_finite_differences)
{
    double *qkv = drawn(QKV, -1, 1, 30), *p = drawn(SC, 0, 1, 31), *dout = drawn(O, -1, 1, 32),
           *ds = drawn(SC, -1, 1, 33), *dp = zeros(SC), *dqk = zeros(QK), *dv = zeros(V), *none = zeros(QK),
           *dqkv = zeros(QKV);
    /* the context's: dP, and dV (Q and K's columns none) */
    fd_fn context = {run_step, LAYER_OP_CONTEXT, ATT, {.x = p, .r = qkv}, O};
    step(LAYER_OP_CONTEXT_DP, &ATT, (layer_ref){.x = dout, .r = qkv}, dp);
    ASSERT_CLOSE(fd_gap(&context, p, SC, dout, dp), "CONTEXT_DP");
    step(LAYER_OP_CONTEXT_DV, &ATT, (layer_ref){.x = p, .r = dout}, dv);
    qkv_grad(none, dv, dqkv);
    ASSERT_CLOSE(fd_gap(&context, qkv, QKV, dout, dqkv), "CONTEXT_DV");
    /* the scores': dQ and dK (V's columns none) */
    fd_fn scores = {run_step, LAYER_OP_SCORES, ATT, {.x = qkv}, SC};
    step(LAYER_OP_SCORES_BACKWARD, &ATT, (layer_ref){.x = ds, .r = qkv}, dqk);
    qkv_grad(dqk, none, dqkv);
    ASSERT_CLOSE(fd_gap(&scores, qkv, QKV, ds, dqkv), "SCORES_BACKWARD");
    free(qkv), free(p), free(dout), free(ds), free(dp), free(dqk), free(dv), free(none), free(dqkv);
}

/* The whole chain back, as autograd runs it: dP = dO V^T, dV = P^T dO,
 * dS = softmax's gradient times the scale, dQ dK from dS, then CONCAT. */
Test(layer_backward_ref, the_attention_chain_back_matches_finite_differences)
{
    double *qkv = drawn(QKV, -1, 1, 40), *dout = drawn(O, -1, 1, 41), o[O], p[SC], dp[SC], dz[SC], ds[SC],
           dqk[QK], dv[V], dqkv[QKV];
    layer_args rows = score_rows();
    attention(qkv, o, p);
    step(LAYER_OP_CONTEXT_DP, &ATT, (layer_ref){.x = dout, .r = qkv}, dp);
    step(LAYER_OP_CONTEXT_DV, &ATT, (layer_ref){.x = p, .r = dout}, dv);
    step(LAYER_OP_SOFTMAX_BACKWARD, &rows, (layer_ref){.x = dp, .r = p}, dz);
    step(LAYER_OP_SCALE_MASK, &ATT, (layer_ref){.x = dz}, ds); /* y = x scale: its own gradient */
    step(LAYER_OP_SCORES_BACKWARD, &ATT, (layer_ref){.x = ds, .r = qkv}, dqk);
    qkv_grad(dqk, dv, dqkv);
    fd_fn chain = {run_attention, LAYER_OP_ATTENTION, ATT, {.x = qkv}, O};
    ASSERT_CLOSE(fd_gap(&chain, qkv, QKV, dout, dqkv), "the attention's chain");
    free(qkv), free(dout);
}

/* ---- the check can fail ---------------------------------------------------------- */

/* GELU's exact (erf) form's gradient, Phi(x) + x phi(x): off the tanh
 * form's by its approximation, 1e-3 at most. */
static double erf_gelu_grad(double x)
{
    return 0.5 * (1 + erf(x / sqrt(2))) + x * exp(-x * x / 2) / sqrt(2 * M_PI);
}

Test(layer_backward_ref, a_wrong_gradient_is_caught)
{
    double *x = drawn(N, -4, 4, 50), *dy = drawn(N, -1, 1, 51), *gamma = drawn(7, 0.5, 1.5, 52),
           *beta = drawn(7, -1, 1, 53), *dx = zeros(N), *p = zeros(N);
    fd_fn gelu = {run_step, LAYER_OP_GELU, ROWS, {.x = x}, N};
    for (int i = 0; i < N; i++)
        dx[i] = dy[i] * erf_gelu_grad(x[i]);
    cr_assert_gt(fd_gap(&gelu, x, N, dy, dx), 100 * FD_TOL, "the erf form's gradient is not the tanh form's");

    /* layer norm's statistics recomputed with eps 1e-4, the forward's
     * 1e-5 (rstd off by about 9e-5 / 2 var, var near 5 here) */
    layer_args other = ROWS;
    other.eps = 1e-4f;
    fd_fn norm = {run_step, LAYER_OP_LAYERNORM, ROWS, {.x = x, .gamma = gamma, .beta = beta}, N};
    step(LAYER_OP_LAYERNORM_BACKWARD, &other, (layer_ref){.x = dy, .r = x, .gamma = gamma}, dx);
    cr_assert_gt(fd_gap(&norm, x, N, dy, dx), FD_TOL, "another eps shows");

    /* softmax's gradient with its sign flipped, then right but 1e-5 off */
    fd_fn softmax = {run_step, LAYER_OP_SOFTMAX, ROWS, {.x = x}, N};
    step(LAYER_OP_SOFTMAX, &ROWS, (layer_ref){.x = x}, p);
    step(LAYER_OP_SOFTMAX_BACKWARD, &ROWS, (layer_ref){.x = dy, .r = p}, dx);
    for (int i = 0; i < N; i++)
        dx[i] = -dx[i];
    cr_assert_gt(fd_gap(&softmax, x, N, dy, dx), 1.0, "a flipped sign shows");
    for (int i = 0; i < N; i++)
        dx[i] *= -(1 + 1e-5);
    cr_assert_gt(fd_gap(&softmax, x, N, dy, dx), 5 * FD_TOL, "a 1e-5 error shows");
    free(x), free(dy), free(gamma), free(beta), free(dx), free(p);
}

/* ---- the CPU's sums over the tokens: the same bits each call ----------------------- */

/* Each thread's block of rows, then the threads' sums in thread order:
 * no order left to timing (atomics, a dynamic schedule), so two calls
 * agree to the bit. */
Test(layer_backward_cpu, the_sums_over_the_tokens_give_the_same_bits_each_call)
{
    enum { R = 1001, C = 33 };
    float *x = malloc(sizeof(float) * R * C), *r = malloc(sizeof(float) * R * C), y[2][2 * C];
    cr_assert(x && r);
    rl_fill_uniform(x, R * C, -1, 1, 60), rl_fill_uniform(r, R * C, -1, 1, 61);
    layer_args a = {.rows = R, .cols = C, .eps = 1e-5f, .x = x, .r = r};
    for (int call = 0; call < 2; call++) {
        a.y = y[call];
        layer_layernorm_param_grad_cpu(&a);
    }
    cr_assert_arr_eq(y[0], y[1], sizeof y[0], "LAYERNORM_PARAM_GRAD");
    for (int call = 0; call < 2; call++) {
        a.y = y[call];
        layer_bias_grad_cpu(&a);
    }
    cr_assert_arr_eq(y[0], y[1], sizeof(float) * C, "BIAS_GRAD");
    free(x), free(r);
}

/* ---- counting --------------------------------------------------------------------- */

static const layer_variant *variant_named(const char *role)
{
    for (const layer_variant *v = layer_variants; v->name; v++)
        if (v->role && !strcmp(v->role, role))
            return v;
    cr_assert_fail("no variant with role %s", role);
    return NULL;
}

/* BERT-large's FFN up projection's gradients, 512 tokens: dY 512 x 4096,
 * X 512 x 1024, W 4096 x 1024. dX = dY W: 2 x 512 x 4096 x 1024 FLOPs =
 * 4294967296; dY (2097152), W (4194304) in, dX (524288) out: 4 x
 * 6815744 = 27262976 bytes. dW = dY^T X: the same FLOPs; dY and X
 * (524288) in, dW (4194304) out: the same bytes. */
Test(layer_backward_ref, a_linear_layers_gradients_count_their_operands)
{
    const layer_variant *dx = variant_named("gemm_dx"), *dw = variant_named("gemm_dw"),
                        *db = variant_named("bias_grad");
    layer_args a = {.rows = 512, .cols = 4096, .k = 1024};
    cr_assert_float_eq(layer_flops(dx, &a), 4294967296.0, 1e-3);
    cr_assert_float_eq(layer_flops(dw, &a), 4294967296.0, 1e-3);
    cr_assert_float_eq(layer_bytes(dx, &a, KERNEL_CPU), 27262976.0, 1e-3);
    cr_assert_float_eq(layer_bytes(dw, &a, KERNEL_CUDA), 27262976.0, 1e-3);
    layer_sizes s = layer_input_sizes(dx, &a);
    cr_assert(s.x == 2097152 && s.w == 4194304 && !s.r && !s.bias && !s.gamma && !s.beta && !s.mask);
    cr_assert_eq(layer_out_count(dx, &a), 524288);
    s = layer_input_sizes(dw, &a);
    cr_assert(s.x == 2097152 && s.r == 524288 && !s.w);
    cr_assert_eq(layer_out_count(dw, &a), 4194304);
    /* the bias's: one add a value of dY; dY in, 4096 sums out: 4 x
     * 2101248 = 8404992 bytes */
    cr_assert_float_eq(layer_flops(db, &a), 2097152.0, 1e-3);
    cr_assert_float_eq(layer_bytes(db, &a, KERNEL_CPU), 8404992.0, 1e-3);
    cr_assert_eq(layer_out_count(db, &a), 4096);
    /* the sums over the tokens, and only they */
    cr_assert(layer_sums_tokens(dw) && layer_sums_tokens(db) && !layer_sums_tokens(dx));
    cr_assert(layer_sums_tokens(variant_named("layernorm_param_grad")));
    cr_assert_not(layer_sums_tokens(variant_named("layernorm_backward")));
}

/* BERT-large's attention, 512 tokens, 16 heads of 64: dS 16 x 512 x 512
 * = 4194304 in, and Q and K, 512 x 32 x 64 = 1048576 (not V); dQ dK, 512
 * x 32 x 64 = 1048576 out: 4 x 6291456 = 25165824 bytes; two products
 * of 2 x 4194304 x 64: 1073741824 FLOPs. dV with 4 query heads on 2 KV
 * heads, 2 sequences of 128: P 2 x 4 x 128 x 128 = 131072 and dO 256 x
 * 4 x 64 = 65536 in, dV 256 x 2 x 64 = 32768 out: 4 x 229376 = 917504
 * bytes, 2 x 131072 x 64 = 16777216 FLOPs. The QKV gradient: dQ dK 512
 * x 2048 and dV 512 x 1024 in, 512 x 3072 out: 4 x 3145728 = 12582912. */
Test(layer_backward_ref, the_attentions_gradients_count_their_operands)
{
    layer_args a = {.rows = 512, .batch = 1, .seq = 512, .heads = 16, .heads_kv = 16, .head_dim = 64};
    const layer_variant *sb = variant_named("scores_backward"), *dv = variant_named("context_dv");
    cr_assert_float_eq(layer_bytes(sb, &a, KERNEL_CPU), 25165824.0, 1e-3);
    cr_assert_float_eq(layer_flops(sb, &a), 1073741824.0, 1e-3);
    cr_assert_eq(layer_out_count(sb, &a), 1048576);
    cr_assert_eq(layer_input_sizes(sb, &a).r, 512 * 48 * 64, "r is the QKV output, V's columns too");
    layer_args g = {.rows = 256, .batch = 2, .seq = 128, .heads = 4, .heads_kv = 2, .head_dim = 64};
    cr_assert_float_eq(layer_bytes(dv, &g, KERNEL_CPU), 917504.0, 1e-3);
    cr_assert_float_eq(layer_flops(dv, &g), 16777216.0, 1e-3);
    cr_assert_eq(layer_out_count(dv, &g), 32768);
    layer_args c = {.rows = 512, .cols = 3072, .k = 2048};
    const layer_variant *cat = variant_named("concat");
    cr_assert_float_eq(layer_bytes(cat, &c, KERNEL_CPU), 12582912.0, 1e-3);
    cr_assert_eq(layer_input_sizes(cat, &c).x, 1048576);
    cr_assert_eq(layer_input_sizes(cat, &c).r, 524288);
    cr_assert_float_eq(layer_flops(cat, &c), 0.0, 1e-9, "a copy: no arithmetic");
}
