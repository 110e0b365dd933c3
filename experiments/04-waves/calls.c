/*
 * calls.c -- one GEMM call as a point, for the three measured parts, with
 * its inputs and reference made when it is first validated; and the sweep
 * of N across waves that staircase.c and library.c share. The harness
 * does the rest: validates, times each group, writes the rows.
 */
#include "exp04.h"

#include <math.h>
#include <stdlib.h>

/* The operands in the variant's input format, and the reference: the
 * harness frees it once the point is checked (all at once would not fit). */
static void prepare_call(rl_ctx *ctx, rl_point *p)
{
    call *c = p->arg;
    c->g.a = rl_input_on(ctx, c->a, c->impl->in_bytes, c->impl->to_input);
    c->g.b = rl_input_on(ctx, c->b, c->impl->in_bytes, c->impl->to_input);
    c->g.stream = rl_stream(ctx->be);
    p->want = gemm_reference_from(rl_host_alloc((size_t)c->g.m * c->g.n * sizeof(double)), &c->g,
                                  c->a->host, c->b->host, c->wide);
}

static void run_call(void *arg)
{
    call *c = arg;
    c->impl->launch(&c->g);
}

/* A zero tile_m means no wave model: those columns stay empty. */
void call_add(rl_ctx *ctx, rl_points *pts, const call *c, const gemm_variant *v, int group)
{
    call *copy = malloc(sizeof *copy);
    if (!copy)
        rl_die(RL_EXIT_FAILED, "out of memory for a point");
    *copy = *c;
    copy->impl = RL_LAUNCHER(ctx, v);
    copy->model_us = NAN;
    copy->speedup = RL_RATIO_NONE;
    if (!copy->w.tile_m) {
        copy->w = (rl_wave_model){NAN, NAN, NAN, NAN, NAN, NAN, NAN};
        copy->wave_end = NAN;
    }
    const gemm_args *g = &c->g;
    rl_points_add(pts, &(rl_point){
        .variant = KERNEL_VARIANT(v), .group = group, .run = run_call, .arg = copy, .data = copy,
        .count = (size_t)g->m * (size_t)g->n, .atol = gemm_atol(g->k), .rtol = GEMM_RTOL,
        .prepare = prepare_call, .frees_want = true, .flops = rl_gemm_flops(g->m, g->n, g->k)});
}

bool calls_planned(rl_ctx *ctx, rl_points *pts, bool plan)
{
    if (plan) {
        rl_points_plan(ctx, pts);
        calls_free(ctx, pts);
    }
    return plan;
}

/* Every call writes one output, sized for the largest. */
void calls_measure(rl_ctx *ctx, rl_points *pts)
{
    size_t most = 1;
    for (int i = 0; i < pts->n; i++)
        most = pts->v[i].count > most ? pts->v[i].count : most;
    float *out = rl_alloc(ctx->be, most * sizeof(float));
    for (int i = 0; i < pts->n; i++)
        pts->v[i].out = ((call *)pts->v[i].arg)->g.c = out;
    rl_points_measure(ctx, pts);
    rl_free(ctx->be, out);
}

/* Points share inputs: the first free of each leaves nothing to the others. */
void calls_free(rl_ctx *ctx, rl_points *pts)
{
    for (int i = 0; i < pts->n; i++) {
        call *c = pts->v[i].arg;
        rl_input_free(ctx, c->a);
        rl_input_free(ctx, c->b);
        gemm_wide_free(c->wide);
        free(c);
    }
    rl_points_free(pts);
}

/* B is stored n x k (a linear layer's weight): the point at N reads the
 * first N rows of B and checks the first N columns of the widest product.
 * The last N of a wave and the N one step past it are one group (a
 * verdict compares them); wave_end marks the last N of a wave where the
 * sweep goes on past it. */
void sweep_declare(rl_ctx *ctx, rl_points *pts, wave_sweep *w)
{
    int m = w->t.m, end = -1, pair = 0;
    w->a = (rl_input){.count = (size_t)m * w->k, .exact = gemm_round_to_half};
    w->b = (rl_input){.count = (size_t)w->n_hi * w->k, .exact = gemm_round_to_half};
    w->ref.wide_n = w->n_hi;
    w->first_end = -1;
    for (int n = w->n_lo; n <= w->n_hi; n = (int)rl_wave_sweep_next(&w->t, n, w->step, WAVE_STEP)) {
        bool ends = rl_wave_ends_at(&w->t, n), marked = ends && n < w->n_hi;
        if (ends) {
            end = n;
            pair = rl_points_new_group(pts);
        }
        if (marked && w->first_end < 0)
            w->first_end = pts->n;
        call c = {.part = w->part, .gemm = "nt", .a = &w->a, .b = &w->b, .wide = &w->ref,
                  .g = {.m = m, .n = n, .k = w->k, .trans_b = true}, .vocab = NAN,
                  .w = rl_wave_model_of(&w->t, n), .wave_end = marked,
                  .mark = marked ? "<- end of a wave" : ""};
        call_add(ctx, pts, &c, w->v, n == end || n == end + WAVE_STEP ? pair : 0);
    }
}
