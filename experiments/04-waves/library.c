/*
 * library.c -- cuBLAS on NVIDIA's example, M = 2304, K = 4096, N swept in
 * steps of 8: its TFLOP/s as a sawtooth, falling one step past each wave.
 * GPU only. The rows carry NVIDIA's model of the waves (256 x 128 tiles,
 * one block per SM, this device's SMs); the library picks its own kernel.
 */
#include "exp04.h"

#include <math.h>
#include <stdio.h>

/* N every 64 from 1024 to 4096, every 8 in a full run (and one step of 8
 * past each wave of the model). */
static double n_end(const rl_ctx *ctx)
{
    (void)ctx;
    return 4096;
}
static const rl_axis N = RL_AXIS("n", RL_STEPS(1024, 64), RL_STEPS(1024, 64),
                                 RL_STEPS(1024, WAVE_STEP), .top = n_end);

static int n_of(const rl_at *at, const wave_part *w)
{
    (void)w;
    return rl_at_int(at, &N);
}

static const rl_column TABLE[] = {CALL_TABLE_HEAD, RL_TEXT(NULL, "", "%s", exp04_call, mark), {0}};

static void judge(rl_ctx *ctx, const rl_points *pts, const wave_part *w);

/* Judges the part's claim, then frees its buffers. */
static void done(rl_ctx *ctx, const rl_points *pts, void *state)
{
    wave_part *w = state;
    judge(ctx, pts, w);
    exp04_calls_close(ctx, pts, &w->out);
}

/* Without the library (on the CPU, or not selected), a part of no points
 * all the same: its verdict says why. */
static void not_measured(rl_ctx *ctx, const rl_points *pts, void *state)
{
    (void)pts;
    rl_judge(ctx, state, NULL, NAN,
             ctx->kind != RL_CUDA ? "no cuBLAS on the CPU backend: the sawtooth needs a "
                                    "GPU (OpenBLAS runs in the vocab part)"
                                  : "no variant with the role library selected");
}

void exp04_library_declare(rl_ctx *ctx, const rl_claim *claim)
{
    const gemm_variant *v = gemm_by_role(ctx, "library");
    if (!v || ctx->kind != RL_CUDA) {
        rl_part_add(ctx, &(rl_part){.done = not_measured, .state = (void *)claim});
        return;
    }
    wave_part *w = RL_NEW(ctx, wave_part);
    static const rl_axis *const AXES[] = {&N, NULL};
    rl_steps n = rl_axis_values(ctx, &N);
    *w = (wave_part){.part = "library", .v = v, .claim = claim, .k = EX_K, .axes = AXES,
                     .n_at = n_of, .n_lo = (int)n.v[0], .n_hi = (int)n.v[n.n - 1],
                     .step = (int)(n.v[1] - n.v[0]),
                     .t = {EX_M, EX_TILE_M, EX_TILE_N, rl_units(ctx), 1}};
    rl_meta(ctx, "library",
            "variant %d (%s), M = %d, K = %d, N = %d..%d step %d; the tiles and waves of these "
            "rows are NVIDIA's model (%dx%d tiles, one block per SM) on this device's %d SMs: the "
            "library picks its own kernel",
            v->number, v->name, w->t.m, w->k, w->n_lo, w->n_hi, w->step, EX_TILE_M, EX_TILE_N,
            w->t.units);
    snprintf(w->heading, sizeof w->heading, "library: %s\n  NVIDIA's example, M = %d, K = %d",
             v->what, w->t.m, w->k);
    exp04_waves_declare(ctx, w, &(rl_part){.open = exp04_waves_open, .done = done, .state = w,
                                           .table = TABLE, .heading = w->heading});
}

/* ---- the verdict ---------------------------------------------------------------- */

static int n_at(const rl_points *pts, int i) { return RL_DATA(exp04_call, &pts->v[i])->kernel.args.n; }

static double fall_at(const rl_points *pts, int i)
{
    return rl_point_tflops(&pts->v[i]) / rl_point_tflops(&pts->v[i + 1]);
}

/* The largest fall of TFLOP/s between neighbouring N: where the library's
 * own teeth are, whatever tiles it chose. */
static int largest_fall(const rl_points *pts)
{
    int worst = -1;
    for (int j = 0; j + 1 < pts->n; j++) /* false for NaN: failed points are skipped */
        if (fall_at(pts, j) > (worst < 0 ? 0 : fall_at(pts, worst)))
            worst = j;
    return worst;
}

/* fall_at as a ratio of the two times, with its spread (rl_time_ratio):
 * TFLOP/s at i over i + 1 is t(i + 1) / t(i) x flops(i) / flops(i + 1). */
static rl_ratio fall_ratio(const rl_points *pts, int i)
{
    const rl_point *end = &pts->v[i], *past = &pts->v[i + 1];
    rl_ratio r = rl_time_ratio(past, end);
    double scale = end->flops / past->flops;
    return (rl_ratio){r.median * scale, r.lo * scale, r.hi * scale};
}

/* TFLOP/s at the model's first wave end over one step past it, on the
 * ratio's spread, the two timed in one group (calls.c pairs them). */
static void judge(rl_ctx *ctx, const rl_points *pts, const wave_part *w)
{
    int i = w->first_end, worst = largest_fall(pts);
    char note[256] = "no wave end of the model in the sweep";
    if (i >= 0 && worst >= 0)
        snprintf(note, sizeof note,
                 "N %d -> %d ends a wave of the model (%dx%d tiles, 1 block/SM, %d SMs); cuBLAS "
                 "picks its own tiles: its largest fall is N %d -> %d (%.2fx)",
                 n_at(pts, i), n_at(pts, i + 1), EX_TILE_M, EX_TILE_N, w->t.units,
                 n_at(pts, worst), n_at(pts, worst + 1), fall_at(pts, worst));
    rl_premise pr = rl_premise_start();
    if (i >= 0)
        rl_premise_same_group(&pr, &pts->v[i], &pts->v[i + 1], "the wave end and one step past");
    rl_judge_ratio_given(ctx, w->claim, NULL, i >= 0 ? fall_ratio(pts, i) : RL_RATIO_NONE, &pr,
                         note);
}
