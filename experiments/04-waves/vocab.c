/*
 * vocab.c -- GPT-2 small's output layer: logits = X W^T for X (tokens x
 * 768) and W (V x 768), at V = 50257 (GPT-2's vocabulary) and 50304
 * (64 x 786, nanoGPT's padding), over a short sweep of V, and its two
 * backward GEMMs at the pair:
 *   backward_data    dX = dY W     (tokens x 768, summed over V)
 *   backward_weight  dW = dY^T X   (V x 768, summed over the tokens)
 * Every variant of the family runs it.
 */
#include "exp04.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- the plan ------------------------------------------------------------------- */

typedef struct vocab_sizes {
    int tokens;
    int v[64], count; /* vocabulary sizes of the forward sweep, ascending */
} vocab_sizes;

/* Every step-th V from 64 x 785 to 64 x 787 and the padded size's
 * neighbours 50303 and 50305, and GPT-2's 50257 and 50304 (step 0: only
 * these two), in order. */
static int sizes_every(int *out, int step)
{
    int n = 0;
    for (int v = V_LO; v <= V_HI; v++)
        if (v == V_GPT2 || v == V_PADDED ||
            (step && ((v - V_LO) % step == 0 || abs(v - V_PADDED) == 1)))
            out[n++] = v;
    return n;
}

/* The CPU does a GPU's second of work in minutes: fewer tokens there; a
 * quick run measures the pair alone on the CPU, a lab run every 16th V, a
 * full run every 4th on a GPU and every 8th on the CPU (most points there
 * run to their time limit: every 4th alone took 8 of a reference run's 30
 * minutes). */
static vocab_sizes sizes_on(const rl_ctx *ctx)
{
    bool gpu = ctx->kind == RL_CUDA, quick = ctx->args.mode == RL_MODE_QUICK;
    vocab_sizes s = {.tokens = gpu ? (quick ? 2048 : 8192) : (quick ? 32 : 64)};
    s.count = sizes_every(s.v, quick ? (gpu ? 32 : 0) : ctx->args.mode == RL_MODE_LAB ? 16 : gpu ? 4 : 8);
    return s;
}

/* Adds c at vocabulary size vs: the pair's GEMMs are one group. */
static void add_at(rl_ctx *ctx, rl_points *pts, const gemm_variant *v, call c, int vs, int pair)
{
    const gemm_impl *impl = impl_of(ctx, v);
    c.part = "vocab";
    c.vocab = vs;
    if (impl->tile_m) /* the own kernel's tiles, to show that 50257 and 50304 fill the same */
        c.w = waves_of(c.g.m, c.g.n, impl->tile_m, impl->tile_n, units_of(ctx),
                       impl->blocks_per_unit());
    call_add(ctx, pts, &c, v, vs == V_GPT2 || vs == V_PADDED ? pair : 0);
}

/* One variant's GEMMs: the forward one at every V, reading the first V
 * rows of W and checked against the first V columns of the widest
 * product; the backward ones at the pair, reading the first tokens x V
 * values of dY, each checked against a reference of its own. */
static void add_gemms(rl_ctx *ctx, rl_points *pts, const gemm_variant *v, const vocab_sizes *s,
                      operand *x, operand *w, operand *dy, const double *ref)
{
    int t = s->tokens, pair = rl_points_new_group(pts);
    for (int i = 0; i < s->count; i++)
        add_at(ctx, pts, v, (call){.gemm = "forward", .a = x, .b = w, .ref = ref,
                                   .ref_ld = (size_t)s->v[s->count - 1],
                                   .g = {.m = t, .n = s->v[i], .k = HIDDEN, .trans_b = true}},
               s->v[i], pair);
    const int pair_sizes[] = {V_GPT2, V_PADDED};
    for (int i = 0; i < 2; i++) {
        int vs = pair_sizes[i];
        add_at(ctx, pts, v, (call){.gemm = "backward_data", .a = dy, .b = w,
                                   .g = {.m = t, .n = HIDDEN, .k = vs}}, vs, pair);
        add_at(ctx, pts, v, (call){.gemm = "backward_weight", .a = dy, .b = x,
                                   .g = {.m = vs, .n = HIDDEN, .k = t, .trans_a = true}}, vs, pair);
    }
}

static void declare(rl_ctx *ctx, rl_points *pts, const vocab_sizes *s, operand *x, operand *w,
                    operand *dy, const double *ref)
{
    for (const gemm_variant *v = gemm_variants; v->name; v++)
        if (rl_runs(ctx, &gemm_family, KERNEL_VARIANT(v)))
            add_gemms(ctx, pts, v, s, x, w, dy, ref);
}

/* The plan: the same points on inputs not yet drawn. */
void vocab_plan(rl_ctx *ctx)
{
    vocab_sizes s = sizes_on(ctx);
    rl_points pts = {0};
    operand none[3] = {{0}};
    declare(ctx, &pts, &s, &none[0], &none[1], &none[2], NULL);
    rl_points_plan(ctx, &pts);
    calls_free(&pts);
}

/* ---- the run -------------------------------------------------------------------- */

static const rl_column TABLE[] = {
    CALL_TABLE_HEAD,
    RL_DOUBLE(NULL, "vs 50257", "%9.3fx", call, speedup),
    {0},
};

/* Each GEMM's time at V = 50257 over its time here. */
static void set_speedups(rl_points *pts)
{
    for (int i = 0; i < pts->n; i++) {
        rl_point *p = &pts->v[i];
        call *c = p->arg;
        const rl_point *base = calls_find(pts, (const gemm_variant *)p->variant, c->gemm, V_GPT2);
        if (base && rl_point_timed(p))
            c->speedup = base->seconds / p->seconds;
    }
}

static void judge(rl_ctx *ctx, const rl_points *pts, const vocab_sizes *s);

void vocab_run(rl_ctx *ctx)
{
    vocab_sizes s = sizes_on(ctx);
    int t = s.tokens, v_max = s.v[s.count - 1];
    bool gpu = ctx->kind == RL_CUDA;
    rl_meta(ctx, "vocab",
            "GPT-2 small's output layer: tokens %d (%s), hidden %d; forward (C = X W^T) at V = "
            "%d..%d (%d sizes), forward and both backward GEMMs at V = %d and %d timed together",
            t, gpu ? "the GPU's size" : "fewer on the CPU than the GPU's 8192", HIDDEN, s.v[0],
            v_max, s.count, V_GPT2, V_PADDED);
    printf("\nvocab: GPT-2 small's output layer, %d tokens x %d hidden, V = %d..%d\n", t, HIDDEN,
           s.v[0], v_max);
    operand x = operand_new(ctx, (size_t)t * HIDDEN), w = operand_new(ctx, (size_t)v_max * HIDDEN);
    operand dy = operand_new(ctx, (size_t)t * v_max);
    double *ref = rl_host_alloc((size_t)t * v_max * sizeof(double));
    gemm_args widest = {.m = t, .n = v_max, .k = HIDDEN, .a = x.host, .b = w.host, .trans_b = true};
    gemm_reference(ref, &widest);

    rl_points pts = {0};
    declare(ctx, &pts, &s, &x, &w, &dy, ref);
    calls_measure(ctx, &pts);
    set_speedups(&pts);
    rl_points_report_as(ctx, &pts, TABLE);
    judge(ctx, &pts, &s);

    calls_free(&pts);
    operand_free(ctx, &x);
    operand_free(ctx, &w);
    operand_free(ctx, &dy);
    rl_host_free(ref);
}

/* ---- the verdict ---------------------------------------------------------------- */

static const char *const GEMMS[] = {"forward", "backward_data", "backward_weight"};

/* Time of the three GEMMs at vocab (NaN when one is missing), and its
 * relative spread (noise, when not NULL): the GEMMs' sample spreads (standard deviations, not
 * errors of the median: drift between rounds is larger than those) added
 * in quadrature. */
static double step_time(const rl_points *pts, const gemm_variant *v, int vocab, double *noise)
{
    double sum = 0, var = 0;
    for (int i = 0; i < 3; i++) {
        const rl_point *p = calls_find(pts, v, GEMMS[i], vocab);
        double sd = p ? p->m.stats.rel_stddev * p->seconds : NAN;
        sum += p ? p->seconds : NAN;
        var += sd * sd;
    }
    if (noise)
        *noise = sqrt(var) / sum;
    return sum;
}

static double ratio_of(const rl_points *pts, const gemm_variant *v, const char *gemm)
{
    const rl_point *a = calls_find(pts, v, gemm, V_GPT2), *b = calls_find(pts, v, gemm, V_PADDED);
    return a && b ? a->seconds / b->seconds : NAN;
}

/* The library's three GEMMs at 50257 over 50304. "Faster" must mean
 * faster than the two times scatter: twice the ratio's spread, and never
 * less than the claim's least gain (2 %). */
static void judge(rl_ctx *ctx, const rl_points *pts, const vocab_sizes *s)
{
    const rl_claim *claim = &EXP04_CLAIMS[CLAIM_VOCAB];
    const gemm_variant *lib = gemm_by_role(ctx, "library"), *own = gemm_by_role(ctx, "own_tiled");
    double n1 = NAN, n2 = NAN, ratio = NAN, own_ratio = NAN;
    if (lib)
        ratio = step_time(pts, lib, V_GPT2, &n1) / step_time(pts, lib, V_PADDED, &n2);
    if (own)
        own_ratio = step_time(pts, own, V_GPT2, NULL) / step_time(pts, own, V_PADDED, NULL);
    double noise = hypot(n1, n2), bar = fmax(claim->lo, 1.0 + 2 * noise);
    char note[300];
    if (lib)
        snprintf(note, sizeof note,
                 "%s, %d tokens: fwd %.3fx, bwd data %.3fx, bwd weight %.3fx; own tiled %.3fx "
                 "(same tiles); bar %.3fx = 1 + max(%.0f %%, 2 x spread %.1f %%)%s",
                 lib->name, s->tokens, ratio_of(pts, lib, "forward"),
                 ratio_of(pts, lib, "backward_data"), ratio_of(pts, lib, "backward_weight"),
                 own_ratio, bar, 100 * (claim->lo - 1), 100 * noise,
                 ctx->kind == RL_CPU
                     ? "; a CPU BLAS packs its operands: alignment should matter little"
                     : "");
    else
        snprintf(note, sizeof note, "no variant with the role library selected; own tiled %.3fx",
                 own_ratio);
    rl_judge_within(ctx, claim, NULL, ratio, bar, INFINITY, note);
}
