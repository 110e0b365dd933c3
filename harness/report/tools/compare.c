/*
 * compare.c -- `rooflab compare --exp NN LABEL LABEL...`: the experiment's
 * charts with every run overlaid, and a table of every run's points with
 * their ratios to the first run, the base. A student's loop: edit a kernel
 * or add a variant, `make exp-NN LABEL=mine`,
 * `make compare EXP=NN RUNS="reference/<device> mine"`.
 *
 * Points are matched across runs by the experiment's compare_keys (from
 * the CSV header); the ratio is of its compare_value (or --value). The
 * table lists the union of the runs' points, so that a variant only one
 * run measured is listed too, with "-" where a run lacks the point.
 */
#include "tools.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *USAGE =
    "usage: rooflab compare --exp NN [--value COLUMN] [--out DIR] [--plots DIR]\n"
    "                       [--charts-file FILE] [--ratios-file FILE] LABEL LABEL...\n\n"
    "Overlays experiment NN's charts for every run (results/LABEL/exp-NN.csv), the first\n"
    "solid and the others dashed, into plots/compare/<labels>/, and prints every point of\n"
    "every run with its ratio to the first run, the base (for times: above 1 is slower\n"
    "than the base); \"-\" where a run lacks the point.\n\n"
    "--charts-file FILE: also writes what was drawn as key=value lines, for scripts:\n"
    "drawn=yes or no, a chart=PATH line per PNG drawn (each also as .pdf and .svg), and\n"
    "without charts why=REASON (gnuplot not found, gnuplot failed).\n"
    "--ratios-file FILE: also writes the table as a CSV, for scripts (rooflab query):\n"
    "a row per point and later run, the compare keys' columns, then run, base_value,\n"
    "run_value, ratio (empty where a run lacks the point); its header names the base\n"
    "run (base), every run (runs), the value compared (compare_value).\n";

enum { MAX_RUNS = 8 };

typedef struct run {
    const char *label;
    char csv[1024], name[320];
    rl_table *t;
} run;

static bool load_runs(const tool_opts *o, char **labels, int n, run *runs)
{
    for (int i = 0; i < n; i++) {
        char why[1200];
        runs[i].label = labels[i];
        snprintf(runs[i].csv, sizeof runs[i].csv, "%s/%s/exp-%s.csv", o->out, labels[i], o->exp);
        runs[i].t = rl_table_read(runs[i].csv, why, sizeof why);
        if (!runs[i].t) {
            fprintf(stderr, "rooflab compare: no results for label '%s': %s\n"
                            "  (run make exp-%s LABEL=%s first)\n",
                    labels[i], why, o->exp, labels[i]);
            return false;
        }
    }
    return true;
}

static const char *meta_or(const rl_table *t, const char *key, const char *fallback)
{
    const char *v = rl_table_meta(t, key);
    return v ? v : fallback;
}

/* Legend names: labels alone when every run is of one device and backend;
 * otherwise the label with its backend and device. Returns true if mixed. */
static bool name_runs(run *runs, int n)
{
    bool mixed = false;
    for (int i = 1; i < n; i++)
        mixed |= strcmp(meta_or(runs[i].t, "device", "?"), meta_or(runs[0].t, "device", "?")) ||
                 strcmp(meta_or(runs[i].t, "backend", "?"), meta_or(runs[0].t, "backend", "?"));
    for (int i = 0; i < n; i++) {
        if (mixed)
            snprintf(runs[i].name, sizeof runs[i].name, "%s (%s, %s)", runs[i].label,
                     meta_or(runs[i].t, "backend", "?"), meta_or(runs[i].t, "device", "?"));
        else
            snprintf(runs[i].name, sizeof runs[i].name, "%s", runs[i].label);
    }
    return mixed;
}

static bool has_columns(const run *runs, int n, const char **keys, int nkeys, const char *value)
{
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < nkeys; k++)
            if (rl_table_col(runs[i].t, keys[k]) < 0) {
                fprintf(stderr, "rooflab compare: %s has no column '%s'\n", runs[i].csv, keys[k]);
                return false;
            }
        if (rl_table_col(runs[i].t, value) < 0) {
            fprintf(stderr, "rooflab compare: %s has no column '%s'\n", runs[i].csv, value);
            return false;
        }
    }
    return true;
}

/* ---- the table: the union of the runs' rows ------------------------------ */

/* What a run's column of ratios came to, for the summary under the table. */
typedef struct ratio_stats {
    int matched, only_here, only_base;
    double log_sum, min, max;
    int min_at, max_at; /* indices into the table's rows */
} ratio_stats;

/* Run i's value on the table row tr: "" when run i has no row with its
 * keys, or left the value empty (a point it skipped). */
static const char *value_at(rl_table *const *t, int i, tool_row tr, const char **keys, int nkeys,
                            const char *value)
{
    int m = tool_row_in(t, i, tr, keys, nkeys);
    return m >= 0 ? rl_table_get(t[i], m, value) : "";
}

/* The union of the runs' rows by compare_keys (rows.c: the base run's
 * rows, then those only later runs have), less the rows no run has a
 * value for (a model row, a point every run skipped). Returns the count. */
static int union_rows(rl_table *const *t, int n, const char **keys, int nkeys, const char *value,
                      tool_row *rows)
{
    int all = tool_union_rows(t, n, keys, nkeys, rows), count = 0;
    for (int at = 0; at < all; at++) {
        bool has_value = false;
        for (int j = 0; j < n && !has_value; j++)
            has_value = *value_at(t, j, rows[at], keys, nkeys, value) != '\0';
        if (has_value)
            rows[count++] = rows[at];
    }
    return count;
}

/* A column is as wide as its heading, and at least 14 characters. */
static int width_of(const char *heading)
{
    int w = (int)strlen(heading);
    return w > 14 ? w : 14;
}

static void ratio_heading(const run *r, char *buf, size_t len)
{
    snprintf(buf, len, "%s/base", r->label);
}

static void print_key(const rl_table *t, int row, const char **keys, int nkeys)
{
    for (int k = 0; k < nkeys; k++)
        printf("%-*s ", k == nkeys - 1 ? 10 : 18, rl_table_get(t, row, keys[k]));
}

/* The headings: the keys, each run's value, each later run's ratio. */
static void print_headings(const run *runs, int n, const char **keys, int nkeys)
{
    char heading[400];
    for (int k = 0; k < nkeys; k++)
        printf("%-*s ", k == nkeys - 1 ? 10 : 18, keys[k]);
    for (int i = 0; i < n; i++)
        printf("%s%*s", i ? " " : "", width_of(runs[i].label), runs[i].label);
    for (int i = 1; i < n; i++) {
        ratio_heading(&runs[i], heading, sizeof heading);
        printf(" %*s", width_of(heading), heading);
    }
    printf("\n");
}

static void add_ratio(ratio_stats *s, double ratio, int at)
{
    if (s->matched == 0 || ratio < s->min)
        s->min = ratio, s->min_at = at;
    if (s->matched == 0 || ratio > s->max)
        s->max = ratio, s->max_at = at;
    s->matched++;
    s->log_sum += log(ratio);
}

/* One row: its keys, each run's value ("-" where the run lacks it), and
 * each later run's ratio to the base ("-" where either lacks it). */
static void print_row(const run *runs, rl_table *const *t, int n, const tool_row *rows, int at,
                      const char **keys, int nkeys, const char *value, ratio_stats *st)
{
    const char *v[MAX_RUNS];
    char heading[400];
    print_key(runs[rows[at].run].t, rows[at].row, keys, nkeys);
    for (int i = 0; i < n; i++) {
        v[i] = value_at(t, i, rows[at], keys, nkeys, value);
        printf("%s%*s", i ? " " : "", width_of(runs[i].label), *v[i] ? v[i] : "-");
    }
    for (int i = 1; i < n; i++) {
        ratio_heading(&runs[i], heading, sizeof heading);
        int w = width_of(heading);
        st[i].only_here += *v[i] && !*v[0];
        st[i].only_base += !*v[i] && *v[0];
        if (!*v[i] || !*v[0] || atof(v[0]) == 0) {
            printf(" %*s", w, "-");
            continue;
        }
        double ratio = atof(v[i]) / atof(v[0]);
        printf(" %*.3fx", w - 1, ratio);
        add_ratio(&st[i], ratio, at);
    }
    printf("\n");
}

/* Prints the table; returns its rows (malloc'd, *count of them) for the
 * summary, NULL when out of memory. */
static tool_row *print_table(const run *runs, int n, const char **keys, int nkeys,
                             const char *value, ratio_stats *st, int *count)
{
    rl_table *t[MAX_RUNS];
    int total = 0;
    for (int i = 0; i < n; i++)
        t[i] = runs[i].t, total += runs[i].t->nrows;
    tool_row *rows = malloc(((size_t)total + 1) * sizeof *rows);
    if (!rows)
        return NULL;
    *count = union_rows(t, n, keys, nkeys, value, rows);
    print_headings(runs, n, keys, nkeys);
    for (int at = 0; at < *count; at++)
        print_row(runs, t, n, rows, at, keys, nkeys, value, st);
    return rows;
}

/* Per later run: how its ratios came out, and the points only one of the
 * two has (no ratio: a variant one of them did not measure). */
static void print_summary(const run *runs, int n, const tool_row *rows, const char **keys,
                          int nkeys, const ratio_stats *st)
{
    printf("\n");
    for (int i = 1; i < n; i++) {
        const ratio_stats *s = &st[i];
        if (s->matched == 0) {
            printf("%s: no point in common with the base run, %s\n", runs[i].label, runs[0].label);
        } else {
            printf("%s vs %s: %d points matched, geometric mean ratio %.3f; lowest %.3f at ",
                   runs[i].label, runs[0].label, s->matched, exp(s->log_sum / s->matched), s->min);
            print_key(runs[rows[s->min_at].run].t, rows[s->min_at].row, keys, nkeys);
            printf("\n%*shighest %.3f at ", (int)strlen(runs[i].label) + 4, "", s->max);
            print_key(runs[rows[s->max_at].run].t, rows[s->max_at].row, keys, nkeys);
            printf("\n");
        }
        if (s->only_here || s->only_base)
            printf("%*s%d point%s only in %s, %d only in %s (no ratio: \"-\")\n",
                   (int)strlen(runs[i].label) + 4, "", s->only_here, s->only_here == 1 ? "" : "s",
                   runs[i].label, s->only_base, runs[0].label);
    }
}

/* ---- --ratios-file: the table as data ---------------------------------- */

static const char *const RATIO_COLUMNS[] = {"run", "base_value", "run_value", "ratio"};
enum { NRATIO_COLUMNS = 4 };

/* The header's columns: the compare keys, then RATIO_COLUMNS; NULL when a
 * key is named as one of those (its cells would be lost). */
static const char **ratio_columns(const char **keys, int nkeys, const char **names)
{
    for (int k = 0; k < nkeys; k++) {
        for (int c = 0; c < NRATIO_COLUMNS; c++)
            if (!strcmp(keys[k], RATIO_COLUMNS[c])) {
                fprintf(stderr, "rooflab compare: --ratios-file: a compare key is named '%s', "
                                "a column of its own\n", keys[k]);
                return NULL;
            }
        names[k] = keys[k];
    }
    for (int c = 0; c < NRATIO_COLUMNS; c++)
        names[nkeys + c] = RATIO_COLUMNS[c];
    names[nkeys + NRATIO_COLUMNS] = NULL;
    return names;
}

/* The rows the table printed, one per point and later run, written
 * through the CSV writer the experiments use. */
static int write_ratios_file(const char *path, const run *runs, int n, const tool_row *rows,
                             int count, const char **keys, int nkeys, const char *value)
{
    const char *names[TOOL_MAX_KEYS + NRATIO_COLUMNS + 1];
    if (!ratio_columns(keys, nkeys, names))
        return -1;
    rl_table *t[MAX_RUNS];
    strbuf labels = {0};
    for (int i = 0; i < n; i++) {
        t[i] = runs[i].t;
        sb_printf(&labels, "%s%s", i ? " " : "", runs[i].label);
    }
    rl_csv *csv = rl_csv_open(path, names);
    rl_csv_meta(csv, "experiment", "%s", meta_or(runs[0].t, "experiment", "?"));
    rl_csv_meta(csv, "compare_value", "%s", value);
    rl_csv_meta(csv, "compare_keys", "%s", meta_or(runs[0].t, "compare_keys", ""));
    rl_csv_meta(csv, "base", "%s", runs[0].label);
    rl_csv_meta(csv, "runs", "%s", labels.s);
    sb_free(&labels);
    for (int at = 0; at < count; at++) {
        const char *base = value_at(t, 0, rows[at], keys, nkeys, value);
        for (int i = 1; i < n; i++) {
            const char *v = value_at(t, i, rows[at], keys, nkeys, value);
            for (int k = 0; k < nkeys; k++)
                rl_csv_set_str(csv, keys[k], rl_table_get(t[rows[at].run], rows[at].row, keys[k]));
            rl_csv_set_str(csv, "run", runs[i].label);
            rl_csv_set_str(csv, "base_value", base);
            rl_csv_set_str(csv, "run_value", v);
            if (*base && *v && atof(base) != 0)
                rl_csv_set_num(csv, "ratio", atof(v) / atof(base));
            rl_csv_end_row(csv);
        }
    }
    return rl_csv_commit(csv);
}

static int draw(const tool_opts *o, run *runs, int n, bool mixed)
{
    const char *csvs[MAX_RUNS], *names[MAX_RUNS];
    char dir[1400] = "", slug[128], title[1024];
    size_t used = (size_t)snprintf(dir, sizeof dir, "%s/compare/", o->plots);
    for (int i = 0; i < n; i++) {
        csvs[i] = runs[i].csv;
        names[i] = runs[i].name;
        rl_slugify(runs[i].label, slug, sizeof slug);
        used += (size_t)snprintf(dir + used, sizeof dir - used, "%s%s", i ? "--" : "", slug);
    }
    snprintf(title, sizeof title, "comparing %d runs, %s solid, the others dashed%s", n,
             runs[0].label, mixed ? "; different devices or backends" : "");
    const char *slugname = meta_or(runs[0].t, "experiment", "");
    char later[1200];
    size_t at = (size_t)snprintf(later, sizeof later, "make compare EXP=%s RUNS=\"", o->exp);
    for (int i = 0; i < n && at < sizeof later; i++)
        at += (size_t)snprintf(later + at, sizeof later - at, "%s%s", i ? " " : "", runs[i].label);
    if (at < sizeof later)
        snprintf(later + at, sizeof later - at, "\"");
    return rl_draw(o->exp, slugname, csvs, names, n, dir, title, later);
}

/* --charts-file: what draw() drew, as key=value lines (the usage says
 * which): a script reads this, not the "charts" line printed for people. */
static int write_charts_file(const char *path, int draw_rc)
{
    const char *const *charts = rl_drawn_charts();
    strbuf b = {0};
    sb_printf(&b, "drawn=%s\n", charts[0] ? "yes" : "no");
    if (!charts[0])
        sb_printf(&b, "why=%s\n", draw_rc != 0                      ? "gnuplot failed"
                                  : !rl_gnuplot_charts.available() ? "gnuplot not found"
                                                                   : "the plot script drew none");
    for (int i = 0; charts[i]; i++)
        sb_printf(&b, "chart=%s\n", charts[i]);
    int rc = rl_write_file_atomic(path, b.s);
    if (rc != 0)
        fprintf(stderr, "rooflab compare: cannot write --charts-file %s\n", path);
    sb_free(&b);
    return rc;
}

int tool_compare(int argc, char **argv)
{
    tool_opts o = {0};
    int first = tool_parse(argc, argv, &o, USAGE);
    if (first < 0)
        return RL_EXIT_USAGE;
    int n = argc - first;
    if (!o.exp || n < 2 || n > MAX_RUNS) {
        fprintf(stderr, "rooflab compare: needs --exp NN and 2 to %d labels (see --help)\n", MAX_RUNS);
        return RL_EXIT_USAGE;
    }
    run runs[MAX_RUNS] = {0};
    int rc = RL_EXIT_USAGE;
    char keybuf[256];
    const char *keys[TOOL_MAX_KEYS];
    if (!load_runs(&o, argv + first, n, runs))
        goto out;
    snprintf(keybuf, sizeof keybuf, "%s", meta_or(runs[0].t, "compare_keys", ""));
    int nkeys = tool_split_keys(keybuf, keys);
    const char *value = o.value ? o.value : meta_or(runs[0].t, "compare_value", "time_us_median");
    if (nkeys == 0) {
        fprintf(stderr, "rooflab compare: %s names no compare_keys in its header\n", runs[0].csv);
        goto out;
    }
    if (!has_columns(runs, n, keys, nkeys, value))
        goto out;

    bool mixed = name_runs(runs, n);
    printf("== compare exp-%s (%s): %s, as a ratio to %s ==\n", o.exp,
           meta_or(runs[0].t, "experiment", "?"), value, runs[0].label);
    /* The first run is the base: every ratio is to it. */
    for (int i = 0; i < n; i++) {
        /* A run SIGTERM stopped ('# partial: ...'): its missing points are "-" below. */
        const char *partial = rl_table_meta(runs[i].t, "partial");
        printf("  %-4s  %-28s %s backend, %s, %s%s%s%.*s\n", i == 0 ? "base" : "", runs[i].label,
               meta_or(runs[i].t, "backend", "?"), meta_or(runs[i].t, "device", "?"),
               meta_or(runs[i].t, "date_utc", "?"),
               !strcmp(meta_or(runs[i].t, "quick", "no"), "yes") ? ", quick" : "",
               partial ? ", partial: " : "", partial ? (int)strcspn(partial, ";") : 0,
               partial ? partial : "");
    }
    if (mixed)
        printf("  note: different devices or backends: ratios compare machines, not only code\n");
    printf("\n");
    ratio_stats st[MAX_RUNS] = {0};
    int nrows = 0;
    tool_row *rows = print_table(runs, n, keys, nkeys, value, st, &nrows);
    if (!rows) {
        fprintf(stderr, "rooflab compare: out of memory\n");
        rc = RL_EXIT_FAILED;
        goto out;
    }
    print_summary(runs, n, rows, keys, nkeys, st);
    bool ratios_failed = o.ratios_file &&
                         write_ratios_file(o.ratios_file, runs, n, rows, nrows, keys, nkeys, value) != 0;
    free(rows);
    int drew = draw(&o, runs, n, mixed);
    rc = drew == 0 ? RL_EXIT_OK : RL_EXIT_FAILED;
    if (o.charts_file && write_charts_file(o.charts_file, drew) != 0)
        rc = RL_EXIT_FAILED;
    if (ratios_failed)
        rc = RL_EXIT_FAILED;
out:
    for (int i = 0; i < n && i < MAX_RUNS; i++)
        rl_table_free(runs[i].t);
    return rc;
}
