/*
 * layer.c -- experiment 09's variants: one row per step kind, its launcher
 * on each backend (cpu/layer.c, layer.cu), and what one call of it moves
 * and computes. The experiment builds a layer from these rows by role; a
 * faster softmax is a new row with the same role and op, chosen with
 * --variant.
 */
#include "layer.h"

#include <math.h>

/* A row whose name is its launchers' (layer_<fn>_cpu, layer_<fn>_cuda);
 * NAMED_ROW where the name must differ (a chart of another experiment
 * already reads a column called "gemm"). */
#define NAMED_ROW(num, nm, fn, rl, o, c, f, text)                                        \
    {.number = num, .name = nm, .role = rl, .op = o, .cls = c, .fused = f, .what = text, \
     .cpu = layer_##fn##_cpu, .cuda = CUDA_ONLY(layer_##fn##_cuda)}
#define ROW(num, fn, rl, o, c, f, text) NAMED_ROW(num, #fn, fn, rl, o, c, f, text)

const layer_variant layer_variants[] = {
    NAMED_ROW(1, "sgemm", gemm, "gemm", LAYER_OP_GEMM, LAYER_CONTRACTION, false,
        "y = x W^T: the library's GEMM (OpenBLAS sgemm, cuBLAS FP32)"),
    NAMED_ROW(2, "sgemm_epilogue", gemm_epilogue, "gemm_epilogue", LAYER_OP_GEMM, LAYER_CONTRACTION, true,
        "y = epilogue(x W^T): bias, GELU, residual or SwiGLU applied to each output tile in the cache "
        "(CUDA: cuBLASLt's epilogues for bias, GELU and residual; SwiGLU, and where cuBLASLt cannot, "
        "a second pass over the output)"),
    ROW(3, scores, "scores", LAYER_OP_SCORES, LAYER_CONTRACTION, false,
        "S = Q K^T per sequence and head, from the QKV output (batched GEMM)"),
    ROW(4, context, "context", LAYER_OP_CONTEXT, LAYER_CONTRACTION, false,
        "O = P V per sequence and head, into the heads' columns (batched GEMM)"),
    ROW(5, scale_mask, "scale_mask", LAYER_OP_SCALE_MASK, LAYER_ELEMENTWISE, false,
        "S scale + mask (padding or causal)"),
    ROW(6, softmax, "softmax", LAYER_OP_SOFTMAX, LAYER_NORMALIZATION, false, "softmax of each row"),
    ROW(7, scale_mask_softmax, "scale_mask_softmax", LAYER_OP_SCALE_MASK_SOFTMAX, LAYER_NORMALIZATION,
        true, "softmax(S scale + mask) in one pass"),
    ROW(8, attention, "attention", LAYER_OP_ATTENTION, LAYER_CONTRACTION, true,
        "fused attention: the scores stay on chip (online softmax)"),
    ROW(9, bias, "bias", LAYER_OP_BIAS, LAYER_ELEMENTWISE, false, "y = x + bias"),
    ROW(10, gelu, "gelu", LAYER_OP_GELU, LAYER_ELEMENTWISE, false, "y = gelu(x), tanh form"),
    ROW(11, bias_gelu, "bias_gelu", LAYER_OP_BIAS_GELU, LAYER_ELEMENTWISE, true,
        "y = gelu(x + bias) in one pass"),
    ROW(12, add, "add", LAYER_OP_ADD, LAYER_ELEMENTWISE, false, "y = x + r: the residual"),
    ROW(13, layernorm, "layernorm", LAYER_OP_LAYERNORM, LAYER_NORMALIZATION, false,
        "layer norm of each row, gamma and beta"),
    ROW(14, bias_add_layernorm, "bias_add_layernorm", LAYER_OP_BIAS_ADD_LAYERNORM,
        LAYER_NORMALIZATION, true, "layer norm of (x + bias + r): bias, residual and norm in one pass"),
    ROW(15, rmsnorm, "rmsnorm", LAYER_OP_RMSNORM, LAYER_NORMALIZATION, false, "RMSNorm of each row"),
    ROW(16, add_rmsnorm, "add_rmsnorm", LAYER_OP_ADD_RMSNORM, LAYER_NORMALIZATION, true,
        "h = x + r kept, RMSNorm(h): residual and norm in one pass"),
    ROW(17, silu_gate, "silu_gate", LAYER_OP_SILU_GATE, LAYER_ELEMENTWISE, false,
        "y = silu(gate) up (SwiGLU)"),
    ROW(18, rope, "rope", LAYER_OP_ROPE, LAYER_ELEMENTWISE, false,
        "rotary position embedding of the query and key heads"),
    /* the backward pass, unfused, as PyTorch's autograd runs BERT's */
    ROW(19, gemm_dx, "gemm_dx", LAYER_OP_GEMM_DX, LAYER_CONTRACTION, false,
        "dX = dY W: a linear layer's input gradient (the library's GEMM)"),
    ROW(20, gemm_dw, "gemm_dw", LAYER_OP_GEMM_DW, LAYER_CONTRACTION, false,
        "dW = dY^T X: a linear layer's weight gradient (the library's GEMM)"),
    ROW(21, bias_grad, "bias_grad", LAYER_OP_BIAS_GRAD, LAYER_NORMALIZATION, false,
        "db = the column sums of dY: a reduction over the tokens"),
    ROW(22, gelu_backward, "gelu_backward", LAYER_OP_GELU_BACKWARD, LAYER_ELEMENTWISE, false,
        "dX = dY gelu'(X)"),
    ROW(23, layernorm_backward, "layernorm_backward", LAYER_OP_LAYERNORM_BACKWARD,
        LAYER_NORMALIZATION, false, "layer norm's input gradient, per row"),
    ROW(24, layernorm_param_grad, "layernorm_param_grad", LAYER_OP_LAYERNORM_PARAM_GRAD,
        LAYER_NORMALIZATION, false, "gamma's and beta's gradients: sums over the tokens"),
    ROW(25, softmax_backward, "softmax_backward", LAYER_OP_SOFTMAX_BACKWARD, LAYER_NORMALIZATION,
        false, "dS = P (dP - rowsum(dP P))"),
    ROW(26, context_dp, "context_dp", LAYER_OP_CONTEXT_DP, LAYER_CONTRACTION, false,
        "dP = dO V^T per sequence and head (batched GEMM)"),
    ROW(27, context_dv, "context_dv", LAYER_OP_CONTEXT_DV, LAYER_CONTRACTION, false,
        "dV = P^T dO per sequence and head (batched GEMM)"),
    ROW(28, scores_backward, "scores_backward", LAYER_OP_SCORES_BACKWARD, LAYER_CONTRACTION, false,
        "dQ = dS K and dK = dS^T Q per sequence and head (two batched GEMMs)"),
    ROW(29, concat, "concat", LAYER_OP_CONCAT, LAYER_ELEMENTWISE, false,
        "dQKV = [dQ dK | dV] per token: the QKV gradient assembled"),
    {0},
};

static bool has(const void *row, int backend)
{
    const layer_variant *v = row;
    return backend == KERNEL_CUDA ? v->cuda != NULL : v->cpu != NULL;
}

/* The backward rows' kernels are layer_backward.cu's: listed beside
 * layer.cu's in a run's kernel resources. */
const kernel_family layer_family = {"layer", "cpu/layer.c", "layer.cu", layer_variants,
                                    sizeof layer_variants[0], has, NULL, "layer_backward.cu"};

const char *layer_op_name(layer_op op)
{
    static const char *const NAMES[LAYER_OPS] = {
        "gemm", "scores", "context", "scale_mask", "softmax", "scale_mask_softmax", "attention",
        "bias", "gelu", "bias_gelu", "add", "layernorm", "bias_add_layernorm", "rmsnorm",
        "add_rmsnorm", "silu_gate", "rope", "gemm_dx", "gemm_dw", "bias_grad", "gelu_backward",
        "layernorm_backward", "layernorm_param_grad", "softmax_backward", "context_dp",
        "context_dv", "scores_backward", "concat"};
    return op >= 0 && op < LAYER_OPS ? NAMES[op] : "?";
}

const char *layer_class_name(layer_class c)
{
    static const char *const NAMES[LAYER_CLASSES] = {"contraction", "normalization", "elementwise"};
    return c >= 0 && c < LAYER_CLASSES ? NAMES[c] : "?";
}

/* ---- counting ------------------------------------------------------------------ */

static double tokens(const layer_args *a) { return (double)a->rows; }
static double qkv_cols(const layer_args *a) { return (double)(a->heads + 2 * a->heads_kv) * a->head_dim; }
static double scores_count(const layer_args *a)
{
    return (double)a->batch * a->heads * (double)a->seq * a->seq;
}
static double activation(const layer_args *a) { return (double)a->rows * a->cols; }

/* The product's output columns: SwiGLU's GEMM computes gate and up. */
static double product_cols(const layer_args *a)
{
    return a->epilogue == LAYER_EPI_SILU_GATE ? 2.0 * a->cols : (double)a->cols;
}

/* Per output value of an epilogue or an element-wise step: its
 * arithmetic (an exp or a tanh counted as one). GELU's tanh form: x^3,
 * the FMA, the tanh, 1 + t, x t, the halves: 8. */
enum { GELU_FLOPS = 8, SILU_FLOPS = 4, SOFTMAX_FLOPS = 5, LAYERNORM_FLOPS = 8, RMSNORM_FLOPS = 4 };
/* The backward's: gelu' (the forward's tanh, then 1 - t^2, 1 + 3 a x^2,
 * the products and the halves) and one multiply; layer norm's input
 * gradient (the statistics again, g = x gamma, two dot products, the
 * combination); its parameters' (h, h x, two sums); softmax's (x r, the
 * sum, x - s, times r). */
enum { GELU_BACKWARD_FLOPS = 14, LAYERNORM_BACKWARD_FLOPS = 12, LAYERNORM_PARAM_FLOPS = 6,
       SOFTMAX_BACKWARD_FLOPS = 4 };

bool layer_sums_tokens(const layer_variant *v)
{
    return v->op == LAYER_OP_GEMM_DW || v->op == LAYER_OP_BIAS_GRAD ||
           v->op == LAYER_OP_LAYERNORM_PARAM_GRAD;
}

static double epilogue_flops(const layer_args *a)
{
    double out = activation(a);
    switch (a->epilogue) {
    case LAYER_EPI_BIAS: return out;
    case LAYER_EPI_BIAS_GELU: return out * (1 + GELU_FLOPS);
    case LAYER_EPI_BIAS_ADD: return out * (a->bias ? 2 : 1);
    case LAYER_EPI_SILU_GATE: return out * (SILU_FLOPS + 1);
    default: return 0;
    }
}

double layer_flops(const layer_variant *v, const layer_args *a)
{
    double d = a->head_dim;
    switch (v->op) {
    case LAYER_OP_GEMM: return 2.0 * tokens(a) * product_cols(a) * a->k + epilogue_flops(a);
    case LAYER_OP_SCORES:
    case LAYER_OP_CONTEXT: return 2.0 * scores_count(a) * d;
    case LAYER_OP_ATTENTION: return 4.0 * scores_count(a) * d + (2 + SOFTMAX_FLOPS) * scores_count(a);
    case LAYER_OP_SCALE_MASK: return 2 * scores_count(a);
    case LAYER_OP_SOFTMAX: return SOFTMAX_FLOPS * activation(a);
    case LAYER_OP_SCALE_MASK_SOFTMAX: return (2 + SOFTMAX_FLOPS) * scores_count(a);
    case LAYER_OP_BIAS:
    case LAYER_OP_ADD: return activation(a);
    case LAYER_OP_GELU: return GELU_FLOPS * activation(a);
    case LAYER_OP_BIAS_GELU: return (1 + GELU_FLOPS) * activation(a);
    case LAYER_OP_LAYERNORM: return LAYERNORM_FLOPS * activation(a);
    case LAYER_OP_BIAS_ADD_LAYERNORM: return (2 + LAYERNORM_FLOPS) * activation(a);
    case LAYER_OP_RMSNORM: return RMSNORM_FLOPS * activation(a);
    case LAYER_OP_ADD_RMSNORM: return (1 + RMSNORM_FLOPS) * activation(a);
    case LAYER_OP_SILU_GATE: return (SILU_FLOPS + 1) * activation(a);
    case LAYER_OP_ROPE: return 3.0 * tokens(a) * (a->heads + a->heads_kv) * d; /* 2 mul, 1 add a value */
    case LAYER_OP_GEMM_DX:
    case LAYER_OP_GEMM_DW: return 2.0 * tokens(a) * a->cols * a->k;
    case LAYER_OP_BIAS_GRAD: return activation(a);
    case LAYER_OP_GELU_BACKWARD: return GELU_BACKWARD_FLOPS * activation(a);
    case LAYER_OP_LAYERNORM_BACKWARD: return LAYERNORM_BACKWARD_FLOPS * activation(a);
    case LAYER_OP_LAYERNORM_PARAM_GRAD: return LAYERNORM_PARAM_FLOPS * activation(a);
    case LAYER_OP_SOFTMAX_BACKWARD: return SOFTMAX_BACKWARD_FLOPS * activation(a);
    case LAYER_OP_CONTEXT_DP:
    case LAYER_OP_CONTEXT_DV: return 2.0 * scores_count(a) * d;
    case LAYER_OP_SCORES_BACKWARD: return 4.0 * scores_count(a) * d;
    default: return 0;
    }
}

/* rows x n heads' columns (the context and its gradient, dV, dQ dK) */
static size_t heads_cols(const layer_args *a, int n)
{
    return (size_t)a->rows * (size_t)n * (size_t)a->head_dim;
}

layer_sizes layer_input_sizes(const layer_variant *v, const layer_args *a)
{
    layer_sizes s = {0};
    size_t act = (size_t)a->rows * (size_t)a->cols, cols = (size_t)a->cols;
    size_t qkv = (size_t)a->rows * (size_t)qkv_cols(a), sc = (size_t)scores_count(a);
    size_t mask = a->mask_kind == LAYER_MASK_PADDING ? (size_t)a->batch * a->seq : 0;
    switch (v->op) {
    case LAYER_OP_GEMM:
        s.x = (size_t)a->rows * a->k;
        s.w = (size_t)product_cols(a) * a->k;
        s.bias = a->bias && a->epilogue != LAYER_EPI_NONE && a->epilogue != LAYER_EPI_SILU_GATE ? cols : 0;
        s.r = a->epilogue == LAYER_EPI_BIAS_ADD ? act : 0;
        break;
    case LAYER_OP_SCORES: s.x = qkv; break;
    case LAYER_OP_CONTEXT: s.x = sc, s.r = qkv; break;
    case LAYER_OP_SCALE_MASK:
    case LAYER_OP_SCALE_MASK_SOFTMAX: s.x = sc, s.mask = mask; break;
    case LAYER_OP_ATTENTION: s.x = qkv, s.mask = mask; break;
    case LAYER_OP_SOFTMAX:
    case LAYER_OP_GELU: s.x = act; break;
    case LAYER_OP_BIAS:
    case LAYER_OP_BIAS_GELU: s.x = act, s.bias = cols; break;
    case LAYER_OP_ADD: s.x = act, s.r = act; break;
    case LAYER_OP_LAYERNORM: s.x = act, s.gamma = s.beta = cols; break;
    case LAYER_OP_BIAS_ADD_LAYERNORM: s.x = s.r = act, s.bias = a->bias ? cols : 0, s.gamma = s.beta = cols; break;
    case LAYER_OP_RMSNORM: s.x = act, s.gamma = cols; break;
    case LAYER_OP_ADD_RMSNORM: s.x = s.r = act, s.gamma = cols; break;
    case LAYER_OP_SILU_GATE: s.x = 2 * act; break;
    case LAYER_OP_ROPE: s.x = qkv; break;
    case LAYER_OP_GEMM_DX: s.x = act, s.w = cols * (size_t)a->k; break;
    case LAYER_OP_GEMM_DW: s.x = act, s.r = (size_t)a->rows * (size_t)a->k; break;
    case LAYER_OP_BIAS_GRAD: s.x = act; break;
    case LAYER_OP_GELU_BACKWARD:
    case LAYER_OP_SOFTMAX_BACKWARD:
    case LAYER_OP_LAYERNORM_PARAM_GRAD: s.x = s.r = act; break;
    case LAYER_OP_LAYERNORM_BACKWARD: s.x = s.r = act, s.gamma = cols; break;
    case LAYER_OP_CONTEXT_DP: s.x = heads_cols(a, a->heads), s.r = qkv; break;
    case LAYER_OP_CONTEXT_DV: s.x = sc, s.r = heads_cols(a, a->heads); break;
    case LAYER_OP_SCORES_BACKWARD: s.x = sc, s.r = qkv; break;
    case LAYER_OP_CONCAT: s.x = (size_t)a->rows * (size_t)a->k, s.r = (size_t)a->rows * (size_t)(a->cols - a->k); break;
    default: break;
    }
    return s;
}

size_t layer_out_count(const layer_variant *v, const layer_args *a)
{
    switch (v->op) {
    case LAYER_OP_SCORES:
    case LAYER_OP_SCALE_MASK:
    case LAYER_OP_SCALE_MASK_SOFTMAX: return (size_t)scores_count(a);
    case LAYER_OP_CONTEXT:
    case LAYER_OP_ATTENTION: return (size_t)a->rows * a->heads * a->head_dim;
    case LAYER_OP_ROPE: return (size_t)a->rows * (size_t)qkv_cols(a);
    case LAYER_OP_ADD_RMSNORM: return 2 * (size_t)a->rows * a->cols;
    case LAYER_OP_GEMM_DX: return (size_t)a->rows * (size_t)a->k;
    case LAYER_OP_GEMM_DW: return (size_t)a->cols * (size_t)a->k;
    case LAYER_OP_BIAS_GRAD: return (size_t)a->cols;
    case LAYER_OP_LAYERNORM_PARAM_GRAD: return 2 * (size_t)a->cols;
    case LAYER_OP_CONTEXT_DP: return (size_t)scores_count(a);
    case LAYER_OP_CONTEXT_DV: return heads_cols(a, a->heads_kv);
    case LAYER_OP_SCORES_BACKWARD: return heads_cols(a, a->heads + a->heads_kv);
    default: return (size_t)a->rows * (size_t)a->cols;
    }
}

#ifndef RL_HAVE_CUDA
/* A build without CUDA has no CUDA GEMM (layer.cu has the real answer):
 * its counting of the CUDA side keeps the second pass. */
bool layer_gemm_epilogue_in_product(const layer_args *a) { return a->epilogue == LAYER_EPI_NONE; }
#endif

double layer_bytes(const layer_variant *v, const layer_args *a, int backend)
{
    layer_sizes s = layer_input_sizes(v, a);
    double in = (double)(s.x + s.r + s.w + s.bias + s.gamma + s.beta + s.mask);
    double out = (double)layer_out_count(v, a);
    /* The attention's products read each head's K (and V) rows once per
     * query head that shares them only when the cache cannot hold them:
     * counted once, the least. CUDA's epilogue, where it does not run
     * inside the product (layer_gemm_epilogue_in_product): a second pass
     * (read and write) over the output. */
    if (v->op == LAYER_OP_SCORES)
        in = tokens(a) * (a->heads + a->heads_kv) * (double)a->head_dim;
    if (v->op == LAYER_OP_CONTEXT)
        in = scores_count(a) + tokens(a) * a->heads_kv * (double)a->head_dim;
    if (v->op == LAYER_OP_ATTENTION)
        in = (double)s.x + (double)s.mask;
    /* the backward's: the value columns alone; the query and key columns */
    if (v->op == LAYER_OP_CONTEXT_DP)
        in = (double)s.x + tokens(a) * a->heads_kv * (double)a->head_dim;
    if (v->op == LAYER_OP_SCORES_BACKWARD)
        in = (double)s.x + tokens(a) * (a->heads + a->heads_kv) * (double)a->head_dim;
    double extra = 0;
    if (v->op == LAYER_OP_GEMM && v->fused && backend == KERNEL_CUDA &&
        !layer_gemm_epilogue_in_product(a)) /* the product, read back */
        extra = a->epilogue == LAYER_EPI_SILU_GATE ? 4 * out : 2 * out;
    return 4.0 * (in + out + extra);
}

double layer_atol(const layer_variant *v, const layer_args *a)
{
    switch (v->op) {
    case LAYER_OP_GEMM: return 2e-6 * a->k + 1e-5;
    case LAYER_OP_SCORES: return 2e-6 * a->head_dim + 1e-5;
    case LAYER_OP_CONTEXT:
    case LAYER_OP_ATTENTION: return 2e-6 * a->seq + 1e-5;
    /* the backward's sums: over the output's columns, over the tokens
     * (a weight's gradient), over a head's keys or queries (times the
     * query heads a KV head serves) */
    case LAYER_OP_GEMM_DX: return 2e-6 * a->cols + 1e-5;
    case LAYER_OP_GEMM_DW:
    case LAYER_OP_BIAS_GRAD:
    case LAYER_OP_LAYERNORM_PARAM_GRAD: return 2e-6 * a->rows + 1e-5;
    case LAYER_OP_CONTEXT_DP: return 2e-6 * a->head_dim + 1e-5;
    case LAYER_OP_CONTEXT_DV:
    case LAYER_OP_SCORES_BACKWARD: return 2e-6 * a->seq * (a->heads / a->heads_kv) + 1e-5;
    default: return 1e-5;
    }
}
