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

static const rl_column TABLE[] = {CALL_TABLE_HEAD, RL_TEXT(NULL, "", "%s", call, mark), {0}};

static void judge(rl_ctx *ctx, const rl_points *pts, const wave_sweep *w);

void library_part(rl_ctx *ctx, bool plan)
{
    wave_sweep w = sweep_on(ctx);
    if (!w.v) {
        if (!plan)
            rl_judge(ctx, &EXP04_CLAIMS[CLAIM_LIBRARY], NULL, NAN,
                     ctx->kind != RL_CUDA ? "no cuBLAS on the CPU backend: the sawtooth needs a "
                                            "GPU (OpenBLAS runs in the vocab part)"
                                          : "no variant with the role library selected");
        return;
    }
    rl_points pts = {0};
    sweep_declare(ctx, &pts, &w);
    if (calls_planned(ctx, &pts, plan))
        return;
    rl_meta(ctx, "library",
            "variant %d (%s), M = %d, K = %d, N = %d..%d step %d; the tiles and waves of these "
            "rows are NVIDIA's model (%dx%d tiles, one block per SM) on this device's %d SMs: the "
            "library picks its own kernel",
            w.v->number, w.v->name, w.t.m, w.k, w.n_lo, w.n_hi, w.step, EX_TILE_M, EX_TILE_N,
            w.t.units);
    printf("\nlibrary: %s\n  NVIDIA's example, M = %d, K = %d\n", w.v->what, w.t.m, w.k);

    calls_measure(ctx, &pts);
    rl_points_report_as(ctx, &pts, TABLE);
    judge(ctx, &pts, &w);
    calls_free(ctx, &pts);
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
                 call_of(&pts->v[i])->g.n, call_of(&pts->v[i + 1])->g.n, EX_TILE_M, EX_TILE_N,
                 w->t.units, call_of(&pts->v[worst])->g.n, call_of(&pts->v[worst + 1])->g.n,
                 fall_at(pts, worst));
    rl_judge(ctx, &EXP04_CLAIMS[CLAIM_LIBRARY], NULL, i >= 0 ? fall_at(pts, i) : NAN, note);
}
