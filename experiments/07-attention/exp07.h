/*
 * exp07.h -- what experiment 07's files share: a decode configuration,
 * one point's data (a call of an attention variant, or of the weight GEMM,
 * with its shape), and what each chapter gives main.c.
 *
 * main.c holds the claims, the axes and the judgement's order, and calls
 * the chapters: weights.c (the weight GEMM, the rest of a decode step),
 * decode.c and prefill.c (attention's parts, on the buffers of buffers.c),
 * judge.c (the verdicts). No chapter calls back into main.c.
 */
#ifndef EXP07_H
#define EXP07_H

#include "attention.h"
#include "gemv.h"
#include "rl_weights.h"
#include "rooflab.h"

/* A decode configuration: heads_q query heads of dimension dim sharing
 * heads_kv KV heads. */
typedef struct attn_config {
    const char *name;
    int heads_q, heads_kv, dim;
} attn_config;

/* The layer whose weight GEMM is the rest of a decode step: Llama 3 8B's
 * seven matrices (q, k, v, o: 4096 x (4096 + 1024 + 1024 + 4096); gate,
 * up, down: 3 x 4096 x 14336), 218 M weights, timed as one 53248 x 4096
 * FP16 matrix: the same bytes and FLOPs. */
enum { LAYER_K = 4096, LAYER_ROWS = 53248 };

typedef enum point_kind { DECODE_ATTN, WEIGHT_GEMM, PREFILL_ATTN } point_kind;

/* One call: what a point is (its CSV columns) and what it runs. */
typedef struct exp07_call {
    point_kind kind;
    const char *phase;  /* "decode" or "prefill" */
    const char *config; /* "MHA", "GQA4", "GQA8"; "layer" for the weight GEMM */
    int batch, ctx, heads_q, heads_kv, group, dim;
    int validated_rows;
    double kv_bytes, score_bytes;
    attention_call attn; /* the attention's call, bound when prepared */
    gemv_call gemm;      /* or the weight GEMM's (every row), and its check (the first rows) */
    gemv_call gemm_check;
    void *part;          /* its part's buffers (decode.c, prefill.c, weights.c) */
} exp07_call;

/* ---- weights.c: the weight GEMM's part, one point per batch ---------------------- */
rl_weights *exp07_weights_part(rl_ctx *ctx);
void exp07_weight_point(rl_ctx *ctx, rl_weights *W, int batch);

/* ---- decode.c: a part per configuration and cache length ------------------------- */
/* Whether a batch's decode at cache length L fits the working-set limit
 * (the sweep skips those that do not: no part is made where none fits). */
bool exp07_decode_fits(const rl_ctx *ctx, const attn_config *cfg, int ctx_len, int batch);
/* The part of cfg at cache length L, sized for the largest of `batches`
 * that fits the working-set limit.
 * materialized: whether the materialized variant runs beside the fused. */
rl_part exp07_decode_part(rl_ctx *ctx, const attn_config *cfg, int ctx_len, const rl_steps *batches,
                          bool materialized);
/* The part's points at one batch (none past the part's largest). */
void exp07_decode_points(rl_ctx *ctx, void *part_state, int batch);

/* ---- prefill.c: a part per prompt length n ----------------------------------------- */
/* Whether the materialized scores of length n fit the working-set limit
 * (the sweep skips those that do not). */
bool exp07_prefill_fits(const rl_ctx *ctx, int n);
/* The part of length n. */
rl_part exp07_prefill_part(rl_ctx *ctx, int n);
void exp07_prefill_points(rl_ctx *ctx, void *part_state);
/* The heads a prefill point runs: 1 on the CPU (its threads split the
 * queries), 16 on a GPU (enough blocks to fill it). */
int exp07_prefill_heads(const rl_ctx *ctx);

/* ---- buffers.c: what a decode or a prefill part holds ------------------------------ */
/* q, K and V on the device, copies of the few drawn on the host (only
 * those are validated against the reference; the values of the others do
 * not change the time), an output per variant, the scratch, the reference
 * of the first rows. */
typedef struct attention_buffers {
    fp16 *q, *k, *v, *hq, *hk, *hv;
    float *out_fused, *out_mat;
    void *scratch;
    double *ref;
} attention_buffers;
/* Fills b for `copies` sequences (decode) or heads (prefill) of q_items
 * and kv_items halves each, the first `drawn` of them drawn and the rest
 * repeating them, and computes the reference of the first ref_rows rows
 * of the call `shape` describes over the drawn ones (its q, k and v are
 * set here). */
void exp07_open_attention_buffers(rl_ctx *ctx, attention_buffers *b, attention_args shape,
                                  attention_phase ph, size_t q_items, size_t kv_items, size_t drawn,
                                  size_t copies, size_t scratch_bytes, size_t ref_rows);
void exp07_free_attention_buffers(rl_ctx *ctx, attention_buffers *b);
/* The rows to validate: a prefix whose double reference costs at most
 * ~2^25 multiply-adds, at least min_rows. */
int exp07_attention_validated_rows(long rows, int ctx, int dim, int min_rows);
/* The fused point's reference: its first rows the double reference, the
 * others the materialized variant's output, so that each fused point is
 * checked against the reference and against the materialized path. */
double *exp07_fused_want(rl_ctx *ctx, const attention_args *materialized, attention_phase ph,
                         const double *ref, size_t ref_rows, size_t rows);

/* ---- judge.c: the verdicts, each of the claim main.c gives it ---------------------- */
/* The timed point of a kind (and role, when not NULL) at a batch, and at
 * a configuration and length unless it is the weight GEMM; NULL if none. */
const rl_point *exp07_find(const rl_points *all, point_kind kind, const char *role,
                           const char *config, int batch, int ctx_len);
/* Attention's share of the decode step: the fused point's time over its
 * own plus the weight GEMM's at the same batch; NaN where either is missing. */
double exp07_share(const rl_points *all, const char *config, int batch, int ctx_len);
void exp07_judge_ai_flat(rl_ctx *ctx, const rl_points *all, const rl_claim *claim,
                         const attn_config *cfg);
void exp07_judge_gemm_ai(rl_ctx *ctx, const rl_points *all, const rl_claim *claim);
void exp07_judge_mbu(rl_ctx *ctx, const rl_points *all, const rl_claim *claim, const attn_config *cfg);
/* cfg: Llama 3 8B's configuration; batches and contexts: the sweep's. */
void exp07_judge_share(rl_ctx *ctx, const rl_points *all, const rl_claim *claim,
                       const attn_config *cfg, const rl_steps *batches, const rl_steps *contexts);
/* configs: MHA, GQA-4, GQA-8, in that order. */
void exp07_judge_decode_bytes(rl_ctx *ctx, const rl_claim *claim, const attn_config configs[3]);
void exp07_judge_prefill_bytes(rl_ctx *ctx, const rl_claim *claim);
void exp07_judge_prefill_speed(rl_ctx *ctx, const rl_points *all, const rl_claim *claim,
                               const rl_steps *lengths);

#endif
