/*
 * setup.c -- experiment 01's buffers and validation. Each variant's role
 * (kernels/busy.c) says what its lanes start from and which reference
 * checks it (kernels/ref/busy.c). The monitoring tool on trial is the
 * harness's observer (observer.c).
 */
#include "exp01.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The chase and stream buffers defeat the cache: the chain covers 4x the
 * last-level cache, and the stream's x and y 2x each. The chain is made
 * when a chase is validated; its host copy is what the check follows. */
static uint32_t *make_chain(buffers *w)
{
    rl_ctx *ctx = w->ctx;
    w->chain_stride = ctx->kind == RL_CUDA ? 32 : 16; /* a 128-byte GPU line, a 64-byte CPU line */
    w->bytes_per_hop = ctx->kind == RL_CUDA ? 32 : 64; /* a DRAM sector, a cache line */
    size_t line_bytes = w->chain_stride * sizeof(uint32_t);
    double chain_bytes = fmin(4 * ctx->dev->llc_bytes, rl_max_bytes(ctx) / 4);
    w->chain_lines = (size_t)ceil(chain_bytes / (double)line_bytes);
    size_t bytes = w->chain_lines * line_bytes;
    uint32_t *chain = rl_host_alloc(bytes);
    memset(chain, 0, bytes);
    w->chain_starts = rl_host_alloc(w->lanes * sizeof(uint32_t));
    busy_make_chain(chain, w->chain_lines, w->chain_stride, w->chain_starts, w->lanes,
                    rl_next_seed(ctx));
    w->chain = rl_alloc_copy(ctx->be, chain, bytes);
    return chain;
}

void buffers_open(buffers *w, rl_ctx *ctx)
{
    *w = (buffers){.ctx = ctx};
    w->max_workers = ctx->kind == RL_CUDA ? 4 * ctx->dev->sm_count : ctx->dev->threads;
    if (w->max_workers > RL_OBSERVER_MAX_THREADS && ctx->kind == RL_CPU)
        w->max_workers = RL_OBSERVER_MAX_THREADS; /* the observer reads each one */
    int most = busy_max_lanes(ctx->kind == RL_CUDA ? KERNEL_CUDA : KERNEL_CPU);
    w->lanes = (size_t)w->max_workers * (size_t)most;
    w->states = rl_alloc(ctx->be, w->lanes * sizeof *w->states);
    w->counts = rl_alloc(ctx->be, w->lanes * sizeof *w->counts);
    w->work = rl_alloc(ctx->be, sizeof *w->work);
    w->seeds_host = rl_host_alloc(w->lanes * sizeof *w->seeds_host);
    busy_make_seeds(w->seeds_host, w->lanes, rl_next_seed(ctx));

    double stream_bytes = fmin(2 * ctx->dev->llc_bytes, rl_max_bytes(ctx) / 8); /* x and y */
    w->n = (size_t)ceil(stream_bytes / sizeof(float) / (1 << 20)) << 20;
    w->y = rl_alloc(ctx->be, w->n * sizeof(float));
    float *host = rl_host_alloc(w->n * sizeof(float));
    rl_fill_uniform(host, w->n, -1, 1, rl_next_seed(ctx));
    w->x = rl_alloc_copy(ctx->be, host, w->n * sizeof(float));
    rl_host_free(host);
}

void buffers_close(buffers *w)
{
    void *dev[] = {w->states, w->counts, w->work, w->x, w->y, w->chain};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
        rl_free(w->ctx->be, dev[i]);
    rl_host_free(w->seeds_host);
    rl_host_free(w->chain_starts);
}

busy_args variant_args(buffers *w, const busy_variant *v, int workers, double duty, double period_s)
{
    rl_ctx *ctx = w->ctx;
    size_t lanes = (size_t)workers * (size_t)RL_LAUNCHER(ctx, v)->lanes;
    /* Chases resume from a slot of the chain; the others from fresh seeds. */
    const uint32_t *start = busy_has_role(v, "latency") ? w->chain_starts : w->seeds_host;
    rl_upload(ctx->be, w->states, start, lanes * sizeof *w->states);
    return (busy_args){.workers = workers, .duty = duty, .period_s = period_s,
                       .lcg_a = BUSY_LCG_A, .lcg_c = BUSY_LCG_C, .states = w->states,
                       .counts = w->counts, .chain = w->chain, .x = w->x, .y = w->y, .n = w->n,
                       .work = w->work, .stream = rl_stream(ctx->be)};
}

/* ---- validation: one short burst, every lane and element checked ---------- */

static bool validate_variant(buffers *w, const busy_variant *v, char *why)
{
    rl_backend *be = w->ctx->be;
    const busy_ops *ops = RL_LAUNCHER(w->ctx, v);
    bool stream = busy_has_role(v, "bandwidth");
    /* Two workers cover every code path of a burst; the stream variant's
     * burst passes over all its data at least once, so it gets them all. */
    int workers = stream || w->max_workers < 2 ? w->max_workers : 2;
    size_t lanes = (size_t)workers * (size_t)ops->lanes;
    uint32_t *host_chain = busy_has_role(v, "latency") ? make_chain(w) : NULL;
    busy_args a = variant_args(w, v, workers, 1, 1);
    if (stream) { /* y against a x + b in double, on a NaN-poisoned y */
        float *x = rl_download_copy(be, w->x, w->n * sizeof(float));
        double *want = rl_host_alloc(w->n * sizeof(double));
        busy_stream_reference(x, want, w->n);
        rl_poison(be, w->y, w->n * sizeof(float));
        ops->burst(&a, 2e-3);
        float *y = rl_download_copy(be, w->y, w->n * sizeof(float));
        rl_check c = rl_compare_f32(y, want, w->n, 1e-6, 1e-6);
        rl_check_describe(&c, why, 256);
        rl_host_free(want);
        rl_host_free(x);
        rl_host_free(y);
        return c.ok;
    }
    rl_poison(be, w->counts, lanes * sizeof *w->counts);
    ops->burst(&a, 2e-3);
    uint32_t *end = rl_download_copy(be, w->states, lanes * sizeof *end);
    unsigned long long *counts = rl_download_copy(be, w->counts, lanes * sizeof *counts);
    const uint32_t *start = host_chain ? w->chain_starts : w->seeds_host;
    bool ok = busy_check_lanes(v, host_chain, start, end, counts, lanes, why, 256);
    rl_host_free(end);
    rl_host_free(counts);
    rl_host_free(host_chain);
    return ok;
}

/* A variant is validated once: its later points take its first one's
 * result, and its reason. */
bool check_point(rl_ctx *ctx, rl_point *rp)
{
    (void)ctx;
    const point *p = rp->data;
    for (const rl_point *q = p->w->points->v; q < rp; q++)
        if (q->variant == rp->variant) {
            snprintf(rp->why, sizeof rp->why, "%s", q->why);
            return q->state == RL_POINT_VALID;
        }
    return validate_variant(p->w, p->v, rp->why);
}
