/*
 * cpu/quant_dot_avx2.c -- the integer-dot decode in 256-bit vectors:
 * AVX2, with AVX-VNNI or AVX-512 VNNI's vpdpbusd where the build targets
 * them (one instruction for four byte products and their sum); q2 and
 * q6, the formats with the most instructions per byte (bound by them, not
 * by memory, where their matrix fits a cache), take 512-bit vectors where
 * AVX-512 is there.
 *
 * Each kernel reads a block as quant.h lays it out for the GPU and never
 * moves a weight between lanes: nibbles split with one AND and one shift,
 * bit planes with shifts, and x's integers come pre-permuted to the order
 * that gives (quant_x8.c). Per 32 weights, roughly: q8 4-6 instructions,
 * q4 5, q5 9, q6 10, q2 8, against one per weight or more for dequantizing
 * to floats. Integers are unsigned (the weight's offset or min is removed
 * afterwards through x's group sums), so the u8 x s8 products of maddubs
 * and dpbusd need no sign tricks, except q8 (signed weights).
 *
 * int16 safety (maddubs saturates): x's integers are within +-127, and the
 * sums of two pair products kept in int16 are at most q8 32512, q6 32004,
 * q5 15748, q4 7620, q2 3048.
 */
#include "quant_dot.h"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include "quant_blocks_avx2.h"

/* Each block's bytes are asked for ahead (every 64-byte line): the
 * hardware prefetchers follow one stream per thread, but a loop this busy
 * issues its own loads too late to keep DRAM busy. How far: the shape's
 * prefetch, below. */

/* The shape of each format's kernel, chosen at run time from the
 * candidates below (cpu/decode_shapes.c lists them, the harness times them
 * on this machine; these defaults are the fallback): rows side by side,
 * and how far ahead each block's bytes are asked for. */
#if defined(QDOT_VNNI512) || defined(QDOT_AVXVNNI)
#define Q8_DEFAULT_ROWS 1
#else
#define Q8_DEFAULT_ROWS 4
#endif
static int shape_rows[QF_COUNT] = {[QF_Q8] = Q8_DEFAULT_ROWS, [QF_Q6] = 1, [QF_Q5] = 1,
                                   [QF_Q4] = 1, [QF_Q2] = 1};
static int shape_prefetch[QF_COUNT] = {[QF_Q8] = 4096, [QF_Q6] = 4096, [QF_Q5] = 4096,
                                       [QF_Q4] = 4096, [QF_Q2] = 4096};

/* ROWS rows side by side, block by block, `stride` rows apart: ROWS
 * streams through memory per thread (more misses in flight), and each x
 * load serves every row. Each block's sum comes back on its own (fresh
 * accumulators inside), so the only dependence between blocks is one
 * addition: the out-of-order core overlaps consecutive blocks instead of
 * waiting on FMA latency. */
static inline __attribute__((always_inline)) void rows_simd(quant_format f, float *y, const char *w,
                                                           size_t row_bytes, int stride, int ROWS,
                                                           const quant_x8 *x, int blocks)
{
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    int bytes = block_bytes(f), ahead = shape_prefetch[f];
    size_t apart = (size_t)stride * row_bytes;
    for (int i = 0; i < blocks; i++)
        for (int r = 0; r < ROWS; r++) {
            const char *blk = w + r * apart + (size_t)i * bytes;
            prefetch_block(blk, bytes, ahead);
            acc[r] = _mm256_add_ps(acc[r], block_any(f, blk, x, i));
        }
    for (int r = 0; r < ROWS; r++)
        y[(size_t)r * stride] = hsum(acc[r]);
}

/* One function per format and row count, so that the switches above fold
 * away. The thread's rows are cut into ROWS segments and a step takes the
 * next row of each, so that each segment is one long stream, as in
 * gemv.c: ROWS neighbouring rows a step would make ROWS streams of one
 * row each (a 4096-weight q4 row is 2.3 KiB), which the hardware
 * prefetchers lose at every step. The last nrows % ROWS rows go one by
 * one (ROWS at most 4: acc[] above).
 * The defaults, timed with AVX2 when rows side by side were neighbours
 * (exp-03 --matrix, interleaved rounds, on a Zen 3 and a Zen 4): q8 was
 * fastest with 4 rows, every other format with 1; with VNNI the q8 block
 * is a quarter of the instructions and one row was best again (AVX-512
 * VNNI). In segments, 4 rows won from DRAM in q5 and q4 too (Zen 3).
 * A 4 KiB prefetch raised q8..q4's bandwidth on a DRAM-sized matrix
 * there; on a Sapphire Rapids VM other choices won (issue 27), which is
 * why they are candidates, chosen per machine. */
#define ROWS_SIMD(fmt, F, ROWS)                                                          \
    static void rows_simd_##fmt##_##ROWS(float *y, const void *w, size_t row_bytes,     \
                                         int nrows, const quant_x8 *x, int blocks)      \
    {                                                                                    \
        const char *rows = w;                                                            \
        int segment = nrows / (ROWS);                                                    \
        for (int r = 0; r < segment; r++)                                                \
            rows_simd(F, y + r, rows + r * row_bytes, row_bytes, segment, (ROWS), x,    \
                      blocks);                                                           \
        for (int r = segment * (ROWS); r < nrows; r++)                                   \
            rows_simd(F, y + r, rows + r * row_bytes, row_bytes, 1, 1, x, blocks);       \
    }
#define ROWS_SIMD_ALL(fmt, F) ROWS_SIMD(fmt, F, 1) ROWS_SIMD(fmt, F, 2) ROWS_SIMD(fmt, F, 4)
ROWS_SIMD_ALL(q8, QF_Q8)
ROWS_SIMD_ALL(q6, QF_Q6)
ROWS_SIMD_ALL(q5, QF_Q5)
ROWS_SIMD_ALL(q4, QF_Q4)
ROWS_SIMD_ALL(q2, QF_Q2)

const int QUANT_DOT_ROWS[] = {1, 2, 4, -1};
const int QUANT_DOT_PREFETCH[] = {0, 1024, 4096, -1};
#define ROW_CHOICES 3

static int rows_index(int rows) { return rows == 4 ? 2 : rows == 2 ? 1 : 0; }

quant_dot_shape quant_dot_shape_default(quant_format f)
{
    return (quant_dot_shape){f == QF_Q8 ? Q8_DEFAULT_ROWS : 1, 4096};
}

bool quant_dot_set_shape(quant_format f, quant_dot_shape s)
{
    bool rows_ok = s.rows == 1 || s.rows == 2 || s.rows == 4;
    if (f == QF_F16 || f >= QF_COUNT || !rows_ok || s.prefetch < 0 || s.prefetch > 65536)
        return false;
    shape_rows[f] = s.rows, shape_prefetch[f] = s.prefetch;
    return true;
}

quant_dot_shape quant_dot_get_shape(quant_format f)
{
    return f == QF_F16 || f >= QF_COUNT ? (quant_dot_shape){0, 0}
                                        : (quant_dot_shape){shape_rows[f], shape_prefetch[f]};
}

quant_dot_rows quant_dot_simd(quant_format f)
{
    static const quant_dot_rows BY_FORMAT[QF_COUNT][ROW_CHOICES] = {
        {NULL, NULL, NULL},
        {rows_simd_q8_1, rows_simd_q8_2, rows_simd_q8_4},
        {rows_simd_q6_1, rows_simd_q6_2, rows_simd_q6_4},
        {rows_simd_q5_1, rows_simd_q5_2, rows_simd_q5_4},
        {rows_simd_q4_1, rows_simd_q4_2, rows_simd_q4_4},
        {rows_simd_q2_1, rows_simd_q2_2, rows_simd_q2_4},
    };
    return f > QF_F16 && f < QF_COUNT ? BY_FORMAT[f][rows_index(shape_rows[f])] : NULL;
}

quant_isa quant_isa_best(void) { return QDOT_ISA; }

#else /* no AVX2: the portable kernels only, which have no shape */

const int QUANT_DOT_ROWS[] = {-1};
const int QUANT_DOT_PREFETCH[] = {-1};

quant_dot_shape quant_dot_shape_default(quant_format f)
{
    (void)f;
    return (quant_dot_shape){0, 0};
}

bool quant_dot_set_shape(quant_format f, quant_dot_shape s)
{
    (void)f, (void)s;
    return false;
}

quant_dot_shape quant_dot_get_shape(quant_format f) { return quant_dot_shape_default(f); }

quant_dot_rows quant_dot_simd(quant_format f)
{
    (void)f;
    return NULL;
}

quant_isa quant_isa_best(void) { return QUANT_ISA_C; }

#endif
