/*
 * attention.cu -- CUDA variants of experiment 07's attention (attention.h;
 * the table is attention.c: launchers only here; the fused kernels are in
 * attention_decode.cuh and attention_prefill.cuh). FP16 in, FP32
 * accumulation and output throughout. Scores are kept in base 2: they are multiplied by
 * scale x log2(e) in FP32, so that one MUFU.EX2 (ex2.approx) replaces expf.
 *
 * Decode, fused (flash-decoding, attention_decode_split_cuda). The grid is
 * (splits, batch x heads_kv): a block takes one (sequence, KV head) and one
 * contiguous chunk of its cache, and serves all G = heads_q / heads_kv
 * query heads of that KV head, so each K and V row crosses the memory bus
 * once for G queries: 4 G dim FLOPs per 4 dim bytes, an arithmetic
 * intensity of G FLOP/B. At G = 8 that is more FMAs per byte than the FP32
 * pipes issue at HBM's rate (an FMA per head per dim of K and of V: 64
 * warp-instructions per 512 bytes of a key at dim 128), so both products
 * run on the tensor cores (mma.sync m16n8k16): each warp takes 16 keys a
 * step, S = Q K^T with the heads as M (padded to 16) and O^T += V^T P^T
 * with the dims as M, P split into two halves hi + lo so that P V keeps
 * FP32's precision. The instructions per step do not depend on G (1 to 8)
 * and are a small part of what the SMs issue per byte at HBM's rate; a
 * warp has dim x 64 bytes of K and V in flight before its first product.
 * Each warp runs an online softmax over its
 * keys; the block's 4 warps are merged through shared memory and the block
 * writes its unnormalized partial output, its maximum and its sum ((dim +
 * 2) floats per query head) to scratch; a second kernel merges the splits.
 * Splits (attention_decode_splits, host-only C): enough blocks for one wave
 * of what the occupancy API says an SM holds, chunks of at least
 * ATTN_SPLIT_MIN_KEYS keys, at most ATTN_MAX_SPLITS. The partials add
 * batch x heads_q x splits x (dim + 2) x 8 bytes of traffic.
 *
 * Decode and prefill, materialized (the eager path): cuBLAS writes S =
 * scale Q K^T in FP32 (4 B per score), a softmax kernel reads each row
 * once (4 B; the row stays in registers between its maximum, its sum and
 * its output) and writes P in FP16 (2 B), cuBLAS reads P (2 B) for P V:
 * 12 B per score on top of Q, K, V and out (attention_score_bytes).
 *
 * Prefill, fused (a FlashAttention-2 loop on mma.sync, FP16 products with
 * FP32 accumulators). A block of 4 warps owns BR = 64 queries of one head,
 * a warp 16 of them, and loops over tiles of BC = 64 keys that it copies
 * into shared memory; scores, the softmax and P never leave the registers.
 * With two stages (cp.async, sm_80 and later) the next tile's copy
 * overlaps this tile's products; the copy's offsets are fixed per thread,
 * a tile costs a pointer step. K and V are read n / BR times per head,
 * from L2 mostly, and DRAM sees Q, K, V and out about once. Shared memory:
 * stages x 2 x 64 x (dim + 8) x 2 B: 68 KB at dim 128 with two stages (two
 * blocks on sm_80, three on sm_90), 34 KB with one (sm_75's 64 KB, and
 * sm_86/89's 100 KB, which would hold only one block of two stages); the
 * launcher picks the stages from the occupancy API.
 */
#include "attention.h"
#include "check.h"
#include "device.cuh"
#include "cublas_handle.cuh"
#include "warp.cuh"
#include "attention_decode.cuh"
#include "attention_prefill.cuh"

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <math.h>
#include <stdint.h>

#define LOG2E 1.4426950408889634f
#define FULL_MASK 0xffffffffu

static bool aligned(const void *p, uintptr_t bytes) { return (uintptr_t)p % bytes == 0; }


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

/* ---- decode, fused: flash-decoding (attention_decode.cuh) ------------------ */

/* The blocks of decode_split<DIM, G> an SM holds (registers and shared
 * memory, as the occupancy API counts them), asked once. */
template <int DIM, int G> static int decode_blocks_per_sm(void)
{
    static int blocks;
    if (!blocks) {
        RL_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &blocks, decode_split<DIM, G>, DEC_THREADS, decode_smem_bytes(DIM, G)));
        RL_REQUIRE(blocks >= 1, "a block of the split-K decode fits an SM");
    }
    return blocks;
}

template <int DIM, int G> static void launch_split(const attention_args *a)
{
    const int pairs = a->batch * a->heads_kv;
    /* one wave of resident blocks at least (attention_decode_splits) */
    const int splits = attention_decode_splits(a->ctx, pairs, rl_device_sms(), decode_blocks_per_sm<DIM, G>());
    const int chunk = attention_decode_chunk(a->ctx, splits);
    cudaStream_t st = (cudaStream_t)a->stream;
    float *part = static_cast<float *>(a->scratch);
    decode_split<DIM, G><<<dim3((unsigned)splits, (unsigned)pairs), DEC_THREADS, decode_smem_bytes(DIM, G),
                           st>>>(part, reinterpret_cast<const uint4 *>(a->q),
                                 reinterpret_cast<const uint4 *>(a->k),
                                 reinterpret_cast<const uint4 *>(a->v), a->ctx, chunk,
                                 LOG2E / sqrtf((float)DIM));
    RL_CUDA_CHECK_LAUNCH();
    merge_splits<<<a->batch * a->heads_q, a->dim, 0, st>>>(a->out, part, splits, a->dim);
    RL_CUDA_CHECK_LAUNCH();
}

template <int DIM> static void launch_split_group(const attention_args *a)
{
    switch (a->heads_q / a->heads_kv) {
    case 1: launch_split<DIM, 1>(a); break;
    case 2: launch_split<DIM, 2>(a); break;
    case 4: launch_split<DIM, 4>(a); break;
    default: launch_split<DIM, 8>(a); break; /* require_decode: 1, 2, 4 or 8 */
    }
}

extern "C" void attention_decode_split_cuda(const attention_args *a)
{
    require_decode(a);
    RL_REQUIRE(a->dim == 64 || a->dim == 128, "the split-K decode is built for dim 64 and 128");
    RL_REQUIRE(a->scratch && aligned(a->scratch, 16), "the split-K decode needs its scratch");
    RL_REQUIRE((long long)a->batch * a->heads_kv <= 65535,
               "a grid column per (sequence, KV head): at most 65535");
    if (a->dim == 64)
        launch_split_group<64>(a);
    else
        launch_split_group<128>(a);
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

/* ---- prefill, fused: tiled, on tensor cores (attention_prefill.cuh) -------- */

/* The blocks of flash_prefill<DIM, STAGES> an SM holds, 0 where its shared
 * memory exceeds what a block may opt into; asked once (and the opt-in
 * set: above 48 KB a kernel must ask for its shared memory). */
template <int DIM, int STAGES> static int flash_blocks_per_sm(void)
{
    const size_t smem = flash_smem_bytes<DIM, STAGES>();
    static int blocks = -1;
    if (blocks < 0) {
        int dev = 0, optin = 0, n = 0;
        RL_CUDA_CHECK(cudaGetDevice(&dev));
        RL_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
        if (smem <= (size_t)optin) {
            RL_CUDA_CHECK(cudaFuncSetAttribute(flash_prefill<DIM, STAGES>,
                                               cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
            RL_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, flash_prefill<DIM, STAGES>,
                                                                        FA_THREADS, smem));
        }
        blocks = n;
    }
    return blocks;
}

template <int DIM, int STAGES> static void launch_flash_stages(const attention_args *a)
{
    dim3 grid((unsigned)(a->ctx / BR), (unsigned)a->batch);
    flash_prefill<DIM, STAGES><<<grid, FA_THREADS, flash_smem_bytes<DIM, STAGES>(), (cudaStream_t)a->stream>>>(
        a->out, reinterpret_cast<const __half *>(a->q), reinterpret_cast<const __half *>(a->k),
        reinterpret_cast<const __half *>(a->v), a->ctx, LOG2E / sqrtf((float)DIM));
    RL_CUDA_CHECK_LAUNCH();
}

/* Two stages where the SM still holds two blocks of them (sm_80 and sm_90
 * at both dims, sm_86 and sm_89 at dim 64), else one: a single block per
 * SM would leave its tensor cores idle at every barrier, which other
 * blocks' warps fill. sm_75 (64 KB, no cp.async) takes one. */
template <int DIM> static void launch_flash(const attention_args *a)
{
    if (flash_blocks_per_sm<DIM, 2>() >= 2)
        launch_flash_stages<DIM, 2>(a);
    else {
        const int one_stage = flash_blocks_per_sm<DIM, 1>();
        RL_REQUIRE(one_stage >= 1, "a block of the fused prefill fits an SM");
        launch_flash_stages<DIM, 1>(a);
    }
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
