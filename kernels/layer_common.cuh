/*
 * layer_common.cuh -- the device helpers experiment 09's forward kernels
 * (layer_kernels.cuh) and backward kernels (layer_backward_kernels.cuh)
 * share: fast reciprocals, sine and cosine, 16-byte loads and stores, and
 * a row's 4 columns on the vector or the scalar path. Every function is
 * inline, so both .cu files (and the emulator) may include it.
 */
#ifndef KERNELS_LAYER_COMMON_CUH
#define KERNELS_LAYER_COMMON_CUH

#include <math.h>

/* 1 / sqrt(x) and 1 / x in one MUFU instruction each (2 ulp at most):
 * IEEE's 1.0f / sqrtf(x) and 1.0f / x add a slow path that is a call,
 * whose saved registers ptxas counts as spill stores; and sine and cosine
 * without sincosf's reduction of huge arguments (a local-memory table):
 * the argument here is within [-pi, pi]. The emulator's branch: the
 * IEEE functions (its shim has neither intrinsic). */
__device__ __forceinline__ float lk_rsqrt(float x)
{
#if defined(RL_EMULATOR)
    return 1.0f / sqrtf(x);
#else
    return rsqrtf(x);
#endif
}

__device__ __forceinline__ float lk_rcp(float x)
{
#if defined(RL_EMULATOR)
    return 1.0f / x;
#else
    return __fdividef(1.0f, x);
#endif
}

__device__ __forceinline__ void lk_sincos(float x, float *s, float *c)
{
#if defined(RL_EMULATOR)
    sincosf(x, s, c);
#else
    __sincosf(x, s, c);
#endif
}

__device__ __forceinline__ float4 lk_ld4(const float *p) { return *reinterpret_cast<const float4 *>(p); }
__device__ __forceinline__ void lk_st4(float *p, float4 v) { *reinterpret_cast<float4 *>(p) = v; }

/* The 4 columns c .. c + 3 of p: VEC, one 16-byte load (c < n then
 * means all 4); else 4 loads, those at n or past it not made (`none`). */
template <bool VEC> __device__ __forceinline__ void lk_load4(float (&v)[4], const float *p, int c, int n, float none)
{
    if constexpr (VEC) {
        const float4 t = lk_ld4(p + c);
        v[0] = t.x, v[1] = t.y, v[2] = t.z, v[3] = t.w;
    } else {
#pragma unroll
        for (int e = 0; e < 4; e++)
            v[e] = c + e < n ? p[c + e] : none;
    }
}

template <bool VEC> __device__ __forceinline__ void lk_store4(float *p, const float (&v)[4], int c, int n)
{
    if constexpr (VEC) {
        lk_st4(p + c, make_float4(v[0], v[1], v[2], v[3]));
    } else {
#pragma unroll
        for (int e = 0; e < 4; e++)
            if (c + e < n)
                p[c + e] = v[e];
    }
}

#endif
