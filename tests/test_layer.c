/*
 * test_layer.c -- experiment 09's kernels against the double-precision
 * reference: every variant of the table, on fresh random inputs, at
 * edge shapes (one row, rows and columns off the vector width and off the
 * GEMM's and the fused attention's tiles, a one-token sequence, grouped
 * and multi-head attention), every epilogue and every mask. Outputs are
 * poisoned first (rl_validate_f32), so a value never written fails;
 * ADD_RMSNORM's kept sum y2 is checked beside y. Inputs of +-30 and +-80
 * drive the vector exp's clamps in GELU (and its gradient's), SiLU and the
 * softmaxes. The backward pass's rows are walked as the forward's, at the
 * shapes of the step they differentiate (test_layer_backward.c checks
 * their reference against finite differences of the forward's). The
 * counts of bytes and FLOPs are checked against hand-computed numbers for
 * BERT-large's shapes. The CUDA suite skips without a GPU.
 */
#include "helpers.h"
#include "layer.h"
#include "rl_backend.h"
#include "rl_measure.h"
#include "rooflab.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct job {
    layer_call call;
} job;

static void launch(void *p) { layer_call_run(&((job *)p)->call); }

/* One check: a variant at a shape, and how its inputs are drawn. */
typedef struct layer_case {
    layer_args a;
    bool bias;  /* a bias where the op may take one (GEMM's epilogues, BIAS_ADD_LAYERNORM) */
    bool large; /* +-30 and +-80 planted among x (or the bias: GEMM epilogues) */
} layer_case;

static const float LARGE[] = {30, -30, 80, -80};

/* An input of n floats: drawn on the host, widened for the reference,
 * uploaded for the kernel. */
typedef struct input {
    size_t n;
    float *host;
    double *ref;
    float *dev;
} input;

static input make_input(rl_backend *be, size_t n, float lo, float hi, uint64_t seed)
{
    input in = {n, NULL, NULL, NULL};
    if (!n)
        return in;
    in.host = rl_host_alloc(n * sizeof(float));
    in.ref = rl_host_alloc(n * sizeof(double));
    rl_fill_uniform(in.host, n, lo, hi, seed);
    in.dev = rl_alloc(be, n * sizeof(float));
    return in;
}

/* The host values final: widened and uploaded. */
static void finish_input(rl_backend *be, input *in)
{
    for (size_t i = 0; i < in->n; i++)
        in->ref[i] = in->host[i];
    if (in->n)
        rl_upload(be, in->dev, in->host, in->n * sizeof(float));
}

static void free_input(rl_backend *be, input *in)
{
    if (!in->n)
        return;
    rl_free(be, in->dev);
    rl_host_free(in->host);
    rl_host_free(in->ref);
}

/* A few values across the array set to LARGE's: of x, or of the input
 * whose function the op takes (GEMM: the bias; GELU's gradient: r). */
static void plant_large(input *in)
{
    for (size_t i = 0; i < in->n && i < 64; i += 3)
        in->host[(i * 7919) % in->n] = LARGE[i / 3 % 4];
}

/* The padding mask: sequence b's last keys masked, more for later
 * sequences, never every key. */
static void padding_mask(input *m, const layer_args *a)
{
    for (int b = 0; b < a->batch; b++) {
        int valid = a->seq - (b + 1) * a->seq / 4;
        valid = valid < 1 ? 1 : valid;
        for (int j = 0; j < a->seq; j++)
            m->host[(size_t)b * a->seq + j] = j < valid ? 0.0f : LAYER_MASKED;
    }
}

static bool takes_bias(const layer_variant *v, const layer_case *c)
{
    return v->op == LAYER_OP_BIAS || v->op == LAYER_OP_BIAS_GELU ||
           ((v->op == LAYER_OP_BIAS_ADD_LAYERNORM || v->op == LAYER_OP_GEMM) && c->bias);
}

/* What x is drawn from: scores as a product of the QKV output gives
 * them, probabilities in [0, 1] (x of the context and of dV, r of
 * softmax's gradient), the rest and gradients in [-1, 1], gamma around 1. */
static void input_range(const layer_variant *v, float *lo, float *hi)
{
    bool scores = v->op == LAYER_OP_SCALE_MASK || v->op == LAYER_OP_SCALE_MASK_SOFTMAX ||
                  v->op == LAYER_OP_SOFTMAX;
    *lo = v->op == LAYER_OP_CONTEXT || v->op == LAYER_OP_CONTEXT_DV ? 0 : scores ? -4 : -1;
    *hi = scores ? 4 : 1;
}

static rl_check run_case(rl_backend *be, const layer_variant *v, const layer_case *lc, uint64_t seed)
{
    layer_args a = lc->a;
    const float one = 1;
    layer_args probe = a;
    probe.bias = takes_bias(v, lc) ? &one : NULL;
    layer_sizes s = layer_input_sizes(v, &probe);
    float lo, hi;
    input_range(v, &lo, &hi);
    input x = make_input(be, s.x, lo, hi, seed),
          r = make_input(be, s.r, v->op == LAYER_OP_SOFTMAX_BACKWARD ? 0 : -1, 1, seed + 1),
          w = make_input(be, s.w, -1, 1, seed + 2), bias = make_input(be, s.bias, -1, 1, seed + 3),
          gamma = make_input(be, s.gamma, 0.5f, 1.5f, seed + 4),
          beta = make_input(be, s.beta, -1, 1, seed + 5), mask = make_input(be, s.mask, 0, 0, seed + 6);
    if (lc->large)
        plant_large(v->op == LAYER_OP_GEMM ? &bias : v->op == LAYER_OP_GELU_BACKWARD ? &r : &x);
    if (s.mask)
        padding_mask(&mask, &a);
    input *all[] = {&x, &r, &w, &bias, &gamma, &beta, &mask};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        finish_input(be, all[i]);

    size_t n_out = layer_out_count(v, &a), half = n_out / 2;
    double *want = rl_host_alloc(n_out * sizeof(double));
    float *out = rl_alloc(be, n_out * sizeof(float));
    bool two = v->op == LAYER_OP_ADD_RMSNORM;
    layer_ref io = {want, two ? want + half : NULL, x.ref, r.ref, w.ref, bias.ref, gamma.ref, beta.ref, mask.ref};
    layer_reference(v, &a, &io);

    int backend = rl_kind(be) == RL_CUDA ? KERNEL_CUDA : KERNEL_CPU;
    /* CUDA's SwiGLU epilogue writes the product, gate and up, to y2 first
     * (layer.cu); the CPU keeps it in each tile's cache and ignores y2 */
    bool gate = v->op == LAYER_OP_GEMM && a.epilogue == LAYER_EPI_SILU_GATE;
    float *product = gate ? rl_alloc(be, 2 * n_out * sizeof(float)) : NULL;
    a.y = out, a.y2 = two ? out + half : product;
    a.x = x.dev, a.r = r.dev, a.w = w.dev, a.bias = bias.dev, a.gamma = gamma.dev, a.beta = beta.dev;
    a.mask = mask.dev, a.stream = rl_stream(be);
    job j = {{backend == KERNEL_CUDA ? v->cuda : v->cpu, a}};
    rl_check c = rl_validate_f32(be, launch, &j, out, n_out, want, layer_atol(v, &a), LAYER_RTOL);

    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free_input(be, all[i]);
    rl_free(be, out);
    if (product)
        rl_free(be, product);
    rl_host_free(want);
    return c;
}

static const char *const MASKS[] = {"none", "padding", "causal"};
static const char *const EPILOGUES[] = {"none", "bias", "bias_gelu", "bias_add", "silu_gate"};

static void check_case(rl_backend *be, const layer_variant *v, const layer_case *lc, uint64_t seed)
{
    rl_check c = run_case(be, v, lc, seed);
    char msg[256];
    rl_check_describe(&c, msg, sizeof msg);
    const layer_args *a = &lc->a;
    cr_assert(c.ok,
              "%s %s (rows %d, cols %d, k %d; batch %d, seq %d, heads %d/%d, d %d; epilogue %s, "
              "mask %s%s%s): %s",
              rl_backend_name(rl_kind(be)), v->name, a->rows, a->cols, a->k, a->batch, a->seq, a->heads,
              a->heads_kv, a->head_dim, EPILOGUES[a->epilogue], MASKS[a->mask_kind],
              lc->bias ? ", bias" : "", lc->large ? ", large inputs" : "", msg);
}

/* ---- the shapes each kind of step is checked at --------------------------------- */

static const int ROWS[] = {1, 3, 17};
static const int COLS[] = {1, 7, 64, 1000, 1024};
static const int KS[] = {1, 5, 64, 300};
#define COUNT(a) (int)(sizeof(a) / sizeof((a)[0]))

static layer_case activation(int rows, int cols)
{
    return (layer_case){.a = {.rows = rows, .cols = cols, .eps = 1e-5f}, .bias = true};
}

static int check_activations(rl_backend *be, const layer_variant *v, uint64_t *seed)
{
    int checked = 0;
    for (int i = 0; i < COUNT(ROWS); i++)
        for (int j = 0; j < COUNT(COLS); j++) {
            layer_case lc = activation(ROWS[i], COLS[j]);
            check_case(be, v, &lc, (*seed)++), checked++;
            if (v->op == LAYER_OP_BIAS_ADD_LAYERNORM) { /* the bias is optional */
                lc.bias = false;
                check_case(be, v, &lc, (*seed)++), checked++;
            }
        }
    bool exp_inside = v->op == LAYER_OP_GELU || v->op == LAYER_OP_BIAS_GELU ||
                      v->op == LAYER_OP_SILU_GATE || v->op == LAYER_OP_SOFTMAX ||
                      v->op == LAYER_OP_GELU_BACKWARD;
    for (int cols = 7; exp_inside && cols <= 1000; cols = cols * 10 + 300) {
        layer_case lc = activation(5, cols);
        lc.large = true;
        check_case(be, v, &lc, (*seed)++), checked++;
    }
    if (layer_sums_tokens(v)) { /* many rows to a thread, the blocks uneven */
        layer_case lc = activation(1001, 33);
        check_case(be, v, &lc, (*seed)++), checked++;
    }
    return checked;
}

/* Shapes of rows, cols, k: a GEMM's gradients (the forward's: rows x k
 * in, cols out; fewer than the GEMM's, each one plain product; dW's sum
 * over 600 tokens), the QKV gradient's rows (k values of dQ dK, then dV). */
static const int GEMM_GRAD_SHAPES[][3] = {{1, 7, 5},   {1, 1000, 64}, {3, 1000, 1},
                                          {17, 7, 300}, {17, 64, 5},   {600, 100, 37}};
static const int CONCAT_SHAPES[][3] = {{1, 7, 3}, {3, 64, 48}, {33, 512, 384}, {17, 1001, 333}};

static int check_shapes(rl_backend *be, const layer_variant *v, const int (*shapes)[3], int n, uint64_t *seed)
{
    for (int i = 0; i < n; i++) {
        layer_case lc = {.a = {.rows = shapes[i][0], .cols = shapes[i][1], .k = shapes[i][2]}};
        check_case(be, v, &lc, (*seed)++);
    }
    return n;
}

static int check_gemm_shape(rl_backend *be, const layer_variant *v, layer_case lc, uint64_t *seed)
{
    int checked = 0;
    if (!v->fused) {
        lc.a.epilogue = LAYER_EPI_NONE;
        check_case(be, v, &lc, (*seed)++);
        return 1;
    }
    for (int e = LAYER_EPI_NONE; e <= LAYER_EPI_SILU_GATE; e++) {
        lc.a.epilogue = (layer_epilogue)e;
        lc.bias = true;
        check_case(be, v, &lc, (*seed)++), checked++;
        if (e == LAYER_EPI_BIAS_ADD) { /* the residual without a bias */
            lc.bias = false;
            check_case(be, v, &lc, (*seed)++), checked++;
        }
    }
    return checked;
}

static int check_gemms(rl_backend *be, const layer_variant *v, uint64_t *seed)
{
    int checked = 0;
    for (int i = 0; i < COUNT(ROWS); i++)
        for (int j = 0; j < 4; j++) /* cols 1, 7, 64, 1000 */
            for (int kk = 0; kk < COUNT(KS); kk++)
                checked += check_gemm_shape(be, v, (layer_case){.a = {.rows = ROWS[i], .cols = COLS[j], .k = KS[kk]}},
                                            seed);
    /* several output tiles, the last ones partial; a large bias into GELU */
    layer_case tiles = {.a = {.rows = 600, .cols = 1100, .k = 64}};
    checked += check_gemm_shape(be, v, tiles, seed);
    tiles.large = true;
    checked += check_gemm_shape(be, v, tiles, seed);
    return checked;
}

typedef struct attn_shape {
    int batch, seq, heads, heads_kv, head_dim;
} attn_shape;

static const attn_shape ATTN_SHAPES[] = {
    {1, 1, 2, 1, 64}, {2, 1, 2, 2, 64}, {1, 5, 2, 1, 64},   {2, 5, 2, 2, 64},
    {1, 64, 2, 1, 64}, {2, 64, 2, 2, 64}, {2, 64, 4, 2, 64}, {1, 33, 2, 1, 128},
};
/* Off the fused attention's tiles of queries and keys, and RoPE's
 * positions far enough that an angle rounded to float would show. */
static const attn_shape LONG_SHAPES[] = {{2, 300, 4, 2, 64}, {1, 129, 2, 2, 64}};
/* The backward's: grouped heads (a KV head's gradient sums two query
 * heads') with a sequence off the vector width. */
static const attn_shape BACKWARD_SHAPES[] = {{2, 37, 4, 2, 64}};

static layer_case attention_case(const attn_shape *s, layer_mask mask)
{
    return (layer_case){.a = {.rows = s->batch * s->seq, .batch = s->batch, .seq = s->seq, .heads = s->heads,
                              .heads_kv = s->heads_kv, .head_dim = s->head_dim, .mask_kind = mask,
                              .scale = 1.0f / sqrtf((float)s->head_dim), .rope_theta = 10000.0f}};
}

static bool masked(const layer_variant *v)
{
    return v->op == LAYER_OP_SCALE_MASK || v->op == LAYER_OP_SCALE_MASK_SOFTMAX || v->op == LAYER_OP_ATTENTION;
}

static int check_attention_shapes(rl_backend *be, const layer_variant *v, const attn_shape *shapes, int n,
                                  uint64_t *seed)
{
    int checked = 0;
    for (int i = 0; i < n; i++)
        for (int m = LAYER_MASK_NONE; m <= (masked(v) ? LAYER_MASK_CAUSAL : LAYER_MASK_NONE); m++) {
            layer_case lc = attention_case(&shapes[i], (layer_mask)m);
            check_case(be, v, &lc, (*seed)++), checked++;
        }
    return checked;
}

static int check_attention(rl_backend *be, const layer_variant *v, uint64_t *seed)
{
    int checked = check_attention_shapes(be, v, ATTN_SHAPES, COUNT(ATTN_SHAPES), seed);
    if (v->op == LAYER_OP_ATTENTION || v->op == LAYER_OP_ROPE)
        checked += check_attention_shapes(be, v, LONG_SHAPES, COUNT(LONG_SHAPES), seed);
    if (v->op == LAYER_OP_CONTEXT_DP || v->op == LAYER_OP_CONTEXT_DV || v->op == LAYER_OP_SCORES_BACKWARD)
        checked += check_attention_shapes(be, v, BACKWARD_SHAPES, COUNT(BACKWARD_SHAPES), seed);
    return checked;
}

static int check_variant(rl_backend *be, const layer_variant *v, uint64_t *seed)
{
    switch (v->op) {
    case LAYER_OP_GEMM: return check_gemms(be, v, seed);
    case LAYER_OP_GEMM_DX:
    case LAYER_OP_GEMM_DW: return check_shapes(be, v, GEMM_GRAD_SHAPES, COUNT(GEMM_GRAD_SHAPES), seed);
    case LAYER_OP_SCORES:
    case LAYER_OP_CONTEXT:
    case LAYER_OP_SCALE_MASK:
    case LAYER_OP_SCALE_MASK_SOFTMAX:
    case LAYER_OP_ATTENTION:
    case LAYER_OP_ROPE:
    case LAYER_OP_CONTEXT_DP:
    case LAYER_OP_CONTEXT_DV:
    case LAYER_OP_SCORES_BACKWARD: return check_attention(be, v, seed);
    case LAYER_OP_CONCAT: return check_shapes(be, v, CONCAT_SHAPES, COUNT(CONCAT_SHAPES), seed);
    default: return check_activations(be, v, seed);
    }
}

static void check_table(rl_backend *be)
{
    int backend = rl_kind(be) == RL_CUDA ? KERNEL_CUDA : KERNEL_CPU, checked = 0, variants = 0;
    uint64_t seed = 900;
    for (const layer_variant *v = layer_variants; v->name; v++)
        if (layer_family.has(v, backend)) {
            checked += check_variant(be, v, &seed);
            variants++;
        }
    cr_assert_gt(variants, 0, "the table has variants on this backend");
    cr_assert_gt(checked, 500, "the table was walked");
}

Test(layer_cpu, every_variant_matches_the_reference)
{
    char why[256];
    rl_backend *be = rl_backend_open(RL_CPU, 0, why, sizeof why);
    cr_assert_not_null(be, "%s", why);
    check_table(be);
    rl_backend_close(be);
}

/* ---- the checks can fail ---------------------------------------------------------- */

static float *kept_elsewhere;

/* ADD_RMSNORM that writes y right but its sum y2 elsewhere. */
static void forgets_y2(const layer_args *a)
{
    layer_args b = *a;
    b.y2 = kept_elsewhere;
    layer_add_rmsnorm_cpu(&b);
}

Test(layer_cpu, an_unwritten_y2_fails_validation)
{
    char why[256];
    rl_backend *be = rl_backend_open(RL_CPU, 0, why, sizeof why);
    cr_assert_not_null(be, "%s", why);
    const layer_variant *v = layer_variants;
    while (v->name && v->op != LAYER_OP_ADD_RMSNORM)
        v++;
    cr_assert_not_null(v->name, "the table has ADD_RMSNORM");
    layer_variant fake = *v;
    fake.cpu = forgets_y2;
    kept_elsewhere = rl_host_alloc(17 * 64 * sizeof(float));
    layer_case lc = activation(17, 64);
    rl_check c = run_case(be, &fake, &lc, 5);
    cr_assert_not(c.ok);
    cr_assert_eq(c.nonfinite, 17 * 64, "every value of y2 unwritten, y right");
    cr_assert_eq(c.first_bad, 17 * 64);
    rl_host_free(kept_elsewhere);
    rl_backend_close(be);
}

/* ---- the table and its counts ------------------------------------------------------ */

Test(layer_cpu, every_row_has_a_cpu_launcher)
{
    int rows = 0;
    for (const layer_variant *v = layer_variants; v->name; v++, rows++) {
        cr_assert_not_null(v->cpu, "%s has a CPU launcher", v->name);
        cr_assert(layer_family.has(v, KERNEL_CPU), "%s", v->name);
        cr_assert_str_neq(layer_op_name(v->op), "?", "%s's op has a name", v->name);
        cr_assert_str_neq(layer_class_name(v->cls), "?", "%s's class has a name", v->name);
    }
    cr_assert_eq(rows, 29);
}

/* By role, as the experiment finds its rows (names are for people). */
static const layer_variant *variant_named(const char *role)
{
    for (const layer_variant *v = layer_variants; v->name; v++)
        if (v->role && !strcmp(v->role, role))
            return v;
    cr_assert_fail("no variant with role %s", role);
    return NULL;
}

/* BERT-large's FFN up projection, 512 tokens: x 512 x 1024, W 4096 x
 * 1024, y 512 x 4096. */
Test(layer_cpu, a_gemm_counts_its_operands_and_output)
{
    const layer_variant *g = variant_named("gemm"), *e = variant_named("gemm_epilogue");
    const float bias = 0;
    layer_args a = {.rows = 512, .cols = 4096, .k = 1024};
    double x = 512.0 * 1024, w = 4096.0 * 1024, y = 512.0 * 4096;
    cr_assert_float_eq(layer_flops(g, &a), 4294967296.0, 1e-3);
    cr_assert_float_eq(layer_bytes(g, &a, KERNEL_CPU), 4 * (x + w + y), 1e-3);
    cr_assert_float_eq(layer_bytes(g, &a, KERNEL_CPU), 27262976.0, 1e-3);
    cr_assert_float_eq(layer_bytes(g, &a, KERNEL_CUDA), 27262976.0, 1e-3, "the unfused GEMM: no second pass");
    layer_sizes s = layer_input_sizes(g, &a);
    cr_assert(s.x == 524288 && s.w == 4194304 && !s.r && !s.bias && !s.gamma && !s.beta && !s.mask);
    cr_assert_eq(layer_out_count(g, &a), 2097152);

    /* with GELU's epilogue: the bias read, 9 FLOPs an output value; CUDA
     * reads and writes the output once more where cuBLASLt does not run
     * the epilogue in the product (no GPU, no cuBLASLt, no algorithm) */
    a.epilogue = LAYER_EPI_BIAS_GELU, a.bias = &bias;
    cr_assert_float_eq(layer_flops(e, &a), 4294967296.0 + 9 * y, 1e-3);
    cr_assert_float_eq(layer_bytes(e, &a, KERNEL_CPU), 27262976.0 + 4 * 4096, 1e-3);
    cr_assert_float_eq(layer_bytes(e, &a, KERNEL_CUDA),
                       27262976.0 + 4 * 4096 + (layer_gemm_epilogue_in_product(&a) ? 0 : 8 * y), 1e-3);

    /* SwiGLU: the product twice as wide, the output as wide as cols */
    a.epilogue = LAYER_EPI_SILU_GATE, a.bias = NULL;
    s = layer_input_sizes(e, &a);
    cr_assert_eq(s.w, 2 * 4194304);
    cr_assert_eq(s.bias, 0);
    cr_assert_float_eq(layer_flops(e, &a), 2 * 4294967296.0 + 5 * y, 1e-3);
    cr_assert_eq(layer_out_count(e, &a), 2097152);
    /* on CUDA the gate-and-up product (2 y) is written, then read back */
    cr_assert_float_eq(layer_bytes(e, &a, KERNEL_CUDA) - layer_bytes(e, &a, KERNEL_CPU), 4 * 4 * y, 1e-3);
}

/* BERT-large's layer norm over 512 tokens of 1024: x in, y out, gamma and
 * beta once. */
Test(layer_cpu, a_layernorm_counts_its_rows_and_parameters)
{
    const layer_variant *v = variant_named("layernorm");
    layer_args a = {.rows = 512, .cols = 1024};
    layer_sizes s = layer_input_sizes(v, &a);
    cr_assert(s.x == 524288 && s.gamma == 1024 && s.beta == 1024 && !s.r && !s.w && !s.bias && !s.mask);
    cr_assert_float_eq(layer_bytes(v, &a, KERNEL_CPU), 4.0 * (2 * 524288 + 2 * 1024), 1e-6);
    cr_assert_float_eq(layer_bytes(v, &a, KERNEL_CPU), 4202496.0, 1e-6);
    cr_assert_float_eq(layer_flops(v, &a), 8.0 * 524288, 1e-6);
    cr_assert_eq(layer_out_count(v, &a), 524288);

    /* the fused residual and norm: x and r in, one output */
    const layer_variant *f = variant_named("bias_add_layernorm");
    cr_assert_float_eq(layer_bytes(f, &a, KERNEL_CPU), 4.0 * (3 * 524288 + 2 * 1024), 1e-6);
    /* ADD_RMSNORM writes two outputs */
    const layer_variant *r = variant_named("add_rmsnorm");
    cr_assert_float_eq(layer_bytes(r, &a, KERNEL_CPU), 4.0 * (4 * 524288 + 1024), 1e-6);
}

/* BERT-large's attention products, 512 tokens, 16 heads of 64: the scores
 * 16 x 512 x 512 out, Q and K in; the context P and V in. */
Test(layer_cpu, the_attention_steps_count_their_scores)
{
    layer_args a = {.rows = 512, .batch = 1, .seq = 512, .heads = 16, .heads_kv = 16, .head_dim = 64};
    double sc = 16.0 * 512 * 512, qk = 512.0 * 32 * 64, v = 512.0 * 16 * 64;
    cr_assert_float_eq(layer_flops(variant_named("scores"), &a), 2 * sc * 64, 1e-3);
    cr_assert_float_eq(layer_bytes(variant_named("scores"), &a, KERNEL_CPU), 4 * (qk + sc), 1e-3);
    cr_assert_float_eq(layer_bytes(variant_named("context"), &a, KERNEL_CPU), 4 * (sc + v + v), 1e-3);
    cr_assert_float_eq(layer_bytes(variant_named("attention"), &a, KERNEL_CPU), 4 * (3 * v + v), 1e-3,
                       "fused: QKV in, the context out, no scores");
}

Test(cuda_layer, every_variant_matches_the_reference)
{
    rl_backend *be = gpu_or_skip();
    check_table(be);
    rl_backend_close(be);
}
