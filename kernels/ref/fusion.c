/*
 * ref/fusion.c -- the double-precision reference every fusion variant, on
 * either backend, is checked against.
 */
#include "../fusion.h"

const char *fusion_op_name(fusion_op op) { return op == FUSION_COS ? "cos" : "affine"; }

void fusion_reference_step(double *x, size_t n, fusion_op op)
{
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        x[i] = op == FUSION_COS ? cos(x[i]) : x[i] * (double)FUSION_AFFINE_A + (double)FUSION_AFFINE_B;
}

