/*
 * exp06.h -- what experiment 06's files share: one point's data. main.c
 * declares the chain tests and judges every claim; it calls one chapter,
 * doubling.c (the doubling test: its axis, part and ratios).
 */
#ifndef EXP06_H
#define EXP06_H

#include "launch.h"
#include "probes/rl_probes.h"
#include "rooflab.h"

#include <math.h>

struct chain_buffers;
struct weights;

/* One point (a chain of k kernels over n elements, or the model step at
 * one batch): what its CSV columns read, and the call it times. */
typedef struct exp06_call {
    const char *test;         /* "chain" (k sweep), "size" (n sweep), "doubling" */
    double k, n, batch, d;    /* NaN where the test has none: an empty cell */
    double build_us;          /* building what the variant replays (a graph); NaN: nothing */
    double host_us;           /* the host's time to issue one kernel, after timing; NaN: unknown */
    launch_args a;            /* a chain's call: its variant's ops; its buffer, */
    step_args s;              /* or a step's: bound when the point is prepared */
    struct chain_buffers *chain; /* the part it runs in: the chains' buffer, */
    struct weights *w;           /* or the step's inputs */
} exp06_call;

static inline double us_per_kernel(const rl_point *p)
{
    return p->seconds * 1e6 / RL_DATA(exp06_call, p)->k;
}

/* A fresh point's data, every number NaN (an empty cell) until set; it
 * lives until the run ends. */
static inline exp06_call *exp06_new_call(rl_ctx *ctx, const char *test)
{
    exp06_call *c = RL_NEW(ctx, exp06_call);
    *c = (exp06_call){.test = test, .k = NAN, .n = NAN, .batch = NAN, .d = NAN, .build_us = NAN,
                      .host_us = NAN};
    return c;
}

/* doubling.c: the largest batch the doubling test reaches; its part, the
 * step of width d at every batch for every step variant, its table and
 * the knee of each variant after it. */
int exp06_largest_batch(const rl_ctx *ctx);
void exp06_doubling_declare(rl_ctx *ctx, int d);
/* t(2 batch) / t(batch) on the row of batch, where 2 batch was timed too,
 * with its spread (RL_RATIO_NONE elsewhere); all: every point. */
rl_ratio exp06_doubling_ratio(const rl_points *all, const rl_point *p);
/* The smallest batch whose doubling ratio exceeds 1.1, or 0. */
int exp06_doubling_knee(const rl_points *all, const kernel_variant *v);
/* The doubling verdicts: the smallest batch's ratio, the largest's, and
 * whether the graph's knee comes no later than the launches'; launch_s:
 * one launch's fixed cost as the chain test measured it (NaN: not run),
 * launch_what says how. */
void exp06_judge_doubling(rl_ctx *ctx, const rl_points *all, const rl_claim *small,
                          const rl_claim *large, const rl_claim *shrinks, double launch_s,
                          const char *launch_what);

#endif
