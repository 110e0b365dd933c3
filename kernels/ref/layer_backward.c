/*
 * ref/layer_backward.c -- the double-precision reference of the backward
 * pass (layer.h's LAYER_OP_GEMM_DX .. LAYER_OP_CONCAT): each op the
 * textbook gradient of its forward step, the chain rule written out as
 * PyTorch's autograd computes it, the products by double-precision BLAS
 * as in ref/layer.c. tests/test_layer_backward.c checks each one against
 * central finite differences of the forward reference, so that the
 * kernels are checked against a reference that is itself checked.
 */
#include "layer_backward.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

/* ---- a linear layer ------------------------------------------------------------- */

/* dX (rows x k) = dY (rows x cols) W (cols x k) */
static void gemm_dx(const layer_args *s, const layer_ref *io)
{
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s->rows, s->k, s->cols, 1.0, io->x, s->cols, io->w,
                s->k, 0.0, io->y, s->k);
}

/* dW (cols x k) = dY^T X, the sum over the tokens */
static void gemm_dw(const layer_args *s, const layer_ref *io)
{
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, s->cols, s->k, s->rows, 1.0, io->x, s->cols, io->r,
                s->k, 0.0, io->y, s->k);
}

/* y[c] = the sum of column c of x over the rows (y: cols) */
static void column_sums(const layer_args *s, const double *x, double *y)
{
    const size_t cols = (size_t)s->cols;
    memset(y, 0, cols * sizeof(double));
    for (size_t i = 0; i < (size_t)s->rows; i++)
        for (size_t c = 0; c < cols; c++)
            y[c] += x[i * cols + c];
}

/* ---- element-wise and norms --------------------------------------------------- */

/* d/dx of 0.5 x (1 + tanh u), u = C (x + A x^3) */
static double gelu_grad(double x)
{
    double t = tanh(LAYER_GELU_C * (x + LAYER_GELU_A * x * x * x));
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * LAYER_GELU_C * (1 + 3 * LAYER_GELU_A * x * x);
}

/* The mean and 1 / sqrt(var + eps) of a row, the variance biased, as the
 * forward (ref/layer.c's layernorm_row). */
static void row_stats(const double *r, size_t n, double eps, double *mean, double *rstd)
{
    double m = 0, var = 0;
    for (size_t c = 0; c < n; c++)
        m += r[c];
    m /= (double)n;
    for (size_t c = 0; c < n; c++)
        var += (r[c] - m) * (r[c] - m);
    *mean = m, *rstd = 1 / sqrt(var / (double)n + eps);
}

/* y = (g - mean(g) - h mean(g h)) rstd, g = dy gamma, h = (r - mean) rstd */
static void layernorm_backward_row(const layer_args *s, const layer_ref *io, size_t i)
{
    const size_t n = (size_t)s->cols;
    const double *dy = io->x + i * n, *r = io->r + i * n;
    double mean, rstd, mg = 0, mgh = 0;
    row_stats(r, n, s->eps, &mean, &rstd);
    for (size_t c = 0; c < n; c++) {
        double g = dy[c] * io->gamma[c];
        mg += g, mgh += g * (r[c] - mean) * rstd;
    }
    mg /= (double)n, mgh /= (double)n;
    for (size_t c = 0; c < n; c++)
        io->y[i * n + c] = (dy[c] * io->gamma[c] - mg - (r[c] - mean) * rstd * mgh) * rstd;
}

/* y = gamma's gradient, the sums of dy h, then beta's, the sums of dy */
static void layernorm_param_grad(const layer_args *s, const layer_ref *io)
{
    const size_t n = (size_t)s->cols;
    memset(io->y, 0, 2 * n * sizeof(double));
    for (size_t i = 0; i < (size_t)s->rows; i++) {
        const double *dy = io->x + i * n, *r = io->r + i * n;
        double mean, rstd;
        row_stats(r, n, s->eps, &mean, &rstd);
        for (size_t c = 0; c < n; c++)
            io->y[c] += dy[c] * (r[c] - mean) * rstd, io->y[n + c] += dy[c];
    }
}

/* y = p (dp - the sum over the row of dp p) */
static void softmax_backward_row(const layer_args *s, const layer_ref *io, size_t i)
{
    const size_t n = (size_t)s->cols;
    const double *dp = io->x + i * n, *p = io->r + i * n;
    double dot = 0;
    for (size_t c = 0; c < n; c++)
        dot += dp[c] * p[c];
    for (size_t c = 0; c < n; c++)
        io->y[i * n + c] = p[c] * (dp[c] - dot);
}

static void row_step(layer_op op, const layer_args *s, const layer_ref *io, size_t i)
{
    const size_t n = (size_t)s->cols, at = i * n;
    switch (op) {
    case LAYER_OP_GELU_BACKWARD:
        for (size_t c = 0; c < n; c++)
            io->y[at + c] = io->x[at + c] * gelu_grad(io->r[at + c]);
        break;
    case LAYER_OP_LAYERNORM_BACKWARD: layernorm_backward_row(s, io, i); break;
    case LAYER_OP_SOFTMAX_BACKWARD: softmax_backward_row(s, io, i); break;
    case LAYER_OP_CONCAT: {
        const size_t k = (size_t)s->k;
        memcpy(io->y + at, io->x + i * k, k * sizeof(double));
        memcpy(io->y + at + k, io->r + i * (n - k), (n - k) * sizeof(double));
        break;
    }
    default: break;
    }
}

/* ---- the attention ----------------------------------------------------------------- */

/* Where head block h of sequence b starts in an array of rows `blocks`
 * head_dim blocks wide: the QKV output (heads + 2 heads_kv blocks: the
 * query heads, the key heads, the value heads), the context and its
 * gradient (heads), dV (heads_kv), dQ dK (heads + heads_kv). */
static size_t block_at(const layer_args *s, int blocks, int b, int h)
{
    return ((size_t)b * s->seq * blocks + (size_t)h) * s->head_dim;
}

static int qkv_blocks(const layer_args *s) { return s->heads + 2 * s->heads_kv; }

/* The KV head query head h reads. */
static int kv_of(const layer_args *s, int h) { return h / (s->heads / s->heads_kv); }

/* Query head h of sequence b: its scores' (or probabilities') block */
static size_t scores_at(const layer_args *s, int b, int h)
{
    return ((size_t)b * s->heads + h) * s->seq * s->seq;
}

/* dP = dO V^T per sequence and query head */
static void context_dp(const layer_args *s, const layer_ref *io)
{
    const int n = s->seq, d = s->head_dim, ldq = qkv_blocks(s) * d;
    for (int b = 0; b < s->batch; b++)
        for (int h = 0; h < s->heads; h++)
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, d, 1.0,
                        io->x + block_at(s, s->heads, b, h), s->heads * d,
                        io->r + block_at(s, qkv_blocks(s), b, s->heads + s->heads_kv + kv_of(s, h)), ldq, 0.0,
                        io->y + scores_at(s, b, h), n);
}

/* dV = the sum over the query heads that read each KV head of P^T dO
 * (beta 0 for a group's first head, 1 after) */
static void context_dv(const layer_args *s, const layer_ref *io)
{
    const int n = s->seq, d = s->head_dim, group = s->heads / s->heads_kv;
    for (int b = 0; b < s->batch; b++)
        for (int h = 0; h < s->heads; h++)
            cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n, d, n, 1.0, io->x + scores_at(s, b, h), n,
                        io->r + block_at(s, s->heads, b, h), s->heads * d, h % group ? 1.0 : 0.0,
                        io->y + block_at(s, s->heads_kv, b, kv_of(s, h)), s->heads_kv * d);
}

/* dQ = dS K per query head; dK = the sum over its query heads of dS^T Q */
static void scores_backward(const layer_args *s, const layer_ref *io)
{
    const int n = s->seq, d = s->head_dim, group = s->heads / s->heads_kv, ldq = qkv_blocks(s) * d,
              out = s->heads + s->heads_kv;
    for (int b = 0; b < s->batch; b++)
        for (int h = 0; h < s->heads; h++) {
            const double *ds = io->x + scores_at(s, b, h);
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, d, n, 1.0, ds, n,
                        io->r + block_at(s, qkv_blocks(s), b, s->heads + kv_of(s, h)), ldq, 0.0,
                        io->y + block_at(s, out, b, h), out * d);
            cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n, d, n, 1.0, ds, n,
                        io->r + block_at(s, qkv_blocks(s), b, h), ldq, h % group ? 1.0 : 0.0,
                        io->y + block_at(s, out, b, s->heads + kv_of(s, h)), out * d);
        }
}

void layer_backward_reference(layer_op op, const layer_args *shape, const layer_ref *io)
{
    const layer_args *s = shape;
    switch (op) {
    case LAYER_OP_GEMM_DX: gemm_dx(s, io); break;
    case LAYER_OP_GEMM_DW: gemm_dw(s, io); break;
    case LAYER_OP_BIAS_GRAD: column_sums(s, io->x, io->y); break;
    case LAYER_OP_LAYERNORM_PARAM_GRAD: layernorm_param_grad(s, io); break;
    case LAYER_OP_CONTEXT_DP: context_dp(s, io); break;
    case LAYER_OP_CONTEXT_DV: context_dv(s, io); break;
    case LAYER_OP_SCORES_BACKWARD: scores_backward(s, io); break;
    default:
#pragma omp parallel for schedule(static)
        for (int i = 0; i < s->rows; i++)
            row_step(op, s, io, (size_t)i);
        break;
    }
}
