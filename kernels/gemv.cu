/*
 * gemv.cu -- CUDA variants of the FP16-weight linear layer (see gemv.h).
 *
 * Numbered as in the table at the end. At n = 1 a GEMV does one multiply-
 * add per weight it loads: nothing to compute, everything to move. What
 * makes it fast is how the bytes travel: coalesced 16-byte loads, enough
 * of them in flight to cover the latency of HBM, and few instructions per
 * byte, so that issuing them never becomes the limit.
 *
 * Variant 2 is written for the last point at every n up to 8. With one
 * lane's 16 bytes of weights (8 halves) feeding 8 n multiply-adds in FP32,
 * the instructions grow with n: at n = 8 an FP32 kernel spends 64 FFMAs
 * and 8 x loads per 16-byte weight load, more than an H200 can issue per
 * byte its HBM delivers. A tensor-core product does the 16 rows x 8 tokens
 * x 8 k of one step in one instruction (mma m16n8k8, FP16 in, FP32 sums),
 * so the instructions per byte are the same at n = 1 and n = 8, a small
 * fraction of the issue rate: the time per step stays the time of the
 * bytes, which is what experiment 02's batching claim is about.
 */
#include "check.h"
#include "device.cuh"
#include "cublas_handle.cuh"
#include "gemv.h"
#include "gemv_tile.cuh"
#include "warp.cuh"

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <stdint.h>

enum { BLOCK = 256, WARPS = BLOCK / 32 };

/* ---- variant 1: a warp per row, one half per lane per step --------------- */

/* Coalesced, but each warp-wide load brings only 64 bytes: eight times the
 * load instructions of variant 2 for the same bytes, and fewer bytes in
 * flight per warp. Decode only (n = 1). */
__global__ void __launch_bounds__(BLOCK)
gemv_scalar(float *__restrict__ y, const fp16 *__restrict__ w, const fp16 *__restrict__ x,
            int rows, int k)
{
    int row = blockIdx.x * WARPS + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= rows)
        return;
    const fp16 *wr = w + (size_t)row * k;
    float acc = 0;
    for (int i = lane; i < k; i += 32)
        acc = fmaf(fp16_to_float(wr[i]), fp16_to_float(x[i]), acc);
    acc = warp_sum(acc);
    if (lane == 0)
        y[row] = acc;
}

/* ---- variant 2: a warp per 16 rows, tensor-core products (gemv_tile.cuh) -- */

/* The SMs of the current device and the blocks of gemv_tile each holds,
 * asked again only when the device changes. */
static void tile_device(int *sms, int *blocks_per_sm)
{
    static int device = -1, cached_blocks = 0;
    int now;
    RL_CUDA_CHECK(cudaGetDevice(&now));
    if (now != device) {
        RL_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&cached_blocks, gemv_tile,
                                                                     32 * GEMV_CUDA_BLOCK_WARPS, 0));
        device = now;
    }
    *sms = rl_device_sms();
    *blocks_per_sm = cached_blocks;
}

/* Thread blocks for this many warps (at least one). */
static unsigned blocks_for(long long warps)
{
    long long b = (warps + WARPS - 1) / WARPS;
    return (unsigned)(b ? b : 1);
}

extern "C" void gemv_scalar_cuda(const gemv_args *a)
{
    gemv_scalar<<<blocks_for(a->rows), BLOCK, 0, a->stream>>>(a->y, a->w, a->x, a->rows, a->k);
    RL_CUDA_CHECK_LAUNCH();
}

/* The checks come first, before any CUDA call: a caller's wrong shape is
 * a message, never a misaligned load. */
extern "C" void gemv_fp16_cuda(const gemv_args *a)
{
    char why[160] = "";
    RL_REQUIRE(gemv_batch_ok(a->n, why, sizeof why), why);
    RL_REQUIRE(gemv_cuda_shape_ok(a->rows, a->k, a->w, a->x, why, sizeof why), why);
    int sms, blocks_per_sm;
    tile_device(&sms, &blocks_per_sm);
    gemv_cuda_plan p = gemv_cuda_plan_for(a->rows, a->k, sms, blocks_per_sm);
    gemv_tile<<<(unsigned)p.blocks, p.threads, 0, a->stream>>>(a->y, reinterpret_cast<const uint4 *>(a->w),
                                                               reinterpret_cast<const uint4 *>(a->x), a->rows,
                                                               a->k / 8, a->n, p.split);
    RL_CUDA_CHECK_LAUNCH();
}

/* ---- variant 3: cuBLAS ------------------------------------------------------ */

/* cuBLAS is column-major: y (n x rows, row-major) is the rows x n matrix
 * C = W^T' X' in its terms, with W (rows x k, row-major) seen as a k x rows
 * matrix to transpose, and x as k x n. At n = 1 this is a GEMV through the
 * GEMM interface, "cublasGemmEx with one column". Tensor cores, FP32
 * accumulation, FP32 output. */
extern "C" void gemv_library_cuda(const gemv_args *a)
{
    const float one = 1.0f, zero = 0.0f;
    RL_CUBLAS_CHECK(cublasGemmEx(rl_cublas_on(a->stream), CUBLAS_OP_T, CUBLAS_OP_N, a->rows, a->n,
                                 a->k, &one, a->w, CUDA_R_16F, a->k, a->x, CUDA_R_16F, a->k,
                                 &zero, a->y, CUDA_R_32F, a->rows, CUBLAS_COMPUTE_32F,
                                 CUBLAS_GEMM_DEFAULT));
}
