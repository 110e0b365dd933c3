/*
 * test_plan_file.c -- --plan-file: the plan as data a script can ask for
 * (make slurm's task.sh compares it with the job's time limit), so that no
 * script parses the plan line printed for people. A quick CPU run writes
 * whole seconds, low <= high, both > 0; a path that cannot be written is a
 * usage error (exit 2, one clear line) before anything is measured.
 */
#include "helpers.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXP05 RL_BUILD_DIR "/exp-05"
#define QUICK_RUN "--quick --backend cpu --op affine --variant 1 --no-plot --label plan "

static char dir[512];
static char out[1 << 16], err[1 << 16];

static void setup(void) { make_temp_dir(dir, sizeof dir); }
static void teardown(void) { rm_tree(dir); }
TestSuite(plan_file, .init = setup, .fini = teardown, .timeout = 300);

static int run_exp05(const char *plan_file)
{
    char args[1400];
    snprintf(args, sizeof args, QUICK_RUN "--plan-file '%s'", plan_file);
    return run_experiment(EXP05, dir, args, out, sizeof out, err, sizeof err);
}

/* The value of "key=" in text, a whole number of seconds or a count; -1
 * when the key is missing or its value is not a plain non-negative integer. */
static long value_of(const char *text, const char *key)
{
    char needle[64];
    snprintf(needle, sizeof needle, "\n%s=", key);
    const char *at = strstr(text, needle);
    if (!at)
        return -1;
    char *end;
    long v = strtol(at + strlen(needle), &end, 10);
    return *end == '\n' && v >= 0 ? v : -1;
}

Test(plan_file, a_quick_cpu_run_writes_its_plan_as_key_value_lines)
{
    char path[700];
    snprintf(path, sizeof path, "%s/exp-05.plan", dir);
    int rc = run_exp05(path);
    cr_assert_eq(rc, 0, "exit %d\nstdout:\n%s\nstderr:\n%s", rc, out, err);
    cr_assert(strstr(out, "\nplan        "), "the plan line is still printed:\n%s", out);

    char *text = read_file(path, NULL);
    cr_assert_not_null(text, "no plan file at %s", path);
    long low = value_of(text, "expected_s_low"), high = value_of(text, "expected_s_high");
    cr_assert_gt(low, 0, "expected_s_low in:\n%s", text);
    cr_assert_geq(high, low, "expected_s_high at least the low end in:\n%s", text);
    cr_assert_gt(value_of(text, "groups"), 0, "%s", text);
    cr_assert_gt(value_of(text, "points"), 0, "%s", text);
    cr_assert(strstr(text, "\nexperiment=05\n") && strstr(text, "\nmode=quick\n") &&
                  strstr(text, "\nlabel=plan\n"), "%s", text);
    free(text);
    cr_assert_eq(count_entries(dir, ".tmp"), 0, "no temporary file is left beside it");
}

Test(plan_file, a_path_that_cannot_be_written_is_a_usage_error_before_any_measurement)
{
    char missing[700];
    snprintf(missing, sizeof missing, "%s/no-such-folder/exp-05.plan", dir);
    char too_long[1100];
    memset(too_long, 'a', sizeof too_long - 1);
    too_long[0] = '/';
    too_long[sizeof too_long - 1] = '\0';
    const char *const paths[][2] = {
        {missing, "no folder"},
        {dir, "is a folder"},
        {too_long, "too long"},
    };
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        int rc = run_exp05(paths[i][0]);
        cr_assert_eq(rc, 2, "%s: exit %d\nstdout:\n%s\nstderr:\n%s", paths[i][0], rc, out, err);
        cr_assert(strstr(err, "--plan-file") && strstr(err, paths[i][1]), "%s: %s", paths[i][0],
                  err);
        cr_assert_null(strstr(out, "\nplan        "), "nothing was planned:\n%s", out);
    }
    char csv[700];
    snprintf(csv, sizeof csv, "%s/results/plan/exp-05.csv", dir);
    cr_assert_not(file_exists(csv), "no CSV was written");
}

/* The common options' help, which every experiment prints. */
Test(plan_file, the_help_lists_it)
{
    cr_assert_eq(run_capture(EXP05 " --help", out, sizeof out, err, sizeof err), 0, "%s", err);
    cr_assert(strstr(out, "--plan-file FILE"), "%s", out);
}
