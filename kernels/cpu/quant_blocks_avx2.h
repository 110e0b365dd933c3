/*
 * cpu/quant_blocks_avx2.h -- one 256-weight block of each format against
 * x's 8-bit integers, in 256-bit vectors (AVX2, with AVX-VNNI or AVX-512
 * VNNI's vpdpbusd where the build targets them): the arithmetic the
 * integer-dot decode (quant_dot_avx2.c, one token) and the batch GEMM
 * (quant_batch_avx2.c, several tokens per weight read) share, with a
 * block's bytes and their prefetch. Include it
 * only where __AVX2__, __FMA__ and __F16C__ are defined. quant_dot_avx2.c
 * says how each block is read and why its integers are safe.
 */
#ifndef KERNELS_CPU_QUANT_BLOCKS_AVX2_H
#define KERNELS_CPU_QUANT_BLOCKS_AVX2_H

#include "quant_dot.h"

#include <immintrin.h>
#include <stddef.h>
#include <string.h>

/* The preprocessor cannot compare enum constants: one macro per choice. */
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
#define QDOT_VNNI512 1 /* and q2, q6 in 512-bit vectors where BW is there too (QUANT_DOT_ZMM) */
#define QDOT_ISA QUANT_ISA_AVX512VNNI
#elif defined(__AVXVNNI__)
#define QDOT_AVXVNNI 1
#define QDOT_ISA QUANT_ISA_AVXVNNI
#else
#define QDOT_ISA QUANT_ISA_AVX2
#endif


/* ---- the primitives --------------------------------------------------------------- */

static inline __m256i splat8(int v) { return _mm256_set1_epi8((char)v); }
static inline __m256i load32(const void *p) { return _mm256_loadu_si256((const __m256i *)p); }
static inline __m256i load16x2(const void *hi, const void *lo)
{
    return _mm256_loadu2_m128i((const __m128i *)hi, (const __m128i *)lo);
}

/* Eight int32 lanes, lane n = sum of u[i] s[i] + u2[i] s2[i] over bytes
 * 4n..4n+3: u unsigned, s signed bytes. */
static inline __m256i dot_u8s8x2(__m256i u, __m256i s, __m256i u2, __m256i s2)
{
#if defined(QDOT_VNNI512)
    return _mm256_dpbusd_epi32(_mm256_dpbusd_epi32(_mm256_setzero_si256(), u, s), u2, s2);
#elif defined(QDOT_AVXVNNI)
    return _mm256_dpbusd_avx_epi32(_mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), u, s), u2, s2);
#else
    __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(u, s), _mm256_maddubs_epi16(u2, s2));
    return _mm256_madd_epi16(p, _mm256_set1_epi16(1));
#endif
}

static inline __m256i dot_u8s8(__m256i u, __m256i s)
{
#if defined(QDOT_VNNI512)
    return _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, s);
#elif defined(QDOT_AVXVNNI)
    return _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), u, s);
#else
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
#endif
}

static inline __m256 fp16x8(const void *p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p)); }
/* One half broadcast to eight floats: F16C, not half.h's bit-level
 * conversion (a branch and a dozen instructions, per block). Broadcast
 * first, then convert: a broadcast load and vcvtph2ps, where converting
 * the scalar first takes an insert, a conversion and a broadcast. */
static inline __m256 fp16_splat(fp16 h) { return _mm256_cvtph_ps(_mm_set1_epi16((short)h)); }
/* Two adjacent halves (q2's d and dmin) broadcast as floats, from one
 * conversion: lanes [a b a b ...] and two in-lane permutations. */
static inline void fp16_splat2(const fp16 *ab, __m256 *a, __m256 *b)
{
    int32_t pair;
    memcpy(&pair, ab, 4);
    __m256 v = _mm256_cvtph_ps(_mm_set1_epi32(pair));
    *a = _mm256_permute_ps(v, 0x00);
    *b = _mm256_permute_ps(v, 0x55);
}

static inline float hsum(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* ---- q8: signed bytes in natural order ---------------------------------------------- */

/* Eight groups' sums to two vectors: lanes [g0 g1 g2 g3 | g0 g1 g2 g3]
 * (the low and high 16 bytes of each group) for groups 0-3, and 4-7: three
 * horizontal adds per four groups instead of a conversion and an FMA each. */
static inline __m256 block_q8(const q8_block *b, const int8_t *xq, const float *dx)
{
    const int8_t *w = (const int8_t *)b->qs;
    __m256i i[8];
    for (int g = 0; g < 8; g++) {
        __m256i wv = load32(w + 32 * g), xv = load32(xq + 32 * g);
        /* |w| x (x with w's sign): unsigned x signed, the same products */
        i[g] = dot_u8s8(_mm256_sign_epi8(wv, wv), _mm256_sign_epi8(xv, wv));
    }
    __m256i lo = _mm256_hadd_epi32(_mm256_hadd_epi32(i[0], i[1]), _mm256_hadd_epi32(i[2], i[3]));
    __m256i hi = _mm256_hadd_epi32(_mm256_hadd_epi32(i[4], i[5]), _mm256_hadd_epi32(i[6], i[7]));
    __m256 s = _mm256_mul_ps(fp16x8(b->d), _mm256_loadu_ps(dx));
    __m256 s_lo = _mm256_permute2f128_ps(s, s, 0x00), s_hi = _mm256_permute2f128_ps(s, s, 0x11);
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(lo), s_lo, _mm256_mul_ps(_mm256_cvtepi32_ps(hi), s_hi));
}

/* Four vectors whose lanes 0-3 hold the sums of one scale group and 4-7
 * another, added pairwise twice: one lane per group, in the order
 * hadd4_order() says; x's scale vectors are stored in that order. */
static inline __m256i hadd4(__m256i a, __m256i b, __m256i c, __m256i d)
{
    return _mm256_hadd_epi32(_mm256_hadd_epi32(a, b), _mm256_hadd_epi32(c, d));
}

/* ---- q4 and q5: nibbles, low = even weights, high = odd ------------------------------ */

/* The fifth bits of 64 weights, as 0x10 in the bytes of the low-nibble
 * (even weights) and high-nibble (odd) vectors: byte j of either belongs
 * to lane 4p + j / 4, whose qh byte holds bit i for its weight i. */
static inline void q5_high_bits(const uint8_t *qh, __m256i *lo, __m256i *hi)
{
    int64_t bits;
    memcpy(&bits, qh, 8);
    const __m256i spread = _mm256_setr_epi8(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3,
                                            4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7);
    __m256i e = _mm256_shuffle_epi8(_mm256_set1_epi64x(bits), spread);
    const __m256i even = _mm256_set1_epi32(0x40100401), odd = _mm256_set1_epi32((int)0x80200802);
    __m256i he = _mm256_cmpeq_epi8(_mm256_and_si256(e, even), even);
    __m256i ho = _mm256_cmpeq_epi8(_mm256_and_si256(e, odd), odd);
    *lo = _mm256_or_si256(*lo, _mm256_and_si256(he, splat8(0x10)));
    *hi = _mm256_or_si256(*hi, _mm256_and_si256(ho, splat8(0x10)));
}

/* A block's nibbles as the dot products take them: four pairs of vectors
 * of unsigned bytes (even weights, odd), and its weight scales permuted to
 * hadd4's order. The batch kernel unpacks a block once for all the tokens
 * of its tile; the decode unpacks and dots in one go (block_nibbles). */
typedef struct nibbles_unpacked {
    __m256i lo[4], hi[4];
    __m256 dw;
} nibbles_unpacked;

static inline void unpack_nibbles(const fp16 *d, const uint32_t *qs, const uint8_t *qh,
                                  nibbles_unpacked *u)
{
    const __m256i m4 = splat8(0x0F);
    for (int p = 0; p < 4; p++) {
        __m256i v = load32((const uint8_t *)qs + 32 * p);
        u->lo[p] = _mm256_and_si256(v, m4);
        u->hi[p] = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
        if (qh)
            q5_high_bits(qh + 8 * p, &u->lo[p], &u->hi[p]);
    }
    u->dw = _mm256_permutevar8x32_ps(fp16x8(d), _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7));
}

/* Pair p's sums have lanes [group 2p x 4 | group 2p + 1 x 4], so hadd4 of
 * the four pairs gives groups [0 2 4 6 | 1 3 5 7]; x's scales (dv) and
 * offsets (off: -offset dx (x's group sum), 8 or 16) come in that order,
 * and the block's weight scales are permuted to it once. */
static inline __m256 dot_nibbles(const nibbles_unpacked *u, const int8_t *xq, const float *dv,
                                 const float *off)
{
    __m256i i[4];
    for (int p = 0; p < 4; p++)
        i[p] = dot_u8s8x2(u->lo[p], load32(xq + 64 * p), u->hi[p], load32(xq + 64 * p + 32));
    __m256 sum = _mm256_cvtepi32_ps(hadd4(i[0], i[1], i[2], i[3]));
    return _mm256_mul_ps(u->dw, _mm256_fmadd_ps(sum, _mm256_loadu_ps(dv), _mm256_loadu_ps(off)));
}

static inline __m256 block_nibbles(const fp16 *d, const uint32_t *qs, const uint8_t *qh,
                                   const int8_t *xq, const float *dv, const float *off)
{
    nibbles_unpacked u;
    unpack_nibbles(d, qs, qh, &u);
    return dot_nibbles(&u, xq, dv, off);
}

/* ---- q6: nibbles plus 2-bit planes, an int8 scale per 16 ------------------------------ */

/* The 2-bit high parts of 128 weights (32 qh bytes, byte c: weights 4c..4c+3
 * at bits 2i), moved to bits 4-5 and interleaved to match the nibble
 * vectors P (low lanes: weights 0..63 by twos, high: 64..127) and R. */
static inline void q6_high_bits(__m256i qh, __m256i *pe, __m256i *po, __m256i *re, __m256i *ro)
{
    const __m256i m = splat8(0x30);
    __m256i a0 = _mm256_and_si256(_mm256_slli_epi16(qh, 4), m); /* bits 0-1: weights 4c */
    __m256i b0 = _mm256_and_si256(qh, m);                       /* bits 4-5: 4c + 2 */
    __m256i a1 = _mm256_and_si256(_mm256_slli_epi16(qh, 2), m); /* bits 2-3: 4c + 1 */
    __m256i b1 = _mm256_and_si256(_mm256_srli_epi16(qh, 2), m); /* bits 6-7: 4c + 3 */
    *pe = _mm256_or_si256(*pe, _mm256_unpacklo_epi8(a0, b0));
    *po = _mm256_or_si256(*po, _mm256_unpacklo_epi8(a1, b1));
    *re = _mm256_or_si256(*re, _mm256_unpackhi_epi8(a0, b0));
    *ro = _mm256_or_si256(*ro, _mm256_unpackhi_epi8(a1, b1));
}

#if defined(QUANT_DOT_ZMM)
/* AVX-512: the 256-bit block below with both halves (c = 0 low, c = 1
 * high) in one 512-bit vector, x interleaved to match (quant_x8.c): ql's
 * P and R vectors by two lane shuffles of two loads, qh in one load, each
 * half's scales by one permutation. The four sums come back as the halves
 * of two vectors, for the same hadd4 as the 256-bit path. */
typedef struct q6_unpacked {
    __m512i pe, po, re, ro, sp, sr; /* the 6-bit weights, the scales as int16 */
    __m256i sc;                     /* the 16 scales, for the offset */
    fp16 d;                         /* converted at the dot: a register fewer held */
} q6_unpacked;

static inline void unpack_q6(const q6_block *b, q6_unpacked *u)
{
    const uint8_t *ql = (const uint8_t *)b->ql;
    u->sc = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)b->s));
    const __m512i m4 = _mm512_set1_epi8(0x0F), m = _mm512_set1_epi8(0x30);
    const __m512i first = _mm512_broadcast_i32x4(_mm_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 2, 3));
    const __m512i second = _mm512_add_epi8(first, _mm512_set1_epi8(4));
    /* scales as int16: [sub-blocks 0-3 x2, 4-7 x2 | 8-11, 12-15]: the
     * 256-bit path's sq for c = 0 and c = 1 */
    __m512i sq = _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 0, 1, 1, 2, 2, 3, 3), _mm512_castsi256_si512(u->sc));
    u->sp = _mm512_shuffle_epi8(sq, first), u->sr = _mm512_shuffle_epi8(sq, second);
    __m512i lo = _mm512_loadu_si512(ql), hi = _mm512_loadu_si512(ql + 64);
    __m512i p = _mm512_shuffle_i64x2(lo, hi, 0x88), r = _mm512_shuffle_i64x2(lo, hi, 0xDD);
    __m512i pe = _mm512_and_si512(p, m4), po = _mm512_and_si512(_mm512_srli_epi16(p, 4), m4);
    __m512i re = _mm512_and_si512(r, m4), ro = _mm512_and_si512(_mm512_srli_epi16(r, 4), m4);
    __m512i qh = _mm512_loadu_si512(b->qh);
    __m512i a0 = _mm512_and_si512(_mm512_slli_epi16(qh, 4), m), b0 = _mm512_and_si512(qh, m);
    __m512i a1 = _mm512_and_si512(_mm512_slli_epi16(qh, 2), m), b1 = _mm512_and_si512(_mm512_srli_epi16(qh, 2), m);
    u->pe = _mm512_or_si512(pe, _mm512_unpacklo_epi8(a0, b0));
    u->po = _mm512_or_si512(po, _mm512_unpacklo_epi8(a1, b1));
    u->re = _mm512_or_si512(re, _mm512_unpackhi_epi8(a0, b0));
    u->ro = _mm512_or_si512(ro, _mm512_unpackhi_epi8(a1, b1));
    u->d = b->d;
}

static inline __m256 dot_q6(const q6_unpacked *u, const int8_t *xq, const int16_t *s16,
                            const float *dv, const float *off)
{
    __m256i o = _mm256_madd_epi16(u->sc, _mm256_loadu_si256((const __m256i *)s16));
    __m512i ip = _mm512_add_epi16(_mm512_maddubs_epi16(u->pe, _mm512_loadu_si512(xq)),
                                  _mm512_maddubs_epi16(u->po, _mm512_loadu_si512(xq + 64)));
    __m512i ir = _mm512_add_epi16(_mm512_maddubs_epi16(u->re, _mm512_loadu_si512(xq + 128)),
                                  _mm512_maddubs_epi16(u->ro, _mm512_loadu_si512(xq + 192)));
    __m512i i02 = _mm512_madd_epi16(ip, u->sp), i13 = _mm512_madd_epi16(ir, u->sr);
    __m256i h = hadd4(_mm512_castsi512_si256(i02), _mm512_castsi512_si256(i13),
                      _mm512_extracti64x4_epi64(i02, 1), _mm512_extracti64x4_epi64(i13, 1));
    __m256 sum = _mm256_fmadd_ps(_mm256_cvtepi32_ps(h), _mm256_loadu_ps(dv),
                                 _mm256_mul_ps(_mm256_cvtepi32_ps(o), _mm256_loadu_ps(off)));
    return _mm256_mul_ps(fp16_splat(u->d), sum);
}

static inline __m256 block_q6(const q6_block *b, const int8_t *xq, const int16_t *s16,
                              const float *dv, const float *off)
{
    q6_unpacked u;
    unpack_q6(b, &u);
    return dot_q6(&u, xq, s16, dv, off);
}
#else
/* Per 128 weights the two nibble vectors' sums have lanes [groups 4c x 4 |
 * 4c + 2 x 4] (P) and [4c + 1 | 4c + 3] (R); hadd4 gives groups
 * [0 1 4 5 | 2 3 6 7], x's dv order. The offset's lanes are in natural
 * order: only the sum over lanes matters, each lane with its own scale. */
static inline __m256 block_q6(const q6_block *b, const int8_t *xq, const int16_t *s16,
                              const float *dv, const float *off)
{
    const uint8_t *ql = (const uint8_t *)b->ql, *qh = (const uint8_t *)b->qh;
    __m256i sc = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)b->s));
    /* -32 sum over each half-group of x, times its scale: lane g = group g */
    __m256i o = _mm256_madd_epi16(sc, _mm256_loadu_si256((const __m256i *)s16));
    const __m256i m4 = splat8(0x0F);
    const __m256i first = _mm256_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 2, 3,
                                           0, 1, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 2, 3);
    const __m256i second = _mm256_add_epi8(first, splat8(4));
    __m256i i[4];
    for (int c = 0; c < 2; c++) {
        /* scales as int16: low lanes sub-blocks 8c.., high lanes 8c + 4.. */
        __m256i sq = c ? _mm256_permute4x64_epi64(sc, 0xFA) : _mm256_permute4x64_epi64(sc, 0x50);
        __m256i sp = _mm256_shuffle_epi8(sq, first), sr = _mm256_shuffle_epi8(sq, second);
        __m256i p = load16x2(ql + 64 * c + 32, ql + 64 * c), r = load16x2(ql + 64 * c + 48, ql + 64 * c + 16);
        __m256i pe = _mm256_and_si256(p, m4), po = _mm256_and_si256(_mm256_srli_epi16(p, 4), m4);
        __m256i re = _mm256_and_si256(r, m4), ro = _mm256_and_si256(_mm256_srli_epi16(r, 4), m4);
        q6_high_bits(load32(qh + 32 * c), &pe, &po, &re, &ro);
        const int8_t *x = xq + 128 * c;
        __m256i ip = _mm256_add_epi16(_mm256_maddubs_epi16(pe, load32(x)), _mm256_maddubs_epi16(po, load32(x + 32)));
        __m256i ir = _mm256_add_epi16(_mm256_maddubs_epi16(re, load32(x + 64)), _mm256_maddubs_epi16(ro, load32(x + 96)));
        i[2 * c] = _mm256_madd_epi16(ip, sp);
        i[2 * c + 1] = _mm256_madd_epi16(ir, sr);
    }
    __m256 sum = _mm256_fmadd_ps(_mm256_cvtepi32_ps(hadd4(i[0], i[1], i[2], i[3])), _mm256_loadu_ps(dv),
                                 _mm256_mul_ps(_mm256_cvtepi32_ps(o), _mm256_loadu_ps(off)));
    return _mm256_mul_ps(fp16_splat(b->d), sum);
}
#endif

/* ---- q2: four 2-bit planes, a 4-bit scale and min per 16 ---------------------------- */

_Static_assert(offsetof(q2_block, dmin) == offsetof(q2_block, d) + sizeof(fp16),
               "fp16_splat2 reads q2's d and dmin as one pair");

/* The 16 sub-blocks' 4-bit scales as bytes, and the min part: lane g =
 * the sum over group g's two sub-blocks of m x's sum (both block paths). */
static inline __m128i q2_scales_mins(const q2_block *b, const int16_t *s16, __m256i *m)
{
    __m128i sm = _mm_loadu_si128((const __m128i *)b->sm);
    __m128i mins = _mm_and_si128(_mm_srli_epi16(sm, 4), _mm_set1_epi8(0x0F));
    *m = _mm256_madd_epi16(_mm256_cvtepu8_epi16(mins), _mm256_loadu_si256((const __m256i *)s16));
    return _mm_and_si128(sm, _mm_set1_epi8(0x0F));
}

#if defined(QUANT_DOT_ZMM)
/* AVX-512: the block's 64 bytes of planes in one vector (low half weights
 * 0-127, high half 128-255) and x interleaved to match (quant_x8.c), so
 * dword n of every plane holds sub-block n (two 16-bit lanes): four dpbusd
 * leave sub-block n's sum in lane n (|sum| <= 16 x 3 x 127 = 6096, so its
 * low word is the value), and madd by [scale, 0] words scales it. Each
 * lane then meets its group's x scale (group n / 2), and the halves fold
 * to the 8 lanes the rows add up. GCC 12's 1-row loop: 55 instructions
 * a block, where the 256-bit maddubs path took 72 (on a Zen 5 a q2 matrix
 * in L3 was bound by them, not by its bytes: 1.36x ggml's time). */
static inline __m256 block_q2(const q2_block *b, const int8_t *xq, const int16_t *s16,
                              const float *dv, const float *dx)
{
    (void)dv;
    __m256i m;
    __m128i scales = q2_scales_mins(b, s16, &m);
    const __m512i m2 = _mm512_set1_epi8(3);
    __m512i q = _mm512_loadu_si512(b->qs);
    __m512i sub = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_and_si512(q, m2), _mm512_loadu_si512(xq));
    sub = _mm512_dpbusd_epi32(sub, _mm512_and_si512(_mm512_srli_epi16(q, 2), m2), _mm512_loadu_si512(xq + 64));
    sub = _mm512_dpbusd_epi32(sub, _mm512_and_si512(_mm512_srli_epi16(q, 4), m2), _mm512_loadu_si512(xq + 128));
    sub = _mm512_dpbusd_epi32(sub, _mm512_and_si512(_mm512_srli_epi16(q, 6), m2), _mm512_loadu_si512(xq + 192));
    __m512 t = _mm512_cvtepi32_ps(_mm512_madd_epi16(sub, _mm512_cvtepu8_epi32(scales)));
    const __m512i pairs = _mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7);
    t = _mm512_mul_ps(t, _mm512_permutexvar_ps(pairs, _mm512_castps256_ps512(_mm256_loadu_ps(dx))));
    __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(t), 1));
    __m256 sum = _mm256_add_ps(_mm512_castps512_ps256(t), hi);
    __m256 min = _mm256_mul_ps(_mm256_cvtepi32_ps(m), _mm256_loadu_ps(dx));
    __m256 d, dmin;
    fp16_splat2(&b->d, &d, &dmin);
    return _mm256_fmsub_ps(d, sum, _mm256_mul_ps(dmin, min));
}
#else
/* Per 128 weights one lane per sub-block of 16 (8c..8c + 7); one hadd of
 * the two halves gives groups [0 1 4 5 | 2 3 6 7], as for q6. */
static inline __m256 block_q2(const q2_block *b, const int8_t *xq, const int16_t *s16,
                              const float *dv, const float *dx)
{
    __m256i m;
    __m128i scales = q2_scales_mins(b, s16, &m);
    const __m256i m2 = splat8(3);
    const uint8_t *qs = (const uint8_t *)b->qs;
    __m256i i[2];
    for (int c = 0; c < 2; c++) {
        __m256i q = load32(qs + 32 * c);
        const int8_t *x = xq + 128 * c;
        __m256i q0 = _mm256_and_si256(q, m2), q1 = _mm256_and_si256(_mm256_srli_epi16(q, 2), m2);
        __m256i q2 = _mm256_and_si256(_mm256_srli_epi16(q, 4), m2), q3 = _mm256_and_si256(_mm256_srli_epi16(q, 6), m2);
#if defined(QDOT_VNNI512) || defined(QDOT_AVXVNNI)
        /* Dword n of every plane holds sub-block 8c + n (two 16-bit lanes),
         * so four dpbusd leave each sub-block's whole sum in its own int32
         * lane (|sum| <= 16 x 3 x 127 = 6096: its low word is the value),
         * and madd by [scale, 0] words scales it: four dpbusd, an add and
         * a madd, where maddubs takes four, three adds and a madd. */
        __m256i d = _mm256_add_epi32(dot_u8s8x2(q0, load32(x), q1, load32(x + 32)),
                                     dot_u8s8x2(q2, load32(x + 64), q3, load32(x + 96)));
        __m128i s8 = c ? _mm_unpackhi_epi64(scales, scales) : scales;
        i[c] = _mm256_madd_epi16(d, _mm256_cvtepu8_epi32(s8));
#else
        /* word 2n and 2n + 1: sub-block 8c + n's scale */
        __m128i s2 = c ? _mm_unpackhi_epi8(scales, scales) : _mm_unpacklo_epi8(scales, scales);
        __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(q0, load32(x)), _mm256_maddubs_epi16(q1, load32(x + 32)));
        p = _mm256_add_epi16(p, _mm256_maddubs_epi16(q2, load32(x + 64)));
        p = _mm256_add_epi16(p, _mm256_maddubs_epi16(q3, load32(x + 96)));
        i[c] = _mm256_madd_epi16(p, _mm256_cvtepu8_epi16(s2));
#endif
    }
    __m256 sum = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_hadd_epi32(i[0], i[1])), _mm256_loadu_ps(dv));
    __m256 min = _mm256_mul_ps(_mm256_cvtepi32_ps(m), _mm256_loadu_ps(dx));
    __m256 d, dmin;
    fp16_splat2(&b->d, &d, &dmin);
    return _mm256_fmsub_ps(d, sum, _mm256_mul_ps(dmin, min));
}
#endif

/* ---- rows ------------------------------------------------------------------------------ */

/* One block of any format: its sum over lanes still to be taken. */
static inline __m256 block_any(quant_format f, const char *blk, const quant_x8 *x, int i)
{
    const int8_t *xq = x->q + (size_t)QUANT_BLOCK * i;
    const float *dx = x->d + 8 * i, *off = x->off + 8 * i, *dv = x->dv + 8 * i;
    const int16_t *s16 = x->s16 + 16 * i;
    switch (f) {
    case QF_Q8: return block_q8((const q8_block *)blk, xq, dx);
    case QF_Q6: return block_q6((const q6_block *)blk, xq, s16, dv, off);
    case QF_Q5: {
        const q5_block *q = (const q5_block *)blk;
        return block_nibbles(q->d, q->qs, q->qh, xq, dv, off);
    }
    case QF_Q4: {
        const q4_block *q = (const q4_block *)blk;
        return block_nibbles(q->d, q->qs, NULL, xq, dv, off);
    }
    default: return block_q2((const q2_block *)blk, xq, s16, dv, dx);
    }
}

/* A block's bytes as a constant of each format's function, so that a
 * prefetch loop over it unrolls to one instruction a line (quant_formats[]
 * lives in another file: read from it, the loop ran as a loop, a quarter
 * of q2's instructions a block). */
static inline int block_bytes(quant_format f)
{
    switch (f) {
    case QF_Q8: return sizeof(q8_block);
    case QF_Q6: return sizeof(q6_block);
    case QF_Q5: return sizeof(q5_block);
    case QF_Q4: return sizeof(q4_block);
    default: return sizeof(q2_block);
    }
}

static inline void prefetch_block(const char *blk, int bytes, int ahead)
{
    if (ahead > 0)
        for (int o = 0; o < bytes; o += 64)
            __builtin_prefetch(blk + ahead + o);
}

#endif
