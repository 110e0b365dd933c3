/*
 * test_gpu_lib.c -- a dry run of tests/gpu-lib.sh's compute-sanitizer step
 * without a GPU: the step sourced in bash, the sanitizer a stand-in
 * (tests/fake/compute-sanitizer) that prints a given log and exits with a
 * given status, as the real one did on an H200 or as a sandboxed runtime
 * that refuses it does. memcheck's ERROR SUMMARY decides: N > 0 errors
 * fail, 0 pass; a run without one checked nothing, a skip with the
 * reason from the log; a run past its cap is reported, not failed.
 *
 * Then the order of a GPU day (tests/gpu-order.sh) on a made-up tree of
 * lease logs and CSVs, and make check-gpu's steps (check_steps) with
 * stand-ins for make, nvcc and every binary: the sanitizer right after
 * the suites, the quick runs in lab order, a build without Criterion, a
 * run stopped at its cap that kept a partial CSV.
 */
#include "helpers.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

/* ---- the order: what never ran on a GPU first ------------------------------- */

static void write_file(const char *path, const char *text, bool executable)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", path);
    cr_assert_eq(system(cmd), 0);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
    if (executable)
        chmod(path, 0755);
}

static void tree_file(const char *rel, const char *text)
{
    char path[900];
    snprintf(path, sizeof path, "%s/tree/%s", dir, rel);
    write_file(path, text, false);
}

/* A tree of four experiments and one lease (l1): exp-01 ran and finished
 * (a log from the CUDA backend, a whole CUDA CSV); exp-02 ran and its cap
 * cut it (a partial CUDA CSV); exp-03's log is a CPU run's; exp-04 has a
 * CPU CSV only. */
static void make_tree(void)
{
    for (int n = 1; n <= 4; n++) {
        char rel[64];
        snprintf(rel, sizeof rel, "experiments/0%d-x/main.c", n);
        tree_file(rel, "int main(void) { return 0; }\n");
    }
    tree_file("results/reference/g/gpu-day-logs/l1/system.txt", "== date\n2026-11-30\n== git\nabc1234\n");
    tree_file("results/reference/g/gpu-day-logs/l1/check-gpu/exp-01.log", "backend     cuda\n");
    tree_file("results/reference/g/gpu-day-logs/l1/reference/exp-02.log", "backend     cuda\n");
    tree_file("results/reference/g/gpu-day-logs/l1/check-gpu/exp-03.log", "backend     cpu\n");
    tree_file("results/reference/g/exp-01.csv", "# backend: cuda\nn,t\n1,2\n");
    tree_file("results/reference/g/exp-02.csv",
              "# backend: cuda\n# partial: stopped by SIGTERM after 1 of 2 points\nn,t\n1,2\n2,\n");
    tree_file("results/reference/cpu/exp-04.csv", "# backend: cpu\nn,t\n1,2\n");
}

static bool starts_with(const char *s, const char *prefix) { return !strncmp(s, prefix, strlen(prefix)); }

/* compute_order in DIR/tree (no git there) with env; its "order:" line. */
static const char *order_in_tree(const char *env)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cd '%s/tree' && GIT_DIR=/nonexistent GPU_DAY_DEFAULT_ORDER='01 02 03 04' %s "
             "bash -c '. \"%s/tests/gpu-lib.sh\"; compute_order'",
             dir, env, RL_SOURCE_ROOT);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 0, "%s\n%s%s", cmd, out, err);
    const char *line = strstr(out, "order: ");
    cr_assert_not_null(line, "%s%s", out, err);
    return line;
}

Test(gpu_lib, lab_order_puts_what_never_ran_on_a_gpu_first)
{
    make_tree();
    const char *o = order_in_tree("");
    cr_assert(starts_with(o, "order: 03 04 02 01 (never ran on a GPU: 03 04; never finished on one: 02;"),
              "%s", out);
    cr_assert(strstr(out, "exp-03: never ran on a GPU"), "%s", out);
    cr_assert(strstr(out, "exp-02: ran on a GPU, never finished there"), "%s", out);
    cr_assert(strstr(o, "GPU_DAY_DEFAULT_ORDER"), "without git the rest follows the default:\n%s", o);
    /* GPU_DAY_FIRST goes before the rule */
    o = order_in_tree("GPU_DAY_FIRST='01'");
    cr_assert(starts_with(o, "order: 01 03 04 02 (GPU_DAY_FIRST: 01;"), "%s", out);
    /* GPU_DAY_EXPS is the order, as given */
    o = order_in_tree("GPU_DAY_EXPS='02 01'");
    cr_assert(starts_with(o, "order: 02 01 (GPU_DAY_EXPS)"), "%s", out);
}

Test(gpu_lib, without_lease_logs_the_default_order_holds)
{
    make_tree();
    char path[700];
    snprintf(path, sizeof path, "%s/tree/results/reference/g/gpu-day-logs/l1/system.txt", dir);
    cr_assert_eq(remove(path), 0);
    const char *o = order_in_tree("GPU_DAY_DEFAULT_ORDER='04 02 01 03'");
    cr_assert(starts_with(o, "order: 04 02 01 03 ("), "%s", out);
    cr_assert(strstr(out, "what never ran on a GPU is not known"), "%s", out);
}

/* In this tree, with its git: every experiment once, whatever changed. */
Test(gpu_lib, the_trees_order_lists_every_experiment_once)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd '%s' && { bash -c '. tests/gpu-lib.sh; compute_order' | "
             "sed -n 's/^order: \\([0-9 ]*\\) (.*/\\1/p' | tr ' ' '\\n' | sort | uniq -c | "
             "awk '$1 != 1 { bad++ } END { print NR, bad + 0 }'; "
             "ls -d experiments/[0-9][0-9]-*/main.c | wc -l; }",
             RL_SOURCE_ROOT);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 0, "%s%s", out, err);
    int listed = -1, twice = -1, experiments = -2;
    cr_assert_eq(sscanf(out, "%d %d %d", &listed, &twice, &experiments), 3, "%s%s", out, err);
    cr_assert_eq(listed, experiments, "%s", out);
    cr_assert_eq(twice, 0, "%s", out);
}

/* ---- make check-gpu's steps, with stand-ins ----------------------------------- */

/* Stand-ins in DIR: make (records its arguments), nvcc 13.0, and in
 * DIR/b the driver probe, the test binary (one cuda_ test that passes)
 * and exp-01..08 (each records that it ran). */
static void stand_ins(void)
{
    char path[700];
    snprintf(path, sizeof path, "%s/make", dir);
    write_file(path, "#!/bin/sh\necho \"$*\" >> \"$(dirname \"$0\")/make.log\"\n", true);
    snprintf(path, sizeof path, "%s/nvcc", dir);
    write_file(path, "#!/bin/sh\necho 'Cuda compilation tools, release 13.0, V13.0.88'\n", true);
    snprintf(path, sizeof path, "%s/b/cuda-probe", dir);
    write_file(path, "#!/bin/sh\necho 'driver can run CUDA 13.0'\n", true);
    snprintf(path, sizeof path, "%s/b/tests/rooflab-tests", dir);
    write_file(path, "#!/bin/sh\necho '[RUN ] cuda_quant::every_kernel_matches_the_reference'\n"
                     "echo '[PASS] cuda_quant::every_kernel_matches_the_reference: (0.10s)'\n", true);
    for (int n = 1; n <= 8; n++) {
        snprintf(path, sizeof path, "%s/b/exp-0%d", dir, n);
        /* its outcome as the harness writes it; FAKE_NO_GNUPLOT=1: charts not drawn */
        write_file(path, "#!/bin/sh\nbasename \"$0\" >> \"$(dirname \"$0\")/ran\"\n"
                         "echo 'backend     cuda'\n"
                         "while [ $# -gt 0 ]; do\n"
                         "  [ \"$1\" = --outcome-file ] && { echo exit_status=0; echo charts=drawn; "
                         "[ \"${FAKE_NO_GNUPLOT:-}\" = 1 ] && printf 'charts=not_drawn\\ncharts_why="
                         "no_gnuplot\\nredraw=make plot-%s LABEL=x\\n' \"${0##*-}\"; } > \"$2\"\n"
                         "  shift\n"
                         "done\n", true);
    }
}

/* check_steps with the stand-ins and GPU_DAY_EXPS='07 08 04' as the lab
 * order; env: more variables. out: its rows, then failed=N. */
static void check_steps(const char *env)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && PATH='%s/tests/fake':\"$PATH\" B='%s/b' MAKE='%s/make' NVCC='%s/nvcc' "
             "GPU_DAY_EXPS='07 08 04' BUNDLE=/nonexistent %s "
             "bash -c '. tests/gpu-lib.sh; SM=90; budget_start 300; compute_order >/dev/null; "
             "check_steps \"%s/logs\" >/dev/null; printf \"%%s\\n\" \"${rows[@]}\"; echo \"failed=$failed\"'",
             RL_SOURCE_ROOT, RL_SOURCE_ROOT, dir, dir, dir, env, dir);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 0, "%s\n%s%s", cmd, out, err);
}

/* The rows' names, in order, one per line (the first 44 columns, trimmed). */
static void row_names(char *names, size_t len)
{
    size_t used = 0;
    names[0] = '\0';
    for (const char *l = out; *l && used < len; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0)) {
        int n = (int)strcspn(l, "\n");
        if (n < 45 || !strncmp(l, "failed=", 7))
            continue;
        int w = 44;
        while (w > 0 && l[w - 1] == ' ')
            w--;
        used += (size_t)snprintf(names + used, len - used, "%.*s\n", w, l);
    }
}

/* The row of step name: the line that starts with it (not the line the
 * step prints when it starts, "gpu: NAME (cap N s)"). */
static const char *row_of(const char *name)
{
    static char row[512];
    for (const char *l = out; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0)) {
        if (starts_with(l, name) && l[strlen(name)] == ' ') {
            snprintf(row, sizeof row, "%.*s", (int)strcspn(l, "\n"), l);
            return row;
        }
    }
    cr_assert_fail("no row %s:\n%s", name, out);
    return NULL;
}

static char *made(void)
{
    char path[700];
    snprintf(path, sizeof path, "%s/make.log", dir);
    char *s = read_file(path, NULL);
    cr_assert_not_null(s, "make was never called");
    return s;
}

Test(gpu_lib, the_sanitizer_follows_the_suites_and_the_quick_runs_go_in_lab_order)
{
    stand_ins();
    check_steps("");
    char names[4096];
    row_names(names, sizeof names);
    cr_assert_str_eq(names,
                     "driver vs nvcc 13.0 (probe)\n"
                     "packages (deps.sh test, bundle/)\n"
                     "build (SMS=90)\n"
                     "CUDA kernels vs CPU references\n"
                     "compute-sanitizer memcheck (CUDA suites)\n"
                     "exp-07 --quick --backend cuda\n"
                     "exp-08 --quick --backend cuda\n"
                     "exp-04 --quick --backend cuda\n"
                     "exp-01 --quick --backend cuda\n"
                     "exp-02 --quick --backend cuda\n"
                     "exp-03 --quick --backend cuda\n"
                     "exp-05 --quick --backend cuda\n"
                     "exp-06 --quick --backend cuda\n", "%s", out);
    cr_assert(strstr(out, "failed=0"), "%s", out);
    char *m = made();
    cr_assert(strstr(m, "SMS=90") && strstr(m, " build-tests"), "%s", m);
    free(m);
}

Test(gpu_lib, without_criterion_the_experiments_still_build_and_run)
{
    stand_ins();
    check_steps("RL_DEPS_PRETEND_MISSING=libcriterion-dev");
    const char *r = row_of("packages (deps.sh test, bundle/)");
    cr_assert(strstr(r, "FAIL") && strstr(r, "Criterion missing: the CUDA suites and the sanitizer "
                                              "skip; the experiments build and run"), "%s", r);
    r = row_of("CUDA kernels vs CPU references");
    cr_assert(strstr(r, " skip ") && strstr(r, "Criterion missing"), "%s", r);
    r = row_of("compute-sanitizer memcheck (CUDA suites)");
    cr_assert(strstr(r, " skip ") && strstr(r, "Criterion missing"), "%s", r);
    for (int n = 1; n <= 8; n++) {
        char name[64];
        snprintf(name, sizeof name, "exp-0%d --quick --backend cuda", n);
        cr_assert(strstr(row_of(name), " pass "), "%s:\n%s", name, out);
    }
    cr_assert(strstr(out, "failed=1"), "a package missing is a failure:\n%s", out);
    char *m = made(); /* the build: the experiments, not the test binary */
    cr_assert(strstr(m, "SMS=90") && strstr(m, " build\n") && !strstr(m, "build-tests"), "%s", m);
    free(m);
}

/* An experiment stand-in in DIR that, on its cap's TERM, runs on_term
 * (its --outcome-file is $2) and exits 3; the row of its step under a 1 s
 * cap. */
static const char *capped_row(const char *on_term)
{
    char path[700], script[2048], cmd[2048];
    snprintf(path, sizeof path, "%s/exp-09", dir);
    snprintf(script, sizeof script,
             "#!/bin/bash\n"
             "trap 'kill $! 2>/dev/null; %s; exit 3' TERM\n"
             "echo plan; sleep 30 & wait\n", on_term);
    write_file(path, script, true);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && bash -c '. tests/gpu-lib.sh; budget_start 120; "
             "step \"exp-09 lab\" 1 \"%s/exp-09.log\" \"%s\" --outcome-file \"%s/exp-09.outcome\"; "
             "echo \"status=$?\"; printf \"%%s\\n\" \"${rows[@]}\"'",
             RL_SOURCE_ROOT, dir, path, dir);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 0, "%s%s", out, err);
    cr_assert(strstr(out, "status=124"), "%s", out);
    return row_of("exp-09 lab");
}

/* As harness/context.c does: the partial CSV written, its outcome as data
 * (the console's sentences say otherwise: the note must not read them). */
Test(gpu_lib, a_run_stopped_at_its_cap_says_it_kept_a_partial_csv)
{
    const char *r = capped_row(
        "echo \"stopped     by SIGTERM after 1 of 2 points\"; "
        "printf \"stopped=yes\\npoints_done=3\\npoints_total=7\\ncsv_written=yes\\npartial=yes\\n\" > \"$2\"");
    cr_assert(strstr(r, "FAIL") && strstr(r, "stopped at its 1 s cap; partial CSV kept (3 of 7 points)"),
              "%s", r);
}

Test(gpu_lib, a_run_the_term_found_measured_kept_its_whole_csv)
{
    const char *r = capped_row(
        "printf \"stopped=yes\\npoints_done=7\\npoints_total=7\\ncsv_written=yes\\npartial=no\\n\" > \"$2\"");
    cr_assert(strstr(r, "FAIL") && strstr(r, "once measured: CSV whole, charts not drawn"), "%s", r);
}

/* No outcome: the run died (KILL) or wrote nothing, whatever its log says;
 * an older run's outcome file beside the log does not count. */
Test(gpu_lib, a_run_without_an_outcome_ran_past_its_cap)
{
    char stale[700];
    snprintf(stale, sizeof stale, "%s/exp-09.outcome", dir);
    write_file(stale, "csv_written=yes\npartial=yes\npoints_done=1\npoints_total=2\n", false);
    const char *r = capped_row("echo \"wrote       x.csv (partial)\"");
    cr_assert(strstr(r, "FAIL") && strstr(r, "ran past its 1 s cap, stopped"), "%s", r);
}

/* A quick run without gnuplot: its row names the command that draws its
 * charts later, from its outcome file. */
Test(gpu_lib, a_quick_run_without_gnuplot_says_how_to_draw_its_charts)
{
    stand_ins();
    check_steps("FAKE_NO_GNUPLOT=1");
    const char *r = row_of("exp-04 --quick --backend cuda");
    cr_assert(strstr(r, " pass ") && strstr(r, "charts not drawn (no gnuplot): make plot-04 LABEL=x"),
              "%s", r);
    check_steps("");
    r = row_of("exp-04 --quick --backend cuda");
    cr_assert(strstr(r, " pass ") && !strstr(r, "charts not drawn"), "%s", r);
}
