/*
 * exp01.h -- what experiment 01's files share: the claims' ids, a point
 * and the run it is held in. main.c declares the points and the order of
 * the verdicts; it calls three chapters: hold.c (how a point is held and
 * read), setup.c (the buffers and the check) and judge.c (the verdicts),
 * and hold.c calls setup.c.
 */
#ifndef EXP01_H
#define EXP01_H

#include "busy.h"
#include "probes/rl_probes.h"
#include "rooflab.h"
#include "window.h"

/* The claims, in EXP01_CLAIMS's order (main.c): the same ids on both
 * backends; a claim with a CPU twin has the GPU's first, the CPU's right
 * after it (exp01_claim takes this run's). */
enum { ONE_BUSY, ONE_BUSY_CPU, CHASE_BUSY, TRACKS_ONE, TRACKS_ONE_CPU, TRACKS_FULL,
       TRACKS_FULL_CPU, WORK_DIFFERS, WORK_DIFFERS_CPU, UNITS_VIEW, UNITS_VIEW_CPU, MEMORY,
       MEMORY_CPU };
enum { EXP01_CLAIM_COUNT = MEMORY_CPU + 1 };
extern const rl_claim EXP01_CLAIMS[];
/* Each claim's least hold, indexed by the GPU's claim (main.c; window.h). */
extern const exp01_window EXP01_WINDOW[EXP01_CLAIM_COUNT];
const rl_claim *exp01_claim(const rl_ctx *ctx, int gpu_claim);

/* The lowest and highest of a value over a point's windows (NaN, NaN:
 * none seen): the spread a chart draws around the point's value. */
typedef struct spread {
    double lo, hi;
} spread;

/* A point's hold is observed as this many consecutive windows, each read
 * on its own: the tool's reading, the units-busy view and the work rate
 * then have a spread (their lowest and highest window), not one number. */
enum { HOLD_WINDOWS = 4 };

struct run;

/* One point of a sweep: what it is, then what was observed. */
typedef struct point {
    const char *sweep, *name;  /* name: the variant's, or "idle_allocation" */
    const char *worker_unit, *work_unit;
    const busy_variant *v;
    bool idle;                 /* memory held, no kernel (the variant at duty 0) */
    int workers;
    double duty_pct, workers_per_unit, period_ms, alloc_bytes;
    struct run *at;            /* the run it is held in: its buffers and observer */
    /* observed */
    int bursts;
    rl_duty measured;          /* the duty cycle from the bursts' timestamps */
    double window_s, work, work_per_s;
    double others_cpus;        /* CPUs other processes kept busy during the hold (NaN: unknown) */
    double gbps;               /* the bytes a chase or stream moved */
    rl_reading rd;             /* over the whole hold */
    int windows;               /* the hold's windows (HOLD_WINDOWS) */
    spread util, util_mem, units_busy, work_per_s_win; /* over the windows */
} point;

/* The run: one part, every point of the sweeps chosen, held one after the
 * other on the same buffers, read by the same observer. */
typedef struct run {
    rl_ctx *ctx;
    rl_observer obs;
    double settle_s, hold_s, period_s;
    bool holds_fitted; /* shortened to fit --budget */
    double load_start;      /* the load average when the run began */
    busy_buffers w;         /* the variants' buffers on the backend's device */
    int max_workers;        /* CUDA: 4 blocks per SM; CPU: the cores */
} run;

/* Memory traffic of one chase hop: a DRAM sector, a cache line. */
static inline double bytes_per_hop(const rl_ctx *ctx) { return ctx->kind == RL_CUDA ? 32 : 64; }

/* hold.c: the run (its holds for this mode and backend, its buffers'
 * sizes; nothing is made yet), its part (its buffers and observer opened,
 * every point held, then closed), and one point held and read. */
run *exp01_run_new(rl_ctx *ctx, double period_s);
void exp01_run_open(rl_ctx *ctx, void *run);
void exp01_run_observed(rl_ctx *ctx, rl_points *pts, void *run);
void exp01_run_close(rl_ctx *ctx, const rl_points *pts, void *run);
void exp01_observe(rl_ctx *ctx, rl_point *p);
/* In declare, once every point is: the holds told to the plan, and the
 * least of them that still serves every claim (main.c's windows). */
void exp01_run_plan(rl_ctx *ctx, const run *r);
/* main.c: the longest window any claim's reading needs here. */
double exp01_least_trusted_hold_s(const rl_ctx *ctx);

/* judge.c: the verdicts, each from the observed points; the full device's
 * work per second (sweep a's most, NaN: none), for a column too. */
double exp01_full_device(const rl_points *all);
void exp01_judge_one_worker(rl_ctx *ctx, const rl_points *all);
void exp01_judge_chase(rl_ctx *ctx, const rl_points *all);
void exp01_judge_tracking(rl_ctx *ctx, const rl_points *all, int workers, const rl_claim *c);
void exp01_judge_work_differs(rl_ctx *ctx, const rl_points *all);
void exp01_judge_units_view(rl_ctx *ctx, const rl_points *all);
void exp01_judge_memory(rl_ctx *ctx, const rl_points *all);

/* setup.c: the most workers a point may have (CUDA: 4 blocks per SM; the
 * CPU: its threads, as many as the observer reads); the buffers' sizes
 * (in declare: nothing is made), then the buffers themselves (when the
 * run's part opens), freed when it is done. */
int exp01_most_workers(const rl_ctx *ctx);
void exp01_buffers_size(run *r);
void exp01_buffers_open(run *r);
void exp01_buffers_close(run *r);
/* A point's check: once per variant, one burst on fresh inputs, checked;
 * the variant's later points take its result. */
bool exp01_check_point(rl_ctx *ctx, rl_point *p);
/* The arguments for a run of v on `workers` at this duty, its lanes'
 * starts uploaded. */
busy_args exp01_variant_args(run *r, const busy_variant *v, int workers, double duty, double period_s);

#endif
