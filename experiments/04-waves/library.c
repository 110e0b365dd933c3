/*
 * library.c -- cuBLAS on NVIDIA's example, M = 2304, K = 4096, N swept in
 * steps of 8: its TFLOP/s as a sawtooth, falling one step past each wave.
 * GPU only. The rows carry NVIDIA's model of the waves (256 x 128 tiles,
 * one block per SM, this device's SMs); the library picks its own kernel.
 */
#include "exp04.h"

#include <math.h>
#include <stdio.h>

/* ---- the plan ------------------------------------------------------------------- */

/* The library variant's sweep, or none: on the CPU (no cuBLAS there), or
 * when it is not selected. Every 8 of N in a full run, every 64 else
 * (and one step of 8 past each wave). */
static wave_sweep sweep_on(rl_ctx *ctx)
{
    const gemm_variant *v = gemm_by_role(ctx, "library");
    if (!v || ctx->kind != RL_CUDA)
        return (wave_sweep){0};
    return (wave_sweep){.part = "library", .v = v, .m = EX_M, .k = EX_K, .n_lo = 1024,
                        .n_hi = 4096, .step = ctx->args.mode == RL_MODE_FULL ? WAVE_STEP : 64,
                        .tile_m = EX_TILE_M, .tile_n = EX_TILE_N, .units = units_of(ctx),
                        .blocks_per_unit = 1};
}

void library_plan(rl_ctx *ctx)
{
    wave_sweep w = sweep_on(ctx);
    if (w.v)
        sweep_plan(ctx, &w);
}

/* ---- the run -------------------------------------------------------------------- */

static const rl_column TABLE[] = {CALL_TABLE_HEAD, CALL_TABLE_WAVE_END, {0}};

static void judge(rl_ctx *ctx, const rl_points *pts, const wave_sweep *w);

void library_run(rl_ctx *ctx)
{
    wave_sweep w = sweep_on(ctx);
    if (!w.v) {
        rl_judge(ctx, &EXP04_CLAIMS[CLAIM_LIBRARY], NULL, NAN,
                 ctx->kind != RL_CUDA ? "no cuBLAS on the CPU backend: the sawtooth needs a GPU "
                                        "(OpenBLAS runs in the vocab part)"
                                      : "no variant with the role library selected");
        return;
    }
    rl_meta(ctx, "library",
            "variant %d (%s), M = %d, K = %d, N = %d..%d step %d; the tiles and waves of these "
            "rows are NVIDIA's model (%dx%d tiles, one block per SM) on this device's %d SMs: the "
            "library picks its own kernel",
            w.v->number, w.v->name, w.m, w.k, w.n_lo, w.n_hi, w.step, EX_TILE_M, EX_TILE_N,
            w.units);
    printf("\nlibrary: %s\n  NVIDIA's example, M = %d, K = %d\n", w.v->what, w.m, w.k);

    rl_points pts = {0};
    sweep_measure(ctx, &w, &pts);
    rl_points_report_as(ctx, &pts, TABLE);
    judge(ctx, &pts, &w);
    calls_free(&pts);
}

/* ---- the verdict ---------------------------------------------------------------- */

static double fall_at(const rl_points *pts, int i)
{
    return rl_point_tflops(&pts->v[i]) / rl_point_tflops(&pts->v[i + 1]);
}

/* The largest fall of TFLOP/s between neighbouring N: where the library's
 * own teeth are, whatever tiles it chose. */
static int largest_fall(const rl_points *pts)
{
    int worst = -1;
    double worst_ratio = 0;
    for (int j = 0; j + 1 < pts->n; j++)
        if (fall_at(pts, j) > worst_ratio) /* false for NaN: failed points are skipped */
            worst = j, worst_ratio = fall_at(pts, j);
    return worst;
}

/* TFLOP/s at the model's first wave end over one step past it. */
static void judge(rl_ctx *ctx, const rl_points *pts, const wave_sweep *w)
{
    int i = sweep_first_wave_end(pts), worst = largest_fall(pts);
    char note[256] = "no wave end of the model in the sweep";
    if (i >= 0 && worst >= 0)
        snprintf(note, sizeof note,
                 "N %d -> %d ends a wave of the model (%dx%d tiles, 1 block/SM, %d SMs); cuBLAS "
                 "picks its own tiles: its largest fall is N %d -> %d (%.2fx)",
                 call_of(&pts->v[i])->g.n, call_of(&pts->v[i + 1])->g.n, EX_TILE_M, EX_TILE_N,
                 w->units, call_of(&pts->v[worst])->g.n, call_of(&pts->v[worst + 1])->g.n,
                 fall_at(pts, worst));
    rl_judge(ctx, &EXP04_CLAIMS[CLAIM_LIBRARY], NULL, i >= 0 ? fall_at(pts, i) : NAN, note);
}
