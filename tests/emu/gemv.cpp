/*
 * gemv.cpp -- experiment 02's gemv_tile (gemv_tile.cuh) on the emulator,
 * planned and launched as gemv_fp16_cuda does (gemv_cuda_plan_for), against
 * gemv_reference at the CUDA suite's tolerance, gemv_atol(k).
 *
 * Shapes: the suite's (test_gemv.c: rows and k off every tile, one row, k
 * of one 16-byte word), at 1, 2, 3, 5 and 8 tokens (lanes past the last
 * token load it again; 8 fill the tile's columns); devices that give
 * splits 1, 2, 4 and 8 (k shared by the warps of a block through shared
 * memory, with rounds left over), and a row too long for one round of
 * every warp. Then the suite's one wrong weight, which must fail.
 */
#include "cuda_shim.h"
#include "emu.h"

#include "gemv.h"
#include "warp.cuh"

namespace {
#include "gemv_tile.cuh"
} // namespace

using rl_emu::format;
using rl_emu::owned;

namespace {

struct gemv_case {
    int rows, k;
    int sms, blocks_per_sm; /* the plan's device */
};

const gemv_case CASES[] = {
    /* test_gemv.c's SHAPES, on an H100 (132 SMs, the kernel's 3 blocks each) */
    {1, 8, 132, 3},      {3, 24, 132, 3},    {7, 256, 132, 3},   {9, 1000, 132, 3},
    {33, 4104, 132, 3},  {257, 512, 132, 3}, {8193, 64, 132, 3},
    /* beyond them: split 8 (17 rows, 129 words: one round and a tail a
     * share), 2 and 4 on a device of 2 SMs x 1 (with a tail), 1 over three
     * waves of one SM */
    {17, 1032, 132, 3},  {100, 4096, 2, 1},  {40, 2056, 2, 1},   {300, 2056, 1, 1},
};
const int TOKENS[] = {1, 2, 3, 5, 8};

/* gemv_fp16_cuda's launch of gemv_tile. */
bool run(float *y, const uint16_t *w, const uint16_t *x, int rows, int k, int n, const gemv_cuda_plan &p,
         std::string &why)
{
    const uint4 *w4 = reinterpret_cast<const uint4 *>(w), *x4 = reinterpret_cast<const uint4 *>(x);
    const rl_emu::launch_shape s = {dim3((unsigned)p.blocks), dim3((unsigned)p.threads), 0, nullptr};
    return rl_emu::launch(s, [&] { gemv_tile(y, w4, x4, rows, k / 8, n, p.split); }, why);
}

/* One case; flip: one weight's sign flipped after the reference (must fail). */
void check(const gemv_case &c, int n, uint64_t seed, bool flip)
{
    owned<uint16_t> w = rl_emu::random_halves((size_t)c.rows * c.k, -1, 1, seed),
                    x = rl_emu::random_halves((size_t)n * c.k, -1, 1, seed + 1);
    owned<double> want = rl_emu::alloc<double>((size_t)n * c.rows);
    gemv_reference(want.get(), w.get(), x.get(), c.rows, c.k, n);
    if (flip)
        w[(size_t)(c.rows / 2) * c.k + c.k / 3] ^= 0x8000u;
    const gemv_cuda_plan p = gemv_cuda_plan_for(c.rows, c.k, c.sms, c.blocks_per_sm);
    owned<float> y = rl_emu::alloc_output((size_t)n * c.rows);
    const std::string shape = format("%5d x %4d, n %d: %lld blocks, split %d%s", c.rows, c.k, n, p.blocks, p.split,
                                     flip ? ", one weight wrong" : "");
    std::string why;
    if (!run(y.get(), w.get(), x.get(), c.rows, c.k, n, p, why))
        rl_emu::fault("gemv_tile", shape, why);
    else if (flip)
        rl_emu::check_fails("gemv_tile", shape, y.get(), want.get(), (size_t)n * c.rows, gemv_atol(c.k), 0);
    else
        rl_emu::check_f32("gemv_tile", shape, y.get(), want.get(), (size_t)n * c.rows, gemv_atol(c.k), 0);
}

} // namespace

void emu_gemv(void)
{
    uint64_t seed = 200;
    for (const gemv_case &c : CASES)
        for (int n : TOKENS)
            if (c.rows * (long long)n <= 20000) /* 8193 rows: one token, the grid's many blocks */
                check(c, n, seed += 2, false);
    /* test_gemv.c's one_wrong_weight_fails_validation: 64 x 4096, row 32 */
    check({64, 4096, 132, 3}, 1, 5, true);
}
