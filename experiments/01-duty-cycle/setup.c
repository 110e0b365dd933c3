/*
 * setup.c -- experiment 01's buffers and validation. Each variant's role
 * (kernels/busy.c) says what its lanes start from and how it is checked.
 * The monitoring tool on trial is the harness's observer (observer.c).
 */
#include "exp01.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- buffers ------------------------------------------------------------- */

static uint32_t mix32(uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return (uint32_t)(x ^ (x >> 31));
}

/* The chase and stream buffers defeat the cache: the chain covers 4x the
 * last-level cache, and the stream's x and y 2x each. */
static void make_chain(buffers *w, uint32_t **host_chain)
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
    busy_make_chain(chain, w->chain_lines, w->chain_stride, w->chain_starts, w->lanes, rl_next_seed(ctx));
    w->chain = rl_alloc(ctx->be, bytes);
    rl_upload(ctx->be, w->chain, chain, bytes);
    *host_chain = chain;
}

void buffers_open(buffers *w, rl_ctx *ctx)
{
    int rows = rl_family_size(&busy_family);
    *w = (buffers){.ctx = ctx, .valid = malloc((size_t)rows), .why = calloc((size_t)rows, sizeof *w->why)};
    if (!w->valid || !w->why)
        rl_die(RL_EXIT_FAILED, "out of memory");
    memset(w->valid, -1, (size_t)rows);
    w->max_workers = ctx->kind == RL_CUDA ? 4 * ctx->dev->sm_count : ctx->dev->threads;
    if (w->max_workers > MAX_CPU_WORKERS && ctx->kind == RL_CPU)
        w->max_workers = MAX_CPU_WORKERS;
    int most = 1;
    for (const busy_variant *v = busy_variants; v->name; v++)
        if (rl_variant_here(ctx, &busy_family, KERNEL_VARIANT(v)))
            most = RL_LAUNCHER(ctx, v)->lanes > most ? RL_LAUNCHER(ctx, v)->lanes : most;
    w->lanes = (size_t)w->max_workers * (size_t)most;
    w->states = rl_alloc(ctx->be, w->lanes * sizeof *w->states);
    w->counts = rl_alloc(ctx->be, w->lanes * sizeof *w->counts);
    w->work = rl_alloc(ctx->be, sizeof *w->work);
    w->seeds_host = rl_host_alloc(w->lanes * sizeof *w->seeds_host);
    uint64_t seed = rl_next_seed(ctx);
    for (size_t i = 0; i < w->lanes; i++)
        w->seeds_host[i] = mix32(seed * 0x9e3779b97f4a7c15ULL + i);

    double stream_bytes = fmin(2 * ctx->dev->llc_bytes, rl_max_bytes(ctx) / 8); /* x and y */
    w->n = (size_t)ceil(stream_bytes / sizeof(float) / (1 << 20)) << 20;
    w->x = rl_alloc(ctx->be, w->n * sizeof(float));
    w->y = rl_alloc(ctx->be, w->n * sizeof(float));
    float *host = rl_host_alloc(w->n * sizeof(float));
    rl_fill_uniform(host, w->n, -1, 1, rl_next_seed(ctx));
    rl_upload(ctx->be, w->x, host, w->n * sizeof(float));
    rl_host_free(host);
}

void buffers_close(buffers *w)
{
    rl_backend *be = w->ctx->be;
    rl_free(be, w->states);
    rl_free(be, w->counts);
    rl_free(be, w->work);
    rl_free(be, w->x);
    rl_free(be, w->y);
    if (w->chain)
        rl_free(be, w->chain);
    rl_host_free(w->seeds_host);
    if (w->chain_starts)
        rl_host_free(w->chain_starts);
    free(w->valid);
    free(w->why);
}

busy_args variant_args(buffers *w, const busy_variant *v, int workers, double duty, double period_s)
{
    rl_ctx *ctx = w->ctx;
    size_t lanes = (size_t)workers * (size_t)RL_LAUNCHER(ctx, v)->lanes;
    /* Chases resume from a slot of the chain; the others from fresh seeds. */
    const uint32_t *start = role_is(v, "latency") ? w->chain_starts : w->seeds_host;
    rl_upload(ctx->be, w->states, start, lanes * sizeof *w->states);
    return (busy_args){.workers = workers, .duty = duty, .period_s = period_s,
                       .lcg_a = BUSY_LCG_A, .lcg_c = BUSY_LCG_C, .states = w->states,
                       .counts = w->counts, .chain = w->chain, .x = w->x, .y = w->y, .n = w->n,
                       .work = w->work, .stream = rl_stream(ctx->be)};
}

/* ---- validation: one short burst, every lane and element checked ---------- */

static bool validate_variant(buffers *w, const busy_variant *v)
{
    rl_ctx *ctx = w->ctx;
    const busy_ops *ops = RL_LAUNCHER(ctx, v);
    bool stream = role_is(v, "bandwidth");
    /* Two workers cover every code path of a burst; the stream variant's
     * burst passes over all its data at least once, so it gets them all. */
    int workers = stream || w->max_workers < 2 ? w->max_workers : 2;
    size_t lanes = (size_t)workers * (size_t)ops->lanes, bad = 0, first = 0, row = v - busy_variants;
    char *why = w->why[row];
    uint32_t *host_chain = NULL;
    if (role_is(v, "latency"))
        make_chain(w, &host_chain);
    busy_args a = variant_args(w, v, workers, 1, 1);
    if (stream) { /* y against a x + b in double, on a NaN-poisoned y */
        double *want = rl_host_alloc(w->n * sizeof(double));
        float *x = rl_host_alloc(w->n * sizeof(float)), *y = rl_host_alloc(w->n * sizeof(float));
        rl_download(ctx->be, x, w->x, w->n * sizeof(float));
        for (size_t i = 0; i < w->n; i++)
            want[i] = (double)x[i] * BUSY_STREAM_A + BUSY_STREAM_B;
        rl_poison(ctx->be, w->y, w->n * sizeof(float));
        ops->burst(&a, 2e-3);
        rl_download(ctx->be, y, w->y, w->n * sizeof(float));
        rl_check c = rl_compare_f32(y, want, w->n, 1e-6, 1e-6);
        rl_check_describe(&c, why, 256);
        rl_host_free(want);
        rl_host_free(x);
        rl_host_free(y);
        return (w->valid[row] = c.ok);
    }
    uint32_t *end = rl_host_alloc(lanes * sizeof *end);
    unsigned long long *counts = rl_host_alloc(lanes * sizeof *counts);
    rl_poison(ctx->be, w->counts, lanes * sizeof *counts);
    ops->burst(&a, 2e-3);
    rl_download(ctx->be, end, w->states, lanes * sizeof *end);
    rl_download(ctx->be, counts, w->counts, lanes * sizeof *counts);
    bool checked = role_is(v, "compute") || role_is(v, "latency");
    if (role_is(v, "compute"))
        bad = busy_check_arith(w->seeds_host, end, counts, lanes, BUSY_LCG_A, BUSY_LCG_C, &first);
    else if (role_is(v, "latency"))
        bad = busy_check_chase(host_chain, w->chain_starts, end, counts, lanes, &first);
    else
        bad = lanes, first = 0; /* a new kind of variant needs its own reference, here */
    if (!checked)
        snprintf(why, 256, "no reference check for variant %s (role %s): give it one of busy.h's "
                 "roles, or a check in validate_variant() in experiments/01-duty-cycle/setup.c",
                 v->name, v->role ? v->role : "none");
    else if (bad)
        snprintf(why, 256, "FAILED: %zu of %zu lanes wrong, first at %zu (count %llu)", bad, lanes,
                 first, counts[first]);
    else
        snprintf(why, 256, "ok (%zu lanes, every end state equal to the reference's)", lanes);
    rl_host_free(end);
    rl_host_free(counts);
    if (host_chain)
        rl_host_free(host_chain);
    return (w->valid[row] = bad == 0);
}

bool check_point(rl_ctx *ctx, rl_point *rp)
{
    (void)ctx;
    const point *p = rp->data;
    size_t row = (size_t)(p->v - busy_variants);
    bool ok = p->w->valid[row] < 0 ? validate_variant(p->w, p->v) : p->w->valid[row];
    snprintf(rp->why, sizeof rp->why, "%s", p->w->why[row]);
    return ok;
}

void *idle_allocation(rl_ctx *ctx, double *bytes)
{
    double want;
    if (ctx->kind == RL_CUDA) {
        char pci[32];
        double free_b, total_b;
        busy_device(pci, sizeof pci, &free_b, &total_b);
        want = 0.5 * free_b; /* half of what is free: memory.used high */
    } else {
        /* 16x the stream's buffers, at most a quarter of the machine's RAM. */
        want = fmin(16 * 2 * 2 * ctx->dev->llc_bytes, fmin(0.25 * rl_host_ram_bytes(), rl_max_bytes(ctx)));
    }
    size_t b = (size_t)want & ~(size_t)((1 << 20) - 1);
    void *p = rl_alloc(ctx->be, b);
    rl_poison(ctx->be, p, b); /* written once, so every page is resident */
    *bytes = (double)b;
    return p;
}

const char *observed_gpu(rl_ctx *ctx, char pci[32])
{
    if (ctx->kind != RL_CUDA)
        return NULL;
    double free_b, total_b;
    busy_device(pci, 32, &free_b, &total_b);
    return pci;
}
