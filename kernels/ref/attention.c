/*
 * ref/attention.c -- the double-precision reference every attention
 * variant, on either backend, is checked against: the textbook formula,
 * one query row at a time, two passes over its scores (the maximum
 * first, so that exp never overflows).
 */
#include "../attention.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

/* Where row r's query, keys and values start, and how many keys it sees. */
static void row_operands(const attention_args *a, attention_phase ph, size_t r, const fp16 **q,
                         const fp16 **k, const fp16 **v)
{
    size_t d = (size_t)a->dim, L = (size_t)a->ctx;
    size_t kv; /* the (sequence, KV head) or the head whose cache the row reads */
    if (ph == ATTN_DECODE) {
        size_t b = r / (size_t)a->heads_q, h = r % (size_t)a->heads_q;
        size_t group = (size_t)(a->heads_q / a->heads_kv);
        kv = b * (size_t)a->heads_kv + h / group;
    } else {
        kv = r / L;
    }
    *q = a->q + r * d;
    *k = a->k + kv * L * d;
    *v = a->v + kv * L * d;
}

static void reference_row(double *out, double *s, const attention_args *a, attention_phase ph,
                          size_t r)
{
    const fp16 *q, *k, *v;
    row_operands(a, ph, r, &q, &k, &v);
    const int d = a->dim, L = a->ctx;
    const double scale = 1.0 / sqrt((double)d);
    double m = -INFINITY;
    for (int j = 0; j < L; j++) {
        double dot = 0;
        for (int i = 0; i < d; i++)
            dot += (double)fp16_to_float(q[i]) * fp16_to_float(k[(size_t)j * d + i]);
        s[j] = dot * scale;
        m = s[j] > m ? s[j] : m;
    }
    double sum = 0;
    for (int j = 0; j < L; j++)
        sum += s[j] = exp(s[j] - m);
    for (int i = 0; i < d; i++)
        out[i] = 0;
    for (int j = 0; j < L; j++)
        for (int i = 0; i < d; i++)
            out[i] += s[j] / sum * fp16_to_float(v[(size_t)j * d + i]);
}

void attention_reference(double *want, const attention_args *a, attention_phase ph, size_t first,
                         size_t count)
{
    int threads = omp_get_max_threads();
    double *scores = malloc(sizeof(double) * (size_t)a->ctx * (size_t)threads);
    if (!scores) {
        fprintf(stderr, "rooflab: out of memory for the attention reference's scores\n");
        exit(1);
    }
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < count; i++)
        reference_row(want + i * (size_t)a->dim, scores + (size_t)omp_get_thread_num() * a->ctx, a,
                      ph, first + i);
    free(scores);
}
