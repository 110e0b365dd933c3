/*
 * exp04.h -- what the files of experiment 04 share: the shapes of
 * NVIDIA's example and of GPT-2's output layer, the claims, one GEMM call
 * as a point (calls.c), and the parts, in the order main.c runs them.
 */
#ifndef EXP04_H
#define EXP04_H

#include "gemm.h"
#include "rooflab.h"

/* One step of N past the end of a wave, as NVIDIA's 1536 -> 1544. */
enum { WAVE_STEP = 8 };
/* NVIDIA's example: M = 2304, K = 4096, 256 x 128 tiles, one block per SM. */
enum { EX_M = 2304, EX_K = 4096, EX_TILE_M = 256, EX_TILE_N = 128 };
/* GPT-2 small's output layer: hidden 768, vocabulary 50257, padded 50304. */
enum { HIDDEN = 768, V_GPT2 = 50257, V_PADDED = 50304, V_LO = 50240, V_HI = 50368 };

/* The claims (main.c), one per verdict; the own kernel's has a text per backend. */
enum { CLAIM_MODEL, CLAIM_STEP_GPU, CLAIM_STEP_CPU, CLAIM_LIBRARY, CLAIM_VOCAB };
extern const rl_claim EXP04_CLAIMS[];

/* ---- one GEMM call as a point (calls.c) ------------------------------------ */

/* A point's data: one call of one variant, and its CSV columns. */
typedef struct call {
    const char *part;  /* "staircase", "library", "vocab", "model" */
    const char *gemm;  /* "nt" (C = A B^T), "forward", "backward_data", "backward_weight" */
    gemm_args g;       /* shape and layout; the pointers are bound at validation */
    double vocab;      /* the vocabulary size; NaN outside the vocab part */
    rl_wave_model w;   /* NaN where a library picks its own tiles */
    double wave_end;   /* 1 on the last N of a wave, followed by the next one's first */
    const char *mark;  /* its mark on the console */
    double model_us;   /* staircase: the wave model's time, once the sweep is timed */
    rl_ratio speedup;  /* vocab: the same GEMM's time at V = 50257 over this one, and its spread */
    const gemm_impl *impl;
    rl_input *a, *b;   /* FP16-exact inputs: g.a and g.b read the start of these */
    gemm_wide *wide;   /* NULL: the reference is computed for this call alone */
} call;

static inline const call *call_of(const rl_point *p) { return p->data; }

/* The first selected variant of this backend with this role, or NULL. */
static inline const gemm_variant *gemm_by_role(const rl_ctx *ctx, const char *role)
{
    return (const gemm_variant *)rl_variant_by_role(ctx, &gemm_family, role);
}

/* Adds a point for a copy of c (variant v, in group; 0: alone). */
void call_add(rl_ctx *ctx, rl_points *pts, const call *c, const gemm_variant *v, int group);
/* With plan, plans the points, frees them and returns true: the part is done. */
bool calls_planned(rl_ctx *ctx, rl_points *pts, bool plan);
/* Validates (drawing the inputs) and times the points; calls_free frees both. */
void calls_measure(rl_ctx *ctx, rl_points *pts);
void calls_free(rl_ctx *ctx, rl_points *pts);

/* The columns every part's console table starts with. */
#define CALL_TABLE_HEAD                                                   \
    {NULL, "variant", "%-7s", .str = rl_col_variant},                     \
    RL_TEXT(NULL, "gemm", "%-15s", call, gemm),                           \
    RL_INT(NULL, "m", "%6d", call, g.m),                                  \
    RL_INT(NULL, "n", "%6d", call, g.n),                                  \
    RL_INT(NULL, "k", "%6d", call, g.k),                                  \
    RL_DOUBLE(NULL, "tiles", "%6.0f", call, w.tiles),                     \
    RL_DOUBLE(NULL, "waves", "%5.0f", call, w.waves),                     \
    RL_COLUMN_TIME_US,                                                    \
    RL_COLUMN_TFLOPS

/* A sweep of N = n_lo, n_lo + step, ..., n_hi at fixed M and K, and one
 * step of WAVE_STEP past the end of each wave, timed with it. */
typedef struct wave_sweep {
    const char *part;
    const gemm_variant *v; /* NULL: the part does not run */
    rl_tiling t;           /* M and the wave model */
    int k, n_lo, n_hi, step;
    rl_input a, b;         /* A (M x k), B (n_hi x k) */
    gemm_wide ref;
    int first_end; /* the point of the first wave end (the next is one step on), or -1 */
} wave_sweep;

void sweep_declare(rl_ctx *ctx, rl_points *pts, wave_sweep *w);

/* ---- the parts, in the order main.c runs them -------------------------------
 * plan: only declare the points, for the plan; else run and judge. */

void model_part(rl_ctx *ctx);                /* model.c: waves on 108 and 132 SMs, a model */
void staircase_part(rl_ctx *ctx, bool plan); /* staircase.c: the own kernel vs N here */
void library_part(rl_ctx *ctx, bool plan);   /* library.c: cuBLAS's sawtooth, GPU only */
void vocab_part(rl_ctx *ctx, bool plan);     /* vocab.c: GPT-2's output layer */

#endif
