/*
 * claims.c -- an experiment's claims as data: each declared once (id,
 * text, the range in which it holds, how its value prints), and from that
 * one declaration the harness writes the prediction in the CSV header, the
 * "predicted" column of the verdict table, and the verdict itself.
 */
#include "internal.h"
#include "rl_ctx_clock.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void value_text(const rl_claim *c, double v, char *buf, size_t len)
{
    const char *unit = c->unit ? c->unit : "";
    if (!strcmp(unit, "%"))
        snprintf(buf, len, "%.*f %%", c->digits, v);
    else
        snprintf(buf, len, "%.*f%s%s", c->digits, v, unit[0] && unit[0] != 'x' ? " " : "", unit);
}

/* "1.7x to 2.3x", ">= 2.5x", "< 5 %", "within +-15 %"-style texts come
 * from the range; a claim may name its own (predicted_text). */
static void rl_claim_predicted(const rl_claim *c, double lo, double hi, char *buf, size_t len)
{
    char a[48], b[48];
    if (c->predicted_text) {
        snprintf(buf, len, "%s", c->predicted_text);
        return;
    }
    value_text(c, lo, a, sizeof a);
    value_text(c, hi, b, sizeof b);
    if (isinf(hi) && isinf(lo))
        snprintf(buf, len, "any");
    else if (isinf(hi))
        snprintf(buf, len, ">= %s", a);
    else if (isinf(lo) || lo == 0)
        snprintf(buf, len, "<= %s", b);
    else
        snprintf(buf, len, "%s to %s", a, b);
}

/* A timing judged while other processes took the CPUs is theirs as much
 * as the kernel's, and a roof measured then is low: on a 2-core machine,
 * one core spinning elsewhere halves what an OpenMP kernel gets, and it
 * may get it at another minute than its roof did. So a claim on timings
 * is judged only when other processes kept, on average since the run
 * began, at most BUSY_CPUS busy; otherwise it is "not measured (busy
 * host)", never the opposite verdict. ROOFLAB_HOST_BUSY=ignore judges
 * regardless (the tests, which run beside each other by design). */
static const double BUSY_CPUS = 0.25;

static bool busy_host(rl_ctx *ctx, const rl_claim *c, char *why, size_t len)
{
    if (c->counted || rl_busy_gates_off())
        return false;
    double others = rl_others_busy_cpus_since(&rl_clock_room(ctx)->busy_mark);
    if (!(others > BUSY_CPUS))
        return false;
    snprintf(why, len, "busy host: other processes kept %.2f CPUs busy on average during the "
             "run (at most %.2f judges)", others, BUSY_CPUS);
    return true;
}

/* The verdict of one claim, through the gates every claim passes: a busy
 * host, then an under-measured ceiling for a utilization. */
static void verdict_of(rl_ctx *ctx, const rl_claim *c, const char *id, const char *text,
                       const char *predicted, const char *measured, rl_verdict_status st,
                       const char *note)
{
    char why[400];
    if (st != RL_NOT_MEASURED && busy_host(ctx, c, why, sizeof why)) {
        char both[1400];
        snprintf(both, sizeof both, "%s%s%s", why, note && *note ? "; " : "", note ? note : "");
        rl_verdict(ctx, id, text, predicted, measured, RL_NOT_MEASURED_BUSY, both);
    } else if (c->on_ceiling) {
        rl_verdict_on_ceiling(ctx, id, text, predicted, measured, st, note);
    } else {
        rl_verdict(ctx, id, text, predicted, measured, st, note);
    }
}

/* "fused_speedup" + "cos" -> "fused_speedup_cos"; the text gets " (cos)". */
static void scoped(const rl_claim *c, const char *scope, char *id, size_t idlen, char *text,
                   size_t textlen)
{
    bool s = scope && *scope;
    snprintf(id, idlen, "%s%s%s", c->id, s ? "_" : "", s ? scope : "");
    snprintf(text, textlen, "%s%s%s%s", c->text, s ? " (" : "", s ? scope : "", s ? ")" : "");
}

void rl_judge_within(rl_ctx *ctx, const rl_claim *c, const char *scope, double value, double lo,
                     double hi, const char *note)
{
    char id[96], text[256], predicted[128], measured[64] = "-";
    scoped(c, scope, id, sizeof id, text, sizeof text);
    rl_claim_predicted(c, lo, hi, predicted, sizeof predicted);
    if (!isnan(value))
        value_text(c, value, measured, sizeof measured);
    verdict_of(ctx, c, id, text, predicted, measured, rl_within(value, lo, hi), note);
}

void rl_judge(rl_ctx *ctx, const rl_claim *c, const char *scope, double value, const char *note)
{
    rl_judge_within(ctx, c, scope, value, c->lo, c->hi, note);
}

void rl_judge_status(rl_ctx *ctx, const rl_claim *c, const char *scope, const char *measured,
                     rl_verdict_status status, const char *note)
{
    char id[96], text[256], predicted[128];
    scoped(c, scope, id, sizeof id, text, sizeof text);
    rl_claim_predicted(c, c->lo, c->hi, predicted, sizeof predicted);
    verdict_of(ctx, c, id, text, predicted, measured, status, note);
}

/* A premise not met turns a measured verdict into "premise not met", its
 * reason first in the note; the busy-host gate still comes first. */
static void judge_given(rl_ctx *ctx, const rl_claim *c, const char *scope, double lo, double hi,
                        const char *measured, rl_verdict_status st, const rl_premise *pr,
                        const char *note)
{
    char id[96], text[256], predicted[128], both[800];
    scoped(c, scope, id, sizeof id, text, sizeof text);
    rl_claim_predicted(c, lo, hi, predicted, sizeof predicted);
    const char *unmet = !pr ? NULL : !pr->met && st != RL_NOT_MEASURED ? pr->why
                        : !pr->met_to_fail && st == RL_DOES_NOT_HOLD ? pr->why_to_fail : NULL;
    bool not_known = pr && st != RL_NOT_MEASURED &&
                     (!pr->checked || (!pr->checked_to_fail && st == RL_DOES_NOT_HOLD));
    if (!unmet && not_known) {
        snprintf(both, sizeof both, "%s%s%s", pr->why_unchecked, note && *note ? "; " : "",
                 note ? note : "");
        st = RL_NOT_MEASURED;
        note = both;
    } else if (unmet) {
        snprintf(both, sizeof both, "%s%s%s", unmet, note && *note ? "; " : "", note ? note : "");
        st = RL_PREMISE_NOT_MET;
        note = both;
    }
    verdict_of(ctx, c, id, text, predicted, measured, st, note);
}

void rl_judge_within_given(rl_ctx *ctx, const rl_claim *c, const char *scope, double value,
                           double lo, double hi, const rl_premise *pr, const char *note)
{
    char measured[64] = "-";
    if (!isnan(value))
        value_text(c, value, measured, sizeof measured);
    judge_given(ctx, c, scope, lo, hi, measured, rl_within(value, lo, hi), pr, note);
}

void rl_judge_given(rl_ctx *ctx, const rl_claim *c, const char *scope, double value,
                    const rl_premise *pr, const char *note)
{
    rl_judge_within_given(ctx, c, scope, value, c->lo, c->hi, pr, note);
}

void rl_judge_status_given(rl_ctx *ctx, const rl_claim *c, const char *scope, const char *measured,
                           rl_verdict_status status, const rl_premise *pr, const char *note)
{
    judge_given(ctx, c, scope, c->lo, c->hi, measured, status, pr, note);
}

/* The bound of [lo, hi] that the spread [a, b] reaches across: some of
 * its ratios in the range and some out (a rerun's could fall on either
 * side), or NaN. A bound belongs to the range: a spread from below that
 * reaches lo crosses it. */
static double bound_straddled(double a, double b, double lo, double hi)
{
    if (isfinite(lo) && a < lo && lo <= b)
        return lo;
    if (isfinite(hi) && a <= hi && hi < b)
        return hi;
    return NAN;
}

void rl_judge_ratio_given(rl_ctx *ctx, const rl_claim *c, const char *scope, rl_ratio r,
                          const rl_premise *pr, const char *note)
{
    rl_judge_ratio_within_given(ctx, c, scope, r, c->lo, c->hi, pr, note);
}

void rl_judge_ratio_within_given(rl_ctx *ctx, const rl_claim *c, const char *scope, rl_ratio r,
                                 double lo, double hi, const rl_premise *pr, const char *note)
{
    char measured[96] = "-", a[48], b[48];
    double lo_end = fmin(r.lo, r.hi), hi_end = fmax(r.lo, r.hi);
    if (!isnan(r.median)) {
        value_text(c, r.median, measured, sizeof measured);
        if (!isnan(lo_end) && !isnan(hi_end)) {
            value_text(c, lo_end, a, sizeof a);
            value_text(c, hi_end, b, sizeof b);
            rl_appendf(measured, sizeof measured, " (%s to %s)", a, b);
        }
    }
    rl_verdict_status st = rl_within(r.median, lo, hi);
    double bound = bound_straddled(lo_end, hi_end, lo, hi);
    bool premise_first = pr && !pr->met; /* a premise not met says more than the noise */
    if (st != RL_NOT_MEASURED && !isnan(bound) && !premise_first) {
        char why[900], edge[48];
        value_text(c, bound, edge, sizeof edge);
        snprintf(why, sizeof why, "the spread of the ratio, %s to %s (its q1-q3: the rounds' "
                 "ratios where both were timed together, else both times at opposite ends of "
                 "theirs), straddles the claim's bound %s: a rerun could turn the "
                 "verdict; more samples (a lab or full run) narrow it%s%s", a, b, edge,
                 note && *note ? "; " : "", note ? note : "");
        judge_given(ctx, c, scope, lo, hi, measured, RL_NOT_MEASURED, NULL, why);
        return;
    }
    judge_given(ctx, c, scope, lo, hi, measured, st, pr, note);
}

void rl_claims_not_judged(rl_ctx *ctx, const char *why)
{
    for (const rl_claim *c = ctx->exp->claims; c && c->id; c++) {
        if (rl_verdict_judged(ctx, c->id))
            continue;
        char predicted[128], note[256];
        rl_claim_predicted(c, c->lo, c->hi, predicted, sizeof predicted);
        snprintf(note, sizeof note, "%s: its points were not measured", why);
        rl_verdict(ctx, c->id, c->text, predicted, "-", RL_NOT_MEASURED, note);
    }
}

/* The prediction in the CSV header and the story: every claim and its range. */
void rl_claims_prediction(const rl_experiment *e, char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "%s", e->prediction ? e->prediction : "");
    for (const rl_claim *c = e->claims; c && c->id && used < len; c++) {
        char predicted[128];
        rl_claim_predicted(c, c->lo, c->hi, predicted, sizeof predicted);
        used += (size_t)snprintf(buf + used, len - used, "%s%s: %s", used ? "; " : "", c->text,
                                 predicted);
        if (c->premise_mbu > 0 && used < len)
            used += (size_t)snprintf(buf + used, len - used, " (judged where its points read "
                                     "at least %.2f of their roof)", c->premise_mbu);
    }
}
