/*
 * model.c -- experiment 03's synthetic model: the weight matrices of a
 * Llama-3.1-8B-shaped decoder, random FP16 weights encoded in every format,
 * and one step through them. Nothing flows between the matrices: the claim
 * is about the bytes of weights a step reads, and those are all here.
 */
#include "exp03.h"
#include "cpu/quant_dot.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void add_matrix(model *m, const char *name, int layer, int rows, int k)
{
    matrix *x = &m->mats[m->nmat++];
    *x = (matrix){.rows = rows, .k = k, .w_offset = (size_t)(m->params / QUANT_BLOCK),
                  .y_offset = m->rows_total};
    if (layer >= 0)
        snprintf(x->name, sizeof x->name, "L%d.%s", layer, name);
    else
        snprintf(x->name, sizeof x->name, "%s", name);
    m->rows_total += (size_t)rows;
    m->params += (double)rows * k;
    m->max_rows = rows > m->max_rows ? rows : m->max_rows;
}

/* layers 0 and mini_rows: a model sized for the last-level cache, one matrix
 * of each width, rows x 4096 ("up") and rows x 14336 ("down"), every format
 * of it small enough to stay in the cache together while they take turns. */
void exp03_model_plan(model *m, int layers, bool head, int mini_rows, int prefill_n)
{
    /* A layer's seven projections as an engine runs them: q, k and v one
     * matrix of their rows (they read the same x), gate and up another (as
     * llama.cpp and vLLM fuse them). The bytes are the same; the launches,
     * four a layer, are what a decode step of small matrices would
     * otherwise be timed on (a GPU's k and v of a 4.5-bit model are half a
     * microsecond of its bandwidth, under a launch: kernels/README.md). */
    static const struct { const char *name; int rows, k; } LAYER[LAYER_MATRICES] = {
        {"qkv", HIDDEN + 2 * KV, HIDDEN}, {"o", HIDDEN, HIDDEN}, {"gate_up", 2 * FFN, HIDDEN},
        {"down", HIDDEN, FFN}};
    *m = (model){.layers = layers, .head = head, .mini_rows = mini_rows, .prefill_n = prefill_n,
                 .widths = {HIDDEN, FFN}};
    m->mats = calloc((size_t)layers * LAYER_MATRICES + 2, sizeof *m->mats);
    for (int l = 0; l < layers; l++)
        for (int i = 0; i < LAYER_MATRICES; i++)
            add_matrix(m, LAYER[i].name, l, LAYER[i].rows, LAYER[i].k);
    if (head)
        add_matrix(m, "head", -1, VOCAB, HIDDEN);
    if (mini_rows) {
        add_matrix(m, "mini.up", -1, mini_rows, HIDDEN);
        add_matrix(m, "mini.down", -1, mini_rows, FFN);
    }
    /* Prefill is checked on the first rows of the first matrix of each
     * width: 128 of L0.qkv (or mini.up), 64 of L0.down (or mini.down). */
    for (int c = 0; c < 2; c++) {
        int most = c ? 64 : 128;
        m->check[c] = m->mats[c == 0 ? 0 : mini_rows ? 1 : LAYER_MATRICES - 1];
        m->check[c].rows = m->check[c].rows < most ? m->check[c].rows : most;
        m->check[c].y_offset = c ? (size_t)m->check[0].rows * prefill_n : 0;
    }
    m->check_count = (size_t)(m->check[0].rows + m->check[1].rows) * prefill_n;
}

void exp03_model_plan_batch(model *m, int batch_n) { m->batch_n = batch_n; }

/* The most tokens any step takes: the prefill's or the batch part's. */
static int most_tokens(const model *m)
{
    return m->prefill_n > m->batch_n ? m->prefill_n : m->batch_n;
}

void exp03_model_plan_matrix(model *m, int rows, int k, int batch_n)
{
    *m = (model){.widths = {k, k}, .one_matrix = true, .batch_n = batch_n};
    m->mats = calloc(1, sizeof *m->mats);
    add_matrix(m, "matrix", -1, rows, k);
    /* the batch kernels' check: the first 128 rows; no second block */
    m->check[0] = m->mats[0];
    m->check[0].rows = rows < 128 ? rows : 128;
    m->check[1] = m->check[0];
    m->check[1].rows = 0;
}

/* ---- the model of this run ---------------------------------------------------- */

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
    rl_meta(ctx, "integer_flops", "the quantized formats' rows that take x in 8 bits (integer-dot "
            "decode, batch) count their multiply-adds as FLOPs, but the compute roof (FP32) does "
            "not bound 8-bit integer dot products: their mfu is empty");
    rl_meta(ctx, "published", "rows with source llama.cpp: the quantize README's table "
            "(results/published/), another machine; not measured here");
    rl_meta(ctx, "regime", "%s", regime);
    printf("\nmodel       %s, %.3g million weights; prefill %d tokens\n", regime, m->params / 1e6,
           m->prefill_n);
}

/* The weights of one layer. */
static double layer_weights(void)
{
    return 2.0 * HIDDEN * HIDDEN + 2.0 * KV * HIDDEN + 3.0 * FFN * HIDDEN;
}

/* Encoding every format is most of a GPU run's time (about 60 ns per
 * weight on one host core, and as long again for the rest): under
 * --budget, the layers that fit, but never fewer than put the q4 weights
 * at 4x the L2, in device memory, as the claim needs. */
static int fewer_layers_to_fit(const rl_ctx *ctx, int want, double layer)
{
    double per_layer_s = 2 * 2 * 6e-8 * layer / omp_get_max_threads(); /* the host's */
    int least = (int)ceil(4 * ctx->dev->llc_bytes / (layer * quant_bits_per_weight(QF_Q4) / 8));
    int fit = (int)floor(want * rl_budget_fit(ctx, want * per_layer_s));
    int layers = fit > least ? fit : least;
    return layers < want ? layers : want;
}

/* GPU: the whole model where memory allows (a fifth left free; the head's
 * FP16 copy is the scratch), fewer layers in lab and quick runs. */
static void plan_on_gpu(rl_ctx *ctx, model *m, int gpu_layers, int prefill_n, char *regime,
                        size_t len)
{
    double layer = layer_weights();
    int want = fewer_layers_to_fit(ctx, gpu_layers, layer);
    double head = quant_bytes_all_formats((double)VOCAB * HIDDEN) + 2.0 * VOCAB * HIDDEN +
                  4.0 * VOCAB * prefill_n;
    int fit = (int)((0.8 * ctx->dev->mem_bytes - head) / quant_bytes_all_formats(layer));
    int layers = fit < want ? (fit < 1 ? 1 : fit) : want;
    snprintf(regime, len, "device memory: %d layers and the head", layers);
    exp03_model_plan(m, layers, true, 0, prefill_n);
}

/* CPU: the fewest layers whose q4 weights are 4x the LLC (DRAM) when every
 * format of them fits --max-bytes, else a model whose formats together fit
 * half the LLC (the claim then speaks of the LLC). */
static void plan_on_cpu(rl_ctx *ctx, model *m, int prefill_n, char *regime, size_t len)
{
    double llc = ctx->dev->llc_bytes, layer = layer_weights();
    int need = (int)ceil(4 * llc / (layer * quant_bits_per_weight(QF_Q4) / 8));
    double total = need * quant_bytes_all_formats(layer);
    char a[32], b[32];
    rl_format_bytes(total, a, sizeof a);
    rl_format_bytes(rl_max_bytes(ctx), b, sizeof b);
    int rows = (int)(0.5 * llc / quant_bytes_all_formats(HIDDEN + FFN)) / 64 * 64;
    bool dram = total <= rl_max_bytes(ctx);
    rows = rows < 64 ? 64 : rows;
    if (dram)
        snprintf(regime, len, "DRAM: %d layer(s), the q4 weights at least 4x the LLC (%s in all "
                 "formats)", need, a);
    else
        snprintf(regime, len, "the LLC: every format together fits half of it (%d rows of 4096 "
                 "and of 14336); a DRAM-sized model needs %s in all formats, over --max-bytes %s",
                 rows, a, b);
    exp03_model_plan(m, dram ? need : 0, false, dram ? 0 : rows, prefill_n);
}

/* regime: where the weights live, and why. */
void exp03_model_plan_run(rl_ctx *ctx, model *m, int layers_given, int gpu_layers, int prefill_n)
{
    char regime[256];
    if (layers_given) {
        snprintf(regime, sizeof regime, "--layers %d", layers_given);
        exp03_model_plan(m, layers_given, ctx->kind == RL_CUDA, 0, prefill_n);
    } else if (ctx->kind == RL_CUDA) {
        plan_on_gpu(ctx, m, gpu_layers, prefill_n, regime, sizeof regime);
    } else {
        plan_on_cpu(ctx, m, prefill_n, regime, sizeof regime);
    }
    describe_model(ctx, m, regime);
}

double exp03_model_bytes(const model *m, quant_format f)
{
    return m->params / QUANT_BLOCK * quant_formats[f].block_bytes;
}

double exp03_model_pass_bytes(const model *m, quant_format f, bool gpu)
{
    if (gpu && f == QF_F16)
        return 0;
    return exp03_model_bytes(m, f) + m->params * (gpu ? 2 : 4);
}

/* The pass writes one matrix at a time into the scratch, which the GEMM
 * reads next: its working set is the weights and the largest matrix's
 * output. */
double exp03_model_pass_s(rl_ctx *ctx, const model *m, quant_format f)
{
    bool gpu = ctx->kind == RL_CUDA;
    double bytes = exp03_model_pass_bytes(m, f, gpu), widest = 0;
    for (int i = 0; i < m->nmat; i++)
        widest = fmax(widest, (double)m->mats[i].rows * m->mats[i].k);
    rl_roof roof = rl_roof_for(ctx, exp03_model_bytes(m, f) + widest * (gpu ? 2 : 4), RL_COPY);
    return bytes > 0 ? bytes / (roof.gbps * 1e9) : 0;
}

static int width_index(const model *m, int k) { return k == m->widths[0] ? 0 : 1; }

/* Decode: one token, outputs kept for the whole step's check. Prefill
 * and batch: the step's tokens, outputs overwritten matrix by matrix. */
static quant_args step_args(const step *s, const matrix *mat)
{
    const model *m = s->m;
    bool tokens = s->part != QUANT_DECODE;
    return (quant_args){
        .format = s->f,
        .y = tokens ? m->ys : m->y + mat->y_offset,
        .w = (const char *)m->w[s->f] + mat->w_offset * quant_formats[s->f].block_bytes,
        .x = (tokens ? m->xs : m->x)[width_index(m, mat->k)],
        .rows = mat->rows,
        .k = mat->k,
        .n = s->tokens,
        .scratch = m->scratch,
        .stream = s->stream,
    };
}

/* What the variants that run here need: the most scratch any asks for on
 * any matrix, the FP16-rounded prefill and batch references, the
 * integer-dot bounds (decode, batch). */
static size_t needs(const rl_ctx *ctx, model *m, bool *rounds, bool *quantizes)
{
    size_t most = 0;
    *rounds = *quantizes = m->batch_rounds = m->batch_quantizes = false;
    for (const quant_variant *v = quant_variants; v->name; v++) {
        if (!rl_runs(ctx, &quant_family, KERNEL_VARIANT(v)))
            continue;
        int n = v->phase == QUANT_DECODE    ? 1
                : v->phase == QUANT_PREFILL ? m->prefill_n
                                            : m->batch_n;
        *rounds |= v->phase == QUANT_PREFILL && quant_rounds_to_fp16(v, rl_kernel_backend(ctx));
        *quantizes |= v->quantizes_x;
        m->batch_rounds |= v->phase == QUANT_BATCH && quant_rounds_to_fp16(v, rl_kernel_backend(ctx));
        m->batch_quantizes |= v->phase == QUANT_BATCH && v->quantizes_x;
        for (int i = 0; n && i < m->nmat; i++) {
            size_t b = quant_scratch(v, rl_kernel_backend(ctx), m->mats[i].rows, m->mats[i].k, n);
            most = b > most ? b : most;
        }
    }
    return most;
}

/* The batch part's reference on check matrix c for batch_n tokens, and
 * each output's bound: x's 8-bit rounding (quantized formats, where the
 * batch kernel quantizes each token), or the FP32 sums' atol. */
static void batch_reference(model *m, quant_format f, int c, const void *enc, const fp16 *xs)
{
    const matrix *chk = &m->check[c];
    size_t at = c ? (size_t)m->check[0].rows * m->batch_n : 0;
    quant_reference(m->batch_ref[f] + at, f, enc, xs, chk->rows, chk->k, m->batch_n,
                    m->batch_rounds);
    for (int t = 0; t < m->batch_n; t++) {
        double *bound = m->batch_bound[f] + at + (size_t)t * chk->rows;
        if (f == QF_F16 || !m->batch_quantizes)
            for (int r = 0; r < chk->rows; r++)
                bound[r] = gemv_atol(chk->k);
        else
            quant_int8_error_bound(bound, f, enc, xs + (size_t)t * chk->k, chk->rows, chk->k);
    }
}

/* One matrix: random FP16 weights in [-1, 1], encoded in every format and
 * uploaded, with each format's references (and bounds) for the tokens of
 * its width. */
static void encode_matrix(rl_ctx *ctx, model *m, const matrix *mat, bool rounds)
{
    const fp16 *x = m->hx[width_index(m, mat->k)], *xs = m->hxs[width_index(m, mat->k)];
    char what[64];
    snprintf(what, sizeof what, "encoding %s", mat->name);
    rl_progress_note(ctx, what);
    fp16 *w16 = rl_host_random_f16(ctx, (size_t)mat->rows * mat->k, -1, 1);
    /* On the CPU the model's buffers are host memory: encoded in place, not
     * through a copy (a gigabyte fewer to write and fault in). */
    bool in_place = ctx->kind == RL_CPU;
    for (quant_format f = 0; f < QF_COUNT; f++) {
        size_t bytes = quant_row_bytes(f, mat->k) * mat->rows;
        char *dst = (char *)m->w[f] + mat->w_offset * quant_formats[f].block_bytes;
        void *enc = in_place ? dst : rl_host_alloc(bytes);
        quant_encode_matrix(f, enc, w16, mat->rows, mat->k); /* F16: a copy */
        if (!in_place)
            rl_upload(ctx->be, dst, enc, bytes);
        quant_reference(m->ref[f] + mat->y_offset, f, enc, x, mat->rows, mat->k, 1, false);
        if (m->bound[f])
            quant_int8_error_bound(m->bound[f] + mat->y_offset, f, enc, x, mat->rows, mat->k);
        for (int c = 0; c < 2 && m->prefill_n; c++)
            if (m->check[c].w_offset == mat->w_offset)
                quant_reference(m->check_ref[f] + m->check[c].y_offset, f, enc, xs,
                                m->check[c].rows, mat->k, m->prefill_n, rounds);
        for (int c = 0; c < 2 && m->batch_n; c++)
            if (m->check[c].w_offset == mat->w_offset && m->check[c].rows)
                batch_reference(m, f, c, enc, xs);
        if (!in_place)
            rl_host_free(enc);
    }
    rl_host_free(w16);
}

void exp03_model_build(rl_ctx *ctx, model *m)
{
    for (int i = 0; i < 2; i++) { /* the tokens (decode; prefill and batch) per width */
        size_t n1 = (size_t)m->widths[i], nn = n1 * most_tokens(m);
        m->hx[i] = rl_host_random_f16(ctx, n1, -1, 1);
        m->x[i] = rl_alloc_copy(ctx->be, m->hx[i], n1 * sizeof(fp16));
        m->hxs[i] = nn ? rl_host_random_f16(ctx, nn, -1, 1) : NULL;
        m->xs[i] = nn ? rl_alloc_copy(ctx->be, m->hxs[i], nn * sizeof(fp16)) : NULL;
    }
    bool rounds, quantizes;
    size_t scratch = needs(ctx, m, &rounds, &quantizes);
    m->scratch = scratch ? rl_alloc(ctx->be, scratch) : NULL;
    m->y = rl_alloc(ctx->be, sizeof(float) * m->rows_total);
    for (int f = 0; f < QF_COUNT; f++) {
        m->w[f] = rl_alloc(ctx->be, (size_t)exp03_model_bytes(m, (quant_format)f));
        m->ref[f] = rl_host_alloc(sizeof(double) * m->rows_total);
        m->bound[f] = quantizes ? rl_host_alloc(sizeof(double) * m->rows_total) : NULL;
        m->check_ref[f] = m->prefill_n ? rl_host_alloc(sizeof(double) * m->check_count) : NULL;
        size_t batch_count = (size_t)(m->check[0].rows + m->check[1].rows) * m->batch_n;
        m->batch_ref[f] = m->batch_n ? rl_host_alloc(sizeof(double) * batch_count) : NULL;
        m->batch_bound[f] = m->batch_n ? rl_host_alloc(sizeof(double) * batch_count) : NULL;
    }
    if (most_tokens(m)) {
        size_t most = (size_t)most_tokens(m);
        m->ys = rl_alloc(ctx->be, sizeof(float) * (size_t)m->max_rows * most);
        m->yval = rl_alloc(ctx->be, sizeof(float) * (m->check[0].rows + m->check[1].rows) * most);
    }
    if (m->prefill_n) {
        m->check_bound = rl_host_alloc(sizeof(double) * m->check_count);
        for (size_t e = 0; e < m->check_count; e++)
            m->check_bound[e] = gemv_atol(m->check[e < m->check[1].y_offset ? 0 : 1].k);
    }
    for (int i = 0; i < m->nmat; i++)
        encode_matrix(ctx, m, &m->mats[i], rounds);
}

void exp03_model_free(rl_ctx *ctx, model *m)
{
    for (int f = 0; f < QF_COUNT; f++) {
        rl_free(ctx->be, m->w[f]);
        rl_host_free(m->ref[f]);
        rl_host_free(m->bound[f]);
        rl_host_free(m->check_ref[f]);
        rl_host_free(m->batch_ref[f]);
        rl_host_free(m->batch_bound[f]);
    }
    rl_host_free(m->check_bound);
    for (int i = 0; i < 2; i++) {
        rl_free(ctx->be, m->x[i]);
        rl_free(ctx->be, m->xs[i]);
        rl_host_free(m->hx[i]);
        rl_host_free(m->hxs[i]);
    }
    rl_free(ctx->be, m->y);
    rl_free(ctx->be, m->ys);
    rl_free(ctx->be, m->yval);
    rl_free(ctx->be, m->scratch);
    free(m->mats);
}

/* ---- a step and its check ----------------------------------------------------- */

static const char *phase_name(quant_phase ph)
{
    return ph == QUANT_DECODE ? "decode" : ph == QUANT_PREFILL ? "prefill" : "batch";
}

step *exp03_step_new(rl_ctx *ctx, model *m, const quant_variant *v, quant_format f, int tokens)
{
    double size = exp03_model_bytes(m, f);
    step *s = RL_NEW(ctx, step);
    *s = (step){.source = "measured", .format = quant_formats[f].name,
                .phase = phase_name(v->phase), .bits = quant_bits_per_weight(f),
                .params = m->params, .size_bytes = size, .size_gib = size / 1073741824.0,
                .rel_size = size / exp03_model_bytes(m, QF_F16),
                .layers = m->layers, .tokens = tokens, .m = m, .v = v, .f = f,
                .all = rl_points_all(ctx), .launch = RL_LAUNCHER(ctx, v),
                .stream = rl_stream(ctx->be), .part = v->phase};
    return s;
}

step *exp03_batch_step_new(rl_ctx *ctx, model *m, const quant_variant *v, quant_format f, int tokens)
{
    step *s = exp03_step_new(ctx, m, v, f, tokens);
    s->part = QUANT_BATCH;
    s->phase = phase_name(QUANT_BATCH);
    return s;
}

/* A batch step's reference and bound on the check rows for its tokens
 * (kept by ctx until the run ends), in exp03_run_check's output order. */
static void batch_check(rl_ctx *ctx, const step *s, double **want, double **bound)
{
    const model *m = s->m;
    size_t n = (size_t)s->tokens, r0 = (size_t)m->check[0].rows, r1 = (size_t)m->check[1].rows;
    *want = rl_keep(ctx, sizeof(double) * (r0 + r1) * n);
    *bound = rl_keep(ctx, sizeof(double) * (r0 + r1) * n);
    /* the first n tokens of each check block, whose batch_n tokens are [t][r] */
    const size_t from[2] = {0, r0 * (size_t)m->batch_n}, to[2] = {0, r0 * n},
                 len[2] = {r0 * n, r1 * n};
    for (int c = 0; c < 2; c++) {
        memcpy(*want + to[c], m->batch_ref[s->f] + from[c], sizeof(double) * len[c]);
        if (s->v->quantizes_x) /* x's 8-bit rounding, as batch_reference bounded it */
            memcpy(*bound + to[c], m->batch_bound[s->f] + from[c], sizeof(double) * len[c]);
        else /* the library path beside it: x as given, FP32 sums */
            for (size_t e = 0; e < len[c]; e++)
                (*bound)[to[c] + e] = gemv_atol(m->check[c].k);
    }
}

/* Decode checks the whole step's outputs; prefill and batch the same call
 * on the check rows (a reference of the whole model would take the host
 * minutes). */
void exp03_bind_check(rl_ctx *ctx, rl_point *p)
{
    const step *s = RL_DATA(step, p);
    const model *m = s->m;
    if (s->part == QUANT_DECODE) {
        p->out = m->y;
        p->want = m->ref[s->f];
        p->bound = s->v->quantizes_x ? m->bound[s->f] : NULL;
    } else if (s->part == QUANT_PREFILL) {
        p->out = m->yval;
        p->want = m->check_ref[s->f];
        p->bound = m->check_bound;
    } else {
        double *want, *bound;
        batch_check(ctx, s, &want, &bound);
        p->out = m->yval;
        p->want = want;
        p->bound = bound;
    }
}

/* ---- one step ------------------------------------------------------------- */

void exp03_run_step(void *arg)
{
    const step *s = arg;
    for (int i = 0; i < s->m->nmat; i++) {
        quant_args a = step_args(s, &s->m->mats[i]);
        s->launch(&a);
    }
}

/* The check matrices' outputs back to back in yval, each token by token. */
void exp03_run_check(void *arg)
{
    const step *s = arg;
    size_t at = 0;
    for (int c = 0; c < 2; c++) {
        if (!s->m->check[c].rows) /* --matrix checks one block */
            continue;
        quant_args a = step_args(s, &s->m->check[c]);
        a.y = s->m->yval + at;
        at += (size_t)a.rows * a.n;
        s->launch(&a);
    }
}
