/*
 * test_exp05.c -- experiment 05 end to end on the CPU backend: a quick run
 * into a temporary folder must write a well-formed CSV with the documented
 * columns and metadata, print its verdicts, and draw non-empty charts; bad
 * usage must fail with the documented exit codes.
 */
#include "helpers.h"
#include "rl_csv.h"
#include "rooflab.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXP05 RL_BUILD_DIR "/exp-05"

static const char *const DOCUMENTED_COLUMNS =
    "variant,number,op,k,n,footprint_bytes,bytes,cache_resident,cache,samples,stop_reason,"
    "time_us_median,time_us_q1,time_us_q3,time_us_min,time_us_mean,rel_stddev,gbps,mbu,"
    "mem_level,ceiling_gbps,ceiling_flag,mbu_datasheet,group_roof_gbps,group_roof_gbps_q1,"
    "group_roof_gbps_q3,group_roof_bytes,speedup_vs_unfused,speedup_vs_unfused_lo,"
    "speedup_vs_unfused_hi,validated,max_abs_err,skipped_reason";

static char dir[512];
static char out[1 << 16], err[1 << 16];

static void setup(void) { make_temp_dir(dir, sizeof dir); }
static void teardown(void) { rm_tree(dir); }
TestSuite(exp05, .init = setup, .fini = teardown, .timeout = 600);

static int run_exp05(const char *args)
{
    return run_experiment(EXP05, dir, args, out, sizeof out, err, sizeof err);
}

Test(exp05, quick_cpu_run_writes_csv_verdicts_and_charts)
{
    int rc = run_exp05("--quick --backend cpu --max-bytes 64Mi --label e2e");
    cr_assert_eq(rc, 0, "exit %d\nstdout:\n%s\nstderr:\n%s", rc, out, err);

    /* The story and the verdicts on stdout. */
    cr_assert(strstr(out, "claim       "), "%s", out);
    cr_assert(strstr(out, "backend     cpu"), "%s", out);
    cr_assert(strstr(out, "verdicts (cpu backend"), "%s", out);
    cr_assert(strstr(out, "fused/unfused speedup, 2 ops (cos)"), "%s", out);
    cr_assert(strstr(out, "fused/unfused speedup, 2 ops (affine)"), "%s", out);
    cr_assert(strstr(out, "-bound"), "the verdict names the regime it measured: %s", out);

    char path[1024];
    snprintf(path, sizeof path, "%s/results/e2e/exp-05.csv", dir);
    char *text = read_file(path, NULL);
    cr_assert_not_null(text, "no CSV at %s", path);
    static const char *meta[] = {"# experiment: 05-fusion", "# backend: cpu", "# device: ",
                                 "# git_commit: ", "# date_utc: 20", "# argv: ", "# label: e2e",
                                 "# quick: yes", "# seed: 1", "# ceiling_gbps: ", "# claim: ",
                                 "# rates: bandwidth and FLOP rates are computed from the median",
                                 "# compare_keys: op,variant,k,n",
                                 /* the quick rule, its time limit the tests' --timeout */
                                 "# stop_rule: at least 3 samples and 0.03 s measured",
                                 "or after 0.05 s per point (--timeout)"};
    for (size_t i = 0; i < sizeof meta / sizeof meta[0]; i++)
        cr_assert(strstr(text, meta[i]), "metadata '%s' missing", meta[i]);
    /* The fixture's roofs have no bandwidth curve: the levels are the
     * reported sizes, and the header says so. */
    cr_assert(strstr(text, "# levels_source: reported: these ceilings hold no bandwidth curve"),
              "the header says where the levels came from");
    cr_assert(strstr(text, "# level_LLC_bytes_reported: "));
    cr_assert_null(strstr(text, "# curve_read_gbps:"));
    cr_assert_null(strstr(text, "_bytes_measured:"));
    free(text);

    /* The header line is the documented schema; every row is complete. */
    char why[512], header[4096];
    rl_table *t = load_results(path, why, sizeof why);
    cr_assert_not_null(t, "%s", why);
    header_line(t, header, sizeof header);
    cr_assert_str_eq(header, DOCUMENTED_COLUMNS);
    int fused_pairs = 0;
    for (int r = 0; r < t->nrows; r++) {
        cr_assert_str_eq(rl_table_get(t, r, "validated"), "yes");
        cr_assert_gt(atof(rl_table_get(t, r, "time_us_median")), 0, "row %d", r);
        cr_assert_gt(atof(rl_table_get(t, r, "gbps")), 0, "row %d", r);
        const char *op = rl_table_get(t, r, "op");
        cr_assert(!strcmp(op, "cos") || !strcmp(op, "affine"));
        cr_assert(strcmp(rl_table_get(t, r, "stop_reason"), "running") != 0);
        fused_pairs += !strcmp(rl_table_get(t, r, "variant"), "pair_fused");
        /* A speedup's bars (the chart's) hold its median, on the same rows. */
        const char *sp = rl_table_get(t, r, "speedup_vs_unfused");
        const char *lo = rl_table_get(t, r, "speedup_vs_unfused_lo"), *hi = rl_table_get(t, r, "speedup_vs_unfused_hi");
        cr_assert_eq(!*sp, !*lo, "row %d: a speedup and its low end together", r);
        cr_assert_eq(!*sp, !*hi, "row %d: a speedup and its high end together", r);
        if (*sp)
            cr_assert(atof(lo) <= atof(sp) && atof(sp) <= atof(hi), "row %d: %s <= %s <= %s", r, lo, sp, hi);
    }
    /* quick: 2 sizes x 4 pair variants + 4 chain lengths x 2, for 2 ops, and
     * for cos 2 sizes x the 3 pair variants with the C library's cosf */
    cr_assert_eq(t->nrows, 2 * (2 * 4 + 4 * 2) + 2 * 3, "rows: %d", t->nrows);
    cr_assert_eq(fused_pairs, 4);
    rl_table_free(t);

    static const char *const ids[] = {"fused_speedup_cos", "fused_vs_one_op_affine"};
    char first[1024] = "";
    cr_assert_eq(missing_verdicts(dir, "e2e", "05-fusion", "cpu", ids, 2, first, sizeof first), 0,
                 "%s missing", first);
    static const char *const charts[] = {"exp-05", "exp-05-chain"};
    cr_assert_eq(missing_charts(dir, "e2e", charts, 2, first, sizeof first), 0,
                 "%s is missing, empty or states no verdict", first);
    snprintf(path, sizeof path, "%s/plots/e2e/exp-05.png", dir);
    text = read_file(path, NULL);
    cr_assert(!memcmp(text, "\x89PNG", 4), "a real PNG");
    free(text);

    cr_assert_eq(temp_files_left(dir, "e2e"), 0, "no temporary files or folders left");
}

/* Another experiment's row in a verdicts.csv, its note quoted, with
 * commas, doubled quotes and a long text: a run must keep it whole (it
 * reads the file with the CSV reader and writes it back with the writer). */
static void append_other_row(const char *path, char *note, size_t len)
{
    snprintf(note, len, "a note, with commas, and \"quotes\"; ");
    while (strlen(note) + 20 < len)
        strcat(note, "and more words ");
    FILE *f = fopen(path, "a");
    cr_assert_not_null(f, "%s", path);
    fprintf(f, "02-prefill-decode,mbu_decode,cpu,Some CPU,again,yes,MBU at n = 1,0.6 .. 1,0.9,"
               "holds,\"");
    for (const char *c = note; *c; c++)
        fputs(*c == '"' ? "\"\"" : (char[]){*c, 0}, f);
    fprintf(f, "\",2026-01-01T00:00:00Z\n");
    fclose(f);
}

Test(exp05, second_run_reuses_ceilings_and_replaces_its_verdicts)
{
    const char *args = "--quick --backend cpu --max-bytes 64Mi --label again --op affine --variant 1,2,3 --no-plot";
    cr_assert_eq(run_experiment_measuring(EXP05, dir, args, out, sizeof out, err, sizeof err), 0,
                 "%s", err);
    cr_assert(strstr(out, "measured now"), "first run measures: %s", out);
    char path[1024], csv[1024], origin[64], when[64], cache_date[64];
    snprintf(csv, sizeof csv, "%s/results/again/exp-05.csv", dir);
    cr_assert(rl_csv_read_meta(csv, "ceilings_origin", origin, sizeof origin));
    cr_assert_str_eq(origin, "measured", "the header says where its roofs came from, as data");
    cr_assert(rl_csv_read_meta(csv, "ceilings_date_utc", when, sizeof when) && when[0]);
    snprintf(path, sizeof path, "%s/results/again/ceilings.csv", dir);
    char *roofs = read_file(path, NULL);
    cr_assert(roofs && strstr(roofs, "bandwidth,DRAM,read,") && strstr(roofs, "bandwidth,L1,triad,") &&
              strstr(roofs, "compute,-,fma,"), "the ladder and the compute roof are cached: %s", roofs);
    cr_assert(strstr(roofs, ",read,16384,") && strstr(roofs, "\ncurve,"),
              "the bandwidth curve is cached with them: %s", roofs);
    free(roofs);
    char curve[2048];
    cr_assert(rl_csv_read_meta(csv, "curve_read_gbps", curve, sizeof curve) &&
                  !strncmp(curve, "16384:", 6), "the run's header holds the curve: %s", curve);
    cr_assert(rl_csv_read_meta(csv, "levels_source", curve, sizeof curve), "and where its levels came from");
    /* The cache's date before the second run reads it (a roof that run
     * measures again would be saved, and date the file anew). */
    cr_assert(rl_csv_read_meta(path, "date_utc", cache_date, sizeof cache_date));
    char verdicts[1024], note[12000];
    snprintf(verdicts, sizeof verdicts, "%s/results/again/verdicts.csv", dir);
    append_other_row(verdicts, note, sizeof note);
    cr_assert_eq(run_experiment_measuring(EXP05, dir, args, out, sizeof out, err, sizeof err), 0,
                 "%s", err);
    cr_assert(strstr(out, "cached"), "second run reuses the ceilings: %s", out);
    cr_assert(rl_csv_read_meta(csv, "ceilings_origin", origin, sizeof origin));
    cr_assert_str_eq(origin, "cached");
    cr_assert(rl_csv_read_meta(csv, "ceilings_date_utc", when, sizeof when));
    cr_assert_str_eq(when, cache_date, "when the reused roofs were measured: the cache's date");

    char *text = read_file(verdicts, NULL);
    int rows = 0;
    for (char *p = text; (p = strstr(p, "\n05-fusion,")); p++)
        rows++;
    cr_assert_eq(rows, 2, "two verdicts, not two per run: %s", text);
    free(text);
    /* the other experiment's row, whole */
    char why[256];
    rl_table *t = load_results(verdicts, why, sizeof why);
    cr_assert_not_null(t, "%s", why);
    int other = rl_table_find(t, "experiment", "02-prefill-decode");
    cr_assert_geq(other, 0, "another experiment's row was lost");
    cr_assert_str_eq(rl_table_get(t, other, "note"), note, "its note changed");
    cr_assert_str_eq(rl_table_get(t, other, "date_utc"), "2026-01-01T00:00:00Z");
    rl_table_free(t);
}

Test(exp05, usage_errors_exit_2)
{
    cr_assert_eq(run_exp05("--bogus"), RL_EXIT_USAGE);
    cr_assert(strstr(err, "unknown option '--bogus'"), "%s", err);
    cr_assert_eq(run_exp05("--op tan"), RL_EXIT_USAGE);
    cr_assert_eq(run_exp05("--backend cpu --plot-only --label nothing-here"), RL_EXIT_USAGE);
    cr_assert(strstr(err, "no results"), "%s", err);
}

Test(exp05, help_list_and_label)
{
    cr_assert_eq(run_exp05("--help"), 0);
    cr_assert(strstr(out, "--backend cuda|cpu|auto") && strstr(out, "--op OP") &&
              strstr(out, "77"), "%s", out);
    cr_assert_eq(run_exp05("--backend cpu --list"), 0);
    cr_assert(strstr(out, "pair_fused_vec4") && strstr(out, "chain_unfused"), "%s", out);
    cr_assert_eq(run_exp05("--backend cpu --print-label --label mine"), 0);
    cr_assert_str_eq(out, "mine\n");
    cr_assert_eq(run_exp05("--backend cpu --print-label"), 0);
    cr_assert(!strncmp(out, "cpu-", 4), "the default CPU label is cpu-<model>: %s", out);
}

Test(exp05, cuda_backend_without_a_gpu_exits_77)
{
    skip_if_a_gpu_is_present();
    cr_assert_eq(run_exp05("--backend cuda --quick"), RL_EXIT_NO_GPU, "%s", err);
    cr_assert(strstr(err, "no GPU"), "%s", err);
}

static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* A machine without gnuplot (here: a PATH without it) still gets the
 * results: the CSV is written, the exit code is 0, and the run says once
 * that the charts wait, with the command that draws them later. */
Test(exp05, without_gnuplot_the_csv_is_written_and_the_charts_wait)
{
    char cmd[2048], path[1024], later[1400];
    int rc = run_experiment("PATH=/nonexistent " EXP05, dir,
                            "--quick --backend cpu --op affine --variant 1,2 --label nogp", out,
                            sizeof out, err, sizeof err);
    cr_assert_eq(rc, 0, "exit %d\n%s\n%s", rc, out, err);
    snprintf(path, sizeof path, "%s/results/nogp/exp-05.csv", dir);
    cr_assert(file_exists(path), "the CSV at %s", path);
    snprintf(path, sizeof path, "%s/plots/nogp/exp-05.png", dir);
    cr_assert_not(file_exists(path), "no chart without gnuplot");
    cr_assert_eq(count_of(err, "charts not drawn"), 1, "said once: %s", err);
    snprintf(later, sizeof later, "make plot-05 LABEL=nogp ARGS=\"--out %s/results --plots %s/plots\"",
             dir, dir);
    cr_assert(strstr(err, later), "the command that draws them later (%s) in:\n%s", later, err);

    /* --plot-only asks for charts: without gnuplot that is an error. */
    snprintf(cmd, sizeof cmd, "PATH=/nonexistent %s --out '%s/results' --plots '%s/plots' "
             "--backend cpu --label nogp --plot-only", EXP05, dir, dir);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), RL_EXIT_FAILED, "%s", err);
    cr_assert(strstr(err, "gnuplot not found"), "%s", err);
}

/* A copy of the tree without .git (what a lent GPU machine gets) records
 * the commit ROOFLAB_GIT_COMMIT names, and says it is a copy. */
Test(exp05, a_copy_without_git_records_the_commit_it_was_given)
{
    char bin[1024], path[1024];
    snprintf(bin, sizeof bin, "ROOFLAB_ROOT='%s' ROOFLAB_GIT_COMMIT=0123456789ab %s", dir, EXP05);
    cr_assert_eq(run_experiment(bin, dir, "--quick --backend cpu --op affine --variant 1 --no-plot "
                                          "--label copy", out, sizeof out, err, sizeof err),
                 0, "%s", err);
    snprintf(path, sizeof path, "%s/results/copy/exp-05.csv", dir);
    char *text = read_file(path, NULL);
    cr_assert_not_null(text, "no CSV at %s", path);
    cr_assert(strstr(text, "# git_commit: 0123456789ab (ROOFLAB_GIT_COMMIT: a copy, not a checkout)"),
              "%.600s", text);
    free(text);
}
