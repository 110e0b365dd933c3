/*
 * gemv.cu -- CUDA variants of the FP16-weight linear layer (see gemv.h).
 *
 * Numbered as in the table at the end. At n = 1 a GEMV does one multiply-
 * add per weight it loads: nothing to compute, everything to move. What
 * makes it fast is how the bytes travel: coalesced 16-byte loads, enough
 * of them in flight to cover the latency of HBM, and each x load shared
 * by several rows.
 */
#include "check.h"
#include "cublas_handle.cuh"
#include "gemv.h"
#include "warp.cuh"

#include <cublas_v2.h>
#include <cuda_fp16.h>

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

/* ---- variant 2: 16-byte loads, R rows per warp ------------------------------ */

/* Each lane loads eight halves of each of R rows with one 16-byte load
 * (a warp: 512 contiguous bytes per row), the compiler keeps two such steps
 * in flight, and the x load (from L1: every warp reads the same x) is
 * shared by the R rows. Weights are read once, so they are loaded with the
 * streaming hint (evict first). FP32 accumulation, a shuffle reduction. */
template <int R, int NT>
__global__ void __launch_bounds__(BLOCK)
gemv_vec(float *__restrict__ y, const uint4 *__restrict__ w, const uint4 *__restrict__ x,
         int rows, int k8)
{
    int warp = blockIdx.x * WARPS + threadIdx.x / 32, lane = threadIdx.x % 32;
    int row0 = warp * R;
    if (row0 >= rows)
        return; /* whole warps leave together: the shuffles below see all lanes */
    const uint4 *wr[R];
#pragma unroll
    for (int r = 0; r < R; r++) /* a missing last row reads the previous one, unused */
        wr[r] = w + (size_t)min(row0 + r, rows - 1) * k8;
    float acc[R][NT] = {};
#pragma unroll 2
    for (int c = lane; c < k8; c += 32) {
        float wf[R][8];
#pragma unroll
        for (int r = 0; r < R; r++)
            unpack8(__ldcs(wr[r] + c), wf[r]);
#pragma unroll
        for (int t = 0; t < NT; t++) {
            float xf[8];
            unpack8(__ldg(x + (size_t)t * k8 + c), xf);
#pragma unroll
            for (int r = 0; r < R; r++)
#pragma unroll
                for (int i = 0; i < 8; i++)
                    acc[r][t] = fmaf(wf[r][i], xf[i], acc[r][t]);
        }
    }
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
        for (int t = 0; t < NT; t++) {
            float s = warp_sum(acc[r][t]);
            if (lane == 0 && row0 + r < rows)
                y[(size_t)t * rows + row0 + r] = s;
        }
}

/* Thread blocks for this many warps (at least one). */
static unsigned blocks_for(long long warps)
{
    long long b = (warps + WARPS - 1) / WARPS;
    return (unsigned)(b ? b : 1);
}

/* Two rows per warp share each x load; below ~8192 rows one row per warp
 * keeps more warps in flight on a 132-SM GPU. */
template <int NT> static void vec_n(const gemv_args *a)
{
    const uint4 *w = reinterpret_cast<const uint4 *>(a->w);
    const uint4 *x = reinterpret_cast<const uint4 *>(a->x);
    if (a->rows >= 8192)
        gemv_vec<2, NT><<<blocks_for((a->rows + 1) / 2), BLOCK, 0, a->stream>>>(a->y, w, x, a->rows, a->k / 8);
    else
        gemv_vec<1, NT><<<blocks_for(a->rows), BLOCK, 0, a->stream>>>(a->y, w, x, a->rows, a->k / 8);
    RL_CUDA_CHECK_LAUNCH();
}

typedef void (*launcher)(const gemv_args *);

extern "C" void gemv_scalar_cuda(const gemv_args *a)
{
    gemv_scalar<<<blocks_for(a->rows), BLOCK, 0, a->stream>>>(a->y, a->w, a->x, a->rows, a->k);
    RL_CUDA_CHECK_LAUNCH();
}

extern "C" void gemv_fp16_cuda(const gemv_args *a)
{
    static const launcher by_tokens[GEMV_MAX_BATCH + 1] = {
        NULL, vec_n<1>, vec_n<2>, vec_n<3>, vec_n<4>, vec_n<5>, vec_n<6>, vec_n<7>, vec_n<8>};
    char why[128] = "";
    RL_REQUIRE(gemv_batch_ok(a->n, why, sizeof why), why);
    by_tokens[a->n](a);
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
