/*
 * cpu/decode_shapes.c -- the CPU decode's candidate shapes for experiments
 * 02 (F16) and 03 (every format). The defaults are the compile-time
 * choices of the machines they were tuned on; another machine may want
 * others (issue 27), so harness/tune_decode.c times these.
 */
#include "decode_shapes.h"

#include "../gemv.h"

#include <stdio.h>
#include <string.h>

quant_format decode_shapes_last_format(bool integer_formats)
{
    return integer_formats && quant_isa_best() != QUANT_ISA_C ? QF_COUNT - 1 : QF_F16;
}

/* Appends the -1-ended list as text ("1 2 4", "0 1024 4096"). */
static void list_text(const int *list, char *buf, size_t len)
{
    buf[0] = '\0';
    for (const int *v = list; *v >= 0; v++)
        snprintf(buf + strlen(buf), len - strlen(buf), "%s%d", v == list ? "" : " ", *v);
}

/* Every rows x prefetch pair of the -1-ended lists, as many as fit. */
static void cross(decode_shapes *s, const int *rows, const int *prefetch)
{
    for (const int *r = rows; *r >= 0; r++)
        for (const int *p = prefetch; *p >= 0 && s->n < DECODE_SHAPES_MAX; p++)
            s->shape[s->n++] = (quant_dot_shape){*r, *p};
}

/* The signature names the candidate lists (a list that changes is a new
 * set, whose cached choice is timed again) and the matrix, not the copies
 * beyond the cache, which follow the LLC the ceilings measured. */
static void sign_f16(decode_shapes *s, int rows, int k, bool hot)
{
    char r[32], p[32];
    list_text(GEMV_FP16_ROWS, r, sizeof r);
    list_text(GEMV_FP16_PREFETCH, p, sizeof p);
    /* the lanes name the kernel: a choice timed on 8-lane steps is retimed */
    snprintf(s->signature, sizeof s->signature, "fp16 gemv on %d lanes with fma; rows %s; prefetch %s; %d x %d %s",
             gemv_fp16_lanes(), r, p, rows, k, hot ? "hot" : "from DRAM");
}

static void sign_integer(decode_shapes *s, int rows, int k, bool hot)
{
    char r[32], p[32];
    list_text(QUANT_DOT_ROWS, r, sizeof r);
    list_text(QUANT_DOT_PREFETCH, p, sizeof p);
    /* a kernel rewritten for other registers ("zmm") is a new kernel: its
     * cached choice, timed on the old one, no longer applies; so is one
     * whose prefetches were unrolled ("unrolled"), and one whose rows side
     * by side lie a segment apart ("in segments"), which changed which
     * row count is fastest from DRAM */
    bool zmm = false;
#if defined(QUANT_DOT_ZMM)
    zmm = s->format == QF_Q2 || s->format == QF_Q6;
#endif
    snprintf(s->signature, sizeof s->signature, "%s%s; rows %s in segments; prefetch %s unrolled; %d x %d %s",
             quant_isa_name(quant_isa_best()), zmm ? " zmm" : "", r, p, rows, k,
             hot ? "hot" : "from DRAM");
}

static int default_index(const decode_shapes *s)
{
    quant_dot_shape d = s->format == QF_F16 ? (quant_dot_shape){gemv_fp16_rows_default(), 0}
                                             : quant_dot_shape_default(s->format);
    for (int i = 0; i < s->n; i++)
        if (s->shape[i].rows == d.rows && s->shape[i].prefetch == d.prefetch)
            return i;
    return -1;
}

void decode_shapes_list(decode_shapes *s, quant_format f, int rows, int k, bool hot)
{
    memset(s, 0, sizeof *s);
    s->format = f;
    if (f == QF_F16) { /* experiment 02's GEMV: rows per step, prefetch distance */
        cross(s, GEMV_FP16_ROWS, GEMV_FP16_PREFETCH);
        sign_f16(s, rows, k, hot);
    } else {
        cross(s, QUANT_DOT_ROWS, QUANT_DOT_PREFETCH);
        sign_integer(s, rows, k, hot);
    }
    s->default_index = default_index(s);
}

void decode_shapes_name(const decode_shapes *s, int i, char *buf, size_t len)
{
    const quant_dot_shape *q = &s->shape[i];
    const char *plural = q->rows > 1 ? "s" : "";
    if (s->format == QF_F16 && q->prefetch > 0)
        snprintf(buf, len, "%d rows %d B ahead", q->rows, q->prefetch);
    else if (s->format == QF_F16)
        snprintf(buf, len, "%d rows", q->rows);
    else if (q->prefetch > 0)
        snprintf(buf, len, "%d row%s %d B ahead", q->rows, plural, q->prefetch);
    else
        snprintf(buf, len, "%d row%s no prefetch", q->rows, plural);
}

bool decode_shapes_select(const decode_shapes *s, int i)
{
    const quant_dot_shape *q = &s->shape[i];
    if (s->format == QF_F16)
        return gemv_fp16_set_rows(q->rows) && gemv_fp16_set_prefetch(q->prefetch);
    return quant_dot_set_shape(s->format, *q);
}

void decode_shapes_run(quant_format f, float *y, const void *w, const fp16 *x, int rows, int k,
                       void *scratch)
{
    quant_args a = {f, y, w, x, rows, k, 1, scratch, NULL};
    quant_decode_int8(&a, quant_isa_best());
}
