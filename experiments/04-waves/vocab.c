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
#include <string.h>

/* ---- the axes ------------------------------------------------------------------ */

/* Tokens: the CPU does a GPU's second of work in minutes, fewer there. */
static const rl_axis GPU_TOKENS = RL_AXIS("tokens", RL_LIST(2048), RL_LIST(8192), RL_LIST(8192));
static const rl_axis TOKENS = RL_AXIS("tokens", RL_LIST(32), RL_LIST(64), RL_LIST(64),
                                      .gpu = &GPU_TOKENS);

/* V of the forward GEMM: GPT-2's 50257 and the padded 50304 with its
 * neighbours 50303 and 50305, and every 16th V from 64 x 785 to 64 x 787
 * in a lab run, every 4th (GPU) or 8th (CPU) in a full one (most CPU
 * points run to their time limit: every 4th alone took a large part of a
 * CPU reference run); a quick run: every 32nd on a GPU, the pair alone on
 * the CPU. */
#define V_EVERY_16TH                                                                   \
    50240, 50256, 50257, 50272, 50288, 50303, 50304, 50305, 50320, 50336, 50352, 50368
static const rl_axis GPU_VOCAB = RL_AXIS(
    "vocab", RL_LIST(50240, 50257, 50272, 50303, 50304, 50305, 50336, 50368), RL_LIST(V_EVERY_16TH),
    RL_LIST(50240, 50244, 50248, 50252, 50256, 50257, 50260, 50264, 50268, 50272, 50276, 50280,
            50284, 50288, 50292, 50296, 50300, 50303, 50304, 50305, 50308, 50312, 50316, 50320,
            50324, 50328, 50332, 50336, 50340, 50344, 50348, 50352, 50356, 50360, 50364, 50368));
static const rl_axis VOCAB = RL_AXIS(
    "vocab", RL_LIST(V_GPT2, V_PADDED), RL_LIST(V_EVERY_16TH),
    RL_LIST(50240, 50248, 50256, 50257, 50264, 50272, 50280, 50288, 50296, 50303, 50304, 50305,
            50312, 50320, 50328, 50336, 50344, 50352, 50360, 50368),
    .gpu = &GPU_VOCAB);
/* The pair that all three GEMMs run at, timed together. */
static const rl_axis PAIR = RL_AXIS("vocab", RL_LIST(V_GPT2, V_PADDED), RL_LIST(V_GPT2, V_PADDED),
                                    RL_LIST(V_GPT2, V_PADDED));

/* ---- the points ------------------------------------------------------------------ */

/* The layer as this run sizes it: the matrices at the largest V. */
typedef struct layer {
    const rl_claim *claim;
    int tokens;
    rl_input x, w, dy; /* X (tokens x 768), W (V x 768), dY (tokens x V) */
    gemm_wide logits;  /* X W^T */
    part_out out;
    char heading[128];
} layer;

/* One variant's points: its GEMMs at the pair are one group. */
typedef struct variant_points {
    layer *L;
    const gemm_variant *v;
    int pair;
} variant_points;

/* Adds c at vocabulary size vs. The verdict reads the library's pair
 * (the own kernel's is in its note). */
static void add_at(rl_ctx *ctx, const variant_points *vp, exp04_call c, int vs)
{
    const gemm_impl *impl = RL_LAUNCHER(ctx, vp->v);
    c.part = "vocab";
    c.vocab = vs;
    if (impl->tile_m) /* the own kernel's tiles, to show that 50257 and 50304 fill the same */
        c.w = rl_wave_model_of(&(rl_tiling){c.kernel.args.m, impl->tile_m, impl->tile_n,
                                            rl_units(ctx), impl->blocks_per_unit()},
                               c.kernel.args.n);
    bool paired = vs == V_GPT2 || vs == V_PADDED;
    exp04_call_add(ctx, &vp->L->out, &c, vp->v, paired ? vp->pair : 0,
                   paired && kernel_has_role(KERNEL_VARIANT(vp->v), "library"));
}

/* The forward GEMM at V reads the first V rows of W and is checked
 * against the first V columns of the widest product. */
static void forward_point(rl_ctx *ctx, const rl_at *at, void *state)
{
    const variant_points *vp = state;
    layer *L = vp->L;
    int vs = rl_at_int(at, &VOCAB);
    add_at(ctx, vp, (exp04_call){.gemm = "forward", .a = &L->x, .b = &L->w, .wide = &L->logits,
                                 .kernel.args = {.m = L->tokens, .n = vs, .k = HIDDEN,
                                                 .trans_b = true}},
           vs);
}

/* The backward GEMMs at V read the first tokens x V values of dY, each
 * checked against a reference of its own. */
static void backward_points(rl_ctx *ctx, const rl_at *at, void *state)
{
    const variant_points *vp = state;
    layer *L = vp->L;
    int t = L->tokens, vs = rl_at_int(at, &PAIR);
    add_at(ctx, vp, (exp04_call){.gemm = "backward_data", .a = &L->dy, .b = &L->w,
                                 .kernel.args = {.m = t, .n = HIDDEN, .k = vs}}, vs);
    add_at(ctx, vp, (exp04_call){.gemm = "backward_weight", .a = &L->dy, .b = &L->x,
                                 .kernel.args = {.m = vs, .n = HIDDEN, .k = t, .trans_a = true}},
           vs);
}

/* The timed point of this variant, gemm and vocabulary size, or NULL. */
typedef struct gemm_key {
    const gemm_variant *v;
    const char *gemm;
    int vocab;
} gemm_key;

static bool is_gemm(const rl_point *p, const void *key)
{
    const gemm_key *k = key;
    const exp04_call *c = RL_DATA(exp04_call, p);
    return p->variant == KERNEL_VARIANT(k->v) && c->vocab == k->vocab && !strcmp(c->gemm, k->gemm);
}

static const rl_point *find(const rl_points *pts, const gemm_variant *v, const char *gemm, int vs)
{
    return rl_points_find(pts, NULL, is_gemm, &(gemm_key){v, gemm, vs});
}

/* Each GEMM's time at V = 50257 over its time here, and that ratio's
 * spread (rl_time_ratio's): the chart's bars.
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

/* The layer's matrices, for the largest V. */
static layer *layer_on(rl_ctx *ctx, const rl_claim *claim)
{
    layer *L = RL_NEW(ctx, layer);
    int t = (int)rl_axis_first(ctx, &TOKENS), v_max = (int)rl_axis_last(ctx, &VOCAB);
    *L = (layer){.claim = claim, .tokens = t, .logits.wide_n = v_max,
                 .x = {.count = (size_t)t * HIDDEN, .exact = gemm_round_to_half},
                 .w = {.count = (size_t)v_max * HIDDEN, .exact = gemm_round_to_half},
                 .dy = {.count = (size_t)t * v_max, .exact = gemm_round_to_half}};
    return L;
}

/* Every variant of the family, in one part: the forward GEMM at every V,
 * then the backward ones at the pair. */
void exp04_vocab_declare(rl_ctx *ctx, const rl_claim *claim)
{
    layer *L = layer_on(ctx, claim);
    int t = L->tokens, v_min = (int)rl_axis_first(ctx, &VOCAB), v_max = L->logits.wide_n;
    rl_meta(ctx, "vocab",
            "GPT-2 small's output layer: tokens %d (%s), hidden %d; forward (C = X W^T) at V = "
            "%d..%d (%d sizes), forward and both backward GEMMs at V = %d and %d timed together",
            t, ctx->kind == RL_CUDA ? "the GPU's size" : "fewer on the CPU than the GPU's 8192",
            HIDDEN, v_min, v_max, rl_axis_values(ctx, &VOCAB).n, V_GPT2, V_PADDED);
    snprintf(L->heading, sizeof L->heading,
             "vocab: GPT-2 small's output layer, %d tokens x %d hidden, V = %d..%d", t, HIDDEN,
             v_min, v_max);
    rl_part_add(ctx, &(rl_part){.open = open_layer, .done = done, .state = L, .table = TABLE,
                                .heading = L->heading});
    for (const gemm_variant *v = gemm_variants; v->name; v++) {
        if (!rl_runs(ctx, &gemm_family, KERNEL_VARIANT(v)))
            continue;
        variant_points vp = {L, v, rl_group_new(ctx)};
        rl_sweep_declare(ctx, &(rl_sweep){(const rl_axis *const[]){&VOCAB, NULL},
                                          .points = forward_point, .state = &vp});
        rl_sweep_declare(ctx, &(rl_sweep){(const rl_axis *const[]){&PAIR, NULL},
                                          .points = backward_points, .state = &vp});
    }
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

/* The same ratio of sums with its spread: each sum at the opposite end
 * of its members' q1-q3 (as rl_time_ratio does for two points). */
static rl_ratio pair_spread(const rl_points *pts, const gemm_variant *v)
{
    double q1[2] = {0, 0}, med[2] = {0, 0}, q3[2] = {0, 0};
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < 3; i++) {
            const rl_point *p = find(pts, v, GEMMS[i], s ? V_PADDED : V_GPT2);
            q1[s] += p ? p->m.stats.q1 : NAN;
            med[s] += p ? p->m.stats.median : NAN;
            q3[s] += p ? p->m.stats.q3 : NAN;
        }
    return (rl_ratio){med[0] / med[1], q1[0] / q3[1], q3[0] / q1[1]};
}

/* Each GEMM's two sizes timed in one group, round by round (the pair). */
static void pair_premise(rl_premise *pr, const rl_points *pts, const gemm_variant *v)
{
    for (int i = 0; i < 3; i++) {
        char what[96];
        snprintf(what, sizeof what, "%s's %s at V = %d and %d", v->name, GEMMS[i], V_GPT2, V_PADDED);
        rl_premise_same_group(pr, find(pts, v, GEMMS[i], V_GPT2), find(pts, v, GEMMS[i], V_PADDED),
                              what);
    }
}

static double ratio_of(const rl_points *pts, const gemm_variant *v, const char *gemm)
{
    const rl_point *a = find(pts, v, gemm, V_GPT2), *b = find(pts, v, gemm, V_PADDED);
    return a && b ? a->seconds / b->seconds : NAN;
}

/* The library's three GEMMs at 50257 over 50304. "Faster" must mean
 * faster than the two times scatter: twice the ratio's spread, and never
 * less than the claim's least gain (2 %); and the ratio's q1-q3 spread
 * wholly on one side of that bar (rl_judge_ratio_within_given), the
 * pairs timed in one group. */
static void judge(rl_ctx *ctx, const rl_points *pts, const layer *L)
{
    const rl_claim *claim = L->claim;
    const gemm_variant *lib = gemm_by_role(ctx, "library"), *own = gemm_by_role(ctx, "own_tiled");
    double noise = NAN, own_noise;
    if (lib)
        pair_ratio(pts, lib, &noise); /* its spread sets the bar; the verdict reads pair_spread */
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
    rl_premise pr = rl_premise_start();
    if (lib)
        pair_premise(&pr, pts, lib);
    rl_judge_ratio_within_given(ctx, claim, NULL, lib ? pair_spread(pts, lib) : RL_RATIO_NONE, bar,
                                INFINITY, &pr, note);
}
