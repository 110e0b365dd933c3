/*
 * cpu/quant_dot.c -- the integer-dot decode call: x quantized once, then
 * rows split over the OpenMP threads, each thread a contiguous range (one
 * stream through memory per thread, which the hardware prefetchers follow).
 */
#include "quant_dot.h"
#include "../gemv.h"

#include <omp.h>

const char *quant_isa_name(quant_isa isa)
{
    static const char *const NAMES[QUANT_ISA_COUNT] = {"c", "avx2", "avx-vnni", "avx512-vnni"};
    return isa < QUANT_ISA_COUNT ? NAMES[isa] : "?";
}

size_t quant_int8_scratch(int rows, int k, int n)
{
    (void)rows, (void)n;
    return quant_x8_bytes(k);
}

/* [lo, hi) of n items for thread t of nt: contiguous, sizes within one. */
static void share(int n, int t, int nt, int *lo, int *hi)
{
    *lo = (int)((long long)n * t / nt);
    *hi = (int)((long long)n * (t + 1) / nt);
}

void quant_decode_int8(const quant_args *a, quant_isa isa)
{
    if (a->format == QF_F16) { /* nothing to quantize: the FP16 bandwidth kernel */
        gemv_args g = {a->y, (const fp16 *)a->w, a->x, a->rows, a->k, 1, NULL, a->stream};
        gemv_fp16_cpu(&g);
        return;
    }
    quant_dot_rows dot = isa == QUANT_ISA_C ? NULL : quant_dot_simd(a->format);
    if (!dot) { /* asked for the portable kernels, or the build has no SIMD ones */
        dot = quant_dot_c(a->format);
        isa = QUANT_ISA_C;
    }
    quant_decode_int8_rows(a, dot, isa);
}

void quant_decode_int8_rows(const quant_args *a, quant_dot_rows dot, quant_isa isa)
{
    quant_x8 qx = quant_x8_in(a->scratch, a->k);
    size_t row_bytes = quant_row_bytes(a->format, a->k);
    int blocks = a->k / QUANT_BLOCK;
#pragma omp parallel
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads(), lo, hi;
        share(blocks, t, nt, &lo, &hi);
        quant_x8_fill(&qx, a->x, a->format, isa, lo, hi);
#pragma omp barrier
        share(a->rows, t, nt, &lo, &hi);
        if (hi > lo)
            dot(a->y + lo, (const char *)a->w + (size_t)lo * row_bytes, row_bytes, hi - lo, &qx, blocks);
    }
}

void quant_decode_int8_best(const quant_args *a) { quant_decode_int8(a, quant_isa_best()); }

/* ---- the batch: several tokens per read of the weights ---------------------------- */

/* The scratch: n quant_x8 headers, then each token's integers and scales
 * (F16 needs none). */
static size_t headers_bytes(int n) { return ((size_t)n * sizeof(quant_x8) + 63) & ~(size_t)63; }

size_t quant_batch_int8_scratch(int rows, int k, int n)
{
    (void)rows;
    return headers_bytes(n) + (size_t)n * quant_x8_bytes(k);
}

/* F16: the FP16 kernel, as at one token, over tiles of 8 tokens past 8. */
static void batch_f16(const quant_args *a)
{
    gemv_args g = {a->y, (const fp16 *)a->w, a->x, a->rows, a->k, a->n, a->scratch, a->stream};
    if (a->n <= GEMV_MAX_BATCH)
        gemv_fp16_cpu(&g);
    else
        gemv_fp16_batch_cpu(&g);
}

/* The portable row kernel, token by token: each token reads the weights
 * again (no SIMD kernels in this build). */
static void batch_rows_c(float *y, size_t y_stride, const void *w, size_t row_bytes, int nrows,
                         const quant_x8 *x, int ntok, int blocks, quant_dot_rows dot)
{
    for (int t = 0; t < ntok; t++)
        dot(y + (size_t)t * y_stride, w, row_bytes, nrows, &x[t], blocks);
}

void quant_batch_int8(const quant_args *a, quant_isa isa)
{
    if (a->format == QF_F16) {
        batch_f16(a);
        return;
    }
    quant_dot_batch_rows batch = isa == QUANT_ISA_C ? NULL : quant_batch_simd(a->format);
    quant_dot_rows dot = batch ? NULL : quant_dot_c(a->format);
    if (!batch)
        isa = QUANT_ISA_C;
    quant_x8 *qx = a->scratch;
    char *ints = (char *)a->scratch + headers_bytes(a->n);
    for (int t = 0; t < a->n; t++)
        qx[t] = quant_x8_in(ints + (size_t)t * quant_x8_bytes(a->k), a->k);
    size_t row_bytes = quant_row_bytes(a->format, a->k);
    int blocks = a->k / QUANT_BLOCK;
#pragma omp parallel
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads(), lo, hi;
        share(blocks, t, nt, &lo, &hi);
        for (int tok = 0; tok < a->n; tok++)
            quant_x8_fill(&qx[tok], a->x + (size_t)tok * a->k, a->format, isa, lo, hi);
#pragma omp barrier
        share(a->rows, t, nt, &lo, &hi);
        const char *w = (const char *)a->w + (size_t)lo * row_bytes;
        if (hi > lo && batch)
            batch(a->y + lo, (size_t)a->rows, w, row_bytes, hi - lo, qx, a->n, blocks);
        else if (hi > lo)
            batch_rows_c(a->y + lo, (size_t)a->rows, w, row_bytes, hi - lo, qx, a->n, blocks, dot);
    }
}

void quant_batch_int8_best(const quant_args *a) { quant_batch_int8(a, quant_isa_best()); }
