/*
 * cpu/quant_dot.h -- experiment 03's integer-dot decode on the CPU, the way
 * ggml's CPU backend does it: x is quantized once per call to 8-bit
 * integers with one float scale per 32 values, and every row's dot product
 * is computed on integers (weights x x-integers, exact), with each block's
 * scales applied once per group of 32 (or 16) products instead of once per
 * weight.
 *
 * Two implementations of the same arithmetic, chosen at run time:
 *   QUANT_ISA_C     portable C, natural weight order (the tests run it too);
 *   the best SIMD one the build targets: AVX-512 VNNI (256-bit dpbusd),
 *   AVX-VNNI, or AVX2 (maddubs + madd), in quant_dot_avx2.c. The SIMD code
 *   reads each block as the GPU layout stores it (quant.h: lane-interleaved
 *   nibbles and bit planes); x's integers are permuted once per call into
 *   the order those loads produce, so no weight is ever shuffled.
 *
 * The result differs from the FP32-dequantizing decode by x's rounding to
 * 8 bits: quant_int8_error_bound() says by how much, at most.
 */
#ifndef KERNELS_CPU_QUANT_DOT_H
#define KERNELS_CPU_QUANT_DOT_H

#include "../quant.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum quant_isa {
    QUANT_ISA_C = 0,       /* portable C */
    QUANT_ISA_AVX2,        /* maddubs + madd */
    QUANT_ISA_AVXVNNI,     /* vpdpbusd, VEX (Alder Lake, Zen 5...) */
    QUANT_ISA_AVX512VNNI,  /* vpdpbusd, EVEX on 256-bit registers, q2 and q6 on 512 (Ice Lake, Zen 4...) */
    QUANT_ISA_COUNT
} quant_isa;

/* q2's and q6's AVX-512 blocks take both halves of a block in one 512-bit
 * vector, so x's integers for them interleave the halves (quant_x8.c): the
 * two files decide it from the same macros. AVX-512 VNNI without BW exists
 * on no CPU. CPU_ARCH='-march=native -DQUANT_DOT_YMM' builds the 256-bit
 * blocks instead, to time the two side by side. */
#if !defined(QUANT_DOT_YMM) && defined(__AVX512VNNI__) && defined(__AVX512VL__) && defined(__AVX512BW__) && defined(__AVX2__) && \
    defined(__FMA__) && defined(__F16C__)
#define QUANT_DOT_ZMM 1
#endif

/* The SIMD implementation this build compiled (QUANT_ISA_C when none). */
quant_isa quant_isa_best(void);
const char *quant_isa_name(quant_isa isa);

/* ---- x, quantized once per call -------------------------------------------- */

enum { QX_GROUP = 32 }; /* x values per scale */

/* x ~= d[g] * q[i] for i in group g; |q| <= 127. */
typedef struct quant_x8 {
    int k;
    int8_t *q;     /* k integers, in the order the format's kernel reads them */
    float *d;      /* k / 32 scales, natural order */
    int16_t *s16;  /* k / 16 sums of q over 16 consecutive values (natural order) */
    float *dv;     /* the scales d again, in the lane order of the format's SIMD sums */
    float *off;    /* per group, in that order: the offset's term (q4, q5), or -32 d (q6) */
} quant_x8;

/* Bytes of scratch the integer decode needs for a k-wide x (any format). */
size_t quant_x8_bytes(int k);
/* Carves a quant_x8 out of scratch (quant_x8_bytes(k) of it, any alignment). */
quant_x8 quant_x8_in(void *scratch, int k);

/* The scale of group g of x, exactly as the kernels compute it, and the
 * integers (natural order): the one definition every path and the error
 * bound use. */
float quant_x8_scale(const fp16 *x);
void quant_x8_group(int8_t q[QX_GROUP], const fp16 *x, float d);

/* Quantizes 256-blocks [b0, b1) of x for format f in the layout of isa.
 * Disjoint block ranges may be filled from several threads at once. */
void quant_x8_fill(quant_x8 *qx, const fp16 *x, quant_format f, quant_isa isa, int b0, int b1);

/* x-hat as doubles: what the integer kernels multiply by (tests). */
void quant_x8_dequantized(double *xhat, const fp16 *x, int k);

/* One block as w = scale * q - offset, weight by weight: the integers the
 * kernels multiply (q8: -128..127; q6: 0..63; q5: 0..31; q4: 0..15; q2:
 * 0..3) and the scale and offset they apply. Not F16. */
void quant_block_split(quant_format f, const void *block, int16_t q[QUANT_BLOCK],
                       float scale[QUANT_BLOCK], float offset[QUANT_BLOCK]);

/* ---- the row kernels ---------------------------------------------------------- */

/* y[r] for rows [0, nrows) of w (row_bytes apart), blocks = k / 256. */
typedef void (*quant_dot_rows)(float *y, const void *w, size_t row_bytes, int nrows,
                               const quant_x8 *x, int blocks);

/* The kernel of format f (not F16) for isa, or NULL when not compiled;
 * the SIMD one in its current shape (below). */
quant_dot_rows quant_dot_c(quant_format f);
quant_dot_rows quant_dot_simd(quant_format f);

/* The same over ntok tokens, each with its own x: y[t * y_stride + r].
 * Each block of a row is read from memory once for all the tokens
 * (quant_batch_avx2.c); NULL where the build has no SIMD kernels, and
 * quant_batch_int8 then runs the portable row kernel token by token. */
typedef void (*quant_dot_batch_rows)(float *y, size_t y_stride, const void *w, size_t row_bytes,
                                     int nrows, const quant_x8 *x, int ntok, int blocks);
quant_dot_batch_rows quant_batch_simd(quant_format f);

/* The SIMD kernels' shape per format, chosen at run time (decode_shapes.h
 * lists the candidates; the harness times them on this machine and sets
 * the fastest; the defaults are the fallback): rows decoded side by side
 * (1, 2 or 4), and how many bytes ahead each block is prefetched (0: none). Candidates: the
 * -1-ended QUANT_DOT_ROWS and QUANT_DOT_PREFETCH (empty in a build
 * without the SIMD kernels, where set_shape says false). */
typedef struct quant_dot_shape {
    int rows, prefetch;
} quant_dot_shape;
extern const int QUANT_DOT_ROWS[], QUANT_DOT_PREFETCH[];
quant_dot_shape quant_dot_shape_default(quant_format f);
quant_dot_shape quant_dot_get_shape(quant_format f);
bool quant_dot_set_shape(quant_format f, quant_dot_shape s);

/* ---- the decode -------------------------------------------------------------- */

/* y = W x for a decode call (n = 1) with the integer kernels of isa (F16:
 * experiment 02's FP16 GEMV). a->scratch: quant_int8_scratch() bytes.
 * quant_decode_int8_best (quant.h), with the best ISA of the build, is the
 * CPU launcher of the table's decode_int8 row. */
void quant_decode_int8(const quant_args *a, quant_isa isa);
/* The same call (not F16) with a given row kernel, whose x layout is isa's:
 * what make ab-decode times for two builds of the kernels. */
void quant_decode_int8_rows(const quant_args *a, quant_dot_rows dot, quant_isa isa);

/* Y = W X for n tokens (any n >= 1) with the batch kernels of isa: each
 * token's x quantized once, each block of W read once for all of them;
 * F16 is experiment 02's FP16 GEMV up to GEMV_MAX_BATCH tokens and the
 * library on blocks of rows beyond. a->scratch: quant_batch_int8_scratch()
 * bytes. quant_batch_int8_best (quant.h) is the table's batch_int8 row. */
void quant_batch_int8(const quant_args *a, quant_isa isa);

/* ---- how wrong it may be ------------------------------------------------------ */

/* For each of the rows outputs, the largest |y - reference| the integer
 * decode can show, where the reference is the exact y of the decoded
 * weights and x in double precision. With d_g the scale of x's group g
 * (32 values) and c = 1 + 2^-13 (|x - d q| exceeds d / 2 by at most the
 * roundings of 1 / d and x (1 / d): 127 2^-23 of d):
 *
 *   x's rounding:  |sum_i w_i (x_i - xhat_i)| <= c sum_g d_g / 2 sum_{i in g} |w_i|
 *   FP32 sums:     (k / 16 + 32) 2^-24 sum_i a_i (|x_i| + c d_g / 2)
 *
 * The integer sums are exact; the FP32 part is the standard bound for a
 * sum of at most k / 16 + 32 rounded terms (scale products, conversions,
 * accumulation), where a_i is the magnitude of what the kernel adds for
 * weight i: |scale q| + |offset| in quant_block_split()'s terms (|w_i| for
 * q8; d q and d times the offset for q6, q5, q4, whose offsets are
 * removed through x's group sums; d s q and dmin m for q2). F16 (x not
 * quantized): gemv_atol(k). The bound is sharp: tests/test_quant_dot.c
 * builds an x whose rounding errors all add up and reaches 0.85 of it. */
void quant_int8_error_bound(double *bound, quant_format f, const void *w, const fp16 *x,
                            int rows, int k);

#endif
