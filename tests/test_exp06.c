/*
 * test_exp06.c -- experiment 06 end to end on the CPU backend: a quick run
 * into a temporary folder writes the documented CSV, prints its verdicts
 * and draws its charts, also over a reference written before the column
 * `way` became `variant`; a run of one test still draws every chart; bad
 * usage exits 2.
 */
#include "helpers.h"
#include "rl_csv.h"
#include "rooflab.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXP06 RL_BUILD_DIR "/exp-06"

static const char *const DOCUMENTED_COLUMNS =
    "test,variant,number,k,n,batch,d,cache_resident,cache,samples,stop_reason,time_us_median,"
    "time_us_q1,time_us_q3,time_us_min,time_us_mean,rel_stddev,us_per_kernel,floor_us_per_kernel,"
    "overhead_fraction,host_us_per_launch,graph_build_us,graph_breakeven_replays,doubling_ratio,"
    "doubling_ratio_lo,doubling_ratio_hi,validated,max_abs_err,skipped_reason";

static char dir[512];
static char out[1 << 16], err[1 << 16];

static void setup(void) { make_temp_dir(dir, sizeof dir); }
static void teardown(void) { rm_tree(dir); }
TestSuite(exp06, .init = setup, .fini = teardown, .timeout = 900);

static int run_exp06(const char *args)
{
    return run_experiment(EXP06, dir, args, out, sizeof out, err, sizeof err);
}

static void assert_charts(const char *label)
{
    static const char *const names[] = {"exp-06", "exp-06-size", "exp-06-doubling"};
    char first[1024] = "";
    cr_assert_eq(missing_charts(dir, label, names, 3, first, sizeof first), 0,
                 "%s is missing, empty or states no verdict", first);
}

/* The run's CSV as a run written before `way` became `variant` would be,
 * as this device's reference: --plot-only overlays it and still draws
 * every chart (plot.gp reads either name). */
static void overlay_a_reference_from_before_the_rename(const char *csv)
{
    char slug[256] = "", e[256], ref[4096];
    cr_assert_eq(run_capture(EXP06 " --print-label --backend cpu", slug, sizeof slug, e, sizeof e), 0);
    slug[strcspn(slug, "\n")] = '\0';
    snprintf(ref, sizeof ref, "mkdir -p '%s/results/reference/%s'", dir, slug);
    cr_assert_eq(system(ref), 0);
    snprintf(ref, sizeof ref, "sed -e 's/^test,variant,/test,way,/' -e 's/^# compare_keys: test,variant,/"
             "# compare_keys: test,way,/' '%s' > '%s/results/reference/%s/exp-06.csv'", csv, dir, slug);
    cr_assert_eq(system(ref), 0);
    int rc = run_exp06("--plot-only --backend cpu --label e2e");
    cr_assert_eq(rc, 0, "exit %d\n%s\n%s", rc, out, err);
    cr_assert(strstr(out, "overlaid dashed"), "the reference is overlaid:\n%s", out);
    assert_charts("e2e");
}

Test(exp06, quick_cpu_run_writes_csv_verdicts_and_charts)
{
    int rc = run_exp06("--quick --backend cpu --max-bytes 64Mi --label e2e");
    cr_assert_eq(rc, 0, "exit %d\nstdout:\n%s\nstderr:\n%s", rc, out, err);
    cr_assert(strstr(out, "verdicts (cpu backend"), "%s", out);
    cr_assert(strstr(out, "doubling test: h = relu(x W1 + bias); y = h W2 + x"), "%s", out);
    cr_assert(strstr(out, "launch overhead stops mattering"), "%s", out);
    cr_assert(strstr(out, "overhead %") && strstr(out, "t(2b)/t(b)") && !strstr(out, "ovhd"),
              "the tables' headings are spelled out:\n%s", out);
    static const char *claims[] = {"region without barriers per empty kernel",
                                   "fork/join per kernel vs one region with barriers",
                                   "doubling ratio at the smallest batch", "batch 1, d = 256; CPU: four",
                                   "doubling ratio at the largest batch", "batch 512, d = 256; the work",
                                   "first batch whose doubling costs > 10 %"};
    for (size_t i = 0; i < sizeof claims / sizeof claims[0]; i++)
        cr_assert(strstr(out, claims[i]), "verdict '%s' missing:\n%s", claims[i], out);

    char path[1024];
    snprintf(path, sizeof path, "%s/results/e2e/exp-06.csv", dir);
    char *text = read_file(path, NULL);
    cr_assert_not_null(text);
    static const char *meta[] = {"# experiment: 06-launch-graphs", "# backend: cpu", "# quick: yes",
                                 "# chain: x -> 0.75 x + 0.125", "# floor: one_kernel",
                                 "# step: h = relu", "# width: 256", "# compare_keys: test,variant,k,n,batch",
                                 "# host_load: load average "};
    for (size_t i = 0; i < sizeof meta / sizeof meta[0]; i++)
        cr_assert(strstr(text, meta[i]), "metadata '%s' missing", meta[i]);
    free(text);

    char why[512], header[4096];
    rl_table *t = load_results(path, why, sizeof why);
    cr_assert_not_null(t, "the CSV parses, every row complete: %s", why);
    header_line(t, header, sizeof header);
    cr_assert_str_eq(header, DOCUMENTED_COLUMNS);
    int c_test = rl_table_col(t, "test"), c_variant = rl_table_col(t, "variant"), c_valid = rl_table_col(t, "validated");
    int c_time = rl_table_col(t, "time_us_median"), c_upk = rl_table_col(t, "us_per_kernel");
    int c_floor = rl_table_col(t, "floor_us_per_kernel"), c_k = rl_table_col(t, "k"), c_n = rl_table_col(t, "n");
    int c_ratio = rl_table_col(t, "doubling_ratio"), c_batch = rl_table_col(t, "batch");
    int c_lo = rl_table_col(t, "doubling_ratio_lo"), c_hi = rl_table_col(t, "doubling_ratio_hi");
    int chain = 0, size = 0, doubling = 0, ratios = 0;
    for (int i = 0; i < t->nrows; i++) {
        char **f = t->cells[i];
        cr_assert_str_eq(f[c_valid], "yes", "row %d", i);
        cr_assert_gt(atof(f[c_time]), 0, "row %d", i);
        if (!strcmp(f[c_test], "doubling")) {
            doubling++;
            ratios += f[c_ratio][0] != '\0';
            /* The ratio's bars (the chart's) on its row, around it. */
            cr_assert_eq(!f[c_ratio][0], !f[c_lo][0], "row %d: a ratio and its low end together", i);
            cr_assert_eq(!f[c_ratio][0], !f[c_hi][0], "row %d: a ratio and its high end together", i);
            if (f[c_ratio][0])
                cr_assert(atof(f[c_lo]) <= atof(f[c_ratio]) && atof(f[c_ratio]) <= atof(f[c_hi]),
                          "row %d: %s <= %s <= %s", i, f[c_lo], f[c_ratio], f[c_hi]);
            cr_assert_gt(atoi(f[c_batch]), 0);
            continue;
        }
        chain += !strcmp(f[c_test], "chain");
        size += !strcmp(f[c_test], "size");
        cr_assert(strspn(f[c_n], "0123456789") == strlen(f[c_n]), "row %d: n = %s", i, f[c_n]);
        double upk = atof(f[c_upk]);
        cr_assert(fabs(upk - atof(f[c_time]) / atoi(f[c_k])) <= 1e-3 * upk, "row %d: per kernel = time / k", i);
        cr_assert_gt(atof(f[c_floor]), 0, "row %d has the floor", i);
        if (!strcmp(f[c_variant], "serial"))
            cr_assert_leq(atof(f[c_k]) * atof(f[c_n]), 67108864.0, "serial only below its cap");
    }
    cr_assert_eq(chain, 2 * 4 * 5, "chain: 2 sizes x 4 lengths x 5 variants");
    cr_assert_eq(size, 4 * 5 - 1, "size: 4 sizes x 5 variants, no serial at the largest");
    cr_assert_eq(doubling, 7 * 2, "doubling: batches 1 2 16 32 256 512 1024, two variants");
    cr_assert_eq(ratios, 4 * 2, "a ratio on each batch whose double was measured");
    rl_table_free(t);

    static const char *const ids[] = {"graph_replay_cheap", "sync_each_slowest",
                                      "doubling_small_batch", "doubling_large_batch",
                                      "graph_shrinks_overhead_region"};
    char first[1024] = "";
    cr_assert_eq(missing_verdicts(dir, "e2e", "06-launch-graphs", "cpu", ids, 5, first, sizeof first), 0,
                 "%s missing", first);
    assert_charts("e2e");
    cr_assert_eq(temp_files_left(dir, "e2e"), 0, "no temporary files or folders left");
    overlay_a_reference_from_before_the_rename(path);
}

Test(exp06, one_test_still_draws_every_chart)
{
    int rc = run_exp06("--quick --backend cpu --max-bytes 64Mi --label part --test size --variant async,one_kernel");
    cr_assert_eq(rc, 0, "exit %d\n%s\n%s", rc, out, err);
    cr_assert(strstr(out, "not measured"), "%s", out);
    assert_charts("part");
}

Test(exp06, usage_errors_exit_2)
{
    cr_assert_eq(run_exp06("--bogus"), RL_EXIT_USAGE);
    cr_assert_eq(run_exp06("--test nothing --backend cpu"), RL_EXIT_USAGE);
    cr_assert(strstr(err, "--test"), "%s", err);
    static const char *const bad_widths[] = {"0", "4097", "12.5", "abc", "-8"};
    for (size_t i = 0; i < sizeof bad_widths / sizeof bad_widths[0]; i++) {
        char args[128];
        snprintf(args, sizeof args, "--backend cpu --quick --test doubling --width %s", bad_widths[i]);
        cr_assert_eq(run_exp06(args), RL_EXIT_USAGE, "--width %s", bad_widths[i]);
        cr_assert(strstr(err, "--width wants a whole number 1..4096"), "%s", err);
    }
}

/* --width sets the step's d: the CSV's metadata and d column say which
 * width was measured, and the doubling table and verdicts name it. */
Test(exp06, width_option_sets_the_step_width)
{
    int rc = run_exp06("--quick --backend cpu --test doubling --variant launches --width 16 "
                       "--label w16 --no-plot");
    cr_assert_eq(rc, 0, "exit %d\n%s\n%s", rc, out, err);
    cr_assert(strstr(out, "doubling test: h = relu(x W1 + bias); y = h W2 + x, d = 16"), "%s", out);
    cr_assert(strstr(out, "batch 1, d = 16;"), "the verdict names the width:\n%s", out);
    char path[1024], why[512];
    snprintf(path, sizeof path, "%s/results/w16/exp-06.csv", dir);
    char *text = read_file(path, NULL);
    cr_assert_not_null(text);
    cr_assert(strstr(text, "# width: 16 ") && strstr(text, "y = h W2 + x, d = 16,"), "%s", text);
    free(text);
    rl_table *t = load_results(path, why, sizeof why);
    cr_assert_not_null(t, "%s", why);
    cr_assert_gt(t->nrows, 0);
    for (int i = 0; i < t->nrows; i++)
        cr_assert_str_eq(rl_table_get(t, i, "d"), "16", "row %d", i);
    rl_table_free(t);
}

Test(exp06, help_and_list)
{
    cr_assert_eq(run_exp06("--help"), 0);
    cr_assert(strstr(out, "--test T") && strstr(out, "--width D") && strstr(out, "(default 256)"), "%s", out);
    cr_assert_eq(run_exp06("--backend cpu --list"), 0);
    cr_assert(strstr(out, "sync_each") && strstr(out, "one_kernel") && strstr(out, "launches"), "%s", out);
}

Test(exp06, cuda_backend_without_a_gpu_exits_77)
{
    skip_if_a_gpu_is_present();
    cr_assert_eq(run_exp06("--backend cuda --quick"), RL_EXIT_NO_GPU, "%s", err);
}
