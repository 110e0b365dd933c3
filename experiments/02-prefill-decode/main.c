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
 *
 * The file reads top to bottom: the claims, the axes (shapes and token
 * counts), a point (one call of one variant at one n), the verdicts (each
 * shape's, judge.c), then the columns and the experiment that names them
 * all. exp02.h is what the two files share.
 */
#include "exp02.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- the claims ------------------------------------------------------------------ */

/* On the GPU the ranges are the claim's. On the CPU the same claims are
 * judged against the CPU's own ceilings: its ridge point R (compute roof
 * over DRAM read bandwidth: a few FLOP/B on a two-core server slice, near
 * 200 on a data-centre GPU) decides which n is still "nearly free" and
 * which is compute-bound. README.md, "Tolerances", derives each rule. */
const rl_claim EXP02_CLAIMS[] = {
    [AI_DECODE] = {"ai_decode", "arithmetic intensity at n = 1 (counted)", 0.9, 1.1, "FLOP/B", 3,
                   .predicted_text = "~1 FLOP/B", .counted = true},
    /* judged where the GEMV reads at least 0.7 of its group's roof: below,
     * its instructions, not the bytes, set its time (README, Tolerances) */
    [MBU_DECODE] = {"mbu_decode", "MBU at n = 1 (gemv_fp16)", 0.8, INFINITY, "", 2, .on_ceiling = true,
                    .premise_mbu = 0.7},
    [MFU_DECODE_GPU] = {"mfu_decode", "MFU at n = 1 (gemv_fp16)", 0, 5, "%", 2, .on_ceiling = true},
    /* the CPU's bound is a quarter of its own compute-bound MFU: set at run
     * time; judged where the GEMV is memory-bound, as the MBU claim, and
     * where the ridge at its roof leaves room under the bound (README,
     * Tolerances) */
    [MFU_DECODE_CPU] = {"mfu_decode", "MFU at n = 1, vs MFU when compute-bound", 0, NAN, "%", 1,
                        .on_ceiling = true, .predicted_text = "< 1/4 of the compute-bound MFU",
                        .premise_mbu = 0.7},
    [MFU_PREFILL] = {"mfu_prefill", "MFU when compute-bound", 50, INFINITY, "%", 1, .on_ceiling = true},
    /* judged where the step at n = 1 reads at least 1 / 1.25 of its
     * roof, the claim's own band (a slower one could make it hold for
     * its instructions' sake), and failed only where the step at the free
     * batch does too (a slower one can only fail it); the note names the
     * bound a step hit instead (README, Tolerances) */
    [BATCHING_FREE] = {"batching_free", "time per step, free batch over n = 1", 0, 1.25, "x", 2,
                       .premise_mbu = 0.8},
    {0},
};

/* ---- the axes --------------------------------------------------------------------- */

static const shape SHAPES[] = {{"4096x14336", 4096, 14336}, {"8192x8192", 8192, 8192}};

/* The layers, as indices into SHAPES; --shape picks one or all. */
static const rl_axis SHAPE = RL_AXIS("shape", RL_LIST(0, 1), RL_LIST(0, 1), RL_LIST(0, 1));

static const char *shape_choice = "all";

static const rl_option OPTIONS[] = {
    {"shape", "SHAPE", "the layer, inputs x outputs: 4096x14336 (Llama 3 8B's MLP up-projection), "
     "8192x8192, or all", "4096x14336|8192x8192|all", &shape_choice},
    {0},
};

/* The measured ridge, FLOP/B, once declare has it (NaN before): it
 * places the top of the CPU's token counts (tokens_top). */
static double tokens_ridge = NAN;

/* The sweep reaches twice the CPU's compute-bound AI (EXP02_COMPUTE_BOUND_RIDGES
 * ridges), so that the two largest counts both pass it (AI(n / 2) >= AI(n)
 * / 2) and no measured ridge leaves the largest point a hair either side
 * of it. */
static const double TOP_RIDGES = 2 * EXP02_COMPUTE_BOUND_RIDGES;
/* The CPU sweep's top stays within these counts: the old fixed top, so
 * that a small ridge keeps the curves as they were, and a cap, so that a
 * ridge past a layer's reach (its AI tends to 2 rows k / (2 k + 4 rows))
 * does not run GEMMs of many seconds for nothing. */
enum { TOP_LEAST = 512, TOP_MOST = 4096 };

/* The working set of a point at n tokens without the weights' other
 * copies: one copy, the tokens, the outputs and the largest scratch of a
 * variant that takes n. */
static double one_copy_bytes(const shape *s, int n)
{
    double scratch = 0;
    for (const gemv_variant *v = gemv_variants; v->name; v++)
        if (gemv_takes(v, n))
            scratch = fmax(scratch, (double)gemv_scratch_bytes(v, KERNEL_CPU, s->rows, s->k, n));
    return gemv_bytes(s->rows, s->k, n) + scratch;
}

/* The token count the CPU sweep ends at: the smallest power of two whose
 * AI reaches TOP_RIDGES x the measured ridge on every layer the run
 * times, within --max-bytes (never under TOP_LEAST, the old top, which
 * ran whatever --max-bytes said), between TOP_LEAST and TOP_MOST. The
 * GPU's counts are its own (its rule is n >= 2048, fixed). */
static double tokens_top(const rl_ctx *ctx)
{
    if (ctx->kind == RL_CUDA)
        return INFINITY;
    if (!(tokens_ridge > 0))
        return TOP_LEAST; /* before the ridge is known: the sweep as it was */
    int top = TOP_LEAST;
    for (size_t i = 0; i < sizeof SHAPES / sizeof SHAPES[0]; i++) {
        const shape *s = &SHAPES[i];
        if (!rl_option_is(shape_choice, s->name))
            continue;
        int n = TOP_LEAST;
        while (n < TOP_MOST && exp02_ai_at(s, n) < TOP_RIDGES * tokens_ridge &&
               one_copy_bytes(s, 2 * n) <= rl_max_bytes(ctx))
            n *= 2;
        top = n > top ? n : top;
    }
    return top;
}

/* Token counts: powers of two in a full run, fewer on the CPU (a 14336 x
 * 4096 x 2048 SGEMM takes seconds there); a lab run keeps every point a
 * verdict needs and enough between them to draw the curves; a quick run
 * only what the verdicts need. The CPU's lab and full runs end at
 * tokens_top, placed from the measured ridge, and double up to it from
 * 128, so that the count before the top has at least half its AI: with
 * the top at 64 R, the two largest are both compute-bound (32 R). A lab
 * list that went from 128 to 512 left one such point where the top was
 * 512, and mfu_prefill unjudged (a 2-core Zen 3 VM, R = 3.9). */
static const rl_axis GPU_TOKENS =
    RL_AXIS("n", RL_LIST(1, 2, 4, 8, 64, 512, 2048, 8192),
            RL_LIST(1, 2, 4, 8, 32, 128, 512, 2048, 8192),
            RL_LIST(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192));
const rl_axis EXP02_TOKENS =
    RL_AXIS("n", RL_LIST(1, 2, 8, 128), RL_LIST(1, 2, 4, 8, 32, 128, 256, 512, 1024, 2048, 4096),
            RL_LIST(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096), .gpu = &GPU_TOKENS,
            .top = tokens_top);

static const rl_axis *const AXES[] = {&SHAPE, &EXP02_TOKENS, NULL};

static const shape *shape_at(const rl_at *at) { return &SHAPES[rl_at_int(at, &SHAPE)]; }

/* ---- a point: one call of a variant at n tokens ---------------------------------- */

/* The timed work is the experiment's own, not one kernel call: each call
 * reads the next copy of the weights, so that they come from where they
 * live and not from the cache the last call left them in. */
static void run_rotating(void *arg)
{
    exp02_call *c = arg;
    c->kernel.args.w = c->W->w + (size_t)c->next * c->rows * c->k;
    c->next = (c->next + 1) % c->copies;
    gemv_call_run(&c->kernel);
}

/* Both calls on the shape's buffers: the timed one on every row, the
 * check on the first validated_rows rows (all of them while the host's
 * reference is cheap) of the first copy. */
static void prepare(rl_ctx *ctx, rl_point *p)
{
    exp02_call *c = RL_DATA_MUT(exp02_call, p);
    rl_weights_bind(ctx, c->W, p, &c->kernel, &c->check, c->n, c->validated_rows);
}

/* A shape --shape leaves out has no points, and no part. */
static bool shape_not_chosen(const rl_ctx *ctx, const rl_at *at, void *state)
{
    (void)ctx;
    (void)state;
    return !rl_option_is(shape_choice, shape_at(at)->name);
}

/* A shape is a part, its weights made when it opens: every row drawn,
 * copies spanning 4x the last-level cache. Its GEMV points (n <= 8) share
 * one group. On the CPU the FP16 GEMV's rows per step are tuned for the
 * shape's row length on this machine, and set when the part opens. */
static void shape_part(rl_ctx *ctx, const rl_at *at, rl_part *part, void *state)
{
    (void)state;
    const shape *s = shape_at(at);
    rl_weights W = {.rows = s->rows, .k = s->k, .drawn_rows = s->rows,
                    .copies = rl_copies_beyond_cache(ctx, 2.0 * s->rows * s->k),
                    .group = rl_group_new(ctx), .gemv_shape = rl_tune_f16_dram(ctx, s->k)};
    *part = rl_weights_part(ctx, &W);
}

/* Whether a verdict reads the points at n tokens (else they draw the
 * curves, and a run under --budget measures them as time allows): the
 * quick run's counts, which are the verdicts', and the two largest, the
 * most compute-bound (the prefill verdict reads two). */
static bool verdicts_read(const rl_ctx *ctx, const rl_at *at)
{
    rl_ctx quick = *ctx;
    quick.args.mode = RL_MODE_QUICK;
    rl_steps all = rl_axis_values(ctx, &EXP02_TOKENS);
    double n = rl_at_value(at, &EXP02_TOKENS);
    return rl_axis_has(&quick, &EXP02_TOKENS, n) || n >= all.v[all.n > 1 ? all.n - 2 : 0];
}

static void add_call(rl_ctx *ctx, const rl_at *at, const gemv_variant *v, int group)
{
    const shape *s = shape_at(at);
    rl_weights *W = at->part_state;
    int n = rl_at_int(at, &EXP02_TOKENS);
    exp02_call *c = RL_NEW(ctx, exp02_call);
    *c = (exp02_call){s->name, s->k, s->rows, n, W->copies, gemv_validation_rows(s->rows, s->k, n), W,
                      .kernel.launch = RL_LAUNCHER(ctx, v), .check.launch = RL_LAUNCHER(ctx, v)};
    rl_weights_fit(ctx, W, v, n, c->validated_rows);
    /* the working set: the bytes moved, and the other copies of the weights */
    rl_point_add(ctx, &(rl_point){
        .variant = KERNEL_VARIANT(v), .group = group, .run = run_rotating, .arg = c,
        RL_POINT_DATA(c), .check_call = gemv_kernel_call(&c->check), .prepare = prepare,
        .count = (size_t)c->validated_rows * n, .atol = gemv_atol(s->k),
        .flops = gemv_flops(s->rows, s->k, n), .bytes = gemv_bytes(s->rows, s->k, n),
        .footprint = gemv_bytes(s->rows, s->k, n) + 2.0 * s->rows * s->k * (W->copies - 1),
        .pattern = RL_READ, .optional = !verdicts_read(ctx, at)});
}

/* Every variant that takes n tokens: the GEMV points (n <= 8) in the
 * shape's group, each larger n a group of its own. */
static void token_points(rl_ctx *ctx, const rl_at *at, void *state)
{
    (void)state;
    rl_weights *W = at->part_state;
    int n = rl_at_int(at, &EXP02_TOKENS);
    int group = n <= GEMV_MAX_BATCH ? W->group : rl_group_new(ctx);
    for (const gemv_variant *v = gemv_variants; v->name; v++)
        if (rl_runs(ctx, &gemv_family, KERNEL_VARIANT(v)) && gemv_takes(v, n))
            add_call(ctx, at, v, group);
}

static void describe(rl_ctx *ctx)
{
    char tokens[160];
    rl_axis_list(ctx, &EXP02_TOKENS, tokens, sizeof tokens);
    rl_meta(ctx, "shapes", "%s (inputs x outputs; FP16 weights and tokens, FP32 outputs)", shape_choice);
    rl_meta(ctx, "tokens", "n = %s", tokens);
    rl_meta(ctx, "bytes_model", "2 rows k (weights) + 2 k n (tokens in) + 4 rows n (out): each once");
    rl_meta(ctx, "validation", "every element vs a double-precision reference, atol k * 2^-20; every "
            "row while rows k n <= 2^29, else the first rows (>= 64) within 2^28 multiply-adds");
    rl_meta(ctx, "ridge_flop_per_byte", "%.1f (measured ceilings: compute roof / DRAM read)",
            rl_ridge(ctx));
    /* The compute roof's two sources, for the roofline's band: the library
     * GEMM (what a library reaches) and, on the CPU, the FMA microbenchmark
     * (the cores' peak); ceiling_tflops is the larger. */
    const rl_ceilings *c = rl_ceilings_get(ctx);
    if (!isnan(c->gemm_tflops))
        rl_meta(ctx, "roof_compute_gemm_tflops", "%.6g", c->gemm_tflops);
    if (!isnan(c->fma_tflops))
        rl_meta(ctx, "roof_compute_fma_tflops", "%.6g", c->fma_tflops);
}

static void declare(rl_ctx *ctx)
{
    tokens_ridge = rl_ridge(ctx); /* before the token counts are read */
    describe(ctx);
    rl_sweep_declare(ctx, &(rl_sweep){AXES, .part_axes = 1, .part = shape_part,
                                      .skip = shape_not_chosen, .points = token_points});
}

/* ---- the judgement ---------------------------------------------------------------- */

/* Each shape's verdicts (judge.c: the decode's intensity, MBU and MFU, the
 * prefill's MFU, free batching), in the order of the shapes. */
static void judge(rl_ctx *ctx, const rl_points *all)
{
    for (size_t i = 0; i < sizeof SHAPES / sizeof SHAPES[0]; i++)
        if (rl_option_is(shape_choice, SHAPES[i].name))
            exp02_judge_shape(ctx, all, &SHAPES[i]);
}

/* ---- the columns and the experiment ----------------------------------------------- */

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

int main(int argc, char **argv) { return rl_main(&EXP02, argc, argv); }
