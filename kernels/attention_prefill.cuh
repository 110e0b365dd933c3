/*
 * attention_prefill.cuh -- the fused prefill's kernel (a FlashAttention-2
 * loop on mma.sync), included by attention.cu, whose header explains the
 * design; device code only, so that tests/emu/ compiles the same text
 * with g++.
 *
 * A block of 4 warps owns BR = 64 queries of one head, a warp 16 of them,
 * and loops over tiles of BC = 64 keys that the block copies into shared
 * memory (rows of dim + 8 halves: the 8 rows an ldmatrix reads at once
 * start 16 bytes apart modulo 128, on different banks). With STAGES = 2 the
 * next tile's copy (cp.async) runs while the warps compute on this one.
 * Per 32 keys a warp computes S = Q K^T (16 x 32, FP32 in registers; Q's
 * fragments stay in registers), the online softmax on it, and O += P V,
 * P being S's accumulator fragments as halves (FlashAttention-2's register
 * reuse: m16n8's C layout is m16n8k16's A layout), split into hi + lo:
 * one half alone rounds each p by up to 2^-12, which over a few dozen keys
 * exceeds the tests' tolerance (4e-5 at n = 64). K's fragments come from
 * ldmatrix, V's from ldmatrix.trans, once for both halves of P. No score
 * leaves the registers.
 */
#ifndef KERNELS_ATTENTION_PREFILL_CUH
#define KERNELS_ATTENTION_PREFILL_CUH

#include "attention.h"
#include "warp.cuh"

#include <math.h>
#include <stdint.h>

enum { BR = 64, BC = ATTN_PREFILL_KEYS, FA_WARPS = BR / 16, FA_THREADS = FA_WARPS * 32 };

/* Blocks an SM should hold (the registers each thread may use follow):
 * three on sm_80 and later (sm_90's shared memory holds three at dim 128);
 * one on sm_75, whose 64 KB hold one block at dim 128, so that the
 * registers need not spill. Per-architecture launch bounds through
 * __CUDA_ARCH__ are the CUDA Programming Guide's own example. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define FA_MIN_BLOCKS 1
#else
#define FA_MIN_BLOCKS 3
#endif

#ifndef NO_SCORE /* as in attention_decode.cuh: a finite start for a running maximum */
#define NO_SCORE (-1e30f)
#endif

/* A row's reference maximum is raised only when a step's scores exceed it
 * by more than 2^8 (base 2): below that, p = 2^(s - m) <= 256 is safe in
 * FP16 and FP32, and the accumulators need no rescale. With 0 this is the
 * textbook update (rescale whenever the maximum rises). */
#define RESCALE_SLACK 8.0f

/* Shared memory: STAGES x (a K tile and a V tile), BC rows of DIM + 8
 * halves each (attention.h: the static model reads the same). */
template <int DIM, int STAGES> static size_t flash_smem_bytes()
{
    return attention_prefill_smem_bytes(DIM, STAGES);
}

/* This thread's part of copying a K (or V) tile: row tid / CHUNKS + r x
 * RSTEP, 16-byte chunk tid % CHUNKS, for r < BC / RSTEP. The offsets are
 * the same for every tile but for the tile's start, so a tile costs
 * BC x DIM / (8 x FA_THREADS) copies with constant offsets. */
template <int DIM> struct flash_copy {
    enum { CHUNKS = DIM / 8, RSTEP = FA_THREADS / CHUNKS, ROWS = BC / RSTEP };
    uint32_t dst; /* shared-window address of this thread's first chunk in stage 0's K tile */
    size_t src;   /* element offset of its first chunk in tile 0 */

    __device__ flash_copy(uint32_t smem)
    {
        const int row = threadIdx.x / CHUNKS, col = threadIdx.x % CHUNKS * 8;
        dst = smem + (uint32_t)(row * (DIM + 8) + col) * 2;
        src = (size_t)row * DIM + col;
    }
    /* Tile kt's K and V (from k and v, the head's first rows) into tiles
     * (byte offsets from stage 0's K tile) k_at and k_at + BC x (DIM + 8) x 2. */
    __device__ void issue(const __half *k, const __half *v, int kt, uint32_t k_at) const
    {
        const size_t at = src + (size_t)kt * BC * DIM;
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
            cp_async16(dst + k_at + r * RSTEP * (DIM + 8) * 2, k + at + (size_t)r * RSTEP * DIM);
            cp_async16(dst + k_at + (BC + r * RSTEP) * (DIM + 8) * 2, v + at + (size_t)r * RSTEP * DIM);
        }
        cp_async_commit();
    }
};

/* One warp's state: Q's A fragments (rows g and g + 8, 16 dims a k-step),
 * O's accumulators (8 dims an n-tile), and for rows g and g + 8 the
 * reference maximum (base 2) and this lane's part of the sum. */
template <int DIM> struct flash_state {
    uint32_t q[DIM / 16][4];
    float o[DIM / 8][4];
    float m[2], l[2];
};

/* Keys per softmax step: a tile is taken in halves, so that S needs 16
 * registers, not 32 (dim 128 fits 168 registers, three blocks' worth on
 * sm_90, without spilling). */
enum { FA_SUB = 32 };

/* The online softmax of a warp's 16 x FA_SUB scores s (n-tile j: keys
 * 8 j .. 8 j + 7; {s[j][0], s[j][1]} row g, {s[j][2], s[j][3]} row g + 8),
 * in place into p = 2^(s c - m), and the rescale of O where a reference
 * maximum rose (rarely, with RESCALE_SLACK: the common path compares and
 * votes). A row's 4 lanes (t = 0..3) hold all its keys. */
template <int DIM>
__device__ __forceinline__ void flash_softmax(flash_state<DIM> &st, float (&s)[FA_SUB / 8][4], float c)
{
    float mx[2];
#pragma unroll
    for (int r = 0; r < 2; r++) {
        mx[r] = fmaxf(s[0][2 * r], s[0][2 * r + 1]);
#pragma unroll
        for (int j = 1; j < FA_SUB / 8; j++)
            mx[r] = fmaxf(mx[r], fmaxf(s[j][2 * r], s[j][2 * r + 1]));
        mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
        mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2)) * c;
    }
    const bool rise0 = mx[0] > st.m[0] + RESCALE_SLACK, rise1 = mx[1] > st.m[1] + RESCALE_SLACK;
    if (__any_sync(0xffffffffu, rise0 || rise1)) { /* rl-model: rare (a rise past the 2^8 slack) */
        /* O's row g is {o[.][0], o[.][1]}, row g + 8 {o[.][2], o[.][3]};
         * a factor is exactly 1 where the maximum stays. */
        const float a0 = rise0 ? ex2_approx(st.m[0] - mx[0]) : 1.0f;
        const float a1 = rise1 ? ex2_approx(st.m[1] - mx[1]) : 1.0f;
        st.m[0] = rise0 ? mx[0] : st.m[0], st.m[1] = rise1 ? mx[1] : st.m[1];
        st.l[0] *= a0, st.l[1] *= a1;
#pragma unroll
        for (int i = 0; i < DIM / 8; i++) {
            st.o[i][0] *= a0, st.o[i][1] *= a0;
            st.o[i][2] *= a1, st.o[i][3] *= a1;
        }
    }
#pragma unroll
    for (int r = 0; r < 2; r++) {
        float sum = 0.0f;
#pragma unroll
        for (int j = 0; j < FA_SUB / 8; j++) {
            s[j][2 * r] = ex2_approx(fmaf(s[j][2 * r], c, -st.m[r]));
            s[j][2 * r + 1] = ex2_approx(fmaf(s[j][2 * r + 1], c, -st.m[r]));
            sum += s[j][2 * r] + s[j][2 * r + 1];
        }
        st.l[r] += sum;
    }
}

/* One tile for one warp: ks and vs are the shared-window addresses of this
 * lane's ldmatrix rows in the stage's K and V tiles (see flash_prefill). */
template <int DIM>
__device__ __forceinline__ void flash_tile(flash_state<DIM> &st, uint32_t ks, uint32_t vs, float c)
{
    enum { KP = DIM + 8 };
#pragma unroll 1
    for (int k0 = 0; k0 < (int)BC; k0 += FA_SUB, ks += (int)FA_SUB * KP * 2, vs += (int)FA_SUB * KP * 2) {
        /* Every ldmatrix below is ks or vs plus a constant. Kept opaque, so
         * that the compiler does not rebuild each address from the lane
         * index (two integer instructions per ldmatrix). */
        asm("" : "+r"(ks), "+r"(vs));
        /* S = Q K^T for keys k0 .. k0 + FA_SUB - 1. One ldmatrix.x4 gives
         * key rows k0 + 8 j .. + 7 at dims 32 kp .. 32 kp + 31: B's two
         * registers of k-steps 2 kp and 2 kp + 1. */
        float s[FA_SUB / 8][4] = {};
#pragma unroll
        for (int kp = 0; kp < DIM / 32; kp++) {
            uint32_t b[FA_SUB / 8][4];
#pragma unroll
            for (int j = 0; j < FA_SUB / 8; j++)
                ldmatrix_x4(b[j], ks + (uint32_t)(8 * j * KP + 32 * kp) * 2);
            /* the n-tiles' products alternate: no two in a row on one accumulator */
#pragma unroll
            for (int j = 0; j < FA_SUB / 8; j++)
                mma_16816(s[j], st.q[2 * kp], b[j]);
#pragma unroll
            for (int j = 0; j < FA_SUB / 8; j++)
                mma_16816(s[j], st.q[2 * kp + 1], b[j] + 2);
        }
        flash_softmax<DIM>(st, s, c);

        /* O += P V, 16 keys a k-step: P's A fragment is S's n-tiles 2 kk
         * and 2 kk + 1, as hi + lo; one ldmatrix.x4.trans gives V's B
         * registers of dims 16 dp .. 16 dp + 15 (two n-tiles) for those 16
         * keys, used by both. */
#pragma unroll
        for (int kk = 0; kk < FA_SUB / 16; kk++) {
            uint32_t hi[4], lo[4];
#pragma unroll
            for (int i = 0; i < 4; i++)
                pack_half2_split(s[2 * kk + i / 2][2 * (i % 2)], s[2 * kk + i / 2][2 * (i % 2) + 1], hi[i], lo[i]);
#pragma unroll
            for (int dp = 0; dp < DIM / 16; dp++) {
                uint32_t b[4];
                ldmatrix_x4_trans(b, vs + (uint32_t)(16 * kk * KP + 16 * dp) * 2);
                mma_16816(st.o[2 * dp], hi, b);
                mma_16816(st.o[2 * dp + 1], hi, b + 2);
                mma_16816(st.o[2 * dp], lo, b);
                mma_16816(st.o[2 * dp + 1], lo, b + 2);
            }
        }
    }
}

/* Grid (n / BR, heads). out: the block's BR rows of its head. c = scale x
 * log2(e). STAGES: 2, the next tile copied while this one is computed; 1,
 * one tile at a time (for shared memory that holds too few blocks of 2). */
template <int DIM, int STAGES>
__global__ void __launch_bounds__(FA_THREADS, FA_MIN_BLOCKS)
flash_prefill(float *__restrict__ out, const __half *__restrict__ q, const __half *__restrict__ k,
              const __half *__restrict__ v, int n, float c)
{
    enum { KP = DIM + 8, TILE = BC * KP * 2 /* bytes */, STAGE = 2 * TILE };
    extern __shared__ __align__(128) unsigned char smem[];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const size_t head = (size_t)blockIdx.y * n * DIM;
    const int row0 = blockIdx.x * BR + warp * 16;
    q += head, k += head, v += head;
    const uint32_t base = (uint32_t)__cvta_generic_to_shared(smem);
    const flash_copy<DIM> copy(base);
    const int tiles = n / BC;
    if (STAGES == 2)
        copy.issue(k, v, 0, 0);

    /* Q's A fragments straight from global memory (read once per block):
     * rows g and g + 8, dims 16 f + 2t (+ 8). */
    flash_state<DIM> st;
    const uint32_t *q0 = reinterpret_cast<const uint32_t *>(q + (size_t)(row0 + g) * DIM) + t;
    const uint32_t *q8 = q0 + 8 * DIM / 2;
#pragma unroll
    for (int f = 0; f < DIM / 16; f++) {
        st.q[f][0] = __ldg(q0 + 8 * f), st.q[f][1] = __ldg(q8 + 8 * f);
        st.q[f][2] = __ldg(q0 + 8 * f + 4), st.q[f][3] = __ldg(q8 + 8 * f + 4);
    }
#pragma unroll
    for (int i = 0; i < DIM / 8; i++)
        st.o[i][0] = st.o[i][1] = st.o[i][2] = st.o[i][3] = 0.0f;
    st.m[0] = st.m[1] = NO_SCORE;
    st.l[0] = st.l[1] = 0.0f;

    /* This lane's ldmatrix rows. K (x4: key rows 8 j + lane % 8, 16-byte
     * chunk lane / 8 of the 32 dims); V (x4.trans: key rows lane % 8 and
     * 8 + lane % 8 for lanes 8..15 and 24..31, chunk lane / 16). */
    const uint32_t ks = base + (uint32_t)((lane % 8) * KP + (lane / 8) * 8) * 2;
    const uint32_t vs = base + TILE + (uint32_t)((lane % 8 + 8 * (lane / 8 % 2)) * KP + (lane / 16) * 8) * 2;

    for (int kt = 0; kt < tiles; kt++) {
        uint32_t at = 0;
        if (STAGES == 2) {
            /* Tile kt has landed (this thread's copies: the wait; everyone's:
             * the barrier), and every warp is done with tile kt - 1, whose
             * stage the copy of tile kt + 1 now overwrites. */
            cp_async_wait_all();
            __syncthreads();
            at = (uint32_t)(kt % 2) * STAGE;
            if (kt + 1 < tiles)
                copy.issue(k, v, kt + 1, (uint32_t)((kt + 1) % 2) * STAGE);
        } else {
            __syncthreads(); /* every warp is done with tile kt - 1 */
            copy.issue(k, v, kt, 0);
            cp_async_wait_all();
            __syncthreads();
        }
        flash_tile<DIM>(st, ks + at, vs + at, c);
    }

    /* out = O / l: a row's sum is its 4 lanes' parts. */
#pragma unroll
    for (int r = 0; r < 2; r++) {
        st.l[r] += __shfl_xor_sync(0xffffffffu, st.l[r], 1);
        st.l[r] += __shfl_xor_sync(0xffffffffu, st.l[r], 2);
    }
    const float inv0 = 1.0f / st.l[0], inv1 = 1.0f / st.l[1];
    float *o0 = out + head + (size_t)(row0 + g) * DIM + 2 * t, *o8 = o0 + 8 * DIM;
#pragma unroll
    for (int i = 0; i < DIM / 8; i++) {
        *reinterpret_cast<float2 *>(o0 + 8 * i) = make_float2(st.o[i][0] * inv0, st.o[i][1] * inv0);
        *reinterpret_cast<float2 *>(o8 + 8 * i) = make_float2(st.o[i][2] * inv1, st.o[i][3] * inv1);
    }
}

#endif
