/*
 * Experiment 01 -- nvidia-smi's utilization.gpu is a duty cycle, not work.
 *
 * NVML defines utilization.gpu as the fraction of a sample period during
 * which at least one kernel was running. One block on one SM counts as
 * much as a kernel on every SM. Three sweeps, each point held for several
 * NVML sample periods while a sampler thread reads NVML:
 *   a) occupancy at full duty: 1 block .. every SM (and a few per SM);
 *   b) duty cycle 0..100 % for a 1-block and a full-device kernel;
 *   c) memory: a large idle allocation vs a small buffer streamed hard.
 * Beside each reading: the duty cycle computed from the kernels' own event
 * timestamps, the work done, and NVML's GPM metrics where the GPU has them.
 * On the CPU backend the same sweeps put the OS's busy time on trial.
 */
#include "exp01.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *sweep_choice = "all", *period_ms_opt = "10";

static const rl_option OPTIONS[] = {
    {"sweep", "S", "a (occupancy), b (duty cycle), c (memory) or all", "a|b|c|all", &sweep_choice},
    {"period-ms", "MS", "one burst per period at duty cycles below 100 %", NULL, &period_ms_opt},
    {0},
};

/* ---- the columns: what a point is, then what was observed ---------------------- */

/* A compute point's work per second against the full device's (NaN on the
 * other variants): its whole hold's, and its lowest and highest window's. */
static double fraction(rl_ctx *ctx, const rl_point *p, double per_s)
{
    return busy_has_role(RL_DATA(point, p)->v, "compute") ? per_s / exp01_full_device(rl_points_all(ctx))
                                                           : NAN;
}

static double col_work_fraction(rl_ctx *ctx, const rl_point *p)
{
    return fraction(ctx, p, RL_DATA(point, p)->work_per_s);
}

static double col_work_fraction_lo(rl_ctx *ctx, const rl_point *p)
{
    return fraction(ctx, p, RL_DATA(point, p)->work_per_s_win.lo);
}

static double col_work_fraction_hi(rl_ctx *ctx, const rl_point *p)
{
    return fraction(ctx, p, RL_DATA(point, p)->work_per_s_win.hi);
}

static const rl_column COLUMNS[] = {
    RL_TEXT("sweep", NULL, NULL, point, sweep),
    RL_TEXT("variant", NULL, NULL, point, name),
    RL_COLUMN_NUMBER,
    RL_INT("workers", NULL, NULL, point, workers),
    RL_TEXT("worker_unit", NULL, NULL, point, worker_unit),
    RL_DOUBLE("workers_per_unit", NULL, NULL, point, workers_per_unit),
    RL_DOUBLE("duty_target_pct", NULL, NULL, point, duty_pct),
    RL_DOUBLE("period_ms", NULL, NULL, point, period_ms),
    {0},
};

static const rl_column OBSERVED[] = {
    RL_DOUBLE("window_s", NULL, NULL, point, window_s),
    RL_INT("bursts", NULL, NULL, point, bursts),
    RL_DOUBLE("duty_measured_pct", NULL, NULL, point, measured.pct),
    RL_DOUBLE("duty_window_min_pct", NULL, NULL, point, measured.min_pct),
    RL_DOUBLE("duty_window_max_pct", NULL, NULL, point, measured.max_pct),
    RL_DOUBLE("work", NULL, NULL, point, work),
    RL_TEXT("work_unit", NULL, NULL, point, work_unit),
    RL_DOUBLE("work_per_s", NULL, NULL, point, work_per_s),
    {"work_fraction", NULL, NULL, .num = col_work_fraction},
    RL_DOUBLE("gbps", NULL, NULL, point, gbps),
    RL_DOUBLE("alloc_bytes", NULL, NULL, point, alloc_bytes),
    RL_READING_COLUMNS(point, rd),
    /* The spread: the lowest and highest of the hold's windows. */
    RL_INT("windows", NULL, NULL, point, windows),
    RL_DOUBLE("util_window_min_pct", NULL, NULL, point, util.lo),
    RL_DOUBLE("util_window_max_pct", NULL, NULL, point, util.hi),
    RL_DOUBLE("util_mem_window_min_pct", NULL, NULL, point, util_mem.lo),
    RL_DOUBLE("util_mem_window_max_pct", NULL, NULL, point, util_mem.hi),
    RL_DOUBLE("units_busy_window_min_pct", NULL, NULL, point, units_busy.lo),
    RL_DOUBLE("units_busy_window_max_pct", NULL, NULL, point, units_busy.hi),
    RL_DOUBLE("work_per_s_window_min", NULL, NULL, point, work_per_s_win.lo),
    RL_DOUBLE("work_per_s_window_max", NULL, NULL, point, work_per_s_win.hi),
    {"work_fraction_lo", NULL, NULL, .num = col_work_fraction_lo},
    {"work_fraction_hi", NULL, NULL, .num = col_work_fraction_hi},
    {0},
};

/* The tool's readings beside the duty cycle from the timestamps and the
 * work done ("-": no such reading here); declare() renames the GPU's columns. */
static rl_column TABLE[] = {
    RL_TEXT(NULL, "sweep", "%-11s", point, sweep),
    RL_TEXT(NULL, "variant", "%-15s", point, name),
    RL_INT(NULL, "threads", "%7d", point, workers),
    RL_DOUBLE(NULL, "target %", "%8.0f", point, duty_pct),
    RL_DOUBLE_MEASURED(NULL, "measured %", "%10.1f", point, measured.pct),
    RL_DOUBLE_MEASURED(NULL, "busy %", "%7.1f", point, rd.util_pct),
    RL_DOUBLE_MEASURED(NULL, "mem util %", "%10.1f", point, rd.util_mem_pct),
    RL_DOUBLE_MEASURED(NULL, "machine %", "%9.1f", point, rd.units_busy_pct),
    RL_DOUBLE_MEASURED(NULL, "work/s", "%10.3g", point, work_per_s),
    {NULL, "work fraction", "%13.3f", .num = col_work_fraction, .measured = true},
    RL_BYTES_MEASURED(NULL, "memory used", "%11s", point, rd.mem_used),
    {0},
};

static const kernel_family *const FAMILIES[] = {&busy_family, NULL};

extern const rl_claim EXP01_CLAIMS[]; /* verdicts.c */

static void read_options(rl_ctx *ctx);
static void declare(rl_ctx *ctx);
static void observe(rl_ctx *ctx, rl_point *p);

static const rl_experiment EXP01 = {
    .id = "01",
    .slug = "01-duty-cycle",
    .title = "Utilization is a duty cycle, not work",
    .claim = "nvidia-smi's utilization.gpu is the percent of time at least one kernel was running: "
             "one block on one SM reads ~100 %, like a kernel on every SM, while their work "
             "differs ~SM-count times; the reading follows the duty cycle, not the work. "
             "utilization.memory is memory traffic time, not memory.used.",
    .source = "NVML documentation (nvmlUtilization_t, nvidia-smi --help-query-gpu); NVML GPM "
              "metrics (SM_UTIL, SM_OCCUPANCY) on Hopper",
    .prediction = "on a GPU the claim's numbers; on the CPU the same claims about the operating "
                  "system's busy time, a worker being a thread (README)",
    .claims = EXP01_CLAIMS,
    .families = FAMILIES,
    .columns = COLUMNS,
    .derived = OBSERVED,
    .table = TABLE,
    .observed = true,
    .options = OPTIONS,
    .default_cache = RL_HOT,
    .compare_keys = "sweep,variant,workers,duty_target_pct",
    .compare_value = "util_pct",
    .read_options = read_options,
    .declare = declare,
    .observe = observe,
    .judge = exp01_judge,
};

/* ---- the sweeps: the points, declared --------------------------------------- */

static point *add_point(run *r, const char *sweep, const busy_variant *v, int workers, double duty)
{
    point *p = RL_NEW(r->ctx, point);
    *p = (point){.sweep = sweep, .name = v->name, .v = v, .workers = workers,
                 .duty_pct = 100 * duty, .period_ms = 1e3 * r->period_s,
                 .worker_unit = r->ctx->kind == RL_CUDA ? "blocks" : "threads",
                 .work_unit = v->work_unit, .workers_per_unit = (double)workers / rl_units(r->ctx),
                 .gbps = NAN, .at = r};
    rl_point_add(r->ctx, &(rl_point){.variant = KERNEL_VARIANT(v), RL_POINT_DATA(p),
                                     .check = exp01_check_point});
    return p;
}

/* The variant with this role, if it runs here and --variant selects it. */
static const busy_variant *variant(const run *r, const char *role)
{
    return (const busy_variant *)rl_variant_by_role(r->ctx, &busy_family, role);
}

/* Sweep a: the compute variant on 1, 2, 4, ... workers below the unit
 * count, the unit count, and (GPU) 2 and 4 blocks per SM (quick: 1, all
 * units, and the most); every other variant but the bandwidth one (sweep
 * c's) on one worker, and on one per unit outside a quick run. */
static void sweep_occupancy(run *r)
{
    int units = rl_units(r->ctx), most = r->max_workers;
    bool quick = r->ctx->args.mode == RL_MODE_QUICK;
    for (const busy_variant *v = busy_variants; v->name; v++) {
        if (!rl_runs(r->ctx, &busy_family, KERNEL_VARIANT(v)) || busy_has_role(v, "bandwidth"))
            continue;
        if (!busy_has_role(v, "compute")) {
            add_point(r, "a_occupancy", v, 1, 1.0);
            if (!quick && units > 1)
                add_point(r, "a_occupancy", v, units, 1.0);
        } else if (quick) {
            add_point(r, "a_occupancy", v, 1, 1.0);
            if (units > 1)
                add_point(r, "a_occupancy", v, units, 1.0);
            if (most > units)
                add_point(r, "a_occupancy", v, most, 1.0);
        } else {
            for (int b = 1; b < units; b *= 2)
                add_point(r, "a_occupancy", v, b, 1.0);
            for (int b = units; b <= most; b *= 2)
                add_point(r, "a_occupancy", v, b, 1.0);
        }
    }
}

static void sweep_duty(run *r)
{
    const busy_variant *arith = variant(r, "compute");
    int steps = RL_BY_MODE(r->ctx, r->ctx->kind == RL_CUDA ? 2 : 4, 5, 10);
    int units = rl_units(r->ctx), sizes[2] = {1, units};
    for (int s = 0; arith && s < (units > 1 ? 2 : 1); s++)
        for (int k = 0; k <= steps; k++)
            add_point(r, "b_duty", arith, sizes[s], (double)k / steps);
}

/* An idle point (held memory, no kernel: arith at duty 0), then the stream. */
static void sweep_memory(run *r)
{
    const busy_variant *arith = variant(r, "compute"), *stream = variant(r, "bandwidth");
    if (arith) {
        point *idle = add_point(r, "c_memory", arith, 1, 0.0);
        idle->name = "idle_allocation";
        idle->idle = true;
    }
    if (stream)
        add_point(r, "c_memory", stream, r->max_workers, 1.0);
}

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

/* The point's load unobserved for settle_s (so that NVML's last sample
 * period sees this load too), then observed for hold_s as HOLD_WINDOWS
 * consecutive windows. The point's values are those of the whole hold:
 * NVML read over it; on the CPU, whose observer reads busy time at a
 * window's two ends, the windows' readings weighted by their length (the
 * busy time over the whole hold, less the gaps of a thread start between
 * windows). Then the bytes a chase (a line or sector per hop) or a
 * stream moved. */
static void observe(rl_ctx *ctx, rl_point *rp)
{
    point *p = RL_DATA_MUT(point, rp);
    run *r = p->at;
    const busy_ops *ops = RL_LAUNCHER(ctx, p->v);
    void *held = p->idle ? idle_allocation(ctx, &p->alloc_bytes) : NULL;
    rl_progress_step(ctx, "%s: %s on %d, duty %.0f %%", p->sweep, p->name, p->workers,
                     p->duty_pct);
    busy_args a = exp01_variant_args(r, p->v, p->workers, p->duty_pct / 100, r->period_s);
    busy_result res;
    ops->run(&a, r->settle_s, &res);
    busy_result_free(&res);
    a.edge = rl_observer_edge, a.edge_arg = &r->obs;

    p->util = p->util_mem = p->units_busy = p->work_per_s_win = (spread){NAN, NAN};
    p->measured = (rl_duty){0, NAN, NAN};
    double t0 = NAN, util_s = 0, units_s = 0, rss = 0;
    rl_reading rd;
    for (p->windows = 0; p->windows < HOLD_WINDOWS; p->windows++) {
        rl_duty d;
        observe_window(r, p, &a, r->hold_s / HOLD_WINDOWS, &rd, &d, &res);
        t0 = p->windows == 0 ? res.t0 : t0;
        p->window_s += res.window_s;
        p->bursts += (int)res.bursts;
        p->work += res.work;
        p->measured.pct += d.pct * res.window_s; /* a sum of busy times, until the end */
        p->measured.min_pct = fmin(p->measured.min_pct, d.min_pct); /* fmin skips NaN */
        p->measured.max_pct = fmax(p->measured.max_pct, d.max_pct);
        util_s += rd.util_pct * res.window_s;
        units_s += rd.units_busy_pct * res.window_s;
        rss = fmax(rss, rd.mem_used);
        if (p->windows < HOLD_WINDOWS - 1)
            busy_result_free(&res);
    }
    p->measured.pct /= p->window_s;
    if (ctx->kind == RL_CUDA) {
        rl_observer_read(&r->obs, t0, res.t1, &p->rd);
    } else {
        p->rd = rd; /* the last window's, for what does not add up */
        p->rd.util_pct = util_s / p->window_s;
        p->rd.units_busy_pct = units_s / p->window_s;
        p->rd.mem_used = rss;
        p->rd.util_samples = 2 * HOLD_WINDOWS;
    }
    p->work_per_s = p->work / p->window_s;
    if (busy_has_role(p->v, "latency"))
        p->gbps = p->work_per_s * bytes_per_hop(ctx) / 1e9;
    else if (busy_has_role(p->v, "bandwidth") && !p->idle)
        p->gbps = p->work_per_s / 1e9;
    busy_result_free(&res);
    rl_free(ctx->be, held);
}

/* ---- what the points say together ------------------------------------------ */

double exp01_full_device(const rl_points *all)
{
    double full = NAN;
    for (int i = 0; i < all->n; i++) {
        const point *p = RL_DATA(point, &all->v[i]);
        if (rl_point_timed(&all->v[i]) && !strcmp(p->sweep, "a_occupancy") &&
            busy_has_role(p->v, "compute"))
            full = fmax(full, p->work_per_s); /* fmax skips the NaN it starts from */
    }
    return full;
}

/* ---- the run: one part, its buffers and observer ------------------------------ */

/* Under --budget, once the buffers and the observer exist: the holds
 * shortened to fit what is left, but long enough for a reading (NVML
 * averages over up to a sixth of a second); the plan told of the change. */
static void fit_holds(rl_ctx *ctx, run *r)
{
    int n = rl_points_all(ctx)->n;
    /* A point costs its hold and settle, and starting and stopping its
     * workers and reading the observer: a tenth of a second or two. */
    double was = n * (r->settle_s + r->hold_s), each = 0.15 * n;
    double fit = (rl_budget_fit(ctx, was + each) * (was + each) - each) / was;
    if (fit >= 1)
        return;
    bool gpu = ctx->kind == RL_CUDA;
    r->settle_s = fmax(r->settle_s * fit, gpu ? 0.3 : 0.05);
    r->hold_s = fmax(r->hold_s * fit, gpu ? 0.5 : 0.2);
    r->holds_fitted = true;
    rl_plan_fixed(ctx, n * (r->settle_s + r->hold_s) - was);
}

static void describe_holds(rl_ctx *ctx, const run *r)
{
    rl_meta(ctx, "hold", "each point: %.2f s of the same load unobserved, then %.2f s observed; "
            "one burst per %.0f ms below 100 %% duty%s", r->settle_s, r->hold_s,
            1e3 * r->period_s, r->holds_fitted ? " (shortened to fit --budget)" : "");
    rl_meta(ctx, "hold_windows", "the observed hold as %d consecutive windows of %.2f s, each "
            "read on its own; *_window_min/max and work_fraction_lo/hi: the lowest and highest "
            "window (work_fraction: against the full device's whole-hold rate)", HOLD_WINDOWS,
            r->hold_s / HOLD_WINDOWS);
}

static void open_run(rl_ctx *ctx, void *state)
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
static void run_observed(rl_ctx *ctx, rl_points *pts, void *state)
{
    (void)pts;
    run *r = state;
    char buf[512];
    rl_observer_describe(&r->obs, buf, sizeof buf);
    rl_meta(ctx, "observer", "%s", buf);
    rl_note_host_load(ctx, r->load_start, "note        ", "other processes took CPU time from the "
                      "workers, so busy time falls below the duty cycle");
}

static void close_run(rl_ctx *ctx, const rl_points *pts, void *state)
{
    (void)ctx, (void)pts;
    run *r = state;
    rl_observer_close(&r->obs);
    exp01_buffers_close(r);
}

/* --period-ms, checked before the ceilings are measured: a usage error
 * exits at once. */
static double period_s;

static void read_options(rl_ctx *ctx)
{
    period_s = rl_option_number(ctx, "period-ms", period_ms_opt, 1, 1000, false, NULL) / 1e3;
}

static void declare(rl_ctx *ctx)
{
    run *r = RL_NEW(ctx, run);
    r->ctx = ctx;
    r->period_s = period_s;
    bool gpu = ctx->kind == RL_CUDA;
    r->load_start = rl_load_average();
    /* NVML averages over its own sample period (up to a sixth of a second),
     * so a GPU point settles and holds longer than a CPU point. */
    r->settle_s = gpu ? RL_BY_MODE(ctx, 0.6, 0.8, 1.0) : RL_BY_MODE(ctx, 0.1, 0.2, 0.25);
    r->hold_s = gpu ? RL_BY_MODE(ctx, 1.0, 2.0, 3.0) : RL_BY_MODE(ctx, 0.4, 1.0, 2.0);
    if (gpu) /* the console's names for the GPU's readings */
        TABLE[2].head = "blocks", TABLE[5].head = "util %", TABLE[7].head = "SM_UTIL %";
    exp01_buffers_size(r);

    rl_meta(ctx, "duty_measured", "union of the kernels' busy intervals (%s) over the window; "
            "min/max over 100 ms sub-windows",
            gpu ? "CUDA events around each launch" : "CLOCK_MONOTONIC");
    rl_meta(ctx, "stream_buffer", "x and y of %zu floats each", r->w.n);

    rl_part_add(ctx, &(rl_part){.open = open_run, .measured = run_observed, .done = close_run,
                                .state = r});
    if (rl_option_is(sweep_choice, "a"))
        sweep_occupancy(r);
    if (rl_option_is(sweep_choice, "b"))
        sweep_duty(r);
    if (rl_option_is(sweep_choice, "c"))
        sweep_memory(r);
    /* Each point holds its load for as long, whatever its variant. */
    rl_plan_fixed(ctx, rl_points_all(ctx)->n * (r->settle_s + r->hold_s));
}

int main(int argc, char **argv) { return rl_main(&EXP01, argc, argv); }
