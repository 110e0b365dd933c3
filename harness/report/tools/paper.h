/*
 * paper.h -- what the parts of `rooflab paper-tables` share, one file of
 * code per thing written:
 *   paper.c           the command, the shared helpers, run.tex and glance.tex
 *   paper_sections.c  each experiment's section (exp-NN.tex)
 *   paper_limits.c    the Limitations section (limitations.tex)
 *   paper_ceilings.c  the ceilings, in a section's words and the appendix's table
 *   paper_refs.c      the references, from results/published/references.csv
 *   paper_models.c    the datasheet and decode-ceiling models
 * Every file they write is LaTeX that paper/paper.tex inputs; the prose
 * around it is written there. They read the runs' CSVs through the
 * harness's reader (table.c), and their metadata as data: a value is used
 * as it is or as a plain number, never parsed out of a sentence.
 */
#ifndef ROOFLAB_PAPER_H
#define ROOFLAB_PAPER_H

#include "tools.h"

#include <stdbool.h>

enum { PAPER_MAX_EXPS = 32, PAPER_MAX_CEILINGS = 8 };

/* One experiment of the suite (a directory experiments/NN-slug/). */
typedef struct paper_exp {
    char id[3];    /* "01" */
    char slug[64]; /* "01-duty-cycle" */
    rl_table *csv; /* results/LABEL/exp-NN.csv; NULL when this label has no run of it */
} paper_exp;

typedef struct paper {
    const tool_opts *o;
    rl_table *verdicts; /* results/LABEL/verdicts.csv */
    paper_exp exps[PAPER_MAX_EXPS];
    int nexp;
} paper;

/* qsort's comparator for an array of strings. */
int cmp_strings(const void *a, const void *b);
/* Sorted names in dir that start with prefix and end with suffix (an
 * extension's '.' sorting first: exp-05.pdf before exp-05-chain.pdf);
 * malloc'd, at most max. Returns how many. */
int list_files(const char *dir, const char *prefix, const char *suffix, char **out, int max);

/* LaTeX's special characters escaped, for running text. */
void tex(strbuf *b, const char *s);
/* An ISO date as "2026-12-01 03:42 UTC". */
void tex_date(strbuf *b, const char *iso);
/* A git_commit as "\texttt{01ecf6e1af47} (dirty)": the hash cut to 12
 * characters (a full one does not break across lines), the rest as words. */
void tex_commit(strbuf *b, const char *commit);
/* A CSV's "# key: value", "" when absent. */
const char *meta(const rl_table *csv, const char *key);
/* A longtable's header rows, repeated on every page it runs over, and its
 * closing rule: columns is the header row's cells ("a & b & c"). */
void tex_longtable_head(strbuf *b, const char *columns);
/* Writes b to dest/name and frees it; 0 on success. */
int paper_write(const char *dest, const char *name, strbuf *b);

/* The bandwidth ladder's levels and access patterns, as the header's
 * roof_<level>_<pattern>_gbps keys name them. */
enum { PAPER_NLEVELS = 4, PAPER_NPATTERNS = 3 };
extern const char *const PAPER_LEVELS[PAPER_NLEVELS];
extern const char *const PAPER_PATTERNS[PAPER_NPATTERNS];

/* A bandwidth ceiling that an experiment's rows were judged against
 * (their ceiling_gbps column), named after the roof it came from. */
typedef struct used_ceiling {
    double gbps, worst; /* worst: the roof's worst trial; NaN when unknown */
    int rows;
    char name[64]; /* "DRAM read", "DRAM read, measured again during the run" */
} used_ceiling;

/* The distinct ceilings of csv's rows, most rows first; when the CSV has
 * no ceiling_gbps column, the header's ceiling_gbps as one entry with rows
 * = 0. Returns how many. */
int used_ceilings(const rl_table *csv, used_ceiling *out, int max);
/* "53.5 GB/s (DRAM read; worst trial 51.4) for 18 rows": the same words in
 * an experiment's section and in the appendix, so that they cannot differ. */
void tex_used_ceilings(strbuf *b, const rl_table *csv);
/* When csv's ceilings were measured: "measured at its start", or the date
 * of the measurement it reused or read (its ceilings_origin says which). */
void tex_ceilings_when(strbuf *b, const rl_table *csv);
/* A roof from the header: "# roof_<level>_<pattern>_gbps: best worst bytes";
 * false when the CSV has none. */
bool roof_band(const rl_table *csv, const char *level, const char *pattern, double *best,
               double *worst);

/* The verdicts of experiment e in verdicts.csv, of the backend its CSV ran on. */
typedef struct tally {
    int holds, fails, unmeasured, premise; /* premise: "premise not met" */
} tally;
tally count_verdicts(const rl_table *verdicts, const paper_exp *e);
static inline int tally_total(tally t) { return t.holds + t.fails + t.unmeasured + t.premise; }

int experiment_tex(const paper *p, const paper_exp *e); /* exp-NN.tex */
int limitations_tex(const paper *p);                    /* limitations.tex */
int ceilings_tex(const paper *p);                       /* ceilings.tex */
int references_tex(const paper *p);                     /* cites.tex (macros) and references.tex */
int datasheet_tex(const tool_opts *o);                  /* datasheet.tex */
int tokens_tex(const paper *p);                         /* tokens.tex */

#endif
