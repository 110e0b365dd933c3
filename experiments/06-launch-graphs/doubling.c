/*
 * doubling.c -- Horace He's doubling test on a small model step.
 *
 * Time the step at batch b and at 2b. If the time barely moves (ratio
 * below 1.1), the step is not limited by its work but by fixed costs:
 * launches, synchronizations, the host. The batch where the ratio first
 * exceeds 1.1 is where the work starts to count. A graph cuts the fixed
 * cost, so that batch should come earlier with one.
 */
#include "exp06.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const double ATOL = 1e-4, RTOL = 1e-4; /* float sums of d products vs double */

typedef struct weights {
    int d, bmax, ref_batch;              /* ref_batch: the batch want holds */
    float *w1, *w2, *bias, *x, *h, *y;   /* device */
    float *hw1, *hw2, *hbias, *hx; /* host copies */
    double *want;
} weights;

/* Batches 1, 2, 4, ... bmax; quick: pairs (b, 2b) for b = 1, 16, 256, ...,
 * and the last pair. */
static int batch_list(const rl_ctx *ctx, int bmax, int *out)
{
    int n = 0;
    if (ctx->args.mode != RL_MODE_QUICK) {
        for (int b = 1; b <= bmax; b *= 2)
            out[n++] = b;
        return n;
    }
    for (int b = 1; 2 * b <= bmax; b *= 16) {
        out[n++] = b;
        out[n++] = 2 * b;
    }
    if (out[n - 1] != bmax) {
        if (out[n - 1] != bmax / 2)
            out[n++] = bmax / 2;
        out[n++] = bmax;
    }
    return n;
}

weights *doubling_open(rl_ctx *ctx, int d, int bmax)
{
    weights *w = calloc(1, sizeof *w);
    if (!w)
        rl_die(RL_EXIT_FAILED, "out of memory");
    size_t dd = (size_t)d * d, xd = (size_t)bmax * d;
    float scale = sqrtf(3.0f / d); /* uniform weights of variance 1/d: rows stay O(1) */
    *w = (weights){.d = d, .bmax = bmax};
    w->hw1 = rl_host_alloc(dd * sizeof(float));
    w->hw2 = rl_host_alloc(dd * sizeof(float));
    w->hbias = rl_host_alloc(d * sizeof(float));
    w->hx = rl_host_alloc(xd * sizeof(float));
    w->want = rl_host_alloc(xd * sizeof(double));
    rl_fill_uniform(w->hw1, dd, -scale, scale, rl_next_seed(ctx));
    rl_fill_uniform(w->hw2, dd, -scale, scale, rl_next_seed(ctx));
    rl_fill_uniform(w->hbias, d, -0.5f, 0.5f, rl_next_seed(ctx));
    rl_fill_uniform(w->hx, xd, -1, 1, rl_next_seed(ctx));
    w->w1 = rl_alloc_copy(ctx->be, w->hw1, dd * sizeof(float));
    w->w2 = rl_alloc_copy(ctx->be, w->hw2, dd * sizeof(float));
    w->bias = rl_alloc_copy(ctx->be, w->hbias, d * sizeof(float));
    w->x = rl_alloc_copy(ctx->be, w->hx, xd * sizeof(float));
    w->h = rl_alloc(ctx->be, xd * sizeof(float));
    w->y = rl_alloc(ctx->be, xd * sizeof(float));
    return w;
}

void doubling_close(rl_ctx *ctx, weights *w)
{
    float *dev[] = {w->w1, w->w2, w->bias, w->x, w->h, w->y};
    for (int i = 0; i < 6; i++)
        rl_free(ctx->be, dev[i]);
    float *host[] = {w->hw1, w->hw2, w->hbias, w->hx};
    for (int i = 0; i < 4; i++)
        rl_host_free(host[i]);
    rl_host_free(w->want);
    free(w);
}

static void run_step(void *arg)
{
    call *c = arg;
    c->step->run(&c->s);
}

/* Before validation: builds what the variant replays (timed), computes
 * the double reference (once per batch: the variants of a batch are
 * validated one after the other), poisons h; the harness poisons y, runs
 * the step and checks every element of y. */
static void prepare_step(rl_ctx *ctx, rl_point *p)
{
    call *c = p->arg;
    weights *w = c->w;
    int batch = c->s.batch;
    if (c->step->build && !c->s.graph) {
        double t0 = rl_now_s();
        c->step->build(&c->s);
        c->build_us = (rl_now_s() - t0) * 1e6;
    }
    if (w->ref_batch != batch) {
        step_reference(batch, w->d, w->hw1, w->hw2, w->hbias, w->hx, w->want);
        w->ref_batch = batch;
    }
    rl_poison(ctx->be, w->h, (size_t)batch * w->d * sizeof(float));
}

/* Each batch a group of every step variant; the plan's model: the step's
 * FLOPs at the compute roof and four launches of a few microseconds. */
void doubling_declare(rl_ctx *ctx, rl_points *pts, weights *w)
{
    int batches[64], nb = batch_list(ctx, w->bmax, batches), d = w->d;
    for (int i = 0; i < nb; i++) {
        int group = rl_points_new_group(pts), b = batches[i];
        for (const step_variant *v = step_variants; v->name; v++) {
            if (!rl_runs(ctx, &step_family, KERNEL_VARIANT(v)))
                continue;
            call *c = new_call("doubling");
            c->batch = b, c->d = d, c->w = w, c->step = RL_LAUNCHER(ctx, v);
            c->s = (step_args){.batch = b, .d = d, .w1 = w->w1, .w2 = w->w2, .bias = w->bias,
                               .x = w->x, .h = w->h, .y = w->y, .stream = rl_stream(ctx->be)};
            rl_points_add(pts, &(rl_point){
                .variant = KERNEL_VARIANT(v), .group = group, .run = run_step, .arg = c, .data = c,
                .prepare = prepare_step, .out = w->y, .count = (size_t)b * d, .want = w->want,
                .atol = ATOL, .rtol = RTOL, .flops = 4.0 * b * d * (double)d, .extra_s = 4 * 3e-6});
        }
    }
}

/* t(2b) / t(b), on the row of b, where 2b was measured too. */
static void ratios(rl_points *pts)
{
    for (int i = 0; i < pts->n; i++)
        for (int j = 0; j < pts->n; j++) {
            const rl_point *p = &pts->v[i], *q = &pts->v[j];
            if (rl_point_timed(p) && rl_point_timed(q) && q->variant == p->variant &&
                call_of(q)->batch == 2 * call_of(p)->batch)
                call_of(p)->ratio = q->seconds / p->seconds;
        }
}

int doubling_knee(const rl_points *pts, const kernel_variant *v)
{
    for (int i = 0; i < pts->n; i++)
        if (rl_point_timed(&pts->v[i]) && pts->v[i].variant == v && call_of(&pts->v[i])->ratio > 1.1)
            return (int)call_of(&pts->v[i])->batch;
    return 0;
}

static const rl_column TABLE[] = {
    {NULL, "variant", "%-9s", .str = rl_col_variant},
    RL_DOUBLE(NULL, "batch", "%7.0f", call, batch),
    RL_COLUMN_TIME_US,
    RL_DOUBLE_MEASURED(NULL, "t(2b)/t(b)", "%10.2f", call, ratio),
    {0},
};

void doubling_run(rl_ctx *ctx, rl_points *pts)
{
    rl_points_measure(ctx, pts);
    ratios(pts);
    if (!pts->n)
        return;
    printf("\n  doubling test: h = relu(x W1 + bias); y = h W2 + x, d = %.0f\n", call_of(&pts->v[0])->d);
    rl_points_report_as(ctx, pts, TABLE);
    double smallest = call_of(&pts->v[0])->batch;
    for (const step_variant *v = step_variants; v->name; v++) {
        if (!rl_runs(ctx, &step_family, KERNEL_VARIANT(v)))
            continue;
        int knee = doubling_knee(pts, KERNEL_VARIANT(v));
        if (knee == 0)
            printf("  %s: doubling never cost > 10 %%: overhead-bound at every batch measured\n", v->name);
        else if (knee == smallest)
            printf("  %s: doubling costs > 10 %% from the smallest batch (%d): no overhead-bound region\n",
                   v->name, knee);
        else
            printf("  %s: doubling first costs > 10 %% at batch %d: overhead-bound below it\n", v->name, knee);
    }
    fflush(stdout);
}
