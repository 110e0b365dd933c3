/*
 * vocab.c -- GPT-2 small's output layer: logits = X W^T for X (tokens x
 * 768) and W (V x 768), at V = 50257 (GPT-2's vocabulary) and 50304
 * (64 x 786, nanoGPT's padding), over a short sweep of V, and its two
 * backward GEMMs at the pair:
 *   backward_data    dX = dY W     (tokens x 768, summed over V)
 *   backward_weight  dW = dY^T X   (V x 768, summed over the tokens)
 */
#include "exp04.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The least gain called "faster", however quiet the machine. */
static const double VOCAB_MIN_GAIN = 0.02;

static int by_value(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* Every step-th V from 64 x 785 to 64 x 787, and GPT-2's 50257 and the
 * padded size's neighbours 50303 and 50305; step 0: the pair alone. */
static int vocab_sizes(int *out, int step)
{
    int n = 0;
    for (int v = V_LO; step > 0 && v <= V_HI; v += step)
        out[n++] = v;
    const int pair[] = {V_GPT2, V_PADDED}, neighbours[] = {V_PADDED - 1, V_PADDED + 1};
    for (int i = 0; i < 4; i++) {
        int v = i < 2 ? pair[i] : neighbours[i - 2];
        bool have = false;
        for (int j = 0; j < n; j++)
            have |= out[j] == v;
        if (!have && (i < 2 || step > 0))
            out[n++] = v;
    }
    qsort(out, (size_t)n, sizeof *out, by_value);
    return n;
}

vocab_plan plan_vocab(run *r)
{
    rl_ctx *ctx = r->ctx;
    vocab_plan p = {0};
    if (!part_selected(r, "vocab") || (!variant_number(r, 1) && !variant_number(r, 2)))
        return p;
    bool gpu = ctx->kind == RL_CUDA, quick = ctx->args.mode == RL_MODE_QUICK;
    p.on = true;
    /* The CPU does a GPU's second of work in minutes: fewer tokens there;
     * a quick run measures the pair alone on the CPU, a lab run every 16th V. */
    p.tokens = gpu ? (quick ? 2048 : 8192) : (quick ? 32 : 64);
    p.count = vocab_sizes(p.sizes, quick ? (gpu ? 32 : 0) : ctx->args.mode == RL_MODE_LAB ? 16 : 4);
    rl_meta(ctx, "vocab",
            "GPT-2 small's output layer: tokens %d (%s), hidden %d; forward (C = X W^T) at V = "
            "%d..%d (%d sizes), forward and both backward GEMMs at V = %d and %d timed together",
            p.tokens, gpu ? "the GPU's size" : "fewer on the CPU than the GPU's 8192", HIDDEN,
            p.sizes[0], p.sizes[p.count - 1], p.count, V_GPT2, V_PADDED);
    return p;
}

void plan_vocab_time(rl_ctx *ctx, const vocab_plan *p, int variants)
{
    if (!p->on)
        return;
    for (int i = 0; i < p->count; i++) /* the pair and its backward GEMMs are one group */
        if (p->sizes[i] != V_GPT2 && p->sizes[i] != V_PADDED)
            rl_plan_group(ctx, variants,
                          rl_estimate_call_s(ctx, 0, 0, RL_READ, rl_gemm_flops(p->tokens, p->sizes[i], HIDDEN)));
    rl_plan_group(ctx, 6 * variants,
                  rl_estimate_call_s(ctx, 0, 0, RL_READ, rl_gemm_flops(p->tokens, V_PADDED, HIDDEN)));
}

/* The forward GEMM at V reads the first V rows of W and is checked against
 * the first V columns of the widest product. Backward GEMMs read the
 * first tokens x V values of dY (as tokens x V) and get a reference each. */
static void add_gemms(sweep *s, run *r, const gemm_variant *v, const vocab_plan *plan,
                      operand *x, operand *w, operand *dy, const double *ref)
{
    int t = plan->tokens, pair = sweep_new_group(s);
    for (int i = 0; i < plan->count; i++) {
        int vs = plan->sizes[i];
        point p = {.part = "vocab", .gemm = "forward", .v = v, .a = x, .b = w, .vocab = vs,
                   .ref = ref, .ref_ld = (size_t)plan->sizes[plan->count - 1],
                   .group = vs == V_GPT2 || vs == V_PADDED ? pair : 0};
        p.g = (gemm_args){.m = t, .n = vs, .k = HIDDEN, .trans_b = true};
        sweep_add(s, &p);
    }
    const int pair_sizes[] = {V_GPT2, V_PADDED};
    for (int i = 0; i < 2; i++) {
        int vs = pair_sizes[i];
        point d = {.part = "vocab", .gemm = "backward_data", .v = v, .a = dy, .b = w, .vocab = vs,
                   .group = pair};
        d.g = (gemm_args){.m = t, .n = HIDDEN, .k = vs};
        sweep_add(s, &d);
        point g = {.part = "vocab", .gemm = "backward_weight", .v = v, .a = dy, .b = x,
                   .vocab = vs, .group = pair};
        g.g = (gemm_args){.m = vs, .n = HIDDEN, .k = t, .trans_a = true};
        sweep_add(s, &g);
    }
    /* The own kernel's tiles, to show that 50257 and 50304 fill the same. */
    for (int i = 0; i < s->n; i++)
        if (s->pts[i].v == v && v->tile_m)
            point_set_waves(&s->pts[i], v->tile_m, v->tile_n, r->units, v->blocks_per_unit());
}

static const point *find(const sweep *s, const gemm_variant *v, const char *gemm, int vocab)
{
    for (int i = 0; i < s->n; i++)
        if (s->pts[i].v == v && s->pts[i].vocab == vocab && s->pts[i].ok &&
            !strcmp(s->pts[i].gemm, gemm))
            return &s->pts[i];
    return NULL;
}

static void set_speedups(sweep *s)
{
    for (int i = 0; i < s->n; i++) {
        point *p = &s->pts[i];
        const point *base = find(s, p->v, p->gemm, V_GPT2);
        if (base && p->ok)
            p->speedup = base->seconds / p->seconds;
    }
}

/* Time of the three GEMMs at vocab, or NaN when one is missing. */
static double step_time(const sweep *s, const gemm_variant *v, int vocab)
{
    const char *gemms[] = {"forward", "backward_data", "backward_weight"};
    double sum = 0;
    for (int i = 0; i < 3; i++) {
        const point *p = find(s, v, gemms[i], vocab);
        sum += p ? p->seconds : NAN;
    }
    return sum;
}

/* Relative spread of step_time: the three GEMMs' sample spreads (standard
 * deviations, not errors of the median: drift between rounds is larger than
 * those) added in quadrature. */
static double step_noise(const sweep *s, const gemm_variant *v, int vocab)
{
    const char *gemms[] = {"forward", "backward_data", "backward_weight"};
    double var = 0, sum = 0;
    for (int i = 0; i < 3; i++) {
        const point *p = find(s, v, gemms[i], vocab);
        if (!p)
            return NAN;
        double sd = p->m.stats.rel_stddev * p->seconds;
        var += sd * sd;
        sum += p->seconds;
    }
    return sqrt(var) / sum;
}

static double ratio_of(const sweep *s, const gemm_variant *v, const char *gemm)
{
    const point *a = find(s, v, gemm, V_GPT2), *b = find(s, v, gemm, V_PADDED);
    return a && b ? a->seconds / b->seconds : NAN;
}

static void judge_vocab(run *r, const sweep *s, const vocab_plan *plan)
{
    const gemm_variant *lib = variant_number(r, 2), *own = variant_number(r, 1);
    double ratio = lib ? step_time(s, lib, V_GPT2) / step_time(s, lib, V_PADDED) : NAN;
    double own_ratio = own ? step_time(s, own, V_GPT2) / step_time(s, own, V_PADDED) : NAN;
    /* "Faster" must mean faster than the two times scatter: twice the
     * ratio's spread, and never less than 2 %. */
    double noise = lib ? hypot(step_noise(s, lib, V_GPT2), step_noise(s, lib, V_PADDED)) : NAN;
    double bar = 1.0 + fmax(VOCAB_MIN_GAIN, 2 * noise);
    char measured[64], note[300];
    snprintf(measured, sizeof measured, isnan(ratio) ? "-" : "%.3fx", ratio);
    if (lib)
        snprintf(note, sizeof note,
                 "%s, %d tokens: fwd %.3fx, bwd data %.3fx, bwd weight %.3fx; own tiled %.3fx "
                 "(same tiles); bar %.3fx = 1 + max(%.0f %%, 2 x spread %.1f %%)%s",
                 lib->name, plan->tokens, ratio_of(s, lib, "forward"),
                 ratio_of(s, lib, "backward_data"), ratio_of(s, lib, "backward_weight"), own_ratio,
                 bar, 100 * VOCAB_MIN_GAIN, 100 * noise,
                 r->ctx->kind == RL_CPU
                     ? "; a CPU BLAS packs its operands: alignment should matter little"
                     : "");
    else
        snprintf(note, sizeof note, "variant 2 (the library) not selected; own tiled %.3fx",
                 own_ratio);
    rl_verdict(r->ctx, "vocab_padding", "V 50257 -> 50304: fwd+bwd time ratio",
               "> 1x beyond noise", measured, rl_within(ratio, bar, INFINITY), note);
}

void run_vocab(run *r, const vocab_plan *plan)
{
    if (!plan->on)
        return;
    rl_ctx *ctx = r->ctx;
    int t = plan->tokens, v_max = plan->sizes[plan->count - 1];
    printf("\nvocab: GPT-2 small's output layer, %d tokens x %d hidden, V = %d..%d\n", t, HIDDEN,
           plan->sizes[0], v_max);
    operand x = operand_new(ctx, (size_t)t * HIDDEN);
    operand w = operand_new(ctx, (size_t)v_max * HIDDEN);
    operand dy = operand_new(ctx, (size_t)t * v_max);
    double *ref = rl_host_alloc((size_t)t * v_max * sizeof(double));
    gemm_args widest = {.m = t, .n = v_max, .k = HIDDEN, .a = x.host, .b = w.host, .trans_b = true};
    gemm_reference(ref, &widest);

    sweep s;
    sweep_init(&s, ctx);
    for (int number = 1; number <= 2; number++)
        if (variant_number(r, number))
            add_gemms(&s, r, variant_number(r, number), plan, &x, &w, &dy, ref);
    sweep_run(&s);
    set_speedups(&s);
    sweep_report(&s, "vs 50257");
    judge_vocab(r, &s, plan);

    sweep_free(&s);
    operand_free(ctx, &x);
    operand_free(ctx, &w);
    operand_free(ctx, &dy);
    rl_host_free(ref);
}
