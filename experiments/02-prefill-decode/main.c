/*
 * Experiment 02 -- prefill vs decode: arithmetic intensity, the roofline,
 * MFU vs MBU.
 *
 * One linear layer with a transformer's shape and FP16 weights, applied to
 * n tokens at once. At n = 1 (decode) each weight read from memory serves
 * one multiply-add: ~1 FLOP per byte, memory-bound, MBU near 1 and MFU a few
 * percent. As n grows (prefill, or batched decode) each weight serves n
 * tokens: time per step stays flat while the arithmetic hides under the
 * memory time, then the layer turns compute-bound and MFU climbs.
 *
 * Method: for each shape, every variant of kernels/gemv.c at every n is a
 * point: the harness validates it against a double-precision reference on
 * fresh random inputs, then times it, the call rotating through enough
 * copies of the weights that they never sit in the last-level cache. The
 * GEMV points (n <= 8) are timed as one group: the batching verdict
 * compares them. See README.md.
 */
#include "exp02.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *shape_choice = "all";

static const rl_option OPTIONS[] = {
    {"shape", "SHAPE", "the layer, inputs x outputs: 4096x14336 (Llama 3 8B's MLP up-projection), "
     "8192x8192, or all", "4096x14336|8192x8192|all", &shape_choice},
    {0},
};

static const shape SHAPES[] = {{"4096x14336", 4096, 14336}, {"8192x8192", 8192, 8192}};

/* ---- the columns ------------------------------------------------------------- */

static double col_per_token_us(rl_ctx *ctx, const rl_point *p)
{
    (void)ctx;
    return p->seconds / RL_DATA(exp02_call, p)->n * 1e6;
}

static double col_tokens_per_s(rl_ctx *ctx, const rl_point *p)
{
    (void)ctx;
    return RL_DATA(exp02_call, p)->n / p->seconds;
}

static const rl_column COLUMNS[] = {
    RL_TEXT("shape", NULL, NULL, exp02_call, shape),
    RL_INT("k", NULL, NULL, exp02_call, k),
    RL_INT("rows", NULL, NULL, exp02_call, rows),
    RL_INT("n", NULL, NULL, exp02_call, n),
    RL_COLUMN_VARIANT,
    RL_COLUMN_NUMBER,
    {"flops", NULL, NULL, .num = rl_col_flops},
    {"bytes", NULL, NULL, .num = rl_col_bytes},
    {"ai", NULL, NULL, .num = rl_col_ai},
    RL_INT("copies", NULL, NULL, exp02_call, copies),
    {"footprint_bytes", NULL, NULL, .num = rl_col_footprint},
    {"cache_resident", NULL, NULL, .num = rl_col_cache_resident},
    RL_INT("validated_rows", NULL, NULL, exp02_call, validated_rows),
    {0},
};

static const rl_column DERIVED[] = {
    {"attainable_tflops", NULL, NULL, .num = rl_col_attainable},
    {"time_per_token_us", NULL, NULL, .num = col_per_token_us},
    {"tokens_per_s", NULL, NULL, .num = col_tokens_per_s},
    {0},
};

static const rl_column TABLE[] = {
    RL_TEXT(NULL, "shape", "%-10s", exp02_call, shape),
    RL_INT(NULL, "n", "%5d", exp02_call, n),
    {NULL, "variant", "%-16s", .str = rl_col_variant},
    RL_COLUMN_TIME_US,
    RL_COLUMN_TFLOPS,
    RL_COLUMN_GBPS,
    {NULL, "AI", "%7.1f", .num = rl_col_ai},
    RL_COLUMN_MFU,
    RL_COLUMN_LEVEL,
    RL_COLUMN_MBU,
    {NULL, "tokens/s", "%11.0f", .num = col_tokens_per_s, .measured = true},
    {0},
};

static const kernel_family *const FAMILIES[] = {&gemv_family, NULL};

extern const rl_claim EXP02_CLAIMS[]; /* judge.c */

static void declare(rl_ctx *ctx);
static void judge(rl_ctx *ctx, const rl_points *all);

static const rl_experiment EXP02 = {
    .id = "02",
    .slug = "02-prefill-decode",
    .title = "Prefill vs decode: arithmetic intensity, the roofline, MFU vs MBU",
    .claim = "A linear layer applied to one token (decode, a GEMV) does ~1 FLOP per byte of "
             "weights: memory-bound, MBU near 1 and MFU a few percent. Applied to many tokens "
             "(prefill, a GEMM) it reuses each weight n times: time per step stays flat while "
             "batching is free, then the layer turns compute-bound and MFU climbs.",
    .source = "NVIDIA Deep Learning Performance Guide (GPU Performance Background; Matrix "
              "Multiplication: arithmetic intensity of linear layers); MBU as defined in "
              "Databricks, \"LLM Inference Performance Engineering: Best Practices\" (2023)",
    .prediction = "on a GPU the claim's numbers; on the CPU the same claims against the CPU's "
                  "own ridge (README)",
    .claims = EXP02_CLAIMS,
    .families = FAMILIES,
    .columns = COLUMNS,
    .rates = RL_RATES_BANDWIDTH | RL_RATES_COMPUTE,
    .probes = RL_PROBE_BANDWIDTH | RL_PROBE_COMPUTE,
    .derived = DERIVED,
    .table = TABLE,
    .options = OPTIONS,
    .default_cache = RL_HOT,
    .compare_keys = "shape,variant,n",
    .compare_value = "time_us_median",
    .declare = declare,
    .judge = judge,
};

/* ---- the sweep -------------------------------------------------------------- */

/* Token counts: powers of two in a full run, fewer on the CPU (a 14336 x
 * 4096 x 512 SGEMM is slow there); a lab run keeps every point
 * a verdict needs and enough between them to draw the curves; a quick run
 * only what the verdicts need. */
static const int GPU_FULL[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 0};
static const int GPU_LAB[] = {1, 2, 4, 8, 32, 128, 512, 2048, 8192, 0};
static const int GPU_QUICK[] = {1, 2, 4, 8, 64, 512, 2048, 0};
static const int CPU_FULL[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 0};
static const int CPU_LAB[] = {1, 2, 4, 8, 32, 128, 512, 0};
static const int CPU_QUICK[] = {1, 2, 8, 128, 0};

static const int *token_counts(const rl_ctx *ctx)
{
    return ctx->kind == RL_CUDA ? RL_BY_MODE(ctx, GPU_QUICK, GPU_LAB, GPU_FULL)
                                : RL_BY_MODE(ctx, CPU_QUICK, CPU_LAB, CPU_FULL);
}

/* Whether a verdict reads the points at n tokens (else they draw the
 * curves, and a run under --budget measures them as time allows): the
 * quick run's counts, which are the verdicts', and the largest, the most
 * compute-bound. */
static bool verdicts_read(const rl_ctx *ctx, const int *n)
{
    const int *quick = ctx->kind == RL_CUDA ? GPU_QUICK : CPU_QUICK;
    for (const int *q = quick; *q; q++)
        if (*q == *n)
            return true;
    return n[1] == 0;
}

/* ---- one shape: a part, its buffers made when it opens ----------------------------- */

typedef struct layer {
    const shape *s;
    int copies, nmax;      /* nmax: the most tokens of a point */
    size_t scratch_bytes;  /* the most scratch a point's variant asks for */
    fp16 *w, *x, *hw, *hx; /* device (copies of w), and host copies for the reference */
    float *y;
    void *scratch;
    double *ref;           /* the reference at ref_n tokens, which the variants at that n share */
    int ref_n;
} layer;

static void open_layer(rl_ctx *ctx, void *state)
{
    layer *L = state;
    const shape *s = L->s;
    size_t wn = (size_t)s->rows * s->k;
    L->hw = rl_host_random_f16(ctx, wn, -1, 1);
    L->hx = rl_host_random_f16(ctx, (size_t)L->nmax * s->k, -1, 1);
    L->w = rl_alloc(ctx->be, 2 * wn * L->copies);
    for (int c = 0; c < L->copies; c++)
        rl_upload(ctx->be, L->w + c * wn, L->hw, 2 * wn);
    L->x = rl_alloc_copy(ctx->be, L->hx, (size_t)L->nmax * s->k * 2);
    L->y = rl_alloc(ctx->be, (size_t)L->nmax * s->rows * 4);
    L->scratch = L->scratch_bytes ? rl_alloc(ctx->be, L->scratch_bytes) : NULL;
    L->ref = NULL;
    L->ref_n = 0;
}

static void close_layer(rl_ctx *ctx, const rl_points *pts, void *state)
{
    (void)pts;
    layer *L = state;
    rl_free(ctx->be, L->w);
    rl_free(ctx->be, L->x);
    rl_free(ctx->be, L->y);
    rl_free(ctx->be, L->scratch);
    rl_host_free(L->hw);
    rl_host_free(L->hx);
    rl_host_free(L->ref);
}

/* ---- a point: one call, and how it is validated --------------------------------- */

/* The timed work is the experiment's own, not one kernel call: each call
 * reads the next copy of the weights, so that they come from where they
 * live and not from the cache the last call left them in. */
static void run_rotating(void *arg)
{
    exp02_call *c = arg;
    c->kernel.args.w = c->L->w + (size_t)c->next * c->rows * c->k;
    c->next = (c->next + 1) % c->copies;
    gemv_call_run(&c->kernel);
}

/* Binds both calls to the shape's buffers: the timed one on every row,
 * the check on the first validated_rows rows (all of them while the
 * host's reference is cheap) of the first copy. The variants at one n
 * share its reference: computed for the first. */
static void prepare(rl_ctx *ctx, rl_point *p)
{
    exp02_call *c = RL_DATA_MUT(exp02_call, p);
    layer *L = c->L;
    c->kernel.args = (gemv_args){L->y, L->w, L->x, c->rows, c->k, c->n, L->scratch,
                                 rl_stream(ctx->be)};
    c->check.args = c->kernel.args;
    c->check.args.rows = c->validated_rows;
    if (L->ref_n != c->n) {
        rl_host_free(L->ref);
        L->ref = rl_host_alloc(sizeof(double) * (size_t)c->validated_rows * c->n);
        gemv_reference(L->ref, L->hw, L->hx, c->validated_rows, c->k, c->n);
        L->ref_n = c->n;
    }
    p->out = L->y;
    p->want = L->ref;
}

/* Every variant at every n: the GEMV points (n <= 8) as one group, each
 * larger n a group of its own. The working set: the bytes moved, and the
 * other copies of the weights. The part's buffers are sized for its
 * points: the most tokens, the most scratch. */
static void declare_shape(rl_ctx *ctx, const shape *s)
{
    layer *L = RL_NEW(ctx, layer);
    *L = (layer){.s = s, .copies = rl_copies_beyond_cache(ctx, 2.0 * s->rows * s->k)};
    rl_part_add(ctx, &(rl_part){.open = open_layer, .done = close_layer, .state = L});
    int backend = rl_kernel_backend(ctx);
    int gemv_group = rl_group_new(ctx);
    for (const int *n = token_counts(ctx); *n; n++) {
        int group = *n <= GEMV_MAX_BATCH ? gemv_group : rl_group_new(ctx);
        for (const gemv_variant *v = gemv_variants; v->name; v++) {
            if (!rl_runs(ctx, &gemv_family, KERNEL_VARIANT(v)) || !gemv_takes(v, *n))
                continue;
            exp02_call *c = RL_NEW(ctx, exp02_call);
            *c = (exp02_call){s->name, s->k, s->rows, *n, L->copies,
                        gemv_validation_rows(s->rows, s->k, *n), L,
                        .kernel.launch = RL_LAUNCHER(ctx, v), .check.launch = RL_LAUNCHER(ctx, v)};
            size_t scratch = gemv_scratch_bytes(v, backend, s->rows, s->k, *n);
            L->scratch_bytes = scratch > L->scratch_bytes ? scratch : L->scratch_bytes;
            L->nmax = *n > L->nmax ? *n : L->nmax;
            rl_point_add(ctx, &(rl_point){
                .variant = KERNEL_VARIANT(v), .group = group, .run = run_rotating, .arg = c,
                RL_POINT_DATA(c), .check_call = gemv_kernel_call(&c->check), .prepare = prepare,
                .count = (size_t)c->validated_rows * *n, .atol = gemv_atol(s->k),
                .flops = gemv_flops(s->rows, s->k, *n), .bytes = gemv_bytes(s->rows, s->k, *n),
                .footprint = gemv_bytes(s->rows, s->k, *n) + 2.0 * s->rows * s->k * (L->copies - 1),
                .pattern = RL_READ, .optional = !verdicts_read(ctx, n)});
        }
    }
}

/* ---- declare and judge -------------------------------------------------------------- */

static void describe(rl_ctx *ctx)
{
    const int *ns = token_counts(ctx);
    char list[160] = "";
    for (int i = 0; ns[i]; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d", i ? " " : "", ns[i]);
    rl_meta(ctx, "shapes", "%s (inputs x outputs; FP16 weights and tokens, FP32 outputs)", shape_choice);
    rl_meta(ctx, "tokens", "n = %s", list);
    rl_meta(ctx, "bytes_model", "2 rows k (weights) + 2 k n (tokens in) + 4 rows n (out): each once");
    rl_meta(ctx, "validation", "every element vs a double-precision reference, atol k * 2^-20; every "
            "row while rows k n <= 2^29, else the first rows (>= 64) within 2^28 multiply-adds");
    rl_meta(ctx, "ridge_flop_per_byte", "%.1f (measured ceilings: compute roof / DRAM read)",
            exp02_measured_ridge(ctx));
    /* The compute roof's two sources, for the roofline's band: the library
     * GEMM (what a library reaches) and, on the CPU, the FMA microbenchmark
     * (the cores' peak); ceiling_tflops is the larger. */
    const rl_ceilings *c = rl_ceilings_get(ctx);
    if (!isnan(c->gemm_tflops))
        rl_meta(ctx, "roof_compute_gemm_tflops", "%.6g", c->gemm_tflops);
    if (!isnan(c->fma_tflops))
        rl_meta(ctx, "roof_compute_fma_tflops", "%.6g", c->fma_tflops);
}

/* Every shape --shape picks is a part. */
static void declare(rl_ctx *ctx)
{
    rl_tune_decode_cpu(ctx, false); /* the FP16 GEMV's rows per step, on this machine */
    describe(ctx);
    for (size_t i = 0; i < sizeof SHAPES / sizeof SHAPES[0]; i++)
        if (rl_option_is(shape_choice, SHAPES[i].name))
            declare_shape(ctx, &SHAPES[i]);
}

/* Each shape's verdicts, in the order of the shapes (judge.c). */
static void judge(rl_ctx *ctx, const rl_points *all)
{
    for (size_t i = 0; i < sizeof SHAPES / sizeof SHAPES[0]; i++)
        if (rl_option_is(shape_choice, SHAPES[i].name))
            exp02_judge_shape(ctx, all, &SHAPES[i]);
}

int main(int argc, char **argv) { return rl_main(&EXP02, argc, argv); }
