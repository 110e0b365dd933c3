/*
 * test_slurm.c -- make slurm's scripts (harness/ops/slurm/) against stand-ins
 * for Slurm's commands (tests/fake/slurm/: sbatch records, scontrol
 * release runs the recorded jobs one after another, sinfo answers from
 * FAKE_SINFO_GRES), so that the whole path -- submitting, a task per
 * experiment, the summary job -- runs on any machine, CI included. The
 * real thing, on a one-node Slurm cluster, is make test-slurm
 * (tests/test-slurm.sh: root, minutes).
 */
#include "helpers.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SUBMIT RL_SOURCE_ROOT "/harness/ops/slurm/submit.sh"
#define FAKES RL_SOURCE_ROOT "/tests/fake/slurm"

static char dir[512];
static char out[1 << 17], err[1 << 16];

static void setup(void) { make_temp_dir(dir, sizeof dir); }
static void teardown(void) { rm_tree(dir); }
TestSuite(slurm, .init = setup, .fini = teardown, .timeout = 300);

/* Runs submit.sh with the fakes first on PATH, the runs, results and
 * plots under dir, the build of the tests, and env (VAR=value ...). */
static int submit(const char *env)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "env PATH='" FAKES "':\"$PATH\" FAKE_SLURM_DIR='%s/fake' RL_SLURM_RUNS='%s/slurm' "
             "RL_OUT='%s/results' RL_PLOTS='%s/plots' B='" RL_BUILD_DIR "' SKIP_BUILD=1 %s "
             "bash " SUBMIT,
             dir, dir, dir, dir, env);
    return run_capture(cmd, out, sizeof out, err, sizeof err);
}

static char *fake_log(void)
{
    char path[700];
    snprintf(path, sizeof path, "%s/fake/log", dir);
    char *log = read_file(path, NULL);
    cr_assert_not_null(log, "the fakes recorded nothing at %s", path);
    return log;
}

/* The line of text that contains needle, with every part present. */
static void assert_line_has(const char *text, const char *needle, const char *const *parts)
{
    const char *at = strstr(text, needle);
    cr_assert_not_null(at, "no line with \"%s\" in:\n%s", needle, text);
    const char *start = at;
    while (start > text && start[-1] != '\n')
        start--;
    size_t len = strcspn(start, "\n");
    char line[4096];
    snprintf(line, sizeof line, "%.*s", (int)len, start);
    for (int i = 0; parts[i]; i++)
        cr_assert(strstr(line, parts[i]), "no \"%s\" in the line:\n%s", parts[i], line);
}

static int lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

Test(slurm, without_sbatch_it_refuses_in_one_line)
{
    /* Nothing on PATH: the refusal must come before any other command. */
    int rc = run_capture("env PATH=/nonexistent PARTITIONS=a100 /bin/bash " SUBMIT, out, sizeof out,
                         err, sizeof err);
    cr_assert_eq(rc, 2, "exit %d\n%s%s", rc, out, err);
    cr_assert(strstr(err, "make slurm: sbatch not found"), "%s", err);
    cr_assert_eq(lines(err), 1, "one line: %s", err);
    cr_assert_str_empty(out);
}

Test(slurm, usage_errors_exit_2_and_submit_nothing)
{
    static const char *const cases[][2] = {
        {"FAKE_SINFO_GRES='cpu=(null)'", "usage: make slurm PARTITIONS="},
        {"FAKE_SINFO_GRES='cpu=(null)' PARTITIONS=nope", "no partition 'nope' here"},
        {"FAKE_SINFO_GRES='cpu=(null)' PARTITIONS=cpu EXPS=99", "no experiment '99'"},
        {"FAKE_SINFO_GRES='cpu=(null)' PARTITIONS=cpu BACKEND=gpu", "BACKEND=gpu"},
        {"FAKE_SINFO_GRES='cpu=(null)' PARTITIONS='cpu cpu'", "PARTITIONS names cpu twice"},
        {"FAKE_SINFO_GRES='cpu=(null)' PARTITIONS=cpu TIME_LIMIT=0", "TIME_LIMIT=0"},
        {"FAKE_SINFO_GRES='cpu=(null)' PARTITIONS=cpu QUICK=--quick PREFIX=reference",
         "quick runs do not go under reference/"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = submit(cases[i][0]);
        cr_assert_eq(rc, 2, "%s: exit %d\n%s%s", cases[i][0], rc, out, err);
        cr_assert(strstr(err, cases[i][1]), "%s: no \"%s\" in: %s", cases[i][0], cases[i][1], err);
    }
    char path[700];
    snprintf(path, sizeof path, "%s/fake/jobs", dir);
    cr_assert_not(file_exists(path), "nothing was submitted");
}

Test(slurm, a_failed_sbatch_cancels_what_was_submitted)
{
    /* The second array fails: the first, held, is cancelled and its run
     * folder removed. The GPU types: h100 is sm_90, an untyped gpu gres
     * is unknown, so the build is for the default SMS. */
    int rc = submit("FAKE_SINFO_GRES='a=gpu:nvidia_h100_80gb_hbm3:8 b=gpu:4' FAKE_SBATCH_FAIL_AT=2 "
                    "PARTITIONS='a b' EXPS=04 NVCC=/fake/nvcc SMS_DEFAULT='75 80 86 89 90'");
    cr_assert_eq(rc, 1, "exit %d\n%s%s", rc, out, err);
    cr_assert(strstr(out, "for SMS 75 80 86 89 90 (the default SMS, as the SM of b (a gpu gres "
                          "without a type) is not known"), "%s", out);
    cr_assert(strstr(err, "make slurm: sbatch failed: sbatch: error: Batch job submission failed"),
              "%s", err);
    cr_assert(strstr(err, "nothing stays submitted"), "%s", err);
    cr_assert_eq(lines(err), 1, "one line: %s", err);
    char *log = fake_log();
    cr_assert(strstr(log, "scancel 101\n"), "the first array is cancelled:\n%s", log);
    cr_assert_null(strstr(log, "scontrol release"), "nothing was released:\n%s", log);
    free(log);
    char path[700];
    snprintf(path, sizeof path, "%s/slurm/101", dir);
    cr_assert_not(file_exists(path), "the run folder is removed");
}

Test(slurm, sms_from_the_partitions_gpus_and_given)
{
    cr_assert_eq(submit("FAKE_SLURM_RUN=0 FAKE_SINFO_GRES='x=gpu:a100:4(S:0-1) "
                        "y=gpu:nvidia_h100_80gb_hbm3:8,gpu:tesla_t4:2' PARTITIONS='x y' EXPS=01 "
                        "NVCC=/fake/nvcc"), 0, "%s%s", out, err);
    cr_assert(strstr(out, "for SMS 75 80 90 (the partitions' GPUs)"), "%s", out);
    rm_tree(dir);
    make_temp_dir(dir, sizeof dir);
    cr_assert_eq(submit("FAKE_SLURM_RUN=0 FAKE_SINFO_GRES='x=gpu:a100:4' PARTITIONS=x EXPS=01 "
                        "NVCC=/fake/nvcc SMS=89"), 0, "%s%s", out, err);
    cr_assert(strstr(out, "for SMS 89 (SMS given)"), "%s", out);
    cr_assert(strstr(out, "gpu:1; GPUs: a100"), "%s", out);
}

/* The whole path: a partition without GPUs whose task runs, one with GPUs
 * on a node without one (the fake sets CUDA_VISIBLE_DEVICES empty) whose
 * task fails with exit 77 and its reason, and the summary job after both. */
Test(slurm, one_task_fails_the_other_runs_and_the_summary_says_which)
{
    char slug[128] = "", cmd[1400], path[1400];
    cr_assert_eq(run_capture(RL_BUILD_DIR "/exp-05 --print-label --backend cpu", slug, sizeof slug,
                             err, sizeof err), 0, "%s", err);
    slug[strcspn(slug, "\n")] = '\0';
    /* A reference run of this CPU to compare with: the checked-in one. */
    snprintf(cmd, sizeof cmd,
             "mkdir -p '%s/results/reference/%s' && cp '" RL_SOURCE_ROOT
             "/results/reference/cpu-amd-epyc/exp-05.csv' '%s/results/reference/%s/'",
             dir, slug, dir, slug);
    cr_assert_eq(system(cmd), 0);

    char env[1024];
    snprintf(env, sizeof env,
             "RL_SLURM_RUN_FILE='%s/run-file' "
             "FAKE_SINFO_GRES='cpu=(null) gpu=gpu:a100:4(S:0-1)' PARTITIONS='cpu gpu' "
             "EXPS=5 QUICK=--quick SBATCH_ARGS='--account=lab --qos=short' "
             "ARGS='--op affine --variant 1,2,3 --max-bytes 64Mi --no-plot --ceilings "
             TEST_CEILINGS "'", dir);
    measure_lock(); /* the task times exp-05 */
    int rc = submit(env);
    measure_unlock();
    cr_assert_eq(rc, 0, "exit %d\n%s%s", rc, out, err);
    cr_assert(strstr(out, "slurm: run 101: "), "%s", out);
    cr_assert(strstr(out, "JOBID PARTITION"), "squeue --me is shown: %s", out);
    /* The run and its jobs as data (RL_SLURM_RUN_FILE): the arrays, then
     * the summary job, as the table printed for people lists them. */
    snprintf(path, sizeof path, "%s/run-file", dir);
    char *run_file = read_file(path, NULL);
    cr_assert_not_null(run_file, "no %s", path);
    cr_assert_str_eq(run_file, "run=101\njobs=101,102,103\n");
    free(run_file);

    char *log = fake_log();
    assert_line_has(log, "--partition=cpu", (const char *const[]){
        "--hold", "--array=5 ", "--time=10 ", "--exclusive", "--account=lab --qos=short",
        "/slurm/%A/cpu/exp-%2a.out", "harness/ops/slurm/task.sh", "--backend auto", NULL});
    assert_line_has(log, "--partition=gpu", (const char *const[]){
        "--hold", "--gres=gpu:1", "--cpus-per-task=4", "/slurm/101/gpu/exp-%2a.err",
        "--backend cuda", "--run 101", NULL});
    assert_line_has(log, "--job-name=rooflab-summary", (const char *const[]){
        "--dependency=afterany:101:102", "--partition=cpu", "/slurm/101/summary.out",
        "harness/ops/slurm/finish.sh", NULL});
    cr_assert(strstr(log, "scontrol release 101,102,103\n"), "%s", log);
    cr_assert(strstr(log, "ran 101_5: exit 0\n"), "%s", log);
    cr_assert(strstr(log, "ran 102_5: exit 77\n"), "%s", log);
    cr_assert(strstr(log, "ran 103: exit 1\n"), "the summary job runs, says a task failed:\n%s",
              log);
    free(log);

    /* The records, the task's output, the run's summary. */
    snprintf(path, sizeof path, "%s/slurm/101/cpu/exp-05.result", dir);
    char *rec = read_file(path, NULL);
    cr_assert(rec && strstr(rec, "result=ok\n") && strstr(rec, "label=cluster/"), "%s", rec);
    free(rec);
    snprintf(path, sizeof path, "%s/slurm/101/gpu/exp-05.result", dir);
    rec = read_file(path, NULL);
    cr_assert(rec && strstr(rec, "result=FAIL\n") && strstr(rec, "exit=77\n") &&
              strstr(rec, "note=rooflab: exp-05: --backend cuda, but"), "%s", rec);
    free(rec);
    snprintf(path, sizeof path, "%s/slurm/101/gpu/exp-05.out", dir);
    char *task = read_file(path, NULL);
    cr_assert(task && strstr(task, "rooflab-slurm: result exp-05 FAIL (exit 77)"), "%s", task);
    free(task);
    snprintf(path, sizeof path, "%s/slurm/101/summary.txt", dir);
    char *sum = read_file(path, NULL);
    cr_assert_not_null(sum, "no %s", path);
    cr_assert(strstr(sum, "1 of 2 tasks ran"), "%s", sum);
    char label[200];
    snprintf(label, sizeof label, "cluster/%s", slug);
    assert_line_has(sum, "cpu          05", (const char *const[]){label, " ok ", NULL});
    assert_line_has(sum, "gpu          05",
                    (const char *const[]){"FAIL (77)", "--backend cuda, but", NULL});
    assert_line_has(sum, "summary.md: ", (const char *const[]){label, " hold, ", NULL});
    assert_line_has(sum, "exp-05  reference/",
                    (const char *const[]){label, "compared with its checked-in", NULL});
    cr_assert(strstr(sum, "charts "), "the comparison's charts are listed:\n%s", sum);
    free(sum);

    char compare[200], chart[1600];
    snprintf(compare, sizeof compare, "reference-%s--cluster-%s", slug, slug);
    snprintf(chart, sizeof chart, "%s/plots/compare/%s/exp-05.png", dir, compare);
    cr_assert_gt(file_size(chart), 1000, "no comparison chart at %s", chart);
    /* What was drawn, as data for scripts: rooflab compare --charts-file. */
    snprintf(path, sizeof path, "%s/slurm/101/compare-exp-05.charts", dir);
    char *drawn = read_file(path, NULL);
    cr_assert_not_null(drawn, "no %s", path);
    char line[1700];
    snprintf(line, sizeof line, "\nchart=%s\n", chart);
    cr_assert(!strncmp(drawn, "drawn=yes\n", 10) && strstr(drawn, line), "%s", drawn);
    free(drawn);
    snprintf(path, sizeof path, "%s/results/%s/summary.md", dir, label);
    cr_assert(file_exists(path), "the label's summary: %s", path);
}

/* task.sh against a stand-in experiment that writes the plan file FAKE_LOW
 * and FAKE_HIGH say and prints a plan line in a wording no script knows,
 * under a job limit of 1 min; returns its exit code, its output in out. */
static int task_with_plan(const char *low, const char *high)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "mkdir -p '%s/bin' '%s/slurm/7/cpu' && printf '%%s\\n' B='%s/bin' PREFIX=cluster "
             "MODE_FLAG=--quick OUT='%s/results' PLOTS='%s/plots' >'%s/slurm/7/run.env' && "
             "cp '" RL_SOURCE_ROOT "/tests/fake/experiment-with-plan' '%s/bin/exp-05'",
             dir, dir, dir, dir, dir, dir, dir);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    snprintf(cmd, sizeof cmd,
             "cd '" RL_SOURCE_ROOT "' && env SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_JOB_ID=7 "
             "SLURM_JOB_PARTITION=cpu FAKE_LOW=%s FAKE_HIGH=%s bash harness/ops/slurm/task.sh "
             "--runs '%s/slurm' --backend cpu --limit 1",
             low, high, dir);
    return run_capture(cmd, out, sizeof out, err, sizeof err);
}

/* The warning reads the plan's numbers from --plan-file, never from the
 * plan line: the stand-in's line says "about 99 min", its file less. */
Test(slurm, the_task_warns_from_the_plan_file_when_the_plan_may_not_fit)
{
    cr_assert_eq(task_with_plan("120", "300"), 0, "%s%s", out, err);
    cr_assert(strstr(out, "rooflab-slurm: warning: the plan expects 120 s to 300 s, more than this "
                          "job's time limit of 1 min; make slurm TIME_LIMIT=10 gives more"),
              "%s", out);
    char path[700];
    snprintf(path, sizeof path, "%s/slurm/7/cpu/exp-05.plan", dir);
    char *plan = read_file(path, NULL);
    cr_assert(plan && strstr(plan, "expected_s_high=300\n"), "the plan is kept beside the record: %s",
              plan);
    free(plan);

    cr_assert_eq(task_with_plan("30", "300"), 0, "%s%s", out, err);
    cr_assert(strstr(out, "warning: the plan expects 30 s to 300 s, may be more than this job's "
                          "time limit of 1 min"), "%s", out);

    cr_assert_eq(task_with_plan("10", "20"), 0, "%s%s", out, err);
    cr_assert(strstr(out, "about 99 min"), "the plan line goes through: %s", out);
    cr_assert_null(strstr(out, "warning"), "a plan within the limit, whatever its line says: %s",
                   out);
}
