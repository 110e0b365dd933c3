/*
 * test_workflow.c -- the student's and author's workflow end to end on the
 * CPU backend: two real quick runs under two labels, `rooflab compare` on
 * them (ratio table and overlaid charts), `rooflab summary` (summary.md),
 * and the paper built from a run (skipped without pdflatex). Also the
 * table reader everything downstream relies on.
 */
#include "helpers.h"
#include "rl_csv.h"
#include "rooflab.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXP05 RL_BUILD_DIR "/exp-05"
#define TOOL RL_BUILD_DIR "/rooflab"

static char dir[512];
static char out[1 << 17], err[1 << 16];

static void setup(void) { make_temp_dir(dir, sizeof dir); }
static void teardown(void) { rm_tree(dir); }

TestSuite(table, .init = setup, .fini = teardown);
TestSuite(workflow, .init = setup, .fini = teardown, .timeout = 600);

Test(table, reads_back_what_the_csv_writer_wrote)
{
    static const char *const cols[] = {"name", "n", "note", NULL};
    char path[1024], why[256];
    snprintf(path, sizeof path, "%s/t.csv", dir);
    rl_csv *c = rl_csv_open(path, cols);
    rl_csv_meta(c, "compare_keys", "name,n");
    rl_csv_set_str(c, "name", "a, \"quoted\"");
    rl_csv_set_int(c, "n", 7);
    rl_csv_end_row(c);
    rl_csv_set_str(c, "name", "b");
    rl_csv_end_row(c);
    rl_csv_commit(c);

    rl_table *t = rl_table_read(path, why, sizeof why);
    cr_assert_not_null(t, "%s", why);
    cr_assert_eq(t->ncols, 3);
    cr_assert_eq(t->nrows, 2);
    cr_assert_str_eq(rl_table_get(t, 0, "name"), "a, \"quoted\"");
    cr_assert_str_eq(rl_table_get(t, 0, "n"), "7");
    cr_assert_str_eq(rl_table_get(t, 1, "n"), "", "empty cells read as empty");
    cr_assert_str_eq(rl_table_get(t, 0, "no_such_column"), "");
    cr_assert_str_eq(rl_table_meta(t, "compare_keys"), "name,n");
    cr_assert_null(rl_table_meta(t, "absent"));
    const char *keys[] = {"name", "n"};
    cr_assert_eq(rl_table_match(t, t, 1, keys, 2), 1);
    rl_table_free(t);
}

Test(table, malformed_and_missing_files_are_errors_with_a_reason)
{
    char path[1024], why[256] = "";
    snprintf(path, sizeof path, "%s/absent.csv", dir);
    cr_assert_null(rl_table_read(path, why, sizeof why));
    cr_assert(strstr(why, "absent.csv"), "%s", why);
    snprintf(path, sizeof path, "%s/bad.csv", dir);
    FILE *f = fopen(path, "w");
    fputs("# k: v\na,b\n1,2\n3\n", f);
    fclose(f);
    cr_assert_null(rl_table_read(path, why, sizeof why));
    cr_assert(strstr(why, "row 2"), "%s", why);
}

static int run(const char *fmt, const char *arg)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, fmt, dir, dir, arg);
    return run_capture(cmd, out, sizeof out, err, sizeof err);
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

Test(workflow, two_runs_compare_summary_and_paper)
{
    const char *exp = EXP05 " --out '%s/results' --plots '%s/plots' --quick --backend cpu "
                            "--ceilings " TEST_CEILINGS " --max-bytes 64Mi --op affine "
                            "--variant 1,2,3 %s";
    measure_lock();
    cr_assert_eq(run(exp, "--label base"), 0, "%s", err);
    cr_assert_eq(run(exp, "--label mine --seed 2"), 0, "%s", err);
    measure_unlock();

    /* compare: a ratio per point against the first run, and overlaid charts */
    const char *cmp = TOOL " compare --exp 05 --out '%s/results' --plots '%s/plots' %s";
    cr_assert_eq(run(cmp, "base mine"), 0, "%s\n%s", out, err);
    cr_assert(strstr(out, "== compare exp-05 (05-fusion): time_us_median, as a ratio to base =="),
              "%s", out);
    cr_assert(strstr(out, "mine vs base: 6 points matched, geometric mean ratio"), "%s", out);
    cr_assert_eq(count(out, "x\n"), 6, "one ratio per point: %s", out);
    char path[1024];
    snprintf(path, sizeof path, "%s/plots/compare/base--mine/exp-05.png", dir);
    cr_assert_gt(file_size(path), 1000, "overlaid chart at %s", path);
    snprintf(path, sizeof path, "%s/plots/compare/base--mine/exp-05-chain.pdf", dir);
    cr_assert_gt(file_size(path), 1000);
    cr_assert_eq(run(cmp, "base nobody"), RL_EXIT_USAGE);
    cr_assert(strstr(err, "no results for label 'nobody'"), "%s", err);

    /* summary: every verdict of the label, printed and in summary.md */
    const char *sum = TOOL " summary --out '%s/results' --plots '%s/plots' --label %s";
    cr_assert_eq(run(sum, "mine"), 0, "%s", err);
    cr_assert(strstr(out, "2 hold") || strstr(out, "1 hold") || strstr(out, "0 hold"), "%s", out);
    snprintf(path, sizeof path, "%s/results/mine/summary.md", dir);
    char *md = read_file(path, NULL);
    cr_assert_not_null(md);
    cr_assert(strstr(md, "## 05-fusion"), "%s", md);
    cr_assert_eq(count(md, "| fused"), 2, "a row per verdict: %s", md);
    free(md);

    /* the paper, from the second run */
    if (system("command -v pdflatex >/dev/null 2>&1 && kpsewhich lmodern.sty >/dev/null 2>&1") != 0)
        cr_skip_test("pdflatex or lmodern is not installed: the paper was not built "
                     "(apt-get install texlive-latex-base texlive-latex-recommended lmodern)");
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "ROOFLAB=" TOOL " %s/paper/build.sh mine '%s/results' '%s/plots' '%s/paper'",
             RL_SOURCE_ROOT, dir, dir, dir);
    int rc = run_capture(cmd, out, sizeof out, err, sizeof err);
    cr_assert_eq(rc, 0, "%s\n%s", out, err);
    snprintf(path, sizeof path, "%s/paper/paper.pdf", dir);
    char *pdf = read_file(path, NULL);
    cr_assert(pdf && !strncmp(pdf, "%PDF", 4), "a PDF at %s", path);
    free(pdf);
    snprintf(path, sizeof path, "%s/paper/generated/exp-05.tex", dir);
    char *tex = read_file(path, NULL);
    int figures = count(tex, "\\begin{figure}");
    cr_assert_geq(figures, 1, "the experiment's charts: %s", tex);
    cr_assert_eq(count(tex, "\\includegraphics"), figures, "one chart per figure, never two a row");
    cr_assert_eq(count(tex, "% verdict: "), 2, "a table row per verdict: %s", tex);
    cr_assert(strstr(tex, "\\paragraph{On this run.}") && strstr(tex, "at commit"),
              "a generated On this run paragraph with the run's commit: %s", tex);
    cr_assert(strstr(tex, "Of its 2 verdicts"), "the verdicts counted in words: %s", tex);
    /* One ceiling throughout: the words the section gives for the ceiling
     * its rows used are those of the appendix's table. */
    const char *ceiling = strstr(tex, "Bandwidth ceiling, ");
    cr_assert_not_null(ceiling, "%s", tex);
    ceiling = strstr(ceiling, ": ") + 2;
    char phrase[512];
    snprintf(phrase, sizeof phrase, "%.*s", (int)(strstr(ceiling, "; matrix") - ceiling), ceiling);
    snprintf(path, sizeof path, "%s/paper/generated/ceilings.tex", dir);
    char *ceilings = read_file(path, NULL);
    cr_assert(ceilings && strstr(ceilings, phrase), "'%s' in the appendix: %s", phrase, ceilings);
    free(ceilings);
    free(tex);
    /* Limitations, from what exists: no reference runs under this --out */
    snprintf(path, sizeof path, "%s/paper/generated/limitations.tex", dir);
    char *lim = read_file(path, NULL);
    cr_assert(lim && strstr(lim, "no GPU run exists for experiment 05"), "%s", lim);
    cr_assert(strstr(lim, "\\label{tab:noise}") && strstr(lim, "\\paragraph{Ceilings.}"), "%s", lim);
    free(lim);
    snprintf(path, sizeof path, "%s/paper/generated/exp-02.tex", dir);
    cr_assert_not(file_exists(path), "no figure for an experiment that has no run");
    snprintf(path, sizeof path, "%s/paper/paper.log", dir);
    char *log = read_file(path, NULL);
    cr_assert(strstr(log, "exp-05.pdf>") || strstr(log, "exp-05.pdf"), "the chart went in");
    cr_assert(strstr(log, "generated/limitations.tex"), "the Limitations section went in");
    /* Nothing runs off the page: no box more than a hair too wide. */
    for (const char *o = strstr(log, "Overfull \\hbox ("); o; o = strstr(o + 1, "Overfull \\hbox ("))
        cr_assert_lt(atof(o + strlen("Overfull \\hbox (")), 5.0, "%.120s", o);
    free(log);
}

/* The Results section of each experiment's README, and the run times of
 * its lab sheet, are generated from the checked-in reference runs (make
 * readme-tables): a README that says something else than its CSVs fails
 * here. */
Test(table, readme_results_are_the_reference_runs)
{
    char cmd[1024], rout[4096], rerr[8192];
    snprintf(cmd, sizeof cmd, "ROOFLAB='%s/rooflab' '%s/harness/report/readme-tables.sh' --check", RL_BUILD_DIR,
             RL_SOURCE_ROOT);
    int rc = run_capture(cmd, rout, sizeof rout, rerr, sizeof rerr);
    cr_assert_eq(rc, 0, "stale README results (run make readme-tables):\n%s", rerr);
}

/* readme-tables.sh in a copy of the tree it reads (the script and the
 * READMEs copied, results/ and the build linked), so that a test may spoil
 * a README without touching the real one. Returns --check's exit status. */
static int check_readme_copy(const char *spoil, char *rerr, size_t cap)
{
    char cmd[4096], rout[4096];
    snprintf(cmd, sizeof cmd,
             "set -e; cd '%s'; mkdir -p harness/report; cp '%s/harness/report/readme-tables.sh' harness/report/;"
             " ln -sfn '%s/results' results; ln -sfn '%s' build;"
             " for d in '%s'/experiments/*/; do e=experiments/$(basename \"$d\");"
             " mkdir -p \"$e\"; cp \"$d/README.md\" \"$e/\"; done; %s;"
             " set +e; harness/report/readme-tables.sh --check",
             dir, RL_SOURCE_ROOT, RL_SOURCE_ROOT, RL_BUILD_DIR, RL_SOURCE_ROOT, spoil);
    return run_capture(cmd, rout, sizeof rout, rerr, cap);
}

/* A lab sheet's time is checked like the Results tables: one typed by hand
 * (or left from an older run) fails, and so does a README whose markers
 * are gone, since nothing would then keep its times. */
Test(table, readme_lab_times_are_the_reference_runs)
{
    char rerr[8192];
    cr_assert_eq(check_readme_copy("true", rerr, sizeof rerr), 0, "the copy agrees:\n%s", rerr);

    int rc = check_readme_copy("sed -i '/<!-- lab-times/,/<!-- \\/lab-times/ s/[*][*][0-9]* s/**1 s/'"
                               " experiments/04-waves/README.md",
                               rerr, sizeof rerr);
    cr_assert_eq(rc, 1, "a hand-typed time is stale:\n%s", rerr);
    cr_assert(strstr(rerr, "04-waves/README.md"), "names the README: %s", rerr);

    rc = check_readme_copy("sed -i '/lab-times/d' experiments/05-fusion/README.md", rerr, sizeof rerr);
    cr_assert_eq(rc, 1, "a README without its markers fails:\n%s", rerr);
    cr_assert(strstr(rerr, "no lab-times markers"), "says why: %s", rerr);
}
