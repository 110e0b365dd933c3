/*
 * library.c -- cuBLAS on NVIDIA's example, M = 2304, K = 4096, N swept in
 * steps of 8: its TFLOP/s as a sawtooth, falling one step past each wave.
 * GPU only. The rows carry NVIDIA's model of the waves (256 x 128 tiles,
 * one block per SM, this device's SMs); the library picks its own kernel.
 */
#include "exp04.h"

#include <math.h>
#include <stdio.h>

/* The library variant's sweep, or none: on the CPU (no cuBLAS there), or
 * when it is not selected. Every 8 of N in a full run, every 64 else
 * (and one step of 8 past each wave). */
static wave_sweep sweep_on(rl_ctx *ctx)
{
    const gemm_variant *v = gemm_by_role(ctx, "library");
    if (!v || ctx->kind != RL_CUDA)
        return (wave_sweep){0};
    return (wave_sweep){.part = "library", .v = v, .k = EX_K, .n_lo = 1024, .n_hi = 4096,
                        .t = {EX_M, EX_TILE_M, EX_TILE_N, rl_units(ctx), 1},
                        .step = RL_BY_MODE(ctx, 64, 64, WAVE_STEP)};
}

static const rl_column TABLE[] = {CALL_TABLE_HEAD, RL_TEXT(NULL, "", "%s", exp04_call, mark), {0}};

static void judge(rl_ctx *ctx, const rl_points *pts, const wave_sweep *w);

/* Judges the part's claim, then frees its buffers. */
static void done(rl_ctx *ctx, const rl_points *pts, void *state)
{
    wave_sweep *w = state;
    judge(ctx, pts, w);
    exp04_calls_close(ctx, pts, &w->out);
}

/* Without the sweep, a part of no points all the same: its verdict says why. */
static void not_measured(rl_ctx *ctx, const rl_points *pts, void *state)
{
    (void)pts;
    (void)state;
    rl_judge(ctx, &EXP04_CLAIMS[CLAIM_LIBRARY], NULL, NAN,
             ctx->kind != RL_CUDA ? "no cuBLAS on the CPU backend: the sawtooth needs a "
                                    "GPU (OpenBLAS runs in the vocab part)"
                                  : "no variant with the role library selected");
}

void exp04_library_declare(rl_ctx *ctx)
{
    wave_sweep *w = RL_NEW(ctx, wave_sweep);
    *w = sweep_on(ctx);
    if (!w->v) {
        rl_part_add(ctx, &(rl_part){.done = not_measured});
        return;
    }
    rl_meta(ctx, "library",
            "variant %d (%s), M = %d, K = %d, N = %d..%d step %d; the tiles and waves of these "
            "rows are NVIDIA's model (%dx%d tiles, one block per SM) on this device's %d SMs: the "
            "library picks its own kernel",
            w->v->number, w->v->name, w->t.m, w->k, w->n_lo, w->n_hi, w->step, EX_TILE_M,
            EX_TILE_N, w->t.units);
    snprintf(w->heading, sizeof w->heading, "library: %s\n  NVIDIA's example, M = %d, K = %d",
             w->v->what, w->t.m, w->k);
    rl_part_add(ctx, &(rl_part){.open = exp04_sweep_open, .done = done, .state = w, .table = TABLE,
                                .heading = w->heading});
    exp04_sweep_declare(ctx, w);
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

/* TFLOP/s at the model's first wave end over one step past it. */
static void judge(rl_ctx *ctx, const rl_points *pts, const wave_sweep *w)
{
    int i = w->first_end, worst = largest_fall(pts);
    char note[256] = "no wave end of the model in the sweep";
    if (i >= 0 && worst >= 0)
        snprintf(note, sizeof note,
                 "N %d -> %d ends a wave of the model (%dx%d tiles, 1 block/SM, %d SMs); cuBLAS "
                 "picks its own tiles: its largest fall is N %d -> %d (%.2fx)",
                 n_at(pts, i), n_at(pts, i + 1), EX_TILE_M, EX_TILE_N, w->t.units,
                 n_at(pts, worst), n_at(pts, worst + 1), fall_at(pts, worst));
    rl_judge(ctx, &EXP04_CLAIMS[CLAIM_LIBRARY], NULL, i >= 0 ? fall_at(pts, i) : NAN, note);
}
