/*
 * premise.c -- whether the points a claim compares meet the claim's
 * premise, before the claim is judged on them.
 *
 * A claim about memory-bound kernels ("quantized weights decode faster in
 * proportion to their bytes", "fusing two passes halves the time") says
 * nothing about a kernel that is far below its roof: its time is set by
 * its instructions, and the claim would hold or fail for that reason, not
 * for the bytes. So such a claim is judged only where each point it
 * compares reads at least rl_claim.premise_mbu of its roof of the same
 * group (group_roof.c), and a speedup larger than its bytes allow beyond
 * the noise says that the baseline, not the bytes, set it. Otherwise the
 * verdict is "premise not met", and its note names the point. For a
 * lower bound on a speedup the fast side's premise gates only a failure
 * (rl_premise_memory_bound_to_fail): a slow baseline can make it hold for
 * the wrong reason, a slow fast side only fail for one. An upper bound on
 * a memory-bound point's MFU presumes a ridge that leaves room under it at
 * the point's roof (rl_premise_room_under_mfu): where it does not, only a
 * slower kernel could meet the bound. A claim on a short call's MBU
 * presumes that its bytes at the roof outlast its fixed cost, the
 * launches or parallel regions it makes (rl_premise_outlasts_fixed_cost):
 * a step of a few microseconds of bytes is timed on its launch.
 */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The ratio's own band, at least this: two kernels that read the same
 * bytes differ by this much for reasons the bytes do not see (how their
 * stores interleave with their arithmetic: experiment 05's README, "The
 * CPU's fused affine pair", has a case), and a ratio timed round by round
 * is otherwise narrower than that. */
static const double MIN_NOISE = 0.10;

rl_premise rl_premise_start(void)
{
    return (rl_premise){.met = true, .met_to_fail = true, .checked = true, .checked_to_fail = true};
}

/* A premise on a point that has no MBU (not declared, not timed): not
 * known, so the verdict waits for it (the first such point is named). */
static bool unchecked(rl_ctx *ctx, rl_premise *pr, const rl_claim *c, const rl_point *p,
                      const char *what, bool to_fail)
{
    if (!(c->premise_mbu > 0) || (p && !isnan(rl_point_mbu(ctx, p))))
        return false;
    char why[256];
    snprintf(why, sizeof why, "%s was not timed, so whether it reads %.2f of its roof (the "
             "claim's premise) is not known", what, c->premise_mbu);
    rl_premise_not_known(pr, to_fail, why);
    return true;
}

void rl_premise_not_known(rl_premise *pr, bool to_fail, const char *why)
{
    if (pr->checked && pr->checked_to_fail) /* the first unknown premise is named */
        snprintf(pr->why_unchecked, sizeof pr->why_unchecked, "%s", why);
    if (to_fail)
        pr->checked_to_fail = false;
    else
        pr->checked = false;
}

/* x in two decimals, three where two would print the premise's own value
 * (0.849 is "0.849", not "0.85", under a premise of 0.85). */
static void fraction_text(double x, double premise, char *buf, size_t len)
{
    char a[32], b[32];
    snprintf(a, sizeof a, "%.2f", x);
    snprintf(b, sizeof b, "%.2f", premise);
    snprintf(buf, len, strcmp(a, b) ? "%.2f" : "%.3f", x);
}

/* Whether p reads below the claim's premise; if so, why in buf. */
static bool below_roof(rl_ctx *ctx, const rl_claim *c, const rl_point *p, const char *what,
                       const char *then, char *buf, size_t len)
{
    if (!p || !(c->premise_mbu > 0))
        return false;
    double mbu = rl_point_mbu(ctx, p);
    if (isnan(mbu) || mbu >= c->premise_mbu)
        return false;
    char at[32], roof[160];
    fraction_text(mbu, c->premise_mbu, at, sizeof at);
    rl_point_roof_text(ctx, p, roof, sizeof roof);
    snprintf(buf, len, "%s at %s of its roof (%.1f GB/s against %s; the premise: at least "
             "%.2f): the bytes do not set its time, %s", what, at, rl_point_gbps(p), roof,
             c->premise_mbu, then);
    return true;
}

void rl_premise_memory_bound(rl_ctx *ctx, rl_premise *pr, const rl_claim *c, const rl_point *p,
                             const char *what)
{
    if (unchecked(ctx, pr, c, p, what, false))
        return;
    if (pr->met && /* the first unmet premise tells the story */
        below_roof(ctx, c, p, what, "so the claim is not judged on it", pr->why, sizeof pr->why))
        pr->met = false;
}

void rl_premise_memory_bound_to_fail(rl_ctx *ctx, rl_premise *pr, const rl_claim *c,
                                     const rl_point *p, const char *what)
{
    if (unchecked(ctx, pr, c, p, what, true))
        return;
    if (pr->met_to_fail &&
        below_roof(ctx, c, p, what, "so the claim's failure would be its instructions', not the "
                   "bytes'", pr->why_to_fail, sizeof pr->why_to_fail))
        pr->met_to_fail = false;
}

void rl_premise_within_bytes(rl_premise *pr, const rl_point *baseline, const rl_point *fast,
                             const char *what)
{
    if (!pr->met || !baseline || !fast || !(fast->bytes > 0))
        return;
    rl_ratio speedup = rl_time_ratio(baseline, fast);
    double model = baseline->bytes / fast->bytes;
    if (isnan(speedup.median))
        return;
    double noise = fmax(MIN_NOISE, (speedup.hi - speedup.lo) / (2 * speedup.median));
    if (speedup.median <= model * (1 + noise))
        return;
    pr->met = false;
    snprintf(pr->why, sizeof pr->why, "%s: a speedup of %.2fx, beyond the %.2fx its bytes allow "
             "by more than the noise (%.0f %%): the baseline was the slower reader, not the bytes",
             what, speedup.median, model, 100 * noise);
}

void rl_premise_times_alike_to_fail(rl_premise *pr, const rl_point *a, const char *a_what,
                                    const rl_point *b, const char *b_what, double least,
                                    const char *then)
{
    if (!pr->met_to_fail)
        return;
    if (!a || !b || !rl_point_timed(a) || !rl_point_timed(b)) {
        char why[256];
        snprintf(why, sizeof why, "%s or %s was not timed, so whether they take the same time "
                 "(the claim's premise) is not known", a_what, b_what);
        rl_premise_not_known(pr, true, why);
        return;
    }
    double ratio = a->seconds / b->seconds;
    if (ratio >= least)
        return;
    pr->met_to_fail = false;
    snprintf(pr->why_to_fail, sizeof pr->why_to_fail, "%s took %.0f us, %s %.0f us: %.2f of it "
             "(the premise: at least %.2f): %s", a_what, a->seconds * 1e6, b_what,
             b->seconds * 1e6, ratio, least, then);
}

void rl_premise_hides_under_to_fail(rl_premise *pr, double inner_s, const char *inner_what,
                                    double outer_s, const char *outer_what, double most,
                                    const char *then)
{
    if (!pr->met_to_fail)
        return;
    if (!(inner_s > 0) || !(outer_s > 0)) {
        char why[256];
        snprintf(why, sizeof why, "%s or %s was not timed, so whether the one hides under the "
                 "other (the claim's premise) is not known", inner_what, outer_what);
        rl_premise_not_known(pr, true, why);
        return;
    }
    double share = inner_s / outer_s;
    if (share <= most)
        return;
    pr->met_to_fail = false;
    snprintf(pr->why_to_fail, sizeof pr->why_to_fail, "%s takes %.0f us, %s %.0f us: %.2f of it "
             "(the premise: at most %.2f): %s", inner_what, inner_s * 1e6, outer_what,
             outer_s * 1e6, share, most, then);
}

void rl_premise_room_under_mfu(rl_ctx *ctx, rl_premise *pr, const rl_point *p, double bound,
                               const char *what)
{
    if (!pr->met || !p || !(bound > 0))
        return;
    /* room twice over: both sides of the comparison are measured, and a
     * ridge that moves with the minute's bandwidth must not carry the
     * premise across the bound from one run to the next */
    enum { ROOM = 2 };
    double at_roof = rl_point_mfu(ctx, p) / rl_point_mbu(ctx, p);
    if (isnan(at_roof) || ROOM * at_roof <= bound)
        return;
    double ai = rl_arith_intensity(p->flops, p->bytes);
    pr->met = false;
    snprintf(pr->why, sizeof pr->why, "%s at its memory roof would use %.1f %% of the compute "
             "peak (%.2f FLOP/B over a ridge of %.1f FLOP/B at that roof), not under half the "
             "bound of %.1f %% (the room the premise asks, as both are measured): %s, so the "
             "claim, made for a ridge far above its AI, is not judged",
             what, 100 * at_roof, ai, ai / at_roof, 100 * bound,
             at_roof < bound ? "a memory-bound kernel meets it only by the width of this "
                               "minute's bandwidth"
                             : "no memory-bound kernel can meet it here, and a faster one fails "
                               "it sooner");
}

void rl_premise_outlasts_fixed_cost(rl_ctx *ctx, rl_premise *pr, const rl_point *p, double launches,
                                    double launch_s, double multiple, const char *what,
                                    const char *launch_what)
{
    if (!pr->met || !p)
        return;
    double roof = rl_point_roof_gbps(ctx, p), at_roof = p->bytes / (roof * 1e9), fixed = launches * launch_s;
    if (!(fixed > 0) || !(at_roof > 0)) {
        pr->met = false;
        snprintf(pr->why, sizeof pr->why, "%s: %s was not measured (%s): whether its bytes outlast "
                 "its launches is unknown", what, !(fixed > 0) ? "the fixed cost of its launches"
                 : "its roof", launch_what);
        return;
    }
    if (at_roof >= multiple * fixed)
        return;
    char roof_text[160];
    rl_point_roof_text(ctx, p, roof_text, sizeof roof_text);
    pr->met = false;
    snprintf(pr->why, sizeof pr->why, "%s: its %.1f MiB at the roof (%.1f GB/s, %s) take %.2f us, "
             "under %gx its fixed cost of %.2f us (%g x %.2f us, %s): the launch, not the bytes, "
             "sets its time", what, p->bytes / 1048576, roof, roof_text, at_roof * 1e6, multiple,
             fixed * 1e6, launches, launch_s * 1e6, launch_what);
}

/* ---- the bound a point hit instead of its memory roof ------------------------------ */

/* Whether p reads below the claim's premise; if so, why in buf, naming
 * what bound it instead. MFU over MBU is AI over the ridge at the roofs
 * measured beside p, so that ridge is AI x MBU / MFU: at or above it p
 * is compute-bound; below it neither roof sets its time, its own
 * instructions do (conversions, multiply-adds, loads per byte). */
static bool below_roof_naming(rl_ctx *ctx, const rl_claim *c, const rl_point *p, const char *what,
                              const char *then, char *buf, size_t len)
{
    if (!p || !(c->premise_mbu > 0))
        return false;
    double mbu = rl_point_mbu(ctx, p), mfu = rl_point_mfu(ctx, p);
    if (isnan(mbu) || mbu >= c->premise_mbu)
        return false;
    double ai = rl_arith_intensity(p->flops, p->bytes), ridge = ai * mbu / mfu;
    char bound[400];
    if (!(ridge > 0) || !isfinite(ridge))
        snprintf(bound, sizeof bound, "and its compute roof was not measured, so which bound it "
                 "hit is not known; %s", then);
    else if (ai >= ridge)
        snprintf(bound, sizeof bound, "the compute roof does (AI %.1f FLOP/B, at or above the "
                 "ridge beside it, %.1f; MFU %.2f); %s", ai, ridge, mfu, then);
    else
        snprintf(bound, sizeof bound, "nor the compute roof (AI %.1f FLOP/B, under the ridge "
                 "beside it, %.1f; MFU %.2f): its own instructions do (conversions, multiply-adds, "
                 "loads); %s", ai, ridge, mfu, then);
    below_roof(ctx, c, p, what, "", buf, len);
    rl_appendf(buf, len, "%s", bound); /* may be cut at len, as any note */
    return true;
}

void rl_premise_at_memory_roof(rl_ctx *ctx, rl_premise *pr, const rl_claim *c, const rl_point *p,
                               const char *what)
{
    if (unchecked(ctx, pr, c, p, what, false))
        return;
    if (pr->met &&
        below_roof_naming(ctx, c, p, what, "so the claim is not judged on it", pr->why,
                          sizeof pr->why))
        pr->met = false;
}

void rl_premise_at_memory_roof_to_fail(rl_ctx *ctx, rl_premise *pr, const rl_claim *c,
                                       const rl_point *p, const char *what)
{
    if (unchecked(ctx, pr, c, p, what, true))
        return;
    if (pr->met_to_fail &&
        below_roof_naming(ctx, c, p, what, "so a failure of the claim would be that bound's, not "
                          "the bytes'", pr->why_to_fail, sizeof pr->why_to_fail))
        pr->met_to_fail = false;
}

/* Where a point was timed, for the note: "group 3", "alone". */
static void group_text(const rl_point *p, char *buf, size_t len)
{
    if (p->group)
        snprintf(buf, len, "group %d, %d samples", p->group, p->m.stats.samples);
    else
        snprintf(buf, len, "alone, %d samples", p->m.stats.samples);
}

void rl_premise_same_group(rl_premise *pr, const rl_point *a, const rl_point *b,
                           const char *what)
{
    if (!pr->met)
        return;
    if (!a || !b || !rl_point_timed(a) || !rl_point_timed(b)) {
        pr->met = false;
        snprintf(pr->why, sizeof pr->why, "%s: %s not timed, so not timed together", what,
                 !a || !b ? "a point is missing" : "a point was");
        return;
    }
    if (a->group && a->group == b->group && a->m.stats.samples == b->m.stats.samples)
        return;
    char ga[64], gb[64];
    group_text(a, ga, sizeof ga);
    group_text(b, gb, sizeof gb);
    pr->met = false;
    snprintf(pr->why, sizeof pr->why, "%s were not timed in one group, round by round (%s; %s): "
             "their ratio would carry what drifted between their timings, so the claim is not "
             "judged on it", what, ga, gb);
}
