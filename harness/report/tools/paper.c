/*
 * paper.c -- `rooflab paper-tables --label LABEL --dest DIR`: the parts of
 * the writeup that come from data, never typed by hand. This file holds the
 * command, what every part shares (LaTeX escaping, a CSV's metadata), and
 * the two files about the runs as a whole:
 *
 *   run.tex          macros naming the runs (label, devices, first and last date)
 *   glance.tex       one row per experiment: device, date, commit, verdicts
 *
 * The others, one file of code each (paper.h lists them):
 *   exp-NN.tex       each experiment's "On this run", verdicts and charts (paper_sections.c)
 *   limitations.tex  what the runs cannot show (paper_limits.c)
 *   ceilings.tex     each experiment's own ceilings (paper_ceilings.c)
 *   cites.tex, references.tex   the seeds' sources (paper_refs.c)
 *   datasheet.tex, tokens.tex   the datasheet and decode-ceiling models (paper_models.c)
 *
 * paper/paper.tex inputs them; paper/build.sh runs this and pdflatex.
 */
#include "paper.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *USAGE =
    "usage: rooflab paper-tables --label LABEL --dest DIR [--out DIR] [--plots DIR]\n\n"
    "Writes the writeup's generated LaTeX (run.tex, glance.tex, exp-NN.tex, limitations.tex,\n"
    "ceilings.tex, cites.tex, references.tex, datasheet.tex, tokens.tex) into DIR from\n"
    "results/LABEL/ and plots/LABEL/.\n";

void tex(strbuf *b, const char *s)
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

void tex_date(strbuf *b, const char *iso)
{
    int y, mo, d, h, mi;
    if (sscanf(iso, "%d-%d-%dT%d:%d", &y, &mo, &d, &h, &mi) == 5)
        sb_printf(b, "%04d-%02d-%02d %02d:%02d UTC", y, mo, d, h, mi);
    else
        tex(b, *iso ? iso : "no date");
}

void tex_commit(strbuf *b, const char *commit)
{
    size_t hash = strcspn(commit, " ");
    sb_printf(b, "\\texttt{%.*s}", (int)(hash < 12 ? hash : 12), commit);
    tex(b, commit + hash);
}

const char *meta(const rl_table *csv, const char *key)
{
    const char *v = csv ? rl_table_meta(csv, key) : NULL;
    return v ? v : "";
}

void tex_longtable_head(strbuf *b, const char *columns)
{
    const char *kinds[] = {"endfirsthead", "endhead"};
    for (int i = 0; i < 2; i++)
        sb_printf(b, "\\toprule\n%s \\\\\n\\midrule\n\\%s\n", columns, kinds[i]);
    sb_printf(b, "\\bottomrule\n\\endfoot\n");
}

int paper_write(const char *dest, const char *name, strbuf *b)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dest, name);
    int rc = rl_write_file_atomic(path, b->s ? b->s : "");
    if (rc != 0)
        fprintf(stderr, "rooflab paper-tables: cannot write %s: %m\n", path);
    sb_free(b);
    return rc;
}

int cmp_strings(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Names in order, an extension's '.' sorting first: exp-05.pdf before
 * exp-05-chain.pdf, so an experiment's main chart leads. */
static int cmp_names(const void *a, const void *b)
{
    const unsigned char *x = *(const unsigned char *const *)a, *y = *(const unsigned char *const *)b;
    for (; *x && *x == *y; x++, y++)
        ;
    int cx = *x == '.' ? 1 : *x, cy = *y == '.' ? 1 : *y;
    return cx - cy;
}

/* Sorted names in dir that start with prefix and end with suffix. */
int list_files(const char *dir, const char *prefix, const char *suffix, char **out, int max)
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

/* ------------------------------------------------------------------------
 * The runs: title macros and the results-at-a-glance table
 * ---------------------------------------------------------------------- */

static void def(strbuf *b, const char *name, const char *value)
{
    sb_printf(b, "\\newcommand{\\%s}{", name);
    tex(b, value);
    sb_printf(b, "}\n");
}

/* Whether an earlier experiment than i ran on the same device and backend:
 * each pair is named once. */
static bool device_named_before(const paper *p, int i)
{
    const rl_table *c = p->exps[i].csv;
    for (int j = 0; j < i; j++) {
        const rl_table *o = p->exps[j].csv;
        if (o && !strcmp(meta(o, "device"), meta(c, "device")) &&
            !strcmp(meta(o, "backend"), meta(c, "backend")))
            return true;
    }
    return false;
}

static int run_macros(const paper *p)
{
    strbuf b = {0}, devices = {0};
    const char *first = NULL, *last = NULL;
    const rl_table *any = NULL;
    int count = 0;
    for (int i = 0; i < p->nexp; i++) {
        const rl_table *c = p->exps[i].csv;
        if (!c)
            continue;
        count++;
        any = any ? any : c;
        const char *d = meta(c, "date_utc");
        if (*d && (!first || strcmp(d, first) < 0))
            first = d;
        if (*d && (!last || strcmp(d, last) > 0))
            last = d;
        if (!device_named_before(p, i))
            sb_printf(&devices, "%s%s (%s backend)", devices.s ? ", " : "", meta(c, "device"),
                      meta(c, "backend"));
    }
    def(&b, "RunLabel", p->o->label);
    def(&b, "RunDevices", devices.s ? devices.s : "no run");
    def(&b, "RunDevice", any ? meta(any, "device") : "no run");
    def(&b, "RunBackend", any ? meta(any, "backend") : "no run");
    sb_printf(&b, "\\newcommand{\\RunCount}{%d}\n\\newcommand{\\RunFirst}{", count);
    tex_date(&b, first ? first : "");
    sb_printf(&b, "}\n\\newcommand{\\RunLast}{");
    tex_date(&b, last ? last : "");
    sb_printf(&b, "}\n");
    sb_free(&devices);
    return paper_write(p->o->dest, "run.tex", &b);
}

static int glance_table(const paper *p)
{
    /* "premise not met" gets a column of its own where any experiment of
     * the label has one (the last two headings on two lines each, so that
     * the first column keeps its width); a label without one reads as
     * before the fourth kind existed. */
    bool premise = false;
    for (int i = 0; i < p->nexp; i++)
        premise |= p->exps[i].csv && count_verdicts(p->verdicts, &p->exps[i]).premise > 0;
    strbuf b = {0};
    sb_printf(&b, "\\begin{tabularx}{\\linewidth}{@{}>{\\raggedright\\arraybackslash}X l l l "
                  "r r r%s@{}}\n\\toprule\nexperiment & device (backend) & run & commit & "
                  "held & did not & %s \\\\\n\\midrule\n",
              premise ? " r" : "",
              premise ? "\\shortstack[r]{not\\\\measured} & \\shortstack[r]{premise\\\\not met}"
                      : "not measured");
    for (int i = 0; i < p->nexp; i++) {
        const paper_exp *e = &p->exps[i];
        tex(&b, e->slug);
        if (!e->csv) {
            sb_printf(&b, " & \\multicolumn{%d}{l}{\\emph{no run under this label}} \\\\\n",
                      premise ? 7 : 6);
            continue;
        }
        sb_printf(&b, " & ");
        tex(&b, meta(e->csv, "device"));
        sb_printf(&b, " (%s) & ", meta(e->csv, "backend"));
        tex_date(&b, meta(e->csv, "date_utc"));
        sb_printf(&b, " & \\texttt{%.12s}%s", meta(e->csv, "git_commit"),
                  !strcmp(meta(e->csv, "git_dirty"), "yes") ? "*" : "");
        tally t = count_verdicts(p->verdicts, e);
        sb_printf(&b, " & %d & %d & %d", t.holds, t.fails, t.unmeasured);
        if (premise)
            sb_printf(&b, " & %d", t.premise);
        sb_printf(&b, " \\\\\n");
    }
    sb_printf(&b, "\\bottomrule\n\\end{tabularx}\n");
    return paper_write(p->o->dest, "glance.tex", &b);
}

/* ------------------------------------------------------------------------
 * The experiments and the command
 * ---------------------------------------------------------------------- */

/* Every experiments/NN-slug/ of the source tree, with this label's CSV. */
static void find_experiments(paper *p)
{
    char dir[1024], *names[64];
    snprintf(dir, sizeof dir, "%s/experiments", rl_source_root());
    int n = list_files(dir, "", "", names, 64);
    for (int i = 0; i < n; i++) {
        const char *s = names[i];
        if (s[0] >= '0' && s[0] <= '9' && s[1] >= '0' && s[1] <= '9' && s[2] == '-' &&
            p->nexp < PAPER_MAX_EXPS) {
            paper_exp *e = &p->exps[p->nexp++];
            snprintf(e->id, sizeof e->id, "%.2s", s);
            snprintf(e->slug, sizeof e->slug, "%s", s);
            char path[1400], why[1400];
            snprintf(path, sizeof path, "%s/%s/exp-%s.csv", p->o->out, p->o->label, e->id);
            e->csv = rl_table_read(path, why, sizeof why);
        }
        free(names[i]);
    }
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
    paper p = {.o = &o, .verdicts = rl_table_read(path, why, sizeof why)};
    if (!p.verdicts) {
        fprintf(stderr, "rooflab paper-tables: %s (run the experiments with LABEL=%s first)\n",
                why, o.label);
        return RL_EXIT_USAGE;
    }
    printf("rooflab paper-tables: %s -> %s\n", o.label, o.dest);
    find_experiments(&p);
    int rc = 0;
    for (int i = 0; i < p.nexp; i++)
        if (p.exps[i].csv)
            rc |= experiment_tex(&p, &p.exps[i]);
    rc |= run_macros(&p);
    rc |= glance_table(&p);
    rc |= limitations_tex(&p);
    rc |= ceilings_tex(&p);
    rc |= references_tex(&p);
    rc |= datasheet_tex(&o);
    rc |= tokens_tex(&p);
    for (int i = 0; i < p.nexp; i++)
        rl_table_free(p.exps[i].csv);
    rl_table_free(p.verdicts);
    return rc ? RL_EXIT_FAILED : RL_EXIT_OK;
}

