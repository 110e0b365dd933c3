/*
 * judge.c -- experiment 02's verdicts, one set per shape.
 *
 * On the GPU the thresholds are the claim's. On the CPU the same claims
 * are judged against the CPU's own ceilings: its ridge point R (measured
 * matrix rate over measured bandwidth, ~8 FLOP/B on a two-core server
 * slice, ~200 on a data-centre GPU) decides which n is still "nearly free"
 * and which is compute-bound. README.md, "Tolerances", derives each rule.
 */
#include "exp02.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const point *find_point(const run *r, const shape *s, int n, const char *variant)
{
    for (int i = 0; i < r->npts; i++) {
        const point *p = &r->pts[i];
        if (p->ok && p->s == s && p->n == n && !strcmp(p->v->name, variant))
            return p;
    }
    return NULL;
}

const point *fastest_at(const run *r, const shape *s, int n)
{
    const point *best = NULL;
    for (int i = 0; i < r->npts; i++) {
        const point *p = &r->pts[i];
        if (p->ok && p->s == s && p->n == n && (!best || p->seconds < best->seconds))
            best = p;
    }
    return best;
}

double measured_ridge(const run *r)
{
    /* The compute roof over DRAM's read bandwidth: where a GEMV streaming
     * its weights from memory turns compute-bound. */
    return rl_ridge_point(r->ceil->matrix_tflops * 1e12, r->ceil->bw[RL_DRAM][RL_READ].best * 1e9);
}

/* Additive model (compute and memory do not overlap at all, the worst
 * case): t(n) / t(1) = (1 + n / R) / (1 + 1 / R) for AI(1) = 1, within 1.25x
 * while n - 1 <= R / 4. The GPU's claim names n = 8 (R ~ 200: well inside). */
int free_batch_tokens(const run *r)
{
    if (r->ctx->kind == RL_CUDA)
        return 8;
    int best = 1; /* the largest measured n that the model calls free */
    for (int i = 0; i < r->npts; i++)
        if (r->pts[i].n - 1 <= measured_ridge(r) / 4 && r->pts[i].n > best)
            best = r->pts[i].n;
    return best;
}

/* GPU: the claim's n >= 2048 (AI ~1000, five times the ridge). CPU: AI at
 * least 8 R, since its library path also pays an FP16 -> FP32 conversion
 * pass (~10 bytes per weight, five times the model's 2). */
bool in_compute_bound_verdict(const run *r, const point *p)
{
    if (strcmp(p->v->name, "gemm_library") != 0)
        return false;
    if (r->ctx->kind == RL_CUDA)
        return p->n >= 2048;
    return point_ai(p) >= 8 * measured_ridge(r);
}

/* on_ceiling: the value is a utilization, meaningless when a ceiling
 * stayed under-measured (the verdict then says so instead). */
static void verdict_for(run *r, const shape *s, const char *id, const char *claim,
                        const char *predicted, double value, const char *fmt, double lo,
                        double hi, const char *note, bool on_ceiling)
{
    char vid[96], vclaim[160], measured[64];
    snprintf(vid, sizeof vid, "%s_%s", id, s->name);
    snprintf(vclaim, sizeof vclaim, "%s (%s)", claim, s->name);
    snprintf(measured, sizeof measured, isnan(value) ? "-" : fmt, value);
    if (on_ceiling)
        rl_verdict_on_ceiling(r->ctx, vid, vclaim, predicted, measured, rl_within(value, lo, hi), note);
    else
        rl_verdict(r->ctx, vid, vclaim, predicted, measured, rl_within(value, lo, hi), note);
}

/* The lowest MFU among the compute-bound points, and how many there are. */
static double compute_bound_mfu(const run *r, const shape *s, int *count, int *n_lo)
{
    double lo = NAN;
    *count = 0;
    *n_lo = 0;
    for (int i = 0; i < r->npts; i++) {
        const point *p = &r->pts[i];
        if (p->ok && p->s == s && in_compute_bound_verdict(r, p)) {
            double mfu = point_mfu(r, p);
            lo = isnan(lo) || mfu < lo ? mfu : lo;
            *n_lo = *count == 0 || p->n < *n_lo ? p->n : *n_lo;
            (*count)++;
        }
    }
    return lo;
}

static void judge_decode(run *r, const shape *s, double mfu_compute)
{
    bool gpu = r->ctx->kind == RL_CUDA;
    const point *g = find_point(r, s, 1, "gemv_fp16"), *lib = find_point(r, s, 1, "gemm_library");
    char note[256], pred[64];
    double ai = rl_arith_intensity(gemv_flops(s->rows, s->k, 1), gemv_bytes(s->rows, s->k, 1));
    verdict_for(r, s, "ai_decode", "arithmetic intensity at n = 1 (counted)", "~1 FLOP/B", ai,
                "%.3f FLOP/B", 0.9, 1.1, "2 FLOPs and 2 bytes per weight; a count, not a measurement",
                false);

    snprintf(note, sizeof note, "gemv_fp16 not measured");
    if (g) {
        rl_roof roof = point_roof(r, g);
        snprintf(note, sizeof note, "gemv_fp16 moves %.0f GB/s against the %s read bandwidth%s; "
                 "the library path: MBU %.2f", point_gbps(g), roof.name,
                 rl_beyond_cache(r->ctx, g->footprint) ? "" : " (--max-bytes keeps the weights "
                 "in the cache)", lib ? point_mbu(r, lib) : NAN);
    }
    verdict_for(r, s, "mbu_decode", "MBU at n = 1 (gemv_fp16)", ">= 0.8", g ? point_mbu(r, g) : NAN,
                "%.2f", 0.8, INFINITY, note, true);

    double mfu1 = g ? point_mfu(r, g) : NAN;
    if (gpu) {
        verdict_for(r, s, "mfu_decode", "MFU at n = 1 (gemv_fp16)", "< 5 %", mfu1 * 100, "%.2f %%",
                    0, 5, "decode leaves the tensor cores idle: MFU = MBU x AI / ridge", true);
    } else {
        snprintf(pred, sizeof pred, "< 1/4 of %.0f %%", mfu_compute * 100);
        snprintf(note, sizeof note, "CPU ridge %.1f FLOP/B, so MFU(1) = MBU/ridge; the GPU's "
                 "5 %% assumes a ridge near 200", measured_ridge(r));
        verdict_for(r, s, "mfu_decode", "MFU at n = 1, vs MFU when compute-bound", pred,
                    mfu1 * 100, "%.1f %%", 0, mfu_compute * 100 / 4, note, true);
    }
}

/* Verdict titles are fixed; what depends on the measured ridge (which n
 * is compute-bound, which batch is free) goes into the prediction. */
void judge_shape(run *r, const shape *s)
{
    int count, n_lo;
    double mfu_c = compute_bound_mfu(r, s, &count, &n_lo);
    judge_decode(r, s, mfu_c);

    char pred[64], note[256];
    bool gpu = r->ctx->kind == RL_CUDA;
    snprintf(pred, sizeof pred, ">= 50 %% (n >= %d)", count ? n_lo : gpu ? 2048 : 0);
    if (count)
        snprintf(note, sizeof note, "the lowest of %d points (the library GEMM)", count);
    else
        snprintf(note, sizeof note, "no measured point %s",
                 gpu ? "with n >= 2048" : "with AI >= 8 x the ridge");
    verdict_for(r, s, "mfu_prefill", "MFU when compute-bound", pred, mfu_c * 100, "%.1f %%", 50,
                INFINITY, note, true);

    int nf = free_batch_tokens(r);
    const point *t1 = fastest_at(r, s, 1), *tn = nf > 1 ? fastest_at(r, s, nf) : NULL;
    double ratio = t1 && tn ? tn->seconds / t1->seconds : NAN;
    if (tn && t1)
        snprintf(note, sizeof note, "fastest at each n: %s, %s; %.1fx the tokens for %.2fx the time",
                 t1->v->name, tn->v->name, (double)nf, ratio);
    else if (nf > 1)
        snprintf(note, sizeof note, "n = %d not measured", nf);
    else
        snprintf(note, sizeof note, "the ridge (%.1f) leaves no batch free", measured_ridge(r));
    snprintf(pred, sizeof pred, "<= 1.25x (n = %d)", nf);
    verdict_for(r, s, "batching_free", "time per step, free batch over n = 1", pred, ratio, "%.2fx",
                0, 1.25, note, false);
}
