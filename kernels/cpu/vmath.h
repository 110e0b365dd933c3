/*
 * cpu/vmath.h -- cos on eight floats at once, for experiment 05's CPU
 * kernels: what PyTorch gets from SLEEF, written here so that a cos pass
 * is limited by memory, not by a scalar library call per element.
 *
 * Accuracy: at most 1.70 ulp against cos in double precision over every
 * float with |x| <= RL_COS_RANGE (measured exhaustively, both signs; the
 * worst is x = 7851.62109), and tests/test_vmath.c holds it to 2 ulp on a
 * dense sweep, near every multiple of pi/2 and on random inputs. About 40
 * vector instructions per eight values, ~1.5-1.9 cycles per value on Zen 3.
 *
 * Method:
 *
 *   1. j = round(x * 2/pi), and d = x - j pi/2 in [-pi/4, pi/4], as a
 *      double-float dh + dl. pi/2 is split Cody-Waite style into C1 (24
 *      bits), C2 (11 bits) and C3 (59 bits in all): x - j C1 is exact in
 *      one FMA (both are multiples of 2^-24 and the difference is below 2),
 *      j C2 is exact (j < 2^13), their difference is rounded with its error
 *      kept (Fast2Sum), and j C3 goes into the low part. So d is good to
 *      ~2^-45 even where it is tiny: x close to a multiple of pi/2, cos
 *      close to 0, where a plain float reduction loses every bit. (A
 *      fourth part, 2^-64, changed no result up to 8192: left out.)
 *   2. cos(x) = cos(d), -sin(d), -cos(d), sin(d) for j mod 4 = 0..3; both
 *      polynomials are evaluated and each lane keeps one (no branches):
 *      sin(d) = d + d^3 P(d^2), cos(d) = 1 - d^2/2 + d^4 Q(d^2), with
 *      degree-2 P and Q fitted for minimax relative error on [0, pi/4]
 *      (Lawson's iteratively reweighted least squares, in long double:
 *      2^-28 for sin, 2^-33 for cos, before float rounding).
 *   3. Lanes with |j| > 5216 (|x| beyond about RL_COS_RANGE), infinities
 *      and NaNs are recomputed with the C library's cosf (the reduction
 *      above needs j < 2^13; the bound leaves a margin).
 */
#ifndef KERNELS_CPU_VMATH_H
#define KERNELS_CPU_VMATH_H

#include "simd.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define RL_COS_RANGE 8192.0f /* j = round(x 2/pi) <= 5216 < 2^13 */

/* a * b + c with one rounding: the reduction's exactness depends on it, so
 * without the FMA instruction each lane calls fmaf (slow, but right). */
static inline v8f vm_fma(v8f a, v8f b, v8f c)
{
#if defined(__FMA__)
    return v8f_fma(a, b, c);
#else
    v8f r;
    for (int l = 0; l < 8; l++)
        r[l] = fmaf(a[l], b[l], c[l]);
    return r;
#endif
}

static inline v8f vm_splat(float v) { return (v8f){0} + v; }

/* Lanes of a where mask is all ones, of b elsewhere. */
static inline v8f vm_select(v8i mask, v8f a, v8f b)
{
    return (v8f)(((v8i)a & mask) | ((v8i)b & ~mask));
}

/* Lanes of a where the sign bit of m is set, of b elsewhere: one
 * instruction on AVX (vblendvps reads only the sign bits). */
static inline v8f vm_select_sign(v8i m, v8f a, v8f b)
{
#if defined(__AVX__)
    return (v8f)_mm256_blendv_ps((__m256)b, (__m256)a, (__m256)m);
#else
    return vm_select(m >> 31, a, b);
#endif
}

/* True when any lane of the mask is set: one vptest on AVX. */
static inline bool vm_any(v8i mask)
{
#if defined(__AVX__)
    return !_mm256_testz_si256((__m256i)mask, (__m256i)mask);
#else
    uint64_t w[4];
    memcpy(w, &mask, sizeof w);
    return (w[0] | w[1] | w[2] | w[3]) != 0;
#endif
}

/* cos of lanes with |x| <= RL_COS_RANGE (j = round(x 2/pi) within +-5216);
 * garbage elsewhere, and *out marks those lanes (j out of range, or x
 * infinite or NaN: t's bits are then not 1.5 * 2^23 + j at all). Only
 * float arithmetic and bit moves: no conversion that could be undefined. */
static inline v8f vm_cos_reduced(v8f x, v8i *out)
{
    const float C1 = 0x1.921fb6p+0f, C2 = -0x1.778p-25f, C3 = 0x1.68c234p-39f;
    const float MAGIC = 12582912.0f; /* 1.5 * 2^23: t's low mantissa bits are round(x 2/pi) */
    v8f t = vm_fma(x, vm_splat(0x1.45f306p-1f), vm_splat(MAGIC));
    v8i n = (v8i)t; /* 0x4B400000 + j, two's complement in the low 22 bits */
    *out = (v8i)((v8u)n - (0x4B400000u - 5216u) > 2 * 5216u);
    v8f j = t - MAGIC;
    v8f d1 = vm_fma(-j, vm_splat(C1), x); /* exact */
    v8f p2 = j * C2;                        /* exact: 11 bits times 13 */
    v8f dh = d1 - p2;                       /* Fast2Sum: dh + e = d1 - p2 exactly */
    v8f e = (d1 - dh) - p2;
    v8f dl = vm_fma(-j, vm_splat(C3), e);
    v8f s = dh * dh;
    /* sin(d) ~ dh + (dl + dh s P(s)), the leading term added last so that
     * only that addition rounds at full size. cos(d) ~ (1 - s/2) + s^2 Q(s):
     * dl and the rounding of 1 - s/2 are left out (0.3 ulp at most, for 10 %
     * fewer instructions; fdlibm's trick and the dl term took it to 0.95). */
    v8f p = vm_fma(vm_fma(s, vm_splat(-0x1.9943e2p-13f), vm_splat(0x1.11073ap-7f)), s, vm_splat(-0x1.555546p-3f));
    v8f sn = dh + vm_fma(dh * s, p, dl);
    v8f q = vm_fma(vm_fma(s, vm_splat(0x1.99eb9cp-16f), vm_splat(-0x1.6c0c34p-10f)), s, vm_splat(0x1.55554ap-5f));
    v8f cs = vm_fma(s * s, q, vm_fma(vm_splat(-0.5f), s, vm_splat(1.0f)));
    v8u u = (v8u)n;
    v8f r = vm_select_sign((v8i)(u << 31), sn, cs);       /* odd j: the sine */
    return (v8f)((v8u)r ^ ((u + 1) << 30 & 0x80000000u)); /* j mod 4 = 1, 2: negate */
}

/* cos of eight floats: the polynomial path, and the C library for the
 * lanes it does not cover (rare: large, infinite or NaN inputs). */
static inline v8f rl_cos8(v8f x)
{
    v8i out;
    v8f r = vm_cos_reduced(x, &out);
    if (__builtin_expect(vm_any(out), 0))
        for (int l = 0; l < 8; l++)
            if (out[l])
                r[l] = cosf(x[l]);
    return r;
}

/* One float, the same arithmetic (tails and tests). */
static inline float rl_cosf(float x)
{
    v8f v = rl_cos8(vm_splat(x));
    return v[0];
}

#endif
