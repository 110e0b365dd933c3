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

#include <stdio.h>

static const double ATOL = 1e-4, RTOL = 1e-4; /* float sums of d products vs double */

/* The step's buffers at the largest batch: its inputs on the device and
 * their host copies, h and y; want: the reference at ref_batch. */
typedef struct weights {
    int d, ref_batch;
    float *in[STEP_INPUTS], *host[STEP_INPUTS], *h, *y;
    double *want;
} weights;

/* The step's inputs at batch bmax: random on the host, copied to the device. */
static weights *open_weights(rl_ctx *ctx, int d, int bmax)
{
    size_t xd = (size_t)bmax * d;
    weights *w = rl_host_alloc(sizeof *w);
    *w = (weights){.d = d, .h = rl_alloc(ctx->be, xd * sizeof(float)),
                   .y = rl_alloc(ctx->be, xd * sizeof(float)),
                   .want = rl_host_alloc(xd * sizeof(double))};
    for (int i = 0; i < STEP_INPUTS; i++) {
        float lo, hi;
        size_t n = step_input(i, bmax, d, &lo, &hi);
        w->host[i] = rl_host_random(ctx, n, lo, hi);
        w->in[i] = rl_alloc_copy(ctx->be, w->host[i], n * sizeof(float));
    }
    return w;
}

void doubling_close(rl_ctx *ctx, weights *w)
{
    if (!w)
        return;
    for (int i = 0; i < STEP_INPUTS; i++) {
        rl_free(ctx->be, w->in[i]);
        rl_host_free(w->host[i]);
    }
    rl_free(ctx->be, w->h);
    rl_free(ctx->be, w->y);
    rl_host_free(w->want);
    rl_host_free(w);
}

/* Before validation: builds what the variant replays (timed), computes
 * the double reference (once per batch: the variants of a batch are
 * validated one after the other), poisons h; the harness poisons y, runs
 * the step and checks every element of y. */
static void prepare_step(rl_ctx *ctx, rl_point *p)
{
    call *c = call_of(p);
    weights *w = c->w;
    int batch = c->s.batch;
    if (c->s.ops->build && !c->s.graph) {
        double t0 = rl_now_s();
        c->s.ops->build(&c->s);
        c->build_us = (rl_now_s() - t0) * 1e6;
    }
    if (w->ref_batch != batch) {
        step_reference(batch, w->d, w->host, w->want);
        w->ref_batch = batch;
    }
    rl_poison(ctx->be, w->h, (size_t)batch * w->d * sizeof(float));
}

/* Each batch a group of every step variant: b = 2^e = 1, 2, 4, ... bmax (a
 * power of 2); quick: the pairs (b, 2b) for b = 1, 16, 256, ... (e % 4 is
 * 0 or 1), and the last pair. The plan's model: the step's FLOPs at the
 * compute roof and four launches of a few microseconds. */
weights *doubling_declare(rl_ctx *ctx, rl_points *pts, int d, int bmax)
{
    weights *w = open_weights(ctx, d, bmax);
    for (int e = 0, b = 1; b <= bmax; e++, b *= 2) {
        if (ctx->args.mode == RL_MODE_QUICK && e % 4 > 1 && 2 * b < bmax)
            continue;
        int group = rl_points_new_group(pts);
        for (const step_variant *v = step_variants; v->name; v++) {
            if (!rl_runs(ctx, &step_family, KERNEL_VARIANT(v)))
                continue;
            call *c = new_call("doubling");
            c->batch = b, c->d = d, c->w = w;
            c->s = step_on(RL_LAUNCHER(ctx, v), w->in, w->h, w->y, b, d, rl_stream(ctx->be));
            rl_points_add(pts, &(rl_point){
                .variant = KERNEL_VARIANT(v), .group = group, .run = step_call, .arg = &c->s,
                .data = c, .prepare = prepare_step, .out = w->y, .count = (size_t)b * d,
                .want = w->want, .atol = ATOL, .rtol = RTOL, .flops = 4.0 * b * d * (double)d,
                .extra_s = 4 * 3e-6});
        }
    }
    return w;
}

/* t(2b) / t(b), on the row of b, where 2b was measured too, with its
 * spread from the same two points' q1-q3 (the chart's bars). */
static void ratios(rl_points *pts)
{
    for (int i = 0; i < pts->n; i++)
        for (int j = 0; j < pts->n; j++) {
            const rl_point *p = &pts->v[i], *q = &pts->v[j];
            if (rl_point_timed(p) && rl_point_timed(q) && q->variant == p->variant &&
                call_of(q)->batch == 2 * call_of(p)->batch)
                call_of(p)->ratio = rl_time_ratio(q, p);
        }
}

int doubling_knee(const rl_points *pts, const kernel_variant *v)
{
    for (int i = 0; i < pts->n; i++)
        if (rl_point_timed(&pts->v[i]) && pts->v[i].variant == v && call_of(&pts->v[i])->ratio.median > 1.1)
            return (int)call_of(&pts->v[i])->batch;
    return 0;
}

static const rl_column TABLE[] = {
    {NULL, "variant", "%-9s", .str = rl_col_variant},
    RL_DOUBLE(NULL, "batch", "%7.0f", call, batch),
    RL_COLUMN_TIME_US,
    RL_DOUBLE_MEASURED(NULL, "t(2b)/t(b)", "%10.2f", call, ratio.median),
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
    for (int i = 0; i < pts->n && call_of(&pts->v[i])->batch == smallest; i++) {
        const char *name = pts->v[i].variant->name;
        int knee = doubling_knee(pts, pts->v[i].variant);
        if (knee == 0)
            printf("  %s: doubling never cost > 10 %%: overhead-bound at every batch measured\n", name);
        else if (knee == smallest)
            printf("  %s: doubling costs > 10 %% from the smallest batch (%d): no overhead-bound region\n",
                   name, knee);
        else
            printf("  %s: doubling first costs > 10 %% at batch %d: overhead-bound below it\n", name, knee);
    }
    fflush(stdout);
}
