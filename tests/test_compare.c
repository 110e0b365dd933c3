/*
 * test_compare.c -- `rooflab compare` shows every run, not only the first:
 *   1. the ratio table lists the union of the runs' rows (by the CSV's
 *      compare_keys), "-" where a run lacks a row, and names its base; the
 *      same as a CSV for scripts (--ratios-file);
 *   2. each experiment's overlaid charts draw a variant that only the
 *      second run measured, named in the key for that run and not for the
 *      run without it: a checked-in reference run against a copy of it
 *      with one variant's rows repeated under a new name.
 */
#include "helpers.h"
#include "internal.h" /* rl_mkdirs */

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOOL RL_BUILD_DIR "/rooflab"
#define REFERENCE_RUN RL_SOURCE_ROOT "/results/reference/cpu-amd-epyc"

static char dir[512];
static char out[1 << 17], err[1 << 16];

static void setup(void) { make_temp_dir(dir, sizeof dir); }
static void teardown(void) { rm_tree(dir); }
TestSuite(compare, .init = setup, .fini = teardown, .timeout = 300);

/* ---- the ratio table ------------------------------------------------------- */

/* A run of experiment 05 as the table reads it: the header's compare keys
 * and value, and rows "op,variant,k,n,time_us_median". */
static void write_run(const char *label, const char *const *rows)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/results/%s", dir, label);
    cr_assert_eq(rl_mkdirs(path), 0, "cannot create %s", path);
    snprintf(path, sizeof path, "%s/results/%s/exp-05.csv", dir, label);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "cannot write %s", path);
    fprintf(f, "# experiment: 05-fusion\n# backend: cpu\n# device: test CPU\n"
               "# compare_keys: op,variant,k,n\n# compare_value: time_us_median\n"
               "op,variant,k,n,time_us_median\n");
    for (int i = 0; rows[i]; i++)
        fprintf(f, "%s\n", rows[i]);
    fclose(f);
}

/* The table's line for one variant, its words in words[] (the line is
 * copied into buf): how many words, 0 when no line names the variant. */
static int row_words(const char *variant, char *buf, size_t len, char **words, int max)
{
    for (const char *line = out; *line;) {
        size_t n = strcspn(line, "\n");
        snprintf(buf, len, "%.*s", (int)n, line);
        int count = 0;
        for (char *w = strtok(buf, " "); w && count < max; w = strtok(NULL, " "))
            words[count++] = w;
        if (count > 1 && !strcmp(words[1], variant))
            return count;
        line += n + (line[n] == '\n');
    }
    return 0;
}

/* Asserts the variant's line reads op, variant, k, n, then want[0..2]:
 * the base's value, the other run's, the ratio. */
static void assert_row(const char *variant, const char *const want[3])
{
    char buf[512], *words[16];
    int n = row_words(variant, buf, sizeof buf, words, 16);
    cr_assert_eq(n, 7, "no row of %s with 7 columns in the table:\n%s", variant, out);
    for (int i = 0; i < 3; i++)
        cr_assert_str_eq(words[4 + i], want[i], "%s, column %d: %s, not %s:\n%s", variant, 5 + i,
                         words[4 + i], want[i], out);
}

Test(compare, table_lists_every_runs_rows_with_a_dash_where_one_lacks_it)
{
    static const char *const ref[] = {"cos,one_op,1,1024,10", "cos,pair_fused,2,1024,20",
                                      "cos,pair_gone,2,1024,5", NULL};
    static const char *const mine[] = {"cos,pair_new,2,1024,15", "cos,pair_fused,2,1024,30",
                                       "cos,one_op,1,1024,11", NULL};
    write_run("ref", ref);
    write_run("mine", mine);
    /* The table is the subject here: without gnuplot on the PATH, compare
     * prints it, says the charts are not drawn, and exits 0 (the charts
     * would need every column of a real run; the tests below draw them). */
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "PATH=/nonexistent " TOOL " compare --exp 05 --out '%s/results' "
             "--plots '%s/plots' --charts-file '%s/charts' ref mine", dir, dir, dir);
    int rc = run_capture(cmd, out, sizeof out, err, sizeof err);
    cr_assert_eq(rc, 0, "%s\n%s", out, err);
    /* What was drawn, as data for scripts: nothing, and why. */
    char path[1024];
    snprintf(path, sizeof path, "%s/charts", dir);
    char *drawn = read_file(path, NULL);
    cr_assert_not_null(drawn, "no --charts-file written");
    cr_assert_str_eq(drawn, "drawn=no\nwhy=gnuplot not found\n");
    free(drawn);

    cr_assert(strstr(out, "as a ratio to ref ==\n  base  ref "), "the base is not named:\n%s", out);
    assert_row("one_op", (const char *const[]){"10", "11", "1.100x"});
    assert_row("pair_fused", (const char *const[]){"20", "30", "1.500x"});
    assert_row("pair_gone", (const char *const[]){"5", "-", "-"});
    assert_row("pair_new", (const char *const[]){"-", "15", "-"});
    /* The base's rows in its order, then the rows only the other run has. */
    const char *gone = strstr(out, "pair_gone"), *added = strstr(out, "pair_new");
    cr_assert(gone && added && gone < added, "the base's rows come first:\n%s", out);
    cr_assert(strstr(out, "mine vs ref: 2 points matched"), "%s", out);
    cr_assert(strstr(out, "1 point only in mine, 1 only in ref"), "%s", out);
}

/* The same table as data (--ratios-file): a CSV a script asks with rooflab
 * query, a row per point of the later run, empty where a run lacks it. */
Test(compare, the_ratios_file_holds_the_table_as_a_csv)
{
    static const char *const ref[] = {"cos,one_op,1,1024,10", "cos,pair_gone,2,1024,5", NULL};
    static const char *const mine[] = {"cos,pair_new,2,1024,15", "cos,one_op,1,1024,12.5", NULL};
    static const char *const third[] = {"cos,one_op,1,1024,20", NULL};
    write_run("ref", ref);
    write_run("mine", mine);
    write_run("third", third);
    char cmd[4096], ratios[600];
    snprintf(ratios, sizeof ratios, "%s/ratios.csv", dir);
    snprintf(cmd, sizeof cmd, "PATH=/nonexistent " TOOL " compare --exp 05 --out '%s/results' "
             "--plots '%s/plots' --ratios-file '%s' ref mine third", dir, dir, ratios);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 0, "%s\n%s", out, err);
    snprintf(cmd, sizeof cmd, TOOL " query '%s' columns variant,run,base_value,run_value,ratio "
             "--join '|'", ratios);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(out, "one_op|mine|10|12.5|1.25\n"
                          "one_op|third|10|20|2\n"
                          "pair_gone|mine|5||\n"
                          "pair_gone|third|5||\n"
                          "pair_new|mine||15|\n"
                          "pair_new|third|||\n");
    snprintf(cmd, sizeof cmd, TOOL " query '%s' meta base runs compare_value", ratios);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(out, "ref\nref mine third\ntime_us_median\n");
    snprintf(cmd, sizeof cmd, TOOL " query '%s' has-columns op,variant,k,n", ratios);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 0, "the keys' columns: %s", out);
}

/* ---- the overlaid charts ------------------------------------------------------- */

/* A variant copied under a new name, and what each chart must then say:
 * the new variant named for run mine (and not for run ref), and a series
 * of both runs still named. */
typedef struct overlay_case {
    const char *exp;     /* "05": exp-05.csv */
    const char *variant; /* its rows repeated as <variant>_new in run mine */
    struct {
        const char *chart, *text; /* the chart's SVG holds text */
    } expect[3];
} overlay_case;

/* The start and length of field f of a CSV line (quotes respected). */
static int field_span(const char *line, int f, int *len)
{
    int i = 0;
    for (int at = 0;; at++) {
        int start = i;
        bool quoted = false;
        while (line[i] && line[i] != '\n' && (quoted || line[i] != ','))
            quoted ^= line[i++] == '"';
        if (at == f) {
            *len = i - start;
            return start;
        }
        if (line[i] != ',')
            return -1;
        i++;
    }
}

static int column_of(const char *header, const char *name)
{
    int len;
    for (int f = 0; field_span(header, f, &len) >= 0; f++) {
        int start = field_span(header, f, &len);
        if ((int)strlen(name) == len && !strncmp(header + start, name, len))
            return f;
    }
    return -1;
}

/* Copies the reference run's CSV to dst, each row of the variant followed
 * by the same row as <variant>_new: a run that measured one more variant. */
static void copy_with_new_variant(const char *src, const char *dst, const char *variant)
{
    FILE *in = fopen(src, "r"), *o = fopen(dst, "w");
    cr_assert(in && o, "cannot copy %s to %s", src, dst);
    static char line[1 << 16];
    int col = -1, len;
    while (fgets(line, sizeof line, in)) {
        fputs(line, o);
        if (line[0] == '#')
            continue;
        if (col < 0) {
            col = column_of(line, "variant");
            cr_assert_geq(col, 0, "%s has no column variant", src);
            continue;
        }
        int start = field_span(line, col, &len);
        if (start >= 0 && (int)strlen(variant) == len && !strncmp(line + start, variant, len))
            fprintf(o, "%.*s%s_new%s", start, line, variant, line + start + len);
    }
    fclose(in);
    fclose(o);
}

static void check_overlay(const overlay_case *c)
{
    if (system("gnuplot --version >/dev/null 2>&1") != 0)
        cr_skip_test("gnuplot not found: no chart to check");
    char cmd[4096], csv[1024];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/results/ref' '%s/results/mine' && "
             "cp '%s/exp-%s.csv' '%s/verdicts.csv' '%s/results/ref/' && cp '%s/verdicts.csv' '%s/results/mine/'",
             dir, dir, REFERENCE_RUN, c->exp, REFERENCE_RUN, dir, REFERENCE_RUN, dir);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    snprintf(cmd, sizeof cmd, "%s/exp-%s.csv", REFERENCE_RUN, c->exp);
    snprintf(csv, sizeof csv, "%s/results/mine/exp-%s.csv", dir, c->exp);
    copy_with_new_variant(cmd, csv, c->variant);

    snprintf(cmd, sizeof cmd, TOOL " compare --exp %s --out '%s/results' --plots '%s/plots' "
             "--charts-file '%s/charts' ref mine", c->exp, dir, dir, dir);
    int rc = run_capture(cmd, out, sizeof out, err, sizeof err);
    cr_assert_eq(rc, 0, "%s\n%s", out, err);
    /* Every chart drawn is listed as data, the experiment's first one too. */
    char listed[1200];
    snprintf(listed, sizeof listed, "\nchart=%s/plots/compare/ref--mine/exp-%s.png\n", dir, c->exp);
    snprintf(csv, sizeof csv, "%s/charts", dir);
    char *drawn = read_file(csv, NULL);
    cr_assert(drawn && !strncmp(drawn, "drawn=yes\n", 10) && strstr(drawn, listed), "%s",
              drawn ? drawn : "no --charts-file");
    free(drawn);
    char added[128];
    snprintf(added, sizeof added, " %s_new ", c->variant);
    cr_assert(strstr(out, added), "the table does not list %s_new:\n%s", c->variant, out);
    for (int i = 0; i < 3 && c->expect[i].chart; i++) {
        char path[1024], wrong[256];
        snprintf(path, sizeof path, "%s/plots/compare/ref--mine/%s.svg", dir, c->expect[i].chart);
        char *svg = read_file(path, NULL);
        cr_assert_not_null(svg, "no chart %s", path);
        cr_assert(strstr(svg, c->expect[i].text), "%s does not say '%s'", path, c->expect[i].text);
        snprintf(wrong, sizeof wrong, "ref: %s", c->expect[i].text + strlen("mine: "));
        if (!strncmp(c->expect[i].text, "mine: ", 6))
            cr_assert_null(strstr(svg, wrong), "%s names the new variant for the run without it", path);
        free(svg);
    }
}

/* Experiment 03 is left out: its charts take minutes to draw on a busy
 * machine (its single-run charts are tested by test_charts.c). */
static const overlay_case CASES[] = {
    {"01", "arith", {{"exp-01", "arith_new: 1"}, {"exp-01", "arith: 1"}}},
    {"02", "gemv_fp16",
     {{"exp-02", "mine: 4096x14336, gemv_fp16_new"}, {"exp-02", "ref: 4096x14336, gemv_fp16"}}},
    {"04", "blas", {{"exp-04-vocab", "mine: blas_new (q1-q3)"}, {"exp-04-vocab", "ref: blas (q1-q3)"}}},
    {"05", "chain_fused",
     {{"exp-05", "mine: cos, chain_fused_new"},
      {"exp-05-chain", "mine: fused_new"},
      {"exp-05-chain", "ref: fused"}}},
    /* exp-06's chain charts name a variant once: the first run's by the
     * series alone, the new one by the run that has it. */
    {"06", "async",
     {{"exp-06", "mine: async_new"},
      {"exp-06", "async: a barrier per kernel (CUDA: K launches, one sync)"},
      {"exp-06-size", "mine: async_new"}}},
};

Test(compare, exp01_overlay_draws_a_variant_only_one_run_has) { check_overlay(&CASES[0]); }
Test(compare, exp02_overlay_draws_a_variant_only_one_run_has) { check_overlay(&CASES[1]); }
Test(compare, exp04_overlay_draws_a_variant_only_one_run_has) { check_overlay(&CASES[2]); }
Test(compare, exp05_overlay_draws_a_variant_only_one_run_has) { check_overlay(&CASES[3]); }
Test(compare, exp06_overlay_draws_a_variant_only_one_run_has) { check_overlay(&CASES[4]); }
