/*
 * layer_backward.cpp -- experiment 09's CUDA backward kernels
 * (layer_backward_kernels.cuh) on the emulator, planned and launched as
 * layer_backward.cu's launchers do (layer_ew_blocks, layer_row_plan_for
 * and layer_bw_row_vec, layer_colsum_plan_for and layer_colsum_vec, then
 * layer_colsum_final over the partials, layer_concat_plan_for), against
 * double-precision loops of this file written from layer.h's semantics
 * (not ref/layer.c: an independent reading of the header, and no link to
 * the CPU side's library), at layer_atol's tolerances (atol 1e-5; the sums
 * over the tokens 2e-6 rows + 1e-5) and LAYER_RTOL.
 *
 * What no emulator can run: the cuBLAS products (GEMM_DX, GEMM_DW,
 * CONTEXT_DP, CONTEXT_DV, SCORES_BACKWARD, grouped-query sums included);
 * the GPU suites check those.
 *
 * Cases:
 *  - GELU's gradient: the 16-byte path over several turns of one SM's
 *    grid, a tail past the groups of 4, x or r one float off 16-byte
 *    alignment (the scalar path), inputs far out in both tails (the
 *    exponent's clamp, e s s a tiny number and not inf x 0);
 *  - softmax's and layer norm's input gradients: rows a warp holds (4 a
 *    block, a last block short of rows), blocks of 2 to 32 warps, the long
 *    rows' 512 threads of 32 values, each on both paths; one row; rows off
 *    16-byte alignment; layer norm of rows far from mean 0;
 *  - the sums over the tokens (bias's; layer norm's gamma and beta): a
 *    warp a team and 16 teams a block, teams of 3 warps, a block a team,
 *    the long rows; one slab (y written directly) and up to a hundred
 *    (partials summed by the second kernel), teams' rows U at a time and
 *    a tail;
 *    the scalar path; one row; the same bits on a second run;
 *  - concat: the 16-byte path, odd parts (scalar), all of x or all of r, a
 *    part off alignment, BERT's QKV gradient's widths;
 *  - a wrong input (layer norm given gamma 1) and a wrong plan (each team
 *    a row short), which must fail the check.
 */
#include "cuda_shim.h"
#include "emu.h"

#include "layer.h"
#include "layer_backward_plan.h"
#include "rl_measure.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace {
#include "layer_backward_kernels.cuh"
} // namespace

using rl_emu::format;
using rl_emu::owned;

namespace {

const double ATOL = 1e-5;

/* n floats starting `skew` floats past a 16-byte boundary (the rest of the
 * allocation before them unused): a pointer the 16-byte paths must refuse. */
struct skewed {
    owned<float> buf;
    float *p;
};
skewed random_skewed(size_t n, int skew, float lo, float hi, uint64_t seed)
{
    skewed s{rl_emu::alloc<float>(n + (size_t)skew + 1), nullptr};
    s.p = s.buf.get() + skew;
    rl_fill_uniform(s.p, n, lo, hi, seed);
    return s;
}

/* layer.h's GELU, tanh form, differentiated as written: with t = tanh(z),
 * z = c (u + a u^3), gelu = u (1 + t) / 2, so
 * gelu' = (1 + t) / 2 + u (1 - t^2) c (1 + 3 a u^2) / 2. */
double gelu_grad(double u)
{
    const double t = tanh(LAYER_GELU_C * (u + LAYER_GELU_A * u * u * u));
    return 0.5 * (1.0 + t) + 0.5 * u * (1.0 - t * t) * LAYER_GELU_C * (1.0 + 3.0 * LAYER_GELU_A * u * u);
}

void report(const char *kernel, const std::string &shape, bool ran, const std::string &why, const float *y,
            const double *want, size_t n, double atol)
{
    if (!ran)
        rl_emu::fault(kernel, shape, why);
    else
        rl_emu::check_f32(kernel, shape, y, want, n, atol, LAYER_RTOL);
}

/* ---- GELU's gradient ------------------------------------------------------------------------ */

/* layer_gelu_backward_cuda's launch. */
bool run_gelu_backward(float *y, const float *x, const float *r, size_t n, int sms, bool &vec, std::string &why)
{
    vec = lb_aligned16(y) && lb_aligned16(x) && lb_aligned16(r);
    const rl_emu::launch_shape s = {dim3(layer_ew_blocks(n, vec, sms)), dim3(LAYER_EW_THREADS), 0, nullptr};
    if (vec)
        return rl_emu::launch(s, [&] { layer_gelu_backward_kernel<true>(y, x, r, n); }, why);
    return rl_emu::launch(s, [&] { layer_gelu_backward_kernel<false>(y, x, r, n); }, why);
}

/* y = x gelu'(r) over rows x cols; skew_x, skew_r: that input off
 * alignment; span: r uniform in [-span, span]. */
void gelu_backward(int rows, int cols, int skew_x, int skew_r, float span, int sms, uint64_t seed)
{
    const size_t n = (size_t)rows * cols;
    skewed x = random_skewed(n, skew_x, -1, 1, seed), r = random_skewed(n, skew_r, -span, span, seed + 1);
    owned<double> want = rl_emu::alloc<double>(n);
    for (size_t i = 0; i < n; i++)
        want[i] = (double)x.p[i] * gelu_grad(r.p[i]);
    owned<float> y = rl_emu::alloc_output(n);
    bool vec = false;
    std::string why;
    const bool ran = run_gelu_backward(y.get(), x.p, r.p, n, sms, vec, why);
    const std::string shape = format("%4d x %4d, r in +-%g%s%s, %d SMs: %s", rows, cols, (double)span,
                                     skew_x ? ", x off 16 B" : "", skew_r ? ", r off 16 B" : "", sms,
                                     vec ? "16-byte" : "scalar");
    report("gelu_backward", shape, ran, why, y.get(), want.get(), n, ATOL);
}

/* ---- rows ------------------------------------------------------------------------------------ */

/* layer_backward.cu's launch_bw_rows. */
template <int KIND> bool run_bw_rows(layer_bw_row_args r, layer_row_plan &p, bool &vec, std::string &why)
{
    p = layer_row_plan_for(r.rows, r.cols);
    r.team = p.team;
    vec = layer_bw_row_vec(&r);
    const rl_emu::launch_shape s = {dim3(p.blocks), dim3(p.threads), 0, nullptr};
    if (p.per == LAYER_ROW_PER)
        return vec ? rl_emu::launch(s, [&] { layer_bw_rows<KIND, LAYER_ROW_PER, true>(r); }, why)
                   : rl_emu::launch(s, [&] { layer_bw_rows<KIND, LAYER_ROW_PER, false>(r); }, why);
    return vec ? rl_emu::launch(s, [&] { layer_bw_rows<KIND, LAYER_ROW_PER_LONG, true>(r); }, why)
               : rl_emu::launch(s, [&] { layer_bw_rows<KIND, LAYER_ROW_PER_LONG, false>(r); }, why);
}

/* y = r (x - sum(x r)) per row, r a softmax of each row (positive, summing
 * to 1); skew: x and r one float off alignment. */
void softmax_backward(int rows, int cols, int skew, uint64_t seed)
{
    const size_t n = (size_t)rows * cols;
    skewed x = random_skewed(n, skew, -1, 1, seed), r = random_skewed(n, skew, -4, 4, seed + 1);
    for (int i = 0; i < rows; i++) { /* r: probabilities */
        float *p = r.p + (size_t)i * cols;
        double mx = -INFINITY, sum = 0;
        for (int j = 0; j < cols; j++)
            mx = std::max(mx, (double)p[j]);
        for (int j = 0; j < cols; j++)
            sum += exp(p[j] - mx);
        for (int j = 0; j < cols; j++)
            p[j] = (float)(exp(p[j] - mx) / sum);
    }
    owned<double> want = rl_emu::alloc<double>(n);
    for (int i = 0; i < rows; i++) {
        const size_t off = (size_t)i * cols;
        double dot = 0;
        for (int j = 0; j < cols; j++)
            dot += (double)x.p[off + j] * r.p[off + j];
        for (int j = 0; j < cols; j++)
            want[off + j] = (double)r.p[off + j] * ((double)x.p[off + j] - dot);
    }
    owned<float> y = rl_emu::alloc_output(n);
    layer_bw_row_args a = {};
    a.y = y.get(), a.x = x.p, a.r = r.p, a.rows = rows, a.cols = cols;
    layer_row_plan p;
    bool vec = false;
    std::string why;
    const bool ran = run_bw_rows<LAYER_BW_SOFTMAX>(a, p, vec, why);
    const std::string shape = format("%3d x %5d%s: %u x %u threads, %s", rows, cols, skew ? ", off 16 B" : "",
                                     p.blocks, p.threads, vec ? "16-byte" : "scalar");
    report("softmax_backward", shape, ran, why, y.get(), want.get(), n, ATOL);
}

/* Layer norm's input gradient: x the output's gradient, r the input (rows
 * of mean `center`), gamma; unit_gamma: the kernel is given gamma = 1
 * while the reference uses gamma (must fail). */
void layernorm_backward(int rows, int cols, int skew, float center, bool unit_gamma, uint64_t seed)
{
    const size_t n = (size_t)rows * cols;
    skewed x = random_skewed(n, skew, -1, 1, seed), r = random_skewed(n, skew, center - 2, center + 2, seed + 1);
    owned<float> gamma = rl_emu::alloc<float>((size_t)cols), ones = rl_emu::alloc<float>((size_t)cols);
    rl_fill_uniform(gamma.get(), (size_t)cols, 0.5f, 1.5f, seed + 2);
    std::fill(ones.get(), ones.get() + cols, 1.0f);
    const float eps = 1e-5f;
    owned<double> want = rl_emu::alloc<double>(n);
    std::vector<double> g((size_t)cols), h((size_t)cols);
    for (int i = 0; i < rows; i++) {
        const size_t off = (size_t)i * cols;
        double mean = 0, var = 0, mg = 0, mgh = 0;
        for (int j = 0; j < cols; j++)
            mean += r.p[off + j];
        mean /= cols;
        for (int j = 0; j < cols; j++)
            var += (r.p[off + j] - mean) * (r.p[off + j] - mean);
        const double rs = 1.0 / sqrt(var / cols + eps);
        for (int j = 0; j < cols; j++) {
            g[j] = (double)x.p[off + j] * gamma[j], h[j] = (r.p[off + j] - mean) * rs;
            mg += g[j], mgh += g[j] * h[j];
        }
        mg /= cols, mgh /= cols;
        for (int j = 0; j < cols; j++)
            want[off + j] = (g[j] - mg - h[j] * mgh) * rs;
    }
    owned<float> y = rl_emu::alloc_output(n);
    layer_bw_row_args a = {};
    a.y = y.get(), a.x = x.p, a.r = r.p, a.gamma = unit_gamma ? ones.get() : gamma.get();
    a.rows = rows, a.cols = cols, a.eps = eps;
    layer_row_plan p;
    bool vec = false;
    std::string why;
    const bool ran = run_bw_rows<LAYER_BW_LAYERNORM>(a, p, vec, why);
    const std::string shape =
        format("%3d x %5d, mean %g%s%s: %u x %u threads, %s", rows, cols, (double)center, skew ? ", off 16 B" : "",
               unit_gamma ? " (kernel given gamma 1)" : "", p.blocks, p.threads, vec ? "16-byte" : "scalar");
    if (!ran)
        rl_emu::fault("layernorm_backward", shape, why);
    else if (unit_gamma)
        rl_emu::check_fails("layernorm_backward", shape, y.get(), want.get(), n, ATOL, LAYER_RTOL);
    else
        rl_emu::check_f32("layernorm_backward", shape, y.get(), want.get(), n, ATOL, LAYER_RTOL);
}

/* ---- the sums over the tokens ------------------------------------------------------------------ */

/* layer_backward.cu's launch_colsums: the first kernel into y (one slab)
 * or partials, then the second over the partials. short_team: each team
 * given a row fewer than the plan's (a wrong plan, rows left out). */
template <int KIND, int PER, bool VEC>
bool launch_colsums_as(const layer_colsum_args &c, const layer_colsum_plan &p, std::string &why)
{
    const rl_emu::launch_shape s = {dim3(p.blocks), dim3(p.threads), 0, nullptr};
    return rl_emu::launch(s, [&] { layer_colsums<KIND, PER, VEC>(c); }, why);
}

template <int KIND>
bool run_colsums(float *y, const float *x, const float *r, int rows, int cols, float eps, int sms, bool short_team,
                 layer_colsum_plan &p, bool &vec, std::string &why)
{
    p = layer_colsum_plan_for(rows, cols, sms);
    const int width = KIND == LAYER_COLSUM_LAYERNORM ? 2 * cols : cols;
    owned<float> partials = rl_emu::alloc<float>((size_t)p.blocks * width);
    layer_colsum_args c = {};
    c.out = p.blocks == 1 ? y : partials.get();
    c.x = x, c.r = r, c.rows = rows, c.cols = cols, c.eps = eps;
    c.team = p.team, c.teams = p.teams, c.sub = short_team ? p.sub - 1 : p.sub, c.slab = p.slab;
    vec = layer_colsum_vec(&c);
    bool ran;
    if (p.per == LAYER_ROW_PER && vec)
        ran = launch_colsums_as<KIND, LAYER_ROW_PER, true>(c, p, why);
    else if (p.per == LAYER_ROW_PER)
        ran = launch_colsums_as<KIND, LAYER_ROW_PER, false>(c, p, why);
    else if (vec)
        ran = launch_colsums_as<KIND, LAYER_ROW_PER_LONG, true>(c, p, why);
    else
        ran = launch_colsums_as<KIND, LAYER_ROW_PER_LONG, false>(c, p, why);
    if (!ran || p.blocks == 1)
        return ran;
    const float *part = partials.get();
    const int parts = (int)p.blocks;
    const rl_emu::launch_shape s = {dim3(layer_colsum_final_blocks(width)), dim3(LAYER_COLSUM_FINAL_THREADS), 0,
                                    nullptr};
    return rl_emu::launch(s, [&] { layer_colsum_final(y, part, parts, width); }, why);
}

/* The bias's gradient (ln false) or gamma's and beta's (ln true) over rows
 * x cols; skew: x and r off alignment. */
void colsums(bool ln, int rows, int cols, int skew, int sms, bool short_team, uint64_t seed)
{
    const size_t n = (size_t)rows * cols;
    const int width = ln ? 2 * cols : cols;
    skewed x = random_skewed(n, skew, -1, 1, seed), r = random_skewed(n, skew, 1, 5, seed + 1);
    const float eps = 1e-5f;
    owned<double> want = rl_emu::alloc<double>((size_t)width);
    std::fill(want.get(), want.get() + width, 0.0);
    for (int i = 0; i < rows; i++) {
        const size_t off = (size_t)i * cols;
        double mean = 0, var = 0;
        for (int j = 0; j < cols; j++)
            mean += r.p[off + j];
        mean /= cols;
        for (int j = 0; j < cols; j++)
            var += (r.p[off + j] - mean) * (r.p[off + j] - mean);
        const double rs = 1.0 / sqrt(var / cols + eps);
        for (int j = 0; j < cols; j++) {
            if (ln) {
                want[j] += (double)x.p[off + j] * (r.p[off + j] - mean) * rs;
                want[cols + j] += x.p[off + j];
            } else {
                want[j] += x.p[off + j];
            }
        }
    }
    owned<float> y = rl_emu::alloc_output((size_t)width), again = rl_emu::alloc_output((size_t)width);
    layer_colsum_plan p;
    bool vec = false;
    std::string why;
    auto run = [&](float *out) {
        return ln ? run_colsums<LAYER_COLSUM_LAYERNORM>(out, x.p, r.p, rows, cols, eps, sms, short_team, p, vec, why)
                  : run_colsums<LAYER_COLSUM_BIAS>(out, x.p, r.p, rows, cols, eps, sms, short_team, p, vec, why);
    };
    const bool ran = run(y.get());
    const char *kernel = ln ? "layernorm_param_grad" : "bias_grad";
    const std::string shape =
        format("%4d x %5d%s, %3d SMs: %u x %u (%d x %d), %d rows a team%s, %s", rows, cols, skew ? ", off 16 B" : "",
               sms, p.blocks, p.threads, p.teams, p.team, p.sub, short_team ? " (given one fewer)" : "",
               vec ? "16-byte" : "scalar");
    const double atol = 2e-6 * rows + 1e-5; /* layer_atol's for the sums over the tokens */
    if (!ran) {
        rl_emu::fault(kernel, shape, why);
    } else if (short_team) {
        rl_emu::check_fails(kernel, shape, y.get(), want.get(), (size_t)width, atol, LAYER_RTOL);
    } else if (rl_emu::check_f32(kernel, shape, y.get(), want.get(), (size_t)width, atol, LAYER_RTOL) &&
               p.blocks > 1 && n <= 100000) {
        /* the partials and their sum in a fixed order: a second run, the
         * same bits (not for the longest cases: the emulator's time) */
        const std::string shape2 = format("%4d x %5d, %3d SMs: a second run", rows, cols, sms);
        if (!run(again.get()))
            rl_emu::fault(kernel, shape2, why);
        else
            rl_emu::check_same(kernel, shape2, again.get(), y.get(), (size_t)width * sizeof(float), true);
    }
}

/* ---- concat ------------------------------------------------------------------------------------ */

/* y (rows x cols) = per row x's k values, then r's cols - k; skew: x off
 * alignment. Copies: the check is exact. */
void concat(int rows, int cols, int k, int skew, uint64_t seed)
{
    const size_t nx = (size_t)rows * k, nr = (size_t)rows * (cols - k), n = (size_t)rows * cols;
    skewed x = random_skewed(nx, skew, -1, 1, seed), r = random_skewed(nr, 0, -1, 1, seed + 1);
    owned<double> want = rl_emu::alloc<double>(n);
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            want[(size_t)i * cols + j] = j < k ? x.p[(size_t)i * k + j] : r.p[(size_t)i * (cols - k) + (j - k)];
    owned<float> y = rl_emu::alloc_output(n);
    float *yp = y.get();
    const float *xp = x.p, *rp = r.p;
    /* layer_concat_cuda's launch */
    const bool vec = k % 4 == 0 && cols % 4 == 0 && lb_aligned16(yp) && lb_aligned16(xp) && lb_aligned16(rp);
    const layer_concat_plan p = layer_concat_plan_for(rows, cols, vec, 132);
    const rl_emu::launch_shape s = {dim3(p.blocks), dim3(p.tx, p.ty), 0, nullptr};
    std::string why;
    const bool ran = vec ? rl_emu::launch(s, [&] { layer_concat_kernel<true>(yp, xp, rp, rows, cols, k); }, why)
                         : rl_emu::launch(s, [&] { layer_concat_kernel<false>(yp, xp, rp, rows, cols, k); }, why);
    const std::string shape = format("%3d x %4d, k %4d%s: %u x (%u x %u), %s", rows, cols, k,
                                     skew ? ", x off 16 B" : "", p.blocks, p.tx, p.ty, vec ? "16-byte" : "scalar");
    if (!ran)
        rl_emu::fault("concat", shape, why);
    else
        rl_emu::check_f32("concat", shape, yp, want.get(), n, 0.0, 0.0); /* exact */
}

} // namespace

void emu_layer_backward(void)
{
    uint64_t seed = 1900;
    /* GELU's gradient: several turns of one SM's grid; a tail; skewed x, r;
     * the tails of the input (the exponent's clamp) */
    gelu_backward(64, 768, 0, 0, 3, 1, seed += 3);
    gelu_backward(5, 13, 0, 0, 3, 132, seed += 3);
    gelu_backward(7, 12, 1, 0, 3, 132, seed += 3);
    gelu_backward(7, 12, 0, 3, 3, 132, seed += 3);
    gelu_backward(1, 1001, 0, 0, 3, 1, seed += 3);
    gelu_backward(16, 64, 0, 0, 40, 132, seed += 3);

    /* rows: a warp a row (5 rows: a short last block), blocks of 2 to 32
     * warps, the long rows' 512 threads; one row; rows off alignment */
    for (int cols : {3, 128, 256, 300, 1023, 4096, 8192, 8195, 16384}) {
        softmax_backward(cols > 4096 ? 2 : 5, cols, 0, seed += 3);
        layernorm_backward(cols > 4096 ? 2 : 5, cols, 0, 0.0f, false, seed += 3);
    }
    softmax_backward(1, 512, 0, seed += 3);
    softmax_backward(5, 768, 1, seed += 3);
    softmax_backward(3, 8195, 1, seed += 3);
    layernorm_backward(1, 1024, 0, 0.0f, false, seed += 3);
    layernorm_backward(5, 768, 1, 0.0f, false, seed += 3);
    layernorm_backward(3, 16383, 1, 0.0f, false, seed += 3);
    layernorm_backward(5, 1024, 0, 100.0f, false, seed += 3);
    layernorm_backward(5, 100, 0, -30.0f, false, seed += 3);

    /* the sums over the tokens: teams of a warp (16 a block), of 3 warps
     * (5 a block), of 4 warps, a block a team (512, 1024), the long rows;
     * one slab, many, U-row turns with a tail; scalar; one row */
    for (bool ln : {false, true}) {
        colsums(ln, 37, 3, 0, 132, false, seed += 3);
        colsums(ln, 300, 200, 0, 2, false, seed += 3);
        colsums(ln, 301, 768, 0, 132, false, seed += 3);
        colsums(ln, 1000, 1024, 0, 132, false, seed += 3);
        colsums(ln, 1500, 64, 0, 132, false, seed += 3);
        colsums(ln, 203, 1024, 0, 3, false, seed += 3);
        colsums(ln, 90, 4096, 0, 8, false, seed += 3);
        colsums(ln, 33, 8192, 0, 2, false, seed += 3);
        colsums(ln, 33, 8195, 0, 1, false, seed += 3);
        colsums(ln, 33, 16384, 0, 132, false, seed += 3);
        colsums(ln, 101, 770, 1, 4, false, seed += 3);
        colsums(ln, 1, 1024, 0, 132, false, seed += 3);
    }

    concat(5, 12, 8, 0, seed += 3);
    concat(7, 13, 5, 0, seed += 3);
    concat(3, 3072, 2048, 0, seed += 3);
    concat(4, 16, 0, 0, seed += 3);
    concat(4, 16, 16, 0, seed += 3);
    concat(6, 24, 8, 1, seed += 3);
    concat(1, 300, 100, 0, seed += 3);
    concat(600, 20, 12, 0, seed += 3);

    /* must fail: layer norm's gradient given gamma 1; each team a row short */
    layernorm_backward(5, 768, 0, 0.0f, true, seed += 3);
    colsums(false, 300, 1024, 0, 2, true, seed += 3);
    colsums(true, 300, 200, 0, 2, true, seed += 3);
}
