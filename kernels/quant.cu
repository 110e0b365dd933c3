/*
 * quant.cu -- CUDA kernels for the block formats of quant.h (the table is
 * quant.c: launchers only here).
 *
 * Decode (variant 1): a warp per 1-2 rows; for each block of the row,
 * lane l decodes weights 8l..8l+7 in registers with quant.h's decode
 * function (one or two naturally aligned loads per lane: a warp reads the
 * block's bytes contiguously), multiplies them with eight x values loaded
 * as one 16-byte word, and accumulates in FP32. The F16 format runs
 * experiment 02's gemv_fp16.
 *
 * Prefill (variant 2): a kernel dequantizes the whole matrix to FP16 (one
 * thread per eight weights, one 16-byte store each), then cuBLAS runs the
 * FP16 GEMM, as llama.cpp does for batches on the GPU. The FP16 matrix is
 * written to memory and read back: that pass is the price of the format at
 * prefill, and the experiment reports its share.
 */
#include "check.h"
#include "quant.h"
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

template <typename Block> static void decode_as(const quant_args *a)
{
    const Block *w = static_cast<const Block *>(a->w);
    const uint4 *x = reinterpret_cast<const uint4 *>(a->x);
    int blocks = a->k / QUANT_BLOCK;
    if (a->rows >= 8192) /* two rows share each x load; fewer rows: more warps */
        gemv_dequant<Block, 2><<<grid_for_threads(32LL * ((a->rows + 1) / 2)), BLOCK, 0, a->stream>>>(
            a->y, w, x, a->rows, blocks);
    else
        gemv_dequant<Block, 1><<<grid_for_threads(32LL * a->rows), BLOCK, 0, a->stream>>>(
            a->y, w, x, a->rows, blocks);
    RL_CUDA_CHECK_LAUNCH();
}

void quant_decode_dequant_cuda(const quant_args *a)
{
    switch (a->format) {
    case QF_F16: {
        gemv_args g = {a->y, static_cast<const fp16 *>(a->w), a->x, a->rows, a->k, 1, NULL, a->stream};
        gemv_fp16_cuda(&g);
        break;
    }
    case QF_Q8: decode_as<q8_block>(a); break;
    case QF_Q6: decode_as<q6_block>(a); break;
    case QF_Q5: decode_as<q5_block>(a); break;
    case QF_Q4: decode_as<q4_block>(a); break;
    default: decode_as<q2_block>(a); break;
    }
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

template <typename Block> static void dequant_as(const quant_args *a, uint4 *out)
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
    const fp16 *w16 = static_cast<const fp16 *>(a->w);
    uint4 *out = static_cast<uint4 *>(a->scratch);
    switch (a->format) {
    case QF_F16: break; /* already FP16: straight to the GEMM */
    case QF_Q8: dequant_as<q8_block>(a, out); break;
    case QF_Q6: dequant_as<q6_block>(a, out); break;
    case QF_Q5: dequant_as<q5_block>(a, out); break;
    case QF_Q4: dequant_as<q4_block>(a, out); break;
    default: dequant_as<q2_block>(a, out); break;
    }
    if (a->format != QF_F16)
        w16 = static_cast<const fp16 *>(a->scratch);
    gemv_args g = {a->y, w16, a->x, a->rows, a->k, a->n, NULL, a->stream};
    gemv_library_cuda(&g);
}
