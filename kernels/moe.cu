/*
 * moe.cu -- CUDA variants of experiment 08's MoE layer (moe.h; the table
 * is moe.c: launchers only here; moe_plan_kernel is in moe_plan.cuh).
 *
 * One launch runs a whole plan: blockIdx.y picks the plan's expert,
 * blockIdx.x a slice of its rows. The launch plan (moe_grid, host
 * arithmetic in moe.c) decides how many warps share a row: one where the
 * grid has warps enough for every SM, else k is split over 2 to 8 warps
 * of the block, each reading its part of the row, their sums added in
 * shared memory in a fixed order (no atomics: the same inputs give the
 * same bits). At batch 1, top-1 of 768 x 2048 is 768 rows: a warp per row
 * would fill 96 blocks, fewer than an H100's 132 SMs; split in two, 192
 * blocks reach every SM and every word of the expert is requested in the
 * first round.
 *
 * Each lane issues MOE_LOADS 16-byte streaming loads (a warp 4 x 512
 * contiguous bytes; a weight is read once per pass) before it uses the
 * first, then multiplies them with the pass's tokens (up to 8, from L1 and
 * L2: every warp of the expert reads the same few), a loop compiled for
 * each token count so that no token's test sits in the loop; with more
 * than two tokens a round takes fewer words (round_of), their x words
 * being in registers too. An expert with more tokens is read once per 8.
 */
#include "check.h"
#include "device.cuh"
#include "moe.h"
#include "moe_plan.cuh"
#include "warp.cuh"

#include <cuda_fp16.h>
#include <limits.h>
#include <stdint.h>


static bool aligned16(const void *p) { return (uintptr_t)p % 16 == 0; }

static void run_plan(const moe_args *a, const moe_plan *p, float *y)
{
    RL_REQUIRE(a->k >= 8 && a->k % 8 == 0 && a->rows >= 1 && p->active >= 1 && p->active <= 65535,
               "a MoE plan needs k a multiple of 8, rows and 1 to 65535 experts");
    RL_REQUIRE(aligned16(a->w) && aligned16(a->x),
               "the MoE kernel reads w and x in 16-byte words: both 16-byte aligned");
    RL_REQUIRE((long long)a->batch * (a->k / 8) <= INT_MAX / 2,
               "the MoE kernel indexes x's 16-byte words with an int: batch x k / 8 fits one, "
               "with room for its last step past a row's end");
    moe_launch g = moe_grid(a->rows, a->k, p->active, rl_device_sms());
    dim3 grid(g.blocks_x, g.blocks_y);
    moe_plan_kernel<<<grid, BLOCK, 0, a->stream>>>(y, reinterpret_cast<const uint4 *>(a->w),
                                                   reinterpret_cast<const uint4 *>(a->x), p->expert,
                                                   p->start, p->token, p->out, a->rows, a->k / 8,
                                                   g.warps_per_row, g.chunk);
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

/* A launch that does nothing: what every launch costs whatever it moves. */
__global__ void __launch_bounds__(32) moe_empty(void) {}

extern "C" void moe_empty_cuda(const moe_args *a)
{
    moe_empty<<<1, 32, 0, a->stream>>>();
    RL_CUDA_CHECK_LAUNCH();
}
