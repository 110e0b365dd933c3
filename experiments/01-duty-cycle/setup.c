/*
 * setup.c -- experiment 01's buffers and validation. Each variant's role
 * (kernels/busy.c) says what its lanes start from and which reference
 * checks it (kernels/ref/busy.c).
 */
#include "exp01.h"

#include <math.h>
#include <stdio.h>

/* The chase and stream buffers defeat the cache: the chain covers 4x the
 * last-level cache, and the stream's x and y 2x each. The chain is made
 * when a chase is validated; its host copy is what the check follows. */
static uint32_t *make_chain(run *r)
{
    rl_ctx *ctx = r->ctx;
    size_t stride = ctx->kind == RL_CUDA ? 32 : 16; /* a 128-byte GPU line, a 64-byte CPU line */
    size_t line_bytes = stride * sizeof(uint32_t);
    double chain_bytes = fmin(4 * ctx->dev->llc_bytes, rl_max_bytes(ctx) / 4);
    size_t lines = (size_t)ceil(chain_bytes / (double)line_bytes), bytes = lines * line_bytes;
    uint32_t *chain = rl_host_alloc(bytes);
    r->w.chain_starts = rl_host_alloc(r->w.lanes * sizeof(uint32_t));
    busy_make_chain(chain, lines, stride, r->w.chain_starts, r->w.lanes, rl_next_seed(ctx));
    r->w.chain = rl_alloc_copy(ctx->be, chain, bytes);
    rl_meta(ctx, "chase_buffer", "%zu lines of %zu bytes (%.0f MiB), one random cycle", lines,
            line_bytes, bytes / 1048576.0);
    return chain;
}

int exp01_most_workers(const rl_ctx *ctx)
{
    if (ctx->kind == RL_CUDA)
        return 4 * ctx->dev->sm_count;
    /* the observer reads each thread */
    return ctx->dev->threads < RL_OBSERVER_MAX_THREADS ? ctx->dev->threads : RL_OBSERVER_MAX_THREADS;
}

void exp01_buffers_size(run *r)
{
    rl_ctx *ctx = r->ctx;
    busy_buffers *w = &r->w;
    r->max_workers = exp01_most_workers(ctx);
    w->lanes = (size_t)r->max_workers * (size_t)busy_max_lanes(rl_kernel_backend(ctx));
    double stream_bytes = fmin(2 * ctx->dev->llc_bytes, rl_max_bytes(ctx) / 8); /* x and y */
    w->n = (size_t)ceil(stream_bytes / sizeof(float) / (1 << 20)) << 20;
}

void exp01_buffers_open(run *r)
{
    rl_ctx *ctx = r->ctx;
    busy_buffers *w = &r->w;
    w->states = rl_alloc(ctx->be, w->lanes * sizeof *w->states);
    w->counts = rl_alloc(ctx->be, w->lanes * sizeof *w->counts);
    w->work = rl_alloc(ctx->be, sizeof *w->work);
    w->seeds = rl_host_alloc(w->lanes * sizeof *w->seeds);
    busy_make_seeds(w->seeds, w->lanes, rl_next_seed(ctx));
    w->y = rl_alloc(ctx->be, w->n * sizeof(float));
    float *host = rl_host_random(ctx, w->n, -1, 1);
    w->x = rl_alloc_copy(ctx->be, host, w->n * sizeof(float));
    rl_host_free(host);
}

void exp01_buffers_close(run *r)
{
    void *dev[] = {r->w.states, r->w.counts, r->w.work, r->w.x, r->w.y, r->w.chain};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
        rl_free(r->ctx->be, dev[i]);
    rl_host_free(r->w.seeds);
    rl_host_free(r->w.chain_starts);
}

busy_args exp01_variant_args(run *r, const busy_variant *v, int workers, double duty, double period_s)
{
    size_t lanes = (size_t)workers * (size_t)RL_LAUNCHER(r->ctx, v)->lanes;
    rl_upload(r->ctx->be, r->w.states, busy_lane_starts(v, &r->w), lanes * sizeof *r->w.states);
    return busy_args_on(&r->w, workers, duty, period_s, rl_stream(r->ctx->be));
}

/* ---- validation: one short burst, every lane and element checked ---------- */

/* The result of the variant's first point checked (p is one of every
 * point; an earlier one may be unchecked, left out by --budget): true,
 * with *ok, where there is one. */
static bool checked_before(rl_ctx *ctx, rl_point *p, bool *ok)
{
    for (const rl_point *q = rl_points_all(ctx)->v; q < p; q++)
        if (q->variant == p->variant &&
            (q->state == RL_POINT_VALID || q->state == RL_POINT_TIMED || q->state == RL_POINT_FAILED)) {
            snprintf(p->why, sizeof p->why, "%s", q->why);
            *ok = q->state != RL_POINT_FAILED;
            return true;
        }
    return false;
}

/* The stream: y against a x + b in double, on a NaN-poisoned y. */
static bool check_stream(rl_ctx *ctx, rl_point *p, const busy_ops *ops, const busy_args *a)
{
    rl_backend *be = ctx->be;
    busy_buffers *w = &RL_DATA(point, p)->at->w;
    float *x = rl_download_copy(be, w->x, w->n * sizeof(float));
    double *want = rl_host_alloc(w->n * sizeof(double));
    busy_stream_reference(x, want, w->n);
    rl_poison(be, w->y, w->n * sizeof(float));
    ops->burst(a, 2e-3);
    float *y = rl_download_copy(be, w->y, w->n * sizeof(float));
    rl_check c = rl_compare_f32(y, want, w->n, 1e-6, 1e-6);
    rl_check_describe(&c, p->why, sizeof p->why);
    rl_host_free(want);
    rl_host_free(x);
    rl_host_free(y);
    return c.ok;
}

bool exp01_check_point(rl_ctx *ctx, rl_point *p)
{
    bool ok;
    if (checked_before(ctx, p, &ok))
        return ok;
    run *r = RL_DATA(point, p)->at;
    const busy_variant *v = RL_DATA(point, p)->v;
    const busy_ops *ops = RL_LAUNCHER(ctx, v);
    busy_buffers *w = &r->w;
    bool stream = busy_has_role(v, "bandwidth");
    /* Two workers cover every code path of a burst; the stream variant's
     * burst passes over all its data at least once, so it gets them all. */
    int workers = stream || r->max_workers < 2 ? r->max_workers : 2;
    size_t lanes = (size_t)workers * (size_t)ops->lanes;
    uint32_t *host_chain = busy_has_role(v, "latency") ? make_chain(r) : NULL;
    busy_args a = exp01_variant_args(r, v, workers, 1, 1);
    if (stream)
        return check_stream(ctx, p, ops, &a);
    rl_poison(ctx->be, w->counts, lanes * sizeof *w->counts);
    ops->burst(&a, 2e-3);
    uint32_t *end = rl_download_copy(ctx->be, w->states, lanes * sizeof *end);
    unsigned long long *counts = rl_download_copy(ctx->be, w->counts, lanes * sizeof *counts);
    ok = busy_check_lanes(v, host_chain, busy_lane_starts(v, w), end, counts, lanes, p->why,
                          sizeof p->why);
    rl_host_free(end);
    rl_host_free(counts);
    rl_host_free(host_chain);
    return ok;
}
