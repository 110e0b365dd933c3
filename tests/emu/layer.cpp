/*
 * layer.cpp -- experiment 09's CUDA kernels (layer_kernels.cuh) on the
 * emulator, planned and launched as layer.cu's launchers do
 * (layer_ew_vec and layer_ew_blocks, layer_row_plan_for and
 * layer_row_vec, layer_rope_blocks, layer_flash_smem_bytes), against
 * double-precision loops of this file written from layer.h's semantics
 * (not ref/layer.c: an independent reading of the header, and no link to
 * the CPU side's library), at layer_atol's tolerances (atol 1e-5; the
 * attention 2e-6 seq + 1e-5) and LAYER_RTOL.
 *
 * What no emulator can run: the cuBLAS products (GEMM, SCORES, CONTEXT);
 * their epilogue pass is here, in place on a product as layer.cu runs it.
 *
 * Cases:
 *  - element-wise: each op on rows of whole 16-byte groups (the vector
 *    path), on odd rows and on an input one float off 16-byte alignment
 *    (the scalar path, and the vector path's tail), on a grid of one SM's
 *    blocks (the grid-stride loop's turns); scale-mask with each mask;
 *  - the epilogues, in place (y == x), SwiGLU from a rows x 2 cols scratch;
 *  - rows: each softmax and norm at lengths that take a warp a row (4 rows
 *    a block, a last block short of rows), a block of 1 to 32 warps and
 *    the long rows' 512 threads of 32 values, each on both paths, rows
 *    past 16-byte alignment; scale-mask-softmax with each mask, and a
 *    padding mask that masks every key of a sequence;
 *  - RoPE: grouped-query heads, dims 64 and 128, positions past 4096
 *    (Llama 3's theta too);
 *  - fused attention: dims 64 and 128, MHA and grouped-query (2 and 8
 *    query heads a KV head), sequences of 1, 33, 100, 130 and 200 tokens
 *    (tiles of 64 queries and 32 keys left partial), each mask, a sequence
 *    all of whose keys are padding, keys that grow along the sequence (the
 *    running maximum rises tile after tile);
 *  - a kernel given the wrong mask, which must fail the check.
 */
#include "cuda_shim.h"
#include "emu.h"

#include "layer.h"
#include "rl_measure.h"
#include "warp.cuh"

#include <algorithm>
#include <cmath>
#include <vector>

namespace {
/* the fused attention's extern __shared__ array: its largest launch,
 * layer_flash_smem_bytes(128) */
alignas(16) thread_local float layer_smem[16384];
#include "layer_flash.cuh"

rl_emu::arena flash_arena(void) { return {layer_smem, sizeof layer_smem}; }
} // namespace

using rl_emu::format;
using rl_emu::owned;

namespace {

const double ATOL = 1e-5;

owned<float> random_floats(size_t n, float lo, float hi, uint64_t seed)
{
    owned<float> x = rl_emu::alloc<float>(n ? n : 1);
    rl_fill_uniform(x.get(), n, lo, hi, seed);
    return x;
}

/* n floats starting `skew` floats past a 16-byte boundary (the rest of the
 * allocation before them unused): a pointer the 16-byte paths must refuse. */
struct skewed {
    owned<float> buf;
    float *p;
};
skewed random_skewed(size_t n, int skew, float lo, float hi, uint64_t seed)
{
    skewed s{rl_emu::alloc<float>(n + (size_t)skew), nullptr};
    s.p = s.buf.get() + skew;
    rl_fill_uniform(s.p, n, lo, hi, seed);
    return s;
}

double gelu(double x) { return 0.5 * x * (1.0 + tanh(LAYER_GELU_C * (x + LAYER_GELU_A * x * x * x))); }
double silu(double x) { return x / (1.0 + exp(-x)); }

/* layer.h's additive mask of key j for query q of sequence b */
double mask_of(const float *mask, layer_mask kind, int b, int q, int j, int seq)
{
    if (kind == LAYER_MASK_PADDING)
        return mask[(size_t)b * seq + j];
    if (kind == LAYER_MASK_CAUSAL)
        return j > q ? LAYER_MASKED : 0.0;
    return 0.0;
}

const char *mask_name(layer_mask m)
{
    return m == LAYER_MASK_PADDING ? "padding" : m == LAYER_MASK_CAUSAL ? "causal" : "no mask";
}

/* A padding mask: sequence b keeps its first seq - 3 b keys, but for
 * sequence 2, which keeps none (every key of it masked: a softmax of
 * -10000 + scores), the rest LAYER_MASKED. */
const int ALL_MASKED = 2;
owned<float> padding_mask(int batch, int seq)
{
    owned<float> m = rl_emu::alloc<float>((size_t)batch * seq);
    for (int b = 0; b < batch; b++)
        for (int j = 0; j < seq; j++)
            m[(size_t)b * seq + j] = b != ALL_MASKED && j < seq - 3 * b ? 0.0f : LAYER_MASKED;
    return m;
}

const char *all_masked(layer_mask m, int batch)
{
    return m == LAYER_MASK_PADDING && batch > ALL_MASKED ? " (one sequence all masked)" : "";
}

/* ---- element-wise ------------------------------------------------------------------------- */

const char *ew_name(int kind)
{
    static const char *const NAMES[LAYER_EW_KINDS] = {"bias", "gelu", "bias_gelu", "add", "bias_add", "silu_gate",
                                                      "scale_mask"};
    return NAMES[kind];
}

/* layer.cu's launch_elementwise. */
template <int KIND> bool run_ew(const layer_ew_args &e, int sms, bool &vec, std::string &why)
{
    vec = layer_ew_vec(KIND, &e);
    const rl_emu::launch_shape s = {dim3(layer_ew_blocks(e.n, vec, sms)), dim3(LAYER_EW_THREADS), 0, nullptr};
    if (vec)
        return rl_emu::launch(s, [&] { layer_elementwise<KIND, true>(e); }, why);
    return rl_emu::launch(s, [&] { layer_elementwise<KIND, false>(e); }, why);
}

bool run_ew_kind(int kind, const layer_ew_args &e, int sms, bool &vec, std::string &why)
{
    switch (kind) {
    case LAYER_EW_BIAS: return run_ew<LAYER_EW_BIAS>(e, sms, vec, why);
    case LAYER_EW_GELU: return run_ew<LAYER_EW_GELU>(e, sms, vec, why);
    case LAYER_EW_BIAS_GELU: return run_ew<LAYER_EW_BIAS_GELU>(e, sms, vec, why);
    case LAYER_EW_ADD: return run_ew<LAYER_EW_ADD>(e, sms, vec, why);
    case LAYER_EW_BIAS_ADD: return run_ew<LAYER_EW_BIAS_ADD>(e, sms, vec, why);
    case LAYER_EW_SILU_GATE: return run_ew<LAYER_EW_SILU_GATE>(e, sms, vec, why);
    default: return run_ew<LAYER_EW_SCALE_MASK>(e, sms, vec, why);
    }
}

/* One activation op (not scale-mask) on rows x cols; skew: x one float
 * off alignment; in_place: y == x (a GEMM's epilogue on its product);
 * no_bias: BIAS_ADD without a bias. */
void elementwise(int kind, int rows, int cols, int skew, bool in_place, bool no_bias, int sms, uint64_t seed)
{
    const size_t n = (size_t)rows * cols, nx = kind == LAYER_EW_SILU_GATE ? 2 * n : n;
    skewed x = random_skewed(nx, skew, -3, 3, seed);
    owned<float> r = random_floats(n, -1, 1, seed + 1), bias = random_floats((size_t)cols, -0.5f, 0.5f, seed + 2);
    const bool has_bias = kind == LAYER_EW_BIAS || kind == LAYER_EW_BIAS_GELU || (kind == LAYER_EW_BIAS_ADD && !no_bias);
    owned<double> want = rl_emu::alloc<double>(n);
    for (size_t i = 0; i < n; i++) {
        const size_t row = i / cols, c = i % cols;
        const double xv = x.p[i], bv = has_bias ? bias[c] : 0.0;
        switch (kind) {
        case LAYER_EW_BIAS: want[i] = xv + bv; break;
        case LAYER_EW_GELU: want[i] = gelu(xv); break;
        case LAYER_EW_BIAS_GELU: want[i] = gelu(xv + bv); break;
        case LAYER_EW_ADD: want[i] = xv + r[i]; break;
        case LAYER_EW_BIAS_ADD: want[i] = xv + bv + r[i]; break;
        default: want[i] = silu(x.p[row * 2 * cols + c]) * x.p[row * 2 * cols + cols + c]; break;
        }
    }
    owned<float> y = rl_emu::alloc_output(n);
    layer_ew_args e = {};
    e.y = y.get(), e.x = x.p, e.n = n, e.cols = cols;
    e.r = kind == LAYER_EW_ADD || kind == LAYER_EW_BIAS_ADD ? r.get() : nullptr;
    e.bias = has_bias ? bias.get() : nullptr;
    if (in_place) { /* the product already in y, the epilogue over it */
        memcpy(y.get(), x.p, n * sizeof(float));
        e.x = y.get();
    }
    bool vec = false;
    std::string why;
    const bool ran = run_ew_kind(kind, e, sms, vec, why);
    const std::string kernel = format("%s%s", in_place ? "epilogue " : "", ew_name(kind));
    const std::string shape = format("%4d x %4d%s%s, %d SMs: %s", rows, cols, skew ? ", x off 16 B" : "",
                                     no_bias ? ", no bias" : "", sms, vec ? "16-byte" : "scalar");
    if (!ran)
        rl_emu::fault(kernel.c_str(), shape, why);
    else
        rl_emu::check_f32(kernel.c_str(), shape, y.get(), want.get(), n, ATOL, LAYER_RTOL);
}

/* The SwiGLU epilogue: the product (rows x 2 cols) in the scratch y2, y
 * rows x cols (layer.cu's EPI_SILU_GATE). */
void silu_epilogue(int rows, int cols, uint64_t seed)
{
    const size_t n = (size_t)rows * cols;
    owned<float> scratch = random_floats(2 * n, -4, 4, seed);
    owned<double> want = rl_emu::alloc<double>(n);
    for (size_t i = 0; i < n; i++) {
        const size_t row = i / cols, c = i % cols;
        want[i] = silu(scratch[row * 2 * cols + c]) * scratch[row * 2 * cols + cols + c];
    }
    owned<float> y = rl_emu::alloc_output(n);
    layer_ew_args e = {};
    e.y = y.get(), e.x = scratch.get(), e.n = n, e.cols = cols;
    bool vec = false;
    std::string why;
    const bool ran = run_ew_kind(LAYER_EW_SILU_GATE, e, 132, vec, why);
    const std::string shape =
        format("%4d x %4d from a %d x %d scratch: %s", rows, cols, rows, 2 * cols, vec ? "16-byte" : "scalar");
    if (!ran)
        rl_emu::fault("epilogue silu_gate", shape, why);
    else
        rl_emu::check_f32("epilogue silu_gate", shape, y.get(), want.get(), n, ATOL, LAYER_RTOL);
}

void scale_mask(int batch, int heads, int seq, layer_mask m, uint64_t seed)
{
    const size_t n = (size_t)batch * heads * seq * seq;
    owned<float> x = random_floats(n, -8, 8, seed), mask = padding_mask(batch, seq);
    const float scale = 0.125f;
    owned<double> want = rl_emu::alloc<double>(n);
    for (size_t i = 0; i < n; i++) {
        const int j = (int)(i % seq), q = (int)(i / seq % seq), b = (int)(i / ((size_t)seq * seq * heads));
        want[i] = (double)x[i] * scale + mask_of(mask.get(), m, b, q, j, seq);
    }
    owned<float> y = rl_emu::alloc_output(n);
    layer_ew_args e = {};
    e.y = y.get(), e.x = x.get(), e.mask = m == LAYER_MASK_PADDING ? mask.get() : nullptr, e.n = n;
    e.cols = seq, e.seq = seq, e.heads = heads, e.mask_kind = m, e.scale = scale;
    bool vec = false;
    std::string why;
    const bool ran = run_ew_kind(LAYER_EW_SCALE_MASK, e, 2, vec, why);
    const std::string shape = format("B %d H %d seq %3d, %s%s: %s", batch, heads, seq, mask_name(m),
                                     all_masked(m, batch), vec ? "16-byte" : "scalar");
    if (!ran)
        rl_emu::fault("scale_mask", shape, why);
    else
        rl_emu::check_f32("scale_mask", shape, y.get(), want.get(), n, ATOL, LAYER_RTOL);
}

/* ---- rows ------------------------------------------------------------------------------------ */

const char *row_name(int kind)
{
    static const char *const NAMES[LAYER_ROW_KINDS] = {"softmax", "scale_mask_softmax", "layernorm",
                                                       "bias_add_layernorm", "rmsnorm", "add_rmsnorm"};
    return NAMES[kind];
}

/* layer.cu's launch_rows. */
template <int KIND> bool run_rows(layer_row_args r, layer_row_plan &p, bool &vec, std::string &why)
{
    p = layer_row_plan_for(r.rows, r.cols);
    r.team = p.team;
    vec = layer_row_vec(&r);
    const rl_emu::launch_shape s = {dim3(p.blocks), dim3(p.threads), 0, nullptr};
    if (p.per == LAYER_ROW_PER)
        return vec ? rl_emu::launch(s, [&] { layer_rows<KIND, LAYER_ROW_PER, true>(r); }, why)
                   : rl_emu::launch(s, [&] { layer_rows<KIND, LAYER_ROW_PER, false>(r); }, why);
    return vec ? rl_emu::launch(s, [&] { layer_rows<KIND, LAYER_ROW_PER_LONG, true>(r); }, why)
               : rl_emu::launch(s, [&] { layer_rows<KIND, LAYER_ROW_PER_LONG, false>(r); }, why);
}

bool run_rows_kind(int kind, const layer_row_args &r, layer_row_plan &p, bool &vec, std::string &why)
{
    switch (kind) {
    case LAYER_ROW_SOFTMAX: return run_rows<LAYER_ROW_SOFTMAX>(r, p, vec, why);
    case LAYER_ROW_SCALE_MASK_SOFTMAX: return run_rows<LAYER_ROW_SCALE_MASK_SOFTMAX>(r, p, vec, why);
    case LAYER_ROW_LAYERNORM: return run_rows<LAYER_ROW_LAYERNORM>(r, p, vec, why);
    case LAYER_ROW_BIAS_ADD_LAYERNORM: return run_rows<LAYER_ROW_BIAS_ADD_LAYERNORM>(r, p, vec, why);
    case LAYER_ROW_RMSNORM: return run_rows<LAYER_ROW_RMSNORM>(r, p, vec, why);
    default: return run_rows<LAYER_ROW_ADD_RMSNORM>(r, p, vec, why);
    }
}

/* softmax of each row of v (n values), in place */
void ref_softmax(double *v, int n)
{
    double mx = -INFINITY, sum = 0;
    for (int j = 0; j < n; j++)
        mx = std::max(mx, v[j]);
    for (int j = 0; j < n; j++)
        sum += v[j] = exp(v[j] - mx);
    for (int j = 0; j < n; j++)
        v[j] /= sum;
}

void check_rows(const char *kernel, const std::string &shape, bool ran, const std::string &why, const float *y,
                const double *want, size_t n)
{
    if (!ran)
        rl_emu::fault(kernel, shape, why);
    else
        rl_emu::check_f32(kernel, shape, y, want, n, ATOL, LAYER_RTOL);
}

/* A softmax or norm (not scale-mask) of rows x cols; skew: x (and r) one
 * float off alignment; no_bias: BIAS_ADD_LAYERNORM without a bias. */
void rows_case(int kind, int rows, int cols, int skew, bool no_bias, uint64_t seed)
{
    const size_t n = (size_t)rows * cols;
    skewed x = random_skewed(n, skew, -2, 2, seed), r = random_skewed(n, skew, -1, 1, seed + 1);
    owned<float> bias = random_floats((size_t)cols, -0.5f, 0.5f, seed + 2),
                 gamma = random_floats((size_t)cols, 0.5f, 1.5f, seed + 3),
                 beta = random_floats((size_t)cols, -0.5f, 0.5f, seed + 4);
    const bool softmax = kind == LAYER_ROW_SOFTMAX;
    /* softmax: rows with an offset, so exp's argument is not x itself */
    if (softmax)
        for (size_t i = 0; i < n; i++)
            x.p[i] = x.p[i] * 4.0f + (float)(i / cols % 7) * 10.0f;
    const bool adds = kind == LAYER_ROW_BIAS_ADD_LAYERNORM || kind == LAYER_ROW_ADD_RMSNORM;
    const bool has_bias = kind == LAYER_ROW_BIAS_ADD_LAYERNORM && !no_bias;
    const bool layernorm = kind == LAYER_ROW_LAYERNORM || kind == LAYER_ROW_BIAS_ADD_LAYERNORM;
    const float eps = 1e-5f;
    owned<double> want = rl_emu::alloc<double>(n), want2 = rl_emu::alloc<double>(n);
    std::vector<double> h((size_t)cols);
    for (int i = 0; i < rows; i++) {
        const size_t off = (size_t)i * cols;
        for (int c = 0; c < cols; c++)
            h[c] = (double)x.p[off + c] + (has_bias ? bias[c] : 0.0) + (adds ? r.p[off + c] : 0.0);
        if (softmax) {
            ref_softmax(h.data(), cols);
            for (int c = 0; c < cols; c++)
                want[off + c] = h[c];
            continue;
        }
        double mean = 0, sq = 0;
        if (layernorm) {
            for (int c = 0; c < cols; c++)
                mean += h[c];
            mean /= cols;
        }
        for (int c = 0; c < cols; c++)
            sq += (h[c] - mean) * (h[c] - mean);
        const double rs = 1.0 / sqrt(sq / cols + eps);
        for (int c = 0; c < cols; c++) {
            want2[off + c] = h[c];
            want[off + c] = (h[c] - mean) * rs * gamma[c] + (layernorm ? beta[c] : 0.0);
        }
    }
    owned<float> y = rl_emu::alloc_output(n), y2 = rl_emu::alloc_output(n);
    layer_row_args a = {};
    a.y = y.get(), a.x = x.p, a.rows = rows, a.cols = cols, a.eps = eps;
    if (!softmax)
        a.gamma = gamma.get();
    if (layernorm)
        a.beta = beta.get();
    if (adds)
        a.r = r.p;
    if (has_bias)
        a.bias = bias.get();
    if (kind == LAYER_ROW_ADD_RMSNORM)
        a.y2 = y2.get();
    layer_row_plan p;
    bool vec = false;
    std::string why;
    const bool ran = run_rows_kind(kind, a, p, vec, why);
    const std::string shape = format("%3d x %5d%s%s: %u x %u threads, %s", rows, cols, skew ? ", off 16 B" : "",
                                     no_bias ? ", no bias" : "", p.blocks, p.threads, vec ? "16-byte" : "scalar");
    check_rows(row_name(kind), shape, ran, why, y.get(), want.get(), n);
    if (ran && kind == LAYER_ROW_ADD_RMSNORM)
        rl_emu::check_f32("add_rmsnorm (y2 = x + r)", shape, y2.get(), want2.get(), n, ATOL, LAYER_RTOL);
}

void scale_mask_softmax(int batch, int heads, int seq, layer_mask m, uint64_t seed)
{
    const int rows = batch * heads * seq;
    const size_t n = (size_t)rows * seq;
    owned<float> x = random_floats(n, -8, 8, seed), mask = padding_mask(batch, seq);
    const float scale = 0.125f;
    owned<double> want = rl_emu::alloc<double>(n);
    for (int row = 0; row < rows; row++) {
        const int b = row / (heads * seq), q = row % seq;
        double *w = want.get() + (size_t)row * seq;
        for (int j = 0; j < seq; j++)
            w[j] = (double)x[(size_t)row * seq + j] * scale + mask_of(mask.get(), m, b, q, j, seq);
        ref_softmax(w, seq);
    }
    owned<float> y = rl_emu::alloc_output(n);
    layer_row_args a = {};
    a.y = y.get(), a.x = x.get(), a.mask = m == LAYER_MASK_PADDING ? mask.get() : nullptr;
    a.rows = rows, a.cols = seq, a.seq = seq, a.heads = heads, a.mask_kind = m, a.scale = scale;
    layer_row_plan p;
    bool vec = false;
    std::string why;
    const bool ran = run_rows_kind(LAYER_ROW_SCALE_MASK_SOFTMAX, a, p, vec, why);
    const std::string shape = format("B %d H %d seq %4d, %s%s: %s", batch, heads, seq, mask_name(m),
                                     all_masked(m, batch), vec ? "16-byte" : "scalar");
    check_rows("scale_mask_softmax", shape, ran, why, y.get(), want.get(), n);
}

/* ---- RoPE -------------------------------------------------------------------------------------- */

void rope(int batch, int seq, int heads, int heads_kv, int dim, float theta, uint64_t seed)
{
    const int rows = batch * seq, ld = (heads + 2 * heads_kv) * dim, half = dim / 2;
    const size_t n = (size_t)rows * ld;
    owned<float> x = random_floats(n, -2, 2, seed);
    owned<double> want = rl_emu::alloc<double>(n);
    for (int row = 0; row < rows; row++) {
        const int pos = row % seq;
        const float *xr = x.get() + (size_t)row * ld;
        double *w = want.get() + (size_t)row * ld;
        for (int h = 0; h < heads + 2 * heads_kv; h++)
            for (int c = 0; c < half; c++) {
                const double lo = xr[h * dim + c], hi = xr[h * dim + c + half];
                if (h >= heads + heads_kv) { /* a value head: copied */
                    w[h * dim + c] = lo, w[h * dim + c + half] = hi;
                    continue;
                }
                const double angle = pos * pow((double)theta, -2.0 * c / dim);
                w[h * dim + c] = lo * cos(angle) - hi * sin(angle);
                w[h * dim + c + half] = hi * cos(angle) + lo * sin(angle);
            }
    }
    owned<float> y = rl_emu::alloc_output(n);
    float *yp = y.get();
    const float *xp = x.get();
    const double l2 = log2((double)theta);
    const rl_emu::launch_shape s = {dim3(layer_rope_blocks(rows, dim, 132)), dim3(LAYER_ROPE_THREADS), 0, nullptr};
    std::string why;
    const bool ran = rl_emu::launch(s, [&] { layer_rope_kernel(yp, xp, rows, seq, heads, heads_kv, dim, l2); }, why);
    const std::string shape =
        format("B %d seq %4d H %d/%d dim %3d theta %.0f", batch, seq, heads, heads_kv, dim, (double)theta);
    check_rows("rope", shape, ran, why, yp, want.get(), n);
}

/* ---- fused attention ---------------------------------------------------------------------------- */

struct attention_case {
    int batch, seq, heads, heads_kv, dim;
    layer_mask mask;
    bool rising; /* keys 1 + 4 j / seq times larger along the sequence: late maxima */
};

/* ref_mask: the mask the reference applies (a wrong kernel is given m). */
void attention(const attention_case &t, layer_mask ref_mask, uint64_t seed)
{
    const int rows = t.batch * t.seq, ld = (t.heads + 2 * t.heads_kv) * t.dim, G = t.heads / t.heads_kv;
    const size_t nx = (size_t)rows * ld, ny = (size_t)rows * t.heads * t.dim;
    owned<float> x = random_floats(nx, -1, 1, seed);
    if (t.rising)
        for (int row = 0; row < rows; row++)
            for (int c = t.heads * t.dim; c < (t.heads + t.heads_kv) * t.dim; c++)
                x[(size_t)row * ld + c] *= 1.0f + 4.0f * (float)(row % t.seq) / (float)t.seq;
    owned<float> mask = padding_mask(t.batch, t.seq);
    const float scale = 1.0f / sqrtf((float)t.dim);
    owned<double> want = rl_emu::alloc<double>(ny);
    std::vector<double> s((size_t)t.seq);
    for (int b = 0; b < t.batch; b++)
        for (int h = 0; h < t.heads; h++) {
            const int kvh = h / G;
            for (int q = 0; q < t.seq; q++) {
                const float *qr = x.get() + ((size_t)b * t.seq + q) * ld + h * t.dim;
                for (int j = 0; j < t.seq; j++) {
                    const float *kr = x.get() + ((size_t)b * t.seq + j) * ld + (t.heads + kvh) * t.dim;
                    double dot = 0;
                    for (int d = 0; d < t.dim; d++)
                        dot += (double)qr[d] * kr[d];
                    s[j] = dot * scale + mask_of(mask.get(), ref_mask, b, q, j, t.seq);
                }
                ref_softmax(s.data(), t.seq);
                double *w = want.get() + ((size_t)b * t.seq + q) * t.heads * t.dim + h * t.dim;
                for (int d = 0; d < t.dim; d++) {
                    double acc = 0;
                    for (int j = 0; j < t.seq; j++)
                        acc += s[j] * x[((size_t)b * t.seq + j) * ld + (t.heads + t.heads_kv + kvh) * t.dim + d];
                    w[d] = acc;
                }
            }
        }
    owned<float> y = rl_emu::alloc_output(ny);
    layer_flash_args f = {};
    f.y = y.get(), f.qkv = x.get(), f.mask = t.mask == LAYER_MASK_PADDING ? mask.get() : nullptr;
    f.seq = t.seq, f.heads = t.heads, f.heads_kv = t.heads_kv, f.mask_kind = t.mask, f.c = scale * LAYER_LOG2E;
    /* layer.cu's launch_flash */
    const rl_emu::launch_shape sh = {dim3((unsigned)((t.seq + LAYER_FA_BQ - 1) / LAYER_FA_BQ), (unsigned)t.heads,
                                          (unsigned)t.batch),
                                     dim3(LAYER_FA_THREADS), layer_flash_smem_bytes(t.dim), flash_arena};
    std::string why;
    const bool ran = t.dim == 64 ? rl_emu::launch(sh, [&] { layer_flash<64>(f); }, why)
                                 : rl_emu::launch(sh, [&] { layer_flash<128>(f); }, why);
    const std::string kernel = format("layer_flash<%d>", t.dim);
    const std::string shape =
        format("B %d seq %3d H %d/%d, %s%s%s%s", t.batch, t.seq, t.heads, t.heads_kv, mask_name(t.mask),
               all_masked(t.mask, t.batch),
               t.rising ? ", rising keys" : "", ref_mask != t.mask ? format(" (ref %s)", mask_name(ref_mask)).c_str() : "");
    const double atol = 2e-6 * t.seq + 1e-5; /* layer_atol's for the attention */
    if (!ran)
        rl_emu::fault(kernel.c_str(), shape, why);
    else if (ref_mask != t.mask)
        rl_emu::check_fails(kernel.c_str(), shape, y.get(), want.get(), ny, atol, LAYER_RTOL);
    else
        rl_emu::check_f32(kernel.c_str(), shape, y.get(), want.get(), ny, atol, LAYER_RTOL);
}

const attention_case ATTENTION[] = {
    /* MHA, dim 64: tiles left partial (100: 64 + 36 queries, 32 x 3 + 4 keys) */
    {2, 100, 2, 2, 64, LAYER_MASK_NONE, false},
    {2, 100, 2, 2, 64, LAYER_MASK_PADDING, false},
    {2, 100, 2, 2, 64, LAYER_MASK_CAUSAL, false},
    /* grouped-query, dim 128: 2 query heads a KV head; 130 tokens */
    {1, 130, 4, 2, 128, LAYER_MASK_NONE, false},
    {2, 130, 4, 2, 128, LAYER_MASK_PADDING, false},
    {1, 130, 4, 2, 128, LAYER_MASK_CAUSAL, false},
    /* 8 query heads a KV head; three sequences, one all padding (at 8
     * tokens the check sees the rounding of -10000 + a score in FP32,
     * which the kernel's mask shift avoids) */
    {3, 33, 8, 1, 64, LAYER_MASK_PADDING, false},
    {3, 8, 2, 1, 128, LAYER_MASK_PADDING, false},
    {1, 200, 8, 1, 64, LAYER_MASK_CAUSAL, false},
    /* one token; and late maxima, every tile raising the running maximum */
    {2, 1, 2, 1, 128, LAYER_MASK_NONE, false},
    {1, 200, 2, 2, 128, LAYER_MASK_NONE, true},
    {1, 200, 2, 1, 64, LAYER_MASK_CAUSAL, true},
};

} // namespace

void emu_layer(void)
{
    uint64_t seed = 900;
    /* element-wise: the vector path over several turns of one SM's grid,
     * the scalar path (odd rows), a skewed input (scalar, or the vector
     * path refused), a vector path with a tail (GELU and ADD by value) */
    for (int kind = LAYER_EW_BIAS; kind <= LAYER_EW_SILU_GATE; kind++) {
        elementwise(kind, 64, 768, 0, false, false, 1, seed += 3);
        elementwise(kind, 5, 13, 0, false, false, 132, seed += 3);
        elementwise(kind, 7, 12, 1, false, false, 132, seed += 3);
    }
    elementwise(LAYER_EW_GELU, 1, 1001, 0, false, false, 1, seed += 3);
    elementwise(LAYER_EW_ADD, 3, 335, 0, false, false, 1, seed += 3);
    elementwise(LAYER_EW_BIAS_ADD, 5, 16, 0, false, true, 132, seed += 3);
    for (layer_mask m : {LAYER_MASK_NONE, LAYER_MASK_PADDING, LAYER_MASK_CAUSAL}) {
        scale_mask(3, 3, 20, m, seed += 3);
        scale_mask(2, 2, 7, m, seed += 3);
    }
    /* the GEMM epilogues, in place over a product */
    for (int kind : {LAYER_EW_BIAS, LAYER_EW_BIAS_GELU, LAYER_EW_BIAS_ADD}) {
        elementwise(kind, 33, 256, 0, true, false, 132, seed += 3);
        elementwise(kind, 9, 30, 0, true, false, 132, seed += 3);
    }
    elementwise(LAYER_EW_BIAS_ADD, 33, 256, 0, true, true, 132, seed += 3);
    silu_epilogue(17, 344, seed += 3);
    silu_epilogue(3, 45, seed += 3);

    /* rows: a warp a row (5 rows: a short last block), blocks of 2 to 32
     * warps, the long rows' 512 threads; rows skewed off alignment */
    for (int kind = LAYER_ROW_SOFTMAX; kind < LAYER_ROW_KINDS; kind++) {
        if (kind == LAYER_ROW_SCALE_MASK_SOFTMAX)
            continue;
        for (int cols : {3, 128, 256, 300, 1023, 4096, 8192, 8195, 16384})
            rows_case(kind, cols > 4096 ? 2 : 5, cols, 0, false, seed += 3);
        rows_case(kind, 5, 768, 1, false, seed += 3);
    }
    rows_case(LAYER_ROW_BIAS_ADD_LAYERNORM, 5, 768, 0, true, seed += 3);
    for (layer_mask m : {LAYER_MASK_NONE, LAYER_MASK_PADDING, LAYER_MASK_CAUSAL}) {
        scale_mask_softmax(3, 3, 20, m, seed += 3);
        scale_mask_softmax(2, 2, 7, m, seed += 3);
        scale_mask_softmax(2, 1, 300, m, seed += 3);
    }

    rope(2, 37, 4, 2, 64, 10000.0f, seed += 3);
    rope(1, 9, 2, 2, 128, 500000.0f, seed += 3);
    rope(1, 4100, 1, 1, 128, 10000.0f, seed += 3);

    for (const attention_case &t : ATTENTION)
        attention(t, t.mask, seed += 3);
    /* a kernel given no mask where the reference masks padding: must fail */
    attention({2, 100, 2, 2, 64, LAYER_MASK_NONE, false}, LAYER_MASK_PADDING, seed += 3);
}
