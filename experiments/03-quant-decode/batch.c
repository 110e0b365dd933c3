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
static const rl_axis *const AXES[] = {&BATCH_M, &BATCH_FORMAT, NULL};

/* The speedup counted as fallen: below this fraction of the bytes' ratio. */
static const double BEND_FRACTION = 0.75;

/* One group for the whole part: every M and format timed round by
 * round together (a group per M would time its probes beside each), each
 * ratio over the F16 of the same M (exp03_f16_of). */
typedef struct batch_points {
    model *m;
    const quant_variant *v;
    int group;
} batch_points;

static void batch_point(rl_ctx *ctx, const rl_at *at, void *state)
{
    const batch_points *bp = state;
    int tokens = rl_at_int(at, &BATCH_M);
    quant_format f = (quant_format)rl_at_int(at, &BATCH_FORMAT);
    step *s = exp03_step_new(ctx, bp->m, bp->v, f, tokens);
    size_t check_rows = (size_t)bp->m->check[0].rows + bp->m->check[1].rows;
    rl_point_add(ctx, &(rl_point){
        .variant = KERNEL_VARIANT(bp->v), .group = bp->group, .run = exp03_run_step, .arg = s,
        RL_POINT_DATA(s), .prepare = exp03_bind_check, .check_run = exp03_run_check,
        .check_arg = s, .count = check_rows * (size_t)tokens,
        .bytes = s->size_bytes, .footprint = s->size_bytes, .pattern = RL_READ,
        .flops = 2.0 * bp->m->params * tokens,
        /* the verdicts read q4 and its F16; the other formats' curves are
         * the chart's, and the first to go under a tight --budget */
        .optional = f != QF_F16 && f != QF_Q4});
}

int exp03_batch_most_tokens(rl_ctx *ctx)
{
    bool runs = rl_variant_by_role(ctx, &quant_family, "batch_int8") != NULL;
    return runs ? (int)rl_axis_last(ctx, &BATCH_M) : 0;
}

void exp03_batch_declare(rl_ctx *ctx, model *m)
{
    const kernel_variant *v = rl_variant_by_role(ctx, &quant_family, "batch_int8");
    if (!v || m->one_matrix)
        return;
    batch_points bp = {m, (const quant_variant *)v, rl_group_new(ctx)};
    rl_sweep_declare(ctx, &(rl_sweep){AXES, .points = batch_point, .state = &bp});
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
    return s->v->phase == QUANT_BATCH && s->f == k->f && s->tokens == k->tokens;
}

static const rl_point *batch_at(const rl_points *all, quant_format f, int tokens)
{
    return rl_points_find(all, NULL, is_batch_at, &(at_tokens){f, tokens});
}

double exp03_col_batch_model(rl_ctx *ctx, const rl_point *p)
{
    const step *s = RL_DATA(step, p);
    return s->v->phase == QUANT_BATCH ? exp03_batch_model_speedup(ctx, s->f, s->tokens) : NAN;
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

/* Where no batch kernel runs (a GPU, until one is written; --variant
 * without it), the verdicts say so: true when they were judged so. */
static bool no_batch_kernel(rl_ctx *ctx, const rl_claim *claim)
{
    if (rl_variant_by_role(ctx, &quant_family, "batch_int8"))
        return false;
    rl_judge(ctx, claim, NULL, NAN, ctx->kind == RL_CUDA
                 ? "no batch kernel on the GPU yet (kernels/quant.c: gemm_int8 is the CPU's)"
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
    double value = measured > 0 && model > 0 ? (double)measured / model : NAN;
    rl_premise pr = rl_premise_start();
    const rl_point *q4 = batch_at(all, QF_Q4, 1);
    rl_premise_memory_bound(ctx, &pr, claim, exp03_f16_of(q4), "the F16 step at M = 1");
    rl_premise_memory_bound(ctx, &pr, claim, q4, "the q4 step at M = 1");
    rl_judge_given(ctx, claim, NULL, value, &pr, note);
}
