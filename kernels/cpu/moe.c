/*
 * cpu/moe.c -- experiment 08's MoE kernels on the CPU (moe.h).
 *
 * Both run a plan expert by expert, each expert's GEMV across every
 * thread: the hand-written FP16 GEMV (gemv_fp16_cpu, the bandwidth kernel
 * of experiments 02 and 03, tuned per machine) on up to 8 tokens per pass.
 * An expert of 768 x 2048 is 3 MiB, so each pass is a long enough stream
 * for the prefetchers, and the threads' fork and join (a few us) stay
 * small against its ~100 us from DRAM.
 *
 * Tried and dropped: a pass that converts its tokens to FP32 once and
 * multiplies on 16-float AVX-512 vectors (one conversion per 16 weights,
 * none per token): slower at batch 64, even at 16
 * (experiments/08-weight-tiers/README.md, "Method", has the times).
 */
#include "../moe.h"
#include "../gemv.h"
#include "check.h"

#include <string.h>

/* Expert e's weights. */
static const fp16 *expert_w(const moe_args *a, int e) { return a->w + (size_t)e * a->rows * a->k; }

/* One pass: n <= 8 pairs of an expert, their tokens gathered, their
 * outputs scattered to the rows the plan names. */
static void run_pass(const moe_args *a, const fp16 *w, const int *token, const int *out, int n)
{
    fp16 *xs = a->scratch;
    float *ys = (float *)(xs + (size_t)MOE_PASS_TOKENS * a->k);
    for (int t = 0; t < n; t++)
        memcpy(xs + (size_t)t * a->k, a->x + (size_t)token[t] * a->k, sizeof(fp16) * (size_t)a->k);
    gemv_fp16_cpu(&(gemv_args){ys, w, xs, a->rows, a->k, n, NULL, NULL});
    for (int t = 0; t < n; t++)
        memcpy(a->y + (size_t)out[t] * a->rows, ys + (size_t)t * a->rows, sizeof(float) * (size_t)a->rows);
}

void moe_active_cpu(const moe_args *a)
{
    RL_REQUIRE(a->scratch && a->k % 8 == 0, "moe_active_cpu needs its scratch and k a multiple of 8");
    const moe_plan *p = &a->active;
    for (int i = 0; i < p->active; i++)
        for (int s = p->start[i]; s < p->start[i + 1]; s += MOE_PASS_TOKENS) {
            int n = p->start[i + 1] - s < MOE_PASS_TOKENS ? p->start[i + 1] - s : MOE_PASS_TOKENS;
            run_pass(a, expert_w(a, p->expert[i]), p->token + s, p->out + s, n);
        }
}

/* A step's fixed cost on the CPU: the fork and join of one parallel
 * region, as each pass's GEMV makes, with nothing in it (the empty asm
 * keeps the region from being folded away). */
void moe_empty_cpu(const moe_args *a)
{
    (void)a;
#pragma omp parallel
    __asm__ volatile("" ::: "memory");
}

/* Every expert on every token, in order: no gather, the outputs straight
 * into the scratch (expert e's for token t at row e x batch + t), then
 * the chosen ones copied out. */
void moe_dense_cpu(const moe_args *a)
{
    RL_REQUIRE(a->scratch && a->k % 8 == 0, "moe_dense_cpu needs its scratch and k a multiple of 8");
    float *all = a->scratch;
    for (int e = 0; e < a->n_experts; e++)
        for (int t0 = 0; t0 < a->batch; t0 += MOE_PASS_TOKENS) {
            int n = a->batch - t0 < MOE_PASS_TOKENS ? a->batch - t0 : MOE_PASS_TOKENS;
            gemv_fp16_cpu(&(gemv_args){all + ((size_t)e * a->batch + t0) * a->rows, expert_w(a, e),
                                       a->x + (size_t)t0 * a->k, a->rows, a->k, n, NULL, NULL});
        }
    size_t row_bytes = sizeof(float) * (size_t)a->rows;
#pragma omp parallel for schedule(static)
    for (int s = 0; s < a->batch * a->top_k; s++) {
        int t = s / a->top_k;
        memcpy(a->y + (size_t)s * a->rows, all + ((size_t)a->experts[s] * a->batch + t) * a->rows, row_bytes);
    }
}
