/*
 * test_fusion.c -- experiment 05's kernels against the double-precision
 * reference: every variant, both ops, odd sizes (tails of vector loads and
 * of strips), several chain lengths. The CUDA suite skips without a GPU.
 */
#include "fusion.h"
#include "helpers.h"
#include "rooflab.h"

#include <criterion/criterion.h>
#include <string.h>

static const size_t SIZES[] = {1, 3, 4, 5, 511, 512, 513, 4099, 65537};
static const int CHAIN_KS[] = {1, 2, 3, 8};

typedef struct job {
    const fusion_variant *v;
    fusion_args a;
} job;

static void launch(void *p)
{
    job *j = p;
    j->v->launch(&j->a);
}

static void check_variant(rl_backend *be, const fusion_variant *v, fusion_op op, int k, size_t n,
                          uint64_t seed)
{
    float *host = rl_host_alloc(n * sizeof(float));
    double *ref = rl_host_alloc(n * sizeof(double));
    rl_fill_uniform(host, n, -4, 4, seed);
    for (size_t i = 0; i < n; i++)
        ref[i] = host[i];
    for (int j = 0; j < k; j++)
        fusion_reference_step(ref, n, op);

    float *in = rl_alloc(be, n * sizeof(float));
    float *out = rl_alloc(be, n * sizeof(float));
    float *tmp = rl_alloc(be, n * sizeof(float));
    rl_upload(be, in, host, n * sizeof(float));
    rl_poison(be, tmp, n * sizeof(float));
    job j = {v, {out, in, tmp, n, k, op, rl_stream(be)}};
    rl_check c = rl_validate_f32(be, launch, &j, out, n, ref, 1e-5, 1e-5);
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

static void check_table(rl_backend *be, const fusion_variant *table)
{
    uint64_t seed = 100;
    int checked = 0;
    for (const fusion_variant *v = table; v->name; v++)
        for (int op = FUSION_COS; op <= FUSION_AFFINE && v->launch; op++) /* no launch: not here */
            for (size_t s = 0; s < sizeof SIZES / sizeof SIZES[0]; s++)
                for (size_t ki = 0; ki < sizeof CHAIN_KS / sizeof CHAIN_KS[0]; ki++) {
                    int k = v->k ? v->k : CHAIN_KS[ki];
                    check_variant(be, v, (fusion_op)op, k, SIZES[s], seed++);
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
    check_table(be, fusion_cpu_variants);
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
    fusion_variant broken = {9, "broken", "forgets the last element", 1, true, forgets_the_tail, fusion_bytes_one_pass, false};
    job j = {&broken, {out, in, NULL, N, 1, FUSION_COS, NULL}};
    rl_check c = rl_validate_f32(be, launch, &j, out, N, ref, 1e-5, 1e-5);
    cr_assert_not(c.ok);
    cr_assert_eq(c.bad, 1);
    cr_assert_eq(c.first_bad, N - 1);
    cr_assert_eq(c.nonfinite, 1, "the poison shows the element was never written");
    rl_free(be, out);
    rl_backend_close(be);
}

Test(fusion_cpu, bytes_count_the_memory_trips)
{
    const fusion_variant *t = fusion_cpu_variants;
    size_t n = 1000;
    for (; t->name; t++) {
        double want = (t->fused ? 1 : t->k ? t->k : 5) * 8.0 * (double)n;
        cr_assert_float_eq(t->bytes(n, t->k ? t->k : 5), want, 1e-9, "%s", t->name);
    }
}

Test(fusion_cpu, numbers_are_unique_and_tables_agree)
{
    int count = 0;
    for (const fusion_variant *a = fusion_cpu_variants; a->name; a++, count++)
        for (const fusion_variant *b = a + 1; b->name; b++)
            cr_assert_neq(a->number, b->number);
    cr_assert_geq(count, 6);
#ifdef RL_HAVE_CUDA
    const fusion_variant *c = fusion_cpu_variants, *g = fusion_cuda_variants;
    for (; c->name && g->name; c++, g++) {
        cr_assert_eq(c->number, g->number);
        cr_assert_str_eq(c->name, g->name);
        cr_assert_eq(c->k, g->k);
        cr_assert_eq(c->fused, g->fused);
        cr_assert_eq(c->libm, g->libm);
    }
    cr_assert(!c->name && !g->name, "both backends have the same rows");
#endif
}

Test(cuda_fusion, every_variant_matches_the_reference)
{
    rl_backend *be = gpu_or_skip();
#ifdef RL_HAVE_CUDA
    check_table(be, fusion_cuda_variants);
#endif
    rl_backend_close(be);
}
