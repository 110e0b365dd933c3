/*
 * ref/gemm.c -- the double-precision reference every GEMM variant, on
 * either backend, is checked against (experiment 04), and the FP16-exact
 * inputs that let one reference serve FP16 and FP32 variants alike.
 */
#include "../gemm.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static double *to_double(const float *x, size_t n)
{
    double *d = malloc(n * sizeof(double));
    if (!d) {
        fprintf(stderr, "gemm_reference: out of memory for %zu doubles\n", n);
        abort();
    }
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        d[i] = x[i];
    return d;
}

/* Double-precision BLAS on the inputs widened to double: products and sums
 * carry 53 bits, far beyond the FP32 accumulation being checked. */
void gemm_reference(double *want, const gemm_args *g)
{
    double *a = to_double(g->a, (size_t)g->m * (size_t)g->k);
    double *b = to_double(g->b, (size_t)g->k * (size_t)g->n);
    cblas_dgemm(CblasRowMajor, g->trans_a ? CblasTrans : CblasNoTrans,
                g->trans_b ? CblasTrans : CblasNoTrans, g->m, g->n, g->k, 1.0, a,
                g->trans_a ? g->m : g->k, b, g->trans_b ? g->k : g->n, 0.0, want, g->n);
    free(a);
    free(b);
}

/* FP16 keeps 11 significant bits: near |x| in [2^(e-1), 2^e) its numbers
 * are 2^(e-11) apart, and below 2^-14 (the subnormals) 2^-24 apart.
 * Scaling by that spacing is exact, so rounding to an integer there is
 * rounding to FP16 (nearbyintf: to nearest, ties to even). The inputs of
 * this experiment lie in [-1, 1], far from FP16's overflow at 65520. */
void gemm_round_to_half(float *x, size_t n)
{
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) {
        int e;
        frexpf(fabsf(x[i]), &e);
        float spacing = ldexpf(1.0f, e - 1 >= -14 ? e - 11 : -24);
        x[i] = nearbyintf(x[i] / spacing) * spacing;
    }
}
