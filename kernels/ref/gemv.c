/*
 * ref/gemv.c -- the double-precision reference every GEMV variant, on
 * either backend, is checked against (experiments 02 and 03).
 */
#include "../gemv.h"

#include <stdlib.h>

void gemv_reference_rows(double *y, gemv_row_fn row, const void *ctx, const fp16 *x, int rows,
                         int k, int n)
{
    double *xd = malloc(sizeof(double) * (size_t)k * (size_t)n);
    if (!xd)
        abort();
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < (size_t)k * (size_t)n; i++)
        xd[i] = fp16_to_float(x[i]);
#pragma omp parallel
    {
        double *wd = malloc(sizeof(double) * (size_t)k);
        if (!wd)
            abort();
#pragma omp for schedule(static)
        for (int r = 0; r < rows; r++) {
            row(ctx, r, wd);
            for (int t = 0; t < n; t++) {
                const double *xt = xd + (size_t)t * k;
                double s0 = 0, s1 = 0, s2 = 0, s3 = 0; /* four chains: it vectorizes */
                int i = 0;
                for (; i + 4 <= k; i += 4) {
                    s0 += wd[i] * xt[i];
                    s1 += wd[i + 1] * xt[i + 1];
                    s2 += wd[i + 2] * xt[i + 2];
                    s3 += wd[i + 3] * xt[i + 3];
                }
                for (; i < k; i++)
                    s0 += wd[i] * xt[i];
                y[(size_t)t * rows + r] = (s0 + s1) + (s2 + s3);
            }
        }
        free(wd);
    }
    free(xd);
}

typedef struct fp16_rows { const fp16 *w; int k; } fp16_rows;

static void fp16_row(const void *ctx, int r, double *out)
{
    const fp16_rows *m = ctx;
    for (int i = 0; i < m->k; i++)
        out[i] = fp16_to_float(m->w[(size_t)r * m->k + i]);
}

void gemv_reference(double *y, const fp16 *w, const fp16 *x, int rows, int k, int n)
{
    fp16_rows m = {w, k};
    gemv_reference_rows(y, fp16_row, &m, x, rows, k, n);
}

int gemv_validation_rows(int rows, int k, int n)
{
    if ((double)rows * k * n <= 536870912.0)
        return rows;
    int v = (int)(268435456.0 / ((double)k * n)) / 64 * 64;
    return v < 64 ? 64 : v > rows ? rows : v;
}
