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
 *
 * This file reads top to bottom: the claims, the axes, the points, the
 * judgement (its order; each verdict: judge.c). How a point is held and
 * read: hold.c; its buffers and check: setup.c.
 */
#include "exp01.h"
#include "rl_host.h"
#include "window.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- the claims ------------------------------------------------------------------ */

/* The same verdict ids on both backends; on the CPU each is stated as the
 * CPU's version of the claim (the tool is the kernel's CPU accounting, a
 * worker is a thread, the device's units are its logical CPUs). In the
 * order of the prediction. A claim with a CPU twin has the GPU's first,
 * the CPU's right after it: exp01_claim() takes this run's (the ids:
 * exp01.h). */
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

/* What each claim's reading needs to be trusted, beside the claims: the
 * least hold (window_s, the observed seconds of a point) of every point
 * it reads (window.h says why). A --budget shortens the holds; a claim
 * read over holds shorter than its window is "not measured", never "does
 * not hold". Indexed by the GPU's claim; its CPU twin needs the same. */
const exp01_window EXP01_WINDOW[EXP01_CLAIM_COUNT] = {
    [ONE_BUSY] = {EXP01_BUSY_WINDOW},     [CHASE_BUSY] = {EXP01_BUSY_WINDOW},
    [TRACKS_ONE] = {EXP01_BUSY_WINDOW},   [TRACKS_FULL] = {EXP01_BUSY_WINDOW},
    [WORK_DIFFERS] = {EXP01_NO_WINDOW},   [UNITS_VIEW] = {EXP01_BUSY_WINDOW},
    [MEMORY] = {EXP01_BUSY_WINDOW},
};

/* The longest window any claim needs here: the least hold a run may keep
 * and still judge every claim (hold.c's fit_holds, the budget's plan). */
double exp01_least_trusted_hold_s(const rl_ctx *ctx)
{
    double most = 0;
    for (size_t i = 0; i < EXP01_CLAIM_COUNT; i++)
        if (EXP01_WINDOW[i].why)
            most = fmax(most, exp01_window_s(&EXP01_WINDOW[i], ctx->kind == RL_CUDA));
    return most;
}

const rl_claim *exp01_claim(const rl_ctx *ctx, int gpu_claim)
{
    return &EXP01_CLAIMS[gpu_claim + (ctx->kind != RL_CUDA)];
}

static const char *sweep_choice = "all", *period_ms_opt = "10";

static const rl_option OPTIONS[] = {
    {"sweep", "S", "a (occupancy), b (duty cycle), c (memory) or all", "a|b|c|all", &sweep_choice},
    {"period-ms", "MS", "one burst per period at duty cycles below 100 %", NULL, &period_ms_opt},
    {0},
};

/* ---- the axes --------------------------------------------------------------------- */

/* A worker axis ends at the device's units (SMs, CPUs); beyond one per
 * unit, at the most workers the buffers hold. */
static double unit_count(const rl_ctx *ctx) { return rl_units(ctx); }

static double most_per_unit(const rl_ctx *ctx)
{
    return (double)exp01_most_workers(ctx) / rl_units(ctx);
}

/* Sweep a, the compute variant: 1, 2, 4, ... workers and one per unit
 * (quick: 1 and one per unit), */
static const rl_axis UP_TO_ONE_PER_UNIT = RL_AXIS("workers", RL_ENDS(1), RL_TIMES(1, 2),
                                                  RL_TIMES(1, 2), .top = unit_count);
/* then more per unit where they fit: 2 and 4 blocks per SM on a GPU
 * (quick: 4); a CPU has no more than one thread per CPU. */
static const rl_axis MORE_PER_UNIT = RL_AXIS("workers_per_unit", RL_LIST(4), RL_LIST(2, 4),
                                             RL_LIST(2, 4), .top = most_per_unit);
/* Sweep a, every other variant but the stream (sweep c's): one worker,
 * and one per unit outside a quick run. */
static const rl_axis ONE_OR_ONE_PER_UNIT = RL_AXIS("workers", RL_LIST(1), RL_ENDS(1), RL_ENDS(1),
                                                   .top = unit_count);
/* Sweep b: the compute variant on one worker and on one per unit, */
static const rl_axis ONE_AND_ONE_PER_UNIT = RL_AXIS("workers", RL_ENDS(1), RL_ENDS(1),
                                                    RL_ENDS(1), .top = unit_count);
/* each at duty cycles from 0 to 1 (a GPU's quick run: its ends and middle). */
#define FIFTHS RL_LIST(0, 0.2, 0.4, 0.6, 0.8, 1)
#define TENTHS RL_LIST(0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1)
static const rl_axis GPU_DUTY = RL_AXIS("duty", RL_LIST(0, 0.5, 1), FIFTHS, TENTHS);
static const rl_axis DUTY = RL_AXIS("duty", RL_LIST(0, 0.25, 0.5, 0.75, 1), FIFTHS, TENTHS,
                                    .gpu = &GPU_DUTY);

/* ---- the points: one variant held on some workers at a duty cycle ---------------- */

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

/* What a sweep's points are: a variant in the run, and (sweep a) the axis
 * that counts its workers, in workers or (scale: the units) per unit. */
typedef struct load {
    run *r;
    const busy_variant *v;
    const rl_axis *workers;
    int scale;
} load;

static void occupancy_point(rl_ctx *ctx, const rl_at *at, void *state)
{
    (void)ctx;
    const load *l = state;
    add_point(l->r, "a_occupancy", l->v, rl_at_int(at, l->workers) * l->scale, 1.0);
}

static void duty_point(rl_ctx *ctx, const rl_at *at, void *state)
{
    (void)ctx;
    const load *l = state;
    add_point(l->r, "b_duty", l->v, rl_at_int(at, &ONE_AND_ONE_PER_UNIT), rl_at_value(at, &DUTY));
}

/* Sweep a: each variant that runs here (the stream's is sweep c) on its
 * workers, at full duty. */
static void sweep_occupancy(rl_ctx *ctx, run *r)
{
    for (const busy_variant *v = busy_variants; v->name; v++) {
        if (!rl_runs(ctx, &busy_family, KERNEL_VARIANT(v)) || busy_has_role(v, "bandwidth"))
            continue;
        bool compute = busy_has_role(v, "compute");
        load l = {r, v, compute ? &UP_TO_ONE_PER_UNIT : &ONE_OR_ONE_PER_UNIT, 1};
        rl_sweep_declare(ctx, &(rl_sweep){(const rl_axis *const[]){l.workers, NULL},
                                          .points = occupancy_point, .state = &l});
        if (!compute)
            continue;
        l = (load){r, v, &MORE_PER_UNIT, rl_units(ctx)};
        rl_sweep_declare(ctx, &(rl_sweep){(const rl_axis *const[]){l.workers, NULL},
                                          .points = occupancy_point, .state = &l});
    }
}

/* Sweep b: the compute variant on its workers at each duty cycle. */
static void sweep_duty(rl_ctx *ctx, run *r)
{
    static const rl_axis *const AXES[] = {&ONE_AND_ONE_PER_UNIT, &DUTY, NULL};
    load l = {r, variant(r, "compute"), NULL, 1};
    if (l.v)
        rl_sweep_declare(ctx, &(rl_sweep){AXES, .points = duty_point, .state = &l});
}

/* Sweep c: an idle point (held memory, no kernel: the compute variant at
 * duty 0), then the stream on every worker. */
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

/* --period-ms, checked before the ceilings are measured: a usage error
 * exits at once. */
static double period_s;

static void read_options(rl_ctx *ctx)
{
    period_s = rl_option_number(ctx, "period-ms", period_ms_opt, 1, 1000, false, NULL) / 1e3;
}

static void rename_gpu_columns(void);

/* One part: every point of the sweeps chosen, held one after the other
 * on the same buffers (hold.c). */
static void declare(rl_ctx *ctx)
{
    run *r = exp01_run_new(ctx, period_s);
    if (ctx->kind == RL_CUDA)
        rename_gpu_columns();

    rl_meta(ctx, "duty_measured", "union of the kernels' busy intervals (%s) over the window; "
            "min/max over 100 ms sub-windows",
            ctx->kind == RL_CUDA ? "CUDA events around each launch" : "CLOCK_MONOTONIC");
    rl_meta(ctx, "stream_buffer", "x and y of %zu floats each", r->w.n);

    rl_part_add(ctx, &(rl_part){.open = exp01_run_open, .measured = exp01_run_observed,
                                .done = exp01_run_close, .state = r});
    if (rl_option_is(sweep_choice, "a"))
        sweep_occupancy(ctx, r);
    if (rl_option_is(sweep_choice, "b"))
        sweep_duty(ctx, r);
    if (rl_option_is(sweep_choice, "c"))
        sweep_memory(r);
    exp01_run_plan(ctx, r);
}

/* ---- the judgement ------------------------------------------------------------------ */

/* In the order of the claims (judge.c). */
static void judge(rl_ctx *ctx, const rl_points *all)
{
    exp01_judge_one_worker(ctx, all);
    exp01_judge_chase(ctx, all);
    exp01_judge_tracking(ctx, all, 1, exp01_claim(ctx, TRACKS_ONE));
    exp01_judge_tracking(ctx, all, rl_units(ctx), exp01_claim(ctx, TRACKS_FULL));
    exp01_judge_work_differs(ctx, all);
    exp01_judge_units_view(ctx, all);
    exp01_judge_memory(ctx, all);
}

/* ---- the columns: what a point is, then what was observed ---------------------- */

/* A compute point's work per second against the full device's (NaN on the
 * other variants): its whole hold's, and its lowest and highest window's. */
static rl_ratio work_fraction(rl_ctx *ctx, const rl_point *p)
{
    const point *d = RL_DATA(point, p);
    if (!busy_has_role(d->v, "compute"))
        return RL_RATIO_NONE;
    double full = exp01_full_device(rl_points_all(ctx));
    return (rl_ratio){d->work_per_s / full, d->work_per_s_win.lo / full, d->work_per_s_win.hi / full};
}

#define WORK_FRACTION(name, part) {name, NULL, NULL, .field = part, .ratio = work_fraction}

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
    WORK_FRACTION("work_fraction", RL_RATIO_MEDIAN),
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
    WORK_FRACTION("work_fraction_lo", RL_RATIO_LO),
    WORK_FRACTION("work_fraction_hi", RL_RATIO_HI),
    {0},
};

/* The tool's readings beside the duty cycle from the timestamps and the
 * work done ("-": no such reading here); rename_gpu_columns() gives the GPU's names. */
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
    {NULL, "work fraction", "%13.3f", .field = RL_RATIO_MEDIAN, .ratio = work_fraction,
     .measured = true},
    RL_BYTES_MEASURED(NULL, "memory used", "%11s", point, rd.mem_used),
    {0},
};

/* The console's names for the GPU's readings. */
static void rename_gpu_columns(void)
{
    TABLE[2].head = "blocks", TABLE[5].head = "util %", TABLE[7].head = "SM_UTIL %";
}

static const kernel_family *const FAMILIES[] = {&busy_family, NULL};

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
    .observe = exp01_observe,
    .judge = judge,
};

int main(int argc, char **argv) { return rl_main(&EXP01, argc, argv); }
