/*
 * test_measure.c -- a group's rounds (measure.c) and the ratios taken
 * round by round (group_roof.c): a fast member's hot samples are batched
 * to the slow member's time, the rounds come back in order, a member
 * whose cache the group overflows is warmed again before each hot sample,
 * and a point's utilization is the median of its per-round ratios to its
 * probe.
 */
#include "helpers.h"
#include "internal.h"
#include "rooflab.h"

#include <criterion/criterion.h>
#include <math.h>
#include <time.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* Work that takes *arg seconds of wall time, whatever else runs. */
static void spin(void *arg)
{
    double until = now_s() + *(const double *)arg;
    while (now_s() < until)
        ;
}

static rl_ctx open_ctx(rl_cache_state cache)
{
    static const rl_experiment exp = {.id = "t", .slug = "t-measure", .title = "measure"};
    char why[256];
    rl_backend *be = rl_backend_open(RL_CPU, 0, why, sizeof why);
    cr_assert(be, "%s", why);
    rl_ctx ctx = {.exp = &exp, .be = be, .kind = RL_CPU, .rule = RL_STOP_QUICK};
    ctx.args.cache = cache;
    return ctx;
}

/* Alone, a 2 ms call is a sample of one (samples are at least 1 ms);
 * beside a 40 ms one, about 20. Preemption lengthens calls, never shortens
 * them: a preempted slow call lengthens the batch it sets, a preempted
 * fast one (its batch sized from its own warm-up calls) shortens it, down
 * to 2 on a machine busy with other builds. So the group is measured
 * under the measurement lock, up to three times, until a batch lands in
 * [5, 40]: a scheduler that preempts all three is not what is tested. */
static bool batched_to_slow(rl_ctx *ctx, rl_work works[2], rl_measurement m[2], rl_rounds *rounds)
{
    rl_measure_group(ctx, works, 2, m, rounds);
    int calls = m[0].calls_per_sample;
    return calls >= 5 && calls <= 40;
}

Test(measure, a_fast_member_is_batched_to_the_slow_members_time)
{
    rl_ctx ctx = open_ctx(RL_HOT);
    double fast = 2e-3, slow = 40e-3;
    rl_work works[2] = {{"fast", spin, &fast, 0}, {"slow", spin, &slow, 0}};
    rl_measurement m[2];
    rl_rounds rounds;
    measure_lock();
    bool batched = batched_to_slow(&ctx, works, m, &rounds);
    for (int again = 0; again < 2 && !batched; again++) {
        rl_rounds_free(&rounds);
        batched = batched_to_slow(&ctx, works, m, &rounds);
    }
    measure_unlock();
    cr_assert(batched, "fast: %d calls a sample, not 5 to 40, three times", m[0].calls_per_sample);
    cr_assert_eq(m[1].calls_per_sample, 1);
    cr_assert_geq(rounds.rounds, 3, "every member sampled in every round");
    cr_assert_eq(rounds.rounds, m[0].stats.samples);
    cr_assert_eq(rounds.rounds, m[1].stats.samples);
    for (int r = 0; r < rounds.rounds; r++) { /* per call, in round order */
        cr_assert_geq(rounds.t[r], fast);
        cr_assert_geq(rounds.t[rounds.stride + r], slow);
    }
    rl_rounds_free(&rounds);
    cr_assert_null(rounds.t);
    rl_backend_close(ctx.be);
}

Test(measure, a_single_work_keeps_its_own_batch)
{
    rl_ctx ctx = open_ctx(RL_HOT);
    double fast = 2e-3;
    rl_work w = {"fast", spin, &fast, 0};
    rl_measurement m;
    rl_measure_group(&ctx, &w, 1, &m, NULL);
    cr_assert_eq(m.calls_per_sample, 1, "a 2 ms call alone is a sample: %d", m.calls_per_sample);
    rl_backend_close(ctx.be);
}

/* A work that counts its calls, each 1 ms, and says what it touches. */
typedef struct counted {
    int calls;
    double seconds;
} counted;

static void counted_call(void *arg)
{
    counted *c = arg;
    c->calls++;
    spin(&c->seconds);
}

/* The calls a member made beyond its warm-up calls (two hot, one cold)
 * and its samples'. */
static int extra_calls(const counted *c, const rl_measurement *m, rl_cache_state cache)
{
    return c->calls - (cache == RL_HOT ? 2 : 1) - m->stats.samples * m->calls_per_sample;
}

/* Two members of the given footprints, hot or cold, on the fixture's roofs
 * and a pretended 32 MiB LLC (no curve: the reported sizes hold). */
static void measure_pair(double mib_a, double mib_b, rl_cache_state cache, int extra[2])
{
    static const rl_experiment exp = {.id = "t", .slug = "t-rewarm", .title = "rewarm"};
    setenv("ROOFLAB_HOST_BUSY", "ignore", 1);
    setenv("ROOFLAB_LLC", "32Mi", 1);
    rl_args args = {.backend = RL_BACKEND_CPU, .label = "t-rewarm", .ceilings_file = TEST_CEILINGS,
                    .cache = cache};
    rl_ctx *ctx = rl_begin_bare(&exp, &args);
    cr_assert_eq(rl_ceilings_get(ctx)->level_bytes[RL_LLC], 32.0 * 1048576);
    ctx->rule = RL_STOP_QUICK;
    counted c[2] = {{0, 1e-3}, {0, 1e-3}};
    rl_work works[2] = {{"a", counted_call, &c[0], mib_a * 1048576},
                        {"b", counted_call, &c[1], mib_b * 1048576}};
    rl_measurement m[2];
    rl_measure_group(ctx, works, 2, m, NULL);
    for (int i = 0; i < 2; i++) {
        extra[i] = extra_calls(&c[i], &m[i], cache);
        /* cold samples flush the cache instead, and call nothing more */
        cr_assert(extra[i] == 0 || (extra[i] >= 2 * m[i].stats.samples && extra[i] <= 4 * m[i].stats.samples),
                  "member %d: %d calls beyond its samples' (%d samples)", i, extra[i], m[i].stats.samples);
    }
    rl_end_discard(ctx);
}

Test(measure, a_member_the_group_evicts_is_warmed_again_before_each_hot_sample)
{
    int extra[2];
    measure_pair(10, 10, RL_HOT, extra); /* 20 MiB together: over half of 32 */
    cr_assert_gt(extra[0], 0, "10 MiB beside 10: warmed again");
    cr_assert_gt(extra[1], 0, "10 MiB beside 10: warmed again");
}

Test(measure, a_member_that_stays_in_the_cache_or_never_fits_is_not_warmed_again)
{
    int extra[2];
    measure_pair(6, 6, RL_HOT, extra); /* 12 MiB together, under half the LLC: both stay */
    cr_assert_eq(extra[0] + extra[1], 0, "6 + 6 MiB in 32: %d and %d extra calls", extra[0], extra[1]);
    measure_pair(64, 20, RL_HOT, extra); /* 64 MiB streams from DRAM anyway */
    cr_assert_eq(extra[0], 0, "64 MiB, beyond the LLC: %d extra calls", extra[0]);
    cr_assert_gt(extra[1], 0, "20 MiB beside 64: warmed again");
    measure_pair(20, 20, RL_COLD, extra);
    cr_assert_eq(extra[0] + extra[1], 0, "cold: %d and %d extra calls", extra[0], extra[1]);
}

/* Rounds of two members, seconds per call. */
static rl_rounds two_members(const double *point, const double *probe, int rounds)
{
    static double t[2 * 8];
    for (int r = 0; r < rounds; r++)
        t[r] = point[r], t[8 + r] = probe[r];
    return (rl_rounds){t, rounds, 8};
}

Test(measure, a_paired_ratio_is_the_median_of_the_rounds)
{
    /* The probe moves 8 bytes a call, the point 4: each round's ratio is
     * (4 / t_point) / (8 / t_probe). The machine slows down 2x after
     * round 2 for both; round 4 is an outlier of the point's. */
    double point[5] = {1.0, 1.0, 2.0, 2.0, 8.0}, probe[5] = {2.0, 2.0, 4.0, 4.0, 4.0};
    rl_rounds r = two_members(point, probe, 5);
    cr_assert_float_eq(rl_paired_ratio(&r, 0, 4, 1, 8).median, 1.0, 1e-12);
    /* The ratio of the medians agrees there; where the point's quiet
     * rounds and the probe's busy ones are different rounds it does not:
     * the medians (1 s and 4 s a call) say 2.0, the rounds 1, 2, 2, 1, 1. */
    double point2[5] = {1.0, 1.0, 1.0, 2.0, 2.0}, probe2[5] = {2.0, 4.0, 4.0, 4.0, 4.0};
    r = two_members(point2, probe2, 5);
    cr_assert_float_eq(rl_paired_ratio(&r, 0, 4, 1, 8).median, 1.0, 1e-12);
    cr_assert_float_eq(rl_paired_ratio(&r, 1, 8, 0, 4).median, 1.0, 1e-12); /* 1, 0.5, 0.5, 1, 1 */
    r.rounds = 0;
    cr_assert(isnan(rl_paired_ratio(&r, 0, 4, 1, 8).median), "no rounds, no ratio");
    cr_assert(isnan(rl_paired_ratio(NULL, 0, 4, 1, 8).median));
}
