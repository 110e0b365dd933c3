/*
 * test_moe.c -- experiment 08's routing: each token's top-k experts are
 * distinct and in range, a seed gives one routing, uniform routing touches
 * as many experts as the model says (the mean over seeds), skewed routing
 * fewer, and top-E touches every expert.
 */
#include "moe.h"
#include "rooflab.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void assert_valid(const int *ex, int batch, int n, int k)
{
    for (int t = 0; t < batch; t++)
        for (int j = 0; j < k; j++) {
            int e = ex[t * k + j];
            cr_assert(e >= 0 && e < n, "token %d: expert %d of %d", t, e, n);
            for (int i = 0; i < j; i++)
                cr_assert_neq(ex[t * k + i], e, "token %d routed to expert %d twice", t, e);
        }
}

Test(moe, routes_are_distinct_in_range_and_seeded)
{
    enum { B = 64, E = 128, K = 8 };
    static int a[B * K], b[B * K], c[B * K];
    for (int how = MOE_UNIFORM; how <= MOE_SKEWED; how++) {
        moe_route(a, B, E, K, how, 7);
        moe_route(b, B, E, K, how, 7);
        moe_route(c, B, E, K, how, 8);
        assert_valid(a, B, E, K);
        assert_valid(c, B, E, K);
        cr_assert(!memcmp(a, b, sizeof a), "the same seed, the same routing");
        cr_assert(memcmp(a, c, sizeof a), "another seed, another routing");
    }
}

/* The mean over seeds against E (1 - (1 - k/E)^B), at the claims' shapes. */
Test(moe, uniform_routing_touches_what_the_model_says)
{
    static const int shapes[][3] = {{128, 8, 1}, {128, 8, 4}, {128, 8, 16}, {128, 8, 64}, {32, 4, 8}};
    static int ex[64 * 8];
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        int E = shapes[i][0], K = shapes[i][1], B = shapes[i][2];
        double sum = 0;
        enum { SEEDS = 400 };
        for (int s = 0; s < SEEDS; s++) {
            moe_route(ex, B, E, K, MOE_UNIFORM, 1000 + s);
            sum += moe_touched(ex, B, K, E);
        }
        double model = rl_moe_experts_touched(E, K, B);
        cr_assert(fabs(sum / SEEDS - model) <= 0.02 * model, "E %d, top-%d, B %d: mean %.2f, model %.2f", E,
                  K, B, sum / SEEDS, model);
    }
}

Test(moe, skewed_routing_touches_fewer_and_top_e_touches_all)
{
    enum { B = 16, E = 128, K = 8 };
    static int ex[B * K];
    double uniform = 0, skewed = 0;
    for (int s = 0; s < 50; s++) {
        moe_route(ex, B, E, K, MOE_UNIFORM, s);
        uniform += moe_touched(ex, B, K, E);
        moe_route(ex, B, E, K, MOE_SKEWED, s);
        skewed += moe_touched(ex, B, K, E);
    }
    cr_assert_lt(skewed, 0.8 * uniform, "skewed %.1f against uniform %.1f experts", skewed / 50, uniform / 50);
    static int all[4 * 32];
    for (int how = MOE_UNIFORM; how <= MOE_SKEWED; how++) {
        moe_route(all, 4, 32, 32, how, 3);
        assert_valid(all, 4, 32, 32);
        cr_assert_eq(moe_touched(all, 4, 32, 32), 32);
    }
}
