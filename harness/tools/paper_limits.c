/*
 * paper_limits.c -- what the runs under a label can and cannot show,
 * generated from what exists, never typed:
 *
 *   limitations.tex  the backend the runs used and the GPU runs that exist
 *                    (results/reference/<label>/exp-NN.csv with "# backend:
 *                    cuda"), the noise each experiment measured, the
 *                    ceilings it judged against and how much they moved
 *                    between experiments, the commits the runs came from
 *   ceilings.tex     the appendix's table: per experiment, the bandwidth its
 *                    rows were judged against and its DRAM roofs' trials
 *
 * Each experiment measures its ceilings at its own start, so there is no
 * single "the bandwidth" of a label: the paper quotes each experiment's
 * own, in its section and here, with the same words (tex_used_ceilings).
 */
#include "paper.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *LEVELS[] = {"L1", "L2", "LLC", "DRAM"};
static const char *PATTERNS[] = {"read", "copy", "triad"};
enum { NLEVELS = 4, NPATTERNS = 3 };

/* ------------------------------------------------------------------------
 * Ceilings
 * ---------------------------------------------------------------------- */

bool roof_band(const rl_table *csv, const char *level, const char *pattern, double *best,
               double *worst)
{
    char key[64];
    snprintf(key, sizeof key, "roof_%s_%s_gbps", level, pattern);
    const char *v = rl_table_meta(csv, key);
    return v && sscanf(v, "%lf %lf", best, worst) == 2;
}

static bool close_to(double a, double b, double rel)
{
    return fabs(a - b) <= rel * fabs(b);
}

/* Names a ceiling after the roof it equals: a roof's best trial in the
 * header, or a roof measured again during the run (the harness does so
 * when a point beats it: "# ceiling_remeasured: DRAM read: 44.25 GB/s
 * after a point reached 43.18"). */
static void name_ceiling(const rl_table *csv, used_ceiling *u)
{
    double best, worst;
    for (int l = 0; l < NLEVELS; l++)
        for (int k = 0; k < NPATTERNS; k++)
            if (roof_band(csv, LEVELS[l], PATTERNS[k], &best, &worst) &&
                close_to(u->gbps, best, 1e-4)) {
                snprintf(u->name, sizeof u->name, "%s %s", LEVELS[l], PATTERNS[k]);
                u->worst = worst;
                return;
            }
    for (int i = 0; i < csv->nmeta; i++) {
        char level[16], pattern[16];
        double x;
        if (!strcmp(csv->meta_keys[i], "ceiling_remeasured") &&
            sscanf(csv->meta_values[i], "%15s %15[^:]: %lf", level, pattern, &x) == 3 &&
            close_to(u->gbps, x, 2e-3)) {
            snprintf(u->name, sizeof u->name, "%s %s, measured again during the run", level,
                     pattern);
            return;
        }
    }
    snprintf(u->name, sizeof u->name, "no roof of its header");
}

static int by_rows(const void *a, const void *b)
{
    return ((const used_ceiling *)b)->rows - ((const used_ceiling *)a)->rows;
}

int used_ceilings(const rl_table *csv, used_ceiling *out, int max)
{
    int n = 0;
    if (rl_table_col(csv, "ceiling_gbps") < 0) {
        const char *h = meta(csv, "ceiling_gbps");
        if (!*h || max < 1)
            return 0;
        out[0] = (used_ceiling){.gbps = atof(h), .worst = NAN};
        name_ceiling(csv, &out[0]);
        return 1;
    }
    for (int r = 0; r < csv->nrows; r++) {
        double g = rl_table_num(csv, r, "ceiling_gbps");
        if (!(g > 0))
            continue;
        int i = 0;
        while (i < n && !close_to(g, out[i].gbps, 1e-6))
            i++;
        if (i == n) {
            if (n == max)
                continue;
            out[n++] = (used_ceiling){.gbps = g, .worst = NAN};
            name_ceiling(csv, &out[i]);
        }
        out[i].rows++;
    }
    qsort(out, (size_t)n, sizeof *out, by_rows);
    return n;
}

void tex_used_ceilings(strbuf *b, const rl_table *csv)
{
    used_ceiling u[PAPER_MAX_CEILINGS];
    int n = used_ceilings(csv, u, PAPER_MAX_CEILINGS);
    if (n == 0) {
        sb_printf(b, "none recorded");
        return;
    }
    for (int i = 0; i < n; i++) {
        sb_printf(b, "%s%.1f~GB/s (", i ? ", " : "", u[i].gbps);
        tex(b, u[i].name);
        if (!isnan(u[i].worst))
            sb_printf(b, "; worst trial %.1f", u[i].worst);
        sb_printf(b, ")");
        if (u[i].rows > 0)
            sb_printf(b, " for %d row%s judged against it", u[i].rows, u[i].rows == 1 ? "" : "s");
        else
            sb_printf(b, ", the header's \\texttt{ceiling\\_gbps} (no row records a ceiling "
                         "of its own)");
    }
}

void tex_ceilings_when(strbuf *b, const rl_table *csv)
{
    const char *cached = strstr(meta(csv, "ceilings_how"), "cached, measured ");
    if (cached) {
        sb_printf(b, "measured ");
        tex_date(b, cached + strlen("cached, measured "));
        sb_printf(b, " and reused (cached for this device)");
    } else {
        sb_printf(b, "measured at its start");
    }
}

/* The range of one DRAM roof's best trial over the label's experiments. */
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

static void band_cell(strbuf *b, const rl_table *csv, const char *pattern)
{
    double best, worst;
    if (roof_band(csv, "DRAM", pattern, &best, &worst))
        sb_printf(b, " & %.1f / %.1f", best, worst);
    else
        sb_printf(b, " & --");
}

int ceilings_tex(const paper *p)
{
    strbuf b = {0};
    sb_printf(&b, "\\begingroup\\footnotesize\n"
                  "\\begin{longtable}{@{}l>{\\raggedright\\arraybackslash}p{0.36\\linewidth}"
                  "rrrr@{}}\n"
                  "\\caption{Each experiment's own ceilings: the bandwidth "
                  "its rows (MBU, fractions of the roof) were judged against, and its DRAM roofs "
                  "as best / worst of its trials, in GB/s; the matrix ceiling in TFLOP/s.}"
                  "\\label{tab:ceilings}\\\\\n");
    tex_longtable_head(&b, "exp. & judged against & DRAM read & DRAM copy & DRAM triad & TFLOP/s");
    for (int i = 0; i < p->nexp; i++) {
        const paper_exp *e = &p->exps[i];
        if (!e->csv)
            continue;
        sb_printf(&b, "%s & ", e->id);
        tex_used_ceilings(&b, e->csv);
        sb_printf(&b, "; ");
        tex_ceilings_when(&b, e->csv);
        for (int k = 0; k < NPATTERNS; k++)
            band_cell(&b, e->csv, PATTERNS[k]);
        if (*meta(e->csv, "ceiling_tflops"))
            sb_printf(&b, " & %.3g \\\\\n", atof(meta(e->csv, "ceiling_tflops")));
        else
            sb_printf(&b, " & -- \\\\\n");
    }
    sb_printf(&b, "\\end{longtable}\n\\endgroup\n");
    const rl_table *any = NULL;
    for (int i = 0; i < p->nexp && !any; i++)
        any = p->exps[i].csv;
    if (any) {
        sb_printf(&b, "How they were measured (from the CSVs' headers): ");
        tex(&b, meta(any, "ceilings_how"));
        sb_printf(&b, ".\n");
    }
    return paper_write(p->o->dest, "ceilings.tex", &b);
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
    char dir[1200], path[1400], val[256];
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
        if (rl_csv_read_meta(path, "backend", val, sizeof val) && !strcmp(val, "cuda")) {
            sb_printf(b, "%s\\texttt{reference/", n++ ? "; " : "");
            tex(b, labels[i]);
            sb_printf(b, "} (");
            if (rl_csv_read_meta(path, "device", val, sizeof val))
                tex(b, val);
            if (rl_csv_read_meta(path, "mode", val, sizeof val))
                sb_printf(b, ", %s mode", val);
            if (rl_csv_read_meta(path, "date_utc", val, sizeof val)) {
                sb_printf(b, ", ");
                tex_date(b, val);
            }
            sb_printf(b, ")");
        }
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
    for (int k = 0; k < NPATTERNS; k++) {
        double lo, hi;
        if (roof_range(p, PATTERNS[k], &lo, &hi))
            sb_printf(b, "%s %s %.1f--%.1f~GB/s", n++ ? "," : "", PATTERNS[k], lo, hi);
    }
    double lo, hi;
    if (meta_range(p, "ceiling_tflops", &lo, &hi))
        sb_printf(b, ", and the matrix ceiling %.3g--%.3g~TFLOP/s", lo, hi);
    sb_printf(b, ". ");
    /* The widest gap between an experiment's best and worst trial. */
    double widest = 0, best_w = 0, worst_w = 0;
    const char *where = NULL, *pattern = NULL;
    for (int i = 0; i < p->nexp; i++)
        for (int k = 0; k < NPATTERNS && p->exps[i].csv; k++) {
            double best, worst;
            if (roof_band(p->exps[i].csv, "DRAM", PATTERNS[k], &best, &worst) && best > 0 &&
                (best - worst) / best > widest)
                widest = (best - worst) / best, best_w = best, worst_w = worst,
                where = p->exps[i].id, pattern = PATTERNS[k];
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

static void provenance_paragraph(strbuf *b, const paper *p)
{
    int dirty = 0, quick = 0;
    for (int i = 0; i < p->nexp; i++) {
        dirty += strstr(meta(p->exps[i].csv, "git_commit"), "dirty") != NULL;
        quick += !strcmp(meta(p->exps[i].csv, "quick"), "yes");
    }
    sb_printf(b, "\\paragraph{Provenance.} The experiments ran at these commits: ");
    tex_distinct(b, p, "git_commit", true);
    sb_printf(b, ".");
    if (dirty)
        sb_printf(b, " %d of them ran from a working tree with uncommitted changes "
                     "(\\emph{dirty}): the code that ran is that commit plus changes not "
                     "recorded here.",
                  dirty);
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
