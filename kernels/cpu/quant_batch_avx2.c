/*
 * cpu/quant_batch_avx2.c -- the integer-dot GEMM over a few tokens, in
 * 256-bit vectors: each block of a weight row is read from memory once and
 * dotted with every token's 8-bit x (quant_blocks_avx2.h), TOKEN_TILE
 * tokens at a time, so that the weights' bytes are shared by the tokens
 * while the arithmetic grows with them. That is the whole story of a
 * quantized kernel over a batch (Marlin on a GPU): at a few tokens the
 * bytes set the time and a 4-bit format is ~3.5x faster than FP16; as the
 * tokens grow, the arithmetic per byte does, and the advantage fades
 * where the kernel turns compute-bound.
 *
 * A row's later token tiles read its blocks again from the L1 (a row of
 * 4096 q4 weights is 2.3 KiB, of 14336 8 KiB), not from memory. Within
 * a tile, the nibble formats and (512-bit) q6 unpack each block once for
 * every token: a token past the first costs only its dot products; q8 and
 * q2 (and q6 in 256-bit vectors, whose unpacked block would take 12 of
 * the 16 registers) decode it again for each token.
 */
#include "quant_dot.h"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include "quant_blocks_avx2.h"

/* Tokens per pass over a row: one accumulator each, kept in registers
 * beside the block's own temporaries (16 vector registers with AVX2). */
enum { TOKEN_TILE = 4, PREFETCH_AHEAD = 4096 };

/* x's arrays for block i of token x (block_any's). */
#define X_BLOCK(x, i) (x)->q + (size_t)QUANT_BLOCK * (i), (x)->dv + 8 * (i), (x)->off + 8 * (i)

/* Block i of the row against tokens [t0, t0 + nt): acc[t] += its dot with
 * token t0 + t. The nibble formats (q4, q5) and, with 512-bit vectors, q6
 * unpack the block once for all of them; the others decode it per token. */
static inline __attribute__((always_inline)) void block_tokens(quant_format f, const char *blk, int i,
                                                              const quant_x8 *x, int nt,
                                                              __m256 *acc, const int TILE)
{
    if (f == QF_Q4 || f == QF_Q5) {
        const q4_block *q4 = (const q4_block *)blk;
        const q5_block *q5 = (const q5_block *)blk;
        nibbles_unpacked u;
        if (f == QF_Q4)
            unpack_nibbles(q4->d, q4->qs, NULL, &u);
        else
            unpack_nibbles(q5->d, q5->qs, q5->qh, &u);
        for (int t = 0; t < TILE; t++)
            if (t < nt)
                acc[t] = _mm256_add_ps(acc[t], dot_nibbles(&u, X_BLOCK(&x[t], i)));
        return;
    }
#if defined(QUANT_DOT_ZMM)
    if (f == QF_Q6) {
        q6_unpacked u;
        unpack_q6((const q6_block *)blk, &u);
        for (int t = 0; t < TILE; t++)
            if (t < nt)
                acc[t] = _mm256_add_ps(acc[t], dot_q6(&u, x[t].q + (size_t)QUANT_BLOCK * i,
                                                      x[t].s16 + 16 * i, x[t].dv + 8 * i,
                                                      x[t].off + 8 * i));
        return;
    }
#endif
    for (int t = 0; t < TILE; t++)
        if (t < nt)
            acc[t] = _mm256_add_ps(acc[t], block_any(f, blk, &x[t], i));
}

/* One row against every token: y[t * y_stride] for t < ntok. The first
 * tile streams the row from memory (its bytes asked for ahead, as the
 * one-token kernels do); the others find it in the L1. */
static inline __attribute__((always_inline)) void row_tokens(quant_format f, float *y,
                                                            size_t y_stride, const char *row,
                                                            const quant_x8 *x, int ntok,
                                                            int blocks)
{
    const int bytes = block_bytes(f);
    for (int t0 = 0; t0 < ntok; t0 += TOKEN_TILE) {
        int nt = ntok - t0 < TOKEN_TILE ? ntok - t0 : TOKEN_TILE;
        __m256 acc[TOKEN_TILE];
        for (int t = 0; t < TOKEN_TILE; t++)
            acc[t] = _mm256_setzero_ps();
        for (int i = 0; i < blocks; i++) {
            const char *blk = row + (size_t)i * bytes;
            if (t0 == 0)
                prefetch_block(blk, bytes, PREFETCH_AHEAD);
            block_tokens(f, blk, i, x + t0, nt, acc, TOKEN_TILE);
        }
        for (int t = 0; t < nt; t++)
            y[(size_t)(t0 + t) * y_stride] = hsum(acc[t]);
    }
}

/* One or two tokens over ROWS rows side by side, `stride` rows apart:
 * ROWS streams per thread, the one-token kernel's tuned shape
 * (quant_dot_avx2.c: its rows, and how far ahead it asks for bytes),
 * instead of one stream per thread. Not past two tokens: ROWS x tokens
 * accumulators must stay in the registers, and four rows of four tokens'
 * did not (experiment 03's README, "On the CPU, counted too"). */
enum { FEW_TOKENS = 2 };

static inline __attribute__((always_inline)) void rows_few_tokens(quant_format f, float *y,
                                                                 size_t y_stride, const char *w,
                                                                 size_t row_bytes, int stride,
                                                                 const int ROWS, const quant_x8 *x,
                                                                 int ntok, int blocks, int ahead)
{
    const int bytes = block_bytes(f);
    const size_t apart = (size_t)stride * row_bytes;
    __m256 acc[4][FEW_TOKENS];
#pragma GCC unroll 4
    for (int r = 0; r < ROWS; r++)
        for (int t = 0; t < FEW_TOKENS; t++)
            acc[r][t] = _mm256_setzero_ps();
    for (int i = 0; i < blocks; i++)
#pragma GCC unroll 4
        for (int r = 0; r < ROWS; r++) {
            const char *blk = w + r * apart + (size_t)i * bytes;
            prefetch_block(blk, bytes, ahead);
            block_tokens(f, blk, i, x, ntok, acc[r], FEW_TOKENS);
        }
    for (int r = 0; r < ROWS; r++)
        for (int t = 0; t < ntok; t++)
            y[(size_t)r * stride + (size_t)t * y_stride] = hsum(acc[r][t]);
}

/* The thread's rows in ROWS segments, a step taking the next row of each
 * (one long stream per segment, as in the one-token kernel); the last
 * nrows % ROWS rows one by one. */
static inline __attribute__((always_inline)) void segments_few_tokens(quant_format f, float *y,
                                                                     size_t y_stride,
                                                                     const char *w,
                                                                     size_t row_bytes, int nrows,
                                                                     const int ROWS,
                                                                     const quant_x8 *x, int ntok,
                                                                     int blocks, int ahead)
{
    int segment = nrows / ROWS;
    for (int r = 0; r < segment; r++)
        rows_few_tokens(f, y + r, y_stride, w + r * row_bytes, row_bytes, segment, ROWS, x, ntok,
                        blocks, ahead);
    for (int r = segment * ROWS; r < nrows; r++)
        rows_few_tokens(f, y + r, y_stride, w + r * row_bytes, row_bytes, 1, 1, x, ntok, blocks,
                        ahead);
}

/* One or two tokens in the shape tuned for this format's one-token
 * kernel, its row count a constant in each call. */
static inline __attribute__((always_inline)) void tuned_few_tokens(quant_format f, float *y,
                                                                  size_t y_stride, const char *w,
                                                                  size_t row_bytes, int nrows,
                                                                  const quant_x8 *x, int ntok,
                                                                  int blocks)
{
    quant_dot_shape shape = quant_dot_get_shape(f);
    if (shape.rows == 4)
        segments_few_tokens(f, y, y_stride, w, row_bytes, nrows, 4, x, ntok, blocks, shape.prefetch);
    else if (shape.rows == 2)
        segments_few_tokens(f, y, y_stride, w, row_bytes, nrows, 2, x, ntok, blocks, shape.prefetch);
    else
        segments_few_tokens(f, y, y_stride, w, row_bytes, nrows, 1, x, ntok, blocks, shape.prefetch);
}

/* One function per format, so that block_any's switch folds away. One or
 * two tokens take the one-token kernel's shape; more, a row at a time
 * (its later tiles find it in the L1). */
#define BATCH_ROWS(fmt, F)                                                                     \
    static void batch_rows_##fmt(float *y, size_t y_stride, const void *w, size_t row_bytes,  \
                                 int nrows, const quant_x8 *x, int ntok, int blocks)          \
    {                                                                                          \
        if (ntok <= FEW_TOKENS) {                                                              \
            tuned_few_tokens(F, y, y_stride, w, row_bytes, nrows, x, ntok, blocks);            \
            return;                                                                            \
        }                                                                                      \
        for (int r = 0; r < nrows; r++)                                                        \
            row_tokens(F, y + r, y_stride, (const char *)w + (size_t)r * row_bytes, x, ntok,    \
                       blocks);                                                                \
    }
BATCH_ROWS(q8, QF_Q8)
BATCH_ROWS(q6, QF_Q6)
BATCH_ROWS(q5, QF_Q5)
BATCH_ROWS(q4, QF_Q4)
BATCH_ROWS(q2, QF_Q2)

quant_dot_batch_rows quant_batch_simd(quant_format f)
{
    static const quant_dot_batch_rows BY_FORMAT[QF_COUNT] = {
        NULL, batch_rows_q8, batch_rows_q6, batch_rows_q5, batch_rows_q4, batch_rows_q2};
    return f > QF_F16 && f < QF_COUNT ? BY_FORMAT[f] : NULL;
}

#else /* no AVX2: quant_dot.c runs the portable one-token kernels token by token */

quant_dot_batch_rows quant_batch_simd(quant_format f)
{
    (void)f;
    return NULL;
}

#endif
