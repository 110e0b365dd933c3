/*
 * paper_refs.c -- the references: where the seeds' claims and published
 * numbers come from, read from the data, never typed in the paper.
 *
 *   cites.tex       macros the prose uses: \Sources{NN} cites experiment
 *                   NN's sources; \PubCite{id} and \Published{id} cite and
 *                   print a row of results/published/figures.csv
 *   references.tex  the bibliography: every experiment CSV's "# source:"
 *                   (split at its top-level "; "), every published file's
 *                   "# source:", and figures.csv's sources, each with what
 *                   cites it
 *
 * An experiment without a run under the label is cited from any reference
 * run of it, so that its section still names its sources.
 */
#include "paper.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_REFS = 64 };

typedef struct ref {
    char *text;    /* the source, as the CSV words it */
    strbuf used;   /* what cites it, in words */
} ref;

typedef struct refs {
    ref r[MAX_REFS];
    int n;
} refs;

/* Whether every significant word of a (a lowercase run of three or more
 * letters and digits) is in b, a having at least three: the same work
 * named twice, once more briefly ("Horace He, Making Deep Learning Go
 * Brrrr (2022)" in figures.csv, the full title in a CSV's source). */
static bool words_within(const char *a, const char *b)
{
    char lower[1024];
    size_t n = 0;
    for (const char *p = b; *p && n + 1 < sizeof lower; p++)
        lower[n++] = (char)tolower((unsigned char)*p);
    lower[n] = 0;
    int words = 0;
    for (const char *p = a; *p;) {
        while (*p && !isalnum((unsigned char)*p))
            p++;
        char w[64];
        size_t len = 0;
        for (; isalnum((unsigned char)*p); p++)
            if (len + 1 < sizeof w)
                w[len++] = (char)tolower((unsigned char)*p);
        w[len] = 0;
        if (len < 3)
            continue;
        if (!strstr(lower, w))
            return false;
        words++;
    }
    return words >= 3;
}

/* The index of text in the list, added when new; a work already listed
 * under a shorter or longer name keeps one entry, under the longer. */
static int ref_index(refs *l, const char *text)
{
    for (int i = 0; i < l->n; i++) {
        if (!strcmp(l->r[i].text, text) || words_within(text, l->r[i].text))
            return i;
        if (words_within(l->r[i].text, text)) {
            free(l->r[i].text);
            l->r[i].text = strdup(text);
            return i;
        }
    }
    if (l->n == MAX_REFS)
        return MAX_REFS - 1;
    l->r[l->n].text = strdup(text);
    return l->n++;
}

static void add_use(ref *r, const char *fmt, const char *what)
{
    if (r->used.s && strstr(r->used.s, what))
        return;
    sb_printf(&r->used, "%s", r->used.s ? "; " : "");
    sb_printf(&r->used, fmt, what);
}

/* Splits a source line at "; " outside parentheses and quotes: one
 * reference per part. Returns the number of parts written to idx. */
static int add_sources(refs *l, const char *line, int *idx, int max)
{
    int n = 0, depth = 0;
    bool quoted = false;
    const char *start = line;
    for (const char *p = line;; p++) {
        if (*p == '(')
            depth++;
        else if (*p == ')' && depth > 0)
            depth--;
        else if (*p == '"')
            quoted = !quoted;
        bool end = !*p || (*p == ';' && p[1] == ' ' && depth == 0 && !quoted);
        if (end && p > start && n < max) {
            char part[1024];
            snprintf(part, sizeof part, "%.*s", (int)(p - start), start);
            idx[n++] = ref_index(l, part);
        }
        if (!*p)
            break;
        if (end)
            start = p + 2, p++;
    }
    return n;
}

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

static void cite_list(strbuf *b, const int *idx, int n)
{
    sb_printf(b, "\\cite{");
    for (int i = 0; i < n; i++)
        sb_printf(b, "%ssrc%d", i ? "," : "", idx[i] + 1);
    sb_printf(b, "}");
}

static void experiment_sources(refs *l, strbuf *cites, const paper *p)
{
    for (int i = 0; i < p->nexp; i++) {
        rl_table *t = any_run_of(p, p->exps[i].id);
        const char *source = meta(t, "source");
        int idx[8], n = *source ? add_sources(l, source, idx, 8) : 0;
        char what[80];
        snprintf(what, sizeof what, "%s", p->exps[i].slug);
        for (int k = 0; k < n; k++)
            add_use(&l->r[idx[k]], "the claim of experiment %s", what);
        if (n) {
            sb_printf(cites, "\\expandafter\\def\\csname src@%s\\endcsname{", p->exps[i].id);
            cite_list(cites, idx, n);
            sb_printf(cites, "}\n");
        }
        rl_table_free(t);
    }
}

/* figures.csv: one row per published number; its source column. */
static void published_figures(refs *l, strbuf *cites, const char *dir)
{
    char path[1400], why[1600];
    snprintf(path, sizeof path, "%s/figures.csv", dir);
    rl_table *t = rl_table_read(path, why, sizeof why);
    for (int r = 0; t && r < t->nrows; r++) {
        const char *id = rl_table_get(t, r, "id");
        int i = ref_index(l, rl_table_get(t, r, "source"));
        strbuf use = {0};
        sb_printf(&use, "%s (%s %s)", rl_table_get(t, r, "what"), rl_table_get(t, r, "value"),
                  rl_table_get(t, r, "unit"));
        add_use(&l->r[i], "%s", use.s);
        sb_free(&use);
        sb_printf(cites, "\\expandafter\\def\\csname pub@%s\\endcsname{\\cite{src%d}}\n", id, i + 1);
        sb_printf(cites, "\\expandafter\\def\\csname pubval@%s\\endcsname{", id);
        tex(cites, rl_table_get(t, r, "value"));
        sb_printf(cites, "~");
        tex(cites, rl_table_get(t, r, "unit"));
        sb_printf(cites, "}\n");
    }
    rl_table_free(t);
}

/* The other published files (llama.cpp's table): their "# source:". */
static void published_files(refs *l, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    char *names[32];
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) && n < 32;) {
        size_t len = strlen(e->d_name);
        if (len > 4 && !strcmp(e->d_name + len - 4, ".csv") && strcmp(e->d_name, "figures.csv"))
            names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, cmp_strings);
    for (int i = 0; i < n; i++) {
        char path[1400], source[1024];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (rl_csv_read_meta(path, "source", source, sizeof source)) {
            char what[300];
            snprintf(what, sizeof what, "the published points in results/published/%s", names[i]);
            add_use(&l->r[ref_index(l, source)], "%s", what);
        }
        free(names[i]);
    }
}

int references_tex(const paper *p)
{
    refs l = {0};
    strbuf cites = {0}, bib = {0};
    char dir[1200];
    sb_printf(&cites, "%% generated by rooflab paper-tables: \\Sources{NN}, \\PubCite{id}, "
                      "\\Published{id}\n");
    experiment_sources(&l, &cites, p);
    published_dir(p, dir, sizeof dir);
    published_figures(&l, &cites, dir);
    published_files(&l, dir);

    sb_printf(&bib, "\\begin{thebibliography}{%d}\n", l.n < 10 ? 9 : 99);
    for (int i = 0; i < l.n; i++) {
        sb_printf(&bib, "\\bibitem{src%d} ", i + 1);
        tex(&bib, l.r[i].text);
        sb_printf(&bib, ".\\\\\n{\\footnotesize Cited for: ");
        tex(&bib, l.r[i].used.s ? l.r[i].used.s : "");
        sb_printf(&bib, ".}\n");
        free(l.r[i].text);
        sb_free(&l.r[i].used);
    }
    if (l.n == 0)
        sb_printf(&bib, "\\item[] No sources recorded in the CSVs.\n");
    sb_printf(&bib, "\\end{thebibliography}\n");
    int rc = paper_write(p->o->dest, "cites.tex", &cites);
    rc |= paper_write(p->o->dest, "references.tex", &bib);
    return rc;
}
