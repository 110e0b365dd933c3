/*
 * test_moe.c -- experiment 08's routing: each token's top-k experts are
 * distinct and in range, a seed gives one routing, uniform routing touches
 * as many experts as the model says (the mean over seeds), skewed routing
 * fewer, and top-E touches every expert; the plans hold every pair once;
 * the GPU's launch plan (moe_grid, host arithmetic) splits k over warps
 * only where the grid is short of warps, and its parts cover each row's
 * k exactly, tails included; the passes and launches a step makes; both
 * kernels match the double-precision reference on both backends (the
 * CUDA suite skips without a GPU), k split or not, and fail it when they
 * read another expert than the routing's; the empty launch writes nothing.
 */
#include "gemv.h"
#include "helpers.h"
#include "moe.h"
#include "rl_backend.h"
#include "rl_measure.h"
#include "rooflab.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
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

/* ---- the plan -------------------------------------------------------------------- */

/* Every (token, slot) pair once, under the expert it was routed to; the
 * active plan lists the touched experts only, the dense one every expert
 * with every token. */
Test(moe, plans_hold_every_pair_once)
{
    enum { E = 12, B = 9, K = 3 };
    int ex[B * K];
    moe_route(ex, B, E, K, MOE_SKEWED, 5);
    int *buf = malloc(sizeof(int) * moe_plan_ints(E, B, K));
    moe_plan p = moe_plan_build(buf, ex, B, E, K, false);
    cr_assert_eq(p.active, moe_touched(ex, B, K, E));
    int seen[B * K] = {0};
    for (int i = 0; i < p.active; i++)
        for (int s = p.start[i]; s < p.start[i + 1]; s++) {
            int out = p.out[s];
            cr_assert(out >= 0 && out < B * K);
            cr_assert_eq(p.token[s], out / K, "pair %d's token", s);
            cr_assert_eq(ex[out], p.expert[i], "pair %d under expert %d", s, p.expert[i]);
            seen[out]++;
        }
    for (int s = 0; s < B * K; s++)
        cr_assert_eq(seen[s], 1, "output row %d planned %d times", s, seen[s]);
    moe_plan d = moe_plan_build(buf, ex, B, E, K, true);
    cr_assert_eq(d.active, E);
    cr_assert_eq(d.start[E], E * B);
    for (int i = 0; i < E; i++)
        for (int t = 0; t < B; t++)
            cr_assert_eq(d.out[d.start[i] + t], d.expert[i] * B + t);
    free(buf);
}

/* ---- the GPU's launch plan ------------------------------------------------------ */

/* The parts of a row of k8 words: consecutive, in order, each a whole
 * number of warp-wide steps but the last, together [0, k8) once. */
static void assert_parts_cover(const moe_launch *g, int k8, const char *what)
{
    cr_assert_eq(g->chunk % 32, 0, "%s: a part is whole warp-wide steps (%d words)", what, g->chunk);
    cr_assert_eq(g->rows_per_block * g->warps_per_row, MOE_BLOCK_WARPS, "%s: a block's warps", what);
    int at = 0;
    for (int part = 0; part < g->warps_per_row; part++) {
        int lo, hi;
        moe_part_range(k8, g->chunk, part, &lo, &hi);
        cr_assert(lo == at || (lo == k8 && hi == k8), "%s: part %d starts at %d, not %d", what, part, lo, at);
        cr_assert(hi >= lo && hi <= k8, "%s: part %d [%d, %d) of %d", what, part, lo, hi, k8);
        cr_assert(hi == k8 || hi - lo == g->chunk, "%s: part %d short before the end", what, part);
        at = hi;
    }
    cr_assert_eq(at, k8, "%s: the parts end at %d of %d words", what, at, k8);
}

/* The exp-08 shapes on 132 SMs: batch 1 at top-1 and top-2 (768 and 1536
 * rows) split k in two, every word of top-1's expert requested in the
 * first round over all SMs; from top-4 on a warp per row is enough. */
Test(moe, the_grid_splits_k_where_the_grid_is_short_of_warps)
{
    moe_launch g = moe_grid(768, 2048, 1, 132);
    cr_assert_eq(g.warps_per_row, 2);
    cr_assert_eq(g.rows_per_block, 4);
    cr_assert_eq(g.chunk, 128);
    cr_assert_eq(g.blocks_x, 192u, "768 rows, 4 a block: %u blocks", g.blocks_x);
    cr_assert_eq(g.blocks_y, 1u);
    /* each warp's part is one round: every lane's MOE_LOADS loads in flight at once */
    cr_assert_eq(g.chunk, 32 * MOE_LOADS);
    g = moe_grid(768, 2048, 2, 132);
    cr_assert_eq(g.warps_per_row, 2);
    cr_assert_eq(g.blocks_x * g.blocks_y, 384u);
    for (int k = 4; k <= 32; k *= 2) {
        g = moe_grid(768, 2048, k, 132);
        cr_assert_eq(g.warps_per_row, 1, "top-%d: a warp per row", k);
        cr_assert_eq(g.blocks_x, 96u);
        cr_assert_eq(g.blocks_y, (unsigned)k);
        cr_assert_geq(768.0 * k, 132 * MOE_WARPS_PER_SM, "top-%d: warps enough for every SM", k);
    }
    /* a short row is never split below one round per lane */
    g = moe_grid(768, 1024, 1, 132);
    cr_assert_eq(g.warps_per_row, 1, "k = 1024: 128 words, one round");
    /* a long row on a small grid splits up to a block's warps */
    g = moe_grid(8, 65536, 1, 132);
    cr_assert_eq(g.warps_per_row, MOE_BLOCK_WARPS);
    cr_assert_eq(g.rows_per_block, 1);
    cr_assert_eq(g.blocks_x, 8u);
}

/* Every shape's parts cover k exactly, with tails (k8 off a multiple of
 * 32 and of the split), on GPUs of several sizes; the split doubles only
 * while the grid is short of MOE_WARPS_PER_SM warps an SM and each part
 * keeps a full round. */
Test(moe, the_k_split_covers_every_word_once_with_tails)
{
    static const int sms[] = {1, 40, 108, 132}, rows[] = {1, 7, 41, 768}, active[] = {1, 3, 128};
    int splits_seen[MOE_BLOCK_WARPS + 1] = {0};
    for (int k8 = 1; k8 <= 1100; k8 += k8 < 300 ? 1 : 7)
        for (size_t a = 0; a < sizeof sms / sizeof sms[0]; a++)
            for (size_t b = 0; b < sizeof rows / sizeof rows[0]; b++)
                for (size_t c = 0; c < sizeof active / sizeof active[0]; c++) {
                    moe_launch g = moe_grid(rows[b], 8 * k8, active[c], sms[a]);
                    char what[96];
                    snprintf(what, sizeof what, "k = %d, %d rows, %d experts, %d SMs", 8 * k8, rows[b],
                             active[c], sms[a]);
                    int s = g.warps_per_row;
                    cr_assert(s == 1 || s == 2 || s == 4 || s == 8, "%s: split %d", what, s);
                    splits_seen[s]++;
                    assert_parts_cover(&g, k8, what);
                    cr_assert_geq((long long)g.blocks_x * g.rows_per_block, rows[b], "%s: every row", what);
                    cr_assert_lt((long long)(g.blocks_x - 1) * g.rows_per_block, rows[b], "%s: no empty block", what);
                    cr_assert_eq(g.blocks_y, (unsigned)active[c], "%s", what);
                    if (s > 1) {
                        cr_assert_geq(k8 / s, 32 * MOE_LOADS, "%s: each part a full round", what);
                        cr_assert_lt((long long)rows[b] * active[c] * (s / 2), (long long)sms[a] * MOE_WARPS_PER_SM,
                                     "%s: split although the grid had warps enough", what);
                    }
                    if (s < MOE_BLOCK_WARPS && (long long)rows[b] * active[c] * s < (long long)sms[a] * MOE_WARPS_PER_SM)
                        cr_assert_lt(k8 / (2 * s), 32 * MOE_LOADS, "%s: short of warps, yet not split further", what);
                }
    for (int s = 1; s <= MOE_BLOCK_WARPS; s *= 2)
        cr_assert_gt(splits_seen[s], 0, "some shape splits k over %d warps", s);
}

/* ---- the passes and launches a step makes --------------------------------------- */

Test(moe, passes_and_launches_count_the_fixed_costs)
{
    int one[8] = {5, 9, 1, 3, 0, 2, 7, 4};
    cr_assert_eq(moe_passes(one, 1, 8, 16), 8, "batch 1, top-8: a pass per expert");
    /* 20 tokens on expert 2 (3 passes: 8 + 8 + 4), one on expert 0 */
    int many[21];
    for (int t = 0; t < 20; t++)
        many[t] = 2;
    many[20] = 0;
    cr_assert_eq(moe_passes(many, 21, 1, 4), 4);
    const moe_variant *active = &moe_variants[0], *dense = &moe_variants[1], *empty = &moe_variants[2];
    cr_assert(empty->empty && !active->empty && !dense->empty);
    cr_assert_str_eq(empty->role, "fixed_cost");
    cr_assert_float_eq(moe_launches(active, KERNEL_CUDA, 8, 128, 1), 1, 0, "one launch a step");
    cr_assert_float_eq(moe_launches(dense, KERNEL_CUDA, 8, 128, 1), 2, 0, "the GEMVs, the gather");
    cr_assert_float_eq(moe_launches(active, KERNEL_CPU, 8, 128, 1), 8, 0, "a region per pass");
    cr_assert_float_eq(moe_launches(dense, KERNEL_CPU, 8, 128, 20), 128 * 3 + 1, 0, "E per 8 tokens, the gather");
    cr_assert_float_eq(moe_launches(empty, KERNEL_CPU, 8, 128, 1), 1, 0);
    cr_assert_float_eq(moe_bytes(empty, 8, 128, 768, 2048, 1, 8), 0, 0, "moves nothing");
    cr_assert_float_eq(moe_flops(empty, 128, 768, 2048, 1, 8), 0, 0);
    cr_assert_eq(moe_scratch_bytes(empty, KERNEL_CPU, 128, 768, 2048, 1), 0u);
}

/* ---- the kernels against the reference ---------------------------------------- */

typedef struct moe_case {
    int experts, rows, k, batch, top_k;
    moe_routing how;
} moe_case;

/* Batches past 8 tokens on one expert (two passes over its weights), rows
 * off a warp's and a block's multiple, top-1 to top-E. */
static const moe_case CASES[] = {
    {6, 40, 64, 1, 1, MOE_UNIFORM},  {6, 40, 64, 3, 2, MOE_UNIFORM}, {6, 33, 128, 11, 6, MOE_UNIFORM},
    {16, 72, 256, 20, 4, MOE_SKEWED}, {4, 264, 64, 9, 1, MOE_SKEWED},
    /* small grids with long rows: k split over 2 warps (257 words: a part's
     * tail) and over 4 (513 words; 41 rows leave a dead row in the last
     * block, at the barriers; skewed routing sends past 8 tokens to an
     * expert: two passes, each with its barriers) on any GPU of 16 SMs or more */
    {4, 72, 2056, 1, 1, MOE_UNIFORM}, {3, 41, 4104, 11, 2, MOE_SKEWED},
};

typedef struct moe_job {
    moe_call call;
} moe_job;

static void launch(void *p) { moe_call_run(&((moe_job *)p)->call); }

/* Runs variant v on one case; `wrong` routes the kernel's plan one expert
 * off the reference's, which a correct check must catch. */
static rl_check run_case(rl_backend *be, const moe_variant *v, const moe_case *c, bool wrong, uint64_t seed)
{
    int backend = rl_kind(be) == RL_CUDA ? KERNEL_CUDA : KERNEL_CPU;
    size_t nw = (size_t)c->experts * c->rows * c->k, nx = (size_t)c->batch * c->k;
    size_t slots = (size_t)c->batch * c->top_k;
    fp16 *hw = rl_host_alloc(nw * sizeof(fp16)), *hx = rl_host_alloc(nx * sizeof(fp16));
    rl_fill_uniform_f16(hw, nw, -1, 1, seed);
    rl_fill_uniform_f16(hx, nx, -1, 1, seed + 1);
    int *ex = malloc(sizeof(int) * slots), *run = malloc(sizeof(int) * slots);
    moe_route(ex, c->batch, c->experts, c->top_k, c->how, seed + 2);
    for (size_t s = 0; s < slots; s++)
        run[s] = wrong ? (ex[s] + 1) % c->experts : ex[s];
    double *want = rl_host_alloc(sizeof(double) * slots * c->rows);
    moe_reference(want, hw, hx, ex, c->rows, c->k, c->top_k, (int)slots);

    size_t plan = moe_plan_ints(c->experts, c->batch, c->top_k);
    int *host = malloc(sizeof(int) * (slots + 2 * plan));
    memcpy(host, run, sizeof(int) * slots);
    moe_plan a = moe_plan_build(host + slots, host, c->batch, c->experts, c->top_k, false);
    moe_plan d = moe_plan_build(host + slots + plan, host, c->batch, c->experts, c->top_k, true);
    int *dev = rl_alloc_copy(be, host, sizeof(int) * (slots + 2 * plan));
    fp16 *w = rl_alloc_copy(be, hw, nw * sizeof(fp16)), *x = rl_alloc_copy(be, hx, nx * sizeof(fp16));
    float *y = rl_alloc(be, slots * c->rows * sizeof(float));
    size_t scratch_bytes = moe_scratch_bytes(v, backend, c->experts, c->rows, c->k, c->batch);
    void *scratch = scratch_bytes ? rl_alloc(be, scratch_bytes) : NULL;
    moe_job j = {{backend == KERNEL_CUDA ? v->cuda : v->cpu,
                  {y, w, x, dev, moe_plan_rebase(a, host, dev), moe_plan_rebase(d, host, dev),
                   c->experts, c->rows, c->k, c->batch, c->top_k, scratch, rl_stream(be)}}};
    rl_check r = rl_validate_f32(be, launch, &j, y, slots * c->rows, want, gemv_atol(c->k), 0);
    rl_free(be, dev), rl_free(be, w), rl_free(be, x), rl_free(be, y), rl_free(be, scratch);
    rl_host_free(hw), rl_host_free(hx), rl_host_free(want);
    free(ex), free(run), free(host);
    return r;
}

static void check_every_variant(rl_backend *be)
{
    int backend = rl_kind(be) == RL_CUDA ? KERNEL_CUDA : KERNEL_CPU, checked = 0;
    for (const moe_variant *v = moe_variants; v->name; v++) {
        if (!moe_family.has(v, backend) || v->empty) /* no output: check_empty_launch */
            continue;
        for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++, checked++) {
            const moe_case *c = &CASES[i];
            rl_check r = run_case(be, v, c, false, 100 + 7 * i);
            char msg[256];
            rl_check_describe(&r, msg, sizeof msg);
            cr_assert(r.ok, "%s %s (E %d, %d x %d, B %d, top-%d): %s", rl_backend_name(rl_kind(be)),
                      v->name, c->experts, c->rows, c->k, c->batch, c->top_k, msg);
            cr_assert_not(run_case(be, v, c, true, 100 + 7 * i).ok,
                          "%s read other experts than the routing's and passed", v->name);
        }
    }
    cr_assert_geq(checked, 2 * (int)(sizeof CASES / sizeof CASES[0]), "both variants ran");
}

/* The empty launch runs and writes nothing. */
static void check_empty_launch(rl_backend *be)
{
    const moe_variant *v = &moe_variants[2];
    int backend = rl_kind(be) == RL_CUDA ? KERNEL_CUDA : KERNEL_CPU;
    cr_assert(v->empty && moe_family.has(v, backend));
    enum { N = 64 };
    float *y = rl_alloc(be, N * sizeof(float));
    rl_poison(be, y, N * sizeof(float));
    moe_job j = {{backend == KERNEL_CUDA ? v->cuda : v->cpu, {.y = y, .stream = rl_stream(be)}}};
    launch(&j);
    rl_sync(be);
    unsigned char *got = rl_download_copy(be, y, N * sizeof(float));
    for (size_t i = 0; i < N * sizeof(float); i++)
        cr_assert_eq(got[i], 0xFF, "the empty launch wrote byte %zu", i);
    rl_host_free(got);
    rl_free(be, y);
}

Test(moe_cpu, every_variant_matches_the_reference)
{
    char why[256];
    rl_backend *be = rl_backend_open(RL_CPU, 0, why, sizeof why);
    cr_assert_not_null(be, "%s", why);
    check_every_variant(be);
    check_empty_launch(be);
    rl_backend_close(be);
}

/* The counted bytes: the touched experts' weights once (all E for the
 * dense path, which also writes and reads back its E x B rows), x in, y out. */
Test(moe, bytes_are_the_counted_formula)
{
    const moe_variant *active = &moe_variants[0], *dense = &moe_variants[1];
    cr_assert(!active->dense && dense->dense);
    double expert = 2.0 * 768 * 2048, io = 2.0 * 2048 * 4 + 4.0 * 768 * 4 * 8;
    cr_assert_float_eq(moe_bytes(active, 29.5, 128, 768, 2048, 4, 8), 29.5 * expert + io, 1e-3);
    cr_assert_float_eq(moe_bytes(dense, 29.5, 128, 768, 2048, 4, 8),
                       128 * expert + io + 4.0 * 768 * (128 * 4 + 4 * 8), 1e-3);
    cr_assert_float_eq(moe_flops(active, 128, 768, 2048, 4, 8), 2.0 * 768 * 2048 * 4 * 8, 1e-3);
    cr_assert_float_eq(moe_flops(dense, 128, 768, 2048, 4, 8), 2.0 * 768 * 2048 * 4 * 128, 1e-3);
}

Test(cuda_moe, every_variant_matches_the_reference)
{
    rl_backend *be = gpu_or_skip();
    check_every_variant(be);
    check_empty_launch(be);
    rl_backend_close(be);
}
