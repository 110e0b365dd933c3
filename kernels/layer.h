/*
 * layer.h -- experiment 09's kernels: the steps of one transformer layer's
 * forward pass, each a kernel of its own, in FP32.
 *
 * A layer is a list of steps (the experiment builds it: a BERT encoder
 * layer, a Llama-style decoder block, each unfused as an eager framework
 * runs it and fused). Each step is one call of one variant of this family:
 * a matrix product (the library's GEMM, with or without an epilogue), the
 * attention's two batched products, a normalization or an element-wise
 * op. Every step reads its inputs and writes a new output (out of place,
 * as PyTorch's eager ops do), so that a step called again gives the same
 * output and can be timed alone.
 *
 * Layouts, row-major FP32. An activation is rows x cols, rows = batch x
 * seq tokens. The QKV projection's output holds, per token, the query
 * heads' columns, then the key heads', then the value heads':
 * (heads + 2 heads_kv) x head_dim columns; query head h reads key and
 * value head h / (heads / heads_kv) (grouped-query attention; heads_kv =
 * heads: multi-head). Scores and probabilities are batch x heads x seq x
 * seq. A weight is n x k (a linear layer's, y = x W^T).
 *
 * One table (layer.c) names each variant's launcher on each backend:
 * layer.cu (CUDA: cuBLAS, cuBLASLt's epilogues in layer_lt.cu, and
 * kernels of its own; the backward pass's in layer_backward.cu) and
 * cpu/layer.c (C + OpenMP, OpenBLAS; the products in cpu/layer_products.c,
 * the backward pass in cpu/layer_backward.c); the double-precision
 * reference is ref/layer.c (ref/layer_backward.c).
 */
#ifndef KERNELS_LAYER_H
#define KERNELS_LAYER_H

#include "common.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The three classes of Ivanov et al., "Data Movement Is All You Need"
 * (2020): what a step's time is spent on, by the arithmetic it does. */
typedef enum layer_class {
    LAYER_CONTRACTION = 0,  /* matrix products: nearly all the FLOPs */
    LAYER_NORMALIZATION,    /* statistics over a row: softmax, layer norm, RMSNorm */
    LAYER_ELEMENTWISE,      /* one value in, one out: bias, activation, residual, mask, RoPE */
    LAYER_CLASSES
} layer_class;

/* Which step a variant computes; its semantics are in the comments of
 * each value, with x, r the inputs, y (and y2) the outputs, as in
 * layer_args. */
typedef enum layer_op {
    /* y (rows x cols) = x (rows x k) w^T (w: cols x k), then the epilogue
     * (layer_epilogue) on each output value while it is in the cache */
    LAYER_OP_GEMM = 0,
    /* y[b][h][i][j] = q_i . k_j: q from x's query columns of head h, k
     * from x's key columns of head h / group, tokens of sequence b
     * (x: the QKV output) */
    LAYER_OP_SCORES,
    /* y (rows x heads head_dim) = P v: P from x (scores' shape), v from
     * r's value columns (r: the QKV output); head h writes columns
     * h head_dim .. (h + 1) head_dim - 1 */
    LAYER_OP_CONTEXT,
    /* y = x scale + mask (scores' shape; the mask as mask_kind says) */
    LAYER_OP_SCALE_MASK,
    /* y = softmax of each row of x (rows x cols) */
    LAYER_OP_SOFTMAX,
    /* y = softmax(x scale + mask), one pass */
    LAYER_OP_SCALE_MASK_SOFTMAX,
    /* y = the context from x (the QKV output) directly, scale and mask
     * applied, the scores never written to memory (FlashAttention's online
     * softmax) */
    LAYER_OP_ATTENTION,
    /* y = x + bias (bias: cols, broadcast over rows) */
    LAYER_OP_BIAS,
    /* y = gelu(x), the tanh form (layer_gelu) */
    LAYER_OP_GELU,
    /* y = gelu(x + bias) */
    LAYER_OP_BIAS_GELU,
    /* y = x + r */
    LAYER_OP_ADD,
    /* y = layer norm of each row of x, times gamma, plus beta */
    LAYER_OP_LAYERNORM,
    /* y = layer norm of (x + bias + r) per row, times gamma, plus beta
     * (bias may be NULL): the residual and the norm in one pass */
    LAYER_OP_BIAS_ADD_LAYERNORM,
    /* y = x / sqrt(mean(x^2) + eps) per row, times gamma */
    LAYER_OP_RMSNORM,
    /* y2 = x + r (the residual stream, kept), y = RMSNorm(y2) times gamma */
    LAYER_OP_ADD_RMSNORM,
    /* y (rows x cols) = silu(x[:, c]) x[:, cols + c]: x is rows x 2 cols,
     * the gate's columns then the up projection's (SwiGLU) */
    LAYER_OP_SILU_GATE,
    /* y = x with each query and key head rotated by its token's position
     * (position = token index within its sequence; pairs c and c +
     * head_dim / 2, base rope_theta, as Llama in Hugging Face), the value
     * columns copied */
    LAYER_OP_ROPE,
    /* ---- the backward pass (training, BERT's): x is the gradient of a
     * forward step's output (dy); each op writes the gradient of one of
     * that step's inputs, as PyTorch's autograd runs them ---- */
    /* y (rows x k) = x (rows x cols) w (w: cols x k): a GEMM's input's
     * gradient (the forward step: rows x k in, cols out) */
    LAYER_OP_GEMM_DX,
    /* y (cols x k) = x^T r, summed over the rows (the tokens): x (rows x
     * cols) the output's gradient, r (rows x k) the GEMM's input: the
     * weight's gradient */
    LAYER_OP_GEMM_DW,
    /* y (cols) = the sum of x (rows x cols) over the rows: a bias's gradient */
    LAYER_OP_BIAS_GRAD,
    /* y = x gelu'(r): r the GELU's input (rows x cols; the tanh form) */
    LAYER_OP_GELU_BACKWARD,
    /* y = the layer norm's input's gradient, per row: x the output's
     * gradient, r the norm's input, gamma (the row's mean and 1/std
     * recomputed from r; eps): with g = x gamma and h = (r - mean) / std,
     * y = (g - mean(g) - h mean(g h)) / std */
    LAYER_OP_LAYERNORM_BACKWARD,
    /* y (2 x cols) = the sums over the rows of x h (gamma's gradient),
     * then of x (beta's): x the output's gradient, r the norm's input (h
     * as LAYERNORM_BACKWARD's, eps in its std) */
    LAYER_OP_LAYERNORM_PARAM_GRAD,
    /* y = r (x - the sum over the row of x r): x the probabilities'
     * gradient, r the probabilities (rows x cols, cols = seq) */
    LAYER_OP_SOFTMAX_BACKWARD,
    /* y (scores' shape) = dO V^T per sequence and head: x the context's
     * gradient (rows x heads head_dim), r the QKV output (head h reads
     * value head h / group) */
    LAYER_OP_CONTEXT_DP,
    /* y (rows x heads_kv head_dim) = P^T dO per sequence and KV head,
     * summed over the query heads that share it: x the probabilities
     * (scores' shape), r the context's gradient (rows x heads head_dim) */
    LAYER_OP_CONTEXT_DV,
    /* y (rows x (heads + heads_kv) head_dim): the query heads' columns
     * dS K, then the key heads' dS^T Q summed over the query heads that
     * share each: x the (unscaled) scores' gradient (scores' shape), r
     * the QKV output */
    LAYER_OP_SCORES_BACKWARD,
    /* y (rows x cols) = per row, x's k values, then r's cols - k: the QKV
     * output's gradient assembled from its parts */
    LAYER_OP_CONCAT,
    LAYER_OPS
} layer_op;

/* What a GEMM does to each output value before it is written. */
typedef enum layer_epilogue {
    LAYER_EPI_NONE = 0,
    LAYER_EPI_BIAS,        /* + bias[c] */
    LAYER_EPI_BIAS_GELU,   /* gelu(+ bias[c]) */
    LAYER_EPI_BIAS_ADD,    /* + bias[c] (bias may be NULL) + r[i][c]: the residual */
    LAYER_EPI_SILU_GATE    /* the product is rows x 2 cols (gate | up); y = silu(gate) up, rows x cols */
} layer_epilogue;

typedef enum layer_mask {
    LAYER_MASK_NONE = 0,
    LAYER_MASK_PADDING,   /* mask[b][j] added to every score of key j of sequence b (0 or LAYER_MASKED) */
    LAYER_MASK_CAUSAL     /* key j > query i: LAYER_MASKED */
} layer_mask;

/* BERT's additive mask value: exp of it is 0 in float, and unlike -inf a
 * row of it alone still has a softmax (a uniform one). */
#define LAYER_MASKED (-10000.0f)

typedef struct layer_args {
    float *y;         /* the output */
    float *y2;        /* a second output (ADD_RMSNORM's sum), else NULL */
    const float *x;   /* the input */
    const float *r;   /* a second input: the residual, or CONTEXT's QKV output */
    const float *w;   /* GEMM: the weight, cols x k (EPI_SILU_GATE: 2 cols x k) */
    const float *bias, *gamma, *beta; /* cols each (GEMM: its output's columns) */
    const float *mask; /* PADDING: batch x seq, additive */
    int rows, cols, k; /* the activation; GEMM: m = rows, n = cols, k */
    int batch, seq, heads, heads_kv, head_dim; /* the attention's steps (rows = batch x seq) */
    layer_epilogue epilogue;
    layer_mask mask_kind;
    float scale;      /* SCALE_MASK, ATTENTION: 1 / sqrt(head_dim) */
    float eps;        /* the norms */
    float rope_theta;
    struct CUstream_st *stream; /* CUDA only */
} layer_args;

/* layer_call: a launcher and its arguments (kernels/common.h). */
KERNEL_CALL_TYPE(layer, layer_args)

/* One row per variant (layer.c); see kernels/common.h. A variant
 * computes one op; the experiment finds it by its role (the op's name,
 * layer_op_name) and its fused flag. */
typedef struct layer_variant {
    KERNEL_VARIANT_HEAD;
    layer_op op;
    layer_class cls;
    /* one pass that replaces several of the unfused layer's (an epilogue,
     * a fused norm, fused attention) */
    bool fused;
    void (*cpu)(const layer_args *a);
    void (*cuda)(const layer_args *a);
} layer_variant;

extern const layer_variant layer_variants[]; /* ended by a zero row */
extern const kernel_family layer_family;

const char *layer_op_name(layer_op op);
const char *layer_class_name(layer_class c);

/* The launchers (cpu/layer.c, layer.cu), one per op on each backend. */
#define LAYER_LAUNCHERS(suffix)                                  \
    void layer_gemm_##suffix(const layer_args *a);               \
    void layer_gemm_epilogue_##suffix(const layer_args *a);      \
    void layer_scores_##suffix(const layer_args *a);             \
    void layer_context_##suffix(const layer_args *a);            \
    void layer_scale_mask_##suffix(const layer_args *a);         \
    void layer_softmax_##suffix(const layer_args *a);            \
    void layer_scale_mask_softmax_##suffix(const layer_args *a); \
    void layer_attention_##suffix(const layer_args *a);          \
    void layer_bias_##suffix(const layer_args *a);               \
    void layer_gelu_##suffix(const layer_args *a);               \
    void layer_bias_gelu_##suffix(const layer_args *a);          \
    void layer_add_##suffix(const layer_args *a);                \
    void layer_layernorm_##suffix(const layer_args *a);          \
    void layer_bias_add_layernorm_##suffix(const layer_args *a); \
    void layer_rmsnorm_##suffix(const layer_args *a);            \
    void layer_add_rmsnorm_##suffix(const layer_args *a);        \
    void layer_silu_gate_##suffix(const layer_args *a);          \
    void layer_rope_##suffix(const layer_args *a);               \
    void layer_gemm_dx_##suffix(const layer_args *a);            \
    void layer_gemm_dw_##suffix(const layer_args *a);            \
    void layer_bias_grad_##suffix(const layer_args *a);          \
    void layer_gelu_backward_##suffix(const layer_args *a);      \
    void layer_layernorm_backward_##suffix(const layer_args *a); \
    void layer_layernorm_param_grad_##suffix(const layer_args *a); \
    void layer_softmax_backward_##suffix(const layer_args *a);   \
    void layer_context_dp_##suffix(const layer_args *a);         \
    void layer_context_dv_##suffix(const layer_args *a);         \
    void layer_scores_backward_##suffix(const layer_args *a);    \
    void layer_concat_##suffix(const layer_args *a);
LAYER_LAUNCHERS(cpu)
LAYER_LAUNCHERS(cuda)
#undef LAYER_LAUNCHERS

/* ---- the math every side shares ---------------------------------------------- */

/* GELU, tanh form (Hendrycks and Gimpel; BERT's and GPT-2's "gelu_new"):
 * 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). */
#define LAYER_GELU_C 0.7978845608028654
#define LAYER_GELU_A 0.044715

/* ---- counting (layer.c): what one call of a step moves and computes ---------
 * Bytes: the least traffic of the step, each input read once and each
 * output written once (a GEMM's operands and output; a fused step's
 * intermediate never leaves the chip). On CUDA a GEMM's epilogue runs
 * inside the product where cuBLASLt's epilogues compute it (bias, bias and
 * GELU, bias and the residual as C: layer.cu, layer_lt.cu), and as a
 * second pass over the output where they do not (SwiGLU; no cuBLASLt, no
 * algorithm for the shape): the fused GEMM's bytes add that pass there
 * (the output read and written again; SwiGLU's gate and up product, twice
 * the output, written and read back) (backend: KERNEL_CPU or KERNEL_CUDA).
 * FLOPs: 2 per multiply-add of the products; per value, the element-wise
 * and normalization steps' arithmetic as layer.c counts it (an exp or tanh
 * counted as one). */
double layer_bytes(const layer_variant *v, const layer_args *a, int backend);
/* Whether the CUDA GEMM of a's shape and epilogue computes the epilogue
 * inside the product, with no second pass (LAYER_EPI_NONE: true). Decided
 * as the launcher will decide it: cuBLASLt loadable on this process's
 * device, and its heuristic has an algorithm for the shape and epilogue
 * (buffers taken as cudaMalloc's, 256-byte aligned), and for GELU the
 * library's is layer.h's tanh form (layer_lt.cu asks it once). Its first
 * call for a shape loads cuBLASLt and asks the heuristic (layer.cu), so it
 * is called outside any timing; with no device, or in a build without
 * CUDA (layer.c), only LAYER_EPI_NONE is. */
bool layer_gemm_epilogue_in_product(const layer_args *a);
double layer_flops(const layer_variant *v, const layer_args *a);
/* Whether the step's output sums over the tokens (a weight's or a bias's
 * gradient): its first sequence depends on every sequence, so it is
 * checked only where the batch is one sequence. */
bool layer_sums_tokens(const layer_variant *v);
/* The values the step writes (y, and y2 where there is one). */
size_t layer_out_count(const layer_variant *v, const layer_args *a);
/* The number of floats of each input the step reads (0: not read):
 * x, r, w, bias, gamma, beta, mask. */
typedef struct layer_sizes {
    size_t x, r, w, bias, gamma, beta, mask;
} layer_sizes;
layer_sizes layer_input_sizes(const layer_variant *v, const layer_args *a);

/* ---- the reference (ref/layer.c) -----------------------------------------------
 * The step in double precision, on host arrays of the same layouts, for
 * the shape in a (its pointers unused; a->stream unused): every output
 * value. The experiment calls it on the first sequence (batch 1) of a
 * step's inputs, and chains it through a whole layer. */
typedef struct layer_ref {
    double *y, *y2;
    const double *x, *r, *w, *bias, *gamma, *beta, *mask;
} layer_ref;
void layer_reference(const layer_variant *v, const layer_args *shape, const layer_ref *io);

/* What a step's output must meet against the reference: within atol +
 * rtol |want|. A product's rounding grows with its length (k, or seq for
 * the context), so the bar does too. */
double layer_atol(const layer_variant *v, const layer_args *a);
#define LAYER_RTOL 1e-4

#ifdef __cplusplus
}
#endif
#endif
