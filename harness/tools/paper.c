/*
 * paper.c -- `rooflab paper-tables --label LABEL --dest DIR`: the parts of
 * the writeup that come from data, never typed by hand.
 *
 *   run.tex        macros naming the run (label, device, backend, date, commit)
 *   exp-NN.tex     per experiment with results: one figure with its charts
 *                  (plots/LABEL/exp-NN*.pdf) and the table of predicted vs
 *                  measured from results/LABEL/verdicts.csv
 *   datasheet.tex  the harness's datasheet table, with each ridge point (a model)
 *   tokens.tex     the decode tokens/s ceiling (a model) for model sizes x devices
 *
 * paper/paper.tex inputs them; paper/build.sh runs this and pdflatex.
 */
#include "tools.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *USAGE =
    "usage: rooflab paper-tables --label LABEL --dest DIR [--out DIR] [--plots DIR]\n\n"
    "Writes the writeup's generated LaTeX (run.tex, exp-NN.tex, datasheet.tex, tokens.tex)\n"
    "into DIR from results/LABEL/ and plots/LABEL/.\n";

/* LaTeX's special characters, escaped for running text. */
static void tex(strbuf *b, const char *s)
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

static int write_out(const char *dest, const char *name, strbuf *b)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dest, name);
    int rc = rl_write_file_atomic(path, b->s ? b->s : "");
    if (rc != 0)
        fprintf(stderr, "rooflab paper-tables: cannot write %s: %m\n", path);
    sb_free(b);
    return rc;
}

/* Names in order, an extension's '.' sorting first: exp-05.pdf before
 * exp-05-chain.pdf, so an experiment's main chart leads its figure. */
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

static void figure(strbuf *b, const tool_opts *o, const char *id, const rl_table *csv)
{
    char dir[1024], *charts[16], abs[4096];
    snprintf(dir, sizeof dir, "%s/%s", o->plots, o->label);
    char prefix[32];
    snprintf(prefix, sizeof prefix, "exp-%s", id);
    int n = list_files(dir, prefix, ".pdf", charts, 16);
    if (n == 0) {
        sb_printf(b, "\\emph{No charts under \\texttt{");
        tex(b, dir);
        sb_printf(b, "} for this run.}\n\n");
        return;
    }
    /* Two charts a row; [H] keeps each figure in its experiment's section. */
    sb_printf(b, "\\begin{figure}[H]\n\\centering\n");
    for (int i = 0; i < n; i++) {
        char path[1400];
        snprintf(path, sizeof path, "%s/%s", dir, charts[i]);
        if (!realpath(path, abs))
            snprintf(abs, sizeof abs, "%s", path);
        sb_printf(b, "\\includegraphics[width=%s\\linewidth]{%s}%s\n",
                  n == 1 ? "0.8" : "0.495", abs, i % 2 == 1 || i == n - 1 ? "\\par\\smallskip" : "\\hfill");
        free(charts[i]);
    }
    sb_printf(b, "\\caption{Experiment %s, ", id);
    tex(b, rl_table_meta(csv, "title") ? rl_table_meta(csv, "title") : "");
    sb_printf(b, ": ");
    tex(b, rl_table_meta(csv, "device") ? rl_table_meta(csv, "device") : "?");
    sb_printf(b, " (%s backend%s).}\n\\label{fig:exp-%s}\n\\end{figure}\n\n",
              rl_table_meta(csv, "backend") ? rl_table_meta(csv, "backend") : "?",
              rl_table_meta(csv, "quick") && !strcmp(rl_table_meta(csv, "quick"), "yes")
                  ? ", quick run" : "", id);
}

/* Predicted vs measured, one row per verdict (each marked with a comment
 * so that tests can count them). */
static void verdict_table(strbuf *b, const rl_table *v, const char *slug, const char *id)
{
    sb_printf(b, "\\begin{table}[H]\n\\centering\\small\n"
                 "\\begin{tabular}{p{0.38\\linewidth}p{0.17\\linewidth}p{0.14\\linewidth}"
                 "p{0.17\\linewidth}}\n\\toprule\nclaim & predicted & measured & verdict \\\\\n"
                 "\\midrule\n");
    int rows = 0;
    for (int r = 0; v && r < v->nrows; r++) {
        if (strcmp(rl_table_get(v, r, "experiment"), slug))
            continue;
        const char *cells[] = {"claim", "predicted", "measured", "verdict"};
        for (int c = 0; c < 4; c++) {
            tex(b, rl_table_get(v, r, cells[c]));
            sb_printf(b, c < 3 ? " & " : " \\\\ %% verdict: ");
        }
        sb_printf(b, "%s %s\n", rl_table_get(v, r, "id"), rl_table_get(v, r, "backend"));
        if (*rl_table_get(v, r, "note")) {
            sb_printf(b, "\\multicolumn{4}{p{0.92\\linewidth}}{\\footnotesize\\emph{");
            tex(b, rl_table_get(v, r, "note"));
            sb_printf(b, "}} \\\\[2pt]\n");
        }
        rows++;
    }
    if (rows == 0)
        sb_printf(b, "\\multicolumn{4}{l}{\\emph{no verdicts recorded}} \\\\\n");
    sb_printf(b, "\\bottomrule\n\\end{tabular}\n\\caption{Experiment %s: predicted and measured "
                 "(from \\texttt{verdicts.csv}).}\n\\end{table}\n",
              id);
}

static int experiment_files(const tool_opts *o, const rl_table *verdicts, rl_table **first_csv)
{
    char dir[1024], *slugs[64];
    snprintf(dir, sizeof dir, "%s/experiments", rl_source_root());
    int n = list_files(dir, "", "", slugs, 64), rc = 0;
    for (int i = 0; i < n; i++) {
        char id[3] = {slugs[i][0], slugs[i][1], 0}, path[1400], why[1400], name[32];
        if (slugs[i][0] < '0' || slugs[i][0] > '9' || slugs[i][2] != '-')
            goto next;
        snprintf(path, sizeof path, "%s/%s/exp-%s.csv", o->out, o->label, id);
        rl_table *csv = rl_table_read(path, why, sizeof why);
        if (!csv)
            goto next;
        strbuf b = {0};
        figure(&b, o, id, csv);
        verdict_table(&b, verdicts, slugs[i], id);
        snprintf(name, sizeof name, "exp-%s.tex", id);
        rc |= write_out(o->dest, name, &b);
        printf("  %s: figure and %s verdicts\n", name, slugs[i]);
        if (!*first_csv)
            *first_csv = csv;
        else
            rl_table_free(csv);
    next:
        free(slugs[i]);
    }
    return rc;
}

static int run_macros(const tool_opts *o, const rl_table *csv)
{
    strbuf b = {0};
    const char *keys[][2] = {{"RunDevice", "device"}, {"RunBackend", "backend"},
                             {"RunDate", "date_utc"}, {"RunCommit", "git_commit"}};
    sb_printf(&b, "\\newcommand{\\RunLabel}{");
    tex(&b, o->label);
    sb_printf(&b, "}\n");
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const char *v = csv ? rl_table_meta(csv, keys[i][1]) : NULL;
        sb_printf(&b, "\\newcommand{\\%s}{", keys[i][0]);
        tex(&b, v ? v : "no run");
        sb_printf(&b, "}\n");
    }
    return write_out(o->dest, "run.tex", &b);
}

static int datasheet_table(const tool_opts *o)
{
    strbuf b = {0};
    sb_printf(&b, "\\begin{tabular}{lrrrrrr}\n\\toprule\nGPU & SMs & GB/s & FP16 TFLOP/s & FP32 "
                  "TFLOP/s & L2 MB & ridge (FLOP/B, model) \\\\\n\\midrule\n");
    for (const rl_datasheet *d = rl_datasheets; d->slug; d++)
        sb_printf(&b, "%s & %d & %.0f & %.1f & %.1f & %.0f & %.0f \\\\\n", d->name, d->sm_count,
                  d->mem_gbps, d->fp16_tflops, d->fp32_tflops, d->l2_mb,
                  rl_ridge_point(d->fp16_tflops * 1e12, d->mem_gbps * 1e9));
    sb_printf(&b, "\\bottomrule\n\\end{tabular}\n");
    return write_out(o->dest, "datasheet.tex", &b);
}

/* Weights read per decoded token: the claims register's examples. */
static const struct { const char *name; double bytes; } MODELS[] = {
    {"4.8 GB of weights", 4.8e9},
    {"Llama 3.1 8B, F16 (14.96 GiB)", 14.96 * 1073741824.0},
    {"Llama 3.1 8B, Q4\\_K\\_M (4.58 GiB)", 4.58 * 1073741824.0},
    {"Llama 3.1 70B, Q4\\_K\\_M (40.2 GiB)", 40.2 * 1073741824.0},
};

static int tokens_table(const tool_opts *o)
{
    enum { NM = sizeof MODELS / sizeof MODELS[0] };
    strbuf b = {0};
    sb_printf(&b, "\\begin{tabular}{l r");
    for (int m = 0; m < NM; m++)
        sb_printf(&b, "r");
    sb_printf(&b, "}\n\\toprule\ndevice & GB/s");
    for (int m = 0; m < NM; m++)
        sb_printf(&b, " & %s", MODELS[m].name);
    sb_printf(&b, " \\\\\n\\midrule\n");
    for (const rl_datasheet *d = rl_datasheets; d->slug; d++) {
        sb_printf(&b, "%s & %.0f", d->name, d->mem_gbps);
        for (int m = 0; m < NM; m++)
            sb_printf(&b, " & %.0f", rl_tokens_per_s_ceiling(d->mem_gbps * 1e9, MODELS[m].bytes));
        sb_printf(&b, " \\\\\n");
    }
    char path[1200], gbps[64];
    snprintf(path, sizeof path, "%s/%s/ceilings.csv", o->out, o->label);
    if (rl_csv_read_meta(path, "copy_gbps", gbps, sizeof gbps) && atof(gbps) > 0) {
        sb_printf(&b, "\\midrule\nthis run's device, measured & %.0f", atof(gbps));
        for (int m = 0; m < NM; m++)
            sb_printf(&b, " & %.1f", rl_tokens_per_s_ceiling(atof(gbps) * 1e9, MODELS[m].bytes));
        sb_printf(&b, " \\\\\n");
    }
    sb_printf(&b, "\\bottomrule\n\\end{tabular}\n");
    return write_out(o->dest, "tokens.tex", &b);
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
    rl_table *verdicts = rl_table_read(path, why, sizeof why);
    if (!verdicts) {
        fprintf(stderr, "rooflab paper-tables: %s (run the experiments with LABEL=%s first)\n",
                why, o.label);
        return RL_EXIT_USAGE;
    }
    printf("rooflab paper-tables: %s -> %s\n", o.label, o.dest);
    rl_table *first_csv = NULL;
    int rc = experiment_files(&o, verdicts, &first_csv);
    rc |= run_macros(&o, first_csv);
    rc |= datasheet_table(&o);
    rc |= tokens_table(&o);
    rl_table_free(first_csv);
    rl_table_free(verdicts);
    return rc ? RL_EXIT_FAILED : RL_EXIT_OK;
}
