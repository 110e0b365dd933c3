/*
 * plot.c -- draws an experiment's charts with gnuplot, from CSV files only.
 *
 * The experiment's plot.gp (or another script: rl_draw_script, for make
 * mountain's plots/mountain.gp) runs after plots/style.gp once per format (png,
 * pdf, svg) with these variables set: csv (the run drawn), outbase (path
 * without extension; a script may add suffixes for further charts), fmt,
 * device, backend, label, root (the source tree: published numbers are
 * read from results/published/); and for overlays runs and run_names
 * (every CSV and its name, the run drawn first) and runs_title (what is
 * compared). Every run's metadata comes as meta_<i>_<key> (metadata_vars);
 * rooflab is the path of the rooflab command, through which a script reads
 * a CSV's columns (`rooflab query`: style.gp's values_in and the like).
 * Charts are drawn into a temporary folder and moved into place only when
 * every format succeeded.
 */
#include "plot.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *const FORMATS[] = {"png", "pdf", "svg"};

/* Runs argv with stderr sent to log_path; returns the exit status. */
static int run_logged(char *const argv[], const char *log_path)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2(fd, STDERR_FILENO);
            dup2(fd, STDOUT_FILENO);
        }
        execvp(argv[0], argv);
        _exit(127);
    }
    int status;
    if (waitpid(pid, &status, 0) < 0)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static bool have_gnuplot(void)
{
    char *const argv[] = {"gnuplot", "--version", NULL};
    return run_logged(argv, "/dev/null") == 0;
}

/* Without gnuplot the CSVs are the result and the charts can wait: said
 * once per process, with the command that draws them later. */
static void say_not_drawn(const char *later)
{
    static bool said;
    if (said)
        return;
    said = true;
    fprintf(stderr, "rooflab: gnuplot not found: charts not drawn. The CSV holds all they need; "
                    "draw them later on any machine with gnuplot:\n  %s\n", later);
}

/* Appends name='value' to buf, doubling single quotes as gnuplot wants. */
static void add_var(char *buf, size_t len, const char *name, const char *value)
{
    size_t used = strlen(buf);
    used += (size_t)snprintf(buf + used, len - used, "%s='", name);
    for (const char *p = value; *p && used + 3 < len; p++) {
        if (*p == '\'')
            buf[used++] = '\'';
        buf[used++] = *p;
    }
    snprintf(buf + used, len - used, "'; ");
}

static void print_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f))
        fprintf(stderr, "  | %s", line);
    fclose(f);
}

/* The PNGs the last publish_charts moved into place (rl_drawn_charts). */
enum { MAX_DRAWN = 32 };
static char drawn_paths[MAX_DRAWN][2048];
static const char *drawn[MAX_DRAWN + 1];
static int ndrawn;

const char *const *rl_drawn_charts(void) { return drawn; }

static void forget_drawn(void)
{
    ndrawn = 0;
    drawn[0] = NULL;
}

static void remember_drawn(const char *path)
{
    if (ndrawn == MAX_DRAWN)
        return; /* the console's line still lists it */
    snprintf(drawn_paths[ndrawn], sizeof drawn_paths[ndrawn], "%s", path);
    drawn[ndrawn] = drawn_paths[ndrawn];
    drawn[++ndrawn] = NULL;
}

/* Moves every chart from tmp into dir; lists them on stdout. */
static int publish_charts(const char *tmp, const char *dir)
{
    DIR *d = opendir(tmp);
    if (!d)
        return -1;
    int rc = 0;
    bool first = true;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.' || !strcmp(e->d_name, "gnuplot.log"))
            continue;
        char from[2048], to[2048];
        snprintf(from, sizeof from, "%s/%s", tmp, e->d_name);
        snprintf(to, sizeof to, "%s/%s", dir, e->d_name);
        if (rename(from, to) != 0)
            rc = -1;
        else if (strstr(e->d_name, ".png")) {
            printf("%s%s", first ? "charts      " : ", ", to);
            remember_drawn(to);
            first = false;
        }
    }
    if (!first)
        printf(" (+ .pdf, .svg)\n");
    closedir(d);
    return rc;
}

static void remove_tree(const char *tmp)
{
    DIR *d = opendir(tmp);
    if (d) {
        for (struct dirent *e; (e = readdir(d));) {
            char p[2048];
            if (e->d_name[0] == '.' && (!e->d_name[1] || !strcmp(e->d_name, "..")))
                continue;
            snprintf(p, sizeof p, "%s/%s", tmp, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(tmp);
}

/* The first clause of a verdict's note (up to its first ';'), at most
 * about 80 characters, cut at a word: the one-line reason under a chart. */
static void first_clause(const char *note, char *buf, size_t len)
{
    size_t n = strcspn(note, ";");
    if (n > 80) {
        n = 80;
        while (n > 40 && note[n] != ' ')
            n--;
    }
    snprintf(buf, len, "%.*s%s", (int)n, note, note[n] && note[n] != ';' ? " ..." : "");
}

/* text as gnuplot's enhanced mode prints it literally: _ ^ { } @ & ~ and
 * the backslash each escaped (inside a single-quoted string). */
static void enhanced_literal(const char *text, char *buf, size_t len)
{
    size_t used = 0;
    for (const char *p = text; *p && used + 3 < len; p++) {
        if (strchr("_^{}@&~\\", *p))
            buf[used++] = '\\';
        buf[used++] = *p;
    }
    buf[used] = '\0';
}

/* This run's verdicts, from verdicts.csv beside the CSV drawn (the latest
 * run of this experiment, backend and label: the one whose CSV this is),
 * as gnuplot variables per verdict id: claim_<id> (the claim and its
 * predicted range), verdict_<id> ("holds", with what was measured),
 * reason_<id> (the note's first clause) and kind_<id> (one of the four
 * kinds, rl_verdict_kind). style.gp's run_line(id) and verdict_kind(id)
 * read them. None when the file is absent: the charts then say so. */
static void add_verdicts(char *vars, size_t len, const char *csv, const char *slug,
                         const char *backend)
{
    char path[1100], why[256];
    const char *slash = strrchr(csv, '/');
    snprintf(path, sizeof path, "%.*sverdicts.csv", slash ? (int)(slash - csv + 1) : 0, csv);
    rl_table *t = rl_table_read(path, why, sizeof why);
    for (int r = 0; t && r < t->nrows; r++) {
        if (strcmp(rl_table_get(t, r, "experiment"), slug) ||
            strcmp(rl_table_get(t, r, "backend"), backend))
            continue;
        const char *id = rl_table_get(t, r, "id");
        char name[160], text[600], reason[160], literal[1200];
        first_clause(rl_table_get(t, r, "note"), reason, sizeof reason);
        const char *kinds[3] = {"claim", "verdict", "reason"};
        for (int k = 0; k < 3; k++) {
            if (k == 0)
                snprintf(text, sizeof text, "%s, %s", rl_table_get(t, r, "claim"),
                         rl_table_get(t, r, "predicted"));
            else if (k == 1)
                snprintf(text, sizeof text, "%s (%s)", rl_table_get(t, r, "verdict"),
                         rl_table_get(t, r, "measured"));
            else
                snprintf(text, sizeof text, "%s", reason);
            snprintf(name, sizeof name, "%s_%s", kinds[k], id);
            enhanced_literal(text, literal, sizeof literal);
            add_var(vars, len, name, literal);
        }
        /* The verdict's kind, classified here so that no chart compares
         * the words of a verdict ("not measured (busy host)" is not
         * measured): style.gp's verdict_kind(id). */
        snprintf(name, sizeof name, "kind_%s", id);
        add_var(vars, len, name, rl_verdict_name(rl_verdict_kind(rl_table_get(t, r, "verdict"))));
    }
    rl_table_free(t);
}

/* The rooflab command, which the plot scripts ask for a CSV's columns:
 * ROOFLAB_TOOL when set, else the one beside this program (build/exp-NN,
 * build/rooflab) or in the folder above (build/tests/rooflab-tests). The
 * Makefile builds it with every program that draws. */
static bool find_tool(char *path, size_t len)
{
    const char *env = getenv("ROOFLAB_TOOL");
    if (env && *env) {
        snprintf(path, len, "%s", env);
        return access(path, X_OK) == 0;
    }
    char self[1024];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return false;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash)
        return false;
    *slash = '\0';
    snprintf(path, len, "%s/rooflab", self);
    if (access(path, X_OK) == 0)
        return true;
    snprintf(path, len, "%s/../rooflab", self);
    return access(path, X_OK) == 0;
}

/* Appends each item double-quoted, space-separated: gnuplot's word()
 * keeps a quoted item whole, spaces included. */
static void add_words(char *buf, size_t len, const char *const *items, int n)
{
    size_t used = strlen(buf);
    for (int i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s\"%s\"", i ? " " : "", items[i]);
}

/* Every run's '# key: value' header as gnuplot variables, meta_<i>_<key>
 * for run i (1: the run drawn) and meta_runs, the number of runs: style.gp's
 * meta(key) and run_meta(i, key) read them, so that no script parses a
 * header (table.c is its one reader). A key given twice is its first line,
 * as for every reader. One malloc'd string, for gnuplot's second -e. */
static char *metadata_vars(const char *const *csvs, int nruns)
{
    rl_table **tables = calloc((size_t)nruns, sizeof *tables);
    if (!tables)
        rl_die(RL_EXIT_FAILED, "out of memory");
    /* Room for meta_runs, then per key its name, its value twice over (add_var
     * doubles its quotes) and the quotes and separator around it. */
    size_t len = 64;
    for (int i = 0; i < nruns; i++) {
        char why[256];
        tables[i] = rl_table_read_meta(csvs[i], why, sizeof why);
        for (int m = 0; tables[i] && m < tables[i]->nmeta; m++)
            len += strlen(tables[i]->meta_keys[m]) + 2 * strlen(tables[i]->meta_values[m]) + 32;
    }
    char *vars = calloc(1, len), name[160], count[16];
    if (!vars)
        rl_die(RL_EXIT_FAILED, "out of memory");
    snprintf(count, sizeof count, "%d", nruns);
    add_var(vars, len, "meta_runs", count);
    for (int i = 0; i < nruns; i++) {
        const rl_table *t = tables[i];
        for (int m = 0; t && m < t->nmeta; m++) {
            if (rl_table_meta(t, t->meta_keys[m]) != t->meta_values[m])
                continue; /* a later line of a key */
            snprintf(name, sizeof name, "meta_%d_%s", i + 1, t->meta_keys[m]);
            add_var(vars, len, name, t->meta_values[m]);
        }
        rl_table_free(tables[i]);
    }
    free(tables);
    return vars;
}

int rl_draw(const char *exp_id, const char *exp_slug, const char *const *csvs,
            const char *const *names, int nruns, const char *dir, const char *runs_title,
            const char *later)
{
    char script[1024], name[64];
    snprintf(script, sizeof script, "%s/experiments/%s/plot.gp", rl_source_root(), exp_slug);
    snprintf(name, sizeof name, "exp-%s", exp_id);
    return rl_draw_script(script, name, exp_slug, csvs, names, nruns, dir, runs_title, later);
}

int rl_draw_script(const char *script, const char *name, const char *slug,
                   const char *const *csvs, const char *const *names, int nruns, const char *dir,
                   const char *runs_title, const char *later)
{
    forget_drawn();
    if (!have_gnuplot()) {
        say_not_drawn(later);
        return 0;
    }
    char tmp[1100], log[1200], style[1024], script_path[1024], tool[1100];
    snprintf(script_path, sizeof script_path, "%s", script); /* argv is not const */
    if (!find_tool(tool, sizeof tool)) {
        fprintf(stderr, "rooflab: charts not drawn: no rooflab command beside this program "
                        "(nor ROOFLAB_TOOL): the plot scripts read their CSVs through it "
                        "(make build)\n");
        return -1;
    }
    if (rl_mkdirs(dir) != 0) {
        fprintf(stderr, "rooflab: cannot create %s: %m\n", dir);
        return -1;
    }
    snprintf(tmp, sizeof tmp, "%s/.tmp-%s-XXXXXX", dir, name);
    if (!mkdtemp(tmp)) {
        fprintf(stderr, "rooflab: cannot create a temporary folder in %s: %m\n", dir);
        return -1;
    }
    snprintf(log, sizeof log, "%s/gnuplot.log", tmp);
    snprintf(style, sizeof style, "%s/plots/style.gp", rl_source_root());

    char device[256] = "", backend[32] = "", label[128] = "", outbase[1200];
    rl_csv_read_meta(csvs[0], "device", device, sizeof device);
    rl_csv_read_meta(csvs[0], "backend", backend, sizeof backend);
    rl_csv_read_meta(csvs[0], "label", label, sizeof label);
    snprintf(outbase, sizeof outbase, "%s/%s", tmp, name);

    char *metadata = metadata_vars(csvs, nruns);
    int rc = 0;
    for (size_t i = 0; i < sizeof FORMATS / sizeof FORMATS[0] && rc == 0; i++) {
        char vars[16384] = "", runs[3072] = "", run_names[2048] = "";
        add_words(runs, sizeof runs, csvs, nruns);
        add_words(run_names, sizeof run_names, names, nruns);
        add_var(vars, sizeof vars, "csv", csvs[0]);
        add_var(vars, sizeof vars, "outbase", outbase);
        add_var(vars, sizeof vars, "fmt", FORMATS[i]);
        add_var(vars, sizeof vars, "device", device);
        add_var(vars, sizeof vars, "backend", backend);
        add_var(vars, sizeof vars, "label", label);
        add_var(vars, sizeof vars, "root", rl_source_root());
        add_var(vars, sizeof vars, "rooflab", tool);
        add_var(vars, sizeof vars, "runs", runs);
        add_var(vars, sizeof vars, "run_names", run_names);
        add_var(vars, sizeof vars, "runs_title", runs_title ? runs_title : "");
        add_verdicts(vars, sizeof vars, csvs[0], slug, backend);
        char *const argv[] = {"gnuplot", "-e", vars, "-e", metadata, style, script_path, NULL};
        rc = run_logged(argv, log);
    }
    free(metadata);
    if (rc != 0) {
        fprintf(stderr, "rooflab: gnuplot failed on %s (exit %d):\n", script, rc);
        print_file(log);
    } else {
        rc = publish_charts(tmp, dir);
    }
    remove_tree(tmp);
    return rc;
}

static int draw_run_charts(const rl_experiment *exp, const char *csv_path, const char *plots_dir,
                   const char *label, const char *reference_csv, const char *reference_name,
                   const char *later)
{
    char dir[1024], title[512] = "";
    snprintf(dir, sizeof dir, "%s/%s", plots_dir, label);
    const char *csvs[2] = {csv_path, reference_csv};
    const char *names[2] = {label, reference_name};
    int n = reference_csv ? 2 : 1;
    if (reference_csv)
        snprintf(title, sizeof title, "%s, with the checked-in %s dashed", label, reference_name);
    return rl_draw(exp->id, exp->slug, csvs, names, n, dir, title, later);
}

const rl_charts rl_gnuplot_charts = {have_gnuplot, draw_run_charts};
