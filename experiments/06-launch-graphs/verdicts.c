/*
 * verdicts.c -- experiment 06's claims, judged from the measured points.
 * The same ids on both backends; on the CPU each says what the CPU's
 * version of a launch (an OpenMP region) shows, and where the analogy
 * stops. Variants are found by their roles.
 */
#include "exp06.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { GRAPH_CHEAP_GPU, GRAPH_CHEAP_CPU, SYNC_SLOWEST_GPU, SYNC_SLOWEST_CPU, DOUBLING_SMALL,
       DOUBLING_LARGE, GRAPH_SHRINKS };

const rl_claim EXP06_CLAIMS[] = {
    [GRAPH_CHEAP_GPU] = {"graph_replay_cheap", "graph replay per empty kernel", 0, 0.5, "x", 2,
                         .predicted_text = "<= 0.5x async, <= 2 us"},
    [GRAPH_CHEAP_CPU] = {"graph_replay_cheap", "region without barriers per empty kernel", 0, 0.5,
                         "x", 2, .predicted_text = "<= 0.5x async, <= 2 us"},
    [SYNC_SLOWEST_GPU] = {"sync_each_slowest", "synchronize after each launch vs async", 1,
                          INFINITY, "x", 2, .predicted_text = ">= 1x"},
    [SYNC_SLOWEST_CPU] = {"sync_each_slowest", "fork/join per kernel vs one region with barriers",
                          1, INFINITY, "x", 2, .predicted_text = ">= 1x"},
    [DOUBLING_SMALL] = {"doubling_small_batch", "doubling ratio at the smallest batch", 0, 1.1, "",
                        2, .predicted_text = "< 1.1"},
    [DOUBLING_LARGE] = {"doubling_large_batch", "doubling ratio at the largest batch", 1.6,
                        INFINITY, "", 2, .predicted_text = "> 1.6"},
    [GRAPH_SHRINKS] = {"graph_shrinks_overhead_region",
                       "first batch whose doubling costs > 10 %: graph vs launches", -INFINITY,
                       INFINITY, "", 0, .predicted_text = "graph <= launches"},
    {0},
};

/* The chain of the empty kernel (n = 1) at k (key). */
static bool empty_at(const rl_point *p, const void *k)
{
    const exp06_call *c = RL_DATA(exp06_call, p);
    return !strcmp(c->test, "chain") && c->n == 1 && c->k == *(const double *)k;
}

static const rl_point *empty_chain(const rl_points *pts, const char *role, double k)
{
    return rl_points_find(pts, role, empty_at, &k);
}

/* An empty chain that the synchronous and asynchronous variants ran too
 * (key: the points). */
static bool all_three_ran(const rl_point *p, const void *pts)
{
    double k = RL_DATA(exp06_call, p)->k;
    return empty_at(p, &k) && empty_chain(pts, "synchronous", k) &&
           empty_chain(pts, "asynchronous", k);
}

void exp06_judge_chain(rl_ctx *ctx, const rl_points *all)
{
    bool gpu = ctx->kind == RL_CUDA;
    const rl_claim *cheap = &EXP06_CLAIMS[gpu ? GRAPH_CHEAP_GPU : GRAPH_CHEAP_CPU];
    const rl_claim *slowest = &EXP06_CLAIMS[gpu ? SYNC_SLOWEST_GPU : SYNC_SLOWEST_CPU];
    /* The longest such chain: the last, as the sweep runs k upwards */
    const rl_point *g = rl_points_find_last(all, "graph", all_three_ran, all);
    if (!g) {
        const char *why = "the chain test did not run all three variants";
        rl_judge_status(ctx, cheap, NULL, "-", RL_NOT_MEASURED, why);
        rl_judge_status(ctx, slowest, NULL, "-", RL_NOT_MEASURED, why);
        return;
    }
    double k = RL_DATA(exp06_call, g)->k;
    const rl_point *s = empty_chain(all, "synchronous", k), *a = empty_chain(all, "asynchronous", k);
    double us_s = us_per_kernel(s), us_a = us_per_kernel(a), us_g = us_per_kernel(g);
    char measured[128], note[320];
    snprintf(measured, sizeof measured, "%.3f us vs %.3f us (%.2fx)", us_g, us_a, us_g / us_a);
    if (gpu)
        snprintf(note, sizeof note, "k = %.0f, 1 thread, 1 element per kernel; graph built in %.0f "
                 "us, host issues a launch in %.2f us", k, RL_DATA(exp06_call, g)->build_us,
                 RL_DATA(exp06_call, a)->host_us);
    else
        snprintf(note, sizeof note, "k = %.0f; CPU: 'graph' is one parallel region whose threads "
                 "skip the barriers (element-wise chains need none); a CUDA graph keeps the order "
                 "between kernels", k);
    rl_judge_status(ctx, cheap, NULL, measured,
                    us_g / us_a <= 0.5 && us_g <= 2 ? RL_HOLDS : RL_DOES_NOT_HOLD, note);

    snprintf(note, sizeof note, "k = %.0f: %.3f us vs %.3f us per kernel; %s", k, us_s, us_a,
             gpu ? "each synchronize adds a host round trip to every kernel"
                 : "CPU: a join is the synchronize; the barrier is a join without the fork");
    rl_judge(ctx, slowest, NULL, us_s / us_a, note);
}

/* A point with a doubling ratio (key: every point). */
static bool has_ratio(const rl_point *p, const void *all)
{
    return isfinite(exp06_doubling_ratio(all, p).median);
}

void exp06_judge_doubling(rl_ctx *ctx, const rl_points *all)
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
    rl_judge(ctx, &EXP06_CLAIMS[DOUBLING_SMALL], NULL, lo ? exp06_doubling_ratio(all, lo).median : NAN, note);
    snprintf(note, sizeof note, "batch %.0f, d = %.0f; the work dominates: time follows the batch",
             hi ? RL_DATA(exp06_call, hi)->batch : 0, hi ? RL_DATA(exp06_call, hi)->d : 0);
    rl_judge(ctx, &EXP06_CLAIMS[DOUBLING_LARGE], NULL, hi ? exp06_doubling_ratio(all, hi).median : NAN, note);

    /* No overhead-bound region to shrink when the launches' smallest batch
     * already costs > 10 % more doubled; none measured when a variant never does. */
    const kernel_variant *launches = rl_variant_by_role(ctx, &step_family, "op_by_op");
    const kernel_variant *graph = rl_variant_by_role(ctx, &step_family, "graph");
    int kl = exp06_doubling_knee(all, launches), kg = exp06_doubling_knee(all, graph);
    char measured[96];
    snprintf(measured, sizeof measured, "graph %d, launches %d", kg, kl);
    rl_verdict_status st = RL_NOT_MEASURED;
    const char *why = "below that batch the step is overhead-bound";
    if (kl == 0 || kg == 0)
        why = "a variant never reached a ratio of 1.1 (0 above): its region has no end in this range";
    else if (lo && kl == RL_DATA(exp06_call, lo)->batch)
        why = "the launched step is work-bound from the smallest batch: no region to shrink";
    else
        st = kg <= kl ? RL_HOLDS : RL_DOES_NOT_HOLD;
    rl_judge_status(ctx, &EXP06_CLAIMS[GRAPH_SHRINKS], NULL, measured, st, why);
}
