/*
 * cpu/quant_format.c -- the formats of quant.h: their table and the
 * encoders (host C). Decoding a row and the double-precision reference are
 * in ref/quant.c.
 *
 * The encoders are deliberately plain: each scale is the largest magnitude
 * of its group over the largest integer, rounded to FP16, and each weight
 * is rounded to the nearest level. ggml searches for better scales; the
 * bytes moved, which is what experiment 03 is about, are the same.
 */
#include "../quant.h"
#include "simd.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const quant_format_info quant_formats[QF_COUNT] = {
    {QF_F16, "f16", "f16", 512, "256 halves"},
    {QF_Q8, "q8", "q8_0", 272, "8 x (FP16 scale, 32 int8)"},
    {QF_Q6, "q6", "q6_K", 210, "FP16 scale, 16 x (int8 scale, 16 six-bit q)"},
    {QF_Q5, "q5", "q5_0, q5_K", 176, "8 x (FP16 scale, 32 five-bit q)"},
    {QF_Q4, "q4", "q4_0, q4_K", 144, "8 x (FP16 scale, 32 four-bit q)"},
    {QF_Q2, "q2", "q2_K", 84, "FP16 scale and min, 16 x (4-bit scale, 4-bit min, 16 two-bit q)"},
};

double quant_bits_per_weight(quant_format f)
{
    return 8.0 * quant_formats[f].block_bytes / QUANT_BLOCK;
}

double quant_bytes_all_formats(double weights)
{
    int block_bytes = 0;
    for (int f = 0; f < QF_COUNT; f++)
        block_bytes += quant_formats[f].block_bytes;
    return weights * block_bytes / QUANT_BLOCK;
}

size_t quant_row_bytes(quant_format f, int k)
{
    return (size_t)(k / QUANT_BLOCK) * (size_t)quant_formats[f].block_bytes;
}

quant_format quant_format_by_name(const char *name)
{
    for (int f = 0; f < QF_COUNT; f++) {
        const char *a = quant_formats[f].name, *b = name;
        while (*a && tolower((unsigned char)*b) == *a)
            a++, b++;
        if (!*a && !*b)
            return (quant_format)f;
    }
    return QF_COUNT;
}

/* ---- encoders ------------------------------------------------------------------ */

/* The value of largest magnitude, with its sign: the symmetric formats map
 * it to their most negative level, which has no positive twin. */
static float signed_absmax(const float *x, int n)
{
    float m = 0;
    for (int i = 0; i < n; i++)
        if (fabsf(x[i]) > fabsf(m))
            m = x[i];
    return m;
}

/* 1 / step, or 0 when the step is 0 (every weight then gets the offset). */
static float inverse(float step) { return step != 0 ? 1.0f / step : 0.0f; }

/* round(x / step) + offset, clamped to [0, top]. A multiply and rintf
 * (one instruction where the CPU has SSE4.1), not a division and lrintf
 * (a library call): the encoders run over every weight of the model. */
static inline uint32_t level(float x, float inv_step, int offset, int top)
{
    int q = (int)rintf(x * inv_step) + offset;
    return (uint32_t)(q < 0 ? 0 : q > top ? top : q);
}

static void encode_f16(qf16_block *b, const float *x)
{
    for (int i = 0; i < QUANT_BLOCK; i++)
        b->w[i] = float_to_fp16(x[i]);
}

static void encode_q8(q8_block *b, const float *x)
{
    uint8_t *q = (uint8_t *)b->qs; /* byte w is weight w */
    for (int g = 0; g < 8; g++) {
        float amax = fabsf(signed_absmax(x + 32 * g, 32));
        b->d[g] = float_to_fp16(amax / 127);
        float inv = inverse(fp16_to_float(b->d[g]));
        for (int i = 0; i < 32; i++)
            q[32 * g + i] = (uint8_t)((int)level(x[32 * g + i], inv, 127, 254) - 127);
    }
}

static void encode_q6(q6_block *b, const float *x)
{
    float s[16], smax = 0;
    for (int j = 0; j < 16; j++) {
        s[j] = signed_absmax(x + 16 * j, 16) / -32;
        smax = fmaxf(smax, fabsf(s[j]));
    }
    b->d = float_to_fp16(smax / 127);
    float d = fp16_to_float(b->d);
    for (int j = 0; j < 16; j++) {
        /* Rounded up in magnitude, so that no weight falls off the end of
         * the levels: every weight ends within one step. */
        long sj = d > 0 ? (long)ceilf(fabsf(s[j]) / d) : 0;
        sj = sj > 127 ? 127 : sj;
        b->s[j] = (int8_t)(s[j] < 0 ? -sj : sj);
    }
    /* Lane by lane (8 weights, one scale): the bits gathered in registers
     * and stored once. */
    for (int lane = 0; lane < 32; lane++) {
        float inv = inverse(d * b->s[lane / 2]);
        uint32_t lo = 0, hi = 0;
        for (int n = 0; n < 8; n++) {
            uint32_t q = level(x[8 * lane + n], inv, 32, 63);
            lo |= (q & 15u) << (4 * n);
            hi |= (q >> 4) << (2 * n);
        }
        b->ql[2 * lane] = (uint16_t)lo;
        b->ql[2 * lane + 1] = (uint16_t)(lo >> 16);
        b->qh[lane] = (uint16_t)hi;
    }
}

/* Q5 and Q4: one FP16 scale per group of 32, levels 0..2^bits - 1. */
static void encode_small(fp16 d16[8], uint32_t qs[32], uint8_t *qh, const float *x, int bits)
{
    int half = 1 << (bits - 1);
    float inv[8];
    for (int g = 0; g < 8; g++) {
        d16[g] = float_to_fp16(signed_absmax(x + 32 * g, 32) / -half);
        inv[g] = inverse(fp16_to_float(d16[g]));
    }
    for (int lane = 0; lane < 32; lane++) { /* 8 weights, packed in registers */
        uint32_t lo = 0, hi = 0;
        for (int n = 0; n < 8; n++) {
            uint32_t q = level(x[8 * lane + n], inv[lane / 4], half, 2 * half - 1);
            lo |= (q & 15u) << (4 * n);
            hi |= (q >> 4) << n;
        }
        qs[lane] = lo;
        if (qh)
            qh[lane] = (uint8_t)hi;
    }
}

static void encode_q2(q2_block *b, const float *x)
{
    float scale[16], min[16], smax = 0, mmax = 0;
    for (int j = 0; j < 16; j++) {
        float lo = 0, hi = x[16 * j];
        for (int i = 0; i < 16; i++) { /* comparisons, not fminf: no library call */
            float v = x[16 * j + i];
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        scale[j] = (hi - lo) / 3; /* four levels span [lo, hi] */
        min[j] = -lo;             /* >= 0: w = d s q - dmin m */
        smax = fmaxf(smax, scale[j]);
        mmax = fmaxf(mmax, min[j]);
    }
    b->d = float_to_fp16(smax / 15);
    b->dmin = float_to_fp16(mmax / 15);
    float d = fp16_to_float(b->d), dmin = fp16_to_float(b->dmin);
    for (int j = 0; j < 16; j++) {
        uint32_t s = level(scale[j], inverse(d), 0, 15), m = level(min[j], inverse(dmin), 0, 15);
        b->sm[j] = (uint8_t)(s | m << 4);
        float inv = inverse(d * (float)s), offset = dmin * (float)m;
        for (int half = 0; half < 2; half++) { /* a lane: 8 weights in 16 bits */
            const float *w = x + 16 * j + 8 * half;
            uint32_t bits = 0;
            for (int n = 0; n < 8; n++)
                bits |= level(w[n] + offset, inv, 0, 3) << (2 * n);
            b->qs[2 * j + half] = (uint16_t)bits;
        }
    }
}

void quant_encode_row(quant_format f, void *dst, const float *src, int k)
{
    char *out = dst;
    for (int b = 0; b < k / QUANT_BLOCK; b++, src += QUANT_BLOCK, out += quant_formats[f].block_bytes)
        switch (f) {
        case QF_F16: encode_f16((qf16_block *)out, src); break;
        case QF_Q8: encode_q8((q8_block *)out, src); break;
        case QF_Q6: encode_q6((q6_block *)out, src); break;
        case QF_Q5: {
            q5_block *q = (q5_block *)out;
            encode_small(q->d, q->qs, q->qh, src, 5);
            break;
        }
        case QF_Q4: {
            q4_block *q = (q4_block *)out;
            encode_small(q->d, q->qs, NULL, src, 4);
            break;
        }
        default: encode_q2((q2_block *)out, src); break;
        }
}

void quant_encode_matrix(quant_format f, void *dst, const fp16 *src, int rows, int k)
{
    size_t row_bytes = quant_row_bytes(f, k);
#pragma omp parallel
    {
        float *row = malloc(sizeof(float) * (size_t)k);
        if (!row)
            abort();
#pragma omp for schedule(static)
        for (int r = 0; r < rows; r++) {
            fp16_row_to_float(row, src + (size_t)r * k, (size_t)k);
            quant_encode_row(f, (char *)dst + (size_t)r * row_bytes, row, k);
        }
        free(row);
    }
}
