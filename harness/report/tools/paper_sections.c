/*
 * paper_sections.c -- exp-NN.tex, one per experiment with a run under the
 * label: the "On this run" paragraph (device, commit, date, ceiling, what
 * held, what did not and why, from verdicts.csv), the table of predicted vs
 * measured, and one figure per chart (plots/LABEL/exp-NN*.pdf).
 */
#include "paper.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------------
 * Verdicts
 * ---------------------------------------------------------------------- */

/* A verdict's kind, as every reader of verdicts.csv counts it
 * (rl_verdict_kind): "premise not met" apart, and any other cell than the
 * four names ("not measured (busy host)") as not measured. */
typedef enum {
    HOLDS = RL_HOLDS,
    FAILS = RL_DOES_NOT_HOLD,
    UNMEASURED = RL_NOT_MEASURED,
    PREMISE = RL_PREMISE_NOT_MET
} verdict_kind;

static verdict_kind kind_of(const char *verdict) { return (verdict_kind)rl_verdict_kind(verdict); }

/* A verdict row of this experiment, from the backend its CSV ran on (a
 * label may hold verdicts of another backend whose charts are not here). */
static bool is_verdict_of(const rl_table *v, int r, const paper_exp *e)
{
    const char *backend = meta(e->csv, "backend");
    return !strcmp(rl_table_get(v, r, "experiment"), e->slug) &&
           (!*backend || !strcmp(rl_table_get(v, r, "backend"), backend));
}

tally count_verdicts(const rl_table *v, const paper_exp *e)
{
    tally t = {0};
    for (int r = 0; v && r < v->nrows; r++) {
        if (!is_verdict_of(v, r, e))
            continue;
        switch (kind_of(rl_table_get(v, r, "verdict"))) {
        case HOLDS: t.holds++; break;
        case FAILS: t.fails++; break;
        case UNMEASURED: t.unmeasured++; break;
        case PREMISE: t.premise++; break;
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

/* A heading and the verdicts of one kind as an itemized list. */
static void verdict_items(strbuf *b, const char *heading, const rl_table *v, const paper_exp *e,
                          verdict_kind kind)
{
    sb_printf(b, "\n%s:\n\\begin{itemize}\n", heading);
    verdict_list(b, v, e, kind);
    sb_printf(b, "\\end{itemize}\n");
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
    int n = tally_total(t);
    sb_printf(b, ". Of its %d verdict%s, %d held, %d did not hold", n, n == 1 ? "" : "s", t.holds,
              t.fails);
    /* The fourth kind only where it occurs: a run without one reads as it
     * did before there were four. */
    if (t.premise)
        sb_printf(b, ", %d %s not measured and %d %s measured with the claim's premise not met",
                  t.unmeasured, t.unmeasured == 1 ? "was" : "were", t.premise,
                  t.premise == 1 ? "was" : "were");
    else
        sb_printf(b, " and %d %s not measured", t.unmeasured, t.unmeasured == 1 ? "was" : "were");
    sb_printf(b, " (Table~\\ref{tab:exp-%s}", e->id);
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
    if (t.fails)
        verdict_items(b, "Did not hold on this run", p->verdicts, e, FAILS);
    if (t.premise)
        verdict_items(b, "Premise not met on this run (measured, not judged)", p->verdicts, e,
                      PREMISE);
    if (t.unmeasured)
        verdict_items(b, "Not measured on this run", p->verdicts, e, UNMEASURED);
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

int experiment_tex(const paper *p, const paper_exp *e)
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
    printf("  %s: On this run, %d verdicts, %d of %d charts\n", name, tally_total(t), drawn, n);
    return paper_write(p->o->dest, name, &b);
}
