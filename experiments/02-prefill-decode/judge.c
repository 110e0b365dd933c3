/*
 * judge.c -- experiment 02's claims, and their verdicts per shape.
 *
 * On the GPU the ranges are the claim's. On the CPU the same claims are
 * judged against the CPU's own ceilings: its ridge point R (compute roof
 * over DRAM read bandwidth: a few FLOP/B on a two-core server slice, near
 * 200 on a data-centre GPU) decides which n is still "nearly free" and
 * which is compute-bound. README.md, "Tolerances", derives each rule.
 */
#include "exp02.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The CPU's compute-bound points: counted AI at least this many ridges. */
static const double COMPUTE_BOUND_RIDGES = 32;

enum { AI_DECODE, MBU_DECODE, MFU_DECODE_GPU, MFU_DECODE_CPU, MFU_PREFILL, BATCHING_FREE };

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
    [BATCHING_FREE] = {"batching_free", "time per step, free batch over n = 1", 0, 1.25, "x", 2},
    {0},
};

double exp02_measured_ridge(rl_ctx *ctx)
{
    const rl_ceilings *c = rl_ceilings_get(ctx);
    return rl_ridge_point(c->matrix_tflops * 1e12, c->bw[RL_DRAM][RL_READ].best * 1e9);
}

/* ---- the points a verdict looks at (all of one shape) ---------------------------- */

static bool of_shape(const rl_point *p, const shape *s)
{
    return !strcmp(RL_DATA(exp02_call, p)->shape, s->name);
}

/* The key of a lookup: a shape's points at n tokens. */
typedef struct at {
    const shape *s;
    int n;
} at;

static bool at_n(const rl_point *p, const void *key)
{
    const at *a = key;
    return of_shape(p, a->s) && RL_DATA(exp02_call, p)->n == a->n;
}

/* Additive model (compute and memory do not overlap at all, the worst
 * case): t(n) / t(1) = (1 + n / R) / (1 + 1 / R) for AI(1) = 1, within 1.25x
 * while n - 1 <= R / 4. The GPU's claim names n = 8 (R ~ 200: well inside).
 * The largest measured n the model calls free. */
static int free_batch_tokens(rl_ctx *ctx, const rl_points *all, const shape *s)
{
    if (ctx->kind == RL_CUDA)
        return 8;
    int best = 1;
    for (int i = 0; i < all->n; i++) {
        int n = RL_DATA(exp02_call, &all->v[i])->n;
        if (of_shape(&all->v[i], s) && n - 1 <= exp02_measured_ridge(ctx) / 4 && n > best)
            best = n;
    }
    return best;
}

/* GPU: the claim's n >= 2048 (AI ~1000, five times the ridge). CPU: the
 * library path also pays an FP16 -> FP32 conversion pass (~10 bytes per
 * weight, five times the model's 2), so the intensity it really has is a
 * fifth of the counted one; compute-bound means that real intensity is at
 * least 6.4 R (the memory part at most a sixth of the compute part, even
 * if the two never overlap): a counted AI of at least 32 R. At 8 R the
 * conversion pass still took a quarter of the time, and its share moved
 * with the DRAM rate the neighbours left: MFU 45-55 % from run to run. */
static bool compute_bound(rl_ctx *ctx, const rl_point *p)
{
    if (!rl_point_has_role(p, "library"))
        return false;
    if (ctx->kind == RL_CUDA)
        return RL_DATA(exp02_call, p)->n >= 2048;
    return rl_arith_intensity(p->flops, p->bytes) >= COMPUTE_BOUND_RIDGES * exp02_measured_ridge(ctx);
}

/* The lowest MFU among the shape's compute-bound points, how many, the
 * smallest n. */
static double compute_bound_mfu(rl_ctx *ctx, const rl_points *all, const shape *s, int *count,
                                int *n_lo)
{
    double lo = NAN;
    *count = *n_lo = 0;
    for (int i = 0; i < all->n; i++) {
        const rl_point *p = &all->v[i];
        if (!of_shape(p, s) || !rl_point_timed(p) || !compute_bound(ctx, p))
            continue;
        double mfu = rl_point_mfu(ctx, p);
        int n = RL_DATA(exp02_call, p)->n;
        lo = isnan(lo) || mfu < lo ? mfu : lo;
        *n_lo = *count == 0 || n < *n_lo ? n : *n_lo;
        (*count)++;
    }
    return lo;
}

/* ---- the verdicts ---------------------------------------------------------------- */

/* What the decode MBU was judged against (a mixed roof: what the spill
 * runs at, rl_roof), and where --max-bytes put the weights: under 4x the
 * LLC they spill from it (mixed) or sit in it, not in device memory. */
static void decode_note(rl_ctx *ctx, const rl_point *g, const rl_point *lib, char *buf, size_t len)
{
    char roof[160], size[32];
    rl_point_roof_text(ctx, g, roof, sizeof roof);
    rl_format_bytes(g->footprint, size, sizeof size);
    snprintf(buf, len, "gemv_fp16 moves %.0f GB/s against %s", rl_point_gbps(g), roof);
    if (!rl_beyond_cache(ctx, g->footprint))
        rl_appendf(buf, len, rl_point_roof(ctx, g).mixed ? "; --max-bytes keeps the weights' "
                   "copies (%s) under 4x the last-level cache" : "; --max-bytes keeps the "
                   "weights (%s) in the cache", size);
    rl_appendf(buf, len, "; the library path: MBU %.2f", lib ? rl_point_mbu(ctx, lib) : NAN);
}

static void judge_decode(rl_ctx *ctx, const rl_points *all, const shape *s, double mfu_compute)
{
    const rl_point *g = rl_points_find(all, "bandwidth", at_n, &(at){s, 1}),
                   *lib = rl_points_find(all, "library", at_n, &(at){s, 1});
    char note[400];
    rl_judge(ctx, &EXP02_CLAIMS[AI_DECODE], s->name,
             rl_arith_intensity(gemv_flops(s->rows, s->k, 1), gemv_bytes(s->rows, s->k, 1)),
             "2 FLOPs and 2 bytes per weight; a count, not a measurement");

    snprintf(note, sizeof note, "gemv_fp16 not measured");
    if (g)
        decode_note(ctx, g, lib, note, sizeof note);
    rl_premise pr = rl_premise_start();
    rl_premise_memory_bound(ctx, &pr, &EXP02_CLAIMS[MBU_DECODE], g, "gemv_fp16 at n = 1");
    rl_judge_given(ctx, &EXP02_CLAIMS[MBU_DECODE], s->name, g ? rl_point_mbu(ctx, g) : NAN, &pr, note);

    double mfu1 = g ? 100 * rl_point_mfu(ctx, g) : NAN;
    if (ctx->kind == RL_CUDA) {
        rl_judge(ctx, &EXP02_CLAIMS[MFU_DECODE_GPU], s->name, mfu1,
                 "decode leaves the tensor cores idle: MFU = MBU x AI / ridge");
        return;
    }
    if (isnan(mfu_compute))
        snprintf(note, sizeof note, "CPU ridge %.1f FLOP/B, so MFU(1) = MBU/ridge; the bound, a "
                 "quarter of the compute-bound MFU, was not measured", exp02_measured_ridge(ctx));
    else
        snprintf(note, sizeof note, "CPU ridge %.1f FLOP/B, so MFU(1) = MBU/ridge; the GPU's 5 %% "
                 "assumes a ridge near 200; bound %.1f %% = a quarter of %.1f %%",
                 exp02_measured_ridge(ctx), 25 * mfu_compute, 100 * mfu_compute);
    rl_premise room = rl_premise_start();
    rl_premise_memory_bound(ctx, &room, &EXP02_CLAIMS[MFU_DECODE_CPU], g, "gemv_fp16 at n = 1");
    rl_premise_room_under_mfu(ctx, &room, g, mfu_compute / 4, "gemv_fp16 at n = 1");
    rl_judge_within_given(ctx, &EXP02_CLAIMS[MFU_DECODE_CPU], s->name, mfu1, 0, 25 * mfu_compute,
                          &room, note);
}

/* Verdict texts are fixed; what depends on the measured ridge (which n is
 * compute-bound, which batch is free) goes into the notes. */
void exp02_judge_shape(rl_ctx *ctx, const rl_points *all, const shape *s)
{
    int count, n_lo;
    double mfu_c = compute_bound_mfu(ctx, all, s, &count, &n_lo);
    judge_decode(ctx, all, s, mfu_c);

    char note[256];
    if (count)
        snprintf(note, sizeof note, "the lowest of %d points (the library GEMM, n >= %d)", count, n_lo);
    else
        snprintf(note, sizeof note, "no measured point %s",
                 ctx->kind == RL_CUDA ? "with n >= 2048" : "with AI >= 32 x the ridge");
    rl_judge(ctx, &EXP02_CLAIMS[MFU_PREFILL], s->name, 100 * mfu_c, note);

    int nf = free_batch_tokens(ctx, all, s);
    const rl_point *t1 = rl_points_fastest(all, NULL, at_n, &(at){s, 1}),
                   *tn = nf > 1 ? rl_points_fastest(all, NULL, at_n, &(at){s, nf}) : NULL;
    double ratio = t1 && tn ? tn->seconds / t1->seconds : NAN;
    if (tn && t1)
        snprintf(note, sizeof note, "n = %d is free by the ridge; fastest at each n: %s, %s; %.1fx "
                 "the tokens for %.2fx the time", nf, t1->variant->name, tn->variant->name,
                 (double)nf, ratio);
    else if (nf > 1)
        snprintf(note, sizeof note, "n = %d not measured", nf);
    else
        snprintf(note, sizeof note, "the ridge (%.1f) leaves no batch free", exp02_measured_ridge(ctx));
    rl_judge(ctx, &EXP02_CLAIMS[BATCHING_FREE], s->name, ratio, note);
}
