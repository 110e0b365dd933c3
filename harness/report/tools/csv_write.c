/*
 * csv_write.c -- `rooflab csv-write OUT --columns A,B,... [--meta KEY=VALUE]...`:
 * a script's CSV (make peer-ggml's peers.csv) written by the harness's own
 * writer (csv.c), so that it has the experiments' format: the '# key:
 * value' header, the column names, the rows quoted where a cell needs it,
 * and the file committed atomically (a script that dies half way leaves
 * the previous file, never a partial one).
 *
 * Rows come on stdin, one a line, cells separated by tabs: a shell script
 * writes them with printf '%s\t%s\n', and a cell may then hold commas,
 * quotes and spaces without any quoting of the script's own.
 */
#include "tools.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *USAGE =
    "usage: rooflab csv-write OUT --columns A,B,... [--meta KEY=VALUE]... < ROWS\n\n"
    "Writes the CSV OUT through the harness's writer, as the experiments write theirs:\n"
    "a '# KEY: VALUE' line per --meta (in the order given), the columns' names, then\n"
    "the rows read from stdin, one a line, cells separated by tabs (a row has one cell\n"
    "per column; an empty cell is empty). Nothing appears at OUT until every row is\n"
    "read and written; a malformed row leaves OUT as it was.\n\n"
    "A KEY is letters, digits and underscores, as the reader of headers wants it\n"
    "(rooflab query OUT meta KEY reads it back).\n\n"
    "Exit codes: 0 written, 1 could not write OUT, 2 bad usage or a malformed row.\n";

enum { CSV_WRITE_MAX_META = 64, CSV_WRITE_MAX_COLUMNS = 64 };

typedef struct csv_write_args {
    const char *out;
    char *columns_buf; /* the --columns value, cut at its commas */
    const char *columns[CSV_WRITE_MAX_COLUMNS + 1]; /* NULL-terminated */
    int ncols;
    const char *meta[CSV_WRITE_MAX_META]; /* KEY=VALUE, as given */
    int nmeta;
} csv_write_args;

typedef enum { ARGS_OK, ARGS_HELP, ARGS_BAD } args_result;

static bool is_key_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Whether arg is KEY=VALUE with a key the header's reader accepts. */
static bool valid_meta(const char *arg)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg)
        return false;
    for (const char *p = arg; p < eq; p++)
        if (!is_key_char(*p))
            return false;
    return true;
}

static bool set_columns(csv_write_args *a, const char *list)
{
    a->columns_buf = strdup(list);
    if (!a->columns_buf)
        rl_die(RL_EXIT_FAILED, "out of memory");
    for (char *tok = strtok(a->columns_buf, ","); tok; tok = strtok(NULL, ",")) {
        if (a->ncols == CSV_WRITE_MAX_COLUMNS) {
            fprintf(stderr, "rooflab csv-write: more than %d columns\n", CSV_WRITE_MAX_COLUMNS);
            return false;
        }
        a->columns[a->ncols++] = tok;
    }
    a->columns[a->ncols] = NULL;
    return a->ncols > 0;
}

/* One option and its value at argv[*i]; false after saying what is wrong. */
static bool parse_option(int argc, char **argv, int *i, csv_write_args *a)
{
    const char *opt = argv[*i];
    if (strcmp(opt, "--columns") != 0 && strcmp(opt, "--meta") != 0) {
        fprintf(stderr, "rooflab csv-write: unknown option '%s' (see --help)\n", opt);
        return false;
    }
    if (*i + 1 >= argc) {
        fprintf(stderr, "rooflab csv-write: %s needs a value (see --help)\n", opt);
        return false;
    }
    const char *value = argv[++*i];
    if (!strcmp(opt, "--columns"))
        return set_columns(a, value);
    if (!valid_meta(value)) {
        fprintf(stderr, "rooflab csv-write: --meta wants KEY=VALUE, KEY of letters, digits "
                        "and _, not '%s'\n", value);
        return false;
    }
    if (a->nmeta == CSV_WRITE_MAX_META) {
        fprintf(stderr, "rooflab csv-write: more than %d --meta\n", CSV_WRITE_MAX_META);
        return false;
    }
    a->meta[a->nmeta++] = value;
    return true;
}

static args_result parse_args(int argc, char **argv, csv_write_args *a)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("%s", USAGE);
            return ARGS_HELP;
        }
        if (!strncmp(argv[i], "--", 2)) {
            if (!parse_option(argc, argv, &i, a))
                return ARGS_BAD;
        } else if (!a->out) {
            a->out = argv[i];
        } else {
            fprintf(stderr, "rooflab csv-write: one OUT file, not '%s' too\n", argv[i]);
            return ARGS_BAD;
        }
    }
    if (!a->out || !a->ncols) {
        fprintf(stderr, "rooflab csv-write: needs OUT and --columns A,B,... (see --help)\n");
        return ARGS_BAD;
    }
    return ARGS_OK;
}

/* Cuts one stdin line (its newline removed) at its tabs into c's row;
 * false after naming the line when it has the wrong number of cells. */
static bool add_row(rl_csv *c, const csv_write_args *a, char *line, int lineno)
{
    int cells = 1;
    for (const char *p = line; *p; p++)
        cells += *p == '\t';
    if (cells != a->ncols) {
        fprintf(stderr, "rooflab csv-write: %s: row %d has %d cells (tab-separated), the "
                        "columns %d\n", a->out, lineno, cells, a->ncols);
        return false;
    }
    char *cell = line;
    for (int col = 0; col < a->ncols; col++) {
        char *tab = strchr(cell, '\t');
        if (tab)
            *tab = '\0';
        rl_csv_set_str(c, a->columns[col], cell);
        cell = tab ? tab + 1 : cell + strlen(cell);
    }
    rl_csv_end_row(c);
    return true;
}

/* Every row of stdin into c; false at the first malformed one. */
static bool read_rows(rl_csv *c, const csv_write_args *a)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    bool ok = true;
    for (int lineno = 1; ok && (len = getline(&line, &cap, stdin)) > 0; lineno++) {
        line[strcspn(line, "\r\n")] = '\0';
        ok = add_row(c, a, line, lineno);
    }
    free(line);
    return ok;
}

int tool_csv_write(int argc, char **argv)
{
    csv_write_args a = {0};
    args_result parsed = parse_args(argc, argv, &a);
    if (parsed != ARGS_OK) {
        free(a.columns_buf);
        return parsed == ARGS_HELP ? RL_EXIT_OK : RL_EXIT_USAGE;
    }
    rl_csv *c = rl_csv_open(a.out, a.columns);
    for (int m = 0; m < a.nmeta; m++) {
        const char *eq = strchr(a.meta[m], '=');
        char key[256];
        snprintf(key, sizeof key, "%.*s", (int)(eq - a.meta[m]), a.meta[m]);
        rl_csv_meta(c, key, "%s", eq + 1);
    }
    int rc = RL_EXIT_OK;
    if (!read_rows(c, &a)) {
        rl_csv_abort(c);
        rc = RL_EXIT_USAGE;
    } else if (rl_csv_commit(c) != 0) {
        rc = RL_EXIT_FAILED; /* rl_csv_commit named the file and the reason */
    }
    free(a.columns_buf);
    return rc;
}
