/*
 * warp.cuh -- small device helpers the CUDA kernel families share.
 */
#ifndef KERNELS_WARP_CUH
#define KERNELS_WARP_CUH

#include <cuda_fp16.h>
#include <stdint.h>
#include <string.h>

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

/* ---- tensor-core fragments and asynchronous copies (attention.cu) ---------- */

/* Each inline PTX below has an RL_EMULATOR branch: tests/emu/ compiles the
 * kernels with g++ and runs them on the CPU, these instructions by its own
 * model of them (tests/emu/ptx.cpp); nvcc never defines RL_EMULATOR. */

/* Two halves in one register (the lower index in the low half) as a __half2. */
__device__ __forceinline__ __half2 u32_as_half2(uint32_t v)
{
    __half2 h;
    memcpy(&h, &v, sizeof h);
    return h;
}

/* d += a b, one m16n8k16 product of FP16 with FP32 accumulators, in PTX's
 * fragment layout: lane = 4 g + t holds a = {A[g][2t..2t+1], A[g+8][2t..],
 * A[g][2t+8..], A[g+8][2t+8..]}, b = {B[2t..2t+1][g], B[2t+8..][g]} (two
 * halves per register, the lower index in the low half) and d = {D[g][2t],
 * D[g][2t+1], D[g+8][2t], D[g+8][2t+1]}. sm_75 has no m16n8k16: there it is
 * two m16n8k8, k = 0..7 then 8..15, whose fragments are these halves. */
__device__ __forceinline__ void mma_16816(float d[4], const uint32_t a[4], const uint32_t b[2])
{
#if defined(RL_EMULATOR)
    rl_emu_mma_16816(d, a, b);
#elif __CUDA_ARCH__ >= 800
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#elif __CUDA_ARCH__ >= 750
    asm("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
        "{%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(b[0]));
    asm("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
        "{%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[2]), "r"(a[3]), "r"(b[1]));
#else
    /* sm_70 has no m16n8k8 (its mma is m8n8k4, another layout): the same
     * product from the same fragments, by shuffles. Row g of A is in the
     * four lanes 4g..4g+3, column n of B in lanes 4n..4n+3. */
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    for (int s = 0; s < 4; s++) {
        float2 r[4], c[4];
        for (int i = 0; i < 4; i++) /* A[g][..], A[g+8][..], A[g][8+..], A[g+8][8+..] */
            r[i] = __half22float2(u32_as_half2(__shfl_sync(0xffffffffu, a[i], 4 * g + s)));
        for (int j = 0; j < 2; j++) /* B[..][2t + j], k < 8 and k >= 8 */
            for (int h = 0; h < 2; h++)
                c[2 * j + h] = __half22float2(u32_as_half2(__shfl_sync(0xffffffffu, b[h], 4 * (2 * t + j) + s)));
        for (int j = 0; j < 2; j++) {
            d[j] += r[0].x * c[2 * j].x + r[0].y * c[2 * j].y + r[2].x * c[2 * j + 1].x + r[2].y * c[2 * j + 1].y;
            d[2 + j] += r[1].x * c[2 * j].x + r[1].y * c[2 * j].y + r[3].x * c[2 * j + 1].x + r[3].y * c[2 * j + 1].y;
        }
    }
#endif
}

/* Four 8 x 8 matrices of halves from shared memory (a shared-window
 * address): lanes 8i..8i+7 give the rows of matrix i, 16 bytes each;
 * register i of lane 4 g + t gets row g, columns 2t and 2t + 1 of it
 * (_trans: rows 2t and 2t + 1 of column g, the transposed fragment). */
__device__ __forceinline__ void ldmatrix_x4(uint32_t r[4], uint32_t addr)
{
#if defined(RL_EMULATOR)
    rl_emu_ldmatrix_x4(r, addr, false);
#elif __CUDA_ARCH__ >= 750
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr)
                 : "memory");
#else /* sm_70 has no ldmatrix: row g's address from lane 8i + g, word t of it */
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    for (int i = 0; i < 4; i++) {
        uint32_t row = __shfl_sync(0xffffffffu, addr, 8 * i + g);
        asm volatile("ld.shared.b32 %0, [%1];" : "=r"(r[i]) : "r"(row + 4 * t) : "memory");
    }
#endif
}

__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t r[4], uint32_t addr)
{
#if defined(RL_EMULATOR)
    rl_emu_ldmatrix_x4(r, addr, true);
#elif __CUDA_ARCH__ >= 750
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr)
                 : "memory");
#else /* rows 2t and 2t + 1 (lanes 8i + 2t, 8i + 2t + 1), half g of each */
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    for (int i = 0; i < 4; i++) {
        uint32_t lo_row = __shfl_sync(0xffffffffu, addr, 8 * i + 2 * t);
        uint32_t hi_row = __shfl_sync(0xffffffffu, addr, 8 * i + 2 * t + 1);
        unsigned short lo, hi;
        asm volatile("ld.shared.u16 %0, [%1];" : "=h"(lo) : "r"(lo_row + 2 * g) : "memory");
        asm volatile("ld.shared.u16 %0, [%1];" : "=h"(hi) : "r"(hi_row + 2 * g) : "memory");
        r[i] = (uint32_t)lo | (uint32_t)hi << 16;
    }
#endif
}

/* 16 bytes from global to shared memory (a shared-window address), not
 * through L1 and not waited for: cp.async on sm_80 and later. sm_75 has no
 * cp.async: there the copy is an ordinary load and store, done when the
 * call returns, and commit and wait are nothing. */
__device__ __forceinline__ void cp_async16(uint32_t dst, const void *src)
{
#if defined(RL_EMULATOR)
    rl_emu_cp_async16(dst, src);
#elif __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
#else
    *static_cast<uint4 *>(__cvta_shared_to_generic(dst)) = *static_cast<const uint4 *>(src);
#endif
}

/* Close the group of the copies issued since the last commit. */
__device__ __forceinline__ void cp_async_commit(void)
{
#if defined(RL_EMULATOR)
    rl_emu_cp_async_commit();
#elif __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

/* Wait for every copy this thread issued (then a barrier makes all the
 * threads' copies visible to each other). */
__device__ __forceinline__ void cp_async_wait_all(void)
{
#if defined(RL_EMULATOR)
    rl_emu_cp_async_wait_all();
#elif __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group 0;" ::: "memory");
#endif
}

/* 16 bytes from shared memory (a shared-window address), read where the
 * call is: the compiler may not keep it in registers across a loop as it
 * may a plain load of memory the loop does not write. */
__device__ __forceinline__ uint4 lds128(uint32_t addr)
{
#if defined(RL_EMULATOR)
    return rl_emu_lds128(addr);
#else
    uint4 r;
    asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                 : "r"(addr)
                 : "memory");
    return r;
#endif
}

/* 2^x in one MUFU.EX2 (exp2f adds range handling around it); -inf gives
 * +0, and subnormal results flush to 0. */
__device__ __forceinline__ float ex2_approx(float x)
{
#if defined(RL_EMULATOR)
    return rl_emu_ex2_approx(x);
#else
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
#endif
}

/* Two floats to two halves in one register (lo in the low half), rounded
 * to nearest, and back. */
__device__ __forceinline__ uint32_t pack_half2(float lo, float hi)
{
    __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&h);
}

__device__ __forceinline__ float2 unpack_half2(uint32_t u)
{
    return __half22float2(*reinterpret_cast<__half2 *>(&u));
}

/* a and b as two pairs of halves, hi (rounded) and lo (what hi's rounding
 * left, rounded): a product taken with hi and then with lo is exact to
 * about 22 bits where hi alone keeps 11 (an error of up to 2^-12 of each
 * value). */
__device__ __forceinline__ void pack_half2_split(float a, float b, uint32_t &hi, uint32_t &lo)
{
    hi = pack_half2(a, b);
    const float2 h = unpack_half2(hi);
    lo = pack_half2(a - h.x, b - h.y);
}

#endif
