/*
 * rl_weights.h -- a linear layer's FP16 weights, as a decode step reads
 * them, and the part that holds them (weights.c). Experiments 02 (the
 * layer alone, n tokens at a time) and 07 (the weight GEMM that is the
 * rest of a decode step) time the gemv family on it; included by them
 * directly, not by rooflab.h.
 *
 * The part makes its buffers when it opens: the weights on the device,
 * `copies` of them back to back (so that a call that rotates through them
 * reads them from where they live, not from the cache the last call left
 * them in), their first drawn_rows rows drawn at random and the others
 * repeating them (a row's values do not change its time; only the drawn
 * rows are validated); the tokens of the largest point; the output; the
 * largest scratch a point's variant asks for. The points at one token
 * count share the reference of the first rows.
 */
#ifndef RL_WEIGHTS_H
#define RL_WEIGHTS_H

#include "gemv.h"
#include "rooflab.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rl_weights {
    /* the layer, set when it is declared */
    int rows, k;          /* k inputs, rows outputs */
    int copies;           /* of the weights, back to back */
    int drawn_rows;       /* drawn at random; the others repeat them */
    int group;            /* the group its points share, the experiment's to set */
    rl_f16_shape gemv_shape; /* the F16 GEMV's shape for this k (rl_tune_f16_dram), set
                                when the part opens; rows 0: the kernel's as it is */
    /* grown by rl_weights_fit as points are declared */
    int nmax;             /* the most tokens of a point */
    size_t scratch_bytes; /* the most scratch of a point's variant */
    /* made when the part opens */
    fp16 *w, *x, *hw, *hx; /* device; host: the drawn rows, every token */
    float *y;
    void *scratch;
    double *ref;          /* the first rows' reference at ref_n tokens */
    int ref_n;
} rl_weights;

/* A part for the layer `init` describes: its state a copy kept for the
 * run (part.state, an rl_weights *), its buffers made when it opens and
 * freed when it is done. */
rl_part rl_weights_part(rl_ctx *ctx, const rl_weights *init);
/* Sizes the part for a point of variant v at n tokens that validates its
 * first validated_rows rows. */
void rl_weights_fit(rl_ctx *ctx, rl_weights *W, const gemv_variant *v, int n, int validated_rows);
/* In a point's prepare: call on every row of the first copy at n tokens,
 * check on the first validated_rows rows, and the point's output and
 * reference (computed for the first point at n; the others share it). */
void rl_weights_bind(rl_ctx *ctx, rl_weights *W, rl_point *p, gemv_call *call, gemv_call *check,
                     int n, int validated_rows);

/* A device buffer of `items` items of item_bytes each: the first `drawn`
 * (on the host) uploaded, then repeated. The weights' rows repeat this
 * way; so do exp-07's KV caches. */
void *rl_upload_repeated(rl_ctx *ctx, const void *host, size_t drawn, size_t items, size_t item_bytes);

#ifdef __cplusplus
}
#endif
#endif /* RL_WEIGHTS_H */
