/*
 * budget.c -- --budget SECONDS: a run that fits the time it is given.
 *
 * An instructor's lab slot and a lent GPU's minutes are clocks, and a run
 * written whole or not at all must not run past them. So, with a budget,
 * the harness plans the run to fit and keeps it fitting as it goes:
 *   - the points every verdict needs (a point is needed unless its
 *     experiment declared it optional: a chart's sweep between the
 *     verdicts' points) are measured whatever happens, under a stop rule
 *     scaled between the mode's and the quick one until they fit;
 *   - optional groups are measured as the time left allows, spread evenly
 *     over each sweep (a credit of the fraction that fits, spent a group
 *     at a time), and the others are written as rows that say why they
 *     were not run;
 *   - the model of each group's time (the plan's: the roofline's time per
 *     call under the stop rule) is calibrated by what the groups took so
 *     far, validation and all, since the model leaves out the references;
 *   - a reserve at the end is kept for the verdicts, the CSV and charts.
 * Decided before each group, from the clock: a slow machine sheds sweep
 * points, a fast one keeps them. Past the deadline even a needed group is
 * skipped (its verdict then says "not measured"), so a run ends within the
 * budget plus the last group's time. Without --budget nothing here runs.
 */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Kept for rl_end: the verdicts, the CSV, the charts (gnuplot draws an
 * experiment's charts in under 2 s on a 2-core VM). */
static const double RESERVE_S = 2.5;
/* A first guess of took / model before any group has run: the model
 * leaves out validation and inputs. */
static const double FIRST_RATIO = 1.5;
/* The share of the time left the needed groups are planned into; the
 * rest is slack for the model's error. */
static const double NEEDED_SHARE = 0.85;
/* Of the 10 % a run may overrun its budget, what a needed group may use
 * when the plan ran late: a verdict measured a little late beats a
 * verdict not measured. */
static const double NEEDED_SLACK = 0.05;

typedef struct budget_group {
    int leader;       /* index of its first point in every point */
    int members;      /* points and probes */
    double call_s;    /* the model's time of its slowest call */
    bool needed;
    bool done;
} budget_group;

struct rl_budget {
    double budget_s, deadline;
    budget_group *g;
    int n, cap;
    int current;                 /* the group admitted last, or -1 */
    double fixed_s, outside_s;   /* the experiment's fixed work; what opens took so far */
    double model_done, took_done;
    double group_started;
    double credit;
    double scale_lo, scale_hi;   /* the stop rules used */
    int needed, optional, optional_run, skipped;
    rl_stop_rule base;
    bool trace; /* ROOFLAB_BUDGET_TRACE=1: each decision on stderr */
};

/* The stop rule at scale s: the mode's at 1, the quick rule's at 0. */
static rl_stop_rule rule_at(const rl_budget *b, double s)
{
    const rl_stop_rule *q = &RL_STOP_QUICK, *m = &b->base;
    if (s >= 1)
        return *m;
    return (rl_stop_rule){
        .min_samples = s >= 0.5 ? m->min_samples : q->min_samples,
        .min_time_s = q->min_time_s + s * (m->min_time_s - q->min_time_s),
        .max_noise = m->max_noise,
        .timeout_s = q->timeout_s + s * (m->timeout_s - q->timeout_s),
    };
}

static double group_model_s(rl_ctx *ctx, const budget_group *g, const rl_stop_rule *r)
{
    return g->members * rl_plan_member_s(ctx, r, g->call_s);
}

static double ratio(const rl_budget *b)
{
    return b->model_done > 0 ? fmax(0.5, b->took_done / b->model_done) : FIRST_RATIO;
}

/* The model's seconds of the groups not yet run (but skip), needed or
 * optional, at scale s, calibrated. */
static double rest_s(rl_ctx *ctx, const rl_budget *b, double s, bool needed, int skip)
{
    rl_stop_rule r = rule_at(b, s);
    double t = 0;
    for (int i = 0; i < b->n; i++)
        if (!b->g[i].done && b->g[i].needed == needed && i != skip)
            t += group_model_s(ctx, &b->g[i], &r);
    return t * ratio(b);
}

static double time_left(const rl_budget *b)
{
    return b->deadline - rl_now_s() - RESERVE_S - fmax(0, b->fixed_s - b->outside_s);
}

/* The largest scale at which the needed groups left fit their share of
 * the time left (0 when not even the quick rule fits). */
static double fitting_scale(rl_ctx *ctx, const rl_budget *b, double left)
{
    if (rest_s(ctx, b, 1, true, -1) <= NEEDED_SHARE * left)
        return 1;
    double lo = 0, hi = 1;
    for (int k = 0; k < 20; k++) {
        double mid = (lo + hi) / 2;
        if (rest_s(ctx, b, mid, true, -1) <= NEEDED_SHARE * left)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

void rl_budget_init(rl_ctx *ctx)
{
    if (!(ctx->args.budget_s > 0))
        return;
    rl_budget *b = calloc(1, sizeof *b);
    if (!b)
        rl_die(RL_EXIT_FAILED, "out of memory for the budget");
    b->budget_s = ctx->args.budget_s;
    b->deadline = ctx->priv->started + b->budget_s;
    b->current = -1;
    b->scale_lo = INFINITY;
    b->scale_hi = -INFINITY;
    b->base = ctx->rule;
    const char *trace = getenv("ROOFLAB_BUDGET_TRACE");
    b->trace = trace && *trace && *trace != '0';
    ctx->priv->budget = b;
}

void rl_budget_free(rl_ctx *ctx)
{
    rl_budget *b = ctx->priv->budget;
    if (b)
        free(b->g);
    free(b);
    ctx->priv->budget = NULL;
}

/* A point's index among every point rl_main declared. */
static int index_of(const rl_ctx *ctx, const rl_point *p)
{
    const rl_points *all = &ctx->priv->points;
    return p >= all->v && p < all->v + all->n ? (int)(p - all->v) : -1;
}

void rl_budget_group(rl_ctx *ctx, const rl_point *leader_point, int members, double call_s,
                     bool needed)
{
    rl_budget *b = ctx->priv->budget;
    int leader = index_of(ctx, leader_point);
    if (!b || leader < 0)
        return;
    b->g = rl_grow(b->g, b->n, &b->cap, 64, sizeof *b->g, "the budget's groups");
    b->g[b->n++] = (budget_group){leader, members, call_s, needed, false};
    needed ? b->needed++ : b->optional++;
}

void rl_budget_fixed(rl_ctx *ctx, double seconds)
{
    if (ctx->priv->budget)
        ctx->priv->budget->fixed_s += seconds;
}

void rl_budget_outside(rl_ctx *ctx, double seconds)
{
    if (ctx->priv->budget)
        ctx->priv->budget->outside_s += seconds;
}

static void print_rule(const char *lead, const rl_stop_rule *r)
{
    printf("%s%d samples and %.2f s per point at least, %.2f s at most", lead, r->min_samples,
           r->min_time_s, r->timeout_s);
}

/* What fits, said with the plan. */
void rl_budget_print(rl_ctx *ctx)
{
    rl_budget *b = ctx->priv->budget;
    if (!b)
        return;
    double left = time_left(b), s = fitting_scale(ctx, b, left);
    double needed = rest_s(ctx, b, s, true, -1), optional = rest_s(ctx, b, s, false, -1);
    double spare = fmax(0, left - needed);
    int fit = optional > 0 ? (int)fmin(b->optional, floor(b->optional * spare / optional)) : b->optional;
    rl_stop_rule r = rule_at(b, s);
    printf("budget      %.0f s: %.0f s left after the ceilings and inputs, %.0f s kept for the "
           "verdicts and charts\n"
           "            %d needed group(s) ~%.0f s", b->budget_s, left + RESERVE_S, RESERVE_S,
           b->needed, needed);
    print_rule(" under ", &r);
    printf("%s\n            optional (sweep) groups: ~%d of %d fit", s < 1 ? " (scaled to fit)" : "",
           fit, b->optional);
    if (needed > left)
        printf("; the needed ones alone may not fit");
    printf("\n            (model x %.1f for what it leaves out; re-planned before each group)\n",
           ratio(b));
    rl_meta(ctx, "budget_s", "%.0f", b->budget_s);
}

static int group_of(const rl_budget *b, int leader)
{
    for (int i = 0; i < b->n; i++)
        if (b->g[i].leader == leader)
            return i;
    return -1;
}

bool rl_budget_admit(rl_ctx *ctx, const rl_point *leader)
{
    rl_budget *b = ctx->priv->budget;
    if (!b)
        return true;
    int i = group_of(b, index_of(ctx, leader));
    if (i < 0)
        return true;
    budget_group *g = &b->g[i];
    double left = time_left(b), s = fitting_scale(ctx, b, left);
    rl_stop_rule r = rule_at(b, s);
    bool run;
    if (g->needed) {
        run = left + NEEDED_SLACK * b->budget_s > 0;
    } else {
        double mine = group_model_s(ctx, g, &r) * ratio(b);
        double spare = left - rest_s(ctx, b, s, true, -1);
        double rest = rest_s(ctx, b, s, false, -1);
        b->credit += rest > 0 ? fmax(0, fmin(1, spare / rest)) : 1;
        run = b->credit >= 1 - 1e-9 && mine <= spare;
        if (run)
            b->credit -= 1;
    }
    g->done = true;
    if (b->trace)
        fprintf(stderr, "budget: group %d (%s, %d members, call %.2g s): %s; %.1f s left, scale "
                "%.2f, needed rest %.1f s, model x %.2f\n", i, g->needed ? "needed" : "optional",
                g->members, g->call_s, run ? "run" : "skip", left, s,
                rest_s(ctx, b, s, true, -1), ratio(b));
    if (!run) {
        b->skipped++;
        return false;
    }
    b->optional_run += !g->needed;
    ctx->rule = r;
    b->scale_lo = fmin(b->scale_lo, s);
    b->scale_hi = fmax(b->scale_hi, s);
    b->current = i;
    b->group_started = rl_now_s();
    return true;
}

void rl_budget_group_done(rl_ctx *ctx)
{
    rl_budget *b = ctx->priv->budget;
    if (!b || b->current < 0)
        return;
    rl_stop_rule r = ctx->rule;
    b->model_done += group_model_s(ctx, &b->g[b->current], &r);
    b->took_done += rl_now_s() - b->group_started;
    if (b->trace)
        fprintf(stderr, "budget: group %d took %.2f s, model %.2f s\n", b->current,
                rl_now_s() - b->group_started, group_model_s(ctx, &b->g[b->current], &r));
    b->current = -1;
}

double rl_budget_fit(const rl_ctx *ctx, double want_s)
{
    const rl_budget *b = ctx->priv->budget;
    if (!b || !(want_s > 0))
        return 1;
    double left = b->deadline - rl_now_s() - RESERVE_S;
    return fmax(0, fmin(1, NEEDED_SHARE * left / want_s));
}

double rl_budget_left_s(const rl_ctx *ctx)
{
    const rl_budget *b = ctx->priv->budget;
    if (!b)
        return INFINITY;
    bool needed = b->current >= 0 && b->g[b->current].needed;
    return fmax(0, b->deadline + (needed ? NEEDED_SLACK * b->budget_s : 0) - rl_now_s() - RESERVE_S);
}

void rl_budget_skip_reason(const rl_ctx *ctx, char *buf, size_t len)
{
    const rl_budget *b = ctx->priv->budget;
    snprintf(buf, len, "not run: --budget %.0f s left no time for it", b ? b->budget_s : 0);
}

/* At the end: what the budget gave, on the console and in the CSV. */
void rl_budget_report(rl_ctx *ctx)
{
    rl_budget *b = ctx->priv->budget;
    if (!b)
        return;
    double took = rl_now_s() - ctx->priv->started;
    printf("budget      %.0f s of %.0f s (%+.0f %%); %d of %d optional group(s) run, %d group(s) "
           "not run", took, b->budget_s, 100 * (took / b->budget_s - 1), b->optional_run,
           b->optional, b->skipped);
    if (b->scale_hi >= b->scale_lo) {
        rl_stop_rule lo = rule_at(b, b->scale_lo), hi = rule_at(b, b->scale_hi);
        print_rule("\n            stop rule: ", &lo);
        if (b->scale_hi > b->scale_lo)
            printf(" up to %.2f s / %.2f s", hi.min_time_s, hi.timeout_s);
    }
    printf("\n");
    rl_meta(ctx, "budget_run", "%d of %d optional groups, %d groups not run; stop rule scale "
            "%.2f..%.2f (1: the mode's, 0: the quick rule)", b->optional_run, b->optional,
            b->skipped, isfinite(b->scale_lo) ? b->scale_lo : 1, isfinite(b->scale_hi) ? b->scale_hi : 1);
}
