/*
 * warp.cuh -- small device helpers the CUDA kernel families share.
 */
#ifndef KERNELS_WARP_CUH
#define KERNELS_WARP_CUH

#include <cuda_fp16.h>

/* The sum of v over the 32 lanes of a warp, in every lane. */
__device__ __forceinline__ float warp_sum(float v)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

/* Eight halves in one 16-byte word to eight floats. */
__device__ __forceinline__ void unpack8(uint4 v, float f[8])
{
    const __half2 *h = reinterpret_cast<const __half2 *>(&v);
#pragma unroll
    for (int i = 0; i < 4; i++) {
        float2 p = __half22float2(h[i]);
        f[2 * i] = p.x;
        f[2 * i + 1] = p.y;
    }
}

#endif
