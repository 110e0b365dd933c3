/*
 * test_stability.c -- `rooflab stability` on hand-written runs (no
 * experiment runs): three runs of experiment 05 under stab/1 .. stab/3,
 * their CSVs headed like real ones (compare_keys, compare_value), in
 * which one verdict flips and one point's MBU and MFU move past the
 * thresholds; then the errors: a missing file is named, bad usage is 2.
 * make stability's driver script runs against stand-ins for the
 * experiment and the tool.
 */
#include "helpers.h"
#include "internal.h" /* rl_mkdirs */

#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TOOL RL_BUILD_DIR "/rooflab"

static char dir[512];
static char out[1 << 17], err[1 << 16];

static void setup(void) { make_temp_dir(dir, sizeof dir); }
static void teardown(void) { rm_tree(dir); }
TestSuite(stability, .init = setup, .fini = teardown, .timeout = 60);

static void write_file(const char *label, const char *name, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/results/%s", dir, label);
    cr_assert_eq(rl_mkdirs(path), 0, "cannot create %s", path);
    snprintf(path, sizeof path, "%s/results/%s/%s", dir, label, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

/* Run i (1-based) of three: its exp-05.csv and verdicts.csv. pair_fused's
 * MBU moves 0.60 -> 0.72 (not within +-0.05: spread 0.12 > 0.10) and its
 * MFU 10 -> 22 % (12 points > 10), but its MBU is the larger, its bound:
 * the MBU is flagged !!, the MFU ~. Its roof moved 100 -> 120 GB/s, its
 * rate did not. one_op's stay within the bands. fused_speedup_cos holds in runs
 * 1 and 2 and does not in run 3; a row of experiment 06 is not exp-05's. */
static void write_run(int i)
{
    static const char *const pair_fused[] = {"0.60,0.10", "0.64,0.15", "0.72,0.22"};
    static const char *const one_op[] = {"0.50,0.10", "0.51,0.11", "0.52,0.12"};
    static const char *const cos_verdict[] = {"holds", "holds", "does not hold"};
    char label[32], csv[2048], verdicts[2048];
    snprintf(label, sizeof label, "stab/%d", i);
    snprintf(csv, sizeof csv,
             "# experiment: 05-fusion\n# backend: cpu\n# device: test CPU\n# mode: lab\n"
             "# compare_keys: op,variant,k,n\n# compare_value: time_us_median\n"
             "op,variant,k,n,time_us_median,gbps,group_roof_gbps,mbu,mfu\n"
             "cos,one_op,1,1024,%d,50,100,%s\n"
             "cos,pair_fused,2,1024,%d,60,%d,%s\n"
             "cos,model_row,2,1024,,,,,\n",
             100 + i, one_op[i - 1], 200 + 10 * i, 90 + 10 * i, pair_fused[i - 1]);
    snprintf(verdicts, sizeof verdicts,
             "# about: latest verdict per experiment and backend for label %s\n"
             "experiment,id,backend,device,label,quick,claim,predicted,measured,verdict,note,date_utc\n"
             "05-fusion,fused_speedup_cos,cpu,test CPU,%s,no,fused cos,1.70x to 2.30x,1.%dx,%s,,\n"
             "05-fusion,fused_speedup_affine,cpu,test CPU,%s,no,fused affine,1.70x to 2.30x,2.00x,"
             "holds,,\n"
             "06-launch-graphs,graph_replay_cheap,cpu,test CPU,%s,no,graph,<= 0.5x,0.20x,holds,,\n",
             label, label, 9 - i, cos_verdict[i - 1], label, label);
    write_file(label, "exp-05.csv", csv);
    write_file(label, "verdicts.csv", verdicts);
}

static int stability(const char *labels)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, TOOL " stability --exp 05 --out '%s/results' %s", dir, labels);
    return run_capture(cmd, out, sizeof out, err, sizeof err);
}

/* The line of out that starts (after spaces) with start, copied to buf. */
static const char *line_of(const char *start, char *buf, size_t len)
{
    for (const char *l = out; *l;) {
        size_t n = strcspn(l, "\n");
        const char *s = l + strspn(l, " ");
        if (!strncmp(s, start, strlen(start)) && s < l + n) {
            snprintf(buf, len, "%.*s", (int)n, l);
            return buf;
        }
        l += n + (l[n] == '\n');
    }
    return NULL;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

Test(stability, a_verdict_that_flips_is_same_in_2_of_3)
{
    for (int i = 1; i <= 3; i++)
        write_run(i);
    int rc = stability("stab/1 stab/2 stab/3");
    cr_assert_eq(rc, 0, "values moved, and it reports: exit 0\n%s\n%s", out, err);
    char buf[512];
    cr_assert(line_of("fused_speedup_cos ", buf, sizeof buf), "%s", out);
    cr_assert(strstr(buf, "same in 2 of 3"), "%s", buf);
    cr_assert(line_of("fused_speedup_affine ", buf, sizeof buf), "%s", out);
    cr_assert(strstr(buf, "same in 3 of 3"), "%s", buf);
    /* Each run's verdict and measured value under the id. */
    cr_assert(strstr(out, "    3  does not hold            1.6x\n"), "%s", out);
    cr_assert(strstr(out, "1 of 2 verdicts the same in every run; not: fused_speedup_cos"), "%s",
              out);
    cr_assert_null(strstr(out, "graph_replay_cheap"), "another experiment's verdict:\n%s", out);

    /* The same report in the prefix's stability.md. */
    char path[1024];
    snprintf(path, sizeof path, "%s/results/stab/stability.md", dir);
    char *md = read_file(path, NULL);
    cr_assert_not_null(md, "no %s", path);
    const char *body = strstr(out, "== stability exp-05");
    const char *wrote = strstr(out, "\nwrote ");
    cr_assert(body && wrote, "%s", out);
    cr_assert(strstr(md, "```text\n") && strstr(md, "same in 2 of 3"), "%s", md);
    cr_assert(!strncmp(strstr(md, "== stability exp-05"), body, (size_t)(wrote - body)),
              "stability.md holds what was printed:\n%s", md);
    free(md);
}

Test(stability, an_mbu_spread_past_its_threshold_is_flagged)
{
    for (int i = 1; i <= 3; i++)
        write_run(i);
    cr_assert_eq(stability("stab/1 stab/2 stab/3"), 0, "%s", err);
    /* The flags: pair_fused's mbu line (its bound) and its mfu line (the
     * other roof: ~), and no other (the legend says "!! marks"). */
    cr_assert_eq(count(out, " !! roof"), 1, "%s", out); /* not the legend's "!! marks" */
    cr_assert_eq(count(out, " ~\n"), 1, "%s", out);
    char buf[512];
    cr_assert(line_of("cos pair_fused", buf, sizeof buf), "%s", out);
    cr_assert(strstr(buf, "time_us_median") && strstr(buf, "210") && strstr(buf, "230") &&
                  strstr(buf, "9.5 %"),
              "pair_fused's time 210..230, (230 - 210) / 210: %s", buf);
    const char *pair = strstr(out, "cos pair_fused");
    const char *mbu = strstr(pair, "mbu "), *mfu = strstr(pair, "mfu (points) ");
    cr_assert(mbu && mfu, "%s", out);
    snprintf(buf, sizeof buf, "%.*s", (int)strcspn(mbu, "\n"), mbu);
    cr_assert(strstr(buf, "0.6 ") && strstr(buf, "0.72 ") && strstr(buf, "0.12 ") &&
                  strstr(buf, " !!"),
              "pair_fused's MBU 0.60..0.72, spread 0.12, flagged: %s", buf);
    cr_assert(strstr(buf, "!! roof 20% pt 0%"), "what moved: the roof, not the point: %s", buf);
    snprintf(buf, sizeof buf, "%.*s", (int)strcspn(mfu, "\n"), mfu);
    cr_assert(strstr(buf, " 10 ") && strstr(buf, " 22 ") && strstr(buf, " 12 ") &&
                  strstr(buf, " ~") && !strstr(buf, "!!"),
              "pair_fused's MFU 10..22 points, spread 12, not its bound: %s", buf);
    const char *one = strstr(out, "cos one_op");
    cr_assert(one && one < pair, "%s", out);
    cr_assert_null(memchr(one, '!', (size_t)(pair - one)), "one_op moved within the thresholds");
    cr_assert_null(strstr(out, "model_row"), "a row without values is no point:\n%s", out);
    cr_assert(strstr(out, "  mbu            0.12, 1 point flagged\n"
                          "    at op cos, variant pair_fused, k 2, n 1024\n"),
              "%s", out);
}

Test(stability, a_missing_file_is_named)
{
    for (int i = 1; i <= 3; i++)
        write_run(i);
    char path[1024];
    snprintf(path, sizeof path, "%s/results/stab/2/exp-05.csv", dir);
    cr_assert_eq(remove(path), 0);
    cr_assert_eq(stability("stab/1 stab/2 stab/3"), 1, "%s", out);
    cr_assert(strstr(err, "run 'stab/2'") && strstr(err, path), "%s", err);

    snprintf(path, sizeof path, "%s/results/stab/3/verdicts.csv", dir);
    cr_assert_eq(remove(path), 0);
    cr_assert_eq(stability("stab/1 stab/3"), 1, "%s", out);
    cr_assert(strstr(err, path), "%s", err);
    snprintf(path, sizeof path, "%s/results/stab/stability.md", dir);
    cr_assert_not(file_exists(path), "no report from runs that are not all there");
}

Test(stability, bad_usage_exits_2)
{
    for (int i = 1; i <= 2; i++)
        write_run(i);
    cr_assert_eq(stability("stab/1"), 2, "one run compares nothing");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, TOOL " stability --out '%s/results' stab/1 stab/2", dir);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 2, "no --exp");
    cr_assert(strstr(err, "--exp"), "%s", err);
    /* Labels that share no folder: stability.md needs --prefix. */
    write_file("other", "exp-05.csv", "");
    cr_assert_eq(stability("stab/1 other"), 2, "%s", out);
    cr_assert(strstr(err, "--prefix"), "%s", err);
    snprintf(cmd, sizeof cmd, TOOL " stability --help");
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 0);
    cr_assert(strstr(out, "usage: rooflab stability"), "%s", out);
}

/* ---- make stability's driver, harness/ops/stability.sh -------------------------- */

/* A build folder whose exp-05 and rooflab are stand-ins that note their
 * arguments in DIR/calls (exp-05 fails on the label ending in
 * FAKE_FAIL_RUN): the driver is tested without running an experiment. */
static void fake_build(void)
{
    static const char *const exp =
        "#!/bin/sh\necho \"exp-05 $*\" >> \"$FAKE_DIR/calls\"\n"
        "case \" $* \" in *\"/${FAKE_FAIL_RUN:-none} \"*) exit 1 ;; esac\n";
    static const char *const tool = "#!/bin/sh\necho \"rooflab $*\" >> \"$FAKE_DIR/calls\"\n";
    const char *const files[][2] = {{"exp-05", exp}, {"rooflab", tool}};
    for (int i = 0; i < 2; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/fakeb", dir);
        cr_assert_eq(rl_mkdirs(path), 0);
        snprintf(path, sizeof path, "%s/fakeb/%s", dir, files[i][0]);
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f, "%s", path);
        fputs(files[i][1], f);
        fclose(f);
        cr_assert_eq(chmod(path, 0755), 0, "%s", path);
    }
}

static int driver(const char *env)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "env B='%s/fakeb' FAKE_DIR='%s' EXP=05 %s " RL_SOURCE_ROOT
             "/harness/ops/stability.sh", dir, dir, env);
    return run_capture(cmd, out, sizeof out, err, sizeof err);
}

Test(stability, driver_runs_n_labels_then_the_report)
{
    fake_build();
    cr_assert_eq(driver("RUNS=2"), 0, "%s\n%s", out, err);
    cr_assert(strstr(out, "run 1/2 of exp-05 (lab mode)") && strstr(out, "run 2/2 of exp-05"), "%s",
              out);
    char path[1024];
    snprintf(path, sizeof path, "%s/calls", dir);
    char *calls = read_file(path, NULL);
    cr_assert_not_null(calls);
    cr_assert_str_eq(calls,
                     "exp-05 --backend auto --reference none --no-plot --label stability/exp-05/1\n"
                     "exp-05 --backend auto --reference none --no-plot --label stability/exp-05/2\n"
                     "rooflab stability --exp 05 --prefix stability/exp-05 stability/exp-05/1 "
                     "stability/exp-05/2\n");
    free(calls);
    cr_assert_eq(driver("RUNS=1"), 2, "one run is no series");
    cr_assert_eq(driver("RUNS=2 MODE=full"), 2, "lab or quick");
}

/* BUDGET=S: each round a run with no budget beside one under --budget S,
 * both in the report. */
Test(stability, driver_with_a_budget_runs_each_round_with_and_without_it)
{
    fake_build();
    cr_assert_eq(driver("RUNS=1 BUDGET=40"), 0, "%s\n%s", out, err);
    char path[1024];
    snprintf(path, sizeof path, "%s/calls", dir);
    char *calls = read_file(path, NULL);
    cr_assert_not_null(calls);
    cr_assert_str_eq(calls,
                     "exp-05 --backend auto --reference none --no-plot --label stability/exp-05/lab-1\n"
                     "exp-05 --backend auto --reference none --no-plot --label stability/exp-05/budget-40-1 "
                     "--budget 40\n"
                     "rooflab stability --exp 05 --prefix stability/exp-05 stability/exp-05/lab-1 "
                     "stability/exp-05/budget-40-1\n");
    free(calls);
    cr_assert_eq(driver("RUNS=2 BUDGET=4x"), 2, "a budget is whole seconds");
    cr_assert_eq(driver("RUNS=9 BUDGET=40"), 2, "at most 8 rounds");
}

Test(stability, driver_stops_the_spinner_when_a_run_fails)
{
    fake_build();
    int rc = driver("RUNS=3 MODE=quick PREFIX=mine SPIN=1 FAKE_FAIL_RUN=2");
    cr_assert_eq(rc, 1, "the failed run's exit code:\n%s\n%s", out, err);
    const char *at = strstr(out, "a busy loop (pid ");
    cr_assert_not_null(at, "%s", out);
    pid_t pid = (pid_t)atoi(at + strlen("a busy loop (pid "));
    cr_assert_gt(pid, 1);
    cr_assert_neq(kill(pid, 0), 0, "the spinner %d still runs", (int)pid);
    cr_assert(strstr(err, "run 2/3 failed (exit 1)"), "%s", err);
    char path[1024];
    snprintf(path, sizeof path, "%s/calls", dir);
    char *calls = read_file(path, NULL);
    cr_assert(calls && strstr(calls, "--quick --reference none --no-plot --label mine/2\n"), "%s",
              calls);
    cr_assert_null(strstr(calls, "mine/3"), "the series stops at the failed run:\n%s", calls);
    cr_assert_null(strstr(calls, "rooflab"), "no report of an incomplete series:\n%s", calls);
    free(calls);
}
