/*
 * ref/layer.c -- the double-precision reference every layer variant, on
 * either backend, is checked against, and that experiment 09 chains
 * through a whole layer: each step's textbook formula in double, the
 * products by double-precision BLAS (53-bit products and sums, far beyond
 * the FP32 ones being checked), the rest plain loops with the C library.
 * The backward pass's steps are ref/layer_backward.c's.
 */
#include "../layer.h"
#include "layer_backward.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double *doubles(size_t n)
{
    double *d = malloc((n ? n : 1) * sizeof(double));
    if (!d) {
        fprintf(stderr, "layer_reference: out of memory for %zu doubles\n", n);
        abort();
    }
    return d;
}

static double gelu(double x)
{
    return 0.5 * x * (1 + tanh(LAYER_GELU_C * (x + LAYER_GELU_A * x * x * x)));
}

static double silu(double x) { return x / (1 + exp(-x)); }

/* ---- the products ---------------------------------------------------------------- */

static void gemm_epilogue(const layer_args *s, const layer_ref *io, const double *prod)
{
    const size_t rows = (size_t)s->rows, cols = (size_t)s->cols;
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < rows; i++)
        for (size_t c = 0; c < cols; c++) {
            double v = prod[i * (s->epilogue == LAYER_EPI_SILU_GATE ? 2 * cols : cols) + c];
            double b = io->bias ? io->bias[c] : 0;
            switch (s->epilogue) {
            case LAYER_EPI_BIAS: v += b; break;
            case LAYER_EPI_BIAS_GELU: v = gelu(v + b); break;
            case LAYER_EPI_BIAS_ADD: v += b + io->r[i * cols + c]; break;
            case LAYER_EPI_SILU_GATE: v = silu(v) * prod[i * 2 * cols + cols + c]; break;
            default: break;
            }
            io->y[i * cols + c] = v;
        }
}

/* y = x w^T (SwiGLU: gate | up side by side, rows x 2 cols), then the
 * epilogue. */
static void gemm(const layer_args *s, const layer_ref *io)
{
    int n = s->epilogue == LAYER_EPI_SILU_GATE ? 2 * s->cols : s->cols;
    if (s->epilogue == LAYER_EPI_NONE) {
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, s->rows, n, s->k, 1.0, io->x, s->k, io->w,
                    s->k, 0.0, io->y, n);
        return;
    }
    double *prod = doubles((size_t)s->rows * n);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, s->rows, n, s->k, 1.0, io->x, s->k, io->w, s->k,
                0.0, prod, n);
    gemm_epilogue(s, io, prod);
    free(prod);
}

static size_t qkv_ld(const layer_args *s) { return (size_t)(s->heads + 2 * s->heads_kv) * s->head_dim; }

/* Sequence b's query head h, and the key and value heads it reads, in
 * the QKV output qkv. */
static const double *query_of(const layer_args *s, const double *qkv, int b, int h)
{
    return qkv + (size_t)b * s->seq * qkv_ld(s) + (size_t)h * s->head_dim;
}

static const double *key_of(const layer_args *s, const double *qkv, int b, int h)
{
    int kvh = h / (s->heads / s->heads_kv);
    return qkv + (size_t)b * s->seq * qkv_ld(s) + (size_t)(s->heads + kvh) * s->head_dim;
}

static const double *value_of(const layer_args *s, const double *qkv, int b, int h)
{
    return key_of(s, qkv, b, h) + (size_t)s->heads_kv * s->head_dim;
}

static void scores_of(const layer_args *s, const double *qkv, int b, int h, double *y)
{
    int n = s->seq, ld = (int)qkv_ld(s);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, s->head_dim, 1.0, query_of(s, qkv, b, h), ld,
                key_of(s, qkv, b, h), ld, 0.0, y, n);
}

static void context_of(const layer_args *s, const double *p, const double *qkv, int b, int h, double *y)
{
    int n = s->seq, d = s->head_dim;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, d, n, 1.0, p, n, value_of(s, qkv, b, h),
                (int)qkv_ld(s), 0.0, y + (size_t)b * n * s->heads * d + (size_t)h * d, s->heads * d);
}

/* ---- scores ----------------------------------------------------------------------- */

/* The additive mask of query i, key j, sequence b. */
static double mask_at(const layer_args *s, const layer_ref *io, int b, int i, int j)
{
    switch (s->mask_kind) {
    case LAYER_MASK_PADDING: return io->mask[(size_t)b * s->seq + j];
    case LAYER_MASK_CAUSAL: return j > i ? LAYER_MASKED : 0;
    default: return 0;
    }
}

/* One row of n values, in place: y = softmax(y) */
static void softmax_row(double *y, size_t n)
{
    double m = -INFINITY, sum = 0;
    for (size_t j = 0; j < n; j++)
        m = y[j] > m ? y[j] : m;
    for (size_t j = 0; j < n; j++)
        sum += y[j] = exp(y[j] - m);
    for (size_t j = 0; j < n; j++)
        y[j] /= sum;
}

/* y = x scale + mask over the scores (batch x heads x seq x seq), and
 * the softmax of each row when asked. */
static void scale_mask(const layer_args *s, const layer_ref *io, const double *x, double *y, bool softmax)
{
    const size_t n = (size_t)s->seq, rows = (size_t)s->batch * s->heads * n;
#pragma omp parallel for schedule(static)
    for (size_t r = 0; r < rows; r++) {
        int b = (int)(r / ((size_t)s->heads * n)), i = (int)(r % n);
        for (size_t j = 0; j < n; j++)
            y[r * n + j] = x[r * n + j] * (double)s->scale + mask_at(s, io, b, i, (int)j);
        if (softmax)
            softmax_row(y + r * n, n);
    }
}

/* scores -> scale and mask -> softmax -> context, one (sequence, head)
 * at a time. */
static void attention(const layer_args *s, const layer_ref *io)
{
    const size_t nn = (size_t)s->seq * s->seq;
    double *p = doubles(nn);
    layer_args one = *s;
    one.batch = 1, one.heads = 1;
    for (int b = 0; b < s->batch; b++)
        for (int h = 0; h < s->heads; h++) {
            scores_of(s, io->x, b, h, p);
            layer_ref m = *io;
            m.mask = io->mask ? io->mask + (size_t)b * s->seq : NULL;
            scale_mask(&one, &m, p, p, true);
            context_of(s, p, io->x, b, h, io->y);
        }
    free(p);
}

/* ---- element-wise and norms ----------------------------------------------------- */

static void layernorm_row(double *y, const double *h, size_t n, const layer_args *s, const layer_ref *io)
{
    double mean = 0, var = 0;
    for (size_t c = 0; c < n; c++)
        mean += h[c];
    mean /= (double)n;
    for (size_t c = 0; c < n; c++)
        var += (h[c] - mean) * (h[c] - mean);
    double rstd = 1 / sqrt(var / (double)n + (double)s->eps);
    for (size_t c = 0; c < n; c++)
        y[c] = (h[c] - mean) * rstd * io->gamma[c] + io->beta[c];
}

static void rmsnorm_row(double *y, const double *h, size_t n, const layer_args *s, const layer_ref *io)
{
    double sq = 0;
    for (size_t c = 0; c < n; c++)
        sq += h[c] * h[c];
    double rs = 1 / sqrt(sq / (double)n + (double)s->eps);
    for (size_t c = 0; c < n; c++)
        y[c] = h[c] * rs * io->gamma[c];
}

/* One row of an element-wise or normalization step; h: a row of scratch. */
static void row_step(layer_op op, const layer_args *s, const layer_ref *io, size_t i, double *h)
{
    const size_t n = (size_t)s->cols, at = i * n;
    const double *x = io->x + at;
    double *y = io->y + at;
    for (size_t c = 0; c < n; c++)
        switch (op) {
        case LAYER_OP_BIAS: y[c] = x[c] + io->bias[c]; break;
        case LAYER_OP_GELU: y[c] = gelu(x[c]); break;
        case LAYER_OP_BIAS_GELU: y[c] = gelu(x[c] + io->bias[c]); break;
        case LAYER_OP_ADD: y[c] = x[c] + io->r[at + c]; break;
        case LAYER_OP_SILU_GATE: y[c] = silu(io->x[2 * at + c]) * io->x[2 * at + n + c]; break;
        case LAYER_OP_BIAS_ADD_LAYERNORM: h[c] = x[c] + (io->bias ? io->bias[c] : 0) + io->r[at + c]; break;
        case LAYER_OP_ADD_RMSNORM: h[c] = io->y2[at + c] = x[c] + io->r[at + c]; break;
        default: break;
        }
    switch (op) {
    case LAYER_OP_SOFTMAX: memcpy(y, x, n * sizeof(double)), softmax_row(y, n); break;
    case LAYER_OP_LAYERNORM: layernorm_row(y, x, n, s, io); break;
    case LAYER_OP_BIAS_ADD_LAYERNORM: layernorm_row(y, h, n, s, io); break;
    case LAYER_OP_RMSNORM: rmsnorm_row(y, x, n, s, io); break;
    case LAYER_OP_ADD_RMSNORM: rmsnorm_row(y, h, n, s, io); break;
    default: break;
    }
}

static void rows_step(layer_op op, const layer_args *s, const layer_ref *io)
{
#pragma omp parallel
    {
        double *h = doubles((size_t)s->cols);
#pragma omp for schedule(static)
        for (int i = 0; i < s->rows; i++)
            row_step(op, s, io, (size_t)i, h);
        free(h);
    }
}

/* Query and key heads rotated by position (pairs c, c + d/2, Hugging
 * Face's rotate_half), value heads copied. */
static void rope(const layer_args *s, const layer_ref *io)
{
    const int d = s->head_dim, half = d / 2, rotated = s->heads + s->heads_kv;
    const size_t ld = qkv_ld(s);
#pragma omp parallel for schedule(static)
    for (int t = 0; t < s->rows; t++) {
        const double *x = io->x + (size_t)t * ld;
        double *y = io->y + (size_t)t * ld;
        double pos = t % s->seq;
        memcpy(y, x, ld * sizeof(double));
        for (int h = 0; h < rotated; h++)
            for (int c = 0; c < half; c++) {
                double angle = pos * pow((double)s->rope_theta, -2.0 * c / d);
                double lo = x[h * d + c], hi = x[h * d + c + half];
                y[h * d + c] = lo * cos(angle) - hi * sin(angle);
                y[h * d + c + half] = hi * cos(angle) + lo * sin(angle);
            }
    }
}

void layer_reference(const layer_variant *v, const layer_args *shape, const layer_ref *io)
{
    const layer_args *s = shape;
    switch (v->op) {
    case LAYER_OP_GEMM: gemm(s, io); break;
    case LAYER_OP_SCORES:
        for (int b = 0; b < s->batch; b++)
            for (int h = 0; h < s->heads; h++)
                scores_of(s, io->x, b, h, io->y + ((size_t)b * s->heads + h) * s->seq * s->seq);
        break;
    case LAYER_OP_CONTEXT:
        for (int b = 0; b < s->batch; b++)
            for (int h = 0; h < s->heads; h++)
                context_of(s, io->x + ((size_t)b * s->heads + h) * s->seq * s->seq, io->r, b, h, io->y);
        break;
    case LAYER_OP_SCALE_MASK: scale_mask(s, io, io->x, io->y, false); break;
    case LAYER_OP_SCALE_MASK_SOFTMAX: scale_mask(s, io, io->x, io->y, true); break;
    case LAYER_OP_ATTENTION: attention(s, io); break;
    case LAYER_OP_ROPE: rope(s, io); break;
    case LAYER_OP_GEMM_DX:
    case LAYER_OP_GEMM_DW:
    case LAYER_OP_BIAS_GRAD:
    case LAYER_OP_GELU_BACKWARD:
    case LAYER_OP_LAYERNORM_BACKWARD:
    case LAYER_OP_LAYERNORM_PARAM_GRAD:
    case LAYER_OP_SOFTMAX_BACKWARD:
    case LAYER_OP_CONTEXT_DP:
    case LAYER_OP_CONTEXT_DV:
    case LAYER_OP_SCORES_BACKWARD:
    case LAYER_OP_CONCAT: layer_backward_reference(v->op, s, io); break;
    default: rows_step(v->op, s, io); break;
    }
}
