/*
 * verdicts.c -- experiment 01's claims, judged from the measured points.
 *
 * The same verdict ids on both backends; on the CPU each is stated as the
 * CPU's version of the claim (the tool is the kernel's CPU accounting, a
 * worker is a thread, the device's units are its logical CPUs).
 */
#include "exp01.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* In the order of the prediction. A claim with a CPU twin has the GPU's
 * first, the CPU's right after it: claim() takes this run's. */
enum { ONE_BUSY, ONE_BUSY_CPU, CHASE_BUSY, TRACKS_ONE, TRACKS_ONE_CPU, TRACKS_FULL,
       TRACKS_FULL_CPU, WORK_DIFFERS, WORK_DIFFERS_CPU, UNITS_VIEW, UNITS_VIEW_CPU, MEMORY,
       MEMORY_CPU };

#define WITHIN_10 0, 10, "points", 1, .predicted_text = "within 10 points"

const rl_claim EXP01_CLAIMS[] = {
    [ONE_BUSY] = {"one_worker_reads_busy", "one busy block reads busy (utilization.gpu)", 90,
                  INFINITY, "%", 1},
    [ONE_BUSY_CPU] = {"one_worker_reads_busy", "one busy thread reads busy (top -H)", 90,
                      INFINITY, "%", 1},
    [CHASE_BUSY] = {"chase_reads_busy", "a pointer chase reads busy while moving little data",
                    .predicted_text = "busy >= 90 %, < 0.25 of bandwidth"},
    [TRACKS_ONE] = {"tracks_duty_one_worker", "utilization.gpu tracks the duty cycle, 1 block",
                    WITHIN_10},
    [TRACKS_ONE_CPU] = {"tracks_duty_one_worker", "busy time tracks the duty cycle, 1 thread",
                        WITHIN_10},
    [TRACKS_FULL] = {"tracks_duty_full_device", "utilization.gpu tracks the duty cycle, every SM",
                     WITHIN_10},
    [TRACKS_FULL_CPU] = {"tracks_duty_full_device", "busy time tracks the duty cycle, every CPU",
                         WITHIN_10},
    /* bounds known at run time: from the number of SMs or CPUs */
    [WORK_DIFFERS] = {"work_differs", "work: full device / one busy worker", NAN, INFINITY, "x",
                      1, .predicted_text = ">= SMs / 2"},
    [WORK_DIFFERS_CPU] = {"work_differs", "work: full device / one busy worker", NAN, INFINITY,
                          "x", 1, .predicted_text = ">= CPUs / 2"},
    [UNITS_VIEW] = {"units_view_one_worker", "GPM SM_UTIL with one busy block", 0, 5, "%", 2,
                    .predicted_text = "< 5 %"},
    [UNITS_VIEW_CPU] = {"units_view_one_worker",
                        "the machine-wide view (process CPU / CPUs), one thread", NAN, NAN, "%", 1,
                        .predicted_text = "1 / CPUs, +- 10 points"},
    [MEMORY] = {"memory_held_is_not_traffic", "utilization.memory is traffic time, not memory.used",
                .predicted_text = "idle: mem util <= 10 %, held >= 4x stream's; stream: mem util "
                                  ">= 50 %"},
    [MEMORY_CPU] = {"memory_held_is_not_traffic",
                    "resident memory says nothing of memory traffic (CPU)",
                    .predicted_text = "idle: busy <= 10 %, held >= 4x stream's; stream: busy "
                                      ">= 90 %"},
    {0},
};

static const rl_claim *claim(const rl_ctx *ctx, int gpu_claim)
{
    return &EXP01_CLAIMS[gpu_claim + (ctx->kind != RL_CUDA)];
}

/* A point of this sweep on this many workers (< 0: any). */
typedef struct where {
    const char *sweep;
    int workers;
} where;

static bool in_sweep(const rl_point *p, const void *key)
{
    const point *d = RL_DATA(point, p);
    const where *w = key;
    return !strcmp(d->sweep, w->sweep) && (w->workers < 0 || d->workers == w->workers);
}

/* The first observed point of a sweep whose variant has this role, on
 * this many workers (< 0: any). Sweep a runs at full duty, and sweep c's
 * compute point is its idle allocation. */
static const point *find(const rl_points *all, const char *sweep, const char *role, int workers)
{
    const rl_point *p = rl_points_find(all, role, in_sweep, &(where){sweep, workers});
    return p ? RL_DATA(point, p) : NULL;
}

/* The largest |reading - measured duty| over the duty sweep of one size;
 * not measured with fewer than two points. */
static void judge_tracking(rl_ctx *ctx, const rl_points *all, int workers, const rl_claim *c)
{
    double worst = NAN;
    int count = 0;
    for (int i = 0; i < all->n; i++) {
        const point *p = RL_DATA(point, &all->v[i]);
        if (!rl_point_timed(&all->v[i]) || strcmp(p->sweep, "b_duty") || p->workers != workers ||
            isnan(p->rd.util_pct))
            continue;
        worst = fmax(worst, fabs(p->rd.util_pct - p->measured.pct)); /* fmax skips a NaN */
        count++;
    }
    char note[160] = "fewer than two duty points";
    if (count >= 2)
        snprintf(note, sizeof note, "%d %s%s; largest |reading - duty from %s| over %d duty points",
                 workers, ctx->kind == RL_CUDA ? "block" : "thread", workers == 1 ? "" : "s",
                 ctx->kind == RL_CUDA ? "event timestamps" : "clock timestamps", count);
    rl_judge(ctx, c, NULL, count < 2 ? NAN : worst, note);
}

static void judge_memory(rl_ctx *ctx, const rl_points *all)
{
    bool gpu = ctx->kind == RL_CUDA;
    const point *idle = find(all, "c_memory", "compute", -1);
    const point *stream = find(all, "c_memory", "bandwidth", -1);
    if (!idle || !stream) {
        rl_judge_status(ctx, claim(ctx, MEMORY), NULL, "-", RL_NOT_MEASURED, "sweep c not run");
        return;
    }
    double share_idle = 100 * idle->rd.mem_used / idle->rd.mem_total;
    double share_stream = 100 * stream->rd.mem_used / stream->rd.mem_total;
    double busy_idle = gpu ? idle->rd.util_mem_pct : idle->rd.util_pct;
    double busy_stream = gpu ? stream->rd.util_mem_pct : stream->rd.util_pct;
    char measured[160];
    snprintf(measured, sizeof measured, "idle: %.1f %% held, %.1f %% busy; stream: %.1f %% held, "
             "%.1f %% busy", share_idle, busy_idle, share_stream, busy_stream);
    rl_verdict_status st = RL_NOT_MEASURED;
    if (!isnan(busy_idle) && !isnan(busy_stream) && !isnan(share_idle) && !isnan(share_stream))
        st = busy_idle <= 10 && busy_stream >= (gpu ? 50 : 90) &&
                     idle->rd.mem_used >= 4 * stream->rd.mem_used ? RL_HOLDS : RL_DOES_NOT_HOLD;
    rl_judge_status(ctx, claim(ctx, MEMORY), NULL, measured, st,
                    gpu ? "busy = utilization.memory; held = memory.used / memory.total"
                        : "CPU has no utilization.memory: busy = the streaming threads' CPU time, "
                          "held = resident set / RAM");
}

void exp01_judge(rl_ctx *ctx, const rl_points *all)
{
    bool gpu = ctx->kind == RL_CUDA;
    int units = rl_units(ctx);
    double full = exp01_full_device(all);
    char measured[128], note[200];
    const point *one = find(all, "a_occupancy", "compute", 1);

    snprintf(note, sizeof note, "while it does %s of the full device's work", one && full > 0 ?
             (snprintf(measured, sizeof measured, "%.4f", one->work_per_s / full), measured) : "-");
    rl_judge(ctx, claim(ctx, ONE_BUSY), NULL, one ? one->rd.util_pct : NAN, note);

    const point *chase = find(all, "a_occupancy", "latency", 1);
    double share = chase ? chase->gbps / rl_ceilings_get(ctx)->bw[RL_DRAM][RL_READ].best : NAN;
    double uc = chase ? chase->rd.util_pct : NAN;
    snprintf(measured, sizeof measured, isnan(uc) ? "-" : "%.1f %% busy, %.3f of bandwidth", uc,
             share);
    snprintf(note, sizeof note, "a pointer chase waits on memory every hop; traffic counted as "
             "%.0f B per hop over the DRAM read bandwidth", bytes_per_hop(ctx));
    rl_verdict_status st = uc >= 90 && share < 0.25 ? RL_HOLDS : RL_DOES_NOT_HOLD;
    rl_judge_status(ctx, &EXP01_CLAIMS[CHASE_BUSY], NULL, measured,
                    isnan(uc) || isnan(share) ? RL_NOT_MEASURED : st, note);

    judge_tracking(ctx, all, 1, claim(ctx, TRACKS_ONE));
    judge_tracking(ctx, all, units, claim(ctx, TRACKS_FULL));

    snprintf(note, sizeof note, "bound %.1fx (%d %s / 2); full device: the most compute work per "
             "second in sweep a; both read busy", units / 2.0, units, gpu ? "SMs" : "CPUs");
    rl_judge_within(ctx, claim(ctx, WORK_DIFFERS), NULL,
                    one && full > 0 ? full / one->work_per_s : NAN, units / 2.0, INFINITY, note);

    double view = one ? one->rd.units_busy_pct : NAN;
    if (gpu) {
        snprintf(note, sizeof note, "GPM: %s", one ? one->rd.gpm_status : "sweep a not run");
        rl_judge(ctx, claim(ctx, UNITS_VIEW), NULL, view,
                 isnan(view) ? note : "SM_UTIL counts busy SMs: one of them");
    } else {
        snprintf(note, sizeof note, "1 / %d CPUs = %.0f %%; like GPM SM_UTIL, it counts how much "
                 "of the machine was busy; no GPM on a CPU", units, 100.0 / units);
        rl_judge_within(ctx, claim(ctx, UNITS_VIEW), NULL, view, 100.0 / units - 10,
                        100.0 / units + 10, note);
    }
    judge_memory(ctx, all);
}
