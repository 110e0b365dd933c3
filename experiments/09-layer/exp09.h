/*
 * exp09.h -- experiment 09's chapters: the layer as tensors and steps
 * (model.c), the checks against the double-precision reference (check.c),
 * the step-by-step trace (trace.c); main.c declares and judges.
 */
#ifndef EXP09_H
#define EXP09_H

#include "layer.h"
#include "rooflab.h"

#include <stdbool.h>
#include <stddef.h>

/* A layer's configuration: BERT-large's encoder layer (post-norm, GELU,
 * a padding mask) or a Llama-style decoder block (pre-norm RMSNorm, RoPE,
 * causal, SwiGLU, no biases). */
typedef struct exp09_config {
    const char *name;
    const char *scope; /* its verdicts' ids end in it: a gnuplot name, no '-' */
    bool llama;
    int hidden, heads, heads_kv, head_dim, ffn;
} exp09_config;

/* Every array a layer touches: the input, the weights, each step's
 * output. dev: on the backend; ref: the reference's copy of its first
 * sequence (a weight: all of it), in double. */
enum { EXP09_MAX_TENSORS = 80, EXP09_MAX_STEPS = 48, EXP09_MAX_REPLACED = 6 };

typedef struct exp09_tensor {
    const char *name;
    float *dev;
    size_t count;        /* floats, the whole batch */
    size_t first_count;  /* floats of the first sequence (a weight: count) */
    bool weight;
    double *ref;
} exp09_tensor;

/* A step: a variant, its arguments bound to the tensors, and the ids of
 * the tensors it reads and writes (-1: none). A fused step names the
 * unfused steps it replaces. */
typedef struct exp09_step {
    const char *name;
    const layer_variant *v;
    void (*launch)(const layer_args *a); /* the backend's, bound when the layer opens */
    layer_args a;
    int y, y2, x, r, w, bias, gamma, beta, mask;
    int replaces[EXP09_MAX_REPLACED], nreplaces;
} exp09_step;

typedef struct exp09_program {
    const char *name; /* "unfused", "fused", "backward" */
    exp09_step s[EXP09_MAX_STEPS];
    int n;
} exp09_program;

typedef struct exp09_layer {
    exp09_config cfg;
    int batch, seq;
    exp09_tensor t[EXP09_MAX_TENSORS];
    int nt;
    int input, output_unfused, output_fused;
    exp09_program unfused, fused;
    /* the training step's other half (BERT, on the full sweep and the
     * quick run; n = 0 where not built): from the output's gradient (drawn,
     * like the input) back through the unfused layer's steps, reading the
     * activations the unfused forward pass saved, to the input's gradient */
    exp09_program backward;
    int grad_output, grad_input;
} exp09_layer;

/* One point: a step of a program, or a whole program (index -1). */
typedef struct exp09_call {
    const char *config, *program, *step, *cls;
    int batch, seq, index;
    int judged; /* 1: its configuration's judged shape (the verdicts read it) */
    const exp09_step *s;
    const exp09_program *P;
    exp09_layer *L;
} exp09_call;

/* The claims, in main.c's order. */
enum { CHEAP_FLOPS, CHEAP_TIME_OVER_FLOPS, CHEAP_TIME_MODEL, STEPS_ADD_UP, FUSED_SAVING,
       TRAIN_TIME_MODEL };

/* model.c: the tensors and both programs (and the backward pass, where
 * asked: BERT), their buffers not yet made; false (and why) where
 * a variant they need is missing on this backend. */
bool exp09_layer_plan(rl_ctx *ctx, exp09_layer *L, const exp09_config *cfg, int batch, int seq,
                      bool backward, char *why, size_t len);
/* Whether a shape gets the backward pass: BERT's shapes on the full sweep
 * and on the quick run (its smoke test), not on the lab run (its two
 * minutes go to the forward pass's verdicts). */
bool exp09_wants_backward(const rl_ctx *ctx, const exp09_config *cfg, int batch);
/* The bytes of every tensor, for the working-set limit. */
double exp09_layer_bytes(const exp09_layer *L);
/* Allocates the tensors, draws the input and the weights. */
void exp09_layer_open(rl_ctx *ctx, exp09_layer *L);
void exp09_layer_close(rl_ctx *ctx, exp09_layer *L);
/* One call of a whole program, step by step. */
void exp09_program_run(const exp09_program *P);
void exp09_step_run(const exp09_step *s);
double exp09_program_bytes(const exp09_program *P, int backend);
double exp09_program_flops(const exp09_program *P);

/* check.c: a step's reference on its own inputs (downloaded, the first
 * sequence), and the whole program's from the input (chained in double).
 * Each returns want (rl_host_alloc'd) of *count values: the first
 * sequence of the step's (the program's) output. */
double *exp09_step_want(rl_ctx *ctx, const exp09_layer *L, const exp09_step *s, size_t *count);
double *exp09_program_want(rl_ctx *ctx, exp09_layer *L, const exp09_program *P, size_t *count);

/* judge.c: one configuration's verdicts (claims: main.c's), at its
 * judged shape, with its tables of shares by class and of fusions. */
void exp09_judge_config(rl_ctx *ctx, const rl_points *all, const rl_claim *claims,
                        const exp09_config *config);
/* judge.c: the training step's verdict (BERT's: the forward and the
 * backward pass, at the shape of most tokens that has the backward pass),
 * with its table of shares beside the published ones. */
void exp09_judge_training(rl_ctx *ctx, const rl_points *all, const rl_claim *claim,
                          const exp09_config *config);
/* A step's share of its program's time (the sum of its steps'); a whole
 * program's: NaN. */
double exp09_col_share(rl_ctx *ctx, const rl_point *p);

/* trace.c: one call of each program, step by step, each step timed on its
 * own (the backend synchronized after it; NVTX ranges on the GPU), kept
 * as events of one layer part; written as a Chrome trace at the end. */
void exp09_trace_part(rl_ctx *ctx, const exp09_layer *L);
void exp09_trace_write(rl_ctx *ctx);

#endif
