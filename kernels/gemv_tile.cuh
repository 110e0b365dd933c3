/*
 * gemv_tile.cuh -- gemv.cu's variant 2, gemv_tile (a warp per 16 rows,
 * mma.sync m16n8k8, k split across the warps of a block through shared
 * memory), included by gemv.cu, whose launcher plans its grid (gemv.h:
 * gemv_cuda_plan_for); device code only, so that tests/emu/ compiles the
 * same text with g++.
 */
#ifndef KERNELS_GEMV_TILE_CUH
#define KERNELS_GEMV_TILE_CUH

#include "gemv.h"
#include "warp.cuh"

#include <stdint.h>
#include <string.h>

/* ---- variant 2: a warp per 16 rows, tensor-core products ------------------ */

/* The layout (gemv.h: the plan). A warp owns a tile of 16 rows; lane
 * (g, t) = (lane / 4, lane % 4) loads, per step, the 16-byte chunk c + t
 * (8 halves, k = 8 (c + t) .. + 7) of rows g and g + 8 and of token g, so
 * the 4 lanes of a row read 64 contiguous bytes and a warp 16 rows x 64
 * bytes; its next steps continue along the same rows. mma m16n8k8 wants,
 * in lane (g, t), the A pairs (row g; row g + 8) at k 2t, 2t + 1 and the
 * B pair (column g) at the same k, the D values (rows g, g + 8; columns
 * 2t, 2t + 1). A dot product does not care in which order k runs, so
 * each 32-bit word j of the lane's chunks is taken as its k 2t, 2t + 1 in
 * product j: the lane's own words are its fragments, with no shuffle,
 * and the same renaming holds for A and B (it depends on t alone). Four
 * products per step, one per word. Tokens are the 8 columns: lanes of
 * g >= n load token n - 1 again (the same addresses as lane n - 1's,
 * served by the same request) and their columns are never stored. */

/* Two halves in a 32-bit word, as the pair they are (the lower k low). */
__device__ __forceinline__ __half2 u32_half2(uint32_t v)
{
    __half2 h;
    memcpy(&h, &v, sizeof h);
    return h;
}

/* d += a b for one m16n8k8 product: a0, a1 the halves of rows g and g + 8,
 * b those of column g, all at k 2t, 2t + 1; d rows g, g + 8 x columns 2t,
 * 2t + 1. */
__device__ __forceinline__ void mma_16x8x8(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t b)
{
#if defined(RL_EMULATOR) /* tests/emu/: its model of the instruction (warp.cuh says why) */
    rl_emu_mma_1688(d, a0, a1, b);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 750
    /* No mma of this shape before sm_75 (Volta): the same product from
     * the fragments, through shuffles. Correct, not fast. */
    int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll 1 /* unrolled, the 16 products of a round spill at 80 registers */
    for (int q = 0; q < 4; q++) { /* k 2q, 2q + 1, held by lanes (., q) */
        float2 r0 = __half22float2(u32_half2(__shfl_sync(0xffffffffu, a0, 4 * g + q)));
        float2 r1 = __half22float2(u32_half2(__shfl_sync(0xffffffffu, a1, 4 * g + q)));
        float2 c0 = __half22float2(u32_half2(__shfl_sync(0xffffffffu, b, 4 * (2 * t) + q)));
        float2 c1 = __half22float2(u32_half2(__shfl_sync(0xffffffffu, b, 4 * (2 * t + 1) + q)));
        d[0] = fmaf(r0.x, c0.x, fmaf(r0.y, c0.y, d[0]));
        d[1] = fmaf(r0.x, c1.x, fmaf(r0.y, c1.y, d[1]));
        d[2] = fmaf(r1.x, c0.x, fmaf(r1.y, c0.y, d[2]));
        d[3] = fmaf(r1.x, c1.x, fmaf(r1.y, c1.y, d[3]));
    }
#else
    asm("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, "
        "{%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(b));
#endif
}

/* One step: the lane's chunks of rows g, g + 8 and of its token, word j
 * of each in product j. */
__device__ __forceinline__ void tile_step(float (&d)[4], uint4 a, uint4 b, uint4 x)
{
    mma_16x8x8(d, a.x, b.x, x.x);
    mma_16x8x8(d, a.y, b.y, x.y);
    mma_16x8x8(d, a.z, b.z, x.z);
    mma_16x8x8(d, a.w, b.w, x.w);
}

/* The warp's share of a tile: rounds of GEMV_CUDA_STEPS steps, the
 * warps of the tile taking the rounds in turn (share, share + split, ...).
 * Each round issues all its loads (4 KB of weights a warp) before its
 * first product, then the products, into two accumulators by turns, so
 * that a product waits on the one two before it, not on the last (with
 * one per step, ptxas left two loads until after the first product, to
 * find their registers within 80). wa, wb, xt point at the lane's rows
 * and token, chunk t. */
__device__ __forceinline__ void tile_share(float (&d)[4], const uint4 *__restrict__ wa,
                                           const uint4 *__restrict__ wb, const uint4 *__restrict__ xt,
                                           int k8, int t, int share, int split)
{
    constexpr int U = GEMV_CUDA_STEPS;
    float acc[2][4] = {};
    int c = share * 4 * U;
    for (; c + 4 * U <= k8; c += split * 4 * U) { /* every lane's chunks inside the row */
        uint4 a[U], b[U], x[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            a[u] = __ldcs(wa + c + 4 * u); /* streamed: read once, evict first */
            b[u] = __ldcs(wb + c + 4 * u);
            x[u] = __ldg(xt + c + 4 * u);  /* x: read by every warp, kept in L1 */
        }
#pragma unroll
        for (int u = 0; u < U; u++)
            tile_step(acc[u % 2], a[u], b[u], x[u]);
    }
    if (c < k8) { /* the row's last round: lanes past the end load nothing and add zeros */
        uint4 a[U], b[U], x[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            a[u] = b[u] = x[u] = make_uint4(0, 0, 0, 0);
            if (c + 4 * u + t < k8) {
                a[u] = __ldcs(wa + c + 4 * u);
                b[u] = __ldcs(wb + c + 4 * u);
                x[u] = __ldg(xt + c + 4 * u);
            }
        }
#pragma unroll
        for (int u = 0; u < U; u++)
            tile_step(acc[u % 2], a[u], b[u], x[u]);
    }
#pragma unroll
    for (int i = 0; i < 4; i++)
        d[i] = acc[0][i] + acc[1][i];
}

/* y[token][row], where both exist. */
__device__ __forceinline__ void store_one(float *__restrict__ y, int rows, int n, int row, int token, float v)
{
    if (row < rows && token < n)
        y[(size_t)token * rows + row] = v;
}

/* At most 80 registers a thread: three blocks (24 warps, 96 KB of weights
 * in flight) per SM. */
enum { TILE_MIN_BLOCKS = 3 };

/* Launched with GEMV_CUDA_BLOCK_WARPS warps; warp w takes share w % split
 * of tile w / split of its block. k8 = k / 8. */
__global__ void __launch_bounds__(32 * GEMV_CUDA_BLOCK_WARPS, TILE_MIN_BLOCKS)
gemv_tile(float *__restrict__ y, const uint4 *__restrict__ w, const uint4 *__restrict__ x, int rows, int k8,
          int n, int split)
{
    constexpr int TILE = GEMV_CUDA_TILE_ROWS;
    __shared__ float4 partial[GEMV_CUDA_BLOCK_WARPS][32];
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    int share = warp % split;
    int row0 = (blockIdx.x * (GEMV_CUDA_BLOCK_WARPS / split) + warp / split) * TILE;
    bool active = row0 < rows; /* the same in the whole warp, and in the warps of a tile */
    float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    if (active) {
        /* A missing row of the last tile reads the last row again, unused. */
        const uint4 *wa = w + (size_t)min(row0 + g, rows - 1) * k8 + t;
        const uint4 *wb = w + (size_t)min(row0 + g + 8, rows - 1) * k8 + t;
        const uint4 *xt = x + (size_t)min(g, n - 1) * k8 + t;
        tile_share(d, wa, wb, xt, k8, t, share, split);
    }
    if (split > 1) { /* the same in the whole block: every thread reaches the barrier */
        partial[warp][lane] = make_float4(d[0], d[1], d[2], d[3]);
        __syncthreads();
        if (share == 0)
#pragma unroll 1 /* at most 7 adds a tile, once: rolled, it stays smaller than the main loop */
            for (int i = 1; i < split; i++) {
                float4 p = partial[warp + i][lane];
                d[0] += p.x, d[1] += p.y, d[2] += p.z, d[3] += p.w;
            }
    }
    if (active && share == 0) {
        store_one(y, rows, n, row0 + g, 2 * t, d[0]);
        store_one(y, rows, n, row0 + g, 2 * t + 1, d[1]);
        store_one(y, rows, n, row0 + g + 8, 2 * t, d[2]);
        store_one(y, rows, n, row0 + g + 8, 2 * t + 1, d[3]);
    }
}

#endif
