/*
 * judge.c -- experiment 07's claims, and their verdicts.
 *
 * Counted claims (arithmetic intensity, bytes) come from the declared
 * points' byte and FLOP counts; measured ones from the timed points. On
 * the CPU the same claims are judged on the host's memory hierarchy; its
 * ridge (compute roof over DRAM read bandwidth, a few FLOP/B) decides
 * which configurations are memory-bound at all (README, "Tolerances").
 */
#include "exp07.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { AI_FLAT, GEMM_AI_LINEAR, ATTN_MBU, SHARE_GROWS, DECODE_BYTES, PREFILL_BYTES, PREFILL_FASTER };

const rl_claim EXP07_CLAIMS[] = {
    [AI_FLAT] = {"attention_ai_flat", "decode: attention's AI, largest over smallest across B (counted)",
                 1.0, 1.10, "x", 3, .counted = true, .predicted_text = "within +10 %"},
    [GEMM_AI_LINEAR] = {"gemm_ai_linear",
                        "decode: weight GEMM's AI at the largest B over B x its AI at B = 1 (counted)",
                        0.9, 1.1, "x", 3, .counted = true, .predicted_text = "~1: linear in B"},
    /* judged where the configuration is memory-bound with room: AI at most
     * half the ridge (below, the roof needs more than half the FMA peak) */
    [ATTN_MBU] = {"attention_mbu", "decode: attention's MBU at L >= 2048 beyond the cache, the lowest",
                  0.7, INFINITY, "", 2, .on_ceiling = true},
    [SHARE_GROWS] = {"attention_share_grows",
                     "decode: attention's share of the step, largest memory-bound B over B = 1", 2.0,
                     INFINITY, "x", 2},
    [DECODE_BYTES] = {"decode_bytes_saved", "decode (MHA, d = 128): bytes fusion saves (counted)", 0, 5,
                      "%", 1, .counted = true, .predicted_text = "a few percent"},
    [PREFILL_BYTES] = {"prefill_bytes_drop",
                       "prefill n = 4096: bytes, materialized over fused (counted)", 10, INFINITY, "x",
                       1, .counted = true},
    [PREFILL_FASTER] = {"prefill_fused_faster",
                        "prefill: fused speedup over materialized, n x n x 4 B beyond the LLC", 1.0,
                        INFINITY, "x", 2},
    {0},
};

double exp07_ridge(rl_ctx *ctx)
{
    const rl_ceilings *c = rl_ceilings_get(ctx);
    return rl_ridge_point(c->matrix_tflops * 1e12, c->bw[RL_DRAM][RL_READ].best * 1e9);
}

static double ai_of(const rl_point *p) { return rl_arith_intensity(p->flops, p->bytes); }

static bool is_role(const rl_point *p, const char *role) { return rl_point_has_role(p, role); }

static bool of_config(const rl_point *p, const attn_config *cfg)
{
    return RL_DATA(exp07_call, p)->kind == DECODE_ATTN && !strcmp(RL_DATA(exp07_call, p)->config, cfg->name);
}

/* ---- counted ------------------------------------------------------------------ */

static void judge_ai_flat(rl_ctx *ctx, const rl_points *all, const attn_config *cfg)
{
    double lo = INFINITY, hi = 0;
    int blo = 0, bhi = 0, llo = 0, lhi = 0;
    for (int i = 0; i < all->n; i++) {
        const rl_point *p = &all->v[i];
        if (!of_config(p, cfg) || !is_role(p, "decode_fused"))
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
    rl_judge(ctx, &EXP07_CLAIMS[AI_FLAT], cfg->name, hi > 0 ? hi / lo : NAN, note);
}

static void judge_gemm_ai(rl_ctx *ctx, const rl_points *all)
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
    rl_judge(ctx, &EXP07_CLAIMS[GEMM_AI_LINEAR], NULL, value, note);
}

/* MHA's scores over its materialized bytes (any B and L: the ratio is
 * 16 B of scores per 512 B of K and V); the GQA values in the note. */
static double saved_fraction(const attn_config *cfg, int backend)
{
    attention_args a = {.batch = 1, .heads_q = cfg->heads_q, .heads_kv = cfg->heads_kv, .ctx = 4096,
                        .dim = cfg->dim};
    double mat = attention_bytes(ATTN_DECODE, false, backend, &a);
    return (mat - attention_bytes(ATTN_DECODE, true, backend, &a)) / mat;
}

static void judge_decode_bytes(rl_ctx *ctx)
{
    int backend = rl_kernel_backend(ctx);
    char note[240];
    snprintf(note, sizeof note, "%g B of scores per score against 4 d = 512 B of K and V per key "
             "and KV head; GQA-4 saves %.1f %%, GQA-8 %.1f %% (G heads' scores per key)",
             attention_score_bytes(backend), 100 * saved_fraction(&EXP07_CONFIGS[1], backend),
             100 * saved_fraction(&EXP07_CONFIGS[2], backend));
    rl_judge(ctx, &EXP07_CLAIMS[DECODE_BYTES], NULL, 100 * saved_fraction(&EXP07_CONFIGS[0], backend), note);
}

static void judge_prefill_bytes(rl_ctx *ctx)
{
    int backend = rl_kernel_backend(ctx);
    attention_args a = {.batch = 1, .heads_q = 1, .heads_kv = 1, .ctx = 4096, .dim = 128};
    double mat = attention_bytes(ATTN_PREFILL, false, backend, &a),
           fused = attention_bytes(ATTN_PREFILL, true, backend, &a);
    char note[240];
    snprintf(note, sizeof note, "per head: %.0f MB materialized (the 4096 x 4096 scores), %.1f MB "
             "fused (Q, K, V, O): fusion saves %.1f %% of the bytes, the articles' 50-80 %% and more",
             mat / 1e6, fused / 1e6, 100 * (1 - fused / mat));
    rl_judge(ctx, &EXP07_CLAIMS[PREFILL_BYTES], NULL, mat / fused, note);
}

/* ---- measured ---------------------------------------------------------------- */

static void judge_mbu(rl_ctx *ctx, const rl_points *all, const attn_config *cfg)
{
    const rl_point *worst = NULL;
    int judged = 0;
    for (int i = 0; i < all->n; i++) {
        const rl_point *p = &all->v[i];
        if (!of_config(p, cfg) || !is_role(p, "decode_fused") || !rl_point_timed(p) ||
            RL_DATA(exp07_call, p)->ctx < 2048 || !rl_beyond_cache(ctx, p->footprint))
            continue;
        judged++;
        if (!worst || rl_point_mbu(ctx, p) < rl_point_mbu(ctx, worst))
            worst = p;
    }
    double G = cfg->heads_q / cfg->heads_kv, ridge = exp07_ridge(ctx);
    char note[400];
    if (!worst) {
        snprintf(note, sizeof note, "no fused point at L >= 2048 beyond the cache was measured "
                 "(the working-set limit, or the mode's sweep)");
        rl_judge(ctx, &EXP07_CLAIMS[ATTN_MBU], cfg->name, NAN, note);
        return;
    }
    char roof[160];
    rl_point_roof_text(ctx, worst, roof, sizeof roof);
    const exp07_call *c = RL_DATA(exp07_call, worst);
    snprintf(note, sizeof note, "lowest of %d points: B = %d, L = %d, %.1f GB/s against %s", judged,
             c->batch, c->ctx, rl_point_gbps(worst), roof);
    rl_premise pr = rl_premise_start();
    if (G > ridge / 2) {
        pr.met = false;
        snprintf(pr.why, sizeof pr.why, "%s's AI (%.0f FLOP/B) is over half the measured ridge "
                 "(%.1f FLOP/B): the roof would need more than half the compute peak, so the FMA "
                 "units, not the bytes, bound it here", cfg->name, G, ridge);
    }
    rl_judge_given(ctx, &EXP07_CLAIMS[ATTN_MBU], cfg->name, rl_point_mbu(ctx, worst), &pr, note);
}

static double share(const rl_points *all, int batch, int ctx_len)
{
    return exp07_share(all, EXP07_CONFIGS[LLAMA_CONFIG].name, batch, ctx_len);
}

/* Llama 3 8B's configuration (GQA-4) at the longest L measured at B = 1
 * and at the largest batch whose weight GEMM is still memory-bound (AI
 * below the ridge): past it, on a low-ridge CPU, the GEMM's time grows
 * with B as attention's does. */
static void judge_share(rl_ctx *ctx, const rl_points *all, const exp07_sweep *s)
{
    double ridge = exp07_ridge(ctx);
    int b_hi = 1;
    for (const int *b = s->batches; *b; b++)
        if (rl_arith_intensity(gemv_flops(LAYER_ROWS, LAYER_K, *b), gemv_bytes(LAYER_ROWS, LAYER_K, *b)) < ridge)
            b_hi = *b;
    int L = 0;
    for (const int *l = s->contexts; *l; l++)
        if (!isnan(share(all, 1, *l)) && !isnan(share(all, b_hi, *l)))
            L = *l;
    char note[400];
    if (b_hi == 1 || !L) {
        if (b_hi == 1)
            snprintf(note, sizeof note, "no batch above 1 keeps the weight GEMM under the ridge "
                     "(%.1f FLOP/B)", ridge);
        else
            snprintf(note, sizeof note, "GQA-4's fused points or the weight GEMM at B = 1 and %d "
                     "were not measured", b_hi);
        rl_judge(ctx, &EXP07_CLAIMS[SHARE_GROWS], NULL, NAN, note);
        return;
    }
    snprintf(note, sizeof note, "%s, L = %d: share", EXP07_CONFIGS[LLAMA_CONFIG].name, L);
    for (const int *b = s->batches; *b; b++)
        if (!isnan(share(all, *b, L)))
            rl_appendf(note, sizeof note, " %.2f at B = %d,", share(all, *b, L), *b);
    rl_appendf(note, sizeof note, " judged at B = %d, the largest below the ridge (%.1f FLOP/B)",
               b_hi, ridge);
    rl_judge(ctx, &EXP07_CLAIMS[SHARE_GROWS], NULL, share(all, b_hi, L) / share(all, 1, L), note);
}

/* Each n whose per-head score matrix exceeds the last-level cache (the
 * measured one where the ceilings found it). */
static void judge_prefill_speed(rl_ctx *ctx, const rl_points *all, const exp07_sweep *s)
{
    const rl_ceilings *c = rl_ceilings_get(ctx);
    double llc = c->level_bytes[RL_LLC] > 0 ? c->level_bytes[RL_LLC] : ctx->dev->llc_bytes;
    int judged = 0;
    for (const int *n = s->prefill_n; *n; n++) {
        if ((double)*n * *n * 4 <= llc)
            continue;
        const rl_point *mat = exp07_find(all, PREFILL_ATTN, "prefill_materialized", "",
                                         exp07_prefill_heads(ctx), *n),
                       *fused = exp07_find(all, PREFILL_ATTN, "prefill_fused", "", exp07_prefill_heads(ctx), *n);
        char scope[32], note[240];
        snprintf(scope, sizeof scope, "n%d", *n);
        snprintf(note, sizeof note, "scores %.0f MiB per head against the %.0f MiB %s",
                 (double)*n * *n * 4 / 1048576, llc / 1048576, ctx->kind == RL_CUDA ? "L2" : "LLC");
        rl_judge(ctx, &EXP07_CLAIMS[PREFILL_FASTER], scope,
                 mat && fused ? mat->seconds / fused->seconds : NAN, note);
        judged++;
    }
    if (!judged)
        rl_judge(ctx, &EXP07_CLAIMS[PREFILL_FASTER], NULL, NAN,
                 "no prefill length of this sweep has scores beyond the last-level cache");
}

void exp07_judge(rl_ctx *ctx, const rl_points *all)
{
    exp07_sweep s = exp07_sweep_for(ctx);
    for (int c = 0; c < NCONFIGS; c++)
        judge_ai_flat(ctx, all, &EXP07_CONFIGS[c]);
    judge_gemm_ai(ctx, all);
    for (int c = 0; c < NCONFIGS; c++)
        judge_mbu(ctx, all, &EXP07_CONFIGS[c]);
    judge_share(ctx, all, &s);
    judge_decode_bytes(ctx);
    judge_prefill_bytes(ctx);
    judge_prefill_speed(ctx, all, &s);
}
