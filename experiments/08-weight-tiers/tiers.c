/*
 * tiers.c -- experiment 08's spill part: one decode GEMV whose last rows
 * live in a slower tier, at each fraction f of them, sequential and
 * overlapped, and the slow tier's own read at each f's size by each
 * variant's path (the copy; the overlapped variant's zero-copy loads or
 * queued reads), all timed in one group beside the fast tier's bandwidth
 * probe.
 */
#include "exp08.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The whole matrix lives in both tiers: a point at f reads its first
 * rows from the fast one and its last f x rows from the slow one. */
typedef struct spill_part {
    int rows, k, most_slow;
    fp16 *hw, *hx;   /* host: the drawn matrix and token */
    fp16 *w, *x;     /* the fast tier */
    fp16 *staging;   /* where the slow rows land (the most any f needs) */
    float *y;
    spill_tier tier; /* the slow tier */
    double *ref;     /* every row */
} spill_part;

static void open_spill(rl_ctx *ctx, void *state)
{
    spill_part *S = state;
    size_t n = (size_t)S->rows * S->k;
    S->hw = rl_host_random_f16(ctx, n, -1, 1);
    S->hx = rl_host_random_f16(ctx, (size_t)S->k, -1, 1);
    S->w = rl_alloc_copy(ctx->be, S->hw, n * sizeof(fp16));
    S->x = rl_alloc_copy(ctx->be, S->hx, (size_t)S->k * sizeof(fp16));
    S->staging = rl_alloc(ctx->be, (size_t)S->most_slow * S->k * sizeof(fp16) + 16);
    S->y = rl_alloc(ctx->be, (size_t)S->rows * sizeof(float));
    char why[512];
    rl_progress_note(ctx, "writing the slow tier");
    if (!spill_tier_open(&S->tier, rl_kernel_backend(ctx), exp08_spill_dir(), S->hw, n * sizeof(fp16),
                         why, sizeof why))
        rl_die(RL_EXIT_FAILED, "exp-08: the slow tier: %s", why);
    rl_meta(ctx, "spill_slow_tier", "%s", S->tier.where);
    S->ref = rl_host_alloc(sizeof(double) * (size_t)S->rows);
    gemv_reference(S->ref, S->hw, S->hx, S->rows, S->k, 1);
}

static void close_spill(rl_ctx *ctx, const rl_points *pts, void *state)
{
    (void)pts;
    spill_part *S = state;
    spill_tier_close(&S->tier);
    void *dev[] = {S->w, S->x, S->staging, S->y};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
        rl_free(ctx->be, dev[i]);
    rl_host_free(S->hw);
    rl_host_free(S->hx);
    rl_host_free(S->ref);
}

static int slow_rows_at(const spill_part *S, double f) { return 8 * (int)lround(f * S->rows / 8); }

static void bind(rl_ctx *ctx, exp08_call *c)
{
    spill_part *S = c->state;
    int slow = slow_rows_at(S, c->f);
    c->spill.args = (spill_args){S->y, S->w, S->x, &S->tier, S->staging, S->rows - slow, slow,
                                 S->rows - slow, S->k, rl_stream(ctx->be)};
}

static void prepare_gemv(rl_ctx *ctx, rl_point *p)
{
    exp08_call *c = RL_DATA_MUT(exp08_call, p);
    bind(ctx, c);
    p->out = ((spill_part *)c->state)->y;
    p->want = ((spill_part *)c->state)->ref;
}

/* A tier read's output is the slow rows in the fast tier (the copy's, or
 * the words the overlapped path read, stored there): they must be the
 * matrix's own, bit for bit. */
static bool check_copy(rl_ctx *ctx, rl_point *p)
{
    exp08_call *c = RL_DATA_MUT(exp08_call, p);
    spill_part *S = c->state;
    bind(ctx, c);
    const spill_args *a = &c->spill.args;
    size_t bytes = (size_t)a->slow_rows * a->k * sizeof(fp16);
    rl_poison(ctx->be, S->staging, bytes);
    spill_call_run(&c->spill);
    rl_sync(ctx->be);
    fp16 *got = rl_download_copy(ctx->be, S->staging, bytes);
    bool same = !memcmp(got, S->hw + (size_t)a->slow_first * a->k, bytes);
    rl_host_free(got);
    if (!same)
        snprintf(p->why, sizeof p->why, "the %d rows copied from the slow tier differ from the "
                 "matrix's", a->slow_rows);
    return same;
}

void exp08_declare_spill(rl_ctx *ctx, const exp08_sweep *s)
{
    spill_part *S = RL_NEW(ctx, spill_part);
    *S = (spill_part){.rows = s->spill_rows, .k = s->spill_k};
    for (const double *f = s->fractions; *f >= 0; f++) {
        int slow = slow_rows_at(S, *f);
        S->most_slow = slow > S->most_slow ? slow : S->most_slow;
    }
    rl_part_add(ctx, &(rl_part){.open = open_spill, .done = close_spill, .state = S,
                                .heading = "spill: a decode GEMV with f of its rows in the slow tier"});
    double matrix = 2.0 * S->rows * S->k;
    int group = rl_group_new(ctx);
    for (const double *f = s->fractions; *f >= 0; f++)
        for (const spill_variant *v = spill_variants; v->name; v++) {
            int slow = slow_rows_at(S, *f);
            if ((!v->gemv && !slow) || !rl_runs(ctx, &spill_family, KERNEL_VARIANT(v)))
                continue;
            exp08_call *c = RL_NEW(ctx, exp08_call);
            *c = (exp08_call){.kind = SPILL, .part = "spill", .routing = "", .f = *f, .rows = S->rows,
                        .k = S->k, .touched = NAN, .touched_model = NAN, .launches = NAN,
                        .validated = v->gemv ? S->rows : slow, .state = S,
                        .spill.launch = RL_LAUNCHER(ctx, v)};
            double bytes = spill_bytes(v, S->rows - slow, slow, S->k);
            rl_point p = {.variant = KERNEL_VARIANT(v), .group = group,
                          .call = spill_kernel_call(&c->spill), RL_POINT_DATA(c),
                          .flops = v->gemv ? gemv_flops(S->rows, S->k, 1) : 0, .bytes = bytes,
                          /* the fast tier holds the whole matrix; the probe beside them reads as much */
                          .footprint = matrix, .pattern = RL_READ,
                          /* the verdicts read f = 0 and 0.1 */
                          .optional = *f != 0 && fabs(*f - 0.1) > 1e-9};
            if (v->gemv) {
                p.prepare = prepare_gemv;
                p.count = (size_t)S->rows;
                p.atol = gemv_atol(S->k);
            } else {
                p.check = check_copy;
            }
            rl_point_add(ctx, &p);
        }
}

/* ---- what the columns and verdicts read ------------------------------------- */

/* t0, the all-fast GEMV: at f = 0 both variants run the same code (no
 * slow rows); the faster of the two is the best estimate of its time. */
static const rl_point *all_fast(const rl_points *all)
{
    const rl_point *a = exp08_find(all, SPILL, "sequential", 0, 0, 0, NULL),
                   *b = exp08_find(all, SPILL, "overlapped", 0, 0, 0, NULL);
    return !a ? b : !b ? a : b->seconds < a->seconds ? b : a;
}

double exp08_spill_t0_gbps(const rl_points *all)
{
    const rl_point *t0 = all_fast(all);
    return t0 ? rl_point_gbps(t0) : NAN;
}

static double r_by(const rl_points *all, double f, const char *tier_role)
{
    const rl_point *tier = exp08_find(all, SPILL, tier_role, f, 0, 0, NULL);
    return tier ? exp08_spill_t0_gbps(all) / rl_point_gbps(tier) : NAN;
}

double exp08_spill_r(const rl_points *all, double f) { return r_by(all, f, "slow_tier"); }

double exp08_spill_r_overlapped(const rl_points *all, double f)
{
    return r_by(all, f, "slow_tier_overlapped");
}

double exp08_spill_r_of(const rl_points *all, const rl_point *p)
{
    const exp08_call *c = RL_DATA(exp08_call, p);
    if (c->kind != SPILL || !(c->f > 0))
        return NAN;
    bool own = rl_point_has_role(p, "overlapped") || rl_point_has_role(p, "slow_tier_overlapped");
    return own ? exp08_spill_r_overlapped(all, c->f) : exp08_spill_r(all, c->f);
}

double exp08_t_over_t0(const rl_points *all, const rl_point *p)
{
    const rl_point *t0 = all_fast(all);
    if (RL_DATA(exp08_call, p)->kind != SPILL || !rl_point_timed(p) || !p->variant || !t0 ||
        !((const spill_variant *)p->variant)->gemv)
        return NAN;
    return p->seconds / t0->seconds;
}
