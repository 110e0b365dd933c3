/*
 * exp06.h -- what experiment 06's files share: one point's data, and the
 * chain tests (main.c), the doubling test (doubling.c) and the verdicts
 * (verdicts.c).
 */
#ifndef EXP06_H
#define EXP06_H

#include "launch.h"
#include "rl_probes.h"
#include "rooflab.h"

struct weights;

/* One point (a chain of k kernels over n elements, or the model step at
 * one batch): what its CSV columns read, and how it runs. */
typedef struct call {
    const char *test;         /* "chain" (k sweep), "size" (n sweep), "doubling" */
    double k, n, batch, d;    /* NaN where the test has none: an empty cell */
    /* filled after timing (NaN where unknown) */
    double floor_us;          /* per kernel: the floor variant's at the same point */
    double host_us;           /* the host's time to issue one kernel */
    double build_us;          /* building what the variant replays (a graph) */
    double breakeven;         /* replays that pay the build back, against async */
    rl_ratio ratio;           /* doubling: t(2 batch) / t(batch), and its spread */
    launch_args a;            /* a chain's point: its variant and arguments (the timed arg) */
    step_args s;              /* a step's point: the same, and its buffers */
    struct weights *w;
} call;

static inline call *call_of(const rl_point *p) { return (call *)p->data; }
static inline double us_per_kernel(const rl_point *p) { return p->seconds * 1e6 / call_of(p)->k; }
/* A fresh point's data, every number NaN (an empty cell) until set. */
call *new_call(const char *test);
/* Releases what each point built and frees its data. */
void release_points(rl_points *pts);

/* doubling.c: the step at batch 1 .. bmax for every step variant; its
 * inputs, freed by doubling_close (NULL: nothing to free). */
struct weights *doubling_declare(rl_ctx *ctx, rl_points *pts, int d, int bmax);
/* Measures, writes and prints the points, and the knee of each variant. */
void doubling_run(rl_ctx *ctx, rl_points *pts);
void doubling_close(rl_ctx *ctx, struct weights *w);
/* The smallest batch whose doubling ratio exceeds 1.1, or 0. */
int doubling_knee(const rl_points *pts, const kernel_variant *v);

/* verdicts.c */
extern const rl_claim EXP06_CLAIMS[];
void judge_chain(rl_ctx *ctx, const rl_points *pts);
void judge_doubling(rl_ctx *ctx, const rl_points *pts);

#endif
