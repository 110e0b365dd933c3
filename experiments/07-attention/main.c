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
 * Method: decode parts (a configuration and a cache length, its points the
 * batches), the weight GEMM at each batch, prefill parts (one per n); every
 * point validated against a double-precision reference (the fused ones
 * also against the materialized output, row by row), then timed, the
 * variants of one shape together. See README.md.
 */
#include "exp07.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const attn_config EXP07_CONFIGS[NCONFIGS] = {
    {"MHA", 32, 32, 128},
    {"GQA4", 32, 8, 128},
    {"GQA8", 32, 4, 128},
};

/* ---- the sweeps ---------------------------------------------------------------- */

static const int QUICK_B[] = {1, 4, 0}, LAB_B[] = {1, 4, 64, 0},
                 FULL_B[] = {1, 2, 4, 8, 16, 32, 64, 0}, GPU_QUICK_B[] = {1, 4, 64, 0};
/* The lab sweep fits 2 minutes on 2 cores (a group took 9 to 19 s there,
 * its inputs, probes and samples together): it leaves out the shortest
 * caches and prompts, which run from the cache and need the most samples
 * to converge, B = 16 and the materialized decode (no verdict reads it:
 * its bytes are counted); the full sweep has them. */
static const int QUICK_L[] = {2048, 0}, LAB_L[] = {2048, 8192, 0},
                 FULL_L[] = {512, 1024, 2048, 4096, 8192, 0};
static const int QUICK_N[] = {512, 4096, 0}, LAB_N[] = {1024, 4096, 8192, 0},
                 FULL_N[] = {512, 1024, 2048, 4096, 8192, 0};

exp07_sweep exp07_sweep_for(const rl_ctx *ctx)
{
    const int *quick_b = ctx->kind == RL_CUDA ? GPU_QUICK_B : QUICK_B;
    return (exp07_sweep){RL_BY_MODE(ctx, quick_b, LAB_B, FULL_B), RL_BY_MODE(ctx, QUICK_L, LAB_L, FULL_L),
                   RL_BY_MODE(ctx, QUICK_N, LAB_N, FULL_N),
                   RL_BY_MODE(ctx, MATERIALIZED_LLAMA, MATERIALIZED_NONE, MATERIALIZED_ALL)};
}

/* ---- what the parts share ---------------------------------------------------------- */

int exp07_attention_validated_rows(long rows, int ctx_len, int dim, int min_rows)
{
    long affordable = (1L << 25) / ((long)ctx_len * dim);
    long want = affordable > min_rows ? affordable : min_rows;
    return (int)(want < rows ? want : rows);
}

double *exp07_fused_want(rl_ctx *ctx, const attention_args *mat, attention_phase ph, const double *ref,
                   size_t ref_rows, size_t rows)
{
    const attention_variant *v = (const attention_variant *)rl_variant_by_role(
        ctx, &attention_family, ph == ATTN_DECODE ? "decode_materialized" : "prefill_materialized");
    if (!v)
        rl_die(RL_EXIT_FAILED, "exp-07: no materialized %s variant on this backend to check against",
               ph == ATTN_DECODE ? "decode" : "prefill");
    attention_call c = {RL_LAUNCHER(ctx, v), *mat};
    attention_call_run(&c);
    rl_sync(ctx->be);
    size_t n = rows * (size_t)mat->dim, first = ref_rows * (size_t)mat->dim;
    float *got = rl_download_copy(ctx->be, mat->out, n * sizeof(float));
    double *want = rl_host_alloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++)
        want[i] = i < first ? ref[i] : got[i];
    rl_host_free(got);
    return want;
}

void *exp07_upload_repeated(rl_ctx *ctx, const void *host, size_t drawn, size_t items, size_t item_bytes)
{
    char *dev = rl_alloc(ctx->be, items * item_bytes);
    for (size_t i = 0; i < items; i += drawn) {
        size_t n = items - i < drawn ? items - i : drawn;
        rl_upload(ctx->be, dev + i * item_bytes, host, n * item_bytes);
    }
    return dev;
}

void exp07_open_attention_buffers(rl_ctx *ctx, attention_buffers *b, attention_args shape,
                            attention_phase ph, size_t q_items, size_t kv_items, size_t drawn,
                            size_t copies, size_t scratch_bytes, size_t ref_rows)
{
    b->hq = rl_host_random_f16(ctx, drawn * q_items, -1, 1);
    b->hk = rl_host_random_f16(ctx, drawn * kv_items, -1, 1);
    b->hv = rl_host_random_f16(ctx, drawn * kv_items, -1, 1);
    b->q = exp07_upload_repeated(ctx, b->hq, drawn, copies, q_items * sizeof(fp16));
    b->k = exp07_upload_repeated(ctx, b->hk, drawn, copies, kv_items * sizeof(fp16));
    b->v = exp07_upload_repeated(ctx, b->hv, drawn, copies, kv_items * sizeof(fp16));
    b->out_fused = rl_alloc(ctx->be, copies * q_items * sizeof(float));
    b->out_mat = rl_alloc(ctx->be, copies * q_items * sizeof(float));
    b->scratch = scratch_bytes ? rl_alloc(ctx->be, scratch_bytes) : NULL;
    shape.q = b->hq, shape.k = b->hk, shape.v = b->hv;
    b->ref = rl_host_alloc(sizeof(double) * ref_rows * (size_t)shape.dim);
    attention_reference(b->ref, &shape, ph, 0, ref_rows);
}

void exp07_free_attention_buffers(rl_ctx *ctx, attention_buffers *b)
{
    void *dev[] = {b->q, b->k, b->v, b->out_fused, b->out_mat, b->scratch};
    void *host[] = {b->hq, b->hk, b->hv, b->ref};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
        rl_free(ctx->be, dev[i]);
    for (size_t i = 0; i < sizeof host / sizeof host[0]; i++)
        rl_host_free(host[i]);
}

/* ---- the columns ------------------------------------------------------------------- */

const rl_point *exp07_find(const rl_points *all, point_kind kind, const char *role,
                           const char *config, int batch, int ctx_len)
{
    for (int i = 0; i < all->n; i++) {
        const rl_point *p = &all->v[i];
        const exp07_call *c = RL_DATA(exp07_call, p);
        if (rl_point_timed(p) && c->kind == kind && (!role || rl_point_has_role(p, role)) &&
            c->batch == batch &&
            (kind == WEIGHT_GEMM || (c->ctx == ctx_len && !strcmp(c->config, config))))
            return p;
    }
    return NULL;
}

double exp07_share(const rl_points *all, const char *config, int batch, int ctx_len)
{
    const rl_point *a = exp07_find(all, DECODE_ATTN, "decode_fused", config, batch, ctx_len),
                   *w = exp07_find(all, WEIGHT_GEMM, NULL, NULL, batch, 0);
    return a && w ? a->seconds / (a->seconds + w->seconds) : NAN;
}

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

static const kernel_family *const FAMILIES[] = {&attention_family, &gemv_family, NULL};

/* ---- --shape: one decode shape, beside ggml's flash attention ----------------------- */

static const char *shape_choice = "";
static const rl_option OPTIONS[] = {
    {"shape", "B,HQ,HKV,D,L", "instead of the sweeps: time the decode of one shape (B sequences, HQ "
     "query heads sharing HKV KV heads of dimension D, a cache of L), fused and materialized, to "
     "compare with ggml's test-backend-ops FLASH_ATTN_EXT; writes no results", NULL, &shape_choice},
    {0},
};
static attn_config shape_config = {"shape", 0, 0, 0};
static int shape_batch, shape_ctx; /* 0: the sweeps */

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

static void declare(rl_ctx *ctx);

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
    .judge = exp07_judge,
    .options = OPTIONS,
    .read_options = read_options,
};

static void describe(rl_ctx *ctx, const exp07_sweep *s)
{
    char b[64], l[64], n[64];
    rl_list_ints(b, sizeof b, s->batches);
    rl_list_ints(l, sizeof l, s->contexts);
    rl_list_ints(n, sizeof n, s->prefill_n);
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
    rl_meta(ctx, "ridge_flop_per_byte", "%.2f (measured: compute roof / DRAM read)", exp07_ridge(ctx));
}

static void declare(rl_ctx *ctx)
{
    if (shape_batch) { /* a side benchmark: its table only */
        printf("\nshape       B = %d, %d query heads, %d KV heads of dimension %d, L = %d\n",
               shape_batch, shape_config.heads_q, shape_config.heads_kv, shape_config.dim, shape_ctx);
        rl_discard_results(ctx);
        exp07_declare_decode(ctx, &shape_config, shape_ctx, (const int[]){shape_batch, 0}, true);
        return;
    }
    exp07_sweep s = exp07_sweep_for(ctx);
    describe(ctx, &s);
    /* the weight GEMM first: the decode rows' share of the step reads its times */
    exp07_declare_weights(ctx, s.batches);
    for (int c = 0; c < NCONFIGS; c++)
        for (const int *L = s.contexts; *L; L++)
            exp07_declare_decode(ctx, &EXP07_CONFIGS[c], *L, s.batches,
                           s.materialized == MATERIALIZED_ALL ||
                               (s.materialized == MATERIALIZED_LLAMA && c == LLAMA_CONFIG));
    for (const int *n = s.prefill_n; *n; n++)
        exp07_declare_prefill(ctx, *n);
}

int main(int argc, char **argv) { return rl_main(&EXP07, argc, argv); }
