/*
 * Experiment 06 -- launch overhead, CUDA graphs, and the doubling test.
 *
 * A kernel that finishes before the host can issue the next leaves the GPU
 * idle in the gap. A chain of K small kernels, run by each variant of
 * kernels/launch.c (synchronize after each launch; asynchronously with one
 * synchronize; captured once into a CUDA graph and replayed), shows what a
 * launch costs, against the floor: the same element updates in one kernel;
 * over K, and over the work per kernel n. Then the doubling test
 * (doubling.c): time a small model step at batch b and 2b; while the ratio
 * stays near 1 the step is overhead, not work.
 * On the CPU backend a launch is an OpenMP parallel region.
 */
#include "exp06.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *test_choice = "all";
static const char *width_choice = "256";

/* The model step's width d: small enough that batch 1 is overhead-bound on
 * a GPU, large enough that the largest batch is work-bound. --width moves
 * it, to find the width at which batch 1 stops being overhead-bound. */
enum { WIDTH_MIN = 1, WIDTH_MAX = 4096 };

static const rl_option OPTIONS[] = {
    {"test", "T", "chain (K sweep), size (n sweep), doubling, or all", "chain|size|doubling|all", &test_choice},
    {"width", "D", "the doubling test's step width d, a whole number 1..4096", NULL,
     &width_choice},
    {0},
};

/* ---- the columns --------------------------------------------------------------- */

/* Only where the working set is known: the chain's n floats. */
static double col_cache_resident(rl_ctx *ctx, const rl_point *p)
{
    return p->footprint > 0 ? rl_col_cache_resident(ctx, p) : NAN;
}

static double col_us_per_kernel(rl_ctx *ctx, const rl_point *p)
{
    (void)ctx;
    return us_per_kernel(p);
}

static double col_overhead(rl_ctx *ctx, const rl_point *p)
{
    return 1 - call_of(p)->floor_us / col_us_per_kernel(ctx, p);
}

static double col_overhead_pct(rl_ctx *ctx, const rl_point *p) { return 100 * col_overhead(ctx, p); }

static const rl_column COLUMNS[] = {
    RL_TEXT("test", NULL, NULL, call, test),
    RL_COLUMN_VARIANT,
    RL_COLUMN_NUMBER,
    RL_DOUBLE("k", NULL, NULL, call, k),
    RL_WHOLE("n", NULL, NULL, call, n),
    RL_DOUBLE("batch", NULL, NULL, call, batch),
    RL_DOUBLE("d", NULL, NULL, call, d),
    {"cache_resident", NULL, NULL, .num = col_cache_resident},
    {0},
};

static const rl_column DERIVED[] = {
    {"us_per_kernel", NULL, NULL, .num = col_us_per_kernel},
    RL_DOUBLE("floor_us_per_kernel", NULL, NULL, call, floor_us),
    {"overhead_fraction", NULL, NULL, .num = col_overhead},
    RL_DOUBLE("host_us_per_launch", NULL, NULL, call, host_us),
    RL_DOUBLE("graph_build_us", NULL, NULL, call, build_us),
    RL_DOUBLE("graph_breakeven_replays", NULL, NULL, call, breakeven),
    RL_RATIO_COLUMNS("doubling_ratio", call, ratio),
    {0},
};

/* The chain tests' console table (the doubling test has its own). */
static const rl_column TABLE[] = {
    RL_TEXT(NULL, "test", "%-6s", call, test),
    {NULL, "variant", "%-11s", .str = rl_col_variant},
    RL_DOUBLE(NULL, "k", "%5.0f", call, k),
    RL_WHOLE(NULL, "n", "%9.0f", call, n),
    {NULL, "us/kernel", "%10.3f", .num = col_us_per_kernel, .measured = true},
    RL_DOUBLE_MEASURED(NULL, "floor us", "%9.3f", call, floor_us),
    {NULL, "overhead %", "%10.0f", .num = col_overhead_pct, .measured = true},
    RL_DOUBLE_MEASURED(NULL, "host us/launch", "%14.3f", call, host_us),
    RL_DOUBLE(NULL, "graph build us", "%14.0f", call, build_us),
    RL_DOUBLE_MEASURED(NULL, "break-even replays", "%18.1f", call, breakeven),
    {0},
};

static const kernel_family *const FAMILIES[] = {&launch_family, &step_family, NULL};

static const rl_experiment EXP06 = {
    .id = "06",
    .slug = "06-launch-graphs",
    .title = "Launch overhead, CUDA graphs, and the doubling test",
    .claim = "Tiny kernels finish before the host issues the next, so the GPU idles in the gaps; "
             "a CUDA graph replays a chain with one launch. A step whose time barely moves when "
             "the batch doubles is overhead-bound.",
    .source = "NVIDIA developer blog, \"Getting Started with CUDA Graphs\" (2019); Horace He, "
              "\"Making Deep Learning Go Brrrr From First Principles\" (2022)",
    .prediction = "empty kernels on a GPU: a graph's replay is cheap, synchronizing after each "
                  "launch the slowest; a graph shrinks the overhead-bound region; on the CPU the "
                  "same claims, an OpenMP region being the launch (README)",
    .claims = EXP06_CLAIMS,
    .families = FAMILIES,
    .columns = COLUMNS,
    .derived = DERIVED,
    .table = TABLE,
    .options = OPTIONS,
    .default_cache = RL_HOT,
    .compare_keys = "test,variant,k,n,batch",
    .compare_value = "time_us_median",
};

static const double ATOL = 1e-6, RTOL = 1e-5;

/* The chain's array on the device, its largest n, and the serial
 * variant's cap on k x n. */
typedef struct chain_buffers {
    float *x;
    size_t nmax, serial_cap;
} chain_buffers;

/* ---- points shared with doubling.c and verdicts.c --------------------------- */

call *new_call(const char *test)
{
    call *c = rl_host_alloc(sizeof *c);
    *c = (call){.test = test, .k = NAN, .n = NAN, .batch = NAN, .d = NAN, .floor_us = NAN,
                .host_us = NAN, .build_us = NAN, .breakeven = NAN, .ratio = RL_RATIO_NONE};
    return c;
}

void release_points(rl_points *pts)
{
    for (int i = 0; i < pts->n; i++) {
        call *c = call_of(&pts->v[i]);
        if (c->a.ops && c->a.ops->release)
            c->a.ops->release(&c->a);
        if (c->s.ops && c->s.ops->release)
            c->s.ops->release(&c->s);
        rl_host_free(c);
    }
    rl_points_free(pts);
}

/* ---- one chain point: validate, time, what it costs the host ------------------ */

/* Before validation: builds what the variant replays (timed), then fresh
 * random input and its closed form. The chain works in place, so its input
 * cannot be poisoned; an element a kernel skipped keeps its input value,
 * which the reference never equals. */
static void prepare_chain(rl_ctx *ctx, rl_point *p)
{
    call *c = call_of(p);
    size_t n = (size_t)c->n;
    if (c->a.ops->build && !c->a.graph) {
        double t0 = rl_now_s();
        c->a.ops->build(&c->a);
        c->build_us = (rl_now_s() - t0) * 1e6;
    }
    float *x = rl_host_random(ctx, n, -1, 1);
    double *want = rl_host_alloc(n * sizeof *want);
    launch_reference_n(x, n, (int)c->k, want);
    rl_upload(ctx->be, c->a.x, x, n * sizeof(float));
    rl_host_free(x);
    p->want = want; /* freed after the check (frees_want) */
}

/* Each point against its group: the floor per kernel, the host's cost per
 * launch (the time to issue the chain over its kernels), and the replays
 * that pay a build back against async. */
static void derive(rl_ctx *ctx, rl_points *pts)
{
    for (int i = 0; i < pts->n; i++) {
        rl_point *p = &pts->v[i];
        call *c = call_of(p);
        const rl_point *fl = rl_points_in_group(pts, p->group, "floor");
        const rl_point *async = rl_points_in_group(pts, p->group, "asynchronous");
        c->floor_us = fl ? us_per_kernel(fl) : NAN;
        if (!rl_point_timed(p))
            continue;
        if (c->a.ops->enqueue)
            c->host_us = rl_issue_s(ctx, launch_issue, &c->a) * 1e6 / c->k;
        double saved = async ? (async->seconds - p->seconds) * 1e6 : NAN;
        if (isfinite(c->build_us) && saved > 0)
            c->breakeven = c->build_us / saved;
    }
}

/* ---- the sweeps ----------------------------------------------------------------- */

/* Every variant at one (k, n), one group; serial only where k x n is small
 * (one thread on millions of updates takes minutes by design). */
static void chain_point(rl_ctx *ctx, rl_points *pts, const chain_buffers *b, const char *test,
                        int k, size_t n)
{
    int group = rl_points_new_group(pts);
    for (const launch_variant *v = launch_variants; v->name; v++) {
        if (!rl_runs(ctx, &launch_family, KERNEL_VARIANT(v)) ||
            (kernel_has_role(KERNEL_VARIANT(v), "serial") && (double)k * (double)n > (double)b->serial_cap))
            continue;
        call *c = new_call(test);
        c->k = k, c->n = (double)n;
        c->a = (launch_args){.ops = RL_LAUNCHER(ctx, v), .x = b->x, .n = n, .k = k,
                             .stream = rl_stream(ctx->be)};
        /* The plan's model: the bytes at the roofline, and a few
         * microseconds of fixed cost per launch (an estimate). */
        rl_points_add(pts, &(rl_point){
            .variant = KERNEL_VARIANT(v), .group = group, .run = launch_call, .arg = &c->a,
            .data = c, .prepare = prepare_chain, .in_place = true, .out = b->x, .count = n,
            .frees_want = true, .atol = ATOL, .rtol = RTOL, .bytes = 8.0 * k * (double)n,
            .footprint = 4.0 * n, .pattern = RL_COPY, .extra_s = 3e-6 * k});
    }
}

/* The chain test: k = 1, 3, 10, ... 1000 in a full run (1, 10, 100, 1000
 * otherwise) at n = 1 ("empty": 1 thread) and 256 (one block). The size
 * test: n = 1, 4, 16, ... up to nmax at k = 20; every 16th in a lab run,
 * every 256th in a quick one. */
static void declare_chains(rl_ctx *ctx, rl_points *pts, const chain_buffers *b)
{
    static const int ks[] = {1, 3, 10, 30, 100, 300, 1000};
    static const size_t sizes[] = {1, 256};
    for (int s = 0; s < 2 && rl_option_is(test_choice, "chain"); s++)
        for (int i = 0; i < 7; i += ctx->args.mode == RL_MODE_FULL ? 1 : 2)
            chain_point(ctx, pts, b, "chain", ks[i], sizes[s]);
    size_t step = RL_BY_MODE(ctx, 256, 16, 4), nmax = b->nmax;
    for (size_t n = 1; n <= nmax && rl_option_is(test_choice, "size");
         n = n * step > nmax && n < nmax ? nmax : n * step)
        chain_point(ctx, pts, b, "size", 20, n);
}

/* The smallest n at which the asynchronous variant is within 25 % of the floor. */
static void print_overhead_stops(const rl_points *pts)
{
    for (int i = 0; i < pts->n; i++) {
        const call *c = call_of(&pts->v[i]);
        if (rl_point_timed(&pts->v[i]) && !strcmp(c->test, "size") &&
            rl_point_has_role(&pts->v[i], "asynchronous") && us_per_kernel(&pts->v[i]) <= 1.25 * c->floor_us) {
            printf("\n  launch overhead stops mattering (async within 25 %% of the floor) at n = %.0f\n", c->n);
            return;
        }
    }
    printf("\n  launch overhead stops mattering (async within 25 %% of the floor): not within the "
           "sizes measured\n");
}

static void describe(rl_ctx *ctx, const chain_buffers *b, int step_d, int bmax)
{
    const kernel_variant *floor = rl_variant_by_role(ctx, &launch_family, "floor");
    rl_meta(ctx, "chain", "x -> %.2f x + %.3f in place on n floats, k kernels; validated against "
            "the closed form in double, atol %g, rtol %g", LAUNCH_A, LAUNCH_B, ATOL, RTOL);
    rl_meta(ctx, "floor", "%s: the chain in one launch, each thread making the k passes over its "
            "own elements that k kernels would; per kernel = its time / k",
            floor ? floor->name : "not run");
    rl_meta(ctx, "serial_cap", "serial runs only where k x n <= %zu", b->serial_cap);
    rl_meta(ctx, "step", "h = relu(x W1 + bias); y = h W2 + x, d = %d, batch 1..%d", step_d, bmax);
    rl_meta(ctx, "width", "%d (--width: the step's d)", step_d);
    rl_meta(ctx, "host_cost", "%s", ctx->kind == RL_CUDA ? "host clock around issuing the chain "
            "(launches and their cudaGetLastError checks, or one cudaGraphLaunch), median, per "
            "kernel" : "n/a on the CPU");
}

int main(int argc, char **argv)
{
    rl_ctx *ctx = rl_begin(&EXP06, argc, argv);
    int step_d = (int)rl_option_number(ctx, "width", width_choice, WIDTH_MIN, WIDTH_MAX, true, NULL);
    bool gpu = ctx->kind == RL_CUDA;
    double load_start = rl_load_average();
    int bmax = gpu ? 1 << 16 : 1 << 10;
    chain_buffers b = {.nmax = gpu ? (size_t)1 << 24 : (size_t)1 << 22,
                       .serial_cap = gpu ? (size_t)1 << 20 : (size_t)1 << 26};
    describe(ctx, &b, step_d, bmax);
    b.x = rl_alloc(ctx->be, b.nmax * sizeof(float));

    rl_points chains = {0}, steps = {0};
    declare_chains(ctx, &chains, &b);
    struct weights *w = rl_option_is(test_choice, "doubling") ? doubling_declare(ctx, &steps, step_d, bmax) : NULL;
    rl_points_plan(ctx, &chains);
    rl_points_plan(ctx, &steps);
    rl_plan_print(ctx);

    rl_points_measure(ctx, &chains);
    derive(ctx, &chains);
    rl_points_report(ctx, &chains);
    if (rl_option_is(test_choice, "size"))
        print_overhead_stops(&chains);
    if (w)
        doubling_run(ctx, &steps);
    rl_note_host_load(ctx, load_start, "\n  note: ", "other processes competed for the CPUs, and a "
                      "region waits for its slowest thread");
    judge_chain(ctx, &chains);
    judge_doubling(ctx, &steps);

    release_points(&chains);
    release_points(&steps);
    doubling_close(ctx, w);
    rl_free(ctx->be, b.x);
    return rl_end(ctx);
}
