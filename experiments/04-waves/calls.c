/*
 * calls.c -- one GEMM call as a point, for the three measured parts, with
 * its inputs and reference made when it is first validated; and the sweep
 * of N across waves that staircase.c and library.c share, over an axis of
 * N. The harness does the rest: validates, times each group, writes the
 * rows.
 */
#include "exp04.h"

#include <math.h>

/* Binds the call to its part's output and to the operands in the
 * variant's input format, and computes the reference: the harness frees
 * it once the point is checked (all at once would not fit). */
static void prepare_call(rl_ctx *ctx, rl_point *p)
{
    exp04_call *c = RL_DATA_MUT(exp04_call, p);
    gemm_args *g = &c->kernel.args;
    g->a = rl_input_on(ctx, c->a, c->impl->in_bytes, c->impl->to_input);
    g->b = rl_input_on(ctx, c->b, c->impl->in_bytes, c->impl->to_input);
    g->c = p->out = c->out->c;
    g->stream = rl_stream(ctx->be);
    p->want = gemm_reference_from(rl_host_alloc((size_t)g->m * g->n * sizeof(double)), g,
                                  c->a->host, c->b->host, c->wide);
}

/* A zero tile_m means no wave model: those columns stay empty. */
void exp04_call_add(rl_ctx *ctx, part_out *out, const exp04_call *c, const gemm_variant *v,
                    int group, bool needed)
{
    exp04_call *copy = RL_NEW(ctx, exp04_call);
    *copy = *c;
    copy->impl = RL_LAUNCHER(ctx, v);
    copy->kernel.launch = copy->impl->launch;
    copy->out = out;
    if (!copy->w.tile_m) {
        copy->w = (rl_wave_model){NAN, NAN, NAN, NAN, NAN, NAN, NAN};
        copy->wave_end = NAN;
    }
    const gemm_args *g = &c->kernel.args;
    size_t count = (size_t)g->m * (size_t)g->n;
    out->most = count > out->most ? count : out->most;
    rl_point_add(ctx, &(rl_point){
        .variant = KERNEL_VARIANT(v), .group = group, .call = gemm_kernel_call(&copy->kernel),
        RL_POINT_DATA(copy), .count = count, .atol = gemm_atol(g->k), .rtol = GEMM_RTOL,
        .prepare = prepare_call, .frees_want = true, .flops = rl_gemm_flops(g->m, g->n, g->k),
        .optional = !needed});
}

void exp04_calls_open(rl_ctx *ctx, part_out *out)
{
    out->c = rl_alloc(ctx->be, (out->most ? out->most : 1) * sizeof(float));
}

/* Points share inputs: the first free of each leaves nothing to the others. */
void exp04_calls_close(rl_ctx *ctx, const rl_points *pts, part_out *out)
{
    for (int i = 0; i < pts->n; i++) {
        exp04_call *c = RL_DATA_MUT(exp04_call, &pts->v[i]);
        rl_input_free(ctx, c->a);
        rl_input_free(ctx, c->b);
        gemm_wide_free(c->wide);
    }
    rl_free(ctx->be, out->c);
}

/* ---- a sweep of N across waves ------------------------------------------------- */

/* B is stored n x k (a linear layer's weight): the point at N reads the
 * first N rows of B and checks the first N columns of the widest
 * product. Every wave end opens a group, its N and the one a step on
 * (the verdict compares the first such pair: the others, and the points
 * alone, draw the staircase); wave_end marks the last N of a wave where
 * the sweep goes on past it. */
static void add_n(rl_ctx *ctx, wave_part *w, int n)
{
    bool ends = rl_wave_ends_at(&w->t, n), marked = ends && n < w->n_hi;
    if (ends) {
        w->end = n;
        w->pair = rl_group_new(ctx);
    }
    if (marked && w->first_end < 0)
        w->first_end = w->points;
    exp04_call c = {.part = w->part, .gemm = "nt", .a = &w->a, .b = &w->b, .wide = &w->ref,
                    .kernel.args = {.m = w->t.m, .n = n, .k = w->k, .trans_b = true}, .vocab = NAN,
                    .w = rl_wave_model_of(&w->t, n), .wave_end = marked,
                    .mark = marked ? "<- end of a wave" : ""};
    bool paired = n == w->end || n == w->end + WAVE_STEP;
    exp04_call_add(ctx, &w->out, &c, w->v, paired ? w->pair : 0,
                   paired && w->first_end >= 0 && w->points <= w->first_end + 1);
    w->points++;
}

/* N, and one step past it where a wave ends there and the sweep's next
 * N is further on. */
static void wave_points(rl_ctx *ctx, const rl_at *at, void *state)
{
    wave_part *w = state;
    int n = w->n_at(at, w);
    add_n(ctx, w, n);
    if (rl_wave_ends_at(&w->t, n) && n < w->n_hi && WAVE_STEP < w->step)
        add_n(ctx, w, n + WAVE_STEP);
}

void exp04_waves_declare(rl_ctx *ctx, wave_part *w, const rl_part *part)
{
    w->a = (rl_input){.count = (size_t)w->t.m * w->k, .exact = gemm_round_to_half};
    w->b = (rl_input){.count = (size_t)w->n_hi * w->k, .exact = gemm_round_to_half};
    w->ref.wide_n = w->n_hi;
    w->first_end = w->end = -1;
    rl_part_add(ctx, part);
    rl_sweep_declare(ctx, &(rl_sweep){w->axes, .points = wave_points, .state = w});
}

void exp04_waves_open(rl_ctx *ctx, void *state)
{
    wave_part *w = state;
    exp04_calls_open(ctx, &w->out);
}
