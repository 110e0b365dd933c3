/*
 * test_exp01.c -- experiment 01 end to end on the CPU backend: a quick run
 * into a temporary folder writes the documented CSV, prints its verdicts
 * and draws its charts; a run of one sweep still draws every chart; bad
 * usage exits 2. A claim on a busy reading over holds shorter than its
 * window is "not measured", naming both, never "does not hold": the gate
 * on stand-in holds, and a run whose --budget shortened them.
 */
#include "../experiments/01-duty-cycle/window.h"
#include "helpers.h"
#include "rl_backend.h"
#include "rl_csv.h"
#include "rooflab.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXP01 RL_BUILD_DIR "/exp-01"

static const char *const DOCUMENTED_COLUMNS =
    "sweep,variant,number,workers,worker_unit,workers_per_unit,duty_target_pct,period_ms,window_s,"
    "bursts,duty_measured_pct,duty_window_min_pct,duty_window_max_pct,work,work_unit,work_per_s,"
    "work_fraction,gbps,alloc_bytes,util_pct,util_mem_pct,util_samples,util_source,units_busy_pct,"
    "gpm_sm_occupancy_pct,gpm_any_tensor_util_pct,gpm_dram_bw_util_pct,gpm_status,mem_used_bytes,"
    "mem_total_bytes,sm_clock_mhz,note,windows,util_window_min_pct,util_window_max_pct,"
    "util_mem_window_min_pct,util_mem_window_max_pct,units_busy_window_min_pct,"
    "units_busy_window_max_pct,work_per_s_window_min,work_per_s_window_max,work_fraction_lo,"
    "work_fraction_hi,validated,skipped_reason";

static char dir[512];
static char out[1 << 16], err[1 << 16];

static void setup(void) { make_temp_dir(dir, sizeof dir); }
static void teardown(void) { rm_tree(dir); }
TestSuite(exp01, .init = setup, .fini = teardown, .timeout = 600);

static int run_exp01(const char *args)
{
    return run_experiment(EXP01, dir, args, out, sizeof out, err, sizeof err);
}

static void assert_charts(const char *label)
{
    static const char *const names[] = {"exp-01", "exp-01-duty", "exp-01-memory"};
    char first[1024] = "";
    cr_assert_eq(missing_charts(dir, label, names, 3, first, sizeof first), 0,
                 "%s is missing, empty or states no verdict", first);
}

static int cpu_threads(void)
{
    char why[256];
    rl_backend *be = rl_backend_open(RL_CPU, 0, why, sizeof why);
    int t = rl_device(be)->threads;
    rl_backend_close(be);
    return t;
}

Test(exp01, quick_cpu_run_writes_csv_verdicts_and_charts)
{
    int rc = run_exp01("--quick --backend cpu --max-bytes 64Mi --label e2e");
    cr_assert_eq(rc, 0, "exit %d\nstdout:\n%s\nstderr:\n%s", rc, out, err);
    cr_assert(strstr(out, "backend     cpu"), "%s", out);
    cr_assert(strstr(out, "observer    CPU: each worker thread's utime + stime"), "%s", out);
    cr_assert(strstr(out, "verdicts (cpu backend"), "%s", out);
    cr_assert(strstr(out, "measured %") && strstr(out, "machine %") && strstr(out, "work fraction"),
              "the table's headings are spelled out:\n%s", out);
    cr_assert(strstr(out, " MiB\n") || strstr(out, " GiB\n"), "memory used, in binary units:\n%s",
              out);
    static const char *claims[] = {"one busy thread reads busy (top -H)",
                                   "a pointer chase reads busy while moving little data",
                                   "busy time tracks the duty cycle, 1 thread",
                                   "work: full device / one busy worker",
                                   "the machine-wide view (process CPU / CPUs), one thread",
                                   "resident memory says nothing of memory traffic (CPU)"};
    for (size_t i = 0; i < sizeof claims / sizeof claims[0]; i++)
        cr_assert(strstr(out, claims[i]), "verdict '%s' missing:\n%s", claims[i], out);

    char path[1024];
    snprintf(path, sizeof path, "%s/results/e2e/exp-01.csv", dir);
    char *text = read_file(path, NULL);
    cr_assert_not_null(text, "no CSV at %s", path);
    static const char *meta[] = {"# experiment: 01-duty-cycle", "# backend: cpu", "# quick: yes",
                                 "# hold: each point", "# hold_windows: the observed hold as", "# observer: CPU:", "# duty_measured: union",
                                 "# compare_keys: sweep,variant,workers,duty_target_pct",
                                 "# compare_value: util_pct", "# chase_buffer: ",
                                 "# host_load: load average "};
    for (size_t i = 0; i < sizeof meta / sizeof meta[0]; i++)
        cr_assert(strstr(text, meta[i]), "metadata '%s' missing", meta[i]);
    free(text);

    char why[512], header[4096];
    rl_table *t = load_results(path, why, sizeof why);
    cr_assert_not_null(t, "the CSV parses, every row complete: %s", why);
    header_line(t, header, sizeof header);
    cr_assert_str_eq(header, DOCUMENTED_COLUMNS);
    int c_sweep = rl_table_col(t, "sweep"), c_var = rl_table_col(t, "variant"), c_valid = rl_table_col(t, "validated");
    int c_util = rl_table_col(t, "util_pct"), c_duty = rl_table_col(t, "duty_measured_pct");
    int c_target = rl_table_col(t, "duty_target_pct"), c_bursts = rl_table_col(t, "bursts");
    int c_frac = rl_table_col(t, "work_fraction"), c_alloc = rl_table_col(t, "alloc_bytes");
    int c_gbps = rl_table_col(t, "gbps"), c_gpm = rl_table_col(t, "gpm_status"), c_win = rl_table_col(t, "window_s");
    int per_sweep[3] = {0}, full_device = 0;
    for (int i = 0; i < t->nrows; i++) {
        char **f = t->cells[i];
        cr_assert_str_eq(f[c_valid], "yes", "row %d", i);
        cr_assert_gt(atof(f[c_win]), 0.3, "row %d held its window", i);
        double util = atof(f[c_util]), duty = atof(f[c_duty]);
        cr_assert(util >= 0 && util <= 110, "row %d: busy %g %%", i, util);
        cr_assert(duty >= 0 && duty <= 100.001, "row %d: duty %g %%", i, duty);
        cr_assert_str_eq(f[c_gpm], "n/a (CPU backend)");
        per_sweep[f[c_sweep][0] - 'a']++;
        if (atof(f[c_target]) == 0) {
            cr_assert_eq(atoi(f[c_bursts]), 0, "row %d: no bursts at duty 0", i);
            cr_assert_leq(util, 5, "row %d: sleeping threads read idle", i);
        }
        full_device += !strcmp(f[c_sweep], "a_occupancy") && atof(f[c_frac]) == 1.0;
        if (!strcmp(f[c_var], "idle_allocation"))
            cr_assert_gt(atof(f[c_alloc]), 3e7, "held memory, even under --max-bytes 64Mi");
        if (!strcmp(f[c_var], "stream"))
            cr_assert_gt(atof(f[c_gbps]), 0.1);
    }
    int many = cpu_threads() > 1;
    cr_assert_eq(per_sweep[0], 1 + many + 1, "sweep a: arith on 1 (and all) threads, one chase");
    cr_assert_eq(per_sweep[1], 5 * (1 + many), "sweep b: five duty cycles per size");
    cr_assert_eq(per_sweep[2], 2, "sweep c: idle allocation and stream");
    cr_assert_eq(full_device, 1, "one point is the full device's work");
    rl_table_free(t);

    static const char *const ids[] = {"one_worker_reads_busy", "chase_reads_busy",
                                      "tracks_duty_one_worker", "tracks_duty_full_device",
                                      "work_differs", "units_view_one_worker",
                                      "memory_held_is_not_traffic"};
    char first[1024] = "";
    cr_assert_eq(missing_verdicts(dir, "e2e", "01-duty-cycle", "cpu", ids, 7, first, sizeof first), 0,
                 "%s missing", first);
    assert_charts("e2e");
    cr_assert_eq(temp_files_left(dir, "e2e"), 0, "no temporary files or folders left");
}

/* One sweep: the other verdicts say "not measured", and every chart is
 * still drawn (gnuplot must not choke on the absent sweeps). */
Test(exp01, one_sweep_still_draws_every_chart)
{
    int rc = run_exp01("--quick --backend cpu --max-bytes 64Mi --label part --sweep c");
    cr_assert_eq(rc, 0, "exit %d\n%s\n%s", rc, out, err);
    cr_assert(strstr(out, "not measured"), "%s", out);
    assert_charts("part");
}

Test(exp01, usage_errors_exit_2)
{
    cr_assert_eq(run_exp01("--bogus"), RL_EXIT_USAGE);
    cr_assert_eq(run_exp01("--sweep d --backend cpu"), RL_EXIT_USAGE);
    cr_assert_eq(run_exp01("--period-ms 0 --backend cpu --no-plot"), RL_EXIT_USAGE);
    cr_assert(strstr(err, "--period-ms"), "%s", err);
    cr_assert_eq(run_exp01("--period-ms ten --backend cpu --no-plot"), RL_EXIT_USAGE);
}

Test(exp01, help_and_list)
{
    cr_assert_eq(run_exp01("--help"), 0);
    cr_assert(strstr(out, "--sweep S") && strstr(out, "--period-ms MS"), "%s", out);
    cr_assert_eq(run_exp01("--backend cpu --list"), 0);
    cr_assert(strstr(out, "arith") && strstr(out, "chase") && strstr(out, "stream"), "%s", out);
}

Test(exp01, cuda_backend_without_a_gpu_exits_77)
{
    skip_if_a_gpu_is_present();
    cr_assert_eq(run_exp01("--backend cuda --quick"), RL_EXIT_NO_GPU, "%s", err);
}

/* The gate on stand-in holds: a busy reading's window on each backend. */
Test(exp01, a_hold_shorter_than_the_claims_window_is_not_judged)
{
    static const exp01_window busy = {EXP01_BUSY_WINDOW}, work = {EXP01_NO_WINDOW};
    char why[512] = "";
    cr_assert(exp01_window_ok(&busy, false, 1.0, "p", why, sizeof why), "a lab hold is judged");
    cr_assert(exp01_window_ok(&busy, false, 0.4, "p", why, sizeof why), "a quick hold is judged");
    cr_assert_not(exp01_window_ok(&busy, false, 0.2, "its point arith", why, sizeof why));
    cr_assert(strstr(why, "its point arith held 0.20 s") && strstr(why, "needs 0.40 s"), "%s", why);
    cr_assert_not(exp01_window_ok(&busy, true, 0.5, "p", why, sizeof why), "NVML's window");
    cr_assert(strstr(why, "held 0.50 s") && strstr(why, "needs 1.00 s"), "%s", why);
    cr_assert(exp01_window_ok(&busy, true, 1.0, "p", why, sizeof why));
    cr_assert(exp01_window_ok(&busy, false, NAN, "p", why, sizeof why),
              "no point held: another rule says why");
    cr_assert(exp01_window_ok(&work, false, 0.01, "p", why, sizeof why), "counted work has no window");
}

/* The line of a verdict's claim on the console, up to its end. */
static void verdict_line(const char *claim, char *line, size_t len)
{
    const char *table = strstr(out, "\nverdicts ("); /* the header lists the claims too */
    cr_assert_not_null(table, "%s", out);
    const char *at = strstr(table, claim);
    cr_assert_not_null(at, "verdict '%s' missing:\n%s", claim, out);
    size_t n = strcspn(at, "\n");
    snprintf(line, len, "%.*s", (int)(n < len ? n : len - 1), at);
}

/* A --budget too short for a busy reading shortens the holds below the
 * claims' window: those claims say "not measured" with the hold they had
 * and the one they need (or busy host), never "does not hold"; the
 * counted-work claim is still judged. */
Test(exp01, a_budget_below_the_window_leaves_busy_claims_not_measured)
{
    char args[2048];
    snprintf(args, sizeof args, "--quick --backend cpu --max-bytes 64Mi --label short --sweep a "
             "--budget 3 --plan-file %s/plan --ceilings " RL_SOURCE_ROOT
             "/tests/fixtures/ceilings-cpu.csv", dir);
    int rc = run_exp01(args);
    cr_assert_eq(rc, 0, "exit %d\n%s\n%s", rc, out, err);
    static const char *const busy[] = {"one busy thread reads busy (top -H)",
                                       "the machine-wide view (process CPU / CPUs), one thread",
                                       "a pointer chase reads busy while moving little data"};
    char line[512];
    for (size_t i = 0; i < sizeof busy / sizeof busy[0]; i++) {
        verdict_line(busy[i], line, sizeof line);
        cr_assert(strstr(line, "not measured") && !strstr(line, "does not hold"), "%s\n%s", line,
                  out);
    }
    cr_assert((strstr(out, " held 0.2") && strstr(out, " s, the claim needs 0.40 s")) || strstr(out, "busy host"),
              "the note names the hold and the window:\n%s", out);
    char path[1024];
    snprintf(path, sizeof path, "%s/results/short/exp-01.csv", dir);
    char *text = read_file(path, NULL);
    cr_assert_not_null(text);
    cr_assert(strstr(text, "# hold_needed: window_s is each point's actual hold"), "%s", text);
    free(text);

    /* The plan's least time for the verdicts counts every point at the
     * window (0.4 s), its least settle (0.05 s) and its start (0.15 s),
     * within the 0.85 of the time left the budget plans them into, and the
     * 2.5 s kept for the charts: what make all BUDGET= gives it. */
    int points = 1 + (cpu_threads() > 1) + 1;
    snprintf(path, sizeof path, "%s/plan", dir);
    char *plan = read_file(path, NULL), want[64];
    snprintf(want, sizeof want, "budget_needed_s=%d\n", (int)ceil(points * 0.6 / 0.85 + 2.5));
    cr_assert(plan && strstr(plan, want), "%s in:\n%s", want, plan);
    free(plan);
}
