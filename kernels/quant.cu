/*
 * quant.cu -- CUDA kernels for the block formats of quant.h (the table is
 * quant.c: launchers only here; variant 3's kernel is in quant_dp4a.cuh).
 *
 * Decode (variant 1): a warp per 1-2 rows; for each block of the row,
 * lane l decodes weights 8l..8l+7 in registers with quant.h's decode
 * function (one or two naturally aligned loads per lane: a warp reads the
 * block's bytes contiguously), multiplies them with eight x values loaded
 * as one 16-byte word, and accumulates in FP32. The F16 format runs
 * experiment 02's gemv_fp16.
 *
 * Decode (variant 3): x is quantized to 8 bits in shared memory by each
 * thread block (cpu/quant_dot.h's arithmetic: a scale per 32 values), each
 * lane's words ready for its dots, and lane l computes its share of each
 * block with dp4a (quant_dp4a.h). The first blocks' weights are loaded
 * before x is quantized, so that work hides under them; then two groups of
 * four blocks alternate, one group's dots running while the other's loads
 * are in flight (the lane structs hold raw words, used only by the dots).
 * q8, q5 and q4 load a group's 32 FP16 scales with one load a lane and pass
 * them on by shuffles (quant_group_scale_*), which keeps the one-row
 * kernels within the 40 registers of three blocks per SM without a spill
 * on any SM from sm_75 to sm_90. A row whose blocks are not whole pairs of
 * groups ends in one checked round after the loop (TAIL), so the loop is
 * the same in both kernels. In the SASS for sm_90 (cuobjdump) the loop
 * costs, per weight and lane, q8 1.4, q4 1.8, q5 2.9, q6 4.3, q2 4.5
 * instructions: per byte of weights, 0.04, 0.10, 0.13, 0.17 and 0.43 warp
 * instructions, where an H200 issues about 0.22 per byte its HBM delivers:
 * q2 is bound by its instructions, q6 has little margin.
 *
 * Batch (variant 5, gemm_mma): a few tokens through m16n8k16 MMAs, each
 * lane's weights dequantized in registers straight into B's fragment, x
 * staged in shared memory in the matching order (quant_mma.cuh); where
 * the rows are too few to fill the GPU, slices of k in thread blocks of
 * their own, summed by a second kernel (quant_mma.h plans both).
 *
 * Prefill (variant 2): a kernel dequantizes the whole matrix to FP16 (one
 * thread per eight weights, one 16-byte store each), then cuBLAS runs the
 * FP16 GEMM: llama.cpp's fallback (GGML_CUDA_FORCE_CUBLAS, or a type its
 * quantized matrix multiply lacks); where the GPU has int8 tensor cores it
 * runs pp512 through that multiply (MMQ), on the blocks as stored. The FP16
 * matrix is written to memory and read back: that pass is the price of the
 * format at prefill, a third of an H200's pp512 (exp-03's
 * dequant_share_model), and the experiment reports its share.
 */
#include "check.h"
#include "device.cuh"
#include "quant.h"
#include "quant_dp4a.cuh"
#include "quant_dp4a.h"
#include "quant_mma.cuh"
#include "quant_mma.h"
#include "warp.cuh"

enum { BLOCK = 256, WARPS = BLOCK / 32 };

/* One name for the decoders, chosen by the block type. */
__device__ __forceinline__ void decode8(const q8_block *b, int l, float w[8]) { q8_decode8(b, l, w); }
__device__ __forceinline__ void decode8(const q6_block *b, int l, float w[8]) { q6_decode8(b, l, w); }
__device__ __forceinline__ void decode8(const q5_block *b, int l, float w[8]) { q5_decode8(b, l, w); }
__device__ __forceinline__ void decode8(const q4_block *b, int l, float w[8]) { q4_decode8(b, l, w); }
__device__ __forceinline__ void decode8(const q2_block *b, int l, float w[8]) { q2_decode8(b, l, w); }

/* ---- variant 1: dequantize in registers ------------------------------------- */

template <typename Block, int R>
__global__ void __launch_bounds__(BLOCK)
gemv_dequant(float *__restrict__ y, const Block *__restrict__ w, const uint4 *__restrict__ x,
             int rows, int blocks_per_row)
{
    int warp = blockIdx.x * WARPS + threadIdx.x / 32, lane = threadIdx.x % 32;
    int row0 = warp * R;
    if (row0 >= rows)
        return; /* whole warps leave together */
    const Block *wr[R];
#pragma unroll
    for (int r = 0; r < R; r++) /* a missing last row reads the previous one, unused */
        wr[r] = w + (size_t)min(row0 + r, rows - 1) * blocks_per_row;
    float acc[R] = {};
#pragma unroll 2
    for (int b = 0; b < blocks_per_row; b++) {
        float xf[8];
        unpack8(__ldg(x + (size_t)b * 32 + lane), xf); /* x[256 b + 8 lane ..] */
#pragma unroll
        for (int r = 0; r < R; r++) {
            float wv[8];
            decode8(wr[r] + b, lane, wv);
#pragma unroll
            for (int i = 0; i < 8; i++)
                acc[r] = fmaf(wv[i], xf[i], acc[r]);
        }
    }
#pragma unroll
    for (int r = 0; r < R; r++) {
        float s = warp_sum(acc[r]);
        if (lane == 0 && row0 + r < rows)
            y[row0 + r] = s;
    }
}

/* Thread blocks for this many threads (at least one). */
static unsigned grid_for_threads(long long threads)
{
    long long b = (threads + BLOCK - 1) / BLOCK;
    return (unsigned)(b ? b : 1);
}

/* Calls launch(tag) with a null pointer of the block type of quantized
 * format f (not F16): the one switch from formats to block types. */
template <typename Launch> static void with_block_type(quant_format f, Launch launch)
{
    switch (f) {
    case QF_Q8: launch(static_cast<const q8_block *>(nullptr)); break;
    case QF_Q6: launch(static_cast<const q6_block *>(nullptr)); break;
    case QF_Q5: launch(static_cast<const q5_block *>(nullptr)); break;
    case QF_Q4: launch(static_cast<const q4_block *>(nullptr)); break;
    default: launch(static_cast<const q2_block *>(nullptr)); break;
    }
}

/* A decode in F16 is experiment 02's gemv_fp16, whatever the variant. */
static void decode_f16(const quant_args *a)
{
    gemv_args g = {a->y, static_cast<const fp16 *>(a->w), a->x, a->rows, a->k, 1, NULL, a->stream};
    gemv_fp16_cuda(&g);
}

/* Rows per warp of both decodes: two share each x load from 8192 rows
 * up; with fewer rows, one each, so that there are more warps. */
static bool two_rows_per_warp(const quant_args *a) { return a->rows >= 8192; }

template <typename Block> static void decode_as(const quant_args *a, const Block *)
{
    const Block *w = static_cast<const Block *>(a->w);
    const uint4 *x = reinterpret_cast<const uint4 *>(a->x);
    int blocks = a->k / QUANT_BLOCK;
    if (two_rows_per_warp(a))
        gemv_dequant<Block, 2><<<grid_for_threads(32LL * ((a->rows + 1) / 2)), BLOCK, 0, a->stream>>>(
            a->y, w, x, a->rows, blocks);
    else
        gemv_dequant<Block, 1><<<grid_for_threads(32LL * a->rows), BLOCK, 0, a->stream>>>(
            a->y, w, x, a->rows, blocks);
    RL_CUDA_CHECK_LAUNCH();
}

void quant_decode_dequant_cuda(const quant_args *a)
{
    if (a->format == QF_F16)
        decode_f16(a);
    else
        with_block_type(a->format, [a](auto block) { decode_as(a, block); });
}

/* ---- variant 3: x in 8 bits, dp4a (the kernel: quant_dp4a.cuh) -------------- */


template <typename Block, int R, bool TAIL> static void launch_dp4a(const quant_args *a)
{
    int nb = a->k / QUANT_BLOCK;
    size_t smem = (size_t)nb * 32 * sizeof(uint4);
    if (smem > 48 * 1024) /* past the default limit of dynamic shared memory: ask (k > 24,576) */
        RL_CUDA_CHECK(cudaFuncSetAttribute(gemv_dp4a<Block, R, TAIL>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    long long warps = (a->rows + R - 1) / R;
    int per_block = quant_dp4a_warps_per_block(a->rows, R, rl_device_sms());
    unsigned grid = (unsigned)((warps + per_block - 1) / per_block);
    gemv_dp4a<Block, R, TAIL><<<grid, 32 * per_block, smem, a->stream>>>(
        a->y, static_cast<const Block *>(a->w), reinterpret_cast<const uint4 *>(a->x), a->rows, nb);
    RL_CUDA_CHECK_LAUNCH();
}

/* Rows of whole pairs of groups (k a multiple of 2048: every matrix of
 * the model) take the kernel without the checked last round. */
template <typename Block, int R> static void launch_dp4a(const quant_args *a)
{
    int nb = a->k / QUANT_BLOCK;
    if (nb > 0 && nb % (2 * DP4A_UNROLL) == 0)
        launch_dp4a<Block, R, false>(a);
    else
        launch_dp4a<Block, R, true>(a);
}

/* Two rows per warp double the registers a warp's loads in flight take:
 * only for the formats whose lanes are one or two words (q8, q4: 64 and
 * 40 registers at two rows on sm_90, within the 64 of two blocks per SM);
 * q6, q5 and q2 stay at one row (at two, ptxas gave them 64 to 127
 * registers without a bound: one block of 512 per SM), and their two-row
 * kernels are not built. */
constexpr bool pairs_rows(const q8_block *) { return true; }
constexpr bool pairs_rows(const q4_block *) { return true; }
template <typename Block> constexpr bool pairs_rows(const Block *) { return false; }

template <typename Block> static void dp4a_as(const quant_args *a, const Block *)
{
    if constexpr (pairs_rows(static_cast<const Block *>(nullptr)))
        if (two_rows_per_warp(a)) {
            launch_dp4a<Block, 2>(a);
            return;
        }
    launch_dp4a<Block, 1>(a);
}

void quant_decode_dp4a_cuda(const quant_args *a)
{
    if (a->format == QF_F16)
        decode_f16(a);
    else
        with_block_type(a->format, [a](auto block) { dp4a_as(a, block); });
}

/* ---- variant 2: dequantize to FP16, then cuBLAS ------------------------------- */

/* Thread g decodes weights 8 (g % 32).. of block g / 32 of the matrix
 * (blocks run row after row, so block g / 32 covers FP16 elements
 * 256 (g / 32) ..) and writes them with one 16-byte store. */
template <typename Block>
__global__ void __launch_bounds__(BLOCK)
dequant_fp16(uint4 *__restrict__ out, const Block *__restrict__ w, long long blocks)
{
    long long g = blockIdx.x * (long long)BLOCK + threadIdx.x;
    if (g >= 32 * blocks)
        return;
    float v[8];
    decode8(w + g / 32, (int)(g % 32), v);
    uint32_t p[4];
#pragma unroll
    for (int i = 0; i < 4; i++)
        p[i] = (uint32_t)float_to_fp16(v[2 * i]) | ((uint32_t)float_to_fp16(v[2 * i + 1]) << 16);
    out[g] = make_uint4(p[0], p[1], p[2], p[3]);
}

template <typename Block> static void dequant_as(const quant_args *a, uint4 *out, const Block *)
{
    long long blocks = (long long)a->rows * (a->k / QUANT_BLOCK);
    dequant_fp16<Block><<<grid_for_threads(32 * blocks), BLOCK, 0, a->stream>>>(
        out, static_cast<const Block *>(a->w), blocks);
    RL_CUDA_CHECK_LAUNCH();
}

size_t quant_prefill_cuda_scratch(int rows, int k, int n)
{
    (void)n;
    return sizeof(fp16) * (size_t)rows * k;
}

void quant_prefill_cuda(const quant_args *a)
{
    const fp16 *w16 = static_cast<const fp16 *>(a->w); /* F16: straight to the GEMM */
    if (a->format != QF_F16) {
        uint4 *out = static_cast<uint4 *>(a->scratch);
        with_block_type(a->format, [a, out](auto block) { dequant_as(a, out, block); });
        w16 = static_cast<const fp16 *>(a->scratch);
    }
    gemv_args g = {a->y, w16, a->x, a->rows, a->k, a->n, NULL, a->stream};
    gemv_library_cuda(&g);
}

/* ---- variant 5: a few tokens, MMAs on weights dequantized in registers ------------ */

template <typename Block, int MT> static void launch_mma(const quant_args *a)
{
    int per_split, nb = a->k / QUANT_BLOCK;
    int splits = quant_mma_splits(a->rows, a->n, a->k, rl_device_sms(), &per_split);
    float *part = splits > 1 ? static_cast<float *>(a->scratch) : a->y;
    dim3 grid((unsigned)((a->n + 16 * MT - 1) / (16 * MT)),
              (unsigned)((a->rows + QUANT_MMA_ROWS - 1) / QUANT_MMA_ROWS), (unsigned)splits);
    gemm_mma<Block, MT><<<grid, 32 * QUANT_MMA_WARPS, 0, a->stream>>>(
        part, static_cast<const Block *>(a->w), a->x, a->rows, a->n, nb, per_split);
    RL_CUDA_CHECK_LAUNCH();
    if (splits > 1) {
        long long count = (long long)a->n * a->rows;
        mma_sum_splits<<<grid_for_threads(count), BLOCK, 0, a->stream>>>(a->y, part, count, splits);
        RL_CUDA_CHECK_LAUNCH();
    }
}

template <typename Block> static void mma_as(const quant_args *a, const Block *)
{
    switch (quant_mma_token_tiles(a->n)) {
    case 1: launch_mma<Block, 1>(a); break;
    case 2: launch_mma<Block, 2>(a); break;
    default: launch_mma<Block, 4>(a); break;
    }
}

void quant_batch_mma_cuda(const quant_args *a)
{
    if (a->format == QF_F16)
        mma_as(a, static_cast<const qf16_block *>(nullptr));
    else
        with_block_type(a->format, [a](auto block) { mma_as(a, block); });
}

/* The partial sums of the most slices any GPU would take (quant_mma.h). */
size_t quant_batch_mma_cuda_scratch(int rows, int k, int n)
{
    return quant_mma_scratch_bytes(rows, k, n, QUANT_MMA_MOST_SMS);
}
