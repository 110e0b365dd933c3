/*
 * fusion.cu -- CUDA variants of the element-wise chain.
 *
 * Numbered as in fusion.h's table. Each thread owns one element (or four,
 * with 16-byte loads): for a memory-bound op the only question is how
 * many times the data crosses the memory bus.
 */
#include "check.h"
#include "fusion.h"

enum { BLOCK = 256 };

template <fusion_op OP> __device__ __forceinline__ float op(float x) { return fusion_apply(x, OP); }

/* Variants 1, 3, 6: read once, apply k ops in registers, write once.
 * Unfused chains launch this with k = 1, k times. */
template <fusion_op OP>
__global__ void chain(float *__restrict__ out, const float *__restrict__ in, size_t n, int k)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float v = in[i];
    for (int j = 0; j < k; j++)
        v = op<OP>(v);
    out[i] = v;
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
    if (a->op == FUSION_COS)
        chain<FUSION_COS><<<blocks_for(a->n), BLOCK, 0, s>>>(dst, src, a->n, k);
    else
        chain<FUSION_AFFINE><<<blocks_for(a->n), BLOCK, 0, s>>>(dst, src, a->n, k);
    RL_CUDA_CHECK_LAUNCH();
}

static void launch_fused(const fusion_args *a) { launch_chain(a, a->out, a->in, a->k); }

/* k kernels, each one op: the intermediate goes to memory between them,
 * alternating tmp and out so that the last pass lands in out. */
static void launch_unfused(const fusion_args *a)
{
    const float *src = a->in;
    for (int j = 0; j < a->k; j++) {
        float *dst = fusion_pass_output(a, j);
        launch_chain(a, dst, src, 1);
        src = dst;
    }
}

static void launch_fused_vec4(const fusion_args *a)
{
    cudaStream_t s = a->stream;
    unsigned grid = blocks_for(a->n / 4 > a->n % 4 ? a->n / 4 : a->n % 4);
    if (a->op == FUSION_COS)
        chain_vec4<FUSION_COS><<<grid, BLOCK, 0, s>>>(a->out, a->in, a->n, a->k);
    else
        chain_vec4<FUSION_AFFINE><<<grid, BLOCK, 0, s>>>(a->out, a->in, a->n, a->k);
    RL_CUDA_CHECK_LAUNCH();
}

extern "C" const fusion_variant fusion_cuda_variants[] = {
    {1, "cos", "one kernel, one op: the floor", 1, true, launch_fused, fusion_bytes_one_pass, false},
    {2, "cos_cos_unfused", "two kernels; the intermediate goes to memory", 2, false, launch_unfused, fusion_bytes_per_op, false},
    {3, "cos_cos_fused", "one kernel, both ops in registers", 2, true, launch_fused, fusion_bytes_one_pass, false},
    {4, "cos_cos_fused_vec4", "as 3, with 16-byte loads and stores", 2, true, launch_fused_vec4, fusion_bytes_one_pass, false},
    {5, "chain_unfused", "k kernels, one op each", 0, false, launch_unfused, fusion_bytes_per_op, false},
    {6, "chain_fused", "one kernel, k ops in registers", 0, true, launch_fused, fusion_bytes_one_pass, false},
    {7, "cos_libm", "CPU only: glibc's scalar cosf (the GPU's cosf is variant 1)", 1, true, NULL, fusion_bytes_one_pass, true},
    {8, "cos_cos_unfused_libm", "CPU only", 2, false, NULL, fusion_bytes_per_op, true},
    {9, "cos_cos_fused_libm", "CPU only", 2, true, NULL, fusion_bytes_one_pass, true},
    {0, 0, 0, 0, 0, 0, 0, false},
};
