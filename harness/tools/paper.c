/*
 * paper.c -- `rooflab paper-tables --label LABEL --dest DIR`: the parts of
 * the writeup that come from data, never typed by hand.
 *
 *   run.tex          macros naming the runs (label, devices, first and last date)
 *   glance.tex       one row per experiment: device, date, commit, verdicts
 *   exp-NN.tex       per experiment with a run: the "On this run" paragraph
 *                    (device, commit, date, ceiling, what held, what did not
 *                    and why, from verdicts.csv), the table of predicted vs
 *                    measured, and one figure per chart (plots/LABEL/exp-NN*.pdf)
 *   limitations.tex  what the runs cannot show (paper_limits.c)
 *   ceilings.tex     each experiment's own ceilings (paper_limits.c)
 *   cites.tex, references.tex   the seeds' sources (paper_refs.c)
 *   datasheet.tex    the harness's datasheet table, with each ridge point (a model)
 *   tokens.tex       the decode tokens/s ceiling (a model) for model sizes x devices
 *
 * paper/paper.tex inputs them; paper/build.sh runs this and pdflatex.
 */
#include "paper.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *USAGE =
    "usage: rooflab paper-tables --label LABEL --dest DIR [--out DIR] [--plots DIR]\n\n"
    "Writes the writeup's generated LaTeX (run.tex, glance.tex, exp-NN.tex, limitations.tex,\n"
    "ceilings.tex, cites.tex, references.tex, datasheet.tex, tokens.tex) into DIR from\n"
    "results/LABEL/ and plots/LABEL/.\n";

void tex(strbuf *b, const char *s)
{
    for (const char *p = s; *p; p++) {
        switch (*p) {
        case '\\': sb_printf(b, "\\textbackslash{}"); break;
        case '{': case '}': case '$': case '&': case '#': case '_': case '%':
            sb_printf(b, "\\%c", *p);
            break;
        case '^': sb_printf(b, "\\textasciicircum{}"); break;
        case '~': sb_printf(b, "\\textasciitilde{}"); break;
        case '<': sb_printf(b, "\\textless{}"); break;
        case '>': sb_printf(b, "\\textgreater{}"); break;
        default: sb_printf(b, "%c", *p);
        }
    }
}

void tex_date(strbuf *b, const char *iso)
{
    int y, mo, d, h, mi;
    if (sscanf(iso, "%d-%d-%dT%d:%d", &y, &mo, &d, &h, &mi) == 5)
        sb_printf(b, "%04d-%02d-%02d %02d:%02d UTC", y, mo, d, h, mi);
    else
        tex(b, *iso ? iso : "no date");
}

void tex_commit(strbuf *b, const char *commit)
{
    size_t hash = strcspn(commit, " ");
    sb_printf(b, "\\texttt{%.*s}", (int)(hash < 12 ? hash : 12), commit);
    tex(b, commit + hash);
}

const char *meta(const rl_table *csv, const char *key)
{
    const char *v = csv ? rl_table_meta(csv, key) : NULL;
    return v ? v : "";
}

void tex_longtable_head(strbuf *b, const char *columns)
{
    const char *kinds[] = {"endfirsthead", "endhead"};
    for (int i = 0; i < 2; i++)
        sb_printf(b, "\\toprule\n%s \\\\\n\\midrule\n\\%s\n", columns, kinds[i]);
    sb_printf(b, "\\bottomrule\n\\endfoot\n");
}

int paper_write(const char *dest, const char *name, strbuf *b)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dest, name);
    int rc = rl_write_file_atomic(path, b->s ? b->s : "");
    if (rc != 0)
        fprintf(stderr, "rooflab paper-tables: cannot write %s: %m\n", path);
    sb_free(b);
    return rc;
}

int cmp_strings(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Names in order, an extension's '.' sorting first: exp-05.pdf before
 * exp-05-chain.pdf, so an experiment's main chart leads. */
static int cmp_names(const void *a, const void *b)
{
    const unsigned char *x = *(const unsigned char *const *)a, *y = *(const unsigned char *const *)b;
    for (; *x && *x == *y; x++, y++)
        ;
    int cx = *x == '.' ? 1 : *x, cy = *y == '.' ? 1 : *y;
    return cx - cy;
}

/* Sorted names in dir that start with prefix and end with suffix. */
static int list_files(const char *dir, const char *prefix, const char *suffix, char **out, int max)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) && n < max;) {
        size_t len = strlen(e->d_name), sl = strlen(suffix);
        if (!strncmp(e->d_name, prefix, strlen(prefix)) && len > sl &&
            !strcmp(e->d_name + len - sl, suffix))
            out[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(out, (size_t)n, sizeof *out, cmp_names);
    return n;
}

/* ------------------------------------------------------------------------
 * Verdicts
 * ---------------------------------------------------------------------- */

typedef struct tally {
    int holds, fails, unmeasured;
} tally;

/* A verdict's kind: anything but "holds" and "does not hold" is "not measured". */
typedef enum { HOLDS, FAILS, UNMEASURED } verdict_kind;

static verdict_kind kind_of(const char *verdict)
{
    return !strcmp(verdict, "holds") ? HOLDS : !strcmp(verdict, "does not hold") ? FAILS : UNMEASURED;
}

/* A verdict row of this experiment, from the backend its CSV ran on (a
 * label may hold verdicts of another backend whose charts are not here). */
static bool is_verdict_of(const rl_table *v, int r, const paper_exp *e)
{
    const char *backend = meta(e->csv, "backend");
    return !strcmp(rl_table_get(v, r, "experiment"), e->slug) &&
           (!*backend || !strcmp(rl_table_get(v, r, "backend"), backend));
}

static tally count_verdicts(const rl_table *v, const paper_exp *e)
{
    tally t = {0};
    for (int r = 0; v && r < v->nrows; r++) {
        if (!is_verdict_of(v, r, e))
            continue;
        switch (kind_of(rl_table_get(v, r, "verdict"))) {
        case HOLDS: t.holds++; break;
        case FAILS: t.fails++; break;
        case UNMEASURED: t.unmeasured++; break;
        }
    }
    return t;
}

/* The claims of one kind, for the paragraph: held ones as a list of
 * claims with what was measured; the others each with its prediction, its
 * measurement and its note (why). */
static void verdict_list(strbuf *b, const rl_table *v, const paper_exp *e, verdict_kind kind)
{
    int n = 0;
    for (int r = 0; v && r < v->nrows; r++) {
        if (!is_verdict_of(v, r, e) || kind_of(rl_table_get(v, r, "verdict")) != kind)
            continue;
        if (kind == HOLDS) {
            sb_printf(b, "%s", n ? "; " : "");
            tex(b, rl_table_get(v, r, "claim"));
            sb_printf(b, " (");
            tex(b, rl_table_get(v, r, "measured"));
            sb_printf(b, ")");
        } else {
            sb_printf(b, "\\item \\emph{");
            tex(b, rl_table_get(v, r, "claim"));
            sb_printf(b, "}: predicted ");
            tex(b, rl_table_get(v, r, "predicted"));
            sb_printf(b, ", measured ");
            tex(b, rl_table_get(v, r, "measured"));
            sb_printf(b, ".");
            if (*rl_table_get(v, r, "note")) {
                sb_printf(b, " Why: ");
                tex(b, rl_table_get(v, r, "note"));
                sb_printf(b, ".");
            }
            sb_printf(b, "\n");
        }
        n++;
    }
}

/* "On this run": where and when it ran, the ceiling it was judged
 * against, and its verdicts in words. The GPU's claims are the section's
 * prose; this paragraph is what this run found. */
static void on_this_run(strbuf *b, const paper *p, const paper_exp *e, int ncharts)
{
    const rl_table *c = e->csv;
    tally t = count_verdicts(p->verdicts, e);
    sb_printf(b, "\\paragraph{On this run.} Experiment~%s ran on the ", e->id);
    tex(b, *meta(c, "device_detail") ? meta(c, "device_detail") : meta(c, "device"));
    sb_printf(b, " (%s backend), ", meta(c, "backend"));
    tex(b, *meta(c, "mode") ? meta(c, "mode") : "unknown");
    sb_printf(b, " mode%s, at commit ",
              !strcmp(meta(c, "quick"), "yes") ? " (a quick run: short sweeps)" : "");
    tex_commit(b, meta(c, "git_commit"));
    sb_printf(b, " on ");
    tex_date(b, meta(c, "date_utc"));
    if (*meta(c, "duration_s"))
        sb_printf(b, ", in %.0f~s", atof(meta(c, "duration_s")));
    sb_printf(b, ". Bandwidth ceiling, ");
    tex_ceilings_when(b, c);
    sb_printf(b, ": ");
    tex_used_ceilings(b, c);
    if (*meta(c, "ceiling_tflops")) {
        sb_printf(b, "; matrix ceiling %.3g~TFLOP/s (", atof(meta(c, "ceiling_tflops")));
        tex(b, meta(c, "ceiling_tflops_source"));
        sb_printf(b, ")");
    }
    int n = t.holds + t.fails + t.unmeasured;
    sb_printf(b, ". Of its %d verdict%s, %d held, %d did not hold and %d %s not measured "
                 "(Table~\\ref{tab:exp-%s}",
              n, n == 1 ? "" : "s", t.holds, t.fails, t.unmeasured,
              t.unmeasured == 1 ? "was" : "were", e->id);
    if (ncharts == 1)
        sb_printf(b, "; Figure~\\ref{fig:exp-%s-first}", e->id);
    else if (ncharts > 1)
        sb_printf(b, "; Figures~\\ref{fig:exp-%s-first}--\\ref{fig:exp-%s-last}", e->id, e->id);
    sb_printf(b, ").");
    if (t.holds) {
        sb_printf(b, " Held: ");
        verdict_list(b, p->verdicts, e, HOLDS);
        sb_printf(b, ".");
    }
    sb_printf(b, "\n");
    if (t.fails) {
        sb_printf(b, "\nDid not hold on this run:\n\\begin{itemize}\n");
        verdict_list(b, p->verdicts, e, FAILS);
        sb_printf(b, "\\end{itemize}\n");
    }
    if (t.unmeasured) {
        sb_printf(b, "\nNot measured on this run:\n\\begin{itemize}\n");
        verdict_list(b, p->verdicts, e, UNMEASURED);
        sb_printf(b, "\\end{itemize}\n");
    }
    sb_printf(b, "\n");
}

/* Predicted vs measured, one row per verdict (each marked with a comment
 * so that tests can count them), the note in a full-width row below. A
 * longtable, so that a long one breaks across pages instead of running
 * off the bottom. */
static void verdict_table(strbuf *b, const rl_table *v, const paper_exp *e)
{
    sb_printf(b, "\\begingroup\\small\n"
                 "\\begin{longtable}{@{}>{\\raggedright\\arraybackslash}p{0.36\\linewidth}"
                 ">{\\raggedright\\arraybackslash}p{0.2\\linewidth}"
                 ">{\\raggedright\\arraybackslash}p{0.2\\linewidth}"
                 ">{\\raggedright\\arraybackslash}p{0.12\\linewidth}@{}}\n"
                 "\\caption{Experiment %s on this run: predicted and measured, each verdict's "
                 "note below it (from \\texttt{verdicts.csv}).}\\label{tab:exp-%s}\\\\\n",
              e->id, e->id);
    tex_longtable_head(b, "claim & predicted & measured & verdict");
    int rows = 0;
    for (int r = 0; v && r < v->nrows; r++) {
        if (!is_verdict_of(v, r, e))
            continue;
        const char *cells[] = {"claim", "predicted", "measured", "verdict"};
        for (int c = 0; c < 4; c++) {
            tex(b, rl_table_get(v, r, cells[c]));
            sb_printf(b, c < 3 ? " & " : " \\\\* %% verdict: ");
        }
        sb_printf(b, "%s %s\n", rl_table_get(v, r, "id"), rl_table_get(v, r, "backend"));
        if (*rl_table_get(v, r, "note")) {
            sb_printf(b, "\\multicolumn{4}{@{}>{\\raggedright\\arraybackslash}p{\\linewidth}@{}}"
                         "{\\footnotesize\\emph{");
            tex(b, rl_table_get(v, r, "note"));
            sb_printf(b, "}} \\\\[3pt]\n");
        }
        rows++;
    }
    if (rows == 0)
        sb_printf(b, "\\multicolumn{4}{l}{\\emph{no verdicts recorded}} \\\\\n");
    sb_printf(b, "\\end{longtable}\n\\endgroup\n\n");
}

/* ------------------------------------------------------------------------
 * Charts: one figure each, at the text's width, so that a chart drawn at
 * 7 inches with a 9 pt font prints its text at about 8.5 pt.
 * ---------------------------------------------------------------------- */

/* A whole text file, or NULL. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    strbuf b = {0};
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf - 1, f)) > 0;) {
        buf[n] = 0;
        sb_printf(&b, "%s", buf);
    }
    fclose(f);
    return b.s;
}

/* The charts an experiment's plot.gp draws, in its order: each
 * `chart('-suffix')` names plots/LABEL/exp-NN-suffix.{png,pdf,svg}. */
static int expected_charts(const paper_exp *e, char **out, int max)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/experiments/%s/plot.gp", rl_source_root(), e->slug);
    char *gp = slurp(path);
    int n = 0;
    for (const char *s = gp; s && n < max && (s = strstr(s, "chart('")); s++) {
        const char *q = s + 7, *end = strchr(q, '\'');
        if (!end)
            break;
        char name[128];
        snprintf(name, sizeof name, "exp-%s%.*s", e->id, (int)(end - q), q);
        bool seen = false;
        for (int i = 0; i < n; i++)
            seen |= !strcmp(out[i], name);
        if (!seen)
            out[n++] = strdup(name);
    }
    free(gp);
    return n;
}

/* Expected charts first, then any other exp-NN*.pdf found (a chart added
 * since): every chart that exists goes in. */
static int chart_names(const paper *p, const paper_exp *e, char **out, int max)
{
    int n = expected_charts(e, out, max);
    char dir[1024], prefix[16], *found[32];
    snprintf(dir, sizeof dir, "%s/%s", p->o->plots, p->o->label);
    snprintf(prefix, sizeof prefix, "exp-%s", e->id);
    int nf = list_files(dir, prefix, ".pdf", found, 32);
    for (int i = 0; i < nf; i++) {
        found[i][strlen(found[i]) - 4] = 0;
        bool known = false;
        for (int j = 0; j < n; j++)
            known |= !strcmp(out[j], found[i]);
        if (!known && n < max)
            out[n++] = found[i];
        else
            free(found[i]);
    }
    return n;
}

/* plots/LABEL/NAME.pdf into path; whether it is there. */
static bool chart_pdf(const paper *p, const char *name, char *path, size_t len)
{
    snprintf(path, len, "%s/%s/%s.pdf", p->o->plots, p->o->label, name);
    return access(path, R_OK) == 0;
}

/* One chart as a figure of its own, or a line saying it is missing; the
 * first and last drawn are labelled for the paragraph's "Figures a-b". */
static void chart_figure(strbuf *b, const paper *p, const paper_exp *e, const char *name,
                         bool first, bool last)
{
    char path[1400], abs[4096];
    if (!chart_pdf(p, name, path, sizeof path)) {
        sb_printf(b, "\\par\\noindent\\emph{Chart \\texttt{%s} is missing: no \\texttt{", name);
        tex(b, path);
        sb_printf(b, "}; \\texttt{make plot-%s LABEL=", e->id);
        tex(b, p->o->label);
        sb_printf(b, "} draws it from the CSV.}\\par\n\n");
        return;
    }
    if (!realpath(path, abs))
        snprintf(abs, sizeof abs, "%s", path);
    sb_printf(b, "\\begin{figure}[tbp]\n\\centering\n\\includegraphics[width=0.96\\linewidth]{%s}\n",
              abs);
    sb_printf(b, "\\caption[%s]{\\Chart{%s} \\emph{Drawn from experiment~%s's run on the ", name,
              name, e->id);
    tex(b, meta(e->csv, "device"));
    sb_printf(b, " (%s backend%s), ", meta(e->csv, "backend"),
              !strcmp(meta(e->csv, "quick"), "yes") ? ", quick" : "");
    tex_date(b, meta(e->csv, "date_utc"));
    sb_printf(b, ".}}\\label{fig:%s}", name);
    if (first)
        sb_printf(b, "\\label{fig:exp-%s-first}", e->id);
    if (last)
        sb_printf(b, "\\label{fig:exp-%s-last}", e->id);
    sb_printf(b, "\n\\end{figure}\n\n");
}

static int experiment_tex(const paper *p, const paper_exp *e)
{
    char *charts[32], name[32];
    char path[1400];
    int n = chart_names(p, e, charts, 32), drawn = 0;
    for (int i = 0; i < n; i++)
        drawn += chart_pdf(p, charts[i], path, sizeof path);
    strbuf b = {0};
    on_this_run(&b, p, e, drawn);
    verdict_table(&b, p->verdicts, e);
    for (int i = 0, k = 0; i < n; i++) {
        bool exists = chart_pdf(p, charts[i], path, sizeof path);
        chart_figure(&b, p, e, charts[i], exists && k == 0, exists && k == drawn - 1);
        k += exists;
        free(charts[i]);
    }
    if (n == 0)
        sb_printf(&b, "\\emph{This experiment draws no charts.}\n\n");
    snprintf(name, sizeof name, "exp-%s.tex", e->id);
    tally t = count_verdicts(p->verdicts, e);
    printf("  %s: On this run, %d verdicts, %d of %d charts\n", name,
           t.holds + t.fails + t.unmeasured, drawn, n);
    return paper_write(p->o->dest, name, &b);
}

/* ------------------------------------------------------------------------
 * The runs: title macros and the results-at-a-glance table
 * ---------------------------------------------------------------------- */

static void def(strbuf *b, const char *name, const char *value)
{
    sb_printf(b, "\\newcommand{\\%s}{", name);
    tex(b, value);
    sb_printf(b, "}\n");
}

static int run_macros(const paper *p)
{
    strbuf b = {0}, devices = {0};
    const char *first = NULL, *last = NULL;
    const rl_table *any = NULL;
    int count = 0;
    for (int i = 0; i < p->nexp; i++) {
        const rl_table *c = p->exps[i].csv;
        if (!c)
            continue;
        count++;
        any = any ? any : c;
        const char *d = meta(c, "date_utc");
        if (*d && (!first || strcmp(d, first) < 0))
            first = d;
        if (*d && (!last || strcmp(d, last) > 0))
            last = d;
        char dev[256];
        snprintf(dev, sizeof dev, "%s (%s backend)", meta(c, "device"), meta(c, "backend"));
        if (!devices.s || !strstr(devices.s, dev))
            sb_printf(&devices, "%s%s", devices.s ? ", " : "", dev);
    }
    def(&b, "RunLabel", p->o->label);
    def(&b, "RunDevices", devices.s ? devices.s : "no run");
    def(&b, "RunDevice", any ? meta(any, "device") : "no run");
    def(&b, "RunBackend", any ? meta(any, "backend") : "no run");
    sb_printf(&b, "\\newcommand{\\RunCount}{%d}\n\\newcommand{\\RunFirst}{", count);
    tex_date(&b, first ? first : "");
    sb_printf(&b, "}\n\\newcommand{\\RunLast}{");
    tex_date(&b, last ? last : "");
    sb_printf(&b, "}\n");
    sb_free(&devices);
    return paper_write(p->o->dest, "run.tex", &b);
}

static int glance_table(const paper *p)
{
    strbuf b = {0};
    sb_printf(&b, "\\begin{tabularx}{\\linewidth}{@{}>{\\raggedright\\arraybackslash}X l l l "
                  "r r r@{}}\n\\toprule\nexperiment & device (backend) & run & commit & "
                  "held & did not & not measured \\\\\n\\midrule\n");
    for (int i = 0; i < p->nexp; i++) {
        const paper_exp *e = &p->exps[i];
        tex(&b, e->slug);
        if (!e->csv) {
            sb_printf(&b, " & \\multicolumn{6}{l}{\\emph{no run under this label}} \\\\\n");
            continue;
        }
        sb_printf(&b, " & ");
        tex(&b, meta(e->csv, "device"));
        sb_printf(&b, " (%s) & ", meta(e->csv, "backend"));
        tex_date(&b, meta(e->csv, "date_utc"));
        sb_printf(&b, " & \\texttt{%.12s}%s", meta(e->csv, "git_commit"),
                  strstr(meta(e->csv, "git_commit"), "dirty") ? "*" : "");
        tally t = count_verdicts(p->verdicts, e);
        sb_printf(&b, " & %d & %d & %d \\\\\n", t.holds, t.fails, t.unmeasured);
    }
    sb_printf(&b, "\\bottomrule\n\\end{tabularx}\n");
    return paper_write(p->o->dest, "glance.tex", &b);
}

/* ------------------------------------------------------------------------
 * Models: the datasheet and the decode tokens/s ceiling
 * ---------------------------------------------------------------------- */

static int datasheet_table(const tool_opts *o)
{
    strbuf b = {0};
    sb_printf(&b, "\\begin{tabularx}{\\linewidth}{@{}l *{6}{>{\\raggedleft\\arraybackslash}X}@{}}\n"
                  "\\toprule\nGPU & SMs & memory GB/s & FP16 tensor TFLOP/s & FP32 TFLOP/s & "
                  "L2 MB & ridge FLOP/B (model) \\\\\n\\midrule\n");
    for (const rl_datasheet *d = rl_datasheets; d->slug; d++)
        sb_printf(&b, "%s & %d & %.0f & %.1f & %.1f & %.0f & %.0f \\\\\n", d->name, d->sm_count,
                  d->mem_gbps, d->fp16_tflops, d->fp32_tflops, d->l2_mb,
                  rl_ridge_point(d->fp16_tflops * 1e12, d->mem_gbps * 1e9));
    sb_printf(&b, "\\bottomrule\n\\end{tabularx}\n");
    return paper_write(o->dest, "datasheet.tex", &b);
}

/* Weights read per decoded token: the claims register's examples. */
static const struct { const char *name; double bytes; } MODELS[] = {
    {"4.8 GB of weights", 4.8e9},
    {"Llama 3.1 8B, F16 (14.96 GiB)", 14.96 * 1073741824.0},
    {"Llama 3.1 8B, Q4\\_K\\_M (4.58 GiB)", 4.58 * 1073741824.0},
    {"Llama 3.1 70B, Q4\\_K\\_M (40.2 GiB)", 40.2 * 1073741824.0},
};

static const paper_exp *find_exp(const paper *p, const char *id)
{
    for (int i = 0; i < p->nexp; i++)
        if (!strcmp(p->exps[i].id, id))
            return &p->exps[i];
    return NULL;
}

/* The datasheet rows, then this run's device at the bandwidth that
 * experiment 03 (decode) was judged against: the same number as its
 * section, never another measurement. */
static int tokens_table(const paper *p)
{
    enum { NM = sizeof MODELS / sizeof MODELS[0] };
    strbuf b = {0};
    sb_printf(&b, "\\begin{tabularx}{\\linewidth}{@{}l r *{%d}{>{\\raggedleft\\arraybackslash}X}@{}}\n"
                  "\\toprule\ndevice & GB/s",
              NM);
    for (int m = 0; m < NM; m++)
        sb_printf(&b, " & %s", MODELS[m].name);
    sb_printf(&b, " \\\\\n\\midrule\n");
    for (const rl_datasheet *d = rl_datasheets; d->slug; d++) {
        sb_printf(&b, "%s & %.0f", d->name, d->mem_gbps);
        for (int m = 0; m < NM; m++)
            sb_printf(&b, " & %.0f", rl_tokens_per_s_ceiling(d->mem_gbps * 1e9, MODELS[m].bytes));
        sb_printf(&b, " \\\\\n");
    }
    const paper_exp *e03 = find_exp(p, "03");
    used_ceiling u[PAPER_MAX_CEILINGS];
    int nu = e03 && e03->csv ? used_ceilings(e03->csv, u, PAPER_MAX_CEILINGS) : 0;
    if (nu > 0) {
        sb_printf(&b, "\\midrule\n");
        tex(&b, meta(e03->csv, "device"));
        sb_printf(&b, ", experiment 03's ceiling & %.1f", u[0].gbps);
        for (int m = 0; m < NM; m++)
            sb_printf(&b, " & %.1f", rl_tokens_per_s_ceiling(u[0].gbps * 1e9, MODELS[m].bytes));
        sb_printf(&b, " \\\\\n");
    }
    sb_printf(&b, "\\bottomrule\n\\end{tabularx}\n\n");
    if (nu > 0) {
        sb_printf(&b, "The last row uses %.1f~GB/s, ", u[0].gbps);
        tex(&b, u[0].name);
        sb_printf(&b, ": the ceiling that experiment~03's decode rows were judged against "
                      "(Section~\\ref{sec:exp-03} and Table~\\ref{tab:ceilings}), measured at "
                      "its start on ");
        tex_date(&b, meta(e03->csv, "date_utc"));
        sb_printf(&b, ".\n");
    } else {
        sb_printf(&b, "Experiment~03 has no run under this label: no row for a measured "
                      "device.\n");
    }
    return paper_write(p->o->dest, "tokens.tex", &b);
}

/* ------------------------------------------------------------------------
 * The experiments and the command
 * ---------------------------------------------------------------------- */

/* Every experiments/NN-slug/ of the source tree, with this label's CSV. */
static void find_experiments(paper *p)
{
    char dir[1024], *names[64];
    snprintf(dir, sizeof dir, "%s/experiments", rl_source_root());
    int n = list_files(dir, "", "", names, 64);
    for (int i = 0; i < n; i++) {
        const char *s = names[i];
        if (s[0] >= '0' && s[0] <= '9' && s[1] >= '0' && s[1] <= '9' && s[2] == '-' &&
            p->nexp < PAPER_MAX_EXPS) {
            paper_exp *e = &p->exps[p->nexp++];
            snprintf(e->id, sizeof e->id, "%.2s", s);
            snprintf(e->slug, sizeof e->slug, "%s", s);
            char path[1400], why[1400];
            snprintf(path, sizeof path, "%s/%s/exp-%s.csv", p->o->out, p->o->label, e->id);
            e->csv = rl_table_read(path, why, sizeof why);
        }
        free(names[i]);
    }
}

rl_table *any_run_of(const paper *p, const char *id)
{
    char path[1400], why[1400], dir[1200], *labels[64];
    snprintf(path, sizeof path, "%s/%s/exp-%s.csv", p->o->out, p->o->label, id);
    rl_table *t = rl_table_read(path, why, sizeof why);
    const char *roots[] = {p->o->out, NULL};
    char source_results[1100];
    snprintf(source_results, sizeof source_results, "%s/results", rl_source_root());
    roots[1] = source_results;
    for (int r = 0; r < 2 && !t; r++) {
        snprintf(dir, sizeof dir, "%s/reference", roots[r]);
        int n = list_files(dir, "", "", labels, 64);
        for (int i = 0; i < n; i++) {
            snprintf(path, sizeof path, "%s/%s/exp-%s.csv", dir, labels[i], id);
            if (!t && labels[i][0] != '.')
                t = rl_table_read(path, why, sizeof why);
            free(labels[i]);
        }
    }
    return t;
}

int tool_paper_tables(int argc, char **argv)
{
    tool_opts o = {0};
    int first = tool_parse(argc, argv, &o, USAGE);
    if (first < 0 || first != argc || !o.label || !o.dest) {
        fprintf(stderr, "rooflab paper-tables: needs --label LABEL and --dest DIR (see --help)\n");
        return RL_EXIT_USAGE;
    }
    if (rl_mkdirs(o.dest) != 0) {
        fprintf(stderr, "rooflab paper-tables: cannot create %s: %m\n", o.dest);
        return RL_EXIT_FAILED;
    }
    char path[1200], why[1400];
    snprintf(path, sizeof path, "%s/%s/verdicts.csv", o.out, o.label);
    paper p = {.o = &o, .verdicts = rl_table_read(path, why, sizeof why)};
    if (!p.verdicts) {
        fprintf(stderr, "rooflab paper-tables: %s (run the experiments with LABEL=%s first)\n",
                why, o.label);
        return RL_EXIT_USAGE;
    }
    printf("rooflab paper-tables: %s -> %s\n", o.label, o.dest);
    find_experiments(&p);
    int rc = 0;
    for (int i = 0; i < p.nexp; i++)
        if (p.exps[i].csv)
            rc |= experiment_tex(&p, &p.exps[i]);
    rc |= run_macros(&p);
    rc |= glance_table(&p);
    rc |= limitations_tex(&p);
    rc |= ceilings_tex(&p);
    rc |= references_tex(&p);
    rc |= datasheet_table(&o);
    rc |= tokens_table(&p);
    for (int i = 0; i < p.nexp; i++)
        rl_table_free(p.exps[i].csv);
    rl_table_free(p.verdicts);
    return rc ? RL_EXIT_FAILED : RL_EXIT_OK;
}
