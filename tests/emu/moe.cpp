/*
 * moe.cpp -- experiment 08's moe_plan_kernel (moe_plan.cuh) on the
 * emulator, planned and launched as moe.cu's run_plan does (moe_grid),
 * over the active experts' plan against moe_reference, and over the dense
 * plan (every expert, every token: moe_dense_cuda's first launch) against
 * each expert's gemv_reference, at the CUDA suite's tolerance, gemv_atol(k).
 *
 * Cases: the suite's (test_moe.c: rows off a warp's and a block's
 * multiple; past 8 tokens on an expert, two passes, each with its
 * barriers; k split over 2 and 4 warps with a part's tail and a dead row
 * in the last block), plus k split over 8 warps (a last part shorter than
 * a round), on an H100's 132 SMs and on one SM (no split). Then the
 * suite's wrong routing, which must fail.
 */
#include "cuda_shim.h"
#include "emu.h"

#include "gemv.h"
#include "moe.h"
#include "warp.cuh"

namespace {
#include "moe_plan.cuh"
} // namespace

using rl_emu::format;
using rl_emu::owned;

namespace {

struct moe_case {
    int experts, rows, k, batch, top_k;
    moe_routing how;
    int sms;
};

const moe_case CASES[] = {
    /* test_moe.c's CASES */
    {6, 40, 64, 1, 1, MOE_UNIFORM, 132},   {6, 40, 64, 3, 2, MOE_UNIFORM, 132},
    {6, 33, 128, 11, 6, MOE_UNIFORM, 132}, {16, 72, 256, 20, 4, MOE_SKEWED, 132},
    {4, 264, 64, 9, 1, MOE_SKEWED, 132},   {4, 72, 2056, 1, 1, MOE_UNIFORM, 132},
    {3, 41, 4104, 11, 2, MOE_SKEWED, 132},
    /* k over 8 warps: 2049 words in parts of 288, the last 33 */
    {2, 9, 16392, 1, 1, MOE_UNIFORM, 132},
    /* one SM: a warp a row, whatever the rows */
    {3, 41, 4104, 11, 2, MOE_SKEWED, 1},
};

/* moe.cu's run_plan: one launch over the plan's experts. */
bool run_plan(float *y, const uint16_t *w, const uint16_t *x, const moe_plan &p, const moe_case &c,
              const moe_launch &g, std::string &why)
{
    const uint4 *w4 = reinterpret_cast<const uint4 *>(w), *x4 = reinterpret_cast<const uint4 *>(x);
    const int rows = c.rows, k8 = c.k / 8;
    const rl_emu::launch_shape s = {dim3(g.blocks_x, g.blocks_y), dim3(BLOCK), 0, nullptr};
    return rl_emu::launch(s, [&] {
        moe_plan_kernel(y, w4, x4, p.expert, p.start, p.token, p.out, rows, k8, g.warps_per_row, g.chunk);
    }, why);
}

/* wrong: the kernel's plan routed one expert off the reference's (must fail). */
void check(const moe_case &c, bool dense, bool wrong, uint64_t seed)
{
    const size_t nw = (size_t)c.experts * c.rows * c.k, slots = (size_t)c.batch * c.top_k;
    owned<uint16_t> w = rl_emu::random_halves(nw, -1, 1, seed), x = rl_emu::random_halves((size_t)c.batch * c.k, -1, 1, seed + 1);
    owned<int> routed = rl_emu::alloc<int>(slots), run = rl_emu::alloc<int>(slots);
    moe_route(routed.get(), c.batch, c.experts, c.top_k, c.how, seed + 2);
    for (size_t s = 0; s < slots; s++)
        run[s] = wrong ? (routed[s] + 1) % c.experts : routed[s];
    /* outputs: active, a row per (token, slot); dense, a row per (expert, token) */
    const size_t outs = (dense ? (size_t)c.experts * c.batch : slots) * c.rows;
    owned<double> want = rl_emu::alloc<double>(outs);
    if (dense)
        for (int e = 0; e < c.experts; e++)
            gemv_reference(want.get() + (size_t)e * c.batch * c.rows, w.get() + (size_t)e * c.rows * c.k, x.get(),
                           c.rows, c.k, c.batch);
    else
        moe_reference(want.get(), w.get(), x.get(), routed.get(), c.rows, c.k, c.top_k, (int)slots);
    owned<int> buf = rl_emu::alloc<int>(moe_plan_ints(c.experts, c.batch, c.top_k));
    const moe_plan p = moe_plan_build(buf.get(), run.get(), c.batch, c.experts, c.top_k, dense);
    const moe_launch g = moe_grid(c.rows, c.k, p.active, c.sms);
    owned<float> y = rl_emu::alloc_output(outs);
    const std::string shape =
        format("%s E %2d, %3d x %5d, B %2d top-%d%s, %d SMs: %d x %d blocks, split %d%s", dense ? "dense " : "active",
               c.experts, c.rows, c.k, c.batch, c.top_k, c.how == MOE_SKEWED ? " skewed" : "", c.sms, g.blocks_x,
               g.blocks_y, g.warps_per_row, wrong ? ", routed wrong" : "");
    std::string why;
    if (!run_plan(y.get(), w.get(), x.get(), p, c, g, why))
        rl_emu::fault("moe_plan_kernel", shape, why);
    else if (wrong)
        rl_emu::check_fails("moe_plan_kernel", shape, y.get(), want.get(), outs, gemv_atol(c.k), 0);
    else
        rl_emu::check_f32("moe_plan_kernel", shape, y.get(), want.get(), outs, gemv_atol(c.k), 0);
}

} // namespace

void emu_moe(void)
{
    int i = 0;
    for (const moe_case &c : CASES) {
        check(c, false, false, 100 + 7 * (uint64_t)i);
        if (i == 2 || i == 6) /* the dense plan: 11 tokens an expert, two passes */
            check(c, true, false, 100 + 7 * (uint64_t)i);
        i++;
    }
    check(CASES[3], false, true, 121); /* test_moe.c's check that a wrong routing fails */
}
