/*
 * vocab.c -- GPT-2 small's output layer: logits = X W^T for X (tokens x
 * 768) and W (V x 768), at V = 50257 (GPT-2's vocabulary) and 50304
 * (64 x 786, nanoGPT's padding), over a short sweep of V, and its two
 * backward GEMMs at the pair:
 *   backward_data    dX = dY W     (tokens x 768, summed over V)
 *   backward_weight  dW = dY^T X   (V x 768, summed over the tokens)
 * Every variant of the family runs it, in one part.
 */
#include "exp04.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The layer as this run sizes it: the vocabulary sizes of the forward
 * sweep, ascending, and the matrices at the largest. */
typedef struct layer {
    int tokens, v[64], count;
    rl_input x, w, dy; /* X (tokens x 768), W (V x 768), dY (tokens x V) */
    gemm_wide logits;  /* X W^T */
    part_out out;
    char heading[128];
} layer;

/* The CPU does a GPU's second of work in minutes: fewer tokens there. V:
 * every step-th from 64 x 785 to 64 x 787, the padded size's neighbours
 * 50303 and 50305, and GPT-2's 50257 and 50304 (step 0: only these two):
 * the pair alone in a quick CPU run, every 16th V in a lab run, every 4th
 * (GPU) or 8th (CPU) in a full one (most CPU points run to their time
 * limit: every 4th alone took a large part of a CPU reference run). */
static layer layer_on(const rl_ctx *ctx)
{
    bool gpu = ctx->kind == RL_CUDA, quick = ctx->args.mode == RL_MODE_QUICK;
    int step = RL_BY_MODE(ctx, gpu ? 32 : 0, 16, gpu ? 4 : 8);
    layer L = {.tokens = gpu ? (quick ? 2048 : 8192) : (quick ? 32 : 64)};
    for (int v = V_LO; v <= V_HI; v++)
        if (v == V_GPT2 || v == V_PADDED ||
            (step && ((v - V_LO) % step == 0 || abs(v - V_PADDED) == 1)))
            L.v[L.count++] = v;
    int v_max = L.v[L.count - 1];
    L.x = (rl_input){.count = (size_t)L.tokens * HIDDEN, .exact = gemm_round_to_half};
    L.w = (rl_input){.count = (size_t)v_max * HIDDEN, .exact = gemm_round_to_half};
    L.dy = (rl_input){.count = (size_t)L.tokens * v_max, .exact = gemm_round_to_half};
    L.logits.wide_n = v_max;
    return L;
}

/* Adds c at vocabulary size vs: the pair's GEMMs are one group. The
 * verdict reads the library's pair (the own kernel's is in its note). */
static void add_at(rl_ctx *ctx, layer *L, const gemm_variant *v, exp04_call c, int vs, int pair)
{
    const gemm_impl *impl = RL_LAUNCHER(ctx, v);
    c.part = "vocab";
    c.vocab = vs;
    if (impl->tile_m) /* the own kernel's tiles, to show that 50257 and 50304 fill the same */
        c.w = rl_wave_model_of(&(rl_tiling){c.kernel.args.m, impl->tile_m, impl->tile_n,
                                            rl_units(ctx), impl->blocks_per_unit()},
                               c.kernel.args.n);
    bool paired = vs == V_GPT2 || vs == V_PADDED;
    exp04_call_add(ctx, &L->out, &c, v, paired ? pair : 0,
             paired && kernel_has_role(KERNEL_VARIANT(v), "library"));
}

/* One variant's GEMMs: the forward one at every V, reading the first V
 * rows of W and checked against the first V columns of the widest
 * product; the backward ones at the pair, reading the first tokens x V
 * values of dY, each checked against a reference of its own. */
static void add_gemms(rl_ctx *ctx, const gemm_variant *v, layer *L)
{
    int t = L->tokens, pair = rl_group_new(ctx);
    for (int i = 0; i < L->count; i++)
        add_at(ctx, L, v, (exp04_call){.gemm = "forward", .a = &L->x, .b = &L->w, .wide = &L->logits,
                                 .kernel.args = {.m = t, .n = L->v[i], .k = HIDDEN,
                                                 .trans_b = true}},
               L->v[i], pair);
    static const int PAIR[] = {V_GPT2, V_PADDED};
    for (int i = 0; i < 2; i++) {
        int vs = PAIR[i];
        add_at(ctx, L, v, (exp04_call){.gemm = "backward_data", .a = &L->dy, .b = &L->w,
                                 .kernel.args = {.m = t, .n = HIDDEN, .k = vs}}, vs, pair);
        add_at(ctx, L, v, (exp04_call){.gemm = "backward_weight", .a = &L->dy, .b = &L->x,
                                 .kernel.args = {.m = vs, .n = HIDDEN, .k = t, .trans_a = true}},
               vs, pair);
    }
}

/* The timed point of this variant, gemm and vocabulary size vs, or NULL. */
static const rl_point *find(const rl_points *pts, const gemm_variant *v, const char *gemm, int vs)
{
    for (int i = 0; i < pts->n; i++) {
        const rl_point *p = &pts->v[i];
        const exp04_call *c = RL_DATA(exp04_call, p);
        if (rl_point_timed(p) && p->variant == KERNEL_VARIANT(v) && c->vocab == vs &&
            !strcmp(c->gemm, gemm))
            return p;
    }
    return NULL;
}

/* Each GEMM's time at V = 50257 over its time here, and that ratio's
 * spread (both times at opposite ends of their q1-q3): the chart's bars.
 * NaN outside the vocab part, whose points alone have a vocabulary. */
rl_ratio exp04_vocab_speedup_ratio(rl_ctx *ctx, const rl_point *p)
{
    const exp04_call *c = RL_DATA(exp04_call, p);
    const gemm_variant *v = (const gemm_variant *)p->variant;
    return rl_time_ratio(find(rl_points_all(ctx), v, c->gemm, V_GPT2), p);
}

static double vocab_speedup(rl_ctx *ctx, const rl_point *p)
{
    return exp04_vocab_speedup_ratio(ctx, p).median;
}

static const rl_column TABLE[] = {
    CALL_TABLE_HEAD,
    {NULL, "vs 50257", "%9.3fx", .num = vocab_speedup},
    {0},
};

static void judge(rl_ctx *ctx, const rl_points *pts, const layer *L);

/* Judges the part's claim, then frees its buffers. */
static void done(rl_ctx *ctx, const rl_points *pts, void *state)
{
    layer *L = state;
    judge(ctx, pts, L);
    exp04_calls_close(ctx, pts, &L->out);
}

static void open_layer(rl_ctx *ctx, void *state)
{
    layer *L = state;
    exp04_calls_open(ctx, &L->out);
}

void exp04_vocab_declare(rl_ctx *ctx)
{
    layer *L = RL_NEW(ctx, layer);
    *L = layer_on(ctx);
    int t = L->tokens, v_max = L->logits.wide_n;
    rl_meta(ctx, "vocab",
            "GPT-2 small's output layer: tokens %d (%s), hidden %d; forward (C = X W^T) at V = "
            "%d..%d (%d sizes), forward and both backward GEMMs at V = %d and %d timed together",
            t, ctx->kind == RL_CUDA ? "the GPU's size" : "fewer on the CPU than the GPU's 8192",
            HIDDEN, L->v[0], v_max, L->count, V_GPT2, V_PADDED);
    snprintf(L->heading, sizeof L->heading,
             "vocab: GPT-2 small's output layer, %d tokens x %d hidden, V = %d..%d", t, HIDDEN,
             L->v[0], v_max);
    rl_part_add(ctx, &(rl_part){.open = open_layer, .done = done, .state = L, .table = TABLE,
                                .heading = L->heading});
    for (const gemm_variant *v = gemm_variants; v->name; v++)
        if (rl_runs(ctx, &gemm_family, KERNEL_VARIANT(v)))
            add_gemms(ctx, v, L);
}

/* ---- the verdict ---------------------------------------------------------------- */

static const char *const GEMMS[] = {"forward", "backward_data", "backward_weight"};

/* The three GEMMs' time at 50257 over their time at 50304 (NaN when one
 * is missing), and its relative spread (noise): each time's, from the
 * GEMMs' sample spreads (standard deviations, not errors of the median:
 * drift between rounds is larger than those), added in quadrature. */
static double pair_ratio(const rl_points *pts, const gemm_variant *v, double *noise)
{
    double sum[2] = {0, 0}, var[2] = {0, 0};
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < 3; i++) {
            const rl_point *p = find(pts, v, GEMMS[i], s ? V_PADDED : V_GPT2);
            double sd = p ? p->m.stats.rel_stddev * p->seconds : NAN;
            sum[s] += p ? p->seconds : NAN;
            var[s] += sd * sd;
        }
    *noise = hypot(sqrt(var[0]) / sum[0], sqrt(var[1]) / sum[1]);
    return sum[0] / sum[1];
}

static double ratio_of(const rl_points *pts, const gemm_variant *v, const char *gemm)
{
    const rl_point *a = find(pts, v, gemm, V_GPT2), *b = find(pts, v, gemm, V_PADDED);
    return a && b ? a->seconds / b->seconds : NAN;
}

/* The library's three GEMMs at 50257 over 50304. "Faster" must mean
 * faster than the two times scatter: twice the ratio's spread, and never
 * less than the claim's least gain (2 %). */
static void judge(rl_ctx *ctx, const rl_points *pts, const layer *L)
{
    const rl_claim *claim = &EXP04_CLAIMS[CLAIM_VOCAB];
    const gemm_variant *lib = gemm_by_role(ctx, "library"), *own = gemm_by_role(ctx, "own_tiled");
    double noise = NAN, own_noise, ratio = lib ? pair_ratio(pts, lib, &noise) : NAN;
    double own_ratio = own ? pair_ratio(pts, own, &own_noise) : NAN;
    double bar = fmax(claim->lo, 1.0 + 2 * noise);
    /* The bar in the CSV too: the chart draws it as the band of noise
     * around 1 that a speedup must clear. */
    rl_meta(ctx, "vocab_bar",
            "%.6g %.6g (the verdict's bar: 1 + max(%.0f %%, 2 x spread); spread: the relative "
            "stddev of %s's fwd+bwd time ratio 50257 / 50304)",
            bar, noise, 100 * (claim->lo - 1), lib ? lib->name : "no library variant");
    char note[300];
    if (lib)
        snprintf(note, sizeof note,
                 "%s, %d tokens: fwd %.3fx, bwd data %.3fx, bwd weight %.3fx; own tiled %.3fx "
                 "(same tiles); bar %.3fx = 1 + max(%.0f %%, 2 x spread %.1f %%)%s",
                 lib->name, L->tokens, ratio_of(pts, lib, "forward"),
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
