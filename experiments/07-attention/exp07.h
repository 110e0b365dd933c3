/*
 * exp07.h -- what experiment 07's files share: one point's data (a call of
 * an attention variant, or of the weight GEMM, with its shape), the
 * sweeps, the claims.
 */
#ifndef EXP07_H
#define EXP07_H

#include "attention.h"
#include "gemv.h"
#include "rooflab.h"

/* The decode configurations: 32 query heads of dimension 128, sharing 32,
 * 8 or 4 KV heads (multi-head, and grouped-query with groups of 4 and 8:
 * Llama 3 8B's is GQA-4). */
typedef struct attn_config {
    const char *name;
    int heads_q, heads_kv, dim;
} attn_config;
extern const attn_config EXP07_CONFIGS[];
enum { NCONFIGS = 3, LLAMA_CONFIG = 1 }; /* LLAMA_CONFIG: GQA-4, the share's configuration */

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

/* The sweeps, by the run's mode (main.c). */
typedef struct exp07_sweep {
    const int *batches, *contexts, *prefill_n; /* 0-ended */
    /* where the materialized decode runs: every part, GQA4's, or none */
    enum { MATERIALIZED_ALL, MATERIALIZED_LLAMA, MATERIALIZED_NONE } materialized;
} exp07_sweep;
exp07_sweep exp07_sweep_for(const rl_ctx *ctx);

/* Each declares its parts and points (decode.c, weights.c, prefill.c). */
void exp07_declare_decode(rl_ctx *ctx, const attn_config *cfg, int ctx_len, const int *batches,
                    bool materialized);
void exp07_declare_weights(rl_ctx *ctx, const int *batches);
void exp07_declare_prefill(rl_ctx *ctx, int n);
/* The heads a prefill point runs: 1 on the CPU (its threads split the
 * queries), 16 on a GPU (enough blocks to fill it). */
int exp07_prefill_heads(const rl_ctx *ctx);

/* The timed point of a kind (and role, when not NULL) at a batch, and at
 * a configuration and length unless it is the weight GEMM; NULL if none
 * was timed. Attention's share of the decode step: the fused point's time
 * over its own plus the weight GEMM's at the same batch (main.c). */
const rl_point *exp07_find(const rl_points *all, point_kind kind, const char *role,
                           const char *config, int batch, int ctx_len);
double exp07_share(const rl_points *all, const char *config, int batch, int ctx_len);

/* The claims, and the verdicts from every point (judge.c). */
extern const rl_claim EXP07_CLAIMS[];
void exp07_judge(rl_ctx *ctx, const rl_points *all);
/* The measured ridge, FLOP/B: the compute roof over DRAM's read rung. */
double exp07_ridge(rl_ctx *ctx);

/* Shared by the parts: the rows to validate (a prefix whose double
 * reference costs at most ~2^25 multiply-adds, at least min_rows), and
 * the fused point's reference: its first rows the double reference, the
 * others the materialized variant's output, so that each fused point is
 * checked against the reference and against the materialized path. */
int exp07_attention_validated_rows(long rows, int ctx, int dim, int min_rows);
double *exp07_fused_want(rl_ctx *ctx, const attention_args *materialized, attention_phase ph,
                   const double *ref, size_t ref_rows, size_t rows);
/* What a decode or prefill part holds, freed at its end: q, K and V on
 * the device, copies of the few drawn on the host (only those are
 * validated against the reference; the values of the others do not
 * change the time), an output per variant, the scratch, the reference of
 * the first rows. */
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
/* A device buffer of items items of item_bytes each: the first drawn
 * items (host) uploaded, then repeated. */
void *exp07_upload_repeated(rl_ctx *ctx, const void *host, size_t drawn, size_t items, size_t item_bytes);

#endif
