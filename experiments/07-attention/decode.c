/*
 * decode.c -- experiment 07's decode parts: one per configuration and
 * cache length L, its points the batches. Every sequence has its own
 * cache of L keys and values per KV head, so the bytes grow with the
 * batch as the FLOPs do: the arithmetic intensity stays G FLOP/B.
 */
#include "exp07.h"

/* A configuration at one L: the cache of its largest batch (smaller
 * batches read its first sequences), an output per variant, the
 * materialized variant's scratch, and the double reference of the first
 * rows, which every batch shares (a row depends on its own sequence
 * only). */
typedef struct decode_part {
    const attn_config *cfg;
    int ctx, bmax;
    bool materialized; /* the materialized variant runs beside the fused one */
    int shared_group;  /* the group of its batches, where they have none of their own */
    size_t scratch_bytes;
    int ref_rows, drawn_seqs;
    attention_buffers b;
} decode_part;

static size_t seq_kv(const decode_part *P) { return (size_t)P->cfg->heads_kv * P->ctx * P->cfg->dim; }
static size_t seq_q(const decode_part *P) { return (size_t)P->cfg->heads_q * P->cfg->dim; }

static void open_decode(rl_ctx *ctx, void *state)
{
    decode_part *P = state;
    attention_args shape = {.batch = P->drawn_seqs, .heads_q = P->cfg->heads_q,
                            .heads_kv = P->cfg->heads_kv, .ctx = P->ctx, .dim = P->cfg->dim};
    exp07_open_attention_buffers(ctx, &P->b, shape, ATTN_DECODE, seq_q(P), seq_kv(P),
                                 (size_t)P->drawn_seqs, (size_t)P->bmax, P->scratch_bytes,
                                 (size_t)P->ref_rows);
}

static void close_decode(rl_ctx *ctx, const rl_points *pts, void *state)
{
    (void)pts;
    exp07_free_attention_buffers(ctx, &((decode_part *)state)->b);
}

static attention_args args_of(rl_ctx *ctx, const decode_part *P, int batch, float *out)
{
    return (attention_args){out, P->b.q, P->b.k, P->b.v, batch, P->cfg->heads_q, P->cfg->heads_kv,
                            P->ctx, P->cfg->dim, P->b.scratch, rl_stream(ctx->be)};
}

/* The materialized point is checked against the reference rows; the
 * fused one also against the materialized output on every other row. */
static void prepare_decode(rl_ctx *ctx, rl_point *p)
{
    exp07_call *c = RL_DATA_MUT(exp07_call, p);
    decode_part *P = c->part;
    const attention_variant *v = (const attention_variant *)p->variant;
    c->attn.args = args_of(ctx, P, c->batch, v->fused ? P->b.out_fused : P->b.out_mat);
    p->out = c->attn.args.out;
    if (!v->fused) {
        p->want = P->b.ref;
        p->count = (size_t)c->validated_rows * c->dim;
        return;
    }
    attention_args mat = args_of(ctx, P, c->batch, P->b.out_mat);
    size_t rows = (size_t)c->batch * c->heads_q;
    p->want = exp07_fused_want(ctx, &mat, ATTN_DECODE, P->b.ref, (size_t)c->validated_rows, rows);
    p->frees_want = true;
    p->count = rows * c->dim;
}

/* A batch's decode fits the working-set limit: K and V, and the
 * materialized scores. */
bool exp07_decode_fits(const rl_ctx *ctx, const attn_config *cfg, int ctx_len, int batch)
{
    double kv = (double)batch * ctx_len * cfg->heads_kv * cfg->dim * 4.0;
    double scores = (double)batch * cfg->heads_q * ctx_len * 6.0;
    return kv + scores <= rl_max_bytes(ctx);
}

/* The largest batch whose part fits. */
static int batch_cap(const rl_ctx *ctx, const attn_config *cfg, int ctx_len, const rl_steps *batches)
{
    int cap = 0;
    for (int i = 0; i < batches->n; i++)
        if (exp07_decode_fits(ctx, cfg, ctx_len, (int)batches->v[i]))
            cap = (int)batches->v[i];
    return cap;
}

rl_part exp07_decode_part(rl_ctx *ctx, const attn_config *cfg, int ctx_len, const rl_steps *batches,
                          bool materialized)
{
    int bmax = batch_cap(ctx, cfg, ctx_len, batches);
    if (!bmax)
        return (rl_part){0};
    decode_part *P = RL_NEW(ctx, decode_part);
    *P = (decode_part){.cfg = cfg, .ctx = ctx_len, .bmax = bmax, .materialized = materialized};
    P->ref_rows = exp07_attention_validated_rows((long)bmax * cfg->heads_q, ctx_len, cfg->dim,
                                                 cfg->heads_q);
    P->drawn_seqs = (P->ref_rows + cfg->heads_q - 1) / cfg->heads_q;
    /* One group per part: its batches and variants timed in the same
     * rounds, beside one set of probes (a group per batch spent three
     * times the points' own time on probes). A group's probe of a level
     * is as large as its largest point there, so a point that half fits
     * the cache can beat it; the full sweep, with time for it, gives each
     * batch short of 4x the LLC a group and probes of its own. */
    P->shared_group = rl_group_new(ctx);
    return (rl_part){.open = open_decode, .done = close_decode, .state = P};
}

static void add_point(rl_ctx *ctx, decode_part *P, const attention_variant *v, int batch, int group)
{
    const attn_config *cfg = P->cfg;
    int backend = rl_kernel_backend(ctx), rows = batch * cfg->heads_q;
    attention_args shape = {.batch = batch, .heads_q = cfg->heads_q, .heads_kv = cfg->heads_kv,
                            .ctx = P->ctx, .dim = cfg->dim};
    exp07_call *c = RL_NEW(ctx, exp07_call);
    *c = (exp07_call){.kind = DECODE_ATTN, .phase = "decode", .config = cfg->name, .batch = batch,
                      .ctx = P->ctx, .heads_q = cfg->heads_q, .heads_kv = cfg->heads_kv,
                      .group = cfg->heads_q / cfg->heads_kv, .dim = cfg->dim,
                      .validated_rows = rows < P->ref_rows ? rows : P->ref_rows, .part = P,
                      .attn.launch = RL_LAUNCHER(ctx, v)};
    c->kv_bytes = attention_kv_bytes(ATTN_DECODE, &shape);
    c->score_bytes = v->fused ? 0 : attention_score_bytes(backend) * attention_scores(ATTN_DECODE, &shape);
    double bytes = attention_bytes(ATTN_DECODE, v->fused, backend, &shape);
    rl_point_add(ctx, &(rl_point){
        .variant = KERNEL_VARIANT(v), .group = group, .call = attention_kernel_call(&c->attn),
        RL_POINT_DATA(c), .prepare = prepare_decode,
        .count = (size_t)(v->fused ? rows : c->validated_rows) * cfg->dim,
        .atol = attention_atol(v, backend, v->fused && rows > c->validated_rows),
        .rtol = ATTENTION_RTOL, .flops = attention_flops(ATTN_DECODE, &shape),
        .bytes = bytes, .footprint = bytes, .pattern = RL_READ,
        /* the verdicts read the fused points from L = 2048 on */
        .optional = !v->fused || P->ctx < 2048});
}

void exp07_decode_points(rl_ctx *ctx, void *part_state, int batch)
{
    decode_part *P = part_state;
    const attn_config *cfg = P->cfg;
    int backend = rl_kernel_backend(ctx);
    attention_args shape = {.batch = batch, .heads_q = cfg->heads_q, .heads_kv = cfg->heads_kv,
                            .ctx = P->ctx, .dim = cfg->dim};
    bool own = ctx->args.mode == RL_MODE_FULL &&
               !rl_beyond_cache(ctx, attention_bytes(ATTN_DECODE, true, backend, &shape));
    int group = own ? rl_group_new(ctx) : P->shared_group;
    for (const attention_variant *v = attention_variants; v->name; v++) {
        if (v->phase != ATTN_DECODE || !attention_family.has(v, backend))
            continue;
        /* the fused point's check runs the materialized variant: its scratch too */
        size_t scratch = attention_scratch_bytes(v, backend, &shape);
        P->scratch_bytes = scratch > P->scratch_bytes ? scratch : P->scratch_bytes;
        if ((v->fused || P->materialized) && rl_runs(ctx, &attention_family, KERNEL_VARIANT(v)))
            add_point(ctx, P, v, batch, group);
    }
}
