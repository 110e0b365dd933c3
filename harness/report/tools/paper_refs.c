/*
 * paper_refs.c -- the references: where the seeds' claims and published
 * numbers come from. They are data, one row per work in
 * results/published/references.csv (id, experiments, short, text), and
 * everything that cites a work names its id:
 *
 *   an experiment   references.csv's experiments column ("05 06")
 *   a number        figures.csv's ref column
 *   a table         a published CSV's "# ref: id" line (llama.cpp's)
 *
 * From them, two files:
 *   cites.tex       macros the prose uses: \Sources{NN} cites experiment
 *                   NN's works; \PubCite{id} and \Published{id} cite and
 *                   print a row of figures.csv
 *   references.tex  the bibliography: references.csv's rows, in its order,
 *                   each with what cites it
 *
 * An experiment's CSV says its sources in words too ("# source:"): that is
 * for people, and never split back into works here.
 */
#include "paper.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The works and, per row of references.csv, what cites it in words. */
typedef struct works {
    rl_table *t; /* references.csv; NULL when it is missing */
    strbuf *cited_for;
} works;

/* results/published/ under --out, else the source tree's (the seeds'
 * numbers are checked in with the code, not produced by a run). */
static void published_dir(const paper *p, char *dir, size_t len)
{
    snprintf(dir, len, "%s/published", p->o->out);
    DIR *d = opendir(dir);
    if (d) {
        closedir(d);
        return;
    }
    snprintf(dir, len, "%s/results/published", rl_source_root());
}

static works read_works(const char *dir)
{
    char path[1400], why[1600];
    snprintf(path, sizeof path, "%s/references.csv", dir);
    works w = {.t = rl_table_read(path, why, sizeof why)};
    if (!w.t) {
        fprintf(stderr, "rooflab paper-tables: %s: the paper cites nothing\n", why);
        return w;
    }
    w.cited_for = calloc((size_t)w.t->nrows + 1, sizeof *w.cited_for);
    if (!w.cited_for)
        rl_die(RL_EXIT_FAILED, "out of memory");
    return w;
}

/* The row of the work with this id, or -1 (said on stderr, naming who
 * cites it, so that a typo in an id is found). */
static int work_row(const works *w, const char *id, const char *cited_by)
{
    int r = w->t ? rl_table_find(w->t, "id", id) : -1;
    if (r < 0 && w->t)
        fprintf(stderr, "rooflab paper-tables: %s cites '%s', not a row of references.csv\n",
                cited_by, id);
    return r;
}

static void add_use(works *w, int row, const char *what)
{
    strbuf *b = &w->cited_for[row];
    sb_printf(b, "%s%s", b->s ? "; " : "", what);
}

/* Whether the space-separated list holds word. */
static bool has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; *p; p += strspn(p, " ")) {
        size_t len = strcspn(p, " ");
        if (len == n && !strncmp(p, word, n))
            return true;
        p += len;
    }
    return false;
}

/* \Sources{NN}: the works whose experiments column names NN, in the
 * table's order. */
static void experiment_sources(works *w, strbuf *cites, const paper *p)
{
    for (int i = 0; i < p->nexp && w->t; i++) {
        const paper_exp *e = &p->exps[i];
        char what[120];
        snprintf(what, sizeof what, "the claim of experiment %s", e->slug);
        int n = 0;
        for (int r = 0; r < w->t->nrows; r++) {
            if (!has_word(rl_table_get(w->t, r, "experiments"), e->id))
                continue;
            if (n++ == 0)
                sb_printf(cites, "\\expandafter\\def\\csname src@%s\\endcsname{\\cite{", e->id);
            else
                sb_printf(cites, ",");
            sb_printf(cites, "src%d", r + 1);
            add_use(w, r, what);
        }
        if (n)
            sb_printf(cites, "}}\n");
    }
}

/* figures.csv: one row per published number, its work in the ref column. */
static void published_figures(works *w, strbuf *cites, const char *dir)
{
    char path[1400], why[1600];
    snprintf(path, sizeof path, "%s/figures.csv", dir);
    rl_table *t = rl_table_read(path, why, sizeof why);
    for (int r = 0; t && r < t->nrows; r++) {
        const char *id = rl_table_get(t, r, "id");
        char who[200];
        snprintf(who, sizeof who, "figures.csv's row %s", id);
        int row = work_row(w, rl_table_get(t, r, "ref"), who);
        if (row >= 0) {
            strbuf use = {0};
            sb_printf(&use, "%s (%s %s)", rl_table_get(t, r, "what"), rl_table_get(t, r, "value"),
                      rl_table_get(t, r, "unit"));
            add_use(w, row, use.s);
            sb_free(&use);
            sb_printf(cites, "\\expandafter\\def\\csname pub@%s\\endcsname{\\cite{src%d}}\n", id,
                      row + 1);
        }
        sb_printf(cites, "\\expandafter\\def\\csname pubval@%s\\endcsname{", id);
        tex(cites, rl_table_get(t, r, "value"));
        sb_printf(cites, "~");
        tex(cites, rl_table_get(t, r, "unit"));
        sb_printf(cites, "}\n");
    }
    rl_table_free(t);
}

/* One published table (llama.cpp's): its header's "# ref:" line names
 * its work. */
static void published_table(works *w, const char *dir, const char *name)
{
    char path[1400], ref[128], who[300], what[360];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(who, sizeof who, "results/published/%s", name);
    if (!rl_csv_read_meta(path, "ref", ref, sizeof ref)) {
        fprintf(stderr, "rooflab paper-tables: %s has no '# ref:' line: its source is not cited\n",
                who);
        return;
    }
    int row = work_row(w, ref, who);
    snprintf(what, sizeof what, "the published points in %s", who);
    if (row >= 0)
        add_use(w, row, what);
}

/* Every CSV of results/published/ but the two tables of this file's own. */
static void published_tables(works *w, const char *dir)
{
    char *names[32];
    int n = list_files(dir, "", ".csv", names, 32);
    for (int i = 0; i < n; i++) {
        if (strcmp(names[i], "figures.csv") && strcmp(names[i], "references.csv"))
            published_table(w, dir, names[i]);
        free(names[i]);
    }
}

static void bibliography(strbuf *bib, works *w)
{
    int n = w->t ? w->t->nrows : 0;
    sb_printf(bib, "\\begin{thebibliography}{%d}\n", n < 10 ? 9 : 99);
    for (int r = 0; r < n; r++) {
        sb_printf(bib, "\\bibitem{src%d} ", r + 1);
        tex(bib, rl_table_get(w->t, r, "text"));
        sb_printf(bib, ".\\\\\n{\\footnotesize Cited for: ");
        tex(bib, w->cited_for[r].s ? w->cited_for[r].s : "nothing in this paper");
        sb_printf(bib, ".}\n");
        sb_free(&w->cited_for[r]);
    }
    if (n == 0)
        sb_printf(bib, "\\item[] No sources: results/published/references.csv is missing.\n");
    sb_printf(bib, "\\end{thebibliography}\n");
}

int references_tex(const paper *p)
{
    strbuf cites = {0}, bib = {0};
    char dir[1200];
    published_dir(p, dir, sizeof dir);
    works w = read_works(dir);
    sb_printf(&cites, "%% generated by rooflab paper-tables: \\Sources{NN}, \\PubCite{id}, "
                      "\\Published{id}\n");
    experiment_sources(&w, &cites, p);
    published_figures(&w, &cites, dir);
    published_tables(&w, dir);
    bibliography(&bib, &w);
    free(w.cited_for);
    rl_table_free(w.t);
    int rc = paper_write(p->o->dest, "cites.tex", &cites);
    rc |= paper_write(p->o->dest, "references.tex", &bib);
    return rc;
}
