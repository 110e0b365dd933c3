/*
 * quant_mma.cuh -- quant.cu's variant 5, gemm_mma: a few tokens through
 * tensor-core MMAs on weights that stay packed in memory, dequantized in
 * registers straight into the MMA's operand (the design of Marlin,
 * Frantar et al., "MARLIN: Mixed-Precision Auto-Regressive Parallel
 * Inference on Large Language Models", 2024; read for the idea, no code
 * taken). Included by quant.cu, whose launcher plans the grid
 * (quant_mma.h); device code only, so that tests/emu/ compiles the same
 * text with g++.
 *
 * y = x W^T as D = A B with m16n8k16 (warp.cuh's mma_16816): A is 16
 * tokens of x, B is 16 k by 8 rows of W. B's fragment gives lane 4 g + t
 * row g and the k slots {2t, 2t + 1} (one register) and {2t + 8, 2t + 9}
 * (the other). A dot product does not care in which order its k come,
 * only that A and B agree: lane (g, t) owns weights 64 t .. 64 t + 63 of
 * row g's block of 256, eight runs of eight, which are exactly quant.h's
 * decode8 of lanes 8 t .. 8 t + 7, and of run j (weights v0..v7 at
 * 64 t + 8 j) chunk 2 j takes the pairs (v0, v4) and (v1, v5), chunk
 * 2 j + 1 (v2, v6) and (v3, v7): the pairs a 4-bit word gives with one
 * mask (mma_weights), so no format needs its weights reordered (Marlin
 * reorders them offline for the same end). x is staged in shared memory
 * in that order (stage_x), so A's registers for a chunk are one 8-byte
 * load per token row.
 *
 * A thread block: 4 warps, each 8 rows, and 16, 32 or 64 tokens
 * (quant_mma_token_tiles), over one slice of k (quant_mma_splits); each
 * block of 256 weights of a row is read once per tile of tokens. The
 * weights are rounded to FP16 for the MMA (as the prefill path's FP16
 * GEMM rounds them: the reference rounds them too); x is FP16 as given,
 * the sums FP32. F16 and q4 read their weights with the evict-first hint
 * (__ldcs: read once, they should not push x out of the L2), the stream
 * make gpu-model counts; the other formats through decode8's plain loads.
 */
#ifndef KERNELS_QUANT_MMA_CUH
#define KERNELS_QUANT_MMA_CUH

#include "quant.h"
#include "quant_mma.h"
#include "warp.cuh"

/* x's staged block is A's fragments as they are loaded: for each tile of
 * 16 tokens, each g (tokens g and g + 8), each chunk c and each lane
 * column t, one 16-byte record {token g's slots 2t, 2t+1; token g+8's;
 * token g's slots 2t+8, 2t+9; token g+8's}: a lane's A is one 16-byte
 * shared load, its registers in the MMA's order (no moves). The records
 * of one g are 16 chunks x 4 columns (1024 bytes) and 64 of padding, so
 * that the 32 lanes' loads (g = 0..7, t = 0..3) fall in 4 wavefronts, the
 * fewest 512 bytes take: 1088 / 16 = 68 is 4 mod 8, g's records shift
 * by half the banks from g to g + 1. In 16-byte words: */
enum { MMA_G_WORDS = 16 * 4 + 4, MMA_TILE_WORDS = 8 * MMA_G_WORDS };

/* One name for the decoders of the formats without a path of their own. */
__device__ __forceinline__ void mma_decode8(const q8_block *b, int l, float w[8]) { q8_decode8(b, l, w); }
__device__ __forceinline__ void mma_decode8(const q6_block *b, int l, float w[8]) { q6_decode8(b, l, w); }
__device__ __forceinline__ void mma_decode8(const q5_block *b, int l, float w[8]) { q5_decode8(b, l, w); }
__device__ __forceinline__ void mma_decode8(const q4_block *b, int l, float w[8]) { q4_decode8(b, l, w); }
__device__ __forceinline__ void mma_decode8(const q2_block *b, int l, float w[8]) { q2_decode8(b, l, w); }

/* Two floats rounded to FP16, the first in the low half. */
__device__ __forceinline__ uint32_t pack_halves(float lo, float hi)
{
    return (uint32_t)float_to_fp16(lo) | ((uint32_t)float_to_fp16(hi) << 16);
}

/* A lane's share of one block of weights, as loaded. The kernel loads the
 * next block's while it computes this one's, so that a warp's next bytes
 * are in flight under its MMAs: q4 (the format the verdicts judge) as its
 * raw words, two 16-byte loads and one of its two scales; the other
 * formats as the block's address (decode8 loads as it decodes). */
template <typename Block> struct mma_lane {
    const Block *b;
};
template <typename Block> __device__ __forceinline__ mma_lane<Block> mma_load(const Block *b, int t)
{
    (void)t;
    return {b};
}

/* Run j of lane t's weights of a block as B's registers: b[0] for chunk
 * 2 j, {(v0, v4), (v1, v5)}; b[1] for chunk 2 j + 1, {(v2, v6), (v3, v7)};
 * each weight decode8's float rounded to FP16. */
template <typename Block>
__device__ __forceinline__ void mma_weights(const mma_lane<Block> &l, int t, int j, uint32_t (&bw)[2][2])
{
    float v[8];
    mma_decode8(l.b, 8 * t + j, v);
    bw[0][0] = pack_halves(v[0], v[4]), bw[0][1] = pack_halves(v[1], v[5]);
    bw[1][0] = pack_halves(v[2], v[6]), bw[1][1] = pack_halves(v[3], v[7]);
}

/* F16: the eight halves as they are, paired by the same permutation as
 * stage_x's (no conversion: an exact decode), one 16-byte load. */
__device__ __forceinline__ void mma_weights(const mma_lane<qf16_block> &l, int t, int j, uint32_t (&bw)[2][2])
{
    const uint4 v = __ldcs(reinterpret_cast<const uint4 *>(l.b->w) + 8 * t + j); /* halves 64 t + 8 j .. */
    bw[0][0] = __byte_perm(v.x, v.z, 0x5410), bw[0][1] = __byte_perm(v.x, v.z, 0x7632);
    bw[1][0] = __byte_perm(v.y, v.w, 0x5410), bw[1][1] = __byte_perm(v.y, v.w, 0x7632);
}

/* q4: lane t's words qs[8 t .. 8 t + 7] (decode8's lanes 8 t .. 8 t + 7)
 * and scales d[2 t], d[2 t + 1] (each covers four of those lanes). The
 * block is 144 bytes, its words at byte 16: 16-byte aligned. */
template <> struct mma_lane<q4_block> {
    uint4 lo, hi;
    uint32_t d;
};
__device__ __forceinline__ mma_lane<q4_block> mma_load(const q4_block *b, int t)
{
    const uint4 *q = reinterpret_cast<const uint4 *>(b->qs) + 2 * t;
    return {__ldcs(q), __ldcs(q + 1), __ldcs(reinterpret_cast<const uint32_t *>(b->d) + t)};
}

__device__ __forceinline__ uint32_t word_of(uint4 v, int i)
{
    return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

/* (a & 0x000f000f) | c in one LOP3: ptxas, given both constants as
 * immediates, makes it two (a LOP3 takes one immediate). */
__device__ __forceinline__ uint32_t nibbles_or(uint32_t a, uint32_t c)
{
#if defined(RL_EMULATOR)
    return (a & 0x000f000fu) | c;
#else
    uint32_t d;
    asm("lop3.b32 %0, %1, %2, %3, 0xea;" : "=r"(d) : "r"(a), "n"(0x000f000f), "r"(c));
    return d;
#endif
}

/* q4 in half arithmetic: nibbles s and s + 4 of the word are the halves
 * 1024 + q of 0x6400 | (word >> 4 s & 0x000f000f); minus 1032, exact, the
 * q - 8 of the format; times the FP16 scale, rounded once: the same half
 * as decode8's exact float rounded to FP16. Four instructions a pair (a
 * shift, the LOP3, HADD2, HMUL2), not the float path's eleven (two
 * conversions, two subtractions, two products, the unpacking). */
__device__ __forceinline__ __half2 q4_pair(uint32_t word, int s, __half2 d)
{
    const __half2 bias = u32_as_half2(0x64086408u); /* 1032, twice */
    return __hmul2(__hsub2(u32_as_half2(nibbles_or(word >> (4 * s), 0x64006400u)), bias), d);
}

__device__ __forceinline__ uint32_t half2_bits(__half2 h)
{
    uint32_t u;
    memcpy(&u, &h, sizeof u);
    return u;
}

__device__ __forceinline__ void mma_weights(const mma_lane<q4_block> &l, int t, int j, uint32_t (&bw)[2][2])
{
    (void)t;
    const uint32_t word = j < 4 ? word_of(l.lo, j) : word_of(l.hi, j - 4);
    const uint32_t ds = j < 4 ? l.d & 0xffffu : l.d >> 16;
    const __half2 d = u32_as_half2(ds | (ds << 16));
    bw[0][0] = half2_bits(q4_pair(word, 0, d)), bw[0][1] = half2_bits(q4_pair(word, 1, d));
    bw[1][0] = half2_bits(q4_pair(word, 2, d)), bw[1][1] = half2_bits(q4_pair(word, 3, d));
}

/* Block kb of x for the tile's `valid` tokens from t0 into shared memory,
 * as A's records: run G = 8 t + j of a token's block (halves x0..x7 at
 * 8 G) gives chunk 2 j the pairs (x0, x4), (x1, x5) and chunk 2 j + 1
 * (x2, x6), (x3, x7), each pair one word of the token's half of its
 * record. The tile's tokens past n stay the zeros the kernel wrote first
 * (their outputs are never stored). Each thread moves one 16-byte run;
 * consecutive threads read consecutive runs of a token's row (coalesced). */
__device__ __forceinline__ void stage_x(uint4 *xs, const fp16 *__restrict__ x, int valid, int k, int t0, int kb)
{
    for (int i = threadIdx.x; i < valid * 32; i += blockDim.x) {
        const int tok = i / 32, run = i % 32, t = run / 8, j = run % 8;
        const uint4 v = __ldg(reinterpret_cast<const uint4 *>(x + (size_t)(t0 + tok) * k + (size_t)kb * QUANT_BLOCK) + run);
        /* v.x = {x0, x1}, v.y = {x2, x3}, v.z = {x4, x5}, v.w = {x6, x7} */
        uint32_t *rec = reinterpret_cast<uint32_t *>(xs + (tok / 16) * MMA_TILE_WORDS + (tok % 8) * MMA_G_WORDS +
                                                     (2 * j) * 4 + t) + (tok / 8) % 2;
        rec[0] = __byte_perm(v.x, v.z, 0x5410), rec[2] = __byte_perm(v.x, v.z, 0x7632);
        rec += 4 * 4; /* chunk 2 j + 1 */
        rec[0] = __byte_perm(v.y, v.w, 0x5410), rec[2] = __byte_perm(v.y, v.w, 0x7632);
    }
}

/* part[s][t][r]: slice s's sums (s = blockIdx.z); with one slice, y. */
template <typename Block, int MT>
__global__ void __launch_bounds__(32 * QUANT_MMA_WARPS)
gemm_mma(float *__restrict__ part, const Block *__restrict__ w, const fp16 *__restrict__ x, int rows, int n,
         int nb, int per_split)
{
    __shared__ uint4 xs[MT * MMA_TILE_WORDS];
    const int lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
    const int t0 = blockIdx.x * 16 * MT, r0 = blockIdx.y * QUANT_MMA_ROWS + (threadIdx.x / 32) * 8;
    const int kb0 = blockIdx.z * per_split, kb1 = min(nb, kb0 + per_split);
    /* the row this lane decodes; past the last row, the last (never stored) */
    const Block *wr = w + (size_t)min(r0 + g, rows - 1) * nb;
    const int valid = min(16 * MT, n - t0);
    for (int i = threadIdx.x; i < MT * MMA_TILE_WORDS; i += blockDim.x)
        xs[i] = make_uint4(0u, 0u, 0u, 0u);
    float acc[MT][4];
#pragma unroll
    for (int m = 0; m < MT; m++)
        acc[m][0] = acc[m][1] = acc[m][2] = acc[m][3] = 0.0f;
    mma_lane<Block> cur = mma_load(wr + kb0, t);
    for (int kb = kb0; kb < kb1; kb++) {
        /* the next block's words, in flight while this one is computed (the
         * last block loads itself again: no branch in the loop) */
        const mma_lane<Block> next = mma_load(wr + min(kb + 1, kb1 - 1), t);
        __syncthreads(); /* every warp is done with the block before */
        stage_x(xs, x, valid, nb * QUANT_BLOCK, t0, kb);
        __syncthreads();
#pragma unroll
        for (int j = 0; j < 8; j++) {
            uint32_t b[2][2]; /* weights 64 t + 8 j .. + 7: chunk 2 j's, then 2 j + 1's */
            mma_weights(cur, t, j, b);
#pragma unroll
            for (int h = 0; h < 2; h++) {
#pragma unroll
                for (int m = 0; m < MT; m++) {
                    /* A: tokens g and g + 8 of tile m, slots {2t, 2t+1} then {2t+8, 2t+9} */
                    const uint4 r = xs[m * MMA_TILE_WORDS + g * MMA_G_WORDS + (2 * j + h) * 4 + t];
                    const uint32_t a[4] = {r.x, r.y, r.z, r.w};
                    mma_16816(acc[m], a, b[h]);
                }
            }
        }
        cur = next;
    }
    /* D: tokens g and g + 8 of each tile, rows 2t and 2t + 1 of the warp's 8 */
    float *out = part + (size_t)blockIdx.z * n * rows;
#pragma unroll
    for (int m = 0; m < MT; m++)
#pragma unroll
        for (int i = 0; i < 4; i++) {
            int tok = t0 + 16 * m + g + (i >= 2 ? 8 : 0), row = r0 + 2 * t + (i & 1);
            if (tok < n && row < rows)
                out[(size_t)tok * rows + row] = acc[m][i];
        }
}

/* y = the sum of the slices' partial sums, in slice order (deterministic). */
__global__ void __launch_bounds__(256) mma_sum_splits(float *__restrict__ y, const float *__restrict__ part,
                                                      long long count, int splits)
{
    long long i = blockIdx.x * 256LL + threadIdx.x;
    if (i >= count)
        return;
    float s = 0.0f;
    for (int p = 0; p < splits; p++)
        s += part[(size_t)p * count + i];
    y[i] = s;
}

#endif
