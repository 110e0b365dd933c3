/*
 * exp08.h -- what experiment 08's files share: one point's data (a spilled
 * GEMV, or a MoE step), the sweeps, the claims.
 */
#ifndef EXP08_H
#define EXP08_H

#include "gemv.h"
#include "moe.h"
#include "rooflab.h"
#include "spill.h"

typedef enum point_kind { SPILL, MOE_TOP_K, MOE_BATCH } point_kind;

/* The MoE layer: Qwen3-30B-A3B's expert matrices as in ggml's MUL_MAT_ID
 * perf case, 128 experts of 768 x 2048 FP16 (3 MiB each, 384 MiB in all),
 * top-8 (a quick run: 32 experts, top-4). */
typedef struct moe_shape {
    int experts, rows, k, top_k;
} moe_shape;

/* One call: what a point is (its CSV columns) and what it runs. */
typedef struct exp08_call {
    point_kind kind;
    const char *part;     /* "spill", "moe_top_k", "moe_batch" */
    const char *routing;  /* "uniform", "skewed"; "" for spill */
    double f;             /* spill: the fraction of rows in the slow tier */
    int rows, k;          /* spill: the matrix; MoE: one expert */
    int experts, top_k, batch;
    double touched;       /* MoE: experts read per step, the mean over the routings; NaN for spill */
    double touched_model; /* E (1 - (1 - k / E)^B) */
    double launches;      /* MoE: launches (GPU) or parallel regions (CPU) per step, the
                           * routings' mean (moe_launches); NaN for spill */
    int validated;        /* output rows checked */
    spill_call spill;
    moe_call moe, moe_check; /* the timed call (its plan rotates) and the check's (the first plan) */
    void *state;          /* its part's buffers */
    struct moe_routes *routes; /* MoE: its routings and their plans */
    int next;             /* the routing the next call runs */
} exp08_call;

/* The sweeps, by the run's mode (main.c). */
typedef struct exp08_sweep {
    const double *fractions; /* ended by a negative */
    int spill_rows, spill_k;
    moe_shape moe;
    const int *top_ks, *batches; /* 0-ended */
    int routings;                /* routings a point rotates through */
} exp08_sweep;
exp08_sweep exp08_sweep_for(const rl_ctx *ctx);
/* Where the CPU's slow tier keeps its file (--spill-dir, or the first
 * folder on a disk of /var/tmp, $TMPDIR, /tmp); NULL when none is, and
 * exp08_spill_why says why (the spill part is then left out). */
const char *exp08_spill_dir(void);
const char *exp08_spill_why(void);

void exp08_declare_spill(rl_ctx *ctx, const exp08_sweep *s);
void exp08_declare_moe_top_k(rl_ctx *ctx, const exp08_sweep *s);
void exp08_declare_moe_batch(rl_ctx *ctx, const exp08_sweep *s);
/* --moe-shape: one shape, one routing and one layer repeated (ggml's
 * perf case's way), for the peer table. */
void exp08_declare_moe_shape(rl_ctx *ctx, const moe_shape *shape, int batch);

/* The timed point of a kind, role and shape (f for spill; top_k, batch and
 * routing for MoE), or NULL. */
const rl_point *exp08_find(const rl_points *all, point_kind kind, const char *role, double f,
                           int top_k, int batch, const char *routing);

/* Spill: t0's rate (the all-fast GEMV: the faster f = 0 point), the slow
 * tier's ratio r at a fraction (t0's rate over the slow tier's, read at
 * that fraction's size: by the copy, the sequential variant's path; or
 * by the overlapped variant's own path), and a GEMV point's t / t0. */
double exp08_spill_t0_gbps(const rl_points *all);
double exp08_spill_r(const rl_points *all, double f);
double exp08_spill_r_overlapped(const rl_points *all, double f);
/* The r of a spill point's own path: the overlapped variant's for it and
 * its tier read, the copy's for the others. */
double exp08_spill_r_of(const rl_points *all, const rl_point *p);
double exp08_t_over_t0(const rl_points *all, const rl_point *p);
/* MoE over the batch: a point's time over its routing's time at B = 1. */
double exp08_t_over_t1(const rl_points *all, const rl_point *p);

extern const rl_claim EXP08_CLAIMS[];
void exp08_judge(rl_ctx *ctx, const rl_points *all);

#endif
