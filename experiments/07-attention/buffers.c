/*
 * buffers.c -- what experiment 07's attention parts hold, and how their
 * points are validated: decode.c and prefill.c both make their q, K and V
 * here, and check a fused point against the reference on its first rows
 * and against the materialized variant on the others.
 */
#include "exp07.h"

int exp07_attention_validated_rows(long rows, int ctx_len, int dim, int min_rows)
{
    long affordable = (1L << 25) / ((long)ctx_len * dim);
    long want = affordable > min_rows ? affordable : min_rows;
    return (int)(want < rows ? want : rows);
}

double *exp07_fused_want(rl_ctx *ctx, const attention_args *mat, attention_phase ph, const double *ref,
                         size_t ref_rows, size_t rows)
{
    const attention_variant *v = (const attention_variant *)rl_variant_by_role(
        ctx, &attention_family, ph == ATTN_DECODE ? "decode_materialized" : "prefill_materialized");
    if (!v)
        rl_die(RL_EXIT_FAILED, "exp-07: no materialized %s variant on this backend to check against",
               ph == ATTN_DECODE ? "decode" : "prefill");
    attention_call c = {RL_LAUNCHER(ctx, v), *mat};
    attention_call_run(&c);
    rl_sync(ctx->be);
    size_t n = rows * (size_t)mat->dim, first = ref_rows * (size_t)mat->dim;
    float *got = rl_download_copy(ctx->be, mat->out, n * sizeof(float));
    double *want = rl_host_alloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++)
        want[i] = i < first ? ref[i] : got[i];
    rl_host_free(got);
    return want;
}

void exp07_open_attention_buffers(rl_ctx *ctx, attention_buffers *b, attention_args shape,
                                  attention_phase ph, size_t q_items, size_t kv_items, size_t drawn,
                                  size_t copies, size_t scratch_bytes, size_t ref_rows)
{
    b->hq = rl_host_random_f16(ctx, drawn * q_items, -1, 1);
    b->hk = rl_host_random_f16(ctx, drawn * kv_items, -1, 1);
    b->hv = rl_host_random_f16(ctx, drawn * kv_items, -1, 1);
    b->q = rl_upload_repeated(ctx, b->hq, drawn, copies, q_items * sizeof(fp16));
    b->k = rl_upload_repeated(ctx, b->hk, drawn, copies, kv_items * sizeof(fp16));
    b->v = rl_upload_repeated(ctx, b->hv, drawn, copies, kv_items * sizeof(fp16));
    b->out_fused = rl_alloc(ctx->be, copies * q_items * sizeof(float));
    b->out_mat = rl_alloc(ctx->be, copies * q_items * sizeof(float));
    b->scratch = scratch_bytes ? rl_alloc(ctx->be, scratch_bytes) : NULL;
    shape.q = b->hq, shape.k = b->hk, shape.v = b->hv;
    b->ref = rl_host_alloc(sizeof(double) * ref_rows * (size_t)shape.dim);
    attention_reference(b->ref, &shape, ph, 0, ref_rows);
}

void exp07_free_attention_buffers(rl_ctx *ctx, attention_buffers *b)
{
    void *dev[] = {b->q, b->k, b->v, b->out_fused, b->out_mat, b->scratch};
    void *host[] = {b->hq, b->hk, b->hv, b->ref};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
        rl_free(ctx->be, dev[i]);
    for (size_t i = 0; i < sizeof host / sizeof host[0]; i++)
        rl_host_free(host[i]);
}
