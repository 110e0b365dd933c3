/*
 * test_plan.c -- planning does not measure (harness/rl_ctx_plan.h): a
 * plan made from the fixture's ceilings, on a context whose backend
 * counts every call that measures (a ceiling, a probe, a timer, a cache
 * flush), leaves the count at zero and the context's own ceilings never
 * fetched; a plan asked for before it has ceilings is an internal error,
 * not a reason to measure them.
 */
#include "helpers.h"
#include "internal.h"
#include "rl_ctx_ceilings.h"
#include "rl_ctx_plan.h"

#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <math.h>
#include <string.h>

static const double MiB = 1024.0 * 1024;

/* ---- a backend that counts what measures ------------------------------------------ */

static int measured; /* calls that measure or time anything */

static rl_band count_bandwidth(rl_ctx *ctx, rl_pattern p, double bytes, int trials)
{
    measured++;
    return rl_cpu_ops.bandwidth(ctx, p, bytes, trials);
}

static rl_band count_gemm(rl_ctx *ctx, int n, int trials)
{
    measured++;
    return rl_cpu_ops.gemm(ctx, n, trials);
}

static rl_band count_fma(rl_ctx *ctx, int trials)
{
    measured++;
    return rl_cpu_ops.fma_peak(ctx, trials);
}

static bool count_bandwidth_probe(rl_ctx *ctx, rl_pattern p, double bytes, bool one_pass,
                                  bool wide, rl_probe *out)
{
    measured++;
    return rl_cpu_ops.bandwidth_probe(ctx, p, bytes, one_pass, wide, out);
}

static bool count_compute_probe(rl_ctx *ctx, rl_probe *out)
{
    measured++;
    return rl_cpu_ops.compute_probe(ctx, out);
}

static void count_timer_start(void)
{
    measured++;
    rl_cpu_ops.timer_start();
}

static void count_flush(void)
{
    measured++;
    rl_cpu_ops.flush_cache();
}

static rl_backend_ops counting;

/* Both roofs probed beside the points: the plan counts the probes too,
 * which it decides from the ceilings (a working set's level, the ridge). */
static const rl_experiment PLAN_EXP = {.id = "p0", .slug = "p0-plan", .title = "plan",
                                       .probes = RL_PROBE_BANDWIDTH | RL_PROBE_COMPUTE};

static rl_ctx *open_counting(void)
{
    rl_args args = {.backend = RL_BACKEND_CPU, .label = "p0-plan", .mode = RL_MODE_QUICK,
                    .ceilings_file = TEST_CEILINGS};
    rl_ctx *ctx = rl_begin_bare(&PLAN_EXP, &args);
    counting = *ctx->be->ops;
    counting.bandwidth = count_bandwidth;
    counting.gemm = count_gemm;
    counting.fma_peak = count_fma;
    counting.bandwidth_probe = count_bandwidth_probe;
    counting.compute_probe = count_compute_probe;
    counting.timer_start = count_timer_start;
    counting.flush_cache = count_flush;
    ctx->be->ops = &counting;
    measured = 0;
    return ctx;
}

static void close_counting(rl_ctx *ctx)
{
    ctx->be->ops = &rl_cpu_ops;
    rl_end_discard(ctx);
}

/* ---- the plan of three groups --------------------------------------------------------- */

/* A read of 1 GiB (DRAM's), a pair compared in one group (an LLC-sized
 * copy and a GEMM-like point far past the ridge), and an optional point. */
static void declare(rl_points *s)
{
    int pair = rl_points_new_group(s);
    rl_points_add(s, &(rl_point){.bytes = 1024 * MiB, .footprint = 1024 * MiB,
                                 .pattern = RL_READ});
    rl_points_add(s, &(rl_point){.group = pair, .bytes = 8 * MiB, .footprint = 8 * MiB,
                                 .pattern = RL_COPY});
    rl_points_add(s, &(rl_point){.group = pair, .bytes = 3 * MiB, .footprint = 3 * MiB,
                                 .pattern = RL_READ, .flops = 1e12});
    rl_points_add(s, &(rl_point){.bytes = 1 * MiB, .footprint = 1 * MiB, .pattern = RL_READ,
                                 .optional = true});
}

Test(plan, a_plan_from_given_ceilings_measures_nothing)
{
    rl_ctx *ctx = open_counting();
    char why[256];
    rl_ceilings c;
    cr_assert(rl_ceilings_read(ctx, TEST_CEILINGS, false, &c, why, sizeof why), "%s", why);
    rl_points s = {0};
    declare(&s);

    rl_ctx_plan plan = {0};
    rl_plan_start(&plan, &c);
    rl_plan_entry groups[8];
    int n = rl_points_plan(ctx, &plan, &s, 10, groups);
    for (int g = 0; g < n; g++)
        rl_plan_group(&plan, ctx, groups[g].members, groups[g].call_s);

    cr_assert_eq(measured, 0, "planning made %d calls that measure", measured);
    cr_assert_not(rl_ceilings_room(ctx)->have, "the plan fetched the context's ceilings");
    cr_assert_eq(n, 3, "one entry per group: %d", n);
    cr_assert_eq(plan.groups, 3);
    cr_assert_eq(groups[0].leader, 10, "leaders count from the part's first point");
    cr_assert_eq(groups[1].leader, 11);
    cr_assert_eq(groups[2].leader, 13);
    cr_assert(groups[0].needed && groups[1].needed && !groups[2].needed);
    rl_roof dram = rl_roof_on(&c, RL_CPU, 1024 * MiB, RL_READ);
    cr_assert_float_eq(groups[0].call_s, 1024 * MiB / (dram.gbps * 1e9), 1e-12,
                       "the roofline's time on the fixture's DRAM read: %g", groups[0].call_s);
    cr_assert_float_eq(groups[1].call_s, 1e12 / (c.matrix_tflops * 1e12), 1e-9,
                       "the GEMM-like point is the group's slowest call, at the compute roof");
    cr_assert_gt(groups[1].members, 2, "the pair carries its probes: %d members",
                 groups[1].members);
    cr_assert(plan.s > 0 && plan.max_s >= plan.s);
    rl_points_free(&s);
    close_counting(ctx);
}

Test(plan, a_plan_before_the_ceilings_is_an_internal_error, .init = cr_redirect_stderr,
     .exit_code = RL_EXIT_FAILED)
{
    rl_ctx_plan plan = {0};
    rl_plan_call_s(&plan, RL_CPU, 1e6, 1e6, RL_READ, 0);
}

Test(plan, the_measured_ceilings_never_measure, .init = cr_redirect_stderr,
     .exit_code = RL_EXIT_FAILED)
{
    rl_ctx *ctx = open_counting();
    rl_ceilings_measured(ctx); /* none yet: dies rather than measure */
}
