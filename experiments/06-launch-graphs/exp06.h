/*
 * exp06.h -- what experiment 06's files share: the chain tests (main.c),
 * the doubling test (doubling.c) and the verdicts (verdicts.c).
 */
#ifndef EXP06_H
#define EXP06_H

#include "launch.h"
#include "rooflab.h"

enum { MAX_WAYS = 8 };

/* One way of running one chain (k kernels over n elements). */
typedef struct chain_point {
    const char *test;        /* "chain" (k sweep) or "size" (n sweep) */
    const launch_way *way;
    launch_args a;
    int k;
    size_t n;
    bool ok;
    double max_abs_err;
    char why[256];
    rl_measurement m;
    double us_per_kernel, floor_us_per_kernel;
    double host_us_per_launch, graph_build_us, breakeven;
} chain_point;

/* One way of running the model step at one batch. */
typedef struct step_point {
    const step_way *way;
    int batch, d;
    bool ok;
    double max_abs_err, build_us, ratio; /* ratio: t(2 batch) / t(batch) */
    char why[256];
    rl_measurement m;
} step_point;

typedef struct doubling {
    step_point *pts;
    int n;
} doubling;

/* doubling.c: the step at batch 1 .. bmax for every step way, printed;
 * doubling_rows() writes them to the CSV. */
doubling doubling_test(rl_ctx *ctx, const step_way *table, int d, int bmax);
void doubling_rows(rl_ctx *ctx, const doubling *dt);
void doubling_free(doubling *dt);
/* The smallest batch whose doubling ratio exceeds 1.1, or 0. */
void plan_doubling(rl_ctx *ctx, const step_way *table, int d, int bmax);
int doubling_knee(const doubling *dt, const char *way);

/* verdicts.c */
void judge_chain(rl_ctx *ctx, const chain_point *pts, int n);
void judge_doubling(rl_ctx *ctx, const doubling *dt);

#endif
