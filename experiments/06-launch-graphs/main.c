/*
 * Experiment 06 -- launch overhead, CUDA graphs, and the doubling test.
 *
 * A kernel that finishes before the host can issue the next leaves the GPU
 * idle in the gap. A chain of K small kernels, launched three ways
 * (synchronize after each; asynchronously with one synchronize; captured
 * once into a CUDA graph and replayed), shows what a launch costs, against
 * the floor: the same element updates in one kernel. Two sweeps: the chain
 * length K = 1..1000 for an "empty" kernel (1 thread, 1 element) and a
 * 1-block kernel; and the work per kernel n at fixed K. Then the doubling
 * test (doubling.c): time a small model step at batch b and 2b; while the
 * ratio stays near 1 the step is overhead, not work.
 * On the CPU backend a launch is an OpenMP parallel region.
 */
#include "exp06.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *test_choice = "all";

static const rl_option OPTIONS[] = {
    {"test", "T", "chain (K sweep), size (n sweep), doubling, or all", "chain|size|doubling|all", &test_choice},
    {0},
};

static const char *const COLUMNS[] = {
    "test", "way", "number", "k", "n", "batch", "d", "cache_resident",
    RL_MEASUREMENT_COLUMNS, "us_per_kernel", "floor_us_per_kernel", "overhead_fraction",
    "host_us_per_launch", "graph_build_us", "graph_breakeven_replays", "doubling_ratio",
    "validated", "max_abs_err", "skipped_reason", NULL};

static const rl_experiment EXP06 = {
    .id = "06",
    .slug = "06-launch-graphs",
    .title = "Launch overhead, CUDA graphs, and the doubling test",
    .claim = "Tiny kernels finish before the host issues the next, so the GPU idles in the gaps; "
             "a CUDA graph replays a chain with one launch. A step whose time barely moves when "
             "the batch doubles is overhead-bound.",
    .source = "NVIDIA developer blog, \"Getting Started with CUDA Graphs\" (2019); Horace He, "
              "\"Making Deep Learning Go Brrrr From First Principles\" (2022)",
    .prediction = "empty kernels: graph replay <= 0.5x the asynchronous time per kernel and <= 2 us; "
                  "synchronizing after each launch >= asynchronous; doubling ratio < 1.1 at the "
                  "smallest batch and > 1.6 at the largest; a graph shrinks the overhead-bound region",
    .columns = COLUMNS,
    .options = OPTIONS,
    .default_cache = RL_HOT,
    .compare_keys = "test,way,k,n,batch",
    .compare_value = "time_us_median",
};

enum { MAX_CHAIN_POINTS = 512, STEP_D = 256 };
static const double ATOL = 1e-6, RTOL = 1e-5;

typedef struct run {
    rl_ctx *ctx;
    const launch_way *table;
    float *x;                /* device: the chain's array */
    size_t nmax, serial_cap;
    float *host;             /* host scratch: inputs and results */
    double *want;
    chain_point pts[MAX_CHAIN_POINTS];
    int npts;
} run;

static bool want(const char *t) { return !strcmp(test_choice, "all") || !strcmp(test_choice, t); }

/* ---- one (k, n): validate every way, time them together ---------------- */

/* Fresh random input, one run, every element against the closed form. The
 * chain works in place, so its input cannot be poisoned; an element a
 * kernel skipped keeps its input value, which the reference never equals. */
static void validate(run *r, chain_point *p)
{
    rl_ctx *ctx = r->ctx;
    rl_fill_uniform(r->host, p->n, -1, 1, rl_next_seed(ctx));
    for (size_t i = 0; i < p->n; i++)
        r->want[i] = launch_reference(r->host[i], p->k);
    rl_upload(ctx->be, r->x, r->host, p->n * sizeof(float));
    p->way->run(&p->a);
    rl_download(ctx->be, r->host, r->x, p->n * sizeof(float));
    rl_check c = rl_compare_f32(r->host, r->want, p->n, ATOL, RTOL);
    p->ok = c.ok;
    p->max_abs_err = c.max_abs_err;
    if (!c.ok) {
        rl_check_describe(&c, p->why, sizeof p->why);
        fprintf(stderr, "exp-06: %s (k=%d, n=%zu) %s\n", p->way->name, p->k, p->n, p->why);
        ctx->failures++;
    }
}

static void run_way(void *arg)
{
    chain_point *p = arg;
    p->way->run(&p->a);
}

/* The host's cost per launch call: the time to issue the chain, without
 * waiting for it, over its kernels (median of several issues). */
static double host_cost_us(rl_ctx *ctx, chain_point *p)
{
    double t[32];
    int reps = ctx->args.mode == RL_MODE_QUICK ? 8 : 32;
    for (int i = 0; i < reps; i++) {
        double t0 = rl_now_s();
        p->way->enqueue(&p->a);
        t[i] = rl_now_s() - t0;
        rl_sync(ctx->be);
    }
    return rl_stats_of(t, reps).median * 1e6 / p->k;
}

static void measure_point(run *r, const char *test, int k, size_t n)
{
    rl_ctx *ctx = r->ctx;
    chain_point *first = &r->pts[r->npts];
    rl_work works[MAX_WAYS];
    chain_point *timed[MAX_WAYS];
    rl_measurement m[MAX_WAYS];
    int nw = 0;
    for (const launch_way *w = r->table; w->name && r->npts < MAX_CHAIN_POINTS; w++) {
        if (!rl_variant_selected(ctx, w->number, w->name) ||
            (w->number == 5 && (double)k * (double)n > (double)r->serial_cap))
            continue; /* serial: one thread on millions of updates takes minutes by design */
        chain_point *p = &r->pts[r->npts++];
        *p = (chain_point){.test = test, .way = w, .k = k, .n = n, .host_us_per_launch = NAN,
                           .graph_build_us = NAN, .breakeven = NAN, .floor_us_per_kernel = NAN};
        p->a = (launch_args){.x = r->x, .n = n, .k = k, .stream = rl_stream(ctx->be)};
        if (w->build) {
            double t0 = rl_now_s();
            w->build(&p->a);
            p->graph_build_us = (rl_now_s() - t0) * 1e6;
        }
        validate(r, p);
        if (p->ok) {
            works[nw] = (rl_work){w->name, run_way, p};
            timed[nw++] = p;
        }
    }
    rl_progress_step(ctx, "%s: k=%d n=%zu", test, k, n);
    if (nw)
        rl_measure_group(ctx, works, nw, m);
    double floor_us = NAN;
    for (int i = 0; i < nw; i++) {
        chain_point *p = timed[i];
        p->m = m[i];
        p->us_per_kernel = m[i].stats.median * 1e6 / k;
        if (p->way->number == 4)
            floor_us = p->us_per_kernel;
        if (p->way->enqueue)
            p->host_us_per_launch = host_cost_us(ctx, p);
    }
    const chain_point *async = NULL;
    for (chain_point *p = first; p < &r->pts[r->npts]; p++) {
        p->floor_us_per_kernel = floor_us;
        async = p->ok && p->way->number == 2 ? p : async;
    }
    for (chain_point *p = first; p < &r->pts[r->npts]; p++) {
        double saved = async ? (async->m.stats.median - p->m.stats.median) * 1e6 : NAN;
        if (p->ok && isfinite(p->graph_build_us) && saved > 0)
            p->breakeven = p->graph_build_us / saved;
        if (p->way->release)
            p->way->release(&p->a);
    }
}

/* ---- rows and the table ------------------------------------------------------ */

static void write_chain_row(run *r, const chain_point *p)
{
    rl_ctx *ctx = r->ctx;
    rl_set_str(ctx, "test", p->test);
    rl_set_str(ctx, "way", p->way->name);
    rl_set_int(ctx, "number", p->way->number);
    rl_set_int(ctx, "k", p->k);
    rl_set_int(ctx, "n", (long long)p->n);
    rl_set_int(ctx, "cache_resident", p->n * sizeof(float) < 4 * ctx->dev->llc_bytes);
    rl_set_str(ctx, "validated", p->ok ? "yes" : "no");
    rl_set_num(ctx, "max_abs_err", p->max_abs_err);
    if (!p->ok) {
        rl_set_str(ctx, "skipped_reason", p->why);
        rl_end_row(ctx);
        return;
    }
    rl_set_measurement(ctx, &p->m);
    rl_set_num(ctx, "us_per_kernel", p->us_per_kernel);
    rl_set_num(ctx, "floor_us_per_kernel", p->floor_us_per_kernel);
    rl_set_num(ctx, "overhead_fraction", 1 - p->floor_us_per_kernel / p->us_per_kernel);
    rl_set_num(ctx, "host_us_per_launch", p->host_us_per_launch);
    rl_set_num(ctx, "graph_build_us", p->graph_build_us);
    rl_set_num(ctx, "graph_breakeven_replays", p->breakeven);
    rl_end_row(ctx);
}

static void print_chain(const chain_point *p)
{
    if (!p->ok) {
        printf("  %-6s %-11s %5d %9zu  FAILED validation: %s\n", p->test, p->way->name, p->k, p->n, p->why);
        return;
    }
    printf("  %-6s %-11s %5d %9zu %10.3f %9.3f %6.0f %%", p->test, p->way->name, p->k, p->n,
           p->us_per_kernel, p->floor_us_per_kernel,
           100 * (1 - p->floor_us_per_kernel / p->us_per_kernel));
    if (isfinite(p->host_us_per_launch))
        printf("  host %.3f us/launch", p->host_us_per_launch);
    if (isfinite(p->graph_build_us))
        printf("  build %.0f us", p->graph_build_us);
    if (isfinite(p->breakeven))
        printf(" (pays off after %.1f replays)", p->breakeven);
    printf("\n");
}

/* ---- the sweeps ----------------------------------------------------------------- */

/* The sweeps call point() for each (test, k, n): measure_point, or while
 * planning a function that adds the point to the plan. */
typedef void (*point_fn)(run *r, const char *test, int k, size_t n);

static void chain_sweep(run *r, point_fn point)
{
    static const int full[] = {1, 3, 10, 30, 100, 300, 1000}, fewer[] = {1, 10, 100, 1000};
    bool all = r->ctx->args.mode == RL_MODE_FULL;
    static const size_t sizes[] = {1, 256}; /* "empty": 1 thread; one block */
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < (all ? 7 : 4); i++)
            point(r, "chain", all ? full[i] : fewer[i], sizes[s]);
}

/* n = 1, 4, 16, ... up to nmax at k = 20; every 16th in a lab run, every
 * 256th in a quick one. */
static void size_sweep(run *r, point_fn point)
{
    size_t step = r->ctx->args.mode == RL_MODE_QUICK ? 256 : r->ctx->args.mode == RL_MODE_LAB ? 16 : 4;
    for (size_t n = 1; n <= r->nmax; n = n * step > r->nmax && n < r->nmax ? r->nmax : n * step)
        point(r, "size", 20, n);
}

/* The plan's model of one chain: its bytes at the roofline, and a few
 * microseconds of fixed cost per launch (an estimate, not a measurement). */
static void plan_point(run *r, const char *test, int k, size_t n)
{
    (void)test;
    int members = 0;
    for (const launch_way *w = r->table; w->name; w++)
        members += rl_variant_selected(r->ctx, w->number, w->name);
    double bytes = 8.0 * k * (double)n;
    rl_plan_group(r->ctx, members, rl_estimate_call_s(r->ctx, bytes, 4.0 * n, RL_COPY, 0) + 3e-6 * k);
}

/* The smallest n at which the asynchronous way is within 25 % of the floor. */
static size_t overhead_stops(const run *r)
{
    for (int i = 0; i < r->npts; i++) {
        const chain_point *p = &r->pts[i];
        if (p->ok && !strcmp(p->test, "size") && p->way->number == 2 &&
            p->us_per_kernel <= 1.25 * p->floor_us_per_kernel)
            return p->n;
    }
    return 0;
}

static const launch_way *table_for(rl_backend_kind kind)
{
#ifdef RL_HAVE_CUDA
    if (kind == RL_CUDA)
        return launch_cuda_ways;
#endif
    (void)kind;
    return launch_cpu_ways;
}

static const step_way *step_table_for(rl_backend_kind kind)
{
#ifdef RL_HAVE_CUDA
    if (kind == RL_CUDA)
        return step_cuda_ways;
#endif
    (void)kind;
    return step_cpu_ways;
}

static void check_variants(const run *r)
{
    int numbers[MAX_WAYS], n = 0;
    const char *names[MAX_WAYS];
    for (const launch_way *w = r->table; w->name && n < MAX_WAYS; w++, n++) {
        numbers[n] = w->number;
        names[n] = w->name;
    }
    rl_check_variants(r->ctx, numbers, names, n);
}

int main(int argc, char **argv)
{
    rl_ctx *ctx = rl_begin(&EXP06, argc, argv);
    run *r = calloc(1, sizeof *r);
    r->ctx = ctx;
    r->table = table_for(ctx->kind);
    check_variants(r);
    if (ctx->args.list) {
        printf("ways of kernels/%s (chain), then of the step:\n", ctx->kind == RL_CUDA ? "launch.cu" : "cpu/launch.c");
        for (const launch_way *w = r->table; w->name; w++)
            rl_list_variant(w->number, w->name, w->what);
        for (const step_way *w = step_table_for(ctx->kind); w->name; w++)
            rl_list_variant(w->number, w->name, w->what);
        free(r);
        return rl_end(ctx);
    }
    bool gpu = ctx->kind == RL_CUDA;
    double load_start = rl_load_average();
    r->nmax = gpu ? (size_t)1 << 24 : (size_t)1 << 22;
    r->serial_cap = gpu ? (size_t)1 << 20 : (size_t)1 << 26;
    int bmax = gpu ? 1 << 16 : 1 << 10;
    rl_meta(ctx, "chain", "x -> %.2f x + %.3f in place on n floats, k kernels; validated against "
            "the closed form in double, atol %g, rtol %g", LAUNCH_A, LAUNCH_B, ATOL, RTOL);
    rl_meta(ctx, "floor", "one_kernel: the chain in one launch, each thread making the k passes "
            "over its own elements that k kernels would; per kernel = its time / k");
    rl_meta(ctx, "serial_cap", "serial runs only where k x n <= %zu", r->serial_cap);
    rl_meta(ctx, "step", "h = relu(x W1 + bias); y = h W2 + x, d = %d, batch 1..%d", STEP_D, bmax);
    rl_meta(ctx, "host_cost", "%s", gpu ? "host clock around issuing the chain (launches and their "
            "cudaGetLastError checks, or one cudaGraphLaunch), median, per kernel" : "n/a on the CPU");

    r->x = rl_alloc(ctx->be, r->nmax * sizeof(float));
    r->host = rl_host_alloc(r->nmax * sizeof(float));
    r->want = rl_host_alloc(r->nmax * sizeof(double));

    if (want("chain"))
        chain_sweep(r, plan_point);
    if (want("size"))
        size_sweep(r, plan_point);
    if (want("doubling"))
        plan_doubling(ctx, step_table_for(ctx->kind), STEP_D, bmax);
    rl_plan_print(ctx);

    printf("\n  %-6s %-11s %5s %9s %10s %9s %8s\n", "test", "way", "k", "n", "us/kernel", "floor", "ovhd");
    if (want("chain"))
        chain_sweep(r, measure_point);
    if (want("size"))
        size_sweep(r, measure_point);
    rl_progress_clear();
    for (int i = 0; i < r->npts; i++)
        print_chain(&r->pts[i]);
    size_t stop = overhead_stops(r);
    if (want("size") && stop)
        printf("\n  launch overhead stops mattering (async within 25 %% of the floor) at n = %zu\n", stop);
    else if (want("size"))
        printf("\n  launch overhead stops mattering (async within 25 %% of the floor): not within the "
               "sizes measured\n");

    doubling dt = {0};
    if (want("doubling"))
        dt = doubling_test(ctx, step_table_for(ctx->kind), STEP_D, bmax);
    double overload = rl_record_host_load(ctx, load_start);
    if (!gpu && overload > 0)
        printf("\n  note: load average %.1f on %ld CPUs: other processes competed for the CPUs, and a "
               "region waits for its slowest thread\n", overload, sysconf(_SC_NPROCESSORS_ONLN));
    for (int i = 0; i < r->npts; i++)
        write_chain_row(r, &r->pts[i]);
    doubling_rows(ctx, &dt);
    judge_chain(ctx, r->pts, r->npts);
    judge_doubling(ctx, &dt);

    doubling_free(&dt);
    rl_free(ctx->be, r->x);
    rl_host_free(r->host);
    rl_host_free(r->want);
    free(r);
    return rl_end(ctx);
}
