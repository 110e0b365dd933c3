/*
 * trace.c -- the layer as a timeline a person opens: one call of each
 * program of each shape, step by step, written as a Chrome trace
 * (exp-09-trace.json beside the CSV: Perfetto or chrome://tracing open it,
 * as they open PyTorch profiler's) and, on the GPU, as NVTX ranges of the
 * same names for Nsight Systems.
 *
 * Each step is timed alone here, the backend synchronized after it, so
 * the trace shows one call's own durations (a first call after the
 * timing's rounds, its data where they left it); the verdicts read the
 * timed rounds, not this.
 */
#include "exp09.h"
#include "rl_trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct trace_event {
    char name[64], track[96];
    const char *cat;
    double ts_us, dur_us, flops, bytes;
    int tid;
} trace_event;

static trace_event *events;
static int nevents, cap, tracks;
static double origin_s = -1;

static void keep(const trace_event *e)
{
    if (nevents == cap) {
        cap = cap ? 2 * cap : 128;
        trace_event *grown = realloc(events, sizeof *events * (size_t)cap);
        if (!grown)
            rl_die(RL_EXIT_FAILED, "exp-09: out of memory for the trace");
        events = grown;
    }
    events[nevents++] = *e;
}

static double since_origin_us(double t) { return (t - origin_s) * 1e6; }

static void trace_program(rl_ctx *ctx, const exp09_layer *L, const exp09_program *P)
{
    int tid = ++tracks, backend = rl_kernel_backend(ctx);
    trace_event whole = {.cat = "layer", .tid = tid};
    snprintf(whole.track, sizeof whole.track, "%s %dx%d %s", L->cfg.name, L->batch, L->seq, P->name);
    snprintf(whole.name, sizeof whole.name, "%s layer (%s)", L->cfg.name, P->name);
    rl_sync(ctx->be);
    rl_range_push(ctx->be, whole.name);
    double start = rl_now_s();
    for (int i = 0; i < P->n; i++) {
        const exp09_step *s = &P->s[i];
        trace_event e = {.cat = layer_class_name(s->v->cls), .tid = tid,
                         .flops = layer_flops(s->v, &s->a), .bytes = layer_bytes(s->v, &s->a, backend)};
        snprintf(e.name, sizeof e.name, "%s", s->name);
        rl_range_push(ctx->be, s->name);
        double t0 = rl_now_s();
        exp09_step_run(s);
        rl_sync(ctx->be);
        double t1 = rl_now_s();
        rl_range_pop(ctx->be);
        e.ts_us = since_origin_us(t0), e.dur_us = (t1 - t0) * 1e6;
        keep(&e);
    }
    rl_range_pop(ctx->be);
    whole.ts_us = since_origin_us(start), whole.dur_us = (rl_now_s() - start) * 1e6;
    whole.flops = exp09_program_flops(P), whole.bytes = exp09_program_bytes(P, backend);
    keep(&whole);
}

void exp09_trace_part(rl_ctx *ctx, const exp09_layer *L)
{
    if (origin_s < 0)
        origin_s = rl_now_s();
    trace_program(ctx, L, &L->unfused);
    trace_program(ctx, L, &L->fused);
    if (L->backward.n)
        trace_program(ctx, L, &L->backward);
}

/* exp-09-trace.json in the CSV's folder. */
static bool trace_path(const rl_ctx *ctx, char *buf, size_t len)
{
    const char *slash = strrchr(ctx->csv_path, '/');
    if (!ctx->csv_path[0] || !slash)
        return false;
    int n = snprintf(buf, len, "%.*s/exp-%s-trace.json", (int)(slash - ctx->csv_path),
                     ctx->csv_path, ctx->exp->id);
    return n > 0 && (size_t)n < len;
}

void exp09_trace_write(rl_ctx *ctx)
{
    char path[600];
    if (!nevents || !trace_path(ctx, path, sizeof path))
        return;
    char process[320];
    snprintf(process, sizeof process, "rooflab exp-%s (%s)", ctx->exp->id, ctx->dev->name);
    rl_trace *t = rl_trace_open(path, process);
    if (!t) {
        fprintf(stderr, "exp-09: cannot write the trace %s: %s\n", path, strerror(errno));
        return;
    }
    static const char *const KEYS[] = {"flops", "bytes"};
    for (int i = 0; i < nevents; i++) {
        const trace_event *e = &events[i];
        if (e->cat && !strcmp(e->cat, "layer"))
            rl_trace_thread_name(t, e->tid, e->track);
        double values[] = {e->flops, e->bytes};
        rl_trace_complete(t, e->name, e->cat, e->ts_us, e->dur_us, e->tid, KEYS, values, 2);
    }
    if (rl_trace_close(t))
        fprintf(stderr, "exp-09: the trace %s was not written: %s\n", path, strerror(errno));
    else
        printf("wrote       %s (open it in https://ui.perfetto.dev or chrome://tracing)\n", path);
    free(events);
    events = NULL, nevents = cap = tracks = 0;
}
