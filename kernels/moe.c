/*
 * moe.c -- experiment 08's routing (moe.h): top-k experts per token without
 * replacement, uniform (a partial Fisher-Yates shuffle) or skewed (weighted
 * draws from the experts not yet chosen), from a splitmix64 stream.
 */
#include "moe.h"
#include "check.h"

#include <stdbool.h>
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
