/*
 * ref/moe.c -- the double-precision reference every MoE variant, on either
 * backend, is checked against (experiment 08): each output row is its
 * expert's GEMV on its token, through the GEMV reference.
 */
#include "../gemv.h"
#include "../moe.h"

#include <stdlib.h>

void moe_reference(double *y, const fp16 *w, const fp16 *x, const int *experts, int rows, int k,
                   int top_k, int slots)
{
    for (int s = 0; s < slots; s++) {
        const fp16 *we = w + (size_t)experts[s] * rows * k;
        gemv_reference(y + (size_t)s * rows, we, x + (size_t)(s / top_k) * k, rows, k, 1);
    }
}
