/*
 * calls.c -- one GEMM call as a point, for the three measured parts: its
 * inputs (FP16-exact numbers, on the device in the variant's format), its
 * reference (columns of a wider product), its wave columns; and the sweep
 * of N across waves that staircase.c and library.c share. The harness
 * does the rest: validates, times each group, writes the rows.
 */
#include "exp04.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int units_of(const rl_ctx *ctx)
{
    return ctx->kind == RL_CUDA ? ctx->dev->sm_count : ctx->dev->threads;
}

const gemm_impl *impl_of(const rl_ctx *ctx, const gemm_variant *v)
{
    return gemm_impl_on(v, ctx->kind == RL_CUDA ? KERNEL_CUDA : KERNEL_CPU);
}

const gemm_variant *gemm_by_role(const rl_ctx *ctx, const char *role)
{
    return (const gemm_variant *)rl_variant_by_role(ctx, &gemm_family, role);
}

/* ---- operands ------------------------------------------------------------------- */

operand operand_new(rl_ctx *ctx, size_t count)
{
    operand op = {.count = count};
    op.host = rl_host_alloc(count * sizeof(float));
    rl_fill_uniform(op.host, count, -1.0f, 1.0f, rl_next_seed(ctx));
    gemm_round_to_half(op.host, count);
    op.dev = rl_alloc_copy(ctx->be, op.host, count * sizeof(float));
    return op;
}

void operand_free(rl_ctx *ctx, operand *op)
{
    rl_host_free(op->host);
    rl_free(ctx->be, op->dev);
    if (op->dev16)
        rl_free(ctx->be, op->dev16);
    *op = (operand){0};
}

/* The operand in the implementation's input format. */
static const void *operand_for(rl_ctx *ctx, operand *op, const gemm_impl *impl)
{
    if (!impl->to_input)
        return op->dev;
    if (!op->dev16) {
        op->dev16 = rl_alloc(ctx->be, op->count * (size_t)impl->in_bytes);
        impl->to_input(op->dev16, op->dev, op->count, rl_stream(ctx->be));
        rl_sync(ctx->be);
    }
    return op->dev16;
}

/* ---- points --------------------------------------------------------------------- */

wave_columns waves_of(int m, int n, int tile_m, int tile_n, int units, int per_unit)
{
    long long tiles = rl_tiles(m, n, tile_m, tile_n), waves = rl_waves(tiles, units, per_unit);
    return (wave_columns){tile_m, tile_n, (double)tiles, units, per_unit, (double)waves,
                          (double)tiles / ((double)waves * units * per_unit), 0};
}

static void run_call(void *arg)
{
    call *c = arg;
    c->impl->launch(&c->g);
}

/* The expected m x n output, in double precision. */
static double *reference_for(const call *c)
{
    size_t m = (size_t)c->g.m, n = (size_t)c->g.n;
    double *want = rl_host_alloc(m * n * sizeof(double));
    if (c->ref) { /* columns 0..n-1 of the wider product */
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < m; i++)
            memcpy(want + i * n, c->ref + i * c->ref_ld, n * sizeof(double));
    } else {
        gemm_args host = c->g;
        host.a = c->a->host;
        host.b = c->b->host;
        gemm_reference(want, &host);
    }
    return want;
}

/* Before validation: the operands in the variant's input format, and the
 * reference, which the harness frees once the point is checked (all of
 * them at once would not fit in memory). */
static void prepare_call(rl_ctx *ctx, rl_point *p)
{
    call *c = p->arg;
    c->g.a = operand_for(ctx, c->a, c->impl);
    c->g.b = operand_for(ctx, c->b, c->impl);
    c->g.stream = rl_stream(ctx->be);
    p->want = reference_for(c);
}

/* A zero vocab or tile_m means none: those columns stay empty. */
rl_point *call_add(rl_ctx *ctx, rl_points *pts, const call *c, const gemm_variant *v, int group)
{
    call *copy = malloc(sizeof *copy);
    if (!copy)
        rl_die(RL_EXIT_FAILED, "out of memory for a point");
    *copy = *c;
    copy->impl = impl_of(ctx, v);
    copy->model_us = copy->speedup = NAN;
    if (!copy->vocab)
        copy->vocab = NAN;
    if (!copy->w.tile_m)
        copy->w = (wave_columns){NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN};
    const gemm_args *g = &c->g;
    return rl_points_add(pts, &(rl_point){
        .variant = KERNEL_VARIANT(v), .group = group, .run = run_call, .arg = copy, .data = copy,
        .count = (size_t)g->m * (size_t)g->n, .atol = gemm_atol(g->k), .rtol = GEMM_RTOL,
        .prepare = prepare_call, .frees_want = true, .flops = rl_gemm_flops(g->m, g->n, g->k)});
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

void calls_free(rl_points *pts)
{
    for (int i = 0; i < pts->n; i++)
        free(pts->v[i].arg);
    rl_points_free(pts);
}

const rl_point *calls_find(const rl_points *pts, const gemm_variant *v, const char *gemm,
                           int vocab)
{
    for (int i = 0; i < pts->n; i++) {
        const rl_point *p = &pts->v[i];
        if (rl_point_timed(p) && p->variant == KERNEL_VARIANT(v) && call_of(p)->vocab == vocab &&
            !strcmp(call_of(p)->gemm, gemm))
            return p;
    }
    return NULL;
}

const char *col_wave_end(rl_ctx *ctx, const rl_point *p, char *buf, size_t len)
{
    (void)ctx, (void)buf, (void)len;
    return call_of(p)->w.end == 1 ? "<- end of a wave" : "";
}

/* ---- a sweep of N across waves -------------------------------------------------- */

static long long waves_at(const wave_sweep *w, int n)
{
    return rl_waves(rl_tiles(w->m, n, w->tile_m, w->tile_n), w->units, w->blocks_per_unit);
}

/* The last N of a wave: one more column of tiles needs another wave. */
static bool ends_a_wave(const wave_sweep *w, int n)
{
    return n % w->tile_n == 0 && waves_at(w, n + 1) > waves_at(w, n);
}

/* The N after n: one step of WAVE_STEP past the end of a wave, else the
 * next multiple of the sweep's step. */
static int next_n(const wave_sweep *w, int n)
{
    return ends_a_wave(w, n) && (n + WAVE_STEP) % w->step ? n + WAVE_STEP
                                                          : (n / w->step + 1) * w->step;
}

/* A matrix pair A (m x k), B (n_hi x k): the point at N reads the first N
 * rows of B and checks the first N columns of the widest product. The
 * last N of a wave and the N one step past it are one group (a verdict
 * compares them); wave_end is 1 where the next point needs another wave. */
static void sweep_declare(rl_ctx *ctx, rl_points *pts, const wave_sweep *w, operand ops[2],
                          const double *ref)
{
    int first = pts->n, end = -1, pair = 0;
    for (int n = w->n_lo; n <= w->n_hi; n = next_n(w, n)) {
        if (ends_a_wave(w, n)) {
            end = n;
            pair = rl_points_new_group(pts);
        }
        call c = {.part = w->part, .gemm = "nt", .a = &ops[0], .b = &ops[1], .ref = ref,
                  .ref_ld = (size_t)w->n_hi, .g = {.m = w->m, .n = n, .k = w->k, .trans_b = true},
                  .w = waves_of(w->m, n, w->tile_m, w->tile_n, w->units, w->blocks_per_unit)};
        call_add(ctx, pts, &c, w->v, n == end || n == end + WAVE_STEP ? pair : 0);
    }
    for (int i = first; i + 1 < pts->n; i++) {
        call *c = pts->v[i].arg;
        c->w.end = call_of(&pts->v[i + 1])->w.waves > c->w.waves;
    }
}

/* The plan: the same points on inputs not yet drawn. */
void sweep_plan(rl_ctx *ctx, const wave_sweep *w)
{
    rl_points pts = {0};
    operand none[2] = {{0}};
    sweep_declare(ctx, &pts, w, none, NULL);
    rl_points_plan(ctx, &pts);
    calls_free(&pts);
}

void sweep_measure(rl_ctx *ctx, const wave_sweep *w, rl_points *pts)
{
    operand ops[2] = {operand_new(ctx, (size_t)w->m * w->k),
                      operand_new(ctx, (size_t)w->n_hi * w->k)};
    double *ref = rl_host_alloc((size_t)w->m * w->n_hi * sizeof(double));
    gemm_args widest = {.m = w->m, .n = w->n_hi, .k = w->k, .a = ops[0].host, .b = ops[1].host,
                        .trans_b = true};
    gemm_reference(ref, &widest);
    sweep_declare(ctx, pts, w, ops, ref);
    calls_measure(ctx, pts);
    operand_free(ctx, &ops[0]);
    operand_free(ctx, &ops[1]);
    rl_host_free(ref);
}

int sweep_first_wave_end(const rl_points *pts)
{
    for (int i = 0; i + 1 < pts->n; i++)
        if (call_of(&pts->v[i])->w.end == 1 &&
            call_of(&pts->v[i + 1])->g.n == call_of(&pts->v[i])->g.n + WAVE_STEP)
            return i;
    return -1;
}
