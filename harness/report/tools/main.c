/*
 * main.c -- `rooflab`, the command behind make compare, make all's summary,
 * make paper and make stability, and the one reader (query) and writer
 * (csv-write) of results files for charts and scripts. It reads results/
 * and writes reports; it runs nothing.
 */
#include "tools.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *USAGE =
    "usage: rooflab COMMAND [options]\n\n"
    "commands:\n"
    "  compare --exp NN LABEL LABEL...   overlay the runs' charts, print per-point ratios\n"
    "                                    against the first run\n"
    "  summary --label LABEL             every verdict of a label, printed and written to\n"
    "                                    results/LABEL/summary.md (--counts: how many of\n"
    "                                    each kind, as key=value data for scripts)\n"
    "  paper-tables --label LABEL --dest DIR\n"
    "                                    the writeup's generated LaTeX: figures, verdict\n"
    "                                    tables, datasheet and tokens/s tables\n"
    "  stability --exp NN LABEL LABEL... repeated runs side by side: each verdict in every\n"
    "                                    run (same in k of N), each point's spread; also\n"
    "                                    written to results/PREFIX/stability.md\n"
    "  query [options] FILE... ACTION ARG...\n"
    "                                    the one reader of results CSVs for charts and\n"
    "                                    scripts: FILE meta KEY... (header values), FILE\n"
    "                                    has-columns NAME..., FILE... columns NAME...\n"
    "                                    [--where COL=VALUE] [--distinct] [--words]\n"
    "                                    (exit 1: a key or column is absent)\n"
    "  meta [--default TEXT] FILE KEY... the same as query FILE meta KEY...\n"
    "  csv-write OUT --columns A,B,... [--meta KEY=VALUE]... < ROWS\n"
    "                                    a script's CSV (tab-separated rows on stdin)\n"
    "                                    written as the experiments write theirs\n\n"
    "common options: --out DIR (results root, default results), --plots DIR (charts root,\n"
    "default plots), --help. Exit codes: 0 done, 1 could not write (query, meta: a key or\n"
    "column is absent; stability: a run's file is missing), 2 bad usage or no results.\n"
    "rooflab COMMAND --help says more.\n";

void sb_printf(strbuf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->len;
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0)
            return;
        if (b->s && (size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        b->cap = (b->cap + (size_t)n + 1) * 2;
        b->s = realloc(b->s, b->cap);
        if (!b->s)
            rl_die(RL_EXIT_FAILED, "out of memory");
    }
}

void sb_free(strbuf *b)
{
    free(b->s);
    *b = (strbuf){0};
}

int tool_parse(int argc, char **argv, tool_opts *o, const char *usage)
{
    o->out = "results";
    o->plots = "plots";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char **slot = !strcmp(a, "--out")     ? &o->out
                            : !strcmp(a, "--plots") ? &o->plots
                            : !strcmp(a, "--exp")   ? &o->exp
                            : !strcmp(a, "--value") ? &o->value
                            : !strcmp(a, "--label") ? &o->label
                            : !strcmp(a, "--dest")  ? &o->dest
                            : !strcmp(a, "--prefix") ? &o->prefix
                            : !strcmp(a, "--charts-file") ? &o->charts_file
                            : !strcmp(a, "--ratios-file") ? &o->ratios_file
                                                    : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            printf("%s", usage);
            exit(RL_EXIT_OK);
        }
        if (slot) {
            if (i + 1 >= argc || !argv[i + 1][0]) {
                fprintf(stderr, "rooflab %s: %s needs a value (see --help)\n", argv[0], a);
                return -1;
            }
            *slot = argv[++i];
            continue;
        }
        if (!strncmp(a, "--", 2)) {
            fprintf(stderr, "rooflab %s: unknown option '%s' (see --help)\n", argv[0], a);
            return -1;
        }
        return i;
    }
    return argc;
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        printf("%s", USAGE);
        return argc < 2 ? RL_EXIT_USAGE : RL_EXIT_OK;
    }
    if (!strcmp(argv[1], "compare"))
        return tool_compare(argc - 1, argv + 1);
    if (!strcmp(argv[1], "summary"))
        return tool_summary(argc - 1, argv + 1);
    if (!strcmp(argv[1], "paper-tables"))
        return tool_paper_tables(argc - 1, argv + 1);
    if (!strcmp(argv[1], "meta"))
        return tool_meta(argc - 1, argv + 1);
    if (!strcmp(argv[1], "query"))
        return tool_query(argc - 1, argv + 1);
    if (!strcmp(argv[1], "csv-write"))
        return tool_csv_write(argc - 1, argv + 1);
    if (!strcmp(argv[1], "stability"))
        return tool_stability(argc - 1, argv + 1);
    fprintf(stderr, "rooflab: unknown command '%s' (see rooflab --help)\n", argv[1]);
    return RL_EXIT_USAGE;
}
