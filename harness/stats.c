/*
 * stats.c -- summary statistics and the adaptive stop rule.
 *
 * The stop rule follows the discipline of NVIDIA's nvbench: take at least a
 * minimum number of samples and of measured time, then stop as soon as the
 * relative standard deviation reaches the target. Some points never get
 * that quiet (a shared machine, a kernel of a few microseconds): more
 * samples will not make them scatter less, but they do pin down the
 * centre. For those the rule also stops once the relative standard error
 * of the mean (noise / sqrt(samples)) reaches the same target, and
 * otherwise at the timeout. The reason is recorded with every row, so a
 * reader can tell a quiet point from a noisy-but-converged one and from
 * one that ran out of patience.
 */
#include "rl_measure.h"
#include "rooflab.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The full rule's timeout: points that never get quiet (most on a shared
 * VM) run to it, so it sets the length of a reference run. 2.5 s is still
 * hundreds of batched samples a point, enough to pin the median; a longer
 * timeout made a two-core reference run far longer, for medians no
 * different. */
const rl_stop_rule RL_STOP_FULL = {.min_samples = 10, .min_time_s = 0.5, .max_noise = 0.005, .timeout_s = 2.5};
const rl_stop_rule RL_STOP_LAB = {.min_samples = 5, .min_time_s = 0.15, .max_noise = 0.01, .timeout_s = 1.0};
const rl_stop_rule RL_STOP_QUICK = {.min_samples = 3, .min_time_s = 0.03, .max_noise = 0.05, .timeout_s = 0.3};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Quantile of sorted values with linear interpolation between order
 * statistics (the common "type 7" definition). */
static double quantile_sorted(const double *s, int n, double q)
{
    double pos = q * (n - 1);
    int lo = (int)floor(pos);
    int hi = lo + 1 < n ? lo + 1 : lo;
    double frac = pos - lo;
    return s[lo] + frac * (s[hi] - s[lo]);
}

rl_stats rl_stats_of(const double *x, int n)
{
    rl_stats st = {0};
    if (n <= 0) {
        st.median = st.q1 = st.q3 = st.min = st.max = st.mean = st.rel_stddev = NAN;
        return st;
    }
    double *s = malloc(sizeof(double) * (size_t)n);
    if (!s)
        rl_die(RL_EXIT_FAILED, "out of memory sorting %d samples", n);
    memcpy(s, x, sizeof(double) * (size_t)n);
    qsort(s, (size_t)n, sizeof(double), cmp_double);

    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += s[i];
    double mean = sum / n, ss = 0;
    for (int i = 0; i < n; i++)
        ss += (s[i] - mean) * (s[i] - mean);

    st.samples = n;
    st.min = s[0];
    st.max = s[n - 1];
    st.mean = mean;
    st.median = quantile_sorted(s, n, 0.5);
    st.q1 = quantile_sorted(s, n, 0.25);
    st.q3 = quantile_sorted(s, n, 0.75);
    st.rel_stddev = n > 1 && mean != 0 ? sqrt(ss / (n - 1)) / fabs(mean) : 0.0;
    free(s);
    return st;
}

const char *rl_stop_reason_name(rl_stop_reason r)
{
    switch (r) {
    case RL_STOP_NOISE: return "noise_target";
    case RL_STOP_CONVERGED: return "mean_converged";
    case RL_STOP_TIMEOUT: return "timeout";
    case RL_STOP_CAP: return "sample_cap";
    case RL_STOP_SIGNAL: return "stopped";
    default: return "running";
    }
}

void rl_sampler_init(rl_sampler *s, const rl_stop_rule *rule, double *buf, int cap)
{
    memset(s, 0, sizeof *s);
    s->rule = rule;
    s->samples = buf;
    s->cap = cap;
}

static double rl_sampler_noise(const rl_sampler *s)
{
    if (s->n < 2 || s->mean == 0)
        return INFINITY;
    return sqrt(s->m2 / (s->n - 1)) / fabs(s->mean);
}

void rl_sampler_add(rl_sampler *s, double seconds)
{
    if (s->n < s->cap)
        s->samples[s->n] = seconds;
    s->n++;
    s->sum += seconds;
    /* Welford's update keeps mean and variance exact enough in one pass. */
    double delta = seconds - s->mean;
    s->mean += delta / s->n;
    s->m2 += delta * (seconds - s->mean);
}

rl_stop_reason rl_sampler_done(const rl_sampler *s, double elapsed_wall_s)
{
    if (s->n >= s->cap)
        return RL_STOP_CAP;
    /* A sampler that met the rule when its time ran out says so: the
     * reason names the rule it met, the time limit only what it did not. */
    if (s->n >= s->rule->min_samples && s->sum >= s->rule->min_time_s) {
        double noise = rl_sampler_noise(s);
        if (noise <= s->rule->max_noise)
            return RL_STOP_NOISE;
        if (noise / sqrt((double)s->n) <= s->rule->max_noise)
            return RL_STOP_CONVERGED;
    }
    if (s->n >= 1 && elapsed_wall_s >= s->rule->timeout_s)
        return RL_STOP_TIMEOUT;
    return RL_CONTINUE;
}
