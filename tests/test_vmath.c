/*
 * test_vmath.c -- the CPU's vector cos (cpu/vmath.h) against cos in double
 * precision: at most 2 ulp on a dense sweep of the polynomial path's range,
 * on the floats nearest to multiples of pi/2 (where cos is near 0 and the
 * range reduction is hardest), on random inputs, and on lanes that take the
 * C library's path (large, infinite, NaN), mixed with ordinary ones.
 * (An exhaustive run over every float with |x| <= 8192 measured 1.82 ulp,
 * with 8 lanes and with 16.) The build's own width runs here; the 8-lane
 * code also runs in test_vmath_8_lanes.c, which includes this file.
 */
#ifndef VMATH_SUITE
#define VMATH_SUITE vmath
#endif
#include "cpu/vmath.h"
#include "rl_measure.h"
#include "rooflab.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

static const double MAX_ULP = 2.0;

static float from_bits(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

static uint32_t to_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

/* The error in units of the last place of the float nearest the truth. */
static double ulp_error(float got, double want)
{
    double a = fabs(want), ulp = 0x1p-149;
    if (a >= 0x1p-126) {
        int e;
        frexp(a, &e);
        ulp = ldexp(1.0, e - 24);
    }
    return fabs((double)got - want) / ulp;
}

typedef struct worst { double ulp; float x; } worst;

/* VF_LANES inputs through rl_cos_v at once: the vector path, lane by lane. */
static void check_v(const float *x, worst *w)
{
    vf v, r;
    memcpy(&v, x, sizeof v);
    r = rl_cos_v(v);
    for (int l = 0; l < VF_LANES; l++) {
        double want = cos((double)x[l]);
        if (isnan(want)) {
            cr_assert(isnan(r[l]), "cos(%a) = %a, want NaN", x[l], r[l]);
            continue;
        }
        double e = ulp_error(r[l], want);
        if (e > w->ulp)
            *w = (worst){e, x[l]};
    }
}

static void expect_within(const worst *w, const char *what)
{
    cr_assert_leq(w->ulp, MAX_ULP, "%s: %.3f ulp at x = %a (%.9g)", what, w->ulp, w->x, w->x);
}

Test(VMATH_SUITE, cos_dense_sweep_of_the_polynomial_range_within_2_ulp)
{
    worst w = {0, 0};
    float x[VF_LANES];
    int n = 0;
    /* every 61st float from 0 to the range's end: ~19 million, every binade */
    for (uint32_t b = 0; b <= to_bits(RL_COS_RANGE); b += 61) {
        x[n++] = from_bits(b);
        x[n++] = -from_bits(b);
        if (n == VF_LANES) {
            check_v(x, &w);
            n = 0;
        }
    }
    expect_within(&w, "dense sweep");
    cr_log_info("vector cos (%d lanes), dense sweep of [-%g, %g]: max %.3f ulp", VF_LANES,
                RL_COS_RANGE, RL_COS_RANGE, w.ulp);
}

/* The floats around each multiple of pi/2 in range: cos ~ 0 there, and
 * x - j pi/2 keeps few of x's bits unless the reduction carries more. */
Test(VMATH_SUITE, cos_near_multiples_of_pi_over_2_within_2_ulp)
{
    worst w = {0, 0};
    for (int j = 1; j <= 5215; j++) {
        float c = (float)(j * 1.57079632679489661923);
        float x[VF_LANES];
        uint32_t b = to_bits(c);
        for (int l = 0; l < VF_LANES; l++)
            x[l] = from_bits(b - VF_LANES / 2 + (uint32_t)l);
        check_v(x, &w);
    }
    expect_within(&w, "near multiples of pi/2");
}

Test(VMATH_SUITE, cos_random_inputs_within_2_ulp)
{
    enum { N = 1 << 20 };
    float *u = rl_host_alloc(N * sizeof(float));
    worst w = {0, 0};
    rl_fill_uniform(u, N, -4, 4, 5); /* experiment 05's inputs */
    for (int i = 0; i < N; i += VF_LANES)
        check_v(u + i, &w);
    rl_fill_uniform(u, N, -RL_COS_RANGE, RL_COS_RANGE, 6);
    for (int i = 0; i < N; i += VF_LANES)
        check_v(u + i, &w);
    uint64_t z = 99;
    for (int i = 0; i < N; i++) { /* any bit pattern: huge, tiny, subnormal, inf, NaN */
        z ^= z << 13, z ^= z >> 7, z ^= z << 17;
        u[i] = from_bits((uint32_t)(z >> 16));
    }
    for (int i = 0; i < N; i += VF_LANES)
        check_v(u + i, &w);
    rl_host_free(u);
    expect_within(&w, "random inputs");
}

/* Lanes outside the polynomial's range take the C library's cosf, the
 * others stay on the polynomial: each lane is right whatever its neighbours. */
Test(VMATH_SUITE, cos_mixed_lanes_take_their_own_path)
{
    const float mix[8] = {0.5f, 1e6f, -3.0f, INFINITY, 8192.0f, 8192.001f, NAN, -1e30f};
    float x[VF_LANES];
    for (int l = 0; l < VF_LANES; l++) /* 16 lanes: the mix, then its negation */
        x[l] = l < 8 ? mix[l] : -mix[l - 8];
    vf v, r;
    memcpy(&v, x, sizeof v);
    r = rl_cos_v(v);
    for (int l = 0; l < VF_LANES; l++) {
        if (isnan(x[l]) || isinf(x[l]))
            cr_assert(isnan(r[l]), "lane %d: cos(%g) = %g", l, x[l], r[l]);
        else
            cr_assert_leq(ulp_error(r[l], cos((double)x[l])), MAX_ULP, "lane %d: cos(%g) = %.9g", l, x[l], r[l]);
        float one = rl_cosf(x[l]); /* the scalar entry agrees with its lane */
        cr_assert(memcmp(&one, &r[l], 4) == 0 || (isnan(one) && isnan(r[l])), "lane %d", l);
    }
    cr_assert_eq(rl_cosf(0.0f), 1.0f);
    cr_assert_eq(rl_cosf(-0.0f), 1.0f);
}
