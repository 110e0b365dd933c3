/*
 * moe_plan.cuh -- moe.cu's moe_plan_kernel (a plan's experts in one launch,
 * k split across warps, the parts added in shared memory between barriers),
 * included by moe.cu, whose launcher plans its grid (moe.h: moe_grid);
 * device code only, so that tests/emu/ compiles the same text with g++.
 */
#ifndef KERNELS_MOE_PLAN_CUH
#define KERNELS_MOE_PLAN_CUH

#include "moe.h"
#include "warp.cuh"

#include <stdint.h>

enum { BLOCK = MOE_BLOCK_WARPS * 32, WARPS = MOE_BLOCK_WARPS, LOADS = MOE_LOADS };

/* The loads a lane issues per round with NT tokens in the pass: each
 * weight word brings NT words of x with it, and a round's words are all
 * in registers at once, so more tokens take fewer words per round (the
 * kernel then fits its launch bounds' three blocks an SM with no spill).
 * One or two tokens (batch 1) keep MOE_LOADS: 2 KiB of weights in flight
 * per warp. */
template <int NT> struct round_of {
    enum { loads = NT <= 2 ? LOADS : NT <= 4 ? LOADS / 2 : LOADS / 4 };
};

/* One round of a lane's loads: L words of the weight row from wp on, 32
 * apart, all requested before the first is used, each multiplied with
 * the NT tokens' words from x + xp[t] on: acc[t] += w . x_t. FULL: all L
 * words lie in the part (the loop's body, with no test); else only those
 * under `left`, the words the lane has left (the part's tail). */
template <int NT, int L, bool FULL>
__device__ __forceinline__ void dot_round(float acc[MOE_PASS_TOKENS], const uint4 *__restrict__ wp,
                                          const uint4 *__restrict__ x, const int xp[MOE_PASS_TOKENS], int left)
{
    uint4 wv[L];
#pragma unroll
    for (int u = 0; u < L; u++)
        wv[u] = FULL || 32 * u < left ? __ldcs(wp + 32 * u) : make_uint4(0, 0, 0, 0);
#pragma unroll
    for (int u = 0; u < L; u++) {
        if (FULL || 32 * u < left) {
            float wf[8];
            unpack8(wv[u], wf);
#pragma unroll
            for (int t = 0; t < NT; t++) {
                float xf[8];
                unpack8(__ldg(x + xp[t] + 32 * u), xf);
#pragma unroll
                for (int i = 0; i < 8; i++)
                    acc[t] = fmaf(wf[i], xf[i], acc[t]);
            }
        }
    }
}

/* NT tokens' dot products over a part's words [lo, hi) of one weight row,
 * lane by lane: whole rounds, then the tail, the row's pointer and the
 * tokens' offsets into x stepped a round at a time (32-bit offsets, not
 * pointers: eight of them fit where eight pointers would spill; the
 * launcher checks that x's words fit an int). tokens: the pass's NT
 * token indices (their rows of x, k8 words each). */
template <int NT>
__device__ __forceinline__ void dot_part(float acc[MOE_PASS_TOKENS], const uint4 *__restrict__ wr,
                                         const uint4 *__restrict__ x, const int *__restrict__ tokens,
                                         int k8, int lo, int hi, int lane)
{
    enum { L = round_of<NT>::loads };
    int c = lo + lane, left = hi - c;
    const uint4 *wp = wr + c;
    int xp[MOE_PASS_TOKENS];
#pragma unroll
    for (int t = 0; t < NT; t++)
        xp[t] = tokens[t] * k8 + c;
#pragma unroll 1 /* a round is the unit of loads in flight: L per lane, not twice that */
    for (; left > 32 * (L - 1); left -= 32 * L) {
        dot_round<NT, L, true>(acc, wp, x, xp, left);
        wp += 32 * L;
#pragma unroll
        for (int t = 0; t < NT; t++)
            xp[t] += 32 * L;
    }
    if (left > 0)
        dot_round<NT, L, false>(acc, wp, x, xp, left);
}

__global__ void __launch_bounds__(BLOCK, 3)
moe_plan_kernel(float *__restrict__ y, const uint4 *__restrict__ w, const uint4 *__restrict__ x,
                const int *__restrict__ expert, const int *__restrict__ start,
                const int *__restrict__ token, const int *__restrict__ out, int rows, int k8,
                int split, int chunk)
{
    __shared__ float partial[WARPS][MOE_PASS_TOKENS];
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int row = blockIdx.x * (WARPS / split) + warp / split, part = warp % split;
    /* the same in every lane of a warp and in every part of a row; a warp
     * past the last row stays for the block's barriers */
    bool live = row < rows;
    int lo, hi;
    moe_part_range(k8, chunk, part, &lo, &hi);
    int e = expert[blockIdx.y], first = start[blockIdx.y], last = start[blockIdx.y + 1];
    const uint4 *wr = w + ((size_t)e * rows + (live ? row : 0)) * k8;
    /* the passes depend on blockIdx.y alone: every thread of the block
     * takes each one, and reaches each barrier */
    for (int s = first; s < last; s += MOE_PASS_TOKENS) {
        int n = min(last - s, (int)MOE_PASS_TOKENS);
        float acc[MOE_PASS_TOKENS] = {};
        if (live) {
            const int *tk = token + s;
            switch (n) {
            case 1: dot_part<1>(acc, wr, x, tk, k8, lo, hi, lane); break;
            case 2: dot_part<2>(acc, wr, x, tk, k8, lo, hi, lane); break;
            case 3: dot_part<3>(acc, wr, x, tk, k8, lo, hi, lane); break;
            case 4: dot_part<4>(acc, wr, x, tk, k8, lo, hi, lane); break;
            case 5: dot_part<5>(acc, wr, x, tk, k8, lo, hi, lane); break;
            case 6: dot_part<6>(acc, wr, x, tk, k8, lo, hi, lane); break;
            case 7: dot_part<7>(acc, wr, x, tk, k8, lo, hi, lane); break;
            default: dot_part<8>(acc, wr, x, tk, k8, lo, hi, lane); break;
            }
        }
        /* each token's sum over the warp's part: the row's, where one
         * warp takes the row; else its part's, for the row's first warp */
#pragma unroll
        for (int t = 0; t < MOE_PASS_TOKENS; t++) {
            if (t < n) { /* n is the same in every lane: the shuffles see all of them */
                float v = warp_sum(acc[t]);
                if (lane == 0 && split == 1 && live)
                    y[(size_t)out[s + t] * rows + row] = v;
                else if (lane == 0 && split > 1)
                    partial[warp][t] = v;
            }
        }
        if (split == 1) /* the same for the whole grid: no barrier is skipped by some */
            continue;
        __syncthreads();
        if (live && part == 0 && lane < n) { /* the row's parts, in order */
            float v = 0;
            for (int p = 0; p < split; p++)
                v += partial[warp + p][lane];
            y[(size_t)out[s + lane] * rows + row] = v;
        }
        __syncthreads(); /* the next pass writes partial again */
    }
}

#endif
