/*
 * judge.c -- experiment 09's verdicts, one configuration at a time, at its
 * judged shape, and the tables that go with them: the shares of FLOPs,
 * bytes and time by class, unfused and fused, beside the published ones;
 * the bytes each fusion removes and the time it saves.
 *
 * A shape's points were timed as one group, round by round, so every
 * share and every saving here is taken per round (the steps of one round
 * saw the same minute of the machine) and judged on the rounds' median
 * and quartiles.
 */
#include "exp09.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct program_points {
    const rl_point *step[EXP09_MAX_STEPS];
    const rl_point *whole;
    const exp09_program *P;
} program_points;

typedef struct config_points {
    program_points unfused, fused;
    const exp09_layer *L;
} config_points;

static config_points collect(const rl_points *all, const char *config)
{
    config_points cp = {0};
    for (int i = 0; i < all->n; i++) {
        const rl_point *p = &all->v[i];
        const exp09_call *c = RL_DATA(exp09_call, p);
        if (!c->judged || strcmp(c->config, config) || c->P == &c->L->backward)
            continue;
        program_points *pp = c->P == &c->L->fused ? &cp.fused : &cp.unfused;
        pp->P = c->P;
        cp.L = c->L;
        if (c->index < 0)
            pp->whole = p;
        else
            pp->step[c->index] = p;
    }
    return cp;
}

/* ---- per round ------------------------------------------------------------------------ */

enum { MAX_ROUNDS = 1 << 16 };

/* The rounds every point of a program (its steps and the whole) was
 * timed in together; 0 where one was not timed, or they were timed apart. */
static int rounds_of(const program_points *pp)
{
    if (!pp->P || !pp->whole || !rl_point_timed(pp->whole))
        return 0;
    int rounds = pp->whole->rounds, timing = pp->whole->timing;
    for (int i = 0; i < pp->P->n; i++) {
        const rl_point *p = pp->step[i];
        if (!p || !rl_point_timed(p) || p->timing != timing || p->rounds != rounds || !p->round_s)
            return 0;
    }
    return rounds > 0 && pp->whole->round_s ? rounds : 0;
}

static bool in_classes(const exp09_step *s, unsigned classes) { return (classes >> s->v->cls) & 1u; }

#define CHEAP ((1u << LAYER_NORMALIZATION) | (1u << LAYER_ELEMENTWISE))
#define ALL ((1u << LAYER_CLASSES) - 1)

/* out[k]: the time of the steps of these classes in round k. */
static void class_rounds(const program_points *pp, unsigned classes, int rounds, double *out)
{
    for (int k = 0; k < rounds; k++) {
        out[k] = 0;
        for (int i = 0; i < pp->P->n; i++)
            if (in_classes(&pp->P->s[i], classes))
                out[k] += pp->step[i]->round_s[k];
    }
}

/* A fraction of two class sums, round by round; none where unpaired. */
static rl_ratio class_share(const program_points *pp, unsigned num, unsigned den)
{
    int n = rounds_of(pp);
    if (!n)
        return RL_RATIO_NONE;
    static double a[MAX_ROUNDS], b[MAX_ROUNDS];
    n = n < MAX_ROUNDS ? n : MAX_ROUNDS;
    class_rounds(pp, num, n, a);
    class_rounds(pp, den, n, b);
    return rl_round_ratio(a, b, n);
}

/* ---- counts and models ------------------------------------------------------------------ */

static double class_sum(const program_points *pp, unsigned classes, double (*of)(const rl_point *))
{
    double s = 0;
    for (int i = 0; pp->P && i < pp->P->n; i++)
        if (in_classes(&pp->P->s[i], classes) && pp->step[i])
            s += of(pp->step[i]);
    return s;
}

static double flops_of(const rl_point *p) { return p->flops; }
static double bytes_of(const rl_point *p) { return p->bytes; }
static double seconds_of(const rl_point *p) { return rl_point_timed(p) ? p->seconds : NAN; }

/* ---- the verdicts ------------------------------------------------------------------------- */

static void judge_flops(rl_ctx *ctx, const rl_claim *c, const char *config, const program_points *u)
{
    double share = class_sum(u, CHEAP, flops_of) / class_sum(u, ALL, flops_of);
    char note[200];
    snprintf(note, sizeof note, "%.3g of %.3g GFLOP in normalization and element-wise steps",
             class_sum(u, CHEAP, flops_of) / 1e9, class_sum(u, ALL, flops_of) / 1e9);
    rl_judge(ctx, c, config, 100 * share, note);
}

/* The ridge where the cheap steps run: the compute probe over the
 * bandwidth roof their bytes see, each step at the probe of its own
 * working set (a cache's, where it fits one), FLOP/B. */
static double ridge_beside(rl_ctx *ctx, const program_points *u)
{
    double bytes = 0, seconds = 0, tflops = NAN;
    for (int i = 0; i < u->P->n; i++) {
        const rl_point *p = u->step[i];
        if (!p || !in_classes(&u->P->s[i], CHEAP))
            continue;
        bytes += p->bytes;
        seconds += p->bytes / (rl_point_roof_gbps(ctx, p) * 1e9);
        tflops = p->roof.tflops;
    }
    return tflops * 1e12 / (bytes / seconds);
}

/* The claim presumes the cheap steps' intensity far under the ridge:
 * at most a tenth of it. Then, with the products at half the compute
 * roof or more, the cheap steps' time share is at least 10 x 0.5 = 5x
 * their FLOP share (README). */
static const double RIDGE_OVER_CHEAP_AI = 10;

static void judge_time_over_flops(rl_ctx *ctx, const rl_claim *c, const char *config,
                                  const program_points *u)
{
    double flop_share = class_sum(u, CHEAP, flops_of) / class_sum(u, ALL, flops_of);
    double cheap_ai = class_sum(u, CHEAP, flops_of) / class_sum(u, CHEAP, bytes_of);
    double ridge = ridge_beside(ctx, u);
    rl_ratio time_share = class_share(u, CHEAP, ALL);
    char note[300];
    snprintf(note, sizeof note, "their share of the time %.1f %% (per round, its median), of the "
             "FLOPs %.3f %%; their intensity %.2f FLOP/B, the ridge beside them %.1f",
             100 * time_share.median, 100 * flop_share, cheap_ai, ridge);
    rl_premise pr = rl_premise_start();
    if (!isfinite(ridge))
        rl_premise_not_known(&pr, false, "the ridge beside the cheap steps was not measured");
    else if (ridge < RIDGE_OVER_CHEAP_AI * cheap_ai) {
        pr.met = false;
        snprintf(pr.why, sizeof pr.why, "the cheap steps' intensity, %.2f FLOP/B, is not under a "
                 "tenth of the ridge measured beside them (%.1f FLOP/B): on this machine they are "
                 "not far from compute-bound, so their share of the time need not be far above "
                 "their share of the FLOPs", cheap_ai, ridge);
    }
    rl_judge_ratio_given(ctx, c, config, rl_ratio_scaled(time_share, 1 / flop_share), &pr, note);
}

/* The share the model predicts, round by round: the cheap steps at their
 * bytes over the roof beside each (constant), the products at their own
 * measured time in that round (the claim is on the cheap steps' time,
 * not on how close the products come to the compute roof). */
static rl_ratio share_over_model(rl_ctx *ctx, const program_points *u, double *model_cheap_s)
{
    int n = rounds_of(u);
    *model_cheap_s = 0;
    for (int i = 0; i < u->P->n; i++)
        if (in_classes(&u->P->s[i], CHEAP) && u->step[i])
            *model_cheap_s += u->step[i]->bytes / (rl_point_roof_gbps(ctx, u->step[i]) * 1e9);
    if (!n)
        return RL_RATIO_NONE;
    static double cheap[MAX_ROUNDS], products[MAX_ROUNDS], measured[MAX_ROUNDS], model[MAX_ROUNDS];
    n = n < MAX_ROUNDS ? n : MAX_ROUNDS;
    class_rounds(u, CHEAP, n, cheap);
    class_rounds(u, 1u << LAYER_CONTRACTION, n, products);
    for (int k = 0; k < n; k++) {
        measured[k] = cheap[k] / (cheap[k] + products[k]);
        model[k] = *model_cheap_s / (*model_cheap_s + products[k]);
    }
    return rl_round_ratio(measured, model, n);
}

static void judge_time_model(rl_ctx *ctx, const rl_claim *c, const char *config,
                             const program_points *u)
{
    rl_premise pr = rl_premise_start();
    for (int i = 0; i < u->P->n; i++)
        if (in_classes(&u->P->s[i], CHEAP) && u->step[i])
            rl_premise_at_memory_roof(ctx, &pr, c, u->step[i], u->P->s[i].name);
    double model_s;
    rl_ratio r = share_over_model(ctx, u, &model_s);
    char note[300];
    snprintf(note, sizeof note, "measured %.1f %% of the time; the cheap steps' %.1f MiB at the "
             "roofs beside them take %.0f us, against %.0f us measured (medians)",
             100 * class_share(u, CHEAP, ALL).median, class_sum(u, CHEAP, bytes_of) / 1048576,
             model_s * 1e6, class_sum(u, CHEAP, seconds_of) * 1e6);
    rl_judge_ratio_given(ctx, c, config, r, &pr, note);
}

static void judge_steps_add_up(rl_ctx *ctx, const rl_claim *c, const char *config,
                               const program_points *u)
{
    int n = rounds_of(u);
    rl_ratio r = RL_RATIO_NONE;
    static double sum[MAX_ROUNDS];
    if (n) {
        n = n < MAX_ROUNDS ? n : MAX_ROUNDS;
        class_rounds(u, ALL, n, sum);
        r = rl_round_ratio(sum, u->whole->round_s, n);
    }
    char note[200] = "not measured";
    if (n)
        snprintf(note, sizeof note, "%d steps: %.0f us summed, the layer %.0f us", u->P->n,
                 class_sum(u, ALL, seconds_of) * 1e6, u->whole->seconds * 1e6);
    rl_premise pr = rl_premise_start();
    rl_judge_ratio_given(ctx, c, config, r, &pr, note);
}

/* What one fusion saves: the bytes (counted), the time those bytes take
 * at the bandwidth roof measured beside the fused step, and the time it
 * saved (measured: the replaced steps' medians less its own). */
typedef struct fusion_saving {
    double bytes, predicted_s, measured_s, replaced_s;
} fusion_saving;

static fusion_saving saving_of(rl_ctx *ctx, const config_points *cp, int f)
{
    const exp09_step *s = &cp->fused.P->s[f];
    const rl_point *fp = cp->fused.step[f];
    fusion_saving none = {NAN, NAN, NAN, NAN}, sv = {0};
    if (!fp)
        return none;
    sv.bytes = -fp->bytes;
    for (int k = 0; k < s->nreplaces; k++) {
        const rl_point *u = cp->unfused.step[s->replaces[k]];
        if (!u)
            return none;
        sv.bytes += u->bytes;
        sv.replaced_s += seconds_of(u);
    }
    sv.predicted_s = sv.bytes / (rl_point_roof_gbps(ctx, fp) * 1e9);
    sv.measured_s = sv.replaced_s - seconds_of(fp);
    return sv;
}

static void judge_fused(rl_ctx *ctx, const rl_claim *c, const char *config, const config_points *cp)
{
    const program_points *u = &cp->unfused, *f = &cp->fused;
    rl_premise pr = rl_premise_start();
    double predicted = 0;
    for (int i = 0; i < f->P->n; i++) {
        fusion_saving sv = saving_of(ctx, cp, i);
        predicted += sv.predicted_s;
        char what[96];
        snprintf(what, sizeof what, "the fused step %s", f->P->s[i].name);
        if (f->step[i] && f->P->s[i].v->fused) /* a step the fused layer runs as it was: no fusion */
            rl_premise_hides_under_to_fail(&pr, seconds_of(f->step[i]), what, sv.replaced_s,
                                           "the unfused steps it replaces", 1.0,
                                           "the fused kernel is slower than the steps it replaces, "
                                           "so a failure would be that kernel's, not the bytes'");
    }
    int n = rounds_of(u) && rounds_of(f) && u->whole->timing == f->whole->timing ? u->whole->rounds : 0;
    rl_ratio r = RL_RATIO_NONE;
    if (n) {
        static double saved[MAX_ROUNDS], model[MAX_ROUNDS];
        n = n < MAX_ROUNDS ? n : MAX_ROUNDS;
        for (int k = 0; k < n; k++)
            saved[k] = u->whole->round_s[k] - f->whole->round_s[k], model[k] = predicted;
        r = rl_round_ratio(saved, model, n);
    }
    char note[300] = "not measured";
    if (n)
        snprintf(note, sizeof note, "the layer %.0f us unfused, %.0f us fused; the %.1f MiB removed "
                 "at the roofs beside the fused steps take %.0f us", u->whole->seconds * 1e6,
                 f->whole->seconds * 1e6,
                 (exp09_program_bytes(u->P, rl_kernel_backend(ctx)) -
                  exp09_program_bytes(f->P, rl_kernel_backend(ctx))) / 1048576, predicted * 1e6);
    rl_judge_ratio_given(ctx, c, config, r, &pr, note);
}

/* ---- the tables ------------------------------------------------------------------------------ */

/* Ivanov et al. 2020, Table 1 (BERT-large, training, forward and
 * backward, PyTorch on a V100): % of FLOPs and % of runtime by class. */
static const double PUBLISHED_FLOPS[LAYER_CLASSES] = {99.80, 0.17, 0.03};
static const double PUBLISHED_TIME[LAYER_CLASSES] = {61.0, 25.5, 13.5};

static void print_shares(const char *config, const config_points *cp)
{
    static const rl_grid_column COLS[] = {
        {"layer", "%-30s"}, {"class", "%-13s"}, {"FLOPs %", "%9.2f"}, {"bytes %", "%8.1f"},
        {"time %", "%7.1f"}, {0}};
    printf("\n%s, batch %d x %d: shares by class (time: the medians of the steps' times)\n", config,
           cp->L->batch, cp->L->seq);
    rl_grid_header(COLS);
    const program_points *pp[2] = {&cp->unfused, &cp->fused};
    for (int k = 0; k < 2; k++) {
        double flops = class_sum(pp[k], ALL, flops_of), bytes = class_sum(pp[k], ALL, bytes_of),
               time = class_sum(pp[k], ALL, seconds_of);
        for (int c = 0; c < LAYER_CLASSES; c++)
            rl_grid_row(COLS, pp[k]->P->name, layer_class_name((layer_class)c),
                        100 * class_sum(pp[k], 1u << c, flops_of) / flops,
                        100 * class_sum(pp[k], 1u << c, bytes_of) / bytes,
                        100 * class_sum(pp[k], 1u << c, seconds_of) / time);
    }
    for (int c = 0; c < LAYER_CLASSES; c++)
        rl_grid_row(COLS, "published (V100, training)", layer_class_name((layer_class)c),
                    PUBLISHED_FLOPS[c], NAN, PUBLISHED_TIME[c]);
}

static void print_fusions(rl_ctx *ctx, const config_points *cp)
{
    static const rl_grid_column COLS[] = {
        {"fused step", "%-28s"}, {"replaces", "%3d"}, {"MiB saved", "%10.2f"},
        {"us predicted", "%13.0f"}, {"us saved", "%9.0f"}, {0}};
    printf("\nwhat each fusion removes (bytes, counted) and saves (time: the replaced steps' "
           "medians less its own)\n");
    rl_grid_header(COLS);
    for (int i = 0; i < cp->fused.P->n; i++) {
        fusion_saving sv = saving_of(ctx, cp, i);
        rl_grid_row(COLS, cp->fused.P->s[i].name, cp->fused.P->s[i].nreplaces, sv.bytes / 1048576,
                    sv.predicted_s * 1e6, sv.measured_s * 1e6);
    }
}

void exp09_judge_config(rl_ctx *ctx, const rl_points *all, const rl_claim *claims,
                        const exp09_config *cfg)
{
    const char *config = cfg->scope;
    config_points cp = collect(all, cfg->name);
    if (!cp.L || !cp.unfused.P || !cp.fused.P) {
        for (int c = CHEAP_FLOPS; c <= FUSED_SAVING; c++)
            rl_judge(ctx, &claims[c], config, NAN, "its shape was not run (--max-bytes, or a "
                     "backend without the steps)");
        return;
    }
    judge_flops(ctx, &claims[CHEAP_FLOPS], config, &cp.unfused);
    judge_time_over_flops(ctx, &claims[CHEAP_TIME_OVER_FLOPS], config, &cp.unfused);
    judge_time_model(ctx, &claims[CHEAP_TIME_MODEL], config, &cp.unfused);
    judge_steps_add_up(ctx, &claims[STEPS_ADD_UP], config, &cp.unfused);
    judge_fused(ctx, &claims[FUSED_SAVING], config, &cp);
    print_shares(cfg->name, &cp);
    print_fusions(ctx, &cp);
}

/* ---- training: the forward pass and the backward pass ---------------------------------------- */

/* The backward pass's points and those of the unfused forward pass of the
 * same layer (the shape of most tokens that has one), as one program: the
 * training step's steps. */
typedef struct training_points {
    exp09_program joined;
    program_points pp;
    const exp09_layer *L;
} training_points;

static const exp09_layer *backward_layer(const rl_points *all, const char *config)
{
    const exp09_layer *L = NULL;
    for (int i = 0; i < all->n; i++) {
        const exp09_call *c = RL_DATA(exp09_call, &all->v[i]);
        if (!strcmp(c->config, config) && c->P == &c->L->backward &&
            (!L || c->L->batch * c->L->seq > L->batch * L->seq))
            L = c->L;
    }
    return L;
}

static bool collect_training(const rl_points *all, const char *config, training_points *t)
{
    const exp09_layer *L = backward_layer(all, config);
    if (!L || L->unfused.n + L->backward.n > EXP09_MAX_STEPS)
        return false;
    *t = (training_points){.L = L};
    t->joined.name = "forward+backward";
    for (int i = 0; i < L->unfused.n; i++)
        t->joined.s[t->joined.n++] = L->unfused.s[i];
    for (int i = 0; i < L->backward.n; i++)
        t->joined.s[t->joined.n++] = L->backward.s[i];
    t->pp.P = &t->joined;
    for (int i = 0; i < all->n; i++) {
        const rl_point *p = &all->v[i];
        const exp09_call *c = RL_DATA(exp09_call, p);
        if (c->L != L || (c->P != &L->unfused && c->P != &L->backward))
            continue;
        bool back = c->P == &L->backward;
        if (c->index >= 0)
            t->pp.step[c->index + (back ? L->unfused.n : 0)] = p;
        else if (back) /* the rounds' reference: forward and backward share the group's */
            t->pp.whole = p;
    }
    return true;
}

static void print_training_shares(const char *config, const training_points *t)
{
    static const rl_grid_column COLS[] = {
        {"layer", "%-30s"}, {"class", "%-13s"}, {"FLOPs %", "%9.2f"}, {"bytes %", "%8.1f"},
        {"time %", "%7.1f"}, {0}};
    const program_points *pp = &t->pp;
    printf("\n%s, batch %d x %d, training (the unfused forward pass and the backward pass): "
           "shares by class\n", config, t->L->batch, t->L->seq);
    rl_grid_header(COLS);
    double flops = class_sum(pp, ALL, flops_of), bytes = class_sum(pp, ALL, bytes_of),
           time = class_sum(pp, ALL, seconds_of);
    for (int c = 0; c < LAYER_CLASSES; c++)
        rl_grid_row(COLS, "forward+backward", layer_class_name((layer_class)c),
                    100 * class_sum(pp, 1u << c, flops_of) / flops,
                    100 * class_sum(pp, 1u << c, bytes_of) / bytes,
                    100 * class_sum(pp, 1u << c, seconds_of) / time);
    for (int c = 0; c < LAYER_CLASSES; c++)
        rl_grid_row(COLS, "published (V100, training)", layer_class_name((layer_class)c),
                    PUBLISHED_FLOPS[c], NAN, PUBLISHED_TIME[c]);
}

void exp09_judge_training(rl_ctx *ctx, const rl_points *all, const rl_claim *claim,
                          const exp09_config *cfg)
{
    static training_points t; /* 48 steps and their points: kept off the stack */
    if (!collect_training(all, cfg->name, &t)) {
        rl_judge(ctx, claim, cfg->scope, NAN, "the backward pass runs on the full sweep (--full) "
                 "and the quick run, not the lab run");
        return;
    }
    judge_time_model(ctx, claim, cfg->scope, &t.pp);
    print_training_shares(cfg->name, &t);
}

/* ---- a column ----------------------------------------------------------------------------------- */

double exp09_col_share(rl_ctx *ctx, const rl_point *p)
{
    const exp09_call *c = RL_DATA(exp09_call, p);
    if (c->index < 0 || !rl_point_timed(p))
        return NAN;
    const rl_points *all = rl_points_all(ctx);
    double sum = 0;
    for (int i = 0; i < all->n; i++) {
        const exp09_call *d = RL_DATA(exp09_call, &all->v[i]);
        if (d->P == c->P && d->index >= 0)
            sum += seconds_of(&all->v[i]);
    }
    return p->seconds / sum;
}
