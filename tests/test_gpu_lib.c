/*
 * test_gpu_lib.c -- a dry run of tests/gpu-lib.sh's compute-sanitizer step
 * without a GPU: the step sourced in bash, the sanitizer a stand-in
 * (tests/fake/compute-sanitizer) that prints a given log and exits with a
 * given status, as the real one did on an H200 or as a sandboxed runtime
 * that refuses it does. memcheck's ERROR SUMMARY decides: N > 0 errors
 * fail, 0 pass; a run without one checked nothing, a skip with the
 * reason from the log; a run past its cap is reported, not failed.
 */
#include "helpers.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char dir[512];
static char out[1 << 16], err[1 << 14];

static void setup(void) { make_temp_dir(dir, sizeof dir); }
static void teardown(void) { rm_tree(dir); }
TestSuite(gpu_lib, .init = setup, .fini = teardown, .timeout = 120);

typedef struct outcome {
    char result[16], note[512];
    int failed;
} outcome;

/* sanitizer_step with the stand-in printing log (NULL: running the suites
 * it is given, those of B) and exiting with status (-1: theirs); env: more
 * variables, B among them. */
static outcome sanitizer_step(const char *log, int status, const char *env)
{
    char vars[1024] = "", cmd[4096];
    if (log) {
        char logfile[600];
        snprintf(logfile, sizeof logfile, "%s/given.log", dir);
        FILE *f = fopen(logfile, "w");
        cr_assert_not_null(f);
        fputs(log, f);
        fclose(f);
        snprintf(vars, sizeof vars, "FAKE_SANITIZER_LOG='%s' ", logfile);
    }
    if (status >= 0)
        snprintf(vars + strlen(vars), sizeof vars - strlen(vars), "FAKE_SANITIZER_EXIT=%d ", status);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && PATH='%s/tests/fake':\"$PATH\" B='%s' %s%s "
             "bash -c '. tests/gpu-lib.sh; NVCC=/bin/true; budget_start 120; sanitizer_step \"%s\"; "
             "printf \"%%s\\n\" \"${rows[@]}\"; echo \"failed=$failed\"'",
             RL_SOURCE_ROOT, RL_SOURCE_ROOT, RL_BUILD_DIR, vars, env ? env : "", dir);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 0, "%s\n%s%s", cmd, out, err);
    /* the row: its name in 44 columns, the result in 5, the seconds in 6, the note */
    const char *row = strstr(out, "\ncompute-sanitizer memcheck (CUDA suites)    "); /* not "(cap N s)" */
    cr_assert_not_null(row++, "no row:\n%s%s", out, err);
    cr_assert_gt(strcspn(row, "\n"), 58, "a short row: %s", row);
    outcome o = {"", "", -1};
    sscanf(row + 45, "%15s", o.result);
    snprintf(o.note, sizeof o.note, "%.*s", (int)strcspn(row + 59, "\n"), row + 59);
    const char *f = strstr(out, "failed=");
    cr_assert_not_null(f);
    o.failed = atoi(f + 7);
    return o;
}

Test(gpu_lib, no_errors_in_the_summary_pass)
{
    /* the H200's: lease2-quick/check-gpu/sanitizer.log's last line */
    outcome o = sanitizer_step("========= COMPUTE-SANITIZER\n[RUN ] cuda_quant::every_kernel_matches_the_reference\n"
                               "[PASS] cuda_quant::every_kernel_matches_the_reference: (2.10s)\n"
                               "========= ERROR SUMMARY: 0 errors\n", 0, NULL);
    cr_assert_str_eq(o.result, "pass", "%s", out);
    cr_assert(strstr(o.note, "0 memcheck errors"), "%s", o.note);
    cr_assert_eq(o.failed, 0);
}

Test(gpu_lib, errors_in_the_summary_fail)
{
    outcome o = sanitizer_step("========= COMPUTE-SANITIZER\n"
                               "========= Invalid __global__ read of size 16 bytes\n"
                               "=========     at void gemv_dp4a<q4_block, 1, false>(...)+0x3a0\n"
                               "========= ERROR SUMMARY: 2 errors\n", 1, NULL);
    cr_assert_str_eq(o.result, "FAIL", "%s", out);
    cr_assert(strstr(o.note, "2 memcheck errors: Invalid __global__ read of size 16 bytes"), "%s", o.note);
    cr_assert_eq(o.failed, 1);
}

Test(gpu_lib, a_refusal_without_a_summary_is_unsupported_here)
{
    outcome o = sanitizer_step("========= COMPUTE-SANITIZER\n"
                               "========= Error: Device not supported. Please refer to the documentation.\n"
                               "cuda-probe: cudaMalloc: unknown error (999)\n", 255, NULL);
    cr_assert_str_eq(o.result, "skip", "%s", out);
    cr_assert(strstr(o.note, "sanitizer unsupported here: Error: Device not supported"), "%s", o.note);
    cr_assert_eq(o.failed, 0, "not a failure of the code");
    /* any failure that leaves no summary: the reason is the log's */
    o = sanitizer_step("========= COMPUTE-SANITIZER\n========= Error: Target application terminated "
                       "before first instrumented API call\n", 1, NULL);
    cr_assert_str_eq(o.result, "skip", "%s", out);
    cr_assert(strstr(o.note, "unsupported here: Error: Target application terminated"), "%s", o.note);
    cr_assert_eq(o.failed, 0);
}

Test(gpu_lib, a_clean_summary_over_skipped_suites_checked_nothing)
{
    outcome o = sanitizer_step("========= COMPUTE-SANITIZER\n"
                               "[SKIP] cuda_quant::every_kernel_matches_the_reference: no GPU: cudaGetDeviceCount\n"
                               "========= ERROR SUMMARY: 0 errors\n", 0, NULL);
    cr_assert_str_eq(o.result, "skip", "%s", out);
    cr_assert(strstr(o.note, "unsupported here: [SKIP] cuda_quant::"), "%s", o.note);
}

Test(gpu_lib, running_out_of_time_is_reported_and_errors_before_it_fail)
{
    outcome o = sanitizer_step("========= COMPUTE-SANITIZER\n[RUN ] cuda_quant::every_kernel_matches_the_reference\n",
                               0, "FAKE_SANITIZER_SLEEP=4 SANITIZER_S=1");
    cr_assert_str_eq(o.result, "stop", "%s", out);
    cr_assert_eq(o.failed, 0);
    o = sanitizer_step("========= COMPUTE-SANITIZER\n========= Invalid __shared__ write of size 4 bytes\n",
                       0, "FAKE_SANITIZER_SLEEP=4 SANITIZER_S=1");
    cr_assert_str_eq(o.result, "FAIL", "%s", out);
    cr_assert(strstr(o.note, "before its cap stopped it: Invalid __shared__ write"), "%s", o.note);
    cr_assert_eq(o.failed, 1);
}

/* The stand-in runs the suites it is given, as memcheck does, and sums up
 * clean: the suites of a build without a GPU (a stand-in here too: a test
 * runner inside a test runner aborts) skip under it, and the step says so. */
Test(gpu_lib, a_dry_run_without_a_gpu_skips_with_the_suites_reason)
{
    char cmd[2048], env[700];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/b/tests' && printf '%%s\\n' '#!/bin/sh' "
             "'echo \"[RUN ] cuda_quant::every_kernel_matches_the_reference\"' "
             "'echo \"[SKIP] cuda_quant::every_kernel_matches_the_reference: no GPU: this build has "
             "no CUDA backend\"' > '%s/b/tests/rooflab-tests' && chmod +x '%s/b/tests/rooflab-tests'",
             dir, dir, dir);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
    snprintf(env, sizeof env, "B='%s/b'", dir);
    outcome o = sanitizer_step(NULL, -1, env);
    cr_assert_str_eq(o.result, "skip", "%s", out);
    cr_assert(strstr(o.note, "unsupported here: [SKIP] cuda_quant::every_kernel_matches_the_reference: "
                             "no GPU"), "%s", o.note);
    cr_assert_eq(o.failed, 0);
}
