/*
 * mma.cpp -- experiment 03's gemm_mma (quant_mma.cuh) on the emulator, in
 * every format (F16 through the same kernel), planned and launched as
 * quant.cu's launch_mma does (quant_mma.h: the tokens' tile, the slices
 * of k and their sum), against quant_reference with the weights rounded
 * to FP16 (as the kernel rounds them for the MMA) at the CUDA suite's
 * tolerance, gemv_atol(k): the check of the variant's CUDA path, whose
 * MMAs are ptx.cpp's reading of m16n8k16.
 *
 * Shapes: rows of 8 (one warp), 33 and 100 (thread blocks with rows past
 * the end); k of one block and of three; tokens 1, 5 and 16 (one tile of
 * 16), 17 and 32 (two tiles), 40, 64 and 100 (tiles of 64, one partial);
 * on an H100 (132 SMs: k split into as many slices as it has blocks, at
 * most 8) and on a device of one SM (one slice). Then one wrong scale,
 * which must fail.
 */
#include "cuda_shim.h"
#include "emu.h"

#include "gemv.h"
#include "quant.h"
#include "quant_mma.h"
#include "warp.cuh"

namespace {
#include "quant_mma.cuh"
} // namespace

using rl_emu::format;
using rl_emu::owned;

namespace {

/* quant.cu's launch_mma<Block, MT>: the kernel, then the slices' sum. */
template <typename Block, int MT>
bool launch_mma(float *y, float *scratch, const void *w, const uint16_t *x, int rows, int k, int n, int sms,
                int *splits_out, std::string &why)
{
    int per_split, nb = k / QUANT_BLOCK;
    int splits = quant_mma_splits(rows, n, k, sms, &per_split);
    *splits_out = splits;
    float *part = splits > 1 ? scratch : y;
    const rl_emu::launch_shape s = {dim3((unsigned)((n + 16 * MT - 1) / (16 * MT)),
                                         (unsigned)((rows + QUANT_MMA_ROWS - 1) / QUANT_MMA_ROWS), (unsigned)splits),
                                    dim3(32 * QUANT_MMA_WARPS), 0, nullptr};
    const Block *wb = static_cast<const Block *>(w);
    if (!rl_emu::launch(s, [&] { gemm_mma<Block, MT>(part, wb, x, rows, n, nb, per_split); }, why))
        return false;
    if (splits == 1)
        return true;
    const long long count = (long long)n * rows;
    const rl_emu::launch_shape sum = {dim3((unsigned)((count + 255) / 256)), dim3(256), 0, nullptr};
    return rl_emu::launch(sum, [&] { mma_sum_splits(y, part, count, splits); }, why);
}

template <typename Block>
bool launch_block(float *y, float *scratch, const void *w, const uint16_t *x, int rows, int k, int n, int sms,
                  int *splits, std::string &why)
{
    switch (quant_mma_token_tiles(n)) {
    case 1: return launch_mma<Block, 1>(y, scratch, w, x, rows, k, n, sms, splits, why);
    case 2: return launch_mma<Block, 2>(y, scratch, w, x, rows, k, n, sms, splits, why);
    default: return launch_mma<Block, 4>(y, scratch, w, x, rows, k, n, sms, splits, why);
    }
}

bool launch_format(quant_format f, float *y, float *scratch, const void *w, const uint16_t *x, int rows, int k,
                   int n, int sms, int *splits, std::string &why)
{
    switch (f) {
    case QF_F16: return launch_block<qf16_block>(y, scratch, w, x, rows, k, n, sms, splits, why);
    case QF_Q8: return launch_block<q8_block>(y, scratch, w, x, rows, k, n, sms, splits, why);
    case QF_Q6: return launch_block<q6_block>(y, scratch, w, x, rows, k, n, sms, splits, why);
    case QF_Q5: return launch_block<q5_block>(y, scratch, w, x, rows, k, n, sms, splits, why);
    case QF_Q4: return launch_block<q4_block>(y, scratch, w, x, rows, k, n, sms, splits, why);
    default: return launch_block<q2_block>(y, scratch, w, x, rows, k, n, sms, splits, why);
    }
}

/* wrong: the first block's first scale doubled after the reference (q4),
 * a case that must fail its check. */
void check(quant_format f, int rows, int k, int n, int sms, uint64_t seed, bool wrong = false)
{
    owned<uint16_t> w16 = rl_emu::random_halves((size_t)rows * k, -1, 1, seed),
                    x = rl_emu::random_halves((size_t)n * k, -1, 1, seed + 1);
    owned<unsigned char> w = rl_emu::alloc<unsigned char>(quant_row_bytes(f, k) * rows);
    quant_encode_matrix(f, w.get(), w16.get(), rows, k);
    owned<double> want = rl_emu::alloc<double>((size_t)n * rows);
    quant_reference(want.get(), f, w.get(), x.get(), rows, k, n, true);
    if (wrong) {
        q4_block *b = reinterpret_cast<q4_block *>(w.get());
        b->d[0] = float_to_fp16(2 * fp16_to_float(b->d[0]));
    }
    owned<float> y = rl_emu::alloc_output((size_t)n * rows);
    owned<float> scratch = rl_emu::alloc<float>(quant_mma_scratch_bytes(rows, k, n, sms) / sizeof(float) + 1);
    std::string why;
    int splits = 0;
    const bool ran = launch_format(f, y.get(), scratch.get(), w.get(), x.get(), rows, k, n, sms, &splits, why);
    const std::string kernel = format("gemm_mma<%s_block,%d>", quant_formats[f].name, quant_mma_token_tiles(n));
    const std::string shape = format("%3d x %4d, n = %3d on %3d SMs: %d slice(s) of k", rows, k, n, sms, splits);
    if (!ran)
        rl_emu::fault(kernel.c_str(), shape, why);
    else if (wrong)
        rl_emu::check_fails(kernel.c_str(), shape + " (a doubled scale)", y.get(), want.get(), (size_t)n * rows,
                            gemv_atol(k), 0);
    else
        rl_emu::check_f32(kernel.c_str(), shape, y.get(), want.get(), (size_t)n * rows, gemv_atol(k), 0);
}

} // namespace

void emu_mma(void)
{
    static const quant_format FORMATS[] = {QF_F16, QF_Q8, QF_Q6, QF_Q5, QF_Q4, QF_Q2};
    static const int ROWS[] = {8, 33, 100}, KS[] = {256, 768}, NS[] = {1, 5, 16, 17, 32, 40, 64, 100},
                     SMS[] = {132, 1};
    uint64_t seed = 900;
    for (quant_format f : FORMATS)
        for (int rows : ROWS)
            for (int k : KS)
                for (int n : NS)
                    for (int sms : SMS) {
                        /* every format at every tile and both plans; the many-token
                         * shapes of 100 rows for q4 (the verdicts') alone */
                        if (rows == 100 && f != QF_Q4 && n > 17)
                            continue;
                        check(f, rows, k, n, sms, seed += 2);
                    }
    check(QF_Q4, 33, 768, 5, 132, seed += 2, true);
}
