/*
 * fusion.h -- experiment 05's kernels: a chain of k element-wise ops,
 * run as k kernels (each a full trip through memory) or as one kernel that
 * keeps the intermediates in registers.
 *
 * Two tables with the same rows, one per backend: fusion.cu (CUDA) and
 * cpu/fusion.c (C + OpenMP). Adding a variant is one row and one function;
 * a row whose launch is NULL does not exist on that backend. The CPU's
 * cos is a vector polynomial (cpu/vmath.h); its _libm rows keep glibc's
 * scalar cosf.
 */
#ifndef KERNELS_FUSION_H
#define KERNELS_FUSION_H

#include "common.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fusion_op {
    FUSION_COS = 0,    /* x.cos(): the claim's op */
    FUSION_AFFINE = 1  /* 0.75 x + 0.125: one FMA, memory-bound on any machine */
} fusion_op;

/* The affine map's fixed point is 0.5, so long chains stay bounded. */
#define FUSION_AFFINE_A 0.75f
#define FUSION_AFFINE_B 0.125f

/* One op on one float: the definition kernels on both sides use. */
RL_HD float fusion_apply(float x, fusion_op op)
{
    return op == FUSION_COS ? cosf(x) : x * FUSION_AFFINE_A + FUSION_AFFINE_B;
}

typedef struct fusion_args {
    float *out;
    const float *in;
    float *tmp;   /* intermediate for unfused chains, n floats */
    size_t n;
    int k;        /* ops in the chain */
    fusion_op op;
    struct CUstream_st *stream; /* CUDA only */
} fusion_args;

typedef struct fusion_variant {
    int number;
    const char *name;
    const char *what;
    int k;         /* fixed chain length, or 0 when the experiment sweeps k */
    bool fused;    /* one kernel for the chain, or one per op */
    void (*launch)(const fusion_args *a); /* NULL: not on this backend */
    double (*bytes)(size_t n, int k); /* moved through memory, the minimum */
    /* cos by the C library, one scalar call per element (the CPU's
     * compute-bound counterexample); such rows run only for op cos. */
    bool libm;
} fusion_variant;

extern const fusion_variant fusion_cuda_variants[]; /* terminated by a zero row */
extern const fusion_variant fusion_cpu_variants[];

/* Each pass reads n floats and writes n floats. */
static inline double fusion_bytes_one_pass(size_t n, int k)
{
    (void)k;
    return 2.0 * (double)n * sizeof(float);
}

static inline double fusion_bytes_per_op(size_t n, int k)
{
    return (double)k * 2.0 * (double)n * sizeof(float);
}

/* Where pass j of an unfused chain writes: tmp and out alternate so that
 * the last pass lands in out, and no pass reads what it writes. */
static inline float *fusion_pass_output(const fusion_args *a, int j)
{
    return (a->k - 1 - j) % 2 == 0 ? a->out : a->tmp;
}

/* The reference: one op, in double precision, in place. */
void fusion_reference_step(double *x, size_t n, fusion_op op);
const char *fusion_op_name(fusion_op op);

#ifdef __cplusplus
}
#endif
#endif
