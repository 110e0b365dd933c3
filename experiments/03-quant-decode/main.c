/*
 * Experiment 03 -- quantized size tracks decode speed; prefill does not.
 *
 * Decode reads every weight once per token: memory-bound, its time is the
 * model's size over the bandwidth. Prefill does n tokens of arithmetic per
 * weight read: compute-bound, the format barely matters. The matrices of a
 * Llama-3.1-8B-shaped decoder (model.c) in six formats (kernels/quant.h):
 * every variant in every format is a point, the formats of a variant timed
 * together; the verdicts use each format's best valid variant, as a ratio
 * to the F16 timed with it (report.c). See README.md.
 *
 * The file reads top to bottom: the claims, the axes (the formats, the
 * prefill's tokens, a GPU's layers), the points (one step of one variant
 * in one format, in one part: the model, built when it opens), the
 * judgement (its decode and prefill verdicts in judge.c, the batch part's
 * in batch.c), and last the columns and the experiment.
 */
#include "exp03.h"
#include "cpu/quant_dot.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

/* ---- the claims ------------------------------------------------------------------- */

enum { DECODE_SPEEDUP, SIZE_X_DECODE, PREFILL_FLAT, BATCH_SMALL, BATCH_BEND };

static const rl_claim CLAIMS[] = {
    /* Both decode claims are about bytes: judged where the points compared
     * read near their group's roof, and where no format beats its bytes
     * over F16 (README, Tolerances). The speedup, a lower bound: F16 at
     * least 0.7 of its roof, else a slow baseline could make it hold; q4
     * too, for it to fail. */
    [DECODE_SPEEDUP] = {"decode_speedup_q4", "decode speedup, F16 -> 4.5 bits (q4)", 2.5, INFINITY,
                        "x", 2, .predicted_text = ">= 2.5x (bytes: 3.56x)", .premise_mbu = 0.7},
    /* The worst format's deviation from F16, in %. Flat within 15 % can
     * only be judged on points within 15 % of their roof: below 0.85, a
     * format's instructions alone take more than the tolerance. */
    [SIZE_X_DECODE] = {"size_x_decode_flat", "size x decode rate, 8.5 to 4.5 bits, vs F16", -15, 15,
                       "%", 0, .predicted_text = "within +-15 %", .premise_mbu = 0.85},
    [PREFILL_FLAT] = {"prefill_flat", "prefill tokens/s, every format, vs F16", -25, 25, "%", 0,
                      .predicted_text = "within +-25 %"},
    /* The batch part (batch.c): past one token, while both steps read
     * their roof, q4's speedup is still about its bytes', as at decode;
     * then it falls where the roofline says, within one step of the
     * sweep's doubling M. */
    [BATCH_SMALL] = {"batch_speedup_small_q4", "batch: q4 over F16 at the smallest M past 1",
                     2.5, INFINITY, "x", 2, .predicted_text = ">= 2.5x (bytes: 3.56x)",
                     .premise_mbu = 0.7},
    [BATCH_BEND] = {"batch_bend_q4", "batch: M where q4's speedup falls, measured over the model",
                    0.5, 2, "x", 2, .predicted_text = "0.5x to 2x (one step of M)",
                    .premise_mbu = 0.7},
    {0},
};

/* ---- the axes --------------------------------------------------------------------- */

/* Every format in every mode, F16 first: the unit of every ratio. */
static const rl_axis FORMAT = RL_AXIS("format", RL_LIST(QF_F16, QF_Q8, QF_Q6, QF_Q5, QF_Q4, QF_Q2),
                                      RL_LIST(QF_F16, QF_Q8, QF_Q6, QF_Q5, QF_Q4, QF_Q2),
                                      RL_LIST(QF_F16, QF_Q8, QF_Q6, QF_Q5, QF_Q4, QF_Q2));
static const rl_axis *const AXES[] = {&FORMAT, NULL};

/* The prefill's tokens: llama.cpp's pp512 on the GPU in every mode, and in
 * a full CPU run; a shorter CPU run takes 64 (a 14336 x 4096 x 512 SGEMM
 * per matrix takes a 2-core CPU seconds). */
static const rl_axis GPU_PREFILL_TOKENS = RL_AXIS("tokens", RL_LIST(512), RL_LIST(512),
                                                  RL_LIST(512));
static const rl_axis PREFILL_TOKENS = RL_AXIS("tokens", RL_LIST(64), RL_LIST(64), RL_LIST(512),
                                              .gpu = &GPU_PREFILL_TOKENS);
/* A GPU's decoder layers, where its memory allows: the whole model (32) in
 * a full run, fewer in lab and quick runs. The CPU's follow from its LLC
 * (model.c); --layers overrides both. */
static const rl_axis GPU_LAYERS = RL_AXIS("layers", RL_LIST(4), RL_LIST(8), RL_LIST(32));

static const char *layers_choice = "auto";
static const char *matrix_choice = "";
static const char *tokens_choice = "";

static const rl_option OPTIONS[] = {
    {"layers", "N", "decoder layers (auto: on a GPU 32 with --full, 8, 4 with --quick; on the "
     "CPU the fewest whose q4 weights are 4x the LLC, or a cache-sized model when that exceeds "
     "--max-bytes)", NULL, &layers_choice},
    {"matrix", "ROWSxK", "instead of the model: time the decode of one ROWS x K matrix in every "
     "format (ms per call, GB/s, vs F16), to compare with llama.cpp's test-backend-ops; writes "
     "no results", NULL, &matrix_choice},
    {"tokens", "LIST", "with --matrix: time the batch kernels (F16 and every format) at these "
     "tokens per call instead of the decode, e.g. 1,2,4,8,16 (ascending, at most 512; make "
     "peer-ggml-batch)", NULL, &tokens_choice},
    {0},
};

static int layers_given;          /* --layers; 0: auto */
static int matrix_rows, matrix_k; /* --matrix ROWSxK; 0: the model */
static int matrix_tokens[EXP03_MOST_TOKEN_COUNTS], matrix_token_counts; /* --tokens; 0: decode */

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
        matrix_token_counts = exp03_batch_tokens_parse(tokens_choice, matrix_tokens);
        if (matrix_token_counts < 0)
            rl_die(RL_EXIT_USAGE, "exp-03: --tokens wants at most %d ascending counts of 1 to %d, "
                   "comma-separated (e.g. 1,2,4,8,16), not '%s'", EXP03_MOST_TOKEN_COUNTS,
                   EXP03_MOST_TOKENS, tokens_choice);
    } else if (tokens_choice[0]) {
        rl_die(RL_EXIT_USAGE, "exp-03: --tokens goes with --matrix (the model's batch part has "
               "its own axis)");
    } else if (strcmp(layers_choice, "auto") != 0) {
        layers_given = (int)rl_option_number(ctx, "layers", layers_choice, 1, 32, true, "auto");
    }
}

/* ---- the points: one step of one variant in one format ------------------------------ */

/* The model of the run: planned in declare, built when its part opens. */
static model the_model;

/* What the points of one variant share: the sweep's state. */
typedef struct variant_points {
    model *m;
    const quant_variant *v;
    int group;         /* its formats, timed together; --matrix: each format's own */
    bool optional;
    int *format_group; /* --matrix: each format's group, made at its first point */
    int *declared;     /* points so far: --matrix declares F16 once */
} variant_points;

/* The variant's step in one format. */
static void format_point(rl_ctx *ctx, const rl_at *at, void *state)
{
    variant_points *vp = state;
    quant_format f = (quant_format)rl_at_int(at, &FORMAT);
    model *m = vp->m;
    int group = vp->group;
    if (m->one_matrix) {
        /* F16 is one kernel (gemv_fp16) in every decode variant: declared once */
        if (f == QF_F16 && *vp->declared)
            return;
        if (!vp->format_group[f])
            vp->format_group[f] = rl_group_new(ctx);
        group = vp->format_group[f];
    }
    bool decode = vp->v->phase == QUANT_DECODE;
    step *s = exp03_step_new(ctx, m, vp->v, f, decode ? 1 : m->prefill_n);
    rl_point_add(ctx, &(rl_point){
        .variant = KERNEL_VARIANT(vp->v), .group = group, .run = exp03_run_step, .arg = s,
        RL_POINT_DATA(s), .prepare = exp03_bind_check,
        .check_run = decode ? NULL : exp03_run_check, .check_arg = decode ? NULL : s,
        .count = decode ? m->rows_total : m->check_count,
        .atol = gemv_atol(m->widths[0] > m->widths[1] ? m->widths[0] : m->widths[1]),
        .bytes = s->size_bytes, .footprint = s->size_bytes, .pattern = RL_READ,
        .flops = 2.0 * m->params * s->tokens,
        .integer_flops = decode && vp->v->quantizes_x && f != QF_F16,
        /* prefill's pass of the weights to FP32 before the GEMM (a model) */
        .extra_s = decode ? 0 : exp03_model_pass_s(ctx, m, f), .optional = vp->optional});
    (*vp->declared)++;
}

/* Every variant that runs here in every format, a group per variant.
 * --matrix: the decode variants, F16 once, a group per format: each
 * format's matrix timed with its own variants only, as ggml's
 * test-backend-ops times each type, because the six formats interleaved
 * (320 MB at 4096 x 14336) evict one another from an LLC that holds each
 * one alone. */
static void declare_points(rl_ctx *ctx, model *m)
{
    /* The verdicts read each format's best decode, the integer one where
     * it runs: the dequantizing decode is then their notes' (optional). */
    bool int8_runs = rl_variant_by_role(ctx, &quant_family, "decode_int8") != NULL;
    int format_group[QF_COUNT] = {0}, declared = 0;
    for (const quant_variant *v = quant_variants; v->name; v++) {
        if (!rl_runs(ctx, &quant_family, KERNEL_VARIANT(v)) || v->phase == QUANT_BATCH ||
            (m->one_matrix && (v->phase != QUANT_DECODE || m->batch_n)))
            continue;
        variant_points vp = {m, v, m->one_matrix ? 0 : rl_group_new(ctx),
                             int8_runs && kernel_has_role(KERNEL_VARIANT(v), "decode_dequant"),
                             format_group, &declared};
        rl_sweep_declare(ctx, &(rl_sweep){AXES, .points = format_point, .state = &vp});
    }
}

/* Builds the weights in every format, with their references (host). */
static void open_model(rl_ctx *ctx, void *state)
{
    model *m = state;
    double t0 = rl_now_s();
    exp03_model_build(ctx, m);
    rl_progress_clear();
    if (!m->one_matrix)
        printf("built       random FP16 weights, encoded in %d formats, with their references, "
               "in %.1f s (host)\n", QF_COUNT, rl_now_s() - t0);
}

/* Frees the buffers; the model's shape (its weights' count) stays, for judge. */
static void close_model(rl_ctx *ctx, const rl_points *pts, void *state)
{
    (void)pts;
    exp03_model_free(ctx, state);
}

/* --matrix ROWSxK: the decode of one matrix (n = 1, all threads, the run's
 * --cache) in every format with every decode variant, beside ggml's CPU
 * mat-vec (test-backend-ops perf -o MUL_MAT; README.md): a model of one
 * matrix, its points declared and validated as the model run's. It writes
 * no results: its table is its own. */
static const rl_column MATRIX_TABLE[] = {
    RL_TEXT(NULL, "format", "%-6s", step, format),
    RL_DOUBLE(NULL, "bits/w", "%7.4g", step, bits),
    RL_INT(NULL, "n", "%4d", step, tokens),
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

/* Every format's decode shape is tuned on this machine, for DRAM or for
 * the hot matrix; a side benchmark: its table only, no probes. */
static void plan_matrix(rl_ctx *ctx, model *m)
{
    bool hot = ctx->args.cache == RL_HOT;
    rl_tune_decode_cpu_at(ctx, true, hot ? matrix_rows : 0, matrix_k);
    printf("\nmatrix      %d x %d, n = %s, %s, %d threads, integer dot products: %s\n", matrix_rows,
           matrix_k, matrix_token_counts ? tokens_choice : "1", hot ? "hot" : "cold",
           omp_get_max_threads(), quant_isa_name(quant_isa_best()));
    fflush(stdout);
    exp03_model_plan_matrix(m, matrix_rows, matrix_k,
                            matrix_token_counts ? matrix_tokens[matrix_token_counts - 1] : 0);
    rl_discard_results(ctx);
}

/* The model of this run (model.c). A cache-sized model is tuned hot, on
 * one K = 14336 matrix of its bytes (its rows x 4096 and rows x 14336):
 * where the weights live decides the shape (harness/tune_decode.c); a
 * DRAM-sized one from DRAM. */
static void plan_model(rl_ctx *ctx, model *m)
{
    exp03_model_plan_run(ctx, m, layers_given, (int)rl_axis_first(ctx, &GPU_LAYERS),
                         (int)rl_axis_first(ctx, &PREFILL_TOKENS));
    exp03_model_plan_batch(m, exp03_batch_most_tokens(ctx));
    int rows = m->mini_rows ? (int)((double)m->mini_rows * (HIDDEN + FFN) / FFN) : 0;
    rl_tune_decode_cpu_at(ctx, true, rows, FFN);
}

/* One part: the model (or --matrix's matrix), built when it opens. The
 * plan: building it (its time per weight on one host core; the GPU's
 * upload adds about as much again, model.c's fewer_layers_to_fit; the
 * README beside this file, "The model", has a run's figure), then its
 * points. */
static void declare(rl_ctx *ctx)
{
    model *m = &the_model;
    if (matrix_rows)
        plan_matrix(ctx, m);
    else
        plan_model(ctx, m);
    double per_weight_s = ctx->kind == RL_CPU ? 4e-8 : 2 * 6e-8; /* encoded in place on the CPU */
    rl_plan_fixed(ctx, per_weight_s * m->params / (ctx->dev->threads > 0 ? ctx->dev->threads : 1));
    rl_part_add(ctx, &(rl_part){.open = open_model, .state = m,
                                .done = m->one_matrix ? close_matrix : close_model,
                                .table = m->one_matrix ? MATRIX_TABLE : NULL});
    declare_points(ctx, m);
    if (!matrix_token_counts)
        exp03_batch_declare(ctx, m);
    else if (!exp03_batch_declare_matrix(ctx, m, matrix_tokens, matrix_token_counts))
        rl_die(RL_EXIT_USAGE, "exp-03: --tokens needs the batch kernel (gemm_int8), which %s",
               ctx->kind == RL_CUDA ? "the GPU does not have yet (--backend cpu)"
                                    : "--variant left out");
}

/* ---- the judgement ------------------------------------------------------------------- */

/* The published rows and the summary tables (report.c), then the ratios
 * between formats, each against the F16 point timed with it, judged
 * wherever the weights live (DRAM, or the LLC of a cache-sized model: the
 * same claim about that level's bandwidth); the note says where. */
static void judge(rl_ctx *ctx, const rl_points *all)
{
    exp03_summarize(ctx, all, &the_model);
    char decode[800];
    exp03_decode_note(ctx, all, &the_model, decode, sizeof decode);
    exp03_judge_decode_speedup(ctx, all, &CLAIMS[DECODE_SPEEDUP], decode);
    exp03_judge_size_x_decode(ctx, all, &CLAIMS[SIZE_X_DECODE], decode);
    exp03_judge_prefill_flat(ctx, all, &CLAIMS[PREFILL_FLAT]);
    exp03_batch_judge_small(ctx, all, &CLAIMS[BATCH_SMALL]);
    exp03_batch_judge_bend(ctx, all, &CLAIMS[BATCH_BEND]);
}

/* ---- the columns ------------------------------------------------------------------- */

static double col_tokens_per_s(rl_ctx *c, const rl_point *p) { (void)c; return tps(p); }

/* Decode only: the tokens/s the roof of the weights' level allows. */
static double col_ceiling(rl_ctx *ctx, const rl_point *p)
{
    return RL_DATA(step, p)->part != QUANT_DECODE
               ? NAN : rl_tokens_per_s_ceiling(rl_point_roof_gbps(ctx, p) * 1e9, p->bytes);
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
    {"speedup_model", NULL, NULL, .num = exp03_col_batch_model},
    {0},
};

static const rl_column TABLE[] = {
    RL_TEXT(NULL, "format", "%-6s", step, format),
    RL_TEXT(NULL, "phase", "%-7s", step, phase),
    RL_INT(NULL, "M", "%4d", step, tokens),
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

/* ---- the experiment ----------------------------------------------------------------- */

static const kernel_family *const FAMILIES[] = {&quant_family, NULL};

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
    .claims = CLAIMS,
    .families = FAMILIES,
    .columns = COLUMNS,
    .rates = RL_RATES_BANDWIDTH | RL_RATES_COMPUTE,
    .probes = RL_PROBE_BANDWIDTH | RL_PROBE_COMPUTE,
    .derived = DERIVED,
    .table = TABLE,
    .options = OPTIONS,
    .default_cache = RL_HOT,
    .compare_keys = "source,format,phase,variant,tokens",
    .compare_value = "time_us_median",
    .read_options = read_options,
    .declare = declare,
    .judge = judge,
};

int main(int argc, char **argv) { return rl_main(&EXP03, argc, argv); }
