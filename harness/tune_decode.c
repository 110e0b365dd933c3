/*
 * tune_decode.c -- the CPU decode's shape, chosen on this machine for
 * experiments 02 (F16) and 03 (every format). The kernels list their
 * candidates (kernels/cpu/decode_shapes.h); here each is validated against
 * the double-precision reference (within the int8 bound, or F16's
 * tolerance) and timed on a matrix read from DRAM, through rl_tune_choose
 * (tuning.c), which caches the choice in tuning.csv.
 */
#include "internal.h"

#include "cpu/decode_shapes.h"
#include "gemv.h"

#include <string.h>

/* One 1024 x 4096 matrix, encoded once and repeated until the weights span
 * 4x the last-level cache (rl_copies_beyond_cache), so that every call
 * reads DRAM, as the model's decode does. At most 64 copies. A hot matrix
 * of its own size (rl_tune_decode_cpu_at) is timed as it is, once: where
 * it lives decides the shape, as a matrix half in the L3 can want more
 * rows a step than one streamed from DRAM. */
enum { BASE_ROWS = 1024, TUNE_K = 4096, MAX_COPIES = 64 };

/* The random FP16 weights of the base matrix and x, shared by every
 * format and made by the first that is timed. */
typedef struct tune_inputs {
    fp16 *w16, *x;
} tune_inputs;

typedef struct shape_tuning {
    rl_ctx *ctx;
    tune_inputs *in;
    decode_shapes cand;
    int base_rows, k;   /* the matrix: BASE_ROWS x TUNE_K, or rl_tune_decode_cpu_at's */
    bool hot;           /* that one matrix, hot (else copies beyond the cache) */
    int rows;           /* base_rows x copies */
    void *w, *scratch;  /* rows x the format's row bytes */
    float *y;
    double *ref, *bound; /* base_rows: every copy's rows have the same */
} shape_tuning;

static const char *format_name(const shape_tuning *s) { return quant_formats[s->cand.format].name; }

static void shape_name(void *state, int i, char *buf, size_t len)
{
    const shape_tuning *s = state;
    decode_shapes_name(&s->cand, i, buf, len);
}

static void shape_set(void *state, int i)
{
    const shape_tuning *s = state;
    if (!decode_shapes_select(&s->cand, i))
        rl_die(RL_EXIT_FAILED, "internal error: %s: shape %d rejected", format_name(s), i);
}

static void shape_call(void *state)
{
    shape_tuning *s = state;
    decode_shapes_run(s->cand.format, s->y, s->w, s->in->x, s->rows, s->k, s->scratch);
}

/* Every output of every copy within the bound of the reference. */
static bool shape_check(void *state, char *why, size_t len)
{
    shape_tuning *s = state;
    memset(s->y, 0xFF, sizeof(float) * (size_t)s->rows); /* NaN: an unwritten output fails */
    shape_call(s);
    for (int c = 0; c < s->rows / s->base_rows; c++) {
        rl_check k = rl_compare_f32_bound(s->y + (size_t)c * s->base_rows, s->ref, s->bound, s->base_rows);
        if (!k.ok) {
            rl_check_describe(&k, why, len);
            return false;
        }
    }
    return true;
}

/* The base matrix encoded, and repeated beyond the cache unless hot. */
static void build_weights(shape_tuning *s)
{
    quant_format f = s->cand.format;
    size_t base_bytes = quant_row_bytes(f, s->k) * s->base_rows;
    int copies = s->hot ? 1 : rl_copies_beyond_cache(s->ctx, (double)base_bytes);
    copies = copies > MAX_COPIES ? MAX_COPIES : copies;
    s->rows = s->base_rows * copies;
    s->w = rl_host_alloc(base_bytes * (size_t)copies);
    quant_encode_matrix(f, s->w, s->in->w16, s->base_rows, s->k);
    for (int c = 1; c < copies; c++)
        memcpy((char *)s->w + c * base_bytes, s->w, base_bytes);
}

/* The inputs, built only when the candidates are timed. */
static void shape_build(void *state)
{
    shape_tuning *s = state;
    if (!s->in->w16) {
        s->in->w16 = rl_host_random_f16(s->ctx, (size_t)s->base_rows * s->k, -1, 1);
        s->in->x = rl_host_random_f16(s->ctx, s->k, -1, 1);
    }
    build_weights(s);
    quant_format f = s->cand.format;
    s->y = rl_host_alloc(sizeof(float) * (size_t)s->rows);
    s->scratch = rl_host_alloc(quant_int8_scratch(s->rows, s->k, 1));
    s->ref = rl_host_alloc(sizeof(double) * s->base_rows);
    s->bound = rl_host_alloc(sizeof(double) * s->base_rows);
    quant_reference(s->ref, f, s->w, s->in->x, s->base_rows, s->k, 1, false);
    quant_int8_error_bound(s->bound, f, s->w, s->in->x, s->base_rows, s->k);
}

static void release(shape_tuning *s) /* what shape_build made, if it ran */
{
    rl_host_free(s->w);
    rl_host_free(s->y);
    rl_host_free(s->scratch);
    rl_host_free(s->ref);
    rl_host_free(s->bound);
}

/* Format f's shape chosen (cached, default or timed now) and set, for
 * one hot rows x k matrix (rows > 0) or, rows = 0, for BASE_ROWS rows of
 * k inputs repeated beyond the cache. The candidate chosen. */
static quant_dot_shape tune_format(rl_ctx *ctx, tune_inputs *in, quant_format f, int rows, int k)
{
    bool hot = rows > 0;
    shape_tuning s = {.ctx = ctx, .in = in, .base_rows = hot ? rows : BASE_ROWS, .k = k, .hot = hot};
    decode_shapes_list(&s.cand, f, s.base_rows, s.k, hot);
    if (s.cand.default_index < 0)
        rl_die(RL_EXIT_FAILED, "internal error: %s's default shape is no candidate", format_name(&s));
    char key[64], what[48];
    if (hot) /* its own key: the DRAM choice stays the model's */
        snprintf(key, sizeof key, "tuning_%s_%dx%d_hot", quant_formats[f].name, rows, k);
    else if (k != TUNE_K) /* rows of another length stream otherwise (rl_tune_f16_dram) */
        snprintf(key, sizeof key, "tuning_%s_k%d", quant_formats[f].name, k);
    else
        snprintf(key, sizeof key, "tuning_%s", quant_formats[f].name);
    snprintf(what, sizeof what, "%s decode shape", quant_formats[f].name);
    rl_tune t = {key, what, s.cand.signature, s.cand.n, s.cand.default_index, shape_name,
                 shape_set, shape_check, shape_call, shape_build, &s};
    quant_dot_shape chosen = s.cand.shape[rl_tune_choose(ctx, &t)];
    release(&s);
    return chosen;
}

void rl_tune_decode_cpu_at(rl_ctx *ctx, bool integer_formats, int rows, int k)
{
    if (ctx->kind != RL_CPU)
        return; /* the GPU's kernels have no shape to choose here */
    quant_format last = decode_shapes_last_format(integer_formats);
    tune_inputs in = {NULL, NULL};
    for (quant_format f = QF_F16; f <= last; f++)
        tune_format(ctx, &in, f, rows, rows > 0 ? k : TUNE_K);
    rl_host_free(in.w16);
    rl_host_free(in.x);
}

void rl_tune_decode_cpu(rl_ctx *ctx, bool integer_formats) { rl_tune_decode_cpu_at(ctx, integer_formats, 0, 0); }

rl_f16_shape rl_tune_f16_dram(rl_ctx *ctx, int k)
{
    if (ctx->kind != RL_CPU)
        return (rl_f16_shape){0, 0};
    tune_inputs in = {NULL, NULL};
    quant_dot_shape q = tune_format(ctx, &in, QF_F16, 0, k);
    rl_host_free(in.w16);
    rl_host_free(in.x);
    return (rl_f16_shape){q.rows, q.prefetch};
}

void rl_f16_shape_set(rl_f16_shape shape)
{
    if (shape.rows > 0 && !(gemv_fp16_set_rows(shape.rows) && gemv_fp16_set_prefetch(shape.prefetch)))
        rl_die(RL_EXIT_FAILED, "internal error: the F16 GEMV takes no shape of %d rows %d B ahead",
               shape.rows, shape.prefetch);
}
