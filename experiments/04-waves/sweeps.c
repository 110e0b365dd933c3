/*
 * sweeps.c -- experiment 04's sweeps of N across waves: the own kernel's
 * staircase on this device, and the library's sawtooth on NVIDIA's
 * example.
 */
#include "exp04.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { MAX_WAVES = 256 };

static long long waves_at(const wave_sweep *w, int n)
{
    return rl_waves(rl_tiles(w->m, n, w->tile_m, w->tile_n), w->units, w->blocks_per_unit);
}

/* The largest N whose tiles fit in `waves` waves. */
static int last_n_of(const wave_sweep *w, long long waves)
{
    long long rows = (w->m + w->tile_m - 1) / w->tile_m;
    return (int)(waves * w->units * w->blocks_per_unit / rows * w->tile_n);
}

static bool ends_a_wave(const wave_sweep *w, int n) { return last_n_of(w, waves_at(w, n)) == n; }

/* Adds the point at n. The last N of a wave and the N one step past it
 * are timed as one group: a verdict compares them. */
static void add_n(sweep *s, const wave_sweep *w, int n, operand *ops, const double *ref,
                  int *pair_group)
{
    point p = {.part = w->part, .gemm = "nt", .v = w->v, .a = &ops[0], .b = &ops[1], .ref = ref,
               .ref_ld = (size_t)w->n_hi};
    p.g = (gemm_args){.m = w->m, .n = n, .k = w->k, .trans_b = true};
    if (ends_a_wave(w, n))
        p.group = pair_group[waves_at(w, n)] = sweep_new_group(s);
    else if (n > WAVE_STEP && ends_a_wave(w, n - WAVE_STEP))
        p.group = pair_group[waves_at(w, n - WAVE_STEP)];
    point_set_waves(sweep_add(s, &p), w->tile_m, w->tile_n, w->units, w->blocks_per_unit);
}

/* N = n_lo, n_lo + step, ..., n_hi, and one step past each wave's end. */
static void add_points(sweep *s, const wave_sweep *w, operand *ops, const double *ref)
{
    int pair_group[MAX_WAVES + 2] = {0};
    if (waves_at(w, w->n_hi + WAVE_STEP) > MAX_WAVES)
        rl_die(RL_EXIT_FAILED, "exp-04: a sweep of more than %d waves", MAX_WAVES);
    for (int n = w->n_lo; n <= w->n_hi; n += w->step) {
        add_n(s, w, n, ops, ref, pair_group);
        int past = n + WAVE_STEP;
        if (ends_a_wave(w, n) && past % w->step != 0 && past <= w->n_hi)
            add_n(s, w, past, ops, ref, pair_group);
    }
    for (int i = 0; i + 1 < s->n; i++)
        s->pts[i].wave_end = s->pts[i + 1].waves > s->pts[i].waves;
}

/* Inputs A (m x k) and B (n_hi x k), the reference once for n_hi: the
 * point at N reads the first N rows of B and checks the first N columns. */
static void measure(run *r, sweep *s, const wave_sweep *w)
{
    operand ops[2] = {operand_new(r->ctx, (size_t)w->m * w->k),
                      operand_new(r->ctx, (size_t)w->n_hi * w->k)};
    double *ref = rl_host_alloc((size_t)w->m * w->n_hi * sizeof(double));
    gemm_args widest = {.m = w->m, .n = w->n_hi, .k = w->k, .a = ops[0].host, .b = ops[1].host,
                        .trans_b = true};
    gemm_reference(ref, &widest);
    add_points(s, w, ops, ref);
    sweep_run(s);
    operand_free(r->ctx, &ops[0]);
    operand_free(r->ctx, &ops[1]);
    rl_host_free(ref);
}

/* The first wave end whose next point is one step on: its index, or -1. */
static int first_wave_end(const sweep *s)
{
    for (int i = 0; i + 1 < s->n; i++)
        if (s->pts[i].wave_end && s->pts[i + 1].g.n == s->pts[i].g.n + WAVE_STEP)
            return i;
    return -1;
}

/* The plan: every point of a sweep, one group each (a wave end and the
 * step past it share one), at the compute roof's time. */
void plan_sweep(rl_ctx *ctx, const wave_sweep *w)
{
    if (!w->v)
        return;
    for (int n = w->n_lo; n <= w->n_hi; n += w->step) {
        double t = rl_estimate_call_s(ctx, 0, 0, RL_READ, rl_gemm_flops(w->m, n, w->k));
        rl_plan_group(ctx, ends_a_wave(w, n) ? 2 : 1, t);
    }
}

/* ---- the own kernel's staircase on this device ------------------------ */

wave_sweep plan_staircase(run *r)
{
    rl_ctx *ctx = r->ctx;
    const gemm_variant *v = variant_number(r, 1);
    if (!v || !part_selected(r, "staircase"))
        return (wave_sweep){0};
    bool gpu = ctx->kind == RL_CUDA;
    int per_unit = v->blocks_per_unit();
    long long wave = (long long)r->units * per_unit;
    int rows = rl_wave_tile_rows(wave), cols = (int)(wave / rows);
    /* At least three and a half waves, and 16 tile columns. On the CPU a
     * deep k makes a tile take milliseconds, long next to a thread's
     * wake-up, so that the steps are the tiles' and not the scheduler's. */
    int cols_end = (int)ceil(3.5 * cols) > 16 ? (int)ceil(3.5 * cols) : 16;
    wave_sweep w = {.part = "staircase", .v = v, .m = rows * v->tile_m, .k = gpu ? 4096 : 8192,
                    .step = v->tile_n / (ctx->args.mode == RL_MODE_QUICK  ? 1
                                         : ctx->args.mode == RL_MODE_LAB ? 2
                                                                         : 4),
                    .n_hi = cols_end * v->tile_n,
                    .tile_m = v->tile_m, .tile_n = v->tile_n, .units = r->units,
                    .blocks_per_unit = per_unit};
    w.n_lo = w.step;
    rl_meta(ctx, "staircase",
            "variant %d (%s), M = %d (%d tile rows), K = %d, N = %d..%d step %d and one step of %d "
            "past each wave; a wave = %d %s x %d (%s) = %lld tiles = %d tile columns of %dx%d",
            v->number, v->name, w.m, rows, w.k, w.n_lo, w.n_hi, w.step, WAVE_STEP, r->units,
            gpu ? "SMs" : "threads", per_unit,
            gpu ? "cudaOccupancyMaxActiveBlocksPerMultiprocessor" : "one tile per thread at a time",
            wave, cols, v->tile_m, v->tile_n);
    return w;
}

/* The model's time: waves x the time of one wave, the median over the
 * sweep of time / waves (one measured number scales the whole staircase). */
static void fit_wave_model(sweep *s)
{
    double *per_wave = malloc(sizeof(double) * (size_t)s->n);
    int n = 0;
    for (int i = 0; i < s->n; i++)
        if (s->pts[i].ok)
            per_wave[n++] = s->pts[i].seconds / (double)s->pts[i].waves;
    if (n > 0) {
        double t_wave = rl_stats_of(per_wave, n).median;
        for (int i = 0; i < s->n; i++)
            s->pts[i].model_s = t_wave * (double)s->pts[i].waves;
    }
    free(per_wave);
}

static void judge_staircase(run *r, const sweep *s, const wave_sweep *w)
{
    bool cpu = r->ctx->kind == RL_CPU;
    int i = first_wave_end(s);
    const point *full = i >= 0 ? &s->pts[i] : NULL, *past = i >= 0 ? &s->pts[i + 1] : NULL;
    double ratio = full && full->ok && past->ok ? past->seconds / full->seconds : NAN;
    char measured[64], note[256] = "no full wave in the sweep";
    snprintf(measured, sizeof measured, isnan(ratio) ? "-" : "%.2fx", ratio);
    if (full)
        snprintf(note, sizeof note,
                 "N %d -> %d (+%.2f %% work): %lld -> %lld tiles, %lld per wave%s", full->g.n,
                 past->g.n, 100.0 * WAVE_STEP / full->g.n, full->tiles, past->tiles,
                 (long long)w->units * w->blocks_per_unit,
                 cpu ? " (threads); the CPU shows the mechanism, not the GPU's numbers" : "");
    const char *claim = cpu ? "own kernel, 1 step past a wave of threads"
                            : "own kernel, 1 step past a full wave";
    rl_verdict(r->ctx, "wave_step_own_kernel", claim, ">= 1.7x time", measured,
               rl_within(ratio, 1.7, INFINITY), note);
}

void run_staircase(run *r, const wave_sweep *w)
{
    if (!w->v)
        return;
    printf("\nstaircase: %s\n  M = %d, K = %d, a wave = %d %s x %d = %d tiles\n", w->v->what, w->m,
           w->k, w->units, r->ctx->kind == RL_CUDA ? "SMs" : "threads", w->blocks_per_unit,
           w->units * w->blocks_per_unit);
    sweep s;
    sweep_init(&s, r->ctx);
    measure(r, &s, w);
    fit_wave_model(&s);
    sweep_report(&s, "model/us");
    judge_staircase(r, &s, w);
    sweep_free(&s);
}

/* ---- the library's sawtooth on NVIDIA's example ------------------------- */

static const char *const LIBRARY_CLAIM = "cuBLAS TFLOP/s: wave end / 1 step past";

wave_sweep plan_library(run *r)
{
    rl_ctx *ctx = r->ctx;
    const gemm_variant *v = variant_number(r, 2);
    if (!v || ctx->kind != RL_CUDA || !part_selected(r, "library"))
        return (wave_sweep){0};
    wave_sweep w = {.part = "library", .v = v, .m = EX_M, .k = EX_K, .n_lo = 1024, .n_hi = 4096,
                    .step = ctx->args.mode == RL_MODE_FULL ? WAVE_STEP : 64, .tile_m = EX_TILE_M,
                    .tile_n = EX_TILE_N, .units = r->units, .blocks_per_unit = 1};
    rl_meta(ctx, "library",
            "variant %d (%s), M = %d, K = %d, N = %d..%d step %d; the tiles and waves of these "
            "rows are NVIDIA's model (%dx%d tiles, one block per SM) on this device's %d SMs: the "
            "library picks its own kernel",
            v->number, v->name, w.m, w.k, w.n_lo, w.n_hi, w.step, EX_TILE_M, EX_TILE_N, r->units);
    return w;
}

/* The largest fall of TFLOP/s between neighbouring N: where the library's
 * own teeth are, whatever tiles it chose. */
static int largest_fall(const sweep *s)
{
    int worst = -1;
    double worst_ratio = 0;
    for (int j = 0; j + 1 < s->n; j++) {
        double ratio = point_tflops(&s->pts[j]) / point_tflops(&s->pts[j + 1]);
        if (ratio > worst_ratio) /* false for NaN: failed points are skipped */
            worst = j, worst_ratio = ratio;
    }
    return worst;
}

static void judge_library(run *r, const sweep *s)
{
    int i = first_wave_end(s), worst = largest_fall(s);
    double ratio = i >= 0 ? point_tflops(&s->pts[i]) / point_tflops(&s->pts[i + 1]) : NAN;
    char measured[64], note[256] = "no wave end of the model in the sweep";
    snprintf(measured, sizeof measured, isnan(ratio) ? "-" : "%.2fx", ratio);
    if (i >= 0 && worst >= 0)
        snprintf(note, sizeof note,
                 "N %d -> %d ends a wave of the model (%dx%d tiles, 1 block/SM, %d SMs); cuBLAS "
                 "picks its own tiles: its largest fall is N %d -> %d (%.2fx)",
                 s->pts[i].g.n, s->pts[i + 1].g.n, EX_TILE_M, EX_TILE_N, r->units,
                 s->pts[worst].g.n, s->pts[worst + 1].g.n,
                 point_tflops(&s->pts[worst]) / point_tflops(&s->pts[worst + 1]));
    rl_verdict(r->ctx, "wave_step_library", LIBRARY_CLAIM, "> 1x", measured,
               rl_within(ratio, 1.0 + 1e-9, INFINITY), note);
}

void run_library(run *r, const wave_sweep *w)
{
    if (!part_selected(r, "library"))
        return;
    if (!w->v) {
        rl_verdict(r->ctx, "wave_step_library", LIBRARY_CLAIM, "> 1x", "-", RL_NOT_MEASURED,
                   r->ctx->kind != RL_CUDA ? "no cuBLAS on the CPU backend: the sawtooth needs a "
                                             "GPU (OpenBLAS runs in the vocab part)"
                                           : "variant 2 not selected");
        return;
    }
    printf("\nlibrary: %s\n  NVIDIA's example, M = %d, K = %d\n", w->v->what, w->m, w->k);
    sweep s;
    sweep_init(&s, r->ctx);
    measure(r, &s, w);
    sweep_report(&s, "");
    judge_library(r, &s);
    sweep_free(&s);
}
