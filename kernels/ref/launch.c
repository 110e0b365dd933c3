/*
 * ref/launch.c -- the double-precision references every variant of the
 * chain and the step, on either backend, is checked against (experiment 06).
 */
#include "../launch.h"

#include <math.h>
#include <stdlib.h>

double launch_reference(double x, int k)
{
    const double a = LAUNCH_A, p = LAUNCH_B / (1.0 - LAUNCH_A);
    return pow(a, k) * (x - p) + p;
}

void launch_reference_n(const float *x, size_t n, int k, double *want)
{
    for (size_t i = 0; i < n; i++)
        want[i] = launch_reference(x[i], k);
}

void step_reference(int batch, int d, float *const in[STEP_INPUTS], double *y)
{
    const float *w1 = in[STEP_W1], *w2 = in[STEP_W2], *bias = in[STEP_BIAS], *x = in[STEP_X];
#pragma omp parallel
    {
        double *h = malloc((size_t)d * sizeof *h);
        if (!h)
            abort();
#pragma omp for schedule(static)
        for (int b = 0; b < batch; b++) {
            const float *xb = x + (size_t)b * d;
            for (int j = 0; j < d; j++)
                h[j] = 0;
            for (int k = 0; k < d; k++)
                for (int j = 0; j < d; j++)
                    h[j] += (double)xb[k] * w1[(size_t)k * d + j];
            for (int j = 0; j < d; j++)
                h[j] = fmax(h[j] + bias[j], 0.0);
            double *yb = y + (size_t)b * d;
            for (int j = 0; j < d; j++)
                yb[j] = xb[j];
            for (int k = 0; k < d; k++)
                for (int j = 0; j < d; j++)
                    yb[j] += h[k] * w2[(size_t)k * d + j];
        }
        free(h);
    }
}
