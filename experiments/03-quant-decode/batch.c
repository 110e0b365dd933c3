/*
 * batch.c -- experiment 03's batch part: between decode (one token) and
 * prefill, the same model's step at M tokens, F16 and every format, all
 * in one group (timed round by round together, F16 at the same M the
 * unit of every ratio).
 *
 * While both are memory-bound, a step reads its weights once whatever M
 * is, and a quantized format is faster than F16 by its bytes' ratio r.
 * Its arithmetic grows with M: F16 turns compute-bound at M = ridge (its
 * arithmetic intensity is about M FLOP/B), the quantized kernel r times
 * sooner, so the speedup falls from r towards 1 between M = ridge / r and
 * M = ridge. The first model, speedup(M) = max(1, min(r, ridge / M)), is
 * Marlin's curve on a GPU (4-bit over FP16: ~3.9x up to 16-32 tokens,
 * 1.5x at 128); on a CPU, whose ridge is a few FLOP/B, the bend comes at
 * 2-4 tokens. See README.md, "The batch part".
 */
#include "exp03.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* The tokens of a step: powers of two from one (the decode) up. A GPU's
 * ridge is hundreds of FLOP/B: its bend comes at tens of tokens, and the
 * lab sweep goes to 128, as Marlin's figures do. A CPU's is a few: the
 * speedup is near its floor by 4-8 tokens, where its lab sweep stops
 * (a step of 16 tokens and more through the DRAM-sized model takes a
 * 2-core CPU a large part of a second; a full run takes them). */
static const rl_axis GPU_BATCH_M = RL_AXIS("m", RL_LIST(1, 16, 128),
                                           RL_LIST(1, 2, 4, 8, 16, 32, 64, 128),
                                           RL_LIST(1, 2, 4, 8, 16, 32, 64, 128, 256));
static const rl_axis BATCH_M = RL_AXIS("m", RL_LIST(1, 2, 4), RL_LIST(1, 2, 4, 8),
                                       RL_LIST(1, 2, 4, 8, 16, 32, 64, 128), .gpu = &GPU_BATCH_M);
/* Every format in a full run and on a GPU; a CPU's lab and quick runs
 * take the verdicts' two, F16 and q4, so that the part costs a lab run
 * of experiment 03 seconds, not a minute. */
static const rl_axis GPU_BATCH_FORMAT = RL_AXIS(
    "format", RL_LIST(QF_F16, QF_Q8, QF_Q4), RL_LIST(QF_F16, QF_Q8, QF_Q6, QF_Q5, QF_Q4, QF_Q2),
    RL_LIST(QF_F16, QF_Q8, QF_Q6, QF_Q5, QF_Q4, QF_Q2));
static const rl_axis BATCH_FORMAT = RL_AXIS(
    "format", RL_LIST(QF_F16, QF_Q4), RL_LIST(QF_F16, QF_Q4),
    RL_LIST(QF_F16, QF_Q8, QF_Q6, QF_Q5, QF_Q4, QF_Q2), .gpu = &GPU_BATCH_FORMAT);
/* The paths through a step: the batch kernel (gemm_int8 on the CPU,
 * gemm_mma on the GPU) and the library's (the prefill variant at M tokens:
 * dequantize, then cuBLAS's FP16 GEMM or OpenBLAS's SGEMM; F16 straight to
 * cuBLAS). On the GPU every run takes both, and the F16 each ratio is
 * over is the faster of the two, cuBLAS's GEMM at most M, as in Marlin's
 * figures. On the CPU only a full run takes the library's, for the chart:
 * a pass of the model's weights to FP32 per step, slower than the F16
 * GEMV at these M. */
enum { PATH_KERNEL, PATH_LIBRARY };
static const rl_axis GPU_BATCH_PATH = RL_AXIS("path", RL_LIST(PATH_KERNEL, PATH_LIBRARY),
                                              RL_LIST(PATH_KERNEL, PATH_LIBRARY),
                                              RL_LIST(PATH_KERNEL, PATH_LIBRARY));
static const rl_axis BATCH_PATH = RL_AXIS("path", RL_LIST(PATH_KERNEL), RL_LIST(PATH_KERNEL),
                                          RL_LIST(PATH_KERNEL, PATH_LIBRARY),
                                          .gpu = &GPU_BATCH_PATH);
static const rl_axis *const AXES[] = {&BATCH_PATH, &BATCH_M, &BATCH_FORMAT, NULL};

/* The speedup counted as fallen: below this fraction of the bytes' ratio. */
static const double BEND_FRACTION = 0.75;

/* One group for the whole part: every M and format timed round by
 * round together (a group per M would time its probes beside each), each
 * ratio over the F16 of the same M (exp03_f16_of). */
typedef struct batch_points {
    model *m;
    const quant_variant *kernel, *library; /* library: NULL where it does not run */
    int group;
} batch_points;

/* The batch kernel of this backend, where it runs (and --variant keeps it). */
static const quant_variant *batch_kernel(rl_ctx *ctx)
{
    const kernel_variant *v = rl_variant_by_role(ctx, &quant_family, "batch_int8");
    if (!v)
        v = rl_variant_by_role(ctx, &quant_family, "batch_mma");
    return (const quant_variant *)v;
}

/* The step of format f at `tokens` through v, in group. */
static void add_batch_point(rl_ctx *ctx, model *m, const quant_variant *v, quant_format f,
                            int tokens, int group, bool optional)
{
    step *s = exp03_batch_step_new(ctx, m, v, f, tokens);
    bool library = v->phase == QUANT_PREFILL;
    size_t check_rows = (size_t)m->check[0].rows + m->check[1].rows;
    rl_point_add(ctx, &(rl_point){
        .variant = KERNEL_VARIANT(v), .group = group, .run = exp03_run_step, .arg = s,
        RL_POINT_DATA(s), .prepare = exp03_bind_check, .check_run = exp03_run_check,
        .check_arg = s, .count = check_rows * (size_t)tokens,
        .bytes = s->size_bytes, .footprint = s->size_bytes, .pattern = RL_READ,
        .flops = 2.0 * m->params * tokens, .integer_flops = v->quantizes_x && f != QF_F16,
        /* the library's pass over the weights before its GEMM (a model) */
        .extra_s = library ? exp03_model_pass_s(ctx, m, f) : 0, .optional = optional});
}

static void batch_point(rl_ctx *ctx, const rl_at *at, void *state)
{
    const batch_points *bp = state;
    quant_format f = (quant_format)rl_at_int(at, &BATCH_FORMAT);
    bool library = rl_at_int(at, &BATCH_PATH) == PATH_LIBRARY;
    const quant_variant *v = library ? bp->library : bp->kernel;
    if (!v)
        return;
    /* The verdicts read q4 and its F16: the GPU's F16 unit is cuBLAS's
     * (the library path), the CPU's the batch GEMV. The other formats'
     * curves and paths are the chart's, the first to go under a tight
     * --budget. */
    bool needed = f == QF_Q4 ? !library : f == QF_F16 ? library == (ctx->kind == RL_CUDA) : false;
    add_batch_point(ctx, bp->m, v, f, rl_at_int(at, &BATCH_M), bp->group, !needed);
}

int exp03_batch_most_tokens(rl_ctx *ctx)
{
    return batch_kernel(ctx) ? (int)rl_axis_last(ctx, &BATCH_M) : 0;
}

void exp03_batch_declare(rl_ctx *ctx, model *m)
{
    const quant_variant *v = batch_kernel(ctx);
    if (!v || m->one_matrix)
        return;
    batch_points bp = {m, v, (const quant_variant *)rl_variant_by_role(ctx, &quant_family, "prefill"),
                       rl_group_new(ctx)};
    rl_sweep_declare(ctx, &(rl_sweep){AXES, .points = batch_point, .state = &bp});
}

bool exp03_batch_declare_matrix(rl_ctx *ctx, model *m, const int *tokens, int n)
{
    const quant_variant *v = batch_kernel(ctx);
    if (!v)
        return false;
    for (quant_format f = 0; f < QF_COUNT; f++) {
        int group = rl_group_new(ctx);
        for (int i = 0; i < n; i++)
            add_batch_point(ctx, m, v, f, tokens[i], group, false);
    }
    return true;
}

int exp03_batch_tokens_parse(const char *list, int tokens[EXP03_MOST_TOKEN_COUNTS])
{
    int n = 0;
    for (const char *at = list; *at;) {
        char *end;
        long t = strtol(at, &end, 10);
        if (end == at || (*end && *end != ',') || t < 1 || t > EXP03_MOST_TOKENS ||
            (n && t <= tokens[n - 1]) || n == EXP03_MOST_TOKEN_COUNTS)
            return -1;
        tokens[n++] = (int)t;
        at = *end ? end + 1 : end;
    }
    return n;
}

/* ---- the model and the judgement ----------------------------------------------------- */

static double bytes_ratio(quant_format f)
{
    return quant_formats[QF_F16].block_bytes / (double)quant_formats[f].block_bytes;
}

double exp03_batch_model_speedup(rl_ctx *ctx, quant_format f, int tokens)
{
    double r = bytes_ratio(f), ridge = rl_ridge(ctx);
    return fmax(1, fmin(r, ridge / tokens));
}

/* The batch point of format f at `tokens`, and its speedup over the F16
 * timed with it (NULL, NaN where either is missing). */
typedef struct at_tokens { quant_format f; int tokens; } at_tokens;

static bool is_batch_at(const rl_point *p, const void *key)
{
    const step *s = RL_DATA(step, p);
    const at_tokens *k = key;
    return s->part == QUANT_BATCH && s->f == k->f && s->tokens == k->tokens;
}

/* The best of the paths: F16's fastest, a format's highest ratio over it. */
static const rl_point *batch_at(const rl_points *all, quant_format f, int tokens)
{
    at_tokens key = {f, tokens};
    return f == QF_F16 ? rl_points_fastest(all, NULL, is_batch_at, &key)
                       : rl_points_best(all, NULL, is_batch_at, &key, exp03_vs_f16);
}

double exp03_col_batch_model(rl_ctx *ctx, const rl_point *p)
{
    const step *s = RL_DATA(step, p);
    return s->part == QUANT_BATCH ? exp03_batch_model_speedup(ctx, s->f, s->tokens) : NAN;
}

/* The first M of the axis whose speedup is below BEND_FRACTION of the
 * bytes' ratio (0: none), measured or by the model. */
static int first_fallen(rl_ctx *ctx, const rl_points *all, quant_format f, bool model)
{
    rl_steps ms = rl_axis_values(ctx, &BATCH_M);
    double bar = BEND_FRACTION * bytes_ratio(f);
    for (int i = 0; i < ms.n; i++) {
        int t = (int)ms.v[i];
        double s = model ? exp03_batch_model_speedup(ctx, f, t) : exp03_vs_f16(batch_at(all, f, t));
        if (!model && isnan(s))
            return -1; /* a point missing: the bend is not known */
        if (s < bar)
            return t;
    }
    return 0;
}

/* Where the measured bend may lie, given each speedup's spread (its
 * rounds' q1-q3: F16 and the format share a group): the first M whose
 * speedup could be below the bar (its low end is) and the first whose
 * speedup surely is (its high end is); INFINITY where none is within the
 * sweep. */
static void fallen_range(rl_ctx *ctx, const rl_points *all, quant_format f, double *earliest,
                         double *surely)
{
    rl_steps ms = rl_axis_values(ctx, &BATCH_M);
    double bar = BEND_FRACTION * bytes_ratio(f);
    *earliest = *surely = INFINITY;
    for (int i = ms.n - 1; i >= 0; i--) {
        const rl_point *p = batch_at(all, f, (int)ms.v[i]);
        rl_ratio r = rl_time_ratio(exp03_f16_of(p), p);
        if (fmin(r.lo, r.hi) < bar)
            *earliest = ms.v[i];
        if (fmax(r.lo, r.hi) < bar)
            *surely = ms.v[i];
    }
}

/* Where no batch kernel runs (--variant without it), the verdicts say so:
 * true when they were judged so. */
static bool no_batch_kernel(rl_ctx *ctx, const rl_claim *claim)
{
    if (batch_kernel(ctx))
        return false;
    rl_judge(ctx, claim, NULL, NAN, ctx->kind == RL_CUDA
                 ? "the batch variant (gemm_mma) was not selected"
                 : "the batch variant (gemm_int8) was not selected");
    return true;
}

/* The speedup at the smallest M past one token: near the bytes' ratio
 * where both steps still read their memory roof (the decode claim's
 * premise, and its bound). */
void exp03_batch_judge_small(rl_ctx *ctx, const rl_points *all, const rl_claim *claim)
{
    if (no_batch_kernel(ctx, claim))
        return;
    rl_steps ms = rl_axis_values(ctx, &BATCH_M);
    int tokens = ms.n > 1 ? (int)ms.v[1] : 0;
    const rl_point *q4 = tokens ? batch_at(all, QF_Q4, tokens) : NULL;
    const rl_point *f16 = exp03_f16_of(q4);
    char note[400];
    snprintf(note, sizeof note, "M = %d tokens, the smallest past one; the bytes' ratio %.2fx; the "
             "model's speedup there %.2fx (ridge %.1f FLOP/B)", tokens, bytes_ratio(QF_Q4),
             tokens ? exp03_batch_model_speedup(ctx, QF_Q4, tokens) : NAN, rl_ridge(ctx));
    rl_premise pr = rl_premise_start();
    rl_premise_memory_bound(ctx, &pr, claim, f16, "the F16 step");
    rl_premise_memory_bound_to_fail(ctx, &pr, claim, q4, "the q4 step");
    rl_premise_within_bytes(&pr, f16, q4, "q4 over F16");
    rl_judge_ratio_given(ctx, claim, NULL, q4 && f16 ? rl_time_ratio(f16, q4) : RL_RATIO_NONE, &pr,
                         note);
}

/* The bend is read from a start that tracks the bytes: at M = 1, before
 * any batch, q4's speedup reaches the bar. Both steps may pass the
 * memory-bound premise (each at 0.7 of its roof or more) and still be
 * below it, q4 at 0.7 and F16 at 0.95 (2.67x of the bytes' 3.56x is the
 * bar): then a "does not hold" at M = 1 would be the kernels' shares of
 * their roofs, not the batch's arithmetic, and is not judged (the README,
 * "The verdicts"). */
static void start_tracks_bytes(rl_ctx *ctx, rl_premise *pr, const rl_point *q4)
{
    const rl_point *f16 = exp03_f16_of(q4);
    char then[256];
    snprintf(then, sizeof then, "q4's speedup is under the bar before any batch (MBU %.2f against "
             "F16's %.2f), so a bend there is the kernels', not the batch's arithmetic",
             q4 ? rl_point_mbu(ctx, q4) : NAN, f16 ? rl_point_mbu(ctx, f16) : NAN);
    rl_premise_times_alike_to_fail(pr, f16, "the F16 step at M = 1", q4, "the q4 step",
                                   BEND_FRACTION * bytes_ratio(QF_Q4), then);
}

/* Where the speedup falls: the measured M over the model's, each the
 * first M of the axis below BEND_FRACTION of the bytes' ratio; within a
 * factor of 2 is one step of the axis either way. */
void exp03_batch_judge_bend(rl_ctx *ctx, const rl_points *all, const rl_claim *claim)
{
    if (no_batch_kernel(ctx, claim))
        return;
    int measured = first_fallen(ctx, all, QF_Q4, false);
    int model = first_fallen(ctx, all, QF_Q4, true);
    char note[400];
    snprintf(note, sizeof note,
             "q4's speedup first below %.2f x the bytes' ratio (%.2fx) at M = %d "
             "measured, M = %d by the model max(1, min(r, ridge / M)) with the measured ridge %.1f "
             "FLOP/B (0: not within the sweep)", BEND_FRACTION, BEND_FRACTION * bytes_ratio(QF_Q4),
             measured, model, rl_ridge(ctx));
    double earliest, surely;
    fallen_range(ctx, all, QF_Q4, &earliest, &surely);
    /* on the bend's range: one the noise moves by a step of M is "not measured" */
    rl_ratio value = measured > 0 && model > 0
                         ? (rl_ratio){(double)measured / model, earliest / model, surely / model}
                         : RL_RATIO_NONE;
    /* for the chart's marks: the measured bend, then the model's (0: none) */
    rl_meta(ctx, "batch_bend_m", "%d %d", measured, model);
    rl_premise pr = rl_premise_start();
    const rl_point *q4 = batch_at(all, QF_Q4, 1);
    rl_premise_memory_bound(ctx, &pr, claim, exp03_f16_of(q4), "the F16 step at M = 1");
    rl_premise_memory_bound(ctx, &pr, claim, q4, "the q4 step at M = 1");
    start_tracks_bytes(ctx, &pr, q4);
    rl_judge_ratio_given(ctx, claim, NULL, value, &pr, note);
}
