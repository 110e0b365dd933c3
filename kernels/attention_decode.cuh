/*
 * attention_decode.cuh -- the fused decode's kernels (flash-decoding on
 * tensor cores: decode_split, then merge_splits over the splits),
 * included by attention.cu, whose header explains the design; device code
 * only, so that tests/emu/ compiles the same text with g++.
 *
 * A warp takes 16 keys at a time of its block's chunk of one (sequence, KV
 * head) and serves all G <= 8 query heads of that KV head with two
 * mma.sync products, whose fragment layout (warp.cuh: lane = 4 g + t) fixes
 * which lane loads what:
 *
 *   S = Q K^T (16 x 16: M = query heads, rows g >= G and g + 8 zero; N =
 *   keys; K-dim = dim). A sum over dim may take the dims in any order, as
 *   long as A and B take the same one: lane (g, t) loads the 16 bytes of
 *   dims 32 j + 8 t .. + 7 of query head g and of key g (n-tile 0) and key
 *   8 + g (n-tile 1), and their four registers are its fragments of the
 *   k-steps 2 j (.x, .y) and 2 j + 1 (.z, .w). S's fragment gives the lane
 *   head g's scores of keys 2t, 2t + 1, 8 + 2t and 9 + 2t.
 *
 *   O^T += V^T P^T (M = dims, 16 a tile; N = the 8 heads; K-dim = the 16
 *   keys). P^T's B fragment is S's C fragment, rounded to halves: keys 2t,
 *   2t + 1 (b0) and 8 + 2t, 9 + 2t (b1) of head g. V^T's A fragment needs
 *   one dim of two keys per register, while memory holds two dims of one
 *   key: the lane loads dims 64 c + 8 g .. + 7 of its four keys and pairs
 *   them with PRMT (byte permutes), the low halves giving A's row g (dim
 *   64 c + 8 g + 2 i) and the high halves row g + 8 (that dim + 1) of
 *   m-tile 4 c + i. A sum over the keys' order is free too; the dims' order
 *   is where the output is written back.
 *
 * Every load is 16 bytes, and each warp-wide load reads whole 32-byte
 * sectors: 8 keys x 64 bytes (K) or 4 keys x 128 bytes (V). All dim / 8
 * loads of a lane's step (dim x 64 bytes a warp) are issued before the
 * first product, and no step waits for another's.
 */
#ifndef KERNELS_ATTENTION_DECODE_CUH
#define KERNELS_ATTENTION_DECODE_CUH

#include "attention.h"
#include "warp.cuh"

#include <math.h>
#include <stdint.h>

enum { DEC_WARPS = ATTN_DECODE_WARPS, DEC_THREADS = DEC_WARPS * 32, DEC_KEYS = 16, DEC_MAX_G = ATTN_DECODE_MAX_GROUP };

/* A running maximum's start: finite, so that merging two empty states,
 * 2^(NO_SCORE - NO_SCORE) = 1 times a sum of 0, stays 0 instead of NaN;
 * any real score exceeds it. Missing keys score -INFINITY: 2^-inf is 0. */
#define NO_SCORE (-1e30f)

/* The dynamic shared memory of a block (attention.h: the static model
 * reads the same): Q's A fragments, 16 bytes per lane and k-step (dim x 32
 * bytes, which every warp reads), then each warp's unnormalized output
 * (G x dim floats), then each warp's maximum and sum per head. */
static inline __host__ __device__ size_t decode_smem_bytes(int dim, int G)
{
    return attention_decode_smem_bytes(dim, G);
}

/* One warp's running state over the keys it has seen: m and l are head g's
 * maximum (base 2, scaled) and this lane's part of its sum (keys 2t, 2t+1,
 * 8+2t, 9+2t of each step); o[i] is O^T's fragment of m-tile i. Q's A
 * fragments are read from shared memory at each step (qs: this lane's of
 * k-step 0, the next k-step's 512 bytes on), not held: at dim 128 that
 * saves 32 registers (the padding rows' zeros take registers too) for 8
 * loads per 16 keys, and each fragment is stored as mma.sync takes it,
 * {q, 0, q', 0}: 4 consecutive registers a load fills, with no moves. */
template <int DIM> struct decode_state {
    float o[DIM / 16][4];
    float m, l;
    uint32_t qs;
};

/* 16 keys from kt / vt (this lane's first K and V rows, see above): S, the
 * online softmax, O^T += V^T P^T. TAIL: only the first `valid` keys exist;
 * the others are neither loaded nor counted. c = scale x log2(e). */
template <int DIM, bool TAIL>
__device__ __forceinline__ void decode_step(decode_state<DIM> &st, const uint4 *__restrict__ kt,
                                            const uint4 *__restrict__ vt, int valid, float c)
{
    enum { ROW = DIM / 8, KJ = DIM / 32, VC = DIM / 64, MT = DIM / 16 };
    const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const uint4 zero = make_uint4(0, 0, 0, 0);

    /* Every load first (read once: the streaming hint). K: keys g and
     * 8 + g; V: keys 2t, 2t + 1, 8 + 2t, 9 + 2t (rows of vt). */
    uint4 kr[2][KJ], vr[4][VC];
#pragma unroll
    for (int n = 0; n < 2; n++)
#pragma unroll
        for (int j = 0; j < KJ; j++)
            kr[n][j] = !TAIL || 8 * n + g < valid ? __ldcs(kt + 8 * n * ROW + 4 * j) : zero;
#pragma unroll
    for (int r = 0; r < 4; r++) {
        const int row = (r & 1) + 8 * (r >> 1);
#pragma unroll
        for (int cc = 0; cc < VC; cc++)
            vr[r][cc] = !TAIL || 2 * t + row < valid ? __ldcs(vt + row * ROW + 8 * cc) : zero;
    }

    /* S = Q K^T: n-tile n covers keys 8 n .. 8 n + 7. */
    float s[2][4] = {};
#pragma unroll
    for (int j = 0; j < KJ; j++) {
        /* Q's fragments of k-steps 2j and 2j + 1; K's: .x, .y and .z, .w */
        const uint4 q0 = lds128(st.qs + 512 * (2 * j)), q1 = lds128(st.qs + 512 * (2 * j + 1));
        const uint32_t a0[4] = {q0.x, q0.y, q0.z, q0.w}, a1[4] = {q1.x, q1.y, q1.z, q1.w};
#pragma unroll
        for (int n = 0; n < 2; n++) {
            const uint32_t b0[2] = {kr[n][j].x, kr[n][j].y}, b1[2] = {kr[n][j].z, kr[n][j].w};
            mma_16816(s[n], a0, b0);
            mma_16816(s[n], a1, b1);
        }
    }
    /* Head g's scores (rows g + 8 are padding): keys 2t, 2t+1, 8+2t, 9+2t. */
    float x[4] = {s[0][0], s[0][1], s[1][0], s[1][1]};
    if (TAIL)
#pragma unroll
        for (int i = 0; i < 4; i++)
            if (2 * t + (i & 1) + 8 * (i >> 1) >= valid)
                x[i] = -INFINITY;

    /* The step's maximum over the 4 lanes of head g (t = 0..3: all 16
     * keys, key 0 among them, so it is finite); c > 0 keeps the order. */
    float mt = fmaxf(fmaxf(x[0], x[1]), fmaxf(x[2], x[3]));
    mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, 1));
    mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, 2));
    const float m_new = fmaxf(st.m, mt * c);
    /* Rescale what was summed under the old maximum only when one rose
     * somewhere in the warp, which after the first keys is rare. O^T's
     * columns are heads 2t and 2t + 1: their factors come from lanes 8t
     * and 8t + 4 (g = 2t, 2t + 1). */
    if (__any_sync(0xffffffffu, m_new > st.m)) { /* rl-model: rare (a new maximum: ~ln n of n steps) */
        const float alpha = m_new > st.m ? ex2_approx(st.m - m_new) : 1.0f;
        const float a0 = __shfl_sync(0xffffffffu, alpha, 8 * t);
        const float a1 = __shfl_sync(0xffffffffu, alpha, 8 * t + 4);
        st.l *= alpha;
#pragma unroll
        for (int i = 0; i < MT; i++) {
            st.o[i][0] *= a0, st.o[i][1] *= a1;
            st.o[i][2] *= a0, st.o[i][3] *= a1;
        }
        st.m = m_new;
    }
    float p[4];
#pragma unroll
    for (int i = 0; i < 4; i++)
        p[i] = ex2_approx(fmaf(x[i], c, -st.m));
    st.l += (p[0] + p[1]) + (p[2] + p[3]);

    /* P^T's B fragment, split into halves hi + lo: P V is then exact to
     * FP32's precision (one half alone would round each p by up to 2^-12),
     * for 8 more products per 16 keys, which the tensor cores do not
     * notice in a memory-bound kernel. */
    uint32_t hi[2], lo[2];
    pack_half2_split(p[0], p[1], hi[0], lo[0]);
    pack_half2_split(p[2], p[3], hi[1], lo[1]);

    /* O^T += V^T P^T, m-tile 4 cc + i: dims 64 cc + 8 g + 2 i (row g) and
     * + 1 (row g + 8), from word i of the four keys' loads. */
#pragma unroll
    for (int mi = 0; mi < MT; mi++) {
        const int cc = mi / 4, i = mi % 4;
        const uint32_t w0 = (&vr[0][cc].x)[i], w1 = (&vr[1][cc].x)[i];
        const uint32_t w8 = (&vr[2][cc].x)[i], w9 = (&vr[3][cc].x)[i];
        const uint32_t a[4] = {__byte_perm(w0, w1, 0x5410), __byte_perm(w0, w1, 0x7632),
                               __byte_perm(w8, w9, 0x5410), __byte_perm(w8, w9, 0x7632)};
        mma_16816(st.o[mi], a, hi);
        mma_16816(st.o[mi], a, lo);
    }
}

/* part: for each query head (in out's order) and split, a record of dim
 * unnormalized outputs, the maximum m and the sum l (base 2). Grid (splits,
 * batch x heads_kv); the block's chunk is keys [split x chunk, + chunk) of
 * its (sequence, KV head), and warp w takes its 16-key steps w, w + 4, ...
 * c = scale x log2(e). G query heads per KV head, at most 8: the main loop
 * is the same for every G, which only sizes the epilogue. Dynamic shared
 * memory: decode_smem_bytes(DIM, G). At least 3 blocks (12 warps) per SM:
 * at dim 128 the loads in flight, O^T and the scores want about 128
 * registers, which 4 blocks would make a hard cap (clang with CUDA 12's
 * ptxas then spills); 12 warps of 8 KB in flight are still several times
 * what Little's law asks of an SM. */
template <int DIM, int G>
__global__ void __launch_bounds__(DEC_THREADS, 3)
decode_split(float *__restrict__ part, const uint4 *__restrict__ q, const uint4 *__restrict__ k,
             const uint4 *__restrict__ v, int ctx, int chunk, float c)
{
    static_assert(G >= 1 && G <= DEC_MAX_G, "a KV head serves 1 to 8 query heads");
    enum { ROW = DIM / 8, KJ = DIM / 32, MT = DIM / 16 };
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    /* Query head h of this KV head is row bkv x G + h of q and out:
     * b x heads_q + hkv x G + h with heads_q = G x heads_kv. */
    const int split = blockIdx.x, bkv = blockIdx.y;
    const int k0 = split * chunk, n = min(ctx, k0 + chunk) - k0;

    extern __shared__ __align__(16) float dec_smem[];
    uint4 *q_frag = reinterpret_cast<uint4 *>(dec_smem); /* [k-step][lane] */
    if (warp == 0)
#pragma unroll
        for (int j = 0; j < KJ; j++) {
            const uint4 w = g < G ? __ldg(q + (size_t)(bkv * G + g) * ROW + 4 * j + t) : make_uint4(0, 0, 0, 0);
            q_frag[32 * (2 * j) + lane] = make_uint4(w.x, 0u, w.y, 0u);
            q_frag[32 * (2 * j + 1) + lane] = make_uint4(w.z, 0u, w.w, 0u);
        }
    decode_state<DIM> st;
#pragma unroll
    for (int i = 0; i < MT; i++)
        st.o[i][0] = st.o[i][1] = st.o[i][2] = st.o[i][3] = 0.0f;
    st.m = NO_SCORE, st.l = 0.0f;
    st.qs = (uint32_t)__cvta_generic_to_shared(q_frag + lane);
    __syncthreads();

    /* This lane's first rows: K key g, dims 8 t..; V key 2t, dims 8 g.. */
    const size_t first = (size_t)bkv * ctx + k0 + DEC_KEYS * warp;
    const uint4 *kt = k + (first + g) * ROW + t, *vt = v + (first + 2 * t) * ROW + g;
    const int full = n / DEC_KEYS;
    int step = warp;
    for (; step < full; step += DEC_WARPS) {
        decode_step<DIM, false>(st, kt, vt, DEC_KEYS, c);
        kt += DEC_WARPS * DEC_KEYS * ROW, vt += DEC_WARPS * DEC_KEYS * ROW;
    }
    if (step == full && full * DEC_KEYS < n) /* the chunk's last, partial step */
        decode_step<DIM, true>(st, kt, vt, n - full * DEC_KEYS, c);

    /* Head g's sum over the warp's keys: its 4 lanes' parts. */
    st.l += __shfl_xor_sync(0xffffffffu, st.l, 1);
    st.l += __shfl_xor_sync(0xffffffffu, st.l, 2);

    /* Merge the block's warps through shared memory: (m, l, acc) and (m',
     * l', acc') give max(m, m') and the sums each rescaled to it. */
    float *w_acc = dec_smem + DIM * 8;        /* [DEC_WARPS][G][DIM], after Q's DIM x 32 bytes */
    float *w_m = w_acc + DEC_WARPS * G * DIM; /* [DEC_WARPS][DEC_MAX_G] */
    float *w_l = w_m + DEC_WARPS * DEC_MAX_G; /* [DEC_WARPS][DEC_MAX_G] */
#pragma unroll
    for (int mi = 0; mi < MT; mi++) {
        const int d = 64 * (mi / 4) + 8 * g + 2 * (mi % 4);
        if (2 * t < G)
            *reinterpret_cast<float2 *>(&w_acc[(warp * G + 2 * t) * DIM + d]) =
                make_float2(st.o[mi][0], st.o[mi][2]);
        if (2 * t + 1 < G)
            *reinterpret_cast<float2 *>(&w_acc[(warp * G + 2 * t + 1) * DIM + d]) =
                make_float2(st.o[mi][1], st.o[mi][3]);
    }
    if (t == 0 && g < G) {
        w_m[warp * DEC_MAX_G + g] = st.m;
        w_l[warp * DEC_MAX_G + g] = st.l;
    }
    __syncthreads();
    for (int e = threadIdx.x; e < G * DIM; e += DEC_THREADS) {
        const int h = e / DIM, d = e % DIM;
        float mx = NO_SCORE;
#pragma unroll
        for (int w = 0; w < DEC_WARPS; w++)
            mx = fmaxf(mx, w_m[w * DEC_MAX_G + h]);
        float sum = 0, o = 0;
#pragma unroll
        for (int w = 0; w < DEC_WARPS; w++) {
            const float a = ex2_approx(w_m[w * DEC_MAX_G + h] - mx);
            sum += w_l[w * DEC_MAX_G + h] * a;
            o += w_acc[(w * G + h) * DIM + d] * a;
        }
        float *rec = part + ((size_t)(bkv * G + h) * gridDim.x + split) * (DIM + 2);
        rec[d] = o;
        if (d == 0) {
            rec[DIM] = mx;
            rec[DIM + 1] = sum;
        }
    }
}

/* One block per query head, a thread per dimension: out = sum_i acc_i
 * 2^(m_i - M) / sum_i l_i 2^(m_i - M), M the largest m_i. */
__global__ void merge_splits(float *__restrict__ out, const float *__restrict__ part, int splits,
                             int dim)
{
    const float *rec = part + (size_t)blockIdx.x * splits * (dim + 2);
    const int d = threadIdx.x;
    float mx = NO_SCORE;
    for (int i = 0; i < splits; i++)
        mx = fmaxf(mx, rec[(size_t)i * (dim + 2) + dim]);
    float sum = 0, o = 0;
    for (int i = 0; i < splits; i++) {
        const float *r = rec + (size_t)i * (dim + 2);
        float a = exp2f(r[dim] - mx);
        sum += r[dim + 1] * a;
        o += r[d] * a;
    }
    out[(size_t)blockIdx.x * dim + d] = o / sum;
}

#endif
