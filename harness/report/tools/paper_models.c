/*
 * paper_models.c -- the appendix's models, never measured here:
 *
 *   datasheet.tex  the harness's datasheet table, with each GPU's ridge point
 *   tokens.tex     the decode tokens/s ceiling (bandwidth over the bytes of
 *                  the weights) for model sizes x devices, and a last row at
 *                  the bandwidth experiment 03 was judged against
 */
#include "paper.h"

#include <stdio.h>
#include <string.h>

int datasheet_tex(const tool_opts *o)
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
int tokens_tex(const paper *p)
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
