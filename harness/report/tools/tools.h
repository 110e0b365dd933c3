/*
 * tools.h -- the `rooflab` command's subcommands (compare, summary,
 * paper-tables, meta) and what they share. They read results only.
 */
#ifndef ROOFLAB_TOOLS_H
#define ROOFLAB_TOOLS_H

#include "../plot.h"

#include <stddef.h>

int tool_compare(int argc, char **argv);
int tool_summary(int argc, char **argv);
int tool_paper_tables(int argc, char **argv);
int tool_meta(int argc, char **argv);

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
    const char *out, *plots, *exp, *value, *label, *dest;
} tool_opts;

int tool_parse(int argc, char **argv, tool_opts *o, const char *usage);

#endif
