/*
 * prefill.c -- experiment 07's prefill parts: one per prompt length n,
 * every query against every key. The materialized path writes the n x n
 * scores to memory between its two library GEMMs; the fused one keeps
 * each tile of them in cache (CPU) or shared memory (GPU).
 */
#include "exp07.h"

enum { PREFILL_DIM = 128 };

int exp07_prefill_heads(const rl_ctx *ctx) { return ctx->kind == RL_CUDA ? 16 : 1; }

/* One length n: Q, K and V of every head (head 0 drawn, the others
 * repeating it), an output per variant, the largest scratch. */
typedef struct prefill_part {
    int n, heads, ref_rows, group;
    size_t scratch_bytes;
    attention_buffers b;
} prefill_part;

static size_t head_items(const prefill_part *P) { return (size_t)P->n * PREFILL_DIM; }

static void open_prefill(rl_ctx *ctx, void *state)
{
    prefill_part *P = state;
    attention_args shape = {.batch = 1, .heads_q = 1, .heads_kv = 1, .ctx = P->n, .dim = PREFILL_DIM};
    exp07_open_attention_buffers(ctx, &P->b, shape, ATTN_PREFILL, head_items(P), head_items(P), 1,
                                 (size_t)P->heads, P->scratch_bytes, (size_t)P->ref_rows);
}

static void close_prefill(rl_ctx *ctx, const rl_points *pts, void *state)
{
    (void)pts;
    exp07_free_attention_buffers(ctx, &((prefill_part *)state)->b);
}

static attention_args args_of(rl_ctx *ctx, const prefill_part *P, float *out)
{
    return (attention_args){out, P->b.q, P->b.k, P->b.v, P->heads, 1, 1, P->n, PREFILL_DIM,
                            P->b.scratch, rl_stream(ctx->be)};
}

static void prepare_prefill(rl_ctx *ctx, rl_point *p)
{
    exp07_call *c = RL_DATA_MUT(exp07_call, p);
    prefill_part *P = c->part;
    bool fused = ((const attention_variant *)p->variant)->fused;
    c->attn.args = args_of(ctx, P, fused ? P->b.out_fused : P->b.out_mat);
    p->out = c->attn.args.out;
    if (!fused) {
        p->want = P->b.ref;
        return;
    }
    attention_args mat = args_of(ctx, P, P->b.out_mat);
    p->want = exp07_fused_want(ctx, &mat, ATTN_PREFILL, P->b.ref, (size_t)P->ref_rows,
                               (size_t)P->heads * P->n);
    p->frees_want = true;
}

static attention_args shape_of(const prefill_part *P)
{
    return (attention_args){.batch = P->heads, .heads_q = 1, .heads_kv = 1, .ctx = P->n,
                            .dim = PREFILL_DIM};
}

/* The materialized scores must fit the working-set limit. */
bool exp07_prefill_fits(const rl_ctx *ctx, int n)
{
    prefill_part P = {.n = n, .heads = exp07_prefill_heads(ctx)};
    attention_args shape = shape_of(&P);
    return attention_score_bytes(rl_kernel_backend(ctx)) * attention_scores(ATTN_PREFILL, &shape) <=
           rl_max_bytes(ctx);
}

rl_part exp07_prefill_part(rl_ctx *ctx, int n)
{
    prefill_part *P = RL_NEW(ctx, prefill_part);
    *P = (prefill_part){.n = n, .heads = exp07_prefill_heads(ctx)};
    P->ref_rows = exp07_attention_validated_rows(n, n, PREFILL_DIM, 64);
    P->group = rl_group_new(ctx);
    return (rl_part){.open = open_prefill, .done = close_prefill, .state = P};
}

static void add_point(rl_ctx *ctx, prefill_part *P, const attention_variant *v)
{
    int backend = rl_kernel_backend(ctx), n = P->n;
    attention_args shape = shape_of(P);
    exp07_call *c = RL_NEW(ctx, exp07_call);
    *c = (exp07_call){.kind = PREFILL_ATTN, .phase = "prefill", .config = "", .batch = P->heads,
                      .ctx = n, .heads_q = 1, .heads_kv = 1, .group = 1, .dim = PREFILL_DIM,
                      .validated_rows = P->ref_rows, .part = P, .attn.launch = RL_LAUNCHER(ctx, v),
                      .kv_bytes = attention_kv_bytes(ATTN_PREFILL, &shape),
                      .score_bytes = v->fused ? 0 : attention_score_bytes(backend) *
                                                        attention_scores(ATTN_PREFILL, &shape)};
    double bytes = attention_bytes(ATTN_PREFILL, v->fused, backend, &shape);
    /* The fused path's working set: Q, K, V and O, its tiles in cache. */
    rl_point_add(ctx, &(rl_point){
        .variant = KERNEL_VARIANT(v), .group = P->group, .call = attention_kernel_call(&c->attn),
        RL_POINT_DATA(c), .prepare = prepare_prefill,
        .count = (size_t)(v->fused ? P->heads * n : P->ref_rows) * PREFILL_DIM,
        .atol = attention_atol(v, backend, v->fused && P->heads * n > P->ref_rows),
        .rtol = ATTENTION_RTOL,
        .flops = attention_flops(ATTN_PREFILL, &shape), .bytes = bytes, .footprint = bytes,
        .pattern = RL_COPY});
}

/* Every prefill variant of the backend, in one group. */
void exp07_prefill_points(rl_ctx *ctx, void *part_state)
{
    prefill_part *P = part_state;
    int backend = rl_kernel_backend(ctx);
    attention_args shape = shape_of(P);
    for (const attention_variant *v = attention_variants; v->name; v++) {
        if (v->phase != ATTN_PREFILL || !attention_family.has(v, backend))
            continue;
        /* the fused point's check runs the materialized variant: its scratch too */
        size_t scratch = attention_scratch_bytes(v, backend, &shape);
        P->scratch_bytes = scratch > P->scratch_bytes ? scratch : P->scratch_bytes;
        if (rl_runs(ctx, &attention_family, KERNEL_VARIANT(v)))
            add_point(ctx, P, v);
    }
}
