/*
 * ref/gemm.c -- the double-precision reference every GEMM variant, on
 * either backend, is checked against (experiment 04), cut from a wider
 * product for a sweep, and the FP16-exact inputs that let one reference
 * serve FP16 and FP32 variants alike.
 */
#include "../gemm.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double *doubles(size_t n)
{
    double *d = malloc(n * sizeof(double));
    if (!d) {
        fprintf(stderr, "gemm_reference: out of memory for %zu doubles\n", n);
        abort();
    }
    return d;
}

static double *to_double(const float *x, size_t n)
{
    double *d = doubles(n);
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

/* With B stored n x k (trans_b), B for n columns is the start of B for
 * wide_n, and the wider product's first n columns are this call's. */
double *gemm_reference_from(double *want, const gemm_args *g, const float *a, const float *b,
                            gemm_wide *wide)
{
    gemm_args host = *g;
    host.a = a;
    host.b = b;
    if (!wide) {
        gemm_reference(want, &host);
        return want;
    }
    size_t n = (size_t)g->n, ld = (size_t)wide->wide_n;
    if (!wide->want) {
        host.n = wide->wide_n;
        wide->want = doubles((size_t)g->m * ld);
        gemm_reference(wide->want, &host);
    }
#pragma omp parallel for schedule(static)
    for (int i = 0; i < g->m; i++)
        memcpy(want + (size_t)i * n, wide->want + (size_t)i * ld, n * sizeof(double));
    return want;
}

void gemm_wide_free(gemm_wide *wide)
{
    if (wide) {
        free(wide->want);
        wide->want = NULL;
    }
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
