/*
 * gemm.cu -- CUDA implementations of experiment 04's GEMM variants (the
 * table is gemm.c).
 *
 * tiled is a plain shared-memory tiled GEMM: one thread block per
 * TILE_M x TILE_N output tile, looping over k in slabs of TILE_K. It is
 * written to be read, not to be fast; what matters here is that each
 * block does one tile's worth of work, so that blocks run in waves.
 * blas is cuBLAS with FP16 inputs, which picks its own tiles.
 */
#include "check.h"
#include "cublas_handle.cuh"
#include "gemm.h"

#include <cublas_v2.h>
#include <cuda_fp16.h>

/* The tile is fixed at compile time. Each thread computes a MICRO x MICRO
 * block of the tile, so a block has (TILE_M / MICRO) x (TILE_N / MICRO)
 * threads: 1024 for 128 x 128. With more than 32 registers per thread a
 * block of 1024 fills an SM's register file, so one block runs per SM,
 * as in NVIDIA's example; the experiment asks the occupancy calculator
 * rather than trusting this comment. Change TILE_M or TILE_N and predict
 * where the steps move before you look. */
enum { TILE_M = 128, TILE_N = 128, TILE_K = 16, MICRO = 4 };
enum { THREADS = (TILE_M / MICRO) * (TILE_N / MICRO) };
/* Shared-memory rows are padded by four floats: threads that store down a
 * column of a slab then spread over the banks instead of hitting one bank
 * sixteen times, and every row still starts 16-byte aligned. */
enum { PAD = 4 };
static_assert(THREADS <= 1024, "a thread block holds at most 1024 threads");

/* As[kk][i] = A(m0 + i, k0 + kk), zero outside A. Consecutive threads walk
 * the dimension that is contiguous in memory, so that a warp's loads
 * coalesce whichever way A is stored. */
__device__ void load_a_slab(float (*As)[TILE_M + PAD], const gemm_args &g, int m0, int k0)
{
    const float *a = static_cast<const float *>(g.a);
    for (int l = threadIdx.x; l < TILE_M * TILE_K; l += THREADS) {
        int i = g.trans_a ? l % TILE_M : l / TILE_K;
        int kk = g.trans_a ? l / TILE_M : l % TILE_K;
        bool inside = m0 + i < g.m && k0 + kk < g.k;
        As[kk][i] = inside ? a[gemm_a_index(&g, m0 + i, k0 + kk)] : 0.0f;
    }
}

/* Bs[kk][j] = B(k0 + kk, n0 + j), zero outside B. */
__device__ void load_b_slab(float (*Bs)[TILE_N + PAD], const gemm_args &g, int k0, int n0)
{
    const float *b = static_cast<const float *>(g.b);
    for (int l = threadIdx.x; l < TILE_K * TILE_N; l += THREADS) {
        int j = g.trans_b ? l / TILE_K : l % TILE_N;
        int kk = g.trans_b ? l % TILE_K : l / TILE_N;
        bool inside = k0 + kk < g.k && n0 + j < g.n;
        Bs[kk][j] = inside ? b[gemm_b_index(&g, k0 + kk, n0 + j)] : 0.0f;
    }
}

/* One block, one output tile. A is kept k-major in shared memory so that
 * a thread's MICRO rows of one k are one 16-byte load, as are its MICRO
 * columns of B; a warp shares its rows (one broadcast) and reads 32
 * neighbouring column groups (no bank conflicts). */
__global__ void __launch_bounds__(THREADS) tiled_gemm(gemm_args g)
{
    __shared__ __align__(16) float As[TILE_K][TILE_M + PAD];
    __shared__ __align__(16) float Bs[TILE_K][TILE_N + PAD];
    int m0 = blockIdx.y * TILE_M, n0 = blockIdx.x * TILE_N;
    int col = threadIdx.x % (TILE_N / MICRO) * MICRO; /* within the tile */
    int row = threadIdx.x / (TILE_N / MICRO) * MICRO;
    float acc[MICRO][MICRO] = {};

    for (int k0 = 0; k0 < g.k; k0 += TILE_K) {
        load_a_slab(As, g, m0, k0);
        load_b_slab(Bs, g, k0, n0);
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TILE_K; kk++) {
            float4 a4 = *reinterpret_cast<const float4 *>(&As[kk][row]);
            float4 b4 = *reinterpret_cast<const float4 *>(&Bs[kk][col]);
            float a[MICRO] = {a4.x, a4.y, a4.z, a4.w}, b[MICRO] = {b4.x, b4.y, b4.z, b4.w};
#pragma unroll
            for (int i = 0; i < MICRO; i++)
#pragma unroll
                for (int j = 0; j < MICRO; j++)
                    acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads(); /* the slab is read by all before it is overwritten */
    }
#pragma unroll
    for (int i = 0; i < MICRO; i++)
#pragma unroll
        for (int j = 0; j < MICRO; j++)
            if (m0 + row + i < g.m && n0 + col + j < g.n)
                g.c[(size_t)(m0 + row + i) * g.n + (n0 + col + j)] = acc[i][j];
}

static void launch_tiled(const gemm_args *g)
{
    dim3 grid((g->n + TILE_N - 1) / TILE_N, (g->m + TILE_M - 1) / TILE_M);
    tiled_gemm<<<grid, THREADS, 0, g->stream>>>(*g);
    RL_CUDA_CHECK_LAUNCH();
}

/* Blocks of tiled_gemm resident on one SM at once, as the hardware will
 * schedule them: registers, shared memory and threads all counted. */
static int tiled_blocks_per_sm(void)
{
    int blocks = 0;
    RL_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, tiled_gemm, THREADS, 0));
    return blocks;
}

/* ---- cuBLAS ------------------------------------------------------------ */

/* The process's handle (cublas_handle.cuh). */
cublasHandle_t rl_cublas_on(struct CUstream_st *stream)
{
    static cublasHandle_t handle;
    static struct CUstream_st *bound;
    if (!handle) {
        RL_CUBLAS_CHECK(cublasCreate(&handle));
        RL_CUBLAS_CHECK(cublasSetStream(handle, stream));
        bound = stream;
    } else if (bound != stream) {
        RL_CUBLAS_CHECK(cublasSetStream(handle, stream));
        bound = stream;
    }
    return handle;
}

/* cuBLAS is column-major. A row-major m x n C is a column-major n x m
 * matrix, C^T, and C^T = op(B)^T op(A)^T: the same call with the operands
 * swapped. A row-major matrix read column-major is its own transpose, so
 * an operand stored untransposed is passed as CUBLAS_OP_N. */
static void launch_cublas(const gemm_args *g)
{
    const float one = 1.0f, zero = 0.0f;
    cublasOperation_t op_b = g->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t op_a = g->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    int ldb = g->trans_b ? g->k : g->n, lda = g->trans_a ? g->m : g->k;
    RL_CUBLAS_CHECK(cublasGemmEx(rl_cublas_on(g->stream), op_b, op_a, g->n, g->m, g->k, &one, g->b,
                                 CUDA_R_16F, ldb, g->a, CUDA_R_16F, lda, &zero, g->c, CUDA_R_32F,
                                 g->n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

__global__ void f32_to_f16(__half *dst, const float *src, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        dst[i] = __float2half_rn(src[i]);
}

static void to_half(void *dst, const float *src, size_t n, struct CUstream_st *stream)
{
    size_t blocks = (n + 255) / 256; /* grid-stride beyond 4096 blocks */
    unsigned grid = (unsigned)(blocks == 0 ? 1 : blocks > 4096 ? 4096 : blocks);
    f32_to_f16<<<grid, 256, 0, stream>>>(static_cast<__half *>(dst), src, n);
    RL_CUDA_CHECK_LAUNCH();
}

/* In the order of gemm_impl's fields: launch, in_bytes, tile_m, tile_n,
 * blocks_per_unit, to_input. */
extern "C" const gemm_impl gemm_tiled_cuda = {launch_tiled, 4, TILE_M, TILE_N, tiled_blocks_per_sm,
                                              NULL};
extern "C" const gemm_impl gemm_cublas_cuda = {launch_cublas, 2, 0, 0, NULL, to_half};
