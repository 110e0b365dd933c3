/*
 * staircase.c -- the own tiled kernel on this device. M is chosen so that
 * whole tile columns fill whole waves, and N is swept across several
 * waves: the time stays flat within a wave and climbs one step per wave.
 * The model over it is waves x the time of one wave. A part of its own.
 */
#include "exp04.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the axis ------------------------------------------------------------------ */

/* The own kernel on this backend, or NULL when it is not selected or has
 * no tiles of its own. */
static const gemm_impl *own_kernel(const rl_ctx *ctx, const gemm_variant **v)
{
    *v = gemm_by_role(ctx, "own_tiled");
    const gemm_impl *impl = *v ? RL_LAUNCHER(ctx, *v) : NULL;
    return impl && impl->tile_m ? impl : NULL;
}

/* A wave is units x blocks per unit tiles; its most square cut
 * (rl_wave_tile_rows) sets M, its tile columns the staircase's step. */
static rl_tiling wave_of(const rl_ctx *ctx, const gemm_impl *impl)
{
    int per_unit = impl->blocks_per_unit(), units = rl_units(ctx);
    int rows = rl_wave_tile_rows((long long)units * per_unit);
    return (rl_tiling){rows * impl->tile_m, impl->tile_m, impl->tile_n, units, per_unit};
}

/* At least three and a half waves, and 16 tile columns. */
static double columns_end(const rl_ctx *ctx)
{
    const gemm_variant *v;
    rl_tiling t = wave_of(ctx, own_kernel(ctx, &v));
    int cols = t.units * t.per_unit / (t.m / t.tile_m);
    return fmax(ceil(3.5 * cols), 16);
}

/* N: every tile column (quick and lab: a staircase step is a tile column
 * anyway) or every quarter of one (full). */
static const rl_axis COLUMN = RL_AXIS("tile column", RL_STEPS(1, 1), RL_STEPS(1, 1), RL_STEPS(1, 1),
                                      .top = columns_end);
static const rl_axis QUARTER = RL_AXIS("of a column", RL_LIST(1), RL_LIST(1),
                                       RL_LIST(0.25, 0.5, 0.75, 1));

static int n_at(const rl_at *at, const wave_part *w)
{
    return (int)lround((rl_at_value(at, &COLUMN) - 1 + rl_at_value(at, &QUARTER)) * w->t.tile_n);
}

/* ---- the part ------------------------------------------------------------------ */

static const rl_column TABLE[] = {
    CALL_TABLE_HEAD,
    {NULL, "model/us", "%11.1f", .num = exp04_staircase_model_us},
    RL_TEXT(NULL, "", "%s", exp04_call, mark),
    {0},
};

static void judge(rl_ctx *ctx, const rl_points *pts, const wave_part *w);

/* Judges the part's claim, then frees its buffers. */
static void done(rl_ctx *ctx, const rl_points *pts, void *state)
{
    wave_part *w = state;
    judge(ctx, pts, w);
    exp04_calls_close(ctx, pts, &w->out);
}

static void describe(rl_ctx *ctx, wave_part *w)
{
    bool gpu = ctx->kind == RL_CUDA;
    const rl_tiling *t = &w->t;
    int rows = t->m / t->tile_m, wave = t->units * t->per_unit;
    rl_meta(ctx, "staircase",
            "variant %d (%s), M = %d (%d tile rows), K = %d, N = %d..%d step %d and one step of %d "
            "past each wave; a wave = %d %s x %d (%s) = %d tiles = %d tile columns of %dx%d",
            w->v->number, w->v->name, t->m, rows, w->k, w->n_lo, w->n_hi, w->step, WAVE_STEP,
            t->units, gpu ? "SMs" : "threads", t->per_unit,
            gpu ? "cudaOccupancyMaxActiveBlocksPerMultiprocessor" : "one tile per thread at a time",
            wave, wave / rows, t->tile_m, t->tile_n);
    snprintf(w->heading, sizeof w->heading,
             "staircase: own tiled kernel (%s), %dx%d tiles\n  M = %d, K = %d, a wave = %d %s x "
             "%d = %d tiles", w->v->name, t->tile_m, t->tile_n, t->m, w->k, t->units,
             gpu ? "SMs" : "threads", t->per_unit, wave);
}

static void no_own_kernel(rl_ctx *ctx, const rl_points *pts, void *claim)
{
    (void)pts;
    rl_judge(ctx, claim, NULL, NAN, "no variant with the role own_tiled (and its tile shape) "
             "selected on this backend: the staircase needs our own tiled kernel");
}

/* On the CPU a deep k makes a tile take milliseconds, long next to a
 * thread's wake-up, so that the steps are the tiles' and not the
 * scheduler's. */
void exp04_staircase_declare(rl_ctx *ctx, const rl_claim *claim)
{
    const gemm_variant *v;
    const gemm_impl *impl = own_kernel(ctx, &v);
    if (!impl) { /* the claim still gets its row, saying why */
        rl_part_add(ctx, &(rl_part){.done = no_own_kernel, .state = (void *)claim});
        return;
    }
    static const rl_axis *const AXES[] = {&COLUMN, &QUARTER, NULL};
    int step = (int)(impl->tile_n * rl_axis_first(ctx, &QUARTER));
    wave_part *w = RL_NEW(ctx, wave_part);
    *w = (wave_part){.part = "staircase", .v = v, .claim = claim, .t = wave_of(ctx, impl),
                     .k = ctx->kind == RL_CUDA ? 4096 : 8192, .axes = AXES, .n_at = n_at,
                     .n_lo = step, .n_hi = (int)rl_axis_last(ctx, &COLUMN) * impl->tile_n,
                     .step = step};
    describe(ctx, w);
    exp04_waves_declare(ctx, w, &(rl_part){.open = exp04_waves_open, .done = done, .state = w,
                                           .table = TABLE, .heading = w->heading});
}

/* ---- the model and the verdict ------------------------------------------------ */

/* The model's time: waves x the time of one wave, the median over the
 * sweep of time / waves (one measured number scales the whole staircase). */
double exp04_staircase_model_us(rl_ctx *ctx, const rl_point *p)
{
    const exp04_call *c = RL_DATA(exp04_call, p);
    if (strcmp(c->part, "staircase"))
        return NAN;
    const rl_points *all = rl_points_all(ctx);
    double *per_wave = malloc(sizeof(double) * (size_t)all->n);
    int n = 0;
    for (int i = 0; i < all->n; i++)
        if (all->v[i].part == p->part && rl_point_timed(&all->v[i]))
            per_wave[n++] = all->v[i].seconds / RL_DATA(exp04_call, &all->v[i])->w.waves;
    double t_wave = rl_stats_of(per_wave, n).median; /* NaN when none was timed */
    free(per_wave);
    return t_wave * c->w.waves * 1e6;
}

/* The claim presumes that every tile costs a tile's time, the edge tile
 * too, as a GPU's block computes its whole tile: where the step past a
 * wave (its edge tile a few columns wide) takes under EDGE_TILE_PACE of
 * the N that fills that tile, the edge tile is cheaper here and a
 * failure would be the kernel's (its packing reads only the columns
 * there are), not the waves'. A "holds" stands. */
static const double EDGE_TILE_PACE = 0.85;

static void edge_tile_premise(rl_premise *pr, const rl_points *pts, const wave_part *w,
                              const rl_point *past)
{
    int n = RL_DATA(exp04_call, past)->kernel.args.n;
    int filled = (n + w->t.tile_n - 1) / w->t.tile_n * w->t.tile_n;
    const rl_point *whole = NULL;
    for (int j = 0; j < pts->n && !whole; j++) /* the part's point at N = filled */
        if (RL_DATA(exp04_call, &pts->v[j])->kernel.args.n == filled)
            whole = &pts->v[j];
    if (whole == past)
        return;
    char past_what[96], whole_what[64];
    snprintf(past_what, sizeof past_what, "the step past the wave (N = %d, its edge tile %d of %d "
             "columns wide)", n, n % w->t.tile_n, w->t.tile_n);
    snprintf(whole_what, sizeof whole_what, "N = %d (the same tiles, all full)", filled);
    rl_premise_times_alike_to_fail(pr, past, past_what, whole, whole_what, EDGE_TILE_PACE,
                                   "here an edge tile costs less than a tile, as on no GPU, so a "
                                   "failure would be this kernel's, not the waves'");
}

/* The time one step past the first full wave, over the wave's own: on
 * the ratio's spread (a step whose spread straddles 1.7x is not judged),
 * the two timed in one group (calls.c pairs them). */
static void judge(rl_ctx *ctx, const rl_points *pts, const wave_part *w)
{
    bool cpu = ctx->kind == RL_CPU;
    int i = w->first_end;
    const rl_point *full = i >= 0 ? &pts->v[i] : NULL, *past = i >= 0 ? &pts->v[i + 1] : NULL;
    rl_premise pr = rl_premise_start();
    if (full) {
        rl_premise_same_group(&pr, past, full, "the wave end and one step past");
        edge_tile_premise(&pr, pts, w, past);
    }
    char note[256] = "no full wave in the sweep";
    if (full) {
        const exp04_call *f = RL_DATA(exp04_call, full), *q = RL_DATA(exp04_call, past);
        snprintf(note, sizeof note,
                 "N %d -> %d (+%.2f %% work): %.0f -> %.0f tiles, %d per wave%s",
                 f->kernel.args.n, q->kernel.args.n, 100.0 * WAVE_STEP / f->kernel.args.n,
                 f->w.tiles, q->w.tiles, w->t.units * w->t.per_unit,
                 cpu ? " (threads); the CPU shows the mechanism, not the GPU's numbers" : "");
    }
    rl_judge_ratio_given(ctx, w->claim, NULL, rl_time_ratio(past, full), &pr, note);
}
