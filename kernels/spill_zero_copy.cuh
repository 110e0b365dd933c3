/*
 * spill_zero_copy.cuh -- spill.cu's spill_zero_copy (a warp per row, the
 * slow rows read in place through the mapping, spread over the grid by
 * spill_schedule), included by spill.cu, whose launcher plans its grid
 * (spill.h: spill_grid); device code only, so that tests/emu/ compiles the
 * same text with g++.
 */
#ifndef KERNELS_SPILL_ZERO_COPY_CUH
#define KERNELS_SPILL_ZERO_COPY_CUH

#include "spill.h"
#include "warp.cuh"

#include <stdint.h>

enum { BLOCK = SPILL_BLOCK_WARPS * 32, LOADS = SPILL_LOADS };

/* One round of a lane's loads: LOADS words of the row from wp on (and of
 * x from xp on), 32 apart, all requested before the first is used.
 * FULL: all lie in the row (the loop's body, with no test); else only
 * those under `left`, the words the lane has left. LAND: each weight word
 * is also stored at lp. */
template <bool FULL, bool LAND>
__device__ __forceinline__ float dot_round(float acc, const uint4 *__restrict__ wp,
                                           const uint4 *__restrict__ xp, uint4 *__restrict__ lp, int left)
{
    uint4 wv[LOADS], xv[LOADS];
#pragma unroll
    for (int u = 0; u < LOADS; u++) {
        bool in = FULL || 32 * u < left;
        wv[u] = in ? __ldcs(wp + 32 * u) : make_uint4(0, 0, 0, 0);
        xv[u] = in ? __ldg(xp + 32 * u) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < LOADS; u++) {
        if (FULL || 32 * u < left) {
            if (LAND)
                lp[32 * u] = wv[u];
            float wf[8], xf[8];
            unpack8(wv[u], wf);
            unpack8(xv[u], xf);
#pragma unroll
            for (int i = 0; i < 8; i++)
                acc = fmaf(wf[i], xf[i], acc);
        }
    }
    return acc;
}

/* A warp per row, its tier and row from the schedule (spill_schedule,
 * spill.h: the slow rows' blocks spread over the grid), SPILL_LOADS
 * 16-byte streaming loads per lane requested before the first is used:
 * whole rounds, then the row's tail. LAND: the slow tier's read alone
 * (slow_tier_overlapped, a grid of slow rows only): every word of a row
 * is also stored at its place in `land`, the fast tier, so that the read
 * can be checked bit for bit as the copy's is. */
template <bool LAND>
__global__ void __launch_bounds__(BLOCK, 4) /* 4: ptxas then issues a round's loads together */
spill_zero_copy(float *__restrict__ y, const uint4 *__restrict__ fast, const uint4 *__restrict__ slow,
                const uint4 *__restrict__ x, uint4 *__restrict__ land, int fast_rows, int slow_rows,
                int fast_blocks, int slow_blocks, int k8)
{
    spill_block b = spill_schedule((int)blockIdx.x, fast_blocks, slow_blocks);
    int row = b.first + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= (b.slow ? slow_rows : fast_rows))
        return; /* whole warps leave; the kernel has no barrier */
    const uint4 *wp = (b.slow ? slow : fast) + (size_t)row * k8 + lane, *xp = x + lane;
    uint4 *lp = LAND ? land + (size_t)row * k8 + lane : NULL;
    int left = k8 - lane;
    float acc = 0;
#pragma unroll 1 /* a round is the unit of loads in flight: LOADS per lane, not twice that */
    for (; left > 32 * (LOADS - 1); left -= 32 * LOADS) {
        acc = dot_round<true, LAND>(acc, wp, xp, lp, left);
        wp += 32 * LOADS, xp += 32 * LOADS;
        if (LAND)
            lp += 32 * LOADS;
    }
    if (left > 0)
        acc = dot_round<false, LAND>(acc, wp, xp, lp, left);
    float s = warp_sum(acc);
    if (lane == 0)
        y[(b.slow ? fast_rows : 0) + row] = s;
}

#endif
