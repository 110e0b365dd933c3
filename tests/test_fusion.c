/*
 * test_fusion.c -- experiment 05's kernels against the double-precision
 * reference: every variant, both ops, odd sizes (tails of vector loads and
 * of strips), several chain lengths. The CUDA suite skips without a GPU.
 */
#include "fusion.h"
#include "helpers.h"
#include "rl_backend.h"
#include "rl_measure.h"
#include "rooflab.h"

#include <criterion/criterion.h>
#include <string.h>

static const size_t SIZES[] = {1, 3, 4, 5, 511, 512, 513, 4099, 65537};
static const int CHAIN_KS[] = {1, 2, 3, 8};

typedef struct job {
    void (*launch)(const fusion_args *a);
    fusion_args a;
} job;

static void launch(void *p)
{
    job *j = p;
    j->launch(&j->a);
}

/* Inputs outside the vector cos's polynomial range, for a strip that
 * must take the per-lane fallback (cpu/vmath.h). */
static const float LARGE[] = {1e6f, -3e4f, 8193.5f, 1e30f, -8192.0f};

/* plant_large: LARGE's values at a few places in the middle strip. */
static void check_variant(rl_backend *be, const fusion_variant *v, fusion_op op, int k, size_t n,
                          uint64_t seed, bool plant_large)
{
    float *host = rl_host_alloc(n * sizeof(float));
    double *ref = rl_host_alloc(n * sizeof(double));
    rl_fill_uniform(host, n, -4, 4, seed);
    for (size_t i = 0; plant_large && i < sizeof LARGE / sizeof LARGE[0]; i++)
        host[n / 2 + 37 * i] = LARGE[i];
    for (size_t i = 0; i < n; i++)
        ref[i] = host[i];
    for (int j = 0; j < k; j++)
        fusion_reference_step(ref, n, op);

    float *in = rl_alloc(be, n * sizeof(float));
    float *out = rl_alloc(be, n * sizeof(float));
    float *tmp = rl_alloc(be, n * sizeof(float));
    rl_upload(be, in, host, n * sizeof(float));
    rl_poison(be, tmp, n * sizeof(float));
    job j = {rl_kind(be) == RL_CUDA ? v->cuda : v->cpu, {out, in, tmp, n, k, op, rl_stream(be)}};
    rl_check c = rl_validate_f32(be, launch, &j, out, n, ref, FUSION_ATOL, FUSION_RTOL);
    char msg[256];
    rl_check_describe(&c, msg, sizeof msg);
    cr_assert(c.ok, "%s variant %d %s (%s, k=%d, n=%zu): %s", rl_backend_name(rl_kind(be)),
              v->number, v->name, fusion_op_name(op), k, n, msg);

    rl_free(be, in);
    rl_free(be, out);
    rl_free(be, tmp);
    rl_host_free(host);
    rl_host_free(ref);
}

static void check_table(rl_backend *be)
{
    uint64_t seed = 100;
    int checked = 0;
    int backend = rl_kind(be) == RL_CUDA ? KERNEL_CUDA : KERNEL_CPU;
    for (const fusion_variant *v = fusion_variants; v->name; v++)
        for (int op = FUSION_COS; op <= FUSION_AFFINE; op++)
            for (size_t s = 0; s < sizeof SIZES / sizeof SIZES[0]; s++)
                for (size_t ki = 0; ki < sizeof CHAIN_KS / sizeof CHAIN_KS[0] &&
                                    fusion_family.has(v, backend); ki++) {
                    int k = v->k ? v->k : CHAIN_KS[ki];
                    check_variant(be, v, (fusion_op)op, k, SIZES[s], seed++, false);
                    checked++;
                    if (v->k)
                        break; /* fixed-length variants: one k */
                }
    cr_assert_gt(checked, 100, "the table was walked");
}

Test(fusion_cpu, every_variant_matches_the_reference)
{
    char why[256];
    rl_backend *be = rl_backend_open(RL_CPU, 0, why, sizeof why);
    cr_assert_not_null(be, "%s", why);
    check_table(be);
    rl_backend_close(be);
}

/* The CPU's cos kernels run a strip without the C library's fallback
 * only when all its inputs are in the polynomial's range: a strip with
 * large inputs among ordinary ones must still get every element right. */
Test(fusion_cpu, a_strip_with_inputs_beyond_the_polynomial_range_is_right)
{
    char why[256];
    rl_backend *be = rl_backend_open(RL_CPU, 0, why, sizeof why);
    cr_assert_not_null(be, "%s", why);
    int checked = 0;
    for (const fusion_variant *v = fusion_variants; v->name; v++)
        if (!v->libm && fusion_family.has(v, KERNEL_CPU))
            for (int k = 1; k <= 3; k++, checked++)
                check_variant(be, v, FUSION_COS, v->k ? v->k : k, 4099, 7 + k, true);
    cr_assert_gt(checked, 6);
    rl_backend_close(be);
}

/* A variant that forgets the last element must be caught, not timed. */
static void forgets_the_tail(const fusion_args *a)
{
    for (size_t i = 0; i + 1 < a->n; i++)
        a->out[i] = fusion_apply(a->in[i], a->op);
}

Test(fusion_cpu, a_kernel_that_skips_an_element_fails_validation)
{
    char why[256];
    rl_backend *be = rl_backend_open(RL_CPU, 0, why, sizeof why);
    enum { N = 1000 };
    float in[N];
    double ref[N];
    rl_fill_uniform(in, N, -1, 1, 3);
    for (int i = 0; i < N; i++)
        ref[i] = in[i];
    fusion_reference_step(ref, N, FUSION_COS);
    float *out = rl_alloc(be, N * sizeof(float));
    job j = {forgets_the_tail, {out, in, NULL, N, 1, FUSION_COS, NULL}};
    rl_check c = rl_validate_f32(be, launch, &j, out, N, ref, FUSION_ATOL, FUSION_RTOL);
    cr_assert_not(c.ok);
    cr_assert_eq(c.bad, 1);
    cr_assert_eq(c.first_bad, N - 1);
    cr_assert_eq(c.nonfinite, 1, "the poison shows the element was never written");
    rl_free(be, out);
    rl_backend_close(be);
}

Test(fusion_cpu, bytes_count_the_memory_trips)
{
    const fusion_variant *t = fusion_variants;
    size_t n = 1000;
    for (; t->name; t++) {
        double want = (t->fused ? 1 : t->k ? t->k : 5) * 8.0 * (double)n;
        cr_assert_float_eq(t->bytes(n, t->k ? t->k : 5), want, 1e-9, "%s", t->name);
    }
}

Test(cuda_fusion, every_variant_matches_the_reference)
{
    rl_backend *be = gpu_or_skip();
    check_table(be);
    rl_backend_close(be);
}
