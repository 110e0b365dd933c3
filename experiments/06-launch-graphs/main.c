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
 *
 * This file reads top to bottom: the claims, the axes, the chains' points,
 * the judgement. The doubling test is a chapter of its own: doubling.c.
 */
#include "exp06.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- the claims ------------------------------------------------------------------ */

/* The same ids on both backends; on the CPU each says what the CPU's
 * version of a launch (an OpenMP region) shows, and where the analogy
 * stops. Variants are found by their roles. */
enum { GRAPH_CHEAP_GPU, GRAPH_CHEAP_CPU, SYNC_SLOWEST_GPU, SYNC_SLOWEST_CPU, DOUBLING_SMALL,
       DOUBLING_LARGE, GRAPH_SHRINKS };

static const rl_claim CLAIMS[] = {
    [GRAPH_CHEAP_GPU] = {"graph_replay_cheap", "graph replay per empty kernel", 0, 0.5, "x", 2,
                         .predicted_text = "<= 0.5x async, <= 2 us"},
    [GRAPH_CHEAP_CPU] = {"graph_replay_cheap", "region without barriers per empty kernel", 0, 0.5,
                         "x", 2, .predicted_text = "<= 0.5x async, <= 2 us"},
    [SYNC_SLOWEST_GPU] = {"sync_each_slowest", "synchronize after each launch vs async", 1,
                          INFINITY, "x", 2, .predicted_text = ">= 1x"},
    [SYNC_SLOWEST_CPU] = {"sync_each_slowest", "fork/join per kernel vs one region with barriers",
                          1, INFINITY, "x", 2, .predicted_text = ">= 1x"},
    [DOUBLING_SMALL] = {"doubling_small_batch", "doubling ratio at the smallest batch", 0, 1.1, "",
                        2, .predicted_text = "< 1.1"},
    [DOUBLING_LARGE] = {"doubling_large_batch", "doubling ratio at the largest batch", 1.6,
                        INFINITY, "", 2, .predicted_text = "> 1.6"},
    [GRAPH_SHRINKS] = {"graph_shrinks_overhead_region",
                       "first batch whose doubling costs > 10 %: graph vs launches", -INFINITY,
                       INFINITY, "", 0, .predicted_text = "graph <= launches"},
    {0},
};

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

/* ---- the axes --------------------------------------------------------------------- */

/* The chain test: k kernels in a chain, at n = 1 ("empty": 1 thread) and
 * 256 (one block). The verdicts read the longest empty chain. */
static const rl_axis CHAIN_N = RL_AXIS("n", RL_LIST(1, 256), RL_LIST(1, 256), RL_LIST(1, 256));
static const rl_axis K = RL_AXIS("k", RL_LIST(1, 10, 100, 1000), RL_LIST(1, 10, 100, 1000),
                                 RL_LIST(1, 3, 10, 30, 100, 300, 1000));

/* The size test: a chain of SIZE_TEST_K kernels on n = 1, 4, 16, ... up
 * to the largest n (lab: every 16th; quick: every 256th), the array all
 * chains share. */
enum { SIZE_TEST_K = 20 };

static double largest_n(const rl_ctx *ctx) { return ctx->kind == RL_CUDA ? 1 << 24 : 1 << 22; }

static const rl_axis SIZE_N = RL_AXIS("n", RL_TIMES(1, 256), RL_TIMES(1, 16), RL_TIMES(1, 4),
                                      .top = largest_n);

/* The doubling test's batches: doubling.c. */

static const double ATOL = 1e-6, RTOL = 1e-5;

/* ---- the chains' part: one array, every chain point ----------------------------- */

/* The chain's array on the device (made when the part opens), its
 * largest n, and the serial variant's cap on k x n. */
typedef struct chain_buffers {
    float *x;
    size_t nmax, serial_cap;
} chain_buffers;

static void open_chains(rl_ctx *ctx, void *state)
{
    chain_buffers *b = state;
    b->x = rl_alloc(ctx->be, b->nmax * sizeof(float));
}

/* Before validation: binds the chain to the array, builds what the
 * variant replays (timed), then writes fresh random input and its closed
 * form. The chain works in place, so its input cannot be poisoned; an
 * element a kernel skipped keeps its input value, which the reference
 * never equals. */
static void prepare_chain(rl_ctx *ctx, rl_point *p)
{
    exp06_call *c = RL_DATA_MUT(exp06_call, p);
    size_t n = (size_t)c->n;
    c->a.x = c->chain->x;
    p->out = c->chain->x;
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

/* Once timed, on the chain's own array: the host's cost per launch, the
 * time to issue the chain over its kernels (where its variant can issue
 * without waiting). */
static void chains_timed(rl_ctx *ctx, rl_points *pts, void *state)
{
    (void)state;
    for (int i = 0; i < pts->n; i++) {
        exp06_call *c = RL_DATA_MUT(exp06_call, &pts->v[i]);
        if (rl_point_timed(&pts->v[i]) && c->a.ops->enqueue)
            c->host_us = rl_issue_s(ctx, launch_issue, &c->a) * 1e6 / c->k;
    }
}

/* The floor's time per kernel in p's group. */
static double floor_us(rl_ctx *ctx, const rl_point *p)
{
    const rl_point *fl = rl_points_in_group(rl_points_all(ctx), p->group, "floor");
    return fl ? us_per_kernel(fl) : NAN;
}

/* A point of the size test within 25 % of the floor (key: the context). */
static bool near_the_floor(const rl_point *p, const void *ctx)
{
    return !strcmp(RL_DATA(exp06_call, p)->test, "size") &&
           us_per_kernel(p) <= 1.25 * floor_us((rl_ctx *)ctx, p);
}

/* The smallest n at which the asynchronous variant is within 25 % of the floor. */
static void print_overhead_stops(rl_ctx *ctx, const rl_points *pts)
{
    const rl_point *p = rl_points_find(pts, "asynchronous", near_the_floor, ctx);
    if (p)
        printf("\n  launch overhead stops mattering (async within 25 %% of the floor) at n = %.0f\n",
               RL_DATA(exp06_call, p)->n);
    else
        printf("\n  launch overhead stops mattering (async within 25 %% of the floor): not within "
               "the sizes measured\n");
}

/* After the chains' table: where the overhead stops mattering (the size
 * test); then the graphs and the array are freed. */
static void close_chains(rl_ctx *ctx, const rl_points *pts, void *state)
{
    chain_buffers *b = state;
    if (rl_option_is(test_choice, "size"))
        print_overhead_stops(ctx, pts);
    for (int i = 0; i < pts->n; i++) {
        exp06_call *c = RL_DATA_MUT(exp06_call, &pts->v[i]);
        if (c->a.ops->release)
            c->a.ops->release(&c->a);
    }
    rl_free(ctx->be, b->x);
}

/* ---- the points: every variant at one (k, n) ------------------------------------- */

/* Every variant at one (k, n), in the group of the combination; serial
 * only where k x n is small (one thread on millions of updates takes
 * minutes by design). needed: a verdict reads it (the others draw the
 * charts; a run under --budget measures them as time allows). */
static void chain_points(rl_ctx *ctx, chain_buffers *b, const char *test, int k, size_t n,
                         int group, bool needed)
{
    for (const launch_variant *v = launch_variants; v->name; v++) {
        if (!rl_runs(ctx, &launch_family, KERNEL_VARIANT(v)) ||
            (kernel_has_role(KERNEL_VARIANT(v), "serial") && (double)k * (double)n > (double)b->serial_cap))
            continue;
        exp06_call *c = exp06_new_call(ctx, test);
        c->k = k, c->n = (double)n, c->chain = b;
        c->a = (launch_args){.ops = RL_LAUNCHER(ctx, v), .n = n, .k = k,
                             .stream = rl_stream(ctx->be)};
        /* The plan's model: the bytes at the roofline, and a few
         * microseconds of fixed cost per launch (an estimate). */
        rl_point_add(ctx, &(rl_point){
            .variant = KERNEL_VARIANT(v), .group = group, .call = launch_kernel_call(&c->a),
            RL_POINT_DATA(c), .prepare = prepare_chain, .in_place = true, .count = n,
            .frees_want = true, .atol = ATOL, .rtol = RTOL, .bytes = 8.0 * k * (double)n,
            .footprint = 4.0 * n, .pattern = RL_COPY, .extra_s = 3e-6 * k, .optional = !needed});
    }
}

static void chain_test_points(rl_ctx *ctx, const rl_at *at, void *b)
{
    size_t n = rl_at_size(at, &CHAIN_N);
    chain_points(ctx, b, "chain", rl_at_int(at, &K), n, at->group, n == 1 && rl_at_last(at, &K));
}

static void size_test_points(rl_ctx *ctx, const rl_at *at, void *b)
{
    chain_points(ctx, b, "size", SIZE_TEST_K, rl_at_size(at, &SIZE_N), at->group, false);
}

/* Both tests are one part, on one array: a group a combination. */
static void declare_chains(rl_ctx *ctx, chain_buffers *b)
{
    static const rl_axis *const CHAIN_AXES[] = {&CHAIN_N, &K, NULL}, *const SIZE_AXES[] = {&SIZE_N, NULL};
    rl_part_add(ctx, &(rl_part){.open = open_chains, .measured = chains_timed,
                                .done = close_chains, .state = b});
    if (rl_option_is(test_choice, "chain"))
        rl_sweep_declare(ctx, &(rl_sweep){CHAIN_AXES, .group_axes = 2, .points = chain_test_points,
                                          .state = b});
    if (rl_option_is(test_choice, "size"))
        rl_sweep_declare(ctx, &(rl_sweep){SIZE_AXES, .group_axes = 1, .points = size_test_points,
                                          .state = b});
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

/* The load average when the run began: the verdicts say whether other
 * processes competed with it. */
static double load_start;

/* --width, checked before the ceilings are measured: a usage error exits
 * at once. */
static int step_d;

static void read_options(rl_ctx *ctx)
{
    step_d = (int)rl_option_number(ctx, "width", width_choice, WIDTH_MIN, WIDTH_MAX, true, NULL);
}

/* Two parts: every chain point on one array, then the doubling test. */
static void declare(rl_ctx *ctx)
{
    load_start = rl_load_average();
    chain_buffers *b = RL_NEW(ctx, chain_buffers);
    *b = (chain_buffers){.nmax = (size_t)largest_n(ctx),
                         .serial_cap = ctx->kind == RL_CUDA ? (size_t)1 << 20 : (size_t)1 << 26};
    describe(ctx, b, step_d, exp06_largest_batch(ctx));
    declare_chains(ctx, b);
    if (rl_option_is(test_choice, "doubling"))
        exp06_doubling_declare(ctx, step_d);
}

/* ---- the judgement ------------------------------------------------------------------ */

/* The chain of the empty kernel (n = 1) at any k (the last found: the longest). */
static bool empty_any_k(const rl_point *p, const void *unused)
{
    (void)unused;
    const exp06_call *c = RL_DATA(exp06_call, p);
    return !strcmp(c->test, "chain") && c->n == 1;
}

/* ... at k (key). */
static bool empty_at(const rl_point *p, const void *k)
{
    return empty_any_k(p, NULL) && RL_DATA(exp06_call, p)->k == *(const double *)k;
}

static const rl_point *empty_chain(const rl_points *pts, const char *role, double k)
{
    return rl_points_find(pts, role, empty_at, &k);
}

/* An empty chain that the synchronous and asynchronous variants ran too
 * (key: the points). */
static bool all_three_ran(const rl_point *p, const void *pts)
{
    double k = RL_DATA(exp06_call, p)->k;
    return empty_at(p, &k) && empty_chain(pts, "synchronous", k) &&
           empty_chain(pts, "asynchronous", k);
}

/* graph_replay_cheap's two bounds, each on a spread: the graph over the
 * asynchronous chain (GRAPH_RATIO) on their ratio's (rl_time_ratio), and
 * the graph's time per kernel (GRAPH_US) on its own q1-q3. "holds" only
 * where both spreads lie inside, "does not hold" where one lies wholly
 * outside; a spread across a bound (a rerun could turn it) is "not
 * measured", why says which. */
static const double GRAPH_RATIO = 0.5, GRAPH_US = 2;

static rl_verdict_status graph_cheap(rl_ratio ga, const rl_point *g, char *why, size_t len)
{
    double k = RL_DATA(exp06_call, g)->k;
    double r_lo = fmin(ga.lo, ga.hi), r_hi = fmax(ga.lo, ga.hi);
    double us_lo = g->m.stats.q1 * 1e6 / k, us_hi = g->m.stats.q3 * 1e6 / k;
    why[0] = '\0';
    if (isnan(ga.median))
        return RL_NOT_MEASURED;
    if (r_lo > GRAPH_RATIO || us_lo > GRAPH_US)
        return RL_DOES_NOT_HOLD;
    if (r_hi <= GRAPH_RATIO && us_hi <= GRAPH_US)
        return RL_HOLDS;
    if (r_hi > GRAPH_RATIO)
        snprintf(why, len, "the spread of the ratio, %.2fx to %.2fx (both times at opposite ends "
                 "of their q1-q3), straddles the claim's bound %.2fx: a rerun could turn the "
                 "verdict", r_lo, r_hi, GRAPH_RATIO);
    else
        snprintf(why, len, "the graph's q1-q3, %.3f to %.3f us per kernel, straddles the claim's "
                 "bound %.0f us: a rerun could turn the verdict", us_lo, us_hi, GRAPH_US);
    return RL_NOT_MEASURED;
}

static void judge_chain(rl_ctx *ctx, const rl_points *all)
{
    bool gpu = ctx->kind == RL_CUDA;
    const rl_claim *cheap = &CLAIMS[gpu ? GRAPH_CHEAP_GPU : GRAPH_CHEAP_CPU];
    const rl_claim *slowest = &CLAIMS[gpu ? SYNC_SLOWEST_GPU : SYNC_SLOWEST_CPU];
    /* The longest such chain: the last, as the sweep runs k upwards */
    const rl_point *g = rl_points_find_last(all, "graph", all_three_ran, all);
    if (!g) {
        const char *why = "the chain test did not run all three variants";
        rl_judge_status(ctx, cheap, NULL, "-", RL_NOT_MEASURED, why);
        rl_judge_status(ctx, slowest, NULL, "-", RL_NOT_MEASURED, why);
        return;
    }
    double k = RL_DATA(exp06_call, g)->k;
    const rl_point *s = empty_chain(all, "synchronous", k), *a = empty_chain(all, "asynchronous", k);
    double us_s = us_per_kernel(s), us_a = us_per_kernel(a), us_g = us_per_kernel(g);
    rl_ratio ga = rl_time_ratio(g, a);
    char measured[160], note[480];
    snprintf(measured, sizeof measured, "%.3f us vs %.3f us (%.2fx, %.2fx-%.2fx)", us_g, us_a,
             ga.median, fmin(ga.lo, ga.hi), fmax(ga.lo, ga.hi));
    if (gpu)
        snprintf(note, sizeof note, "k = %.0f, 1 thread, 1 element per kernel; graph built in %.0f "
                 "us, host issues a launch in %.2f us", k, RL_DATA(exp06_call, g)->build_us,
                 RL_DATA(exp06_call, a)->host_us);
    else
        snprintf(note, sizeof note, "k = %.0f; CPU: 'graph' is one parallel region whose threads "
                 "skip the barriers (element-wise chains need none); a CUDA graph keeps the order "
                 "between kernels", k);
    rl_premise pr = rl_premise_start();
    rl_premise_same_group(&pr, g, a, "the graph's and the asynchronous chain");
    char why[700];
    rl_verdict_status st = graph_cheap(ga, g, why, sizeof why);
    if (*why)
        rl_appendf(why, sizeof why, "; %s", note);
    rl_judge_status_given(ctx, cheap, NULL, measured, st, &pr, *why ? why : note);

    snprintf(note, sizeof note, "k = %.0f: %.3f us vs %.3f us per kernel; %s", k, us_s, us_a,
             gpu ? "each synchronize adds a host round trip to every kernel"
                 : "CPU: a join is the synchronize; the barrier is a join without the fork");
    pr = rl_premise_start();
    rl_premise_same_group(&pr, s, a, "the synchronous and the asynchronous chain");
    rl_judge_ratio_given(ctx, slowest, NULL, rl_time_ratio(s, a), &pr, note);
}

static void judge(rl_ctx *ctx, const rl_points *all)
{
    rl_note_host_load(ctx, load_start, "\n  note: ", "other processes competed for the CPUs, and a "
                      "region waits for its slowest thread");
    judge_chain(ctx, all);
    /* what one of the launched step's launches costs: a fork and join on
     * the CPU (its regions), an asynchronous launch on a GPU (its stream) */
    const char *role = ctx->kind == RL_CUDA ? "asynchronous" : "synchronous";
    const rl_point *chain = rl_points_find_last(all, role, empty_any_k, NULL);
    exp06_judge_doubling(ctx, all, &CLAIMS[DOUBLING_SMALL], &CLAIMS[DOUBLING_LARGE],
                         &CLAIMS[GRAPH_SHRINKS],
                         chain ? chain->seconds / RL_DATA(exp06_call, chain)->k : NAN,
                         ctx->kind == RL_CUDA ? "an asynchronous launch, the chain test's"
                                              : "a fork and join, the chain test's");
}

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

/* Each chain point against its group: the floor per kernel (floor_us),
 * and the replays that pay a build back against async. */
static double col_overhead(rl_ctx *ctx, const rl_point *p)
{
    return 1 - floor_us(ctx, p) / col_us_per_kernel(ctx, p);
}

static double col_overhead_pct(rl_ctx *ctx, const rl_point *p) { return 100 * col_overhead(ctx, p); }

static double col_breakeven(rl_ctx *ctx, const rl_point *p)
{
    const rl_point *async = rl_points_in_group(rl_points_all(ctx), p->group, "asynchronous");
    double saved = async ? (async->seconds - p->seconds) * 1e6 : NAN;
    double build_us = RL_DATA(exp06_call, p)->build_us;
    return isfinite(build_us) && saved > 0 ? build_us / saved : NAN;
}

/* The doubling test's ratio, and its spread (the chart's bars). */
static rl_ratio col_doubling_band(rl_ctx *ctx, const rl_point *p)
{
    return exp06_doubling_ratio(rl_points_all(ctx), p);
}

static const rl_column COLUMNS[] = {
    RL_TEXT("test", NULL, NULL, exp06_call, test),
    RL_COLUMN_VARIANT,
    RL_COLUMN_NUMBER,
    RL_DOUBLE("k", NULL, NULL, exp06_call, k),
    RL_WHOLE("n", NULL, NULL, exp06_call, n),
    RL_DOUBLE("batch", NULL, NULL, exp06_call, batch),
    RL_DOUBLE("d", NULL, NULL, exp06_call, d),
    {"cache_resident", NULL, NULL, .num = col_cache_resident},
    {0},
};

static const rl_column DERIVED[] = {
    {"us_per_kernel", NULL, NULL, .num = col_us_per_kernel},
    {"floor_us_per_kernel", NULL, NULL, .num = floor_us},
    {"overhead_fraction", NULL, NULL, .num = col_overhead},
    RL_DOUBLE("host_us_per_launch", NULL, NULL, exp06_call, host_us),
    RL_DOUBLE("graph_build_us", NULL, NULL, exp06_call, build_us),
    {"graph_breakeven_replays", NULL, NULL, .num = col_breakeven},
    RL_RATIO_COLUMNS("doubling_ratio", col_doubling_band),
    {0},
};

/* The chain tests' console table (the doubling test has its own). */
static const rl_column TABLE[] = {
    RL_TEXT(NULL, "test", "%-6s", exp06_call, test),
    {NULL, "variant", "%-11s", .str = rl_col_variant},
    RL_DOUBLE(NULL, "k", "%5.0f", exp06_call, k),
    RL_WHOLE(NULL, "n", "%9.0f", exp06_call, n),
    {NULL, "us/kernel", "%10.3f", .num = col_us_per_kernel, .measured = true},
    {NULL, "floor us", "%9.3f", .num = floor_us, .measured = true},
    {NULL, "overhead %", "%10.0f", .num = col_overhead_pct, .measured = true},
    RL_DOUBLE_MEASURED(NULL, "host us/launch", "%14.3f", exp06_call, host_us),
    RL_DOUBLE(NULL, "graph build us", "%14.0f", exp06_call, build_us),
    {NULL, "break-even replays", "%18.1f", .num = col_breakeven, .measured = true},
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
    .claims = CLAIMS,
    .families = FAMILIES,
    .columns = COLUMNS,
    .derived = DERIVED,
    .table = TABLE,
    .options = OPTIONS,
    .default_cache = RL_HOT,
    .compare_keys = "test,variant,k,n,batch",
    .compare_value = "time_us_median",
    .read_options = read_options,
    .declare = declare,
    .judge = judge,
};

int main(int argc, char **argv) { return rl_main(&EXP06, argc, argv); }
