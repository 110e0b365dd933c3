/*
 * exp03.h -- what experiment 03's files share: the synthetic model
 * (model.c), the measured formats, and the report (report.c).
 */
#ifndef EXP03_H
#define EXP03_H

#include "quant.h"
#include "rooflab.h"

/* One weight matrix of the decoder: rows outputs, k inputs. */
typedef struct matrix {
    char name[24];   /* "L3.gate", "head" */
    int rows, k;
    size_t w_offset; /* in blocks of QUANT_BLOCK weights: the same for every format */
    size_t y_offset; /* its decode outputs in the step's output vector */
} matrix;

/* A Llama-3.1-8B-shaped decoder's matrices, in every format at once. */
typedef struct model {
    int layers;             /* 0 for the cache-sized model */
    int mini_rows;          /* its rows, else 0 */
    bool head;
    int nmat;
    matrix *mats;
    double params;          /* weights in the matrices */
    size_t blocks;          /* params / QUANT_BLOCK */
    size_t rows_total;      /* decode outputs per step */
    int max_rows, prefill_n;
    void *w[QF_COUNT];      /* the weights, per format (device) */
    fp16 *x[2], *xs[2];     /* decode and prefill inputs, k = 4096 and 14336 (device) */
    float *y, *ys, *yval;   /* decode outputs, prefill outputs, validation (device) */
    void *scratch;
    double *ref[QF_COUNT];  /* decode reference, rows_total per format (host) */
    double *bound[QF_COUNT]; /* the integer-dot decode's error bound, the same (host) */
    /* The prefill path is validated on the first rows of two matrices
     * (k = 4096 and 14336): the same call with fewer rows. */
    int check_rows[2];
    const matrix *check_mat[2];
    double *check_ref[2][QF_COUNT];
} model;

enum { HIDDEN = 4096, FFN = 14336, KV = 1024, VOCAB = 128256 };

void model_plan(model *m, int layers, bool head, int prefill_n);
void model_plan_mini(model *m, int rows, int prefill_n);
/* Random FP16 weights, every format encoded on the host and uploaded, with
 * the references computed on the way. */
void model_build(rl_ctx *ctx, model *m, const quant_variant *prefill);
void model_free(rl_ctx *ctx, model *m);
double model_bytes(const model *m, quant_format f);
const fp16 *model_input(const model *m, int k, bool prefill);

/* The work rl_measure_group() times: one decode step (a GEMV per matrix)
 * or one prefill step (n tokens through every matrix). */
typedef struct step {
    model *m;
    const quant_variant *v;
    quant_format f;
    struct CUstream_st *stream;
} step;
void run_step(void *p);

/* One measured format and phase. */
typedef struct result {
    quant_format f;
    quant_phase phase;
    const quant_variant *v;
    step step;
    bool ok;
    double max_abs_err, seconds;
    rl_measurement m;
    char why[256];
} result;

/* report.c */
typedef struct report {
    rl_ctx *ctx;
    const rl_ceilings *ceil;
    const model *m;
    result res[2][QF_COUNT]; /* [phase][format] */
} report;

double result_tokens_per_s(const report *r, const result *x);
double result_gbps(const report *r, const result *x); /* weight bytes per second */
bool model_cache_resident(const report *r, quant_format f);
/* The read roof of a format's weights: the level they live in. */
rl_roof model_roof(const report *r, quant_format f);
void write_rows(report *r);
void write_published_rows(report *r);
void print_tables(const report *r);
void judge(report *r);

/* matrix.c: --matrix ROWSxK, one matrix in every format; writes no results. */
int run_matrix(rl_ctx *ctx, const quant_variant *table, const char *spec);

#endif
