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

/* The claims (main.c), one per verdict; the own kernel's has a text per
 * backend. */
enum { CLAIM_MODEL, CLAIM_STEP_GPU, CLAIM_STEP_CPU, CLAIM_LIBRARY, CLAIM_VOCAB };
extern const rl_claim EXP04_CLAIMS[];

/* ---- one GEMM call as a point (calls.c) ------------------------------------ */

/* One input matrix: the same numbers on the host (for the reference) and
 * on the device (FP32, and FP16 once a variant asks for it). */
typedef struct operand {
    float *host, *dev;
    void *dev16;
    size_t count;
} operand;

/* The wave model's columns of a point; NaN where a library picks its own
 * tiles. */
typedef struct wave_columns {
    double tile_m, tile_n, tiles, units, blocks_per_unit, waves, efficiency, end;
} wave_columns;

/* A point's data: one call of one variant, and its CSV columns. */
typedef struct call {
    const char *part;  /* "staircase", "library", "vocab" */
    const char *gemm;  /* "nt" (C = A B^T), "forward", "backward_data", "backward_weight" */
    gemm_args g;       /* shape and layout; the pointers are bound at validation */
    double vocab;      /* the vocabulary size; NaN outside the vocab part */
    wave_columns w;
    double model_us;   /* staircase: the wave model's time, once the sweep is timed */
    double speedup;    /* vocab: the same GEMM's time at V = 50257 over this one */
    const gemm_impl *impl;
    operand *a, *b;    /* g.a and g.b read the start of these */
    /* The reference: columns 0..n-1 of a wider product (ld ref_ld), or
     * NULL: computed for this call alone. */
    const double *ref;
    size_t ref_ld;
} call;

static inline const call *call_of(const rl_point *p) { return p->data; }

int units_of(const rl_ctx *ctx); /* SMs, or threads on the CPU */
/* The first selected variant of this backend with this role, or NULL. */
const gemm_variant *gemm_by_role(const rl_ctx *ctx, const char *role);
const gemm_impl *impl_of(const rl_ctx *ctx, const gemm_variant *v);

/* Fresh random values in [-1, 1], rounded to FP16 so that FP16 and FP32
 * variants multiply exactly the same numbers. */
operand operand_new(rl_ctx *ctx, size_t count);
void operand_free(rl_ctx *ctx, operand *op);

/* The tiles and waves of an m x n output cut into tile_m x tile_n tiles
 * on units x per_unit slots (end: 0, set by the sweep). */
wave_columns waves_of(int m, int n, int tile_m, int tile_n, int units, int per_unit);
/* Adds a point for a copy of c (variant v, in group; 0: alone). */
rl_point *call_add(rl_ctx *ctx, rl_points *pts, const call *c, const gemm_variant *v, int group);
/* Validates every point against its reference, then times the groups. */
void calls_measure(rl_ctx *ctx, rl_points *pts);
void calls_free(rl_points *pts);
/* The timed point of this variant, gemm and vocabulary size, or NULL. */
const rl_point *calls_find(const rl_points *pts, const gemm_variant *v, const char *gemm,
                           int vocab);

/* The columns every part's console table starts with, and its last: a
 * mark on the last N of a wave. */
const char *col_wave_end(rl_ctx *ctx, const rl_point *p, char *buf, size_t len);
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
#define CALL_TABLE_WAVE_END {NULL, "", "%s", .str = col_wave_end}

/* A sweep of N at fixed M and K, B stored n x k (a linear layer's
 * weight), so that B for a smaller N is the start of B for the largest:
 * N = n_lo, n_lo + step, ..., n_hi, and one step of WAVE_STEP past the
 * end of each wave, timed with it. */
typedef struct wave_sweep {
    const char *part;
    const gemm_variant *v; /* NULL: the part does not run */
    int m, k, n_lo, n_hi, step;
    int tile_m, tile_n, units, blocks_per_unit; /* the wave model */
} wave_sweep;

void sweep_plan(rl_ctx *ctx, const wave_sweep *w);
/* Inputs, the reference, the points, validated and timed. */
void sweep_measure(rl_ctx *ctx, const wave_sweep *w, rl_points *pts);
/* The first wave end whose next point is one step on: its index, or -1. */
int sweep_first_wave_end(const rl_points *pts);

/* ---- the parts, in the order main.c runs them ------------------------------- */

void model_run(rl_ctx *ctx);     /* model.c: waves on 108 and 132 SMs, a model */
void staircase_plan(rl_ctx *ctx); /* staircase.c: the own kernel vs N on this device */
void staircase_run(rl_ctx *ctx);
void library_plan(rl_ctx *ctx);   /* library.c: cuBLAS's sawtooth, GPU only */
void library_run(rl_ctx *ctx);
void vocab_plan(rl_ctx *ctx);     /* vocab.c: GPT-2's output layer */
void vocab_run(rl_ctx *ctx);

#endif
