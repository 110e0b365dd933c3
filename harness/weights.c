/*
 * weights.c -- a linear layer's FP16 weights and the part that holds
 * them (rl_weights.h).
 */
#include "rl_weights.h"

void *rl_upload_repeated(rl_ctx *ctx, const void *host, size_t drawn, size_t items, size_t item_bytes)
{
    char *dev = rl_alloc(ctx->be, items * item_bytes);
    for (size_t i = 0; i < items; i += drawn) {
        size_t n = items - i < drawn ? items - i : drawn;
        rl_upload(ctx->be, dev + i * item_bytes, host, n * item_bytes);
    }
    return dev;
}

static void open_weights(rl_ctx *ctx, void *state)
{
    rl_weights *W = state;
    rl_f16_shape_set(W->gemv_shape);
    size_t row_bytes = (size_t)W->k * sizeof(fp16);
    W->hw = rl_host_random_f16(ctx, (size_t)W->drawn_rows * W->k, -1, 1);
    W->hx = rl_host_random_f16(ctx, (size_t)W->nmax * W->k, -1, 1);
    W->w = rl_upload_repeated(ctx, W->hw, (size_t)W->drawn_rows, (size_t)W->rows * W->copies,
                              row_bytes);
    W->x = rl_alloc_copy(ctx->be, W->hx, (size_t)W->nmax * row_bytes);
    W->y = rl_alloc(ctx->be, (size_t)W->nmax * W->rows * sizeof(float));
    W->scratch = W->scratch_bytes ? rl_alloc(ctx->be, W->scratch_bytes) : NULL;
    W->ref = NULL;
    W->ref_n = 0;
}

static void close_weights(rl_ctx *ctx, const rl_points *pts, void *state)
{
    (void)pts;
    rl_weights *W = state;
    rl_free(ctx->be, W->w);
    rl_free(ctx->be, W->x);
    rl_free(ctx->be, W->y);
    rl_free(ctx->be, W->scratch);
    rl_host_free(W->hw);
    rl_host_free(W->hx);
    rl_host_free(W->ref);
}

rl_part rl_weights_part(rl_ctx *ctx, const rl_weights *init)
{
    rl_weights *W = RL_NEW(ctx, rl_weights);
    *W = *init;
    return (rl_part){.open = open_weights, .done = close_weights, .state = W};
}

static int larger(int a, int b) { return a > b ? a : b; }

void rl_weights_fit(rl_ctx *ctx, rl_weights *W, const gemv_variant *v, int n, int validated_rows)
{
    size_t scratch = gemv_scratch_bytes(v, rl_kernel_backend(ctx), W->rows, W->k, n);
    W->scratch_bytes = scratch > W->scratch_bytes ? scratch : W->scratch_bytes;
    W->nmax = larger(W->nmax, n);
    W->drawn_rows = larger(W->drawn_rows, validated_rows);
}

void rl_weights_bind(rl_ctx *ctx, rl_weights *W, rl_point *p, gemv_call *call, gemv_call *check,
                     int n, int validated_rows)
{
    call->args = (gemv_args){W->y, W->w, W->x, W->rows, W->k, n, W->scratch, rl_stream(ctx->be)};
    check->args = call->args;
    check->args.rows = validated_rows;
    if (W->ref_n != n) {
        rl_host_free(W->ref);
        W->ref = rl_host_alloc(sizeof(double) * (size_t)validated_rows * n);
        gemv_reference(W->ref, W->hw, W->hx, validated_rows, W->k, n);
        W->ref_n = n;
    }
    p->out = W->y;
    p->want = W->ref;
}

