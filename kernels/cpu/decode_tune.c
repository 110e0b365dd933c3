/*
 * cpu/decode_tune.c -- the CPU decode's shape, chosen on this machine for
 * experiments 02 (F16) and 03 (every format):
 *   - each integer format: rows decoded side by side and the prefetch
 *     distance (cpu/quant_dot.h's candidates);
 *   - F16: the FP16 GEMV's rows per step and prefetch distance (gemv.h's).
 * harness/tuning.c times the candidates on a matrix read from DRAM, each
 * first validated against the double-precision reference (within the
 * int8 bound, or F16's tolerance). The defaults are the compile-time
 * choices of the Zen machines they were tuned on; on a Sapphire Rapids
 * VM those were not the best (issue 27).
 */
#include "decode_tune.h"

#include "../quant.h"
#include "quant_dot.h"
#include "rooflab.h"

#include <stdio.h>
#include <string.h>

/* One 1024 x 4096 matrix, encoded once and repeated until the weights span
 * 4x the last-level cache (rl_copies_beyond_cache), so that every call
 * reads DRAM, as the model's decode does. At most 64 copies. A hot matrix
 * of its own size (decode_tune_cpu_at) is timed as it is, once: where it
 * lives decides the shape: on a Sapphire Rapids VM the tuner chose 2 rows
 * a step for the F16 GEMV from DRAM, yet on ggml's 117 MB matrix, half in
 * its L3, 8 rows took a quarter less time than 2 (alternating, 3 rounds). */
enum { BASE_ROWS = 1024, TUNE_K = 4096, MAX_COPIES = 64 };

/* The random FP16 weights of the base matrix and x, shared by every
 * format and made by the first that is timed. */
typedef struct tune_inputs {
    fp16 *w16, *x;
} tune_inputs;

typedef struct shape_tuning {
    rl_ctx *ctx;
    tune_inputs *in;
    quant_format f;
    quant_dot_shape shapes[16];
    int n;
    int base_rows, k;   /* the matrix: BASE_ROWS x TUNE_K, or decode_tune_cpu_at's */
    bool hot;           /* that one matrix, hot (else copies beyond the cache) */
    int rows;           /* base_rows x copies */
    void *w, *scratch;  /* rows x the format's row bytes */
    const fp16 *x;      /* in->x, once built */
    float *y;
    double *ref, *bound; /* base_rows: every copy's rows have the same */
    char signature[128];
} shape_tuning;

static void shape_name(void *state, int i, char *buf, size_t len)
{
    const shape_tuning *s = state;
    const quant_dot_shape *q = &s->shapes[i];
    if (s->f == QF_F16 && q->prefetch > 0)
        snprintf(buf, len, "%d rows %d B ahead", q->rows, q->prefetch);
    else if (s->f == QF_F16)
        snprintf(buf, len, "%d rows", q->rows);
    else if (q->prefetch > 0)
        snprintf(buf, len, "%d row%s %d B ahead", q->rows, q->rows > 1 ? "s" : "", q->prefetch);
    else
        snprintf(buf, len, "%d row%s no prefetch", q->rows, q->rows > 1 ? "s" : "");
}

static void shape_set(void *state, int i)
{
    const shape_tuning *s = state;
    bool ok = s->f == QF_F16 ? gemv_fp16_set_rows(s->shapes[i].rows) &&
                                   gemv_fp16_set_prefetch(s->shapes[i].prefetch)
                             : quant_dot_set_shape(s->f, s->shapes[i]);
    if (!ok)
        rl_die(RL_EXIT_FAILED, "internal error: %s: shape %d rejected", quant_formats[s->f].name, i);
}

static void shape_call(void *state)
{
    shape_tuning *s = state;
    quant_args a = {s->f, s->y, s->w, s->x, s->rows, s->k, 1, s->scratch, NULL};
    quant_decode_int8(&a, quant_isa_best());
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

/* The inputs, built only when the candidates are timed. */
static void shape_build(void *state)
{
    shape_tuning *s = state;
    rl_ctx *ctx = s->ctx;
    if (!s->in->w16) {
        s->in->w16 = rl_host_random_f16(ctx, (size_t)s->base_rows * s->k, -1, 1);
        s->in->x = rl_host_random_f16(ctx, s->k, -1, 1);
    }
    s->x = s->in->x;
    size_t base_bytes = quant_row_bytes(s->f, s->k) * s->base_rows;
    int copies = s->hot ? 1 : rl_copies_beyond_cache(ctx, (double)base_bytes);
    copies = copies > MAX_COPIES ? MAX_COPIES : copies;
    s->rows = s->base_rows * copies;
    s->w = rl_host_alloc(base_bytes * (size_t)copies);
    quant_encode_matrix(s->f, s->w, s->in->w16, s->base_rows, s->k);
    for (int c = 1; c < copies; c++)
        memcpy((char *)s->w + c * base_bytes, s->w, base_bytes);
    s->y = rl_host_alloc(sizeof(float) * (size_t)s->rows);
    s->scratch = rl_host_alloc(quant_int8_scratch(s->rows, s->k, 1));
    s->ref = rl_host_alloc(sizeof(double) * s->base_rows);
    s->bound = rl_host_alloc(sizeof(double) * s->base_rows);
    quant_reference(s->ref, s->f, s->w, s->x, s->base_rows, s->k, 1, false);
    quant_int8_error_bound(s->bound, s->f, s->w, s->x, s->base_rows, s->k);
}

/* Every rows x prefetch pair of the -1-ended lists, and the lists as text
 * for the signature ("1 2 4", "0 1024 4096"): a list that changes is a
 * new candidate set, whose cached choice is timed again. */
static void cross(shape_tuning *s, const int *rows, const int *prefetch, char *rows_text,
                  char *prefetch_text, size_t len)
{
    rows_text[0] = prefetch_text[0] = '\0';
    for (const int *r = rows; *r >= 0; r++) {
        snprintf(rows_text + strlen(rows_text), len - strlen(rows_text), "%s%d", r == rows ? "" : " ", *r);
        for (const int *p = prefetch; *p >= 0 && s->n < 16; p++)
            s->shapes[s->n++] = (quant_dot_shape){*r, *p};
    }
    for (const int *p = prefetch; *p >= 0; p++)
        snprintf(prefetch_text + strlen(prefetch_text), len - strlen(prefetch_text), "%s%d",
                 p == prefetch ? "" : " ", *p);
}

/* The candidates and the signature: what the choice depends on besides
 * the machine (not the copies, which follow the LLC the ceilings measured). */
static void candidates(shape_tuning *s)
{
    char rows[32], prefetch[32];
    if (s->f == QF_F16) { /* experiment 02's GEMV: rows per step, prefetch distance */
        cross(s, GEMV_FP16_ROWS, GEMV_FP16_PREFETCH, rows, prefetch, sizeof rows);
        /* the lanes name the kernel: a choice timed on 8-lane steps is retimed */
        snprintf(s->signature, sizeof s->signature, "fp16 gemv on %d lanes with fma; rows %s; prefetch %s; %d x %d %s",
                 gemv_fp16_lanes(), rows, prefetch, s->base_rows, s->k, s->hot ? "hot" : "from DRAM");
        return;
    }
    cross(s, QUANT_DOT_ROWS, QUANT_DOT_PREFETCH, rows, prefetch, sizeof rows);
    /* a kernel rewritten for other registers is a new kernel: its cached
     * choice (timed on the old one) no longer applies; so is one whose
     * prefetches, unrolled, left each block 15-24 % fewer instructions
     * ("unrolled"), and one whose rows side by side lie a segment apart
     * ("in segments": from DRAM, 4 rows took 0.65-0.78 of the time that
     * neighbouring rows took on a Zen 3) */
    bool zmm = false;
#if defined(QUANT_DOT_ZMM)
    zmm = s->f == QF_Q2 || s->f == QF_Q6;
#endif
    snprintf(s->signature, sizeof s->signature, "%s%s; rows %s in segments; prefetch %s unrolled; %d x %d %s",
             quant_isa_name(quant_isa_best()), zmm ? " zmm" : "", rows, prefetch, s->base_rows, s->k,
             s->hot ? "hot" : "from DRAM");
}

/* The default's index among the candidates. */
static int default_index(const shape_tuning *s)
{
    quant_dot_shape d = s->f == QF_F16 ? (quant_dot_shape){gemv_fp16_rows_default(), 0}
                                        : quant_dot_shape_default(s->f);
    for (int i = 0; i < s->n; i++)
        if (s->shapes[i].rows == d.rows && s->shapes[i].prefetch == d.prefetch)
            return i;
    rl_die(RL_EXIT_FAILED, "internal error: %s's default shape is no candidate",
           quant_formats[s->f].name);
}

static void release(shape_tuning *s) /* what shape_build made, if it ran */
{
    rl_host_free(s->w);
    rl_host_free(s->y);
    rl_host_free(s->scratch);
    rl_host_free(s->ref);
    rl_host_free(s->bound);
}

void decode_tune_cpu_at(rl_ctx *ctx, bool integer_formats, int rows, int k)
{
    if (ctx->kind != RL_CPU)
        return; /* the GPU's kernels have no shape to choose here */
    /* the portable C integer kernels have none either */
    quant_format last = integer_formats && quant_isa_best() != QUANT_ISA_C ? QF_COUNT - 1 : QF_F16;
    tune_inputs in = {NULL, NULL};
    bool hot = rows > 0;
    for (quant_format f = QF_F16; f <= last; f++) {
        shape_tuning s = {.ctx = ctx, .in = &in, .f = f, .base_rows = hot ? rows : BASE_ROWS,
                          .k = hot ? k : TUNE_K, .hot = hot};
        candidates(&s);
        char key[64], what[48];
        if (hot) /* its own key: the DRAM choice stays the model's */
            snprintf(key, sizeof key, "tuning_%s_%dx%d_hot", quant_formats[f].name, rows, k);
        else
            snprintf(key, sizeof key, "tuning_%s", quant_formats[f].name);
        snprintf(what, sizeof what, "%s decode shape", quant_formats[f].name);
        rl_tune t = {key, what, s.signature, s.n, default_index(&s), shape_name, shape_set,
                     shape_check, shape_call, shape_build, &s};
        rl_tune_choose(ctx, &t);
        release(&s);
    }
    rl_host_free(in.w16);
    rl_host_free(in.x);
}

void decode_tune_cpu(rl_ctx *ctx, bool integer_formats) { decode_tune_cpu_at(ctx, integer_formats, 0, 0); }
