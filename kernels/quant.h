/*
 * quant.h -- experiment 03's block quantization formats and kernels.
 *
 * Each format stores a block of 256 weights as small integers with
 * per-(sub-)block scales, in a layout of our own with ggml's bits per
 * weight. The layouts are made for the GPU: lane l of a warp decodes
 * weights 8l..8l+7 of a block with one or two naturally aligned loads, so a
 * warp reads each block's bytes contiguously (coalesced). The decode
 * functions below are the one definition the CPU reference, the CPU kernels
 * and the CUDA kernels all use (RL_HD), and every decoded weight is an exact
 * product in float (at most 24 significant bits), so all three agree to
 * the bit whatever the compiler does with multiply-adds.
 *
 * Kernels: one table (quant.c) names each variant's launcher on each
 * backend, quant.cu (CUDA) and cpu/quant.c, cpu/quant_dot.c (C + OpenMP):
 * a GEMV that dequantizes in registers (decode, one token), and a prefill
 * path that dequantizes the matrix (FP16 on the GPU, FP32 on the CPU) and
 * hands it to the vendor GEMM, as llama.cpp does for large batches. The
 * integer-dot decode (x quantized to 8 bits, cpu/quant_dot.h) runs on both:
 * SIMD on the CPU, dp4a on the GPU (quant_dp4a.h). For a few tokens (the
 * batch part), an integer GEMM on the CPU (cpu/quant_batch_avx2.c) and
 * tensor-core MMAs on weights dequantized in registers on the GPU
 * (quant_mma.cuh).
 * The double-precision reference is in ref/quant.c. Adding a variant is
 * one function per backend and one row.
 */
#ifndef KERNELS_QUANT_H
#define KERNELS_QUANT_H

#include "gemv.h"
#include "half.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#define QUANT_STATIC_ASSERT static_assert
#else
#define QUANT_STATIC_ASSERT _Static_assert
#endif

typedef enum quant_format {
    QF_F16 = 0, /* 16 bits: the unquantized model */
    QF_Q8,      /* 8.5 */
    QF_Q6,      /* 6.5625 */
    QF_Q5,      /* 5.5 */
    QF_Q4,      /* 4.5 */
    QF_Q2,      /* 2.625 */
    QF_COUNT
} quant_format;

enum { QUANT_BLOCK = 256 }; /* weights per block, every format */

/* ---- the block layouts ------------------------------------------------------
 * Lane l (0..31) owns weights 8l..8l+7 of a block; "sub-block" scales cover
 * 32 weights (4 lanes) or 16 (2 lanes). Integers are little-endian. */

/* F16: 256 halves. 16 bits per weight. */
typedef struct qf16_block { fp16 w[256]; } qf16_block;

/* Q8: 8 sub-blocks of 32, each an FP16 scale d and 32 int8 q, w = d q.
 * Lane l: the 8-byte word qs[l]. (16 + 256) * 8 / 256 = 8.5 bits. */
typedef struct q8_block { fp16 d[8]; uint64_t qs[32]; } q8_block;

/* Q6: FP16 d for the block, an int8 scale s per sub-block of 16, 6-bit
 * q in 0..63: w = d s (q - 32). Low 4 bits in ql (lane l: ql[2l], ql[2l+1]),
 * high 2 bits in qh (lane l: qh[l]). (128 + 64 + 16 + 2) * 8 / 256 = 6.5625
 * bits; 210 bytes, so blocks are only 2-byte aligned. */
typedef struct q6_block { uint16_t ql[64]; uint16_t qh[32]; int8_t s[16]; fp16 d; } q6_block;

/* Q5: an FP16 d per sub-block of 32, 5-bit q in 0..31: w = d (q - 16).
 * Low 4 bits in qs[l], the fifth bit of weight 8l+i is bit i of qh[l].
 * (16 + 32 + 128) * 8 / 256 = 5.5 bits. */
typedef struct q5_block { fp16 d[8]; uint8_t qh[32]; uint32_t qs[32]; } q5_block;

/* Q4: an FP16 d per sub-block of 32, 4-bit q in 0..15: w = d (q - 8);
 * nibble i of qs[l] is weight 8l+i. (16 + 128) * 8 / 256 = 4.5 bits. */
typedef struct q4_block { fp16 d[8]; uint32_t qs[32]; } q4_block;

/* Q2: FP16 d and dmin for the block; per sub-block of 16 a 4-bit scale s
 * and a 4-bit min m in one byte (s low, m high); 2-bit q in 0..3:
 * w = d s q - dmin m. Bits 2i..2i+1 of qs[l] are weight 8l+i.
 * (4 + 16 + 64) * 8 / 256 = 2.625 bits. */
typedef struct q2_block { fp16 d, dmin; uint8_t sm[16]; uint16_t qs[32]; } q2_block;

QUANT_STATIC_ASSERT(sizeof(qf16_block) == 512, "F16 block");
QUANT_STATIC_ASSERT(sizeof(q8_block) == 272, "Q8 block: 8.5 bits per weight");
QUANT_STATIC_ASSERT(sizeof(q6_block) == 210, "Q6 block: 6.5625 bits per weight");
QUANT_STATIC_ASSERT(sizeof(q5_block) == 176, "Q5 block: 5.5 bits per weight");
QUANT_STATIC_ASSERT(sizeof(q4_block) == 144, "Q4 block: 4.5 bits per weight");
QUANT_STATIC_ASSERT(sizeof(q2_block) == 84, "Q2 block: 2.625 bits per weight");

/* ---- decoding: one definition for the CPU and the GPU --------------------- */

/* A small unsigned integer q (< 2^23) minus an offset, as a float, without
 * an int-to-float conversion (slow on GPUs: a quarter of the FMA rate):
 * the bits 0x4B000000 | q are the float 2^23 + q, exactly. */
RL_HD float quant_uint_minus(uint32_t q, float offset)
{
    return rl_bits_to_float(0x4B000000u | q) - (8388608.0f + offset);
}

RL_HD void qf16_decode8(const qf16_block *b, int lane, float w[8])
{
    for (int i = 0; i < 8; i++)
        w[i] = fp16_to_float(b->w[8 * lane + i]);
}

RL_HD void q8_decode8(const q8_block *b, int lane, float w[8])
{
    float d = fp16_to_float(b->d[lane >> 2]);
    uint64_t q = b->qs[lane];
    for (int i = 0; i < 8; i++) /* int8 as unsigned with the sign bit flipped: q + 128 */
        w[i] = d * quant_uint_minus((uint32_t)((q >> (8 * i)) & 0xffu) ^ 0x80u, 128.0f);
}

RL_HD void q6_decode8(const q6_block *b, int lane, float w[8])
{
    float ds = fp16_to_float(b->d) * (float)b->s[lane >> 1]; /* exact: 11 + 8 bits */
    uint32_t lo = b->ql[2 * lane] | ((uint32_t)b->ql[2 * lane + 1] << 16);
    uint32_t hi = b->qh[lane];
    for (int i = 0; i < 8; i++) {
        uint32_t q = ((lo >> (4 * i)) & 15u) | (((hi >> (2 * i)) & 3u) << 4);
        w[i] = ds * quant_uint_minus(q, 32.0f);
    }
}

RL_HD void q5_decode8(const q5_block *b, int lane, float w[8])
{
    float d = fp16_to_float(b->d[lane >> 2]);
    uint32_t lo = b->qs[lane], hi = b->qh[lane];
    for (int i = 0; i < 8; i++) {
        uint32_t q = ((lo >> (4 * i)) & 15u) | (((hi >> i) & 1u) << 4);
        w[i] = d * quant_uint_minus(q, 16.0f);
    }
}

RL_HD void q4_decode8(const q4_block *b, int lane, float w[8])
{
    float d = fp16_to_float(b->d[lane >> 2]);
    uint32_t q = b->qs[lane];
    for (int i = 0; i < 8; i++)
        w[i] = d * quant_uint_minus((q >> (4 * i)) & 15u, 8.0f);
}

RL_HD void q2_decode8(const q2_block *b, int lane, float w[8])
{
    uint32_t sm = b->sm[lane >> 1];
    float scale = fp16_to_float(b->d) * (float)(sm & 15u);  /* exact: 11 + 4 bits */
    float min = fp16_to_float(b->dmin) * (float)(sm >> 4); /* exact */
    uint32_t q = b->qs[lane];
    for (int i = 0; i < 8; i++) /* scale * q is exact: one rounding, in the subtraction */
        w[i] = scale * quant_uint_minus((q >> (2 * i)) & 3u, 0.0f) - min;
}

/* Lane l's eight weights of block `index` in a row of any format. */
RL_HD void quant_decode8(quant_format f, const void *row, int index, int lane, float w[8])
{
    switch (f) {
    case QF_F16: qf16_decode8((const qf16_block *)row + index, lane, w); break;
    case QF_Q8: q8_decode8((const q8_block *)row + index, lane, w); break;
    case QF_Q6: q6_decode8((const q6_block *)row + index, lane, w); break;
    case QF_Q5: q5_decode8((const q5_block *)row + index, lane, w); break;
    case QF_Q4: q4_decode8((const q4_block *)row + index, lane, w); break;
    default: q2_decode8((const q2_block *)row + index, lane, w); break;
    }
}

/* ---- formats, sizes, encoders (cpu/quant_format.c) ------------------------- */

typedef struct quant_format_info {
    quant_format id;
    const char *name;      /* "q4" */
    const char *ggml_peer; /* the ggml block with the same bits: "q4_0 / q4_K" */
    int block_bytes;       /* per QUANT_BLOCK weights */
    const char *layout;
} quant_format_info;

extern const quant_format_info quant_formats[QF_COUNT];

double quant_bits_per_weight(quant_format f); /* 8 * block_bytes / 256, exactly */
/* The bytes of this many weights in every format together. */
double quant_bytes_all_formats(double weights);
/* A row of k weights (k a multiple of 256); rows are packed back to back. */
size_t quant_row_bytes(quant_format f, int k);
/* Encodes one row of k floats (the host; C). */
void quant_encode_row(quant_format f, void *dst, const float *src, int k);
/* Encodes rows x k weights given as halves, in parallel. */
void quant_encode_matrix(quant_format f, void *dst, const fp16 *src, int rows, int k);
/* A row decoded with the CPU kernels' vector decoders (cpu/quant.c): the
 * reference's floats (quant_decode_row), bit for bit, eight at a time. */
void quant_decode_row_cpu(quant_format f, const void *row, float *dst, int k);
/* Parses "q4" (or "Q4"); QF_COUNT when unknown. */
quant_format quant_format_by_name(const char *name);

/* ---- kernels ----------------------------------------------------------------- */

/* BATCH: any n, made for a few tokens (experiment 03's batch part). */
typedef enum quant_phase { QUANT_DECODE = 0, QUANT_PREFILL = 1, QUANT_BATCH = 2 } quant_phase;

typedef struct quant_args {
    quant_format format;
    float *y;          /* n x rows */
    const void *w;     /* rows x quant_row_bytes(format, k) */
    const fp16 *x;     /* n x k */
    int rows, k, n;    /* decode: n = 1 */
    void *scratch;     /* quant_scratch() of it, or NULL */
    struct CUstream_st *stream;
} quant_args;

typedef void (*quant_launcher_fn)(const quant_args *a);
typedef size_t (*quant_scratch_fn)(int rows, int k, int n);

/* One row per variant (quant.c); see kernels/common.h. Every variant runs
 * every format. */
typedef struct quant_variant {
    KERNEL_VARIANT_HEAD;
    quant_phase phase;
    quant_launcher_fn cpu, cuda;              /* NULL where a backend lacks it */
    quant_scratch_fn cpu_scratch, cuda_scratch; /* NULL: no scratch */
    /* The path computes with FP16-rounded weights (the GPU's prefill,
     * before its FP16 GEMM): its reference rounds them too. */
    bool cpu_rounds_to_fp16, cuda_rounds_to_fp16;
    /* x is rounded to 8 bits before the dot products: validate within
     * quant_int8_error_bound() (cpu/quant_dot.h), not a fixed tolerance. */
    bool quantizes_x;
} quant_variant;

extern const quant_variant quant_variants[]; /* ended by a zero row */
extern const kernel_family quant_family;

/* A row on one backend (KERNEL_CPU or KERNEL_CUDA): its launcher (NULL:
 * not there), the scratch bytes it needs, whether it rounds to FP16. */
static inline quant_launcher_fn quant_launcher(const quant_variant *v, int backend)
{
    return backend == KERNEL_CUDA ? v->cuda : v->cpu;
}

static inline size_t quant_scratch(const quant_variant *v, int backend, int rows, int k, int n)
{
    quant_scratch_fn f = backend == KERNEL_CUDA ? v->cuda_scratch : v->cpu_scratch;
    return f ? f(rows, k, n) : 0;
}

static inline bool quant_rounds_to_fp16(const quant_variant *v, int backend)
{
    return backend == KERNEL_CUDA ? v->cuda_rounds_to_fp16 : v->cpu_rounds_to_fp16;
}

/* The launchers (cpu/quant.c, cpu/quant_dot.c, quant.cu). */
void quant_decode_dequant_cpu(const quant_args *a);
size_t quant_decode_dequant_cpu_scratch(int rows, int k, int n);
void quant_prefill_cpu(const quant_args *a);
size_t quant_prefill_cpu_scratch(int rows, int k, int n);
void quant_decode_int8_best(const quant_args *a); /* the best ISA of the build */
size_t quant_int8_scratch(int rows, int k, int n);
void quant_batch_int8_best(const quant_args *a); /* any n, the best ISA of the build */
size_t quant_batch_int8_scratch(int rows, int k, int n);
void quant_decode_dequant_cuda(const quant_args *a);
void quant_decode_dp4a_cuda(const quant_args *a); /* the GPU's integer-dot decode (quant_dp4a.h) */
void quant_prefill_cuda(const quant_args *a);
size_t quant_prefill_cuda_scratch(int rows, int k, int n);
void quant_batch_mma_cuda(const quant_args *a); /* any n (quant_mma.cuh) */
size_t quant_batch_mma_cuda_scratch(int rows, int k, int n);

/* ---- the reference (ref/quant.c) ------------------------------------------------ */

/* Decodes one row to floats, with quant_decode8: what every kernel sees. */
void quant_decode_row(quant_format f, const void *row, float *dst, int k);

/* y[t * rows + r] in double precision from the decoded weights; with
 * round_to_fp16, each weight is first rounded to FP16, as the GPU's
 * prefill path does before its FP16 GEMM. */
void quant_reference(double *y, quant_format f, const void *w, const fp16 *x, int rows, int k,
                     int n, bool round_to_fp16);

#ifdef __cplusplus
}
#endif
#endif
