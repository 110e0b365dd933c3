/*
 * moe.c -- experiment 08's routing (moe.h): top-k experts per token without
 * replacement, uniform (a partial Fisher-Yates shuffle) or skewed (weighted
 * draws from the experts not yet chosen), from a splitmix64 stream; the
 * plans; the GPU's launch plan (moe_grid), host arithmetic that tests and
 * a static model share with the launcher; the table and the counts.
 */
#include "moe.h"
#include "check.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t next_u64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static double next_unit(uint64_t *s) { return (double)(next_u64(s) >> 11) * 0x1.0p-53; }

/* A whole number in [0, n). */
static int next_below(uint64_t *s, int n) { return (int)(next_unit(s) * n); }

static void route_uniform(int *out, int *order, int n, int k, uint64_t *s)
{
    for (int e = 0; e < n; e++)
        order[e] = e;
    for (int j = 0; j < k; j++) { /* the first k of a shuffle */
        int pick = j + next_below(s, n - j), t = order[j];
        order[j] = order[pick], order[pick] = t;
        out[j] = order[j];
    }
}

static void route_skewed(int *out, bool *taken, int n, int k, uint64_t *s)
{
    memset(taken, 0, sizeof(bool) * (size_t)n);
    for (int j = 0; j < k; j++) {
        double total = 0;
        for (int e = 0; e < n; e++)
            total += taken[e] ? 0 : 1.0 / (e + 1);
        double u = next_unit(s) * total;
        int e = 0;
        for (; e < n - 1; e++) {
            if (taken[e])
                continue;
            u -= 1.0 / (e + 1);
            if (u < 0)
                break;
        }
        while (taken[e]) /* rounding left u past the last free expert */
            e--;
        taken[e] = true;
        out[j] = e;
    }
}

void moe_route(int *experts, int batch, int n_experts, int top_k, moe_routing how, uint64_t seed)
{
    RL_REQUIRE(batch >= 0 && top_k >= 1 && top_k <= n_experts, "a routing takes 1 to E experts per token");
    uint64_t s = seed;
    int *order = malloc(sizeof(int) * (size_t)n_experts);
    bool *taken = malloc(sizeof(bool) * (size_t)n_experts);
    RL_REQUIRE(order && taken, "out of memory for a routing");
    for (int t = 0; t < batch; t++) {
        if (how == MOE_UNIFORM)
            route_uniform(experts + (size_t)t * top_k, order, n_experts, top_k, &s);
        else
            route_skewed(experts + (size_t)t * top_k, taken, n_experts, top_k, &s);
    }
    free(order);
    free(taken);
}

int moe_touched(const int *experts, int batch, int top_k, int n_experts)
{
    bool *seen = calloc((size_t)n_experts, sizeof(bool));
    RL_REQUIRE(seen, "out of memory for a routing");
    int touched = 0;
    for (size_t i = 0; i < (size_t)batch * top_k; i++)
        if (!seen[experts[i]])
            seen[experts[i]] = true, touched++;
    free(seen);
    return touched;
}

int moe_passes(const int *experts, int batch, int top_k, int n_experts)
{
    int *count = calloc((size_t)n_experts, sizeof(int));
    RL_REQUIRE(count, "out of memory for a routing");
    for (size_t i = 0; i < (size_t)batch * top_k; i++) {
        RL_REQUIRE(experts[i] >= 0 && experts[i] < n_experts, "a routed expert lies in 0..E-1");
        count[experts[i]]++;
    }
    int passes = 0;
    for (int e = 0; e < n_experts; e++)
        passes += (count[e] + MOE_PASS_TOKENS - 1) / MOE_PASS_TOKENS;
    free(count);
    return passes;
}

/* ---- the plan ------------------------------------------------------------------ */

size_t moe_plan_ints(int n_experts, int batch, int top_k)
{
    size_t pairs = (size_t)batch * (top_k > 0 ? top_k : 1);
    size_t dense_pairs = (size_t)batch * n_experts;
    size_t most = pairs > dense_pairs ? pairs : dense_pairs;
    return 2 * (size_t)n_experts + 1 + 2 * most;
}

moe_plan moe_plan_build(int *buf, const int *experts, int batch, int n_experts, int top_k, bool dense)
{
    RL_REQUIRE(batch >= 1 && top_k >= 1 && top_k <= n_experts, "a plan takes 1 to E experts per token");
    int *expert = buf, *start = expert + n_experts;
    int *token = start + n_experts + 1;
    size_t pairs = dense ? (size_t)batch * n_experts : (size_t)batch * top_k;
    int *out = token + pairs;
    /* count each expert's pairs, then place them in token order */
    int *count = calloc((size_t)n_experts, sizeof(int));
    RL_REQUIRE(count, "out of memory for a plan");
    for (size_t i = 0; i < (size_t)batch * top_k; i++) {
        RL_REQUIRE(experts[i] >= 0 && experts[i] < n_experts, "a routed expert lies in 0..E-1");
        count[experts[i]]++;
    }
    int active = 0, at = 0;
    for (int e = 0; e < n_experts; e++) {
        int n = dense ? batch : count[e];
        if (!n)
            continue;
        expert[active] = e, start[active] = at;
        count[e] = at; /* now where its next pair goes */
        at += n, active++;
    }
    start[active] = at;
    if (dense) {
        for (int i = 0; i < active; i++)
            for (int t = 0; t < batch; t++)
                token[start[i] + t] = t, out[start[i] + t] = expert[i] * batch + t;
    } else {
        for (int t = 0; t < batch; t++)
            for (int j = 0; j < top_k; j++) {
                int e = experts[(size_t)t * top_k + j], slot = count[e]++;
                token[slot] = t, out[slot] = t * top_k + j;
            }
    }
    free(count);
    return (moe_plan){active, expert, start, token, out};
}

moe_plan moe_plan_rebase(moe_plan p, const int *from, const int *to)
{
    moe_plan q = p;
    q.expert = to + (p.expert - from);
    q.start = to + (p.start - from);
    q.token = to + (p.token - from);
    q.out = to + (p.out - from);
    return q;
}

/* ---- the GPU's launch plan ------------------------------------------------------ */

moe_launch moe_grid(int rows, int k, int active, int sm_count)
{
    RL_REQUIRE(rows >= 1 && k >= 8 && k % 8 == 0 && active >= 1,
               "a MoE launch plan needs rows, k a multiple of 8 and an expert");
    int k8 = k / 8;
    long long want = (long long)(sm_count > 0 ? sm_count : 1) * MOE_WARPS_PER_SM;
    int split = 1;
    /* double the split while the grid is short of warps and each part
     * would still hold a full round of every lane's loads */
    while (split < MOE_BLOCK_WARPS && (long long)rows * active * split < want &&
           k8 / (2 * split) >= 32 * MOE_LOADS)
        split *= 2;
    int words = (k8 + split - 1) / split;
    moe_launch g = {.warps_per_row = split, .rows_per_block = MOE_BLOCK_WARPS / split,
                    .chunk = (words + 31) / 32 * 32, .blocks_y = (unsigned)active};
    g.blocks_x = (unsigned)((rows + g.rows_per_block - 1) / g.rows_per_block);
    return g;
}

/* ---- the table ------------------------------------------------------------------ */

const moe_variant moe_variants[] = {
    {.number = 1, .name = "moe_active", .role = "active",
     .what = "each expert some token chose, read once for all its tokens (8 per pass): a 16-byte "
             "load GEMV per expert (CPU: gemv_fp16 on the gathered tokens; GPU: one launch, a warp "
             "per row of every active expert)",
     .cpu = moe_active_cpu, .cuda = CUDA_ONLY(moe_active_cuda), .key = {"active experts", "active experts"}},
    {.number = 2, .name = "moe_dense", .role = "dense", .dense = true,
     .what = "every expert against every token, the chosen outputs gathered after: reads all E "
             "experts whatever the routing (the wrong kernel)",
     .cpu = moe_dense_cpu, .cuda = CUDA_ONLY(moe_dense_cuda), .key = {"dense (all experts)", "dense (all experts)"}},
    {.number = 3, .name = "moe_empty_launch", .role = "fixed_cost", .empty = true,
     .what = "a step's fixed cost: one launch that moves nothing (GPU: an empty kernel; CPU: an "
             "empty OpenMP parallel region), timed beside the steps (the batch-1 claim's premise)",
     .cpu = moe_empty_cpu, .cuda = CUDA_ONLY(moe_empty_cuda),
     .key = {"empty parallel region", "empty kernel launch"}},
    {0},
};

static bool has(const void *row, int backend)
{
    const moe_variant *v = row;
    return backend == KERNEL_CUDA ? v->cuda != NULL : v->cpu != NULL;
}

static void detail(const void *row, char *buf, size_t len)
{
    const moe_variant *v = row;
    snprintf(buf, len, "%s", v->empty ? "reads nothing" : v->dense ? "reads all E" : "reads the touched");
}

const kernel_family moe_family = {"moe", "cpu/moe.c", "moe.cu", moe_variants, sizeof moe_variants[0],
                                  has, detail, NULL};

size_t moe_scratch_bytes(const moe_variant *v, int backend, int n_experts, int rows, int k, int batch)
{
    if (v->empty)
        return 0;
    size_t all = v->dense ? (size_t)n_experts * batch * rows * sizeof(float) : 0;
    /* the CPU's gathered tokens of one pass and their outputs (the experts run one after
     * another, each across every thread) */
    size_t gather = backend == KERNEL_CPU
                        ? (size_t)MOE_PASS_TOKENS * ((size_t)k * sizeof(fp16) + (size_t)rows * sizeof(float))
                        : 0;
    return all + gather;
}

double moe_bytes(const moe_variant *v, double experts_read, int n_experts, int rows, int k,
                 int batch, int top_k)
{
    if (v->empty)
        return 0;
    double weights = (v->dense ? n_experts : experts_read) * 2.0 * rows * k;
    double io = 2.0 * k * batch + 4.0 * rows * batch * top_k;
    double scratch = v->dense ? 4.0 * rows * ((double)n_experts * batch + (double)batch * top_k) : 0;
    return weights + io + scratch;
}

double moe_flops(const moe_variant *v, int n_experts, int rows, int k, int batch, int top_k)
{
    return v->empty ? 0 : 2.0 * rows * k * batch * (v->dense ? n_experts : top_k);
}

double moe_launches(const moe_variant *v, int backend, double passes, int n_experts, int batch)
{
    if (v->empty)
        return 1;
    if (backend == KERNEL_CUDA)
        return v->dense ? 2 : 1;
    int per_expert = (batch + MOE_PASS_TOKENS - 1) / MOE_PASS_TOKENS;
    return v->dense ? (double)n_experts * per_expert + 1 : passes;
}
