/*
 * run.c -- rl_main, the one path every experiment takes: declare once,
 * plan what was declared, then open, validate, time, write and close each
 * part in turn, and judge (rooflab.h, "One way in").
 *
 * The plan needs no second pass over the experiment's code: a point is
 * declared with what it will run and what it moves, not with the buffers
 * it runs on, so the harness can plan every point before the first
 * buffer exists, and the experiment's code runs once.
 */
#include "internal.h"
#include "rl_budget.h"
#include "rl_ctx_parts.h"
#include "rl_ctx_plan.h"

#include <stdio.h>
#include <stdlib.h>

static rl_ctx_parts *declaring(rl_ctx *ctx, const char *what)
{
    rl_ctx_parts *p = rl_parts_room(ctx);
    if (p->declared)
        rl_die(RL_EXIT_FAILED, "internal error: exp-%s: %s after its declare function returned",
               ctx->exp->id, what);
    return p;
}

void rl_part_add(rl_ctx *ctx, const rl_part *part)
{
    rl_ctx_parts *p = declaring(ctx, "a part added");
    p->parts = rl_grow(p->parts, p->nparts, &p->cap_parts, 16, sizeof *p->parts, "parts");
    p->parts[p->nparts++] = (rl_declared_part){*part, p->points.n, 0};
}

rl_point *rl_point_add(rl_ctx *ctx, const rl_point *pt)
{
    rl_ctx_parts *p = declaring(ctx, "a point added");
    if (p->nparts == 0)
        rl_part_add(ctx, &(rl_part){0});
    rl_point *q = rl_points_add(&p->points, pt);
    q->part = p->nparts - 1;
    p->parts[p->nparts - 1].n++;
    return q;
}

int rl_group_new(rl_ctx *ctx) { return rl_points_new_group(&declaring(ctx, "a group added")->points); }

const rl_points *rl_points_all(const rl_ctx *ctx) { return &rl_parts_room(ctx)->points; }

/* A side benchmark judges nothing, and is timed beside a peer that runs
 * alone (ggml's test-backend-ops): no probes beside its points, whose
 * copies of the working set would only evict it (a hot 117 MB F16 matrix
 * in a 162 MiB LLC read at DRAM speed); its columns read the run-start
 * ladder, as --roofs start. */
void rl_discard_results(rl_ctx *ctx)
{
    declaring(ctx, "rl_discard_results")->discard = true;
    ctx->args.start_roofs = true;
}

void *rl_keep(rl_ctx *ctx, size_t bytes)
{
    rl_ctx_parts *p = rl_parts_room(ctx);
    p->kept = rl_grow(p->kept, p->nkept, &p->cap_kept, 64, sizeof *p->kept, "points' data");
    void *m = calloc(1, bytes ? bytes : 1);
    if (!m)
        rl_die(RL_EXIT_FAILED, "out of memory for a point's data");
    return p->kept[p->nkept++] = m;
}

void rl_run_release(rl_ctx *ctx)
{
    rl_ctx_parts *p = rl_parts_room(ctx);
    for (int i = 0; i < p->nkept; i++)
        free(p->kept[i]);
    free(p->kept);
    free(p->parts);
    rl_points_free(&p->points);
}

/* The points of one part, as a set of their own (a view into every point). */
static rl_points part_points(const rl_ctx_parts *room, int i)
{
    const rl_declared_part *d = &room->parts[i];
    rl_points view = {room->points.v + d->first, d->n, d->n, room->points.last_group};
    return view;
}

/* ---- the plan ----------------------------------------------------------------------
 * Made from the ceilings measured before declare (rl_run), handed to the
 * planner as a const pointer: planning measures nothing. The budget
 * learns each planned group here. An observed point holds its load for
 * as long as the experiment says (rl_plan_fixed in declare): the plan
 * counts it as one step, and the budget as a group of no members (its
 * hold is the experiment's fixed work). */
static void plan(rl_ctx *ctx)
{
    const rl_ctx_parts *room = rl_parts_room(ctx);
    rl_ctx_plan *planner = rl_plan_room(ctx);
    rl_budget *budget = rl_budget_of(ctx);
    rl_plan_entry *groups = malloc(sizeof *groups * (size_t)(room->points.n ? room->points.n : 1));
    if (!groups)
        rl_die(RL_EXIT_FAILED, "out of memory for the plan");
    for (int i = 0; i < room->nparts; i++) {
        rl_points pts = part_points(room, i);
        int first = room->parts[i].first;
        for (int j = 0; ctx->exp->observed && j < pts.n; j++) {
            rl_plan_group(planner, ctx, 1, 0);
            rl_budget_group(budget, first + j, 0, 0, 0, !pts.v[j].optional);
        }
        int n = ctx->exp->observed ? 0 : rl_points_plan(ctx, planner, &pts, first, groups);
        for (int g = 0; g < n; g++) {
            rl_plan_group(planner, ctx, groups[g].members, groups[g].call_s);
            rl_budget_group(budget, groups[g].leader, groups[g].members, groups[g].call_s,
                            groups[g].sum_s, groups[g].needed);
        }
    }
    free(groups);
    rl_plan_print(ctx);
}

/* ---- the one loop: each group of a part, admitted by the budget or not --------------
 * Every budget call of a run is made here: a part's open is time outside
 * the groups (the fixed work), each group is admitted or skipped, and is
 * done once timed (or, for an observed point, its hold is fixed work). */

/* The order a part's groups run in (their first points, as indexes into
 * pts): as declared; under --budget the groups a verdict needs first, the
 * cheapest first (when not all fit, the most verdicts are judged), then
 * the optional ones as declared. An observed experiment's points each
 * alone, as declared. Returns how many. */
static int group_order(rl_ctx *ctx, const rl_points *pts, int first, int *order)
{
    if (ctx->exp->observed) {
        for (int j = 0; j < pts->n; j++)
            order[j] = j;
        return pts->n;
    }
    const rl_budget *budget = rl_budget_of(ctx);
    int n = rl_points_leaders(pts, order);
    if (!budget)
        return n;
    double *cost = malloc(sizeof(double) * (size_t)(n ? n : 1));
    int *optional = malloc(sizeof(int) * (size_t)(n ? n : 1)), needed = 0, rest = 0;
    if (!cost || !optional)
        rl_die(RL_EXIT_FAILED, "out of memory for the groups' order");
    for (int k = 0; k < n; k++) {
        int i = order[k];
        if (!rl_points_group_needed(pts, i)) {
            optional[rest++] = i;
            continue;
        }
        double c = rl_budget_expected_s(budget, first + i);
        int at = needed++; /* insertion by expected seconds: a part has few groups */
        for (; at > 0 && c < cost[at - 1]; at--)
            cost[at] = cost[at - 1], order[at] = order[at - 1];
        cost[at] = c, order[at] = i;
    }
    for (int k = 0; k < rest; k++)
        order[needed + k] = optional[k];
    free(cost);
    free(optional);
    return n;
}

/* An observed point, validated, then observed on its own; its hold is
 * the experiment's fixed work. */
static void observe_point(rl_ctx *ctx, rl_point *p)
{
    rl_point_validate(ctx, p);
    if (p->state != RL_POINT_VALID)
        return;
    double t0 = rl_now_s();
    ctx->exp->observe(ctx, p);
    rl_point_observed(p);
    rl_budget_outside(rl_budget_of(ctx), rl_now_s() - t0); /* the fixed work (its hold) done */
}

/* The group of point i, not run: the run was asked to stop, or the budget
 * left no time for it; its rows say which. */
static void leave_out(rl_ctx *ctx, rl_points *pts, int i, bool stopped)
{
    if (ctx->exp->observed && stopped)
        rl_point_stop(&pts->v[i], "before it was observed");
    else if (stopped)
        rl_points_stop_group(pts, i);
    else if (ctx->exp->observed)
        rl_budget_skip(rl_budget_of(ctx), &pts->v[i]);
    else
        for (int j = i; j < pts->n; j++)
            if (rl_points_same_group(pts, i, j) && pts->v[j].state == RL_POINT_DECLARED)
                rl_budget_skip(rl_budget_of(ctx), &pts->v[j]);
}

static void run_groups(rl_ctx *ctx, rl_points *pts, int first)
{
    rl_budget *budget = rl_budget_of(ctx);
    int *order = malloc(sizeof(int) * (size_t)(pts->n ? pts->n : 1));
    if (!order)
        rl_die(RL_EXIT_FAILED, "out of memory for the groups' order");
    int n = group_order(ctx, pts, first, order);
    if (!budget && !ctx->exp->observed) /* every point validated before the first is timed */
        rl_points_validate(ctx, pts);
    for (int k = 0; k < n; k++) {
        int i = order[k];
        if (rl_stop_requested()) {
            leave_out(ctx, pts, i, true);
            continue;
        }
        if (!rl_budget_admit(budget, first + i, &ctx->rule)) {
            leave_out(ctx, pts, i, false);
            continue;
        }
        if (ctx->exp->observed) {
            observe_point(ctx, &pts->v[i]);
            continue;
        }
        rl_points_run_group(ctx, pts, i);
        rl_budget_group_done(budget, &ctx->rule);
    }
    free(order);
    rl_progress_clear();
}

/* Whether a part after part i has an open (fixed work still to do). */
static bool opens_after(const rl_ctx_parts *room, int i)
{
    for (int j = i + 1; j < room->nparts; j++)
        if (room->parts[j].part.open)
            return true;
    return false;
}

/* A part's open makes its buffers and inputs: where the fixed work is
 * done, but for an observed experiment's holds. */
static void open_part(rl_ctx *ctx, const rl_ctx_parts *room, int i)
{
    const rl_part *part = &room->parts[i].part;
    double t0 = rl_now_s();
    part->open(ctx, part->state);
    if (ctx->exp->observed)
        return;
    rl_budget *budget = rl_budget_of(ctx);
    rl_budget_outside(budget, rl_now_s() - t0);
    if (!opens_after(room, i))
        rl_budget_fixed_done(budget);
}

/* The rows a part writes, under its heading and table. */
static void report_part(rl_ctx *ctx, const rl_part *part, rl_points *pts)
{
    if (pts->n && part->heading) {
        rl_progress_clear();
        printf("\n%s\n", part->heading);
    }
    if (pts->n)
        rl_points_report_as(ctx, pts, part->table ? part->table : ctx->exp->table);
}

/* A part the run was asked to stop before (SIGTERM): its inputs are not
 * made (open), so neither measured nor done runs (they read what open
 * made); its points are rows that say why they were not run. */
static void stop_part(rl_ctx *ctx, const rl_part *part, rl_points *pts)
{
    for (int j = 0; j < pts->n; j++)
        if (pts->v[j].state == RL_POINT_DECLARED || pts->v[j].state == RL_POINT_VALID)
            rl_point_stop(&pts->v[j], "before its part began");
    report_part(ctx, part, pts);
}

static void run_part(rl_ctx *ctx, int i)
{
    const rl_ctx_parts *room = rl_parts_room(ctx);
    const rl_part *part = &room->parts[i].part;
    rl_points pts = part_points(room, i);
    if (rl_stop_requested()) {
        stop_part(ctx, part, &pts);
        return;
    }
    if (part->open)
        open_part(ctx, room, i);
    run_groups(ctx, &pts, room->parts[i].first);
    if (part->measured)
        part->measured(ctx, &pts, part->state);
    report_part(ctx, part, &pts);
    if (part->done)
        part->done(ctx, &pts, part->state);
}

/* --points: the plan's points as lines a diff can compare (two trees,
 * two modes), and nothing timed. */
static int list_points(rl_ctx *ctx)
{
    const rl_points *all = &rl_parts_room(ctx)->points;
    for (int i = 0; i < all->n; i++) {
        char line[2048];
        rl_point_describe(ctx, &all->v[i], line, sizeof line);
        printf("point %d %s\n", i, line);
    }
    return rl_end_discard(ctx);
}

int rl_run(const rl_experiment *exp, int argc, char **argv, const rl_charts *charts)
{
    rl_ctx *ctx = rl_begin(exp, argc, argv, charts);
    if (ctx->args.list) /* a family-less experiment: nothing to list */
        return rl_end(ctx);
    if (exp->read_options) /* a usage error exits before anything is measured */
        exp->read_options(ctx);
    rl_plan_start(rl_plan_room(ctx), rl_ceilings_get(ctx)); /* measured before declare */
    exp->declare(ctx);
    rl_ctx_parts *room = rl_parts_room(ctx);
    room->declared = true;
    plan(ctx);
    if (ctx->args.list_points)
        return list_points(ctx);
    for (int i = 0; i < room->nparts; i++)
        run_part(ctx, i);
    if (exp->judge && !room->discard)
        exp->judge(ctx, &room->points);
    return room->discard ? rl_end_discard(ctx) : rl_end(ctx);
}
