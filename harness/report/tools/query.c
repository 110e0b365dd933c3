/*
 * query.c -- `rooflab query`: the one reader of results files for charts
 * and scripts. A gnuplot script or a shell script asks this command for a
 * header key, a column's values or whether columns exist, instead of
 * parsing a CSV with awk or sed: the file is read by the harness's reader
 * (table.c), quoted fields, long lines and malformed rows included, so
 * that a CSV has one reader and one meaning.
 *
 *   $ build/rooflab query results/reference/h200/exp-01.csv meta backend
 *   cuda
 *   $ build/rooflab query a.csv b.csv columns variant --distinct --words
 *   gemv_fp16 gemv_int8
 */
#include "tools.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *USAGE =
    "usage: rooflab query [options] FILE... ACTION ARG...\n\n"
    "Reads results CSVs ('# key: value' header, a line of column names, rows) through\n"
    "the harness's reader and answers one question, for gnuplot and shell scripts:\n\n"
    "  FILE meta KEY...           the value of each header KEY, one line per key, in the\n"
    "                             order given (an absent key: an empty line, and exit 1;\n"
    "                             --default TEXT: TEXT instead, and no error)\n"
    "  FILE has-columns NAME...   exit 0 when FILE has every column NAME; else exit 1,\n"
    "                             the absent ones printed on one line\n"
    "  FILE... columns NAME...    the named columns of every row of every FILE, in order:\n"
    "                             one row a line, its cells joined by --join (default ,)\n\n"
    "NAME lists may be given as several arguments or comma-separated. A column NAME may\n"
    "be A|B: the first of A and B that the file has (a column renamed since older runs).\n\n"
    "options (anywhere after query):\n"
    "  --where COL=VALUE   only rows whose column COL holds VALUE exactly; COL!=VALUE:\n"
    "                      those whose COL holds anything else (repeatable: every one\n"
    "                      must hold; COL may be A|B too)\n"
    "  --distinct          each answer once, in the order first met; a row whose named\n"
    "                      cells are all empty is left out\n"
    "  --words             answers on one line, space-separated (a gnuplot word list)\n"
    "  --join SEP          what joins a row's cells (default ,)\n"
    "  --default TEXT      meta: the line of an absent key ('' for an empty line)\n\n"
    "Exit codes: 0 answered (an empty selection too), 1 a key or column is absent (named\n"
    "on stderr), 2 bad usage or a FILE that cannot be read or is malformed.\n";

/* Like grep's 1 for "no match": an absent key or column is an answer, not
 * a failure of the command (which is 2, RL_EXIT_USAGE). */
enum { QUERY_EXIT_ABSENT = 1, QUERY_MAX_WHERE = 8, QUERY_MAX_NAMES = 32 };

typedef enum { ACTION_NONE, ACTION_META, ACTION_HAS_COLUMNS, ACTION_COLUMNS } query_action;

typedef struct where_clause {
    const char *column; /* points into a copy of the argument, cut at '=' */
    const char *value;
    bool negated; /* COL!=VALUE: rows whose COL holds anything else */
} where_clause;

typedef struct query_args {
    query_action action;
    const char **files;
    int nfiles;
    const char *names[QUERY_MAX_NAMES]; /* keys (meta) or column names */
    int nnames;
    where_clause where[QUERY_MAX_WHERE];
    int nwhere;
    bool distinct, words;
    const char *join;
    const char *fallback; /* --default TEXT; NULL: an absent key is an error */
} query_args;

typedef enum { ARGS_OK, ARGS_HELP, ARGS_BAD } args_result;

static query_action action_named(const char *word)
{
    return !strcmp(word, "meta")          ? ACTION_META
           : !strcmp(word, "has-columns") ? ACTION_HAS_COLUMNS
           : !strcmp(word, "columns")     ? ACTION_COLUMNS
                                          : ACTION_NONE;
}

/* Adds the comma-separated names of one argument to a->names (the
 * argument is copied: strtok cuts it). */
static bool add_names(query_args *a, const char *arg)
{
    char *copy = strdup(arg);
    if (!copy)
        rl_die(RL_EXIT_FAILED, "out of memory");
    for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) {
        if (a->nnames == QUERY_MAX_NAMES) {
            fprintf(stderr, "rooflab query: more than %d names\n", QUERY_MAX_NAMES);
            return false;
        }
        a->names[a->nnames++] = tok; /* copy lives as long as the process */
    }
    return true;
}

static bool add_where(query_args *a, const char *arg)
{
    char *copy = strdup(arg);
    if (!copy)
        rl_die(RL_EXIT_FAILED, "out of memory");
    char *eq = strchr(copy, '=');
    if (!eq || eq == copy) {
        fprintf(stderr, "rooflab query: --where wants COLUMN=VALUE or COLUMN!=VALUE, not '%s'\n",
                arg);
        return false;
    }
    if (a->nwhere == QUERY_MAX_WHERE) {
        fprintf(stderr, "rooflab query: more than %d --where\n", QUERY_MAX_WHERE);
        return false;
    }
    bool negated = eq > copy + 1 && eq[-1] == '!';
    eq[negated ? -1 : 0] = '\0';
    a->where[a->nwhere++] = (where_clause){copy, eq + 1, negated};
    return true;
}

/* One option at argv[*i] (advancing past its value); false after saying
 * what is wrong. */
static bool parse_option(int argc, char **argv, int *i, query_args *a)
{
    const char *opt = argv[*i];
    if (!strcmp(opt, "--distinct"))
        return a->distinct = true;
    if (!strcmp(opt, "--words"))
        return a->words = true;
    bool takes_value = !strcmp(opt, "--where") || !strcmp(opt, "--join") ||
                       !strcmp(opt, "--default");
    if (!takes_value) {
        fprintf(stderr, "rooflab query: unknown option '%s' (see --help)\n", opt);
        return false;
    }
    if (*i + 1 >= argc) {
        fprintf(stderr, "rooflab query: %s needs a value (see --help)\n", opt);
        return false;
    }
    const char *value = argv[++*i];
    if (!strcmp(opt, "--where"))
        return add_where(a, value);
    if (!strcmp(opt, "--join"))
        a->join = value;
    else
        a->fallback = value;
    return true;
}

/* Whether the files and names fit the action; says what is wrong. */
static bool check_shape(const query_args *a)
{
    if (a->action == ACTION_NONE || a->nfiles == 0) {
        fprintf(stderr, "rooflab query: needs FILE... and an ACTION: meta, has-columns or "
                        "columns (see --help)\n");
        return false;
    }
    if (a->nnames == 0) {
        fprintf(stderr, "rooflab query: %s needs at least one %s (see --help)\n",
                a->action == ACTION_META ? "meta" : "the action",
                a->action == ACTION_META ? "KEY" : "column NAME");
        return false;
    }
    if (a->action != ACTION_COLUMNS && a->nfiles != 1) {
        fprintf(stderr, "rooflab query: %s reads one FILE, not %d\n",
                a->action == ACTION_META ? "meta" : "has-columns", a->nfiles);
        return false;
    }
    return true;
}

static args_result parse_args(int argc, char **argv, query_args *a)
{
    a->join = ",";
    a->files = calloc((size_t)argc, sizeof *a->files);
    if (!a->files)
        rl_die(RL_EXIT_FAILED, "out of memory");
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
            printf("%s", USAGE);
            return ARGS_HELP;
        }
        if (!strncmp(arg, "--", 2)) {
            if (!parse_option(argc, argv, &i, a))
                return ARGS_BAD;
        } else if (a->action == ACTION_NONE && action_named(arg) != ACTION_NONE) {
            a->action = action_named(arg);
        } else if (a->action == ACTION_NONE) {
            a->files[a->nfiles++] = arg;
        } else if (a->action == ACTION_META) {
            if (a->nnames == QUERY_MAX_NAMES)
                return fprintf(stderr, "rooflab query: more than %d keys\n", QUERY_MAX_NAMES),
                       ARGS_BAD;
            a->names[a->nnames++] = arg; /* a key never holds a comma; kept whole */
        } else if (!add_names(a, arg)) {
            return ARGS_BAD;
        }
    }
    return check_shape(a) ? ARGS_OK : ARGS_BAD;
}

/* ---- reading ----------------------------------------------------------------------- */

/* The column of t that name stands for: name itself, or for "A|B" the
 * first of A and B that t has; -1 when none. */
static int resolve_column(const rl_table *t, const char *name)
{
    char alt[256];
    snprintf(alt, sizeof alt, "%s", name);
    for (char *tok = strtok(alt, "|"); tok; tok = strtok(NULL, "|")) {
        int c = rl_table_col(t, tok);
        if (c >= 0)
            return c;
    }
    return -1;
}

static rl_table *read_or_say(const char *path, bool header_only)
{
    char why[1200];
    rl_table *t = header_only ? rl_table_read_meta(path, why, sizeof why)
                              : rl_table_read(path, why, sizeof why);
    if (!t)
        fprintf(stderr, "rooflab query: %s\n", why);
    return t;
}

static int answer_meta(const query_args *a)
{
    rl_table *t = read_or_say(a->files[0], true);
    if (!t)
        return RL_EXIT_USAGE;
    int absent = 0;
    for (int k = 0; k < a->nnames; k++) {
        const char *value = rl_table_meta(t, a->names[k]);
        if (!value && !a->fallback) {
            fprintf(stderr, "rooflab query: %s has no '# %s: ' line\n", a->files[0], a->names[k]);
            absent++;
        }
        printf("%s\n", value ? value : a->fallback ? a->fallback : "");
    }
    rl_table_free(t);
    return absent ? QUERY_EXIT_ABSENT : RL_EXIT_OK;
}

static int answer_has_columns(const query_args *a)
{
    rl_table *t = read_or_say(a->files[0], false);
    if (!t)
        return RL_EXIT_USAGE;
    int absent = 0;
    for (int n = 0; n < a->nnames; n++) {
        if (resolve_column(t, a->names[n]) >= 0)
            continue;
        printf("%s%s", absent ? " " : "", a->names[n]);
        fprintf(stderr, "rooflab query: %s has no column '%s'\n", a->files[0], a->names[n]);
        absent++;
    }
    if (absent)
        putchar('\n');
    rl_table_free(t);
    return absent ? QUERY_EXIT_ABSENT : RL_EXIT_OK;
}

/* ---- columns: the answers, kept to print them once each -------------------------- */

typedef struct answers {
    char **items;
    int n, cap;
} answers;

static bool answers_has(const answers *s, const char *item)
{
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->items[i], item))
            return true;
    return false;
}

static void answers_add(answers *s, char *item)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->items = realloc(s->items, sizeof *s->items * (size_t)s->cap);
        if (!s->items)
            rl_die(RL_EXIT_FAILED, "out of memory");
    }
    s->items[s->n++] = item;
}

static void answers_free(answers *s)
{
    for (int i = 0; i < s->n; i++)
        free(s->items[i]);
    free(s->items);
    *s = (answers){0};
}

/* The columns of t that the names and the --where clauses stand for, into
 * cols and where_cols; false after naming one t lacks. */
static bool resolve_all(const query_args *a, const char *path, const rl_table *t, int *cols,
                        int *where_cols)
{
    for (int n = 0; n < a->nnames; n++)
        if ((cols[n] = resolve_column(t, a->names[n])) < 0)
            return fprintf(stderr, "rooflab query: %s has no column '%s'\n", path, a->names[n]),
                   false;
    for (int w = 0; w < a->nwhere; w++)
        if ((where_cols[w] = resolve_column(t, a->where[w].column)) < 0)
            return fprintf(stderr, "rooflab query: %s has no column '%s' (--where)\n", path,
                           a->where[w].column),
                   false;
    return true;
}

static bool row_selected(const query_args *a, const rl_table *t, int r, const int *where_cols)
{
    for (int w = 0; w < a->nwhere; w++)
        if ((strcmp(t->cells[r][where_cols[w]], a->where[w].value) == 0) == a->where[w].negated)
            return false;
    return true;
}

/* Row r's named cells joined by --join; NULL when --distinct leaves it
 * out (all empty). */
static char *row_answer(const query_args *a, const rl_table *t, int r, const int *cols)
{
    strbuf b = {0};
    bool any = false;
    sb_printf(&b, "%s", "");
    for (int n = 0; n < a->nnames; n++) {
        const char *cell = t->cells[r][cols[n]];
        any |= cell[0] != '\0';
        sb_printf(&b, "%s%s", n ? a->join : "", cell);
    }
    if (a->distinct && !any) {
        sb_free(&b);
        return NULL;
    }
    return b.s;
}

/* Adds one file's answers to s; an exit code other than 0 on failure. */
static int collect_file(const query_args *a, const char *path, answers *s)
{
    rl_table *t = read_or_say(path, false);
    if (!t)
        return RL_EXIT_USAGE;
    int cols[QUERY_MAX_NAMES], where_cols[QUERY_MAX_WHERE];
    if (!resolve_all(a, path, t, cols, where_cols)) {
        rl_table_free(t);
        return QUERY_EXIT_ABSENT;
    }
    for (int r = 0; r < t->nrows; r++) {
        if (!row_selected(a, t, r, where_cols))
            continue;
        char *item = row_answer(a, t, r, cols);
        if (item && a->distinct && answers_has(s, item)) {
            free(item);
            item = NULL;
        }
        if (item)
            answers_add(s, item);
    }
    rl_table_free(t);
    return RL_EXIT_OK;
}

static int answer_columns(const query_args *a)
{
    answers s = {0};
    for (int f = 0; f < a->nfiles; f++) {
        int rc = collect_file(a, a->files[f], &s);
        if (rc != RL_EXIT_OK) {
            answers_free(&s);
            return rc; /* nothing printed: a partial answer would look whole */
        }
    }
    /* One answer a line, or all on one line for a gnuplot word list. */
    const char *between = a->words ? " " : "\n";
    for (int i = 0; i < s.n; i++)
        printf("%s%s", i ? between : "", s.items[i]);
    if (s.n)
        putchar('\n');
    answers_free(&s);
    return RL_EXIT_OK;
}

int tool_query(int argc, char **argv)
{
    query_args a = {0};
    args_result parsed = parse_args(argc, argv, &a);
    int rc = parsed == ARGS_HELP ? RL_EXIT_OK : RL_EXIT_USAGE;
    if (parsed == ARGS_OK)
        rc = a.action == ACTION_META          ? answer_meta(&a)
             : a.action == ACTION_HAS_COLUMNS ? answer_has_columns(&a)
                                              : answer_columns(&a);
    free(a.files);
    return rc;
}

/* `rooflab meta [--default TEXT] FILE KEY...`: the older spelling of
 * `rooflab query FILE meta KEY...`, kept for scripts that call it. */
int tool_meta(int argc, char **argv)
{
    int i = 1;
    while (i < argc && !strcmp(argv[i], "--default") && i + 1 < argc)
        i += 2;
    if (i < argc && argv[i][0] == '-' && strcmp(argv[i], "--default") != 0)
        return tool_query(argc, argv); /* --help, or an option query names */
    if (argc - i < 2) {
        fprintf(stderr, "rooflab meta: needs a FILE and at least one KEY (see rooflab query "
                        "--help)\n");
        return RL_EXIT_USAGE;
    }
    char **args = calloc((size_t)argc + 2, sizeof *args);
    if (!args)
        rl_die(RL_EXIT_FAILED, "out of memory");
    int n = 0;
    for (int j = 0; j <= i; j++) /* "meta", the options, FILE */
        args[n++] = argv[j];
    args[n++] = "meta";
    for (int j = i + 1; j < argc; j++)
        args[n++] = argv[j];
    int rc = tool_query(n, args);
    free(args);
    return rc;
}
