/*
 * test_verdicts.c -- the four kinds of verdict counted apart everywhere a
 * verdicts.csv is read back: "holds", "does not hold", "premise not met"
 * (measured, but not under the claim's premise) and "not measured" (any
 * cell starting so, e.g. "not measured (busy host)"). A fixture label with
 * all four kinds goes through the summary (console line and summary.md),
 * the paper's generated LaTeX (the glance table, the per-experiment
 * sentence, the itemized lists) and exp-05's main chart; a label of three
 * kinds, as every verdicts.csv before the fourth, reads as it did.
 */
#include "helpers.h"
#include "internal.h" /* rl_mkdirs, rl_verdict_kind */

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOOL RL_BUILD_DIR "/rooflab"
#define REFERENCE_RUN RL_SOURCE_ROOT "/results/reference/cpu-amd-epyc"

static char dir[512];
static char out[1 << 17], err[1 << 16];

static void setup(void) { make_temp_dir(dir, sizeof dir); }
static void teardown(void) { rm_tree(dir); }
TestSuite(verdicts, .init = setup, .fini = teardown, .timeout = 300);

#define HEADER                                                                                   \
    "# about: latest verdict per experiment and backend for label fixture\n"                       \
    "experiment,id,backend,device,label,quick,claim,predicted,measured,verdict,note,date_utc\n"
#define ROW(id, measured, verdict, note)                                                           \
    "05-fusion," id ",cpu,AMD EPYC,fixture,no,claim " id ",1.70x to 2.30x," measured "," verdict    \
    "," note ",2026-12-01T12:00:00Z\n"

/* Every kind once, "not measured" twice (once with a reason in its cell):
 * 1 holds, 1 does not hold, 2 not measured, 1 premise not met. The main
 * chart of exp-05 states fused_speedup_cos, its chain chart
 * fused_vs_one_op_cos. */
static const char FOUR_KINDS[] =
    HEADER ROW("fused_speedup_cos", "1.10x", "premise not met",
               "pair_unfused at 64 MiB moves 0.31 of its DRAM roof: not memory-bound")
        ROW("fused_vs_one_op_cos", "1.05x", "not measured (busy host)", "another process ran")
            ROW("fused_speedup_affine", "2.00x", "holds", "")
                ROW("fused_vs_one_op_affine", "1.30x", "does not hold", "one_op is slow")
                    ROW("chain_cos", "", "not measured", "no chain ran");

/* The same claims as a verdicts.csv before the fourth kind: 2, 1, 1. */
static const char THREE_KINDS[] =
    HEADER ROW("fused_speedup_cos", "2.01x", "holds", "")
        ROW("fused_vs_one_op_cos", "1.05x", "holds", "")
            ROW("fused_speedup_affine", "1.30x", "does not hold", "compute-bound here")
                ROW("fused_vs_one_op_affine", "", "not measured", "one_op not measured");

/* DIR/results/LABEL/ with the verdicts given and the reference run's
 * exp-05.csv (the paper and the charts read its header and rows). */
static void write_label(const char *label, const char *verdicts)
{
    char path[1024], cmd[2048];
    snprintf(path, sizeof path, "%s/results/%s", dir, label);
    cr_assert_eq(rl_mkdirs(path), 0, "cannot create %s", path);
    snprintf(cmd, sizeof cmd, "cp '%s/exp-05.csv' '%s/'", REFERENCE_RUN, path);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    snprintf(path, sizeof path, "%s/results/%s/verdicts.csv", dir, label);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "cannot write %s", path);
    fputs(verdicts, f);
    fclose(f);
}

static char *read_in(const char *fmt, const char *label)
{
    char path[1024];
    snprintf(path, sizeof path, fmt, dir, label);
    char *text = read_file(path, NULL);
    cr_assert_not_null(text, "cannot read %s", path);
    return text;
}

static void summary(const char *label)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, TOOL " summary --out '%s/results' --label %s", dir, label);
    int rc = run_capture(cmd, out, sizeof out, err, sizeof err);
    cr_assert_eq(rc, 0, "%s\n%s", out, err);
}

static void paper_tables(const char *label)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             TOOL " paper-tables --out '%s/results' --plots '%s/plots' --label %s --dest '%s/tex'",
             dir, dir, label, dir);
    int rc = run_capture(cmd, out, sizeof out, err, sizeof err);
    cr_assert_eq(rc, 0, "%s\n%s", out, err);
}

Test(verdicts, a_cell_reads_back_as_one_of_four_kinds)
{
    cr_assert_eq(rl_verdict_kind("holds"), RL_HOLDS);
    cr_assert_eq(rl_verdict_kind("does not hold"), RL_DOES_NOT_HOLD);
    cr_assert_eq(rl_verdict_kind("premise not met"), RL_PREMISE_NOT_MET);
    cr_assert_eq(rl_verdict_kind("not measured"), RL_NOT_MEASURED);
    cr_assert_eq(rl_verdict_kind("not measured (busy host)"), RL_NOT_MEASURED);
    cr_assert_eq(rl_verdict_kind(rl_verdict_name(RL_NOT_MEASURED_BUSY)), RL_NOT_MEASURED,
                 "the busy host's name is counted as not measured");
    cr_assert_eq(rl_verdict_kind(""), RL_NOT_MEASURED, "an empty cell was not judged");
    for (rl_verdict_status s = RL_HOLDS; s <= RL_PREMISE_NOT_MET; s++)
        cr_assert_eq(rl_verdict_kind(rl_verdict_name(s)), s, "%s", rl_verdict_name(s));
}

Test(verdicts, summary_counts_premise_not_met_apart)
{
    write_label("fixture", FOUR_KINDS);
    summary("fixture");
    const char *want = "1 hold, 1 do not hold, 2 not measured, 1 premise not met";
    cr_assert(strstr(out, want), "the console line is not '%s':\n%s", want, out);
    cr_assert(strstr(out, "premise not met\n"), "the row shows its verdict:\n%s", out);
    char *md = read_in("%s/results/%s/summary.md", "fixture");
    cr_assert(strstr(md, "\n1 hold, 1 do not hold, 2 not measured, 1 premise not met.\n"), "%s", md);
    cr_assert(strstr(md, "| premise not met | pair_unfused at 64 MiB moves 0.31"),
              "the row keeps its verdict and the note naming the point:\n%s", md);
    free(md);
}

/* What finish.sh asks: the counts as key=value lines, and nothing written. */
Test(verdicts, summary_counts_are_data_for_scripts)
{
    write_label("fixture", FOUR_KINDS);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, TOOL " summary --counts --out '%s/results' --label fixture", dir);
    int rc = run_capture(cmd, out, sizeof out, err, sizeof err);
    cr_assert_eq(rc, 0, "%s\n%s", out, err);
    cr_assert_str_eq(out, "holds=1\ndoes_not_hold=1\nnot_measured=2\npremise_not_met=1\n");
    char path[1024];
    snprintf(path, sizeof path, "%s/results/fixture/summary.md", dir);
    cr_assert_not(file_exists(path), "--counts writes no summary.md");
}

Test(verdicts, summary_of_three_kinds_counts_none_premise_not_met)
{
    write_label("old", THREE_KINDS);
    summary("old");
    cr_assert(strstr(out, "2 hold, 1 do not hold, 1 not measured, 0 premise not met"), "%s", out);
}

Test(verdicts, paper_counts_and_lists_premise_not_met_apart)
{
    write_label("fixture", FOUR_KINDS);
    paper_tables("fixture");
    char *glance = read_in("%s/%s/glance.tex", "tex");
    cr_assert(strstr(glance, "held & did not & \\shortstack[r]{not\\\\measured} & "
                             "\\shortstack[r]{premise\\\\not met} \\\\"), "%s", glance);
    cr_assert(strstr(glance, "r r r r@{}}"), "a column for each of the four kinds:\n%s", glance);
    cr_assert(strstr(glance, " & 1 & 1 & 2 & 1 \\\\"), "05-fusion's counts:\n%s", glance);
    cr_assert(strstr(glance, "\\multicolumn{7}{l}{\\emph{no run under this label}}"),
              "the experiments without a run span every column:\n%s", glance);
    free(glance);

    char *tex = read_in("%s/%s/exp-05.tex", "tex");
    const char *sentence = "Of its 5 verdicts, 1 held, 1 did not hold, 2 were not measured and 1 "
                           "was measured with the claim's premise not met (Table~";
    cr_assert(strstr(tex, sentence), "the sentence is not '%s':\n%s", sentence, tex);
    const char *premise = strstr(tex, "Premise not met on this run");
    const char *unmeasured = strstr(tex, "Not measured on this run");
    cr_assert(premise && unmeasured && strstr(tex, "Did not hold on this run"), "%s", tex);
    /* Each list holds its own kind only: the premise's note in its list,
     * the two not measured (one "(busy host)") in theirs. */
    const char *note = strstr(tex, "pair\\_unfused at 64 MiB moves 0.31");
    cr_assert(note && note > premise && note < unmeasured, "%s", tex);
    const char *busy = strstr(tex, "claim fused\\_vs\\_one\\_op\\_cos");
    cr_assert(busy && busy > unmeasured, "'not measured (busy host)' is listed as not measured:\n%s",
              tex);
    const char *chain = strstr(tex, "claim chain\\_cos");
    cr_assert(chain && chain > unmeasured, "%s", tex);
    const char *held = strstr(tex, "claim fused\\_speedup\\_affine");
    cr_assert(held && held < premise, "the held claim in the Held sentence only:\n%s", tex);
    free(tex);
}

Test(verdicts, paper_of_three_kinds_reads_as_before)
{
    write_label("old", THREE_KINDS);
    paper_tables("old");
    char *glance = read_in("%s/%s/glance.tex", "tex");
    cr_assert(strstr(glance, "held & did not & not measured \\\\"), "%s", glance);
    cr_assert_null(strstr(glance, "premise"), "no fourth column without one:\n%s", glance);
    cr_assert(strstr(glance, " & 2 & 1 & 1 \\\\"), "%s", glance);
    free(glance);
    char *tex = read_in("%s/%s/exp-05.tex", "tex");
    cr_assert(strstr(tex, "Of its 4 verdicts, 2 held, 1 did not hold and 1 was not measured "
                          "(Table~\\ref{tab:exp-05}"),
              "%s", tex);
    cr_assert_null(strstr(tex, "remise"), "%s", tex);
    free(tex);
}

Test(verdicts, chart_states_premise_not_met_as_not_judged)
{
    if (system("gnuplot --version >/dev/null 2>&1") != 0)
        cr_skip_test("gnuplot not found: no chart to check");
    write_label("fixture", FOUR_KINDS);
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             RL_BUILD_DIR "/exp-05 --plot-only --backend cpu --reference none --label fixture "
                          "--out '%s/results' --plots '%s/plots'",
             dir, dir);
    int rc = run_capture(cmd, out, sizeof out, err, sizeof err);
    cr_assert_eq(rc, 0, "%s\n%s", out, err);
    char *svg = read_in("%s/plots/%s/exp-05.svg", "fixture");
    cr_assert(strstr(svg, "this run: premise not met (1.10x), claim not judged"),
              "exp-05.svg does not say the premise was not met");
    free(svg);
    svg = read_in("%s/plots/%s/exp-05-chain.svg", "fixture");
    cr_assert(strstr(svg, "this run: not measured (busy host) (1.05x)"), "exp-05-chain.svg");
    cr_assert_null(strstr(svg, "claim not judged"), "only a premise not met says so");
    free(svg);
}

Test(verdicts, a_bound_not_measured_judges_nothing)
{
    cr_expect_eq(rl_within(0.1, 0, NAN), RL_NOT_MEASURED);
    cr_expect_eq(rl_within(0.1, NAN, 1), RL_NOT_MEASURED);
    cr_expect_eq(rl_within(NAN, 0, 1), RL_NOT_MEASURED);
    cr_expect_eq(rl_within(0.1, 0, INFINITY), RL_HOLDS);
    cr_expect_eq(rl_within(2, 0, 1), RL_DOES_NOT_HOLD);
}
