/*
 * exp02.h -- what experiment 02's two files share: the layer's shape, one
 * call of one variant at one n (a point's data), and the verdicts.
 */
#ifndef EXP02_H
#define EXP02_H

#include "gemv.h"
#include "rooflab.h"

/* One linear layer: k inputs, rows outputs ("4096x14336": in x out). */
typedef struct shape {
    const char *name;
    int k, rows;
} shape;

/* One call of a variant at n tokens, on the next copy of the weights: the
 * copies rotate so that the weights are read from where they live (DRAM,
 * when there are enough copies to span 4x the last-level cache). */
typedef struct exp02_call {
    /* what the point is: its CSV columns */
    const char *shape;
    int k, rows, n, copies, validated_rows;
    struct layer *L;  /* the shape's buffers, and its reference (main.c) */
    gemv_call kernel; /* every row, on the copy of the weights next names */
    gemv_call check;  /* validation: the first validated_rows rows, on the first copy */
    int next;         /* the copy the next call reads */
} exp02_call;

/* judge.c */
/* The compute roof over DRAM's read bandwidth, FLOP/B. */
double exp02_measured_ridge(rl_ctx *ctx);
/* The verdicts of one shape, from every point (all). */
void exp02_judge_shape(rl_ctx *ctx, const rl_points *all, const shape *s);

#endif
