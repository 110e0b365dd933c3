/*
 * gemv.h -- experiment 02's kernels: one linear layer with FP16 weights,
 * applied to n tokens at once.
 *
 *   y[t][r] = sum_k w[r][k] * x[t][k]     r < rows, t < n
 *
 * w is rows x k, row-major (each output's weights contiguous, as in a
 * PyTorch Linear or a GGUF file); x is n x k FP16 (token-major); y is
 * n x rows FP32. At n = 1 this is a GEMV: 2 FLOPs and 2 bytes per weight,
 * arithmetic intensity ~1, memory-bound on any machine. As n grows each
 * weight read serves n tokens, and the layer turns into a compute-bound
 * GEMM.
 *
 * One table (gemv.c) names each variant's launcher on each backend:
 * gemv.cu (CUDA) and cpu/gemv.c (C + OpenMP, OpenBLAS); the reference is
 * in ref/gemv.c. Adding a variant is one function per backend and one row.
 */
#ifndef KERNELS_GEMV_H
#define KERNELS_GEMV_H

#include "common.h"
#include "half.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gemv_args {
    float *y;         /* n x rows */
    const fp16 *w;    /* rows x k (gemv_fp16_cuda: k a multiple of 8, w and x */
    const fp16 *x;    /* n x k     16-byte aligned; gemv_cuda_shape_ok) */
    int rows, k, n;
    void *scratch;    /* gemv_variant.scratch_bytes() of it, or NULL */
    struct CUstream_st *stream; /* CUDA only */
} gemv_args;

/* gemv_call: a launcher and its arguments (kernels/common.h). */
KERNEL_CALL_TYPE(gemv, gemv_args)

/* One row per variant (gemv.c); see kernels/common.h. */
typedef struct gemv_variant {
    KERNEL_VARIANT_HEAD;
    int max_n; /* the most tokens it takes, 0: any number */
    void (*cpu)(const gemv_args *a);
    void (*cuda)(const gemv_args *a);
    /* Scratch memory on the CPU backend, or NULL for none (the CUDA
     * variants need none). */
    size_t (*cpu_scratch)(int rows, int k, int n);
} gemv_variant;

enum { GEMV_MAX_BATCH = 8 }; /* tokens the hand-written kernels take */

/* Whether the hand-written kernels (variant 2 of each backend) take n
 * tokens: 1 to GEMV_MAX_BATCH (the CPU: one specialization each; the GPU:
 * the 8 token columns of its tile). If not, why gets the sentence their
 * launchers fail with. */
bool gemv_batch_ok(int n, char *why, size_t len);

/* ---- the CUDA bandwidth kernel's launch (gemv.cu's gemv_tile; plain C,
 * so the CPU tests and the static GPU model compute it without a GPU) ----
 * A warp computes a tile of 16 rows x 8 token columns with tensor-core
 * products (mma m16n8k8, FP32 sums): per step each lane loads 16 bytes of
 * each of two rows and 16 bytes of one token, and one x load serves 16
 * rows whatever n is. A warp keeps GEMV_CUDA_STEPS steps (4 KB of weights)
 * in flight. `split` warps of a thread block share one tile's k and add
 * their sums in shared memory: a matrix of few rows still has warps
 * enough to keep HBM busy. The plan takes the largest split (8, 4, 2, 1)
 * whose grid is resident in one wave (blocks_per_sm, the kernel's
 * occupancy, on every SM) and that leaves every warp at least one whole
 * round of steps; so all the warps start together and, with the same work
 * each, end together: no second, partial wave. A matrix too tall for one
 * wave at split 1 takes several. The plan is the same at every n. */
enum {
    GEMV_CUDA_TILE_ROWS = 16,  /* rows per warp: the mma tile's M */
    GEMV_CUDA_BLOCK_WARPS = 8, /* 256 threads */
    GEMV_CUDA_STEPS = 4,       /* steps of 32 halves per row a warp has in flight */
    GEMV_CUDA_MAX_SPLIT = 8,
};

typedef struct gemv_cuda_plan {
    int rows_per_warp;   /* GEMV_CUDA_TILE_ROWS */
    int split;           /* warps sharing a tile's k: 1, 2, 4 or 8 */
    int tiles_per_block; /* GEMV_CUDA_BLOCK_WARPS / split */
    int threads;         /* per block: 32 GEMV_CUDA_BLOCK_WARPS */
    long long tiles;     /* ceil(rows / 16) */
    long long blocks;    /* at least 1 */
} gemv_cuda_plan;

/* The plan for rows x k on a device of sms SMs that hold blocks_per_sm of
 * the kernel's blocks each (the occupancy API's answer on a GPU; from
 * ptxas's registers in the static model). sms or blocks_per_sm < 1: no
 * split. */
gemv_cuda_plan gemv_cuda_plan_for(int rows, int k, int sms, int blocks_per_sm);

/* Whether the CUDA kernel can read this layer: rows and k not negative, k
 * a multiple of 8 (a 16-byte load is 8 halves of one row), w and x
 * 16-byte aligned (then every row and token is). If not, why gets the
 * sentence gemv_fp16_cuda fails with. */
bool gemv_cuda_shape_ok(int rows, int k, const void *w, const void *x, char *why, size_t len);

extern const gemv_variant gemv_variants[]; /* ended by a zero row */
extern const kernel_family gemv_family;

/* Whether the variant takes n tokens. */
static inline bool gemv_takes(const gemv_variant *v, int n) { return !v->max_n || n <= v->max_n; }

/* The scratch bytes a variant needs on a backend (KERNEL_CPU or
 * KERNEL_CUDA): 0 for none. */
static inline size_t gemv_scratch_bytes(const gemv_variant *v, int backend, int rows, int k, int n)
{
    return backend == KERNEL_CPU && v->cpu_scratch ? v->cpu_scratch(rows, k, n) : 0;
}

/* The launchers (cpu/gemv.c, gemv.cu). */
void gemv_scalar_cpu(const gemv_args *a);
void gemv_scalar_cuda(const gemv_args *a);
size_t gemv_scalar_cpu_scratch(int rows, int k, int n);

/* The library GEMM of each backend, for other kernel families that hand a
 * dequantized matrix on: cuBLAS on the GPU, OpenBLAS SGEMM on the CPU
 * (after converting w and x to FP32 in the scratch). */
void gemv_library_cuda(const gemv_args *a);
void gemv_library_cpu(const gemv_args *a);
size_t gemv_library_cpu_scratch(int rows, int k, int n);
/* The CPU library GEMM on blocks of 64 rows converted in each thread's
 * buffer (variant 4: each weight read once, in FP16). */
void gemv_library_tiled_cpu(const gemv_args *a);
size_t gemv_library_tiled_cpu_scratch(int rows, int k, int n);
/* The CPU library GEMM on FP32 operands already in place: y = x w^T. */
void gemv_sgemm_f32(float *y, const float *w, const float *x, int rows, int k, int n);
/* Variant 2 of each backend, the bandwidth kernel, for FP16 weights in
 * other families (quant.h's F16 format). */
void gemv_fp16_cuda(const gemv_args *a);
void gemv_fp16_cpu(const gemv_args *a);
/* The CPU kernel for any n >= 1: 8 tokens at a time over panels of rows
 * that stay in the L2, each weight read from memory once per call. */
void gemv_fp16_batch_cpu(const gemv_args *a);
/* The CPU kernel's rows per step at n = 1, chosen at run time (a tuner
 * times the -1-ended candidates on the machine; the default is the
 * fallback). set_rows says false for a row count that is no candidate. */
extern const int GEMV_FP16_ROWS[];
int gemv_fp16_rows_default(void);
int gemv_fp16_get_rows(void);
bool gemv_fp16_set_rows(int rows);
/* And its prefetch distance in bytes (0, the default: none), from the
 * -1-ended candidates; set_prefetch says false for any other. */
extern const int GEMV_FP16_PREFETCH[];
int gemv_fp16_get_prefetch(void);
bool gemv_fp16_set_prefetch(int bytes);
/* Its vector width in floats (16 on AVX-512, else 8): part of what a
 * cached choice was timed on. */
int gemv_fp16_lanes(void);
/* FP16 to FP32 on the CPU, in parallel. */
void gemv_convert_fp16(float *dst, const fp16 *src, size_t n);

/* ---- counting, the arithmetic of the roofline ------------------------- */

/* Multiply-adds count two FLOPs. */
static inline double gemv_flops(double rows, double k, double n) { return 2.0 * rows * k * n; }

/* The least traffic: the weights once, the FP16 tokens in, the FP32
 * outputs out. */
static inline double gemv_bytes(double rows, double k, double n)
{
    return 2.0 * rows * k + 2.0 * k * n + 4.0 * rows * n;
}

/* ---- the reference (ref/gemv.c) ------------------------------------------ */

/* In double precision, every product exact: y[t * rows + r]. */
void gemv_reference(double *y, const fp16 *w, const fp16 *x, int rows, int k, int n);

/* The same for any weight format: row(ctx, r, out) writes row r's k
 * weights as doubles (quant.h decodes its blocks through this). */
typedef void (*gemv_row_fn)(const void *ctx, int r, double *out);
void gemv_reference_rows(double *y, gemv_row_fn row, const void *ctx, const fp16 *x, int rows,
                         int k, int n);

/* How many of the first rows to check at n tokens, so that the reference
 * stays cheap on the host: every row while that costs at most 2^29
 * multiply-adds in double; beyond, the first rows (a multiple of 64, at
 * least 64) within 2^28. */
int gemv_validation_rows(int rows, int k, int n);

/* The tolerance a float accumulation of k products of magnitude <= 1
 * must meet: the error grows with k, about as sqrt(k) in practice and k
 * at worst; k * 2^-20 leaves a factor ~10 above what float sums of random
 * data show, while a single wrong weight (error ~0.25) fails. */
static inline double gemv_atol(int k) { return (double)k * 9.5367431640625e-07; }

#ifdef __cplusplus
}
#endif
#endif
