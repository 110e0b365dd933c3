/*
 * cpu/quant.c -- the C + OpenMP counterparts of quant.cu (the table is
 * quant.c, the reference ref/quant.c; the integer-dot decode is
 * cpu/quant_dot.c).
 *
 * Decode: each thread walks four rows at a time, decoding eight weights per
 * step in vector registers (the arithmetic of quant.h's decode functions,
 * written on whole vectors), multiplying them with x (converted to FP32
 * once per call), summing in FP32. On a CPU the decode is real work: about
 * one instruction per weight, where an FP16 GEMV needs a fraction of one,
 * so the smaller formats can run out of instructions before they run out
 * of bandwidth. Experiment 03 measures which.
 *
 * Prefill: dequantize the whole matrix to FP32, then OpenBLAS SGEMM.
 */
#include "../quant.h"
#include "simd.h"

#include <stdbool.h>
#include <string.h>

/* The decode scratch holds x as floats; the prefill scratch holds the
 * dequantized matrix and x, both as floats. */
size_t quant_decode_dequant_cpu_scratch(int rows, int k, int n)
{
    (void)rows;
    return sizeof(float) * (size_t)k * (size_t)n;
}

size_t quant_prefill_cpu_scratch(int rows, int k, int n)
{
    return sizeof(float) * ((size_t)rows * k + (size_t)k * n);
}

/* ---- eight weights at a time, in vector registers ----------------------------
 * The same arithmetic as quant.h's decode functions, written on whole
 * vectors (one variable shift per eight weights instead of eight scalar
 * ones, which compilers do not find on their own). The results are the
 * same floats, bit for bit: tests/test_quant.c checks every format. */

static const v8u SHIFT1 = {0, 1, 2, 3, 4, 5, 6, 7};
static const v8u SHIFT2 = {0, 2, 4, 6, 8, 10, 12, 14};
static const v8u SHIFT4 = {0, 4, 8, 12, 16, 20, 24, 28};

static inline v8u v8u_splat(uint32_t v) { return (v8u){0} + v; }

/* quant_uint_minus on eight lanes: 2^23 + q, as floats, minus 2^23 + offset. */
static inline v8f v8_uint_minus(v8u q, float offset)
{
    v8u bits = q | 0x4B000000u;
    v8f f;
    memcpy(&f, &bits, sizeof f);
    return f - (8388608.0f + offset);
}

/* Each format in three parts: its scales for a whole block, converted once
 * per block (sc[32]: one per group of lanes; q2 keeps its mins in
 * sc[16..31]); eight integers of one lane as floats with the offset removed
 * but not yet scaled ("raw"); and scale times raw, the weights themselves.
 * The dot products sum raw times x over the lanes that share a scale and
 * scale the sum once: fewer instructions per weight than scaling each. */
static inline void q8_scales(const q8_block *b, float *sc) { v8f_store(sc, fp16x8_to_v8f(b->d)); }

/* Eight bytes, sign- or zero-extended to eight ints: one instruction on
 * AVX2 (compilers do not find it from generic code). */
static inline v8i bytes_to_v8i(const void *p, bool is_signed)
{
#if defined(__AVX2__)
    __m128i q = _mm_loadl_epi64((const __m128i *)p);
    return (v8i)(is_signed ? _mm256_cvtepi8_epi32(q) : _mm256_cvtepu8_epi32(q));
#else
    v8i v;
    for (int i = 0; i < 8; i++)
        v[i] = is_signed ? ((const int8_t *)p)[i] : ((const uint8_t *)p)[i];
    return v;
#endif
}

static inline v8f v8i_to_v8f(v8i v) { return __builtin_convertvector(v, v8f); }

/* int8 to float directly, the same exact values as quant.h's bit trick. */
static inline v8f q8_raw(const q8_block *b, int lane) { return v8i_to_v8f(bytes_to_v8i(&b->qs[lane], true)); }

static inline void q6_scales(const q6_block *b, float *sc)
{
    float d = fp16_to_float(b->d);
    v8f_store(sc, d * v8i_to_v8f(bytes_to_v8i(b->s, true)));
    v8f_store(sc + 8, d * v8i_to_v8f(bytes_to_v8i(b->s + 8, true)));
}

/* The CPU reads unaligned words as fast as aligned ones: the low nibbles
 * as one 4-byte load (ql[2l] | ql[2l + 1] << 16, little-endian), the high
 * bits as one too (the upper half, qh[l + 1] or the first scales for the
 * last lane, is shifted out by the mask: still inside the block). */
static inline v8f q6_raw(const q6_block *b, int lane)
{
    uint32_t lo, hi;
    memcpy(&lo, &b->ql[2 * lane], 4);
    memcpy(&hi, &b->qh[lane], 4);
    v8u q = ((v8u_splat(lo) >> SHIFT4) & 15u) | (((v8u_splat(hi) >> SHIFT2) & 3u) << 4);
    return v8_uint_minus(q, 32.0f);
}

static inline void q5_scales(const q5_block *b, float *sc) { v8f_store(sc, fp16x8_to_v8f(b->d)); }

static inline v8f q5_raw(const q5_block *b, int lane)
{
    v8u q = ((v8u_splat(b->qs[lane]) >> SHIFT4) & 15u) | (((v8u_splat(b->qh[lane]) >> SHIFT1) & 1u) << 4);
    return v8_uint_minus(q, 16.0f);
}

static inline void q4_scales(const q4_block *b, float *sc) { v8f_store(sc, fp16x8_to_v8f(b->d)); }

static inline v8f q4_raw(const q4_block *b, int lane)
{
    return v8_uint_minus((v8u_splat(b->qs[lane]) >> SHIFT4) & 15u, 8.0f);
}

static inline void q2_scales(const q2_block *b, float *sc)
{
    float d = fp16_to_float(b->d), dmin = fp16_to_float(b->dmin);
    for (int h = 0; h < 2; h++) {
        v8i sm = bytes_to_v8i(b->sm + 8 * h, false);
        v8f_store(sc + 8 * h, d * v8i_to_v8f(sm & 15));
        v8f_store(sc + 16 + 8 * h, dmin * v8i_to_v8f(sm >> 4));
    }
}

static inline v8f q2_raw(const q2_block *b, int lane)
{
    return v8_uint_minus((v8u_splat(b->qs[lane]) >> SHIFT2) & 3u, 0.0f);
}

static inline void qf16_scales(const qf16_block *b, float *sc) { (void)b, (void)sc; }

/* The weights: exactly quant.h's arithmetic (scale times raw, minus the
 * min for q2), so a decoded row holds the reference's floats. */
static inline v8f qf16_v8(const qf16_block *b, int lane, const float *sc)
{
    (void)sc;
    return fp16x8_to_v8f(b->w + 8 * lane);
}
static inline v8f q8_v8(const q8_block *b, int lane, const float *sc) { return sc[lane >> 2] * q8_raw(b, lane); }
static inline v8f q6_v8(const q6_block *b, int lane, const float *sc) { return sc[lane >> 1] * q6_raw(b, lane); }
static inline v8f q5_v8(const q5_block *b, int lane, const float *sc) { return sc[lane >> 2] * q5_raw(b, lane); }
static inline v8f q4_v8(const q4_block *b, int lane, const float *sc) { return sc[lane >> 2] * q4_raw(b, lane); }
static inline v8f q2_v8(const q2_block *b, int lane, const float *sc)
{
    return sc[lane >> 1] * q2_raw(b, lane) - sc[16 + (lane >> 1)];
}

/* A row decoded to floats (the prefill path's dequantization). */
#define DECODE_ROW_FOR(fmt, block_type)                                              \
    static void decode_##fmt(const void *row, float *dst, int blocks)               \
    {                                                                                \
        const block_type *b = row;                                                   \
        float sc[32];                                                                \
        for (int i = 0; i < blocks; i++) {                                           \
            fmt##_scales(b + i, sc);                                                 \
            for (int lane = 0; lane < 32; lane++)                                    \
                v8f_store(dst + 256 * i + 8 * lane, fmt##_v8(b + i, lane, sc));      \
        }                                                                            \
    }

/* The dot products of up to four rows with x, walked side by side (four
 * streams through memory per thread, and each x load serves four rows).
 * Over the lanes that share a scale: t += raw x (and u += x, for q2's
 * min), then acc += scale t (- min u). */
#define DOT_ROWS_FOR(fmt, block_type, group, has_min)                                \
    static void dot_##fmt(float *y, const void *rows, size_t row_bytes, int nrows,  \
                          const float *x, int blocks)                                \
    {                                                                                \
        const block_type *b[4];                                                      \
        v8f acc[4] = {{0}};                                                          \
        float sc[4][32];                                                             \
        for (int r = 0; r < 4; r++) /* fewer rows: repeat the last, unused */       \
            b[r] = (const void *)((const char *)rows + (size_t)(r < nrows ? r : nrows - 1) * row_bytes); \
        for (int i = 0; i < blocks; i++) {                                           \
            const float *xs = x + 256 * i;                                           \
            for (int r = 0; r < 4; r++)                                              \
                fmt##_scales(b[r] + i, sc[r]);                                       \
            for (int g = 0; g < 32 / (group); g++) {                                 \
                v8f t[4] = {{0}}, u = {0};                                           \
                for (int l = g * (group); l < (g + 1) * (group); l++) {              \
                    v8f xv = v8f_load(xs + 8 * l);                                   \
                    u += xv;                                                         \
                    for (int r = 0; r < 4; r++)                                      \
                        t[r] = v8f_fma(fmt##_raw(b[r] + i, l), xv, t[r]);            \
                }                                                                    \
                for (int r = 0; r < 4; r++) {                                        \
                    acc[r] = v8f_fma(t[r], (v8f){0} + sc[r][g], acc[r]);             \
                    if (has_min)                                                     \
                        acc[r] -= u * sc[r][16 + g];                                 \
                }                                                                    \
            }                                                                        \
        }                                                                            \
        for (int r = 0; r < nrows; r++)                                              \
            y[r] = v8f_sum(acc[r]);                                                  \
    }

DECODE_ROW_FOR(qf16, qf16_block)
DECODE_ROW_FOR(q8, q8_block)
DECODE_ROW_FOR(q6, q6_block)
DECODE_ROW_FOR(q5, q5_block)
DECODE_ROW_FOR(q4, q4_block)
DECODE_ROW_FOR(q2, q2_block)
DOT_ROWS_FOR(q8, q8_block, 4, 0)
DOT_ROWS_FOR(q6, q6_block, 2, 0)
DOT_ROWS_FOR(q5, q5_block, 4, 0)
DOT_ROWS_FOR(q4, q4_block, 4, 0)
DOT_ROWS_FOR(q2, q2_block, 2, 1)

typedef void (*row_dot)(float *y, const void *rows, size_t row_bytes, int nrows, const float *x,
                        int blocks);
typedef void (*row_decode)(const void *row, float *dst, int blocks);
/* F16 decodes with experiment 02's gemv_fp16: no dot of its own here. */
static const row_dot DOTS[QF_COUNT] = {NULL, dot_q8, dot_q6, dot_q5, dot_q4, dot_q2};
static const row_decode DECODES[QF_COUNT] = {decode_qf16, decode_q8, decode_q6, decode_q5,
                                             decode_q4, decode_q2};

void quant_decode_row_cpu(quant_format f, const void *row, float *dst, int k)
{
    DECODES[f](row, dst, k / QUANT_BLOCK);
}

void quant_decode_dequant_cpu(const quant_args *a)
{
    if (a->format == QF_F16) { /* the FP16 bandwidth kernel of experiment 02 */
        gemv_args g = {a->y, (const fp16 *)a->w, a->x, a->rows, a->k, 1, NULL, a->stream};
        gemv_fp16_cpu(&g);
        return;
    }
    row_dot dot = DOTS[a->format];
    float *x = a->scratch;
    gemv_convert_fp16(x, a->x, (size_t)a->k);
    size_t row_bytes = quant_row_bytes(a->format, a->k);
    int blocks = a->k / QUANT_BLOCK, groups = (a->rows + 3) / 4;
#pragma omp parallel for schedule(static)
    for (int g = 0; g < groups; g++) {
        int r = 4 * g, nrows = a->rows - r < 4 ? a->rows - r : 4;
        dot(a->y + r, (const char *)a->w + (size_t)r * row_bytes, row_bytes, nrows, x, blocks);
    }
}

void quant_prefill_cpu(const quant_args *a)
{
    float *w32 = a->scratch, *x32 = w32 + (size_t)a->rows * a->k;
    size_t row_bytes = quant_row_bytes(a->format, a->k);
    if (a->format == QF_F16) {
        gemv_convert_fp16(w32, a->w, (size_t)a->rows * a->k);
    } else {
#pragma omp parallel for schedule(static)
        for (int r = 0; r < a->rows; r++)
            quant_decode_row_cpu(a->format, (const char *)a->w + (size_t)r * row_bytes,
                                 w32 + (size_t)r * a->k, a->k);
    }
    gemv_convert_fp16(x32, a->x, (size_t)a->n * a->k);
    gemv_sgemm_f32(a->y, w32, x32, a->rows, a->k, a->n);
}
