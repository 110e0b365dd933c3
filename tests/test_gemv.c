/*
 * test_gemv.c -- experiment 02's kernels against the double-precision
 * reference: every variant, odd row counts, k not a multiple of the vector
 * width times the warp, every token count the GEMV kernels take; and the
 * counting the roofline rests on. The CUDA suite skips without a GPU.
 */
#include "gemv.h"
#include "helpers.h"
#include "rooflab.h"

#include <criterion/criterion.h>
#include <math.h>
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

#ifdef RL_HAVE_CUDA
/* The check comes before any CUDA call: this runs without a GPU. */
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
#endif
