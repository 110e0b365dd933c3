/*
 * judge.c -- experiment 07's verdicts, each of the claim main.c gives it.
 *
 * Counted claims (arithmetic intensity, bytes) come from the declared
 * points' byte and FLOP counts, timed or not; measured ones from the
 * timed points. On the CPU the same claims are judged on the host's
 * memory hierarchy; its ridge (compute roof over DRAM read bandwidth, a
 * few FLOP/B) decides which configurations are memory-bound at all
 * (README, "Tolerances").
 */
#include "exp07.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- lookups ------------------------------------------------------------------ */

/* The key of a lookup: a kind of point at a batch, and at a configuration
 * and length unless it is the weight GEMM. */
typedef struct find_key {
    point_kind kind;
    const char *config;
    int batch, ctx;
} find_key;

static bool matches(const rl_point *p, const void *key)
{
    const find_key *k = key;
    const exp07_call *c = RL_DATA(exp07_call, p);
    return c->kind == k->kind && c->batch == k->batch &&
           (k->kind == WEIGHT_GEMM || (c->ctx == k->ctx && !strcmp(c->config, k->config)));
}

const rl_point *exp07_find(const rl_points *all, point_kind kind, const char *role,
                           const char *config, int batch, int ctx_len)
{
    return rl_points_find(all, role, matches, &(find_key){kind, config, batch, ctx_len});
}

double exp07_share(const rl_points *all, const char *config, int batch, int ctx_len)
{
    const rl_point *a = exp07_find(all, DECODE_ATTN, "decode_fused", config, batch, ctx_len),
                   *w = exp07_find(all, WEIGHT_GEMM, NULL, NULL, batch, 0);
    return a && w ? a->seconds / (a->seconds + w->seconds) : NAN;
}

/* The share and its spread: share = 1 / (1 + w/a), so its ends come from
 * the ends of w/a's spread (rl_time_ratio), the low share from the high
 * w/a. */
static rl_ratio share_spread(const rl_points *all, const char *config, int batch, int ctx_len)
{
    const rl_point *a = exp07_find(all, DECODE_ATTN, "decode_fused", config, batch, ctx_len),
                   *w = exp07_find(all, WEIGHT_GEMM, NULL, NULL, batch, 0);
    rl_ratio wa = rl_time_ratio(w, a);
    return (rl_ratio){1 / (1 + wa.median), 1 / (1 + fmax(wa.lo, wa.hi)),
                      1 / (1 + fmin(wa.lo, wa.hi))};
}

/* share(b) / share(1) and its spread: each share at the opposite end of
 * its own. */
static rl_ratio share_growth(const rl_points *all, const char *config, int b, int ctx_len)
{
    rl_ratio hi = share_spread(all, config, b, ctx_len), one = share_spread(all, config, 1, ctx_len);
    return (rl_ratio){hi.median / one.median, hi.lo / one.hi, hi.hi / one.lo};
}

static double ai_of(const rl_point *p) { return rl_arith_intensity(p->flops, p->bytes); }

static bool is_fused_decode_of(const rl_point *p, const attn_config *cfg)
{
    const exp07_call *c = RL_DATA(exp07_call, p);
    return c->kind == DECODE_ATTN && !strcmp(c->config, cfg->name) &&
           rl_point_has_role(p, "decode_fused");
}

/* ---- counted: every declared point, timed or not ------------------------------- */

void exp07_judge_ai_flat(rl_ctx *ctx, const rl_points *all, const rl_claim *claim,
                         const attn_config *cfg)
{
    double lo = INFINITY, hi = 0;
    int blo = 0, bhi = 0, llo = 0, lhi = 0;
    for (int i = 0; i < all->n; i++) {
        const rl_point *p = &all->v[i];
        if (!is_fused_decode_of(p, cfg))
            continue;
        double ai = ai_of(p);
        const exp07_call *c = RL_DATA(exp07_call, p);
        if (ai < lo)
            lo = ai, blo = c->batch, llo = c->ctx;
        if (ai > hi)
            hi = ai, bhi = c->batch, lhi = c->ctx;
    }
    char note[200];
    snprintf(note, sizeof note, "fused points: AI %.3f (B = %d, L = %d) to %.3f (B = %d, L = %d) "
             "FLOP/B; G = %d", lo, blo, llo, hi, bhi, lhi, cfg->heads_q / cfg->heads_kv);
    rl_judge(ctx, claim, cfg->name, hi > 0 ? hi / lo : NAN, note);
}

void exp07_judge_gemm_ai(rl_ctx *ctx, const rl_points *all, const rl_claim *claim)
{
    const rl_point *one = NULL, *big = NULL;
    for (int i = 0; i < all->n; i++) {
        const rl_point *p = &all->v[i];
        if (RL_DATA(exp07_call, p)->kind != WEIGHT_GEMM)
            continue;
        if (RL_DATA(exp07_call, p)->batch == 1)
            one = p;
        if (!big || RL_DATA(exp07_call, p)->batch > RL_DATA(exp07_call, big)->batch)
            big = p;
    }
    double value = NAN;
    char note[200] = "no weight GEMM points";
    if (one && big) {
        int b = RL_DATA(exp07_call, big)->batch;
        value = ai_of(big) / (b * ai_of(one));
        snprintf(note, sizeof note, "AI %.2f FLOP/B at B = 1, %.1f at B = %d", ai_of(one), ai_of(big), b);
    }
    rl_judge(ctx, claim, NULL, value, note);
}

/* A configuration's scores over its materialized bytes (any B and L:
 * MHA's ratio is 16 B of scores per 512 B of K and V). */
static double saved_fraction(const attn_config *cfg, int backend)
{
    attention_args a = {.batch = 1, .heads_q = cfg->heads_q, .heads_kv = cfg->heads_kv, .ctx = 4096,
                        .dim = cfg->dim};
    double mat = attention_bytes(ATTN_DECODE, false, backend, &a);
    return (mat - attention_bytes(ATTN_DECODE, true, backend, &a)) / mat;
}

/* MHA's saving judged; the GQA values in the note. */
void exp07_judge_decode_bytes(rl_ctx *ctx, const rl_claim *claim, const attn_config configs[3])
{
    int backend = rl_kernel_backend(ctx);
    char note[240];
    snprintf(note, sizeof note, "%g B of scores per score against 4 d = 512 B of K and V per key "
             "and KV head; GQA-4 saves %.1f %%, GQA-8 %.1f %% (G heads' scores per key)",
             attention_score_bytes(backend), 100 * saved_fraction(&configs[1], backend),
             100 * saved_fraction(&configs[2], backend));
    rl_judge(ctx, claim, NULL, 100 * saved_fraction(&configs[0], backend), note);
}

void exp07_judge_prefill_bytes(rl_ctx *ctx, const rl_claim *claim)
{
    int backend = rl_kernel_backend(ctx);
    attention_args a = {.batch = 1, .heads_q = 1, .heads_kv = 1, .ctx = 4096, .dim = 128};
    double mat = attention_bytes(ATTN_PREFILL, false, backend, &a),
           fused = attention_bytes(ATTN_PREFILL, true, backend, &a);
    char note[240];
    snprintf(note, sizeof note, "per head: %.0f MB materialized (the 4096 x 4096 scores), %.1f MB "
             "fused (Q, K, V, O): fusion saves %.1f %% of the bytes, the articles' 50-80 %% and more",
             mat / 1e6, fused / 1e6, 100 * (1 - fused / mat));
    rl_judge(ctx, claim, NULL, mat / fused, note);
}

/* ---- measured ---------------------------------------------------------------- */

/* The fused points of cfg at L >= 2048 beyond the cache: how many, the
 * one of the lowest MBU (a loop, not rl_points_best: MBU and the cache
 * read the run's roofs), and the lowest MBU's spread: wherever each
 * point's MBU lies within its own (rl_point_mbu_spread), the lowest lies
 * between the lowest of their low ends and the lowest of their high
 * ends. */
static const rl_point *lowest_mbu(rl_ctx *ctx, const rl_points *all, const attn_config *cfg,
                                  int *judged, rl_ratio *lowest)
{
    const rl_point *worst = NULL;
    *judged = 0;
    *lowest = (rl_ratio){NAN, INFINITY, INFINITY};
    for (int i = 0; i < all->n; i++) {
        const rl_point *p = &all->v[i];
        if (!is_fused_decode_of(p, cfg) || !rl_point_timed(p) || RL_DATA(exp07_call, p)->ctx < 2048 ||
            !rl_beyond_cache(ctx, p->footprint))
            continue;
        (*judged)++;
        rl_ratio r = rl_point_mbu_spread(ctx, p);
        lowest->lo = fmin(lowest->lo, r.lo);
        lowest->hi = fmin(lowest->hi, r.hi);
        if (!worst || r.median < lowest->median) {
            worst = p;
            lowest->median = r.median;
        }
    }
    return worst;
}

/* Judged where the configuration is memory-bound with room: AI at most
 * half the ridge (above, the roof needs more than half the FMA peak). */
void exp07_judge_mbu(rl_ctx *ctx, const rl_points *all, const rl_claim *claim, const attn_config *cfg)
{
    int judged;
    rl_ratio lowest;
    const rl_point *worst = lowest_mbu(ctx, all, cfg, &judged, &lowest);
    double G = cfg->heads_q / cfg->heads_kv, ridge = rl_ridge(ctx);
    char note[400];
    if (!worst) {
        snprintf(note, sizeof note, "no fused point at L >= 2048 beyond the cache was measured "
                 "(the working-set limit, or the mode's sweep)");
        rl_judge(ctx, claim, cfg->name, NAN, note);
        return;
    }
    char roof[160];
    rl_point_roof_text(ctx, worst, roof, sizeof roof);
    const exp07_call *c = RL_DATA(exp07_call, worst);
    snprintf(note, sizeof note, "lowest of %d points: B = %d, L = %d, %.1f GB/s against %s", judged,
             c->batch, c->ctx, rl_point_gbps(worst), roof);
    rl_premise pr = rl_premise_start();
    if (!(ridge > 0)) {
        pr.met = false;
        snprintf(pr.why, sizeof pr.why, "no ridge was measured on this run, so whether %s is "
                 "memory-bound (its AI of %.0f FLOP/B under half the ridge) is not known", cfg->name, G);
    } else if (G > ridge / 2) {
        pr.met = false;
        snprintf(pr.why, sizeof pr.why, "%s's AI (%.0f FLOP/B) is over half the measured ridge "
                 "(%.1f FLOP/B): the roof would need more than half the compute peak, so the FMA "
                 "units, not the bytes, bound it here", cfg->name, G, ridge);
    }
    rl_judge_ratio_given(ctx, claim, cfg->name, lowest, &pr, note);
}

/* The largest batch whose weight GEMM is memory-bound with room (AI at
 * most half the ridge): past it, on a low-ridge CPU, the GEMM's time
 * grows with B as attention's does. Half, as attention_mbu's premise
 * asks: the ridge moves with the minute's bandwidth, and a batch whose AI
 * sits near the ridge itself was judged in one run and not in the next
 * (README, Method). */
static int largest_memory_bound_batch(rl_ctx *ctx, const rl_steps *batches)
{
    int b_hi = 1;
    for (int i = 0; i < batches->n; i++) {
        int b = (int)batches->v[i];
        if (rl_arith_intensity(gemv_flops(LAYER_ROWS, LAYER_K, b), gemv_bytes(LAYER_ROWS, LAYER_K, b)) <=
            rl_ridge(ctx) / 2)
            b_hi = b;
    }
    return b_hi;
}

/* The longest L at which cfg's share was measured at B = 1 and at b; 0: none. */
static int longest_shared_ctx(const rl_points *all, const attn_config *cfg, int b,
                              const rl_steps *contexts)
{
    int L = 0;
    for (int i = 0; i < contexts->n; i++) {
        int l = (int)contexts->v[i];
        if (!isnan(exp07_share(all, cfg->name, 1, l)) && !isnan(exp07_share(all, cfg->name, b, l)))
            L = l;
    }
    return L;
}

/* cfg at the longest L measured at B = 1 and at the largest memory-bound
 * batch, every batch's share in the note. */
void exp07_judge_share(rl_ctx *ctx, const rl_points *all, const rl_claim *claim,
                       const attn_config *cfg, const rl_steps *batches, const rl_steps *contexts)
{
    double ridge = rl_ridge(ctx);
    int b_hi = largest_memory_bound_batch(ctx, batches), L = longest_shared_ctx(all, cfg, b_hi, contexts);
    char note[400];
    if (b_hi == 1 || !L) {
        if (b_hi == 1)
            snprintf(note, sizeof note, "no batch above 1 keeps the weight GEMM under half the "
                     "ridge (%.1f FLOP/B): memory-bound with room, as the claim presumes", ridge);
        else
            snprintf(note, sizeof note, "GQA-4's fused points or the weight GEMM at B = 1 and %d "
                     "were not measured", b_hi);
        rl_judge(ctx, claim, NULL, NAN, note);
        return;
    }
    snprintf(note, sizeof note, "%s, L = %d: share", cfg->name, L);
    for (int i = 0; i < batches->n; i++) {
        double share = exp07_share(all, cfg->name, (int)batches->v[i], L);
        if (!isnan(share))
            rl_appendf(note, sizeof note, " %.2f at B = %d,", share, (int)batches->v[i]);
    }
    rl_appendf(note, sizeof note, " judged at B = %d, the largest under half the ridge (%.1f FLOP/B)",
               b_hi, ridge);
    rl_judge_ratio_given(ctx, claim, NULL, share_growth(all, cfg->name, b_hi, L), NULL, note);
}

/* Each n whose per-head score matrix exceeds the last-level cache (the
 * measured one where the ceilings found it). */
void exp07_judge_prefill_speed(rl_ctx *ctx, const rl_points *all, const rl_claim *claim,
                               const rl_steps *lengths)
{
    const rl_ceilings *c = rl_ceilings_get(ctx);
    double llc = c->level_bytes[RL_LLC] > 0 ? c->level_bytes[RL_LLC] : ctx->dev->llc_bytes;
    int judged = 0, heads = exp07_prefill_heads(ctx);
    for (int i = 0; i < lengths->n; i++) {
        int n = (int)lengths->v[i];
        if ((double)n * n * 4 <= llc)
            continue;
        const rl_point *mat = exp07_find(all, PREFILL_ATTN, "prefill_materialized", "", heads, n),
                       *fused = exp07_find(all, PREFILL_ATTN, "prefill_fused", "", heads, n);
        char scope[32], note[240];
        snprintf(scope, sizeof scope, "n%d", n);
        snprintf(note, sizeof note, "scores %.0f MiB per head against the %.0f MiB %s",
                 (double)n * n * 4 / 1048576, llc / 1048576, ctx->kind == RL_CUDA ? "L2" : "LLC");
        rl_premise pr = rl_premise_start();
        if (mat && fused)
            rl_premise_same_group(&pr, mat, fused, "the materialized and the fused prefill");
        rl_judge_ratio_given(ctx, claim, scope, rl_time_ratio(mat, fused), &pr, note);
        judged++;
    }
    if (!judged)
        rl_judge(ctx, claim, NULL, NAN,
                 "no prefill length of this sweep has scores beyond the last-level cache");
}
