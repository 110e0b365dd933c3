/*
 * tiers.c -- experiment 08's spill chapter: one decode GEMV whose last
 * rows live in a slower tier, at a fraction f of them, sequential and
 * overlapped, and the slow tier's own read at f's size by each variant's
 * path (the copy; the overlapped variant's zero-copy loads or queued
 * reads), all timed in one group beside the fast tier's bandwidth probe;
 * what the columns and verdicts read of them: t0, r, t/t0; and the two
 * spill verdicts (exp08_judge_spill).
 */
#include "exp08.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- where the CPU's slow tier lives ------------------------------------------ */

/* --spill-dir, or "": the first of /var/tmp, $TMPDIR and /tmp that is a
 * writable folder on a disk (/tmp is memory on many systems). */
const char *exp08_spill_dir_option = "";
static char spill_why[600];

const char *exp08_spill_dir(void) { return exp08_spill_dir_option[0] ? exp08_spill_dir_option : NULL; }
const char *exp08_spill_why(void) { return spill_why; }

void exp08_spill_choose_dir(void)
{
    char why[256];
    if (exp08_spill_dir_option[0]) {
        if (!spill_dir_usable(exp08_spill_dir_option, why, sizeof why))
            rl_die(RL_EXIT_USAGE, "exp-08: --spill-dir: %s", why);
        return;
    }
    const char *tmpdir = getenv("TMPDIR");
    const char *candidates[] = {"/var/tmp", tmpdir && tmpdir[0] ? tmpdir : "/tmp", "/tmp"};
    snprintf(spill_why, sizeof spill_why,
             "no folder on a disk for the slow tier's file (--spill-dir DIR):");
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        if (spill_dir_usable(candidates[i], why, sizeof why)) {
            exp08_spill_dir_option = candidates[i];
            return;
        }
        rl_appendf(spill_why, sizeof spill_why, " %s", why);
    }
}

/* ---- the part and its points ------------------------------------------------- */

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

/* The part of a rows x k matrix; its staging holds the largest f's slow rows. */
struct spill_part *exp08_spill_part(rl_ctx *ctx, rl_part *part, int rows, int k, double most_f)
{
    spill_part *S = RL_NEW(ctx, spill_part);
    *S = (spill_part){.rows = rows, .k = k};
    S->most_slow = slow_rows_at(S, most_f);
    *part = (rl_part){.open = open_spill, .done = close_spill, .state = S,
                      .heading = "spill: a decode GEMV with f of its rows in the slow tier"};
    return S;
}

/* Every variant at f: the GEMVs, and the tier reads where f has slow rows. */
void exp08_spill_points(rl_ctx *ctx, spill_part *S, double f, int group, bool optional)
{
    int slow = slow_rows_at(S, f);
    for (const spill_variant *v = spill_variants; v->name; v++) {
        if ((!v->gemv && !slow) || !rl_runs(ctx, &spill_family, KERNEL_VARIANT(v)))
            continue;
        exp08_call *c = RL_NEW(ctx, exp08_call);
        *c = (exp08_call){.kind = SPILL, .part = "spill", .routing = "", .f = f, .rows = S->rows,
                          .k = S->k, .touched = NAN, .touched_model = NAN, .launches = NAN,
                          .validated = v->gemv ? S->rows : slow, .state = S,
                          .spill.launch = RL_LAUNCHER(ctx, v)};
        rl_point p = {.variant = KERNEL_VARIANT(v), .group = group,
                      .call = spill_kernel_call(&c->spill), RL_POINT_DATA(c),
                      .flops = v->gemv ? gemv_flops(S->rows, S->k, 1) : 0,
                      .bytes = spill_bytes(v, S->rows - slow, slow, S->k),
                      /* the fast tier holds the whole matrix; the probe beside them reads as much */
                      .footprint = 2.0 * S->rows * S->k, .pattern = RL_READ, .optional = optional};
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

static bool at_fraction(const rl_point *p, const void *f)
{
    const exp08_call *c = RL_DATA(exp08_call, p);
    return c->kind == SPILL && fabs(c->f - *(const double *)f) < 1e-9;
}

const rl_point *exp08_spill_find(const rl_points *all, const char *role, double f)
{
    return rl_points_find(all, role, at_fraction, &f);
}

/* t0, the all-fast GEMV of the same variant: its own point at f = 0.
 * At f = 0 both variants read every row from the fast tier, yet each
 * through its own code (its own calls and schedule around the GEMV),
 * and they need not take the same time: a variant's slowdown t/t0 and
 * its model (1 - f) + f r, or max(1 - f, f r), are each relative to its
 * own all-fast time, so t0 (and the fast tier's rate in its r) is the
 * variant's own, not the faster of the two, which would charge one
 * variant's all-fast cost to the other's spill. */
static bool is_spill_gemv(const rl_point *p)
{
    return RL_DATA(exp08_call, p)->kind == SPILL && p->variant &&
           ((const spill_variant *)p->variant)->gemv;
}

static bool same_variant_all_fast(const rl_point *p, const void *variant)
{
    return p->variant == variant && at_fraction(p, &(double){0});
}

const rl_point *exp08_spill_t0(const rl_points *all, const char *role)
{
    return exp08_spill_find(all, role, 0); /* only the GEMVs have a point at f = 0 */
}

/* The point p's t0: its variant's point at f = 0. */
static const rl_point *own_t0(const rl_points *all, const rl_point *p)
{
    return rl_points_find(all, NULL, same_variant_all_fast, p->variant);
}

double exp08_spill_t0_gbps(const rl_points *all, const char *role)
{
    const rl_point *t0 = exp08_spill_t0(all, role);
    return t0 ? rl_point_gbps(t0) : NAN;
}

/* r on one variant's path: its own t0's rate over its slow tier's read. */
static double r_by(const rl_points *all, double f, const char *gemv_role, const char *tier_role)
{
    const rl_point *tier = exp08_spill_find(all, tier_role, f);
    return tier ? exp08_spill_t0_gbps(all, gemv_role) / rl_point_gbps(tier) : NAN;
}

double exp08_spill_r(const rl_points *all, double f)
{
    return r_by(all, f, "sequential", "slow_tier");
}

double exp08_spill_r_overlapped(const rl_points *all, double f)
{
    return r_by(all, f, "overlapped", "slow_tier_overlapped");
}

rl_ratio exp08_t_over_t0_ratio(const rl_points *all, const rl_point *p)
{
    if (!is_spill_gemv(p) || !rl_point_timed(p))
        return RL_RATIO_NONE;
    return rl_time_ratio(p, own_t0(all, p));
}

double exp08_t_over_t0(const rl_points *all, const rl_point *p)
{
    return exp08_t_over_t0_ratio(all, p).median;
}

double exp08_col_r(rl_ctx *ctx, const rl_point *p)
{
    const exp08_call *c = RL_DATA(exp08_call, p);
    if (c->kind != SPILL || !(c->f > 0))
        return NAN;
    bool own = rl_point_has_role(p, "overlapped") || rl_point_has_role(p, "slow_tier_overlapped");
    const rl_points *all = rl_points_all(ctx);
    return own ? exp08_spill_r_overlapped(all, c->f) : exp08_spill_r(all, c->f);
}

double exp08_col_model_sequential(rl_ctx *ctx, const rl_point *p)
{
    const exp08_call *c = RL_DATA(exp08_call, p);
    return !is_spill_gemv(p) ? NAN : c->f == 0 ? 1 : rl_spill_slowdown_sequential(c->f, exp08_col_r(ctx, p));
}

double exp08_col_model_overlapped(rl_ctx *ctx, const rl_point *p)
{
    const exp08_call *c = RL_DATA(exp08_call, p);
    return !is_spill_gemv(p) ? NAN : c->f == 0 ? 1 : rl_spill_slowdown_overlapped(c->f, exp08_col_r(ctx, p));
}

/* ---- the spill verdicts ---------------------------------------------------------- */

/* The slow tier must be slower for the models to say anything; when the
 * file came from memory (a host that caches the disk in RAM, tmpfs) it
 * is not. */
static void tier_premise(rl_premise *pr, double r)
{
    if (pr->met && !(r >= 2)) {
        pr->met = false;
        snprintf(pr->why, sizeof pr->why, "the slow tier read only %.2fx slower than the fast one "
                 "(r < 2): its reads came from memory, not from a slower tier", r);
    }
}

/* How each backend's overlapped variant reads the slow tier, for the notes. */
static const char *overlapped_path(const rl_ctx *ctx)
{
    return ctx->kind == RL_CUDA ? "zero-copy SM loads through the mapping"
                                : "every chunk's O_DIRECT read queued at once";
}

/* A ratio and its spread on another scale: (r - from) / per, ends kept
 * in order (per > 0). */
static rl_ratio rescaled(rl_ratio r, double from, double per)
{
    return (rl_ratio){(r.median - from) / per, (r.lo - from) / per, (r.hi - from) / per};
}

/* A variant's t/t0 compares its f point with its own f = 0 point, and
 * the part times them in one group, round by round: the premise. */
static void t0_premise(rl_premise *pr, const rl_points *all, const rl_point *p, const char *role)
{
    char what[96];
    snprintf(what, sizeof what, "%s at f = 0.1 and its t0 (f = 0)", role);
    rl_premise_same_group(pr, p, exp08_spill_t0(all, role), what);
}

/* Sequential t/t0 at f = 0.1 over its model, with the copy's r; t0 and
 * the fast tier's rate in r are the sequential variant's own (f = 0). */
static void judge_sequential(rl_ctx *ctx, const rl_points *all, const rl_claim *seq_claim,
                             double f)
{
    const rl_point *seq = exp08_spill_find(all, "sequential", f),
                   *tier = exp08_spill_find(all, "slow_tier", f);
    double r = exp08_spill_r(all, f), ms = rl_spill_slowdown_sequential(f, r);
    rl_ratio ts = seq ? exp08_t_over_t0_ratio(all, seq) : RL_RATIO_NONE;
    char note[500];
    snprintf(note, sizeof note, "r = %.2f, the copy's (the fast tier %.1f GB/s, the sequential GEMV "
             "at f = 0, its t0; the overlapped one's %.1f GB/s; the slow tier %.2f GB/s by %s, "
             "f = 0.1's rows); sequential t/t0 %.2f against %.2f", r,
             exp08_spill_t0_gbps(all, "sequential"), exp08_spill_t0_gbps(all, "overlapped"),
             tier ? rl_point_gbps(tier) : NAN,
             ctx->kind == RL_CUDA ? "cudaMemcpyAsync" : "pread, O_DIRECT", ts.median, ms);
    rl_premise pr = rl_premise_start();
    tier_premise(&pr, r);
    t0_premise(&pr, all, seq, "sequential");
    rl_judge_ratio_given(ctx, seq_claim, NULL, rescaled(ts, 0, ms), &pr, note);
}

/* The overlapped variant against the r of its own path: a copy engine
 * and SM loads (or one pread and many queued reads) need not cross the
 * same link at the same rate, and the scale from its model to the
 * sequential one is what overlapping buys on that path. */
static void judge_overlapped(rl_ctx *ctx, const rl_points *all, const rl_claim *ovl_claim,
                             double f)
{
    const rl_point *ovl = exp08_spill_find(all, "overlapped", f),
                   *own = exp08_spill_find(all, "slow_tier_overlapped", f);
    rl_ratio to = ovl ? exp08_t_over_t0_ratio(all, ovl) : RL_RATIO_NONE;
    double ro = exp08_spill_r_overlapped(all, f);
    double mo = rl_spill_slowdown_overlapped(f, ro), mso = rl_spill_slowdown_sequential(f, ro);
    char note[500];
    snprintf(note, sizeof note, "overlapped t/t0 %.2f; its model %.2f, the sequential %.2f, both with "
             "r = %.2f, its own path's (%s: %.2f GB/s; the copy's r = %.2f); t0 its own, at f = 0",
             to.median, mo, mso, ro,
             overlapped_path(ctx), own ? rl_point_gbps(own) : NAN, exp08_spill_r(all, f));
    rl_premise pr = rl_premise_start();
    tier_premise(&pr, ro);
    if (pr.met && !(mso > 1.1 * mo)) {
        pr.met = false;
        snprintf(pr.why, sizeof pr.why, "the two models differ by under 10 %% at r = %.2f (%.2f and "
                 "%.2f): no measurement can tell them apart", ro, mo, mso);
    }
    t0_premise(&pr, all, ovl, "overlapped");
    rl_judge_ratio_given(ctx, ovl_claim, NULL, rescaled(to, mo, mso - mo), &pr, note);
}

void exp08_judge_spill(rl_ctx *ctx, const rl_points *all, const rl_claim *seq_claim,
                       const rl_claim *ovl_claim, double f)
{
    if (ctx->kind != RL_CUDA && !exp08_spill_dir()) {
        rl_judge(ctx, seq_claim, NULL, NAN, exp08_spill_why());
        rl_judge(ctx, ovl_claim, NULL, NAN, exp08_spill_why());
        return;
    }
    judge_sequential(ctx, all, seq_claim, f);
    judge_overlapped(ctx, all, ovl_claim, f);
}
