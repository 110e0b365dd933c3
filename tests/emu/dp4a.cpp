/*
 * dp4a.cpp -- experiment 03's gemv_dp4a (quant_dp4a.cuh) on the emulator,
 * in every quantized format, planned and launched as quant.cu's
 * launch_dp4a does (quant_dp4a_warps_per_block; TAIL where the row's
 * blocks are not whole pairs of groups), against quant_reference within
 * quant_int8_error_bound, output by output: the CUDA suite's check of the
 * variant that rounds x to 8 bits.
 *
 * Shapes: k of 1, 3, 8, 9 and 16 blocks (the checked last round alone; a
 * pair of groups and no tail; the loop and then one group more), rows of
 * 1, 3, 33 and 257 (a last block of warps with none or some rows), on an
 * H100 (blocks of 2 warps for these few rows) and on a device of one SM
 * (blocks of 16 warps, most of them without a row, every warp quantizing
 * x), and the blocks of 4 and 8 warps between (1024 rows, exp-03's k and
 * v projections, and 2000, on the H100). Two rows a warp: quant.cu's
 * launcher takes it for q8 and q4 from 8192 rows, run there at k = 256,
 * and at the small shapes too, where its code paths are the same.
 */
#include "cuda_shim.h"
#include "emu.h"

#include "quant.h"
#include "quant_dp4a.h"
#include "warp.cuh"
extern "C" {
#include "cpu/quant_dot.h"
}

namespace {
/* gemv_dp4a's extern __shared__ array: nb x 32 words of x (k up to 16384) */
alignas(128) thread_local uint4 xs[2048];
#include "quant_dp4a.cuh"

rl_emu::arena dp4a_arena(void) { return {xs, sizeof xs}; }
} // namespace

using rl_emu::format;
using rl_emu::owned;

namespace {

/* quant.cu's launch_dp4a<Block, R, TAIL>. */
template <typename Block, int R, bool TAIL>
bool launch_dp4a(float *y, const void *w, const uint16_t *x, int rows, int k, int sms, std::string &why)
{
    const int nb = k / QUANT_BLOCK;
    const long long warps = (rows + R - 1) / R;
    const int per_block = quant_dp4a_warps_per_block(rows, R, sms);
    const rl_emu::launch_shape s = {dim3((unsigned)((warps + per_block - 1) / per_block)),
                                    dim3((unsigned)(32 * per_block)), (size_t)nb * 32 * sizeof(uint4), dp4a_arena};
    const Block *wb = static_cast<const Block *>(w);
    const uint4 *x4 = reinterpret_cast<const uint4 *>(x);
    return rl_emu::launch(s, [&] { gemv_dp4a<Block, R, TAIL>(y, wb, x4, rows, nb); }, why);
}

/* quant.cu's launch_dp4a<Block, R>: TAIL unless the blocks are whole pairs of groups. */
template <typename Block, int R>
bool launch_rows(float *y, const void *w, const uint16_t *x, int rows, int k, int sms, std::string &why)
{
    const int nb = k / QUANT_BLOCK;
    if (nb > 0 && nb % (2 * DP4A_UNROLL) == 0)
        return launch_dp4a<Block, R, false>(y, w, x, rows, k, sms, why);
    return launch_dp4a<Block, R, true>(y, w, x, rows, k, sms, why);
}

bool launch_format(quant_format f, int R, float *y, const void *w, const uint16_t *x, int rows, int k, int sms,
                   std::string &why)
{
    switch (f) {
    case QF_Q8:
        return R == 2 ? launch_rows<q8_block, 2>(y, w, x, rows, k, sms, why)
                      : launch_rows<q8_block, 1>(y, w, x, rows, k, sms, why);
    case QF_Q4:
        return R == 2 ? launch_rows<q4_block, 2>(y, w, x, rows, k, sms, why)
                      : launch_rows<q4_block, 1>(y, w, x, rows, k, sms, why);
    case QF_Q6: return launch_rows<q6_block, 1>(y, w, x, rows, k, sms, why);
    case QF_Q5: return launch_rows<q5_block, 1>(y, w, x, rows, k, sms, why);
    default: return launch_rows<q2_block, 1>(y, w, x, rows, k, sms, why);
    }
}

/* Rows per warp as quant.cu's dp4a_as picks them: two for q8 and q4 from
 * 8192 rows (pairs_rows, two_rows_per_warp), else one. */
int launcher_rows_per_warp(quant_format f, int rows) { return (f == QF_Q8 || f == QF_Q4) && rows >= 8192 ? 2 : 1; }

void check(quant_format f, int rows, int k, int sms, int R, uint64_t seed)
{
    owned<uint16_t> w16 = rl_emu::random_halves((size_t)rows * k, -1, 1, seed),
                    x = rl_emu::random_halves((size_t)k, -1, 1, seed + 1);
    owned<unsigned char> w = rl_emu::alloc<unsigned char>(quant_row_bytes(f, k) * rows);
    quant_encode_matrix(f, w.get(), w16.get(), rows, k);
    owned<double> want = rl_emu::alloc<double>(rows), bound = rl_emu::alloc<double>(rows);
    quant_reference(want.get(), f, w.get(), x.get(), rows, k, 1, false);
    quant_int8_error_bound(bound.get(), f, w.get(), x.get(), rows, k);
    owned<float> y = rl_emu::alloc_output(rows);
    const int nb = k / QUANT_BLOCK, per_block = quant_dp4a_warps_per_block(rows, R, sms);
    const std::string kernel = format("gemv_dp4a<%s_block,%d,%s>", quant_formats[f].name, R,
                                      nb > 0 && nb % (2 * DP4A_UNROLL) == 0 ? "false" : "true");
    const std::string shape = format("%4d x %5d on %3d SMs: blocks of %2d warps%s", rows, k, sms, per_block,
                                     R != launcher_rows_per_warp(f, rows) ? " (R 2 below 8192 rows)" : "");
    std::string why;
    if (launch_format(f, R, y.get(), w.get(), x.get(), rows, k, sms, why))
        rl_emu::check_f32(kernel.c_str(), shape, y.get(), want.get(), rows, 0, 0, bound.get());
    else
        rl_emu::fault(kernel.c_str(), shape, why);
}

} // namespace

void emu_dp4a(void)
{
    static const quant_format FORMATS[] = {QF_Q8, QF_Q6, QF_Q5, QF_Q4, QF_Q2};
    static const int KS[] = {256, 768, 2048, 2304, 4096}, ROWS[] = {1, 3, 33, 257}, SMS[] = {132, 1};
    uint64_t seed = 300;
    for (quant_format f : FORMATS)
        for (int k : KS)
            for (int rows : ROWS)
                for (int sms : SMS) {
                    if (rows == 257 && (sms == 1 || k > 768)) /* the many-blocks case, once or twice */
                        continue;
                    check(f, rows, k, sms, launcher_rows_per_warp(f, rows), seed += 2);
                    if ((f == QF_Q8 || f == QF_Q4) && rows != 257 && sms == 132)
                        check(f, rows, k, sms, 2, seed += 2);
                }
    check(QF_Q4, 1024, 2304, 132, 1, seed += 2);
    check(QF_Q6, 2000, 256, 132, 1, seed += 2);
    for (quant_format f : {QF_Q8, QF_Q4})
        check(f, 8193, 256, 132, launcher_rows_per_warp(f, 8193), seed += 2);
}
