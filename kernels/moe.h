/*
 * moe.h -- experiment 08's mixture of experts, the routing: which of E
 * experts each token of a batch is sent to (top-k, seeded), and how many
 * distinct experts a step then touches, the bytes a kernel that reads
 * only the active experts must move. The model of the uniform case is
 * rl_moe_experts_touched (harness/rl_models.h).
 */
#ifndef KERNELS_MOE_H
#define KERNELS_MOE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum moe_routing {
    MOE_UNIFORM, /* every expert equally likely: the model's case */
    MOE_SKEWED   /* expert e with weight 1 / (e + 1) (Zipf, s = 1): a few hot experts */
} moe_routing;

/* experts[t * top_k + j]: token t's j-th expert, top_k distinct experts
 * of n_experts per token, drawn without replacement; the same seed gives
 * the same routing. 1 <= top_k <= n_experts. */
void moe_route(int *experts, int batch, int n_experts, int top_k, moe_routing how, uint64_t seed);

/* The distinct experts a routing touches. */
int moe_touched(const int *experts, int batch, int top_k, int n_experts);

#ifdef __cplusplus
}
#endif

#endif
