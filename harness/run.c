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

#include <stdio.h>
#include <stdlib.h>

/* A declared part and the range of points that belong to it. */
struct rl_declared_part {
    rl_part part;
    int first, n;
};

static rl_ctx_private *declaring(rl_ctx *ctx, const char *what)
{
    if (ctx->priv->declared)
        rl_die(RL_EXIT_FAILED, "internal error: exp-%s: %s after its declare function returned",
               ctx->exp->id, what);
    return ctx->priv;
}

void rl_part_add(rl_ctx *ctx, const rl_part *part)
{
    rl_ctx_private *p = declaring(ctx, "a part added");
    p->parts = rl_grow(p->parts, p->nparts, &p->cap_parts, 16, sizeof *p->parts, "parts");
    p->parts[p->nparts++] = (struct rl_declared_part){*part, p->points.n, 0};
}

rl_point *rl_point_add(rl_ctx *ctx, const rl_point *pt)
{
    rl_ctx_private *p = declaring(ctx, "a point added");
    if (p->nparts == 0)
        rl_part_add(ctx, &(rl_part){0});
    rl_point *q = rl_points_add(&p->points, pt);
    q->part = p->nparts - 1;
    p->parts[p->nparts - 1].n++;
    return q;
}

int rl_group_new(rl_ctx *ctx) { return rl_points_new_group(&declaring(ctx, "a group added")->points); }

const rl_points *rl_points_all(const rl_ctx *ctx) { return &ctx->priv->points; }

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
    rl_ctx_private *p = ctx->priv;
    p->kept = rl_grow(p->kept, p->nkept, &p->cap_kept, 64, sizeof *p->kept, "points' data");
    void *m = calloc(1, bytes ? bytes : 1);
    if (!m)
        rl_die(RL_EXIT_FAILED, "out of memory for a point's data");
    return p->kept[p->nkept++] = m;
}

void rl_run_release(rl_ctx *ctx)
{
    rl_ctx_private *p = ctx->priv;
    for (int i = 0; i < p->nkept; i++)
        free(p->kept[i]);
    free(p->kept);
    free(p->parts);
    rl_points_free(&p->points);
}

/* The points of one part, as a set of their own (a view into every point). */
static rl_points part_points(rl_ctx *ctx, int i)
{
    const struct rl_declared_part *d = &ctx->priv->parts[i];
    rl_points view = {ctx->priv->points.v + d->first, d->n, d->n, ctx->priv->points.last_group};
    return view;
}

/* An observed point holds its load for as long as the experiment says
 * (rl_plan_fixed in declare): the plan counts it as one step. */
static void plan(rl_ctx *ctx)
{
    for (int i = 0; i < ctx->priv->nparts; i++) {
        rl_points pts = part_points(ctx, i);
        if (ctx->exp->observed)
            for (int j = 0; j < pts.n; j++) {
                rl_plan_group(ctx, 1, 0);
                /* no model time: its hold is the experiment's fixed work */
                rl_budget_group(ctx, &pts.v[j], 0, 0, 0, !pts.v[j].optional);
            }
        else
            rl_points_plan(ctx, &pts);
    }
    rl_plan_print(ctx);
}

/* Each point validated, then observed on its own, as a group of one (the
 * budget admits it or not first); its hold is the experiment's fixed work. */
static void observe_each(rl_ctx *ctx, rl_points *pts)
{
    for (int i = 0; i < pts->n; i++) {
        rl_point *p = &pts->v[i];
        if (rl_stop_requested()) {
            rl_point_stop(p, "before it was observed");
            continue;
        }
        if (!rl_budget_admit(ctx, p)) {
            rl_budget_skip(ctx, p);
            continue;
        }
        rl_point_validate(ctx, p);
        if (p->state != RL_POINT_VALID)
            continue;
        double t0 = rl_now_s();
        ctx->exp->observe(ctx, p);
        rl_point_observed(p);
        rl_budget_outside(ctx, rl_now_s() - t0); /* the fixed work (its hold) done */
    }
    rl_progress_clear();
}

/* Whether a part after part i has an open (fixed work still to do). */
static bool opens_after(const rl_ctx *ctx, int i)
{
    for (int j = i + 1; j < ctx->priv->nparts; j++)
        if (ctx->priv->parts[j].part.open)
            return true;
    return false;
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
    const rl_part *part = &ctx->priv->parts[i].part;
    rl_points pts = part_points(ctx, i);
    if (rl_stop_requested()) {
        stop_part(ctx, part, &pts);
        return;
    }
    if (part->open) { /* where the fixed work is done, but for an observed experiment's holds */
        double t0 = rl_now_s();
        part->open(ctx, part->state);
        if (!ctx->exp->observed) {
            rl_budget_outside(ctx, rl_now_s() - t0);
            if (!opens_after(ctx, i))
                rl_budget_fixed_done(ctx);
        }
    }
    if (ctx->exp->observed)
        observe_each(ctx, &pts);
    else
        rl_points_measure(ctx, &pts);
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
    const rl_points *all = &ctx->priv->points;
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
    rl_ceilings_get(ctx);
    exp->declare(ctx);
    ctx->priv->declared = true;
    plan(ctx);
    if (ctx->args.list_points)
        return list_points(ctx);
    for (int i = 0; i < ctx->priv->nparts; i++)
        run_part(ctx, i);
    if (exp->judge && !ctx->priv->discard)
        exp->judge(ctx, &ctx->priv->points);
    return ctx->priv->discard ? rl_end_discard(ctx) : rl_end(ctx);
}
