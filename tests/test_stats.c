/*
 * test_stats.c -- summary statistics and the adaptive stop rule.
 */
#include "rl_measure.h"
#include "rooflab.h"

#include <criterion/criterion.h>
#include <math.h>

Test(stats, median_and_quartiles_of_odd_count)
{
    double x[] = {5, 1, 4, 2, 3};
    rl_stats s = rl_stats_of(x, 5);
    cr_assert_eq(s.samples, 5);
    cr_assert_float_eq(s.median, 3.0, 1e-12);
    cr_assert_float_eq(s.q1, 2.0, 1e-12);
    cr_assert_float_eq(s.q3, 4.0, 1e-12);
    cr_assert_float_eq(s.min, 1.0, 1e-12);
    cr_assert_float_eq(s.max, 5.0, 1e-12);
    cr_assert_float_eq(s.mean, 3.0, 1e-12);
    /* sample stddev of 1..5 is sqrt(2.5); relative to the mean 3 */
    cr_assert_float_eq(s.rel_stddev, sqrt(2.5) / 3.0, 1e-12);
}

Test(stats, quartiles_interpolate_between_order_statistics)
{
    double x[] = {10, 20, 30, 40};
    rl_stats s = rl_stats_of(x, 4);
    cr_assert_float_eq(s.median, 25.0, 1e-12);
    cr_assert_float_eq(s.q1, 17.5, 1e-12); /* position 0.75 between 10 and 20 */
    cr_assert_float_eq(s.q3, 32.5, 1e-12);
}

Test(stats, one_sample_has_zero_spread_and_input_is_untouched)
{
    double x[] = {3.5};
    rl_stats s = rl_stats_of(x, 1);
    cr_assert_float_eq(s.median, 3.5, 1e-12);
    cr_assert_float_eq(s.rel_stddev, 0.0, 1e-12);
    double y[] = {3, 1, 2};
    rl_stats_of(y, 3);
    cr_assert(y[0] == 3 && y[1] == 1 && y[2] == 2, "rl_stats_of must not sort its input");
}

Test(stats, no_samples_gives_nan)
{
    rl_stats s = rl_stats_of(NULL, 0);
    cr_assert(isnan(s.median));
}

/* Feeds a constant or generated sample stream until the rule stops,
 * advancing a simulated wall clock by each sample plus an overhead. */
typedef double (*sample_fn)(int i);

static rl_stop_reason run_rule(const rl_stop_rule *rule, sample_fn f, double overhead, int *n_out)
{
    static double buf[1 << 16];
    rl_sampler s;
    rl_sampler_init(&s, rule, buf, 1 << 16);
    double wall = 0;
    rl_stop_reason r;
    int i = 0;
    do {
        double t = f(i++);
        wall += t + overhead;
        rl_sampler_add(&s, t);
        r = rl_sampler_done(&s, wall);
    } while (r == RL_CONTINUE);
    *n_out = s.n;
    return r;
}

static double tenth(int i) { (void)i; return 0.1; }
static double millisecond(int i) { (void)i; return 1e-3; }
static double alternating(int i) { return i % 2 ? 1.2e-3 : 1.0e-3; }
static double slow(int i) { (void)i; return 4.0; }

Test(stop_rule, quiet_samples_stop_at_the_minimum_count)
{
    int n;
    cr_assert_eq(run_rule(&RL_STOP_FULL, tenth, 0, &n), RL_STOP_NOISE);
    cr_assert_eq(n, 10, "10 samples of 0.1 s satisfy both minimums; got %d", n);
}

Test(stop_rule, short_samples_wait_for_the_minimum_time)
{
    int n;
    cr_assert_eq(run_rule(&RL_STOP_FULL, millisecond, 0, &n), RL_STOP_NOISE);
    cr_assert(n >= 500 && n <= 501, "0.5 s of 1 ms samples is 500 samples; got %d", n);
}

Test(stop_rule, noisy_samples_stop_once_the_mean_is_pinned_down)
{
    int n;
    /* rel stddev of alternating 1.0/1.2 ms is ~9.1 %: never under 0.5 %;
     * the mean's relative standard error reaches 0.5 % after ~330 samples,
     * but the minimum time (0.5 s) needs ~455 of them. */
    rl_stop_reason r = run_rule(&RL_STOP_FULL, alternating, 0, &n);
    cr_assert_eq(r, RL_STOP_CONVERGED, "got %s", rl_stop_reason_name(r));
    cr_assert(n >= 454 && n <= 456, "stopped at %d", n);
}

static double noisy_slow(int i) { return i % 2 ? 0.12 : 0.10; }

Test(stop_rule, convergence_needs_samples_in_proportion_to_the_noise)
{
    int n;
    /* 0.10/0.12 s: 9.1 % noise; (0.091 / 0.005)^2 = ~331 samples. */
    rl_stop_reason r = run_rule(&RL_STOP_FULL, noisy_slow, 0, &n);
    cr_assert_eq(r, RL_STOP_TIMEOUT, "331 samples of 0.11 s need 36 s: past the 2.5 s timeout");
    rl_stop_rule patient = RL_STOP_FULL;
    patient.timeout_s = 1000;
    r = run_rule(&patient, noisy_slow, 0, &n);
    cr_assert_eq(r, RL_STOP_CONVERGED);
    cr_assert(n >= 320 && n <= 340, "stopped at %d", n);
}

Test(stop_rule, slow_samples_hit_the_timeout)
{
    int n;
    cr_assert_eq(run_rule(&RL_STOP_FULL, slow, 0, &n), RL_STOP_TIMEOUT);
    cr_assert_eq(n, 1, "a 4 s sample passes 2.5 s at the 1st; got %d", n);
}

Test(stop_rule, timeout_counts_the_time_between_samples)
{
    int n;
    /* 1 ms samples with 49 ms of flushing each: the minimum time would
     * need 500 samples, but 2.5 s of wall time pass after 50. */
    cr_assert_eq(run_rule(&RL_STOP_FULL, millisecond, 0.049, &n), RL_STOP_TIMEOUT);
    cr_assert(n >= 49 && n <= 51, "got %d", n);
}

Test(stop_rule, quick_timeout_stops_after_one_long_sample)
{
    int n;
    cr_assert_eq(run_rule(&RL_STOP_QUICK, slow, 0, &n), RL_STOP_TIMEOUT);
    cr_assert_eq(n, 1, "quick: a 4 s sample already passes its 0.3 s limit; got %d", n);
}

Test(stop_rule, quick_rule_takes_three_samples)
{
    int n;
    cr_assert_eq(run_rule(&RL_STOP_QUICK, tenth, 0, &n), RL_STOP_NOISE);
    cr_assert_eq(n, 3);
}

Test(stop_rule, full_sample_buffer_stops)
{
    double buf[8];
    rl_sampler s;
    rl_sampler_init(&s, &RL_STOP_FULL, buf, 8);
    for (int i = 0; i < 8; i++)
        rl_sampler_add(&s, alternating(i));
    cr_assert_eq(rl_sampler_done(&s, 0.01), RL_STOP_CAP);
}

Test(stop_rule, reasons_have_names)
{
    cr_assert_str_eq(rl_stop_reason_name(RL_STOP_NOISE), "noise_target");
    cr_assert_str_eq(rl_stop_reason_name(RL_STOP_CONVERGED), "mean_converged");
    cr_assert_str_eq(rl_stop_reason_name(RL_STOP_TIMEOUT), "timeout");
}
