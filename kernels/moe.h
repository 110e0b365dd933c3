/*
 * moe.h -- experiment 08's mixture of experts, the routing: which of E
 * experts each token of a batch is sent to (top-k, seeded), and how many
 * distinct experts a step then touches, the bytes a kernel that reads
 * only the active experts must move. The model of the uniform case is
 * rl_moe_experts_touched (harness/rl_models.h).
 *
 * And the kernels of one MoE layer's expert matrix at decode: E experts,
 * each a rows x k FP16 matrix (row-major, experts one after another), B
 * tokens of k FP16 inputs, each sent to top_k experts:
 *
 *   y[t * top_k + j][r] = sum_i W[e(t, j)][r][i] * x[t][i]
 *
 * FP32 outputs, one row of rows per (token, slot). The variants (moe.c's
 * table; cpu/moe.c, moe.cu; the reference in ref/moe.c):
 *   - active: each expert that some token chose, read once for all of
 *     its tokens (llama.cpp's MUL_MAT_ID, vLLM's fused MoE): the bytes are
 *     the touched experts';
 *   - dense: every expert against every token, then the chosen outputs
 *     gathered: the bytes are all E experts', whatever the routing; the
 *     wrong kernel, for a model that holds experts it does not use.
 *
 * Both run a plan (moe_plan_build): the experts to read and, for each,
 * its tokens and where their outputs go, which the router's output gives
 * before the layer runs (llama.cpp's MUL_MAT_ID groups its rows the same
 * way inside the op; here it is built when a point is prepared, and the
 * timed step is the expert GEMVs).
 */
#ifndef KERNELS_MOE_H
#define KERNELS_MOE_H

#include "common.h"
#include "half.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum moe_routing {
    MOE_UNIFORM, /* every expert equally likely: the model's case */
    MOE_SKEWED   /* expert e with weight 1 / (e + 1) (Zipf, s = 1): a few hot experts */
} moe_routing;

/* experts[t * top_k + j]: token t's j-th expert, top_k distinct experts
 * of n_experts per token, drawn without replacement; the same seed gives
 * the same routing. 1 <= top_k <= n_experts. */
void moe_route(int *experts, int batch, int n_experts, int top_k, moe_routing how, uint64_t seed);

/* The distinct experts a routing touches. */
int moe_touched(const int *experts, int batch, int top_k, int n_experts);

/* ---- the plan: the experts a step reads, and their tokens ------------------ */

/* A step's work, expert by expert: expert[i] serves the (token, output
 * row) pairs token[start[i] .. start[i + 1]) and out[...]. Host arrays on
 * the CPU backend, device arrays on the GPU (moe_plan_arrays says how
 * many ints each needs). */
typedef struct moe_plan {
    int active;       /* experts with work: the touched ones, or all E (dense) */
    const int *expert, *start, *token, *out;
} moe_plan;

/* The most pairs an expert's kernel takes per pass over its weights: the
 * hand-written GEMV's token limit (gemv.h's GEMV_MAX_BATCH); an expert
 * with more tokens is read once per 8 of them. */
enum { MOE_PASS_TOKENS = 8 };

/* What a plan's arrays hold, built on the host into one int buffer of
 * moe_plan_ints(E, batch, top_k) ints (the four arrays one after another).
 * active: the touched experts in order of index, their pairs in token
 * order, out = t * top_k + j. dense: every expert, each with every token,
 * out = e * batch + t (the dense variant's scratch, gathered afterwards). */
size_t moe_plan_ints(int n_experts, int batch, int top_k);
moe_plan moe_plan_build(int *buf, const int *experts, int batch, int n_experts, int top_k, bool dense);
/* The same plan with its arrays at another copy of buf (a device copy). */
moe_plan moe_plan_rebase(moe_plan p, const int *from, const int *to);

/* ---- the kernels ------------------------------------------------------------ */

typedef struct moe_args {
    float *y;            /* batch x top_k x rows */
    const fp16 *w;       /* n_experts x rows x k; k a multiple of 8 */
    const fp16 *x;       /* batch x k */
    const int *experts;  /* batch x top_k, the routing (device memory on the GPU) */
    moe_plan active;     /* the touched experts' plan */
    moe_plan dense;      /* every expert's plan (the dense variant) */
    int n_experts, rows, k, batch, top_k;
    void *scratch;       /* moe_scratch_bytes() of it */
    struct CUstream_st *stream; /* CUDA only */
} moe_args;

KERNEL_CALL_TYPE(moe, moe_args)

typedef struct moe_variant {
    KERNEL_VARIANT_HEAD;
    bool dense; /* reads every expert */
    void (*cpu)(const moe_args *a);
    void (*cuda)(const moe_args *a);
} moe_variant;

extern const moe_variant moe_variants[]; /* ended by a zero row */
extern const kernel_family moe_family;

void moe_active_cpu(const moe_args *a);
void moe_dense_cpu(const moe_args *a);
void moe_active_cuda(const moe_args *a);
void moe_dense_cuda(const moe_args *a);

/* Scratch: on the CPU one pass's gathered tokens and outputs; the
 * dense variant also every expert's outputs for every token (E x batch x
 * rows floats, on both backends). */
size_t moe_scratch_bytes(const moe_variant *v, int backend, int n_experts, int rows, int k, int batch);

/* ---- counting ---------------------------------------------------------------- */

/* The least traffic of a step that reads `experts_read` experts: their
 * weights once, the tokens in, batch x top_k output rows out (and for the
 * dense variant its E x batch rows of scratch written and the chosen ones
 * read back). */
double moe_bytes(const moe_variant *v, double experts_read, int n_experts, int rows, int k,
                 int batch, int top_k);
/* Two FLOPs per weight per token that an expert serves. */
double moe_flops(const moe_variant *v, int n_experts, int rows, int k, int batch, int top_k);

/* ---- the reference (ref/moe.c) ---------------------------------------------- */

/* In double precision: the first `slots` output rows (t * top_k + j), each
 * rows values. */
void moe_reference(double *y, const fp16 *w, const fp16 *x, const int *experts, int rows, int k,
                   int top_k, int slots);

#ifdef __cplusplus
}
#endif

#endif
