/*
 * layer_flash.cuh -- the device code of experiment 09's fused FP32
 * attention on CUDA (layer.h's LAYER_OP_ATTENTION; its launcher is in
 * layer.cu), beside the other steps' kernels of layer_kernels.cuh, whose
 * math of one value it shares. Device code and the host arithmetic of
 * its launch only, so that tests/emu/ compiles the same text.
 */
#ifndef KERNELS_LAYER_FLASH_CUH
#define KERNELS_LAYER_FLASH_CUH

#include "layer_kernels.cuh"

/* ---- fused attention, FP32 ---------------------------------------------------------------
 *
 * A block of 128 threads owns BQ = 64 queries of one head of one
 * sequence, and loops over tiles of BK = 32 keys of that head's KV head
 * (grouped-query: head h reads KV head h / (heads / heads_kv)); the
 * scores and probabilities never leave the chip. Thread (rg, kg) = (tid /
 * 8, tid % 8) owns queries 4 rg .. 4 rg + 3 and, of a tile, keys kg + 8 e
 * (e < 4) for S = Q K^T, dims 4 kg + 32 f .. + 3 (f < DIM / 32) of O: a
 * 4 x 4 block of S and a 4 x DIM / 8 block of O in registers, each value
 * read from shared memory feeding 4 FMAs or more. A query row's scores
 * are in the 8 lanes of one quarter-warp, which reduce its maximum with 3
 * shuffles. The online softmax (FlashAttention's) is in base 2 (scores
 * times scale x log2(e), one ex2 each).
 *
 * Shared memory, in floats (dynamic; DIM 128: 64 KB, DIM 64: 32 KB):
 *   Q  [BQ][DIM]  read by the 8 lanes of a quarter-warp at one address
 *                 (a broadcast), so unpadded;
 *   K  [BK][DIM]  16-byte chunk c of key row j stored at chunk c ^ (j % 8):
 *                 the 8 lanes of a quarter-warp read rows kg + 8 e, 8
 *                 consecutive rows at one chunk, on 8 different bank
 *                 groups (unswizzled, rows DIM floats apart would all
 *                 fall on one);
 *                 once S is computed, P^T [BK][BQ] in its place (chunk
 *                 rg of row j at rg ^ (j % 8): a quarter-warp's 8 stores of
 *                 16 bytes, rows kg + 8 e, on 8 bank groups; its reads
 *                 one broadcast);
 *   V  [BK][DIM]  a quarter-warp reads 8 consecutive chunks of a row.
 * Tiles are copied with cp.async (16 bytes, no registers on the way);
 * rows past the sequence are zeros (a NaN of whatever lies there would
 * survive a probability of 0).
 *
 * Masks: PADDING adds mask[b][j] (less the sequence's largest mask value,
 * as the row kernel: exact for a sequence all of whose keys are masked);
 * CAUSAL skips the key tiles past the block's last query and gives the
 * keys past each query -inf: exp of -10000 + a score is 0 in FP32 (and in
 * double) wherever a row has its diagonal key, as every causal row has, so
 * skipping them is exact. */

enum { LAYER_FA_BQ = 64, LAYER_FA_BK = 32, LAYER_FA_THREADS = 128 };
static_assert(LAYER_FA_THREADS == (LAYER_FA_BQ / 4) * 8, "a thread per 4 queries and 8 key columns");
static_assert(LAYER_FA_BK == 4 * 8, "a thread's 4 keys of a tile are kg + 8 e");

static inline size_t layer_flash_smem_bytes(int dim)
{
    return (size_t)(LAYER_FA_BQ + 2 * LAYER_FA_BK) * (size_t)dim * sizeof(float);
}

struct layer_flash_args {
    float *y;            /* rows x heads DIM */
    const float *qkv;    /* rows x (heads + 2 heads_kv) DIM */
    const float *mask;   /* PADDING: batch x seq */
    int seq, heads, heads_kv;
    layer_mask mask_kind;
    float c;             /* scale x log2(e) */
};

/* Rows row0 .. row0 + rows - 1 (of the sequence's `valid`) of a head's
 * columns (src: row 0, column 0 of the head; ld: floats a row) into a
 * tile of DIM / 4 chunks a row at shared-window address `dst` (`tile`:
 * the same tile as a pointer), chunk c of row j at c ^ (j % 8) where
 * SWIZZLE; rows past `valid` are zeros. Committed as one cp.async group. */
template <int DIM, bool SWIZZLE>
__device__ __forceinline__ void lk_tile_copy(uint32_t dst, float4 *tile, const float *src, int ld, int row0, int rows,
                                             int valid)
{
    enum { CH = DIM / 4 };
    for (int i = threadIdx.x; i < rows * CH; i += LAYER_FA_THREADS) {
        const int j = i / CH, ch = i % CH;
        const int at = j * CH + (SWIZZLE ? ch ^ (j % 8) : ch);
        if (row0 + j < valid)
            cp_async16(dst + (uint32_t)at * 16u, src + (size_t)(row0 + j) * ld + ch * 4);
        else
            tile[at] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
    cp_async_commit();
}

/* Grid (ceil(seq / BQ), heads, batch). Blocks an SM should hold: 3 at DIM
 * 128 (64 KB of tiles each: 3 fill sm_90's shared memory; 168 registers
 * a thread), 4 at DIM 64 (128 registers). */
template <int DIM>
__global__ void __launch_bounds__(LAYER_FA_THREADS, DIM == 64 ? 4 : 3) layer_flash(layer_flash_args a)
{
    enum { BQ = LAYER_FA_BQ, BK = LAYER_FA_BK, CH = DIM / 4, F = DIM / 32, PCH = BQ / 4 };
    static_assert(DIM % 32 == 0 && CH % 8 == 0, "rows of whole 8-chunk swizzle groups, 4 dims a lane and f");
    extern __shared__ __align__(16) float layer_smem[];
    float4 *qs = reinterpret_cast<float4 *>(layer_smem);
    float4 *ks = qs + BQ * CH, *vs = ks + BK * CH;
    const uint32_t base = (uint32_t)__cvta_generic_to_shared(layer_smem);
    const uint32_t q_at = base, k_at = base + BQ * CH * 16, v_at = k_at + BK * CH * 16;

    const int tid = threadIdx.x, rg = tid / 8, kg = tid % 8;
    const int b = blockIdx.z, h = blockIdx.y, q0 = blockIdx.x * BQ, seq = a.seq;
    const int kvh = h / (a.heads / a.heads_kv), ld = (a.heads + 2 * a.heads_kv) * DIM;
    const float *tokens = a.qkv + (size_t)b * seq * ld;
    const float *qg = tokens + h * DIM, *kg_src = tokens + (a.heads + kvh) * DIM,
                *vg = tokens + (a.heads + a.heads_kv + kvh) * DIM;
    const float *mrow = a.mask_kind == LAYER_MASK_PADDING ? a.mask + (size_t)b * seq : nullptr;

    /* the padding mask's largest value over the sequence (see above),
     * each warp's own: seq floats from L2 a warp, against 2 seq DIM of K
     * and V a block, and no shared memory (64 KB of tiles at DIM 128 is
     * all a block has on sm_75) */
    float mshift = 0.0f;
    if (mrow) {
        float mx = -INFINITY;
        for (int j = tid % 32; j < seq; j += 32)
            mx = fmaxf(mx, mrow[j]);
#pragma unroll
        for (int o = 16; o > 0; o >>= 1)
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
        mshift = mx;
    }

    lk_tile_copy<DIM, false>(q_at, qs, qg, ld, q0, BQ, seq);

    float4 o[4][F];
    float m[4], l[4];
#pragma unroll
    for (int i = 0; i < 4; i++) {
#pragma unroll
        for (int f = 0; f < F; f++)
            o[i][f] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        m[i] = LAYER_NO_SCORE, l[i] = 0.0f; /* l: this lane's keys' part of the row's sum */
    }

    const int kend = a.mask_kind == LAYER_MASK_CAUSAL ? (seq < q0 + BQ ? seq : q0 + BQ) : seq;
    for (int k0 = 0; k0 < kend; k0 += BK) {
        /* every warp is done with the last tile's P^T and V */
        __syncthreads();
        lk_tile_copy<DIM, true>(k_at, ks, kg_src, ld, k0, BK, seq);
        lk_tile_copy<DIM, false>(v_at, vs, vg, ld, k0, BK, seq);
        cp_async_wait_all();
        __syncthreads();

        /* S = Q K^T for rows 4 rg + i, keys kg + 8 e: row kg + 8 e's chunk c
         * lies at c ^ kg (its row % 8 is kg) */
        float s[4][4];
#pragma unroll
        for (int i = 0; i < 4; i++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                s[i][e] = 0.0f;
        /* not unrolled: unrolled, the compiler hoists the next chunks' 8
         * loads, and 4 x DIM / 8 accumulators of O with them overflow the
         * registers that 3 blocks (DIM 128) or 4 (DIM 64) leave a thread */
#pragma unroll 1
        for (int c = 0; c < CH; c++) {
            float4 kf[4], qf[4];
#pragma unroll
            for (int e = 0; e < 4; e++)
                kf[e] = ks[(kg + 8 * e) * CH + (c ^ kg)];
#pragma unroll
            for (int i = 0; i < 4; i++)
                qf[i] = qs[(4 * rg + i) * CH + c];
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    s[i][e] = fmaf(qf[i].x, kf[e].x, s[i][e]);
                    s[i][e] = fmaf(qf[i].y, kf[e].y, s[i][e]);
                    s[i][e] = fmaf(qf[i].z, kf[e].z, s[i][e]);
                    s[i][e] = fmaf(qf[i].w, kf[e].w, s[i][e]);
                }
        }

        /* scale, mask, and the online softmax of each row over this tile */
        float mb[4];
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int j = k0 + kg + 8 * e;
            mb[e] = mrow && j < seq ? (mrow[j] - mshift) * LAYER_LOG2E : 0.0f;
        }
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int qi = q0 + 4 * rg + i;
            float mx = -INFINITY;
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int j = k0 + kg + 8 * e;
                const bool out = j >= seq || (a.mask_kind == LAYER_MASK_CAUSAL && j > qi);
                s[i][e] = out ? -INFINITY : fmaf(s[i][e], a.c, mb[e]);
                mx = fmaxf(mx, s[i][e]);
            }
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 4));
            const float mnew = fmaxf(m[i], mx); /* finite: m starts finite */
            const float alpha = ex2_approx(m[i] - mnew);
            m[i] = mnew;
            float sum = 0.0f;
#pragma unroll
            for (int e = 0; e < 4; e++)
                sum += s[i][e] = ex2_approx(s[i][e] - mnew); /* -inf: 0 */
            l[i] = fmaf(l[i], alpha, sum);
#pragma unroll
            for (int f = 0; f < F; f++)
                o[i][f] = make_float4(o[i][f].x * alpha, o[i][f].y * alpha, o[i][f].z * alpha, o[i][f].w * alpha);
        }

        /* P^T into K's place, once every warp has read K */
        __syncthreads();
        float4 *pt = ks;
#pragma unroll
        for (int e = 0; e < 4; e++)
            pt[(kg + 8 * e) * PCH + (rg ^ kg)] = make_float4(s[0][e], s[1][e], s[2][e], s[3][e]);
        __syncthreads();

        /* O += P V: key j's probabilities of rows 4 rg .. + 3 (one
         * broadcast), V's dims 4 kg + 32 f of it */
#pragma unroll 4
        for (int j = 0; j < BK; j++) {
            const float4 p = pt[j * PCH + (rg ^ (j % 8))];
#pragma unroll
            for (int f = 0; f < F; f++) {
                const float4 v = vs[j * CH + kg + 8 * f];
                const float pr[4] = {p.x, p.y, p.z, p.w};
#pragma unroll
                for (int i = 0; i < 4; i++) {
                    o[i][f].x = fmaf(pr[i], v.x, o[i][f].x);
                    o[i][f].y = fmaf(pr[i], v.y, o[i][f].y);
                    o[i][f].z = fmaf(pr[i], v.z, o[i][f].z);
                    o[i][f].w = fmaf(pr[i], v.w, o[i][f].w);
                }
            }
        }
    }

    /* out = O / l, l the sum of the row's 8 lanes' parts; rows past the
     * sequence are not written */
    const int out_ld = a.heads * DIM;
#pragma unroll
    for (int i = 0; i < 4; i++) {
        float sum = l[i];
        sum += __shfl_xor_sync(0xffffffffu, sum, 1);
        sum += __shfl_xor_sync(0xffffffffu, sum, 2);
        sum += __shfl_xor_sync(0xffffffffu, sum, 4);
        const float inv = lk_rcp(sum);
        const int qi = q0 + 4 * rg + i;
        if (qi >= seq)
            continue;
        float *yr = a.y + ((size_t)b * seq + qi) * out_ld + h * DIM + 4 * kg;
#pragma unroll
        for (int f = 0; f < F; f++)
            lk_st4(yr + 32 * f, make_float4(o[i][f].x * inv, o[i][f].y * inv, o[i][f].z * inv, o[i][f].w * inv));
    }
}

#endif
