/*
 * quant_dp4a.cuh -- quant.cu's variant 3, gemv_dp4a (x quantized to 8 bits
 * in shared memory, dp4a, shuffles), included by quant.cu, whose launcher
 * plans its grid (quant_dp4a.h: quant_dp4a_warps_per_block); device code
 * only, so that tests/emu/ compiles the same text with g++. The lane
 * arithmetic is quant_dp4a.h's.
 */
#ifndef KERNELS_QUANT_DP4A_CUH
#define KERNELS_QUANT_DP4A_CUH

#include "quant.h"
#include "quant_dp4a.h"
#include "warp.cuh"

/* ---- variant 3: x in 8 bits, dp4a ---------------------------------------------- */

/* One name per format for quant_dp4a.h's lane functions. */
__device__ __forceinline__ q8_lane lane_load(const q8_block *b, int l) { return q8_lane_load(b, l); }
__device__ __forceinline__ q6_lane lane_load(const q6_block *b, int l) { return q6_lane_load(b, l); }
__device__ __forceinline__ q5_lane lane_load(const q5_block *b, int l) { return q5_lane_load(b, l); }
__device__ __forceinline__ q4_lane lane_load(const q4_block *b, int l) { return q4_lane_load(b, l); }
__device__ __forceinline__ q2_lane lane_load(const q2_block *b, int l) { return q2_lane_load(b, l); }
__device__ __forceinline__ float lane_dot(q8_lane w, const quant_x_lane *x) { return q8_lane_dot(w, x); }
__device__ __forceinline__ float lane_dot(q6_lane w, const quant_x_lane *x) { return q6_lane_dot(w, x); }
__device__ __forceinline__ float lane_dot(q5_lane w, const quant_x_lane *x) { return q5_lane_dot(w, x); }
__device__ __forceinline__ float lane_dot(q4_lane w, const quant_x_lane *x) { return q4_lane_dot(w, x); }
__device__ __forceinline__ float lane_dot(q2_lane w, const quant_x_lane *x) { return q2_lane_dot(w, x); }

enum { DP4A_UNROLL = 4 }; /* blocks of each row whose loads are in flight together */
static_assert((int)DP4A_UNROLL == (int)QUANT_GROUP_BLOCKS, "a group's scales are one load a lane");

/* q8, q5 and q4 begin their blocks with eight FP16 scales: their lanes load
 * the words alone, and each group's 32 scales come in one 2-byte load a
 * lane, handed on by a shuffle at the dot (quant_dp4a.h,
 * quant_group_scale_*): a register and a load less per block in flight.
 * q6 and q2 (one scale per 16 weights, and a block-wide d) load theirs. */
__host__ __device__ constexpr bool group_scales(const q8_block *) { return true; }
__host__ __device__ constexpr bool group_scales(const q5_block *) { return true; }
__host__ __device__ constexpr bool group_scales(const q4_block *) { return true; }
template <typename Block> __host__ __device__ constexpr bool group_scales(const Block *) { return false; }
__device__ __forceinline__ q8_lane lane_words(const q8_block *b, int l) { return q8_lane_words(b, l); }
__device__ __forceinline__ q5_lane lane_words(const q5_block *b, int l) { return q5_lane_words(b, l); }
__device__ __forceinline__ q4_lane lane_words(const q4_block *b, int l) { return q4_lane_words(b, l); }
template <typename Block> __device__ __forceinline__ auto lane_words(const Block *b, int l) { return lane_load(b, l); }

/* Every thread block quantizes the whole of x before its rows' dots: in
 * the SASS that is 91 instructions per lane and 256 values (107 with the
 * clamp), as many as eight rows' q4 dots. Up to sixteen warps per thread
 * block share it (quant_dp4a_warps_per_block: fewer for a short matrix). */
enum { DP4A_BLOCK = QUANT_DP4A_MAX_WARPS * 32 };

/* The threads an SM holds, for the arch being compiled (1024 on sm_75, 1536
 * on sm_86, sm_87, sm_89 and sm_120, 2048 on sm_80, sm_90 and sm_100); the
 * host's pass, which ignores launch bounds, takes 2048. */
__host__ __device__ constexpr int sm_threads()
{
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 750 || __CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870 || \
                               __CUDA_ARCH__ == 890 || __CUDA_ARCH__ >= 1200)
    return __CUDA_ARCH__ == 750 ? 1024 : 1536;
#else
    return 2048;
#endif
}

/* Whether ptxas keeps the kernels outside the three-block set within 64
 * registers unasked (two blocks of 512 per SM): on sm_90 it does (q6 58,
 * q2 51, q8 and q4 at two rows 64 and 40), and asked for two blocks it
 * spread into all 64, spilled a register and grew q6's and two-row q8's
 * loops by 6-7 %; on sm_80 to sm_89, unasked, it gives them 84 to 128
 * registers: one block per SM. (ptxas of CUDA 13.0; a minimum of 1 made
 * it take 84-128 on sm_90 too, 0 is no minimum, as none is given.) */
__host__ __device__ constexpr bool two_unasked()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900
    return true;
#else
    return false;
#endif
}

/* The blocks of 512 per SM a kernel is built for, its launch bound's
 * minimum: what a memory-bound GEMV needs is warps enough to keep its
 * loads in flight, and 64 registers a thread (two blocks, 32 warps) is
 * what these loops hold without a spill in them. One row of q8, q5 or q4
 * fits 40 (three blocks, 48 warps), where the SM holds three, with its
 * scales loaded a group at a time (above): with a scale register per block
 * in flight, q8 spilled at 40 on sm_80 to sm_89, inside its loop on sm_86.
 * Four blocks would need 32 registers, fewer than the eight blocks' loads
 * in flight take. The registers and
 * blocks per SM of every kernel, per built SM, are in the build's
 * kernel-resources.txt (make), and a test holds the dp4a kernels to two
 * blocks or more. */
__host__ __device__ constexpr bool three_fit(const q8_block *) { return true; }
__host__ __device__ constexpr bool three_fit(const q5_block *) { return true; }
__host__ __device__ constexpr bool three_fit(const q4_block *) { return true; }
template <typename Block> __host__ __device__ constexpr bool three_fit(const Block *) { return false; }
template <typename Block> __host__ __device__ constexpr int dp4a_min_blocks(const Block *b, int rows_per_warp)
{
    return rows_per_warp == 1 && three_fit(b) && sm_threads() >= 3 * DP4A_BLOCK ? 3
           : two_unasked() ? 0 : 2;
}

/* q8 keeps x's bytes in natural order; the nibble formats split them into
 * even and odd weights. */
__device__ constexpr bool natural_order(const q8_block *) { return true; }
template <typename Block> __device__ constexpr bool natural_order(const Block *) { return false; }

/* x (nb blocks of 256 halves) to 8-bit integers in shared memory, each
 * lane's words ready for its dots (quant_x_words: one 16-byte load per
 * block and row), one scale per 32 values: warp w of W takes blocks w,
 * w + W, ...; the four lanes of a group of 32 agree on its scale through
 * two shuffles. The arithmetic is quant_x8_scale's and quant_x8_group's,
 * rounding for rounding, so the CPU's error bound holds for these
 * integers too. */
template <bool NATURAL>
__device__ __forceinline__ void quantize_x_shared(const uint4 *__restrict__ x, int nb, uint4 *xs)
{
    int lane = threadIdx.x % 32, warps = blockDim.x / 32;
    for (int b = threadIdx.x / 32; b < nb; b += warps) {
        float v[8], amax = 0.0f;
        unpack8(__ldg(x + (size_t)b * 32 + lane), v);
#pragma unroll
        for (int i = 0; i < 8; i++)
            amax = fmaxf(amax, fabsf(v[i]));
        amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 1));
        amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 2));
        float d = __fdiv_rn(amax, 127.0f), id = d != 0.0f ? __frcp_rn(d) : 0.0f;
        /* No clamp to +-127 (the CPU's is a no-op): |v| <= amax, so |v id|
         * <= 127 (1 + 3 2^-24) < 127.5 after the three roundings of d, id
         * and the product, and rounds to at most 127. Two instructions per
         * value fewer in the SASS. */
        uint32_t word[2] = {0, 0};
#pragma unroll
        for (int i = 0; i < 8; i++) {
            int q = __float2int_rn(__fmul_rn(v[i], id));
            word[i / 4] |= ((uint32_t)q & 0xffu) << (8 * (i % 4));
        }
        quant_x_lane xl = quant_x_lane_make(word[0], word[1], d);
        quant_x_words xw = quant_x_words_pack(&xl, NATURAL);
        xs[(size_t)b * 32 + lane] = make_uint4(xw.a, xw.b, xw.sum, xw.d);
    }
}

/* Loads lane's words of blocks b .. b + DP4A_UNROLL - 1 of each row, and
 * with group scales the group's scales (d[r]): only loads (nothing here
 * uses a loaded value, so the warp goes on to the blocks before them while
 * these are in flight). CHECKED (the row's last, partial round): a block
 * past the row's end is not loaded, its words stay zero. */
template <bool CHECKED, typename Block, typename Lane, int R>
__device__ __forceinline__ void load_lanes(Lane (&to)[R][DP4A_UNROLL], uint32_t (&d)[R],
                                           const Block *const (&wr)[R], int b, int nb, int lane)
{
#pragma unroll
    for (int r = 0; r < R; r++) {
#pragma unroll
        for (int u = 0; u < DP4A_UNROLL; u++) {
            to[r][u] = Lane{};
            if (!CHECKED || b + u < nb)
                to[r][u] = lane_words(wr[r] + b + u, lane);
        }
        if constexpr (group_scales(static_cast<const Block *>(nullptr))) {
            int g = b + quant_group_scale_block(lane);
            d[r] = 0;
            if (!CHECKED || g < nb)
                d[r] = wr[r][g].d[quant_group_scale_index(lane)];
        }
    }
}

/* The lane's x words of one block, as quantize_x_shared left them. q8
 * (natural order) has no use for the sum: it asks for the other three
 * words, and where ptxas does not merge the reads into one, the sum takes
 * no register (without this, sm_80's two-row q8 kernel with TAIL spilled). */
template <bool NATURAL> __device__ __forceinline__ quant_x_lane x_lane_at(const uint4 *at)
{
    quant_x_words xw;
    if (NATURAL) {
        uint2 ab = *reinterpret_cast<const uint2 *>(at);
        xw = {ab.x, ab.y, 0u, reinterpret_cast<const uint32_t *>(at)[3]};
    } else {
        uint4 v = *at;
        xw = {v.x, v.y, v.z, v.w};
    }
    return quant_x_words_lane(xw, NATURAL);
}

/* Adds the lane's share of blocks b .. b + DP4A_UNROLL - 1 of each row
 * (CHECKED: those past the row's end count zero, their x words read from
 * the last block's, inside xs). */
template <bool CHECKED, bool NATURAL, typename Block, typename Lane, int R>
__device__ __forceinline__ void dot_lanes(float (&acc)[R], const Lane (&cur)[R][DP4A_UNROLL], const uint32_t (&d)[R],
                                          const Block *, const uint4 *xs, int b, int nb, int lane)
{
#pragma unroll
    for (int u = 0; u < DP4A_UNROLL; u++) {
        quant_x_lane xl = x_lane_at<NATURAL>(xs + (CHECKED ? min(b + u, nb - 1) : b + u) * 32 + lane);
#pragma unroll
        for (int r = 0; r < R; r++) {
            Lane wv = cur[r][u];
            if constexpr (group_scales(static_cast<const Block *>(nullptr)))
                wv.d = (fp16)__shfl_sync(0xffffffffu, d[r], quant_group_scale_source(u, lane));
            float part = lane_dot(wv, &xl);
            acc[r] += CHECKED && b + u >= nb ? 0.0f : part;
        }
    }
}

/* The R rows of a warp from row0 (a missing last row reads the previous
 * one, unused). */
template <typename Block, int R>
__device__ __forceinline__ void row_pointers(const Block *(&wr)[R], const Block *w, int rows, int nb, int row0)
{
#pragma unroll
    for (int r = 0; r < R; r++)
        wr[r] = w + (size_t)min(row0 + r, rows - 1) * nb;
}

/* The first of the warp's rows, from the special registers. Read again
 * after the loop, it costs three instructions; kept from before, it takes
 * a register through the loop, which ptxas spilled where the loop needs
 * all 40 (volatile: so that the compiler cannot reuse the earlier value). */
__device__ __forceinline__ int warp_first_row(int rows_per_warp)
{
    unsigned block, threads, thread;
#if defined(RL_EMULATOR) /* tests/emu/: the same registers (warp.cuh says why) */
    block = blockIdx.x, threads = blockDim.x, thread = threadIdx.x;
#else
    asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(block));
    asm volatile("mov.u32 %0, %%ntid.x;" : "=r"(threads));
    asm volatile("mov.u32 %0, %%tid.x;" : "=r"(thread));
#endif
    return (int)(block * (threads / 32) + thread / 32) * rows_per_warp;
}

/* Two groups of blocks per iteration, in turn: while one group's dots run,
 * the other group's loads are in flight (no copy between the buffers).
 * The loop takes whole pairs of groups with no check; with TAIL (nb not a
 * multiple of two groups) the rest follows in one checked round, outside
 * the loop, so that the loop's registers are the same in both kernels.
 * Launched with blockDim.x / 32 warps, a warp per R rows. */
template <typename Block, int R, bool TAIL>
__global__ void __launch_bounds__(DP4A_BLOCK, dp4a_min_blocks(static_cast<const Block *>(nullptr), R))
gemv_dp4a(float *__restrict__ y, const Block *__restrict__ w, const uint4 *__restrict__ x, int rows, int nb)
{
    extern __shared__ uint4 xs[]; /* nb * 32 lanes' words */
    constexpr bool NATURAL = natural_order(static_cast<const Block *>(nullptr));
    constexpr int U = DP4A_UNROLL;
    typedef decltype(lane_load(w, 0)) Lane;
    int lane = threadIdx.x % 32, row0 = (blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32) * R;
    bool active = row0 < rows;
    const Block *wr[R];
    row_pointers(wr, w, rows, nb, row0);
    int whole = TAIL ? nb - nb % (2 * U) : nb; /* blocks the loop takes */
    Lane one[R][U], two[R][U];
    uint32_t one_d[R], two_d[R]; /* the groups' scales (q8, q5, q4) */
    if (!TAIL || whole > 0) /* without TAIL the launcher ensures a first group */
        load_lanes<false>(one, one_d, wr, 0, nb, lane); /* on their way while x is quantized */
    quantize_x_shared<NATURAL>(x, nb, xs);
    __syncthreads();
    if (!active)
        return;
    float acc[R] = {};
    for (int b = 0; b < whole; b += 2 * U) {
        load_lanes<false>(two, two_d, wr, b + U, nb, lane);
        dot_lanes<false, NATURAL>(acc, one, one_d, w, xs, b, nb, lane);
        if (b + 2 * U < whole) /* no loads past the row otherwise */
            load_lanes<false>(one, one_d, wr, b + 2 * U, nb, lane);
        dot_lanes<false, NATURAL>(acc, two, two_d, w, xs, b + U, nb, lane);
    }
    if (TAIL) /* the rows' pointers again: the loop's have moved on */
        row_pointers(wr, w, rows, nb, warp_first_row(R));
    for (int b = whole; TAIL && b < nb; b += U) { /* the last one or two groups, one at a time */
        load_lanes<true>(one, one_d, wr, b, nb, lane);
        dot_lanes<true, NATURAL>(acc, one, one_d, w, xs, b, nb, lane);
    }
    row0 = warp_first_row(R);
#pragma unroll
    for (int r = 0; r < R; r++) {
        float s = warp_sum(acc[r]);
        if (lane == 0 && row0 + r < rows)
            y[row0 + r] = s;
    }
}

#endif
