/*
 * judge.c -- experiment 03's decode and prefill verdicts: each format
 * against the F16 timed with it, on the spread of their ratio and only
 * where the premises hold (both read near their roof; no format faster
 * than its bytes allow). The batch part's verdicts are in batch.c.
 */
#include "exp03.h"

#include <math.h>
#include <stdio.h>

/* Each format's rate over the F16 timed with it (decode: bytes per
 * second; prefill: tokens per second) as a deviation in %, with its
 * spread (rl_time_ratio's: the rounds' q1-q3, both timed in one group),
 * over formats [lo, hi]. What a "flat" claim is judged on: a format whose whole spread
 * lies outside [c->lo, c->hi], where one does (the claim fails whatever
 * the noise); else the worst median, its spread spanning every format's,
 * so that a verdict one format's noise could turn is "not measured", not
 * a median that holds one minute and fails the next. *which: the format
 * it names; NaN where a format was not timed. */
static rl_ratio deviation_spread(const rl_points *pts, bool decode, int lo, int hi,
                                 const rl_claim *c, int *which)
{
    rl_ratio worst = {NAN, INFINITY, -INFINITY};
    *which = lo;
    for (int f = lo; f <= hi; f++) {
        const rl_point *p = exp03_best(pts, f, decode ? QUANT_DECODE : QUANT_PREFILL);
        rl_ratio r = rl_time_ratio(exp03_f16_of(p), p); /* F16's time over the format's */
        if (!p || isnan(r.median))
            return (rl_ratio){NAN, NAN, NAN};
        double k = decode ? RL_DATA(step, p)->rel_size : 1;
        rl_ratio d = {100 * (k * r.median - 1), 100 * (k * fmin(r.lo, r.hi) - 1),
                      100 * (k * fmax(r.lo, r.hi) - 1)};
        if (d.lo > c->hi || d.hi < c->lo) {
            *which = f;
            return d;
        }
        worst.lo = fmin(worst.lo, d.lo);
        worst.hi = fmax(worst.hi, d.hi);
        if (isnan(worst.median) || fabs(d.median) >= fabs(worst.median)) {
            worst.median = d.median;
            *which = f;
        }
    }
    return worst;
}

/* The premise of a decode claim on a format's point: it and the F16 timed
 * with it read near their roof (the format's only to fail, where the claim
 * is a lower bound), and its speedup over that F16 stays within what its
 * bytes allow. */
static void decode_premise(rl_ctx *ctx, rl_premise *pr, const rl_claim *c, const rl_point *q)
{
    const rl_point *f16 = exp03_f16_of(q);
    if (!q || !f16)
        return;
    char what[96];
    snprintf(what, sizeof what, "the F16 baseline (%s)", f16->variant->name);
    rl_premise_memory_bound(ctx, pr, c, f16, what);
    snprintf(what, sizeof what, "%s decode (%s)", RL_DATA(step, q)->format, q->variant->name);
    if (isinf(c->hi))
        rl_premise_memory_bound_to_fail(ctx, pr, c, q, what);
    else
        rl_premise_memory_bound(ctx, pr, c, q, what);
    snprintf(what, sizeof what, "%s over the F16 baseline (%s)", RL_DATA(step, q)->format,
             f16->variant->name);
    rl_premise_within_bytes(pr, f16, q, what);
}

static bool is_q4_decode(const rl_point *p, const void *key)
{
    (void)key;
    const step *s = RL_DATA(step, p);
    return s->f == QF_Q4 && s->part == QUANT_DECODE;
}

/* q4's best decode over the F16 timed with it; the note adds the
 * dequantizing decode against the F16 of its own group. */
void exp03_judge_decode_speedup(rl_ctx *ctx, const rl_points *pts, const rl_claim *c,
                                const char *decode)
{
    char note[800];
    snprintf(note, sizeof note, "%s", decode);
    const rl_point *q4 = exp03_best(pts, QF_Q4, QUANT_DECODE);
    const rl_point *dq4 = rl_points_find(pts, "decode_dequant", is_q4_decode, NULL);
    if (dq4 && dq4 != q4 && !isnan(exp03_vs_f16(dq4)))
        rl_appendf(note, sizeof note, "; dequantizing decode (%s): %.2fx", dq4->variant->name,
                   exp03_vs_f16(dq4));
    rl_premise pr = rl_premise_start();
    decode_premise(ctx, &pr, c, q4);
    /* on the spread of the two times (both of one group): a lone median
     * ratio near 2.5x would turn with the minute's noise */
    const rl_point *f16 = exp03_f16_of(q4);
    rl_judge_ratio_given(ctx, c, NULL, q4 && f16 ? rl_time_ratio(f16, q4) : RL_RATIO_NONE, &pr,
                         note);
}

/* Bytes per second over F16's, q8 to q4: flat where decode is about bytes. */
void exp03_judge_size_x_decode(rl_ctx *ctx, const rl_points *pts, const rl_claim *c,
                               const char *decode)
{
    char note[900];
    rl_premise pr = rl_premise_start();
    for (int f = QF_Q8; f <= QF_Q4; f++)
        decode_premise(ctx, &pr, c, exp03_best(pts, f, QUANT_DECODE));
    snprintf(note, sizeof note, "%s", decode);
    int worst;
    rl_ratio dev = deviation_spread(pts, true, QF_Q8, QF_Q4, c, &worst);
    if (!isnan(dev.median))
        rl_appendf(note, sizeof note, "; the format judged: %s (%+.0f %%)",
                   quant_formats[worst].name, dev.median);
    /* Over the band: a quantized format read its bytes faster than F16 did. */
    if (dev.median > c->hi)
        rl_appendf(note, sizeof note, "; a quantized format read more bytes per second than the "
                   "F16 GEMV timed with it, so the F16 kernel, not the bytes, was the slower reader");
    rl_judge_ratio_given(ctx, c, NULL, dev, &pr, note);
}

/* Prefill's tokens per second over F16's, every format: flat. */
void exp03_judge_prefill_flat(rl_ctx *ctx, const rl_points *pts, const rl_claim *c)
{
    char note[900];
    int worst;
    rl_ratio dev = deviation_spread(pts, false, QF_Q8, QF_Q2, c, &worst);
    const rl_point *p16 = exp03_best(pts, QF_F16, QUANT_PREFILL);
    snprintf(note, sizeof note, "F16 prefill at %.0f %% MFU; the other formats are first "
             "dequantized %s", p16 ? 100 * rl_point_mfu(ctx, p16) : NAN,
             ctx->kind == RL_CUDA ? "to FP16 (a pass through memory)" : "to FP32");
    exp03_pass_note(ctx, pts, note, sizeof note);
    if (!isnan(dev.median))
        rl_appendf(note, sizeof note, "; the format judged: %s (%+.0f %%)",
                   quant_formats[worst].name, dev.median);
    rl_judge_ratio_given(ctx, c, NULL, dev, NULL, note);
}
