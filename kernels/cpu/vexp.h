/*
 * cpu/vexp.h -- e^x on a whole vector of floats, for the CPU kernels whose
 * softmax or activation would otherwise call the C library once per
 * element and be bound by that call instead of by memory.
 *
 * Method: x = n ln2 + r with |r| <= ln2 / 2 (ln2 split in two floats so
 * that r keeps its bits), e^r by its degree-6 Taylor polynomial (the
 * first term left out, r^7 / 7!, is below 2^-22 of the result), and 2^n
 * put straight into the exponent bits. exp_vf's relative error is at most
 * 2.3e-7 over [-87, 88] (against exp in double, every 1e-4).
 *
 * Two widths: exp8 on simd.h's v8f, for x <= 0 only (a score minus its
 * row's maximum: the upper clamp would cost the decode's loop an
 * instruction for nothing), where below -87 it returns e^-87; and exp_vf
 * on vf (16 lanes with AVX-512), for any x: x is clamped to [-87, 88] so
 * that 2^n stays a normal float, and below -87 the result is 0. A masked
 * score's weight is then exactly 0, as in the reference: e^-87 (~1e-38),
 * once a softmax divides it by its sum, is a subnormal float, and
 * arithmetic on subnormals is slow enough on some cores to set the pace
 * of a pass. Above 88, e^88 (~1.7e38) stands for infinity in a
 * sigmoid's 1 + e^x.
 */
#ifndef KERNELS_CPU_VEXP_H
#define KERNELS_CPU_VEXP_H

#include "simd.h"

#define VEXP_LOG2E 1.44269504f
#define VEXP_LN2_HI 0.693145752f /* ln2's first 16 bits: n times it is exact */
#define VEXP_LN2_LO 1.42860677e-6f
#define VEXP_MAGIC 12582912.0f   /* 1.5 x 2^23: adding it rounds to an integer */

static inline v8f vexp_splat8(float x) { return (v8f){x, x, x, x, x, x, x, x}; }

/* e^x for x <= 0; below -87 it returns e^-87. */
static inline v8f exp8(v8f x)
{
    const v8f lo = vexp_splat8(-87.0f), magic = vexp_splat8(VEXP_MAGIC);
    v8i below = x < lo;
    x = (v8f)(((v8i)x & ~below) | ((v8i)lo & below));
    v8f t = v8f_fma(x, vexp_splat8(VEXP_LOG2E), magic);
    v8f n = t - magic;
    v8i ni = (v8i)t - (v8i)magic;
    v8f r = v8f_fma(n, vexp_splat8(-VEXP_LN2_HI), x);
    r = v8f_fma(n, vexp_splat8(-VEXP_LN2_LO), r);
    v8f p = vexp_splat8(1.0f / 720);
    p = v8f_fma(p, r, vexp_splat8(1.0f / 120));
    p = v8f_fma(p, r, vexp_splat8(1.0f / 24));
    p = v8f_fma(p, r, vexp_splat8(1.0f / 6));
    p = v8f_fma(p, r, vexp_splat8(0.5f));
    p = v8f_fma(p, r, vexp_splat8(1.0f));
    p = v8f_fma(p, r, vexp_splat8(1.0f));
    return p * (v8f)((ni + 127) << 23);
}

static inline vf vexp_splat(float x) { return (vf){0} + x; }

/* x clamped to [lo, hi], NaN kept: MAXPS and MINPS return their second
 * operand when either is NaN. */
static inline vf vexp_clamp(vf x, float lo, float hi)
{
#if VF_LANES == 16
    return (vf)_mm512_min_ps(_mm512_set1_ps(hi), _mm512_max_ps(_mm512_set1_ps(lo), (__m512)x));
#elif defined(__AVX__)
    return (vf)_mm256_min_ps(_mm256_set1_ps(hi), _mm256_max_ps(_mm256_set1_ps(lo), (__m256)x));
#else
    vfi below = x < lo, above = x > hi;
    x = (vf)(((vfi)x & ~below) | ((vfi)vexp_splat(lo) & below));
    return (vf)(((vfi)x & ~above) | ((vfi)vexp_splat(hi) & above));
#endif
}

/* e^x for any x: 0 below -87, e^88 above 88; NaN stays NaN (every
 * comparison is false for it). */
static inline vf exp_vf(vf x)
{
    const vf magic = vexp_splat(VEXP_MAGIC);
    vfi under = x < vexp_splat(-87.0f);
    x = vexp_clamp(x, -87.0f, 88.0f);
    vf t = vf_fma(x, vexp_splat(VEXP_LOG2E), magic);
    vf n = t - magic;
    vfi ni = (vfi)t - (vfi)magic;
    vf r = vf_fma(n, vexp_splat(-VEXP_LN2_HI), x);
    r = vf_fma(n, vexp_splat(-VEXP_LN2_LO), r);
    vf p = vexp_splat(1.0f / 720);
    p = vf_fma(p, r, vexp_splat(1.0f / 120));
    p = vf_fma(p, r, vexp_splat(1.0f / 24));
    p = vf_fma(p, r, vexp_splat(1.0f / 6));
    p = vf_fma(p, r, vexp_splat(0.5f));
    p = vf_fma(p, r, vexp_splat(1.0f));
    p = vf_fma(p, r, vexp_splat(1.0f));
    return (vf)((vfi)(p * (vf)((ni + 127) << 23)) & ~under);
}

/* x e^z / (1 + e^z) = x / (1 + e^-z): SiLU (z = x) and the tanh form of
 * GELU (z = 2 sqrt(2/pi) (x + 0.044715 x^3), since 1 + tanh(u) = 2 / (1 +
 * e^-2u)), with no cancellation near z = 0 as 1 - 2 / (e^2u + 1) has. */
static inline vf x_sigmoid_vf(vf x, vf z) { return x / (1.0f + exp_vf(-z)); }

#endif
