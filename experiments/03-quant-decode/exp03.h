/*
 * exp03.h -- what experiment 03's files share. main.c (the claims, the
 * axes, the points, the judgement) uses the two chapters: the model
 * (model.c) and the comparisons with F16 and the summaries (report.c),
 * which reads the model. Neither chapter calls back into main.c.
 */
#ifndef EXP03_H
#define EXP03_H

#include "quant.h"
#include "rooflab.h"

#include <math.h>

/* One weight matrix of the decoder: rows outputs, k inputs. */
typedef struct matrix {
    char name[24];   /* "L3.gate", "head" */
    int rows, k;
    size_t w_offset; /* in blocks of QUANT_BLOCK weights: the same for every format */
    size_t y_offset; /* its decode outputs in the step's output vector */
} matrix;

/* A Llama-3.1-8B-shaped decoder's matrices, in every format at once. */
typedef struct model {
    int layers, mini_rows;   /* layers 0: the cache-sized model (mini_rows) or --matrix */
    bool head;
    bool one_matrix;         /* --matrix: one matrix, each format timed in a group of its own */
    int nmat;
    matrix *mats;
    int widths[2];           /* the inputs' widths: 4096 and 14336 (--matrix: k twice) */
    double params;           /* weights in the matrices, a multiple of QUANT_BLOCK */
    size_t rows_total;       /* decode outputs per step */
    int max_rows, prefill_n; /* prefill_n 0: no prefill (--matrix) */
    int batch_n;             /* the batch part's most tokens (0: no batch part) */
    void *w[QF_COUNT];       /* the weights, per format (device) */
    fp16 *x[2], *xs[2];      /* decode and prefill inputs, per width (device) */
    fp16 *hx[2], *hxs[2];    /* the same on the host, for the references */
    float *y, *ys, *yval;    /* decode, prefill and prefill-check outputs (device) */
    void *scratch;
    double *ref[QF_COUNT];   /* decode reference, rows_total per format (host) */
    double *bound[QF_COUNT]; /* the integer-dot decode's error bound, the same (host) */
    /* Prefill's check: the first rows of a matrix of each width, their outputs
     * back to back in yval, their reference per format, their bound gemv_atol(k). */
    matrix check[2];
    size_t check_count;
    double *check_ref[QF_COUNT], *check_bound;
    /* The batch part's check: the same rows for batch_n tokens, each check
     * matrix's block token by token ([c][t][r]), with the weights rounded
     * to FP16 where the batch paths round them (the GPU's); the bound of
     * x's 8-bit rounding per output where the batch kernel rounds x (the
     * CPU's; batch_check picks a step's first tokens and its bound). */
    bool batch_rounds, batch_quantizes;
    double *batch_ref[QF_COUNT], *batch_bound[QF_COUNT];
} model;

enum { HIDDEN = 4096, FFN = 14336, KV = 1024, VOCAB = 128256 };
/* A layer's matrices: q, k, v as one, o, gate and up as one, down (model.c). */
enum { LAYER_MATRICES = 4 };

/* ---- model.c: the model ----------------------------------------------------- */

/* The model of this run, in declare (nothing allocated on the device), and
 * its metadata: layers_given (--layers) or, on a GPU, gpu_layers where its
 * memory allows; on the CPU the fewest layers that put the weights in DRAM,
 * else a cache-sized model. prefill_n: the prefill's tokens. */
void exp03_model_plan_run(rl_ctx *ctx, model *m, int layers_given, int gpu_layers, int prefill_n);
/* The shape alone; layers 0: the cache-sized model of mini_rows rows. */
void exp03_model_plan(model *m, int layers, bool head, int mini_rows, int prefill_n);
/* The batch part's most tokens, before the model is built (0: none). */
void exp03_model_plan_batch(model *m, int batch_n);
/* One matrix: decode only, or (batch_n > 0, --tokens) the batch kernels at
 * up to batch_n tokens, checked on its first rows. */
void exp03_model_plan_matrix(model *m, int rows, int k, int batch_n);
/* When the part opens: random FP16 weights in every format, uploaded, with
 * the references and bounds that the variants running here need. */
void exp03_model_build(rl_ctx *ctx, model *m);
void exp03_model_free(rl_ctx *ctx, model *m);
double exp03_model_bytes(const model *m, quant_format f);
/* The prefill path's conversion pass over the weights (kernels/quant.cu,
 * cpu/quant.c), once per step, a model: the bytes it moves (each weight
 * read in its format, written as FP16 on the GPU or FP32 on the CPU; none
 * for F16 on the GPU, whose GEMM reads the weights as they are) and its
 * seconds at the copy rung of the level its working set lives in. */
double exp03_model_pass_bytes(const model *m, quant_format f, bool gpu);
double exp03_model_pass_s(rl_ctx *ctx, const model *m, quant_format f);

/* One step of one variant in one format (a point's data); the first
 * members are its CSV columns. */
typedef struct step {
    const char *source, *format, *phase;
    double bits, params, size_bytes, size_gib, rel_size;
    int layers, tokens;
    model *m;
    const quant_variant *v;
    quant_format f;
    quant_launcher_fn launch;
    struct CUstream_st *stream;
    /* the part of the experiment it belongs to: v's phase, but QUANT_BATCH
     * for every point of the batch part (on the GPU the library path,
     * dequantize-then-cuBLAS, is timed there too) */
    quant_phase part;
    /* every point of the run (rl_points_all): the F16 of its group, for
     * rel_tokens_per_s, also where no ctx is at hand (report.c's scores) */
    const rl_points *all;
} step;

/* A step of v in format f at tokens (decode 1), and a point's prepare:
 * its check bound to the model's buffers, which exist once the part is
 * open. */
step *exp03_step_new(rl_ctx *ctx, model *m, const quant_variant *v, quant_format f, int tokens);
/* The same in the batch part (its part QUANT_BATCH, its phase "batch"). */
step *exp03_batch_step_new(rl_ctx *ctx, model *m, const quant_variant *v, quant_format f, int tokens);
void exp03_bind_check(rl_ctx *ctx, rl_point *p);

static inline double tps(const rl_point *p)
{
    return p ? RL_DATA(step, p)->tokens / p->seconds : NAN;
}
/* A point's work is the experiment's own, not one kernel call: a step is a
 * call per matrix of the model, so it runs as .run = exp03_run_step,
 * .arg = its step. */
void exp03_run_step(void *arg);  /* a GEMV per matrix (decode) or n tokens through each (prefill) */
/* prefill's and batch's check: the step's call on the check rows */
void exp03_run_check(void *arg);

/* ---- report.c: each point against F16, the summaries ------------------------- */

/* The F16 point timed with p: in its group; under --matrix, the one F16
 * point. NULL where none was timed. */
const rl_point *exp03_f16_of(const rl_point *p);
/* p's rate over that F16's (NaN: none), and its bytes per second over F16's. */
double exp03_vs_f16(const rl_point *p);
double exp03_bytes_vs_f16(const rl_point *p);
/* A format's best valid point of a phase: the highest rate over the F16
 * timed with it; for F16 itself, the fastest. */
const rl_point *exp03_best(const rl_points *pts, quant_format f, quant_phase phase);
double exp03_col_rel_tokens_per_s(rl_ctx *ctx, const rl_point *p); /* exp03_vs_f16 */
/* Prefill rows (NaN for decode): the conversion pass's share of the step's
 * time, by the model (exp03_model_pass_s over the measured time), and
 * measured as the time over the F16 prefill timed with it, 1 - t_F16 / t
 * (the same GEMM: on the GPU, F16 skips the pass). */
double exp03_col_pass_share_model(rl_ctx *ctx, const rl_point *p);
double exp03_col_pass_share_over_f16(rl_ctx *ctx, const rl_point *p);
/* The published rows, and the tables of each format's best point. */
void exp03_summarize(rl_ctx *ctx, const rl_points *pts, const model *m);
/* The verdicts' notes: where the weights live and why the quantized
 * formats fall behind F16's bytes per second; the range of the pass's
 * share of the prefill time (appended). */
void exp03_decode_note(rl_ctx *ctx, const rl_points *pts, const model *m, char *buf, size_t len);
void exp03_pass_note(rl_ctx *ctx, const rl_points *pts, char *buf, size_t len);

/* ---- judge.c: the decode and prefill verdicts ---------------------------------- */

/* q4's decode speedup over the F16 timed with it (decode: the note on
 * where the weights live, exp03_decode_note). */
void exp03_judge_decode_speedup(rl_ctx *ctx, const rl_points *pts, const rl_claim *c,
                                const char *decode);
/* Bytes per second over F16's, q8 to q4: flat where decode is about bytes. */
void exp03_judge_size_x_decode(rl_ctx *ctx, const rl_points *pts, const rl_claim *c,
                               const char *decode);
/* Prefill's tokens per second over F16's, every format: flat. */
void exp03_judge_prefill_flat(rl_ctx *ctx, const rl_points *pts, const rl_claim *c);

/* ---- batch.c: the step at M tokens -------------------------------------------- */

/* The batch part's most tokens on this run (0: no batch kernel here), for
 * the model's buffers, and its points: F16 and every format at each M. */
int exp03_batch_most_tokens(rl_ctx *ctx);
void exp03_batch_declare(rl_ctx *ctx, model *m);
/* --matrix with --tokens: the batch kernels on the one matrix at each of
 * the n token counts, every format, a group per format (as ggml's
 * test-backend-ops times each type alone). False: no batch kernel here. */
bool exp03_batch_declare_matrix(rl_ctx *ctx, model *m, const int *tokens, int n);
/* --tokens LIST: ascending counts of 1 to EXP03_MOST_TOKENS, comma-separated,
 * at most EXP03_MOST_TOKEN_COUNTS of them, into tokens; how many (0 for
 * ""), or -1 when LIST is not that. */
enum { EXP03_MOST_TOKEN_COUNTS = 16, EXP03_MOST_TOKENS = 512 };
int exp03_batch_tokens_parse(const char *list, int tokens[EXP03_MOST_TOKEN_COUNTS]);
/* The roofline's first model of format f's speedup over F16 at `tokens`:
 * max(1, min(bytes' ratio, ridge / tokens)), the measured ridge; and the
 * same as a column (NaN off the batch part). */
double exp03_batch_model_speedup(rl_ctx *ctx, quant_format f, int tokens);
double exp03_col_batch_model(rl_ctx *ctx, const rl_point *p);
/* q4's speedup at the smallest M past one token, and where it falls. */
void exp03_batch_judge_small(rl_ctx *ctx, const rl_points *all, const rl_claim *claim);
void exp03_batch_judge_bend(rl_ctx *ctx, const rl_points *all, const rl_claim *claim);

#endif
