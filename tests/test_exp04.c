/*
 * test_exp04.c -- experiment 04 end to end on the CPU backend: a quick run
 * into a temporary folder must write a CSV with the documented columns
 * and metadata whose rows agree with the wave model, print its verdicts,
 * and draw non-empty charts; bad usage must fail with the documented
 * exit codes. Also the wave planning and wave model of harness/waves.c,
 * by hand.
 */
#include "helpers.h"
#include "rl_csv.h"
#include "rooflab.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXP04 RL_BUILD_DIR "/exp-04"

static const char *const DOCUMENTED_COLUMNS =
    "part,variant,number,gemm,m,n,k,vocab,tile_m,tile_n,tiles,units,blocks_per_unit,waves,"
    "wave_efficiency,wave_end,flops,cache,samples,stop_reason,time_us_median,time_us_q1,"
    "time_us_q3,time_us_min,time_us_mean,rel_stddev,tflops,mfu,mfu_datasheet,model_time_us,"
    "speedup_vs_v50257,speedup_vs_v50257_lo,speedup_vs_v50257_hi,validated,max_abs_err,"
    "skipped_reason";

/* ---- wave planning, by hand ------------------------------------------- */

Test(waves, hand_computed_cases_of_the_claims)
{
    /* 108 SMs: 108 tiles are one wave, 117 two; 132 SMs: 132 one, 143 two */
    cr_assert_eq(rl_waves_by_rounds(108, 108, 1), 1);
    cr_assert_eq(rl_waves_by_rounds(117, 108, 1), 2);
    cr_assert_eq(rl_waves_by_rounds(132, 132, 1), 1);
    cr_assert_eq(rl_waves_by_rounds(143, 132, 1), 2);
    cr_assert_eq(rl_waves_by_rounds(265, 132, 2), 2);
    cr_assert_eq(rl_waves_by_rounds(0, 132, 1), 0);
    cr_assert_eq(rl_waves_by_rounds(5, 0, 1), 0, "no SMs: no waves, not a hang");
}

Test(waves, the_closed_form_and_the_rounds_agree)
{
    for (int sms = 1; sms <= 140; sms += 3)
        for (int per_sm = 1; per_sm <= 3; per_sm++)
            for (long long tiles = 0; tiles <= 1000; tiles += 7)
                cr_assert_eq(rl_waves(tiles, sms, per_sm), rl_waves_by_rounds(tiles, sms, per_sm),
                             "%lld tiles on %d SMs x %d", tiles, sms, per_sm);
}

Test(waves, the_most_square_cut_of_a_wave)
{
    /* wave tiles -> tile rows: 132 = 11 x 12, 108 = 9 x 12, 2 threads = 1 x 2 */
    const long long wave[] = {1, 2, 7, 16, 58, 80, 108, 114, 132, 264};
    const int rows[] = {1, 1, 1, 4, 2, 8, 9, 6, 11, 12};
    for (size_t i = 0; i < sizeof wave / sizeof wave[0]; i++) {
        cr_assert_eq(rl_wave_tile_rows(wave[i]), rows[i], "%lld tiles", wave[i]);
        cr_assert_eq(wave[i] % rows[i], 0, "whole columns fill the wave");
    }
    /* The own kernel's plan on an H100/H200: 11 rows of 128 = M 1408; a
     * wave ends at 12 columns, N = 1536, as in NVIDIA's example. */
    int r = rl_wave_tile_rows(132);
    cr_assert_eq(r * 128, 1408);
    cr_assert_eq(rl_tiles(r * 128, 1536, 128, 128), 132);
    cr_assert_eq(rl_waves(rl_tiles(r * 128, 1544, 128, 128), 132, 1), 2);
}

Test(waves, the_wave_model_and_the_sweep_across_waves)
{
    /* NVIDIA's example on 108 SMs: N = 1536 is 108 tiles, one full wave
     * and its last N; N = 1544 is 117 tiles in two waves. */
    rl_tiling a100 = {2304, 256, 128, 108, 1};
    rl_wave_model w = rl_wave_model_of(&a100, 1536);
    cr_assert(w.tiles == 108 && w.waves == 1 && w.efficiency == 1 && w.units == 108);
    w = rl_wave_model_of(&a100, 1544);
    cr_assert(w.tiles == 117 && w.waves == 2);
    cr_assert_float_eq(w.efficiency, 117.0 / 216, 1e-12);
    cr_assert(rl_wave_ends_at(&a100, 1536) && !rl_wave_ends_at(&a100, 1472) &&
              !rl_wave_ends_at(&a100, 1544));
    /* In steps of 64, one step of 8 past the wave end, then back on the grid. */
    cr_assert_eq(rl_wave_sweep_next(&a100, 1472, 64, 8), 1536);
    cr_assert_eq(rl_wave_sweep_next(&a100, 1536, 64, 8), 1544);
    cr_assert_eq(rl_wave_sweep_next(&a100, 1544, 64, 8), 1600);
    cr_assert_eq(rl_wave_sweep_next(&a100, 1536, 8, 8), 1544, "the step past is on the grid");
}

/* ---- end to end --------------------------------------------------------- */

static char dir[512];
static char out[1 << 17], err[1 << 16];

static void setup(void) { make_temp_dir(dir, sizeof dir); }
static void teardown(void) { rm_tree(dir); }
TestSuite(exp04, .init = setup, .fini = teardown, .timeout = 600);

static int run_exp04(const char *args)
{
    return run_experiment(EXP04, dir, args, out, sizeof out, err, sizeof err);
}

/* The CSV, read back with the harness's reader; a missing column is a
 * test failure, not an empty string. */
static const char *cell(const rl_table *t, int row, const char *name)
{
    cr_assert_geq(rl_table_col(t, name), 0, "no column %s", name);
    return rl_table_get(t, row, name);
}

static double num(const rl_table *t, int row, const char *name) { return atof(cell(t, row, name)); }

static bool is(const rl_table *t, int row, const char *name, const char *value)
{
    return !strcmp(cell(t, row, name), value);
}

/* Model rows: NVIDIA's example on 108 and 132 SMs, every 8 of N. */
static void check_model_rows(const rl_table *t)
{
    int rows = 0;
    for (int r = 0; r < t->nrows; r++) {
        if (!is(t, r, "part", "model"))
            continue;
        long long n = (long long)num(t, r, "n"), tiles = rl_tiles(2304, (long long)n, 256, 128);
        int sms = (int)num(t, r, "units");
        cr_assert(sms == 108 || sms == 132);
        cr_assert_eq((long long)num(t, r, "tiles"), tiles, "N %lld", n);
        cr_assert_eq((long long)num(t, r, "waves"), rl_waves(tiles, sms, 1), "N %lld", n);
        cr_assert(is(t, r, "validated", "model") && is(t, r, "time_us_median", ""));
        if (sms == 108 && n == 1536)
            cr_assert(tiles == 108 && num(t, r, "wave_end") == 1, "the published full wave");
        rows++;
    }
    cr_assert_eq(rows, 2 * 4608 / 8);
}

/* Staircase rows: the own kernel, validated, in waves the model predicts,
 * across at least three waves, each wave end followed by N + 8. */
static void check_staircase_rows(const rl_table *t)
{
    int rows = 0;
    long long last_n = 0, max_waves = 0;
    for (int r = 0; r < t->nrows; r++) {
        if (!is(t, r, "part", "staircase"))
            continue;
        cr_assert(is(t, r, "variant", "tiled") && is(t, r, "validated", "yes"));
        long long n = (long long)num(t, r, "n"), tiles = (long long)num(t, r, "tiles");
        cr_assert_gt(n, last_n, "N increases");
        cr_assert_eq(tiles, rl_tiles((long long)num(t, r, "m"), n, (long long)num(t, r, "tile_m"),
                                     (long long)num(t, r, "tile_n")));
        cr_assert_eq((long long)num(t, r, "waves"),
                     rl_waves(tiles, (int)num(t, r, "units"), (int)num(t, r, "blocks_per_unit")));
        cr_assert_gt(num(t, r, "time_us_median"), 0);
        cr_assert_gt(num(t, r, "model_time_us"), 0);
        if (num(t, r, "wave_end") == 1)
            cr_assert_eq((long long)num(t, r + 1, "n"), n + 8, "one step past the wave at %lld", n);
        if (num(t, r, "waves") > max_waves)
            max_waves = (long long)num(t, r, "waves");
        last_n = n;
        rows++;
    }
    cr_assert_geq(rows, 16);
    cr_assert_geq(max_waves, 3, "at least three waves");
}

/* Vocab rows: both variants, forward at 50257 and 50304 and the two
 * backward GEMMs at each; speedups relative to 50257. */
static void check_vocab_rows(const rl_table *t)
{
    const char *variants[] = {"tiled", "blas"};
    const char *gemms[] = {"forward", "backward_data", "backward_weight"};
    const int pair[] = {50257, 50304};
    for (int v = 0; v < 2; v++)
        for (int g = 0; g < 3; g++)
            for (int p = 0; p < 2; p++) {
                int vocab = pair[p];
                int found = 0;
                for (int r = 0; r < t->nrows; r++)
                    if (is(t, r, "part", "vocab") && is(t, r, "variant", variants[v]) &&
                        is(t, r, "gemm", gemms[g]) && num(t, r, "vocab") == vocab) {
                        found++;
                        cr_assert(is(t, r, "validated", "yes"));
                        double s = num(t, r, "speedup_vs_v50257");
                        cr_assert_gt(s, 0);
                        if (vocab == 50257)
                            cr_assert_float_eq(s, 1.0, 1e-9);
                        /* the chart's bar: both times at opposite ends of their q1-q3 */
                        cr_assert_leq(num(t, r, "speedup_vs_v50257_lo"), s);
                        cr_assert_geq(num(t, r, "speedup_vs_v50257_hi"), s);
                    }
                cr_assert_eq(found, 1, "%s %s at V = %d", variants[v], gemms[g], vocab);
            }
}

/* "Padded faster" holds only when the ratio clears the bar the note states
 * (1 + max(2 %, twice the spread)): a ratio inside the noise is not a win. */
static void check_vocab_verdict_clears_the_noise(const char *verdicts, double csv_bar)
{
    const char *row = strstr(verdicts, "04-waves,vocab_padding,cpu,");
    cr_assert_not_null(row);
    double ratio, bar, floor_pct, spread_pct;
    const char *m = strstr(row, ",> 1x beyond noise,");
    cr_assert_not_null(m, "prediction missing in %s", row);
    cr_assert_eq(sscanf(m + strlen(",> 1x beyond noise,"), "%lfx", &ratio), 1, "%s", row);
    const char *b = strstr(row, "bar ");
    cr_assert_not_null(b, "the note must state the bar: %s", row);
    cr_assert_eq(sscanf(b, "bar %lfx = 1 + max(%lf %%, 2 x spread %lf %%)", &bar, &floor_pct,
                        &spread_pct), 3, "%s", b);
    cr_assert_float_eq(bar, 1 + fmax(floor_pct, 2 * spread_pct) / 100, 2e-3, "%s", b);
    cr_assert_geq(bar, 1.02, "the bar is never under 2 %%");
    cr_assert_float_eq(csv_bar, bar, 2e-3, "the chart's band (# vocab_bar) is the verdict's bar");
    bool holds = strstr(row, ",holds,") != NULL;
    cr_assert_eq(holds, ratio >= bar, "ratio %.3f, bar %.3f, yet the row says: %s", ratio, bar, row);
}

Test(exp04, quick_cpu_run_writes_csv_verdicts_and_charts)
{
    int rc = run_exp04("--quick --backend cpu --max-bytes 64Mi --label e2e");
    cr_assert_eq(rc, 0, "exit %d\nstdout:\n%s\nstderr:\n%s", rc, out, err);
    const char *said[] = {"backend     cpu", "staircase: own tiled kernel (tiled), 64x64 tiles", "vocab: GPT-2 small",
                          "verdicts (cpu backend", "model: waves on 108 and 132 SMs",
                          "own kernel, 1 step past a wave of threads",
                          "the CPU shows the mechanism, not the GPU's numbers",
                          "no cuBLAS on the CPU backend", "V 50257 -> 50304"};
    for (size_t i = 0; i < sizeof said / sizeof said[0]; i++)
        cr_assert(strstr(out, said[i]), "'%s' not in:\n%s", said[i], out);

    char path[1024];
    snprintf(path, sizeof path, "%s/results/e2e/exp-04.csv", dir);
    char why[512], header[4096];
    rl_table *t = load_results(path, why, sizeof why);
    cr_assert_not_null(t, "%s", why);
    header_line(t, header, sizeof header);
    cr_assert_str_eq(header, DOCUMENTED_COLUMNS);
    const char *meta[] = {"# experiment: 04-waves", "# backend: cpu", "# quick: yes",
                          "# staircase: variant 1 (tiled)", "# vocab: GPT-2 small's output layer",
                          "# model: rows with part = model", "# units: CPU threads",
                          "# compare_keys: part,variant,gemm,m,n,k", "# validation: every element"};
    for (size_t i = 0; i < sizeof meta / sizeof meta[0]; i++)
        cr_assert(has_meta(t, meta[i]), "metadata '%s' missing", meta[i]);
    check_model_rows(t);
    check_staircase_rows(t);
    check_vocab_rows(t);
    const char *bar_meta = rl_table_meta(t, "vocab_bar"); /* "bar spread (why)" */
    cr_assert_not_null(bar_meta, "metadata '# vocab_bar' missing");
    double csv_bar = atof(bar_meta);
    for (int r = 0; r < t->nrows; r++)
        cr_assert(!is(t, r, "part", "library"), "no cuBLAS rows on the CPU");
    rl_table_free(t);

    snprintf(path, sizeof path, "%s/results/e2e/verdicts.csv", dir);
    char *text = read_file(path, NULL);
    cr_assert_not_null(text);
    static const char *const ids[] = {"wave_model_108_132", "wave_step_own_kernel",
                                      "wave_step_library", "vocab_padding"};
    char first[1024] = "";
    cr_assert_eq(missing_verdicts(dir, "e2e", "04-waves", "cpu", ids, 4, first, sizeof first), 0,
                 "%s missing", first);
    check_vocab_verdict_clears_the_noise(text, csv_bar);
    free(text);

    static const char *const charts[] = {"exp-04", "exp-04-tflops", "exp-04-vocab"};
    cr_assert_eq(missing_charts(dir, "e2e", charts, 3, first, sizeof first), 0,
                 "%s is missing, empty or states no verdict", first);

    cr_assert_eq(temp_files_left(dir, "e2e"), 0, "no temporary files or folders left");
}

Test(exp04, usage_errors_help_and_list)
{
    cr_assert_eq(run_exp04("--part waves"), RL_EXIT_USAGE);
    cr_assert(strstr(err, "--part must be one of"), "%s", err);
    cr_assert_eq(run_exp04("--backend cpu --variant bogus"), RL_EXIT_USAGE);
    cr_assert(strstr(err, "no variant 'bogus'") && strstr(err, "1 (tiled), 2 (blas)"), "%s", err);
    cr_assert_eq(run_exp04("--bogus"), RL_EXIT_USAGE);
    cr_assert_eq(run_exp04("--help"), 0);
    cr_assert(strstr(out, "--part PART") && strstr(out, "staircase (own kernel vs N)"), "%s", out);
    cr_assert_eq(run_exp04("--backend cpu --list"), 0);
    cr_assert(strstr(out, "tiled") && strstr(out, "OpenBLAS") && strstr(out, "64x64 tiles (cpu)") &&
                  strstr(out, "[role: own_tiled]") && strstr(out, "[role: library]"),
              "%s", out);
}

Test(exp04, cuda_backend_without_a_gpu_exits_77)
{
    skip_if_a_gpu_is_present();
    cr_assert_eq(run_exp04("--backend cuda --quick"), RL_EXIT_NO_GPU, "%s", err);
}
