/*
 * model.c -- experiment 09's layers as tensors and steps.
 *
 * Each configuration is written twice. Unfused, step by step as an eager
 * framework runs it (Hugging Face's BertLayer and LlamaDecoderLayer: one
 * kernel per op, every intermediate written to memory). Fused, as a
 * compiler or a hand-written inference engine runs it: bias and
 * activation in the GEMM's epilogue, bias, residual and norm in one pass,
 * attention in one kernel whose scores never leave the chip. Each fused
 * step names the unfused steps it replaces, so the bytes one fusion saves
 * are counted and the time it saves is measured.
 */
#include "exp09.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- tensors ----------------------------------------------------------------------- */

static int tensor(exp09_layer *L, const char *name, size_t per_token, bool weight)
{
    if (L->nt >= EXP09_MAX_TENSORS)
        rl_die(RL_EXIT_FAILED, "exp-09: too many tensors in one layer");
    int id = L->nt++;
    size_t tokens = (size_t)L->batch * L->seq;
    L->t[id] = (exp09_tensor){.name = name, .weight = weight,
                              .count = weight ? per_token : per_token * tokens,
                              .first_count = weight ? per_token : per_token * (size_t)L->seq};
    return id;
}

static int activation(exp09_layer *L, const char *name, size_t cols) { return tensor(L, name, cols, false); }
static int weight(exp09_layer *L, const char *name, size_t count) { return tensor(L, name, count, true); }

/* The scores of every sequence and head: batch x heads x seq x seq, kept
 * per token as heads x seq values. */
static int scores(exp09_layer *L, const char *name)
{
    return activation(L, name, (size_t)L->cfg.heads * L->seq);
}

/* ---- steps --------------------------------------------------------------------------- */

/* The row of the table with this role: a fused program's steps take the
 * fused rows. NULL where the backend lacks it (layer.c's table). */
static const layer_variant *row(rl_ctx *ctx, const char *role)
{
    const layer_variant *v = (const layer_variant *)rl_variant_by_role(ctx, &layer_family, role);
    return v && rl_runs(ctx, &layer_family, KERNEL_VARIANT(v)) ? v : NULL;
}

typedef struct step_io {
    int y, x, r, w, bias, gamma, beta, mask, y2;
} step_io;

/* The shape every step of the layer shares; each adds its own. */
static layer_args shape(const exp09_layer *L)
{
    const exp09_config *c = &L->cfg;
    return (layer_args){.rows = L->batch * L->seq, .cols = c->hidden, .batch = L->batch, .seq = L->seq,
                        .heads = c->heads, .heads_kv = c->heads_kv, .head_dim = c->head_dim,
                        .scale = 1.0f / sqrtf((float)c->head_dim), .eps = c->llama ? 1e-5f : 1e-12f,
                        .rope_theta = 500000.0f,
                        .mask_kind = c->llama ? LAYER_MASK_CAUSAL : LAYER_MASK_PADDING};
}

typedef struct builder {
    rl_ctx *ctx;
    exp09_layer *L;
    exp09_program *P;
    bool missing;
    char *why;
    size_t len;
} builder;

static exp09_step *add_step(builder *b, const char *name, const char *role, step_io io, layer_args a)
{
    const layer_variant *v = row(b->ctx, role);
    if (!v) {
        if (!b->missing)
            snprintf(b->why, b->len, "the layer family has no '%s' on this backend", role);
        b->missing = true;
        return NULL;
    }
    if (b->P->n >= EXP09_MAX_STEPS)
        rl_die(RL_EXIT_FAILED, "exp-09: too many steps in one program");
    exp09_step *s = &b->P->s[b->P->n++];
    *s = (exp09_step){.name = name, .v = v, .a = a, .y = io.y, .y2 = io.y2 ? io.y2 : -1, .x = io.x,
                      .r = io.r ? io.r : -1, .w = io.w ? io.w : -1, .bias = io.bias ? io.bias : -1,
                      .gamma = io.gamma ? io.gamma : -1, .beta = io.beta ? io.beta : -1,
                      .mask = io.mask ? io.mask : -1};
    return s;
}

/* Ids start at 1 for every tensor but the input, so that 0 in a step_io
 * means none; the input is named INPUT there. */
#define INPUT (-100)
static int id_of(int io, const exp09_layer *L) { return io == INPUT ? L->input : io; }

/* Which unfused steps (by index) a fused step replaces. */
static void replaces(exp09_step *s, int first, int last)
{
    if (!s)
        return;
    for (int i = first; i <= last && s->nreplaces < EXP09_MAX_REPLACED; i++)
        s->replaces[s->nreplaces++] = i;
}

static layer_args gemm_shape(const exp09_layer *L, int n, int k, layer_epilogue epi)
{
    layer_args a = shape(L);
    a.cols = n, a.k = k, a.epilogue = epi;
    return a;
}

static layer_args cols_shape(const exp09_layer *L, int cols)
{
    layer_args a = shape(L);
    a.cols = cols;
    return a;
}

/* The attention's scores as rows of seq values. */
static layer_args scores_shape(const exp09_layer *L)
{
    layer_args a = shape(L);
    a.rows = L->batch * L->cfg.heads * L->seq;
    a.cols = L->seq;
    return a;
}

/* ---- BERT-large's encoder layer --------------------------------------------------------- */

typedef struct bert_weights {
    int mask, wqkv, bqkv, wo, bo, g1, b1, w1, bf1, w2, bf2, g2, b2;
} bert_weights;

static bert_weights bert_tensors(exp09_layer *L)
{
    int H = L->cfg.hidden, F = L->cfg.ffn;
    bert_weights w;
    w.mask = tensor(L, "mask", 0, false);
    L->t[w.mask].count = (size_t)L->batch * L->seq, L->t[w.mask].first_count = (size_t)L->seq;
    w.wqkv = weight(L, "w_qkv", (size_t)3 * H * H), w.bqkv = weight(L, "b_qkv", (size_t)3 * H);
    w.wo = weight(L, "w_out", (size_t)H * H), w.bo = weight(L, "b_out", (size_t)H);
    w.g1 = weight(L, "ln1_gamma", (size_t)H), w.b1 = weight(L, "ln1_beta", (size_t)H);
    w.w1 = weight(L, "w_ffn1", (size_t)F * H), w.bf1 = weight(L, "b_ffn1", (size_t)F);
    w.w2 = weight(L, "w_ffn2", (size_t)H * F), w.bf2 = weight(L, "b_ffn2", (size_t)H);
    w.g2 = weight(L, "ln2_gamma", (size_t)H), w.b2 = weight(L, "ln2_beta", (size_t)H);
    return w;
}

/* The unfused forward pass's activations its backward pass reads. */
typedef struct bert_saved {
    int qkv, p, c, h0, h, f1, f2, g2;
} bert_saved;

static void bert_unfused(builder *b, const bert_weights *w, bert_saved *saved)
{
    exp09_layer *L = b->L;
    int H = L->cfg.hidden, F = L->cfg.ffn, Q = 3 * H;
    int qkv0 = activation(L, "qkv0", Q), qkv = activation(L, "qkv", Q), s0 = scores(L, "scores"),
        s1 = scores(L, "scores_masked"), p = scores(L, "probs"), c = activation(L, "context", H),
        o0 = activation(L, "attn_out0", H), o1 = activation(L, "attn_out", H),
        h0 = activation(L, "residual1", H), h = activation(L, "ln1_out", H),
        f0 = activation(L, "ffn1_0", F), f1 = activation(L, "ffn1", F), f2 = activation(L, "gelu", F),
        g0 = activation(L, "ffn2_0", H), g1 = activation(L, "ffn2", H),
        g2 = activation(L, "residual2", H), y = activation(L, "out_unfused", H);
    L->output_unfused = y;
    *saved = (bert_saved){.qkv = qkv, .p = p, .c = c, .h0 = h0, .h = h, .f1 = f1, .f2 = f2, .g2 = g2};
    add_step(b, "qkv_matmul", "gemm", (step_io){.y = qkv0, .x = INPUT, .w = w->wqkv}, gemm_shape(L, Q, H, LAYER_EPI_NONE));
    add_step(b, "qkv_bias", "bias", (step_io){.y = qkv, .x = qkv0, .bias = w->bqkv}, cols_shape(L, Q));
    add_step(b, "attn_scores", "scores", (step_io){.y = s0, .x = qkv}, shape(L));
    add_step(b, "attn_scale_mask", "scale_mask", (step_io){.y = s1, .x = s0, .mask = w->mask}, shape(L));
    add_step(b, "attn_softmax", "softmax", (step_io){.y = p, .x = s1}, scores_shape(L));
    add_step(b, "attn_context", "context", (step_io){.y = c, .x = p, .r = qkv}, shape(L));
    add_step(b, "out_matmul", "gemm", (step_io){.y = o0, .x = c, .w = w->wo}, gemm_shape(L, H, H, LAYER_EPI_NONE));
    add_step(b, "out_bias", "bias", (step_io){.y = o1, .x = o0, .bias = w->bo}, cols_shape(L, H));
    add_step(b, "residual1", "add", (step_io){.y = h0, .x = o1, .r = INPUT}, cols_shape(L, H));
    add_step(b, "layernorm1", "layernorm", (step_io){.y = h, .x = h0, .gamma = w->g1, .beta = w->b1}, cols_shape(L, H));
    add_step(b, "ffn1_matmul", "gemm", (step_io){.y = f0, .x = h, .w = w->w1}, gemm_shape(L, F, H, LAYER_EPI_NONE));
    add_step(b, "ffn1_bias", "bias", (step_io){.y = f1, .x = f0, .bias = w->bf1}, cols_shape(L, F));
    add_step(b, "gelu", "gelu", (step_io){.y = f2, .x = f1}, cols_shape(L, F));
    add_step(b, "ffn2_matmul", "gemm", (step_io){.y = g0, .x = f2, .w = w->w2}, gemm_shape(L, H, F, LAYER_EPI_NONE));
    add_step(b, "ffn2_bias", "bias", (step_io){.y = g1, .x = g0, .bias = w->bf2}, cols_shape(L, H));
    add_step(b, "residual2", "add", (step_io){.y = g2, .x = g1, .r = h}, cols_shape(L, H));
    add_step(b, "layernorm2", "layernorm", (step_io){.y = y, .x = g2, .gamma = w->g2, .beta = w->b2}, cols_shape(L, H));
}

static void bert_fused(builder *b, const bert_weights *w)
{
    exp09_layer *L = b->L;
    int H = L->cfg.hidden, F = L->cfg.ffn, Q = 3 * H;
    int qkv = activation(L, "f_qkv", Q), c = activation(L, "f_context", H),
        o0 = activation(L, "f_attn_out0", H), h = activation(L, "f_ln1_out", H),
        f = activation(L, "f_gelu", F), g0 = activation(L, "f_ffn2_0", H),
        y = activation(L, "out_fused", H);
    L->output_fused = y;
    replaces(add_step(b, "qkv_matmul+bias", "gemm_epilogue", (step_io){.y = qkv, .x = INPUT, .w = w->wqkv, .bias = w->bqkv},
                      gemm_shape(L, Q, H, LAYER_EPI_BIAS)), 0, 1);
    replaces(add_step(b, "attention", "attention", (step_io){.y = c, .x = qkv, .mask = w->mask}, shape(L)), 2, 5);
    replaces(add_step(b, "out_matmul", "gemm", (step_io){.y = o0, .x = c, .w = w->wo}, gemm_shape(L, H, H, LAYER_EPI_NONE)), 6, 6);
    replaces(add_step(b, "bias+residual1+layernorm1", "bias_add_layernorm",
                      (step_io){.y = h, .x = o0, .r = INPUT, .bias = w->bo, .gamma = w->g1, .beta = w->b1}, cols_shape(L, H)), 7, 9);
    replaces(add_step(b, "ffn1_matmul+bias+gelu", "gemm_epilogue", (step_io){.y = f, .x = h, .w = w->w1, .bias = w->bf1},
                      gemm_shape(L, F, H, LAYER_EPI_BIAS_GELU)), 10, 12);
    replaces(add_step(b, "ffn2_matmul", "gemm", (step_io){.y = g0, .x = f, .w = w->w2}, gemm_shape(L, H, F, LAYER_EPI_NONE)), 13, 13);
    replaces(add_step(b, "bias+residual2+layernorm2", "bias_add_layernorm",
                      (step_io){.y = y, .x = g0, .r = h, .bias = w->bf2, .gamma = w->g2, .beta = w->b2}, cols_shape(L, H)), 14, 16);
}

/* A weight's gradient: one per layer, whatever the batch (not drawn). */
static int weight_grad(exp09_layer *L, const char *name, size_t count)
{
    int id = activation(L, name, 0);
    L->t[id].count = L->t[id].first_count = count;
    return id;
}

/* The backward pass of bert_unfused, step by step as PyTorch's autograd
 * runs it: each forward step's gradients in reverse order, a GEMM's two
 * (its input's and its weight's), a bias's column sums, a norm's input
 * gradient and its parameters', the attention's products each twice, and
 * the residual stream's two gradients added where its branches meet. The
 * forward bias and residual adds pass their gradient through unchanged
 * (no kernel); the QKV gradient is assembled from its parts (the copy
 * autograd makes where the forward split one tensor in three). */
static void bert_backward(builder *b, const bert_weights *w, const bert_saved *f)
{
    exp09_layer *L = b->L;
    size_t H = (size_t)L->cfg.hidden, F = (size_t)L->cfg.ffn, Q = 3 * H;
    int dy = activation(L, "d_out", H), d_res2 = activation(L, "d_residual2", H),
        d_ln2 = weight_grad(L, "d_ln2_gamma_beta", 2 * H), d_bf2 = weight_grad(L, "d_b_ffn2", H),
        d_gelu = activation(L, "d_gelu", F), d_w2 = weight_grad(L, "d_w_ffn2", H * F),
        d_f1 = activation(L, "d_ffn1", F), d_bf1 = weight_grad(L, "d_b_ffn1", F),
        d_h_ffn = activation(L, "d_ln1_out_ffn", H), d_w1 = weight_grad(L, "d_w_ffn1", F * H),
        d_h = activation(L, "d_ln1_out", H), d_res1 = activation(L, "d_residual1", H),
        d_ln1 = weight_grad(L, "d_ln1_gamma_beta", 2 * H), d_bo = weight_grad(L, "d_b_out", H),
        d_c = activation(L, "d_context", H), d_wo = weight_grad(L, "d_w_out", H * H),
        d_p = scores(L, "d_probs"), d_v = activation(L, "d_v", H), d_s1 = scores(L, "d_scores_masked"),
        d_s0 = scores(L, "d_scores"), d_qk = activation(L, "d_qk", 2 * H), d_qkv = activation(L, "d_qkv", Q),
        d_bqkv = weight_grad(L, "d_b_qkv", Q), d_x_attn = activation(L, "d_input_attn", H),
        d_wqkv = weight_grad(L, "d_w_qkv", Q * H), d_x = activation(L, "d_input", H);
    L->grad_output = dy, L->grad_input = d_x;
    int h = (int)H, ff = (int)F, q = (int)Q;
    layer_args unmasked = shape(L), concat = cols_shape(L, q);
    unmasked.mask_kind = LAYER_MASK_NONE;
    concat.k = 2 * h;
    add_step(b, "layernorm2_backward", "layernorm_backward", (step_io){.y = d_res2, .x = dy, .r = f->g2, .gamma = w->g2}, cols_shape(L, h));
    add_step(b, "layernorm2_params", "layernorm_param_grad", (step_io){.y = d_ln2, .x = dy, .r = f->g2}, cols_shape(L, h));
    add_step(b, "ffn2_bias_grad", "bias_grad", (step_io){.y = d_bf2, .x = d_res2}, cols_shape(L, h));
    add_step(b, "ffn2_matmul_dx", "gemm_dx", (step_io){.y = d_gelu, .x = d_res2, .w = w->w2}, gemm_shape(L, h, ff, LAYER_EPI_NONE));
    add_step(b, "ffn2_matmul_dw", "gemm_dw", (step_io){.y = d_w2, .x = d_res2, .r = f->f2}, gemm_shape(L, h, ff, LAYER_EPI_NONE));
    add_step(b, "gelu_backward", "gelu_backward", (step_io){.y = d_f1, .x = d_gelu, .r = f->f1}, cols_shape(L, ff));
    add_step(b, "ffn1_bias_grad", "bias_grad", (step_io){.y = d_bf1, .x = d_f1}, cols_shape(L, ff));
    add_step(b, "ffn1_matmul_dx", "gemm_dx", (step_io){.y = d_h_ffn, .x = d_f1, .w = w->w1}, gemm_shape(L, ff, h, LAYER_EPI_NONE));
    add_step(b, "ffn1_matmul_dw", "gemm_dw", (step_io){.y = d_w1, .x = d_f1, .r = f->h}, gemm_shape(L, ff, h, LAYER_EPI_NONE));
    add_step(b, "residual2_grad", "add", (step_io){.y = d_h, .x = d_h_ffn, .r = d_res2}, cols_shape(L, h));
    add_step(b, "layernorm1_backward", "layernorm_backward", (step_io){.y = d_res1, .x = d_h, .r = f->h0, .gamma = w->g1}, cols_shape(L, h));
    add_step(b, "layernorm1_params", "layernorm_param_grad", (step_io){.y = d_ln1, .x = d_h, .r = f->h0}, cols_shape(L, h));
    add_step(b, "out_bias_grad", "bias_grad", (step_io){.y = d_bo, .x = d_res1}, cols_shape(L, h));
    add_step(b, "out_matmul_dx", "gemm_dx", (step_io){.y = d_c, .x = d_res1, .w = w->wo}, gemm_shape(L, h, h, LAYER_EPI_NONE));
    add_step(b, "out_matmul_dw", "gemm_dw", (step_io){.y = d_wo, .x = d_res1, .r = f->c}, gemm_shape(L, h, h, LAYER_EPI_NONE));
    add_step(b, "attn_context_dp", "context_dp", (step_io){.y = d_p, .x = d_c, .r = f->qkv}, shape(L));
    add_step(b, "attn_context_dv", "context_dv", (step_io){.y = d_v, .x = f->p, .r = d_c}, shape(L));
    add_step(b, "attn_softmax_backward", "softmax_backward", (step_io){.y = d_s1, .x = d_p, .r = f->p}, scores_shape(L));
    add_step(b, "attn_scale_backward", "scale_mask", (step_io){.y = d_s0, .x = d_s1}, unmasked);
    add_step(b, "attn_scores_backward", "scores_backward", (step_io){.y = d_qk, .x = d_s0, .r = f->qkv}, shape(L));
    add_step(b, "qkv_grad_concat", "concat", (step_io){.y = d_qkv, .x = d_qk, .r = d_v}, concat);
    add_step(b, "qkv_bias_grad", "bias_grad", (step_io){.y = d_bqkv, .x = d_qkv}, cols_shape(L, q));
    add_step(b, "qkv_matmul_dx", "gemm_dx", (step_io){.y = d_x_attn, .x = d_qkv, .w = w->wqkv}, gemm_shape(L, q, h, LAYER_EPI_NONE));
    add_step(b, "qkv_matmul_dw", "gemm_dw", (step_io){.y = d_wqkv, .x = d_qkv, .r = INPUT}, gemm_shape(L, q, h, LAYER_EPI_NONE));
    add_step(b, "residual1_grad", "add", (step_io){.y = d_x, .x = d_x_attn, .r = d_res1}, cols_shape(L, h));
}

/* ---- a Llama-style decoder block ------------------------------------------------------- */

typedef struct llama_weights {
    int g_in, wqkv, wo, g_post, wgu, wd;
} llama_weights;

static int qkv_width(const exp09_config *c) { return (c->heads + 2 * c->heads_kv) * c->head_dim; }

static llama_weights llama_tensors(exp09_layer *L)
{
    int H = L->cfg.hidden, F = L->cfg.ffn, Q = qkv_width(&L->cfg);
    llama_weights w;
    w.g_in = weight(L, "norm1_gamma", (size_t)H), w.wqkv = weight(L, "w_qkv", (size_t)Q * H);
    w.wo = weight(L, "w_out", (size_t)H * H), w.g_post = weight(L, "norm2_gamma", (size_t)H);
    w.wgu = weight(L, "w_gate_up", (size_t)2 * F * H), w.wd = weight(L, "w_down", (size_t)H * F);
    return w;
}

static void llama_unfused(builder *b, const llama_weights *w)
{
    exp09_layer *L = b->L;
    int H = L->cfg.hidden, F = L->cfg.ffn, Q = qkv_width(&L->cfg);
    int n1 = activation(L, "norm1", H), qkv0 = activation(L, "qkv0", Q), qkv = activation(L, "qkv_rope", Q),
        s0 = scores(L, "scores"), s1 = scores(L, "scores_masked"), p = scores(L, "probs"),
        c = activation(L, "context", H), o = activation(L, "attn_out", H), h = activation(L, "residual1", H),
        n2 = activation(L, "norm2", H), gu = activation(L, "gate_up", 2 * (size_t)F),
        a = activation(L, "swiglu", F), d = activation(L, "down", H), y = activation(L, "out_unfused", H);
    L->output_unfused = y;
    add_step(b, "rmsnorm1", "rmsnorm", (step_io){.y = n1, .x = INPUT, .gamma = w->g_in}, cols_shape(L, H));
    add_step(b, "qkv_matmul", "gemm", (step_io){.y = qkv0, .x = n1, .w = w->wqkv}, gemm_shape(L, Q, H, LAYER_EPI_NONE));
    add_step(b, "rope", "rope", (step_io){.y = qkv, .x = qkv0}, shape(L));
    add_step(b, "attn_scores", "scores", (step_io){.y = s0, .x = qkv}, shape(L));
    add_step(b, "attn_scale_mask", "scale_mask", (step_io){.y = s1, .x = s0}, shape(L));
    add_step(b, "attn_softmax", "softmax", (step_io){.y = p, .x = s1}, scores_shape(L));
    add_step(b, "attn_context", "context", (step_io){.y = c, .x = p, .r = qkv}, shape(L));
    add_step(b, "out_matmul", "gemm", (step_io){.y = o, .x = c, .w = w->wo}, gemm_shape(L, H, H, LAYER_EPI_NONE));
    add_step(b, "residual1", "add", (step_io){.y = h, .x = o, .r = INPUT}, cols_shape(L, H));
    add_step(b, "rmsnorm2", "rmsnorm", (step_io){.y = n2, .x = h, .gamma = w->g_post}, cols_shape(L, H));
    add_step(b, "gate_up_matmul", "gemm", (step_io){.y = gu, .x = n2, .w = w->wgu}, gemm_shape(L, 2 * F, H, LAYER_EPI_NONE));
    add_step(b, "silu_gate", "silu_gate", (step_io){.y = a, .x = gu}, cols_shape(L, F));
    add_step(b, "down_matmul", "gemm", (step_io){.y = d, .x = a, .w = w->wd}, gemm_shape(L, H, F, LAYER_EPI_NONE));
    add_step(b, "residual2", "add", (step_io){.y = y, .x = d, .r = h}, cols_shape(L, H));
}

static void llama_fused(builder *b, const llama_weights *w)
{
    exp09_layer *L = b->L;
    int H = L->cfg.hidden, F = L->cfg.ffn, Q = qkv_width(&L->cfg);
    int n1 = activation(L, "f_norm1", H), qkv0 = activation(L, "f_qkv0", Q), qkv = activation(L, "f_qkv_rope", Q),
        c = activation(L, "f_context", H), o = activation(L, "f_attn_out", H), h = activation(L, "f_residual1", H),
        n2 = activation(L, "f_norm2", H), gu = activation(L, "f_gate_up", 2 * (size_t)F),
        a = activation(L, "f_swiglu", F), y = activation(L, "out_fused", H);
    L->output_fused = y;
    replaces(add_step(b, "rmsnorm1", "rmsnorm", (step_io){.y = n1, .x = INPUT, .gamma = w->g_in}, cols_shape(L, H)), 0, 0);
    replaces(add_step(b, "qkv_matmul", "gemm", (step_io){.y = qkv0, .x = n1, .w = w->wqkv}, gemm_shape(L, Q, H, LAYER_EPI_NONE)), 1, 1);
    replaces(add_step(b, "rope", "rope", (step_io){.y = qkv, .x = qkv0}, shape(L)), 2, 2);
    replaces(add_step(b, "attention", "attention", (step_io){.y = c, .x = qkv}, shape(L)), 3, 6);
    replaces(add_step(b, "out_matmul", "gemm", (step_io){.y = o, .x = c, .w = w->wo}, gemm_shape(L, H, H, LAYER_EPI_NONE)), 7, 7);
    replaces(add_step(b, "residual1+rmsnorm2", "add_rmsnorm", (step_io){.y = n2, .x = o, .r = INPUT, .gamma = w->g_post, .y2 = h},
                      cols_shape(L, H)), 8, 9);
    /* the CUDA epilogue's GEMM writes gate and up first (layer.cu): y2 */
    replaces(add_step(b, "gate_up_matmul+silu_gate", "gemm_epilogue", (step_io){.y = a, .x = n2, .w = w->wgu, .y2 = gu},
                      gemm_shape(L, F, H, LAYER_EPI_SILU_GATE)), 10, 11);
    replaces(add_step(b, "down_matmul+residual2", "gemm_epilogue", (step_io){.y = y, .x = a, .w = w->wd, .r = h},
                      gemm_shape(L, H, F, LAYER_EPI_BIAS_ADD)), 12, 13);
}

/* ---- the layer --------------------------------------------------------------------------- */

/* Before the buffers exist, the counting (layer_bytes) needs to know only
 * which inputs a step has (an optional bias): a stand-in address marks
 * them until the layer opens and binds the real ones. */
static float present;
static float *stand_in(int id) { return id >= 0 ? &present : NULL; }

static void fix_ids(exp09_layer *L, exp09_program *P)
{
    for (int i = 0; i < P->n; i++) {
        exp09_step *s = &P->s[i];
        s->x = id_of(s->x, L);
        s->r = id_of(s->r, L);
        layer_args *a = &s->a;
        a->y = stand_in(s->y), a->y2 = stand_in(s->y2), a->x = stand_in(s->x), a->r = stand_in(s->r);
        a->w = stand_in(s->w), a->bias = stand_in(s->bias), a->gamma = stand_in(s->gamma);
        a->beta = stand_in(s->beta), a->mask = stand_in(s->mask);
    }
}

bool exp09_wants_backward(const rl_ctx *ctx, const exp09_config *cfg, int batch)
{
    (void)batch;
    return ctx->args.mode != RL_MODE_LAB && !cfg->llama;
}

bool exp09_layer_plan(rl_ctx *ctx, exp09_layer *L, const exp09_config *cfg, int batch, int seq,
                      bool backward, char *why, size_t len)
{
    if (backward && cfg->llama)
        rl_die(RL_EXIT_FAILED, "exp-09: the backward pass is built for BERT only");
    *L = (exp09_layer){.cfg = *cfg, .batch = batch, .seq = seq, .grad_output = -1, .grad_input = -1};
    L->input = activation(L, "input", (size_t)cfg->hidden);
    builder b = {ctx, L, &L->unfused, false, why, len};
    L->unfused.name = "unfused", L->fused.name = "fused", L->backward.name = "backward";
    if (cfg->llama) {
        llama_weights w = llama_tensors(L);
        llama_unfused(&b, &w);
        b.P = &L->fused;
        llama_fused(&b, &w);
    } else {
        bert_weights w = bert_tensors(L);
        bert_saved saved;
        bert_unfused(&b, &w, &saved);
        b.P = &L->fused;
        bert_fused(&b, &w);
        if (backward) {
            b.P = &L->backward;
            bert_backward(&b, &w, &saved);
        }
    }
    fix_ids(L, &L->unfused);
    fix_ids(L, &L->fused);
    fix_ids(L, &L->backward);
    return !b.missing;
}

double exp09_layer_bytes(const exp09_layer *L)
{
    double bytes = 0;
    for (int i = 0; i < L->nt; i++)
        bytes += 4.0 * (double)L->t[i].count;
    return bytes;
}

static float *dev_of(const exp09_layer *L, int id) { return id >= 0 ? L->t[id].dev : NULL; }

/* Binds every step's pointers to the tensors' device buffers. */
static void bind(rl_ctx *ctx, exp09_layer *L, exp09_program *P)
{
    for (int i = 0; i < P->n; i++) {
        exp09_step *s = &P->s[i];
        layer_args *a = &s->a;
        a->y = dev_of(L, s->y), a->y2 = dev_of(L, s->y2), a->x = dev_of(L, s->x), a->r = dev_of(L, s->r);
        a->w = dev_of(L, s->w), a->bias = dev_of(L, s->bias), a->gamma = dev_of(L, s->gamma);
        a->beta = dev_of(L, s->beta), a->mask = dev_of(L, s->mask);
        a->stream = rl_stream(ctx->be);
        s->launch = RL_LAUNCHER(ctx, s->v);
    }
}

/* The input and the weights: uniform, scaled so that every activation
 * stays of order one through the layer (a weight's rows by 1/sqrt(k));
 * norms' gamma near 1; the padding mask hides the last eighth of each
 * sequence's keys, as a batch of unequal sentences does. */
static void draw(rl_ctx *ctx, exp09_layer *L, int id)
{
    exp09_tensor *t = &L->t[id];
    const char *n = t->name;
    float lo = -1, hi = 1;
    if (strstr(n, "gamma"))
        lo = 0.9f, hi = 1.1f;
    else if (strstr(n, "beta") || n[0] == 'b')
        lo = -0.1f, hi = 0.1f;
    else if (n[0] == 'w') {
        int k = strcmp(n, "w_ffn2") && strcmp(n, "w_down") ? L->cfg.hidden : L->cfg.ffn;
        hi = sqrtf(3.0f / (float)k), lo = -hi;
    }
    float *host;
    if (!strcmp(n, "mask")) {
        host = rl_host_alloc(sizeof(float) * t->count);
        int valid = L->seq - L->seq / 8;
        for (size_t i = 0; i < t->count; i++)
            host[i] = (int)(i % (size_t)L->seq) < valid ? 0.0f : LAYER_MASKED;
    } else {
        host = rl_host_random(ctx, t->count, lo, hi);
    }
    rl_upload(ctx->be, t->dev, host, sizeof(float) * t->count);
    rl_host_free(host);
}

void exp09_layer_open(rl_ctx *ctx, exp09_layer *L)
{
    rl_progress_note(ctx, "drawing the layer's weights");
    for (int i = 0; i < L->nt; i++) {
        L->t[i].dev = rl_alloc(ctx->be, sizeof(float) * (L->t[i].count ? L->t[i].count : 1));
        if (L->t[i].weight || i == L->input || i == L->grad_output || !strcmp(L->t[i].name, "mask"))
            draw(ctx, L, i);
    }
    bind(ctx, L, &L->unfused);
    bind(ctx, L, &L->fused);
    bind(ctx, L, &L->backward);
    /* every intermediate written once, so that a step timed alone reads a
     * real input whichever group runs first (the backward pass reads the
     * unfused forward's activations) */
    exp09_program_run(&L->unfused);
    exp09_program_run(&L->fused);
    exp09_program_run(&L->backward);
    rl_sync(ctx->be);
}

void exp09_layer_close(rl_ctx *ctx, exp09_layer *L)
{
    for (int i = 0; i < L->nt; i++) {
        rl_free(ctx->be, L->t[i].dev);
        rl_host_free(L->t[i].ref);
        L->t[i].dev = NULL, L->t[i].ref = NULL;
    }
}

void exp09_step_run(const exp09_step *s) { s->launch(&s->a); }

void exp09_program_run(const exp09_program *P)
{
    for (int i = 0; i < P->n; i++)
        exp09_step_run(&P->s[i]);
}

double exp09_program_bytes(const exp09_program *P, int backend)
{
    double bytes = 0;
    for (int i = 0; i < P->n; i++)
        bytes += layer_bytes(P->s[i].v, &P->s[i].a, backend);
    return bytes;
}

double exp09_program_flops(const exp09_program *P)
{
    double flops = 0;
    for (int i = 0; i < P->n; i++)
        flops += layer_flops(P->s[i].v, &P->s[i].a);
    return flops;
}
