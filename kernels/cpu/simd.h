/*
 * cpu/simd.h -- eight floats at a time for the CPU kernels (GCC's vector
 * extension: one AVX register where the CPU has AVX, two SSE registers
 * otherwise), and eight halves to eight floats in one step.
 *
 * The conversion uses the F16C instruction where the compiler targets it
 * (-march=native on any x86 since 2012), and otherwise the bit-level
 * conversion of half.h written on whole vectors, so that it vectorizes.
 * tests/test_half.c checks both against the scalar fp16_to_float.
 */
#ifndef KERNELS_CPU_SIMD_H
#define KERNELS_CPU_SIMD_H

#include "../half.h"

#include <string.h>
#if defined(__F16C__) || defined(__FMA__) || defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

typedef float v8f __attribute__((vector_size(32)));
typedef uint32_t v8u __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));
typedef uint16_t v8h __attribute__((vector_size(16)));

static inline v8f v8f_load(const float *p)
{
    v8f v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void v8f_store(float *p, v8f v) { memcpy(p, &v, sizeof v); }

/* a * b + c, fused where the CPU has FMA (C11 compilers do not contract
 * a * b + c on their own: -ffp-contract=off is the ISO C default). */
static inline v8f v8f_fma(v8f a, v8f b, v8f c)
{
#if defined(__FMA__)
    return (v8f)_mm256_fmadd_ps((__m256)a, (__m256)b, (__m256)c);
#else
    return a * b + c;
#endif
}

static inline float v8f_sum(v8f v)
{
    return ((v[0] + v[4]) + (v[1] + v[5])) + ((v[2] + v[6]) + (v[3] + v[7]));
}

/* The widest float vector the build targets: 16 lanes (one AVX-512
 * register) where the compiler targets AVX-512F, else 8. Code written on
 * it (the vector cos) runs half the instructions per value on AVX-512.
 * A translation unit may choose 8 by defining VF_LANES first (the tests
 * do, to run the 8-lane code on an AVX-512 machine too). */
#ifndef VF_LANES
#if defined(__AVX512F__)
#define VF_LANES 16
#else
#define VF_LANES 8
#endif
#endif
#if VF_LANES == 16 && !defined(__AVX512F__)
#error "VF_LANES 16 needs AVX-512F (cpu/simd.h's 16-lane helpers use its intrinsics)"
#endif
typedef float vf __attribute__((vector_size(4 * VF_LANES)));
typedef int32_t vfi __attribute__((vector_size(4 * VF_LANES)));
typedef uint32_t vfu __attribute__((vector_size(4 * VF_LANES)));

static inline vf vf_load(const float *p)
{
    vf v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void vf_store(float *p, vf v) { memcpy(p, &v, sizeof v); }

/* Eight halves to eight floats, portable: fp16_to_float on all lanes. */
static inline v8f fp16x8_to_v8f_generic(const fp16 *p)
{
    v8h h;
    memcpy(&h, p, sizeof h); /* one 16-byte load */
    v8u w = __builtin_convertvector(h, v8u);
    v8u sign = (w & 0x8000u) << 16;
    v8u em = w & 0x7fffu;
    v8u bits = (em << 13) + 0x38000000u;
    bits += (v8u)(em >= 0x7c00u) & 0x38000000u;
    v8f sub = __builtin_convertvector((v8i)em, v8f) * 5.9604644775390625e-8f;
    v8u subbits, small = (v8u)(em < 0x0400u);
    memcpy(&subbits, &sub, sizeof subbits);
    v8u r = ((subbits & small) | (bits & ~small)) | sign;
    v8f f;
    memcpy(&f, &r, sizeof f);
    return f;
}

/* Eight halves to eight floats, the fastest way this build has. */
static inline v8f fp16x8_to_v8f(const fp16 *p)
{
#if defined(__F16C__)
    __m128i h;
    memcpy(&h, p, sizeof h);
    __m256 f = _mm256_cvtph_ps(h);
    v8f v;
    memcpy(&v, &f, sizeof v);
    return v;
#else
    return fp16x8_to_v8f_generic(p);
#endif
}

/* VF_LANES halves to VF_LANES floats: on AVX-512 one vcvtph2ps fills a
 * 512-bit register, half the conversion instructions per weight of two
 * 256-bit ones (the F16 GEMV's bottleneck in cache). */
static inline vf fp16_to_vf(const fp16 *p)
{
#if VF_LANES == 16
    __m256i h;
    memcpy(&h, p, sizeof h);
    return (vf)_mm512_cvtph_ps(h);
#else
    return fp16x8_to_v8f(p);
#endif
}

/* a * b + c on VF_LANES lanes, fused where the CPU has FMA. */
static inline vf vf_fma(vf a, vf b, vf c)
{
#if VF_LANES == 16
    return (vf)_mm512_fmadd_ps((__m512)a, (__m512)b, (__m512)c);
#else
    return v8f_fma(a, b, c);
#endif
}

static inline float vf_sum(vf v)
{
#if VF_LANES == 16
    v8f lo, hi;
    memcpy(&lo, &v, sizeof lo);
    memcpy(&hi, (const char *)&v + sizeof lo, sizeof hi);
    return v8f_sum(lo + hi);
#else
    return v8f_sum(v);
#endif
}

/* n halves to floats (n a multiple of 8 for the vector part). */
static inline void fp16_row_to_float(float *dst, const fp16 *src, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        v8f_store(dst + i, fp16x8_to_v8f(src + i));
    for (; i < n; i++)
        dst[i] = fp16_to_float(src[i]);
}

#endif
