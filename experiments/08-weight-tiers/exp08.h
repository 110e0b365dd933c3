/*
 * exp08.h -- what main.c asks of experiment 08's two chapters: one point's
 * data (a spilled GEMV, or a MoE step), the spill part (tiers.c) and the
 * MoE parts (experts.c), and the lookups the verdicts and columns read.
 * main.c declares the axes and judges; the chapters never call it back.
 */
#ifndef EXP08_H
#define EXP08_H

#include "gemv.h"
#include "moe.h"
#include "rooflab.h"
#include "spill.h"

typedef enum point_kind { SPILL, MOE_TOP_K, MOE_BATCH } point_kind;

/* One MoE layer: E experts of rows x k FP16, top-k of them per token. */
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

/* ---- the spill chapter (tiers.c) --------------------------------------------- */

/* --spill-dir's value ("": choose), and the choice: where the CPU's slow
 * tier keeps its file, the option's folder or the first folder on a disk
 * of /var/tmp, $TMPDIR, /tmp; NULL when none is, and exp08_spill_why says
 * why (the spill part is then left out). */
extern const char *exp08_spill_dir_option;
void exp08_spill_choose_dir(void);
const char *exp08_spill_dir(void);
const char *exp08_spill_why(void);

/* The spill verdicts at fraction f: sequential t/t0 over its model, and
 * the overlapped one between its model and the sequential one's. */
void exp08_judge_spill(rl_ctx *ctx, const rl_points *all, const rl_claim *seq_claim,
                       const rl_claim *ovl_claim, double f);
/* The spill part of a rows x k matrix, fills part; most_f: the largest f. */
struct spill_part *exp08_spill_part(rl_ctx *ctx, rl_part *part, int rows, int k, double most_f);
/* Each spill variant's point at fraction f, in group. */
void exp08_spill_points(rl_ctx *ctx, struct spill_part *S, double f, int group, bool optional);

/* The timed spill point of a role at f, or NULL. */
const rl_point *exp08_spill_find(const rl_points *all, const char *role, double f);
/* t0, a GEMV variant's (role) own all-fast point, at f = 0, and its rate;
 * the slow tier's ratio r at a fraction (the variant's t0 rate over its
 * path's read of that fraction's rows: the copy, for the sequential
 * variant; the overlapped variant's own path); and a GEMV point's t / t0
 * over its own variant's t0, with its spread (rl_time_ratio). */
const rl_point *exp08_spill_t0(const rl_points *all, const char *role);
double exp08_spill_t0_gbps(const rl_points *all, const char *role);
double exp08_spill_r(const rl_points *all, double f);
double exp08_spill_r_overlapped(const rl_points *all, double f);
rl_ratio exp08_t_over_t0_ratio(const rl_points *all, const rl_point *p);
double exp08_t_over_t0(const rl_points *all, const rl_point *p);
/* Columns: the r of a spill point's own path (the overlapped variant's
 * for it and its tier read, the copy's for the others), and the models. */
double exp08_col_r(rl_ctx *ctx, const rl_point *p);
double exp08_col_model_sequential(rl_ctx *ctx, const rl_point *p);
double exp08_col_model_overlapped(rl_ctx *ctx, const rl_point *p);

/* ---- the MoE chapter (experts.c) --------------------------------------------- */

/* A MoE part of one layer's shape, fills part; its points rotate through
 * `routings` seeded routings, over copies of the layer (one_layer: one). */
struct moe_part *exp08_moe_part(rl_ctx *ctx, rl_part *part, const moe_shape *shape, int routings,
                                const char *heading, bool one_layer);
/* A point of the first variant with this role (none: no point). */
void exp08_moe_point(rl_ctx *ctx, struct moe_part *M, point_kind kind, int group, const char *role,
                     int top_k, int batch, moe_routing how, bool optional);
/* The fixed cost of one launch, beside the batch-1 steps. */
void exp08_moe_empty_point(rl_ctx *ctx, struct moe_part *M, int group);
/* --moe-shape E,K,B[,M,N] (exp08_moe_shape_option; "": the sweeps),
 * read when the options are: one shape, one routing and one layer
 * repeated (ggml's perf case's way), for the peer table, instead of the
 * sweeps. */
extern const char *exp08_moe_shape_option;
void exp08_moe_shape_read(void);
bool exp08_moe_shape_chosen(void);
void exp08_declare_moe_shape(rl_ctx *ctx);

/* The timed MoE point of a kind, role, top-k, batch and routing, or NULL;
 * and the first declared one of a batch with this routing, timed or not
 * (its routings are counted when it is declared). */
const rl_point *exp08_moe_find(const rl_points *all, point_kind kind, const char *role, int top_k,
                               int batch, const char *routing);
const exp08_call *exp08_moe_declared(const rl_points *all, int batch, const char *routing);
/* Columns: a MoE point's time over its routing's time at B = 1, and the
 * model of that ratio, touched(B) / touched(1). */
double exp08_col_t_over_t1(rl_ctx *ctx, const rl_point *p);
double exp08_col_touched_ratio(rl_ctx *ctx, const rl_point *p);

/* ---- the columns (columns.c) ------------------------------------------------- */

extern const rl_column EXP08_COLUMNS[], EXP08_DERIVED[], EXP08_TABLE[];

#endif
