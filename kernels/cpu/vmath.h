/*
 * cpu/vmath.h -- cos on a whole vector of floats at once (16 lanes with
 * AVX-512, 8 otherwise: simd.h's vf), for experiment 05's CPU kernels:
 * what PyTorch gets from SLEEF, written here so that a cos pass is limited
 * by memory, not by a scalar library call per element.
 *
 * Accuracy: at most 1.82 ulp against cos in double precision over every
 * float with |x| <= RL_COS_RANGE (measured exhaustively, both signs; the
 * worst is x = 3697.69775), and tests/test_vmath.c holds it to 2 ulp on a
 * dense sweep, near every multiple of pi/2 and on random inputs, with 16
 * lanes and with 8. About 20 vector instructions per vector, little more
 * than one per value: cheap enough that a pass stays bound by memory. 16
 * lanes pay even on a core that runs them as two halves (Zen 4): half as
 * many instructions fit the out-of-order window's work.
 *
 * Method:
 *
 *   1. j = round(x/pi - 1/2), so that q = 2j + 1 is the odd multiple of
 *      pi/2 nearest to x, and d = x - q pi/2 in [-pi/2, pi/2]. pi/2 is
 *      split Cody-Waite style into three floats C1 + C2 + C3 (72 bits),
 *      and q times each is taken off in one FMA: one rounding per part, so
 *      d keeps its relative accuracy even where it is tiny (x close to a
 *      zero of cos, where a plain x - q * (pi/2) in float loses every bit).
 *   2. cos(x) = cos(d + q pi/2) = -sin(d) for even j, sin(d) for odd j: one
 *      polynomial, no branch and no select. sin(d) = d + d (s P(s)) with
 *      s = d^2 and a cubic P fitted for minimax relative error on
 *      [0, pi/2] (Lawson's iteratively reweighted least squares; each
 *      coefficient rounded to float in turn, the rest refitted: 2^-27.3).
 *   3. The result is clamped to [-1, 1]: near d = +-pi/2 the sum can round
 *      to the float above 1, whose ulp is twice the one below (2.1 ulp
 *      without the clamp, at x near 0).
 *   4. Lanes with |j| > 4000 (|x| beyond about RL_COS_RANGE), infinities
 *      and NaNs are recomputed with the C library's cosf.
 *
 * (Until 2026-12 this file reduced to [-pi/4, pi/4] and evaluated both a
 * sine and a cosine polynomial per lane, keeping one: 1.70 ulp, but about
 * 30 instructions per vector, and slower.)
 */
#ifndef KERNELS_CPU_VMATH_H
#define KERNELS_CPU_VMATH_H

#include "simd.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define RL_COS_RANGE 8192.0f /* |j| = |round(x/pi - 1/2)| <= 2608, well within 4000 */

/* a * b + c with one rounding: each step of the reduction must round only
 * once, so without the FMA instruction each lane calls fmaf (slow, but
 * right). */
static inline vf vm_fma(vf a, vf b, vf c)
{
#if VF_LANES == 16
    return (vf)_mm512_fmadd_ps((__m512)a, (__m512)b, (__m512)c);
#elif defined(__FMA__)
    return (vf)_mm256_fmadd_ps((__m256)a, (__m256)b, (__m256)c);
#else
    vf r;
    for (int l = 0; l < VF_LANES; l++)
        r[l] = fmaf(a[l], b[l], c[l]);
    return r;
#endif
}

static inline vf vm_splat(float v) { return (vf){0} + v; }

/* Each lane clamped to [-1, 1]: one vrangeps with AVX-512DQ (the smaller
 * magnitude of v and 1, with v's sign), else a max and a min. */
static inline vf vm_clamp1(vf v)
{
#if VF_LANES == 16 && defined(__AVX512DQ__)
    return (vf)_mm512_range_ps((__m512)v, _mm512_set1_ps(1.0f), 0x2);
#elif VF_LANES == 8 && defined(__AVX512DQ__) && defined(__AVX512VL__)
    return (vf)_mm256_range_ps((__m256)v, _mm256_set1_ps(1.0f), 0x2);
#elif VF_LANES == 16
    return (vf)_mm512_min_ps(_mm512_max_ps((__m512)v, _mm512_set1_ps(-1.0f)), _mm512_set1_ps(1.0f));
#elif defined(__AVX__)
    return (vf)_mm256_min_ps(_mm256_max_ps((__m256)v, _mm256_set1_ps(-1.0f)), _mm256_set1_ps(1.0f));
#else
    for (int l = 0; l < VF_LANES; l++)
        v[l] = fminf(fmaxf(v[l], -1.0f), 1.0f);
    return v;
#endif
}

/* True when any lane of the mask is set: one vptest (AVX) or vptestmd
 * (AVX-512). */
static inline bool vm_any(vfi mask)
{
#if VF_LANES == 16
    return _mm512_test_epi32_mask((__m512i)mask, (__m512i)mask) != 0;
#elif defined(__AVX__)
    return !_mm256_testz_si256((__m256i)mask, (__m256i)mask);
#else
    uint64_t w[VF_LANES / 2];
    memcpy(w, &mask, sizeof w);
    uint64_t any = 0;
    for (int i = 0; i < VF_LANES / 2; i++)
        any |= w[i];
    return any != 0;
#endif
}

/* cos of lanes with |x| <= RL_COS_RANGE (j = round(x/pi - 1/2) within
 * +-4000); garbage elsewhere, and *out marks those lanes (j out of range,
 * or x infinite or NaN: t's bits are then not 1.5 * 2^23 + 1 + j at all).
 * Only float arithmetic and bit moves: no conversion that could be
 * undefined. */
static inline vf vm_cos_reduced(vf x, vfi *out)
{
    const float C1 = 0x1.921fb6p+0f, C2 = -0x1.777a5cp-25f, C3 = -0x1.ee59dap-50f; /* pi/2 */
    const float MAGIC = 12582913.0f; /* 1.5 * 2^23 + 1: t's low mantissa bits are j + 1 */
    vf t = vm_fma(x, vm_splat(0x1.45f306p-2f), vm_splat(-0.5f)) + MAGIC; /* 1/pi */
    vfu n = (vfu)t; /* 0x4B400001 + j, two's complement in the low 22 bits */
    *out = (vfi)(n - (0x4B400001u - 4000u) > 2 * 4000u);
    vf q = vm_fma(t - MAGIC, vm_splat(2.0f), vm_splat(1.0f)); /* 2j + 1, exact */
    vf d = vm_fma(-q, vm_splat(C1), x);
    d = vm_fma(-q, vm_splat(C2), d);
    d = vm_fma(-q, vm_splat(C3), d);
    vf s = d * d;
    vf p = vm_fma(vm_fma(vm_fma(s, vm_splat(0x1.5dc8c4p-19f), vm_splat(-0x1.9f70eep-13f)), s,
                         vm_splat(0x1.110edap-7f)), s, vm_splat(-0x1.55554cp-3f));
    vf sn = vm_clamp1(vm_fma(d, p * s, d));   /* sin(d) */
    return (vf)((vfu)sn ^ (n << 31));        /* even j (n odd): -sin(d) */
}

/* cos of a vector of floats: the polynomial path, and the C library for
 * the lanes it does not cover (rare: large, infinite or NaN inputs). */
static inline vf rl_cos_v(vf x)
{
    vfi out;
    vf r = vm_cos_reduced(x, &out);
    if (__builtin_expect(vm_any(out), 0))
        for (int l = 0; l < VF_LANES; l++)
            if (out[l])
                r[l] = cosf(x[l]);
    return r;
}

/* Whether every x[i] is within the polynomial's range (NaN is not): then
 * vm_cos_reduced alone is right for all of them, and a loop can call it
 * without the C library's fallback. */
static inline bool rl_cos_all_in_range(const float *x, size_t n)
{
    const uint32_t most = 0x46000000u; /* the bits of RL_COS_RANGE */
    uint32_t worst = 0;
    for (size_t i = 0; i < n; i++) { /* vectorized: an and and a max per lane */
        uint32_t b;
        memcpy(&b, &x[i], sizeof b);
        b &= 0x7fffffffu; /* |x|: NaNs and infinities compare above any finite */
        worst = b > worst ? b : worst;
    }
    return worst <= most;
}

/* One float, the same arithmetic (tails and tests). */
static inline float rl_cosf(float x)
{
    vf v = rl_cos_v(vm_splat(x));
    return v[0];
}

#endif
