/*
 * paper_ceilings.c -- the ceilings an experiment was judged against, in the
 * same words wherever the paper quotes them (tex_used_ceilings: a section's
 * "On this run", the appendix's table, the decode-ceiling row), and
 *
 *   ceilings.tex  the appendix's table: per experiment, the bandwidth its
 *                 rows were judged against and its DRAM roofs' trials
 *
 * Each experiment measures its ceilings at its own start, so there is no
 * single "the bandwidth" of a label: the paper quotes each experiment's own.
 * Everything here is read from the CSV's header as data: the roofs
 * (roof_<level>_<pattern>_gbps), a rung measured again during the run
 * (remeasured_<level>_<pattern>_gbps), and where the roofs came from and
 * when (ceilings_origin, ceilings_date_utc). ceilings_how and
 * ceiling_remeasured say the same for people and are quoted, never parsed.
 */
#include "paper.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const PAPER_LEVELS[PAPER_NLEVELS] = {"L1", "L2", "LLC", "DRAM"};
const char *const PAPER_PATTERNS[PAPER_NPATTERNS] = {"read", "copy", "triad"};

bool roof_band(const rl_table *csv, const char *level, const char *pattern, double *best,
               double *worst)
{
    char key[64];
    snprintf(key, sizeof key, "roof_%s_%s_gbps", level, pattern);
    const char *v = rl_table_meta(csv, key);
    /* three plain numbers, "best worst probe_bytes" (ceilings.c writes them) */
    return v && sscanf(v, "%lf %lf", best, worst) == 2;
}

static bool close_to(double a, double b, double rel)
{
    return fabs(a - b) <= rel * fabs(b);
}

/* A rung measured again during the run (roofs.c does so when a point beats
 * it): its new best, from remeasured_<level>_<pattern>_gbps; false if none. */
static bool remeasured_rung(const rl_table *csv, const char *level, const char *pattern,
                            double *gbps)
{
    char key[64];
    snprintf(key, sizeof key, "remeasured_%s_%s_gbps", level, pattern);
    const char *v = rl_table_meta(csv, key);
    if (!v)
        return false;
    *gbps = atof(v);
    return true;
}

/* Names a ceiling after the roof it equals: a roof's best trial in the
 * header, or a rung measured again during the run. A CSV written before
 * the remeasured_ keys says which rung only in words (ceiling_remeasured):
 * it is named as such, not guessed. */
static void name_ceiling(const rl_table *csv, used_ceiling *u)
{
    double best, worst, again;
    for (int l = 0; l < PAPER_NLEVELS; l++)
        for (int k = 0; k < PAPER_NPATTERNS; k++)
            if (roof_band(csv, PAPER_LEVELS[l], PAPER_PATTERNS[k], &best, &worst) &&
                close_to(u->gbps, best, 1e-4)) {
                snprintf(u->name, sizeof u->name, "%s %s", PAPER_LEVELS[l], PAPER_PATTERNS[k]);
                u->worst = worst;
                return;
            }
    for (int l = 0; l < PAPER_NLEVELS; l++)
        for (int k = 0; k < PAPER_NPATTERNS; k++)
            if (remeasured_rung(csv, PAPER_LEVELS[l], PAPER_PATTERNS[k], &again) &&
                close_to(u->gbps, again, 2e-3)) {
                snprintf(u->name, sizeof u->name, "%s %s, measured again during the run",
                         PAPER_LEVELS[l], PAPER_PATTERNS[k]);
                return;
            }
    if (rl_table_meta(csv, "ceiling_remeasured"))
        snprintf(u->name, sizeof u->name, "a roof measured again, named in words only");
    else
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

/* When the roofs were measured, and whether this run measured them: from
 * ceilings_origin and ceilings_date_utc. A CSV older than those keys says
 * so in words only (ceilings_how), which are not parsed: a full run always
 * measured its own at its start (make reference never passes --ceilings),
 * any other may have reused them, and the paper says it cannot tell. */
void tex_ceilings_when(strbuf *b, const rl_table *csv)
{
    const char *origin = meta(csv, "ceilings_origin");
    if (!strcmp(origin, "cached") || !strcmp(origin, "file")) {
        sb_printf(b, "measured ");
        tex_date(b, meta(csv, "ceilings_date_utc"));
        sb_printf(b, "%s", !strcmp(origin, "cached")
                               ? " and reused (cached for this device)"
                               : " and read from a file (\\texttt{-{}-ceilings})");
    } else if (!strcmp(origin, "measured") || !strcmp(meta(csv, "mode"), "full")) {
        sb_printf(b, "measured at its start");
    } else {
        sb_printf(b, "measured at its start or reused from this device's last measurement "
                     "(a CSV older than \\texttt{ceilings\\_origin} says which only in words, "
                     "in its \\texttt{ceilings\\_how})");
    }
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
        for (int k = 0; k < PAPER_NPATTERNS; k++)
            band_cell(&b, e->csv, PAPER_PATTERNS[k]);
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
