/*
 * test_gemm.c -- experiment 04's kernels against the double-precision
 * reference: every row of the one table on each backend, every layout (A
 * and B stored either way), odd sizes that are not multiples of any tile.
 * The reference itself against a plain triple loop, and the FP16 rounding
 * against the compiler's own FP16 type where there is one. The CUDA suite
 * skips without a GPU.
 */
#include "gemm.h"
#include "helpers.h"
#include "rl_backend.h"
#include "rl_measure.h"
#include "rooflab.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

typedef struct shape {
    int m, n, k;
} shape;

/* Edges of every tile size in use (64 on the CPU, 128 on the GPU), a
 * k that leaves a partial slab, and degenerate sizes. */
static const shape SHAPES[] = {{1, 1, 1},    {3, 5, 7},      {64, 64, 64},   {65, 63, 129},
                               {130, 67, 300}, {17, 200, 513}, {129, 257, 33}, {200, 9, 1000}};

typedef struct job {
    const gemm_impl *impl;
    gemm_args g;
} job;

static void launch(void *p)
{
    job *j = p;
    j->impl->launch(&j->g);
}

/* Inputs on the device in the variant's format: FP32 uploaded, converted
 * on the device when the variant takes FP16. */
static void *device_input(rl_backend *be, const gemm_impl *impl, const float *host, size_t n,
                          void **f32_out)
{
    float *f32 = rl_alloc(be, n * sizeof(float));
    rl_upload(be, f32, host, n * sizeof(float));
    *f32_out = f32;
    if (!impl->to_input)
        return f32;
    void *converted = rl_alloc(be, n * (size_t)impl->in_bytes);
    impl->to_input(converted, f32, n, rl_stream(be));
    rl_sync(be);
    return converted;
}

static void check_variant(rl_backend *be, const gemm_variant *v, shape s, bool ta, bool tb,
                          uint64_t seed)
{
    size_t na = (size_t)s.m * s.k, nb = (size_t)s.k * s.n, nc = (size_t)s.m * s.n;
    float *a = rl_host_alloc(na * sizeof(float)), *b = rl_host_alloc(nb * sizeof(float));
    double *want = rl_host_alloc(nc * sizeof(double));
    rl_fill_uniform(a, na, -1, 1, seed);
    rl_fill_uniform(b, nb, -1, 1, seed + 1);
    gemm_round_to_half(a, na);
    gemm_round_to_half(b, nb);
    gemm_args host = {.m = s.m, .n = s.n, .k = s.k, .a = a, .b = b, .trans_a = ta, .trans_b = tb};
    gemm_reference(want, &host);

    void *a32, *b32;
    job j = {gemm_impl_on(v, rl_kind(be) == RL_CUDA ? KERNEL_CUDA : KERNEL_CPU), host};
    j.g.a = device_input(be, j.impl, a, na, &a32);
    j.g.b = device_input(be, j.impl, b, nb, &b32);
    j.g.c = rl_alloc(be, nc * sizeof(float));
    j.g.stream = rl_stream(be);
    rl_check c = rl_validate_f32(be, launch, &j, j.g.c, nc, want, gemm_atol(s.k), GEMM_RTOL);
    char msg[256];
    rl_check_describe(&c, msg, sizeof msg);
    cr_assert(c.ok, "%s variant %d %s (m=%d n=%d k=%d, A%s B%s): %s", rl_backend_name(rl_kind(be)),
              v->number, v->name, s.m, s.n, s.k, ta ? "^T" : "", tb ? "^T" : "", msg);

    if (j.g.a != a32)
        rl_free(be, (void *)j.g.a);
    if (j.g.b != b32)
        rl_free(be, (void *)j.g.b);
    rl_free(be, a32);
    rl_free(be, b32);
    rl_free(be, j.g.c);
    rl_host_free(a);
    rl_host_free(b);
    rl_host_free(want);
}

/* Every row of the one table that this backend has. */
static void check_table(rl_backend *be)
{
    uint64_t seed = 400;
    int checked = 0, backend = rl_kind(be) == RL_CUDA ? KERNEL_CUDA : KERNEL_CPU;
    for (const gemm_variant *v = gemm_variants; v->name; v++) {
        if (!gemm_family.has(v, backend))
            continue;
        for (size_t s = 0; s < sizeof SHAPES / sizeof SHAPES[0]; s++)
            for (int layout = 0; layout < 4; layout++, checked++)
                check_variant(be, v, SHAPES[s], layout & 1, layout & 2, seed += 2);
    }
    cr_assert_geq(checked, 64, "the table was walked");
}

Test(gemm_cpu, every_variant_matches_the_reference_on_odd_sizes)
{
    char why[256];
    rl_backend *be = rl_backend_open(RL_CPU, 0, why, sizeof why);
    cr_assert_not_null(be, "%s", why);
    check_table(be);
    rl_backend_close(be);
}

/* The reference against the definition, one sum at a time. */
Test(gemm_cpu, the_reference_is_the_definition)
{
    enum { M = 7, N = 5, K = 11 };
    for (int layout = 0; layout < 4; layout++) {
        float a[M * K], b[K * N];
        double want[M * N];
        rl_fill_uniform(a, M * K, -1, 1, 10 + layout);
        rl_fill_uniform(b, K * N, -1, 1, 20 + layout);
        gemm_args g = {.m = M, .n = N, .k = K, .a = a, .b = b, .trans_a = layout & 1,
                       .trans_b = layout & 2};
        gemm_reference(want, &g);
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double sum = 0;
                for (int kk = 0; kk < K; kk++) {
                    double x = g.trans_a ? a[kk * M + i] : a[i * K + kk];
                    double y = g.trans_b ? b[j * K + kk] : b[kk * N + j];
                    sum += x * y;
                }
                cr_assert_float_eq(want[i * N + j], sum, 1e-12, "layout %d at (%d, %d)", layout,
                                   i, j);
            }
    }
}

/* A sweep of n checks each call against the first n columns of its
 * widest product: the same numbers as the call's own reference. */
Test(gemm_cpu, a_narrower_reference_is_cut_from_the_widest_product)
{
    enum { M = 7, K = 9, WIDE = 13, N = 5 };
    float a[M * K], b[WIDE * K]; /* B stored n x k: B for N is the start of B for WIDE */
    double cut[M * N], alone[M * N];
    rl_fill_uniform(a, M * K, -1, 1, 30);
    rl_fill_uniform(b, WIDE * K, -1, 1, 31);
    gemm_wide wide = {.wide_n = WIDE};
    gemm_args g = {.m = M, .n = N, .k = K, .trans_b = true};
    gemm_reference_from(cut, &g, a, b, &wide);
    cr_assert_not_null(wide.want, "the widest product is computed at the first call");
    gemm_reference_from(alone, &g, a, b, NULL);
    for (int i = 0; i < M * N; i++)
        cr_assert_float_eq(cut[i], alone[i], 1e-12, "at %d", i);
    gemm_wide_free(&wide);
    cr_assert_null(wide.want);
    gemm_wide_free(NULL);
}

/* A tile that forgets its last column must be caught, not timed. */
static void forgets_a_column(const gemm_args *g)
{
    const float *a = g->a, *b = g->b;
    for (int i = 0; i < g->m; i++)
        for (int j = 0; j + 1 < g->n; j++) {
            float sum = 0;
            for (int kk = 0; kk < g->k; kk++)
                sum += a[gemm_a_index(g, i, kk)] * b[gemm_b_index(g, kk, j)];
            g->c[(size_t)i * g->n + j] = sum;
        }
}

Test(gemm_cpu, a_gemm_that_skips_a_column_fails_validation)
{
    char why[256];
    rl_backend *be = rl_backend_open(RL_CPU, 0, why, sizeof why);
    gemm_impl broken = {.launch = forgets_a_column, .in_bytes = 4};
    enum { M = 9, N = 10, K = 12 };
    float a[M * K], b[K * N];
    double want[M * N];
    rl_fill_uniform(a, M * K, -1, 1, 5);
    rl_fill_uniform(b, K * N, -1, 1, 6);
    job j = {&broken, {.m = M, .n = N, .k = K, .a = a, .b = b}};
    gemm_reference(want, &j.g);
    j.g.c = rl_alloc(be, M * N * sizeof(float));
    rl_check c = rl_validate_f32(be, launch, &j, j.g.c, M * N, want, gemm_atol(K), GEMM_RTOL);
    cr_assert_not(c.ok);
    cr_assert_eq(c.bad, M, "one element per row");
    cr_assert_eq(c.nonfinite, M, "the poison shows them unwritten");
    rl_free(be, j.g.c);
    rl_backend_close(be);
}

Test(gemm_cpu, rounding_to_half_keeps_eleven_significant_bits)
{
    /* 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties go to even (1). */
    float x[] = {1.0f, 1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 0.1f, -0.1f, 0x1p-20f, 0x1.8p-24f,
                 0x1p-26f, 0.0f, -1.0f, 0.999f};
    float want[] = {1.0f, 1.0f, 1.0f + 0x1p-9f, 0x1.998p-4f, -0x1.998p-4f, 0x1p-20f, 0x1p-23f,
                    0.0f, 0.0f, -1.0f, 0x1.ff8p-1f};
    size_t n = sizeof x / sizeof x[0];
    gemm_round_to_half(x, n);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(x[i], want[i], "case %zu: got %a, want %a", i, (double)x[i], (double)want[i]);
}

Test(gemm_cpu, rounding_to_half_agrees_with_the_compilers_fp16)
{
#ifdef __FLT16_MAX__
    enum { N = 100000 };
    static float x[N], y[N];
    rl_fill_uniform(x, N, -1, 1, 77);
    for (int i = 0; i < N; i++)
        x[i] *= i % 3 == 0 ? 1e-4f : 1.0f; /* subnormal halves too */
    memcpy(y, x, sizeof x);
    gemm_round_to_half(x, N);
    for (int i = 0; i < N; i++)
        cr_assert_eq(x[i], (float)(_Float16)y[i], "%a", (double)y[i]);
#else
    cr_skip_test("this compiler has no _Float16");
#endif
}

/* What the wave model reads from the table: a CPU thread computes one
 * tile at a time, and a variant with tiles of its own has them on every
 * backend (the library picks its own on every backend). */
Test(gemm_cpu, the_tiles_the_wave_model_reads)
{
    int own = 0;
    for (const gemm_variant *v = gemm_variants; v->name; v++) {
        if (v->cpu && v->cpu->tile_m) {
            cr_assert_eq(v->cpu->blocks_per_unit(), 1, "%s: one tile per thread at a time",
                         v->name);
            own++;
        }
        if (v->cpu && v->cuda)
            cr_assert_eq(!v->cpu->tile_m, !v->cuda->tile_m, "%s: own tiles on both, or on neither",
                         v->name);
    }
    cr_assert_geq(own, 1, "the staircase needs a variant with its own tiles");
}

/* On a GPU: every variant against the reference, and the occupancy the
 * staircase's wave size rests on. */
Test(cuda_gemm, every_variant_matches_the_reference_on_odd_sizes)
{
    rl_backend *be = gpu_or_skip();
    for (const gemm_variant *v = gemm_variants; v->name; v++)
        if (v->cuda && v->cuda->blocks_per_unit)
            cr_assert_geq(v->cuda->blocks_per_unit(), 1, "%s fits on an SM", v->name);
    check_table(be);
    rl_backend_close(be);
}
