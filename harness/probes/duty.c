/*
 * duty.c -- duty cycles from timestamps.
 *
 * NVML defines utilization.gpu as the percent of a sample period during
 * which at least one kernel was executing. Given the intervals during which
 * kernels ran (from events on the GPU, from the clock on the CPU), the same
 * number is the length of their union inside the window over the window's
 * length. Pure functions: the tests check them exactly.
 */
#include "rl_probes.h"
#include "rl_sensors.h"
#include "rooflab.h"

#include <math.h>
#include <stdlib.h>

static int by_start(const void *a, const void *b)
{
    double x = ((const rl_interval *)a)->start, y = ((const rl_interval *)b)->start;
    return (x > y) - (x < y);
}

/* Length of the union of the intervals, each clipped to [t0, t1]. */
static double covered(const rl_interval *busy, size_t n, double t0, double t1)
{
    rl_interval *clip = malloc((n ? n : 1) * sizeof *clip);
    if (!clip)
        rl_die(RL_EXIT_FAILED, "out of memory for %zu intervals", n);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        double s = fmax(busy[i].start, t0), e = fmin(busy[i].end, t1);
        if (e > s)
            clip[m++] = (rl_interval){s, e};
    }
    qsort(clip, m, sizeof *clip, by_start);
    double total = 0;
    for (size_t i = 0; i < m;) {
        /* Grow one run of overlapping (or touching) intervals, then add it. */
        double s = clip[i].start, e = clip[i].end;
        for (i++; i < m && clip[i].start <= e; i++)
            e = fmax(e, clip[i].end);
        total += e - s;
    }
    free(clip);
    return total;
}

double rl_busy_fraction(const rl_interval *busy, size_t n, double t0, double t1)
{
    if (!(t1 > t0))
        return NAN;
    return covered(busy, n, t0, t1) / (t1 - t0);
}

int rl_busy_windows(const rl_interval *busy, size_t n, double t0, double t1, double period,
                    double *out, int max)
{
    if (!(period > 0))
        return 0;
    int k = 0;
    for (double s = t0; k < max && s + period <= t1; s = t0 + period * ++k)
        out[k] = rl_busy_fraction(busy, n, s, s + period);
    return k;
}

rl_duty rl_duty_of(const double *start, const double *end, size_t n, double window_s, double sub_s)
{
    rl_interval *busy = malloc((n ? n : 1) * sizeof *busy);
    int most = sub_s > 0 && window_s > 0 ? (int)(window_s / sub_s) + 1 : 1;
    double *win = malloc((size_t)most * sizeof *win);
    if (!busy || !win)
        rl_die(RL_EXIT_FAILED, "out of memory for %zu intervals", n);
    for (size_t i = 0; i < n; i++)
        busy[i] = (rl_interval){start[i], end[i]};
    rl_duty d = {100 * rl_busy_fraction(busy, n, 0, window_s), NAN, NAN};
    int k = rl_busy_windows(busy, n, 0, window_s, sub_s, win, most);
    for (int i = 0; i < k; i++) {
        d.min_pct = fmin(d.min_pct, 100 * win[i]); /* fmin and fmax skip the NaN they start from */
        d.max_pct = fmax(d.max_pct, 100 * win[i]);
    }
    free(busy);
    free(win);
    return d;
}
