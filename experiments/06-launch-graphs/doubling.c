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
#include <string.h>

static const double ATOL = 1e-4, RTOL = 1e-4; /* float sums of d products vs double */

typedef struct weights {
    float *w1, *w2, *bias, *x, *h, *y;   /* device */
    float *hw1, *hw2, *hbias, *hx, *got; /* host copies */
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

static void make_weights(rl_ctx *ctx, weights *w, int d, int bmax)
{
    size_t dd = (size_t)d * d, xd = (size_t)bmax * d;
    float scale = sqrtf(3.0f / d); /* uniform weights of variance 1/d: rows stay O(1) */
    w->hw1 = rl_host_alloc(dd * sizeof(float));
    w->hw2 = rl_host_alloc(dd * sizeof(float));
    w->hbias = rl_host_alloc(d * sizeof(float));
    w->hx = rl_host_alloc(xd * sizeof(float));
    w->got = rl_host_alloc(xd * sizeof(float));
    w->want = rl_host_alloc(xd * sizeof(double));
    rl_fill_uniform(w->hw1, dd, -scale, scale, rl_next_seed(ctx));
    rl_fill_uniform(w->hw2, dd, -scale, scale, rl_next_seed(ctx));
    rl_fill_uniform(w->hbias, d, -0.5f, 0.5f, rl_next_seed(ctx));
    rl_fill_uniform(w->hx, xd, -1, 1, rl_next_seed(ctx));
    w->w1 = rl_alloc(ctx->be, dd * sizeof(float));
    w->w2 = rl_alloc(ctx->be, dd * sizeof(float));
    w->bias = rl_alloc(ctx->be, d * sizeof(float));
    w->x = rl_alloc(ctx->be, xd * sizeof(float));
    w->h = rl_alloc(ctx->be, xd * sizeof(float));
    w->y = rl_alloc(ctx->be, xd * sizeof(float));
    rl_upload(ctx->be, w->w1, w->hw1, dd * sizeof(float));
    rl_upload(ctx->be, w->w2, w->hw2, dd * sizeof(float));
    rl_upload(ctx->be, w->bias, w->hbias, d * sizeof(float));
    rl_upload(ctx->be, w->x, w->hx, xd * sizeof(float));
}

static void free_weights(rl_ctx *ctx, weights *w)
{
    float *dev[] = {w->w1, w->w2, w->bias, w->x, w->h, w->y};
    for (int i = 0; i < 6; i++)
        rl_free(ctx->be, dev[i]);
    float *host[] = {w->hw1, w->hw2, w->hbias, w->hx, w->got};
    for (int i = 0; i < 5; i++)
        rl_host_free(host[i]);
    rl_host_free(w->want);
}


/* A point and its step arguments: what rl_measure_group runs. */
typedef struct slot {
    step_point p;
    step_args s;
} slot;

static void run_step(void *arg)
{
    slot *sl = arg;
    sl->p.way->run(&sl->s);
}

/* Every element of y against the double reference (computed once per batch). */
static void validate(rl_ctx *ctx, weights *w, step_point *p, step_args *s)
{
    size_t count = (size_t)p->batch * p->d;
    rl_poison(ctx->be, w->y, count * sizeof(float));
    rl_poison(ctx->be, w->h, count * sizeof(float));
    p->way->run(s);
    rl_download(ctx->be, w->got, w->y, count * sizeof(float));
    rl_check c = rl_compare_f32(w->got, w->want, count, ATOL, RTOL);
    p->ok = c.ok;
    p->max_abs_err = c.max_abs_err;
    if (!c.ok) {
        rl_check_describe(&c, p->why, sizeof p->why);
        fprintf(stderr, "exp-06: step %s (batch %d) %s\n", p->way->name, p->batch, p->why);
        ctx->failures++;
    }
}


static void write_row(rl_ctx *ctx, const step_point *p)
{
    rl_set_str(ctx, "test", "doubling");
    rl_set_str(ctx, "way", p->way->name);
    rl_set_int(ctx, "number", p->way->number);
    rl_set_int(ctx, "batch", p->batch);
    rl_set_int(ctx, "d", p->d);
    rl_set_str(ctx, "validated", p->ok ? "yes" : "no");
    rl_set_num(ctx, "max_abs_err", p->max_abs_err);
    if (p->ok) {
        rl_set_measurement(ctx, &p->m);
        rl_set_num(ctx, "graph_build_us", p->build_us);
        rl_set_num(ctx, "doubling_ratio", p->ratio);
    } else {
        rl_set_str(ctx, "skipped_reason", p->why);
    }
    rl_end_row(ctx);
}

void doubling_rows(rl_ctx *ctx, const doubling *dt)
{
    for (int i = 0; i < dt->n; i++)
        write_row(ctx, &dt->pts[i]);
}

/* t(2b) / t(b), on the row of b, where 2b was measured too. */
static void ratios(doubling *dt)
{
    for (int i = 0; i < dt->n; i++) {
        step_point *p = &dt->pts[i];
        p->ratio = NAN;
        for (int j = 0; j < dt->n; j++) {
            const step_point *q = &dt->pts[j];
            if (p->ok && q->ok && q->way == p->way && q->batch == 2 * p->batch)
                p->ratio = q->m.stats.median / p->m.stats.median;
        }
    }
}

doubling doubling_test(rl_ctx *ctx, const step_way *table, int d, int bmax)
{
    int batches[64], nb = batch_list(ctx, bmax, batches), nways = 0;
    for (const step_way *w = table; w->name; w++)
        nways++;
    slot *slots = calloc((size_t)nb * nways, sizeof *slots);
    doubling dt = {calloc((size_t)nb * nways, sizeof(step_point)), 0};
    weights w;
    make_weights(ctx, &w, d, bmax);
    for (int b = 0; b < nb; b++) {
        step_reference(batches[b], d, w.hw1, w.hw2, w.hbias, w.hx, w.want);
        rl_work works[8];
        slot *members[8];
        int nw = 0;
        for (const step_way *way = table; way->name; way++) {
            slot *sl = &slots[b * nways + (way - table)];
            sl->p = (step_point){.way = way, .batch = batches[b], .d = d, .build_us = NAN};
            sl->s = (step_args){.batch = batches[b], .d = d, .w1 = w.w1, .w2 = w.w2, .bias = w.bias,
                                .x = w.x, .h = w.h, .y = w.y, .stream = rl_stream(ctx->be)};
            if (way->build) {
                double t0 = rl_now_s();
                way->build(&sl->s);
                sl->p.build_us = (rl_now_s() - t0) * 1e6;
            }
            validate(ctx, &w, &sl->p, &sl->s);
            if (sl->p.ok) {
                works[nw] = (rl_work){way->name, run_step, sl};
                members[nw++] = sl;
            }
        }
        rl_progress_step(ctx, "doubling: batch %d", batches[b]);
        rl_measurement m[8];
        if (nw)
            rl_measure_group(ctx, works, nw, m);
        for (int i = 0; i < nw; i++)
            members[i]->p.m = m[i];
        for (int i = 0; i < nways; i++) {
            slot *sl = &slots[b * nways + i];
            if (sl->p.way->release)
                sl->p.way->release(&sl->s);
            dt.pts[dt.n++] = sl->p;
        }
    }
    rl_progress_clear();
    ratios(&dt);
    printf("\n  doubling test: h = relu(x W1 + bias); y = h W2 + x, d = %d\n", d);
    printf("  %-9s %7s %12s %8s\n", "way", "batch", "time/us", "t(2b)/t(b)");
    for (int i = 0; i < dt.n; i++) {
        const step_point *p = &dt.pts[i];
        if (p->ok)
            printf("  %-9s %7d %12.2f %8.2f\n", p->way->name, p->batch, p->m.stats.median * 1e6, p->ratio);
        else
            printf("  %-9s %7d  FAILED validation: %s\n", p->way->name, p->batch, p->why);
    }
    for (const step_way *way = table; way->name; way++) {
        int knee = doubling_knee(&dt, way->name);
        if (knee == 0)
            printf("  %s: doubling never cost > 10 %%: overhead-bound at every batch measured\n", way->name);
        else if (knee == batches[0])
            printf("  %s: doubling costs > 10 %% from the smallest batch (%d): no overhead-bound region\n",
                   way->name, knee);
        else
            printf("  %s: doubling first costs > 10 %% at batch %d: overhead-bound below it\n", way->name, knee);
    }
    fflush(stdout);
    free_weights(ctx, &w);
    free(slots);
    return dt;
}

/* The plan: one group per batch, every way; the step's FLOPs at the
 * compute roof and four launches of a few microseconds (a model). */
void plan_doubling(rl_ctx *ctx, const step_way *table, int d, int bmax)
{
    int batches[64], nb = batch_list(ctx, bmax, batches), nways = 0;
    for (const step_way *w = table; w->name; w++)
        nways++;
    for (int b = 0; b < nb; b++) {
        double flops = 4.0 * batches[b] * d * (double)d;
        rl_plan_group(ctx, nways, rl_estimate_call_s(ctx, 0, 0, RL_READ, flops) + 4 * 3e-6);
    }
}

int doubling_knee(const doubling *dt, const char *way)
{
    for (int i = 0; i < dt->n; i++)
        if (dt->pts[i].ok && !strcmp(dt->pts[i].way->name, way) && dt->pts[i].ratio > 1.1)
            return dt->pts[i].batch;
    return 0;
}

void doubling_free(doubling *dt)
{
    free(dt->pts);
    dt->pts = NULL;
    dt->n = 0;
}
