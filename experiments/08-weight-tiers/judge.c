/*
 * judge.c -- experiment 08's claims, and their verdicts.
 *
 * The spill claims judge f = 0.1 with the r measured in the same run
 * (the fast tier's rate, the GEMV's at f = 0, over the slow tier's read
 * of f = 0.1's rows by each variant's own path: the copy for the
 * sequential one; the zero-copy loads, or the queued reads, for the
 * overlapped one); the MoE claims judge the active variant's time
 * against its bytes over the roof measured beside it (batch 1, where
 * those bytes outlast the step's launches), and its growth over the
 * batch against the touched-experts curve.
 */
#include "exp08.h"

#include <math.h>
#include <stdio.h>

enum { SPILL_SEQ, SPILL_OVL, MOE_ACTIVE, MOE_DENSE, MOE_ROUTED, MOE_CURVE };

static const double JUDGED_F = 0.1;
static const double CURVE_PACE = 0.85; /* MOE_CURVE's premise, below */
/* MOE_ACTIVE's premise: a step's bytes at the roof take at least 10x its
 * launches' fixed cost. A step that paid that cost in full on top of its
 * bytes' time would still read 1 / 1.1 = 0.91 of the roof, inside the
 * claim's band (0.87 or more): the launch alone cannot fail the claim,
 * and a failure is the kernel's. Below it, a GPU's microsecond kernels
 * (top-1 of 128 experts, 3 MiB: a microsecond of an H100's HBM at its
 * datasheet rate, less on an H200) are timed on the launch. */
static const double FIXED_COST_MULTIPLE = 10;

const rl_claim EXP08_CLAIMS[] = {
    [SPILL_SEQ] = {"spill_sequential_model",
                   "spill, f = 0.1: sequential t/t0 over its model (1 - f) + f r, r measured",
                   0.85, 1.15, "x", 2, .predicted_text = "within +-15 %"},
    /* 0: on max(1 - f, f r); 1: on (1 - f) + f r; r: the slow tier as the
     * overlapped variant reads it */
    [SPILL_OVL] = {"spill_overlapped_closer",
                   "spill, f = 0.1: overlapped t/t0 between its model max(1 - f, f r) (0) and the "
                   "sequential one (1), r of its own path", -INFINITY, 0.5, "", 2,
                   .predicted_text = "below 0.5: closer to its own model"},
    /* judged where the step's bytes at the roof take at least 10x its
     * launches (FIXED_COST_MULTIPLE: the launch alone cannot fail it), and
     * where the same kernel reading every expert (the dense path, a dense
     * layer's stream) is itself inside the claim's band, at 1/1.15 = 0.87
     * of that roof or more: on a shared VM the probe's many streams can
     * outrun any GEMV's, and then the roof, not the experts' bytes, would
     * decide. Past the premises, a failure is the experts' own cost. */
    [MOE_ACTIVE] = {"moe_active_bytes",
                    "MoE, B = 1: step time over the active bytes / the roof measured beside it",
                    0.85, 1.15, "x", 2, .on_ceiling = true,
                    .predicted_text = "within +-15 % (judged where the bytes at the roof take >= 10x "
                                      "the step's launches)",
                    .premise_mbu = 0.87},
    [MOE_DENSE] = {"moe_dense_over_active",
                   "MoE, B = 1: the dense kernel's time over the active one's, over their bytes' ratio",
                   0.7, 1.3, "x", 2, .predicted_text = "~1: the time is the bytes"},
    [MOE_ROUTED] = {"moe_routed_touched", "MoE: experts the routings touch over E (1 - (1 - k/E)^B) "
                    "(counted)", 0.95, 1.05, "x", 3, .counted = true},
    /* t(B)/t(1) is the bytes' ratio times rate(1)/rate(B): judged where B's
     * step reads at least 0.85 of B = 1's GB/s, so that the kernel moves the
     * ratio by under 1/0.85 = 1.18, inside the band, and the bytes decide
     * (a batch whose passes turn compute-bound reads slower). Against B = 1's
     * rate, not the probe's: on a shared VM the probe's streams can outrun
     * every GEMV's while both points still stream alike. */
    [MOE_CURVE] = {"moe_touched_curve", "MoE over the batch: t(B)/t(1) over touched(B)/touched(1)",
                   0.8, 1.2, "x", 2,
                   .predicted_text = "within +-20 % (judged where B reads >= 0.85 of B = 1's GB/s)"},
    {0},
};

/* ---- spill ------------------------------------------------------------------------ */

/* The slow tier must be slower for the models to say anything; when the
 * file came from memory (a host that caches the disk in RAM, tmpfs) it
 * is not. */
static void tier_premise(rl_premise *pr, double r)
{
    if (pr->met && !(r >= 2)) {
        pr->met = false;
        snprintf(pr->why, sizeof pr->why, "the slow tier read only %.2fx slower than the fast one "
                 "(r < 2): its reads came from memory, not from a slower tier", r);
    }
}

/* How each backend's overlapped variant reads the slow tier, for the notes. */
static const char *overlapped_path(const rl_ctx *ctx)
{
    return ctx->kind == RL_CUDA ? "zero-copy SM loads through the mapping"
                                : "every chunk's O_DIRECT read queued at once";
}

static void judge_spill(rl_ctx *ctx, const rl_points *all)
{
    if (ctx->kind != RL_CUDA && !exp08_spill_dir()) {
        rl_judge(ctx, &EXP08_CLAIMS[SPILL_SEQ], NULL, NAN, exp08_spill_why());
        rl_judge(ctx, &EXP08_CLAIMS[SPILL_OVL], NULL, NAN, exp08_spill_why());
        return;
    }
    const rl_point *seq = exp08_find(all, SPILL, "sequential", JUDGED_F, 0, 0, NULL),
                   *ovl = exp08_find(all, SPILL, "overlapped", JUDGED_F, 0, 0, NULL);
    double r = exp08_spill_r(all, JUDGED_F), f = JUDGED_F;
    double ms = rl_spill_slowdown_sequential(f, r);
    double ts = seq ? exp08_t_over_t0(all, seq) : NAN, to = ovl ? exp08_t_over_t0(all, ovl) : NAN;
    const rl_point *tier = exp08_find(all, SPILL, "slow_tier", f, 0, 0, NULL);
    char note[500];
    snprintf(note, sizeof note, "r = %.2f, the copy's (the fast tier %.1f GB/s, the GEMV at f = 0; "
             "the slow tier %.2f GB/s by %s, f = 0.1's rows); sequential t/t0 %.2f against %.2f", r,
             exp08_spill_t0_gbps(all), tier ? rl_point_gbps(tier) : NAN,
             ctx->kind == RL_CUDA ? "cudaMemcpyAsync" : "pread, O_DIRECT", ts, ms);
    rl_premise pr = rl_premise_start();
    tier_premise(&pr, r);
    rl_judge_given(ctx, &EXP08_CLAIMS[SPILL_SEQ], NULL, ts / ms, &pr, note);

    /* The overlapped variant against the r of its own path: a copy engine
     * and SM loads (or one pread and many queued reads) need not cross
     * the same link at the same rate, and the scale from its model to the
     * sequential one is what overlapping buys on that path. */
    double ro = exp08_spill_r_overlapped(all, f);
    double mo = rl_spill_slowdown_overlapped(f, ro), mso = rl_spill_slowdown_sequential(f, ro);
    const rl_point *own = exp08_find(all, SPILL, "slow_tier_overlapped", f, 0, 0, NULL);
    snprintf(note, sizeof note, "overlapped t/t0 %.2f; its model %.2f, the sequential %.2f, both with "
             "r = %.2f, its own path's (%s: %.2f GB/s; the copy's r = %.2f)", to, mo, mso, ro,
             overlapped_path(ctx), own ? rl_point_gbps(own) : NAN, r);
    pr = rl_premise_start();
    tier_premise(&pr, ro);
    if (pr.met && !(mso > 1.1 * mo)) {
        pr.met = false;
        snprintf(pr.why, sizeof pr.why, "the two models differ by under 10 %% at r = %.2f (%.2f and "
                 "%.2f): no measurement can tell them apart", ro, mo, mso);
    }
    rl_judge_given(ctx, &EXP08_CLAIMS[SPILL_OVL], NULL, (to - mo) / (mso - mo), &pr, note);
}

/* ---- MoE ------------------------------------------------------------------------------ */

/* How the fixed cost of one launch was measured, for the notes. */
static const char *launch_text(const rl_ctx *ctx)
{
    return ctx->kind == RL_CUDA ? "an empty kernel's launch, timed beside the steps"
                                : "an empty OpenMP parallel region, timed beside the steps";
}

static void judge_active(rl_ctx *ctx, const rl_points *all, const exp08_sweep *s)
{
    const rl_point *dense = exp08_find(all, MOE_TOP_K, "dense", NAN, s->moe.top_k, 1, "uniform"),
                   *empty = exp08_find(all, MOE_TOP_K, "fixed_cost", NAN, 1, 1, "uniform");
    double launch_s = empty ? empty->seconds : NAN;
    for (const int *k = s->top_ks; *k; k++) {
        const rl_point *p = exp08_find(all, MOE_TOP_K, "active", NAN, *k, 1, "uniform");
        char scope[16], what[48], note[400] = "not measured";
        snprintf(scope, sizeof scope, "k%d", *k);
        snprintf(what, sizeof what, "top-%d of %d", *k, s->moe.experts);
        rl_premise pr = rl_premise_start();
        if (p) {
            char roof[160];
            double launches = RL_DATA(exp08_call, p)->launches;
            rl_point_roof_text(ctx, p, roof, sizeof roof);
            snprintf(note, sizeof note, "%s: %.1f MiB of active weights in %.1f us, %.1f GB/s against "
                     "%s; %g launch%s of %.2f us each (%s)", what, p->bytes / 1048576, p->seconds * 1e6,
                     rl_point_gbps(p), roof, launches, launches == 1 ? "" : "es", launch_s * 1e6,
                     launch_text(ctx));
            rl_premise_outlasts_fixed_cost(ctx, &pr, p, launches, launch_s, FIXED_COST_MULTIPLE, what,
                                           launch_text(ctx));
        }
        rl_premise_memory_bound(ctx, &pr, &EXP08_CLAIMS[MOE_ACTIVE], dense,
                                "the dense path (the same kernel over every expert)");
        rl_judge_given(ctx, &EXP08_CLAIMS[MOE_ACTIVE], scope, p ? 1 / rl_point_mbu(ctx, p) : NAN, &pr, note);
    }
}

static void judge_dense(rl_ctx *ctx, const rl_points *all, const exp08_sweep *s)
{
    int k = s->moe.top_k;
    const rl_point *a = exp08_find(all, MOE_TOP_K, "active", NAN, k, 1, "uniform"),
                   *d = exp08_find(all, MOE_TOP_K, "dense", NAN, k, 1, "uniform");
    char note[300] = "not measured";
    double value = NAN;
    if (a && d) {
        value = (d->seconds / a->seconds) / (d->bytes / a->bytes);
        snprintf(note, sizeof note, "top-%d of %d: dense %.2f ms, active %.3f ms (%.1fx), their "
                 "bytes %.1fx apart", k, s->moe.experts, d->seconds * 1e3, a->seconds * 1e3,
                 d->seconds / a->seconds, d->bytes / a->bytes);
    }
    rl_judge(ctx, &EXP08_CLAIMS[MOE_DENSE], NULL, value, note);
}

static void judge_routed(rl_ctx *ctx, const rl_points *all, const exp08_sweep *s)
{
    for (const int *b = s->batches; *b; b++) {
        const exp08_call *found = NULL;
        for (int i = 0; i < all->n && !found; i++) {
            const exp08_call *c = RL_DATA(exp08_call, &all->v[i]);
            if (c->kind == MOE_BATCH && c->batch == *b && c->routing[0] == 'u')
                found = c;
        }
        char scope[16], note[200] = "no uniform point at this batch";
        snprintf(scope, sizeof scope, "B%d", *b);
        if (found)
            snprintf(note, sizeof note, "%d routings: %.2f experts on average, the model %.2f "
                     "(of %d, top-%d)", s->routings, found->touched, found->touched_model,
                     found->experts, found->top_k);
        rl_judge(ctx, &EXP08_CLAIMS[MOE_ROUTED], scope,
                 found ? found->touched / found->touched_model : NAN, note);
    }
}

static void judge_curve(rl_ctx *ctx, const rl_points *all, const exp08_sweep *s)
{
    const rl_point *one = exp08_find(all, MOE_BATCH, "active", NAN, s->moe.top_k, 1, "uniform");
    for (const int *b = s->batches; *b; b++) {
        if (*b == 1)
            continue;
        const rl_point *p = exp08_find(all, MOE_BATCH, "active", NAN, s->moe.top_k, *b, "uniform");
        char scope[16], note[300] = "not measured";
        snprintf(scope, sizeof scope, "B%d", *b);
        double value = NAN;
        rl_premise pr = rl_premise_start();
        if (p && one) {
            const exp08_call *c = RL_DATA(exp08_call, p);
            double model = c->touched_model / rl_moe_experts_touched(c->experts, c->top_k, 1);
            value = (p->seconds / one->seconds) / model;
            snprintf(note, sizeof note, "t(%d)/t(1) = %.2f; the model touches %.1f of %d experts "
                     "against %d at B = 1 (a ratio of %.2f; the routings' %.2f)", *b,
                     p->seconds / one->seconds, c->touched_model, c->experts, c->top_k, model,
                     c->touched / RL_DATA(exp08_call, one)->touched);
            double pace = rl_point_gbps(p) / rl_point_gbps(one);
            if (!(pace >= CURVE_PACE)) {
                pr.met = false;
                snprintf(pr.why, sizeof pr.why, "B = %d reads %.2f of B = 1's GB/s (%.1f against "
                         "%.1f; MBU %.2f and %.2f): its passes of %.1f tokens per expert no longer "
                         "stream like B = 1's, so the bytes alone do not set the ratio", *b, pace,
                         rl_point_gbps(p), rl_point_gbps(one), rl_point_mbu(ctx, p),
                         rl_point_mbu(ctx, one), (double)*b * c->top_k / c->touched);
            }
        }
        rl_judge_given(ctx, &EXP08_CLAIMS[MOE_CURVE], scope, value, &pr, note);
    }
}

void exp08_judge(rl_ctx *ctx, const rl_points *all)
{
    exp08_sweep s = exp08_sweep_for(ctx);
    judge_spill(ctx, all);
    judge_active(ctx, all, &s);
    judge_dense(ctx, all, &s);
    judge_routed(ctx, all, &s);
    judge_curve(ctx, all, &s);
}
