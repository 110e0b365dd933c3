/*
 * verdicts.c -- experiment 06's claims, judged from the measured points.
 * The same ids on both backends; on the CPU each says what the CPU's
 * version of a launch (an OpenMP region) shows, and where the analogy
 * stops.
 */
#include "exp06.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const chain_point *find(const chain_point *pts, int n, const char *way, int k, size_t size)
{
    for (int i = 0; i < n; i++)
        if (pts[i].ok && !strcmp(pts[i].test, "chain") && pts[i].k == k && pts[i].n == size &&
            !strcmp(pts[i].way->name, way))
            return &pts[i];
    return NULL;
}

/* The longest chain of empty kernels where the three ways were all measured. */
static int longest_empty_chain(const chain_point *pts, int n)
{
    int best = 0;
    for (int i = 0; i < n; i++)
        if (pts[i].ok && !strcmp(pts[i].test, "chain") && pts[i].n == 1 && pts[i].k > best &&
            find(pts, n, "sync_each", pts[i].k, 1) && find(pts, n, "async", pts[i].k, 1) &&
            find(pts, n, "graph", pts[i].k, 1))
            best = pts[i].k;
    return best;
}

void judge_chain(rl_ctx *ctx, const chain_point *pts, int n)
{
    bool gpu = ctx->kind == RL_CUDA;
    int k = longest_empty_chain(pts, n);
    const chain_point *s = find(pts, n, "sync_each", k, 1), *a = find(pts, n, "async", k, 1),
                      *g = find(pts, n, "graph", k, 1);
    char measured[128], note[256], claim[128];
    if (!k) {
        rl_verdict(ctx, "graph_replay_cheap", "graph replay per empty kernel", "<= 0.5x async, <= 2 us",
                   "-", RL_NOT_MEASURED, "the chain test did not run all three ways");
        rl_verdict(ctx, "sync_each_slowest", "synchronize after each launch vs async", ">= 1x", "-",
                   RL_NOT_MEASURED, "the chain test did not run all three ways");
        return;
    }
    double ratio = g->us_per_kernel / a->us_per_kernel;
    snprintf(measured, sizeof measured, "%.3f us vs %.3f us (%.2fx)", g->us_per_kernel, a->us_per_kernel, ratio);
    snprintf(claim, sizeof claim, gpu ? "graph replay per empty kernel (k = %d)"
                                      : "region without barriers per empty kernel (k = %d)", k);
    if (gpu)
        snprintf(note, sizeof note, "1 thread, 1 element per kernel; graph built in %.0f us, host "
                 "issues a launch in %.2f us", g->graph_build_us, a->host_us_per_launch);
    else
        snprintf(note, sizeof note, "CPU: 'graph' is one parallel region whose threads skip the "
                 "barriers (element-wise chains need none); a CUDA graph keeps the order between kernels");
    rl_verdict(ctx, "graph_replay_cheap", claim, "<= 0.5x async, <= 2 us", measured,
               ratio <= 0.5 && g->us_per_kernel <= 2 ? RL_HOLDS : RL_DOES_NOT_HOLD, note);

    snprintf(measured, sizeof measured, "%.3f us vs %.3f us (%.2fx)", s->us_per_kernel, a->us_per_kernel,
             s->us_per_kernel / a->us_per_kernel);
    snprintf(claim, sizeof claim, gpu ? "synchronize after each launch vs async (k = %d)"
                                      : "fork/join per kernel vs one region with barriers (k = %d)", k);
    rl_verdict(ctx, "sync_each_slowest", claim, ">= 1x", measured,
               s->us_per_kernel >= a->us_per_kernel ? RL_HOLDS : RL_DOES_NOT_HOLD,
               gpu ? "each synchronize adds a host round trip to every kernel"
                   : "CPU: a join is the synchronize; the barrier is a join without the fork");
}

/* The doubling ratio at the smallest (first) or largest (last) batch where
 * one is known, for one way. */
static const step_point *edge_ratio(const doubling *dt, const char *way, bool last)
{
    const step_point *found = NULL;
    for (int i = 0; i < dt->n; i++) {
        const step_point *p = &dt->pts[i];
        if (p->ok && !strcmp(p->way->name, way) && isfinite(p->ratio) && (last || !found))
            found = p;
    }
    return found;
}

void judge_doubling(rl_ctx *ctx, const doubling *dt)
{
    bool gpu = ctx->kind == RL_CUDA;
    const step_point *lo = edge_ratio(dt, "launches", false), *hi = edge_ratio(dt, "launches", true);
    char measured[96], claim[128], note[256];
    snprintf(claim, sizeof claim, "doubling ratio at the smallest batch (%d)", lo ? lo->batch : 0);
    snprintf(measured, sizeof measured, lo ? "%.2f" : "-", lo ? lo->ratio : 0);
    snprintf(note, sizeof note, "%s", gpu ? "t(2b) / t(b), the step launched op by op"
             : "CPU: four OpenMP regions per step; a region costs microseconds, a GPU launch several");
    rl_verdict(ctx, "doubling_small_batch", claim, "< 1.1", measured,
               lo ? rl_within(lo->ratio, 0, 1.1) : RL_NOT_MEASURED, note);
    snprintf(claim, sizeof claim, "doubling ratio at the largest batch (%d)", hi ? hi->batch : 0);
    snprintf(measured, sizeof measured, hi ? "%.2f" : "-", hi ? hi->ratio : 0);
    rl_verdict(ctx, "doubling_large_batch", claim, "> 1.6", measured,
               hi ? rl_within(hi->ratio, 1.6, 1e9) : RL_NOT_MEASURED, "the work dominates: time follows the batch");

    /* No overhead-bound region to shrink when the launches' smallest batch
     * already costs > 10 % more doubled; none measured when a way never does. */
    int kl = doubling_knee(dt, "launches"), kg = doubling_knee(dt, "graph");
    snprintf(measured, sizeof measured, "graph %d, launches %d", kg, kl);
    rl_verdict_status st = RL_NOT_MEASURED;
    const char *why = "below that batch the step is overhead-bound";
    if (kl == 0 || kg == 0)
        why = "a way never reached a ratio of 1.1 (0 above): its region has no end in this range";
    else if (lo && kl == lo->batch)
        why = "the launched step is work-bound from the smallest batch: no region to shrink";
    else
        st = kg <= kl ? RL_HOLDS : RL_DOES_NOT_HOLD;
    rl_verdict(ctx, "graph_shrinks_overhead_region",
               "first batch whose doubling costs > 10 %: graph vs launches", "graph <= launches",
               measured, st, why);
}
