/*
 * doubling.c -- Horace He's doubling test on a small model step.
 *
 * Time the step at batch b and at 2b. If the time barely moves (ratio
 * below 1.1), the step is not limited by its work but by fixed costs:
 * launches, synchronizations, the host. The batch where the ratio first
 * exceeds 1.1 is where the work starts to count. A graph cuts the fixed
 * cost, so that batch should come earlier with one. The test's three
 * verdicts are judged here too (exp06_judge_doubling).
 */
#include "exp06.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const double ATOL = 1e-4, RTOL = 1e-4; /* float sums of d products vs double */

/* The step's buffers at the largest batch, made when the part opens: its
 * inputs on the device and their host copies, h and y; want: the
 * reference at ref_batch. */
typedef struct weights {
    int d, bmax, ref_batch;
    float *in[STEP_INPUTS], *host[STEP_INPUTS], *h, *y;
    double *want;
    char heading[96];
} weights;

/* The step's inputs at batch bmax: random on the host, copied to the device. */
static void open_weights(rl_ctx *ctx, void *state)
{
    weights *w = state;
    size_t xd = (size_t)w->bmax * w->d;
    w->h = rl_alloc(ctx->be, xd * sizeof(float));
    w->y = rl_alloc(ctx->be, xd * sizeof(float));
    w->want = rl_host_alloc(xd * sizeof(double));
    w->ref_batch = 0;
    for (int i = 0; i < STEP_INPUTS; i++) {
        float lo, hi;
        size_t n = step_input(i, w->bmax, w->d, &lo, &hi);
        w->host[i] = rl_host_random(ctx, n, lo, hi);
        w->in[i] = rl_alloc_copy(ctx->be, w->host[i], n * sizeof(float));
    }
}

/* Before validation: binds the step to the part's buffers, builds what
 * the variant replays (timed), computes the double reference (once per
 * batch: the variants of a batch are validated one after the other),
 * poisons h; the harness poisons y, runs the step and checks every
 * element of y. */
static void prepare_step(rl_ctx *ctx, rl_point *p)
{
    exp06_call *c = RL_DATA_MUT(exp06_call, p);
    weights *w = c->w;
    int batch = c->s.batch;
    c->s = step_on(c->s.ops, w->in, w->h, w->y, batch, w->d, rl_stream(ctx->be));
    p->out = w->y;
    p->want = w->want;
    if (c->s.ops->build) {
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

/* The doubling point of p's variant at twice p's batch (key: p). */
static bool at_twice_the_batch(const rl_point *q, const void *key)
{
    const rl_point *p = key;
    const exp06_call *c = RL_DATA(exp06_call, p), *twice = RL_DATA(exp06_call, q);
    return q->variant == p->variant && !strcmp(twice->test, "doubling") &&
           twice->batch == 2 * c->batch;
}

/* t(2b) / t(b), on the row of b, where 2b was timed too, with its spread
 * from the same two points' q1-q3 (the chart's bars). */
rl_ratio exp06_doubling_ratio(const rl_points *all, const rl_point *p)
{
    if (!rl_point_timed(p) || strcmp(RL_DATA(exp06_call, p)->test, "doubling"))
        return RL_RATIO_NONE;
    const rl_point *twice = rl_points_find(all, NULL, at_twice_the_batch, p);
    return twice ? rl_time_ratio(twice, p) : RL_RATIO_NONE;
}

/* A point of this variant whose doubling costs more than 10 %. */
typedef struct variant_in {
    const rl_points *all;
    const kernel_variant *v;
} variant_in;

static bool doubling_costs(const rl_point *p, const void *key)
{
    const variant_in *in = key;
    return p->variant == in->v && exp06_doubling_ratio(in->all, p).median > 1.1;
}

int exp06_doubling_knee(const rl_points *all, const kernel_variant *v)
{
    const rl_point *p = rl_points_find(all, NULL, doubling_costs, &(variant_in){all, v});
    return p ? (int)RL_DATA(exp06_call, p)->batch : 0;
}

static double col_doubling_ratio(rl_ctx *ctx, const rl_point *p)
{
    return exp06_doubling_ratio(rl_points_all(ctx), p).median;
}

static const rl_column TABLE[] = {
    {NULL, "variant", "%-9s", .str = rl_col_variant},
    RL_DOUBLE(NULL, "batch", "%7.0f", exp06_call, batch),
    RL_COLUMN_TIME_US,
    {NULL, "t(2b)/t(b)", "%10.2f", .num = col_doubling_ratio, .measured = true},
    {0},
};

/* After the part's table: the knee of each variant; then its buffers and
 * the graphs are freed. */
static void close_weights(rl_ctx *ctx, const rl_points *pts, void *state)
{
    weights *w = state;
    const rl_points *all = rl_points_all(ctx);
    double smallest = pts->n ? RL_DATA(exp06_call, &pts->v[0])->batch : 0;
    for (int i = 0; i < pts->n && RL_DATA(exp06_call, &pts->v[i])->batch == smallest; i++) {
        const char *name = pts->v[i].variant->name;
        int knee = exp06_doubling_knee(all, pts->v[i].variant);
        if (knee == 0)
            printf("  %s: doubling never cost > 10 %%: overhead-bound at every batch measured\n", name);
        else if (knee == smallest)
            printf("  %s: doubling costs > 10 %% from the smallest batch (%d): no overhead-bound region\n",
                   name, knee);
        else
            printf("  %s: doubling first costs > 10 %% at batch %d: overhead-bound below it\n", name, knee);
    }
    fflush(stdout);
    for (int i = 0; i < pts->n; i++) {
        exp06_call *c = RL_DATA_MUT(exp06_call, &pts->v[i]);
        if (c->s.ops->release)
            c->s.ops->release(&c->s);
    }
    for (int i = 0; i < STEP_INPUTS; i++) {
        rl_free(ctx->be, w->in[i]);
        rl_host_free(w->host[i]);
    }
    rl_free(ctx->be, w->h);
    rl_free(ctx->be, w->y);
    rl_host_free(w->want);
}

/* ---- the axis and the points ------------------------------------------------------ */

/* The largest batch: past a small step's work-bound knee. */
static double largest_batch(const rl_ctx *ctx) { return ctx->kind == RL_CUDA ? 1 << 16 : 1 << 10; }

/* The batch b = 1, 2, 4, ... the largest; quick: the pairs (b, 2b) for
 * b = 1, 16, 256, ..., and the last pair. */
static const rl_axis GPU_BATCH = RL_AXIS("batch", RL_LIST(1, 2, 16, 32, 256, 512, 4096, 8192,
                                                          32768, 65536),
                                         RL_TIMES(1, 2), RL_TIMES(1, 2));
static const rl_axis BATCH = RL_AXIS("batch", RL_LIST(1, 2, 16, 32, 256, 512, 1024),
                                     RL_TIMES(1, 2), RL_TIMES(1, 2), .gpu = &GPU_BATCH,
                                     .top = largest_batch);

int exp06_largest_batch(const rl_ctx *ctx) { return (int)rl_axis_last(ctx, &BATCH); }

/* One batch: a group of every step variant. The plan's model: the step's
 * FLOPs at the compute roof and four launches of a few microseconds. */
static void batch_points(rl_ctx *ctx, const rl_at *at, void *state)
{
    weights *w = state;
    int b = rl_at_int(at, &BATCH), d = w->d;
    for (const step_variant *v = step_variants; v->name; v++) {
        if (!rl_runs(ctx, &step_family, KERNEL_VARIANT(v)))
            continue;
        exp06_call *c = exp06_new_call(ctx, "doubling");
        c->batch = b, c->d = d, c->w = w;
        c->s = (step_args){.ops = RL_LAUNCHER(ctx, v), .batch = b, .d = d};
        rl_point_add(ctx, &(rl_point){
            .variant = KERNEL_VARIANT(v), .group = at->group, .call = step_kernel_call(&c->s),
            RL_POINT_DATA(c), .prepare = prepare_step, .count = (size_t)b * d, .atol = ATOL,
            .rtol = RTOL, .flops = 4.0 * b * d * (double)d, .extra_s = 4 * 3e-6});
    }
}

/* One part, its buffers at the largest batch: a group a batch. */
void exp06_doubling_declare(rl_ctx *ctx, int d)
{
    static const rl_axis *const AXES[] = {&BATCH, NULL};
    weights *w = RL_NEW(ctx, weights);
    *w = (weights){.d = d, .bmax = exp06_largest_batch(ctx)};
    snprintf(w->heading, sizeof w->heading,
             "  doubling test: h = relu(x W1 + bias); y = h W2 + x, d = %d", d);
    rl_part_add(ctx, &(rl_part){.open = open_weights, .done = close_weights, .state = w,
                                .table = TABLE, .heading = w->heading});
    rl_sweep_declare(ctx, &(rl_sweep){AXES, .group_axes = 1, .points = batch_points, .state = w});
}

/* ---- the judgement ------------------------------------------------------------------- */

/* Where a variant's knee lies, given each ratio's spread: the first batch
 * whose ratio could exceed 1.1 (its high end does) and the first whose
 * ratio surely does (its low end does); INT_MAX where none does. The
 * median's knee lies between them. */
typedef struct knee_range {
    int earliest, surely;
} knee_range;

static knee_range knee_of(const rl_points *all, const kernel_variant *v)
{
    knee_range k = {INT_MAX, INT_MAX};
    for (int i = 0; i < all->n; i++) {
        const rl_point *p = &all->v[i];
        rl_ratio r = p->variant == v ? exp06_doubling_ratio(all, p) : RL_RATIO_NONE;
        int batch = (int)RL_DATA(exp06_call, p)->batch;
        if (isnan(r.median))
            continue;
        if (fmax(r.lo, r.hi) > 1.1 && batch < k.earliest)
            k.earliest = batch;
        if (fmin(r.lo, r.hi) > 1.1 && batch < k.surely)
            k.surely = batch;
    }
    return k;
}

/* A point with a doubling ratio (key: every point). */
static bool has_ratio(const rl_point *p, const void *all)
{
    return isfinite(exp06_doubling_ratio(all, p).median);
}

/* The graph's knee no later than the launches': judged where the two
 * knees' ranges do not overlap, so a knee the noise moves by one batch
 * says "not measured", not the opposite of the last run. */
static void judge_shrinks(rl_ctx *ctx, const rl_points *all, const rl_point *smallest,
                          const rl_claim *c)
{
    const kernel_variant *launches = rl_variant_by_role(ctx, &step_family, "op_by_op");
    const kernel_variant *graph = rl_variant_by_role(ctx, &step_family, "graph");
    int kl = exp06_doubling_knee(all, launches), kg = exp06_doubling_knee(all, graph);
    knee_range kl_at = knee_of(all, launches), kg_at = knee_of(all, graph);
    char measured[96], why[320];
    snprintf(measured, sizeof measured, "graph %d, launches %d", kg, kl);
    rl_verdict_status st = RL_NOT_MEASURED;
    snprintf(why, sizeof why, "below that batch the step is overhead-bound");
    if (kl == 0 || kg == 0)
        snprintf(why, sizeof why, "a variant never reached a ratio of 1.1 (0 above): its region "
                 "has no end in this range");
    else if (smallest && kl_at.earliest <= RL_DATA(exp06_call, smallest)->batch)
        snprintf(why, sizeof why, "the launched step's doubling may cost > 10 %% from the smallest "
                 "batch (its ratio's spread reaches 1.1 there): no overhead-bound region to shrink");
    else if (kg_at.surely <= kl_at.earliest)
        st = RL_HOLDS;
    else if (kg_at.earliest > kl_at.surely)
        st = RL_DOES_NOT_HOLD;
    else {
        /* the ranges' ends as numbers, "beyond" where no ratio surely exceeds 1.1 */
        char g_hi[16] = "beyond", l_hi[16] = "beyond";
        if (kg_at.surely != INT_MAX)
            snprintf(g_hi, sizeof g_hi, "%d", kg_at.surely);
        if (kl_at.surely != INT_MAX)
            snprintf(l_hi, sizeof l_hi, "%d", kl_at.surely);
        snprintf(why, sizeof why, "the knees' ranges overlap (each ratio's q1-q3 spread against "
                 "1.1): graph %d to %s, launches %d to %s: a rerun could order them either way",
                 kg_at.earliest, g_hi, kl_at.earliest, l_hi);
    }
    rl_judge_status(ctx, c, NULL, measured, st, why);
}

/* The smallest batch's ratio fails only where the step there is as
 * overhead-bound as the claim presumes, its premise: its work W (its time
 * less its launches' fixed cost F, launch_s each, measured by the chain
 * test) small enough that doubling it keeps the step under the bound b:
 * (F + 2W) / (F + W) < b needs W < F (b - 1) / (2 - b), a ninth of F for
 * b = 1.1. A step with more work than that doubles past the bound by its
 * work, whatever its launches cost: a failure there is the work's
 * (README, "The doubling test on a CPU"). */
static void overhead_premise(rl_premise *pr, const rl_point *p, double launch_s,
                             const char *launch_what, double bound)
{
    double fixed = STEP_LAUNCHES * launch_s, work = p ? p->seconds - fixed : NAN;
    char work_what[96], fixed_what[160];
    snprintf(work_what, sizeof work_what, "the launched step's work at batch %.0f (its time less "
             "its launches)", p ? RL_DATA(exp06_call, p)->batch : 0);
    snprintf(fixed_what, sizeof fixed_what, "its %d launches (%s, %.2f us each)", STEP_LAUNCHES,
             launch_what, launch_s * 1e6);
    if (!(work <= 0)) /* work <= 0: all of it fixed cost, overhead-bound */
        rl_premise_hides_under_to_fail(pr, work, work_what, fixed, fixed_what,
                                       (bound - 1) / (2 - bound),
                                       "the step is work-bound there, so its time follows the "
                                       "batch whatever its launches cost (--width narrows it)");
}

void exp06_judge_doubling(rl_ctx *ctx, const rl_points *all, const rl_claim *small,
                          const rl_claim *large, const rl_claim *shrinks, double launch_s,
                          const char *launch_what)
{
    bool gpu = ctx->kind == RL_CUDA;
    /* The launched step at the smallest and the largest batch with a ratio */
    const rl_point *lo = rl_points_find(all, "op_by_op", has_ratio, all);
    const rl_point *hi = rl_points_find_last(all, "op_by_op", has_ratio, all);
    char note[256];
    snprintf(note, sizeof note, "batch %.0f, d = %.0f; %s", lo ? RL_DATA(exp06_call, lo)->batch : 0,
             lo ? RL_DATA(exp06_call, lo)->d : 0,
             gpu ? "t(2b) / t(b), the step launched op by op"
                 : "CPU: four OpenMP regions per step; a region costs microseconds, a GPU launch several");
    rl_premise pr = rl_premise_start();
    overhead_premise(&pr, lo, launch_s, launch_what, small->hi);
    rl_judge_ratio_given(ctx, small, NULL, lo ? exp06_doubling_ratio(all, lo) : RL_RATIO_NONE, &pr,
                         note);
    snprintf(note, sizeof note, "batch %.0f, d = %.0f; the work dominates: time follows the batch",
             hi ? RL_DATA(exp06_call, hi)->batch : 0, hi ? RL_DATA(exp06_call, hi)->d : 0);
    rl_judge_ratio_given(ctx, large, NULL, hi ? exp06_doubling_ratio(all, hi) : RL_RATIO_NONE, NULL,
                         note);
    judge_shrinks(ctx, all, lo, shrinks);
}
