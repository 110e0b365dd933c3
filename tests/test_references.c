/*
 * test_references.c -- the references are data: results/published/
 * references.csv holds one row per work, and everything that cites one
 * names its id (an experiment in the experiments column, a figures.csv row
 * in its ref column, a published table in its "# ref:" line). These tests
 * check that every id resolves, that nothing is left uncited or citing
 * nothing, and that the paper's bibliography and \Sources{NN} are that
 * table.
 */
#include "helpers.h"
#include "rl_csv.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PUBLISHED RL_SOURCE_ROOT "/results/published"
#define TOOL RL_BUILD_DIR "/rooflab"

static rl_table *read_published(const char *name)
{
    char path[1024], why[1200];
    snprintf(path, sizeof path, "%s/%s", PUBLISHED, name);
    rl_table *t = rl_table_read(path, why, sizeof why);
    cr_assert_not_null(t, "%s", why);
    return t;
}

/* Whether the space-separated list holds word. */
static bool has_word(const char *list, const char *word)
{
    char copy[256];
    snprintf(copy, sizeof copy, "%s", list);
    for (char *save = NULL, *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save))
        if (!strcmp(w, word))
            return true;
    return false;
}

/* The experiments of the source tree, as their two-digit ids. */
static int experiment_ids(char ids[][3], int max)
{
    DIR *d = opendir(RL_SOURCE_ROOT "/experiments");
    cr_assert_not_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) && n < max;)
        if (e->d_name[0] >= '0' && e->d_name[0] <= '9' && e->d_name[2] == '-')
            snprintf(ids[n++], 3, "%.2s", e->d_name);
    closedir(d);
    return n;
}

TestSuite(references);

Test(references, every_experiment_cites_a_work_and_every_work_an_experiment_that_exists)
{
    rl_table *works = read_published("references.csv");
    char ids[32][3];
    int n = experiment_ids(ids, 32);
    cr_assert_gt(n, 0);
    for (int i = 0; i < n; i++) {
        int cited = 0;
        for (int r = 0; r < works->nrows; r++)
            cited += has_word(rl_table_get(works, r, "experiments"), ids[i]);
        cr_assert_gt(cited, 0, "experiment %s cites no row of references.csv (its experiments column)",
                     ids[i]);
    }
    for (int r = 0; r < works->nrows; r++) {
        char list[256];
        snprintf(list, sizeof list, "%s", rl_table_get(works, r, "experiments"));
        for (char *save = NULL, *w = strtok_r(list, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
            bool exists = false;
            for (int i = 0; i < n; i++)
                exists |= !strcmp(ids[i], w);
            cr_assert(exists, "%s names experiment %s, which is not in experiments/",
                      rl_table_get(works, r, "id"), w);
        }
        cr_assert_neq(rl_table_get(works, r, "text")[0], '\0', "%s has no text",
                      rl_table_get(works, r, "id"));
    }
    rl_table_free(works);
}

Test(references, every_published_number_and_table_names_a_work)
{
    rl_table *works = read_published("references.csv");
    rl_table *figures = read_published("figures.csv");
    bool *cited = calloc((size_t)works->nrows, sizeof *cited);
    for (int r = 0; r < works->nrows; r++)
        cited[r] = rl_table_get(works, r, "experiments")[0] != '\0';
    for (int f = 0; f < figures->nrows; f++) {
        int r = rl_table_find(works, "id", rl_table_get(figures, f, "ref"));
        cr_assert_geq(r, 0, "figures.csv's %s: ref '%s' is not a row of references.csv",
                      rl_table_get(figures, f, "id"), rl_table_get(figures, f, "ref"));
        cited[r] = true;
    }
    DIR *d = opendir(PUBLISHED);
    cr_assert_not_null(d);
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".csv") || !strcmp(e->d_name, "figures.csv") ||
            !strcmp(e->d_name, "references.csv"))
            continue;
        char path[1024], ref[128];
        snprintf(path, sizeof path, "%s/%s", PUBLISHED, e->d_name);
        cr_assert(rl_csv_read_meta(path, "ref", ref, sizeof ref), "%s has no '# ref:' line", path);
        int r = rl_table_find(works, "id", ref);
        cr_assert_geq(r, 0, "%s: ref '%s' is not a row of references.csv", path, ref);
        cited[r] = true;
    }
    closedir(d);
    for (int r = 0; r < works->nrows; r++)
        cr_assert(cited[r], "references.csv's %s is cited by nothing", rl_table_get(works, r, "id"));
    free(cited);
    rl_table_free(figures);
    rl_table_free(works);
}

/* The paper's bibliography is the table, in its order, and \Sources{NN}
 * cites exactly the rows whose experiments column names NN. */
Test(references, the_bibliography_is_the_table)
{
    char dir[512], cmd[2048], out[8192], err[8192];
    make_temp_dir(dir, sizeof dir);
    snprintf(cmd, sizeof cmd, "%s paper-tables --label reference/cpu-amd-epyc --out '%s/results' "
             "--plots '%s/plots' --dest '%s'", TOOL, RL_SOURCE_ROOT, RL_SOURCE_ROOT, dir);
    cr_assert_eq(run_capture(cmd, out, sizeof out, err, sizeof err), 0, "%s\n%s", out, err);
    cr_assert_null(strstr(err, "references.csv"), "every id resolved: %s", err);
    char path[1024];
    snprintf(path, sizeof path, "%s/references.tex", dir);
    char *bib = read_file(path, NULL);
    snprintf(path, sizeof path, "%s/cites.tex", dir);
    char *cites = read_file(path, NULL);
    cr_assert(bib && cites);
    rl_table *works = read_published("references.csv");
    const char *at = bib;
    for (int r = 0; r < works->nrows; r++) {
        char item[32];
        snprintf(item, sizeof item, "\\bibitem{src%d} ", r + 1);
        at = strstr(at, item);
        cr_assert_not_null(at, "row %d (%s) is not the bibliography's item %d", r + 1,
                           rl_table_get(works, r, "id"), r + 1);
    }
    char ids[32][3];
    int n = experiment_ids(ids, 32);
    for (int i = 0; i < n; i++) {
        char def[64], line[512] = "";
        snprintf(def, sizeof def, "\\csname src@%.2s\\endcsname{\\cite{", ids[i]);
        const char *s = strstr(cites, def);
        cr_assert_not_null(s, "no \\Sources{%s} in cites.tex", ids[i]);
        snprintf(line, sizeof line, "%.*s", (int)strcspn(s, "\n"), s + strlen(def));
        for (int r = 0; r < works->nrows; r++) {
            char key[32];
            snprintf(key, sizeof key, "src%d", r + 1);
            bool cites_it = false;
            char copy[512];
            snprintf(copy, sizeof copy, "%s", line);
            copy[strcspn(copy, "}")] = '\0';
            for (char *save = NULL, *k = strtok_r(copy, ",", &save); k; k = strtok_r(NULL, ",", &save))
                cites_it |= !strcmp(k, key);
            cr_assert_eq(cites_it, has_word(rl_table_get(works, r, "experiments"), ids[i]),
                         "\\Sources{%s} = %s, and %s's experiments are '%s'", ids[i], line,
                         rl_table_get(works, r, "id"), rl_table_get(works, r, "experiments"));
        }
    }
    rl_table_free(works);
    free(bib);
    free(cites);
    rm_tree(dir);
}
