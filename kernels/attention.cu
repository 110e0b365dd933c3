/*
 * attention.cu -- CUDA variants of experiment 07's attention (attention.h;
 * the table is attention.c: launchers only here). FP16 in, FP32 math and
 * output throughout. Scores are kept in base 2: q is multiplied by
 * scale x log2(e) once, so that exp2f (one MUFU.EX2) replaces expf.
 *
 * Decode, fused (flash-decoding, attention_decode_split_cuda). The grid is
 * (splits, batch x heads_kv): a block takes one (sequence, KV head) and one
 * contiguous chunk of its cache, and serves all G = heads_q / heads_kv
 * query heads of that KV head, so each K and V row crosses the memory bus
 * once for G queries: 4 G dim FLOPs per 4 dim bytes, an arithmetic
 * intensity of G FLOP/B. A lane owns 8 consecutive dimensions (one 16-byte
 * load of K, one of V), dim / 8 lanes share a key, a warp covers 32 x 16 =
 * 512 contiguous bytes of each tensor per step and each lane group takes
 * two keys per step: 4 warps x 2 KB = 8 KB in flight per block. Each lane
 * group runs an online softmax over its keys; the groups, then the warps,
 * are merged, and the block writes its unnormalized partial output, its
 * maximum and its sum ((dim + 2) floats per query head) to scratch; a
 * second kernel merges the splits. Splits: enough blocks for ~4 per SM,
 * no chunk under 128 keys, at most ATTN_MAX_SPLITS. The partials add
 * batch x heads_q x splits x (dim + 2) x 8 bytes of traffic: under 1% of
 * the cache's bytes at ctx >= 1024.
 *
 * Decode and prefill, materialized (the eager path): cuBLAS writes S =
 * scale Q K^T in FP32 (4 B per score), a softmax kernel reads each row
 * once (4 B; the row stays in registers between its maximum, its sum and
 * its output) and writes P in FP16 (2 B), cuBLAS reads P (2 B) for P V:
 * 12 B per score on top of Q, K, V and out (attention_score_bytes).
 *
 * Prefill, fused (a FlashAttention-2 loop on tensor cores, through WMMA's
 * 16 x 16 x 16 FP16 fragments with FP32 accumulators). A block of 4 warps
 * owns BR = 64 queries of one head, a warp 16 of them, and loops over
 * tiles of BC = 64 keys: the block stages K and V tiles in shared memory;
 * each warp computes its 16 x 64 score tile (Q fragments stay in
 * registers), runs the online softmax on it (a lane per half row), writes
 * P in FP16 and accumulates O += P V in fragments that stay in registers.
 * No score leaves the SM: K and V are read n / BR times per head, from L2
 * mostly, and DRAM sees Q, K, V and out about once. Shared memory: K and V
 * tiles 2 x 64 x (dim + 8) x 2 B, S 4 x 16 x 68 x 4 B, P 4 x 16 x 72 x 2 B:
 * 60 KB at dim 128, 44 KB at dim 64, under the 64 KB that sm_75 allows.
 */
#include "attention.h"
#include "check.h"
#include "cublas_handle.cuh"
#include "warp.cuh"

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <math.h>
#include <mma.h>
#include <stdint.h>

#define LOG2E 1.4426950408889634f
#define FULL_MASK 0xffffffffu

/* A running maximum's start: finite, so that merging two empty states,
 * exp2f(NO_SCORE - NO_SCORE) = 1 times a sum of 0, stays 0 instead of NaN;
 * any real score exceeds it. Missing keys score -INFINITY: exp2f gives 0. */
#define NO_SCORE (-1e30f)

static int ceil_div(int a, int b) { return (a + b - 1) / b; }

static bool aligned(const void *p, uintptr_t bytes) { return (uintptr_t)p % bytes == 0; }

/* The SMs of the current device, asked once. */
static int sm_count(void)
{
    static int sms;
    if (!sms) {
        int dev = 0;
        RL_CUDA_CHECK(cudaGetDevice(&dev));
        RL_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    }
    return sms;
}

static void require_common(const attention_args *a)
{
    RL_REQUIRE(a->out && a->q && a->k && a->v, "attention needs its q, k, v and out");
    RL_REQUIRE(a->batch >= 1 && a->ctx >= 1, "attention needs at least one sequence and one key");
    RL_REQUIRE(a->dim % 32 == 0 && a->dim <= 128,
               "the head dimension is a multiple of 32, at most 128");
    RL_REQUIRE(aligned(a->q, 32) && aligned(a->k, 32) && aligned(a->v, 32) && aligned(a->out, 32),
               "q, k, v and out start 32-byte aligned (16-byte loads, WMMA fragments)");
}

static void require_decode(const attention_args *a)
{
    require_common(a);
    RL_REQUIRE(a->heads_kv >= 1 && a->heads_q % a->heads_kv == 0,
               "the query heads are a whole number of groups per KV head");
    int g = a->heads_q / a->heads_kv;
    RL_REQUIRE(g == 1 || g == 2 || g == 4 || g == 8, "the group size is 1, 2, 4 or 8");
}

/* ---- decode, fused: flash-decoding ---------------------------------------- */

enum { DEC_WARPS = 4, DEC_THREADS = DEC_WARPS * 32, DEC_UNROLL = 2, CHUNK_MIN = 128 };

/* part: for each query head (in out's order) and split, a record of dim
 * unnormalized outputs, the maximum m and the sum l (base 2). c = scale x
 * log2(e). Lane group grp (dim / 8 lanes) takes keys base + warp x KPW +
 * grp + u x DEC_WARPS x KPW; base advances block-wide, so every lane runs
 * the same iterations and the shuffles see the whole warp. */
template <int DIM, int G>
__global__ void __launch_bounds__(DEC_THREADS)
decode_split(float *__restrict__ part, const uint4 *__restrict__ q, const uint4 *__restrict__ k,
             const uint4 *__restrict__ v, int ctx, int chunk, float c)
{
    enum { LANES = DIM / 8, KPW = 32 / LANES, ROW = DIM / 8, STEP = DEC_UNROLL * DEC_WARPS * KPW };
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int grp = lane / LANES, sub = lane % LANES;
    /* Query head h of this KV head is row bkv x G + h of q and out:
     * b x heads_q + hkv x G + h with heads_q = G x heads_kv. */
    const int split = blockIdx.x, bkv = blockIdx.y;
    const int k0 = split * chunk, k1 = min(ctx, k0 + chunk);

    float qf[G][8], acc[G][8], m[G], l[G];
#pragma unroll
    for (int h = 0; h < G; h++) {
        unpack8(__ldg(q + (size_t)(bkv * G + h) * ROW + sub), qf[h]);
#pragma unroll
        for (int i = 0; i < 8; i++) {
            qf[h][i] *= c;
            acc[h][i] = 0;
        }
        m[h] = NO_SCORE;
        l[h] = 0;
    }
    const uint4 *kc = k + (size_t)bkv * ctx * ROW + sub, *vc = v + (size_t)bkv * ctx * ROW + sub;

    for (int base = k0; base < k1; base += STEP) {
        /* All loads first (read once: the streaming hint), then the math. */
        uint4 kr[DEC_UNROLL], vr[DEC_UNROLL];
        bool ok[DEC_UNROLL];
#pragma unroll
        for (int u = 0; u < DEC_UNROLL; u++) {
            int j = base + (u * DEC_WARPS + warp) * KPW + grp;
            ok[u] = j < k1;
            kr[u] = ok[u] ? __ldcs(kc + (size_t)j * ROW) : make_uint4(0, 0, 0, 0);
            vr[u] = ok[u] ? __ldcs(vc + (size_t)j * ROW) : make_uint4(0, 0, 0, 0);
        }
        float s[DEC_UNROLL][G], vf[DEC_UNROLL][8];
#pragma unroll
        for (int u = 0; u < DEC_UNROLL; u++) {
            float kf[8];
            unpack8(kr[u], kf);
            unpack8(vr[u], vf[u]);
#pragma unroll
            for (int h = 0; h < G; h++) {
                float dot = 0;
#pragma unroll
                for (int i = 0; i < 8; i++)
                    dot = fmaf(qf[h][i], kf[i], dot);
#pragma unroll
                for (int off = LANES / 2; off > 0; off >>= 1) /* within the lane group */
                    dot += __shfl_xor_sync(FULL_MASK, dot, off);
                s[u][h] = ok[u] ? dot : -INFINITY;
            }
        }
        /* Online softmax: raise the maximum (rescaling what was summed
         * under the old one) only when a key exceeds it, which after the
         * first keys is rare. */
#pragma unroll
        for (int h = 0; h < G; h++) {
            float mt = m[h];
#pragma unroll
            for (int u = 0; u < DEC_UNROLL; u++)
                mt = fmaxf(mt, s[u][h]);
            if (mt > m[h]) {
                float alpha = exp2f(m[h] - mt);
                l[h] *= alpha;
#pragma unroll
                for (int i = 0; i < 8; i++)
                    acc[h][i] *= alpha;
                m[h] = mt;
            }
#pragma unroll
            for (int u = 0; u < DEC_UNROLL; u++) {
                float p = exp2f(s[u][h] - m[h]);
                l[h] += p;
#pragma unroll
                for (int i = 0; i < 8; i++)
                    acc[h][i] = fmaf(p, vf[u][i], acc[h][i]);
            }
        }
    }

    /* Merge the warp's lane groups: (m, l, acc) and (m', l', acc') give
     * max(m, m') and the sums each rescaled to it. */
#pragma unroll
    for (int off = LANES; off < 32; off *= 2)
#pragma unroll
        for (int h = 0; h < G; h++) {
            float mo = __shfl_xor_sync(FULL_MASK, m[h], off);
            float lo = __shfl_xor_sync(FULL_MASK, l[h], off);
            float mx = fmaxf(m[h], mo), a = exp2f(m[h] - mx), b = exp2f(mo - mx);
            l[h] = l[h] * a + lo * b;
#pragma unroll
            for (int i = 0; i < 8; i++)
                acc[h][i] = acc[h][i] * a + __shfl_xor_sync(FULL_MASK, acc[h][i], off) * b;
            m[h] = mx;
        }

    /* Then the block's warps, through shared memory. */
    __shared__ __align__(16) float w_acc[DEC_WARPS][G][DIM];
    __shared__ float w_m[DEC_WARPS][G], w_l[DEC_WARPS][G];
    if (grp == 0)
#pragma unroll
        for (int h = 0; h < G; h++) {
            float4 *dst = reinterpret_cast<float4 *>(&w_acc[warp][h][sub * 8]);
            dst[0] = make_float4(acc[h][0], acc[h][1], acc[h][2], acc[h][3]);
            dst[1] = make_float4(acc[h][4], acc[h][5], acc[h][6], acc[h][7]);
            if (sub == 0) {
                w_m[warp][h] = m[h];
                w_l[warp][h] = l[h];
            }
        }
    __syncthreads();
    for (int e = threadIdx.x; e < G * DIM; e += DEC_THREADS) {
        int h = e / DIM, d = e % DIM;
        float mx = NO_SCORE;
#pragma unroll
        for (int w = 0; w < DEC_WARPS; w++)
            mx = fmaxf(mx, w_m[w][h]);
        float sum = 0, o = 0;
#pragma unroll
        for (int w = 0; w < DEC_WARPS; w++) {
            float a = exp2f(w_m[w][h] - mx);
            sum += w_l[w][h] * a;
            o += w_acc[w][h][d] * a;
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

template <int DIM>
static void launch_split(const attention_args *a, dim3 grid, int chunk, float c)
{
    cudaStream_t st = (cudaStream_t)a->stream;
    float *part = static_cast<float *>(a->scratch);
    const uint4 *q = reinterpret_cast<const uint4 *>(a->q);
    const uint4 *k = reinterpret_cast<const uint4 *>(a->k), *v = reinterpret_cast<const uint4 *>(a->v);
    const int L = a->ctx;
    switch (a->heads_q / a->heads_kv) {
    case 1: decode_split<DIM, 1><<<grid, DEC_THREADS, 0, st>>>(part, q, k, v, L, chunk, c); break;
    case 2: decode_split<DIM, 2><<<grid, DEC_THREADS, 0, st>>>(part, q, k, v, L, chunk, c); break;
    case 4: decode_split<DIM, 4><<<grid, DEC_THREADS, 0, st>>>(part, q, k, v, L, chunk, c); break;
    default: decode_split<DIM, 8><<<grid, DEC_THREADS, 0, st>>>(part, q, k, v, L, chunk, c); break;
    }
    RL_CUDA_CHECK_LAUNCH();
}

extern "C" void attention_decode_split_cuda(const attention_args *a)
{
    require_decode(a);
    RL_REQUIRE(a->dim == 64 || a->dim == 128, "the split-K decode is built for dim 64 and 128");
    RL_REQUIRE(a->scratch && aligned(a->scratch, 16), "the split-K decode needs its scratch");
    const int pairs = a->batch * a->heads_kv;
    RL_REQUIRE(pairs <= 65535, "a grid column per (sequence, KV head): at most 65535");
    /* ~4 blocks per SM, chunks of at least CHUNK_MIN keys. */
    int splits = min(ceil_div(a->ctx, CHUNK_MIN), ceil_div(4 * sm_count(), pairs));
    splits = min(ATTN_MAX_SPLITS, splits);
    int chunk = ceil_div(a->ctx, splits);
    splits = ceil_div(a->ctx, chunk); /* no empty split */
    const float c = LOG2E / sqrtf((float)a->dim);
    dim3 grid((unsigned)splits, (unsigned)pairs);
    if (a->dim == 64)
        launch_split<64>(a, grid, chunk, c);
    else
        launch_split<128>(a, grid, chunk, c);
    merge_splits<<<a->batch * a->heads_q, a->dim, 0, (cudaStream_t)a->stream>>>(
        a->out, static_cast<const float *>(a->scratch), splits, a->dim);
    RL_CUDA_CHECK_LAUNCH();
}

/* ---- materialized: cuBLAS, softmax, cuBLAS -------------------------------- */

enum { SOFTMAX_THREADS = 256, SOFTMAX_WARPS = SOFTMAX_THREADS / 32, SOFTMAX_MAX_ROW = 16384 };

/* Every thread of the block gets the maximum (or the sum) of v. red: one
 * float per warp, a different array for each reduction of a kernel. */
template <bool MAX> __device__ float block_all(float v, float *red)
{
    for (int off = 16; off > 0; off >>= 1) {
        float o = __shfl_xor_sync(FULL_MASK, v, off);
        v = MAX ? fmaxf(v, o) : v + o;
    }
    if (threadIdx.x % 32 == 0)
        red[threadIdx.x / 32] = v;
    __syncthreads();
    v = red[0];
    for (int w = 1; w < SOFTMAX_WARPS; w++)
        v = MAX ? fmaxf(v, red[w]) : v + red[w];
    return v;
}

/* One block per row of L scores: p = exp(s - max) / sum, written in FP16.
 * The row is read once, VEC floats per load (4 when rows are 16-byte
 * aligned), and held in registers (64 per thread: rows up to 16384). */
template <int VEC>
__global__ void __launch_bounds__(SOFTMAX_THREADS)
softmax_rows(__half *__restrict__ p, const float *__restrict__ s, int L)
{
    enum { PER = SOFTMAX_MAX_ROW / (SOFTMAX_THREADS * VEC) };
    __shared__ float red_max[SOFTMAX_WARPS], red_sum[SOFTMAX_WARPS];
    const float *row = s + (size_t)blockIdx.x * L;
    __half *prow = p + (size_t)blockIdx.x * L;
    float x[PER][VEC], mx = -INFINITY;
#pragma unroll
    for (int i = 0; i < PER; i++) {
        int j = (i * SOFTMAX_THREADS + threadIdx.x) * VEC;
        if constexpr (VEC == 4) {
            float4 t = j < L ? __ldcs(reinterpret_cast<const float4 *>(row + j))
                             : make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
            x[i][0] = t.x, x[i][1] = t.y, x[i][2] = t.z, x[i][3] = t.w;
        } else {
            x[i][0] = j < L ? __ldcs(row + j) : -INFINITY;
        }
#pragma unroll
        for (int e = 0; e < VEC; e++) {
            x[i][e] *= LOG2E; /* -INFINITY stays */
            mx = fmaxf(mx, x[i][e]);
        }
    }
    mx = block_all<true>(mx, red_max);
    float sum = 0;
#pragma unroll
    for (int i = 0; i < PER; i++)
#pragma unroll
        for (int e = 0; e < VEC; e++)
            sum += x[i][e] = exp2f(x[i][e] - mx);
    const float inv = 1.0f / block_all<false>(sum, red_sum);
#pragma unroll
    for (int i = 0; i < PER; i++) {
        int j = (i * SOFTMAX_THREADS + threadIdx.x) * VEC;
        if (j >= L)
            continue;
        if constexpr (VEC == 4) {
            __align__(8) __half2 h[2] = {__floats2half2_rn(x[i][0] * inv, x[i][1] * inv),
                                         __floats2half2_rn(x[i][2] * inv, x[i][3] * inv)};
            *reinterpret_cast<uint2 *>(prow + j) = *reinterpret_cast<const uint2 *>(h);
        } else {
            prow[j] = __float2half_rn(x[i][0] * inv);
        }
    }
}

/* count independent problems, each M query rows against L keys, all
 * row-major and packed one after the other: S_i = scale Q_i K_i^T (M x L),
 * P_i = softmax(S_i) by rows, out_i = P_i V_i (M x dim). Decode: a problem
 * per (sequence, KV head), its M = G query rows adjacent in q; prefill: a
 * problem per head, M = L = n.
 *
 * cuBLAS is column-major, and a row-major r x c matrix read column-major
 * is its transpose (c x r, leading dimension c). So S_i, row-major M x L,
 * is asked for as S_i^T = K_i Q_i^T (L x M, ld L): K_i read column-major
 * is K_i^T (dim x L, ld dim), hence CUBLAS_OP_T, and Q_i read column-major
 * is already Q_i^T (dim x M), CUBLAS_OP_N. Likewise out_i^T = V_i^T P_i^T
 * (dim x M, ld dim), both operands as stored: CUBLAS_OP_N twice. */
static void materialized(const attention_args *a, int count, int M, int L)
{
    RL_REQUIRE(a->scratch && aligned(a->scratch, 16), "the materialized path needs its scratch");
    RL_REQUIRE(L <= SOFTMAX_MAX_ROW, "the softmax kernel holds rows of at most 16384 scores");
    cudaStream_t st = (cudaStream_t)a->stream;
    cublasHandle_t h = rl_cublas_on(st);
    const int d = a->dim;
    const size_t scores = (size_t)count * M * L;
    float *S = static_cast<float *>(a->scratch);
    __half *P = reinterpret_cast<__half *>(S + scores);
    const float scale = 1.0f / sqrtf((float)d), one = 1.0f, zero = 0.0f;

    RL_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
        h, CUBLAS_OP_T, CUBLAS_OP_N, L, M, d, &scale, a->k, CUDA_R_16F, d, (long long)L * d, a->q,
        CUDA_R_16F, d, (long long)M * d, &zero, S, CUDA_R_32F, L, (long long)M * L, count,
        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));

    if (L % 4 == 0)
        softmax_rows<4><<<(unsigned)(count * M), SOFTMAX_THREADS, 0, st>>>(P, S, L);
    else
        softmax_rows<1><<<(unsigned)(count * M), SOFTMAX_THREADS, 0, st>>>(P, S, L);
    RL_CUDA_CHECK_LAUNCH();

    RL_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
        h, CUBLAS_OP_N, CUBLAS_OP_N, d, M, L, &one, a->v, CUDA_R_16F, d, (long long)L * d, P,
        CUDA_R_16F, L, (long long)M * L, &zero, a->out, CUDA_R_32F, d, (long long)M * d, count,
        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

extern "C" void attention_decode_materialized_cuda(const attention_args *a)
{
    require_decode(a);
    materialized(a, a->batch * a->heads_kv, a->heads_q / a->heads_kv, a->ctx);
}

/* heads_q and heads_kv are 1 at prefill and not read. */
extern "C" void attention_prefill_materialized_cuda(const attention_args *a)
{
    require_common(a);
    materialized(a, a->batch, a->ctx, a->ctx);
}

/* ---- prefill, fused: tiled, on tensor cores ------------------------------- */

namespace wmma = nvcuda::wmma;

enum { BR = 64, BC = 64, FA_WARPS = BR / 16, FA_THREADS = FA_WARPS * 32 };
/* Row pitches, padded so that the 8 rows a fragment load reads at once,
 * and the lanes of the softmax, fall on different banks; each keeps rows
 * and fragments 32-byte aligned. */
enum { SP = BC + 4 /* floats */, PP = BC + 8 /* halves */ };
/* A row's reference maximum is raised only when a tile's scores exceed it
 * by more than 2^8 (base 2): below that, p = 2^(s - m) <= 256 is safe in
 * FP16 and FP32, and the accumulators need no rescale. With 0 this is the
 * textbook update (rescale whenever the maximum rises). */
#define RESCALE_SLACK 8.0f

typedef wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> frag_a;
typedef wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> frag_kt; /* K^T */
typedef wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> frag_v;
typedef wmma::fragment<wmma::accumulator, 16, 16, 16, float> frag_acc;

template <int DIM> static constexpr size_t flash_smem_bytes()
{
    return 2 * BC * (DIM + 8) * sizeof(__half) /* K, V */
           + FA_WARPS * 16 * (SP * sizeof(float) + PP * sizeof(__half)); /* S, P */
}

/* Rows [i0, i0 + BC) of a head's K (or V), 16 bytes per thread per step,
 * into a tile of pitch DIM + 8 halves. */
template <int DIM> __device__ void load_tile(__half *tile, const __half *src, int i0)
{
    enum { CHUNKS = DIM / 8 };
    for (int e = threadIdx.x; e < BC * CHUNKS; e += FA_THREADS) {
        int r = e / CHUNKS, col = e % CHUNKS * 8;
        *reinterpret_cast<uint4 *>(tile + r * (DIM + 8) + col) =
            __ldg(reinterpret_cast<const uint4 *>(src + (size_t)(i0 + r) * DIM + col));
    }
}

/* The online softmax of a warp's 16 x BC raw scores S (pitch SP) into P
 * (pitch PP, FP16). Lane owns row lane % 16, half lane / 16 of it; m and l
 * are the row's reference maximum (base 2) and sum, the same in both
 * lanes. Returns the factor by which the row's output must be rescaled. */
__device__ float softmax_tile(const float *S, __half *P, float c, float &m, float &l)
{
    const int lane = threadIdx.x % 32, r = lane % 16, half = lane / 16;
    const float *srow = S + r * SP + half * (BC / 2);
    float s[BC / 2], mt = -INFINITY;
#pragma unroll
    for (int i = 0; i < BC / 2; i += 4) {
        float4 t = *reinterpret_cast<const float4 *>(srow + i);
        s[i] = t.x * c, s[i + 1] = t.y * c, s[i + 2] = t.z * c, s[i + 3] = t.w * c;
        mt = fmaxf(fmaxf(mt, fmaxf(s[i], s[i + 1])), fmaxf(s[i + 2], s[i + 3]));
    }
    mt = fmaxf(mt, __shfl_xor_sync(FULL_MASK, mt, 16));
    const float m_new = mt > m + RESCALE_SLACK ? mt : m;
    const float alpha = exp2f(m - m_new); /* exactly 1 when m stays */
    __half *prow = P + r * PP + half * (BC / 2);
    float sum = 0;
#pragma unroll
    for (int i = 0; i < BC / 2; i += 8) {
        __align__(16) __half2 h[4];
#pragma unroll
        for (int e = 0; e < 4; e++) {
            float p0 = exp2f(s[i + 2 * e] - m_new), p1 = exp2f(s[i + 2 * e + 1] - m_new);
            sum += p0 + p1;
            h[e] = __floats2half2_rn(p0, p1);
        }
        *reinterpret_cast<uint4 *>(prow + i) = *reinterpret_cast<const uint4 *>(h);
    }
    sum += __shfl_xor_sync(FULL_MASK, sum, 16);
    l = l * alpha + sum;
    m = m_new;
    return alpha;
}

/* WMMA's fragment layout is opaque, so a per-row operation on an
 * accumulator goes through a 16 x 16 staging tile (pitch SP) in shared
 * memory, with the softmax's lane-to-row mapping: lane takes row lane % 16,
 * columns 8 (lane / 16) .. + 7. */
__device__ void stage_rows(float *stage, const frag_acc &f)
{
    wmma::store_matrix_sync(stage, f, SP, wmma::mem_row_major);
    __syncwarp();
}

__device__ float *my_staged_row(float *stage)
{
    const int lane = threadIdx.x % 32;
    return stage + (lane % 16) * SP + lane / 16 * 8;
}

/* Grid (n / BR, heads). out: the block's BR rows of its head. c = scale x
 * log2(e). */
template <int DIM>
__global__ void __launch_bounds__(FA_THREADS)
flash_prefill(float *__restrict__ out, const __half *__restrict__ q, const __half *__restrict__ k,
              const __half *__restrict__ v, int n, float c)
{
    enum { KP = DIM + 8, DF = DIM / 16 };
    extern __shared__ __align__(128) unsigned char smem[];
    __half *Ks = reinterpret_cast<__half *>(smem), *Vs = Ks + BC * KP;
    const int warp = threadIdx.x / 32;
    float *S_all = reinterpret_cast<float *>(Vs + BC * KP);
    __half *P_all = reinterpret_cast<__half *>(S_all + FA_WARPS * 16 * SP);
    float *S = S_all + warp * 16 * SP; /* this warp's scores, then its staging tile */
    __half *P = P_all + warp * 16 * PP;

    const size_t head = (size_t)blockIdx.y * n * DIM;
    const int row0 = blockIdx.x * BR + warp * 16;
    frag_a qf[DF];
    frag_acc o[DF];
#pragma unroll
    for (int f = 0; f < DF; f++) {
        wmma::load_matrix_sync(qf[f], q + head + (size_t)row0 * DIM + f * 16, DIM);
        wmma::fill_fragment(o[f], 0.0f);
    }
    float m = NO_SCORE, l = 0;

    for (int kt = 0; kt < n; kt += BC) {
        __syncthreads(); /* every warp is done with the previous tiles */
        load_tile<DIM>(Ks, k + head, kt);
        load_tile<DIM>(Vs, v + head, kt);
        __syncthreads();

        /* S = Q K^T, 16 x BC, one 16 x 16 block at a time. */
#pragma unroll
        for (int j = 0; j < BC / 16; j++) {
            frag_acc s;
            wmma::fill_fragment(s, 0.0f);
#pragma unroll
            for (int f = 0; f < DF; f++) {
                frag_kt kb;
                wmma::load_matrix_sync(kb, Ks + j * 16 * KP + f * 16, KP);
                wmma::mma_sync(s, qf[f], kb, s);
            }
            wmma::store_matrix_sync(S + j * 16, s, SP, wmma::mem_row_major);
        }
        __syncwarp();
        const float alpha = softmax_tile(S, P, c, m, l);
        __syncwarp(); /* P written; S free for staging */

        /* Rescale O's rows where a maximum rose (after the first tile,
         * whose O is still zero). */
        if (kt > 0 && __any_sync(FULL_MASK, alpha != 1.0f))
#pragma unroll
            for (int f = 0; f < DF; f++) {
                stage_rows(S, o[f]);
                float *row = my_staged_row(S);
#pragma unroll
                for (int e = 0; e < 8; e++)
                    row[e] *= alpha;
                __syncwarp();
                wmma::load_matrix_sync(o[f], S, SP, wmma::mem_row_major);
                __syncwarp();
            }

        /* O += P V, P's 16 x 16 blocks loaded once each. */
#pragma unroll
        for (int j = 0; j < BC / 16; j++) {
            frag_a pa;
            wmma::load_matrix_sync(pa, P + j * 16, PP);
#pragma unroll
            for (int f = 0; f < DF; f++) {
                frag_v vb;
                wmma::load_matrix_sync(vb, Vs + j * 16 * KP + f * 16, KP);
                wmma::mma_sync(o[f], pa, vb, o[f]);
            }
        }
    }

    /* out = O / l, row by row through the staging tile. */
    const float inv = 1.0f / l;
    const int lane = threadIdx.x % 32;
    float *dst = out + head + (size_t)(row0 + lane % 16) * DIM + lane / 16 * 8;
#pragma unroll
    for (int f = 0; f < DF; f++) {
        stage_rows(S, o[f]);
        const float *row = my_staged_row(S);
        float4 *d4 = reinterpret_cast<float4 *>(dst + f * 16);
        d4[0] = make_float4(row[0] * inv, row[1] * inv, row[2] * inv, row[3] * inv);
        d4[1] = make_float4(row[4] * inv, row[5] * inv, row[6] * inv, row[7] * inv);
        __syncwarp();
    }
}

template <int DIM> static void launch_flash(const attention_args *a)
{
    constexpr size_t smem = flash_smem_bytes<DIM>();
    static bool opted; /* per DIM: above 48 KB a kernel must opt in */
    if (!opted) {
        RL_CUDA_CHECK(cudaFuncSetAttribute(flash_prefill<DIM>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        opted = true;
    }
    dim3 grid((unsigned)(a->ctx / BR), (unsigned)a->batch);
    flash_prefill<DIM><<<grid, FA_THREADS, smem, (cudaStream_t)a->stream>>>(
        a->out, reinterpret_cast<const __half *>(a->q), reinterpret_cast<const __half *>(a->k),
        reinterpret_cast<const __half *>(a->v), a->ctx, LOG2E / sqrtf((float)DIM));
    RL_CUDA_CHECK_LAUNCH();
}

/* heads_q and heads_kv are 1 at prefill and not read. */
extern "C" void attention_prefill_fused_cuda(const attention_args *a)
{
    require_common(a);
    RL_REQUIRE(a->dim == 64 || a->dim == 128, "the fused prefill is built for dim 64 and 128");
    RL_REQUIRE(a->ctx % BR == 0 && a->ctx % BC == 0, "the fused prefill takes n in tiles of 64");
    RL_REQUIRE(a->batch <= 65535, "a grid row per head: at most 65535");
    if (a->dim == 64)
        launch_flash<64>(a);
    else
        launch_flash<128>(a);
}
