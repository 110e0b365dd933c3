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

static const point *find(const point *pts, int n, const char *sweep, const char *name, int workers,
                         double duty)
{
    for (int i = 0; i < n; i++)
        if (pts[i].ok && !strcmp(pts[i].sweep, sweep) && !strcmp(pts[i].name, name) &&
            (workers < 0 || pts[i].workers == workers) && (duty < 0 || pts[i].duty == duty))
            return &pts[i];
    return NULL;
}

static const char *fmt(char *buf, size_t len, const char *f, double x)
{
    if (isnan(x))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, f, x);
    return buf;
}

/* The largest |reading - measured duty| over the duty sweep of one size. */
static double worst_tracking(const point *pts, int n, int workers, int *count)
{
    double worst = NAN;
    *count = 0;
    for (int i = 0; i < n; i++) {
        const point *p = &pts[i];
        if (!p->ok || strcmp(p->sweep, "b_duty") || p->workers != workers || isnan(p->rd.util_pct))
            continue;
        double dev = fabs(p->rd.util_pct - 100 * p->duty_measured);
        worst = isnan(worst) ? dev : fmax(worst, dev);
        ++*count;
    }
    return worst;
}

static void judge_tracking(rl_ctx *ctx, const point *pts, int n, int workers, const char *id,
                           const char *size)
{
    bool gpu = ctx->kind == RL_CUDA;
    int count;
    double worst = worst_tracking(pts, n, workers, &count);
    char claim[160], measured[64], note[160];
    snprintf(claim, sizeof claim, "%s tracks the duty cycle, %s", gpu ? "utilization.gpu" : "busy time",
             size);
    snprintf(note, sizeof note, "largest |reading - duty from %s| over %d duty points",
             gpu ? "event timestamps" : "clock timestamps", count);
    fmt(measured, sizeof measured, "%.1f points", worst);
    rl_verdict(ctx, id, claim, "within 10 points", measured,
               count < 2 ? RL_NOT_MEASURED : rl_within(worst, 0, 10), count < 2 ? "fewer than two duty points" : note);
}

static void judge_memory(rl_ctx *ctx, const point *pts, int n)
{
    bool gpu = ctx->kind == RL_CUDA;
    const point *idle = find(pts, n, "c_memory", "idle_allocation", -1, -1);
    const point *stream = find(pts, n, "c_memory", "stream", -1, -1);
    char measured[160], note[200];
    if (!idle || !stream) {
        rl_verdict(ctx, "memory_held_is_not_traffic", "memory held is not memory busy",
                   "idle: used high, busy ~0; stream: busy high", "-", RL_NOT_MEASURED,
                   "sweep c not run");
        return;
    }
    double share_idle = 100 * idle->rd.mem_used / idle->rd.mem_total;
    double share_stream = 100 * stream->rd.mem_used / stream->rd.mem_total;
    double busy_idle = gpu ? idle->rd.util_mem_pct : idle->rd.util_pct;
    double busy_stream = gpu ? stream->rd.util_mem_pct : stream->rd.util_pct;
    snprintf(measured, sizeof measured, "idle: %.1f %% held, %.1f %% busy; stream: %.1f %% held, %.1f %% busy",
             share_idle, busy_idle, share_stream, busy_stream);
    rl_verdict_status st = RL_NOT_MEASURED;
    if (!isnan(busy_idle) && !isnan(busy_stream) && !isnan(share_idle) && !isnan(share_stream))
        st = busy_idle <= 10 && busy_stream >= (gpu ? 50 : 90) &&
                     idle->rd.mem_used >= 4 * stream->rd.mem_used ? RL_HOLDS : RL_DOES_NOT_HOLD;
    snprintf(note, sizeof note, "%s", gpu ? "busy = utilization.memory; held = memory.used / memory.total"
             : "CPU has no utilization.memory: busy = the streaming threads' CPU time, held = resident set / RAM");
    rl_verdict(ctx, "memory_held_is_not_traffic",
               gpu ? "utilization.memory is traffic time, not memory.used"
                   : "resident memory says nothing of memory traffic (CPU)",
               gpu ? "idle: mem util <= 10 %, held >= 4x stream's; stream: mem util >= 50 %"
                   : "idle: busy <= 10 %, held >= 4x stream's; stream: busy >= 90 %",
               measured, st, note);
}

void judge(rl_ctx *ctx, const point *pts, int n, int units, double full, double ceiling_gbps,
           double bytes_per_hop)
{
    bool gpu = ctx->kind == RL_CUDA;
    const char *worker = gpu ? "block" : "thread";
    char measured[128], note[200], claim[160], pred[96];
    const point *one = find(pts, n, "a_occupancy", "arith", 1, 1.0);

    double u1 = one ? one->rd.util_pct : NAN;
    snprintf(claim, sizeof claim, "one busy %s reads busy (%s)", worker, gpu ? "utilization.gpu" : "top -H");
    snprintf(note, sizeof note, "while it does %s of the full device's work", one && full > 0 ?
             (snprintf(pred, sizeof pred, "%.4f", one->work_per_s / full), pred) : "-");
    rl_verdict(ctx, "one_worker_reads_busy", claim, ">= 90 %", fmt(measured, sizeof measured, "%.1f %%", u1),
               rl_within(u1, 90, 1e9), note);

    const point *chase = find(pts, n, "a_occupancy", "chase", 1, 1.0);
    double share = chase ? chase->work_per_s * bytes_per_hop / 1e9 / ceiling_gbps : NAN;
    double uc = chase ? chase->rd.util_pct : NAN;
    snprintf(measured, sizeof measured, isnan(uc) ? "-" : "%.1f %% busy, %.3f of bandwidth", uc, share);
    snprintf(note, sizeof note, "a pointer chase waits on memory every hop; traffic counted as %.0f B "
             "per hop over the DRAM read bandwidth", bytes_per_hop);
    rl_verdict(ctx, "chase_reads_busy", "a pointer chase reads busy while moving little data",
               "busy >= 90 %, < 0.25 of bandwidth", measured,
               isnan(uc) || isnan(share) ? RL_NOT_MEASURED
                                         : (uc >= 90 && share < 0.25 ? RL_HOLDS : RL_DOES_NOT_HOLD), note);

    judge_tracking(ctx, pts, n, 1, "tracks_duty_one_worker", gpu ? "1 block" : "1 thread");
    snprintf(claim, sizeof claim, gpu ? "every SM (%d blocks)" : "every CPU (%d threads)", units);
    judge_tracking(ctx, pts, n, units, "tracks_duty_full_device", claim);

    double ratio = one && full > 0 ? full / one->work_per_s : NAN;
    snprintf(pred, sizeof pred, ">= %.1fx (%s / 2)", units / 2.0, gpu ? "SMs" : "CPUs");
    snprintf(note, sizeof note, "full device: the most arith work per second in sweep a; both read busy");
    rl_verdict(ctx, "work_differs", "work: full device / one busy worker", pred,
               fmt(measured, sizeof measured, "%.1fx", ratio), rl_within(ratio, units / 2.0, 1e12), note);

    double view = one ? one->rd.units_busy_pct : NAN;
    if (gpu) {
        snprintf(note, sizeof note, "GPM: %s", one ? one->rd.gpm_status : "sweep a not run");
        rl_verdict(ctx, "units_view_one_worker", "GPM SM_UTIL with one busy block", "< 5 %",
                   fmt(measured, sizeof measured, "%.2f %%", view), isnan(view) ? RL_NOT_MEASURED : rl_within(view, 0, 5),
                   isnan(view) ? note : "SM_UTIL counts busy SMs: one of them");
    } else {
        snprintf(pred, sizeof pred, "%.0f %% +- 10 (1 / %d CPUs)", 100.0 / units, units);
        rl_verdict(ctx, "units_view_one_worker", "the machine-wide view (process CPU / CPUs), one thread",
                   pred, fmt(measured, sizeof measured, "%.1f %%", view),
                   rl_within(view, 100.0 / units - 10, 100.0 / units + 10),
                   "like GPM SM_UTIL, it counts how much of the machine was busy; no GPM on a CPU");
    }
    judge_memory(ctx, pts, n);
}
