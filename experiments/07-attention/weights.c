/*
 * weights.c -- experiment 07's weight GEMM: the rest of a decode step,
 * Llama 3 8B's layer as one 53248 x 4096 FP16 matrix, at each batch.
 * Its weights are read once per step whatever the batch, so its
 * arithmetic intensity grows with the batch (the existing gemv family:
 * the bandwidth kernel while it takes the batch, the library GEMM after).
 * The part that holds the weights is the harness's (rl_weights.h), the
 * one experiment 02 times its layer on.
 */
#include "exp07.h"

/* One copy of the weights (a step reads them once), its rows drawn as
 * far as a point validates them; every batch beside the same probes. */
rl_weights *exp07_weights_part(rl_ctx *ctx)
{
    rl_part part = rl_weights_part(ctx, &(rl_weights){.rows = LAYER_ROWS, .k = LAYER_K, .copies = 1});
    rl_part_add(ctx, &part);
    rl_weights *W = part.state;
    W->group = rl_group_new(ctx);
    return W;
}

/* Every row is computed, the first validated_rows checked (the check
 * call computes only those): the reference is shared by the points at
 * one batch. */
static void prepare_weights(rl_ctx *ctx, rl_point *p)
{
    exp07_call *c = RL_DATA_MUT(exp07_call, p);
    rl_weights_bind(ctx, c->part, p, &c->gemm, &c->gemm_check, c->batch, c->validated_rows);
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

void exp07_weight_point(rl_ctx *ctx, rl_weights *W, int batch)
{
    const gemv_variant *v = variant_for(ctx, batch);
    if (!v)
        return;
    int rows = gemv_validation_rows(LAYER_ROWS, LAYER_K, batch);
    rl_weights_fit(ctx, W, v, batch, rows);
    exp07_call *c = RL_NEW(ctx, exp07_call);
    *c = (exp07_call){.kind = WEIGHT_GEMM, .phase = "decode", .config = "layer", .batch = batch,
                      .validated_rows = rows, .part = W, .gemm.launch = RL_LAUNCHER(ctx, v),
                      .gemm_check.launch = RL_LAUNCHER(ctx, v)};
    double bytes = gemv_bytes(LAYER_ROWS, LAYER_K, batch);
    rl_point_add(ctx, &(rl_point){
        .variant = KERNEL_VARIANT(v), .group = W->group,
        .call = gemv_kernel_call(&c->gemm), .check_call = gemv_kernel_call(&c->gemm_check),
        RL_POINT_DATA(c), .prepare = prepare_weights, .count = (size_t)rows * batch,
        .atol = gemv_atol(LAYER_K), .flops = gemv_flops(LAYER_ROWS, LAYER_K, batch),
        .bytes = bytes, .footprint = bytes, .pattern = RL_READ});
}
