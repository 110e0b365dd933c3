/*
 * launch.h -- experiment 06's kernels: a chain of K small element-wise
 * kernels launched several ways, and a small model step for the doubling
 * test.
 *
 * The chain applies x -> a x + b to n floats in place, K times, one kernel
 * per application. Its ways (the same rows in launch.cu and cpu/launch.c):
 *   1 sync_each   CUDA: launch, synchronize, repeat.
 *                 CPU: one OpenMP parallel loop per kernel (fork and join).
 *   2 async       CUDA: K launches, one synchronize.
 *                 CPU: one parallel region, K loops with a barrier after each.
 *   3 graph       CUDA: the K launches captured once into a CUDA graph, replayed.
 *                 CPU: one parallel region, K loops with no barrier (each
 *                 thread keeps its own elements: nothing to wait for).
 *   4 one_kernel  the floor: the chain in one launch. Each thread makes
 *                 the K passes over its own elements that K kernels would
 *                 (the same loads and stores, the same cache behaviour),
 *                 with no launch or synchronization in between.
 *   5 serial      one thread does the whole chain (CUDA: one thread of one
 *                 block, one launch; CPU: the calling thread).
 *
 * The step: h = relu(x W1 + bias); y = h W2 + x, for a batch of rows of
 * width d: two matrix products and two element-wise kernels, launched one
 * by one or as one graph (CPU: one parallel region per op, or one region
 * for the whole step).
 */
#ifndef KERNELS_LAUNCH_H
#define KERNELS_LAUNCH_H

#include "common.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LAUNCH_A 0.75f
#define LAUNCH_B 0.125f

/* The chain's op. Its fixed point is b / (1 - a) = 0.5, so x stays bounded
 * however long the chain, and errors shrink by a each step. */
RL_HD float launch_op(float x) { return x * LAUNCH_A + LAUNCH_B; }

typedef struct launch_args {
    float *x;       /* n floats, updated in place k times */
    size_t n;
    int k;
    struct CUstream_st *stream; /* CUDA only */
    void *graph;    /* CUDA: the instantiated chain (launch_way.build) */
} launch_args;

typedef struct launch_way {
    int number;
    const char *name, *what;
    /* Issues the chain without waiting for it (NULL: the way always waits). */
    void (*enqueue)(launch_args *a);
    /* Issues the chain and waits until it is done. */
    void (*run)(launch_args *a);
    /* Prepares what the way replays (CUDA graph); NULL when nothing. */
    void (*build)(launch_args *a);
    void (*release)(launch_args *a);
} launch_way;

extern const launch_way launch_cuda_ways[]; /* terminated by a zero row */
extern const launch_way launch_cpu_ways[];

/* ---- the model step ------------------------------------------------------ */

typedef struct step_args {
    int batch, d;
    const float *w1, *w2, *bias; /* d x d row-major, and d */
    const float *x;              /* batch x d */
    float *h, *y;                /* batch x d */
    struct CUstream_st *stream;
    void *graph;
} step_args;

typedef struct step_way {
    int number;
    const char *name, *what;
    void (*run)(step_args *s);   /* one step, waited for */
    void (*build)(step_args *s); /* NULL when nothing to prepare */
    void (*release)(step_args *s);
} step_way;

extern const step_way step_cuda_ways[];
extern const step_way step_cpu_ways[];

/* ---- references (cpu/launch.c) ------------------------------------------ */

/* x after k applications of the op, in double: a^k (x - p) + p, p = 0.5. */
double launch_reference(double x, int k);
/* The step in double precision from host copies of its inputs: y, batch x d. */
void step_reference(int batch, int d, const float *w1, const float *w2, const float *bias,
                    const float *x, double *y);

#ifdef __cplusplus
}
#endif
#endif
