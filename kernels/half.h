/*
 * half.h -- IEEE 754 binary16 ("half", FP16) as 16 raw bits, and its
 * conversions to and from float, usable from C and CUDA.
 *
 * C has no portable half type (_Float16 is a recent, optional extension),
 * so weights are carried as uint16_t and converted bit by bit. On the GPU
 * the same functions use the hardware conversions (__half2float,
 * __float2half_rn); tests/test_half.c checks that both sides agree on every
 * one of the 65536 halves, and on rounding of floats, ties included.
 */
#ifndef KERNELS_HALF_H
#define KERNELS_HALF_H

#include "common.h"

#include <stdint.h>
#include <string.h>
#ifdef __CUDACC__
#include <cuda_fp16.h>
#endif

typedef uint16_t fp16; /* the bits of one IEEE binary16 value */

/* Reinterpreting bits: memcpy on the host (no aliasing trouble; compilers
 * emit one move), the intrinsic on the device. */
RL_HD float rl_bits_to_float(uint32_t b)
{
#ifdef __CUDA_ARCH__
    return __uint_as_float(b);
#else
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
#endif
}

RL_HD uint32_t rl_float_to_bits(float f)
{
#ifdef __CUDA_ARCH__
    return __float_as_uint(f);
#else
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
#endif
}

/* Exact: every half is a float. Normal numbers move their exponent from
 * bias 15 to bias 127; infinities and NaNs (exponent all ones) move twice
 * as far so that they stay all ones; subnormals (and zero) are their
 * 10-bit mantissa times 2^-24, which float arithmetic gets exactly. */
RL_HD float fp16_to_float(fp16 h)
{
#ifdef __CUDA_ARCH__
    return __half2float(__ushort_as_half(h));
#else
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t em = h & 0x7fffu; /* exponent and mantissa */
    uint32_t bits = (em << 13) + 0x38000000u;
    if (em >= 0x7c00u)
        bits += 0x38000000u;
    if (em < 0x0400u)
        bits = rl_float_to_bits((float)em * 5.9604644775390625e-8f); /* 2^-24 */
    return rl_bits_to_float(bits | sign);
#endif
}

/* Round to nearest, ties to even, as the hardware does. Overflow gives
 * infinity (from 65520 up, the halfway point past the largest half, 65504);
 * NaN stays NaN (quiet). */
RL_HD fp16 float_to_fp16(float f)
{
#ifdef __CUDA_ARCH__
    return __half_as_ushort(__float2half_rn(f));
#else
    uint32_t x = rl_float_to_bits(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) /* NaN: keep the top of the payload, set quiet */
        return (fp16)(sign | 0x7e00u | ((ax >> 13) & 0x1ffu));
    if (ax >= 0x477ff000u) /* >= 65520: infinity */
        return (fp16)(sign | 0x7c00u);
    if (ax < 0x38800000u) { /* below 2^-14: a subnormal half, or zero */
        /* Adding 0.5 lines the mantissa up so that float's own rounding
         * (to nearest even) happens at 2^-24, the subnormal half's step. */
        float shifted = rl_bits_to_float(ax) + 0.5f;
        return (fp16)(sign | (rl_float_to_bits(shifted) - 0x3f000000u));
    }
    /* Normal: rebias, then round away the 13 low mantissa bits; adding
     * 0xfff plus the lowest kept bit makes ties go to even. A carry out of
     * the mantissa correctly bumps the exponent. */
    uint32_t odd = (ax >> 13) & 1u;
    ax = ax - 0x38000000u + 0xfffu + odd;
    return (fp16)(sign | (ax >> 13));
#endif
}

/* half.cu, for the tests: on the GPU, converts every one of the 65536
 * halves to float (all_halves: 65536 floats) and n floats to halves, with
 * the same functions (hardware conversions there). Host pointers. */
#ifdef __cplusplus
extern "C" {
#endif
void fp16_convert_on_device(const float *floats, int n, fp16 *halves, float *all_halves);
#ifdef __cplusplus
}
#endif

#endif
