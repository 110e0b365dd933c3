/*
 * spill.cpp -- experiment 08's spill_zero_copy (spill_zero_copy.cuh) on
 * the emulator, planned and launched as spill.cu's launch_zero_copy does
 * (spill_grid; the kernel spreads the slow rows' blocks by
 * spill_schedule): the overlapped variant over both tiers against
 * gemv_reference of the whole matrix at the CUDA suite's tolerance,
 * gemv_atol(k), and the slow tier read alone (LAND), its outputs and every
 * word it stores checked, the words bit for bit.
 *
 * Splits: the suite's (test_spill.c: 1000 x 2048 with 0, 1, 100, 600 and
 * 1000 slow rows; 203 x 72, rows of 9 words, with 0, 7 and 203). The slow
 * rows live in a buffer of their own, as in the mapped tier.
 */
#include "cuda_shim.h"
#include "emu.h"

#include "gemv.h"
#include "spill.h"
#include "warp.cuh"

namespace {
#include "spill_zero_copy.cuh"
} // namespace

using rl_emu::format;
using rl_emu::owned;

namespace {

/* spill.cu's launch_zero_copy: land NULL, or the slow rows alone (fast_rows 0). */
template <bool LAND>
bool zero_copy(float *y, const uint16_t *fast, const uint16_t *slow, const uint16_t *x, uint16_t *land,
               int fast_rows, int slow_rows, int k, std::string &why)
{
    const spill_launch g = spill_grid(fast_rows, slow_rows);
    if (!g.blocks)
        return true;
    const uint4 *f4 = reinterpret_cast<const uint4 *>(fast), *s4 = reinterpret_cast<const uint4 *>(slow),
                *x4 = reinterpret_cast<const uint4 *>(x);
    uint4 *l4 = reinterpret_cast<uint4 *>(land);
    const rl_emu::launch_shape s = {dim3(g.blocks), dim3(BLOCK), 0, nullptr};
    return rl_emu::launch(s, [&] {
        spill_zero_copy<LAND>(y, f4, s4, x4, l4, fast_rows, slow_rows, g.fast_blocks, g.slow_blocks, k / 8);
    }, why);
}

void check_split(int rows, int k, int slow_rows, uint64_t seed)
{
    const int fast_rows = rows - slow_rows;
    const size_t nw = (size_t)rows * k, slow_words = (size_t)slow_rows * k;
    owned<uint16_t> w = rl_emu::random_halves(nw, -1, 1, seed), x = rl_emu::random_halves((size_t)k, -1, 1, seed + 1);
    owned<double> want = rl_emu::alloc<double>(rows);
    gemv_reference(want.get(), w.get(), x.get(), rows, k, 1);
    /* the slow rows in a tier of their own (the mapped pinned memory) */
    owned<uint16_t> slow = rl_emu::alloc<uint16_t>(slow_words ? slow_words : 1);
    memcpy(slow.get(), w.get() + (size_t)fast_rows * k, slow_words * sizeof(uint16_t));
    const spill_launch g = spill_grid(fast_rows, slow_rows);
    const std::string shape = format("%4d x %4d, %4d slow: %3d + %3d blocks", rows, k, slow_rows, g.fast_blocks,
                                     g.slow_blocks);
    owned<float> y = rl_emu::alloc_output(rows);
    std::string why;
    if (zero_copy<false>(y.get(), w.get(), slow.get(), x.get(), nullptr, fast_rows, slow_rows, k, why))
        rl_emu::check_f32("spill_zero_copy<false>", shape, y.get(), want.get(), rows, gemv_atol(k), 0);
    else
        rl_emu::fault("spill_zero_copy<false>", shape, why);
    if (!slow_rows)
        return;

    /* spill_tier_mapped_cuda: the slow rows alone, outputs after the fast
     * rows', every word stored in staging (poisoned, a word more to see an
     * overrun) */
    owned<float> ys = rl_emu::alloc_output(slow_rows);
    owned<uint16_t> land = rl_emu::alloc<uint16_t>(slow_words + 8);
    memset(land.get(), 0xff, (slow_words + 8) * sizeof(uint16_t));
    const std::string alone = format("%4d x %4d, the %4d slow alone", rows, k, slow_rows);
    if (!zero_copy<true>(ys.get(), w.get(), slow.get(), x.get(), land.get(), 0, slow_rows, k, why)) {
        rl_emu::fault("spill_zero_copy<true>", alone, why);
        return;
    }
    rl_emu::check_f32("spill_zero_copy<true>", alone, ys.get(), want.get() + fast_rows, slow_rows, gemv_atol(k), 0);
    bool untouched = true;
    for (int i = 0; i < 8; i++)
        untouched &= land[slow_words + i] == 0xffff;
    rl_emu::check_same("spill_zero_copy<true>", alone + ", landed", land.get(), slow.get(),
                       slow_words * sizeof(uint16_t), untouched);
}

} // namespace

void emu_spill(void)
{
    for (int slow : {0, 1, 100, 600, 1000})
        check_split(1000, 2048, slow, 11);
    for (int slow : {0, 7, 203})
        check_split(203, 72, slow, 13);
}
