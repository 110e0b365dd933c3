/*
 * points.c -- the pipeline every measured point goes through.
 *
 * An experiment declares its points: one call of one variant on one
 * input, with the bytes and FLOPs the call moves and the group of points
 * it is compared with. The harness then does the rest, the same way for
 * every experiment:
 *   1. validates every point on fresh inputs before anything is timed (a
 *      failed point is reported, counted, and never timed);
 *   2. times each group of valid points interleaved (rl_measure_group);
 *   3. derives GB/s, TFLOP/s, the roof and MBU, MFU;
 *   4. writes one CSV row and one console line per point, from the
 *      experiment's declared columns (columns.c).
 */
#include "internal.h"
#include "rl_ctx_parts.h"
#include "rl_ctx_plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

rl_point *rl_points_add(rl_points *s, const rl_point *p)
{
    s->v = rl_grow(s->v, s->n, &s->cap, 64, sizeof *s->v, "points");
    rl_point *q = &s->v[s->n++];
    *q = *p;
    q->state = RL_POINT_DECLARED;
    q->seconds = q->max_abs_err = NAN;
    q->roof = rl_group_roof_none();
    return q;
}

void rl_points_free(rl_points *s)
{
    free(s->v);
    *s = (rl_points){0};
}

int rl_points_new_group(rl_points *s) { return ++s->last_group; }

/* ---- 1. validate ------------------------------------------------------------------ */

/* The call a point times: its kernel call, or its own work. */
static kernel_call timed_call(const rl_point *p)
{
    return p->call.run ? p->call : (kernel_call){p->run, p->arg};
}

/* The call its validation makes: the one timed unless it names another. */
static kernel_call checked_call(const rl_point *p)
{
    if (p->check_call.run)
        return p->check_call;
    return p->check_run ? (kernel_call){p->check_run, p->check_arg} : timed_call(p);
}

static rl_check check_point(rl_ctx *ctx, rl_point *p)
{
    if (p->prepare)
        p->prepare(ctx, p);
    if (!p->out || !p->want)
        rl_die(RL_EXIT_FAILED, "internal error: exp-%s: a point without out and want to validate",
               ctx->exp->id);
    kernel_call c = checked_call(p);
    void (*run)(void *) = c.run;
    void *arg = c.call;
    if (p->in_place)
        return rl_validate_f32_in_place(ctx->be, run, arg, p->out, p->count, p->want, p->bound,
                                        p->atol, p->rtol);
    if (p->bound)
        return rl_validate_f32_bound(ctx->be, run, arg, p->out, p->count, p->want, p->bound);
    return rl_validate_f32(ctx->be, run, arg, p->out, p->count, p->want, p->atol, p->rtol);
}

static void report_failure(rl_ctx *ctx, rl_point *p)
{
    char key[256];
    rl_point_key(ctx, p, key, sizeof key);
    fprintf(stderr, "exp-%s: %s%s%s\n", ctx->exp->id, key, key[0] ? ": " : "", p->why);
    ctx->failures++;
}

void rl_point_validate(rl_ctx *ctx, rl_point *p)
{
    if (p->state != RL_POINT_DECLARED)
        return;
    if (rl_stop_requested()) { /* a reference can take seconds of the 5 a cap leaves */
        rl_point_stop(p, "before it was validated");
        return;
    }
    if (p->check) {
        p->max_abs_err = NAN;
        p->state = p->check(ctx, p) ? RL_POINT_VALID : RL_POINT_FAILED;
        if (p->state == RL_POINT_FAILED)
            report_failure(ctx, p);
        return;
    }
    rl_check c = check_point(ctx, p);
    if (p->frees_want) { /* a large reference lives only while its point is checked */
        rl_host_free((void *)p->want);
        p->want = NULL;
    }
    p->max_abs_err = c.max_abs_err;
    if (c.ok) {
        p->state = RL_POINT_VALID;
        return;
    }
    p->state = RL_POINT_FAILED;
    rl_check_describe(&c, p->why, sizeof p->why);
    report_failure(ctx, p);
}

/* ---- 2. time, group by group ------------------------------------------------------- */

static bool seen_before(const rl_points *s, int i)
{
    for (int j = 0; j < i; j++)
        if (s->v[j].group == s->v[i].group && s->v[i].group != 0)
            return true;
    return false;
}

/* Each member's times round by round, for ratios between members
 * (rl_time_ratio); timing tells one group timing from another. */
static void keep_rounds(rl_ctx *ctx, const rl_rounds *r, rl_point *const *members, int n)
{
    static int timings;
    timings++;
    for (int i = 0; i < n; i++) {
        double *t = rl_keep(ctx, sizeof(double) * (size_t)(r->rounds > 0 ? r->rounds : 1));
        memcpy(t, r->t + (size_t)i * r->stride, sizeof(double) * (size_t)r->rounds);
        members[i]->round_s = t;
        members[i]->rounds = r->rounds;
        members[i]->timing = timings;
    }
}

static void time_group(rl_ctx *ctx, rl_points *s, int first)
{
    int g = s->v[first].group, n = 0;
    for (int i = first; i < s->n; i++)
        n += (i == first || (g && s->v[i].group == g)) && s->v[i].state == RL_POINT_VALID;
    if (n == 0)
        return;
    rl_work *works = calloc((size_t)n + RL_GROUP_PROBES, sizeof *works);
    rl_point **members = calloc((size_t)n, sizeof *members);
    rl_measurement *m = calloc((size_t)n + RL_GROUP_PROBES, sizeof *m);
    if (!works || !members || !m)
        rl_die(RL_EXIT_FAILED, "out of memory for a group");
    n = 0;
    for (int i = first; i < s->n; i++) {
        rl_point *p = &s->v[i];
        if ((i == first || (g && p->group == g)) && p->state == RL_POINT_VALID) {
            members[n] = p;
            kernel_call c = timed_call(p);
            works[n++] = (rl_work){p->variant ? p->variant->name : "point", c.run, c.call, p->footprint};
        }
    }
    char key[256];
    rl_point_key(ctx, members[0], key, sizeof key);
    rl_progress_step(ctx, "%s%s", key, n > 1 ? " and its group" : "");
    rl_group_probes probes;
    int extra = rl_group_probes_open(ctx, members, n, &probes, works + n);
    rl_rounds rounds;
    rl_measure_group(ctx, works, n + extra, m, &rounds);
    rl_group_probes_close(ctx, &probes, m, &rounds, members, n);
    keep_rounds(ctx, &rounds, members, n);
    rl_rounds_free(&rounds);
    /* A group SIGTERM cut short has too few rounds, and its probes' pairs
     * are unfinished: none of it is a measurement. */
    bool cut = false;
    for (int i = 0; i < n + extra; i++)
        cut |= m[i].stop == RL_STOP_SIGNAL;
    for (int i = 0; i < n; i++) {
        if (cut) {
            rl_point_stop(members[i], "while its group was timed");
            continue;
        }
        members[i]->m = m[i];
        members[i]->seconds = m[i].stats.median;
        members[i]->state = RL_POINT_TIMED;
    }
    free(works);
    free(members);
    free(m);
}

void rl_points_validate(rl_ctx *ctx, rl_points *s)
{
    for (int i = 0; i < s->n; i++)
        rl_point_validate(ctx, &s->v[i]);
}

void rl_point_observed(rl_point *p)
{
    if (p->state == RL_POINT_VALID)
        p->state = RL_POINT_TIMED;
}

bool rl_points_same_group(const rl_points *s, int first, int j)
{
    return j == first || (s->v[first].group && s->v[j].group == s->v[first].group);
}

bool rl_points_group_needed(const rl_points *s, int first)
{
    for (int j = first; j < s->n; j++)
        if (rl_points_same_group(s, first, j) && !s->v[j].optional)
            return true;
    return false;
}

int rl_points_leaders(const rl_points *s, int *out)
{
    int n = 0;
    for (int i = 0; i < s->n; i++)
        if (!seen_before(s, i))
            out[n++] = i;
    return n;
}

void rl_points_stop_group(rl_points *s, int first)
{
    for (int j = first; j < s->n; j++)
        if (rl_points_same_group(s, first, j) &&
            (s->v[j].state == RL_POINT_DECLARED || s->v[j].state == RL_POINT_VALID))
            rl_point_stop(&s->v[j], "before its group was timed");
}

/* Validated just before it is timed, so that a group a budget leaves out
 * costs no reference either. */
void rl_points_run_group(rl_ctx *ctx, rl_points *s, int first)
{
    int leader = -1; /* the group's first valid point leads its timing */
    for (int j = first; j < s->n; j++)
        if (rl_points_same_group(s, first, j)) {
            rl_point_validate(ctx, &s->v[j]);
            if (leader < 0 && s->v[j].state == RL_POINT_VALID)
                leader = j;
        }
    if (leader >= 0)
        time_group(ctx, s, leader);
}

/* ---- a run asked to stop ------------------------------------------------------------ */

void rl_point_stop(rl_point *p, const char *when)
{
    p->state = RL_POINT_SKIPPED;
    snprintf(p->why, sizeof p->why, "not run: " RL_STOPPED_WHY " %s", when);
}

bool rl_point_stopped(const rl_point *p)
{
    return p->state == RL_POINT_SKIPPED && !strncmp(p->why, "not run: " RL_STOPPED_WHY,
                                                    strlen("not run: " RL_STOPPED_WHY));
}

void rl_points_count_measured(const rl_ctx *ctx, int *measured, int *declared)
{
    const rl_points *all = &rl_parts_room(ctx)->points;
    *measured = 0;
    for (int i = 0; i < all->n; i++)
        *measured += rl_point_timed(&all->v[i]);
    *declared = all->n;
}

/* ---- 3. lookups and rates ----------------------------------------------------------- */

void *rl_point_data(const rl_point *p, size_t size, const char *type)
{
    if (!p->data || p->data_size != size)
        rl_die(RL_EXIT_FAILED, "internal error: a point's data is not a %s (%zu bytes, not %zu)",
               type, p->data_size, size);
    return (void *)p->data;
}

bool rl_point_timed(const rl_point *p) { return p->state == RL_POINT_TIMED; }

bool rl_point_has_role(const rl_point *p, const char *role) { return kernel_has_role(p->variant, role); }

static bool selected(const rl_point *p, const char *role, rl_point_filter match, const void *key)
{
    if (!rl_point_timed(p) || (role && !rl_point_has_role(p, role)))
        return false;
    return !match || match(p, key);
}

static bool in_group(const rl_point *p, const void *group) { return p->group == *(const int *)group; }

const rl_point *rl_points_in_group(const rl_points *s, int group, const char *role)
{
    return rl_points_find(s, role, in_group, &group);
}

const rl_point *rl_points_find(const rl_points *s, const char *role, rl_point_filter match,
                               const void *key)
{
    for (int i = 0; i < s->n; i++)
        if (selected(&s->v[i], role, match, key))
            return &s->v[i];
    return NULL;
}

const rl_point *rl_points_find_last(const rl_points *s, const char *role, rl_point_filter match,
                                    const void *key)
{
    for (int i = s->n - 1; i >= 0; i--)
        if (selected(&s->v[i], role, match, key))
            return &s->v[i];
    return NULL;
}

const rl_point *rl_points_fastest(const rl_points *s, const char *role, rl_point_filter match,
                                  const void *key)
{
    const rl_point *best = NULL;
    for (int i = 0; i < s->n; i++)
        if (selected(&s->v[i], role, match, key) && (!best || s->v[i].seconds < best->seconds))
            best = &s->v[i];
    return best;
}

/* a beats b: a number beats NaN, and a larger number a smaller one. */
static bool higher(double a, double b) { return !isnan(a) && (isnan(b) || a > b); }

const rl_point *rl_points_best(const rl_points *s, const char *role, rl_point_filter match,
                               const void *key, double (*score)(const rl_point *p))
{
    const rl_point *best = NULL;
    for (int i = 0; i < s->n; i++) {
        const rl_point *p = &s->v[i];
        if (selected(p, role, match, key) && (!best || higher(score(p), score(best))))
            best = p;
    }
    return best;
}

double rl_point_gbps(const rl_point *p)
{
    return rl_point_timed(p) && p->bytes > 0 ? p->bytes / p->seconds / 1e9 : NAN;
}

double rl_point_tflops(const rl_point *p)
{
    return rl_point_timed(p) && p->flops > 0 ? p->flops / p->seconds / 1e12 : NAN;
}

rl_roof rl_point_roof(rl_ctx *ctx, const rl_point *p)
{
    return rl_roof_for(ctx, p->footprint, p->pattern);
}

double rl_point_roof_gbps(rl_ctx *ctx, const rl_point *p)
{
    if (isfinite(p->roof.gbps))
        return p->roof.gbps;
    rl_roof roof = rl_point_roof(ctx, p);
    return rl_roof_rung_gbps(&roof, rl_point_gbps(p));
}

/* A probe's judgement: the ratio round by round where the rounds were
 * kept, else the ratio of the medians; the check for a beaten probe
 * always against the probe's own spread. */
static double of_probe(rl_ctx *ctx, double achieved, double probe, double probe_hi, double paired,
                       const char *what, const char *unit)
{
    double u = rl_utilization_of_probe(ctx, achieved, probe, probe_hi, what, unit);
    return isfinite(paired) ? paired : u;
}

/* Against the group's probe where it had one (the roof of the same
 * minute and footprint), else the run-start ladder's rung. */
double rl_point_mbu(rl_ctx *ctx, const rl_point *p)
{
    double g = rl_point_gbps(p);
    if (isnan(g))
        return NAN;
    if (isfinite(p->roof.gbps))
        return of_probe(ctx, g, p->roof.gbps, p->roof.gbps_q3, p->roof.mbu, "bandwidth", "GB/s");
    rl_roof roof = rl_point_roof(ctx, p);
    return rl_mbu(ctx, g, &roof);
}

/* A utilization u (the point's rate over its roof's) and its spread. A
 * point timed round by round with its probe: the q1 and q3 of the rounds'
 * ratios. Otherwise the point's rate and the roof's each spread over their
 * q1-q3, at opposite ends, as rl_time_ratio spreads a ratio of two times
 * timed apart: the point at its slowest over the roof at its fastest, and
 * the other way round. A roof without a probe (the run-start rung) has no
 * spread: the point's alone then. */
static rl_ratio utilization_spread(double u, const rl_point *p, bool probed, double roof,
                                   double roof_q1, double roof_q3, double paired_q1,
                                   double paired_q3)
{
    if (isnan(u) || !rl_point_timed(p))
        return RL_RATIO_NONE;
    if (isfinite(paired_q1) && isfinite(paired_q3)) /* round by round: the drift cancels */
        return (rl_ratio){u, fmin(paired_q1, u), fmax(paired_q3, u)};
    const rl_stats *s = &p->m.stats;
    double roof_slow = probed ? roof_q1 / roof : 1, roof_fast = probed ? roof_q3 / roof : 1;
    rl_ratio r = {u, u * (s->median / s->q3) / roof_fast, u * (s->median / s->q1) / roof_slow};
    /* the paired median may sit outside the quartiles' band: widen it */
    r.lo = fmin(r.lo, u);
    r.hi = fmax(r.hi, u);
    return r;
}

rl_ratio rl_point_mbu_spread(rl_ctx *ctx, const rl_point *p)
{
    return utilization_spread(rl_point_mbu(ctx, p), p, isfinite(p->roof.gbps), p->roof.gbps,
                              p->roof.gbps_q1, p->roof.gbps_q3, p->roof.mbu_q1, p->roof.mbu_q3);
}

rl_ratio rl_point_mfu_spread(rl_ctx *ctx, const rl_point *p)
{
    bool probed = isfinite(p->roof.tflops) && p->roof.tflops_q1 > 0 && p->roof.tflops_q3 > 0;
    return utilization_spread(rl_point_mfu(ctx, p), p, probed, p->roof.tflops, p->roof.tflops_q1,
                              p->roof.tflops_q3, p->roof.mfu_q1, p->roof.mfu_q3);
}

rl_ratio rl_ratio_scaled(rl_ratio r, double k)
{
    return (rl_ratio){k * r.median, k * r.lo, k * r.hi};
}

rl_ratio rl_ratio_inverse(rl_ratio r)
{
    return (rl_ratio){1 / r.median, 1 / r.hi, 1 / r.lo};
}

double rl_point_mfu(rl_ctx *ctx, const rl_point *p)
{
    double t = rl_point_tflops(p);
    if (isnan(t) || p->integer_flops)
        return NAN;
    if (isfinite(p->roof.tflops))
        return of_probe(ctx, t, p->roof.tflops, p->roof.tflops_q3, p->roof.mfu, "compute",
                        "TFLOP/s");
    return rl_mfu(ctx, t);
}

/* ---- 4. the plan -------------------------------------------------------------------- */
/* The plan reads the ceilings it was handed, and the context only as a
 * const: nothing here can measure (rl_ctx_plan.h). */

/* The probes the group of point i will carry (group_roof.c decides the
 * same way): each is a member of its rounds. */
static int probes_planned(const rl_ctx *ctx, const rl_ctx_plan *plan, const rl_points *s, int i)
{
    rl_point *members[64];
    int n = 0;
    for (int j = i; j < s->n && n < 64; j++)
        if (rl_points_same_group(s, i, j))
            members[n++] = &s->v[j];
    return rl_group_probes_count(ctx, plan->ceilings, members, n);
}

static rl_plan_entry plan_group(const rl_ctx *ctx, const rl_ctx_plan *plan, const rl_points *s,
                                int i)
{
    rl_plan_entry e = {.needed = rl_points_group_needed(s, i)};
    double probe_s = 0;
    for (int j = i; j < s->n; j++) {
        const rl_point *p = &s->v[j];
        if (!rl_points_same_group(s, i, j))
            continue;
        e.members++;
        double c = rl_plan_call_s(plan, ctx->kind, p->bytes, p->footprint, p->pattern, p->flops) +
                   p->extra_s;
        e.call_s = fmax(e.call_s, c);
        e.sum_s += c;
        probe_s = fmax(probe_s, rl_plan_call_s(plan, ctx->kind, p->footprint, p->footprint,
                                               p->pattern, 0));
    }
    /* A probe reads the group's footprint once a call, or runs a
     * compute loop shorter than that: not the cost of a GEMM's call. */
    int probes = probes_planned(ctx, plan, s, i);
    e.members += probes;
    e.sum_s += probes * probe_s;
    return e;
}

int rl_points_plan(const rl_ctx *ctx, const rl_ctx_plan *plan, const rl_points *s, int first,
                   rl_plan_entry *out)
{
    int n = 0;
    for (int i = 0; i < s->n; i++)
        if (!seen_before(s, i)) {
            out[n] = plan_group(ctx, plan, s, i);
            out[n++].leader = first + i;
        }
    return n;
}
