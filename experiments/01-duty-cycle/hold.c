/*
 * hold.c -- how experiment 01 holds a point and reads it: the run's part
 * (its buffers and observer, the holds fitted to --budget), then each
 * point's load settled unobserved and held for HOLD_WINDOWS windows that
 * the observer reads one by one.
 */
#include "exp01.h"
#include "rl_host.h"

#include <math.h>
#include <stdio.h>

/* ---- one point: settle, then hold and read ----------------------------- */

/* Device memory held idle: allocated and written once. */
static void *idle_allocation(rl_ctx *ctx, double *bytes)
{
    double target;
    if (ctx->kind == RL_CUDA) {
        char pci[32];
        double free_b, total_b;
        busy_device(pci, sizeof pci, &free_b, &total_b);
        target = 0.5 * free_b; /* half of what is free: memory.used high */
    } else {
        /* 16x the stream's buffers, at most a quarter of the machine's RAM. */
        target = fmin(16 * 2 * 2 * ctx->dev->llc_bytes,
                      fmin(0.25 * rl_host_ram_bytes(), rl_max_bytes(ctx)));
    }
    size_t b = (size_t)target & ~(size_t)((1 << 20) - 1);
    void *p = rl_alloc(ctx->be, b);
    rl_poison(ctx->be, p, b); /* written once, so every page is resident */
    *bytes = (double)b;
    return p;
}

/* Widens a spread to take in v (NaN: nothing seen, left as it was). */
static void widen(spread *s, double v)
{
    if (isnan(v))
        return;
    s->lo = isnan(s->lo) ? v : fmin(s->lo, v);
    s->hi = isnan(s->hi) ? v : fmax(s->hi, v);
}

/* One window of the hold: the load for seconds, read by the observer;
 * its reading, duty cycle and work widen the point's spreads. */
static void observe_window(run *r, point *p, busy_args *a, double seconds, rl_reading *rd,
                           rl_duty *duty, busy_result *res)
{
    RL_LAUNCHER(r->ctx, p->v)->run(a, seconds, res);
    rl_observer_read(&r->obs, res->t0, res->t1, rd);
    *duty = rl_duty_of(res->starts, res->ends, (size_t)res->bursts, res->window_s, 0.1);
    widen(&p->util, rd->util_pct);
    widen(&p->util_mem, rd->util_mem_pct);
    widen(&p->units_busy, rd->units_busy_pct);
    widen(&p->work_per_s_win, res->work / res->window_s);
}

/* What the whole hold's reading is made of: its first and last instants,
 * the windows' busy times and largest resident set, and the last reading. */
typedef struct hold_sums {
    double t0, t1, util_s, units_s, rss;
    rl_reading last;
} hold_sums;

/* The hold as HOLD_WINDOWS consecutive windows, each read on its own: the
 * point's bursts, work and measured duty cycle add up over them. */
static hold_sums hold_windows(run *r, point *p, busy_args *a)
{
    hold_sums h = {.t0 = NAN};
    p->util = p->util_mem = p->units_busy = p->work_per_s_win = (spread){NAN, NAN};
    p->measured = (rl_duty){0, NAN, NAN};
    for (p->windows = 0; p->windows < HOLD_WINDOWS; p->windows++) {
        rl_duty d;
        busy_result res;
        observe_window(r, p, a, r->hold_s / HOLD_WINDOWS, &h.last, &d, &res);
        h.t0 = p->windows == 0 ? res.t0 : h.t0;
        h.t1 = res.t1;
        p->window_s += res.window_s;
        p->bursts += (int)res.bursts;
        p->work += res.work;
        p->measured.pct += d.pct * res.window_s; /* a sum of busy times, until the end */
        p->measured.min_pct = fmin(p->measured.min_pct, d.min_pct); /* fmin skips NaN */
        p->measured.max_pct = fmax(p->measured.max_pct, d.max_pct);
        h.util_s += h.last.util_pct * res.window_s;
        h.units_s += h.last.units_busy_pct * res.window_s;
        h.rss = fmax(h.rss, h.last.mem_used);
        busy_result_free(&res);
    }
    p->measured.pct /= p->window_s;
    return h;
}

/* The whole hold's reading: NVML read over it; on the CPU, whose observer
 * reads busy time at a window's two ends, the windows' readings weighted
 * by their length (the busy time over the whole hold, less the gaps of a
 * thread start between windows). */
static void read_whole_hold(rl_ctx *ctx, run *r, point *p, const hold_sums *h)
{
    if (ctx->kind == RL_CUDA) {
        rl_observer_read(&r->obs, h->t0, h->t1, &p->rd);
        return;
    }
    p->rd = h->last; /* the last window's, for what does not add up */
    p->rd.util_pct = h->util_s / p->window_s;
    p->rd.units_busy_pct = h->units_s / p->window_s;
    p->rd.mem_used = h->rss;
    p->rd.util_samples = 2 * HOLD_WINDOWS;
}

/* The point's load unobserved for settle_s (so that NVML's last sample
 * period sees this load too), then observed for hold_s as HOLD_WINDOWS
 * consecutive windows. Then the bytes a chase (a line or sector per hop)
 * or a stream moved. */
void exp01_observe(rl_ctx *ctx, rl_point *rp)
{
    point *p = RL_DATA_MUT(point, rp);
    run *r = p->at;
    void *held = p->idle ? idle_allocation(ctx, &p->alloc_bytes) : NULL;
    rl_progress_step(ctx, "%s: %s on %d, duty %.0f %%", p->sweep, p->name, p->workers,
                     p->duty_pct);
    busy_args a = exp01_variant_args(r, p->v, p->workers, p->duty_pct / 100, r->period_s);
    busy_result res;
    RL_LAUNCHER(ctx, p->v)->run(&a, r->settle_s, &res);
    busy_result_free(&res);
    a.edge = rl_observer_edge, a.edge_arg = &r->obs;
    rl_busy_mark alone = rl_busy_mark_now();
    hold_sums h = hold_windows(r, p, &a);
    p->others_cpus = rl_others_busy_cpus_since(&alone);
    read_whole_hold(ctx, r, p, &h);
    p->work_per_s = p->work / p->window_s;
    if (busy_has_role(p->v, "latency"))
        p->gbps = p->work_per_s * bytes_per_hop(ctx) / 1e9;
    else if (busy_has_role(p->v, "bandwidth") && !p->idle)
        p->gbps = p->work_per_s / 1e9;
    rl_free(ctx->be, held);
}

/* ---- the run: one part, its buffers and observer ------------------------------ */

run *exp01_run_new(rl_ctx *ctx, double period_s)
{
    run *r = RL_NEW(ctx, run);
    bool gpu = ctx->kind == RL_CUDA;
    *r = (run){.ctx = ctx, .period_s = period_s, .load_start = rl_load_average()};
    /* NVML averages over its own sample period (up to a sixth of a second),
     * so a GPU point settles and holds longer than a CPU point. */
    r->settle_s = gpu ? RL_BY_MODE(ctx, 0.6, 0.8, 1.0) : RL_BY_MODE(ctx, 0.1, 0.2, 0.25);
    r->hold_s = gpu ? RL_BY_MODE(ctx, 1.0, 2.0, 3.0) : RL_BY_MODE(ctx, 0.4, 1.0, 2.0);
    exp01_buffers_size(r);
    return r;
}

/* A point costs its hold and settle, and starting and stopping its
 * workers and reading the observer: a tenth of a second or two. */
static const double POINT_OVERHEAD_S = 0.15;
/* The least settle a budget leaves (NVML's last sample period must see
 * the load: up to a sixth of a second). */
static double least_settle_s(const rl_ctx *ctx) { return ctx->kind == RL_CUDA ? 0.3 : 0.05; }

/* Each point holds its load for as long, whatever its variant; under a
 * budget the holds may shrink to the longest window a claim needs. */
void exp01_run_plan(rl_ctx *ctx, const run *r)
{
    int n = rl_points_all(ctx)->n;
    double fixed = n * (r->settle_s + r->hold_s);
    rl_plan_fixed(ctx, fixed);
    rl_plan_fixed_least(ctx, fixed, n * (least_settle_s(ctx) + exp01_least_trusted_hold_s(ctx) +
                                         POINT_OVERHEAD_S));
}

/* Under --budget, once the buffers and the observer exist: the holds
 * shortened to fit what is left, down to a floor a reading can be taken
 * over at all; the plan told of the change. A hold shorter than a claim's
 * window leaves that claim "not measured" (main.c), never judged on it. */
static void fit_holds(rl_ctx *ctx, run *r)
{
    int n = rl_points_all(ctx)->n;
    double was = n * (r->settle_s + r->hold_s), each = POINT_OVERHEAD_S * n;
    double fit = (rl_budget_fit(ctx, was + each) * (was + each) - each) / was;
    if (fit >= 1)
        return;
    bool gpu = ctx->kind == RL_CUDA;
    double settle = r->settle_s, window = exp01_least_trusted_hold_s(ctx);
    r->settle_s = fmax(settle * fit, least_settle_s(ctx));
    r->hold_s = fmax(r->hold_s * fit, gpu ? 0.5 : 0.2);
    /* Where a point's time allows the claims' window, the settle gives way
     * first: a hold under the window judges nothing it reads. */
    double per_point = fit * was / n;
    if (r->hold_s < window && per_point >= least_settle_s(ctx) + window) {
        r->hold_s = window;
        r->settle_s = fmin(settle, per_point - window);
    }
    r->holds_fitted = true;
    rl_plan_fixed(ctx, n * (r->settle_s + r->hold_s) - was);
}

static void describe_holds(rl_ctx *ctx, const run *r)
{
    rl_meta(ctx, "hold", "each point: %.2f s of the same load unobserved, then %.2f s observed; "
            "one burst per %.0f ms below 100 %% duty%s", r->settle_s, r->hold_s,
            1e3 * r->period_s, r->holds_fitted ? " (shortened to fit --budget)" : "");
    rl_meta(ctx, "hold_needed", "window_s is each point's actual hold; a claim on a busy reading "
            "needs its points held %.2f s or more, else it is not measured",
            exp01_least_trusted_hold_s(ctx));
    rl_meta(ctx, "hold_windows", "the observed hold as %d consecutive windows of %.2f s, each "
            "read on its own; *_window_min/max and work_fraction_lo/hi: the lowest and highest "
            "window (work_fraction: against the full device's whole-hold rate)", HOLD_WINDOWS,
            r->hold_s / HOLD_WINDOWS);
}

void exp01_run_open(rl_ctx *ctx, void *state)
{
    run *r = state;
    char buf[512];
    exp01_buffers_open(r);
    rl_observer_open(&r->obs, ctx, ctx->kind == RL_CUDA ? ctx->dev->pci_bus_id : NULL);
    rl_observer_describe(&r->obs, buf, sizeof buf);
    printf("observer    %s\n", buf);
    fit_holds(ctx, r);
    describe_holds(ctx, r);
}

/* Every point held: the observer described again (now with NVML's sample
 * period), and whether other processes took CPU time from ours. */
void exp01_run_observed(rl_ctx *ctx, rl_points *pts, void *state)
{
    (void)pts;
    run *r = state;
    char buf[512];
    rl_observer_describe(&r->obs, buf, sizeof buf);
    rl_meta(ctx, "observer", "%s", buf);
    rl_note_host_load(ctx, r->load_start, "note        ", "other processes took CPU time from the "
                      "workers, so busy time falls below the duty cycle");
}

void exp01_run_close(rl_ctx *ctx, const rl_points *pts, void *state)
{
    (void)ctx, (void)pts;
    run *r = state;
    rl_observer_close(&r->obs);
    exp01_buffers_close(r);
}
