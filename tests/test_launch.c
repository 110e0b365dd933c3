/*
 * test_launch.c -- experiment 06's chain and step: the closed-form
 * reference against stepping, every CPU variant against the reference at
 * odd sizes, and (suite cuda_launch, on a GPU only) every CUDA variant,
 * with the graph's results identical to the stream's, bit for bit.
 */
#include "launch.h"
#include "helpers.h"
#include "rooflab.h"
#include "rl_backend.h"
#include "rl_measure.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const size_t SIZES[] = {1, 3, 255, 257, 4099};
static const int KS[] = {1, 2, 7, 50};

Test(launch, closed_form_equals_stepping)
{
    double x = -0.8125, stepped = x;
    for (int k = 0; k <= 60; k++) {
        cr_assert(fabs(launch_reference(x, k) - stepped) < 1e-14, "k %d: %.17g vs %.17g", k,
                  launch_reference(x, k), stepped);
        stepped = stepped * LAUNCH_A + LAUNCH_B;
    }
}

static bool cuda(rl_backend *be) { return rl_kind(be) == RL_CUDA; }

/* Runs the chain of one variant on fresh input; returns the result (host). */
static float *run_chain(rl_backend *be, const launch_ops *w, size_t n, int k, const float *in)
{
    float *x = rl_alloc(be, n * sizeof(float)), *out = rl_host_alloc(n * sizeof(float));
    rl_upload(be, x, in, n * sizeof(float));
    launch_args a = {.x = x, .n = n, .k = k, .stream = rl_stream(be)};
    if (w->build)
        w->build(&a);
    w->run(&a);
    if (w->release)
        w->release(&a);
    rl_download(be, out, x, n * sizeof(float));
    rl_free(be, x);
    return out;
}

static void check_chains(rl_backend *be)
{
    int checked = 0;
    for (size_t s = 0; s < sizeof SIZES / sizeof SIZES[0]; s++)
        for (size_t j = 0; j < sizeof KS / sizeof KS[0]; j++) {
            size_t n = SIZES[s];
            int k = KS[j];
            float *in = rl_host_alloc(n * sizeof(float));
            double *want = rl_host_alloc(n * sizeof(double));
            rl_fill_uniform(in, n, -1, 1, 100 + s * 10 + j);
            launch_reference_n(in, n, k, want);
            float *first = NULL;
            for (const launch_variant *v = launch_variants; v->name; v++) {
                const launch_ops *ops = cuda(be) ? v->cuda : v->cpu;
                if (!ops)
                    continue;
                float *got = run_chain(be, ops, n, k, in);
                rl_check c = rl_compare_f32(got, want, n, 1e-6, 1e-5);
                char msg[256];
                rl_check_describe(&c, msg, sizeof msg);
                cr_assert(c.ok, "%s %s (n=%zu, k=%d): %s", rl_backend_name(rl_kind(be)), v->name, n, k, msg);
                /* Every variant applies the same float op in the same order. */
                if (first)
                    cr_assert_eq(memcmp(first, got, n * sizeof(float)), 0, "%s differs from %s, n=%zu k=%d",
                                 v->name, launch_variants[0].name, n, k);
                else
                    first = got, got = NULL;
                rl_host_free(got);
                checked++;
            }
            rl_host_free(first);
            rl_host_free(in);
            rl_host_free(want);
        }
    cr_assert_gt(checked, 0);
}

Test(launch, cpu_variants_match_the_reference)
{
    char why[256];
    rl_backend *be = rl_backend_open(RL_CPU, 0, why, sizeof why);
    check_chains(be);
    rl_backend_close(be);
}

/* The step of every variant at odd batches and widths, against the double
 * reference; the graph's output identical to the launches'. */
static void check_steps(rl_backend *be)
{
    static const int batches[] = {1, 3, 17}, widths[] = {8, 65, 256};
    for (size_t bi = 0; bi < 3; bi++)
        for (size_t wi = 0; wi < 3; wi++) {
            int batch = batches[bi], d = widths[wi];
            size_t xd = (size_t)batch * d;
            float *host[STEP_INPUTS], *in[STEP_INPUTS];
            for (int i = 0; i < STEP_INPUTS; i++) {
                float lo, hi;
                size_t n = step_input(i, batch, d, &lo, &hi);
                host[i] = rl_host_alloc(n * 4);
                rl_fill_uniform(host[i], n, lo, hi, 1 + i);
                in[i] = rl_alloc_copy(be, host[i], n * 4);
            }
            float *got = rl_host_alloc(xd * 4), *first = rl_host_alloc(xd * 4);
            double *want = rl_host_alloc(xd * 8);
            step_reference(batch, d, host, want);
            float *h = rl_alloc(be, xd * 4), *y = rl_alloc(be, xd * 4);
            step_args s = step_on(NULL, in, h, y, batch, d, rl_stream(be));
            for (const step_variant *v = step_variants; v->name; v++) {
                const step_ops *w = cuda(be) ? v->cuda : v->cpu;
                if (!w)
                    continue;
                rl_poison(be, y, xd * 4);
                rl_poison(be, h, xd * 4);
                if (w->build)
                    w->build(&s);
                w->run(&s);
                if (w->release)
                    w->release(&s);
                rl_download(be, got, y, xd * 4);
                rl_check c = rl_compare_f32(got, want, xd, 1e-4, 1e-4);
                char msg[256];
                rl_check_describe(&c, msg, sizeof msg);
                cr_assert(c.ok, "step %s (batch %d, d %d): %s", v->name, batch, d, msg);
                if (v == step_variants)
                    memcpy(first, got, xd * 4);
                else
                    cr_assert_eq(memcmp(first, got, xd * 4), 0, "step %s differs from %s (batch %d, d %d)",
                                 v->name, step_variants[0].name, batch, d);
            }
            for (int i = 0; i < STEP_INPUTS; i++) {
                rl_free(be, in[i]);
                rl_host_free(host[i]);
            }
            rl_free(be, h), rl_free(be, y);
            rl_host_free(got), rl_host_free(first), rl_host_free(want);
        }
}

Test(launch, cpu_step_matches_the_reference)
{
    char why[256];
    rl_backend *be = rl_backend_open(RL_CPU, 0, why, sizeof why);
    check_steps(be);
    rl_backend_close(be);
}

/* ---- on a GPU ------------------------------------------------------------------ */

/* check_chains and check_steps compare every variant's output with the
 * first variant's bit for bit: the graph replays exactly what the stream
 * ran. */
Test(cuda_launch, graph_and_stream_give_identical_results)
{
    rl_backend *be = gpu_or_skip();
    check_chains(be);
    check_steps(be);
    rl_backend_close(be);
}

/* A replayed graph keeps working on new data in the same buffer: graphs
 * capture pointers, not values. */
Test(cuda_launch, a_graph_replays_on_new_data)
{
    rl_backend *be = gpu_or_skip();
    const launch_variant *v = launch_variants;
    while (v->name && !(v->role && !strcmp(v->role, "graph")))
        v++;
    cr_assert_not_null(v->name, "a chain variant has the role graph");
    const launch_ops *g = v->cuda;
    cr_assert(g && g->build && g->release, "the CUDA graph variant builds and releases a graph");
    size_t n = 1000;
    float *x = rl_alloc(be, n * 4), *in = rl_host_alloc(n * 4), *got = rl_host_alloc(n * 4);
    double *want = rl_host_alloc(n * 8);
    launch_args a = {.x = x, .n = n, .k = 10, .stream = rl_stream(be)};
    g->build(&a);
    for (int round = 0; round < 3; round++) {
        rl_fill_uniform(in, n, -1, 1, 50 + round);
        launch_reference_n(in, n, 10, want);
        rl_upload(be, x, in, n * 4);
        g->run(&a);
        rl_download(be, got, x, n * 4);
        cr_assert(rl_compare_f32(got, want, n, 1e-6, 1e-5).ok, "round %d", round);
    }
    g->release(&a);
    rl_free(be, x);
    rl_host_free(in), rl_host_free(got), rl_host_free(want);
    rl_backend_close(be);
}
