/*
 * summary.c -- `rooflab summary --label LABEL`: every claim of every
 * experiment run under a label, with its verdict per backend and the
 * numbers, from results/LABEL/verdicts.csv. Printed, and written to
 * results/LABEL/summary.md (make all does both).
 */
#include "tools.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const char *USAGE =
    "usage: rooflab summary --label LABEL [--out DIR] [--counts]\n\n"
    "Prints every verdict in DIR/LABEL/verdicts.csv, grouped by experiment, and writes\n"
    "the same as a markdown table to DIR/LABEL/summary.md.\n\n"
    "  --counts   print only how many verdicts of each kind, as data for scripts, one\n"
    "             key=value a line (holds, does_not_hold, not_measured, premise_not_met),\n"
    "             and write nothing\n";

/* Markdown cells cannot hold '|' or newlines. */
static void md_cell(strbuf *b, const char *s)
{
    for (const char *p = s; *p; p++)
        sb_printf(b, "%c", *p == '|' ? '/' : *p == '\n' ? ' ' : *p);
}

/* Takes --counts out of argv (the common parser knows only the common
 * options); whether it was there. */
static bool take_counts_flag(int *argc, char **argv)
{
    bool found = false;
    int kept = 0;
    for (int i = 0; i < *argc; i++) {
        if (i > 0 && !strcmp(argv[i], "--counts"))
            found = true;
        else
            argv[kept++] = argv[i];
    }
    *argc = kept;
    return found;
}

/* How many verdicts of each kind (rl_verdict_kind: "premise not met" apart). */
static void count_kinds(const rl_table *t, int n[RL_PREMISE_NOT_MET + 1])
{
    for (int k = 0; k <= RL_PREMISE_NOT_MET; k++)
        n[k] = 0;
    for (int r = 0; r < t->nrows; r++)
        n[rl_verdict_kind(rl_table_get(t, r, "verdict"))]++;
}

/* --counts: the counts as data, so that no script reads them back out of
 * the sentence below (harness/ops/slurm/finish.sh asks this). */
static void print_counts(const rl_table *t)
{
    int n[RL_PREMISE_NOT_MET + 1];
    count_kinds(t, n);
    printf("holds=%d\ndoes_not_hold=%d\nnot_measured=%d\npremise_not_met=%d\n", n[RL_HOLDS],
           n[RL_DOES_NOT_HOLD], n[RL_NOT_MEASURED], n[RL_PREMISE_NOT_MET]);
}

int tool_summary(int argc, char **argv)
{
    tool_opts o = {0};
    bool counts_only = take_counts_flag(&argc, argv);
    int first = tool_parse(argc, argv, &o, USAGE);
    if (first < 0 || first != argc || !o.label) {
        fprintf(stderr, "rooflab summary: needs --label LABEL and nothing else (see --help)\n");
        return RL_EXIT_USAGE;
    }
    char path[1024], why[1200];
    snprintf(path, sizeof path, "%s/%s/verdicts.csv", o.out, o.label);
    rl_table *t = rl_table_read(path, why, sizeof why);
    if (!t) {
        fprintf(stderr, "rooflab summary: %s (run some experiments with LABEL=%s first)\n", why,
                o.label);
        return RL_EXIT_USAGE;
    }
    if (counts_only) {
        print_counts(t);
        rl_table_free(t);
        return RL_EXIT_OK;
    }

    strbuf md = {0};
    char date[64];
    rl_utc_now(date, sizeof date);
    sb_printf(&md, "# rooflab summary: %s\n\nGenerated from `%s` on %s. One row per claim and "
                   "backend; every number is a measurement, or a model where the claim says "
                   "so. A quick run's verdicts come from short sweeps.\n",
              o.label, path, date);
    printf("== rooflab summary: %s ==\n", o.label);
    const char *last = "";
    for (int r = 0; r < t->nrows; r++) {
        const char *exp = rl_table_get(t, r, "experiment");
        if (strcmp(exp, last)) {
            printf("\n%s (%s backend: %s%s)\n", exp, rl_table_get(t, r, "backend"),
                   rl_table_get(t, r, "device"),
                   !strcmp(rl_table_get(t, r, "quick"), "yes") ? ", quick run" : "");
            sb_printf(&md, "\n## %s\n\n| claim | backend | predicted | measured | verdict | note |\n"
                           "|---|---|---|---|---|---|\n", exp);
            last = exp;
        }
        const char *cols[] = {"claim", "backend", "predicted", "measured", "verdict", "note"};
        printf("  %-44s %-16s %-16s %s\n", rl_table_get(t, r, "claim"),
               rl_table_get(t, r, "predicted"), rl_table_get(t, r, "measured"),
               rl_table_get(t, r, "verdict"));
        sb_printf(&md, "|");
        for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++) {
            sb_printf(&md, " ");
            md_cell(&md, rl_table_get(t, r, cols[c]));
            sb_printf(&md, " |");
        }
        sb_printf(&md, "\n");
    }
    /* For readers; scripts ask --counts. The fourth kind comes last, after
     * the three that older summaries counted. */
    int n[RL_PREMISE_NOT_MET + 1];
    count_kinds(t, n);
    char counts[160];
    snprintf(counts, sizeof counts, "%d hold, %d do not hold, %d not measured, %d premise not met",
             n[RL_HOLDS], n[RL_DOES_NOT_HOLD], n[RL_NOT_MEASURED], n[RL_PREMISE_NOT_MET]);
    printf("\n%s (notes in the summary file)\n", counts);
    sb_printf(&md, "\n%s.\n", counts);

    snprintf(path, sizeof path, "%s/%s/summary.md", o.out, o.label);
    int rc = rl_write_file_atomic(path, md.s ? md.s : "");
    if (rc == 0)
        printf("wrote %s\n", path);
    else
        fprintf(stderr, "rooflab summary: cannot write %s: %m\n", path);
    sb_free(&md);
    rl_table_free(t);
    return rc == 0 ? RL_EXIT_OK : RL_EXIT_FAILED;
}
