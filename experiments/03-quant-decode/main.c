/*
 * Experiment 03 -- quantized size tracks decode speed; prefill does not.
 *
 * Decode reads every weight once per token: memory-bound, its time is the
 * model's size over the bandwidth. Prefill does n tokens of arithmetic per
 * weight read: compute-bound, the format barely matters. The matrices of a
 * Llama-3.1-8B-shaped decoder (model.c) in six formats (kernels/quant.h):
 * every variant in every format is a point, the formats of a variant timed
 * together; the verdicts use each format's best valid variant, as a ratio
 * to the F16 timed with it. See README.md.
 *
 * The run is one part, the model (or --matrix's one matrix): declare plans
 * it and its points, its open() builds the weights and references, and
 * judge (report.c) prints the summaries and the verdicts.
 */
#include "exp03.h"
#include "cpu/quant_dot.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

static const char *layers_choice = "auto";
static const char *matrix_choice = "";

static const rl_option OPTIONS[] = {
    {"layers", "N", "decoder layers (auto: on a GPU 32 with --full, 8, 4 with --quick; on the "
     "CPU the fewest whose q4 weights are 4x the LLC, or a cache-sized model when that exceeds "
     "--max-bytes)", NULL, &layers_choice},
    {"matrix", "ROWSxK", "instead of the model: time the decode of one ROWS x K matrix in every "
     "format (ms per call, GB/s, vs F16), to compare with llama.cpp's test-backend-ops; writes "
     "no results", NULL, &matrix_choice},
    {0},
};

/* ---- the columns ------------------------------------------------------------ */

static double col_tokens_per_s(rl_ctx *c, const rl_point *p) { (void)c; return tps(p); }

/* Decode only: the tokens/s the roof of the weights' level allows. */
static double col_ceiling(rl_ctx *ctx, const rl_point *p)
{
    return RL_DATA(step, p)->v->phase != QUANT_DECODE
               ? NAN : rl_tokens_per_s_ceiling(rl_point_roof_gbps(ctx, p) * 1e9, p->bytes);
}

static int matrix_rows, matrix_k; /* --matrix ROWSxK; 0: the model */

/* The F16 timed with p: in its group; under --matrix, the one F16 point
 * (each format has a group of its own there: declare_points). */
static bool f16_of_group(const rl_point *q, const void *p)
{
    return (matrix_rows || q->group == ((const rl_point *)p)->group) && RL_DATA(step, q)->f == QF_F16;
}

const rl_point *exp03_f16_of(const rl_point *p)
{
    return p ? rl_points_find(RL_DATA(step, p)->all, NULL, f16_of_group, p) : NULL;
}

/* Against F16 in the same group (the same variant, timed with it); under
 * --matrix, against the one F16 point, timed in its own group. */
double exp03_col_rel_tokens_per_s(rl_ctx *ctx, const rl_point *p)
{
    (void)ctx;
    const rl_point *f16 = exp03_f16_of(p);
    return f16 ? f16->seconds / p->seconds : NAN;
}

static bool is_prefill(const rl_point *p) { return RL_DATA(step, p)->v->phase == QUANT_PREFILL; }

double exp03_col_pass_share_model(rl_ctx *ctx, const rl_point *p)
{
    const step *s = RL_DATA(step, p);
    return is_prefill(p) && rl_point_timed(p) ? exp03_model_pass_s(ctx, s->m, s->f) / p->seconds : NAN;
}

double exp03_col_pass_share_over_f16(rl_ctx *ctx, const rl_point *p)
{
    (void)ctx;
    const rl_point *f16 = exp03_f16_of(p);
    return is_prefill(p) && f16 && rl_point_timed(p) ? 1 - f16->seconds / p->seconds : NAN;
}

static const rl_column COLUMNS[] = {
    RL_TEXT("source", NULL, NULL, step, source),
    RL_TEXT("format", NULL, NULL, step, format),
    RL_DOUBLE("bits_per_weight", NULL, NULL, step, bits),
    RL_TEXT("phase", NULL, NULL, step, phase),
    RL_COLUMN_VARIANT,
    RL_COLUMN_NUMBER,
    RL_INT("layers", NULL, NULL, step, layers),
    RL_DOUBLE("params", NULL, NULL, step, params),
    RL_DOUBLE("size_bytes", NULL, NULL, step, size_bytes),
    RL_DOUBLE("size_gib", NULL, NULL, step, size_gib),
    RL_INT("tokens", NULL, NULL, step, tokens),
    {"cache_resident", NULL, NULL, .num = rl_col_cache_resident},
    RL_DOUBLE("rel_size", NULL, NULL, step, rel_size),
    {0},
};

static const rl_column DERIVED[] = {
    {"tokens_per_s", NULL, NULL, .num = col_tokens_per_s},
    {"ceiling_tokens_per_s", NULL, NULL, .num = col_ceiling},
    {"rel_tokens_per_s", NULL, NULL, .num = exp03_col_rel_tokens_per_s},
    {"dequant_share_model", NULL, NULL, .num = exp03_col_pass_share_model},
    {"dequant_share_over_f16", NULL, NULL, .num = exp03_col_pass_share_over_f16},
    {0},
};

static const rl_column TABLE[] = {
    RL_TEXT(NULL, "format", "%-6s", step, format),
    RL_TEXT(NULL, "phase", "%-7s", step, phase),
    {NULL, "variant", "%-13s", .str = rl_col_variant},
    {NULL, "ms/step", "%9.3f", .num = rl_col_time_ms, .measured = true},
    {NULL, "tokens/s", "%10.1f", .num = col_tokens_per_s, .measured = true},
    RL_COLUMN_GBPS,
    RL_COLUMN_LEVEL,
    RL_COLUMN_MBU,
    RL_COLUMN_MFU,
    {NULL, "vs F16", "%7.2f", .num = exp03_col_rel_tokens_per_s, .measured = true},
    {0},
};

static const kernel_family *const FAMILIES[] = {&quant_family, NULL};

static void read_options(rl_ctx *ctx);
static void declare(rl_ctx *ctx);
static void judge(rl_ctx *ctx, const rl_points *all);

static const rl_experiment EXP03 = {
    .id = "03",
    .slug = "03-quant-decode",
    .title = "Quantization: weight size tracks decode speed, not prefill",
    .claim = "Decode reads every weight once per token: memory-bound, so its speed tracks the "
             "bytes of the weights, and size x tokens/s stays near the bandwidth from FP16 down "
             "to ~4.5 bits (falling only where fixed per-step costs show). Prefill is "
             "compute-bound: its speed barely changes with the format.",
    .source = "llama.cpp tools/quantize README, \"Measure\" table (Llama-3.1-8B, llama-bench "
              "pp512 / tg128); ggml's block formats (bits per weight)",
    .prediction = "each format's best valid variant, as a ratio to the F16 timed with it; the "
                  "decode ratios judged where the weights live (DRAM, or the LLC for a "
                  "cache-sized model)",
    .claims = EXP03_CLAIMS,
    .families = FAMILIES,
    .columns = COLUMNS,
    .rates = RL_RATES_BANDWIDTH | RL_RATES_COMPUTE,
    .probes = RL_PROBE_BANDWIDTH | RL_PROBE_COMPUTE,
    .derived = DERIVED,
    .table = TABLE,
    .options = OPTIONS,
    .default_cache = RL_HOT,
    .compare_keys = "source,format,phase,variant",
    .compare_value = "time_us_median",
    .read_options = read_options,
    .declare = declare,
    .judge = judge,
};

/* ---- the options ------------------------------------------------------------------ */

static int layers_given;          /* --layers; 0: auto */

static void read_options(rl_ctx *ctx)
{
    if (matrix_choice[0]) {
        char tail;
        int rows, k;
        if (sscanf(matrix_choice, "%dx%d%c", &rows, &k, &tail) != 2 || rows < 1 ||
            k < QUANT_BLOCK || k % QUANT_BLOCK != 0 || (double)rows * k > 4e9)
            rl_die(RL_EXIT_USAGE, "exp-03: --matrix wants ROWSxK with K a multiple of %d (e.g. "
                   "4096x14336), not '%s'", QUANT_BLOCK, matrix_choice);
        matrix_rows = rows, matrix_k = k;
    } else if (strcmp(layers_choice, "auto") != 0) {
        layers_given = (int)rl_option_number(ctx, "layers", layers_choice, 1, 32, true, "auto");
    }
}

/* ---- the model ---------------------------------------------------------------- */

static void describe_model(rl_ctx *ctx, const model *m, const char *regime)
{
    if (m->mini_rows)
        rl_meta(ctx, "model", "cache-sized: %d x 4096 and %d x 14336 (Llama-3.1-8B's widths)",
                m->mini_rows, m->mini_rows);
    else
        rl_meta(ctx, "model", "Llama-3.1-8B-shaped decoder matrices: %d layer(s) of q, k, v, o "
                "(4096 x 4096, 1024 x 4096 twice, 4096 x 4096), gate, up (14336 x 4096), down "
                "(4096 x 14336)%s", m->layers, m->head ? ", plus the output head (128256 x 4096)"
                : "; no output head");
    rl_meta(ctx, "params", "%.0f (%.3g billion; Llama-3.1-8B's matrices: 32 layers and the head, "
            "7.50 billion)", m->params, m->params / 1e9);
    rl_meta(ctx, "prefill_tokens", "%d", m->prefill_n);
    for (int f = 0; f < QF_COUNT; f++)
        rl_meta(ctx, quant_formats[f].name, "%.6g bits per weight, %.0f bytes, like ggml's %s; %s",
                quant_bits_per_weight((quant_format)f), exp03_model_bytes(m, (quant_format)f),
                quant_formats[f].ggml_peer, quant_formats[f].layout);
    rl_meta(ctx, "validation", "decode: every output of a whole step vs a double-precision "
            "reference, atol 14336 * 2^-20 (integer-dot decode: each output within the bound of "
            "x's 8-bit rounding plus FP32 sums, cpu/quant_dot.h); prefill: the same call on the "
            "first 128 rows of L0.q and 64 of L0.down, every element");
    rl_meta(ctx, "published", "rows with source llama.cpp: the quantize README's table "
            "(results/published/), another machine; not measured here");
    rl_meta(ctx, "regime", "%s", regime);
    printf("\nmodel       %s, %.3g million weights; prefill %d tokens\n", regime, m->params / 1e6,
           m->prefill_n);
}

/* Encoding every format is most of a GPU run's time (about 60 ns per
 * weight on one host core, and as long again for the rest): under
 * --budget, the layers that fit, but never fewer than put the q4 weights
 * at 4x the L2, in device memory, as the claim needs. */
static int fewer_layers_to_fit(const rl_ctx *ctx, int want, double layer_weights)
{
    double per_layer_s = 2 * 2 * 6e-8 * layer_weights / omp_get_max_threads(); /* the host's */
    int least = (int)ceil(4 * ctx->dev->llc_bytes / (layer_weights * quant_bits_per_weight(QF_Q4) / 8));
    int fit = (int)floor(want * rl_budget_fit(ctx, want * per_layer_s));
    int layers = fit > least ? fit : least;
    return layers < want ? layers : want;
}

/* GPU: the whole model where memory allows (a fifth left free; the head's
 * FP16 copy is the scratch), fewer layers in lab and quick runs. CPU: the
 * fewest layers whose q4 weights are 4x the LLC (DRAM) when every format of
 * them fits --max-bytes, else a model whose formats together fit half the
 * LLC (the claim then speaks of the LLC). regime: where they live, and why. */
static void plan_model(rl_ctx *ctx, model *m)
{
    /* llama.cpp's pp512 on the GPU in every mode, and in a full CPU run; a
     * shorter CPU run takes 64 tokens (a 14336 x 4096 x 512 SGEMM per
     * matrix takes a 2-core CPU seconds). */
    int prefill_n = ctx->kind == RL_CPU && ctx->args.mode != RL_MODE_FULL ? 64 : 512;
    char regime[256];
    double layer = 2.0 * HIDDEN * HIDDEN + 2.0 * KV * HIDDEN + 3.0 * FFN * HIDDEN;
    bool gpu = ctx->kind == RL_CUDA;
    if (layers_given) {
        snprintf(regime, sizeof regime, "--layers %d", layers_given);
        exp03_model_plan(m, layers_given, gpu, 0, prefill_n);
    } else if (gpu) {
        int want = fewer_layers_to_fit(ctx, RL_BY_MODE(ctx, 4, 8, 32), layer);
        double head = quant_bytes_all_formats((double)VOCAB * HIDDEN) + 2.0 * VOCAB * HIDDEN +
                      4.0 * VOCAB * prefill_n;
        int fit = (int)((0.8 * ctx->dev->mem_bytes - head) / quant_bytes_all_formats(layer));
        int layers = fit < want ? (fit < 1 ? 1 : fit) : want;
        snprintf(regime, sizeof regime, "device memory: %d layers and the head", layers);
        exp03_model_plan(m, layers, true, 0, prefill_n);
    } else {
        double llc = ctx->dev->llc_bytes;
        int need = (int)ceil(4 * llc / (layer * quant_bits_per_weight(QF_Q4) / 8));
        double total = need * quant_bytes_all_formats(layer);
        char a[32], b[32];
        rl_format_bytes(total, a, sizeof a);
        rl_format_bytes(rl_max_bytes(ctx), b, sizeof b);
        int rows = (int)(0.5 * llc / quant_bytes_all_formats(HIDDEN + FFN)) / 64 * 64;
        bool dram = total <= rl_max_bytes(ctx);
        rows = rows < 64 ? 64 : rows;
        if (dram)
            snprintf(regime, sizeof regime, "DRAM: %d layer(s), the q4 weights at least 4x the "
                     "LLC (%s in all formats)", need, a);
        else
            snprintf(regime, sizeof regime, "the LLC: every format together fits half of it (%d "
                     "rows of 4096 and of 14336); a DRAM-sized model needs %s in all formats, "
                     "over --max-bytes %s", rows, a, b);
        exp03_model_plan(m, dram ? need : 0, false, dram ? 0 : rows, prefill_n);
    }
    describe_model(ctx, m, regime);
}

/* ---- the points ------------------------------------------------------------------ */

/* The model of the run: planned in declare, built when its part opens. */
static model the_model;

/* Binds a point's check to the model's buffers, which exist once its part
 * is open: decode checks the whole step's outputs, prefill the same call on
 * the check rows (a reference of the whole model would take the host
 * minutes). */
static void bind_check(rl_ctx *ctx, rl_point *p)
{
    (void)ctx;
    const step *s = RL_DATA(step, p);
    const model *m = s->m;
    if (s->v->phase == QUANT_DECODE) {
        p->out = m->y;
        p->want = m->ref[s->f];
        p->bound = s->v->quantizes_x ? m->bound[s->f] : NULL;
    } else {
        p->out = m->yval;
        p->want = m->check_ref[s->f];
        p->bound = m->check_bound;
    }
}

/* Every variant that runs here in every format, a group per variant.
 * matrix_only: the decode variants, F16 once, a group per format: each
 * format's matrix timed with its own variants only, as ggml's
 * test-backend-ops times each type, because the six formats interleaved
 * (320 MB at 4096 x 14336) evict one another from an LLC that holds each
 * one alone. */
static void declare_points(rl_ctx *ctx, model *m, bool matrix_only)
{
    /* The verdicts read each format's best decode, the integer one where
     * it runs: the dequantizing decode is then their notes' (optional). */
    bool int8_runs = rl_variant_by_role(ctx, &quant_family, "decode_int8") != NULL;
    int group = 0, declared = 0, format_group[QF_COUNT] = {0};
    for (const quant_variant *v = quant_variants; v->name; v++) {
        bool decode = v->phase == QUANT_DECODE;
        if (!rl_runs(ctx, &quant_family, KERNEL_VARIANT(v)) || (matrix_only && !decode))
            continue;
        if (!matrix_only)
            group = rl_group_new(ctx);
        /* --matrix: F16 is one kernel (gemv_fp16) in every decode variant, declared once */
        for (quant_format f = matrix_only && declared ? QF_Q8 : QF_F16; f < QF_COUNT; f++) {
            if (matrix_only && !format_group[f])
                format_group[f] = rl_group_new(ctx);
            group = matrix_only ? format_group[f] : group;
            double size = exp03_model_bytes(m, f);
            step *s = RL_NEW(ctx, step);
            *s = (step){.source = "measured", .format = quant_formats[f].name,
                        .phase = decode ? "decode" : "prefill", .bits = quant_bits_per_weight(f),
                        .params = m->params, .size_bytes = size, .size_gib = size / 1073741824.0,
                        .rel_size = size / exp03_model_bytes(m, QF_F16), .layers = m->layers,
                        .tokens = decode ? 1 : m->prefill_n, .m = m, .v = v, .f = f,
                        .all = rl_points_all(ctx), .launch = RL_LAUNCHER(ctx, v),
                        .stream = rl_stream(ctx->be)};
            rl_point_add(ctx, &(rl_point){
                .variant = KERNEL_VARIANT(v), .group = group, .run = exp03_run_step, .arg = s,
                RL_POINT_DATA(s), .prepare = bind_check,
                .check_run = decode ? NULL : exp03_run_check, .check_arg = decode ? NULL : s,
                .count = decode ? m->rows_total : m->check_count,
                .atol = gemv_atol(m->widths[0] > m->widths[1] ? m->widths[0] : m->widths[1]),
                .bytes = size, .footprint = size, .pattern = RL_READ,
                .flops = 2.0 * m->params * s->tokens,
                /* prefill's pass of the weights to FP32 before the GEMM (a model) */
                .extra_s = decode ? 0 : exp03_model_pass_s(ctx, m, f),
                .optional = int8_runs && kernel_has_role(KERNEL_VARIANT(v), "decode_dequant")});
            declared++;
        }
    }
}

/* Builds the weights in every format, with their references (host). */
static void open_model(rl_ctx *ctx, void *state)
{
    model *m = state;
    double t0 = rl_now_s();
    exp03_model_build(ctx, m);
    rl_progress_clear();
    if (!matrix_rows)
        printf("built       random FP16 weights, encoded in %d formats, with their references, "
               "in %.1f s (host)\n", QF_COUNT, rl_now_s() - t0);
}

/* Frees the buffers; the model's shape (its weights' count) stays, for judge. */
static void close_model(rl_ctx *ctx, const rl_points *pts, void *state)
{
    (void)pts;
    exp03_model_free(ctx, state);
}

/* ---- --matrix ROWSxK ---------------------------------------------------------------- */

/* The decode of one matrix (n = 1, all threads, the run's --cache) in every
 * format with every decode variant, beside ggml's CPU mat-vec
 * (test-backend-ops perf -o MUL_MAT; README.md): a model of one matrix, its
 * points declared and validated as the model run's. It writes no results. */
static const rl_column MATRIX_TABLE[] = {
    RL_TEXT(NULL, "format", "%-6s", step, format),
    RL_DOUBLE(NULL, "bits/w", "%7.4g", step, bits),
    {NULL, "variant", "%-13s", .str = rl_col_variant},
    {NULL, "ms/call", "%9.3f", .num = rl_col_time_ms, .measured = true},
    RL_COLUMN_GBPS,
    {NULL, "x F16", "%8.2f", .num = exp03_col_rel_tokens_per_s, .measured = true},
    {NULL, "/triad", "%7.2f", .num = rl_col_vs_copy, .measured = true},
    {NULL, "/read", "%7.2f", .num = rl_col_vs_dram_read, .measured = true},
    {NULL, "max |err| (bound: int8)", "%9.2g", .num = rl_col_max_abs_err},
    {0},
};

/* After its table: how the weights compare with the last-level cache. */
static void close_matrix(rl_ctx *ctx, const rl_points *pts, void *state)
{
    const model *m = state;
    printf("\n  weights: %.0f MiB in F16, %.0f MiB in q4; the last-level cache holds %.0f MiB%s\n",
           exp03_model_bytes(m, QF_F16) / 1048576, exp03_model_bytes(m, QF_Q4) / 1048576,
           ctx->dev->llc_bytes / 1048576, rl_beyond_cache(ctx, exp03_model_bytes(m, QF_Q2)) ? "" :
           " (some formats run from cache)");
    close_model(ctx, pts, state);
}

static void plan_matrix(rl_ctx *ctx, model *m)
{
    printf("\nmatrix      %d x %d, n = 1, %s, %d threads, integer dot products: %s\n", matrix_rows,
           matrix_k, ctx->args.cache == RL_HOT ? "hot" : "cold", omp_get_max_threads(),
           quant_isa_name(quant_isa_best()));
    fflush(stdout);
    exp03_model_plan_matrix(m, matrix_rows, matrix_k);
}

/* ---- declare and judge ------------------------------------------------------------- */

/* One part: the model (or --matrix's matrix), built when it opens. The
 * plan: building it (its time per weight on one host core; the GPU's
 * upload adds about as much again, fewer_layers_to_fit; the README beside
 * this file, "The model", has a run's figure), then its points. */
static void declare(rl_ctx *ctx)
{
    model *m = &the_model;
    bool matrix_only = matrix_rows > 0;
    if (matrix_only) {
        /* every format's decode shape, on this machine: for DRAM, or for the hot matrix */
        bool hot = ctx->args.cache == RL_HOT;
        rl_tune_decode_cpu_at(ctx, true, hot ? matrix_rows : 0, matrix_k);
        plan_matrix(ctx, m);
        rl_discard_results(ctx); /* a side benchmark: its table only, no probes */
    } else {
        plan_model(ctx, m);
        /* a cache-sized model is tuned hot, on one K = 14336 matrix of its
         * bytes (its rows x 4096 and rows x 14336): where the weights live
         * decides the shape (harness/tune_decode.c); a DRAM-sized one from DRAM */
        int rows = m->mini_rows ? (int)((double)m->mini_rows * (HIDDEN + FFN) / FFN) : 0;
        rl_tune_decode_cpu_at(ctx, true, rows, FFN);
    }
    double per_weight_s = ctx->kind == RL_CPU ? 4e-8 : 2 * 6e-8; /* encoded in place on the CPU */
    rl_plan_fixed(ctx, per_weight_s * m->params / (ctx->dev->threads > 0 ? ctx->dev->threads : 1));
    rl_part_add(ctx, &(rl_part){.open = open_model, .state = m,
                                .done = matrix_only ? close_matrix : close_model,
                                .table = matrix_only ? MATRIX_TABLE : NULL});
    declare_points(ctx, m, matrix_only);
}

/* The published rows, the summary tables and the verdicts (report.c). */
static void judge(rl_ctx *ctx, const rl_points *all) { exp03_report(ctx, all, &the_model); }

int main(int argc, char **argv) { return rl_main(&EXP03, argc, argv); }
