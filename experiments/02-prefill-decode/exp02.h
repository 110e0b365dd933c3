/*
 * exp02.h -- what experiment 02's two files share: main.c (the claims, the
 * axes, the points, the columns) and judge.c (the verdicts on a shape).
 */
#ifndef EXP02_H
#define EXP02_H

#include "gemv.h"
#include "rl_weights.h"
#include "rooflab.h"

/* The claims, in EXP02_CLAIMS's order (main.c). */
enum { AI_DECODE, MBU_DECODE, MFU_DECODE_GPU, MFU_DECODE_CPU, MFU_PREFILL, BATCHING_FREE };
extern const rl_claim EXP02_CLAIMS[];

/* One linear layer: k inputs, rows outputs ("4096x14336": in x out). */
typedef struct shape {
    const char *name;
    int k, rows;
} shape;

/* The token counts (main.c): the verdicts read the sweep's largest. */
extern const rl_axis EXP02_TOKENS;

/* The CPU's compute-bound points: counted AI at least this many ridges
 * (judge.c's compute_bound says why; main.c's sweep reaches twice it). */
enum { EXP02_COMPUTE_BOUND_RIDGES = 32 };

/* A layer's counted AI at n tokens. */
static inline double exp02_ai_at(const shape *s, double n)
{
    return rl_arith_intensity(gemv_flops(s->rows, s->k, n), gemv_bytes(s->rows, s->k, n));
}

/* One call at n tokens, on the next copy of the weights: the copies
 * rotate so that the weights are read from where they live (DRAM, when
 * there are enough copies to span 4x the last-level cache). */
typedef struct exp02_call {
    /* what the point is: its CSV columns */
    const char *shape;
    int k, rows, n, copies, validated_rows;
    rl_weights *W;    /* the shape's buffers, and its reference */
    gemv_call kernel; /* every row, on the copy of the weights next names */
    gemv_call check;  /* validation: the first validated_rows rows, on the first copy */
    int next;         /* the copy the next call reads */
} exp02_call;

/* Every verdict on shape s, from the run's points (judge.c). */
void exp02_judge_shape(rl_ctx *ctx, const rl_points *all, const shape *s);

#endif
