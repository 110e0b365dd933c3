/*
 * rl_verdicts.h -- the claims an experiment declares and the verdicts it
 * judges on its points: a claim's range and premise, and the judge
 * calls. A room of rooflab.h: experiments get it through rooflab.h;
 * verdict.c, claims.c, premise.c and their tests use it with it.
 */
#ifndef RL_VERDICTS_H
#define RL_VERDICTS_H

#include "rl_library.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rl_ctx rl_ctx;
typedef struct rl_point rl_point;

/* A claim, declared once: the verdict's id and text, the range in which it
 * holds (+-INFINITY: no bound), how its value prints, and whether it is a
 * utilization (then "not measured" while a roof stays under-measured). The
 * prediction, the predicted column and the check all come from it. */
typedef struct rl_claim {
    const char *id, *text;
    double lo, hi;
    const char *unit;           /* "x", "%", "FLOP/B", "" */
    int digits;
    bool on_ceiling;
    const char *predicted_text; /* instead of the range's text, e.g. "within +-15 %" */
    /* A count or a model, not a timing: judged even on a busy host (every
     * other claim is "not measured (busy host)" there, claims.c). */
    bool counted;
    /* A claim about memory-bound points: judged only where each point it
     * compares reads at least this fraction of its roof (0: no premise). */
    double premise_mbu;
} rl_claim;

/* ------------------------------------------------------------------------
 * Verdicts (verdict.c)
 * ---------------------------------------------------------------------- */
/* RL_PREMISE_NOT_MET: the points were measured, but not under the claim's
 * premise (a memory-bound claim whose points are far below their roof, a
 * baseline slower than its bytes allow): the claim is not judged, and the
 * note names the point and what it measured. Counted apart everywhere. */
typedef enum rl_verdict_status {
    RL_HOLDS, RL_DOES_NOT_HOLD, RL_NOT_MEASURED, RL_PREMISE_NOT_MET,
    RL_NOT_MEASURED_BUSY /* "not measured (busy host)": other processes took the CPUs */
} rl_verdict_status;

/* A declared claim judged on a value (NaN: not measured); scope, when
 * given, is added to its id ("_cos") and text (" (cos)"). _within: with
 * a range known only at run time; _status: a verdict decided by the
 * experiment, from a measurement that is not one number. */
void rl_judge(rl_ctx *ctx, const rl_claim *c, const char *scope, double value, const char *note);
void rl_judge_within(rl_ctx *ctx, const rl_claim *c, const char *scope, double value, double lo,
                     double hi, const char *note);
void rl_judge_status(rl_ctx *ctx, const rl_claim *c, const char *scope, const char *measured,
                     rl_verdict_status status, const char *note);
/* A claim's premise (premise.c), checked on the points it compares before
 * it is judged: start, add each check, then judge _given it, which says
 * "premise not met" with the first unmet check's reason, or judges. */
typedef struct rl_premise {
    bool met;          /* false: the claim is not judged */
    bool met_to_fail;  /* false: it may hold, but a "does not hold" is not judged */
    /* false: a point the premise reads was not timed, so the premise is
     * not known and the verdict is "not measured", never judged without it */
    bool checked;
    bool checked_to_fail; /* the same for a premise that gates a failure only */
    char why[512], why_to_fail[512], why_unchecked[256];
} rl_premise;
rl_premise rl_premise_start(void);
/* A premise that could not be checked (its point was not timed): the
 * verdict is "not measured" with why, or, to_fail, only a "does not
 * hold" is (a premise that gates a failure only). */
void rl_premise_not_known(rl_premise *pr, bool to_fail, const char *why);
/* p (what: its name in the note) reads at least c->premise_mbu of its roof. */
void rl_premise_memory_bound(rl_ctx *ctx, rl_premise *pr, const rl_claim *c, const rl_point *p,
                             const char *what);
/* The same, for the point that must be fast enough for a lower bound (a
 * speedup of at least x): below its roof it can only make the claim fail,
 * so only a "does not hold" waits for it; a "holds" stands, because a
 * faster p would widen the margin. */
void rl_premise_memory_bound_to_fail(rl_ctx *ctx, rl_premise *pr, const rl_claim *c,
                                     const rl_point *p, const char *what);
/* fast's speedup over baseline (their times' ratio) no larger than their
 * bytes' ratio allows beyond its noise band (its lo-hi, at least 5 %): a
 * larger one means the baseline, not the bytes, set it. */
void rl_premise_within_bytes(rl_premise *pr, const rl_point *baseline, const rl_point *fast,
                             const char *what);
/* An upper bound on p's MFU (bound: a fraction of the compute peak)
 * presumes that the ridge at p's memory roof leaves room under it: read
 * at that roof, p would use its AI over that ridge of the peak (MFU over
 * MBU). Where that alone reaches the bound, no memory-bound kernel can
 * meet it and a faster one fails it sooner: the bound is the machine's
 * ridge, not the claim. The room asked is twice over (at the roof at
 * most half the bound): the ridge and the bound are both measured, and
 * a ridge that moves with the minute's bandwidth must not judge the
 * claim in one run and not in the next. */
void rl_premise_room_under_mfu(rl_ctx *ctx, rl_premise *pr, const rl_point *p, double bound,
                               const char *what);
/* A claim on a short call's MBU presumes that its bytes at its roof
 * (rl_point_roof_gbps) take at least `multiple` times its fixed cost:
 * launches (GPU kernel launches, CPU parallel regions) per call, each
 * launch_s (an empty one's time, measured in the same run: launch_what
 * says how, for the note). Where they do not, the launch sets the time,
 * not the bytes; where launch_s is not known (NaN, 0), neither is the
 * premise, and the claim is not judged either. */
void rl_premise_outlasts_fixed_cost(rl_ctx *ctx, rl_premise *pr, const rl_point *p, double launches,
                                    double launch_s, double multiple, const char *what,
                                    const char *launch_what);
/* Two points that do the same work by the claim's account (the same
 * bytes, the same tiles) take about the same time: t_a / t_b at least
 * `least`, else a failure of the claim would be the cause the note gives
 * (then), not the claim's: only a "does not hold" waits for it. a or b
 * not timed: the premise is not known (rl_premise_not_known, to fail). */
void rl_premise_times_alike_to_fail(rl_premise *pr, const rl_point *a, const char *a_what,
                                    const rl_point *b, const char *b_what, double least,
                                    const char *then);
/* A cost that the claim presumes hidden under another (a kernel's
 * arithmetic under its memory time): inner_s / outer_s at most `most`,
 * else a failure would be the cause the note gives (then): only a "does
 * not hold" waits for it. Either time NaN or 0: not known (to fail). */
void rl_premise_hides_under_to_fail(rl_premise *pr, double inner_s, const char *inner_what,
                                    double outer_s, const char *outer_what, double most,
                                    const char *then);
/* a and b, which the claim compares (what: their names in the note),
 * were timed in one group, interleaved round by round with the same
 * samples: their ratio then cancels what drifts between minutes (a
 * clock, a neighbour, the cache another call left). Points timed apart
 * (group 0, or two groups), or one not timed, leave it unmet. */
void rl_premise_same_group(rl_premise *pr, const rl_point *a, const rl_point *b,
                           const char *what);
void rl_judge_given(rl_ctx *ctx, const rl_claim *c, const char *scope, double value,
                    const rl_premise *pr, const char *note);
/* rl_judge_given with a range known only at run time, as rl_judge_within. */
void rl_judge_within_given(rl_ctx *ctx, const rl_claim *c, const char *scope, double value,
                           double lo, double hi, const rl_premise *pr, const char *note);
void rl_judge_status_given(rl_ctx *ctx, const rl_claim *c, const char *scope, const char *measured,
                           rl_verdict_status status, const rl_premise *pr, const char *note);
/* A claim on a ratio of two times (rl_time_ratio), judged so that it does
 * not turn with the noise: on the median where the ratio's whole spread
 * (lo to hi) lies on one side of each of the claim's bounds; "not
 * measured" where the spread straddles a bound (a rerun could give either
 * verdict), the note naming the bound and the spread. A premise not met
 * comes first. (rl_ratio: rl_points.h.) */
struct rl_ratio;
void rl_judge_ratio_given(rl_ctx *ctx, const rl_claim *c, const char *scope, struct rl_ratio r,
                          const rl_premise *pr, const char *note);
/* The same, with a range known only at run time (a model's), as
 * rl_judge_within: the spread is held against lo and hi. */
void rl_judge_ratio_within_given(rl_ctx *ctx, const rl_claim *c, const char *scope,
                                 struct rl_ratio r, double lo, double hi, const rl_premise *pr,
                                 const char *note);
/* RL_HOLDS when lo <= x <= hi; RL_NOT_MEASURED when x or a bound is NaN. */
rl_verdict_status rl_within(double x, double lo, double hi);
/* rl_premise_memory_bound, and where p reads under c->premise_mbu of its
 * memory roof the note names the bound it hit instead: the compute roof
 * (its AI at or above the ridge measured beside it, AI x MBU / MFU) or,
 * its AI under that ridge, its own instructions (premise.c). _to_fail:
 * as rl_premise_memory_bound_to_fail, for the point that can only make
 * the claim fail (the slower side of an upper bound on a ratio). */
void rl_premise_at_memory_roof(rl_ctx *ctx, rl_premise *pr, const rl_claim *c, const rl_point *p,
                               const char *what);
void rl_premise_at_memory_roof_to_fail(rl_ctx *ctx, rl_premise *pr, const rl_claim *c,
                                       const rl_point *p, const char *what);

#ifdef __cplusplus
}
#endif
#endif /* RL_VERDICTS_H */
