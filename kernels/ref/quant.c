/*
 * ref/quant.c -- the double-precision reference every quant variant, on
 * either backend, is checked against (experiment 03), and the plain
 * decoding of a row it rests on: quant.h's shared decode functions, eight
 * weights at a time, which the CPU kernels' vector decoders must match
 * bit for bit.
 */
#include "../quant.h"

static float fp16_round(float v) { return fp16_to_float(float_to_fp16(v)); }

/* One switch per row, then a loop the compiler specializes per format. */
#define DECODE_ROW(block_type, decode)                                  \
    do {                                                                \
        const block_type *blocks = row;                                 \
        for (int b = 0; b < k / QUANT_BLOCK; b++)                       \
            for (int lane = 0; lane < 32; lane++)                       \
                decode(blocks + b, lane, dst + QUANT_BLOCK * b + 8 * lane); \
    } while (0)

void quant_decode_row(quant_format f, const void *row, float *dst, int k)
{
    switch (f) {
    case QF_F16: DECODE_ROW(qf16_block, qf16_decode8); break;
    case QF_Q8: DECODE_ROW(q8_block, q8_decode8); break;
    case QF_Q6: DECODE_ROW(q6_block, q6_decode8); break;
    case QF_Q5: DECODE_ROW(q5_block, q5_decode8); break;
    case QF_Q4: DECODE_ROW(q4_block, q4_decode8); break;
    default: DECODE_ROW(q2_block, q2_decode8); break;
    }
}

typedef struct quant_rows {
    quant_format f;
    const void *w;
    int k;
    bool round_to_fp16;
} quant_rows;

static void quant_row(const void *ctx, int r, double *out)
{
    const quant_rows *m = ctx;
    const char *row = (const char *)m->w + (size_t)r * quant_row_bytes(m->f, m->k);
    float buf[QUANT_BLOCK];
    for (int b = 0; b < m->k / QUANT_BLOCK; b++) { /* block by block: a one-block "row" */
        quant_decode_row(m->f, row + (size_t)b * quant_formats[m->f].block_bytes, buf, QUANT_BLOCK);
        for (int i = 0; i < QUANT_BLOCK; i++)
            out[QUANT_BLOCK * b + i] = m->round_to_fp16 ? fp16_round(buf[i]) : buf[i];
    }
}

void quant_reference(double *y, quant_format f, const void *w, const fp16 *x, int rows, int k,
                     int n, bool round_to_fp16)
{
    quant_rows m = {f, w, k, round_to_fp16};
    gemv_reference_rows(y, quant_row, &m, x, rows, k, n);
}
