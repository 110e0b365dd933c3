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
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *sweep_choice = "all", *period_ms_opt = "10";

static const rl_option OPTIONS[] = {
    {"sweep", "S", "a (occupancy), b (duty cycle), c (memory) or all", "a|b|c|all", &sweep_choice},
    {"period-ms", "MS", "one burst per period at duty cycles below 100 %", NULL, &period_ms_opt},
    {0},
};

static const char *const COLUMNS[] = {
    "sweep", "variant", "number", "workers", "worker_unit", "workers_per_unit", "duty_target_pct",
    "period_ms", "window_s", "bursts", "duty_measured_pct", "duty_window_min_pct",
    "duty_window_max_pct", "work", "work_unit", "work_per_s", "work_fraction", "gbps",
    "alloc_bytes", "util_pct", "util_mem_pct", "util_samples", "util_source", "units_busy_pct",
    "gpm_sm_occupancy_pct", "gpm_any_tensor_util_pct", "gpm_dram_bw_util_pct", "gpm_status",
    "mem_used_bytes", "mem_total_bytes", "sm_clock_mhz", "note", "validated", "skipped_reason", NULL};

static const kernel_family *const FAMILIES[] = {&busy_family, NULL};

extern const rl_claim EXP01_CLAIMS[]; /* verdicts.c */

static const rl_experiment EXP01 = {
    .id = "01",
    .slug = "01-duty-cycle",
    .title = "Utilization is a duty cycle, not work",
    .claim = "nvidia-smi's utilization.gpu is the percent of time at least one kernel was running: "
             "one block on one SM reads ~100 %, like a kernel on every SM, while their work differs "
             "~SM-count times; the reading follows the duty cycle, not the work. "
             "utilization.memory is memory traffic time, not memory.used.",
    .source = "NVML documentation (nvmlUtilization_t, nvidia-smi --help-query-gpu); NVML GPM "
              "metrics (SM_UTIL, SM_OCCUPANCY) on Hopper",
    .prediction = "on a GPU the claim's numbers; on the CPU the same claims about the operating "
                  "system's busy time, a worker being a thread (README)",
    .claims = EXP01_CLAIMS,
    .families = FAMILIES,
    .csv_columns = COLUMNS,
    .options = OPTIONS,
    .default_cache = RL_HOT,
    .compare_keys = "sweep,variant,workers,duty_target_pct",
    .compare_value = "util_pct",
};

enum { MAX_POINTS = 64 };

typedef struct run {
    rl_ctx *ctx;
    buffers w;
    rl_observer obs;
    double settle_s, hold_s, period_s;
    int units;              /* SMs or logical CPUs: "the full device" */
    bool counting;          /* planning: measure() only counts the points */
    int planned;
    point pts[MAX_POINTS];
    int npts;
} run;

/* ---- one point: settle, then hold and read ----------------------------- */

static void duty_of(point *p, const busy_result *r)
{
    rl_interval *iv = malloc((size_t)(r->bursts ? r->bursts : 1) * sizeof *iv);
    for (long long i = 0; i < r->bursts; i++)
        iv[i] = (rl_interval){r->starts[i], r->ends[i]};
    p->window_s = r->window_s;
    p->duty_measured = rl_busy_fraction(iv, (size_t)r->bursts, 0, r->window_s);
    double win[256];
    int k = rl_busy_windows(iv, (size_t)r->bursts, 0, r->window_s, 0.1, win, 256);
    p->duty_min = k ? win[0] : NAN, p->duty_max = k ? win[0] : NAN;
    for (int i = 1; i < k; i++)
        p->duty_min = fmin(p->duty_min, win[i]), p->duty_max = fmax(p->duty_max, win[i]);
    free(iv);
}

static point *measure(run *r, const char *sweep, const busy_variant *v, int workers, double duty)
{
    static point scratch;
    if (r->counting) {
        r->planned++;
        return &scratch;
    }
    if (r->npts == MAX_POINTS)
        rl_die(RL_EXIT_FAILED, "exp-01: more than %d points: raise MAX_POINTS", MAX_POINTS);
    point *p = &r->pts[r->npts++];
    *p = (point){.sweep = sweep, .name = v->name, .v = v, .workers = workers, .duty = duty};
    p->ok = r->w.valid[v - busy_variants];
    if (!p->ok)
        return p;
    rl_progress_step(r->ctx, "%s: %s on %d, duty %.0f %%", sweep, p->name, workers, duty * 100);
    busy_args a = variant_args(&r->w, v, workers, duty, r->period_s);
    busy_result res;
    RL_LAUNCHER(r->ctx, v)->run(&a, r->settle_s, &res); /* NVML's last sample period sees this load too */
    busy_result_free(&res);
    a.edge = rl_observer_edge, a.edge_arg = &r->obs;
    RL_LAUNCHER(r->ctx, v)->run(&a, r->hold_s, &res);
    rl_observer_read(&r->obs, res.t0, res.t1, &p->rd);
    duty_of(p, &res);
    p->bursts = res.bursts;
    p->work = res.work;
    p->work_per_s = res.work / res.window_s;
    busy_result_free(&res);
    return p;
}

/* ---- the sweeps ---------------------------------------------------------- */

static bool want(const char *s) { return !strcmp(sweep_choice, "all") || !strcmp(sweep_choice, s); }

/* The variant with this role, if it runs here and --variant selects it. */
static const busy_variant *variant(const run *r, const char *role)
{
    return (const busy_variant *)rl_variant_by_role(r->ctx, &busy_family, role);
}

static bool runs(const run *r, const busy_variant *v)
{
    return rl_runs(r->ctx, &busy_family, KERNEL_VARIANT(v));
}

/* Workers 1, 2, 4, ... below the unit count, the unit count, and (GPU)
 * 2 and 4 blocks per SM; quick: 1, all units, and the most. */
static int worker_list(const run *r, int *out)
{
    int n = 0, units = r->units, most = r->w.max_workers;
    if (r->ctx->args.mode == RL_MODE_QUICK) {
        out[n++] = 1;
        if (units > 1)
            out[n++] = units;
        if (most > units)
            out[n++] = most;
        return n;
    }
    for (int b = 1; b < units; b *= 2)
        out[n++] = b;
    for (int b = units; b <= most; b *= 2)
        out[n++] = b;
    return n;
}

/* The compute variant over the worker list; every other variant but the
 * bandwidth one (sweep c's) on one worker, and on one per unit outside a
 * quick run. */
static void sweep_occupancy(run *r)
{
    int list[32], n = worker_list(r, list);
    for (const busy_variant *v = busy_variants; v->name; v++) {
        if (!runs(r, v) || role_is(v, "bandwidth"))
            continue;
        if (role_is(v, "compute")) {
            for (int i = 0; i < n; i++)
                measure(r, "a_occupancy", v, list[i], 1.0);
            continue;
        }
        measure(r, "a_occupancy", v, 1, 1.0);
        if (r->ctx->args.mode != RL_MODE_QUICK && r->units > 1)
            measure(r, "a_occupancy", v, r->units, 1.0);
    }
}

static void sweep_duty(run *r)
{
    const busy_variant *arith = variant(r, "compute");
    int steps = RL_BY_MODE(r->ctx, r->ctx->kind == RL_CUDA ? 2 : 4, 5, 10);
    int sizes[2] = {1, r->units};
    for (int s = 0; arith && s < (r->units > 1 ? 2 : 1); s++)
        for (int k = 0; k <= steps; k++)
            measure(r, "b_duty", arith, sizes[s], (double)k / steps);
}

static void sweep_memory(run *r)
{
    const busy_variant *arith = variant(r, "compute"), *stream = variant(r, "bandwidth");
    if (arith && r->counting) {
        measure(r, "c_memory", arith, 1, 0.0);
    } else if (arith) { /* an idle point: held memory, no kernel (arith at duty 0) */
        double bytes;
        void *held = idle_allocation(r->ctx, &bytes);
        point *p = measure(r, "c_memory", arith, 1, 0.0);
        p->name = "idle_allocation", p->idle = true, p->alloc_bytes = bytes;
        rl_free(r->ctx->be, held);
    }
    if (stream)
        measure(r, "c_memory", stream, r->w.max_workers, 1.0);
}

/* ---- rows and the table --------------------------------------------------- */

/* The most work per second the compute variant did in sweep a: "the full device". */
static double full_device_rate(const run *r)
{
    double best = NAN;
    for (int i = 0; i < r->npts; i++)
        if (r->pts[i].ok && !strcmp(r->pts[i].sweep, "a_occupancy") && role_is(r->pts[i].v, "compute"))
            best = isnan(best) ? r->pts[i].work_per_s : fmax(best, r->pts[i].work_per_s);
    return best;
}

static double gbps_of(const run *r, const point *p)
{
    if (role_is(p->v, "latency"))
        return p->work_per_s * r->w.bytes_per_hop / 1e9;
    return role_is(p->v, "bandwidth") && !p->idle ? p->work_per_s / 1e9 : NAN;
}

/* The compute variant's work per second against the full device's. */
static double work_fraction(const point *p, double full)
{
    return role_is(p->v, "compute") ? p->work_per_s / full : NAN;
}

static void write_row(run *r, const point *p, double full)
{
    rl_ctx *ctx = r->ctx;
    const rl_reading *d = &p->rd;
    rl_set_str(ctx, "sweep", p->sweep);
    rl_set_str(ctx, "variant", p->name);
    rl_set_int(ctx, "number", p->v->number);
    rl_set_int(ctx, "workers", p->workers);
    rl_set_str(ctx, "worker_unit", ctx->kind == RL_CUDA ? "blocks" : "threads");
    rl_set_num(ctx, "workers_per_unit", (double)p->workers / r->units);
    rl_set_num(ctx, "duty_target_pct", 100 * p->duty);
    rl_set_num(ctx, "period_ms", 1e3 * r->period_s);
    rl_set_num(ctx, "alloc_bytes", p->alloc_bytes);
    rl_set_str(ctx, "work_unit", p->v->work_unit);
    rl_set_str(ctx, "validated", p->ok ? "yes" : "no");
    if (!p->ok) {
        rl_set_str(ctx, "skipped_reason", r->w.why[p->v - busy_variants]);
        rl_end_row(ctx);
        return;
    }
    rl_set_num(ctx, "window_s", p->window_s);
    rl_set_int(ctx, "bursts", p->bursts);
    rl_set_num(ctx, "duty_measured_pct", 100 * p->duty_measured);
    rl_set_num(ctx, "duty_window_min_pct", 100 * p->duty_min);
    rl_set_num(ctx, "duty_window_max_pct", 100 * p->duty_max);
    rl_set_num(ctx, "work", p->work);
    rl_set_num(ctx, "work_per_s", p->work_per_s);
    rl_set_num(ctx, "work_fraction", work_fraction(p, full));
    rl_set_num(ctx, "gbps", gbps_of(r, p));
    rl_set_num(ctx, "util_pct", d->util_pct);
    rl_set_num(ctx, "util_mem_pct", d->util_mem_pct);
    rl_set_int(ctx, "util_samples", d->util_samples);
    rl_set_str(ctx, "util_source", d->util_source);
    rl_set_num(ctx, "units_busy_pct", d->units_busy_pct);
    rl_set_num(ctx, "gpm_sm_occupancy_pct", d->occupancy_pct);
    rl_set_num(ctx, "gpm_any_tensor_util_pct", d->tensor_pct);
    rl_set_num(ctx, "gpm_dram_bw_util_pct", d->dram_bw_pct);
    rl_set_str(ctx, "gpm_status", d->gpm_status);
    rl_set_num(ctx, "mem_used_bytes", d->mem_used);
    rl_set_num(ctx, "mem_total_bytes", d->mem_total);
    rl_set_num(ctx, "sm_clock_mhz", d->sm_clock_mhz);
    if (d->note[0])
        rl_set_str(ctx, "note", d->note);
    rl_end_row(ctx);
}

/* The console table: the tool's readings beside the duty cycle from the
 * timestamps and the work done ("-" where this backend has no reading). */
static void print_table(const run *r, double full)
{
    bool gpu = r->ctx->kind == RL_CUDA;
    const rl_grid_column cols[] = {
        {"sweep", "%-11s"}, {"variant", "%-15s"}, {gpu ? "blocks" : "threads", "%7d"},
        {"target %", "%8.0f"}, {"measured %", "%10.1f"}, {gpu ? "util %" : "busy %", "%7.1f"},
        {"mem util %", "%10.1f"}, {gpu ? "SM_UTIL %" : "machine %", "%9.1f"}, {"work/s", "%10.3g"},
        {"work fraction", "%13.3f"}, {"memory used", "%11s"}, {0}};
    printf("\n");
    rl_grid_header(cols);
    for (int i = 0; i < r->npts; i++) {
        const point *p = &r->pts[i];
        if (!p->ok) {
            printf("  %-11s %-15s %7d  FAILED validation: %s\n", p->sweep, p->name, p->workers,
                   r->w.why[p->v - busy_variants]);
            continue;
        }
        char used[32];
        rl_format_bytes(p->rd.mem_used, used, sizeof used);
        rl_grid_row(cols, p->sweep, p->name, p->workers, 100 * p->duty, 100 * p->duty_measured,
                    p->rd.util_pct, p->rd.util_mem_pct, p->rd.units_busy_pct, p->work_per_s,
                    work_fraction(p, full), used);
    }
    fflush(stdout);
}

static void run_sweeps(run *r)
{
    if (want("a"))
        sweep_occupancy(r);
    if (want("b"))
        sweep_duty(r);
    if (want("c"))
        sweep_memory(r);
}

/* The plan: each point holds its load for settle + hold seconds, a fixed
 * time whatever the variant. */
static void plan(run *r)
{
    r->counting = true;
    r->planned = 0;
    run_sweeps(r);
    r->counting = false;
    for (int i = 0; i < r->planned; i++)
        rl_plan_group(r->ctx, 1, 0);
    rl_plan_fixed(r->ctx, r->planned * (r->settle_s + r->hold_s));
    rl_plan_print(r->ctx);
}

int main(int argc, char **argv)
{
    rl_ctx *ctx = rl_begin(&EXP01, argc, argv);
    run *r = calloc(1, sizeof *r);
    r->ctx = ctx;
    double period_ms = rl_option_number(ctx, "period-ms", period_ms_opt, 1, 1000, false, NULL);
    bool gpu = ctx->kind == RL_CUDA;
    rl_mode mode = ctx->args.mode;
    double load_start = rl_load_average();
    r->period_s = period_ms / 1e3;
    /* NVML averages over its own sample period (up to a sixth of a second),
     * so a GPU point settles and holds longer than a CPU point. */
    static const double SETTLE[2][3] = {{0.2, 0.1, 0.25}, {0.8, 0.6, 1.0}}; /* [gpu][mode] */
    static const double HOLD[2][3] = {{1.0, 0.4, 2.0}, {2.0, 1.0, 3.0}};
    r->settle_s = SETTLE[gpu][mode];
    r->hold_s = HOLD[gpu][mode];
    r->units = gpu ? ctx->dev->sm_count : ctx->dev->threads;
    const rl_ceilings *ceil = rl_ceilings_get(ctx);

    buffers_open(&r->w, ctx);
    char pci[32];
    rl_observer_open(&r->obs, ctx, observed_gpu(ctx, pci));
    char buf[512];
    rl_observer_describe(&r->obs, buf, sizeof buf);
    printf("observer    %s\n", buf);
    for (const busy_variant *v = busy_variants; v->name; v++)
        if (runs(r, v) && !validate_variant(&r->w, v)) {
            fprintf(stderr, "exp-01: %s %s\n", v->name, r->w.why[v - busy_variants]);
            ctx->failures++;
        }
    rl_meta(ctx, "hold", "each point: %.2f s of the same load unobserved, then %.2f s observed; "
            "one burst per %.0f ms below 100 %% duty", r->settle_s, r->hold_s, period_ms);
    rl_meta(ctx, "duty_measured", "union of the kernels' busy intervals (%s) over the window; "
            "min/max over 100 ms sub-windows", gpu ? "CUDA events around each launch" : "CLOCK_MONOTONIC");
    rl_meta(ctx, "chase_buffer", "%zu lines of %zu bytes (%.0f MiB), one random cycle",
            r->w.chain_lines, r->w.chain_stride * 4, r->w.chain_lines * r->w.chain_stride * 4.0 / 1048576);
    rl_meta(ctx, "stream_buffer", "x and y of %zu floats each", r->w.n);

    plan(r);
    run_sweeps(r);
    rl_progress_clear();
    rl_observer_describe(&r->obs, buf, sizeof buf); /* now with NVML's sample period */
    rl_meta(ctx, "observer", "%s", buf);

    double overload = rl_record_host_load(ctx, load_start);
    if (!gpu && overload > 0)
        printf("note        load average %.1f on %ld CPUs: other processes took CPU time from the "
               "workers, so busy time falls below the duty cycle\n", overload,
               sysconf(_SC_NPROCESSORS_ONLN));
    double full = full_device_rate(r);
    for (int i = 0; i < r->npts; i++)
        write_row(r, &r->pts[i], full);
    print_table(r, full);
    judge(ctx, r->pts, r->npts, r->units, full, ceil->bw[RL_DRAM][RL_READ].best, r->w.bytes_per_hop);

    rl_observer_close(&r->obs);
    buffers_close(&r->w);
    free(r);
    return rl_end(ctx);
}
