/*
 * Experiment 07 -- attention at decode reads the KV cache, and fused
 * attention moves less.
 *
 * At decode, one layer's step is the weight GEMM (every weight read once,
 * whatever the batch: its arithmetic intensity grows with the batch) and
 * attention (every sequence reads its own KV cache: the bytes grow with
 * the batch as the FLOPs do, so the intensity stays G FLOP/B, G query
 * heads per KV head). The batch moves the matmul right on the roofline;
 * attention stays pinned to the bandwidth roof, and takes a growing share
 * of the step. At prefill, attention's score matrix is n x n: written to
 * memory between two GEMMs (materialized) it dwarfs Q, K and V; tiled and
 * fused (FlashAttention) it never leaves the cache.
 *
 * Method: the weight GEMM at each batch, decode parts (a configuration and
 * a cache length, its points the batches), prefill parts (one per n);
 * every point validated against a double-precision reference (the fused
 * ones also against the materialized output, row by row), then timed, the
 * variants of one shape together. See README.md.
 *
 * This file reads top to bottom: the claims, the axes, the points (the
 * chapters weights.c, decode.c and prefill.c make them), the judgement
 * (judge.c judges each claim), then the columns and the experiment.
 */
#include "exp07.h"

#include <math.h>
#include <stdio.h>

/* ---- the claims ---------------------------------------------------------------- */

enum { AI_FLAT, GEMM_AI_LINEAR, ATTN_MBU, SHARE_GROWS, DECODE_BYTES, PREFILL_BYTES, PREFILL_FASTER };

static const rl_claim EXP07_CLAIMS[] = {
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

/* ---- the axes -------------------------------------------------------------------- */

/* The decode configurations: 32 query heads of dimension 128, sharing 32,
 * 8 or 4 KV heads (multi-head, and grouped-query with groups of 4 and 8:
 * Llama 3 8B's is GQA-4). */
static const attn_config CONFIGS[] = {
    {"MHA", 32, 32, 128},
    {"GQA4", 32, 8, 128},
    {"GQA8", 32, 4, 128},
};
enum { LLAMA_CONFIG = 1 }; /* GQA-4, the share's configuration */

/* The configurations, as indices into CONFIGS. */
static const rl_axis CONFIG = RL_AXIS("config", RL_LIST(0, 1, 2), RL_LIST(0, 1, 2), RL_LIST(0, 1, 2));

/* The lab sweep fits 2 minutes on 2 cores (a group took 9 to 19 s there,
 * its inputs, probes and samples together): it leaves out the shortest
 * caches and prompts, which run from the cache and need the most samples
 * to converge, B = 16 and the materialized decode (no verdict reads it:
 * its bytes are counted); the full sweep has them. A GPU's quick run
 * keeps B = 64, where the share of the step grows. */
static const rl_axis GPU_BATCH = RL_AXIS("batch", RL_LIST(1, 4, 64), RL_LIST(1, 4, 64),
                                         RL_LIST(1, 2, 4, 8, 16, 32, 64));
static const rl_axis BATCH = RL_AXIS("batch", RL_LIST(1, 4), RL_LIST(1, 4, 64),
                                     RL_LIST(1, 2, 4, 8, 16, 32, 64), .gpu = &GPU_BATCH);
static const rl_axis CACHE_LEN = RL_AXIS("ctx", RL_LIST(2048), RL_LIST(2048, 8192),
                                         RL_LIST(512, 1024, 2048, 4096, 8192));
/* Prefill's prompt length n (the CSV's ctx column too). */
static const rl_axis PROMPT_LEN = RL_AXIS("ctx", RL_LIST(512, 4096), RL_LIST(1024, 4096, 8192),
                                          RL_LIST(512, 1024, 2048, 4096, 8192));

/* Where the materialized decode runs (a setting per mode, not a sweep):
 * GQA-4's parts in a quick run, none in a lab run, every part in a full. */
static bool materialized_runs(const rl_ctx *ctx, int config)
{
    return RL_BY_MODE(ctx, config == LLAMA_CONFIG, false, true);
}

/* ---- the points ------------------------------------------------------------------ */

/* The weight GEMM: one part and one group, a point per batch (weights.c). */
static void weight_points(rl_ctx *ctx, const rl_at *at, void *W)
{
    exp07_weight_point(ctx, W, rl_at_int(at, &BATCH));
}

/* A decode part per configuration and cache length, sized for the largest
 * batch that fits the working-set limit, its points the batches
 * (decode.c); a batch that does not fit is skipped, and a part where none
 * fits is never made. */
static bool decode_does_not_fit(const rl_ctx *ctx, const rl_at *at, void *state)
{
    (void)state;
    return !exp07_decode_fits(ctx, &CONFIGS[rl_at_int(at, &CONFIG)], rl_at_int(at, &CACHE_LEN),
                              rl_at_int(at, &BATCH));
}

static void decode_part(rl_ctx *ctx, const rl_at *at, rl_part *part, void *state)
{
    (void)state;
    rl_steps batches = rl_axis_values(ctx, &BATCH);
    int c = rl_at_int(at, &CONFIG);
    *part = exp07_decode_part(ctx, &CONFIGS[c], rl_at_int(at, &CACHE_LEN), &batches,
                              materialized_runs(ctx, c));
}

static void decode_points(rl_ctx *ctx, const rl_at *at, void *state)
{
    (void)state;
    exp07_decode_points(ctx, at->part_state, rl_at_int(at, &BATCH));
}

/* A prefill part per prompt length whose scores fit the limit, its points
 * the prefill variants (prefill.c). */
static bool prefill_does_not_fit(const rl_ctx *ctx, const rl_at *at, void *state)
{
    (void)state;
    return !exp07_prefill_fits(ctx, rl_at_int(at, &PROMPT_LEN));
}

static void prefill_part(rl_ctx *ctx, const rl_at *at, rl_part *part, void *state)
{
    (void)state;
    *part = exp07_prefill_part(ctx, rl_at_int(at, &PROMPT_LEN));
}

static void prefill_points(rl_ctx *ctx, const rl_at *at, void *state)
{
    (void)state;
    exp07_prefill_points(ctx, at->part_state);
}

static void describe(rl_ctx *ctx)
{
    char b[64], l[64], n[64];
    rl_axis_list(ctx, &BATCH, b, sizeof b);
    rl_axis_list(ctx, &CACHE_LEN, l, sizeof l);
    rl_axis_list(ctx, &PROMPT_LEN, n, sizeof n);
    rl_meta(ctx, "decode", "batch B = %s; cache length L = %s; 32 query heads of dimension 128, "
            "32 / 8 / 4 KV heads (MHA, GQA-4, GQA-8); FP16 q, K and V, FP32 out; parts capped by "
            "the working-set limit", b, l);
    rl_meta(ctx, "weights", "Llama 3 8B's layer (q k v o, gate up down: 218 M weights) as one "
            "%dx%d FP16 matrix at each batch (gemv family)", LAYER_ROWS, LAYER_K);
    rl_meta(ctx, "prefill", "n = %s; %d head(s) of dimension 128, every query against every key "
            "(no mask)", n, exp07_prefill_heads(ctx));
    rl_meta(ctx, "bytes_model", "decode KV = B L h_kv d x 2 tensors x 2 B; + q (2 B) and out (4 B); "
            "materialized adds %g B per score (S written, read and written by softmax, read by "
            "P V); K and V counted once (a head's are reused from the cache between query tiles)",
            attention_score_bytes(rl_kernel_backend(ctx)));
    rl_meta(ctx, "validation", "decode and prefill: the first rows vs a double-precision reference "
            "(atol %g, rtol %g; %g more where the GPU's materialized P, in FP16, is checked or "
            "checked against); the fused variants' other rows vs the materialized output; the "
            "weight GEMM's first rows vs its reference (gemv)", ATTENTION_ATOL, ATTENTION_RTOL,
            ATTENTION_FP16_P_ATOL);
    rl_meta(ctx, "ridge_flop_per_byte", "%.2f (measured: compute roof / DRAM read)",
            rl_ridge(ctx));
}

/* --shape: one decode shape, beside ggml's flash attention (0: the sweeps). */
static const char *shape_choice = "";
static attn_config shape_config = {"shape", 0, 0, 0};
static int shape_batch, shape_ctx;

static void declare_shape(rl_ctx *ctx)
{
    printf("\nshape       B = %d, %d query heads, %d KV heads of dimension %d, L = %d\n",
           shape_batch, shape_config.heads_q, shape_config.heads_kv, shape_config.dim, shape_ctx);
    rl_discard_results(ctx);
    rl_steps batches = {1, {shape_batch}};
    rl_part part = exp07_decode_part(ctx, &shape_config, shape_ctx, &batches, true);
    if (!part.state)
        return;
    rl_part_add(ctx, &part);
    exp07_decode_points(ctx, part.state, shape_batch);
}

/* The weight GEMM first: the decode rows' share of the step reads its
 * times. Then a decode part per configuration and cache length, a
 * prefill part per length. */
static void declare(rl_ctx *ctx)
{
    if (shape_batch) { /* a side benchmark: its table only */
        declare_shape(ctx);
        return;
    }
    describe(ctx);
    static const rl_axis *const WEIGHT_AXES[] = {&BATCH, NULL},
                                *const DECODE_AXES[] = {&CONFIG, &CACHE_LEN, &BATCH, NULL},
                                *const PREFILL_AXES[] = {&PROMPT_LEN, NULL};
    rl_sweep_declare(ctx, &(rl_sweep){WEIGHT_AXES, .points = weight_points,
                                      .state = exp07_weights_part(ctx)});
    rl_sweep_declare(ctx, &(rl_sweep){DECODE_AXES, .part_axes = 2, .part = decode_part,
                                      .skip = decode_does_not_fit, .points = decode_points});
    rl_sweep_declare(ctx, &(rl_sweep){PREFILL_AXES, .part_axes = 1, .part = prefill_part,
                                      .skip = prefill_does_not_fit, .points = prefill_points});
}

/* ---- the judgement ------------------------------------------------------------------ */

static void judge(rl_ctx *ctx, const rl_points *all)
{
    const rl_claim *C = EXP07_CLAIMS;
    rl_steps batches = rl_axis_values(ctx, &BATCH), contexts = rl_axis_values(ctx, &CACHE_LEN),
             lengths = rl_axis_values(ctx, &PROMPT_LEN);
    for (size_t c = 0; c < sizeof CONFIGS / sizeof CONFIGS[0]; c++)
        exp07_judge_ai_flat(ctx, all, &C[AI_FLAT], &CONFIGS[c]);
    exp07_judge_gemm_ai(ctx, all, &C[GEMM_AI_LINEAR]);
    for (size_t c = 0; c < sizeof CONFIGS / sizeof CONFIGS[0]; c++)
        exp07_judge_mbu(ctx, all, &C[ATTN_MBU], &CONFIGS[c]);
    exp07_judge_share(ctx, all, &C[SHARE_GROWS], &CONFIGS[LLAMA_CONFIG], &batches, &contexts);
    exp07_judge_decode_bytes(ctx, &C[DECODE_BYTES], CONFIGS);
    exp07_judge_prefill_bytes(ctx, &C[PREFILL_BYTES]);
    exp07_judge_prefill_speed(ctx, all, &C[PREFILL_FASTER], &lengths);
}

/* ---- the columns ------------------------------------------------------------------- */

static bool is_fused(const rl_point *p)
{
    return rl_point_has_role(p, "decode_fused") || rl_point_has_role(p, "prefill_fused");
}

/* Attention's share of the decode step: its time over its own plus the
 * weight GEMM's at the same batch (fused points). */
static double col_share(rl_ctx *ctx, const rl_point *p)
{
    const exp07_call *c = RL_DATA(exp07_call, p);
    if (!rl_point_has_role(p, "decode_fused") || !rl_point_timed(p))
        return NAN;
    return exp07_share(rl_points_all(ctx), c->config, c->batch, c->ctx);
}

static const rl_point *materialized_twin(rl_ctx *ctx, const rl_point *p)
{
    const exp07_call *c = RL_DATA(exp07_call, p);
    return exp07_find(rl_points_all(ctx), c->kind,
                      c->kind == PREFILL_ATTN ? "prefill_materialized" : "decode_materialized",
                      c->config, c->batch, c->ctx);
}

static rl_ratio speedup_of(rl_ctx *ctx, const rl_point *p)
{
    return rl_time_ratio(is_fused(p) ? materialized_twin(ctx, p) : NULL, p);
}
static double col_speedup(rl_ctx *ctx, const rl_point *p) { return speedup_of(ctx, p).median; }

static const rl_column COLUMNS[] = {
    RL_TEXT("phase", NULL, NULL, exp07_call, phase),
    RL_TEXT("config", NULL, NULL, exp07_call, config),
    RL_COLUMN_VARIANT,
    RL_COLUMN_NUMBER,
    RL_INT("batch", NULL, NULL, exp07_call, batch),
    RL_INT("ctx", NULL, NULL, exp07_call, ctx),
    RL_INT("heads_q", NULL, NULL, exp07_call, heads_q),
    RL_INT("heads_kv", NULL, NULL, exp07_call, heads_kv),
    RL_INT("group", NULL, NULL, exp07_call, group),
    RL_INT("dim", NULL, NULL, exp07_call, dim),
    {"flops", NULL, NULL, .num = rl_col_flops},
    {"bytes", NULL, NULL, .num = rl_col_bytes},
    {"ai", NULL, NULL, .num = rl_col_ai},
    RL_WHOLE("kv_bytes", NULL, NULL, exp07_call, kv_bytes),
    RL_WHOLE("score_bytes", NULL, NULL, exp07_call, score_bytes),
    {"footprint_bytes", NULL, NULL, .num = rl_col_footprint},
    {"cache_resident", NULL, NULL, .num = rl_col_cache_resident},
    RL_INT("validated_rows", NULL, NULL, exp07_call, validated_rows),
    {0},
};

static const rl_column DERIVED[] = {
    {"attainable_tflops", NULL, NULL, .num = rl_col_attainable},
    {"share_of_step", NULL, NULL, .num = col_share},
    RL_RATIO_COLUMNS("speedup_vs_materialized", speedup_of),
    {0},
};

static const rl_column TABLE[] = {
    RL_TEXT(NULL, "phase", "%-7s", exp07_call, phase),
    RL_TEXT(NULL, "config", "%-6s", exp07_call, config),
    RL_INT(NULL, "B", "%3d", exp07_call, batch),
    RL_INT(NULL, "L|n", "%5d", exp07_call, ctx),
    {NULL, "variant", "%-20s", .str = rl_col_variant},
    RL_COLUMN_TIME_US,
    RL_COLUMN_GBPS,
    RL_COLUMN_TFLOPS,
    {NULL, "AI", "%6.1f", .num = rl_col_ai},
    RL_COLUMN_LEVEL,
    RL_COLUMN_MBU,
    RL_COLUMN_MFU,
    {NULL, "share", "%6.2f", .num = col_share, .measured = true},
    {NULL, "speedup", "%7.2f", .num = col_speedup, .measured = true},
    {0},
};

/* ---- the experiment ------------------------------------------------------------------ */

static const rl_option OPTIONS[] = {
    {"shape", "B,HQ,HKV,D,L", "instead of the sweeps: time the decode of one shape (B sequences, HQ "
     "query heads sharing HKV KV heads of dimension D, a cache of L), fused and materialized, to "
     "compare with ggml's test-backend-ops FLASH_ATTN_EXT; writes no results", NULL, &shape_choice},
    {0},
};

static void read_options(rl_ctx *ctx)
{
    (void)ctx;
    if (!shape_choice[0])
        return;
    int b, hq, hkv, d, L;
    char tail;
    if (sscanf(shape_choice, "%d,%d,%d,%d,%d%c", &b, &hq, &hkv, &d, &L, &tail) != 5 || b < 1 ||
        b > 1024 || hkv < 1 || hq % hkv != 0 || (hq / hkv != 1 && hq / hkv != 2 && hq / hkv != 4 &&
        hq / hkv != 8) || (d != 64 && d != 128) || L < 1 || L > (1 << 20))
        rl_die(RL_EXIT_USAGE, "exp-07: --shape wants B,HQ,HKV,D,L with HQ / HKV of 1, 2, 4 or 8 and "
               "D 64 or 128 (e.g. 1,64,8,64,7680: ggml's perf case), not '%s'", shape_choice);
    shape_config = (attn_config){"shape", hq, hkv, d};
    shape_batch = b, shape_ctx = L;
}

static const kernel_family *const FAMILIES[] = {&attention_family, &gemv_family, NULL};

static const rl_experiment EXP07 = {
    .id = "07",
    .slug = "07-attention",
    .title = "Attention at decode reads the KV cache; fused attention moves less",
    .claim = "At decode the weight GEMM's arithmetic intensity grows with the batch, while "
             "attention's stays put (each sequence reads its own KV cache: ~1 FLOP/B for FP16 "
             "multi-head attention, ~G for grouped-query), so attention stays on the bandwidth "
             "roof and takes a growing share of the step. FlashAttention's tiling keeps the score "
             "matrix out of device memory: at prefill and long sequences the bytes drop by far "
             "more than half (the articles: HBM traffic during attention drops 50-80 %); at "
             "decode the scores are a few percent of the bytes, and fusion saves little.",
    .source = "the seed articles on GPU utilization; Dao et al., \"FlashAttention\" (2022, "
              "arXiv 2205.14135); flash-decoding (Dao, Haziza, Massa, Sizov, 2023)",
    .prediction = "on a GPU the claim's numbers; on the CPU the same claims on the host's memory "
                  "hierarchy, against its own (low) ridge (README)",
    .claims = EXP07_CLAIMS,
    .families = FAMILIES,
    .columns = COLUMNS,
    .rates = RL_RATES_BANDWIDTH | RL_RATES_COMPUTE,
    .probes = RL_PROBE_BANDWIDTH | RL_PROBE_COMPUTE,
    .derived = DERIVED,
    .table = TABLE,
    .default_cache = RL_HOT,
    .compare_keys = "phase,config,variant,batch,ctx",
    .compare_value = "time_us_median",
    .declare = declare,
    .judge = judge,
    .options = OPTIONS,
    .read_options = read_options,
};

int main(int argc, char **argv) { return rl_main(&EXP07, argc, argv); }
