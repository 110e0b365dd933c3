/*
 * test_validate.c -- the checker that stands between a kernel and its
 * timing must catch wrong values, NaN and unwritten outputs.
 */
#include "rl_measure.h"
#include "rooflab.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

Test(validate, equal_values_pass)
{
    float got[] = {1.0f, -2.5f, 0.125f};
    double want[] = {1.0, -2.5, 0.125};
    rl_check c = rl_compare_f32(got, want, 3, 1e-6, 1e-6);
    cr_assert(c.ok);
    cr_assert_eq(c.bad, 0);
    cr_assert_float_eq(c.max_abs_err, 0.0, 1e-15);
}

Test(validate, an_error_beyond_tolerance_fails_at_its_index)
{
    float got[] = {1.0f, 2.0f, 3.001f, 4.0f};
    double want[] = {1.0, 2.0, 3.0, 4.0};
    rl_check c = rl_compare_f32(got, want, 4, 1e-5, 1e-5);
    cr_assert_not(c.ok);
    cr_assert_eq(c.bad, 1);
    cr_assert_eq(c.first_bad, 2);
    cr_assert(c.max_abs_err > 9e-4);
}

Test(validate, relative_tolerance_scales_with_the_value)
{
    float got[] = {1000.001f};
    double want[] = {1000.0};
    cr_assert(rl_compare_f32(got, want, 1, 0, 1e-5).ok, "1e-6 relative error is within 1e-5");
    cr_assert_not(rl_compare_f32(got, want, 1, 0, 1e-7).ok);
}

Test(validate, nan_and_unwritten_outputs_fail)
{
    float got[4];
    memset(got, 0xFF, sizeof got); /* the poison rl_poison writes */
    got[0] = 1.0f;
    double want[] = {1.0, 2.0, 3.0, 4.0};
    rl_check c = rl_compare_f32(got, want, 4, 1, 1); /* even a huge tolerance */
    cr_assert_not(c.ok);
    cr_assert_eq(c.nonfinite, 3);
    cr_assert_eq(c.first_bad, 1);
    char msg[256];
    rl_check_describe(&c, msg, sizeof msg);
    cr_assert(strstr(msg, "unwritten"), "message says why: %s", msg);
}

Test(validate, infinity_fails)
{
    float got[] = {INFINITY};
    double want[] = {INFINITY};
    cr_assert_not(rl_compare_f32(got, want, 1, 1e-6, 1e-6).ok);
}

Test(validate, empty_comparison_is_not_a_pass)
{
    cr_assert_not(rl_compare_f32(NULL, NULL, 0, 1, 1).ok);
}

Test(random, same_seed_same_data_other_seed_other_data)
{
    float a[1000], b[1000], c[1000];
    rl_fill_uniform(a, 1000, -1, 1, 7);
    rl_fill_uniform(b, 1000, -1, 1, 7);
    rl_fill_uniform(c, 1000, -1, 1, 8);
    cr_assert_arr_eq(a, b, sizeof a);
    int same = 0, zeros = 0;
    double sum = 0;
    for (int i = 0; i < 1000; i++) {
        same += a[i] == c[i];
        zeros += a[i] == 0.0f;
        sum += a[i];
        cr_assert(a[i] >= -1 && a[i] < 1);
    }
    cr_assert_lt(same, 5);
    cr_assert_lt(zeros, 2, "random inputs, not zeros");
    cr_assert(fabs(sum / 1000) < 0.1, "mean of U(-1,1) near 0: %g", sum / 1000);
}
