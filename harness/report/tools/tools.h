/*
 * tools.h -- the `rooflab` command's subcommands (compare, summary,
 * paper-tables, stability; query and csv-write, the reader and the writer of
 * results files for scripts) and what they share. They read results; only
 * csv-write writes one, a peer script's CSV.
 */
#ifndef ROOFLAB_TOOLS_H
#define ROOFLAB_TOOLS_H

#include "../plot.h"

#include <stddef.h>

int tool_compare(int argc, char **argv);
int tool_summary(int argc, char **argv);
int tool_paper_tables(int argc, char **argv);
int tool_meta(int argc, char **argv);  /* query.c: query FILE meta, older spelling */
int tool_query(int argc, char **argv);
int tool_csv_write(int argc, char **argv);
int tool_stability(int argc, char **argv);

/* A growing string, for files written whole (markdown, LaTeX). */
typedef struct strbuf {
    char *s;
    size_t len, cap;
} strbuf;

void sb_printf(strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_free(strbuf *b);

/* Options shared by the subcommands: --out DIR, --plots DIR, and one
 * value option of the subcommand's own. Returns the index of the first
 * positional argument, or -1 after printing an error. */
typedef struct tool_opts {
    const char *out, *plots, *exp, *value, *label, *dest, *prefix, *charts_file,
        *ratios_file;
} tool_opts;

int tool_parse(int argc, char **argv, tool_opts *o, const char *usage);

/* ---- the points of several runs, matched by compare_keys (rows.c) -------- */
enum { TOOL_MAX_KEYS = 8 };

/* Splits a compare_keys value, "op,variant,k,n", into keys (pointers into
 * buf, which it cuts); returns how many, at most TOOL_MAX_KEYS. */
int tool_split_keys(char *buf, const char **keys);

/* A point of the union of several runs: the run it is read from and its
 * row there. */
typedef struct tool_row {
    int run, row;
} tool_row;

/* The union of the runs' rows (tables t[0..n-1]) by keys, each point once:
 * every row of run 0 in its order, then each later run's rows that no run
 * before it has (a variant only that run measured). rows must have room
 * for every run's rows together; returns how many it holds. */
int tool_union_rows(rl_table *const *t, int n, const char *const *keys, int nkeys, tool_row *rows);
/* Run i's row of the point, or -1 when run i lacks it. */
int tool_row_in(rl_table *const *t, int i, tool_row row, const char *const *keys, int nkeys);

#endif
