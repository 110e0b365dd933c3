/*
 * model.c -- experiment 03's synthetic model: the weight matrices of a
 * Llama-3.1-8B-shaped decoder (per layer q, k, v, o, gate, up, down; then
 * the output head), random FP16 weights encoded in every format.
 *
 * Nothing flows between the matrices (no attention, norms or activations):
 * a decode step is one GEMV per matrix on a fixed random token, a prefill
 * step is n tokens through every matrix. The claim is about the bytes of
 * weights a step reads, and those are all here.
 */
#include "exp03.h"
#include "cpu/quant_dot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void add_matrix(model *m, const char *name, int layer, int rows, int k)
{
    matrix *x = &m->mats[m->nmat++];
    if (layer >= 0)
        snprintf(x->name, sizeof x->name, "L%d.%s", layer, name);
    else
        snprintf(x->name, sizeof x->name, "%s", name);
    x->rows = rows;
    x->k = k;
    x->w_offset = m->blocks;
    x->y_offset = m->rows_total;
    m->blocks += (size_t)rows * (k / QUANT_BLOCK);
    m->rows_total += (size_t)rows;
    m->params += (double)rows * k;
    m->max_rows = rows > m->max_rows ? rows : m->max_rows;
}

void model_plan(model *m, int layers, bool head, int prefill_n)
{
    *m = (model){.layers = layers, .head = head, .prefill_n = prefill_n};
    m->mats = calloc((size_t)layers * 7 + 1, sizeof *m->mats);
    for (int l = 0; l < layers; l++) {
        add_matrix(m, "q", l, HIDDEN, HIDDEN);
        add_matrix(m, "k", l, KV, HIDDEN);
        add_matrix(m, "v", l, KV, HIDDEN);
        add_matrix(m, "o", l, HIDDEN, HIDDEN);
        add_matrix(m, "gate", l, FFN, HIDDEN);
        add_matrix(m, "up", l, FFN, HIDDEN);
        add_matrix(m, "down", l, HIDDEN, FFN);
    }
    if (head)
        add_matrix(m, "head", -1, VOCAB, HIDDEN);
    /* Validate the prefill path on layer 0's q (k = 4096) and down (k = 14336). */
    m->check_mat[0] = &m->mats[0];
    m->check_mat[1] = &m->mats[6];
    m->check_rows[0] = 128;
    m->check_rows[1] = 64;
}

/* A model sized for the last-level cache: one matrix of each width, rows
 * x 4096 ("up") and rows x 14336 ("down"), every format of it small
 * enough to stay in the cache together while they are timed in turn. */
void model_plan_mini(model *m, int rows, int prefill_n)
{
    *m = (model){.layers = 0, .head = false, .prefill_n = prefill_n, .mini_rows = rows};
    m->mats = calloc(2, sizeof *m->mats);
    add_matrix(m, "mini.up", -1, rows, HIDDEN);
    add_matrix(m, "mini.down", -1, rows, FFN);
    m->check_mat[0] = &m->mats[0];
    m->check_mat[1] = &m->mats[1];
    m->check_rows[0] = rows < 128 ? rows : 128;
    m->check_rows[1] = rows < 64 ? rows : 64;
}

double model_bytes(const model *m, quant_format f)
{
    return (double)m->blocks * quant_formats[f].block_bytes;
}

const fp16 *model_input(const model *m, int k, bool prefill)
{
    int i = k == HIDDEN ? 0 : 1;
    return prefill ? m->xs[i] : m->x[i];
}

static fp16 *random_halves(rl_ctx *ctx, size_t n)
{
    float *f = rl_host_alloc(n * sizeof(float));
    fp16 *h = rl_host_alloc(n * sizeof(fp16));
    rl_fill_uniform(f, n, -1, 1, rl_next_seed(ctx));
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        h[i] = float_to_fp16(f[i]);
    rl_host_free(f);
    return h;
}

/* Scratch for every variant and matrix: the largest ask. */
static size_t scratch_bytes(const model *m, const quant_variant *table)
{
    size_t most = 0;
    for (const quant_variant *v = table; v->name; v++)
        for (int i = 0; v->launch && v->scratch_bytes && i < m->nmat; i++) {
            int n = v->phase == QUANT_DECODE ? 1 : m->prefill_n;
            size_t b = v->scratch_bytes(m->mats[i].rows, m->mats[i].k, n);
            most = b > most ? b : most;
        }
    return most;
}

/* The tokens: one for decode, prefill_n for prefill, at both widths. The
 * host copies stay for the references. */
static void make_inputs(rl_ctx *ctx, model *m, fp16 *host_x[2], fp16 *host_xs[2])
{
    const int widths[2] = {HIDDEN, FFN};
    for (int i = 0; i < 2; i++) {
        size_t n1 = (size_t)widths[i], nn = (size_t)widths[i] * m->prefill_n;
        host_x[i] = random_halves(ctx, n1);
        host_xs[i] = random_halves(ctx, nn);
        m->x[i] = rl_alloc(ctx->be, n1 * sizeof(fp16));
        m->xs[i] = rl_alloc(ctx->be, nn * sizeof(fp16));
        rl_upload(ctx->be, m->x[i], host_x[i], n1 * sizeof(fp16));
        rl_upload(ctx->be, m->xs[i], host_xs[i], nn * sizeof(fp16));
    }
}

void model_build(rl_ctx *ctx, model *m, const quant_variant *table)
{
    fp16 *hx[2], *hxs[2];
    make_inputs(ctx, m, hx, hxs);
    for (int f = 0; f < QF_COUNT; f++) {
        m->w[f] = rl_alloc(ctx->be, (size_t)model_bytes(m, (quant_format)f));
        m->ref[f] = rl_host_alloc(sizeof(double) * m->rows_total);
    }
    m->y = rl_alloc(ctx->be, sizeof(float) * m->rows_total);
    m->ys = rl_alloc(ctx->be, sizeof(float) * (size_t)m->max_rows * m->prefill_n);
    m->yval = rl_alloc(ctx->be, sizeof(float) * 128 * (size_t)m->prefill_n);
    size_t scratch = scratch_bytes(m, table);
    m->scratch = scratch ? rl_alloc(ctx->be, scratch) : NULL;

    bool rounds = false, quantizes = false; /* FP16-rounded prefill weights? 8-bit x? */
    for (const quant_variant *v = table; v->name; v++) {
        rounds |= v->phase == QUANT_PREFILL && v->rounds_to_fp16 && v->launch;
        quantizes |= v->quantizes_x && v->launch;
    }
    for (int f = 0; f < QF_COUNT && quantizes; f++)
        m->bound[f] = rl_host_alloc(sizeof(double) * m->rows_total);

    for (int i = 0; i < m->nmat; i++) {
        const matrix *mat = &m->mats[i];
        char what[64];
        snprintf(what, sizeof what, "encoding %s", mat->name);
        rl_progress_note(ctx, what);
        fp16 *w16 = random_halves(ctx, (size_t)mat->rows * mat->k);
        const fp16 *x = hx[mat->k == HIDDEN ? 0 : 1], *xs = hxs[mat->k == HIDDEN ? 0 : 1];
        for (int f = 0; f < QF_COUNT; f++) {
            size_t bytes = quant_row_bytes((quant_format)f, mat->k) * mat->rows;
            void *enc = f == QF_F16 ? (void *)w16 : rl_host_alloc(bytes);
            if (f != QF_F16)
                quant_encode_matrix((quant_format)f, enc, w16, mat->rows, mat->k);
            char *dst = (char *)m->w[f] + mat->w_offset * quant_formats[f].block_bytes;
            rl_upload(ctx->be, dst, enc, bytes);
            quant_reference(m->ref[f] + mat->y_offset, (quant_format)f, enc, x, mat->rows, mat->k,
                            1, false);
            if (m->bound[f])
                quant_int8_error_bound(m->bound[f] + mat->y_offset, (quant_format)f, enc, x,
                                       mat->rows, mat->k);
            for (int c = 0; c < 2; c++)
                if (m->check_mat[c] == mat) {
                    int rows = m->check_rows[c];
                    m->check_ref[c][f] = rl_host_alloc(sizeof(double) * rows * m->prefill_n);
                    quant_reference(m->check_ref[c][f], (quant_format)f, enc, xs, rows, mat->k,
                                    m->prefill_n, rounds);
                }
            if (f != QF_F16)
                rl_host_free(enc);
        }
        rl_host_free(w16);
    }
    for (int i = 0; i < 2; i++) {
        rl_host_free(hx[i]);
        rl_host_free(hxs[i]);
    }
}

void model_free(rl_ctx *ctx, model *m)
{
    for (int f = 0; f < QF_COUNT; f++) {
        rl_free(ctx->be, m->w[f]);
        rl_host_free(m->ref[f]);
        if (m->bound[f])
            rl_host_free(m->bound[f]);
        for (int c = 0; c < 2; c++)
            rl_host_free(m->check_ref[c][f]);
    }
    for (int i = 0; i < 2; i++) {
        rl_free(ctx->be, m->x[i]);
        rl_free(ctx->be, m->xs[i]);
    }
    rl_free(ctx->be, m->y);
    rl_free(ctx->be, m->ys);
    rl_free(ctx->be, m->yval);
    if (m->scratch)
        rl_free(ctx->be, m->scratch);
    free(m->mats);
}

/* ---- one step ------------------------------------------------------------- */

void run_step(void *p)
{
    const step *s = p;
    const model *m = s->m;
    bool prefill = s->v->phase == QUANT_PREFILL;
    for (int i = 0; i < m->nmat; i++) {
        const matrix *mat = &m->mats[i];
        quant_args a = {
            .format = s->f,
            .y = prefill ? m->ys : m->y + mat->y_offset,
            .w = (const char *)m->w[s->f] + mat->w_offset * quant_formats[s->f].block_bytes,
            .x = model_input(m, mat->k, prefill),
            .rows = mat->rows,
            .k = mat->k,
            .n = prefill ? m->prefill_n : 1,
            .scratch = m->scratch,
            .stream = s->stream,
        };
        s->v->launch(&a);
    }
}
