/*
 * test_duty.c -- the duty-cycle arithmetic on synthetic timestamps (exact:
 * every value below is a sum of powers of two), and the operating
 * system's busy-time readers.
 */
#include "probes/rl_probes.h"
#include "probes/rl_sensors.h"
#include "rl_host.h"
#include "rooflab.h"

#include <criterion/criterion.h>
#include <math.h>
#include <time.h>
#include <unistd.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

static double busy(const rl_interval *iv, size_t n, double t0, double t1)
{
    return rl_busy_fraction(iv, n, t0, t1);
}

Test(duty, nothing_running_is_zero)
{
    cr_assert_eq(busy(NULL, 0, 0, 1), 0.0);
    rl_interval zero[] = {{0.5, 0.5}};
    cr_assert_eq(busy(zero, 1, 0, 1), 0.0, "a zero-length interval covers nothing");
}

Test(duty, one_interval_inside_the_window)
{
    rl_interval iv[] = {{0.25, 0.5}};
    cr_assert_eq(busy(iv, 1, 0, 1), 0.25);
    cr_assert_eq(busy(iv, 1, 0, 0.5), 0.5);
}

Test(duty, overlaps_count_once)
{
    rl_interval iv[] = {{0, 0.5}, {0.25, 0.75}};
    cr_assert_eq(busy(iv, 2, 0, 1), 0.75, "two kernels at once are one busy period");
    rl_interval nested[] = {{0, 1}, {0.25, 0.5}, {0.125, 0.875}};
    cr_assert_eq(busy(nested, 3, 0, 1), 1.0);
}

Test(duty, order_does_not_matter)
{
    rl_interval iv[] = {{0.75, 1}, {0, 0.125}, {0.5, 0.625}, {0.0625, 0.25}};
    cr_assert_eq(busy(iv, 4, 0, 1), 0.25 + 0.125 + 0.25);
}

Test(duty, touching_intervals_merge)
{
    rl_interval iv[] = {{0.25, 0.5}, {0, 0.25}, {0.5, 0.75}};
    cr_assert_eq(busy(iv, 3, 0, 1), 0.75);
}

Test(duty, only_the_part_inside_the_window_counts)
{
    rl_interval iv[] = {{-1, 0.25}, {0.75, 2}};
    cr_assert_eq(busy(iv, 2, 0, 1), 0.5);
    rl_interval far[] = {{2, 3}, {-3, -2}};
    cr_assert_eq(busy(far, 2, 0, 1), 0.0);
    rl_interval shifted[] = {{0, 2}, {2.5, 4}};
    cr_assert_eq(busy(shifted, 2, 1, 3), 0.75, "window [1, 3]: 1 + 0.5 of 2 seconds");
}

Test(duty, an_empty_window_is_nan)
{
    rl_interval iv[] = {{0, 1}};
    cr_assert(isnan(busy(iv, 1, 1, 1)));
    cr_assert(isnan(busy(iv, 1, 2, 1)));
}

/* A kernel of a quarter period launched every 2^-7 s for 128 periods: the
 * duty cycle the experiment imposes, read back exactly. */
Test(duty, a_periodic_pattern_reads_its_duty)
{
    enum { PERIODS = 128 };
    const double p = 1.0 / 128;
    rl_interval iv[PERIODS];
    for (int i = 0; i < PERIODS; i++)
        iv[i] = (rl_interval){i * p + p / 8, i * p + p / 8 + p / 4};
    cr_assert_eq(busy(iv, PERIODS, 0, 1), 0.25);
    double w[16];
    int k = rl_busy_windows(iv, PERIODS, 0, 1, 1.0 / 8, w, 16);
    cr_assert_eq(k, 8);
    for (int i = 0; i < k; i++)
        cr_assert_eq(w[i], 0.25, "window %d: %g", i, w[i]);
}

Test(duty, windows_cut_the_span)
{
    rl_interval iv[] = {{0, 0.25}, {1, 1.5}, {2, 2.75}};
    double w[8];
    int k = rl_busy_windows(iv, N(iv), 0, 3, 1, w, 8);
    cr_assert_eq(k, 3);
    cr_assert_eq(w[0], 0.25);
    cr_assert_eq(w[1], 0.5);
    cr_assert_eq(w[2], 0.75);
    cr_assert_eq(rl_busy_windows(iv, N(iv), 0, 2.5, 1, w, 8), 2, "a last partial window is dropped");
    cr_assert_eq(rl_busy_windows(iv, N(iv), 0, 3, 1, w, 2), 2, "at most max windows");
    cr_assert_eq(rl_busy_windows(iv, N(iv), 0, 3, 0, w, 8), 0, "a zero period gives none");
    rl_interval across[] = {{0.5, 1.5}};
    k = rl_busy_windows(across, 1, 0, 2, 1, w, 8);
    cr_assert_eq(k, 2);
    cr_assert_eq(w[0], 0.5, "an interval across a window edge splits");
    cr_assert_eq(w[1], 0.5);
}

/* ---- /proc ---------------------------------------------------------------- */

Test(osbusy, parses_utime_and_stime_after_the_command_name)
{
    unsigned long long t = 0;
    const char *line = "4242 (my (odd) cmd) R 1 4242 4242 0 -1 4194560 95 0 0 0 17 5 0 0 20 0 1 0 "
                       "12345 1000 100 18446744073709551615\n";
    cr_assert(rl_proc_stat_ticks(line, &t));
    cr_assert_eq(t, 22ULL, "utime 17 + stime 5, got %llu", t);
    cr_assert(rl_proc_stat_ticks("1 (a) S 0 1 1 0 -1 0 0 0 0 0 123456789012 1", &t));
    cr_assert_eq(t, 123456789013ULL);
}

Test(osbusy, rejects_malformed_lines)
{
    unsigned long long t = 7;
    cr_assert_not(rl_proc_stat_ticks(NULL, &t));
    cr_assert_not(rl_proc_stat_ticks("4242 no parentheses S 1 2 3", &t));
    cr_assert_not(rl_proc_stat_ticks("4242 (short) R 1 2 3 4", &t), "too few fields");
    cr_assert_not(rl_proc_stat_ticks("1 (a) S 0 1 1 0 -1 0 0 0 0 0 x7 1", &t), "utime not a number");
    cr_assert_eq(t, 7ULL, "untouched on failure");
}

Test(osbusy, reads_the_aggregate_cpu_line_of_proc_stat)
{
    unsigned long long busy = 0, total = 0;
    /* user nice system idle iowait irq softirq steal guest guest_nice */
    cr_assert(rl_proc_stat_cpu("cpu  100 2 30 500 7 1 4 9 50 0\n", &busy, &total));
    cr_assert_eq(busy, 146ULL, "user + nice + system + irq + softirq + steal, got %llu", busy);
    cr_assert_eq(total, 653ULL, "busy + idle + iowait, got %llu", total);
    cr_assert_not(rl_proc_stat_cpu("cpu0 100 2 30 500 7 1 4 9\n", &busy, &total), "one CPU's line");
    cr_assert_not(rl_proc_stat_cpu("cpu  100 2 30\n", &busy, &total), "too few fields");
    cr_assert_not(rl_proc_stat_cpu(NULL, &busy, &total));
}

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Spinning until this thread has had 0.2 s of CPU, whatever the machine's
 * load: the kernel must then charge it at least that, to a tick. */
Test(osbusy, a_spinning_thread_is_charged_its_cpu_time)
{
    int tid = gettid();
    double before = rl_cpu_busy_s(tid), proc_before = rl_cpu_busy_s(0), start = thread_cpu_s();
    cr_assert(isfinite(before) && isfinite(proc_before));
    volatile unsigned long sink = 0;
    while (thread_cpu_s() - start < 0.2)
        for (int i = 0; i < 100000; i++)
            sink += (unsigned long)i;
    double charged = rl_cpu_busy_s(tid) - before;
    cr_assert(charged >= 0.18 && charged < 5, "charged %.3f s for 0.2 s of spinning", charged);
    /* utime + stime are the runtime split by ticks and rescaled per task
     * (the process's and the thread's apart): they agree to a few ticks */
    double process = rl_cpu_busy_s(0) - proc_before;
    cr_assert_geq(process, charged - 0.05, "the process includes the thread: %.3f s vs %.3f s",
                  process, charged);
    cr_assert(isnan(rl_cpu_busy_s(999999999)), "no such thread: NaN");
}

Test(osbusy, memory_and_sleep)
{
    double rss = rl_process_rss_bytes(), ram = rl_host_ram_bytes();
    cr_assert(rss > 4096 && ram > rss, "rss %g, ram %g", rss, ram);
    double t = rl_now_s() + 0.02;
    rl_sleep_until(t);
    cr_assert_geq(rl_now_s(), t);
}
