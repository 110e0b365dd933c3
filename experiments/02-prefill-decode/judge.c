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
    return rl_ridge_point(r->ceil->matrix_tflops * 1e12, r->ceil->copy_gbps * 1e9);
}

/* Additive model (compute and memory do not overlap at all, the worst
 * case): t(n) / t(1) = (1 + n / R) / (1 + 1 / R) for AI(1) = 1, within 1.25x
 * while n - 1 <= R / 4. The GPU's claim names n = 8 (R ~ 200: well inside). */
int free_batch_tokens(const run *r)
{
    if (r->ctx->kind == RL_CUDA)
        return 8;
    int n = 1;
    while (2 * n - 1 <= measured_ridge(r) / 4)
        n *= 2;
    return n;
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

static bool resident(const run *r, const point *p)
{
    return (double)p->job.copies * 2.0 * p->s->rows * p->s->k < 4 * r->ctx->dev->llc_bytes;
}

static void verdict_for(run *r, const shape *s, const char *id, const char *claim,
                        const char *predicted, double value, const char *fmt, double lo,
                        double hi, const char *note)
{
    char vid[96], vclaim[160], measured[64];
    snprintf(vid, sizeof vid, "%s_%s", id, s->name);
    snprintf(vclaim, sizeof vclaim, "%s (%s)", claim, s->name);
    snprintf(measured, sizeof measured, isnan(value) ? "-" : fmt, value);
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
                "%.3f FLOP/B", 0.9, 1.1, "2 FLOPs and 2 bytes per weight; a count, not a measurement");

    bool in_cache = g && resident(r, g);
    snprintf(note, sizeof note, "%s", in_cache ? "the weights fit in the cache: no memory verdict" : "");
    if (g && !in_cache)
        snprintf(note, sizeof note, "gemv_fp16 moves %.0f GB/s (its target: 0.9 of the %s); the "
                 "library path: MBU %.2f", point_gbps(g), gpu ? "copy bandwidth" : "triad, which "
                 "leaves write-allocate traffic uncounted", lib ? point_mbu(r, lib) : NAN);
    verdict_for(r, s, "mbu_decode", "MBU at n = 1 (gemv_fp16)", ">= 0.8",
                g && !in_cache ? point_mbu(r, g) : NAN, "%.2f", 0.8, INFINITY, note);

    double mfu1 = g ? point_mfu(r, g) : NAN;
    if (gpu) {
        verdict_for(r, s, "mfu_decode", "MFU at n = 1 (gemv_fp16)", "< 5 %", mfu1 * 100, "%.2f %%",
                    0, 5, "decode leaves the tensor cores idle: MFU = MBU x AI / ridge");
    } else {
        snprintf(pred, sizeof pred, "< 1/4 of %.0f %%", mfu_compute * 100);
        snprintf(note, sizeof note, "CPU ridge %.1f FLOP/B, so MFU(1) = MBU/ridge; the GPU's "
                 "5 %% assumes a ridge near 200", measured_ridge(r));
        verdict_for(r, s, "mfu_decode", "MFU at n = 1, vs MFU when compute-bound", pred,
                    mfu1 * 100, "%.1f %%", 0, mfu_compute * 100 / 4, note);
    }
}

void judge_shape(run *r, const shape *s)
{
    int count, n_lo;
    double mfu_c = compute_bound_mfu(r, s, &count, &n_lo);
    judge_decode(r, s, mfu_c);

    char pred[64], note[256], claim[96];
    bool gpu = r->ctx->kind == RL_CUDA;
    snprintf(claim, sizeof claim, "MFU when compute-bound (n >= %d)", count ? n_lo : gpu ? 2048 : 0);
    if (count)
        snprintf(note, sizeof note, "the lowest of %d points (the library GEMM)", count);
    else
        snprintf(note, sizeof note, "no measured point %s",
                 gpu ? "with n >= 2048" : "with AI >= 8 x the ridge");
    verdict_for(r, s, "mfu_prefill", claim, ">= 50 %", mfu_c * 100, "%.1f %%", 50, INFINITY, note);

    int nf = free_batch_tokens(r);
    const point *t1 = fastest_at(r, s, 1), *tn = nf > 1 ? fastest_at(r, s, nf) : NULL;
    double ratio = t1 && tn ? tn->seconds / t1->seconds : NAN;
    snprintf(claim, sizeof claim, "time per step, n = %d over n = 1", nf);
    if (tn && t1)
        snprintf(note, sizeof note, "fastest at each n: %s, %s; %.1fx the tokens for %.2fx the time",
                 t1->v->name, tn->v->name, (double)nf, ratio);
    else
        snprintf(note, sizeof note, nf > 1 ? "not measured" : "the ridge (%.1f) leaves no batch free",
                 measured_ridge(r));
    snprintf(pred, sizeof pred, "<= 1.25x");
    verdict_for(r, s, "batching_free", claim, pred, ratio, "%.2fx", 0, 1.25, note);
}
