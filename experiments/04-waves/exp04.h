/*
 * exp04.h -- what the files of experiment 04 share: the run, the shapes
 * of NVIDIA's example and of GPT-2's output layer, and the parts.
 */
#ifndef EXP04_H
#define EXP04_H

#include "points.h"

/* One step of N past the end of a wave, as NVIDIA's 1536 -> 1544. */
enum { WAVE_STEP = 8 };
/* NVIDIA's example: M = 2304, K = 4096, 256 x 128 tiles, one block per SM. */
enum { EX_M = 2304, EX_K = 4096, EX_TILE_M = 256, EX_TILE_N = 128 };
/* GPT-2 small's output layer: hidden 768, vocabulary 50257, padded 50304. */
enum { HIDDEN = 768, V_GPT2 = 50257, V_PADDED = 50304, V_LO = 50240, V_HI = 50368 };

typedef struct run {
    rl_ctx *ctx;
    const gemm_variant *table;
    const rl_ceilings *ceil;
    const char *part; /* --part */
    int units;        /* SMs, or threads on the CPU */
} run;

/* The selected variant with this number, or NULL. */
const gemm_variant *variant_number(const run *r, int number);
bool part_selected(const run *r, const char *part);

/* A sweep of N at fixed M and K, B stored n x k (a linear layer's weight),
 * so that B for a smaller N is the start of B for the largest. */
typedef struct wave_sweep {
    const char *part;
    const gemm_variant *v; /* NULL: the part does not run */
    int m, k, n_lo, n_hi, step;
    int tile_m, tile_n, units, blocks_per_unit; /* the wave model */
} wave_sweep;

/* The vocab part: tokens x hidden times the vocabulary's weight. */
typedef struct vocab_plan {
    bool on;
    int tokens;
    int sizes[64], count; /* vocabulary sizes of the forward sweep */
} vocab_plan;

/* sweeps.c: the staircase and the library's sawtooth */
wave_sweep plan_staircase(run *r);
wave_sweep plan_library(run *r);
void run_staircase(run *r, const wave_sweep *w);
void run_library(run *r, const wave_sweep *w);
void plan_sweep(rl_ctx *ctx, const wave_sweep *w); /* its groups, for the run's plan */

/* vocab.c */
vocab_plan plan_vocab(run *r);
void run_vocab(run *r, const vocab_plan *plan);
void plan_vocab_time(rl_ctx *ctx, const vocab_plan *p, int variants);

/* model.c: rows and a verdict for 108 and 132 SMs, whatever the device */
void model_rows(rl_ctx *ctx);
void judge_model(rl_ctx *ctx);

#endif
