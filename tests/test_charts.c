/*
 * test_charts.c -- every chart draws its spread and its verdict from the
 * CSV, not from the script: each experiment's checked-in CPU reference run
 * is redrawn (--plot-only, no measurement) three ways:
 *   1. as it is: every chart is drawn and states this run's verdict;
 *   2. with its spread columns (q1/q3 of the time, a ratio's lo/hi) removed
 *      from the header: the charts fail, and the error names a column;
 *   3. with each spread column set to the value it spreads around (q1 = q3
 *      = the median): every chart's SVG differs from the one drawn from the
 *      real CSV, so the bars came from those columns. Drawing the real CSV
 *      twice gives the same SVG, so the difference is the bars'.
 */
#include "helpers.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REFERENCE_RUN RL_SOURCE_ROOT "/results/reference/cpu-amd-epyc"
#define MAX_CHARTS 4
#define MAX_SPREAD 6

/* A spread column and the column whose value it spreads around. */
typedef struct spread_column {
    const char *name, *center;
} spread_column;

typedef struct chart_case {
    const char *exp;                  /* "05": build/exp-05, exp-05.csv */
    const char *charts[MAX_CHARTS];   /* the charts the script draws */
    spread_column spread[MAX_SPREAD]; /* the columns their bars come from */
} chart_case;

#define TIME_QUARTILES {"time_us_q1", "time_us_median"}, {"time_us_q3", "time_us_median"}

static const chart_case CASES[] = {
    {"01",
     {"exp-01", "exp-01-duty", "exp-01-memory"},
     {{"util_window_min_pct", "util_pct"},
      {"util_window_max_pct", "util_pct"},
      {"work_fraction_lo", "work_fraction"},
      {"work_fraction_hi", "work_fraction"},
      {"duty_window_min_pct", "duty_measured_pct"},
      {"duty_window_max_pct", "duty_measured_pct"}}},
    {"02", {"exp-02", "exp-02-batch", "exp-02-util"}, {TIME_QUARTILES}},
    {"03", {"exp-03", "exp-03-bw", "exp-03-prefill"}, {TIME_QUARTILES}},
    {"04",
     {"exp-04", "exp-04-tflops", "exp-04-vocab"},
     {TIME_QUARTILES,
      {"speedup_vs_v50257_lo", "speedup_vs_v50257"},
      {"speedup_vs_v50257_hi", "speedup_vs_v50257"}}},
    {"05",
     {"exp-05", "exp-05-chain"},
     {TIME_QUARTILES,
      {"speedup_vs_unfused_lo", "speedup_vs_unfused"},
      {"speedup_vs_unfused_hi", "speedup_vs_unfused"}}},
    {"06",
     {"exp-06", "exp-06-size", "exp-06-doubling"},
     {TIME_QUARTILES, {"doubling_ratio_lo", "doubling_ratio"}, {"doubling_ratio_hi", "doubling_ratio"}}},
};

static char dir[512];
static char out[1 << 16], err[1 << 16];

static void setup(void) { make_temp_dir(dir, sizeof dir); }
static void teardown(void) { rm_tree(dir); }
TestSuite(charts, .init = setup, .fini = teardown, .timeout = 300);

/* ---- a CSV, field by field ------------------------------------------------ */

/* The fields of one line (quotes respected: a quoted field may hold
 * commas), as start offsets and lengths, the quotes included. */
static int split_fields(const char *line, int *start, int *len, int max)
{
    int n = 0, i = 0;
    while (n < max) {
        start[n] = i;
        bool quoted = false;
        while (line[i] && line[i] != '\n' && (quoted || line[i] != ',')) {
            if (line[i] == '"')
                quoted = !quoted;
            i++;
        }
        len[n] = i - start[n];
        n++;
        if (line[i] != ',')
            break;
        i++;
    }
    return n;
}

static int field_index(const char *header, const int *start, const int *len, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if ((int)strlen(name) == len[i] && !strncmp(header + start[i], name, len[i]))
            return i;
    return -1;
}

enum rewrite { REMOVE_SPREAD, COLLAPSE_SPREAD };

/* Copies src to dst, the '#' metadata untouched. REMOVE_SPREAD renames each
 * spread column in the header (no_<name>); COLLAPSE_SPREAD writes, on every
 * row, the center column's value into each spread column. */
static void rewrite_csv(const char *src, const char *dst, const chart_case *c, enum rewrite how)
{
    FILE *in = fopen(src, "r"), *o = fopen(dst, "w");
    cr_assert(in && o, "cannot copy %s to %s", src, dst);
    enum { MAXF = 128 };
    static char line[1 << 16], header[1 << 16];
    int hs[MAXF], hl[MAXF], nh = 0, spread_at[MAX_SPREAD], center_at[MAX_SPREAD];
    bool have_header = false;
    while (fgets(line, sizeof line, in)) {
        if (line[0] == '#') {
            fputs(line, o);
            continue;
        }
        int s[MAXF], l[MAXF], n = split_fields(line, s, l, MAXF);
        if (!have_header) {
            have_header = true;
            strcpy(header, line);
            nh = split_fields(header, hs, hl, MAXF);
            memcpy(s, hs, sizeof hs);
            memcpy(l, hl, sizeof hl);
            for (int k = 0; k < MAX_SPREAD && c->spread[k].name; k++) {
                spread_at[k] = field_index(header, hs, hl, nh, c->spread[k].name);
                center_at[k] = field_index(header, hs, hl, nh, c->spread[k].center);
                cr_assert(spread_at[k] >= 0 && center_at[k] >= 0, "%s has no column %s or %s", src,
                          c->spread[k].name, c->spread[k].center);
            }
        }
        bool is_header = line[0] && !strncmp(line, header, strlen(header));
        for (int f = 0; f < n; f++) {
            int from = f;
            bool rename = false;
            for (int k = 0; k < MAX_SPREAD && c->spread[k].name; k++)
                if (spread_at[k] == f) {
                    rename = is_header && how == REMOVE_SPREAD;
                    if (!is_header && how == COLLAPSE_SPREAD)
                        from = center_at[k];
                }
            fprintf(o, "%s%s%.*s", f ? "," : "", rename ? "no_" : "", l[from], line + s[from]);
        }
        fputc('\n', o);
    }
    fclose(in);
    fclose(o);
}

/* ---- drawing ---------------------------------------------------------------- */

/* Puts the reference run's CSV (rewritten, or as it is) and its verdicts
 * into DIR/<sub>/results/ref/ and draws the charts there: the exit status. */
static int draw(const chart_case *c, const char *sub, int how)
{
    char csv[1024], cmd[2048];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/%s/results/ref' && cp '%s/verdicts.csv' '%s/%s/results/ref/'",
             dir, sub, REFERENCE_RUN, dir, sub);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    snprintf(csv, sizeof csv, "%s/exp-%s.csv", REFERENCE_RUN, c->exp);
    snprintf(cmd, sizeof cmd, "%s/%s/results/ref/exp-%s.csv", dir, sub, c->exp);
    if (how < 0) {
        char cp[4200];
        snprintf(cp, sizeof cp, "cp '%s' '%s'", csv, cmd);
        cr_assert_eq(system(cp), 0, "%s", cp);
    } else {
        rewrite_csv(csv, cmd, c, (enum rewrite)how);
    }
    snprintf(cmd, sizeof cmd,
             "%s/exp-%s --plot-only --backend cpu --reference none --label ref --out '%s/%s/results' "
             "--plots '%s/%s/plots'",
             RL_BUILD_DIR, c->exp, dir, sub, dir, sub);
    return run_capture(cmd, out, sizeof out, err, sizeof err);
}

static char *svg_of(const char *sub, const char *chart)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s/plots/ref/%s.svg", dir, sub, chart);
    char *text = read_file(path, NULL);
    cr_assert_not_null(text, "no chart %s", path);
    return text;
}

static void check_charts(const chart_case *c)
{
    if (system("gnuplot --version >/dev/null 2>&1") != 0)
        cr_skip_test("gnuplot not found: no chart to check");
    int rc = draw(c, "real", -1);
    cr_assert_eq(rc, 0, "exp-%s: the reference run's charts are not drawn (exit %d):\n%s", c->exp, rc, err);
    int n = 0;
    while (n < MAX_CHARTS && c->charts[n])
        n++;
    char first[1024] = "", real_dir[700];
    snprintf(real_dir, sizeof real_dir, "%s/real", dir);
    cr_assert_eq(missing_charts(real_dir, "ref", c->charts, n, first, sizeof first), 0,
                 "%s is missing, empty or states no verdict", first);

    rc = draw(c, "again", -1);
    cr_assert_eq(rc, 0, "%s", err);
    rc = draw(c, "collapsed", COLLAPSE_SPREAD);
    cr_assert_eq(rc, 0, "exp-%s: charts without spread are not drawn (exit %d):\n%s", c->exp, rc, err);
    for (int i = 0; i < n; i++) {
        char *real = svg_of("real", c->charts[i]), *again = svg_of("again", c->charts[i]),
             *flat = svg_of("collapsed", c->charts[i]);
        cr_assert_str_eq(real, again, "%s: the same CSV drew two different SVGs", c->charts[i]);
        cr_assert(strcmp(real, flat) != 0,
                  "%s: collapsing its spread columns to their centers changed nothing: its bars "
                  "are not drawn from them", c->charts[i]);
        free(real);
        free(again);
        free(flat);
    }

    rc = draw(c, "removed", REMOVE_SPREAD);
    cr_assert_neq(rc, 0, "exp-%s: the charts were drawn from a CSV without its spread columns", c->exp);
    bool named = false;
    for (int k = 0; k < MAX_SPREAD && c->spread[k].name; k++)
        if (strstr(err, c->spread[k].name))
            named = true;
    cr_assert(named, "exp-%s: the failure names no spread column:\n%s", c->exp, err);
}

Test(charts, exp01_draws_its_spread_and_verdicts_from_the_csv) { check_charts(&CASES[0]); }
Test(charts, exp02_draws_its_spread_and_verdicts_from_the_csv) { check_charts(&CASES[1]); }
Test(charts, exp03_draws_its_spread_and_verdicts_from_the_csv) { check_charts(&CASES[2]); }
Test(charts, exp04_draws_its_spread_and_verdicts_from_the_csv) { check_charts(&CASES[3]); }
Test(charts, exp05_draws_its_spread_and_verdicts_from_the_csv) { check_charts(&CASES[4]); }
Test(charts, exp06_draws_its_spread_and_verdicts_from_the_csv) { check_charts(&CASES[5]); }

/* ---- which reference is overlaid ------------------------------------------- */

/* Copies results/reference/<from>/exp-01.csv and verdicts.csv into
 * DIR/results/<label>/. */
static void place_run(const char *from, const char *label)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "mkdir -p '%s/results/%s' && cp '%s/results/reference/%s/exp-01.csv' "
             "'%s/results/reference/%s/verdicts.csv' '%s/results/%s/'",
             dir, label, RL_SOURCE_ROOT, from, RL_SOURCE_ROOT, from, dir, label);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
}

static void redraw(const char *label)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s/exp-01 --plot-only --label %s --out '%s/results' --plots '%s/plots'",
             RL_BUILD_DIR, label, dir, dir);
    int rc = run_capture(cmd, out, sizeof out, err, sizeof err);
    cr_assert_eq(rc, 0, "%s failed (exit %d):\n%s", cmd, rc, err);
}

/* A GPU's results redrawn on this CPU host are overlaid with the GPU's
 * reference, never with this host's; a reference run is drawn alone, so
 * that its charts are the same whichever machine redraws them. */
Test(charts, the_overlay_is_the_reference_of_the_device_that_measured)
{
    if (system("gnuplot --version >/dev/null 2>&1") != 0)
        cr_skip_test("gnuplot not found: no chart to draw");
    char cmd[1024], host[128] = "";
    snprintf(cmd, sizeof cmd, "%s/exp-01 --backend cpu --print-label", RL_BUILD_DIR);
    cr_assert_eq(run_capture(cmd, host, sizeof host, err, sizeof err), 0, "%s", err);
    host[strcspn(host, "\n")] = 0;
    char host_ref[256];
    snprintf(host_ref, sizeof host_ref, "reference/%s", host);

    place_run("cpu-amd-epyc", host_ref); /* this host's reference */
    place_run("h200", "gpu");             /* a GPU's run, brought here */
    redraw("gpu");
    cr_assert_null(strstr(out, "overlaid"), "this host's reference was overlaid on a GPU's run:\n%s", out);

    place_run("h200", "reference/h200");
    redraw("gpu");
    cr_assert_not_null(strstr(out, "reference/h200/exp-01.csv, overlaid"),
                       "the GPU's own reference was not overlaid:\n%s", out);
    redraw("reference/h200");
    cr_assert_null(strstr(out, "overlaid"), "a reference run was drawn with an overlay:\n%s", out);
}
