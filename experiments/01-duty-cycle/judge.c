/*
 * judge.c -- experiment 01's verdicts, each from the points the sweeps
 * observed (main.c calls them in the order of the claims): one busy
 * worker, the pointer chase, the reading against the duty cycle, the work
 * the full device does, the machine-wide view, the memory held. A claim
 * read over holds shorter than its window (window.h), or on the CPU beside
 * other work, is "not measured", never "does not hold".
 */
#include "exp01.h"
#include "rl_host.h"
#include "window.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

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

static double work_per_s(const rl_point *p) { return RL_DATA(point, p)->work_per_s; }

/* The full device: the most work per second the compute variant did in
 * sweep a (NaN: none observed). */
static const rl_point *full_device_point(const rl_points *all)
{
    return rl_points_best(all, "compute", in_sweep, &(where){"a_occupancy", -1}, work_per_s);
}

double exp01_full_device(const rl_points *all)
{
    const rl_point *p = full_device_point(all);
    return p ? work_per_s(p) : NAN;
}

/* A duty point of one size with a reading (key: a where), and how far its
 * reading is from the duty cycle its timestamps measured. */
static bool read_duty_point(const rl_point *p, const void *key)
{
    return in_sweep(p, key) && !isnan(RL_DATA(point, p)->rd.util_pct);
}

static double reading_off_duty(const rl_point *p)
{
    const point *d = RL_DATA(point, p);
    return fabs(d->rd.util_pct - d->measured.pct);
}

/* How many observed points match (the count a verdict's note gives). */
static int count_points(const rl_points *all, rl_point_filter match, const void *key)
{
    int n = 0;
    for (int i = 0; i < all->n; i++)
        n += rl_point_timed(&all->v[i]) && match(&all->v[i], key);
    return n;
}

/* The shorter held of two points (either may be NULL, or not held). */
static const point *shorter(const point *a, const point *b)
{
    if (!a || a->windows == 0)
        return b && b->windows > 0 ? b : NULL;
    return b && b->windows > 0 && b->window_s < a->window_s ? b : a;
}

/* The shortest held of the observed points that match. */
static const point *shortest_held(const rl_points *all, rl_point_filter match, const void *key)
{
    const point *s = NULL;
    for (int i = 0; i < all->n; i++)
        if (rl_point_timed(&all->v[i]) && match(&all->v[i], key))
            s = shorter(s, RL_DATA(point, &all->v[i]));
    return s;
}

/* A claim's gate on its readings' window: true, judge it; false, it was
 * judged "not measured" here (what it read, the hold it had, the window
 * it needs), since its shortest-held point was held shorter than its
 * window. gpu_claim indexes EXP01_WINDOW. */
static bool held_long_enough(rl_ctx *ctx, const rl_claim *c, int gpu_claim, const point *shortest,
                             const char *measured)
{
    char which[128], why[400];
    if (!shortest)
        return true;
    snprintf(which, sizeof which, "its point %s on %d %s at %.0f %% duty", shortest->name,
             shortest->workers, shortest->worker_unit, shortest->duty_pct);
    if (exp01_window_ok(&EXP01_WINDOW[gpu_claim], ctx->kind == RL_CUDA, shortest->window_s, which, why,
                        sizeof why))
        return true;
    rl_judge_status(ctx, c, NULL, measured, RL_NOT_MEASURED, why);
    return false;
}

/* On the CPU a busy reading is the threads' own CPU time: another
 * process that takes a CPU for part of a hold lowers it, and a hold of
 * a second or less can fall inside a burst that the run-wide busy-host gate
 * (a quarter of a CPU, averaged over the whole run) does not see. So a
 * claim is "not measured (busy host)" where any of its points was held
 * beside more than HOLD_OTHERS_CPUS of other work. */
static const double HOLD_OTHERS_CPUS = 0.1;

static bool held_alone(rl_ctx *ctx, const rl_claim *c, const point *const *pts, int n,
                       const char *measured)
{
    if (ctx->kind == RL_CUDA || rl_busy_gates_off())
        return true; /* NVML reads the GPU, not the host's CPUs */
    for (int i = 0; i < n; i++) {
        if (!pts[i] || !(pts[i]->others_cpus > HOLD_OTHERS_CPUS))
            continue;
        char why[300];
        snprintf(why, sizeof why, "other processes kept %.2f CPUs busy while %s on %d %s was held "
                 "(at most %.2f judges a busy reading on the CPU)", pts[i]->others_cpus,
                 pts[i]->name, pts[i]->workers, pts[i]->worker_unit, HOLD_OTHERS_CPUS);
        rl_judge_status(ctx, c, NULL, measured, RL_NOT_MEASURED_BUSY, why);
        return false;
    }
    return true;
}

/* A number as a verdict's "measured" text. */
static const char *as_measured(char *buf, size_t len, double v, const char *unit)
{
    snprintf(buf, len, isnan(v) ? "-" : "%.1f %s", v, unit);
    return buf;
}

/* The largest |reading - measured duty| over the duty sweep of one size;
 * not measured with fewer than two points. */
void exp01_judge_tracking(rl_ctx *ctx, const rl_points *all, int workers, const rl_claim *c)
{
    where w = {"b_duty", workers};
    const rl_point *worst = rl_points_best(all, NULL, read_duty_point, &w, reading_off_duty);
    int count = count_points(all, read_duty_point, &w);
    char note[160] = "fewer than two duty points";
    if (count >= 2)
        snprintf(note, sizeof note, "%d %s%s; largest |reading - duty from %s| over %d duty points",
                 workers, ctx->kind == RL_CUDA ? "block" : "thread", workers == 1 ? "" : "s",
                 ctx->kind == RL_CUDA ? "event timestamps" : "clock timestamps", count);
    double off = count < 2 ? NAN : reading_off_duty(worst);
    char measured[64];
    if (count >= 2 && !held_long_enough(ctx, c, workers == 1 ? TRACKS_ONE : TRACKS_FULL,
                                        shortest_held(all, read_duty_point, &w),
                                        as_measured(measured, sizeof measured, off, "points")))
        return;
    rl_judge(ctx, c, NULL, off, note);
}

void exp01_judge_memory(rl_ctx *ctx, const rl_points *all)
{
    bool gpu = ctx->kind == RL_CUDA;
    const point *idle = find(all, "c_memory", "compute", -1);
    const point *stream = find(all, "c_memory", "bandwidth", -1);
    if (!idle || !stream) {
        rl_judge_status(ctx, exp01_claim(ctx, MEMORY), NULL, "-", RL_NOT_MEASURED, "sweep c not run");
        return;
    }
    double share_idle = 100 * idle->rd.mem_used / idle->rd.mem_total;
    double share_stream = 100 * stream->rd.mem_used / stream->rd.mem_total;
    double busy_idle = gpu ? idle->rd.util_mem_pct : idle->rd.util_pct;
    double busy_stream = gpu ? stream->rd.util_mem_pct : stream->rd.util_pct;
    char measured[160];
    snprintf(measured, sizeof measured, "idle: %.1f %% held, %.1f %% busy; stream: %.1f %% held, "
             "%.1f %% busy", share_idle, busy_idle, share_stream, busy_stream);
    if (!held_long_enough(ctx, exp01_claim(ctx, MEMORY), MEMORY, shorter(idle, stream), measured) ||
        !held_alone(ctx, exp01_claim(ctx, MEMORY), (const point *[]){idle, stream}, 2, measured))
        return;
    rl_verdict_status st = RL_NOT_MEASURED;
    if (!isnan(busy_idle) && !isnan(busy_stream) && !isnan(share_idle) && !isnan(share_stream))
        st = busy_idle <= 10 && busy_stream >= (gpu ? 50 : 90) &&
                     idle->rd.mem_used >= 4 * stream->rd.mem_used ? RL_HOLDS : RL_DOES_NOT_HOLD;
    rl_judge_status(ctx, exp01_claim(ctx, MEMORY), NULL, measured, st,
                    gpu ? "busy = utilization.memory; held = memory.used / memory.total"
                        : "CPU has no utilization.memory: busy = the streaming threads' CPU time, "
                          "held = resident set / RAM");
}

/* One busy worker reads busy while it does a sliver of the full device's work. */
void exp01_judge_one_worker(rl_ctx *ctx, const rl_points *all)
{
    double full = exp01_full_device(all);
    char fraction[32] = "-", note[200];
    const point *one = find(all, "a_occupancy", "compute", 1);
    if (one && full > 0)
        snprintf(fraction, sizeof fraction, "%.4f", one->work_per_s / full);
    snprintf(note, sizeof note, "while it does %s of the full device's work", fraction);
    double busy = one ? one->rd.util_pct : NAN;
    char measured[64];
    if (!held_long_enough(ctx, exp01_claim(ctx, ONE_BUSY), ONE_BUSY, one,
                          as_measured(measured, sizeof measured, busy, "%")) ||
        !held_alone(ctx, exp01_claim(ctx, ONE_BUSY), &one, 1, measured))
        return;
    rl_judge(ctx, exp01_claim(ctx, ONE_BUSY), NULL, busy, note);
}

/* The full device does units / 2 times one busy worker's work or more. */
void exp01_judge_work_differs(rl_ctx *ctx, const rl_points *all)
{
    int units = rl_units(ctx);
    char note[200];
    snprintf(note, sizeof note, "bound %.1fx (%d %s / 2); full device: the most compute work per "
             "second in sweep a; both read busy", units / 2.0, units,
             ctx->kind == RL_CUDA ? "SMs" : "CPUs");
    const rl_point *best = full_device_point(all);
    const point *one = find(all, "a_occupancy", "compute", 1);
    double full = best ? work_per_s(best) : NAN;
    double ratio = one && full > 0 ? full / one->work_per_s : NAN;
    /* work a second, not a busy reading: no window to hold (EXP01_NO_WINDOW),
     * but another process that takes a CPU during either hold moves it */
    const point *both[2] = {one, best ? RL_DATA(point, best) : NULL};
    char measured[64];
    if (!held_alone(ctx, exp01_claim(ctx, WORK_DIFFERS), both, 2,
                    as_measured(measured, sizeof measured, ratio, "x")))
        return;
    rl_judge_within(ctx, exp01_claim(ctx, WORK_DIFFERS), NULL, ratio, units / 2.0, INFINITY, note);
}

void exp01_judge_chase(rl_ctx *ctx, const rl_points *all)
{
    char measured[128], note[200];
    const point *chase = find(all, "a_occupancy", "latency", 1);
    double share = chase ? chase->gbps / rl_ceilings_get(ctx)->bw[RL_DRAM][RL_READ].best : NAN;
    double uc = chase ? chase->rd.util_pct : NAN;
    snprintf(measured, sizeof measured, isnan(uc) ? "-" : "%.1f %% busy, %.3f of bandwidth", uc,
             share);
    snprintf(note, sizeof note, "a pointer chase waits on memory every hop; traffic counted as "
             "%.0f B per hop over the DRAM read bandwidth", bytes_per_hop(ctx));
    if (!held_long_enough(ctx, &EXP01_CLAIMS[CHASE_BUSY], CHASE_BUSY, chase, measured) ||
        !held_alone(ctx, &EXP01_CLAIMS[CHASE_BUSY], &chase, 1, measured))
        return;
    rl_verdict_status st = uc >= 90 && share < 0.25 ? RL_HOLDS : RL_DOES_NOT_HOLD;
    rl_judge_status(ctx, &EXP01_CLAIMS[CHASE_BUSY], NULL, measured,
                    isnan(uc) || isnan(share) ? RL_NOT_MEASURED : st, note);
}

/* The view of how much of the machine was busy, with one busy worker. */
void exp01_judge_units_view(rl_ctx *ctx, const rl_points *all)
{
    int units = rl_units(ctx);
    char note[200];
    const point *one = find(all, "a_occupancy", "compute", 1);
    double view = one ? one->rd.units_busy_pct : NAN;
    char measured[64];
    if (!held_long_enough(ctx, exp01_claim(ctx, UNITS_VIEW), UNITS_VIEW, one,
                          as_measured(measured, sizeof measured, view, "%")) ||
        !held_alone(ctx, exp01_claim(ctx, UNITS_VIEW), &one, 1, measured))
        return;
    if (ctx->kind == RL_CUDA) {
        snprintf(note, sizeof note, "GPM: %s", one ? one->rd.gpm_status : "sweep a not run");
        rl_judge(ctx, exp01_claim(ctx, UNITS_VIEW), NULL, view,
                 isnan(view) ? note : "SM_UTIL counts busy SMs: one of them");
        return;
    }
    snprintf(note, sizeof note, "1 / %d CPUs = %.0f %%; like GPM SM_UTIL, it counts how much "
             "of the machine was busy; no GPM on a CPU", units, 100.0 / units);
    rl_judge_within(ctx, exp01_claim(ctx, UNITS_VIEW), NULL, view, 100.0 / units - 10,
                    100.0 / units + 10, note);
}

