/*
 * exp04.h -- what main.c asks of experiment 04's chapters: the shapes of
 * NVIDIA's example and of GPT-2's output layer, one GEMM call as a point
 * (calls.c), the sweep of N across waves that the staircase and library
 * parts share (calls.c), and the parts, in the order main.c declares
 * them. main.c gives each part the claim it judges; no chapter reads
 * main.c.
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
enum { HIDDEN = 768, V_GPT2 = 50257, V_PADDED = 50304 };

/* ---- one GEMM call as a point (calls.c) ------------------------------------ */

/* The output a part's GEMMs write, one for all, sized for the largest:
 * made when the part opens. */
typedef struct part_out {
    size_t most; /* elements */
    float *c;
} part_out;

/* A point's data: one call of one variant, and its CSV columns. */
typedef struct exp04_call {
    const char *part;  /* "staircase", "library", "vocab", "model" */
    const char *gemm;  /* "nt" (C = A B^T), "forward", "backward_data", "backward_weight" */
    gemm_call kernel;  /* the launcher, shape and layout; the pointers bound at validation */
    double vocab;      /* the vocabulary size; NaN outside the vocab part */
    rl_wave_model w;   /* NaN where a library picks its own tiles */
    double wave_end;   /* 1 on the last N of a wave, followed by the next one's first */
    const char *mark;  /* its mark on the console */
    const gemm_impl *impl; /* the variant on this backend: its input format */
    rl_input *a, *b;   /* FP16-exact inputs: A and B read the start of these */
    gemm_wide *wide;   /* NULL: the reference is computed for this call alone */
    part_out *out;     /* its part's output */
} exp04_call;

/* The first selected variant of this backend with this role, or NULL. */
static inline const gemm_variant *gemm_by_role(const rl_ctx *ctx, const char *role)
{
    return (const gemm_variant *)rl_variant_by_role(ctx, &gemm_family, role);
}

/* Adds a point of the current part for a copy of c (variant v, in group;
 * 0: alone), writing into out; needed: a verdict reads it (else a run
 * under --budget measures it only as time allows). */
void exp04_call_add(rl_ctx *ctx, part_out *out, const exp04_call *c, const gemm_variant *v,
                    int group, bool needed);
/* When a part opens, its output; when it is done, the output and the
 * inputs its points drew (pts: the part's). */
void exp04_calls_open(rl_ctx *ctx, part_out *out);
void exp04_calls_close(rl_ctx *ctx, const rl_points *pts, part_out *out);

/* The columns every part's console table starts with. */
#define CALL_TABLE_HEAD                                                   \
    {NULL, "variant", "%-7s", .str = rl_col_variant},                     \
    RL_TEXT(NULL, "gemm", "%-15s", exp04_call, gemm),                     \
    RL_INT(NULL, "m", "%6d", exp04_call, kernel.args.m),                  \
    RL_INT(NULL, "n", "%6d", exp04_call, kernel.args.n),                  \
    RL_INT(NULL, "k", "%6d", exp04_call, kernel.args.k),                  \
    RL_DOUBLE(NULL, "tiles", "%6.0f", exp04_call, w.tiles),               \
    RL_DOUBLE(NULL, "waves", "%5.0f", exp04_call, w.waves),               \
    RL_COLUMN_TIME_US,                                                    \
    RL_COLUMN_TFLOPS

/* ---- a sweep of N across waves (calls.c) -----------------------------------
 * N from n_lo to n_hi in steps of step at fixed M and K (the N of each
 * combination of the axes' values), and one step of WAVE_STEP past the
 * end of each wave where the step is longer, timed with it: a part. The
 * last N of a wave and the N past it are one group; the first such pair
 * is what a verdict compares. */
typedef struct wave_part {
    const char *part;
    const gemm_variant *v;
    const rl_claim *claim;    /* the one it judges */
    rl_tiling t;              /* M and the wave model */
    int k;
    const rl_axis *const *axes; /* ended by NULL */
    int (*n_at)(const rl_at *at, const struct wave_part *w);
    int n_lo, n_hi, step;
    rl_input a, b;            /* A (M x k), B (n_hi x k) */
    gemm_wide ref;
    part_out out;
    int first_end; /* the part's point of the first wave end (the next is one step on), or -1 */
    int end, pair, points; /* while declaring: the last wave end, its group, the points so far */
    char heading[256];
} wave_part;

/* Adds part (its state: w) and the sweep's points. */
void exp04_waves_declare(rl_ctx *ctx, wave_part *w, const rl_part *part);
void exp04_waves_open(rl_ctx *ctx, void *state);

/* ---- the parts, in the order main.c declares them -------------------------
 * Each adds its metadata, its part and its points; the part judges its
 * claim when it is done. */

void exp04_model_declare(rl_ctx *ctx, const rl_claim *claim);     /* model.c */
void exp04_staircase_declare(rl_ctx *ctx, const rl_claim *claim); /* staircase.c */
void exp04_library_declare(rl_ctx *ctx, const rl_claim *claim);   /* library.c, GPU only */
void exp04_vocab_declare(rl_ctx *ctx, const rl_claim *claim);     /* vocab.c */

/* Derived columns, computed from every point: the staircase's model time,
 * and a vocab GEMM's time at V = 50257 over this one's, with its spread.
 * NaN on the other parts' points. */
double exp04_staircase_model_us(rl_ctx *ctx, const rl_point *p);
rl_ratio exp04_vocab_speedup_ratio(rl_ctx *ctx, const rl_point *p);

#endif
