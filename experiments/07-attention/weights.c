/*
 * weights.c -- experiment 07's weight GEMM: the rest of a decode step,
 * Llama 3 8B's layer as one 53248 x 4096 FP16 matrix, at each batch.
 * Its weights are read once per step whatever the batch, so its
 * arithmetic intensity grows with the batch (the existing gemv family:
 * the bandwidth kernel while it takes the batch, the library GEMM after).
 */
#include "exp07.h"

typedef struct weight_part {
    int bmax, ref_rows;
    size_t scratch_bytes;
    fp16 *w, *x, *hw, *hx; /* device; host: the first ref_rows rows, every token */
    float *y;
    void *scratch;
    double *ref; /* the first rows at ref_batch tokens */
    int ref_batch;
} weight_part;

static void open_weights(rl_ctx *ctx, void *state)
{
    weight_part *W = state;
    W->hw = rl_host_random_f16(ctx, (size_t)W->ref_rows * LAYER_K, -1, 1);
    W->w = exp07_upload_repeated(ctx, W->hw, W->ref_rows, LAYER_ROWS, LAYER_K * sizeof(fp16));
    W->hx = rl_host_random_f16(ctx, (size_t)W->bmax * LAYER_K, -1, 1);
    W->x = rl_alloc_copy(ctx->be, W->hx, (size_t)W->bmax * LAYER_K * sizeof(fp16));
    W->y = rl_alloc(ctx->be, (size_t)W->bmax * LAYER_ROWS * sizeof(float));
    W->scratch = W->scratch_bytes ? rl_alloc(ctx->be, W->scratch_bytes) : NULL;
    W->ref = NULL;
    W->ref_batch = 0;
}

static void close_weights(rl_ctx *ctx, const rl_points *pts, void *state)
{
    (void)pts;
    weight_part *W = state;
    rl_free(ctx->be, W->w);
    rl_free(ctx->be, W->x);
    rl_free(ctx->be, W->y);
    rl_free(ctx->be, W->scratch);
    rl_host_free(W->hw);
    rl_host_free(W->hx);
    rl_host_free(W->ref);
}

/* Every row is computed, the first validated_rows checked (the check
 * call computes only those): the reference is shared by the points at
 * one batch. */
static void prepare_weights(rl_ctx *ctx, rl_point *p)
{
    exp07_call *c = RL_DATA_MUT(exp07_call, p);
    weight_part *W = c->part;
    c->gemm.args = (gemv_args){W->y, W->w, W->x, LAYER_ROWS, LAYER_K, c->batch, W->scratch,
                               rl_stream(ctx->be)};
    c->gemm_check.args = c->gemm.args;
    c->gemm_check.args.rows = c->validated_rows;
    if (W->ref_batch != c->batch) {
        rl_host_free(W->ref);
        W->ref = rl_host_alloc(sizeof(double) * (size_t)c->validated_rows * c->batch);
        gemv_reference(W->ref, W->hw, W->hx, c->validated_rows, LAYER_K, c->batch);
        W->ref_batch = c->batch;
    }
    p->out = W->y;
    p->want = W->ref;
}

/* The hand-written bandwidth kernel while it takes the batch (to 8
 * tokens), else the library GEMM on blocks of rows where the backend has
 * it (the CPU: the whole-matrix library path converts every weight to
 * FP32 in memory each call, slower at 16 and 64 tokens: the README beside
 * this file, "Method"), else the library GEMM: each the best the family has there. */
static const gemv_variant *variant_for(const rl_ctx *ctx, int batch)
{
    const gemv_variant *bw = (const gemv_variant *)rl_variant_by_role(ctx, &gemv_family, "bandwidth");
    if (bw && gemv_takes(bw, batch))
        return bw;
    const gemv_variant *tiled = (const gemv_variant *)rl_variant_by_role(ctx, &gemv_family, "tiled");
    return tiled ? tiled : (const gemv_variant *)rl_variant_by_role(ctx, &gemv_family, "library");
}

void exp07_declare_weights(rl_ctx *ctx, const int *batches)
{
    weight_part *W = RL_NEW(ctx, weight_part);
    rl_part_add(ctx, &(rl_part){.open = open_weights, .done = close_weights, .state = W});
    int backend = rl_kernel_backend(ctx);
    int group = rl_group_new(ctx); /* every batch beside the same probes */
    for (const int *b = batches; *b; b++) {
        const gemv_variant *v = variant_for(ctx, *b);
        if (!v)
            continue;
        int rows = gemv_validation_rows(LAYER_ROWS, LAYER_K, *b);
        W->ref_rows = rows > W->ref_rows ? rows : W->ref_rows;
        W->bmax = *b > W->bmax ? *b : W->bmax;
        size_t scratch = gemv_scratch_bytes(v, backend, LAYER_ROWS, LAYER_K, *b);
        W->scratch_bytes = scratch > W->scratch_bytes ? scratch : W->scratch_bytes;
        exp07_call *c = RL_NEW(ctx, exp07_call);
        *c = (exp07_call){.kind = WEIGHT_GEMM, .phase = "decode", .config = "layer", .batch = *b,
                    .validated_rows = rows, .part = W, .gemm.launch = RL_LAUNCHER(ctx, v),
                    .gemm_check.launch = RL_LAUNCHER(ctx, v)};
        double bytes = gemv_bytes(LAYER_ROWS, LAYER_K, *b);
        rl_point_add(ctx, &(rl_point){
            .variant = KERNEL_VARIANT(v), .group = group,
            .call = gemv_kernel_call(&c->gemm), .check_call = gemv_kernel_call(&c->gemm_check),
            RL_POINT_DATA(c), .prepare = prepare_weights, .count = (size_t)rows * *b,
            .atol = gemv_atol(LAYER_K), .flops = gemv_flops(LAYER_ROWS, LAYER_K, *b),
            .bytes = bytes, .footprint = bytes, .pattern = RL_READ});
    }
}
