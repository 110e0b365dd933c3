/*
 * cpu/quant_x8.c -- x quantized to 8 bits once per decode call, in the
 * order each format's kernel reads it, and the error bound that rounding
 * implies.
 *
 * Every group of 32 values gets a float scale d = max|x| / 127 and
 * integers q = round(x / d) in [-127, 127] (never -128: the AVX2 sign trick
 * and maddubs' int16 pair sums rely on it). The same two functions
 * (quant_x8_scale, quant_x8_group) serve the portable kernels, the SIMD
 * layouts and the bound, so they all see the same integers.
 */
#include "quant_dot.h"
#include "simd.h"
#include "../gemv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the scratch ------------------------------------------------------------ */

static size_t align64(size_t n) { return (n + 63) & ~(size_t)63; }

size_t quant_x8_bytes(int k)
{
    size_t groups = (size_t)k / QX_GROUP;
    return 64 + align64((size_t)k) + align64(groups * sizeof(float)) +
           align64(2 * groups * sizeof(int16_t)) + align64(groups * sizeof(float)) +
           align64(groups * sizeof(float));
}

quant_x8 quant_x8_in(void *scratch, int k)
{
    size_t groups = (size_t)k / QX_GROUP;
    char *p = (char *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
    quant_x8 qx = {.k = k};
    qx.q = (int8_t *)p, p += align64((size_t)k);
    qx.d = (float *)p, p += align64(groups * sizeof(float));
    qx.s16 = (int16_t *)p, p += align64(2 * groups * sizeof(int16_t));
    qx.dv = (float *)p, p += align64(groups * sizeof(float));
    qx.off = (float *)p;
    return qx;
}

/* ---- one group ---------------------------------------------------------------- */

/* Lane-wise a > b ? a : b, and its mirror: C has no vector ?: (C++ does). */
static inline v8f v8f_max(v8f a, v8f b)
{
    v8i take = a > b;
    return (v8f)(((v8i)a & take) | ((v8i)b & ~take));
}

static inline v8f v8f_min(v8f a, v8f b) { return -v8f_max(-a, -b); }

float quant_x8_scale(const fp16 *x)
{
    v8f m = {0};
    for (int i = 0; i < QX_GROUP; i += 8) /* |x| by clearing the sign: exact */
        m = v8f_max((v8f)((v8u)fp16x8_to_v8f(x + i) & 0x7fffffffu), m);
    float amax = 0;
    for (int l = 0; l < 8; l++)
        amax = m[l] > amax ? m[l] : amax;
    return amax / 127.0f;
}

/* round(v) to the nearest integer, ties to even, for |v| < 2^22: adding
 * and removing 1.5 * 2^23 leaves no fraction bits (the same in C and on
 * every vector unit, unlike library calls). */
#define ROUND_MAGIC 12582912.0f

void quant_x8_group(int8_t q[QX_GROUP], const fp16 *x, float d)
{
    float id = d != 0 ? 1.0f / d : 0.0f;
    for (int i = 0; i < QX_GROUP; i += 8) {
        v8f r = fp16x8_to_v8f(x + i) * id;
        r = (r + ROUND_MAGIC) - ROUND_MAGIC;
        /* x * (1 / d) can pass 127 by an ulp before rounding: clamp */
        r = v8f_min(v8f_max(r, (v8f){0} - 127.0f), (v8f){0} + 127.0f);
        v8i n = __builtin_convertvector(r, v8i);
        for (int l = 0; l < 8; l++)
            q[i + l] = (int8_t)n[l];
    }
}

/* ---- the layouts ---------------------------------------------------------------- */

/* q4, q5: per pair of groups (64 values), the even values of each, then
 * the odd ones: a 32-byte load of nibbles splits into low nibbles (even
 * weights) and high nibbles (odd weights) of the same two groups. */
static void layout_nibbles(int8_t *dst, const int8_t *q)
{
    for (int h = 0; h < 2; h++)
        for (int j = 0; j < 16; j++) {
            dst[16 * h + j] = q[32 * h + 2 * j];
            dst[32 + 16 * h + j] = q[32 * h + 2 * j + 1];
        }
}

/* q6, per 128 values: the kernel loads ql as P = bytes [0, 16) and
 * [32, 48), R = [16, 32) and [48, 64) (two 16-byte halves each), so byte j
 * of P holds weights 2j, 2j + 1 (j < 16) or 64 + 2(j - 16), + 1 (j >= 16),
 * and R the same 32 further on. Four vectors: P's low and high nibbles,
 * R's low and high nibbles. */
static int q6_weight(int vec, int j)
{
    int base = (vec >= 2 ? 32 : 0) + (j < 16 ? 2 * j : 64 + 2 * (j - 16));
    return base + (vec & 1);
}

static void layout_q6(int8_t *dst, const int8_t *q)
{
    for (int vec = 0; vec < 4; vec++)
        for (int j = 0; j < 32; j++)
            dst[32 * vec + j] = q[q6_weight(vec, j)];
}

/* q2, per 128 values: byte c of the 2-bit planes holds weights 4c..4c+3,
 * so plane i (bits 2i, 2i + 1 of every byte) is weights 4c + i. */
static void layout_q2(int8_t *dst, const int8_t *q)
{
    for (int i = 0; i < 4; i++)
        for (int c = 0; c < 32; c++)
            dst[32 * i + c] = q[4 * c + i];
}

/* q2 and q6 on AVX-512: the 256-bit layout's vector k of both halves side
 * by side (64 bytes, what one 512-bit vector of the block's bits meets):
 * dst[64 k + 32 h + j] = per128[128 h + 32 k + j]. */
static void interleave_halves(int8_t *dst, const int8_t *per128)
{
    for (int k = 0; k < 4; k++)
        for (int h = 0; h < 2; h++)
            memcpy(dst + 64 * k + 32 * h, per128 + 128 * h + 32 * k, 32);
}

/* The lane order of the SIMD kernels' per-block sums (quant_dot_avx2.c:
 * hadd4 of their partial sums): x's scales and offsets are stored in it,
 * so each lane meets its own scale without a shuffle per row. */
static const int NIBBLE_ORDER[8] = {0, 2, 4, 6, 1, 3, 5, 7}; /* q4, q5 */
static const int PLANE_ORDER[8] = {0, 1, 4, 5, 2, 3, 6, 7};  /* q6, q2 */

static void fill_vectors(quant_x8 *qx, quant_format f, int b)
{
    const float *d = qx->d + 8 * b;
    const int16_t *s = qx->s16 + 16 * b;
    float *off = qx->off + 8 * b, *dv = qx->dv + 8 * b;
    for (int l = 0; l < 8; l++) {
        int g = f == QF_Q4 || f == QF_Q5 ? NIBBLE_ORDER[l] : f == QF_Q6 || f == QF_Q2 ? PLANE_ORDER[l] : l;
        int sum = s[2 * g] + s[2 * g + 1];
        dv[l] = d[g];
        /* q4, q5: the offset times x's group sum; q6: -32 d in natural order
         * (its offset meets x's sums through the scales, in the kernel) */
        off[l] = f == QF_Q4 ? -8.0f * (d[g] * (float)sum)
               : f == QF_Q5 ? -16.0f * (d[g] * (float)sum)
               : f == QF_Q6 ? -32.0f * d[l] : 0.0f;
    }
}

void quant_x8_fill(quant_x8 *qx, const fp16 *x, quant_format f, quant_isa isa, int b0, int b1)
{
    int8_t nat[QUANT_BLOCK], per128[QUANT_BLOCK];
    for (int b = b0; b < b1; b++) {
        const fp16 *xb = x + (size_t)QUANT_BLOCK * b;
        for (int g = 0; g < 8; g++) {
            float d = quant_x8_scale(xb + QX_GROUP * g);
            qx->d[8 * b + g] = d;
            quant_x8_group(nat + QX_GROUP * g, xb + QX_GROUP * g, d);
        }
        for (int h = 0; h < 16; h++) {
            int sum = 0;
            for (int i = 0; i < 16; i++)
                sum += nat[16 * h + i];
            qx->s16[16 * b + h] = (int16_t)sum; /* |sum| <= 16 * 127 */
        }
        int8_t *dst = qx->q + (size_t)QUANT_BLOCK * b;
        bool simd = isa != QUANT_ISA_C;
        bool zmm = false;
#if defined(QUANT_DOT_ZMM)
        zmm = simd && (f == QF_Q2 || f == QF_Q6);
#endif
        int8_t *out = zmm ? per128 : dst;
        for (int c = 0; c < QUANT_BLOCK; c += 128) {
            if (simd && (f == QF_Q4 || f == QF_Q5)) {
                layout_nibbles(out + c, nat + c);
                layout_nibbles(out + c + 64, nat + c + 64);
            } else if (simd && f == QF_Q6) {
                layout_q6(out + c, nat + c);
            } else if (simd && f == QF_Q2) {
                layout_q2(out + c, nat + c);
            } else {
                memcpy(out + c, nat + c, 128);
            }
        }
        if (zmm)
            interleave_halves(dst, per128);
        fill_vectors(qx, f, b);
    }
}

void quant_x8_dequantized(double *xhat, const fp16 *x, int k)
{
    int8_t q[QX_GROUP];
    for (int g = 0; g < k / QX_GROUP; g++) {
        float d = quant_x8_scale(x + QX_GROUP * g);
        quant_x8_group(q, x + QX_GROUP * g, d);
        for (int i = 0; i < QX_GROUP; i++)
            xhat[QX_GROUP * g + i] = (double)d * q[i];
    }
}

/* ---- the bound ----------------------------------------------------------------- */

/* |x - d q| <= d / 2 holds up to the roundings of 1 / d and of x (1 / d):
 * x / d is off by at most |x / d| 2^-23 <= 127 * 2^-23 before rounding to
 * q, so |x - d q| <= d (1/2 + 1.6e-5): a relative 2^-13 covers it. */
#define SLACK (1.0 + 0x1p-13)

/* xa[i] = |x_i| + d/2 (1 + slack), the most |x_i| and its int8 image can
 * differ from 0, and half[g] = d/2 (1 + slack): both per column, so
 * computed once per matrix, not once per row. */
static double row_bound(quant_format f, const char *row, const double *xa, const double *half, int k,
                        float *w, float *sc, float *mn, int16_t *q)
{
    double quant = 0, parts = 0;
    for (int b = 0; b < k / QUANT_BLOCK; b++) {
        const char *blk = row + (size_t)b * quant_formats[f].block_bytes;
        const double *xb = xa + QUANT_BLOCK * b;
        quant_decode_row(f, blk, w, QUANT_BLOCK);
        quant_block_split(f, blk, q, sc, mn);
        for (int g = 0; g < 8; g++) {
            double wsum = 0;
            for (int i = QX_GROUP * g; i < QX_GROUP * (g + 1); i++) {
                wsum += fabs((double)w[i]);
                parts += (fabs((double)sc[i] * q[i]) + fabs((double)mn[i])) * xb[i];
            }
            quant += half[8 * b + g] * wsum;
        }
    }
    return quant + ((double)k / 16 + 32) * 0x1p-24 * parts;
}

void quant_int8_error_bound(double *bound, quant_format f, const void *w, const fp16 *x,
                            int rows, int k)
{
    if (f == QF_F16) {
        for (int r = 0; r < rows; r++)
            bound[r] = gemv_atol(k);
        return;
    }
    double *xa = malloc(sizeof(double) * (size_t)k), *half = malloc(sizeof(double) * (size_t)k / QX_GROUP);
    if (!xa || !half)
        abort();
    for (int g = 0; g < k / QX_GROUP; g++)
        half[g] = (double)quant_x8_scale(x + QX_GROUP * g) / 2 * SLACK;
    for (int i = 0; i < k; i++)
        xa[i] = fabs((double)fp16_to_float(x[i])) + half[i / QX_GROUP];
    size_t row_bytes = quant_row_bytes(f, k);
#pragma omp parallel
    {
        float wv[QUANT_BLOCK], sc[QUANT_BLOCK], mn[QUANT_BLOCK];
        int16_t q[QUANT_BLOCK];
#pragma omp for schedule(static)
        for (int r = 0; r < rows; r++)
            bound[r] = row_bound(f, (const char *)w + (size_t)r * row_bytes, xa, half, k, wv, sc, mn, q);
    }
    free(xa);
    free(half);
}
