/*
 * quant_dp4a.h -- the GPU's integer-dot decode (quant.cu, variant 3), one
 * lane at a time: what lane l of a warp adds to a row's dot product for
 * one block of weights, once x is in 8-bit integers (cpu/quant_dot.h's
 * quantization: one float scale per 32 values, the same arithmetic).
 *
 * Lane l owns weights 8l..8l+7 of a block (quant.h's layout) and x's
 * integers 8l..8l+7, as two words of four signed bytes (x0: 8l..8l+3, x1:
 * 8l+4..8l+7). Its weights become words of four small integers too, and
 * dp4a (four byte products and a sum in one instruction) does the dot
 * product: about one instruction per weight, where dequantizing to floats
 * costs five or six (quant_decode8: shift, mask, convert, scale, multiply-
 * add), which on an H200 is more than the memory can feed (gemv_dequant's
 * mbu on the packed formats, results/reference/h200/exp-03.csv). The
 * nibble formats split a lane's weights into even and odd ones (low and
 * high nibbles of the same bytes); x's bytes are permuted to match (a byte
 * permute, prmt).
 *
 * Everything here is RL_HD: on the device dp4a and prmt are the hardware
 * instructions, on the host loops with the same results, so the CPU tests
 * check every format's bit unpacking against quant_block_split's integers
 * (tests/test_quant_dot.c) before a GPU runs it.
 */
#ifndef KERNELS_QUANT_DP4A_H
#define KERNELS_QUANT_DP4A_H

#include "quant.h"

/* sum of the four signed byte products of a and b, plus c */
RL_HD int32_t rl_dp4a(uint32_t a, uint32_t b, int32_t c)
{
#ifdef __CUDA_ARCH__
    return __dp4a((int)a, (int)b, c);
#else
    for (int i = 0; i < 4; i++)
        c += (int32_t)(int8_t)(a >> (8 * i)) * (int32_t)(int8_t)(b >> (8 * i));
    return c;
#endif
}

/* Byte n of the result is byte (selector nibble n) of the eight bytes
 * b:a (a's bytes are 0..3, b's 4..7): CUDA's __byte_perm. */
RL_HD uint32_t rl_prmt(uint32_t a, uint32_t b, uint32_t selector)
{
#ifdef __CUDA_ARCH__
    return __byte_perm(a, b, selector);
#else
    uint64_t v = ((uint64_t)b << 32) | a;
    uint32_t r = 0;
    for (int n = 0; n < 4; n++)
        r |= (uint32_t)((v >> (8 * ((selector >> (4 * n)) & 7u))) & 0xffu) << (8 * n);
    return r;
#endif
}

/* The nibbles at bits 0, 4, 8, 12 of v into the low nibbles of bytes 0..3. */
RL_HD uint32_t quant_spread_nibbles(uint32_t v)
{
    v = (v | (v << 8)) & 0x00ff00ffu; /* nibbles 0,1 in byte 0; 2,3 in byte 2 */
    return (v | (v << 4)) & 0x0f0f0f0fu;
}

/* Bits 0, 2, 4, 6 of v to bit 4 of bytes 0..3: the four shifts (4, 10, 16,
 * 22) in one multiply; the cross products land on other bits, and their
 * carries stop short of bits 4, 12, 20, 28. */
RL_HD uint32_t quant_spread_bits_to_bit4(uint32_t v)
{
    return ((v & 0x55u) * 0x00410410u) & 0x10101010u;
}

/* x, as a lane holds it: its eight integers and their scale. */
typedef struct quant_x_lane {
    uint32_t x0, x1; /* bytes: x[8l .. 8l+3], x[8l+4 .. 8l+7] */
    uint32_t even, odd; /* bytes: x[8l + 0, 2, 4, 6], x[8l + 1, 3, 5, 7] */
    int32_t sum;     /* x[8l] + ... + x[8l+7] */
    float d;         /* the scale of the lane's group of 32 */
} quant_x_lane;

RL_HD quant_x_lane quant_x_lane_make(uint32_t x0, uint32_t x1, float d)
{
    quant_x_lane x = {x0, x1, rl_prmt(x0, x1, 0x6420u), rl_prmt(x0, x1, 0x7531u), 0, d};
    x.sum = rl_dp4a(x0, 0x01010101u, rl_dp4a(x1, 0x01010101u, 0));
    return x;
}

/* A lane's x as the kernel keeps it in shared memory, precomputed once per
 * thread block: four words, read with one 16-byte load, instead of two
 * permutes and two dp4a (the sum) per row and block. The nibble formats
 * use even, odd and sum; q8 (natural order) x0 and x1 in their places. */
typedef struct quant_x_words { uint32_t a, b, sum, d; } quant_x_words;

RL_HD quant_x_words quant_x_words_pack(const quant_x_lane *x, bool natural)
{
    quant_x_words w = {natural ? x->x0 : x->even, natural ? x->x1 : x->odd, (uint32_t)x->sum,
                       rl_float_to_bits(x->d)};
    return w;
}

RL_HD quant_x_lane quant_x_words_lane(quant_x_words w, bool natural)
{
    quant_x_lane x = {natural ? w.a : 0u, natural ? w.b : 0u, natural ? 0u : w.a, natural ? 0u : w.b,
                      (int32_t)w.sum, rl_bits_to_float(w.d)};
    return x;
}

/* Even and odd weights' integers (q in the format's own range), and the
 * dot with x's even and odd bytes. */
RL_HD int32_t quant_dot_even_odd(uint32_t even, uint32_t odd, const quant_x_lane *x)
{
    return rl_dp4a(even, x->even, rl_dp4a(odd, x->odd, 0));
}

/* ---- each format: a lane's raw words, loaded once, and what they add ----
 * Loads first (a struct of the lane's words, raw: no conversion, not even
 * of a scale), arithmetic later: the kernel issues several blocks' loads
 * before it uses the first, and an instruction that used a loaded value
 * in the load function would stall the warp there until the data came,
 * with nothing of the block before it computed under the wait. */

/* q8, q5 and q4 start each block with eight FP16 scales, d[lane / 4]:
 * _words loads a lane's words without it (d = 0), _load with it. The
 * CUDA kernel loads a group of blocks' scales together instead
 * (quant_group_scale_*, below). */
typedef struct q8_lane { uint32_t lo, hi; fp16 d; } q8_lane;
RL_HD q8_lane q8_lane_words(const q8_block *b, int lane)
{
    uint64_t q = b->qs[lane];
    q8_lane w = {(uint32_t)q, (uint32_t)(q >> 32), 0};
    return w;
}
RL_HD q8_lane q8_lane_load(const q8_block *b, int lane)
{
    q8_lane w = q8_lane_words(b, lane);
    w.d = b->d[lane >> 2];
    return w;
}
RL_HD float q8_lane_dot(q8_lane w, const quant_x_lane *x)
{
    int32_t s = rl_dp4a(w.lo, x->x0, rl_dp4a(w.hi, x->x1, 0));
    return (fp16_to_float(w.d) * x->d) * (float)s;
}

/* q4: w = d (q - 8): d x (q - 8) summed = d dx (q . xq - 8 sum xq). */
typedef struct q4_lane { uint32_t q; fp16 d; } q4_lane;
RL_HD q4_lane q4_lane_words(const q4_block *b, int lane)
{
    q4_lane w = {b->qs[lane], 0};
    return w;
}
RL_HD q4_lane q4_lane_load(const q4_block *b, int lane)
{
    q4_lane w = q4_lane_words(b, lane);
    w.d = b->d[lane >> 2];
    return w;
}
RL_HD float q4_lane_dot(q4_lane w, const quant_x_lane *x)
{
    int32_t s = quant_dot_even_odd(w.q & 0x0f0f0f0fu, (w.q >> 4) & 0x0f0f0f0fu, x) - 8 * x->sum;
    return (fp16_to_float(w.d) * x->d) * (float)s;
}

/* q5: the fifth bit of weight i is bit i of qh. */
typedef struct q5_lane { uint32_t q, h; fp16 d; } q5_lane;
RL_HD q5_lane q5_lane_words(const q5_block *b, int lane)
{
    q5_lane w = {b->qs[lane], b->qh[lane], 0};
    return w;
}
RL_HD q5_lane q5_lane_load(const q5_block *b, int lane)
{
    q5_lane w = q5_lane_words(b, lane);
    w.d = b->d[lane >> 2];
    return w;
}
RL_HD float q5_lane_dot(q5_lane w, const quant_x_lane *x)
{
    uint32_t even = (w.q & 0x0f0f0f0fu) | quant_spread_bits_to_bit4(w.h);
    uint32_t odd = ((w.q >> 4) & 0x0f0f0f0fu) | quant_spread_bits_to_bit4(w.h >> 1);
    int32_t s = quant_dot_even_odd(even, odd, x) - 16 * x->sum;
    return (fp16_to_float(w.d) * x->d) * (float)s;
}

/* q6: the top two bits of weight i are bits 2i, 2i+1 of qh; one int8
 * scale per 16 weights (two lanes), so a lane has one. */
typedef struct q6_lane { uint16_t lo, hi, d; int8_t s; uint32_t h; } q6_lane;
RL_HD q6_lane q6_lane_load(const q6_block *b, int lane)
{
    q6_lane w = {b->ql[2 * lane], b->ql[2 * lane + 1], b->d, b->s[lane >> 1], b->qh[lane]};
    return w;
}
RL_HD float q6_lane_dot(q6_lane w, const quant_x_lane *x)
{
    uint32_t q = w.lo | ((uint32_t)w.hi << 16);
    uint32_t even = (q & 0x0f0f0f0fu) | (quant_spread_nibbles(w.h & 0x3333u) << 4);
    uint32_t odd = ((q >> 4) & 0x0f0f0f0fu) | (quant_spread_nibbles((w.h >> 2) & 0x3333u) << 4);
    int32_t s = quant_dot_even_odd(even, odd, x) - 32 * x->sum;
    return (fp16_to_float(w.d) * (float)w.s * x->d) * (float)s;
}

/* q2: w = d s q - dmin m, 2-bit q at bits 2i of qs; s and m per 16 weights. */
typedef struct q2_lane { uint32_t q; fp16 d, dmin; uint8_t sm; } q2_lane;
RL_HD q2_lane q2_lane_load(const q2_block *b, int lane)
{
    q2_lane w = {b->qs[lane], b->d, b->dmin, b->sm[lane >> 1]};
    return w;
}
RL_HD float q2_lane_dot(q2_lane w, const quant_x_lane *x)
{
    int32_t s = quant_dot_even_odd(quant_spread_nibbles(w.q & 0x3333u),
                                   quant_spread_nibbles((w.q >> 2) & 0x3333u), x);
    float scale = fp16_to_float(w.d) * (float)(w.sm & 15u), min = fp16_to_float(w.dmin) * (float)(w.sm >> 4);
    return x->d * (scale * (float)s - min * (float)x->sum);
}

/* ---- a group's scales, loaded together (q8, q5, q4 in quant.cu) --------
 * A lane's own scale costs a 2-byte load and a register for each block in
 * flight, for 2 of the block's bytes a lane. A warp loads the 32 scales of
 * QUANT_GROUP_BLOCKS blocks at once instead, one a lane (lane l: scale
 * l % 8 of block l / 8 of the group), and at the dot of block u lane l
 * takes its scale, d[l / 4] of block u, from lane _source(u, l) with one
 * shuffle (tests/test_quant.c checks that every lane gets its own). */
enum { QUANT_GROUP_BLOCKS = 4 }; /* 4 blocks x 8 scales = 32 lanes */

RL_HD int quant_group_scale_block(int lane) { return lane >> 3; }
RL_HD int quant_group_scale_index(int lane) { return lane & 7; }
RL_HD int quant_group_scale_source(int block, int lane) { return 8 * block + (lane >> 2); }

/* ---- the launch's shape (quant.cu's gemv_dp4a; plain C, so the CPU tests
 * check it) ----------------------------------------------------------------
 * A warp per rows_per_warp rows, up to 16 warps per thread block: each
 * block quantizes all of x into its shared memory, so fewer, larger blocks
 * quantize it fewer times. A short matrix would then leave SMs idle: the
 * 1024-row k and v projections, a row per warp, are 64 blocks of 16 warps
 * on an H200's 132 SMs. So the blocks halve (16, 8, 4, then 2 warps) while
 * the grid has fewer blocks than the device has SMs: 1024 rows become 256
 * blocks of 4 warps, on every SM. Past one block per SM the warps per SM
 * are what the rows give; more blocks would only quantize x more often
 * (4096 rows stay 256 blocks of 16). */
enum { QUANT_DP4A_MAX_WARPS = 16, QUANT_DP4A_MIN_WARPS = 2 };

static inline int quant_dp4a_warps_per_block(long long rows, int rows_per_warp, int sms)
{
    long long warps = (rows + rows_per_warp - 1) / rows_per_warp;
    int w = QUANT_DP4A_MAX_WARPS;
    while (w > QUANT_DP4A_MIN_WARPS && (warps + w - 1) / w < sms)
        w /= 2;
    return w;
}

/* Lane l's share of a block of any format but F16 (the tests; the kernel
 * calls the format's pair directly). */
RL_HD float quant_lane_dot(quant_format f, const void *block, int lane, const quant_x_lane *x)
{
    switch (f) {
    case QF_Q8: return q8_lane_dot(q8_lane_load((const q8_block *)block, lane), x);
    case QF_Q6: return q6_lane_dot(q6_lane_load((const q6_block *)block, lane), x);
    case QF_Q5: return q5_lane_dot(q5_lane_load((const q5_block *)block, lane), x);
    case QF_Q4: return q4_lane_dot(q4_lane_load((const q4_block *)block, lane), x);
    default: return q2_lane_dot(q2_lane_load((const q2_block *)block, lane), x);
    }
}

#endif
