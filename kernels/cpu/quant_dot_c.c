/*
 * cpu/quant_dot_c.c -- the integer-dot decode in portable C: the method
 * without the instruction set. Each block's integers are unpacked to
 * int16 in natural weight order, multiplied with x's integers in int32
 * (exact), and each group of 32 weights adds scale_w * scale_x * (integer
 * sum) to one FP32 accumulator. An offset (q4, q5, q6) or a min (q2) is a
 * multiple of the group's sum of x integers, also exact.
 *
 * The SIMD kernels (quant_dot_avx2.c) compute the same integer sums in
 * another order; the tests hold both to the same bound.
 */
#include "quant_dot.h"

#include <math.h>

/* ---- unpacking, weight by weight (quant.h's layouts) ---------------------------- */

static void ints_q8(const q8_block *b, int16_t *q)
{
    const int8_t *v = (const int8_t *)b->qs; /* byte w is weight w */
    for (int i = 0; i < QUANT_BLOCK; i++)
        q[i] = v[i];
}

static void ints_q6(const q6_block *b, int16_t *q)
{
    for (int lane = 0; lane < 32; lane++) {
        uint32_t lo = b->ql[2 * lane] | ((uint32_t)b->ql[2 * lane + 1] << 16), hi = b->qh[lane];
        for (int i = 0; i < 8; i++)
            q[8 * lane + i] = (int16_t)(((lo >> (4 * i)) & 15u) | (((hi >> (2 * i)) & 3u) << 4));
    }
}

static void ints_q5(const q5_block *b, int16_t *q)
{
    for (int lane = 0; lane < 32; lane++)
        for (int i = 0; i < 8; i++)
            q[8 * lane + i] = (int16_t)(((b->qs[lane] >> (4 * i)) & 15u) | (((b->qh[lane] >> i) & 1u) << 4));
}

static void ints_q4(const q4_block *b, int16_t *q)
{
    for (int lane = 0; lane < 32; lane++)
        for (int i = 0; i < 8; i++)
            q[8 * lane + i] = (int16_t)((b->qs[lane] >> (4 * i)) & 15u);
}

static void ints_q2(const q2_block *b, int16_t *q)
{
    for (int lane = 0; lane < 32; lane++)
        for (int i = 0; i < 8; i++)
            q[8 * lane + i] = (int16_t)((b->qs[lane] >> (2 * i)) & 3u);
}

static void block_ints(quant_format f, const void *blk, int16_t *q)
{
    switch (f) {
    case QF_Q8: ints_q8(blk, q); break;
    case QF_Q6: ints_q6(blk, q); break;
    case QF_Q5: ints_q5(blk, q); break;
    case QF_Q4: ints_q4(blk, q); break;
    default: ints_q2(blk, q); break;
    }
}

/* Each format's scale and offset per run of weights that share them: 8 runs
 * of 32 (q8, q5, q4) or 16 runs of 16 (q6, q2). Computed once per run, not
 * per weight: the error bound calls this on every block of the model. */
static int block_runs(quant_format f, const void *block, float scale[16], float offset[16])
{
    switch (f) {
    case QF_Q8:
    case QF_Q5:
    case QF_Q4: {
        const fp16 *d = f == QF_Q8 ? ((const q8_block *)block)->d
                      : f == QF_Q5 ? ((const q5_block *)block)->d : ((const q4_block *)block)->d;
        float mid = f == QF_Q8 ? 0 : f == QF_Q5 ? 16 : 8;
        for (int g = 0; g < 8; g++)
            scale[g] = fp16_to_float(d[g]), offset[g] = mid != 0 ? mid * scale[g] : 0;
        return 8;
    }
    case QF_Q6: {
        const q6_block *b = block;
        float d = fp16_to_float(b->d);
        for (int j = 0; j < 16; j++)
            scale[j] = d * (float)b->s[j], offset[j] = 32 * scale[j];
        return 16;
    }
    default: {
        const q2_block *b = block;
        float d = fp16_to_float(b->d), dmin = fp16_to_float(b->dmin);
        for (int j = 0; j < 16; j++)
            scale[j] = d * (float)(b->sm[j] & 15u), offset[j] = dmin * (float)(b->sm[j] >> 4);
        return 16;
    }
    }
}

void quant_block_split(quant_format f, const void *block, int16_t q[QUANT_BLOCK],
                       float scale[QUANT_BLOCK], float offset[QUANT_BLOCK])
{
    float run_scale[16], run_offset[16];
    block_ints(f, block, q);
    int runs = block_runs(f, block, run_scale, run_offset), width = QUANT_BLOCK / runs;
    for (int r = 0; r < runs; r++)
        for (int i = width * r; i < width * (r + 1); i++)
            scale[i] = run_scale[r], offset[i] = run_offset[r];
}

/* ---- the dot products ----------------------------------------------------------- */

/* Sum of q[i] * x[i] over n values: at most 32 * 128 * 127, exact in int32. */
static inline int32_t idot(const int16_t *q, const int8_t *x, int n)
{
    int32_t s = 0;
    for (int i = 0; i < n; i++)
        s += q[i] * x[i];
    return s;
}

/* One block's contribution, group by group (32 weights, one x scale). */
static float block_q8(const q8_block *b, const int16_t *q, const int8_t *xq, const float *dx,
                      const int16_t *s16, float acc)
{
    (void)s16;
    for (int g = 0; g < 8; g++)
        acc = fmaf(fp16_to_float(b->d[g]) * dx[g], (float)idot(q + 32 * g, xq + 32 * g, 32), acc);
    return acc;
}

/* d (q - offset) x = d (q x - offset * sum x): the offset in integers. */
static float block_offset(const fp16 *d, int offset, const int16_t *q, const int8_t *xq,
                          const float *dx, const int16_t *s16, float acc)
{
    for (int g = 0; g < 8; g++) {
        int32_t s = idot(q + 32 * g, xq + 32 * g, 32) - offset * (s16[2 * g] + s16[2 * g + 1]);
        acc = fmaf(fp16_to_float(d[g]) * dx[g], (float)s, acc);
    }
    return acc;
}

/* An int8 scale per 16 weights, the FP16 d per block: the two halves of a
 * group sum in integers (|s| <= 2 * 128 * 16 * 32 * 127 < 2^24: exact). */
static float block_q6(const q6_block *b, const int16_t *q, const int8_t *xq, const float *dx,
                      const int16_t *s16, float acc)
{
    float d = fp16_to_float(b->d);
    for (int g = 0; g < 8; g++) {
        int32_t s = 0;
        for (int h = 2 * g; h < 2 * g + 2; h++)
            s += b->s[h] * (idot(q + 16 * h, xq + 16 * h, 16) - 32 * s16[h]);
        acc = fmaf(d * dx[g], (float)s, acc);
    }
    return acc;
}

/* w = d s q - dmin m: the scale part and the min part of a group. */
static float block_q2(const q2_block *b, const int16_t *q, const int8_t *xq, const float *dx,
                      const int16_t *s16, float acc)
{
    float d = fp16_to_float(b->d), dmin = fp16_to_float(b->dmin);
    for (int g = 0; g < 8; g++) {
        int32_t s = 0, m = 0;
        for (int h = 2 * g; h < 2 * g + 2; h++) {
            s += (b->sm[h] & 15) * idot(q + 16 * h, xq + 16 * h, 16);
            m += (b->sm[h] >> 4) * s16[h];
        }
        acc = fmaf(d * dx[g], (float)s, acc);
        acc = fmaf(-dmin * dx[g], (float)m, acc);
    }
    return acc;
}

static float row_c(quant_format f, const char *row, const quant_x8 *x, int blocks)
{
    int16_t q[QUANT_BLOCK];
    float acc = 0;
    int bytes = quant_formats[f].block_bytes;
    for (int b = 0; b < blocks; b++) {
        const void *blk = row + (size_t)b * bytes;
        const int8_t *xq = x->q + (size_t)QUANT_BLOCK * b;
        const float *dx = x->d + 8 * b;
        const int16_t *s16 = x->s16 + 16 * b;
        block_ints(f, blk, q);
        switch (f) {
        case QF_Q8: acc = block_q8(blk, q, xq, dx, s16, acc); break;
        case QF_Q6: acc = block_q6(blk, q, xq, dx, s16, acc); break;
        case QF_Q5: acc = block_offset(((const q5_block *)blk)->d, 16, q, xq, dx, s16, acc); break;
        case QF_Q4: acc = block_offset(((const q4_block *)blk)->d, 8, q, xq, dx, s16, acc); break;
        default: acc = block_q2(blk, q, xq, dx, s16, acc); break;
        }
    }
    return acc;
}

#define ROWS_C(fmt, F)                                                                   \
    static void rows_c_##fmt(float *y, const void *w, size_t row_bytes, int nrows,      \
                             const quant_x8 *x, int blocks)                             \
    {                                                                                    \
        for (int r = 0; r < nrows; r++)                                                  \
            y[r] = row_c(F, (const char *)w + (size_t)r * row_bytes, x, blocks);         \
    }
ROWS_C(q8, QF_Q8)
ROWS_C(q6, QF_Q6)
ROWS_C(q5, QF_Q5)
ROWS_C(q4, QF_Q4)
ROWS_C(q2, QF_Q2)

quant_dot_rows quant_dot_c(quant_format f)
{
    static const quant_dot_rows BY_FORMAT[QF_COUNT] = {NULL, rows_c_q8, rows_c_q6, rows_c_q5,
                                                        rows_c_q4, rows_c_q2};
    return f < QF_COUNT ? BY_FORMAT[f] : NULL;
}
