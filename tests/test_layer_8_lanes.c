/*
 * test_layer_8_lanes.c -- experiment 09's row helpers (kernels/cpu/
 * layer_vec.h) as an AVX2 build compiles them: 8 lanes, the header's
 * #else branches. On an AVX-512 machine the build takes 16 lanes, so
 * without this file an 8-lane-only mistake (the header once failed to
 * compile there) would go unseen. The Makefile builds it with
 * -mno-avx512f. Each helper against a plain loop, on row lengths that
 * end inside a vector.
 */
#define VF_LANES 8
#include "cpu/layer_vec.h"

#include <criterion/criterion.h>
#include <math.h>

Test(layer_8_lanes, the_row_helpers_match_plain_loops)
{
    for (int n = 1; n <= 37; n++) {
        float x[40], y[40], want_max = -INFINITY;
        for (int i = 0; i < n; i++) {
            x[i] = sinf(0.7f * (float)i) * 3.0f;
            want_max = fmaxf(want_max, x[i]);
        }
        cr_assert_eq(row_max(x, n), want_max, "row_max, n = %d", n);
        double want_sum = 0;
        for (int i = 0; i < n; i++)
            want_sum += exp((double)x[i] - want_max);
        float sum = exp_row(y, x, n, want_max);
        cr_assert(fabs(sum - want_sum) <= 1e-5 * want_sum, "exp_row's sum, n = %d: %g, want %g", n,
                  sum, want_sum);
        for (int i = 0; i < n; i++)
            cr_assert(fabsf(y[i] - expf(x[i] - want_max)) <= 1e-6f, "exp_row, n = %d, i = %d", n, i);
        scale_row(y, y, n, 2.0f);
        for (int i = 0; i < n; i++)
            cr_assert(fabsf(y[i] - 2 * expf(x[i] - want_max)) <= 2e-6f, "scale_row, n = %d", n);
    }
}
