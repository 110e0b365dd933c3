/*
 * matrix.c -- exp-03 --matrix ROWSxK: the decode of one matrix (n = 1, all
 * threads, the run's --cache, hot by default) in every format and with
 * every decode variant, for a side-by-side with ggml's CPU mat-vec:
 *
 *   build/exp-03 --matrix 4096x14336 --cache hot
 *   test-backend-ops perf -o MUL_MAT -b CPU    (m = 4096, k = 14336, n = 1)
 *
 * A model of one matrix, its points declared as the model run's (the
 * integer-dot ones validated within their stated bound), all timed
 * together, interleaved. It prints ms per call, GB/s of weights, the
 * speedup over the same run's F16 GEMV, and the fraction of the measured
 * triad and read bandwidths. It writes no results: the model run's CSV is
 * left alone.
 */
#include "exp03.h"
#include "cpu/quant_dot.h"
#include "cpu/simd.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static void parse_matrix(const char *spec, int *rows, int *k)
{
    char tail;
    if (sscanf(spec, "%dx%d%c", rows, k, &tail) != 2 || *rows < 1 || *k < QUANT_BLOCK ||
        *k % QUANT_BLOCK != 0 || (double)*rows * *k > 4e9)
        rl_die(RL_EXIT_USAGE, "exp-03: --matrix wants ROWSxK with K a multiple of %d (e.g. "
               "4096x14336), not '%s'", QUANT_BLOCK, spec);
}

/* ---- the read bandwidth: what a decode could reach ------------------------------ */

typedef struct reader { const float *p; size_t n; double sum; } reader;

/* Four independent vector sums per thread over its contiguous share, the
 * input asked for 4 KiB ahead as the decode kernels do: the loads, not the
 * adds' latency, set the pace (a plain float reduction would not even
 * vectorize without reassociation). */
static void read_all(void *arg)
{
    reader *r = arg;
    size_t blocks = r->n / 32;
    double total = 0;
#pragma omp parallel for schedule(static) reduction(+ : total)
    for (size_t b = 0; b < blocks; b++) {
        const float *p = r->p + 32 * b;
        __builtin_prefetch(p + 1024);
        __builtin_prefetch(p + 1024 + 16);
        v8f s = (v8f_load(p) + v8f_load(p + 8)) + (v8f_load(p + 16) + v8f_load(p + 24));
        total += v8f_sum(s);
    }
    r->sum += total;
}

/* GB/s of a parallel read over 4x the LLC, hot: a read-only stream, as a
 * decode's weights are (the triad also writes, and counts 24 bytes). */
static double read_gbps(rl_ctx *ctx)
{
    size_t n = (size_t)(4 * ctx->dev->llc_bytes / sizeof(float));
    float *p = rl_alloc(ctx->be, n * sizeof(float));
    rl_fill_uniform(p, n, 0, 1, rl_next_seed(ctx));
    reader r = {p, n, 0};
    rl_measurement m = rl_measure_as(ctx, "ceiling: read", read_all, &r, RL_HOT);
    rl_free(ctx->be, p);
    return (double)n * sizeof(float) / m.stats.median / 1e9;
}

/* ---- the table -------------------------------------------------------------------- */

static double read_bw; /* GB/s, measured before the table is printed */

static double col_bits(rl_ctx *ctx, const rl_point *p) { (void)ctx; return step_of(p)->bits; }
static double col_ms(rl_ctx *ctx, const rl_point *p) { (void)ctx; return p->seconds * 1e3; }
static double col_triad(rl_ctx *ctx, const rl_point *p) { return rl_point_gbps(p) / rl_ceilings_get(ctx)->copy_gbps; }
static double col_read(rl_ctx *ctx, const rl_point *p) { (void)ctx; return rl_point_gbps(p) / read_bw; }
static double col_err(rl_ctx *ctx, const rl_point *p) { (void)ctx; return p->max_abs_err; }

static const rl_column MATRIX_TABLE[] = {
    RL_TEXT(NULL, "format", "%-6s", step, format),
    {NULL, "bits/w", "%7.4g", .num = col_bits},
    {NULL, "variant", "%-13s", .str = rl_col_variant},
    {NULL, "ms/call", "%9.3f", .num = col_ms, .measured = true},
    RL_COLUMN_GBPS,
    {NULL, "x F16", "%8.2f", .num = col_rel_tokens_per_s, .measured = true},
    {NULL, "/triad", "%7.2f", .num = col_triad, .measured = true},
    {NULL, "/read", "%7.2f", .num = col_read, .measured = true},
    {NULL, "max |err| (bound: int8)", "%9.2g", .num = col_err},
    {0},
};

int run_matrix(rl_ctx *ctx, const char *spec)
{
    int rows, k;
    parse_matrix(spec, &rows, &k);
    printf("\nmatrix      %d x %d, n = 1, %s, %d threads, integer dot products: %s\n", rows, k,
           ctx->args.cache == RL_HOT ? "hot" : "cold", omp_get_max_threads(),
           quant_isa_name(quant_isa_best()));
    fflush(stdout);
    model m;
    model_plan_matrix(&m, rows, k);
    model_build(ctx, &m);
    rl_progress_clear();
    rl_points pts = {0};
    step *steps = calloc((size_t)rl_family_size(&quant_family) * QF_COUNT, sizeof *steps);
    declare_points(ctx, &pts, &m, steps, true);
    rl_points_measure(ctx, &pts);
    read_bw = read_gbps(ctx);
    printf("read        %.1f GB/s (a parallel sum over %.0f MiB, hot)\n", read_bw,
           4 * ctx->dev->llc_bytes / 1048576);
    rl_points_report_as(ctx, &pts, MATRIX_TABLE); /* the rows go to a CSV that is discarded */
    double f16_bytes = model_bytes(&m, QF_F16);
    printf("\n  weights: %.0f MiB in F16, %.0f MiB in q4; the last-level cache holds %.0f MiB%s\n",
           f16_bytes / 1048576, model_bytes(&m, QF_Q4) / 1048576, ctx->dev->llc_bytes / 1048576,
           model_bytes(&m, QF_Q2) < 4 * ctx->dev->llc_bytes ? " (some formats run from cache)" : "");
    rl_points_free(&pts);
    free(steps);
    model_free(ctx, &m);
    return rl_end_discard(ctx);
}
