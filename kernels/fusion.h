/*
 * fusion.h -- experiment 05's kernels: a chain of k element-wise ops,
 * run as k kernels (each a full trip through memory) or as one kernel that
 * keeps the intermediates in registers.
 *
 * One table (fusion.c) names each variant's launcher on each backend:
 * fusion.cu (CUDA) and cpu/fusion.c (C + OpenMP); the reference is in
 * ref/fusion.c. Adding a variant is one function per backend and one row.
 * The CPU's cos is a vector polynomial (cpu/vmath.h); its _libm rows keep
 * glibc's scalar cosf, a compute-bound element-wise op.
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

/* fusion_call: a launcher and its arguments (kernels/common.h). */
KERNEL_CALL_TYPE(fusion, fusion_args)

/* One row per variant (fusion.c); see kernels/common.h. */
typedef struct fusion_variant {
    KERNEL_VARIANT_HEAD;
    int k;         /* fixed chain length, or 0 when the experiment sweeps k */
    bool fused;    /* one kernel for the chain, or one per op */
    void (*cpu)(const fusion_args *a);
    void (*cuda)(const fusion_args *a);
    double (*bytes)(size_t n, int k); /* moved through memory, the minimum */
    /* cos by the C library, one scalar call per element (the CPU's
     * compute-bound counterexample); such rows run only for op cos. */
    bool libm;
} fusion_variant;

extern const fusion_variant fusion_variants[]; /* ended by a zero row */
extern const kernel_family fusion_family;

/* The launchers (cpu/fusion.c, fusion.cu): one kernel for the whole chain,
 * one kernel per op, one kernel with 16-byte vectors. */
void fusion_fused_cpu(const fusion_args *a);
void fusion_unfused_cpu(const fusion_args *a);
void fusion_fused_vec4_cpu(const fusion_args *a);
void fusion_fused_libm_cpu(const fusion_args *a);   /* glibc's scalar cosf */
void fusion_unfused_libm_cpu(const fusion_args *a);
void fusion_fused_cuda(const fusion_args *a);
void fusion_unfused_cuda(const fusion_args *a);
void fusion_fused_vec4_cuda(const fusion_args *a);

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

/* The working set: in and out, and tmp when an unfused chain has one. */
static inline double fusion_footprint(const fusion_variant *v, size_t n, int k)
{
    return (v->fused || k == 1 ? 2.0 : 3.0) * (double)n * sizeof(float);
}

/* For a time model: a cos costs a range reduction and a polynomial, about
 * 15 FLOPs vectorized; the affine map one FMA. */
static inline double fusion_flops(fusion_op op, size_t n, int k)
{
    return (op == FUSION_COS ? 15 : 2) * k * (double)n;
}

/* Where pass j of an unfused chain writes: tmp and out alternate so that
 * the last pass lands in out, and no pass reads what it writes. */
static inline float *fusion_pass_output(const fusion_args *a, int j)
{
    return (a->k - 1 - j) % 2 == 0 ? a->out : a->tmp;
}

/* The reference (ref/fusion.c): one op, in double precision, in place. */
void fusion_reference_step(double *x, size_t n, fusion_op op);
const char *fusion_op_name(fusion_op op);

/* What a variant's floats must meet after up to 8 ops: within
 * FUSION_ATOL + FUSION_RTOL |reference|. */
#define FUSION_ATOL 1e-5
#define FUSION_RTOL 1e-5

#ifdef __cplusplus
}
#endif
#endif
