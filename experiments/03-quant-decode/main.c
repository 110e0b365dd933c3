/*
 * Experiment 03 -- quantized size tracks decode speed; prefill does not.
 *
 * Decode reads every weight once per token, so on a memory-bound machine
 * its time is the model's size over the bandwidth: halve the bits per
 * weight and decode runs twice as fast, and size x tokens/s (bytes per
 * second) stays near the bandwidth until fixed per-step costs show. Prefill
 * does n tokens of arithmetic per weight read: compute-bound, so the
 * format barely matters there.
 *
 * Method: the weight matrices of a Llama-3.1-8B-shaped decoder (fewer
 * layers on the CPU and in --quick) with random FP16 weights, encoded in
 * six formats of 16 down to 2.625 bits per weight (kernels/quant.h). Each
 * format's decode step and prefill step is validated against a double-
 * precision reference, then the formats are timed together, interleaved.
 * See README.md.
 */
#include "exp03.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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

static const char *const COLUMNS[] = {
    "source", "format", "bits_per_weight", "phase", "variant", "number", "layers", "params",
    "size_bytes", "size_gib", "tokens", "cache_resident", RL_MEASUREMENT_COLUMNS, "tokens_per_s",
    "gbps", "ceiling_tokens_per_s", "mbu", RL_ROOF_COLUMNS, "mbu_datasheet", "tflops", "mfu", "rel_size",
    "rel_tokens_per_s", "validated", "max_abs_err", "skipped_reason", NULL};

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
    .prediction = "decode speedup F16 -> 4.5 bpw >= 2.5x (bytes: 3.56x); size x decode within "
                  "+-15 % of F16's from 8.5 to 4.5 bpw; prefill tokens/s within +-25 % of F16's "
                  "in every format",
    .columns = COLUMNS,
    .options = OPTIONS,
    .default_cache = RL_HOT,
    .compare_keys = "source,format,phase",
    .compare_value = "time_us_median",
};

/* ---- the model's size ------------------------------------------------------- */

/* Device bytes of params weights in every format together. */
static double all_formats_bytes(double params)
{
    double bits = 0;
    for (int f = 0; f < QF_COUNT; f++)
        bits += quant_bits_per_weight((quant_format)f);
    return params * bits / 8;
}

static double layer_params(void) { return 2.0 * HIDDEN * HIDDEN + 2.0 * KV * HIDDEN + 3.0 * FFN * HIDDEN; }

typedef struct model_size {
    int layers, mini_rows;
    bool head;
    char regime[256]; /* where the weights live, and why */
} model_size;

static int explicit_layers(void)
{
    char *end;
    long v = strtol(layers_choice, &end, 10);
    if (*end || v < 1 || v > 32)
        rl_die(RL_EXIT_USAGE, "exp-03: --layers wants 1..32 or auto, not '%s'", layers_choice);
    return (int)v;
}

/* GPU: the whole model where memory allows (a fifth left free; the
 * head's FP16 copy is the scratch); fewer layers in lab and quick runs,
 * still far beyond the L2. */
static int gpu_layers(const rl_ctx *ctx, bool head, int prefill_n)
{
    int want = ctx->args.mode == RL_MODE_QUICK ? 4 : ctx->args.mode == RL_MODE_LAB ? 8 : 32;
    double fixed = head ? all_formats_bytes((double)VOCAB * HIDDEN) + 2.0 * VOCAB * HIDDEN +
                              4.0 * VOCAB * prefill_n : 0;
    int fit = (int)((0.8 * ctx->dev->mem_bytes - fixed) / all_formats_bytes(layer_params()));
    return fit < want ? (fit < 1 ? 1 : fit) : want;
}

/* CPU: decode's claim is about memory, so the model is judged where its
 * weights live. With the fewest layers whose q4 weights are 4x the LLC,
 * when every format of them fits --max-bytes: DRAM. Otherwise (a large LLC,
 * a quick run) a model whose formats together fit half the LLC: the LLC,
 * whose bandwidth the same claim then speaks of. */
static model_size choose_size(const rl_ctx *ctx, int prefill_n)
{
    model_size z = {.head = ctx->kind == RL_CUDA};
    double llc = ctx->dev->llc_bytes;
    char a[32], b[32];
    if (strcmp(layers_choice, "auto") != 0) {
        z.layers = explicit_layers();
        snprintf(z.regime, sizeof z.regime, "--layers %d", z.layers);
        return z;
    }
    if (ctx->kind == RL_CUDA) {
        z.layers = gpu_layers(ctx, z.head, prefill_n);
        snprintf(z.regime, sizeof z.regime, "device memory: %d layers and the head", z.layers);
        return z;
    }
    int need = (int)ceil(4 * llc / (layer_params() * quant_bits_per_weight(QF_Q4) / 8));
    double total = need * all_formats_bytes(layer_params());
    rl_format_bytes(total, a, sizeof a);
    if (total <= rl_max_bytes(ctx)) {
        z.layers = need;
        snprintf(z.regime, sizeof z.regime, "DRAM: %d layer(s), the q4 weights at least 4x the LLC "
                 "(%s in all formats)", need, a);
        return z;
    }
    int rows = (int)(0.5 * llc / all_formats_bytes(HIDDEN + FFN)) / 64 * 64;
    z.mini_rows = rows < 64 ? 64 : rows;
    rl_format_bytes(rl_max_bytes(ctx), b, sizeof b);
    snprintf(z.regime, sizeof z.regime, "the LLC: every format together fits half of it (%d rows of "
             "4096 and of 14336); a DRAM-sized model needs %s in all formats, over --max-bytes %s",
             z.mini_rows, a, b);
    return z;
}

/* ---- validate, then time ------------------------------------------------------ */

typedef struct call { const quant_variant *v; quant_args a; } call;

static void launch_call(void *p)
{
    call *c = p;
    c->v->launch(&c->a);
}

static void fail(rl_ctx *ctx, result *x, const rl_check *c)
{
    x->ok = false;
    rl_check_describe(c, x->why, sizeof x->why);
    fprintf(stderr, "exp-03: %s %s: %s\n", x->v->name, quant_formats[x->f].name, x->why);
    ctx->failures++;
}

/* Decode: one whole step, every output of every matrix. Prefill: the same
 * call on the first rows of two matrices (a full double-precision
 * reference of n tokens through the model would take the host minutes). */
static void validate(rl_ctx *ctx, model *m, result *x)
{
    x->ok = true;
    if (x->phase == QUANT_DECODE) {
        /* x rounded to 8 bits first: each output within its own bound */
        rl_check c = x->v->quantizes_x
                         ? rl_validate_f32_bound(ctx->be, run_step, &x->step, m->y, m->rows_total,
                                                 m->ref[x->f], m->bound[x->f])
                         : rl_validate_f32(ctx->be, run_step, &x->step, m->y, m->rows_total,
                                           m->ref[x->f], gemv_atol(FFN), 0);
        x->max_abs_err = c.max_abs_err;
        if (!c.ok)
            fail(ctx, x, &c);
        return;
    }
    for (int i = 0; i < 2 && x->ok; i++) {
        const matrix *mat = m->check_mat[i];
        call c = {x->v, {x->f, m->yval, (const char *)m->w[x->f] + mat->w_offset * quant_formats[x->f].block_bytes,
                         model_input(m, mat->k, true), m->check_rows[i], mat->k, m->prefill_n,
                         m->scratch, rl_stream(ctx->be)}};
        rl_check chk = rl_validate_f32(ctx->be, launch_call, &c, m->yval,
                                       (size_t)m->check_rows[i] * m->prefill_n, m->check_ref[i][x->f],
                                       gemv_atol(mat->k), 0);
        x->max_abs_err = fmax(x->max_abs_err, chk.max_abs_err);
        if (!chk.ok)
            fail(ctx, x, &chk);
    }
}

/* Several variants of one phase (the CPU's dequantizing and integer-dot
 * decodes): each format keeps its fastest valid one, which the rows, the
 * tables and the verdicts then use. */
static void keep_faster(result *kept, const result *x)
{
    bool better = !kept->v || (x->ok && (!kept->ok || x->seconds < kept->seconds));
    if (better)
        *kept = *x;
}

static void measure_phase(report *r, model *m, const quant_variant *v)
{
    rl_ctx *ctx = r->ctx;
    rl_work works[QF_COUNT];
    result *members[QF_COUNT], res[QF_COUNT];
    rl_measurement out[QF_COUNT];
    int count = 0;
    for (int f = 0; f < QF_COUNT; f++) {
        result *x = &res[f];
        *x = (result){.f = (quant_format)f, .phase = v->phase, .v = v,
                      .step = {m, v, (quant_format)f, rl_stream(ctx->be)}};
        validate(ctx, m, x);
        if (x->ok) {
            members[count] = x;
            works[count++] = (rl_work){quant_formats[f].name, run_step, &x->step};
        }
    }
    rl_progress_step(ctx, "%s, %d formats interleaved", v->phase == QUANT_DECODE ? "decode" : "prefill", count);
    if (count)
        rl_measure_group(ctx, works, count, out);
    for (int i = 0; i < count; i++) {
        members[i]->m = out[i];
        members[i]->seconds = out[i].stats.median;
    }
    for (int f = 0; f < QF_COUNT; f++) {
        keep_faster(&r->res[v->phase][f], &res[f]);
        r->res[v->phase][f].step.m = m; /* the kept copy times the same step */
    }
    rl_progress_clear();
}

/* ---- main ------------------------------------------------------------------------ */

static const quant_variant *table_for(rl_backend_kind kind)
{
#ifdef RL_HAVE_CUDA
    if (kind == RL_CUDA)
        return quant_cuda_variants;
#endif
    (void)kind;
    return quant_cpu_variants;
}

static void describe_model(rl_ctx *ctx, const model *m)
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
                quant_bits_per_weight((quant_format)f), model_bytes(m, (quant_format)f),
                quant_formats[f].ggml_peer, quant_formats[f].layout);
    rl_meta(ctx, "validation", "decode: every output of a whole step vs a double-precision "
            "reference, atol 14336 * 2^-20 (integer-dot decode: each output within the bound of "
            "x's 8-bit rounding plus FP32 sums, cpu/quant_dot.h); prefill: the same call on the "
            "first 128 rows of L0.q and 64 of L0.down, every element");
    rl_meta(ctx, "published", "rows with source llama.cpp: the quantize README's table "
            "(results/published/), another machine; not measured here");
}

/* The plan: building (encoding every format and the double-precision
 * references: about 60 ns per weight on one core of a server CPU, a
 * measured rate, not a model of anything), then one group per phase. */
static void plan(report *r, const quant_variant *table)
{
    rl_ctx *ctx = r->ctx;
    const model *m = r->m;
    rl_plan_fixed(ctx, 6e-8 * m->params / (ctx->dev->threads > 0 ? ctx->dev->threads : 1) * 2);
    for (const quant_variant *v = table; v->name; v++) {
        if (!rl_variant_selected(ctx, v->number, v->name))
            continue;
        int n = v->phase == QUANT_DECODE ? 1 : m->prefill_n;
        double call_s = 0;
        for (int f = 0; f < QF_COUNT; f++)
            call_s = fmax(call_s, rl_estimate_call_s(ctx, model_bytes(m, (quant_format)f),
                          model_bytes(m, (quant_format)f), RL_READ, 2.0 * m->params * n));
        rl_plan_group(ctx, QF_COUNT, call_s);
    }
    rl_plan_print(ctx);
}

static void check_variants(rl_ctx *ctx, const quant_variant *table)
{
    int numbers[32], n = 0;
    const char *names[32];
    for (const quant_variant *v = table; v->name && n < 32; v++, n++) {
        numbers[n] = v->number;
        names[n] = v->name;
    }
    rl_check_variants(ctx, numbers, names, n);
}

int main(int argc, char **argv)
{
    rl_ctx *ctx = rl_begin(&EXP03, argc, argv);
    const quant_variant *table = table_for(ctx->kind);
    check_variants(ctx, table);
    if (ctx->args.list) {
        printf("variants of kernels/%s (every format):\n", ctx->kind == RL_CUDA ? "quant.cu" : "cpu/quant.c");
        for (const quant_variant *v = table; v->name; v++)
            if (v->launch) /* NULL: not on this backend */
                rl_list_variant(v->number, v->name, v->what);
        return rl_end(ctx);
    }
    if (matrix_choice[0])
        return run_matrix(ctx, table, matrix_choice);
    int prefill_n = ctx->kind == RL_CPU && ctx->args.mode != RL_MODE_FULL ? 64 : 512;
    model_size size = choose_size(ctx, prefill_n); /* a bad --layers exits here, early */
    report *r = calloc(1, sizeof *r);
    r->ctx = ctx;
    r->ceil = rl_ceilings_get(ctx);
    model m;
    if (size.mini_rows)
        model_plan_mini(&m, size.mini_rows, prefill_n);
    else
        model_plan(&m, size.layers, size.head, prefill_n);
    r->m = &m;
    describe_model(ctx, &m);
    rl_meta(ctx, "regime", "%s", size.regime);
    printf("\nmodel       %s, %.3g million weights; prefill %d tokens\n", size.regime,
           m.params / 1e6, m.prefill_n);
    plan(r, table);
    double t0 = rl_now_s();
    model_build(ctx, &m, table);
    rl_progress_clear();
    printf("built       random FP16 weights, encoded in %d formats, with their references, "
           "in %.1f s (host)\n", QF_COUNT, rl_now_s() - t0);

    for (const quant_variant *v = table; v->name; v++)
        if (v->launch && rl_variant_selected(ctx, v->number, v->name))
            measure_phase(r, &m, v);
    write_rows(r);
    write_published_rows(r);
    print_tables(r);
    judge(r);
    model_free(ctx, &m);
    free(r);
    return rl_end(ctx);
}
