/*
 * budget.c -- --budget SECONDS: a run that fits the time it is given.
 *
 * An instructor's lab slot and a lent GPU's minutes are clocks, and a run
 * written whole or not at all must not run past them. So, with a budget,
 * the harness plans the run to fit and keeps it fitting as it goes:
 *   - the points every verdict needs (a point is needed unless its
 *     experiment declared it optional: a chart's sweep between the
 *     verdicts' points) are measured first, under a stop rule scaled
 *     between the mode's, the quick one and a floor until they fit;
 *   - optional groups are measured as the time left allows, spread evenly
 *     over each sweep (a credit of the fraction that fits, spent a group
 *     at a time), and the others are written as rows that say why they
 *     were not run;
 *   - a group is expected to take the model's time (every member at the
 *     stop rule's time limit or three of its own calls, whichever is
 *     longer: on a shared host most never reach the noise target sooner)
 *     and, per member, what the groups so far took beyond
 *     theirs: validation, references and inputs cost about as much per
 *     point whatever its own time;
 *   - a reserve at the end is kept for the verdicts, the CSV and charts.
 * Decided before each group, from the clock: a slow machine sheds sweep
 * points, a fast one keeps them. A needed group that would end past the
 * deadline and half the 10 % a run may overrun is skipped too (its
 * verdict then says "not measured"), so a run ends within its budget
 * +10 % unless the model was wrong about the very group that ends it.
 *
 * A lab run gets the same clock, its slot (--slot, RL_LAB_SLOT_S when
 * none is given): a slow CPU or a slow reference variant sheds sweep
 * points and samples less, it does not stretch the run past the two
 * minutes a lab run promises. Only the clock is shared: the tuner, the
 * ceilings and the trials keep the lab's rules, which --budget shortens
 * (rl_budget_given is --budget's alone). With neither, nothing here runs.
 */
#include "internal.h"
#include "rl_budget.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Kept for rl_end: the verdicts, the CSV, the charts (gnuplot draws an
 * experiment's charts in under 2 s on a 2-core VM). */
static const double RESERVE_S = 2.5;
/* What a group costs beyond the model's time, per member, before any
 * group has run: the model leaves out validation (a reference, a check)
 * and warm-up, which cost about as much whatever the point's own time.
 * The plan's longest time counts it too (plan.c). */
const double RL_MEMBER_OVERHEAD_S = 0.2;
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
    double sum_s;     /* the model's time of one call of each member, summed */
    bool needed;
    bool done;
} budget_group;

struct rl_budget {
    double budget_s, deadline;
    bool slot;                   /* a lab run's --slot, not --budget: what the messages name */
    budget_group *g;
    int n, cap;
    int current;                 /* the group admitted last, or -1 */
    double fixed_s, outside_s;   /* the experiment's fixed work; what opens took so far */
    double shrink_s;             /* of fixed_s, what may be shed with no verdict lost */
    double model_done, took_done;
    int members_done;
    double needed_took;          /* of took_done, the needed groups' */
    double group_started;
    double credit;
    double spare_s;              /* what the optional group admitted last may take */
    double scale_lo, scale_hi;   /* the stop rules used */
    int needed, optional, optional_run, skipped;
    rl_stop_rule base;
    bool trace; /* ROOFLAB_BUDGET_TRACE=1: each decision on stderr */
};

/* The least a budget asks of a point when not even the quick rule fits:
 * three samples, a tenth of a second. A verdict on it is noisier, and
 * the CSV's samples and stop_reason say so; not judging it is worse. */
static const rl_stop_rule FLOOR_RULE = {.min_samples = 3, .min_time_s = 0.01, .max_noise = 0.05,
                                        .timeout_s = 0.1};

/* The stop rule at scale s: the mode's at 1, the quick rule's at 0, the
 * floor's at -1. */
static rl_stop_rule rule_at(const rl_budget *b, double s)
{
    const rl_stop_rule *q = &RL_STOP_QUICK, *m = &b->base, *f = &FLOOR_RULE;
    if (s >= 1)
        return *m;
    if (s < 0)
        return (rl_stop_rule){
            .min_samples = f->min_samples,
            .min_time_s = q->min_time_s + s * (q->min_time_s - f->min_time_s),
            .max_noise = fmax(m->max_noise, f->max_noise),
            .timeout_s = q->timeout_s + s * (q->timeout_s - f->timeout_s),
        };
    return (rl_stop_rule){
        .min_samples = s >= 0.5 ? m->min_samples : q->min_samples,
        .min_time_s = q->min_time_s + s * (m->min_time_s - q->min_time_s),
        .max_noise = m->max_noise,
        .timeout_s = q->timeout_s + s * (m->timeout_s - q->timeout_s),
    };
}

/* The model's seconds for a group: each member at its time limit (a
 * shared host's noise keeps most from the noise target sooner), but never
 * under the three samples a member always gets, with the warm-up and
 * validation calls. Member by member where the calls differ: a group's
 * probes and its GEMV cost a fraction of its GEMM's call, and a model
 * that charged every member the slowest call would skip groups that fit.
 * The members' calls are known only as their sum and the slowest one; so
 * each is charged the time limit or three calls, whichever is more, the
 * slowest exactly and the others by their sum. */
static double group_model_s(const budget_group *g, const rl_stop_rule *r)
{
    if (g->members == 0)
        return 0;
    double others = g->sum_s - g->call_s;
    return fmax(r->timeout_s, 3 * g->call_s) + fmax((g->members - 1) * r->timeout_s, 3 * others) +
           3 * g->sum_s;
}

/* Per member, what the groups so far took beyond their model time. */
static double overhead_s(const rl_budget *b)
{
    return b->members_done > 0 ? fmax(0, b->took_done - b->model_done) / b->members_done
                               : RL_MEMBER_OVERHEAD_S;
}

/* A group's expected seconds: the model's, and the overhead of its members. */
static double expected_s(const rl_budget *b, const budget_group *g, const rl_stop_rule *r)
{
    return group_model_s(g, r) + overhead_s(b) * g->members;
}

/* The expected seconds of the groups not yet run, needed or optional, at
 * scale s. */
static double rest_s(const rl_budget *b, double s, bool needed)
{
    rl_stop_rule r = rule_at(b, s);
    double t = 0;
    for (int i = 0; i < b->n; i++)
        if (!b->g[i].done && b->g[i].needed == needed)
            t += expected_s(b, &b->g[i], &r);
    return t;
}

static double time_left(const rl_budget *b)
{
    return b->deadline - rl_now_s() - RESERVE_S - fmax(0, b->fixed_s - b->outside_s);
}

/* The largest scale at which the needed groups left fit their share of
 * the time left (-1, the floor, when not even that fits). */
static double fitting_scale(const rl_budget *b, double left)
{
    if (rest_s(b, 1, true) <= NEEDED_SHARE * left)
        return 1;
    double lo = -1, hi = 1;
    for (int k = 0; k < 20; k++) {
        double mid = (lo + hi) / 2;
        if (rest_s(b, mid, true) <= NEEDED_SHARE * left)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

bool rl_budget_given(const rl_ctx *ctx) { return ctx->args.budget_s > 0; }

rl_budget *rl_budget_new(const rl_ctx *ctx, double started)
{
    bool slot = !rl_budget_given(ctx) && ctx->args.slot_s > 0;
    if (!rl_budget_given(ctx) && !slot)
        return NULL;
    rl_budget *b = calloc(1, sizeof *b);
    if (!b)
        rl_die(RL_EXIT_FAILED, "out of memory for the budget");
    b->budget_s = slot ? ctx->args.slot_s : ctx->args.budget_s;
    b->slot = slot;
    b->deadline = started + b->budget_s;
    b->current = -1;
    b->scale_lo = INFINITY;
    b->scale_hi = -INFINITY;
    b->base = ctx->rule;
    const char *trace = getenv("ROOFLAB_BUDGET_TRACE");
    b->trace = trace && *trace && *trace != '0';
    return b;
}

void rl_budget_free(rl_budget *b)
{
    if (!b)
        return;
    free(b->g);
    free(b);
}

double rl_budget_seconds(const rl_budget *b) { return b ? b->budget_s : 0; }

bool rl_budget_is_slot(const rl_budget *b) { return b && b->slot; }

/* The clock's name in messages: "slot" (--slot) or "budget" (--budget). */
static const char *clock_name(const rl_budget *b)
{
    return rl_budget_is_slot(b) ? "slot" : "budget";
}

void rl_budget_group(rl_budget *b, int leader, int members, double call_s, double sum_s,
                     bool needed)
{
    if (!b || leader < 0)
        return;
    b->g = rl_grow(b->g, b->n, &b->cap, 64, sizeof *b->g, "the budget's groups");
    b->g[b->n++] = (budget_group){leader, members, call_s, fmax(sum_s, call_s), needed, false};
    needed ? b->needed++ : b->optional++;
}

void rl_budget_fixed(rl_budget *b, double seconds)
{
    if (b)
        b->fixed_s += seconds;
}

void rl_budget_outside(rl_budget *b, double seconds)
{
    if (b)
        b->outside_s += seconds;
}

/* The last open has run: the fixed work is done, whatever the plan's
 * estimate of it was. What the estimate said beyond what it took is time
 * the groups left may use (it was reserved for the inputs, not kept). */
void rl_budget_fixed_done(rl_budget *b)
{
    if (b && b->fixed_s > b->outside_s)
        b->fixed_s = b->outside_s;
}

void rl_budget_fixed_least(rl_budget *b, double fixed_s, double least_s)
{
    if (b)
        b->shrink_s += fixed_s - least_s;
}

/* Before any group has run (the plan): the floor's rule on every needed
 * group, the overhead assumed per member, the fixed work at its least;
 * all of it within the share of the time left that the needed groups
 * (and rl_budget_fit's fixed work) are planned into. */
double rl_budget_needed_s(const rl_budget *b)
{
    if (!b)
        return 0;
    double work = fmax(0, b->fixed_s - b->outside_s - b->shrink_s) + rest_s(b, -1, true);
    return work / NEEDED_SHARE + RESERVE_S;
}

static void print_rule(const char *lead, const rl_stop_rule *r)
{
    printf("%s%d samples and %.2f s per point at least, %.2f s at most", lead, r->min_samples,
           r->min_time_s, r->timeout_s);
}

/* What fits, said with the plan. */
void rl_budget_print(const rl_budget *b)
{
    if (!b)
        return;
    double left = time_left(b), s = fitting_scale(b, left);
    double needed = rest_s(b, s, true), optional = rest_s(b, s, false);
    double spare = fmax(0, left - needed);
    int fit = optional > 0 ? (int)fmin(b->optional, floor(b->optional * spare / optional)) : b->optional;
    rl_stop_rule r = rule_at(b, s);
    if (left + RESERVE_S > 0)
        printf("%-12s%.0f s: %.0f s left after the ceilings and inputs, %.0f s kept for the "
               "verdicts and charts\n", clock_name(b), b->budget_s, left + RESERVE_S, RESERVE_S);
    else /* fixed work cannot shrink: say so before it starts */
        printf("%-12s%.0f s: less than the ceilings and the experiment's own work (its "
               "inputs, holds: ~%.0f s by its estimate) take; the run will end past its %s\n",
               clock_name(b), b->budget_s, fmax(0, b->fixed_s - b->outside_s), clock_name(b));
    printf("            %d needed group(s) ~%.0f s", b->needed, needed);
    print_rule(" under ", &r);
    printf("%s\n            optional (sweep) groups: ~%d of %d fit", s < 1 ? " (scaled to fit)" : "",
           fit, b->optional);
    if (needed > left)
        printf("; the needed ones alone may not fit");
    printf("\n            (the model and %.1f s per point or probe for what it leaves out, the\n"
           "            references and warm-up; re-planned before each group from what the last took)\n",
           overhead_s(b));
}

static int group_of(const rl_budget *b, int leader)
{
    for (int i = 0; b && leader >= 0 && i < b->n; i++)
        if (b->g[i].leader == leader)
            return i;
    return -1;
}

/* An observed point's share of the fixed work left: its hold. */
static double observed_hold_s(const rl_budget *b)
{
    int left = 0;
    for (int i = 0; i < b->n; i++)
        left += !b->g[i].done && b->g[i].members == 0;
    return left ? fmax(0, b->fixed_s - b->outside_s) / left : 0;
}

/* A needed group runs as long as it should end within the slack. An
 * observed point's hold is fixed work, counted in time_left: it needs
 * only its own. */
static bool needed_fits(const rl_budget *b, const budget_group *g, double mine, double left)
{
    double slack = NEEDED_SLACK * b->budget_s;
    if (g->members == 0)
        return mine <= left + fmax(0, b->fixed_s - b->outside_s) + slack;
    return mine <= left + slack;
}

/* An optional group runs on the credit of the share of the optional
 * groups left that fits beside the needed ones. Until a group has
 * calibrated the model, only where everything fits four times over: the
 * model alone can be ten times short of what references cost. */
static bool optional_fits(rl_budget *b, double s, double mine, double left)
{
    double needed = rest_s(b, s, true), spare = left - needed;
    double rest = rest_s(b, s, false);
    if (b->members_done == 0 && spare < 4 * (needed + rest))
        return false;
    b->credit += rest > 0 ? fmax(0, fmin(1, spare / rest)) : 1;
    if (b->credit < 1 - 1e-9 || mine > spare)
        return false;
    b->credit -= 1;
    b->spare_s = spare;
    return true;
}

bool rl_budget_admit(rl_budget *b, int leader, rl_stop_rule *rule)
{
    int i = group_of(b, leader);
    if (i < 0)
        return true;
    budget_group *g = &b->g[i];
    double left = time_left(b), s = fitting_scale(b, left);
    rl_stop_rule r = rule_at(b, s);
    double mine = g->members ? expected_s(b, g, &r) : observed_hold_s(b);
    bool run = g->needed ? needed_fits(b, g, mine, left) : optional_fits(b, s, mine, left);
    g->done = true;
    if (b->trace)
        fprintf(stderr, "budget: group %d (%s, %d members, call %.2g s): %s; %.1f s left, scale "
                "%.2f, expected %.1f s, needed rest %.1f s, overhead %.2f s a member\n", i,
                g->needed ? "needed" : "optional", g->members, g->call_s, run ? "run" : "skip", left,
                s, mine, rest_s(b, s, true), overhead_s(b));
    if (!run) {
        b->skipped++;
        return false;
    }
    b->optional_run += !g->needed;
    *rule = r;
    b->scale_lo = fmin(b->scale_lo, s);
    b->scale_hi = fmax(b->scale_hi, s);
    b->current = i;
    b->group_started = rl_now_s();
    return true;
}

void rl_budget_group_done(rl_budget *b, const rl_stop_rule *rule)
{
    if (!b || b->current < 0)
        return;
    rl_stop_rule r = *rule;
    b->model_done += group_model_s(&b->g[b->current], &r);
    b->members_done += b->g[b->current].members;
    b->took_done += rl_now_s() - b->group_started;
    if (b->g[b->current].needed)
        b->needed_took += rl_now_s() - b->group_started;
    if (b->trace)
        fprintf(stderr, "budget: group %d took %.2f s, model %.2f s\n", b->current,
                rl_now_s() - b->group_started, group_model_s(&b->g[b->current], &r));
    b->current = -1;
}

double rl_budget_expected_s(const rl_budget *b, int leader)
{
    int i = group_of(b, leader);
    if (i < 0)
        return 0;
    rl_stop_rule r = rule_at(b, fitting_scale(b, time_left(b)));
    return b->g[i].members ? expected_s(b, &b->g[i], &r) : 0;
}

double rl_budget_fit(const rl_ctx *ctx, double want_s)
{
    const rl_budget *b = rl_budget_of(ctx);
    if (!b || !(want_s > 0))
        return 1;
    double left = b->deadline - rl_now_s() - RESERVE_S;
    return fmax(0, fmin(1, NEEDED_SHARE * left / want_s));
}

double rl_budget_left_s(const rl_budget *b)
{
    if (!b)
        return INFINITY;
    if (b->current < 0)
        return INFINITY;
    if (!b->g[b->current].needed) /* never into the needed groups' time */
        return fmax(0, b->spare_s - (rl_now_s() - b->group_started));
    return fmax(0, b->deadline + NEEDED_SLACK * b->budget_s - rl_now_s() - RESERVE_S);
}

void rl_budget_skip(const rl_budget *b, rl_point *p)
{
    p->state = RL_POINT_SKIPPED;
    snprintf(p->why, sizeof p->why, "not run: --%s %.0f s left no time for it", clock_name(b),
             b ? b->budget_s : 0);
}

/* At the end: what the budget gave, on the console and (meta) for the CSV. */
void rl_budget_report(const rl_budget *b, double took, char *meta, size_t len)
{
    if (!b)
        return;
    printf("%-12s%.0f s of %.0f s (%+.0f %%); %d of %d optional group(s) run, %d group(s) "
           "not run\n            the verdicts' groups took %.1f s, the optional ones %.1f s, "
           "parts' inputs %.1f s", clock_name(b), took, b->budget_s,
           100 * (took / b->budget_s - 1),
           b->optional_run, b->optional, b->skipped, b->needed_took,
           fmax(0, b->took_done - b->needed_took), b->outside_s);
    if (b->scale_hi >= b->scale_lo) {
        rl_stop_rule lo = rule_at(b, b->scale_lo), hi = rule_at(b, b->scale_hi);
        print_rule("\n            stop rule: ", &lo);
        if (b->scale_hi > b->scale_lo)
            printf(" up to %.2f s / %.2f s", hi.min_time_s, hi.timeout_s);
    }
    printf("\n");
    snprintf(meta, len, "%d of %d optional groups, %d groups not run; stop rule scale "
             "%.2f..%.2f (1: the mode's, 0: the quick rule, -1: the floor); needed groups %.1f s, "
             "optional %.1f s, inputs %.1f s", b->optional_run, b->optional, b->skipped,
             isfinite(b->scale_lo) ? b->scale_lo : 1, isfinite(b->scale_hi) ? b->scale_hi : 1,
             b->needed_took, fmax(0, b->took_done - b->needed_took), b->outside_s);
}
