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
 *
 * A third row moves nothing: empty_launch (moe_empty_launch), one empty
 * launch (GPU: an empty kernel; CPU: an empty OpenMP parallel region, the
 * CPU's launch), timed beside the steps so that a step's fixed cost is
 * measured in the same run: a claim on a step's MBU is judged only where
 * its bytes at the roof take many times its launches (moe_launches
 * counts them).
 *
 * The GPU's launch plan (moe_grid) is host arithmetic with no CUDA type
 * in it, so that tests and a static model compute the grid a launch will
 * use without a GPU; the kernel reads its k split through the same
 * inline function (moe_part_range).
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

/* A step's passes over expert weights: for each expert the routing
 * touches, one per MOE_PASS_TOKENS of its tokens (top_k at batch 1). */
int moe_passes(const int *experts, int batch, int top_k, int n_experts);

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

/* ---- the GPU's launch plan (host arithmetic: moe.c) -------------------------
 * A block of MOE_BLOCK_WARPS warps takes rows_per_block rows of one
 * expert; warps_per_row warps share a row, each taking a part of its k
 * (its 16-byte words [lo, hi), moe_part_range) and its partial sums added
 * in shared memory in a fixed order. Each lane issues MOE_LOADS 16-byte
 * streaming loads before it uses the first: MOE_LOADS x 512 bytes in
 * flight per warp (with one or two tokens a pass, batch 1's case; fewer
 * with more, moe.cu's round_of).
 *
 * The split: a warp per row while the grid has MOE_WARPS_PER_SM warps for
 * every SM (16 x 2 KiB = 32 KiB in flight per SM, what Little's law asks
 * of an H100's or H200's HBM: bandwidth x latency over 132 SMs is 25 to
 * 32 KiB); a smaller grid (batch 1 at top-1 or 2: 768 or 1536 rows) splits
 * k over 2, 4 or 8 warps, as long as each part still holds one full round
 * of loads per lane (32 x MOE_LOADS words): past that a split adds warps
 * but no bytes in flight. */
enum { MOE_BLOCK_WARPS = 8, MOE_LOADS = 4, MOE_WARPS_PER_SM = 16 };

typedef struct moe_launch {
    int warps_per_row;  /* the k split: 1, 2, 4 or 8 */
    int rows_per_block; /* MOE_BLOCK_WARPS / warps_per_row */
    int chunk;          /* 16-byte words per part: a multiple of 32, the last part's shorter */
    unsigned blocks_x;  /* slices of rows_per_block rows */
    unsigned blocks_y;  /* the plan's experts */
} moe_launch;

/* The plan of a launch over `active` experts of rows x k (k a multiple of
 * 8) on a GPU of sm_count SMs. */
moe_launch moe_grid(int rows, int k, int active, int sm_count);

/* Part `part`'s words of a row of k8 16-byte words: [lo, hi), empty
 * (lo == hi) for a part past the row's end. The kernel calls it too. */
RL_HD void moe_part_range(int k8, int chunk, int part, int *lo, int *hi)
{
    long long a = (long long)part * chunk, b = a + chunk;
    *lo = (int)(a < k8 ? a : k8);
    *hi = (int)(b < k8 ? b : k8);
}

KERNEL_CALL_TYPE(moe, moe_args)

typedef struct moe_variant {
    KERNEL_VARIANT_HEAD;
    bool dense; /* reads every expert */
    bool empty; /* moves nothing: one empty launch, a step's fixed cost */
    void (*cpu)(const moe_args *a);
    void (*cuda)(const moe_args *a);
} moe_variant;

extern const moe_variant moe_variants[]; /* ended by a zero row */
extern const kernel_family moe_family;

void moe_active_cpu(const moe_args *a);
void moe_dense_cpu(const moe_args *a);
void moe_empty_cpu(const moe_args *a);
void moe_active_cuda(const moe_args *a);
void moe_dense_cuda(const moe_args *a);
void moe_empty_cuda(const moe_args *a);

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
/* The launches (GPU) or parallel regions (CPU) a step makes, each paying
 * the fixed cost that empty_launch measures: on the GPU one (active) or
 * two (dense: the GEMVs, then the gather); on the CPU one per pass (a
 * GEMV of up to 8 tokens over one expert: `passes`, moe_passes), dense
 * E per 8 tokens and the gather's. */
double moe_launches(const moe_variant *v, int backend, double passes, int n_experts, int batch);

/* ---- the reference (ref/moe.c) ---------------------------------------------- */

/* In double precision: the first `slots` output rows (t * top_k + j), each
 * rows values. */
void moe_reference(double *y, const fp16 *w, const fp16 *x, const int *experts, int rows, int k,
                   int top_k, int slots);

#ifdef __cplusplus
}
#endif

#endif
