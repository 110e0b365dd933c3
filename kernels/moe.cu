/*
 * moe.cu -- CUDA variants of experiment 08's MoE layer (moe.h; the table
 * is moe.c: launchers only here).
 *
 * One launch runs a whole plan: blockIdx.y picks the plan's expert,
 * blockIdx.x a slice of its rows, a warp one row. Each lane loads eight
 * halves of the row per step (16 bytes, a warp 512 contiguous bytes, with
 * the streaming hint: a weight is read once per pass), and multiplies
 * them with up to 8 of the expert's tokens (from L1 and L2: every warp of
 * the expert reads the same few). An expert with more tokens is read once
 * per 8. At batch 1 and top-8, 8 experts x 768 rows = 6144 warps: enough
 * to keep HBM busy, in one launch rather than eight.
 */
#include "check.h"
#include "moe.h"
#include "warp.cuh"

#include <cuda_fp16.h>

enum { BLOCK = 256, WARPS = BLOCK / 32 };

__global__ void __launch_bounds__(BLOCK)
moe_plan_kernel(float *__restrict__ y, const uint4 *__restrict__ w, const uint4 *__restrict__ x,
                const int *__restrict__ expert, const int *__restrict__ start,
                const int *__restrict__ token, const int *__restrict__ out, int rows, int k8)
{
    int row = blockIdx.x * WARPS + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= rows)
        return; /* whole warps leave together */
    int e = expert[blockIdx.y], first = start[blockIdx.y], last = start[blockIdx.y + 1];
    const uint4 *wr = w + ((size_t)e * rows + row) * k8;
    for (int s = first; s < last; s += MOE_PASS_TOKENS) {
        int n = min(last - s, (int)MOE_PASS_TOKENS);
        float acc[MOE_PASS_TOKENS] = {};
#pragma unroll 2
        for (int c = lane; c < k8; c += 32) {
            float wf[8];
            unpack8(__ldcs(wr + c), wf);
#pragma unroll
            for (int t = 0; t < MOE_PASS_TOKENS; t++) {
                if (t < n) {
                    float xf[8];
                    unpack8(__ldg(x + (size_t)token[s + t] * k8 + c), xf);
#pragma unroll
                    for (int i = 0; i < 8; i++)
                        acc[t] = fmaf(wf[i], xf[i], acc[t]);
                }
            }
        }
#pragma unroll
        for (int t = 0; t < MOE_PASS_TOKENS; t++) {
            if (t < n) { /* n is the same in every lane: the shuffles see all of them */
                float v = warp_sum(acc[t]);
                if (lane == 0)
                    y[(size_t)out[s + t] * rows + row] = v;
            }
        }
    }
}

static void run_plan(const moe_args *a, const moe_plan *p, float *y)
{
    RL_REQUIRE(a->k % 8 == 0 && p->active >= 1 && p->active <= 65535,
               "a MoE plan needs k a multiple of 8 and 1 to 65535 experts");
    dim3 grid((unsigned)((a->rows + WARPS - 1) / WARPS), (unsigned)p->active);
    moe_plan_kernel<<<grid, BLOCK, 0, a->stream>>>(y, reinterpret_cast<const uint4 *>(a->w),
                                                   reinterpret_cast<const uint4 *>(a->x), p->expert,
                                                   p->start, p->token, p->out, a->rows, a->k / 8);
    RL_CUDA_CHECK_LAUNCH();
}

extern "C" void moe_active_cuda(const moe_args *a) { run_plan(a, &a->active, a->y); }

/* Output row s (token s / top_k) from expert experts[s]'s row of the
 * scratch: a block per output row. */
__global__ void __launch_bounds__(BLOCK)
moe_gather(float *__restrict__ y, const float *__restrict__ all, const int *__restrict__ experts,
           int rows, int batch, int top_k)
{
    int s = blockIdx.x, t = s / top_k;
    const float *src = all + ((size_t)experts[s] * batch + t) * rows;
    for (int r = threadIdx.x; r < rows; r += BLOCK)
        y[(size_t)s * rows + r] = src[r];
}

extern "C" void moe_dense_cuda(const moe_args *a)
{
    RL_REQUIRE(a->scratch && a->dense.active == a->n_experts, "moe_dense_cuda needs its scratch and a dense plan");
    float *all = static_cast<float *>(a->scratch);
    run_plan(a, &a->dense, all);
    moe_gather<<<(unsigned)(a->batch * a->top_k), BLOCK, 0, a->stream>>>(a->y, all, a->experts, a->rows,
                                                                          a->batch, a->top_k);
    RL_CUDA_CHECK_LAUNCH();
}
