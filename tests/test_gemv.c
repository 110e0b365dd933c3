/*
 * test_gemv.c -- experiment 02's kernels against the double-precision
 * reference: every variant, odd row counts, k not a multiple of the vector
 * width times the warp, every token count the GEMV kernels take; and the
 * counting the roofline rests on. The CUDA suite skips without a GPU.
 */
#include "gemv.h"
#include "helpers.h"
#include "rl_backend.h"
#include "rl_measure.h"
#include "rooflab.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct shape { int rows, k; } shape;
static const shape SHAPES[] = {{1, 8}, {3, 24}, {7, 256}, {9, 1000}, {33, 4104}, {257, 512}, {8193, 64}};
static const int TOKENS[] = {1, 2, 3, 4, 5, 8, 17};

/* Random halves in [-1, 1): never zeros, never a pattern. */
static fp16 *random_halves(size_t n, uint64_t seed)
{
    float *f = rl_host_alloc(n * sizeof(float));
    fp16 *h = rl_host_alloc(n * sizeof(fp16));
    rl_fill_uniform(f, n, -1, 1, seed);
    for (size_t i = 0; i < n; i++)
        h[i] = float_to_fp16(f[i]);
    rl_host_free(f);
    return h;
}

typedef struct job { void (*launch)(const gemv_args *); gemv_args a; } job;

static void launch(void *p)
{
    job *j = p;
    j->launch(&j->a);
}

static void check_variant(rl_backend *be, const gemv_variant *v, shape s, int n, uint64_t seed)
{
    size_t wn = (size_t)s.rows * s.k, xn = (size_t)n * s.k, yn = (size_t)n * s.rows;
    fp16 *w = random_halves(wn, seed), *x = random_halves(xn, seed + 1);
    double *want = rl_host_alloc(yn * sizeof(double));
    gemv_reference(want, w, x, s.rows, s.k, n);

    bool cuda = rl_kind(be) == RL_CUDA;
    size_t scratch = gemv_scratch_bytes(v, cuda ? KERNEL_CUDA : KERNEL_CPU, s.rows, s.k, n);
    job j = {cuda ? v->cuda : v->cpu, {rl_alloc(be, yn * 4), rl_alloc(be, wn * 2), rl_alloc(be, xn * 2), s.rows, s.k, n,
                 scratch ? rl_alloc(be, scratch) : NULL, rl_stream(be)}};
    rl_upload(be, (void *)j.a.w, w, wn * 2);
    rl_upload(be, (void *)j.a.x, x, xn * 2);
    rl_check c = rl_validate_f32(be, launch, &j, j.a.y, yn, want, gemv_atol(s.k), 0);
    char msg[256];
    rl_check_describe(&c, msg, sizeof msg);
    cr_assert(c.ok, "%s variant %d %s (rows %d, k %d, n %d): %s", rl_backend_name(rl_kind(be)),
              v->number, v->name, s.rows, s.k, n, msg);

    rl_free(be, j.a.y);
    rl_free(be, (void *)j.a.w);
    rl_free(be, (void *)j.a.x);
    if (j.a.scratch)
        rl_free(be, j.a.scratch);
    rl_host_free(w);
    rl_host_free(x);
    rl_host_free(want);
}

static void check_table(rl_backend *be)
{
    uint64_t seed = 200;
    int checked = 0;
    int backend = rl_kind(be) == RL_CUDA ? KERNEL_CUDA : KERNEL_CPU;
    for (const gemv_variant *v = gemv_variants; v->name; v++)
        for (size_t s = 0; s < sizeof SHAPES / sizeof SHAPES[0]; s++)
            for (size_t t = 0; t < sizeof TOKENS / sizeof TOKENS[0]; t++) {
                if (!gemv_takes(v, TOKENS[t]) || !gemv_family.has(v, backend))
                    continue;
                check_variant(be, v, SHAPES[s], TOKENS[t], seed += 2);
                checked++;
            }
    cr_assert_gt(checked, 80, "the table was walked");
}

Test(gemv_cpu, every_variant_matches_the_reference)
{
    char why[256];
    rl_backend *be = rl_backend_open(RL_CPU, 0, why, sizeof why);
    cr_assert_not_null(be, "%s", why);
    check_table(be);
    rl_backend_close(be);
}

/* Every shape the tuner may choose for one token (rows per step, prefetch
 * distance) matches the reference, on row counts with every remainder of
 * a share's segments. */
Test(gemv_cpu, every_candidate_row_count_matches_the_reference)
{
    char why[256];
    rl_backend *be = rl_backend_open(RL_CPU, 0, why, sizeof why);
    cr_assert_not_null(be, "%s", why);
    cr_assert_eq(gemv_fp16_get_rows(), gemv_fp16_rows_default());
    cr_assert_eq(gemv_fp16_get_prefetch(), 0, "no prefetch until a tuner chooses one");
    const gemv_variant *fp16 = NULL;
    for (const gemv_variant *v = gemv_variants; v->name; v++)
        fp16 = v->cpu == gemv_fp16_cpu ? v : fp16;
    cr_assert_not_null(fp16);
    int candidates = 0;
    for (const int *r = GEMV_FP16_ROWS; *r >= 0; r++)
        for (const int *p = GEMV_FP16_PREFETCH; *p >= 0; p++, candidates++) {
            cr_assert(gemv_fp16_set_rows(*r) && gemv_fp16_set_prefetch(*p));
            cr_assert_eq(gemv_fp16_get_rows(), *r);
            cr_assert_eq(gemv_fp16_get_prefetch(), *p);
            for (int rows = 61; rows <= 67; rows += 3)
                check_variant(be, fp16, (shape){rows, 1024}, 1,
                              300 + 10 * (uint64_t)*r + (uint64_t)rows + 1000 * (uint64_t)*p);
        }
    cr_assert_geq(candidates, 9);
    cr_assert_not(gemv_fp16_set_rows(3), "3 rows is no candidate");
    cr_assert_not(gemv_fp16_set_rows(0));
    cr_assert_not(gemv_fp16_set_prefetch(100), "100 B ahead is no candidate");
    rl_backend_close(be);
}

/* The tolerance catches one wrong weight: flip the sign of one. */
Test(gemv_cpu, one_wrong_weight_fails_validation)
{
    char why[256];
    rl_backend *be = rl_backend_open(RL_CPU, 0, why, sizeof why);
    int rows = 64, k = 4096;
    fp16 *w = random_halves((size_t)rows * k, 5), *x = random_halves(k, 6);
    double *want = rl_host_alloc(rows * sizeof(double));
    gemv_reference(want, w, x, rows, k, 1);
    w[17 * k + 100] ^= 0x8000u; /* row 17, one weight */
    float *y = rl_alloc(be, rows * sizeof(float));
    job j = {gemv_fp16_cpu, {y, w, x, rows, k, 1, NULL, NULL}};
    rl_check c = rl_validate_f32(be, launch, &j, y, rows, want, gemv_atol(k), 0);
    cr_assert_not(c.ok);
    cr_assert_eq(c.bad, 1);
    cr_assert_eq(c.first_bad, 17);
    rl_free(be, y);
    rl_host_free(w);
    rl_host_free(x);
    rl_host_free(want);
    rl_backend_close(be);
}

Test(gemv_cpu, the_reference_is_exact_on_small_integers)
{
    /* halves that are small integers: every product and sum exact */
    fp16 w[2 * 3], x[2 * 3];
    const float wv[] = {1, 2, 3, -4, 5, -6}, xv[] = {7, 8, 9, -1, 0.5f, 2};
    for (int i = 0; i < 6; i++)
        w[i] = float_to_fp16(wv[i]), x[i] = float_to_fp16(xv[i]);
    double y[4];
    gemv_reference(y, w, x, 2, 3, 2);
    cr_assert_float_eq(y[0], 7 + 16 + 27, 0);     /* token 0, row 0 */
    cr_assert_float_eq(y[1], -28 + 40 - 54, 0);   /* token 0, row 1 */
    cr_assert_float_eq(y[2], -1 + 1 + 6, 0);      /* token 1, row 0 */
    cr_assert_float_eq(y[3], 4 + 2.5 - 12, 0);    /* token 1, row 1 */
}

Test(gemv_cpu, counting_flops_and_bytes)
{
    /* a GEMV with FP16 weights: 2 FLOPs and ~2 bytes per weight */
    double ai = rl_arith_intensity(gemv_flops(14336, 4096, 1), gemv_bytes(14336, 4096, 1));
    cr_assert(ai > 0.99 && ai < 1.0, "AI at n = 1: %g, just below 1", ai);
    cr_assert_float_eq(gemv_bytes(3, 5, 2), 2 * 15 + 2 * 10 + 4 * 6, 0);
    cr_assert_float_eq(gemv_flops(3, 5, 2), 60, 0);
    /* NVIDIA's guide: 4096 x 1024 at batch 512 is compute-bound, AI ~315 with FP16 out */
    double ai512 = rl_arith_intensity(rl_gemm_flops(4096, 512, 1024), rl_gemm_bytes(4096, 512, 1024, 2));
    cr_assert(fabs(ai512 - 315) < 1, "%g", ai512);
}

Test(cuda_gemv, every_variant_matches_the_reference)
{
    rl_backend *be = gpu_or_skip();
    check_table(be);
    rl_backend_close(be);
}

/* ---- the launcher tables' bounds ------------------------------------------ */

/* Variant 2 indexes a table of one specialization per token count: n = 0
 * would call NULL and n = 9 read past the table. */
Test(gemv_bounds, token_counts_outside_1_to_8_are_refused_with_a_reason)
{
    char why[128] = "";
    for (int n = 1; n <= GEMV_MAX_BATCH; n++)
        cr_assert(gemv_batch_ok(n, why, sizeof why), "n = %d", n);
    cr_assert_str_eq(why, "", "nothing said when it is fine");
    const int bad[] = {0, -1, GEMV_MAX_BATCH + 1, 1 << 30};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_not(gemv_batch_ok(bad[i], why, sizeof why), "n = %d", bad[i]);
        char want[64];
        snprintf(want, sizeof want, "got n = %d", bad[i]);
        cr_assert(strstr(why, "takes 1 to 8 tokens") && strstr(why, want), "%s", why);
    }
}

/* The launchers fail with that message (exit 1), never call through. */
Test(gemv_bounds, the_cpu_launcher_exits_on_9_tokens, .exit_code = 1)
{
    gemv_args a = {.rows = 1, .k = 8, .n = GEMV_MAX_BATCH + 1};
    gemv_fp16_cpu(&a);
}

Test(gemv_bounds, the_cpu_launcher_exits_on_0_tokens, .exit_code = 1)
{
    gemv_args a = {.rows = 1, .k = 8, .n = 0};
    gemv_fp16_cpu(&a);
}

/* gemv.cu loads 8 halves of a row with one 16-byte load: k a multiple of
 * 8 and w, x 16-byte aligned, each refused with what it needs. */
Test(gemv_bounds, the_cuda_shape_check_says_what_the_16_byte_loads_need)
{
    char why[160] = "";
    const void *w = (const void *)(uintptr_t)0x10000, *x = (const void *)(uintptr_t)0x20000;
    cr_assert(gemv_cuda_shape_ok(4096, 4096, w, x, why, sizeof why));
    cr_assert(gemv_cuda_shape_ok(7, 8, w, x, why, sizeof why));
    cr_assert(gemv_cuda_shape_ok(0, 0, NULL, NULL, why, sizeof why), "an empty layer is no error");
    cr_assert_str_eq(why, "", "nothing said when it is fine");

    cr_assert_not(gemv_cuda_shape_ok(4096, 4100, w, x, why, sizeof why));
    cr_assert(strstr(why, "k must be a multiple of 8") && strstr(why, "k = 4100"), "%s", why);
    cr_assert_not(gemv_cuda_shape_ok(1, 1, w, x, why, sizeof why));
    cr_assert(strstr(why, "multiple of 8"), "%s", why);

    const char *bytes = (const char *)w;
    for (int off = 1; off < 16; off++) {
        cr_assert_not(gemv_cuda_shape_ok(4096, 4096, bytes + off, x, why, sizeof why), "w + %d", off);
        cr_assert(strstr(why, "w must be 16-byte aligned"), "%s", why);
        cr_assert_not(gemv_cuda_shape_ok(4096, 4096, w, (const char *)x + off, why, sizeof why), "x + %d", off);
        cr_assert(strstr(why, "x must be 16-byte aligned"), "%s", why);
    }
    cr_assert_not(gemv_cuda_shape_ok(-1, 8, w, x, why, sizeof why));
    cr_assert_not(gemv_cuda_shape_ok(8, -8, w, x, why, sizeof why));
    cr_assert(strstr(why, "k = -8"), "%s", why);
}

/* ---- the CUDA kernel's launch plan (no GPU: plain C) ---------------------------- */

static bool in_splits(int split) { return split == 1 || split == 2 || split == 4 || split == 8; }

/* What every plan must be: a tile per warp-group, every row in a block and
 * no block empty; the split as large as the grid in one wave and a round of
 * steps per warp allow. */
static void check_plan(int rows, int k, int sms, int bps)
{
    gemv_cuda_plan p = gemv_cuda_plan_for(rows, k, sms, bps);
    char at[96];
    snprintf(at, sizeof at, "rows %d, k %d, %d SMs x %d blocks", rows, k, sms, bps);
    cr_assert_eq(p.rows_per_warp, GEMV_CUDA_TILE_ROWS, "%s", at);
    cr_assert_eq(p.threads, 32 * GEMV_CUDA_BLOCK_WARPS, "%s", at);
    cr_assert(in_splits(p.split), "%s: split %d", at, p.split);
    cr_assert_eq(p.split * p.tiles_per_block, GEMV_CUDA_BLOCK_WARPS, "%s", at);
    cr_assert_eq(p.tiles, (rows + 15) / 16, "%s", at);
    cr_assert_geq(p.blocks, 1, "%s", at);
    if (rows > 0) {
        cr_assert_geq(p.blocks * p.tiles_per_block * 16, rows, "%s: every row in a block", at);
        cr_assert_lt((p.blocks - 1) * p.tiles_per_block * 16, rows, "%s: no empty block", at);
    }
    long long steps = (k + 31) / 32, resident = (long long)sms * bps;
    if (p.split > 1) {
        cr_assert_leq(p.blocks, resident, "%s: split %d in one wave", at, p.split);
        cr_assert_geq(steps, (long long)p.split * GEMV_CUDA_STEPS, "%s: a round a warp", at);
    }
    if (p.split < GEMV_CUDA_MAX_SPLIT && rows > 0) { /* twice the split would break one of them */
        int twice = 2 * p.split;
        long long blocks = (p.tiles + GEMV_CUDA_BLOCK_WARPS / twice - 1) / (GEMV_CUDA_BLOCK_WARPS / twice);
        cr_assert(blocks > resident || steps < (long long)twice * GEMV_CUDA_STEPS, "%s: split %d would do", at,
                  twice);
    }
}

Test(gemv_plan, every_plan_covers_its_rows_in_one_wave_where_it_can)
{
    const int rows[] = {0, 1, 15, 16, 17, 33, 257, 1000, 1024, 4096, 8192, 8193, 14336, 50000, 128256};
    const int ks[] = {0, 8, 64, 120, 128, 256, 1000, 4096, 4104, 14336};
    const int sms_bps[][2] = {{132, 3}, {114, 3}, {108, 3}, {40, 3}, {1, 1}, {0, 3}, {132, 0}};
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
        for (size_t k = 0; k < sizeof ks / sizeof ks[0]; k++)
            for (size_t d = 0; d < sizeof sms_bps / sizeof sms_bps[0]; d++)
                check_plan(rows[r], ks[k], sms_bps[d][0], sms_bps[d][1]);
}

/* On an H200 (132 SMs, 3 blocks each): Llama-3-8B's matrices and exp-02's
 * shapes, in one wave with the split that fits. */
Test(gemv_plan, the_h200_splits_short_matrices_and_keeps_tall_ones_whole)
{
    static const struct { int rows, k, split; long long blocks; } WANT[] = {
        {1024, 4096, 8, 64},      /* k, v: 64 tiles, 8 warps each */
        {4096, 4096, 8, 256},     /* q, o */
        {4096, 14336, 8, 256},    /* down */
        {8192, 8192, 4, 256},     /* exp-02's square */
        {14336, 4096, 2, 224},    /* gate, up: 896 tiles, 4 a block */
        {128256, 4096, 1, 1002},  /* the head: 8016 tiles, more than a wave even whole */
        {8193, 64, 1, 65},        /* 2 steps a row: no round to share */
    };
    for (size_t i = 0; i < sizeof WANT / sizeof WANT[0]; i++) {
        gemv_cuda_plan p = gemv_cuda_plan_for(WANT[i].rows, WANT[i].k, 132, 3);
        cr_assert_eq(p.split, WANT[i].split, "%d x %d: split %d", WANT[i].rows, WANT[i].k, p.split);
        cr_assert_eq(p.blocks, WANT[i].blocks, "%d x %d: %lld blocks", WANT[i].rows, WANT[i].k, p.blocks);
    }
    gemv_cuda_plan unknown = gemv_cuda_plan_for(4096, 4096, 0, 0);
    cr_assert_eq(unknown.split, 1, "no device figures: no split");
    cr_assert_eq(unknown.blocks, 32);
}

#ifdef RL_HAVE_CUDA
/* The checks come before any CUDA call: these run without a GPU. */
Test(gemv_bounds, the_cuda_launcher_exits_on_0_tokens, .exit_code = 1)
{
    gemv_args a = {.rows = 1, .k = 8, .n = 0};
    gemv_fp16_cuda(&a);
}

Test(gemv_bounds, the_cuda_launcher_exits_on_9_tokens, .exit_code = 1)
{
    gemv_args a = {.rows = 1, .k = 8, .n = GEMV_MAX_BATCH + 1};
    gemv_fp16_cuda(&a);
}

Test(gemv_bounds, the_cuda_launcher_exits_on_k_not_a_multiple_of_8, .exit_code = 1)
{
    gemv_args a = {.rows = 1, .k = 12, .n = 1};
    gemv_fp16_cuda(&a);
}

Test(gemv_bounds, the_cuda_launcher_exits_on_weights_off_16_bytes, .exit_code = 1)
{
    gemv_args a = {.w = (const fp16 *)(uintptr_t)0x10002, .rows = 1, .k = 8, .n = 1};
    gemv_fp16_cuda(&a);
}
#endif
