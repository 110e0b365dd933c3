/*
 * paper_limits.c -- limitations.tex: what the runs under a label can and
 * cannot show, generated from what exists, never typed: the backend the
 * runs used and the GPU runs that exist (results/reference/<label>/
 * exp-NN.csv with "# backend: cuda"), the noise each experiment measured,
 * what the harness recorded about the host, how much the ceilings moved
 * between experiments (each quotes its own: paper_ceilings.c), and the
 * commits the runs came from.
 */
#include "paper.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Ceilings across the experiments
 * ---------------------------------------------------------------------- */

static bool roof_range(const paper *p, const char *pattern, double *lo, double *hi)
{
    *lo = INFINITY, *hi = -INFINITY;
    for (int i = 0; i < p->nexp; i++) {
        double best, worst;
        if (p->exps[i].csv && roof_band(p->exps[i].csv, "DRAM", pattern, &best, &worst)) {
            *lo = fmin(*lo, best);
            *hi = fmax(*hi, best);
        }
    }
    return *lo <= *hi;
}

static bool meta_range(const paper *p, const char *key, double *lo, double *hi)
{
    *lo = INFINITY, *hi = -INFINITY;
    for (int i = 0; i < p->nexp; i++)
        if (*meta(p->exps[i].csv, key)) {
            *lo = fmin(*lo, atof(meta(p->exps[i].csv, key)));
            *hi = fmax(*hi, atof(meta(p->exps[i].csv, key)));
        }
    return *lo <= *hi;
}


/* ------------------------------------------------------------------------
 * Noise: each experiment's timed points
 * ---------------------------------------------------------------------- */

typedef struct noise {
    int points, timeouts;
    double rsd_median, rsd_worst, iqr_median, iqr_worst;
    int rsd_worst_row, iqr_worst_row;
} noise;

/* The harness's statistics (stats.c); NaN for none. */
static double median_of(const double *v, int n) { return n == 0 ? NAN : rl_stats_of(v, n).median; }

/* Over the rows that were timed (a finite rel_stddev): the relative
 * standard deviation of the samples and the interquartile spread over the
 * median, each as a median and a worst; and how many points stopped at
 * the time limit before reaching the stop rule's target. */
static noise measure_noise(const rl_table *csv)
{
    noise z = {.rsd_worst_row = -1, .iqr_worst_row = -1, .rsd_worst = -1, .iqr_worst = -1};
    double *rsd = calloc((size_t)csv->nrows + 1, sizeof *rsd);
    double *iqr = calloc((size_t)csv->nrows + 1, sizeof *iqr);
    int niqr = 0;
    for (int r = 0; r < csv->nrows; r++) {
        double s = rl_table_num(csv, r, "rel_stddev");
        if (!isfinite(s))
            continue;
        rsd[z.points++] = s;
        if (s > z.rsd_worst)
            z.rsd_worst = s, z.rsd_worst_row = r;
        double q1 = rl_table_num(csv, r, "time_us_q1"), q3 = rl_table_num(csv, r, "time_us_q3"),
               m = rl_table_num(csv, r, "time_us_median");
        if (isfinite(q1) && isfinite(q3) && m > 0) {
            iqr[niqr++] = (q3 - q1) / m;
            if ((q3 - q1) / m > z.iqr_worst)
                z.iqr_worst = (q3 - q1) / m, z.iqr_worst_row = r;
        }
        z.timeouts += !strcmp(rl_table_get(csv, r, "stop_reason"), "timeout");
    }
    z.rsd_median = median_of(rsd, z.points);
    z.iqr_median = median_of(iqr, niqr);
    free(rsd);
    free(iqr);
    return z;
}

/* A row named by the CSV's own key columns (its compare_keys). */
static void tex_row_keys(strbuf *b, const rl_table *csv, int row)
{
    char keys[256];
    snprintf(keys, sizeof keys, "%s", meta(csv, "compare_keys"));
    int n = 0;
    for (char *save = NULL, *k = strtok_r(keys, ",", &save); k; k = strtok_r(NULL, ",", &save)) {
        if (!*rl_table_get(csv, row, k))
            continue;
        sb_printf(b, "%s", n++ ? ", " : "");
        tex(b, k);
        sb_printf(b, "=");
        tex(b, rl_table_get(csv, row, k));
    }
}

static void noise_table(strbuf *b, const paper *p)
{
    sb_printf(b, "\\begingroup\\footnotesize\n\\begin{longtable}{@{}l r r "
                 ">{\\raggedright\\arraybackslash}p{0.25\\linewidth} r "
                 ">{\\raggedright\\arraybackslash}p{0.22\\linewidth} r@{}}\n"
                 "\\caption{The noise each experiment measured, over its timed points: the "
                 "samples' relative standard deviation and the interquartile spread "
                 "$(q_3-q_1)/\\mathrm{median}$, each as the median over the points and the worst "
                 "point (named by its keys); and the points that stopped at the time limit "
                 "before reaching the stop rule's target.}\\label{tab:noise}\\\\\n");
    tex_longtable_head(b, "exp. & points & rel. sd & worst & $q_3-q_1$ & worst & time limit");
    for (int i = 0; i < p->nexp; i++) {
        const paper_exp *e = &p->exps[i];
        if (!e->csv)
            continue;
        noise z = measure_noise(e->csv);
        sb_printf(b, "%s & %d", e->id, z.points);
        if (z.points == 0) {
            sb_printf(b, " & \\multicolumn{5}{l}{no timed points (%s)} \\\\\n",
                      rl_table_col(e->csv, "rel_stddev") < 0
                          ? "it observes fixed windows, not repeated timings"
                          : "none was timed");
            continue;
        }
        sb_printf(b, " & %.2f\\,\\%% & %.1f\\,\\%% (", 100 * z.rsd_median, 100 * z.rsd_worst);
        tex_row_keys(b, e->csv, z.rsd_worst_row);
        sb_printf(b, ")");
        if (z.iqr_worst_row >= 0) {
            sb_printf(b, " & %.2f\\,\\%% & %.1f\\,\\%% (", 100 * z.iqr_median, 100 * z.iqr_worst);
            tex_row_keys(b, e->csv, z.iqr_worst_row);
            sb_printf(b, ")");
        } else {
            sb_printf(b, " & -- & --");
        }
        sb_printf(b, " & %d of %d \\\\\n", z.timeouts, z.points);
    }
    sb_printf(b, "\\end{longtable}\n\\endgroup\n");
}

/* What the harness wrote about the machine while it ran: its load, a
 * bandwidth below the device's last, a roof a point beat. */
static void host_notes(strbuf *b, const paper *p)
{
    static const char *KEYS[] = {"host_load", "host_busy_warning", "ceiling_under_measured",
                                 "ceiling_remeasured"};
    int n = 0;
    for (int i = 0; i < p->nexp; i++) {
        const rl_table *c = p->exps[i].csv;
        for (int m = 0; c && m < c->nmeta; m++)
            for (size_t k = 0; k < sizeof KEYS / sizeof *KEYS; k++)
                if (!strcmp(c->meta_keys[m], KEYS[k])) {
                    if (n++ == 0)
                        sb_printf(b, "What the harness recorded about the machine while the "
                                     "experiments ran:\n\\begin{itemize}\n");
                    sb_printf(b, "\\item %s, \\texttt{", p->exps[i].id);
                    tex(b, c->meta_keys[m]);
                    sb_printf(b, "}: ");
                    tex(b, c->meta_values[m]);
                    sb_printf(b, "\n");
                }
    }
    if (n)
        sb_printf(b, "\\end{itemize}\n");
}

/* ------------------------------------------------------------------------
 * GPU runs and the backend
 * ---------------------------------------------------------------------- */

/* The GPU runs of experiment id under OUT/reference/: "label (device,
 * mode, date)", separated by "; ". Returns how many. */
static int gpu_runs(strbuf *b, const paper *p, const char *id)
{
    char dir[1200], path[1400], why[1600];
    snprintf(dir, sizeof dir, "%s/reference", p->o->out);
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    char *labels[64];
    int nl = 0, n = 0;
    for (struct dirent *e; (e = readdir(d)) && nl < 64;)
        if (e->d_name[0] != '.')
            labels[nl++] = strdup(e->d_name);
    closedir(d);
    qsort(labels, (size_t)nl, sizeof *labels, cmp_strings);
    for (int i = 0; i < nl; i++) {
        snprintf(path, sizeof path, "%s/%s/exp-%s.csv", dir, labels[i], id);
        rl_table *run = rl_table_read_meta(path, why, sizeof why);
        if (run && !strcmp(meta(run, "backend"), "cuda")) {
            sb_printf(b, "%s\\texttt{reference/", n++ ? "; " : "");
            tex(b, labels[i]);
            sb_printf(b, "} (");
            tex(b, meta(run, "device"));
            if (*meta(run, "mode"))
                sb_printf(b, ", %s mode", meta(run, "mode"));
            if (rl_table_meta(run, "date_utc")) {
                sb_printf(b, ", ");
                tex_date(b, meta(run, "date_utc"));
            }
            sb_printf(b, ")");
        }
        rl_table_free(run);
        free(labels[i]);
    }
    return n;
}

static void backend_paragraph(strbuf *b, const paper *p)
{
    int cpu = 0, gpu = 0;
    const char *note = "";
    for (int i = 0; i < p->nexp; i++) {
        const rl_table *c = p->exps[i].csv;
        if (!c)
            continue;
        if (!strcmp(meta(c, "backend"), "cuda"))
            gpu++;
        else
            cpu++, note = *note ? note : meta(c, "backend_note");
    }
    sb_printf(b, "\\paragraph{The backend.} Of the %d experiments run under the label "
                 "\\texttt{",
              cpu + gpu);
    tex(b, p->o->label);
    sb_printf(b, "}, %d ran on a GPU and %d on the CPU backend", gpu, cpu);
    if (cpu) {
        sb_printf(b, " (");
        tex(b, *note ? note : "the CPU backend was chosen");
        sb_printf(b, "). A CPU shows the mechanisms that the claims describe, not a GPU's "
                     "numbers: its verdicts judge the claims' thresholds against the CPU's own "
                     "ceilings, and every GPU figure in the sections' prose is a claim, cited "
                     "to its source, that these runs did not measure");
    }
    sb_printf(b, ".\n\n");
}

static void gpu_paragraph(strbuf *b, const paper *p)
{
    sb_printf(b, "\\paragraph{GPU runs.} The GPU runs checked in under \\texttt{");
    tex(b, p->o->out);
    sb_printf(b, "/reference/}, per experiment:\n\\begin{itemize}\\raggedright\n");
    for (int i = 0; i < p->nexp; i++) {
        strbuf runs = {0};
        int n = gpu_runs(&runs, p, p->exps[i].id);
        sb_printf(b, "\\item %s: ", p->exps[i].slug);
        if (n)
            sb_printf(b, "%s.\n", runs.s);
        else
            sb_printf(b, "no GPU run exists for experiment %s: its claims are untested on a "
                         "GPU.\n",
                      p->exps[i].id);
        sb_free(&runs);
    }
    sb_printf(b, "\\end{itemize}\n\n");
}

/* ------------------------------------------------------------------------
 * Ceilings and provenance in words
 * ---------------------------------------------------------------------- */

static void ceilings_paragraph(strbuf *b, const paper *p)
{
    sb_printf(b, "\\paragraph{Ceilings.} Each experiment judged its rows against ceilings "
                 "measured for it, at its start or, where the CSV says so, reused from a recent "
                 "measurement of the same device (Table~\\ref{tab:ceilings}); each section "
                 "quotes its own. Across the experiments of this label, the best trial "
                 "of the DRAM roofs ranged");
    int n = 0;
    for (int k = 0; k < PAPER_NPATTERNS; k++) {
        double lo, hi;
        if (roof_range(p, PAPER_PATTERNS[k], &lo, &hi))
            sb_printf(b, "%s %s %.1f--%.1f~GB/s", n++ ? "," : "", PAPER_PATTERNS[k], lo, hi);
    }
    double lo, hi;
    if (meta_range(p, "ceiling_tflops", &lo, &hi))
        sb_printf(b, ", and the matrix ceiling %.3g--%.3g~TFLOP/s", lo, hi);
    sb_printf(b, ". ");
    /* The widest gap between an experiment's best and worst trial. */
    double widest = 0, best_w = 0, worst_w = 0;
    const char *where = NULL, *pattern = NULL;
    for (int i = 0; i < p->nexp; i++)
        for (int k = 0; k < PAPER_NPATTERNS && p->exps[i].csv; k++) {
            double best, worst;
            if (roof_band(p->exps[i].csv, "DRAM", PAPER_PATTERNS[k], &best, &worst) && best > 0 &&
                (best - worst) / best > widest)
                widest = (best - worst) / best, best_w = best, worst_w = worst,
                where = p->exps[i].id, pattern = PAPER_PATTERNS[k];
        }
    if (where)
        sb_printf(b, "Within one experiment the trials differed by up to %.0f\\,\\%% (experiment "
                     "%s, DRAM %s: best %.1f, worst %.1f~GB/s). ",
                  100 * widest, where, pattern, best_w, worst_w);
    sb_printf(b, "A fraction of a ceiling (MBU, MFU) is only as good as that ceiling: on a "
                 "shared machine, a ceiling measured low makes the fraction high.\n\n");
}

/* The distinct values of a header key, each with the experiments that
 * have it: "value (01, 02); other (03)". */
static void tex_distinct(strbuf *b, const paper *p, const char *key, bool code)
{
    bool done[PAPER_MAX_EXPS] = {0};
    int n = 0;
    for (int i = 0; i < p->nexp; i++) {
        if (!p->exps[i].csv || done[i])
            continue;
        const char *v = meta(p->exps[i].csv, key);
        sb_printf(b, "%s", n++ ? "; " : "");
        if (code && *v)
            tex_commit(b, v);
        else
            tex(b, *v ? v : "not recorded");
        int users = 0;
        for (int j = i; j < p->nexp; j++)
            users += p->exps[j].csv && !strcmp(meta(p->exps[j].csv, key), v);
        sb_printf(b, " (experiment%s", users == 1 ? "" : "s");
        for (int j = i, m = 0; j < p->nexp; j++)
            if (p->exps[j].csv && !strcmp(meta(p->exps[j].csv, key), v)) {
                done[j] = true;
                sb_printf(b, "%s%s", m++ ? ", " : " ", p->exps[j].id);
            }
        sb_printf(b, ")");
    }
}

/* How many experiments' CSVs say git_dirty: value ("" counts the CSVs
 * without the key, written before it existed). */
static int count_git_dirty(const paper *p, const char *value)
{
    int n = 0;
    for (int i = 0; i < p->nexp; i++)
        n += p->exps[i].csv && !strcmp(meta(p->exps[i].csv, "git_dirty"), value);
    return n;
}

/* Whether the code that ran was the commit: git_dirty, as data. */
static void dirty_sentences(strbuf *b, const paper *p)
{
    int dirty = count_git_dirty(p, "yes"), unknown = count_git_dirty(p, "unknown"),
        unrecorded = count_git_dirty(p, "");
    if (dirty)
        sb_printf(b, " %d of them ran from a working tree with uncommitted changes "
                     "(\\emph{dirty}): the code that ran is that commit plus changes not "
                     "recorded here.",
                  dirty);
    if (unknown)
        sb_printf(b, " %d of them ran from a copy of the tree, not a checkout: whether it held "
                     "uncommitted changes is not known.",
                  unknown);
    if (unrecorded)
        sb_printf(b, " %d of them %s older than the \\texttt{git\\_dirty} key and %s not "
                     "record whether %s working tree had uncommitted changes (the commit above "
                     "would then say \\emph{dirty}).",
                  unrecorded, unrecorded == 1 ? "is" : "are", unrecorded == 1 ? "does" : "do",
                  unrecorded == 1 ? "its" : "their");
}

static void provenance_paragraph(strbuf *b, const paper *p)
{
    int quick = 0;
    for (int i = 0; i < p->nexp; i++)
        quick += !strcmp(meta(p->exps[i].csv, "quick"), "yes");
    sb_printf(b, "\\paragraph{Provenance.} The experiments ran at these commits: ");
    tex_distinct(b, p, "git_commit", true);
    sb_printf(b, ".");
    dirty_sentences(b, p);
    if (quick)
        sb_printf(b, " %d %s quick run%s: short sweeps and a looser stop rule, for checking "
                     "the pipeline rather than for judging claims.",
                  quick, quick == 1 ? "is a" : "are", quick == 1 ? "" : "s");
    sb_printf(b, " Modes: ");
    tex_distinct(b, p, "mode", false);
    sb_printf(b, ". Stop rules: ");
    tex_distinct(b, p, "stop_rule", false);
    sb_printf(b, ".\n\n");
}

int limitations_tex(const paper *p)
{
    strbuf b = {0};
    backend_paragraph(&b, p);
    gpu_paragraph(&b, p);
    sb_printf(&b, "\\paragraph{Noise.} Every timed point is the median of repeated samples; "
                  "Table~\\ref{tab:noise} gives the spread they had. Charts draw the "
                  "interquartile range as bars; a verdict that compares two points is only as "
                  "firm as their spreads allow.\n\n");
    noise_table(&b, p);
    host_notes(&b, p);
    ceilings_paragraph(&b, p);
    provenance_paragraph(&b, p);
    return paper_write(p->o->dest, "limitations.tex", &b);
}

