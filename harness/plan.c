/*
 * plan.c -- the plan: how long a run should take, said before it starts
 * (each group at the roofline's time of its points, the experiment's fixed
 * work, the last run of this mode here), and what it took, said at its end.
 */
#include "internal.h"
#include "rl_budget.h"
#include "rl_ctx_clock.h"
#include "rl_ctx_plan.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the plan: what a run will measure, and how long that should take ----
 * The stop rule bounds each member of a group: at least min_samples
 * samples and min_time_s of measured time, at most timeout_s. A hot sample
 * is a batch of at least a millisecond; a cold one is one call after the
 * cache flush (a read of twice the LLC). The call's own time comes from the
 * roofline: the larger of its bytes over its roof and its FLOPs over the
 * compute roof. A model, and printed as one, next to what the run took. */

void rl_plan_start(rl_ctx_plan *plan, const rl_ceilings *ceilings)
{
    if (!ceilings)
        rl_die(RL_EXIT_FAILED, "internal error: a plan started before the ceilings were measured");
    plan->ceilings = ceilings;
}

/* The ceilings the plan was handed; a plan made before them is a bug,
 * not a reason to measure them here. */
static const rl_ceilings *plan_ceilings(const rl_ctx_plan *plan)
{
    if (!plan->ceilings)
        rl_die(RL_EXIT_FAILED, "internal error: a plan made before the ceilings were measured");
    return plan->ceilings;
}

double rl_plan_call_s(const rl_ctx_plan *plan, rl_backend_kind kind, double bytes,
                      double footprint, rl_pattern pattern, double flops)
{
    const rl_ceilings *c = plan_ceilings(plan);
    rl_roof roof = rl_roof_on(c, kind, footprint, pattern);
    double t_bytes = bytes > 0 && roof.gbps > 0 ? bytes / (roof.gbps * 1e9) : 0;
    double t_flops = flops > 0 && c->matrix_tflops > 0 ? flops / (c->matrix_tflops * 1e12) : 0;
    return t_bytes > t_flops ? t_bytes : t_flops;
}

static double member_seconds(const rl_ctx_plan *plan, const rl_ctx *ctx, double call_s)
{
    const rl_stop_rule *r = &ctx->rule;
    double t;
    if (ctx->args.cache == RL_COLD) {
        const rl_ceilings *c = plan_ceilings(plan);
        double flush_s = 2 * ctx->dev->llc_bytes / (c->bw[RL_DRAM][RL_READ].best * 1e9);
        double samples = fmax(r->min_samples, r->min_time_s / fmax(call_s, 1e-9));
        t = samples * (call_s + (flush_s > 0 ? flush_s : 0));
    } else {
        double batch = fmax(1e-3, r->min_time_s / r->min_samples / 5);
        t = fmax(r->min_time_s, r->min_samples * fmax(call_s, batch));
    }
    return fmin(t, r->timeout_s) + 3 * call_s; /* warm-up and validation */
}

void rl_plan_group(rl_ctx_plan *plan, const rl_ctx *ctx, int members, double seconds_per_call)
{
    plan->groups++;
    plan->points += members;
    plan->s += members * member_seconds(plan, ctx, seconds_per_call);
    /* the longest: every member to its time limit, with its warm-up,
     * validation and what the model leaves out (the budget's overhead) */
    plan->max_s += members * (ctx->rule.timeout_s + 3 * seconds_per_call + RL_MEMBER_OVERHEAD_S);
}

void rl_plan_fixed(rl_ctx *ctx, double seconds)
{
    rl_ctx_plan *plan = rl_plan_room(ctx);
    plan->s += seconds;
    plan->max_s += seconds;
    rl_budget_fixed(rl_budget_of(ctx), seconds);
}

void rl_plan_fixed_least(rl_ctx *ctx, double seconds, double least_s)
{
    rl_budget_fixed_least(rl_budget_of(ctx), seconds, least_s);
}

static void format_duration(double s, char *buf, size_t len)
{
    /* rounded to the second first, or 179.6 s would print "2 min 60 s" */
    long whole = lround(s);
    if (whole < 90)
        snprintf(buf, len, "%ld s", whole);
    else
        snprintf(buf, len, "%ld min %02ld s", whole / 60, whole % 60);
}

/* What the last run of this experiment under this label took, when it ran
 * in the same mode with the same cap on working sets (its CSV says); NaN
 * otherwise. The model above leaves out the inputs and the references;
 * the last run's time includes everything. */
static double last_run_s(const rl_ctx *ctx)
{
    char why[256], cap[64];
    double s = NAN;
    rl_table *t = rl_table_read(ctx->csv_path, why, sizeof why);
    if (!t)
        return s;
    const char *mode = rl_table_meta(t, "mode"), *took = rl_table_meta(t, "duration_s"),
               *max_bytes = rl_table_meta(t, "max_bytes");
    snprintf(cap, sizeof cap, "%.0f ", rl_max_bytes(ctx));
    if (mode && took && max_bytes && !strcmp(mode, rl_mode_name(ctx->args.mode)) &&
        !strncmp(max_bytes, cap, strlen(cap)))
        s = atof(took);
    rl_table_free(t);
    return s;
}

/* ---- the plan as data: --plan-file ----
 * Scripts (make slurm's task.sh) need the plan's numbers, and the sentence
 * printed for people is free to change its wording; so the same numbers
 * go to a file of key=value lines, whole seconds rounded up (at least 1),
 * written atomically before the plan line is printed: a script that sees
 * the line go by finds the file complete. */

void rl_plan_file_check(const rl_ctx *ctx)
{
    rl_data_file_check("--plan-file", ctx->args.plan_file);
}

static long whole_seconds(double s) { return s > 1 ? (long)ceil(s) : 1; }

static void write_plan_file(const rl_ctx *ctx, double so_far, double last_s)
{
    const rl_ctx_plan *p = rl_plan_room(ctx);
    char text[1024], last[64] = "", needed[160] = "";
    if (last_s > 0)
        snprintf(last, sizeof last, "last_run_s=%ld\n", whole_seconds(last_s));
    /* Under --budget: the least time that times every point a verdict
     * needs, the ceilings not counted (make all BUDGET= measures them
     * once, then splits what is left by these). */
    const rl_budget *b = rl_budget_of(ctx);
    if (b)
        snprintf(needed, sizeof needed, "budget_needed_s=%ld\n", whole_seconds(rl_budget_needed_s(b)));
    snprintf(text, sizeof text,
             "# the plan of exp-%s, before it measures: whole seconds, rounded up; low: every\n"
             "# point at its stop rule's minimum, high: every point at its time limit\n"
             "experiment=%s\nlabel=%s\nmode=%s\ngroups=%d\npoints=%d\n"
             "expected_s_low=%ld\nexpected_s_high=%ld\nso_far_s=%ld\n%s%s",
             ctx->exp->id, ctx->exp->id, ctx->label, rl_mode_name(ctx->args.mode), p->groups,
             p->points, whole_seconds(p->s), whole_seconds(p->max_s),
             whole_seconds(so_far), last, needed);
    if (rl_write_file_atomic(ctx->args.plan_file, text) != 0)
        rl_die(RL_EXIT_FAILED, "could not write the plan to --plan-file %s: %s",
               ctx->args.plan_file, strerror(errno));
}

void rl_plan_print(rl_ctx *ctx)
{
    rl_ctx_plan *p = rl_plan_room(ctx);
    char t[32], most[32], last[96] = "";
    double so_far = rl_now_s() - rl_clock_room(ctx)->started; /* the ceilings, the inputs */
    p->s += so_far;
    p->max_s += so_far;
    /* A clock (--budget, a lab run's --slot) sheds what the model would
     * add beyond it: the run ends within it +10 %. */
    double clock_s = rl_budget_seconds(rl_budget_of(ctx));
    if (clock_s > 0) {
        p->max_s = fmin(p->max_s, 1.1 * clock_s);
        p->s = fmin(p->s, p->max_s);
    }
    format_duration(p->s, t, sizeof t);
    format_duration(p->max_s, most, sizeof most);
    double before = last_run_s(ctx);
    if (ctx->args.plan_file)
        write_plan_file(ctx, so_far, before);
    if (before > 0) {
        char b[32];
        format_duration(before, b, sizeof b);
        snprintf(last, sizeof last, "\n            the last %s run here took %s", rl_mode_name(ctx->args.mode), b);
    }
    printf("plan        %d group(s) of %d point(s); expected %s to %s, %.0f s of it so far\n"
           "            (model: every point stops between its stop rule's minimum and its time\n"
           "            limit, at the roofline's time per call; inputs and references come on top)%s\n",
           p->groups, p->points, t, most, so_far, last);
    rl_meta(ctx, "plan", "%d groups, %d points, expected %.0f s", p->groups, p->points, p->s);
    const rl_budget *budget = rl_budget_of(ctx);
    rl_budget_print(budget);
    if (budget)
        rl_meta(ctx, rl_budget_is_slot(budget) ? "slot_s" : "budget_s", "%.0f",
                rl_budget_seconds(budget));
    fflush(stdout);
    rl_progress_total(ctx, p->groups);
}

void rl_print_duration(rl_ctx *ctx)
{
    const rl_ctx_plan *p = rl_plan_room(ctx);
    const rl_ctx_clock *clock = rl_clock_room(ctx);
    double took = rl_now_s() - clock->started;
    char a[32], b[32], c[32];
    format_duration(took, a, sizeof a);
    format_duration(p->s, b, sizeof b);
    format_duration(p->max_s, c, sizeof c);
    if (p->s > 0)
        printf("took        %s (the plan expected %s to %s)\n", a, b, c);
    else
        printf("took        %s\n", a);
    rl_meta(ctx, "duration_s", "%.1f", took);
    /* What else ran meanwhile, as data: the busy-host gate's reading. */
    rl_meta(ctx, "host_others_busy_cpus", "%.2f", rl_others_busy_cpus_since(&clock->busy_mark));
}
