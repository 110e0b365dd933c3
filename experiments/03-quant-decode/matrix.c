/*
 * matrix.c -- exp-03 --matrix ROWSxK: the decode of one matrix (n = 1, all
 * threads, the run's --cache) in every format with every decode variant,
 * for a side-by-side with ggml's CPU mat-vec (test-backend-ops perf -o
 * MUL_MAT; README.md): a model of one matrix, its points declared and
 * validated as the model run's, all timed together. It writes no results.
 */
#include "exp03.h"
#include "cpu/quant_dot.h"

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

static const rl_column MATRIX_TABLE[] = {
    RL_TEXT(NULL, "format", "%-6s", step, format),
    RL_DOUBLE(NULL, "bits/w", "%7.4g", step, bits),
    {NULL, "variant", "%-13s", .str = rl_col_variant},
    {NULL, "ms/call", "%9.3f", .num = rl_col_time_ms, .measured = true},
    RL_COLUMN_GBPS,
    {NULL, "x F16", "%8.2f", .num = col_rel_tokens_per_s, .measured = true},
    {NULL, "/triad", "%7.2f", .num = rl_col_vs_copy, .measured = true},
    {NULL, "/read", "%7.2f", .num = rl_col_vs_dram_read, .measured = true},
    {NULL, "max |err| (bound: int8)", "%9.2g", .num = rl_col_max_abs_err},
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
    rl_points_report_as(ctx, &pts, MATRIX_TABLE); /* the rows go to a CSV that is discarded */
    printf("\n  weights: %.0f MiB in F16, %.0f MiB in q4; the last-level cache holds %.0f MiB%s\n",
           model_bytes(&m, QF_F16) / 1048576, model_bytes(&m, QF_Q4) / 1048576, ctx->dev->llc_bytes / 1048576,
           rl_beyond_cache(ctx, model_bytes(&m, QF_Q2)) ? "" : " (some formats run from cache)");
    rl_points_free(&pts);
    free(steps);
    model_free(ctx, &m);
    return rl_end_discard(ctx);
}
