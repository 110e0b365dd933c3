/*
 * gemm.h -- experiment 04's kernels: C = op(A) op(B), cut into output
 * tiles, one tile per thread block (CUDA) or per thread at a time (CPU).
 *
 * Row-major throughout. C is m x n. A is m x k, or stored k x m when
 * trans_a; B is k x n, or stored n x k when trans_b (the layout of a
 * linear layer's weight, y = x W^T). FP32 accumulate everywhere.
 *
 * One table (gemm.c) names each variant's implementation on each backend:
 * gemm.cu (CUDA) and cpu/gemm.c (C + OpenMP, OpenBLAS); the reference is
 * in ref/gemm.c. Adding a variant is one gemm_impl per backend and one row.
 */
#ifndef KERNELS_GEMM_H
#define KERNELS_GEMM_H

#include "common.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gemm_args {
    int m, n, k;
    const void *a, *b; /* in the implementation's input format (in_bytes) */
    float *c;          /* m x n, FP32 */
    bool trans_a, trans_b;
    struct CUstream_st *stream; /* CUDA only */
} gemm_args;

/* gemm_call: a launcher and its arguments (kernels/common.h). */
KERNEL_CALL_TYPE(gemm, gemm_args)

/* Where A(i, kk) and B(kk, j) live, whichever way they are stored. */
RL_HD size_t gemm_a_index(const gemm_args *g, int i, int kk)
{
    return g->trans_a ? (size_t)kk * (size_t)g->m + (size_t)i
                      : (size_t)i * (size_t)g->k + (size_t)kk;
}

RL_HD size_t gemm_b_index(const gemm_args *g, int kk, int j)
{
    return g->trans_b ? (size_t)j * (size_t)g->k + (size_t)kk
                      : (size_t)kk * (size_t)g->n + (size_t)j;
}

/* A variant on one backend: its launcher and what the wave model needs
 * to know about it. */
typedef struct gemm_impl {
    void (*launch)(const gemm_args *g);
    int in_bytes;       /* 4: FP32 inputs; 2: FP16 inputs */
    int tile_m, tile_n; /* the output tile one block computes; 0: the library chooses */
    /* Tiles that run at once on one SM (CUDA: the occupancy calculator)
     * or one thread (CPU: one). NULL when the library decides. */
    int (*blocks_per_unit)(void);
    /* Converts n FP32 values on the device into the input format at dst;
     * NULL when the launcher takes FP32 as it is. */
    void (*to_input)(void *dst, const float *src, size_t n, struct CUstream_st *stream);
} gemm_impl;

/* One row per variant (gemm.c); see kernels/common.h. */
typedef struct gemm_variant {
    KERNEL_VARIANT_HEAD;
    const gemm_impl *cpu, *cuda; /* NULL where the backend lacks the variant */
} gemm_variant;

extern const gemm_variant gemm_variants[]; /* ended by a zero row */
extern const kernel_family gemm_family;

/* The variant's implementation on KERNEL_CPU or KERNEL_CUDA, or NULL. */
static inline const gemm_impl *gemm_impl_on(const gemm_variant *v, int backend)
{
    return backend == KERNEL_CUDA ? v->cuda : v->cpu;
}

/* The implementations (cpu/gemm.c, gemm.cu). */
extern const gemm_impl gemm_tiled_cpu, gemm_sgemm_cpu;
extern const gemm_impl gemm_tiled_cuda, gemm_cublas_cuda;

/* ---- the reference and its inputs (ref/gemm.c) ------------------------------ */

/* In double precision: want (m x n) = op(A) op(B), from FP32 host inputs
 * laid out as g says (g->a and g->b are float *). */
void gemm_reference(double *want, const gemm_args *g);
/* A sweep of n (B stored n x k, trans_b) checks each call against the
 * first n columns of its widest product, computed once, at its first call. */
typedef struct gemm_wide {
    int wide_n;
    double *want; /* NULL until computed */
} gemm_wide;
/* want = op(A) op(B) for g's shape and layout on the host inputs a and b
 * (g->a and g->b may be device copies), cut from wide when given; returns
 * want. */
double *gemm_reference_from(double *want, const gemm_args *g, const float *a, const float *b,
                            gemm_wide *wide);
void gemm_wide_free(gemm_wide *wide); /* NULL: nothing to free */

/* Rounds each value to the nearest FP16 number (ties to even), kept as
 * FP32: inputs drawn this way are the same numbers in either format, so
 * one reference serves FP16 and FP32 variants. */
void gemm_round_to_half(float *x, size_t n);

/* Tolerance for an FP32-accumulated dot product of length k over inputs
 * in [-1, 1]: rounding grows with k, so the absolute bar does too. */
static inline double gemm_atol(int k) { return 1e-6 * (double)k + 1e-6; }
#define GEMM_RTOL 1e-5

#ifdef __cplusplus
}
#endif
#endif
