/*
 * compare.c -- `rooflab compare --exp NN LABEL LABEL...`: the experiment's
 * charts with every run overlaid, and a table of per-point ratios against
 * the first run. A student's loop: edit a kernel, `make exp-NN LABEL=mine`,
 * `make compare EXP=NN RUNS="reference/<device> mine"`.
 *
 * Points are matched across runs by the experiment's compare_keys (from
 * the CSV header); the ratio is of its compare_value (or --value).
 */
#include "tools.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *USAGE =
    "usage: rooflab compare --exp NN [--value COLUMN] [--out DIR] [--plots DIR] LABEL LABEL...\n\n"
    "Overlays experiment NN's charts for every run (results/LABEL/exp-NN.csv), the first\n"
    "solid and the others dashed, into plots/compare/<labels>/, and prints each point's\n"
    "ratio to the first run (for times: above 1 is slower than the first run).\n";

enum { MAX_RUNS = 8, MAX_KEYS = 8 };

typedef struct run {
    const char *label;
    char csv[1024], name[320];
    rl_table *t;
} run;

/* Splits "op,variant,k,n" into keys (pointers into buf). */
static int split_keys(char *buf, const char **keys)
{
    int n = 0;
    for (char *tok = strtok(buf, ","); tok && n < MAX_KEYS; tok = strtok(NULL, ","))
        keys[n++] = tok;
    return n;
}

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

typedef struct ratio_stats {
    int matched;
    double log_sum, min, max;
    int min_row, max_row;
} ratio_stats;

static void print_key(const rl_table *t, int row, const char **keys, int nkeys)
{
    for (int k = 0; k < nkeys; k++)
        printf("%-*s ", k == nkeys - 1 ? 10 : 18, rl_table_get(t, row, keys[k]));
}

static void print_ratios(run *runs, int n, const char **keys, int nkeys, const char *value,
                         ratio_stats *st)
{
    for (int k = 0; k < nkeys; k++)
        printf("%-*s ", k == nkeys - 1 ? 10 : 18, keys[k]);
    printf("%14s", runs[0].label);
    for (int i = 1; i < n; i++)
        printf(" %14.14s", runs[i].label);
    printf("\n");
    const rl_table *base = runs[0].t;
    for (int r = 0; r < base->nrows; r++) {
        const char *b = rl_table_get(base, r, value);
        if (!*b)
            continue;
        print_key(base, r, keys, nkeys);
        printf("%14s", b);
        for (int i = 1; i < n; i++) {
            int m = rl_table_match(runs[i].t, base, r, keys, nkeys);
            const char *v = m >= 0 ? rl_table_get(runs[i].t, m, value) : "";
            if (!*v || atof(b) == 0) {
                printf(" %14s", "-");
                continue;
            }
            double ratio = atof(v) / atof(b);
            printf(" %13.3fx", ratio);
            ratio_stats *s = &st[i];
            if (s->matched == 0 || ratio < s->min)
                s->min = ratio, s->min_row = r;
            if (s->matched == 0 || ratio > s->max)
                s->max = ratio, s->max_row = r;
            s->matched++;
            s->log_sum += log(ratio);
        }
        printf("\n");
    }
}

static void print_summary(const run *runs, int n, const char **keys, int nkeys, const ratio_stats *st)
{
    printf("\n");
    for (int i = 1; i < n; i++) {
        if (st[i].matched == 0) {
            printf("%s: no point in common with %s\n", runs[i].label, runs[0].label);
            continue;
        }
        printf("%s vs %s: %d points matched, geometric mean ratio %.3f; lowest %.3f at ",
               runs[i].label, runs[0].label, st[i].matched, exp(st[i].log_sum / st[i].matched),
               st[i].min);
        print_key(runs[0].t, st[i].min_row, keys, nkeys);
        printf("\n%*shighest %.3f at ", (int)strlen(runs[i].label) + 4, "", st[i].max);
        print_key(runs[0].t, st[i].max_row, keys, nkeys);
        printf("\n");
    }
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
    const char *keys[MAX_KEYS];
    if (!load_runs(&o, argv + first, n, runs))
        goto out;
    snprintf(keybuf, sizeof keybuf, "%s", meta_or(runs[0].t, "compare_keys", ""));
    int nkeys = split_keys(keybuf, keys);
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
    for (int i = 0; i < n; i++)
        printf("  %d  %-28s %s backend, %s, %s%s\n", i + 1, runs[i].label,
               meta_or(runs[i].t, "backend", "?"), meta_or(runs[i].t, "device", "?"),
               meta_or(runs[i].t, "date_utc", "?"),
               !strcmp(meta_or(runs[i].t, "quick", "no"), "yes") ? ", quick" : "");
    if (mixed)
        printf("  note: different devices or backends: ratios compare machines, not only code\n");
    printf("\n");
    ratio_stats st[MAX_RUNS] = {0};
    print_ratios(runs, n, keys, nkeys, value, st);
    print_summary(runs, n, keys, nkeys, st);
    rc = draw(&o, runs, n, mixed) == 0 ? RL_EXIT_OK : RL_EXIT_FAILED;
out:
    for (int i = 0; i < n && i < MAX_RUNS; i++)
        rl_table_free(runs[i].t);
    return rc;
}
