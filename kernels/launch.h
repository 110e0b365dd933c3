/*
 * launch.h -- experiment 06's kernels: a chain of K small element-wise
 * kernels, each variant launching it differently, and a small model step
 * for the doubling test.
 *
 * The chain applies x -> a x + b to n floats in place, K times, one kernel
 * per application. Its variants (one table, launch.c; the launchers in
 * launch.cu and cpu/launch.c, the references in ref/launch.c):
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
 *
 * A variant needs several functions per backend (issue, wait, build and
 * release a graph): each row points to one launch_ops or step_ops per
 * backend, NULL where a backend lacks the variant.
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

struct launch_ops;

typedef struct launch_args {
    const struct launch_ops *ops; /* the variant's (launch_call) */
    float *x;       /* n floats, updated in place k times */
    size_t n;
    int k;
    struct CUstream_st *stream; /* CUDA only */
    void *graph;    /* CUDA: the instantiated chain (launch_ops.build) */
} launch_args;

/* What one backend does for one variant of the chain. */
typedef struct launch_ops {
    /* Issues the chain without waiting for it (NULL: the variant always waits). */
    void (*enqueue)(launch_args *a);
    /* Issues the chain and waits until it is done. */
    void (*run)(launch_args *a);
    /* Prepares what the variant replays (a CUDA graph), and frees it; NULL
     * when there is nothing to prepare. */
    void (*build)(launch_args *a);
    void (*release)(launch_args *a);
} launch_ops;

/* One row per variant of the chain (launch.c); see kernels/common.h. */
typedef struct launch_variant {
    KERNEL_VARIANT_HEAD;
    const launch_ops *cpu, *cuda;
} launch_variant;

extern const launch_variant launch_variants[]; /* ended by a zero row */
extern const kernel_family launch_family;

/* The launchers of each backend (cpu/launch.c, launch.cu). */
extern const launch_ops launch_sync_each_cpu, launch_async_cpu, launch_graph_cpu,
    launch_one_kernel_cpu, launch_serial_cpu;
extern const launch_ops launch_sync_each_cuda, launch_async_cuda, launch_graph_cuda,
    launch_one_kernel_cuda, launch_serial_cuda;

/* The chain of a (a launch_args *) by its ops, in the form a timer calls:
 * issued and waited for; only issued (its ops have an enqueue). */
void launch_call(void *a);
void launch_issue(void *a);
/* The chain as the kernel call a point carries (kernels/common.h): its
 * arguments carry its variant's ops, so the call is its arguments alone. */
static inline kernel_call launch_kernel_call(launch_args *a)
{
    kernel_call k = {launch_call, a};
    return k;
}

/* ---- the model step ------------------------------------------------------ */

struct step_ops;

typedef struct step_args {
    const struct step_ops *ops;  /* the variant's (step_call) */
    int batch, d;
    const float *w1, *w2, *bias; /* d x d row-major, and d */
    const float *x;              /* batch x d */
    float *h, *y;                /* batch x d */
    struct CUstream_st *stream;
    void *graph;
} step_args;

typedef struct step_ops {
    void (*run)(step_args *s);   /* one step, waited for */
    void (*build)(step_args *s); /* NULL when nothing to prepare */
    void (*release)(step_args *s);
} step_ops;

/* One row per variant of the step (launch.c). */
typedef struct step_variant {
    KERNEL_VARIANT_HEAD;
    const step_ops *cpu, *cuda;
} step_variant;

extern const step_variant step_variants[];
extern const kernel_family step_family;

/* The launched step's launches: its kernels (GPU), its parallel regions (CPU). */
enum { STEP_LAUNCHES = 4 };

extern const step_ops step_launches_cpu, step_graph_cpu;
extern const step_ops step_launches_cuda, step_graph_cuda;

/* The same for the step: one step of s (a step_args *), waited for. */
void step_call(void *s);
static inline kernel_call step_kernel_call(step_args *s)
{
    kernel_call k = {step_call, s};
    return k;
}

/* The step's inputs, in this order (step_input, step_on, step_reference). */
enum { STEP_W1, STEP_W2, STEP_BIAS, STEP_X, STEP_INPUTS };

/* Input i's floats at this batch and width, and the range its uniform
 * random values are drawn from: weights of variance 1/d, so that the rows
 * of h and y stay O(1) (launch.c). */
size_t step_input(int i, int batch, int d, float *lo, float *hi);
/* The step at this batch over its inputs in[STEP_INPUTS] and h and y, run
 * by a variant's ops (NULL: only called through the ops themselves). */
step_args step_on(const step_ops *ops, float *const in[STEP_INPUTS], float *h, float *y,
                  int batch, int d, struct CUstream_st *stream);

/* ---- references (ref/launch.c) ------------------------------------------ */

/* x after k applications of the op, in double: a^k (x - p) + p, p = 0.5. */
double launch_reference(double x, int k);
/* The same for each of n elements: want[i] from x[i]. */
void launch_reference_n(const float *x, size_t n, int k, double *want);
/* The step in double precision from host copies of its inputs: y, batch x d. */
void step_reference(int batch, int d, float *const in[STEP_INPUTS], double *y);

#ifdef __cplusplus
}
#endif
#endif
