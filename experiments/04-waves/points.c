/*
 * points.c -- validate every GEMM of a part against the double-precision
 * reference, time the valid ones group by group, write one row each.
 */
#include "points.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- operands ------------------------------------------------------------ */

operand operand_new(rl_ctx *ctx, size_t count)
{
    operand op = {.count = count};
    op.host = rl_host_alloc(count * sizeof(float));
    rl_fill_uniform(op.host, count, -1.0f, 1.0f, rl_next_seed(ctx));
    gemm_round_to_half(op.host, count);
    op.dev = rl_alloc(ctx->be, count * sizeof(float));
    rl_upload(ctx->be, op.dev, op.host, count * sizeof(float));
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

/* The operand in the variant's input format. */
static const void *operand_for(rl_ctx *ctx, operand *op, const gemm_variant *v)
{
    if (!v->to_input)
        return op->dev;
    if (!op->dev16) {
        op->dev16 = rl_alloc(ctx->be, op->count * (size_t)v->in_bytes);
        v->to_input(op->dev16, op->dev, op->count, rl_stream(ctx->be));
        rl_sync(ctx->be);
    }
    return op->dev16;
}

/* ---- points -------------------------------------------------------------- */

void sweep_init(sweep *s, rl_ctx *ctx) { *s = (sweep){.ctx = ctx, .next_group = 1}; }

int sweep_new_group(sweep *s) { return s->next_group++; }

point *sweep_add(sweep *s, const point *p)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->pts = realloc(s->pts, sizeof(point) * (size_t)s->cap);
        if (!s->pts)
            rl_die(RL_EXIT_FAILED, "out of memory for points");
    }
    point *q = &s->pts[s->n++];
    *q = *p;
    if (!q->group)
        q->group = sweep_new_group(s);
    q->model_s = q->speedup = NAN;
    size_t out = (size_t)q->g.m * (size_t)q->g.n;
    if (out > s->c_count)
        s->c_count = out;
    return q;
}

void point_set_waves(point *p, int tile_m, int tile_n, int units, int blocks_per_unit)
{
    p->tile_m = tile_m;
    p->tile_n = tile_n;
    p->units = units;
    p->blocks_per_unit = blocks_per_unit;
    p->tiles = rl_tiles(p->g.m, p->g.n, tile_m, tile_n);
    p->waves = rl_waves(p->tiles, units, blocks_per_unit);
}

double point_flops(const point *p) { return rl_gemm_flops(p->g.m, p->g.n, p->g.k); }

double point_tflops(const point *p) { return p->ok ? point_flops(p) / p->seconds / 1e12 : NAN; }

/* ---- validate, then time --------------------------------------------- */

static void launch_point(void *arg)
{
    point *p = arg;
    p->v->launch(&p->g);
}

/* The expected m x n output, in double precision. */
static double *reference_for(const point *p)
{
    size_t m = (size_t)p->g.m, n = (size_t)p->g.n;
    double *want = rl_host_alloc(m * n * sizeof(double));
    if (p->ref) { /* columns 0..n-1 of the wider product */
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < m; i++)
            memcpy(want + i * n, p->ref + i * p->ref_ld, n * sizeof(double));
    } else {
        gemm_args host = p->g;
        host.a = p->a->host;
        host.b = p->b->host;
        gemm_reference(want, &host);
    }
    return want;
}

static void validate_point(sweep *s, point *p)
{
    rl_ctx *ctx = s->ctx;
    p->g.a = operand_for(ctx, p->a, p->v);
    p->g.b = operand_for(ctx, p->b, p->v);
    p->g.c = s->c;
    p->g.stream = rl_stream(ctx->be);
    double *want = reference_for(p);
    size_t count = (size_t)p->g.m * (size_t)p->g.n;
    rl_check c = rl_validate_f32(ctx->be, launch_point, p, s->c, count, want, gemm_atol(p->g.k),
                                 GEMM_RTOL);
    rl_host_free(want);
    p->ok = c.ok;
    p->max_abs_err = c.max_abs_err;
    if (!c.ok) {
        rl_check_describe(&c, p->why, sizeof p->why);
        fprintf(stderr, "exp-04: %s %s (m=%d n=%d k=%d) %s\n", p->v->name, p->gemm, p->g.m,
                p->g.n, p->g.k, p->why);
        ctx->failures++;
    }
}

enum { MAX_GROUP = 16 };

static void time_group(sweep *s, int group)
{
    rl_work works[MAX_GROUP];
    point *members[MAX_GROUP];
    rl_measurement m[MAX_GROUP];
    int n = 0;
    for (int i = 0; i < s->n; i++)
        if (s->pts[i].group == group && s->pts[i].ok) {
            if (n == MAX_GROUP)
                rl_die(RL_EXIT_FAILED, "exp-04: a group of more than %d points", MAX_GROUP);
            members[n] = &s->pts[i];
            works[n] = (rl_work){s->pts[i].v->name, launch_point, &s->pts[i]};
            n++;
        }
    if (n == 0)
        return;
    rl_progress_step(s->ctx, "%s %s %s n=%d", members[0]->part, members[0]->v->name,
                     members[0]->gemm, members[0]->g.n);
    rl_measure_group(s->ctx, works, n, m);
    for (int i = 0; i < n; i++) {
        members[i]->m = m[i];
        members[i]->seconds = m[i].stats.median;
    }
}

void sweep_run(sweep *s)
{
    s->c = rl_alloc(s->ctx->be, s->c_count * sizeof(float));
    for (int i = 0; i < s->n; i++)
        validate_point(s, &s->pts[i]);
    rl_progress_total(s->ctx, s->next_group - 1);
    for (int group = 1; group < s->next_group; group++)
        time_group(s, group);
    rl_progress_clear();
}

void sweep_free(sweep *s)
{
    if (s->c)
        rl_free(s->ctx->be, s->c);
    free(s->pts);
    *s = (sweep){0};
}

/* ---- rows ---------------------------------------------------------------- */

static void write_row(rl_ctx *ctx, const point *p)
{
    rl_set_str(ctx, "part", p->part);
    rl_set_str(ctx, "variant", p->v->name);
    rl_set_int(ctx, "number", p->v->number);
    rl_set_str(ctx, "gemm", p->gemm);
    rl_set_int(ctx, "m", p->g.m);
    rl_set_int(ctx, "n", p->g.n);
    rl_set_int(ctx, "k", p->g.k);
    if (p->vocab)
        rl_set_int(ctx, "vocab", p->vocab);
    if (p->tile_m) {
        rl_set_int(ctx, "tile_m", p->tile_m);
        rl_set_int(ctx, "tile_n", p->tile_n);
        rl_set_int(ctx, "tiles", p->tiles);
        rl_set_int(ctx, "units", p->units);
        rl_set_int(ctx, "blocks_per_unit", p->blocks_per_unit);
        rl_set_int(ctx, "waves", p->waves);
        rl_set_num(ctx, "wave_efficiency",
                   (double)p->tiles / ((double)p->waves * p->units * p->blocks_per_unit));
        rl_set_int(ctx, "wave_end", p->wave_end);
    }
    rl_set_num(ctx, "flops", point_flops(p));
    rl_set_str(ctx, "validated", p->ok ? "yes" : "no");
    rl_set_num(ctx, "max_abs_err", p->max_abs_err);
    if (p->ok) {
        rl_set_measurement(ctx, &p->m);
        rl_set_num(ctx, "tflops", point_tflops(p));
        rl_set_num(ctx, "mfu", rl_mfu(ctx, point_tflops(p)));
        rl_set_num(ctx, "model_time_us", p->model_s * 1e6);
        rl_set_num(ctx, "speedup_vs_v50257", p->speedup);
    } else {
        rl_set_str(ctx, "skipped_reason", p->why);
    }
    rl_end_row(ctx);
}

static void print_point(const point *p)
{
    printf("  %-6s %-15s %6d %6d %6d", p->v->name, p->gemm, p->g.m, p->g.n, p->g.k);
    if (p->tile_m)
        printf(" %6lld %3lld", p->tiles, p->waves);
    else
        printf(" %6s %3s", "-", "-");
    if (!p->ok) {
        printf("  FAILED validation\n");
        return;
    }
    printf(" %11.1f %8.3f", p->seconds * 1e6, point_tflops(p));
    if (isfinite(p->model_s))
        printf(" %11.1f", p->model_s * 1e6);
    else if (isfinite(p->speedup))
        printf(" %10.3fx", p->speedup);
    printf("%s\n", p->wave_end ? "  <- end of a wave" : "");
}

void sweep_report(sweep *s, const char *extra)
{
    if (s->n == 0)
        return;
    printf("\n  %-6s %-15s %6s %6s %6s %6s %3s %11s %8s %11s\n", "var", "gemm", "m", "n", "k",
           "tiles", "wav", "time/us", "TFLOP/s", extra);
    for (int i = 0; i < s->n; i++) {
        write_row(s->ctx, &s->pts[i]);
        print_point(&s->pts[i]);
    }
    fflush(stdout);
}
