/*
 * stability.c -- `rooflab stability --exp NN LABEL LABEL...`: runs of one
 * experiment repeated back to back (make stability), side by side, so that
 * a verdict that flips with the minute shows before anyone believes it
 * (issue 25). Two parts:
 *
 *   verdicts  each verdict id with its kind and measured value in every
 *             run, and "same in k of N": k runs gave its most common kind;
 *   spread    each measured point (matched across runs by compare_keys,
 *             rows.c, as compare matches them) and each column verdicts
 *             are judged on: min, max, max - min, and for times and rates
 *             (max - min) / min. An MBU or MFU whose runs are not all
 *             within +-0.05 (+-5 points) of one value (max - min over
 *             0.10, over 10 points) is flagged: !! where that roof is the
 *             one the point is nearest (its larger utilization, the one
 *             its roofline bounds it by) in some run, ~ where it is the
 *             other one in every run. A memory-bound point's MFU moves
 *             with DRAM, not with the compute roof, and the other way
 *             round.
 *
 * Printed, and written the same into results/PREFIX/stability.md (a text
 * block, under 100 columns, for an issue note). It reports: exit 0 also
 * when values moved.
 */
#include "tools.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *USAGE =
    "usage: rooflab stability --exp NN [--prefix P] [--out DIR] LABEL LABEL...\n\n"
    "Reads DIR/LABEL/verdicts.csv and DIR/LABEL/exp-NN.csv of every run and prints, for\n"
    "experiment NN: each verdict in each run with its measured value and \"same in k of\n"
    "N\" (k runs gave its most common kind); then, for each point (matched by the CSV's\n"
    "compare_keys), the spread of each column verdicts rest on (time_us_median, gbps,\n"
    "tflops, tokens_per_s, the compare_value; mbu and mfu, the latter in points): min,\n"
    "max, max - min and, for times and rates, (max - min) / min. An MBU not within\n"
    "+-0.05 of one value across the runs (max - min > 0.10), or an MFU not within +-5\n"
    "points, is flagged: !! where it is the point's larger utilization (its roofline\n"
    "bound) in some run, ~ where the other one is in every run. The same goes to\n"
    "DIR/P/stability.md, P by\n"
    "default the labels' common folder (make stability: stability/exp-NN).\n"
    "Exit codes: 0 reported (also when values moved), 1 a run's file is missing or\n"
    "unreadable (named), or the report cannot be written, 2 bad usage.\n";

enum { MAX_RUNS = 16, MAX_COLUMNS = 8, KEY_WIDTH_MAX = 20 };
/* An issue note's width, and what the spread table takes beside a
 * point's keys (column name, min, max, max-min, rel, runs, flag). */
enum { LINE_WIDTH = 100, SPREAD_WIDTH = 61 };

/* The bands issue 25 asks for: every run within +-0.05 of one MBU and
 * within +-5 points of one MFU, that is a max - min of at most twice
 * that. Beyond them a verdict on MBU or MFU can flip between two runs of
 * the same code. */
static const double MBU_BAND = 0.05, MFU_BAND_POINTS = 5.0;

typedef struct srun {
    const char *label;
    char csv_path[1024], verdicts_path[1024];
    rl_table *csv, *verdicts;
} srun;

static const char *meta_or(const rl_table *t, const char *key, const char *fallback)
{
    const char *v = rl_table_meta(t, key);
    return v && *v ? v : fallback;
}

/* Both files of a run, or false after naming the one that is missing. */
static bool load(const tool_opts *o, srun *r)
{
    char why[1400];
    snprintf(r->csv_path, sizeof r->csv_path, "%s/%s/exp-%s.csv", o->out, r->label, o->exp);
    snprintf(r->verdicts_path, sizeof r->verdicts_path, "%s/%s/verdicts.csv", o->out, r->label);
    r->verdicts = rl_table_read(r->verdicts_path, why, sizeof why);
    if (r->verdicts)
        r->csv = rl_table_read(r->csv_path, why, sizeof why);
    if (!r->verdicts || !r->csv) {
        fprintf(stderr, "rooflab stability: run '%s': %s\n", r->label, why);
        return false;
    }
    return true;
}

/* Whether verdict row v of run r is of the experiment and backend its CSV
 * ran (verdicts.csv holds every experiment of the label). */
static bool is_of(const srun *r, int v, const char *exp)
{
    const char *slug = rl_table_meta(r->csv, "experiment");
    const char *backend = meta_or(r->csv, "backend", "");
    const char *e = rl_table_get(r->verdicts, v, "experiment");
    bool same_exp = slug ? !strcmp(e, slug) : !strncmp(e, exp, 2) && e[2] == '-';
    return same_exp && (!*backend || !strcmp(rl_table_get(r->verdicts, v, "backend"), backend));
}

/* Run r's verdict row of id, or -1. */
static int verdict_row(const srun *r, const char *id, const char *exp)
{
    for (int v = 0; v < r->verdicts->nrows; v++)
        if (is_of(r, v, exp) && !strcmp(rl_table_get(r->verdicts, v, "id"), id))
            return v;
    return -1;
}

/* Ends a line without the spaces its padding left at its end. */
static void end_line(strbuf *b)
{
    while (b->len > 0 && b->s[b->len - 1] == ' ')
        b->s[--b->len] = '\0';
    sb_printf(b, "\n");
}

/* ---- the runs ------------------------------------------------------------- */

static void heading(strbuf *b, const srun *runs, int n, const char *exp)
{
    const rl_table *c = runs[0].csv;
    sb_printf(b, "== stability exp-%s (%s): %d runs, %s backend, %s ==\n", exp,
              meta_or(c, "experiment", "?"), n, meta_or(c, "backend", "?"),
              meta_or(c, "device", "?"));
    for (int i = 0; i < n; i++) {
        const rl_table *t = runs[i].csv;
        /* The commit's hash alone: its notes ("(dirty)", ...) would run
         * past the width of an issue note. */
        const char *commit = meta_or(t, "git_commit", "?");
        size_t hash = strcspn(commit, " ");
        sb_printf(b, "  run %-2d %-28s %s, %s, %s s, commit %.*s\n", i + 1, runs[i].label,
                  meta_or(t, "date_utc", "no date"), meta_or(t, "mode", "?"),
                  meta_or(t, "duration_s", "?"), (int)(hash < 12 ? hash : 12), commit);
        /* MBU and MFU are fractions of each run's own ceilings: a ceiling
         * measured lower moves them with no kernel faster. */
        if (rl_table_meta(t, "ceiling_gbps"))
            sb_printf(b, "         ceilings %.4g GB/s, %.4g TFLOP/s\n",
                      atof(meta_or(t, "ceiling_gbps", "")), atof(meta_or(t, "ceiling_tflops", "nan")));
        /* A run that found the host busy (make stability SPIN=1, another
         * job) says so: its first clause, the CPUs taken. */
        const char *busy = rl_table_meta(t, "host_busy_warning");
        if (busy)
            sb_printf(b, "         %.*s\n", (int)strcspn(busy, ":"), busy);
    }
}

/* ---- verdicts: each id in every run ------------------------------------------ */

/* Every verdict id of the experiment, the first run's in its order, then
 * any only later runs gave (pointers into the tables). Returns how many. */
static int verdict_ids(const srun *runs, int n, const char *exp, const char **ids, int max)
{
    int count = 0;
    for (int i = 0; i < n; i++)
        for (int v = 0; v < runs[i].verdicts->nrows && count < max; v++) {
            if (!is_of(&runs[i], v, exp))
                continue;
            const char *id = rl_table_get(runs[i].verdicts, v, "id");
            bool seen = false;
            for (int k = 0; k < count && !seen; k++)
                seen = !strcmp(ids[k], id);
            if (!seen)
                ids[count++] = id;
        }
    return count;
}

/* How many runs gave the id's most common kind (a run without the id
 * counts for none). */
static int same_in(const int *kind, int n)
{
    int best = 0;
    for (int i = 0; i < n; i++) {
        int k = 0;
        for (int j = 0; j < n; j++)
            k += kind[i] >= 0 && kind[j] == kind[i];
        best = k > best ? k : best;
    }
    return best;
}

/* Whether one run held the claim and another did not: a verdict turned
 * over, not degraded. */
static bool turned_over(const int *kind, int n)
{
    bool holds = false, fails = false;
    for (int i = 0; i < n; i++) {
        holds |= kind[i] == (int)RL_HOLDS;
        fails |= kind[i] == (int)RL_DOES_NOT_HOLD;
    }
    return holds && fails;
}

static void verdicts_part(strbuf *b, const srun *runs, int n, const char *exp)
{
    int total = 0;
    for (int i = 0; i < n; i++)
        total += runs[i].verdicts->nrows;
    const char **ids = malloc(((size_t)total + 1) * sizeof *ids);
    if (!ids)
        rl_die(RL_EXIT_FAILED, "out of memory");
    int nids = verdict_ids(runs, n, exp, ids, total);
    sb_printf(b, "\nverdicts: each run's verdict and measured value; same in k of N: k runs gave "
                 "its\nmost common kind (holds, does not hold, premise not met, not measured)\n");
    strbuf flipped = {0}, opposites = {0};
    int steady = 0;
    for (int k = 0; k < nids; k++) {
        int kind[MAX_RUNS], row[MAX_RUNS];
        for (int i = 0; i < n; i++) {
            row[i] = verdict_row(&runs[i], ids[k], exp);
            kind[i] = row[i] < 0 ? -1
                                 : (int)rl_verdict_kind(rl_table_get(runs[i].verdicts, row[i], "verdict"));
        }
        int same = same_in(kind, n);
        bool opposite = turned_over(kind, n);
        sb_printf(b, "  %-46s same in %d of %d%s\n", ids[k], same, n,
                  opposite ? "  << OPPOSITE: holds in one run, does not hold in another"
                  : same < n ? "  << flips" : "");
        if (opposite)
            sb_printf(&opposites, "%s%s", opposites.s ? ", " : "", ids[k]);
        for (int i = 0; i < n; i++) {
            if (row[i] < 0) {
                sb_printf(b, "    %-2d - (no such verdict in this run)\n", i + 1);
                continue;
            }
            const rl_table *v = runs[i].verdicts;
            sb_printf(b, "    %-2d %-24s %s", i + 1, rl_table_get(v, row[i], "verdict"),
                      rl_table_get(v, row[i], "measured"));
            end_line(b);
        }
        if (same == n)
            steady++;
        else
            sb_printf(&flipped, "%s%s", flipped.s ? ", " : "", ids[k]);
    }
    if (nids == 0)
        sb_printf(b, "  (no verdict of this experiment in the runs' verdicts.csv)\n");
    else
        sb_printf(b, "  %d of %d verdicts the same in every run%s%s\n", steady, nids,
                  flipped.s ? "; not: " : "", flipped.s ? flipped.s : "");
    /* A verdict may degrade between runs (a budget's shorter window: "not
     * measured"), never turn into its opposite: that is said apart. */
    if (nids)
        sb_printf(b, "  opposite verdicts (holds in one run, does not hold in another): %s\n",
                  opposites.s ? opposites.s : "none");
    sb_free(&flipped);
    sb_free(&opposites);
    free(ids);
}

/* ---- spread: each point's columns across the runs ------------------------------ */

/* The columns verdicts are judged on, those any run has: the
 * experiment's compare_value first (exp-01's util_pct), then times,
 * rates and the utilizations. */
static int spread_columns(const srun *runs, int n, const char **cols)
{
    const char *want[] = {meta_or(runs[0].csv, "compare_value", "time_us_median"),
                          "time_us_median", "gbps", "tflops", "tokens_per_s", "mbu", "mfu"};
    int count = 0;
    for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
        bool dup = false, present = false;
        for (int c = 0; c < count; c++)
            dup |= !strcmp(cols[c], want[w]);
        for (int i = 0; i < n; i++)
            present |= rl_table_col(runs[i].csv, want[w]) >= 0;
        if (!dup && present && count < MAX_COLUMNS)
            cols[count++] = want[w];
    }
    return count;
}

/* What one column of one point came to across the runs. */
typedef struct spread {
    int count; /* runs with a value */
    double min, max;
} spread;

static spread spread_of(rl_table *const *t, int n, tool_row p, const char *const *keys, int nkeys,
                        const char *col)
{
    spread s = {0, NAN, NAN};
    double scale = !strcmp(col, "mfu") ? 100.0 : 1.0; /* MFU in points */
    for (int i = 0; i < n; i++) {
        int r = tool_row_in(t, i, p, keys, nkeys);
        double x = r >= 0 ? rl_table_num(t[i], r, col) * scale : NAN;
        if (isnan(x))
            continue;
        if (s.count == 0 || x < s.min)
            s.min = x;
        if (s.count == 0 || x > s.max)
            s.max = x;
        s.count++;
    }
    return s;
}

/* Whether col (mbu or mfu) is, in some run, the point's larger
 * utilization: the roof its roofline bounds it by (attainable = min(P,
 * AI B), so achieved / attainable = max(MFU, MBU)). A point with only one
 * of the two is bound by that one. */
static bool binds_in_some_run(rl_table *const *t, int n, tool_row p, const char *const *keys,
                              int nkeys, const char *col)
{
    const char *other = !strcmp(col, "mbu") ? "mfu" : "mbu";
    for (int i = 0; i < n; i++) {
        int r = tool_row_in(t, i, p, keys, nkeys);
        if (r < 0)
            continue;
        double mine = rl_table_num(t[i], r, col), theirs = rl_table_num(t[i], r, other);
        if (!isnan(mine) && (isnan(theirs) || mine >= theirs))
            return true;
    }
    return false;
}

/* The flag of a column's spread, "" within its band (the line's column
 * name says which band); "!!" where that roof bounds the point in some
 * run, " ~" where the other roof does in every run. */
static const char *flag_of(const char *col, double range, bool binds)
{
    bool over = (!strcmp(col, "mbu") && range > 2 * MBU_BAND) ||
                (!strcmp(col, "mfu") && range > 2 * MFU_BAND_POINTS);
    return !over ? "" : binds ? " !!" : " ~";
}

/* Whether a column is a utilization, whose spread is read as it is (MBU
 * as a fraction, MFU in points), not relative to its value. */
static bool is_utilization(const char *col) { return !strcmp(col, "mbu") || !strcmp(col, "mfu"); }

/* A cell cut to the width of its column, so that a long key keeps the
 * table within 100 columns ('~' marks the cut). */
static void key_cell(strbuf *b, const char *s, int width)
{
    if ((int)strlen(s) <= width)
        sb_printf(b, "%-*s ", width, s);
    else
        sb_printf(b, "%.*s~ ", width - 1, s);
}

/* The point's keys as "op cos, variant pair_fused, ...". */
static void key_words(strbuf *b, const rl_table *t, int row, const char *const *keys, int nkeys)
{
    for (int k = 0; k < nkeys; k++)
        sb_printf(b, "%s%s %s", k ? ", " : "", keys[k], rl_table_get(t, row, keys[k]));
}

/* The largest spread of one column, for the lines under the table. */
typedef struct worst {
    double value;
    int at, flagged;
} worst;

/* (max - min) / min of a column of one point across the runs; NaN where
 * a run lacks it. */
static double relative_spread(rl_table *const *t, int n, tool_row p, const char *const *keys,
                              int nkeys, const char *col)
{
    spread s = spread_of(t, n, p, keys, nkeys, col);
    return s.count == n && s.min > 0 ? (s.max - s.min) / s.min : NAN;
}

/* Beside a flagged utilization, what moved: the point's rate or its roof
 * (the group probe's median), each as (max - min) / min across the runs.
 * A roof that moves under a point that does not says the point is bound
 * by something else; both moving alike, a pairing's noise. */
static void what_moved(strbuf *b, rl_table *const *t, int n, tool_row p, const char *const *keys,
                       int nkeys, const char *col)
{
    bool mbu = !strcmp(col, "mbu");
    double point = relative_spread(t, n, p, keys, nkeys, mbu ? "gbps" : "tflops");
    double roof = relative_spread(t, n, p, keys, nkeys, mbu ? "group_roof_gbps" : "group_roof_tflops");
    if (!isnan(point) && !isnan(roof))
        sb_printf(b, " roof %.0f%% pt %.0f%%", 100 * roof, 100 * point);
}

/* One point: a line per column with a value. Its keys are cells of its
 * first line, or (stacked: too many or too wide for one line) a line of
 * their own above the point's lines. */
static void spread_row(strbuf *b, rl_table *const *t, int n, tool_row p, const char *const *keys,
                       int nkeys, const int *width, bool stacked, const char *const *cols,
                       int ncols, int at, worst *w)
{
    bool first = true;
    for (int c = 0; c < ncols; c++) {
        spread s = spread_of(t, n, p, keys, nkeys, cols[c]);
        if (s.count == 0)
            continue;
        if (stacked && first) {
            key_words(b, t[p.run], p.row, keys, nkeys);
            end_line(b);
        }
        for (int k = 0; k < nkeys && !stacked; k++)
            key_cell(b, first ? rl_table_get(t[p.run], p.row, keys[k]) : "", width[k]);
        if (stacked)
            sb_printf(b, "  ");
        first = false;
        double range = s.max - s.min;
        char rel[32] = "";
        double relative = s.min > 0 ? range / s.min : NAN;
        if (!is_utilization(cols[c]) && !isnan(relative))
            snprintf(rel, sizeof rel, relative < 1 ? "%.1f %%" : "%.0f %%", 100 * relative);
        const char *flag = flag_of(cols[c], range,
                                   !is_utilization(cols[c]) ||
                                       binds_in_some_run(t, n, p, keys, nkeys, cols[c]));
        char runs[16] = "";
        if (s.count < n) /* a point some runs lack, or left empty */
            snprintf(runs, sizeof runs, "%d/%d", s.count, n);
        sb_printf(b, "%-14s %10.5g %10.5g %8.3g %7s %4s%s",
                  !strcmp(cols[c], "mfu") ? "mfu (points)" : cols[c], s.min, s.max, range, rel,
                  runs, flag);
        if (*flag)
            what_moved(b, t, n, p, keys, nkeys, cols[c]);
        end_line(b);
        double score = is_utilization(cols[c]) ? range : relative;
        if (!isnan(score) && (w[c].at < 0 || score > w[c].value))
            w[c].value = score, w[c].at = at;
        w[c].flagged += !strcmp(flag, " !!");
    }
}

/* Returns false (after naming the file) when a run's CSV lacks a key. */
static bool spread_part(strbuf *b, const srun *runs, int n)
{
    char keybuf[256];
    const char *keys[TOOL_MAX_KEYS], *cols[MAX_COLUMNS];
    snprintf(keybuf, sizeof keybuf, "%s", meta_or(runs[0].csv, "compare_keys", ""));
    int nkeys = tool_split_keys(keybuf, keys), ncols = spread_columns(runs, n, cols), total = 0;
    rl_table *t[MAX_RUNS];
    for (int i = 0; i < n; i++) {
        t[i] = runs[i].csv;
        total += t[i]->nrows;
        for (int k = 0; k < nkeys; k++)
            if (rl_table_col(t[i], keys[k]) < 0) {
                fprintf(stderr, "rooflab stability: %s has no column '%s' (compare_keys)\n",
                        runs[i].csv_path, keys[k]);
                return false;
            }
    }
    if (nkeys == 0) {
        fprintf(stderr, "rooflab stability: %s names no compare_keys in its header\n",
                runs[0].csv_path);
        return false;
    }
    tool_row *rows = malloc(((size_t)total + 1) * sizeof *rows);
    if (!rows)
        rl_die(RL_EXIT_FAILED, "out of memory");
    int nrows = tool_union_rows(t, n, keys, nkeys, rows);

    int width[TOOL_MAX_KEYS], keys_width = 0;
    for (int k = 0; k < nkeys; k++) {
        width[k] = (int)strlen(keys[k]);
        for (int r = 0; r < nrows; r++) {
            int w = (int)strlen(rl_table_get(t[rows[r].run], rows[r].row, keys[k]));
            width[k] = w > width[k] ? w : width[k];
        }
        width[k] = width[k] > KEY_WIDTH_MAX ? KEY_WIDTH_MAX : width[k];
        keys_width += width[k] + 1;
    }
    bool stacked = keys_width + SPREAD_WIDTH > LINE_WIDTH;
    sb_printf(b, "\nspread of each point across the runs (points matched by %s):\n"
                 "  min, max, max-min; rel = (max-min)/min for times and rates; mbu as a fraction,\n"
                 "  mfu in points; runs: how many runs have the value, where not all; !! marks an\n"
                 "  MBU not within +-%.2f of one value (max-min > %.2f), or an MFU not within\n"
                 "  +-%.0f points, where it is the point's larger utilization (its roofline bound)\n"
                 "  in some run; ~ the same spread where the other roof bounds it in every run;\n"
                 "  beside a flag, how much its roof (the group probe) and the point's rate moved\n",
              meta_or(runs[0].csv, "compare_keys", ""), MBU_BAND, 2 * MBU_BAND, MFU_BAND_POINTS);
    for (int k = 0; k < nkeys && !stacked; k++)
        key_cell(b, keys[k], width[k]);
    sb_printf(b, "%s%-14s %10s %10s %8s %7s %4s", stacked ? "  " : "", "column", "min", "max", "max-min", "rel", "runs");
    end_line(b);
    worst w[MAX_COLUMNS];
    for (int c = 0; c < ncols; c++)
        w[c] = (worst){0, -1, 0};
    for (int r = 0; r < nrows; r++)
        spread_row(b, t, n, rows[r], keys, nkeys, width, stacked, cols, ncols, r, w);

    sb_printf(b, "\nlargest spread per column:\n");
    for (int c = 0; c < ncols; c++) {
        if (w[c].at < 0)
            continue;
        bool util = is_utilization(cols[c]);
        sb_printf(b, "  %-14s ", cols[c]);
        sb_printf(b, util ? "%.3g%s" : "%.1f %%%s", util ? w[c].value : 100 * w[c].value,
                  !strcmp(cols[c], "mfu") ? " points" : util ? "" : " (rel)");
        if (util)
            sb_printf(b, ", %d point%s flagged", w[c].flagged, w[c].flagged == 1 ? "" : "s");
        sb_printf(b, "\n    at ");
        key_words(b, t[rows[w[c].at].run], rows[w[c].at].row, keys, nkeys);
        sb_printf(b, "\n");
    }
    free(rows);
    return true;
}

/* ---- the command ----------------------------------------------------------------- */

/* The labels' common folder: "stability/exp-05" for "stability/exp-05/1"
 * and "stability/exp-05/2"; "" when they share none. */
static void common_folder(char **labels, int n, char *buf, size_t len)
{
    snprintf(buf, len, "%s", labels[0]);
    for (int i = 1; i < n; i++) {
        size_t k = 0;
        while (buf[k] && buf[k] == labels[i][k])
            k++;
        buf[k] = '\0';
    }
    char *slash = strrchr(buf, '/');
    /* The whole of a shorter label counts as a folder only when a '/'
     * follows it in every label. */
    bool whole = *buf;
    for (int i = 0; i < n && whole; i++)
        whole = labels[i][strlen(buf)] == '/';
    if (!whole)
        *(slash ? slash : buf) = '\0';
}

int tool_stability(int argc, char **argv)
{
    tool_opts o = {0};
    int first = tool_parse(argc, argv, &o, USAGE);
    if (first < 0)
        return RL_EXIT_USAGE;
    int n = argc - first;
    if (!o.exp || n < 2 || n > MAX_RUNS) {
        fprintf(stderr, "rooflab stability: needs --exp NN and 2 to %d labels (see --help)\n",
                MAX_RUNS);
        return RL_EXIT_USAGE;
    }
    char prefix[512];
    if (o.prefix)
        snprintf(prefix, sizeof prefix, "%s", o.prefix);
    else
        common_folder(argv + first, n, prefix, sizeof prefix);
    if (!*prefix) {
        fprintf(stderr, "rooflab stability: the labels share no folder for stability.md: give "
                        "--prefix P (see --help)\n");
        return RL_EXIT_USAGE;
    }

    srun runs[MAX_RUNS] = {0};
    strbuf b = {0};
    int rc = RL_EXIT_FAILED;
    for (int i = 0; i < n; i++) {
        runs[i].label = argv[first + i];
        if (!load(&o, &runs[i]))
            goto out;
    }
    heading(&b, runs, n, o.exp);
    verdicts_part(&b, runs, n, o.exp);
    if (!spread_part(&b, runs, n))
        goto out;
    fputs(b.s, stdout);

    char path[1200], date[64];
    snprintf(path, sizeof path, "%s/%s", o.out, prefix);
    rl_utc_now(date, sizeof date);
    strbuf md = {0};
    sb_printf(&md, "# rooflab stability: exp-%s, %d runs\n\nWritten by `rooflab stability --exp %s",
              o.exp, n, o.exp);
    for (int i = 0; i < n; i++)
        sb_printf(&md, " %s", runs[i].label);
    sb_printf(&md, "` on %s.\n\n```text\n%s```\n", date, b.s);
    if (rl_mkdirs(path) == 0) {
        snprintf(path, sizeof path, "%s/%s/stability.md", o.out, prefix);
        rc = rl_write_file_atomic(path, md.s) == 0 ? RL_EXIT_OK : RL_EXIT_FAILED;
    }
    if (rc == RL_EXIT_OK)
        printf("\nwrote %s\n", path);
    else
        fprintf(stderr, "rooflab stability: cannot write %s: %m\n", path);
    sb_free(&md);
out:
    sb_free(&b);
    for (int i = 0; i < n; i++) {
        rl_table_free(runs[i].csv);
        rl_table_free(runs[i].verdicts);
    }
    return rc;
}
