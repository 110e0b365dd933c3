/*
 * test_outcome_file.c -- --outcome-file and --rows-file: how a run ended and
 * what it measured, as data a script can ask for (tests/gpu-lib.sh reads
 * the first, harness/ops/peer-ggml*.sh the second), so that no script
 * parses the lines printed for people. A quick CPU run writes its outcome
 * (exit status, points, CSV, charts and why not) and its rows, the same as
 * its CSV's; a side benchmark (exp-03 --matrix) that keeps no results
 * writes its rows and its tuner's choices all the same; a path that cannot
 * be written is a usage error before anything is measured. The outcome of
 * a run SIGTERM stopped is tested with the stopped run (test_partial.c).
 */
#include "helpers.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXP05 RL_BUILD_DIR "/exp-05"
#define EXP03 RL_BUILD_DIR "/exp-03"
#define ROOFLAB RL_BUILD_DIR "/rooflab"
#define QUICK_RUN "--quick --backend cpu --op affine --variant 1 --no-plot --label outcome "

static char dir[512];
static char out[1 << 16], err[1 << 16];

static void setup(void) { make_temp_dir(dir, sizeof dir); }
static void teardown(void) { rm_tree(dir); }
TestSuite(outcome_file, .init = setup, .fini = teardown, .timeout = 300);

/* The line "key=..." of text, its value into buf; false when absent. */
static bool value_of(const char *text, const char *key, char *buf, size_t len)
{
    char needle[64];
    snprintf(needle, sizeof needle, "\n%s=", key);
    const char *at = strstr(text, needle);
    if (!at)
        return false;
    at += strlen(needle);
    snprintf(buf, len, "%.*s", (int)strcspn(at, "\n"), at);
    return true;
}

static void assert_value(const char *text, const char *key, const char *want)
{
    char got[1100];
    cr_assert(value_of(text, key, got, sizeof got), "no %s= in:\n%s", key, text);
    cr_assert_str_eq(got, want, "%s= in:\n%s", key, text);
}

/* The file's lines that do not start with '#': the column header and rows. */
static char *rows_of(const char *path)
{
    char *text = read_file(path, NULL);
    cr_assert_not_null(text, "no file %s", path);
    char *rows = calloc(1, strlen(text) + 1);
    cr_assert_not_null(rows);
    for (const char *l = text; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0))
        if (*l != '#')
            strncat(rows, l, strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0));
    free(text);
    return rows;
}

Test(outcome_file, a_quick_cpu_run_writes_its_outcome_and_its_rows)
{
    char outcome[700], rows[700], csv[700], args[2000];
    snprintf(outcome, sizeof outcome, "%s/exp-05.outcome", dir);
    snprintf(rows, sizeof rows, "%s/exp-05.rows.csv", dir);
    snprintf(csv, sizeof csv, "%s/results/outcome/exp-05.csv", dir);
    snprintf(args, sizeof args, QUICK_RUN "--outcome-file '%s' --rows-file '%s'", outcome, rows);
    int rc = run_experiment(EXP05, dir, args, out, sizeof out, err, sizeof err);
    cr_assert_eq(rc, 0, "exit %d\nstdout:\n%s\nstderr:\n%s", rc, out, err);

    char *text = read_file(outcome, NULL);
    cr_assert_not_null(text, "no outcome file at %s", outcome);
    assert_value(text, "experiment", "05");
    assert_value(text, "label", "outcome");
    assert_value(text, "exit_status", "0");
    assert_value(text, "stopped", "no");
    assert_value(text, "results", "kept");
    assert_value(text, "csv_written", "yes");
    assert_value(text, "partial", "no");
    assert_value(text, "rows_file", rows);
    assert_value(text, "charts", "not_drawn");
    assert_value(text, "charts_why", "no_plot");
    char done[32], total[32], path[1100];
    cr_assert(value_of(text, "points_done", done, sizeof done) &&
              value_of(text, "points_total", total, sizeof total), "%s", text);
    cr_assert(atoi(done) > 0 && !strcmp(done, total), "every point measured:\n%s", text);
    cr_assert(value_of(text, "csv", path, sizeof path) && strstr(path, "/results/outcome/exp-05.csv"),
              "%s", text);
    free(text);

    /* the rows file: the CSV's columns and rows, and its header's keys */
    char *mine = rows_of(rows), *theirs = rows_of(csv);
    cr_assert(strlen(theirs) > 0 && !strcmp(mine, theirs), "rows:\n%s\nCSV:\n%s", mine, theirs);
    free(mine);
    free(theirs);
    char cmd[2000];
    snprintf(cmd, sizeof cmd, ROOFLAB " query '%s' meta experiment", rows);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(out, "05-fusion\n");
    cr_assert_eq(count_entries(dir, ".tmp"), 0, "no temporary file is left beside them");
}

/* exp-03 --matrix keeps no results (rl_discard_results): no CSV, but its
 * rows, with the columns a script reads, and the tuner's choices as data. */
Test(outcome_file, a_side_benchmark_writes_its_rows_and_its_tuning_though_it_keeps_no_results)
{
    char outcome[700], rows[700], args[2000];
    snprintf(outcome, sizeof outcome, "%s/exp-03.outcome", dir);
    snprintf(rows, sizeof rows, "%s/matrix.csv", dir);
    snprintf(args, sizeof args,
             "--matrix 256x1024 --quick --cache hot --backend cpu --no-plot --label outcome "
             "--outcome-file '%s' --rows-file '%s'", outcome, rows);
    int rc = run_experiment(EXP03, dir, args, out, sizeof out, err, sizeof err);
    cr_assert_eq(rc, 0, "exit %d\nstdout:\n%s\nstderr:\n%s", rc, out, err);
    char csv[700];
    snprintf(csv, sizeof csv, "%s/results/outcome/exp-03.csv", dir);
    cr_assert_not(file_exists(csv), "a side benchmark writes no results");

    char *text = read_file(outcome, NULL);
    cr_assert_not_null(text, "no outcome file at %s", outcome);
    assert_value(text, "results", "discarded");
    assert_value(text, "csv", "");
    assert_value(text, "charts_why", "discarded");
    assert_value(text, "exit_status", "0");
    free(text);

    char cmd[2000];
    snprintf(cmd, sizeof cmd, ROOFLAB " query '%s' columns format,variant,time_us_median "
             "--where validated=yes --where format=q4 --where variant=gemv_int8", rows);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
    cr_assert(!strncmp(out, "q4,gemv_int8,", 13) && atof(out + 13) > 0 && !strchr(out, '\n')[1],
              "one timed q4 gemv_int8 row:\n%s", out);
    snprintf(cmd, sizeof cmd, ROOFLAB " query '%s' meta tuning_q4_256x1024_hot_choice", rows);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
    cr_assert(strlen(out) > 1 && !strchr(out, '(') && !strchr(out, ';'),
              "the choice alone, not the sentence: %s", out);
}

Test(outcome_file, a_path_that_cannot_be_written_is_a_usage_error_before_any_measurement)
{
    char missing[700], args[2000];
    snprintf(missing, sizeof missing, "%s/no-such-folder/x", dir);
    const char *const options[] = {"--outcome-file", "--rows-file"};
    for (size_t i = 0; i < 2; i++) {
        snprintf(args, sizeof args, QUICK_RUN "%s '%s'", options[i], missing);
        int rc = run_experiment(EXP05, dir, args, out, sizeof out, err, sizeof err);
        cr_assert_eq(rc, 2, "%s: exit %d\nstdout:\n%s\nstderr:\n%s", options[i], rc, out, err);
        cr_assert(strstr(err, options[i]) && strstr(err, "no folder"), "%s", err);
        cr_assert_null(strstr(out, "\nplan        "), "nothing was planned:\n%s", out);
        snprintf(args, sizeof args, QUICK_RUN "%s '%s'", options[i], dir);
        rc = run_experiment(EXP05, dir, args, out, sizeof out, err, sizeof err);
        cr_assert_eq(rc, 2, "%s a folder: exit %d\n%s", options[i], rc, err);
        cr_assert(strstr(err, "is a folder"), "%s", err);
    }
}

Test(outcome_file, the_help_lists_them)
{
    cr_assert_eq(run_capture(EXP05 " --help", out, sizeof out, err, sizeof err), 0, "%s", err);
    cr_assert(strstr(out, "--outcome-file FILE") && strstr(out, "--rows-file FILE"), "%s", out);
}
