/*
 * fusion.cu -- CUDA variants of the element-wise chain.
 *
 * The table is fusion.c. Each thread owns four elements (with four
 * 4-byte loads, or one 16-byte load): for a memory-bound op the only
 * question is how many times the data crosses the memory bus.
 */
#include "check.h"
#include "fusion.h"

enum { BLOCK = 256, ILP = 4 };

template <fusion_op OP> __device__ __forceinline__ float op(float x) { return fusion_apply(x, OP); }

/* Variants 1, 3, 6: read once, apply k ops in registers, write once.
 * Unfused chains launch this with k = 1, k times.
 *
 * A block covers ILP x BLOCK consecutive elements; thread t owns those at
 * t, t + BLOCK, ... (each load coalesced across the warp) and issues its
 * ILP loads before any op waits on one. One 4-byte load per thread kept
 * too few bytes in flight for HBM (Little's law: bandwidth x latency): on
 * an H200 such a pass moved clearly less of the DRAM bandwidth than the
 * 16-byte variant 4 (results/reference/h200-quick/exp-05.csv). */
template <fusion_op OP>
__global__ void chain(float *__restrict__ out, const float *__restrict__ in, size_t n, int k)
{
    size_t first = blockIdx.x * (size_t)blockDim.x * ILP + threadIdx.x;
    float v[ILP];
#pragma unroll
    for (int e = 0; e < ILP; e++) {
        size_t i = first + (size_t)e * blockDim.x;
        v[e] = i < n ? in[i] : 0.0f;
    }
    for (int j = 0; j < k; j++)
#pragma unroll
        for (int e = 0; e < ILP; e++)
            v[e] = op<OP>(v[e]);
#pragma unroll
    for (int e = 0; e < ILP; e++) {
        size_t i = first + (size_t)e * blockDim.x;
        if (i < n)
            out[i] = v[e];
    }
}

/* Variant 4: the same with one 16-byte load and store per thread. The
 * n % 4 leftover elements go to the first threads of the grid. */
template <fusion_op OP>
__global__ void chain_vec4(float *__restrict__ out, const float *__restrict__ in, size_t n, int k)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    size_t n4 = n / 4;
    if (i < n4) {
        float4 v = reinterpret_cast<const float4 *>(in)[i];
        for (int j = 0; j < k; j++) {
            v.x = op<OP>(v.x);
            v.y = op<OP>(v.y);
            v.z = op<OP>(v.z);
            v.w = op<OP>(v.w);
        }
        reinterpret_cast<float4 *>(out)[i] = v;
    }
    size_t tail = 4 * n4 + i;
    if (i < n % 4) {
        float v = in[tail];
        for (int j = 0; j < k; j++)
            v = op<OP>(v);
        out[tail] = v;
    }
}

static unsigned blocks_for(size_t threads)
{
    size_t b = (threads + BLOCK - 1) / BLOCK;
    return (unsigned)(b ? b : 1);
}

/* One kernel applying k ops from src to dst, on the chosen op. */
static void launch_chain(const fusion_args *a, float *dst, const float *src, int k)
{
    cudaStream_t s = a->stream;
    unsigned grid = blocks_for((a->n + ILP - 1) / ILP);
    if (a->op == FUSION_COS)
        chain<FUSION_COS><<<grid, BLOCK, 0, s>>>(dst, src, a->n, k);
    else
        chain<FUSION_AFFINE><<<grid, BLOCK, 0, s>>>(dst, src, a->n, k);
    RL_CUDA_CHECK_LAUNCH();
}

extern "C" void fusion_fused_cuda(const fusion_args *a) { launch_chain(a, a->out, a->in, a->k); }

/* k kernels, each one op: the intermediate goes to memory between them,
 * alternating tmp and out so that the last pass lands in out. */
extern "C" void fusion_unfused_cuda(const fusion_args *a)
{
    const float *src = a->in;
    for (int j = 0; j < a->k; j++) {
        float *dst = fusion_pass_output(a, j);
        launch_chain(a, dst, src, 1);
        src = dst;
    }
}

extern "C" void fusion_fused_vec4_cuda(const fusion_args *a)
{
    cudaStream_t s = a->stream;
    unsigned grid = blocks_for(a->n / 4 > a->n % 4 ? a->n / 4 : a->n % 4);
    if (a->op == FUSION_COS)
        chain_vec4<FUSION_COS><<<grid, BLOCK, 0, s>>>(a->out, a->in, a->n, a->k);
    else
        chain_vec4<FUSION_AFFINE><<<grid, BLOCK, 0, s>>>(a->out, a->in, a->n, a->k);
    RL_CUDA_CHECK_LAUNCH();
}
