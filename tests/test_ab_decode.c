/*
 * test_ab_decode.c -- make ab-decode (harness/ops/ab-decode.sh and its
 * driver ab_decode.c): two builds of the CPU integer decode in one
 * process. It validates both before it times them, refuses a wrong one,
 * and prints a row per format. The times themselves are not checked
 * (no test here depends on how loaded the machine is).
 */
#include "helpers.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char out[1 << 14], err[1 << 14];

TestSuite(ab_decode, .timeout = 300);

/* ab-decode.sh on a small matrix with the given settings; 77 skips. */
static int ab_decode(const char *settings)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cd '%s' && %s MATRIX=64x512 ROUNDS=3 harness/ops/ab-decode.sh", RL_SOURCE_ROOT,
             settings);
    int rc = run_capture(cmd, out, sizeof out, err, sizeof err);
    if (rc == 77)
        cr_skip_test("no SIMD decode on this machine: %s", err);
    return rc;
}

static const char *const FORMATS[] = {"f16", "q8", "q6", "q5", "q4", "q2"};
enum { N_FORMATS = sizeof FORMATS / sizeof FORMATS[0] };

/* This tree's kernels against HEAD's: the same files in a clean checkout,
 * which the tool says (only noise is measured then). */
Test(ab_decode, the_kernels_against_head_are_validated_and_timed_for_every_format)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd '%s' && git diff --quiet HEAD -- kernels/cpu/quant_dot_avx2.c kernels/cpu/gemv.c",
             RL_SOURCE_ROOT);
    int edited = run_capture(cmd, out, sizeof out, err, sizeof err);
    if (edited > 1)
        cr_skip_test("not a git checkout: %s", err);
    cr_assert_eq(ab_decode("REV=HEAD"), 0, "%s%s", out, err);
    if (edited == 0)
        cr_assert(strstr(out, "old and new are the same files"), "the notice that only noise is measured:\n%s", out);
    for (size_t i = 0; i < N_FORMATS; i++) {
        char row[8];
        snprintf(row, sizeof row, "\n%s ", FORMATS[i]);
        const char *at = strstr(out, row);
        cr_assert_not_null(at, "no row for %s in:\n%s", FORMATS[i], out);
        double best_old, best_new, med_old, med_new, ratio_best, ratio_med;
        cr_assert_eq(sscanf(at + 1 + strlen(FORMATS[i]), "%lf %lf %lf %lf %lf %lf", &best_old, &best_new,
                            &med_old, &med_new, &ratio_best, &ratio_med), 6, "%s's row:\n%s", FORMATS[i], at);
        cr_assert(best_old > 0 && best_new > 0 && med_old >= best_old && med_new >= best_new,
                  "%s: times out of order:\n%s", FORMATS[i], at);
        /* the ratio of the printed times, within their rounding (0.05 us each) */
        double slack = ratio_best * (0.05 / best_old + 0.05 / best_new) + 0.0005;
        cr_assert_float_eq(ratio_best, best_new / best_old, slack, "%s:\n%s", FORMATS[i], at);
    }
}

/* A kernel that subtracts each block's sum instead of adding it: every
 * integer format's first output is wrong, it is named, and nothing of it
 * is timed. */
Test(ab_decode, a_wrong_kernel_is_refused_before_it_is_timed)
{
    char dir[256], cmd[2048], settings[512];
    make_temp_dir(dir, sizeof dir);
    snprintf(cmd, sizeof cmd,
             "sed 's/acc\\[r\\] = _mm256_add_ps(acc\\[r\\], block_any/acc[r] = _mm256_sub_ps(acc[r], block_any/' "
             "'%s/kernels/cpu/quant_dot_avx2.c' > '%s/broken.c' && ! cmp -s '%s/kernels/cpu/quant_dot_avx2.c' "
             "'%s/broken.c'", RL_SOURCE_ROOT, dir, RL_SOURCE_ROOT, dir);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 0, "the sed found no block sum to break");
    snprintf(settings, sizeof settings, "OLD='%s/broken.c'", dir);
    int rc = ab_decode(settings);
    rm_tree(dir);
    cr_assert_eq(rc, 1, "a wrong kernel exits 1:\n%s%s", out, err);
    for (size_t i = 1; i < N_FORMATS; i++) { /* F16's GEMV is not in that file */
        char wrong[32];
        snprintf(wrong, sizeof wrong, "\n%-4s old is wrong: row ", FORMATS[i]);
        cr_assert(strstr(out, wrong), "no '%s' in:\n%s", wrong, out);
    }
    cr_assert_null(strstr(out, " new is wrong"), "the new kernel is right:\n%s", out);
}

Test(ab_decode, bad_settings_are_refused_with_a_reason)
{
    cr_assert_eq(ab_decode("OLD=/nonexistent/file.c"), 2);
    cr_assert(strstr(err, "OLD=/nonexistent/file.c: no such file"), "%s", err);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd '%s' && MATRIX=64x500 harness/ops/ab-decode.sh", RL_SOURCE_ROOT);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 2);
    cr_assert(strstr(err, "K a multiple of 256"), "%s", err);
    snprintf(cmd, sizeof cmd, "cd '%s' && ROUNDS=1 harness/ops/ab-decode.sh", RL_SOURCE_ROOT);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 2);
    cr_assert(strstr(err, "ROUNDS wants 3 to 10000"), "%s", err);
    cr_assert_eq(ab_decode("F16_ROWS=3:4"), 2);
    cr_assert(strstr(err, "--f16-rows wants OLD:NEW"), "%s", err);
}

/* Two shapes of F16's GEMV, one on each side: both validated, the row
 * names them. */
Test(ab_decode, f16_rows_compares_two_shapes_of_one_kernel)
{
    cr_assert_eq(ab_decode("F16_ROWS=8:4"), 0, "%s%s", out, err);
    const char *at = strstr(out, "\nf16 ");
    cr_assert_not_null(at, "%s", out);
    cr_assert(strstr(at, "old 8 rows, new 4 rows"), "%s", at);
}
